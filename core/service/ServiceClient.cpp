#include "ServiceClient.h"

#include "ServiceProtocol.h"
#include "core/common/PrivateFiles.h"
#include "core/nodes/SshPassphraseProvider.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QVersionNumber>
#include <QEventLoop>
#include <QFileInfo>
#include <QJsonArray>
#include <QLocalSocket>
#include <QProcess>
#include <QThread>
#include <QTimer>

#include <csignal>

namespace ty::service {

QProcessEnvironment serviceEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("TRAINYARD_USER_UMASK"), QString::number(inheritedUmask(), 8));
    return env;
}

namespace {

// Starts `trainyardd --detach` and waits for it to say it listens. It exits
// 0 once its socket is up, 3 when another service holds the lock (listening,
// or about to), anything else with its reason on stderr.
Result<void> startService(const ServicePaths& paths, int timeoutMs)
{
    const QString exe = serviceExecutablePath();
    if (!QFileInfo(exe).isExecutable())
        return fail(QStringLiteral(
                "cannot start the Trainyard service: no trainyardd at %1 (set $TRAINYARD_DAEMON or put it on PATH)")
                            .arg(exe));
    QProcess p;
    p.setProgram(exe);
    p.setArguments({QStringLiteral("--db"), paths.databasePath, QStringLiteral("--detach")});
    p.setStandardInputFile(QProcess::nullDevice());
    p.setProcessChannelMode(QProcess::SeparateChannels);
    p.setProcessEnvironment(serviceEnvironment());
    p.start();
    if (!p.waitForStarted(timeoutMs))
        return fail(QStringLiteral("cannot start the Trainyard service %1: %2").arg(exe, p.errorString()));
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(1000);
        return fail(QStringLiteral("the Trainyard service %1 did not come up within %2 s (its log: %3)")
                            .arg(exe)
                            .arg(timeoutMs / 1000)
                            .arg(paths.log));
    }
    const QString said = QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
    if (p.exitStatus() == QProcess::NormalExit && (p.exitCode() == 0 || p.exitCode() == 3))
        return {};
    return fail(said.isEmpty() ? QStringLiteral("the Trainyard service exited with status %1 (its log: %2)")
                                         .arg(p.exitCode())
                                         .arg(paths.log)
                               : said);
}

} // namespace

ServiceClient::ServiceClient(ServicePaths paths)
    : m_paths(std::move(paths))
    , m_lines(std::make_unique<LineBuffer>())
{ }

ServiceClient::~ServiceClient()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
}

bool ServiceClient::olderThanThisClient() const
{
    const QVersionNumber theirs = QVersionNumber::fromString(m_serviceVersion);
    const QVersionNumber ours = QVersionNumber::fromString(QCoreApplication::applicationVersion());
    return !theirs.isNull() && !ours.isNull() && theirs < ours;
}

bool ServiceClient::connected() const
{
    return m_socket && m_socket->state() == QLocalSocket::ConnectedState;
}

Result<std::unique_ptr<ServiceClient>> ServiceClient::connectTo(const QString& databasePath, Start start, int timeoutMs)
{
    auto paths = servicePathsFor(databasePath);
    if (!paths)
        return std::unexpected(paths.error());
    std::unique_ptr<ServiceClient> c(new ServiceClient(*paths));
    const QDeadlineTimer deadline(timeoutMs);
    auto first = c->attach(std::max<qint64>(1000, deadline.remainingTime()));
    if (first && start == Start::IfNeeded && c->olderThanThisClient()) {
        // An older service (the package was upgraded): it hands over once
        // nothing is mid-write (stop answers its pending starts and commits),
        // and this client starts the new one. Runs keep going on their nodes.
        qInfo().noquote() << QStringLiteral("the Trainyard service (pid %1) is version %2, this is %3: replacing it")
                                     .arg(c->m_pid)
                                     .arg(c->m_serviceVersion, QCoreApplication::applicationVersion());
        const qint64 old = c->m_pid;
        if (auto stopped = c->call(QStringLiteral("stop")); !stopped)
            return std::unexpected(stopped.error());
        while (::kill(pid_t(old), 0) == 0 && !deadline.hasExpired())
            QThread::msleep(20);
        first = fail(QStringLiteral("replaced"));
    }
    if (first)
        return c;
    if (!c->m_refused.isEmpty() || start == Start::Never)
        return std::unexpected(first.error());
    if (auto started = startService(*paths, int(std::max<qint64>(1000, deadline.remainingTime()))); !started)
        return std::unexpected(started.error());
    c->m_startedService = true;
    // Listening by now, or (another client started it at the same moment)
    // very soon: try until the deadline.
    int pauseMs = 20;
    for (;;) {
        auto again = c->attach(std::max<qint64>(500, deadline.remainingTime()));
        if (again)
            return c;
        if (!c->m_refused.isEmpty() || deadline.hasExpired())
            return std::unexpected(again.error());
        QThread::msleep(pauseMs);
        pauseMs = std::min(pauseMs * 2, 250);
    }
}

