#include "ServiceServer.h"

#include "PipelineOps.h"
#include "ServicePrompts.h"
#include "core/pipeline/PipelineRunner.h"
#include "ServiceProtocol.h"
#include "core/logs/importers/MetricFileImporter.h"
#include "core/runs/NodeRemoval.h"
#include "core/runs/RunEngine.h"
#include "core/runs/RunRemoval.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QCoreApplication>
#include <QFile>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QLocalServer>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QTimer>

#include <algorithm>

#include <sys/socket.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcService, "trainyard.service", QtInfoMsg)

namespace ty::service {

namespace {

constexpr qsizetype kConsoleChunk = 64 * 1024;

// The uid at the other end of a connected Unix-domain socket (Linux SO_PEERCRED).
std::optional<uid_t> peerUid(qintptr fd)
{
    struct ucred cred { };
    socklen_t len = sizeof cred;
    if (::getsockopt(int(fd), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return std::nullopt;
    return cred.uid;
}

QString str(const QJsonObject& o, const char* key)
{
    return o.value(QLatin1String(key)).toString();
}

} // namespace

// A run a client follows: its console from `cursor` on (when `console`) and
// its state changes. A terminal state seen before a display-only watch of
// the node ended is held back until it ends, so the console arrives first.
struct ServiceServer::Watch {
    qint64 cursor = 0;
    bool console = false;
    bool follow = false;
    bool nodeWatchEnded = false;
    std::optional<RunRecord> heldEnd;
};

struct ServiceServer::Client {
    QLocalSocket* socket = nullptr;
    LineBuffer lines;
    QHash<RunId, Watch> watches;
    bool allStates = false; // `subscribe {runs: true}`: every run's state changes
    bool metrics = false;   // `subscribe {metrics: true}`: every run's metric points
    bool gpus = false;      // `subscribe {gpus: true}`: the nodes' GPU reports
    bool pipelines = false; // `subscribe {pipelines: true}`: every pipeline's changes
};

void ServiceServer::setPipelines(pipeline::PipelineRunner* runner)
{
    m_pipelineOps = std::make_unique<PipelineOps>(runner, m_store, [this](const QString& node) {
        if (m_nodeResolver)
            m_nodeResolver(node);
    });
    connect(runner, &pipeline::PipelineRunner::pipelineChanged, this,
            [this](qint64, const QJsonObject& pipeline) { onPipeline(pipeline); });
}

void ServiceServer::onPipeline(const QJsonObject& pipeline)
{
    const QByteArray line
            = encode({{QStringLiteral("event"), QStringLiteral("pipeline")}, {QStringLiteral("pipeline"), pipeline}});
    for (const auto& c : std::as_const(m_clients))
        if (c->pipelines)
            c->socket->write(line);
}

void ServiceServer::setPrompts(std::shared_ptr<ServicePrompts> prompts)
{
    m_prompts = std::move(prompts);
    m_prompts->setAsker([this](qint64 id, const QString& node, const QString& prompt) {
        return askPromptClient(id,
                {{QStringLiteral("kind"), QStringLiteral("passphrase")}, {QStringLiteral("node"), node},
                        {QStringLiteral("text"), prompt}},
                QStringLiteral("a passphrase for node %1").arg(node));
    });
    m_prompts->setLoginAsker([this](qint64 id, const QString& node, const SshLoginQuestions& questions) {
        QJsonObject event = loginQuestionsToJson(questions);
        event.insert(QStringLiteral("kind"), QStringLiteral("keyboard_interactive"));
        event.insert(QStringLiteral("node"), node);
        // What a client that knows only passphrase questions shows (its
        // answer then answers a question of one prompt).
        event.insert(QStringLiteral("text"), questions.prompts.value(0).text);
        return askPromptClient(id, event, QStringLiteral("the keyboard-interactive questions of node %1").arg(node));
    });
}

// The newest client that takes questions gets prompt `id` (`event` plus its
// "event" and "prompt" fields) and alone may answer it; false when none does.
bool ServiceServer::askPromptClient(qint64 id, QJsonObject event, const QString& what)
{
    for (auto it = m_promptClients.crbegin(); it != m_promptClients.crend(); ++it) {
        QLocalSocket* socket = it->data();
        const auto client = socket ? m_clients.value(socket) : nullptr;
        if (!client)
            continue;
        m_promptOwner.insert(id, socket);
        event.insert(QStringLiteral("event"), QStringLiteral("prompt"));
        event.insert(QStringLiteral("prompt"), id);
        send(*client, event);
        qCInfo(lcService).noquote() << "asked a client for" << what;
        return true;
    }
    return false;
}

ServiceServer::ServiceServer(RunEngine* engine, ResultStore* store, QString databasePath, QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_store(store)
    , m_databasePath(std::move(databasePath))
    , m_started(QDateTime::currentDateTimeUtc())
    , m_lastClientLeft(m_started)
{
    connect(m_engine, &RunEngine::consoleReceived, this, &ServiceServer::onConsole);
    connect(m_engine, &RunEngine::runStateChanged, this, &ServiceServer::onRunState);
    connect(m_engine, &RunEngine::pendingReasonsChanged, this, &ServiceServer::onPending);
    connect(m_engine, &RunEngine::watchEnded, this, &ServiceServer::onWatchEnded);
    connect(m_engine, &RunEngine::noticeAdded, this, [this](RunId run, const QString& text) {
        // Kept while the run is live, for clients that watch it later.
        m_liveNotices[run].append(text);
        for (const auto& c : std::as_const(m_clients))
            if (c->watches.contains(run))
                sendNotice(*c, run, text);
    });
    connect(m_engine, &RunEngine::postRunWorkDone, this, [this] {
        m_endWaitStartedMs = -1;
        deliverEnds();
    });
    connect(m_engine, &RunEngine::nodeStatusChanged, this,
            [this](const QString& node, bool ready, const QString& reason, ErrorKind kind) {
                const QJsonObject event{{QStringLiteral("event"), QStringLiteral("node")},
                        {QStringLiteral("node"), node}, {QStringLiteral("ready"), ready},
                        {QStringLiteral("reason"), reason}, {QStringLiteral("kind"), errorKindName(kind)}};
                m_nodeStatus.insert(node, event);
                broadcast(event);
            });
    connect(m_engine, &RunEngine::metricsReceived, this, &ServiceServer::onMetrics);
    // The scheduling engine asks its nodes for their GPUs every 2 s anyway.
    connect(m_engine, &RunEngine::nodeGpusUpdated, this, &ServiceServer::onGpus);
    connect(m_engine, &RunEngine::nodeWarning, this, [this](const QString& node, const QString& message) {
        broadcast({{QStringLiteral("event"), QStringLiteral("node_warning")}, {QStringLiteral("node"), node},
                {QStringLiteral("message"), message}});
    });
    connect(m_engine, &RunEngine::cancelFailed, this, [this](RunId run, const QString& reason) {
        broadcast({{QStringLiteral("event"), QStringLiteral("cancel_failed")}, {QStringLiteral("run"), run},
                {QStringLiteral("reason"), reason}});
    });
    connect(m_engine, &RunEngine::caughtUp, this, [this] {
        m_caughtUp = true;
        answerCaughtUp();
    });
    m_caughtUpTimer = new QTimer(this);
    m_caughtUpTimer->setInterval(100);
    connect(m_caughtUpTimer, &QTimer::timeout, this, &ServiceServer::answerCaughtUp);
}

ServiceServer::~ServiceServer()
{
    if (m_server)
        m_server->close();
}

Result<void> ServiceServer::listen(const QString& socketPath)
{
    m_server = new QLocalServer(this);
    m_server->setSocketOptions(QLocalServer::UserAccessOption);
    QLocalServer::removeServer(socketPath);
    if (!m_server->listen(socketPath))
        return fail(QStringLiteral("cannot listen on %1: %2").arg(socketPath, m_server->errorString()));
    connect(m_server, &QLocalServer::newConnection, this, &ServiceServer::onNewConnection);
    return {};
}

void ServiceServer::onNewConnection()
{
    while (QLocalSocket* socket = m_server->nextPendingConnection()) {
        const auto uid = peerUid(socket->socketDescriptor());
        if (!uid || *uid != ::geteuid()) {
            const QString why = uid
                    ? QStringLiteral("refused: this Trainyard service belongs to uid %1; you are uid %2")
                              .arg(::geteuid())
                              .arg(*uid)
                    : QStringLiteral("refused: the peer's user cannot be told (SO_PEERCRED failed)");
            qCWarning(lcService).noquote() << "connection" << why;
            socket->write(
                    encode({{QStringLiteral("event"), QStringLiteral("refused")}, {QStringLiteral("error"), why}}));
            socket->flush();
            socket->disconnectFromServer();
            connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
            continue;
        }
        auto client = std::make_shared<Client>();
        client->socket = socket;
        m_clients.insert(socket, client);
        connect(socket, &QLocalSocket::readyRead, this, [this, socket] {
            if (auto c = m_clients.value(socket))
                onReadyRead(*c);
        });
        connect(socket, &QLocalSocket::disconnected, this, [this, socket] { drop(socket); });
        send(*client,
                {{QStringLiteral("event"), QStringLiteral("hello")}, {QStringLiteral("protocol"), kProtocol},
                        {QStringLiteral("version"), QCoreApplication::applicationVersion()},
                        {QStringLiteral("pid"), qint64(::getpid())}, {QStringLiteral("db"), m_databasePath}});
        Q_EMIT clientsChanged(clientCount());
    }
}

void ServiceServer::drop(QLocalSocket* socket)
{
    if (!m_clients.remove(socket))
        return;
    m_promptClients.removeAll(socket);
    for (auto it = m_promptOwner.begin(); it != m_promptOwner.end();) {
        if (it.value() == socket) {
            if (m_prompts)
                m_prompts->answer(it.key(), std::nullopt); // the one asked is gone: declined
            it = m_promptOwner.erase(it);
        } else {
            ++it;
        }
    }
    socket->deleteLater();
    if (m_clients.isEmpty())
        m_lastClientLeft = QDateTime::currentDateTimeUtc();
    Q_EMIT clientsChanged(clientCount());
}

void ServiceServer::onReadyRead(Client& c)
{
    // `c` may be dropped by a request (none does today); keep it alive.
    const auto keep = m_clients.value(c.socket);
    c.lines.feed(c.socket->readAll());
    QByteArray line;
    while (c.lines.next(&line)) {
        if (line.trimmed().isEmpty())
            continue;
        const auto request = decode(line);
        if (!request) {
            replyError(c, QJsonValue(), QStringLiteral("invalid_input"), request.error().message);
            continue;
        }
        handle(c, *request);
    }
    if (c.lines.overflowed()) {
        replyError(c, QJsonValue(), QStringLiteral("invalid_input"),
                QStringLiteral("a request line over %1 bytes; disconnecting").arg(kMaxLineBytes));
        c.socket->disconnectFromServer();
    }
}

void ServiceServer::send(Client& c, const QJsonObject& message)
{
    c.socket->write(encode(message));
}

void ServiceServer::reply(Client& c, const QJsonValue& id, QJsonObject body)
{
    body.insert(QStringLiteral("id"), id);
    body.insert(QStringLiteral("ok"), true);
    send(c, body);
}

void ServiceServer::replyError(Client& c, const QJsonValue& id, const QString& kind, const QString& message)
{
    send(c,
            {{QStringLiteral("id"), id}, {QStringLiteral("ok"), false}, {QStringLiteral("kind"), kind},
                    {QStringLiteral("error"), message}});
}

void ServiceServer::broadcast(const QJsonObject& event)
{
    const QByteArray line = encode(event);
    for (const auto& c : std::as_const(m_clients))
        c->socket->write(line);
}

void ServiceServer::handle(Client& c, const QJsonObject& req)
{
    const QJsonValue id = req.value(QStringLiteral("id"));
    const QString op = str(req, "op");
    if (op == u"hello") {
        const int theirs = req.value(QStringLiteral("protocol")).toInt();
        if (theirs > kProtocol) {
            replyError(c, id, QStringLiteral("version"),
                    QStringLiteral(
                            "this service speaks protocol %1, the client %2: restart it with `trainyardctl daemon stop`")
                            .arg(kProtocol)
                            .arg(theirs));
            return;
        }
        reply(c, id, {{QStringLiteral("protocol"), kProtocol}, {QStringLiteral("pid"), qint64(::getpid())}});
    } else if (op == u"status") {
        opStatus(c, id);
    } else if (op == u"submit") {
        opSubmit(c, id, req);
    } else if (op == u"cancel") {
        opCancel(c, id, req);
    } else if (op == u"watch") {
        opWatch(c, id, req);
    } else if (op == u"unwatch") {
        c.watches.remove(req.value(QStringLiteral("run")).toInteger());
        reply(c, id, {});
    } else if (op == u"subscribe") {
        opSubscribe(c, id, req);
    } else if (op == u"caught_up") {
        opCaughtUp(c, id);
    } else if (op == u"delete_run") {
        const RunId run = req.value(QStringLiteral("run")).toInteger();
        if (auto deleted = deleteEndedRun(*m_store, m_databasePath, run); !deleted)
            replyError(c, id, replyKind(deleted.error(), QStringLiteral("no_such_run"), QStringLiteral("storage")),
                    deleted.error().message);
        else
            reply(c, id, {});
    } else if (op == u"queue") {
        opQueue(c, id, req);
    } else if (op == u"annotate") {
        opAnnotate(c, id, req);
    } else if (op == u"node_rm") {
        opNodeRm(c, id, req);
    } else if (op == u"node_add") {
        opNodeAdd(c, id, req);
    } else if (op == u"node_label") {
        opNodeLabel(c, id, req);
    } else if (op == u"host_key") {
        reply(c, id, {{QStringLiteral("fingerprint"), m_engine->rejectedHostKeyFingerprint(str(req, "node"))}});
    } else if (op == u"trust_host_key") {
        reply(c, id, {{QStringLiteral("trusted"), m_engine->trustNewHostKey(str(req, "node"))}});
    } else if (op == u"answer_prompt") {
        // Only the client asked may answer; no passphrase: declined.
        const qint64 prompt = req.value(QStringLiteral("prompt")).toInteger();
        if (m_promptOwner.value(prompt) != c.socket) {
            replyError(c, id, QStringLiteral("invalid_input"),
                    QStringLiteral("no open question %1 for this client").arg(prompt));
            return;
        }
        m_promptOwner.remove(prompt);
        const QJsonValue answer = req.value(QStringLiteral("passphrase"));
        const QJsonValue answers = req.value(QStringLiteral("answers"));
        if (m_prompts && answers.isArray()) {
            QList<QByteArray> list;
            for (const QJsonValue& a : answers.toArray())
                list << a.toString().toUtf8();
            m_prompts->answerLogin(prompt, std::move(list));
        } else if (m_prompts) {
            m_prompts->answer(
                    prompt, answer.isString() ? std::optional<QByteArray>(answer.toString().toUtf8()) : std::nullopt);
        }
        reply(c, id, {});
    } else if (op == u"import_metrics") {
        opImportMetrics(c, id, req);
    } else if (op == u"artifacts") {
        opArtifacts(c, id, req, false);
    } else if (op == u"download_artifacts") {
        opArtifacts(c, id, req, true);
    } else if (op == u"behind") {
        reply(c, id, {{QStringLiteral("behind"), nodesBehind()}});
    } else if (op == u"stop") {
        reply(c, id, {});
        c.socket->flush();
        qCInfo(lcService) << "stop requested by a client";
        QTimer::singleShot(0, this, &ServiceServer::stopRequested);
    } else if (const auto answer = m_pipelineOps ? m_pipelineOps->handle(op, req) : std::nullopt) {
        if (answer->errorKind.isEmpty())
            reply(c, id, answer->body);
        else
            replyError(c, id, answer->errorKind, answer->error);
    } else {
        replyError(c, id, QStringLiteral("invalid_input"), QStringLiteral("unknown op '%1'").arg(op));
    }
}

void ServiceServer::opStatus(Client& c, const QJsonValue& id)
{
    QJsonObject counts;
    for (const RunRecord& r : m_store->unfinishedRuns()) {
        const QString name = runStateName(r.state);
        counts.insert(name, counts.value(name).toInt() + 1);
    }
    QJsonArray nodes;
    QStringList names{QStringLiteral("local")};
    for (const NodeRecord& n : m_store->nodes())
        names << n.name;
    for (const QString& n : std::as_const(names))
        nodes.append(QJsonObject{{QStringLiteral("name"), n}, {QStringLiteral("ready"), m_engine->nodeReady(n)}});
    reply(c, id,
            {{QStringLiteral("pid"), qint64(::getpid())},
                    {QStringLiteral("version"), QCoreApplication::applicationVersion()},
                    {QStringLiteral("protocol"), kProtocol}, {QStringLiteral("db"), m_databasePath},
                    {QStringLiteral("started_at"), m_started.toString(Qt::ISODateWithMs)},
                    {QStringLiteral("clients"), clientCount()}, {QStringLiteral("ingests"), m_engine->ownsIngestion()},
                    {QStringLiteral("runs"), counts}, {QStringLiteral("nodes"), nodes}});
}

void ServiceServer::opSubmit(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const QJsonObject s = req.value(QStringLiteral("spec")).toObject();
    QMap<QString, QString> params;
    const QJsonObject p = s.value(QStringLiteral("params")).toObject();
    for (auto it = p.begin(); it != p.end(); ++it)
        params.insert(it.key(), it.value().toString());
    // The client validated the spec already; it is parsed again here, as
    // nothing from a socket is taken on trust.
    auto spec = parseJobSpec(str(s, "yaml"), str(s, "origin"), str(s, "base_dir"), params);
    if (!spec) {
        replyError(c, id, QStringLiteral("invalid_input"), spec.error().message);
        return;
    }
    spec->sourcePath = str(s, "source_path");
    // The folder the client resolved a relative workdir against once already
    // (a spec typed in the submit dialog has no file to resolve it from).
    if (const QString workdir = str(s, "workdir"); !workdir.isEmpty()) {
        if (!QFileInfo(workdir).isAbsolute() || QDir::cleanPath(workdir) != workdir) {
            replyError(c, id, QStringLiteral("invalid_input"),
                    QStringLiteral("submit: `workdir` must be an absolute, clean path (got '%1')").arg(workdir));
            return;
        }
        spec->workdir = workdir;
    }
    const QString node = str(req, "node");
    if (!node.isEmpty() && m_nodeResolver)
        m_nodeResolver(node);
    const auto ids = m_engine->submitAll(*spec, node);
    if (!ids) {
        replyError(c, id, spec->sweep.isEmpty() ? QStringLiteral("storage") : QStringLiteral("invalid_input"),
                ids.error().message);
        return;
    }
    QJsonArray runs;
    for (RunId r : *ids)
        runs.append(r);
    reply(c, id, {{QStringLiteral("runs"), runs}});
}

std::optional<RunRecord> ServiceServer::requestedRun(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const RunId run = req.value(QStringLiteral("run")).toInteger();
    auto r = latest(run);
    if (!r)
        replyError(c, id, QStringLiteral("no_such_run"), QStringLiteral("no run %1").arg(run));
    return r;
}

void ServiceServer::connectNodeOf(const RunRecord& run)
{
    if (m_nodeResolver && !run.node.isEmpty())
        m_nodeResolver(run.node);
}

void ServiceServer::opCancel(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const auto r = requestedRun(c, id, req);
    if (!r)
        return;
    const RunId run = r->id;
    connectNodeOf(*r);
    const int graceMs
            = req.contains(QStringLiteral("grace_ms")) ? req.value(QStringLiteral("grace_ms")).toInt() : 10000;
    m_engine->cancel(run, graceMs);
    reply(c, id, {});
}

// hold / release / priority / top of a waiting run, applied by this
// service's engine (the one that schedules), so its next pass sees it.
void ServiceServer::opQueue(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const QString action = str(req, "action");
    const auto found = requestedRun(c, id, req);
    if (!found)
        return;
    const RunId run = found->id;
    Result<void> done;
    if (action == u"hold") {
        done = m_engine->hold(run);
    } else if (action == u"release") {
        done = m_engine->release(run);
    } else if (action == u"top") {
        done = m_engine->moveToTop(run);
    } else if (action == u"priority") {
        const QJsonValue v = req.value(QStringLiteral("priority"));
        const double d = v.toDouble();
        if (!v.isDouble() || d != double(int(d))) {
            replyError(c, id, QStringLiteral("invalid_input"), QStringLiteral("priority must be an integer"));
            return;
        }
        done = m_engine->setPriority(run, int(d));
    } else {
        replyError(c, id, QStringLiteral("invalid_input"),
                QStringLiteral("unknown queue action '%1' (hold, release, priority, top)").arg(action));
        return;
    }
    if (!done) {
        replyError(c, id, replyKind(done.error(), QStringLiteral("no_such_run")), done.error().message);
        return;
    }
    // From the database, where the change is committed: the engine's
    // runStateChanged for it is still queued, so latest() may hold the run
    // as a pass last saw it (priority 0 after `priority 5`, seen under load).
    const auto after = m_store->run(run);
    reply(c, id, {{QStringLiteral("run"), after ? runToJson(*after) : QJsonValue()}});
}

// rename / tag / note / archive: what the user says about a run, written
// by the service (annotateRun waits until it is committed).
void ServiceServer::opAnnotate(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const auto found = requestedRun(c, id, req);
    if (!found)
        return;
    const RunId run = found->id;
    const auto a = annotationFromJson(req);
    if (!a) {
        replyError(c, id, QStringLiteral("invalid_input"), a.error().message);
        return;
    }
    if (a->archived.value_or(false)) {
        const auto r = m_store->run(run);
        if (r && !isTerminal(r->state)) {
            replyError(c, id, QStringLiteral("invalid_input"),
                    QStringLiteral("run %1 is %2: only finished runs can be archived")
                            .arg(run)
                            .arg(runStateName(r->state)));
            return;
        }
    }
    if (auto done = m_store->annotateRun(run, *a); !done) {
        // Its checks (an empty name, a tag with a space: InvalidInput) or the write.
        replyError(c, id, replyKind(done.error(), QStringLiteral("no_such_run"), QStringLiteral("storage")),
                done.error().message);
        return;
    }
    const auto after = m_store->run(run);
    reply(c, id, {{QStringLiteral("run"), after ? runToJson(*after) : QJsonValue()}});
}

// trainyardctl node rm: the records first (refused while runs on it have
// not ended, unless forced), then the engine forgets the node.
void ServiceServer::opNodeRm(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const QString name = str(req, "node");
    if (name.isEmpty() || name == u"local") {
        replyError(c, id, QStringLiteral("invalid_input"), QStringLiteral("node_rm needs a node other than 'local'"));
        return;
    }
    const auto removed = removeNodeRecords(*m_store, name, req.value(QStringLiteral("force")).toBool());
    if (!removed) {
        replyError(c, id, replyKind(removed.error(), QStringLiteral("no_such_node")), removed.error().message);
        return;
    }
    m_engine->removeNode(name);
    m_nodeStatus.remove(name);
    m_lastGpus.remove(name);
    Q_EMIT nodeRemoved(name);
    reply(c, id, {{QStringLiteral("failed_runs"), *removed}});
}

void ServiceServer::opSubscribe(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    // Each flag the request names is set; the others stay as they were.
    const auto flag = [&req](const char* name, bool current) {
        const QJsonValue v = req.value(QLatin1String(name));
        return v.isBool() ? v.toBool() : current;
    };
    c.allStates = flag("runs", c.allStates);
    c.metrics = flag("metrics", c.metrics);
    c.pipelines = flag("pipelines", c.pipelines);
    const bool prompts = flag("prompts", m_promptClients.contains(c.socket));
    m_promptClients.removeAll(c.socket);
    if (prompts)
        m_promptClients.append(c.socket);
    const bool gpus = flag("gpus", c.gpus);
    reply(c, id, {});
    // Where every node stands now; changes follow as they happen.
    for (const QJsonObject& status : std::as_const(m_nodeStatus))
        send(c, status);
    if (gpus && !c.gpus)
        for (auto it = m_lastGpus.cbegin(); it != m_lastGpus.cend(); ++it)
            send(c,
                    {{QStringLiteral("event"), QStringLiteral("gpus")}, {QStringLiteral("node"), it.key()},
                            {QStringLiteral("gpus"), it.value()}});
    c.gpus = gpus;
}

void ServiceServer::onGpus(const QString& node, const QList<AgentGpu>& gpus)
{
    const QJsonArray json = gpusToJson(gpus);
    m_lastGpus.insert(node, json);
    const QByteArray line = encode({{QStringLiteral("event"), QStringLiteral("gpus")}, {QStringLiteral("node"), node},
            {QStringLiteral("gpus"), json}});
    for (const auto& c : std::as_const(m_clients))
        if (c->gpus)
            c->socket->write(line);
}

void ServiceServer::onMetrics(RunId run, const QList<MetricPoint>& points)
{
    if (points.isEmpty())
        return;
    QByteArray line;
    for (const auto& c : std::as_const(m_clients)) {
        if (!c->metrics)
            continue;
        if (line.isEmpty())
            line = encode({{QStringLiteral("event"), QStringLiteral("metrics")}, {QStringLiteral("run"), run},
                    {QStringLiteral("points"), metricPointsToJson(points)}});
        c->socket->write(line);
    }
}

// The Nodes view's "Add node": stored, then connected by the host at once.
void ServiceServer::opNodeAdd(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    auto node = nodeFromJson(req.value(QStringLiteral("node")).toObject());
    if (!node) {
        replyError(c, id, QStringLiteral("invalid_input"), node.error().message);
        return;
    }
    for (const NodeRecord& n : m_store->nodes())
        if (n.name == node->name) {
            replyError(c, id, QStringLiteral("invalid_input"),
                    QStringLiteral("a node named '%1' exists already (remove it first)").arg(n.name));
            return;
        }
    for (const QString& l : std::as_const(node->labels))
        if (const auto bad = nodeLabelError(l)) {
            replyError(c, id, QStringLiteral("invalid_input"), QStringLiteral("node %1: %2").arg(node->name, *bad));
            return;
        }
    node->addedAt = QDateTime::currentDateTimeUtc();
    if (auto stored = m_store->addNode(*node); !stored) {
        replyError(c, id, QStringLiteral("storage"), stored.error().message);
        return;
    }
    Q_EMIT nodeAdded(*node, req.value(QStringLiteral("accept_new_host_key")).toBool());
    reply(c, id, {{QStringLiteral("node"), nodeToJson(*node)}});
}

// trainyardctl node label: the node's labels changed here, the database's
// one writer, so concurrent changes never lose one another's; the engine's
// next pass places by them (it reads them each pass).
void ServiceServer::opNodeLabel(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const QString name = str(req, "node");
    const auto labelsOf = [&](const char* key, QStringList& out) -> bool {
        const QJsonValue v = req.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull())
            return true;
        if (!v.isArray())
            return false;
        for (const QJsonValue& l : v.toArray()) {
            if (!l.isString())
                return false;
            out << l.toString();
        }
        return true;
    };
    QStringList add;
    QStringList remove;
    if (!labelsOf("add", add) || !labelsOf("remove", remove)) {
        replyError(c, id, QStringLiteral("invalid_input"),
                QStringLiteral("node_label: `add` and `remove` must be arrays of strings"));
        return;
    }
    for (const QString& l : std::as_const(add))
        if (const auto bad = nodeLabelError(l)) {
            replyError(c, id, QStringLiteral("invalid_input"), QStringLiteral("node %1: %2").arg(name, *bad));
            return;
        }
    std::optional<QStringList> current;
    if (name == u"local") {
        current = m_store->localNodeLabels();
    } else {
        for (const NodeRecord& n : m_store->nodes())
            if (n.name == name)
                current = n.labels;
    }
    if (!current) {
        replyError(c, id, QStringLiteral("no_such_node"), QStringLiteral("no node named '%1'").arg(name));
        return;
    }
    QStringList labels = *current;
    for (const QString& l : std::as_const(remove))
        labels.removeAll(l);
    for (const QString& l : std::as_const(add))
        if (!labels.contains(l))
            labels << l;
    if (labels != *current) {
        if (auto stored = m_store->setNodeLabels(name, labels); !stored) {
            replyError(c, id, QStringLiteral("storage"), stored.error().message);
            return;
        }
        m_engine->scheduleSoon();
    }
    reply(c, id, {{QStringLiteral("node"), name}, {QStringLiteral("labels"), QJsonArray::fromStringList(labels)}});
}

std::function<void(QJsonObject, const Error*)> ServiceServer::laterReply(Client& c, const QJsonValue& id)
{
    QPointer<QLocalSocket> socket = c.socket;
    return [this, socket, id](QJsonObject body, const Error* error) {
        if (!socket)
            return;
        const auto client = m_clients.value(socket.data());
        if (!client)
            return;
        if (error)
            replyError(*client, id, replyKind(*error, QStringLiteral("no_such_run")), error->message);
        else
            reply(*client, id, std::move(body));
    };
}

// trainyardctl import: a framework's metric file read by the service (the
// client's user is the service's) into a run, its points and hparams
// written here, the database's one writer.
void ServiceServer::opImportMetrics(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const auto found = requestedRun(c, id, req);
    if (!found)
        return;
    const RunId run = found->id;
    const QString file = str(req, "file");
    if (!QFileInfo(file).isAbsolute()) {
        replyError(c, id, QStringLiteral("invalid_input"),
                QStringLiteral("import_metrics needs `file`, an absolute path (got '%1')").arg(file));
        return;
    }
    const auto imported = importMetricFile(file);
    if (!imported) {
        replyError(c, id, QStringLiteral("invalid_input"), imported.error().message);
        return;
    }
    const QList<MetricPoint> points = toMetricPoints(imported->metrics, run, QDateTime::currentMSecsSinceEpoch());
    m_store->appendMetrics(points);
    if (!imported->params.isEmpty())
        m_store->setParams(run, imported->params);
    if (auto flushed = m_store->flush(); !flushed) {
        replyError(c, id, QStringLiteral("storage"), flushed.error().message);
        return;
    }
    QStringList keys;
    for (const MetricPoint& p : points)
        if (!keys.contains(p.key))
            keys.append(p.key);
    QJsonObject params;
    for (auto it = imported->params.cbegin(); it != imported->params.cend(); ++it)
        params.insert(it.key(), it.value());
    QJsonObject body{{QStringLiteral("points"), qint64(points.size())},
            {QStringLiteral("keys"), QJsonArray::fromStringList(keys)},
            {QStringLiteral("format"), metricFileFormatName(imported->format)}, {QStringLiteral("params"), params},
            {QStringLiteral("warnings"), QJsonArray::fromStringList(imported->warnings)}};
    if (!imported->error.isEmpty()) {
        body.insert(QStringLiteral("error"), imported->error);
        body.insert(QStringLiteral("error_offset"), imported->errorOffset);
    }
    reply(c, id, body);
}

// Artifacts of a run, listed (and copied into `dest`, a folder of the
// client's user, who is this service's) by the run's node: answered when the
// node has, so other replies may come first.
void ServiceServer::opArtifacts(Client& c, const QJsonValue& id, const QJsonObject& req, bool download)
{
    const auto r = requestedRun(c, id, req);
    if (!r)
        return;
    const RunId run = r->id;
    connectNodeOf(*r);
    auto answer = laterReply(c, id);
    if (!download) {
        m_engine->listArtifacts(run, [answer](const Result<AgentFileList>& list) {
            if (list)
                answer({{QStringLiteral("list"), fileListToJson(*list)}}, nullptr);
            else
                answer({}, &list.error());
        });
        return;
    }
    const QString dest = str(req, "dest");
    if (dest.isEmpty() || !QFileInfo(dest).isAbsolute()) {
        replyError(c, id, QStringLiteral("invalid_input"),
                QStringLiteral("download_artifacts needs `dest`, an absolute folder (got '%1')").arg(dest));
        return;
    }
    m_engine->downloadArtifacts(run, dest, [answer](const Result<ArtifactDownload>& d) {
        if (d)
            answer({{QStringLiteral("downloaded"), QJsonArray::fromStringList(d->downloaded)},
                           {QStringLiteral("refused"), QJsonArray::fromStringList(d->refused)}},
                    nullptr);
        else
            answer({}, &d.error());
    });
}

void ServiceServer::opWatch(Client& c, const QJsonValue& id, const QJsonObject& req)
{
    const auto r = requestedRun(c, id, req);
    if (!r)
        return;
    const RunId run = r->id;
    Watch w;
    w.console = req.value(QStringLiteral("console")).toBool();
    w.follow = req.value(QStringLiteral("follow")).toBool(true);
    w.cursor = std::max<qint64>(0, req.value(QStringLiteral("from")).toInteger());
    reply(c, id, {{QStringLiteral("run"), runToJson(*r)}});
    if (w.console && m_engine->ownsIngestion()) {
        // What the local copy holds so far; the engine's thread is this one,
        // so every byte it emitted before now is in the file, and every later
        // one comes as consoleReceived.
        QFile f(r->consolePath);
        if (!r->consolePath.isEmpty() && f.open(QIODevice::ReadOnly) && f.size() > w.cursor && f.seek(w.cursor)) {
            while (!f.atEnd()) {
                const QByteArray chunk = f.read(kConsoleChunk);
                if (chunk.isEmpty())
                    break;
                sendConsole(c, run, w.cursor, chunk);
                w.cursor += chunk.size();
            }
        }
        w.nodeWatchEnded = true;
    } else if (w.console || !m_engine->ownsIngestion()) {
        // Another process ingests (a GUI of an older version): the engine
        // tails the node for display, and learns the end from the database.
        m_engine->watch(run, w.cursor, w.follow);
        w.nodeWatchEnded = !w.console;
    } else {
        w.nodeWatchEnded = true;
    }
    const bool ended = isTerminal(r->state);
    c.watches.insert(run, w);
    for (const QString& text : m_liveNotices.value(run))
        sendNotice(c, run, text);
    if (std::any_of(m_pendingEnds.cbegin(), m_pendingEnds.cend(), [run](const RunRecord& e) { return e.id == run; }))
        return; // its end comes with deliverEnds(), once committed
    sendState(c, *r);
    if (const QString reason = m_engine->pendingReasons().value(run); !reason.isEmpty() && !ended)
        send(c,
                {{QStringLiteral("event"), QStringLiteral("pending")},
                        {QStringLiteral("reasons"), QJsonObject{{QString::number(run), reason}}}});
    if (ended && w.nodeWatchEnded)
        send(c, {{QStringLiteral("event"), QStringLiteral("watch_ended")}, {QStringLiteral("run"), run}});
}

bool ServiceServer::caughtUpNow() const
{
    if (!m_engine->ownsIngestion())
        return true; // another process ingests: nothing to wait for here
    if (!m_caughtUp)
        return false;
    // Nodes added since (node add while it runs) count too; one that was
    // tried and cannot be reached stays behind for good.
    for (const auto& [node, why] : m_engine->nodesBehind())
        if (!m_engine->nodeUnreachable(node))
            return false;
    return true;
}

void ServiceServer::answerCaughtUp()
{
    if (!caughtUpNow())
        return;
    m_caughtUpTimer->stop();
    const auto waiters = std::exchange(m_caughtUpWaiters, {});
    for (const auto& [socket, id] : waiters)
        if (socket && m_clients.contains(socket.data()))
            opCaughtUp(*m_clients.value(socket.data()), id);
}

void ServiceServer::opCaughtUp(Client& c, const QJsonValue& id)
{
    if (m_nodeResolver)
        m_nodeResolver(QString()); // nodes stored since the service started
    if (!caughtUpNow()) {
        m_caughtUpWaiters.append({QPointer<QLocalSocket>(c.socket), id});
        m_caughtUpTimer->start();
        return;
    }
    (void)m_store->flush(); // the client reads the database next
    reply(c, id, {{QStringLiteral("ingests"), m_engine->ownsIngestion()}, {QStringLiteral("behind"), nodesBehind()}});
}

QJsonArray ServiceServer::nodesBehind() const
{
    QJsonArray behind;
    for (const auto& [node, why] : m_engine->nodesBehind())
        behind.append(QJsonObject{{QStringLiteral("node"), node}, {QStringLiteral("why"), why},
                {QStringLiteral("unreachable"), m_engine->nodeUnreachable(node)}});
    return behind;
}

std::optional<RunRecord> ServiceServer::latest(RunId run) const
{
    if (const auto it = m_latest.constFind(run); it != m_latest.cend())
        return *it;
    auto r = m_store->run(run);
    if (!r)
        return std::nullopt;
    return *r;
}

void ServiceServer::sendConsole(Client& c, RunId run, qint64 offset, QByteArrayView bytes)
{
    c.socket->write(encodeConsoleEvent(run, offset, bytes));
}

void ServiceServer::sendNotice(Client& c, RunId run, const QString& text)
{
    send(c,
            {{QStringLiteral("event"), QStringLiteral("notice")}, {QStringLiteral("run"), run},
                    {QStringLiteral("text"), text}});
}

void ServiceServer::sendState(Client& c, const RunRecord& run)
{
    send(c, {{QStringLiteral("event"), QStringLiteral("state")}, {QStringLiteral("run"), runToJson(run)}});
}

void ServiceServer::onConsole(RunId run, qint64 offset, const QByteArray& bytes)
{
    for (const auto& c : std::as_const(m_clients)) {
        auto it = c->watches.find(run);
        if (it == c->watches.end() || !it->console)
            continue;
        const qint64 end = offset + bytes.size();
        if (end <= it->cursor)
            continue;
        const qint64 skip = std::max<qint64>(0, it->cursor - offset);
        for (qint64 at = skip; at < bytes.size(); at += kConsoleChunk)
            sendConsole(
                    *c, run, offset + at, QByteArrayView(bytes).sliced(at, std::min(kConsoleChunk, bytes.size() - at)));
        it->cursor = end;
    }
}

void ServiceServer::onRunState(const RunRecord& run)
{
    if (!isTerminal(run.state)) {
        m_latest.insert(run.id, run);
        deliverState(run);
        return;
    }
    // An end is told once the work after it (the listing of its artifacts)
    // is done and all of it is committed, so a client that reads the
    // database when told finds the run as it ended. The engine starts that
    // work right after the signal: look once this call returns.
    m_latest.insert(run.id, run);
    m_pendingEnds.append(run);
    QTimer::singleShot(0, this, &ServiceServer::deliverEnds);
}

void ServiceServer::deliverEnds()
{
    if (m_pendingEnds.isEmpty())
        return;
    if (m_engine->postRunWorkPending() && m_endWaitStartedMs >= 0
            && QDateTime::currentMSecsSinceEpoch() - m_endWaitStartedMs < kPostRunWaitMs)
        return; // postRunWorkDone calls again
    if (m_engine->postRunWorkPending() && m_endWaitStartedMs < 0) {
        m_endWaitStartedMs = QDateTime::currentMSecsSinceEpoch();
        QTimer::singleShot(kPostRunWaitMs, this, &ServiceServer::deliverEnds);
        return;
    }
    m_endWaitStartedMs = -1;
    (void)m_store->flush();
    const auto ends = std::exchange(m_pendingEnds, {});
    for (const RunRecord& run : ends) {
        m_latest.remove(run.id); // stored now; the maps keep to the live runs
        deliverState(run);
        m_liveNotices.remove(run.id);
    }
}

void ServiceServer::deliverState(const RunRecord& run)
{
    for (const auto& c : std::as_const(m_clients)) {
        auto it = c->watches.find(run.id);
        if (it == c->watches.end()) {
            if (c->allStates)
                sendState(*c, run);
            continue;
        }
        if (isTerminal(run.state) && !it->nodeWatchEnded) {
            // The console of a display-only watch may still be on its way:
            // the end is sent after it (or 5 s later at most).
            it->heldEnd = run;
            QPointer<QLocalSocket> socket = c->socket;
            QTimer::singleShot(5000, this, [this, socket, id = run.id] {
                if (socket && m_clients.contains(socket.data()))
                    if (auto& w = m_clients.value(socket.data())->watches; w.contains(id) && w[id].heldEnd)
                        onWatchEnded(id);
            });
            continue;
        }
        sendState(*c, run);
        if (isTerminal(run.state))
            send(*c, {{QStringLiteral("event"), QStringLiteral("watch_ended")}, {QStringLiteral("run"), run.id}});
    }
}

void ServiceServer::onWatchEnded(RunId run)
{
    for (const auto& c : std::as_const(m_clients)) {
        auto it = c->watches.find(run);
        if (it == c->watches.end())
            continue;
        it->nodeWatchEnded = true;
        if (it->heldEnd) {
            const RunRecord end = *std::exchange(it->heldEnd, std::nullopt);
            sendState(*c, end);
            send(*c, {{QStringLiteral("event"), QStringLiteral("watch_ended")}, {QStringLiteral("run"), run}});
        }
    }
}

void ServiceServer::onPending(const QHash<RunId, QString>& reasons)
{
    for (const auto& c : std::as_const(m_clients)) {
        QJsonObject theirs;
        for (auto it = reasons.cbegin(); it != reasons.cend(); ++it)
            if (c->allStates || c->watches.contains(it.key()))
                theirs.insert(QString::number(it.key()), it.value());
        if (!theirs.isEmpty())
            send(*c, {{QStringLiteral("event"), QStringLiteral("pending")}, {QStringLiteral("reasons"), theirs}});
    }
}

} // namespace ty::service
