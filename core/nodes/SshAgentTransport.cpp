#include "SshAgentTransport.h"

#include "nodes/SshSession.h"

#include <QPointer>
#include <QTcpSocket>
#include <QTimer>
#include <QThread>

#include <csignal>
#include <pthread.h>

namespace ty {

SshAgentTransport::SshAgentTransport(SshNodeOptions options, std::shared_ptr<SshPassphraseProvider> passphrases,
                                     QObject* parent)
    : AgentTransport(parent)
    , options_(std::move(options))
    , passphrases_(std::move(passphrases))
    , thread_(new QThread(this))
{
    qRegisterMetaType<ty::AgentDeployResult>();
    thread_->setObjectName(QStringLiteral("ssh-%1").arg(options_.name));
    // libssh writes to the server's socket and to ssh-agent's with write()
    // and send() without MSG_NOSIGNAL: a peer that went away (an agent that
    // hangs up mid-login, a server that drops the link) would kill the whole
    // GUI or trainyardctl with SIGPIPE. Blocked on this thread only, the call
    // fails with EPIPE and the session reports it; the process keeps SIGPIPE's
    // default elsewhere (`trainyardctl logs | head` still ends quietly).
    connect(thread_, &QThread::started, thread_, [] {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    }, Qt::DirectConnection);
    thread_->start();
}

SshAgentTransport::~SshAgentTransport()
{
    destroySession();
    thread_->quit();
    thread_->wait();
}

void SshAgentTransport::destroySession()
{
    SshSession* s = std::exchange(session_, nullptr);
    if (!s)
        return;
    s->disconnect(this);
    // Deleted on its own thread: it frees the libssh session there.
    if (thread_->isRunning())
        QMetaObject::invokeMethod(s, [s] { delete s; }, Qt::BlockingQueuedConnection);
    else
        delete s;
}

void SshAgentTransport::open()
{
    if (open_)
        return;
    destroySession();
    open_ = true;
    rejectedFingerprint_.clear();
    hostKeyDecision_ = HostKeyDecision::None;
    auto* s = new SshSession(options_, passphrases_);
    s->moveToThread(thread_);
    session_ = s;
    connect(s, &SshSession::started, this, [this, s] {
        if (s == session_)
            Q_EMIT opened();
    });
    connect(s, &SshSession::data, this, [this, s](const QByteArray& bytes) {
        if (s == session_)
            Q_EMIT received(bytes);
    });
    connect(s, &SshSession::resolved, this, [this](const QString& host, int port, bool proxied) {
        resolvedHost_ = host;
        resolvedPort_ = port;
        proxied_ = proxied;
    });
    connect(s, &SshSession::deployed, this, [this, s](const AgentDeployResult& r) {
        if (s != session_)
            return;
        lastDeploy_ = r;
        Q_EMIT deployed(r);
    });
    connect(s, &SshSession::hostKeyRejected, this, [this, s](const QString& fp, const QString& message) {
        if (s != session_)
            return;
        rejectedFingerprint_ = fp;
        // hostKeyDecided came first, with the decision.
        Q_EMIT hostKeyRejected(fp, message, hostKeyDecision_ != HostKeyDecision::RefusedUnknown);
    });
    connect(s, &SshSession::hostKeyDecided, this,
            [this, s](HostKeyDecision decision, const QString&, const QString& message) {
                if (s != session_)
                    return;
                hostKeyDecision_ = decision;
                if (decision == HostKeyDecision::AcceptedChanged)
                    Q_EMIT warning(message);
            });
    connect(s, &SshSession::finished, this, [this, s](const QString& reason, ErrorKind kind) {
        if (s != session_ || !open_)
            return;
        open_ = false;
        session_ = nullptr;
        s->disconnect(this);
        QMetaObject::invokeMethod(s, [s] { delete s; }, Qt::QueuedConnection);
        Q_EMIT closed(reason, kind);
    });
    QMetaObject::invokeMethod(s, &SshSession::start, Qt::QueuedConnection);
}

void SshAgentTransport::write(const QByteArray& bytes)
{
    if (!session_ || !open_)
        return;
    session_->post(bytes); // thread-safe; also flushed between the chunks of a file job
}

void SshAgentTransport::probe(std::function<void(std::optional<bool>)> done)
{
    if (resolvedHost_.isEmpty() || resolvedPort_ <= 0 || proxied_) {
        QTimer::singleShot(0, this, [done = std::move(done)] { done(std::nullopt); });
        return;
    }
    auto* socket = new QTcpSocket(this);
    auto finish = std::make_shared<std::function<void(bool)>>([socket, done = std::move(done)](bool answers) mutable {
        if (!done)
            return; // answered already (connected, failed or timed out first)
        const auto answer = std::exchange(done, nullptr);
        socket->abort();
        socket->deleteLater();
        answer(answers);
    });
    connect(socket, &QTcpSocket::connected, this, [finish] { (*finish)(true); });
    connect(socket, &QTcpSocket::errorOccurred, this, [finish] { (*finish)(false); });
    QTimer::singleShot(1000, socket, [finish] { (*finish)(false); });
    socket->connectToHost(resolvedHost_, quint16(resolvedPort_));
}

void SshAgentTransport::runFileJob(NodeFileJob job, std::function<void(const Result<void>&)> done)
{
    if (!session_ || !open_) {
        QMetaObject::invokeMethod(this, [this, done] {
            if (done)
                done(fail(QStringLiteral("node %1: not connected").arg(describe())));
        }, Qt::QueuedConnection);
        return;
    }
    SshSession* s = session_;
    QPointer<SshAgentTransport> self(this);
    QMetaObject::invokeMethod(s, [s, self, job = std::move(job), done = std::move(done)] {
        Result<void> r = s->runFileJob(job);
        if (self)
            QMetaObject::invokeMethod(self.data(), [done, r] { if (done) done(r); }, Qt::QueuedConnection);
    }, Qt::QueuedConnection);
}

void SshAgentTransport::close()
{
    if (!session_ || !open_) {
        if (open_) {
            open_ = false;
            Q_EMIT closed(QStringLiteral("the agent connection was closed"));
        }
        return;
    }
    SshSession* s = session_;
    QMetaObject::invokeMethod(s, [s] { s->stop(QStringLiteral("the agent connection was closed")); }, Qt::QueuedConnection);
}

QString SshAgentTransport::describe() const
{
    return options_.name.isEmpty() ? options_.host : options_.name;
}

} // namespace ty