Result<void> ServiceClient::attach(int timeoutMs)
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->deleteLater();
    }
    m_socket = new QLocalSocket(this);
    m_lines = std::make_unique<LineBuffer>();
    m_helloSeen = false;
    m_socket->connectToServer(m_paths.socket);
    if (!m_socket->waitForConnected(timeoutMs)) {
        const auto error = m_socket->error();
        const QString why = m_socket->errorString();
        if (error == QLocalSocket::SocketAccessError)
            m_refused = QStringLiteral("the Trainyard service's socket %1 refused you: %2 (it belongs to another user)")
                                .arg(m_paths.socket, why);
        if (!m_refused.isEmpty())
            return fail(m_refused);
        const QString state = error == QLocalSocket::ServerNotFoundError
                ? QStringLiteral("no socket at %1").arg(m_paths.socket)
                : error == QLocalSocket::ConnectionRefusedError
                ? QStringLiteral("%1 is left from a service that ended").arg(m_paths.socket)
                : QStringLiteral("%1: %2").arg(m_paths.socket, why);
        return fail(QStringLiteral("the Trainyard service of %1 is not running (%2)").arg(m_paths.databasePath, state));
    }
    connect(m_socket, &QLocalSocket::readyRead, this, &ServiceClient::onReadyRead);
    // After the events that came before it.
    connect(m_socket, &QLocalSocket::disconnected, this, [this] {
        dispatch({{QStringLiteral("event"), QStringLiteral("_closed")}});
    });
    // The service speaks first: hello (or refused). Blocking reads, as in call().
    const QDeadlineTimer deadline(timeoutMs);
    while (!m_helloSeen && m_refused.isEmpty() && m_socket->state() == QLocalSocket::ConnectedState
            && !deadline.hasExpired()) {
        if (m_socket->bytesAvailable() > 0) {
            onReadyRead();
            continue;
        }
        m_socket->waitForReadyRead(int(std::clamp<qint64>(deadline.remainingTime(), 1, 1000)));
    }
    if (m_socket->bytesAvailable() > 0)
        onReadyRead(); // the refusal and the close come together
    if (!m_refused.isEmpty())
        return fail(m_refused);
    if (!m_helloSeen)
        return fail(QStringLiteral("the Trainyard service at %1 did not greet within %2 ms")
                            .arg(m_paths.socket)
                            .arg(timeoutMs));
    if (m_protocol < 1)
        return fail(QStringLiteral("the Trainyard service at %1 speaks an unknown protocol").arg(m_paths.socket));
    return {};
}

void ServiceClient::onReadyRead()
{
    m_lines->feed(m_socket->readAll());
    QByteArray line;
    while (m_lines->next(&line)) {
        if (auto console = decodeConsoleEvent(line)) {
            defer({{}, std::move(console)});
            continue;
        }
        auto message = decode(line);
        if (!message) {
            qWarning().noquote() << "trainyardd sent a line that is" << message.error().message;
            continue;
        }
        dispatch(*message);
    }
}

void ServiceClient::dispatch(const QJsonObject& m)
{
    const QString event = m.value(QStringLiteral("event")).toString();
    if (event.isEmpty()) {
        const qint64 id = m.value(QStringLiteral("id")).toInteger();
        if (!m_callbacks.contains(id)) {
            m_replies.insert(id, m); // call() waits for it
            return;
        }
        // A request()'s reply: in order with the events (below).
    }
    if (event == u"hello" || event == u"refused") {
        emitEvent(m);
        return;
    }
    if (event == u"prompt" && m_promptProvider) {
        // Answered now, even inside call(): the service's session waits.
        const qint64 prompt = m.value(QStringLiteral("prompt")).toInteger();
        const QString node = m.value(QStringLiteral("node")).toString();
        if (m.value(QStringLiteral("kind")).toString() == u"keyboard_interactive")
            answerLoginPrompt(prompt, m_promptProvider->answers(node, loginQuestionsFromJson(m)));
        else
            answerPrompt(prompt, m_promptProvider->passphrase(node, m.value(QStringLiteral("text")).toString()));
        return;
    }
    defer({m, std::nullopt});
}

void ServiceClient::defer(Deferred event)
{
    // Inside call()'s wait, a handler that ends the caller's event loop
    // would end that wait instead: events wait for the caller's loop.
    m_deferred.append(std::move(event));
    if (m_inCall == 0 && m_deferred.size() == 1)
        QMetaObject::invokeMethod(this, &ServiceClient::emitDeferred, Qt::QueuedConnection);
}

void ServiceClient::emitDeferred()
{
    while (m_inCall == 0 && !m_deferred.isEmpty()) {
        Deferred d = m_deferred.takeFirst();
        if (d.console)
            Q_EMIT consoleReceived(d.console->run, d.console->offset, d.console->bytes);
        else
            emitEvent(d.message);
    }
}

namespace {

Result<QJsonObject> replyResult(const QJsonObject& reply)
{
    if (!reply.value(QStringLiteral("ok")).toBool()) {
        // The reply's kind (PROTOCOL.md "Requests and replies") as the error's.
        return fail(reply.value(QStringLiteral("error")).toString(),
                errorKindOfReply(reply.value(QStringLiteral("kind")).toString()));
    }
    return reply;
}

} // namespace

void ServiceClient::request(const QString& op, QJsonObject args, std::function<void(const Result<QJsonObject>&)> done)
{
    if (!connected()) {
        const Error e{QStringLiteral("the Trainyard service at %1 is not connected").arg(m_paths.socket),
                ErrorKind::Unreachable};
        QMetaObject::invokeMethod(
                this, [done, e] { done(std::unexpected(e)); }, Qt::QueuedConnection);
        return;
    }
    const qint64 id = m_nextId++;
    args.insert(QStringLiteral("id"), id);
    args.insert(QStringLiteral("op"), op);
    m_callbacks.insert(id, std::move(done));
    m_socket->write(encode(args));
}

void ServiceClient::emitEvent(const QJsonObject& m)
{
    const QString event = m.value(QStringLiteral("event")).toString();
    if (event.isEmpty()) {
        if (auto done = m_callbacks.take(m.value(QStringLiteral("id")).toInteger()))
            done(replyResult(m));
        return;
    }
    if (event == u"hello") {
        m_helloSeen = true;
        m_pid = m.value(QStringLiteral("pid")).toInteger();
        m_protocol = m.value(QStringLiteral("protocol")).toInt();
        m_serviceVersion = m.value(QStringLiteral("version")).toString();
    } else if (event == u"refused") {
        m_refused = QStringLiteral("the Trainyard service at %1 %2")
                            .arg(m_paths.socket, m.value(QStringLiteral("error")).toString());
    } else if (event == u"state") {
        Q_EMIT runStateChanged(runFromJson(m.value(QStringLiteral("run")).toObject()));
    } else if (event == u"pipeline") {
        Q_EMIT pipelineChanged(m.value(QStringLiteral("pipeline")).toObject());
    } else if (event == u"console") {
        Q_EMIT consoleReceived(m.value(QStringLiteral("run")).toInteger(),
                m.value(QStringLiteral("offset")).toInteger(),
                QByteArray::fromBase64(m.value(QStringLiteral("data")).toString().toLatin1()));
    } else if (event == u"pending") {
        QHash<RunId, QString> reasons;
        const QJsonObject o = m.value(QStringLiteral("reasons")).toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            reasons.insert(it.key().toLongLong(), it.value().toString());
        Q_EMIT pendingReasonsChanged(reasons);
    } else if (event == u"node") {
        Q_EMIT nodeStatusChanged(m.value(QStringLiteral("node")).toString(), m.value(QStringLiteral("ready")).toBool(),
                m.value(QStringLiteral("reason")).toString(),
                errorKindFromName(m.value(QStringLiteral("kind")).toString()));
    } else if (event == u"cancel_failed") {
        Q_EMIT cancelFailed(m.value(QStringLiteral("run")).toInteger(), m.value(QStringLiteral("reason")).toString());
    } else if (event == u"notice") {
        Q_EMIT noticeAdded(m.value(QStringLiteral("run")).toInteger(), m.value(QStringLiteral("text")).toString());
    } else if (event == u"metrics") {
        const RunId run = m.value(QStringLiteral("run")).toInteger();
        Q_EMIT metricsReceived(run, metricPointsFromJson(run, m.value(QStringLiteral("points")).toArray()));
    } else if (event == u"gpus") {
        Q_EMIT nodeGpusUpdated(m.value(QStringLiteral("node")).toString(),
                agentGpusFromJson(m.value(QStringLiteral("gpus")).toArray()));
    } else if (event == u"prompt" && m.value(QStringLiteral("kind")).toString() == u"keyboard_interactive") {
        Q_EMIT loginPromptReceived(m.value(QStringLiteral("prompt")).toInteger(),
                m.value(QStringLiteral("node")).toString(), loginQuestionsFromJson(m));
    } else if (event == u"prompt") {
        Q_EMIT promptReceived(m.value(QStringLiteral("prompt")).toInteger(), m.value(QStringLiteral("node")).toString(),
                m.value(QStringLiteral("text")).toString());
    } else if (event == u"node_warning") {
        Q_EMIT nodeWarning(m.value(QStringLiteral("node")).toString(), m.value(QStringLiteral("message")).toString());
    } else if (event == u"_closed") {
        const auto waiting = std::exchange(m_callbacks, {});
        const Error gone{QStringLiteral("the Trainyard service (pid %1) went away before answering").arg(m_pid),
                ErrorKind::Unreachable};
        for (const auto& done : waiting)
            done(std::unexpected(gone));
        Q_EMIT disconnected();
    } else if (event == u"watch_ended") {
        Q_EMIT watchEnded(m.value(QStringLiteral("run")).toInteger());
    }
}

Result<void> ServiceClient::answerPromptsWith(std::shared_ptr<SshPassphraseProvider> provider)
{
    m_promptProvider = std::move(provider);
    if (auto r = call(QStringLiteral("subscribe"), {{QStringLiteral("prompts"), m_promptProvider != nullptr}}); !r)
        return std::unexpected(r.error());
    return {};
}

void ServiceClient::answerPrompt(qint64 prompt, const std::optional<QByteArray>& passphrase)
{
    QJsonObject args{{QStringLiteral("prompt"), prompt}};
    if (passphrase)
        args.insert(QStringLiteral("passphrase"), QString::fromUtf8(*passphrase));
    request(QStringLiteral("answer_prompt"), args, [prompt](const Result<QJsonObject>& r) {
        if (!r)
            qWarning().noquote() << "answering the service's question" << prompt << "failed:" << r.error().message;
    });
}

void ServiceClient::answerLoginPrompt(qint64 prompt, const std::optional<QList<QByteArray>>& answers)
{
    QJsonObject args{{QStringLiteral("prompt"), prompt}};
    if (answers) {
        QJsonArray list;
        for (const QByteArray& a : *answers)
            list.append(QString::fromUtf8(a));
        args.insert(QStringLiteral("answers"), list);
    }
    request(QStringLiteral("answer_prompt"), args, [prompt](const Result<QJsonObject>& r) {
        if (!r)
            qWarning().noquote() << "answering the service's question" << prompt << "failed:" << r.error().message;
    });
}

Result<QJsonObject> ServiceClient::call(const QString& op, QJsonObject args, int timeoutMs)
{
    if (!connected())
        return fail(QStringLiteral("the Trainyard service at %1 closed the connection").arg(m_paths.socket));
    const qint64 id = m_nextId++;
    args.insert(QStringLiteral("id"), id);
    args.insert(QStringLiteral("op"), op);
    m_socket->write(encode(args));
    m_socket->flush();
    // Blocking reads on the socket alone, no nested event loop: a handler
    // elsewhere that ends the caller's event loop (QCoreApplication::exit)
    // cannot end this wait instead, and nothing else runs meanwhile. Events
    // that arrive are kept for the caller's loop (dispatch()).
    ++m_inCall;
    const QDeadlineTimer deadline(timeoutMs);
    while (!m_replies.contains(id) && connected() && !deadline.hasExpired()) {
        if (m_socket->bytesAvailable() > 0) {
            onReadyRead();
            continue;
        }
        m_socket->waitForReadyRead(int(std::clamp<qint64>(deadline.remainingTime(), 1, 1000)));
    }
    if (--m_inCall == 0 && !m_deferred.isEmpty())
        QMetaObject::invokeMethod(this, &ServiceClient::emitDeferred, Qt::QueuedConnection);
    if (!m_replies.contains(id)) {
        if (!connected())
            return fail(QStringLiteral("the Trainyard service (pid %1) went away before answering '%2'")
                                .arg(m_pid)
                                .arg(op));
        return fail(QStringLiteral("the Trainyard service (pid %1) did not answer '%2' within %3 s")
                            .arg(m_pid)
                            .arg(op)
                            .arg(timeoutMs / 1000));
    }
    return replyResult(m_replies.take(id));
}

} // namespace ty::service
