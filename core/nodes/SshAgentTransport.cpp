#include "SshAgentTransport.h"

#include "core/nodes/SshSession.h"

#include <QPointer>
#include <QTcpSocket>
#include <QTimer>
#include <QThread>

#include <csignal>
#include <pthread.h>

namespace ty {

SshAgentTransport::SshAgentTransport(
        SshNodeOptions options, std::shared_ptr<SshPassphraseProvider> passphrases, QObject* parent)
    : AgentTransport(parent)
    , m_options(std::move(options))
    , m_passphrases(std::move(passphrases))
    , m_thread(new QThread(this))
{
    qRegisterMetaType<ty::AgentDeployResult>();
    m_thread->setObjectName(QStringLiteral("ssh-%1").arg(m_options.name));
    // libssh writes to the server's socket and to ssh-agent's with write()
    // and send() without MSG_NOSIGNAL: a peer that went away (an agent that
    // hangs up mid-login, a server that drops the link) would kill the whole
    // GUI or trainyardctl with SIGPIPE. Blocked on this thread only, the call
    // fails with EPIPE and the session reports it; the process keeps SIGPIPE's
    // default elsewhere (`trainyardctl logs | head` still ends quietly).
    connect(
            m_thread, &QThread::started, m_thread,
            [] {
                sigset_t pipe;
                sigemptyset(&pipe);
                sigaddset(&pipe, SIGPIPE);
                pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
            },
            Qt::DirectConnection);
    m_thread->start();
}

SshAgentTransport::~SshAgentTransport()
{
    destroySession();
    m_thread->quit();
    m_thread->wait();
}

void SshAgentTransport::destroySession()
{
    SshSession* s = std::exchange(m_session, nullptr);
    if (!s)
        return;
    s->disconnect(this);
    // Deleted on its own thread: it frees the libssh session there.
    if (m_thread->isRunning())
        QMetaObject::invokeMethod(
                s, [s] { delete s; }, Qt::BlockingQueuedConnection);
    else
        delete s;
}

void SshAgentTransport::open()
{
    if (m_open)
        return;
    destroySession();
    m_open = true;
    m_rejectedFingerprint.clear();
    m_hostKeyDecision = HostKeyDecision::None;
    auto* s = new SshSession(m_options, m_passphrases);
    s->moveToThread(m_thread);
    m_session = s;
    connect(s, &SshSession::started, this, [this, s] {
        if (s == m_session)
            Q_EMIT opened();
    });
    connect(s, &SshSession::data, this, [this, s](const QByteArray& bytes) {
        if (s == m_session)
            Q_EMIT received(bytes);
    });
    connect(s, &SshSession::resolved, this, [this](const QString& host, int port, bool proxied) {
        m_resolvedHost = host;
        m_resolvedPort = port;
        m_proxied = proxied;
    });
    connect(s, &SshSession::deployed, this, [this, s](const AgentDeployResult& r) {
        if (s != m_session)
            return;
        m_lastDeploy = r;
        Q_EMIT deployed(r);
    });
    connect(s, &SshSession::hostKeyRejected, this, [this, s](const QString& fp, const QString& message) {
        if (s != m_session)
            return;
        m_rejectedFingerprint = fp;
        // hostKeyDecided came first, with the decision.
        Q_EMIT hostKeyRejected(fp, message, m_hostKeyDecision != HostKeyDecision::RefusedUnknown);
    });
    connect(s, &SshSession::hostKeyDecided, this,
            [this, s](HostKeyDecision decision, const QString&, const QString& message) {
                if (s != m_session)
                    return;
                m_hostKeyDecision = decision;
                if (decision == HostKeyDecision::AcceptedChanged)
                    Q_EMIT warning(message);
            });
    connect(s, &SshSession::finished, this, [this, s](const QString& reason, ErrorKind kind) {
        if (s != m_session || !m_open)
            return;
        m_open = false;
        m_session = nullptr;
        s->disconnect(this);
        QMetaObject::invokeMethod(
                s, [s] { delete s; }, Qt::QueuedConnection);
        Q_EMIT closed(reason, kind);
    });
    QMetaObject::invokeMethod(s, &SshSession::start, Qt::QueuedConnection);
}

void SshAgentTransport::write(const QByteArray& bytes)
{
    if (!m_session || !m_open)
        return;
    m_session->post(bytes); // thread-safe; also flushed between the chunks of a file job
}

void SshAgentTransport::probe(std::function<void(std::optional<bool>)> done)
{
    if (m_resolvedHost.isEmpty() || m_resolvedPort <= 0 || m_proxied) {
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
    socket->connectToHost(m_resolvedHost, quint16(m_resolvedPort));
}

void SshAgentTransport::runFileJob(NodeFileJob job, std::function<void(const Result<void>&)> done)
{
    if (!m_session || !m_open) {
        QMetaObject::invokeMethod(
                this,
                [this, done] {
                    if (done)
                        done(fail(QStringLiteral("node %1: not connected").arg(describe())));
                },
                Qt::QueuedConnection);
        return;
    }
    SshSession* s = m_session;
    QPointer<SshAgentTransport> self(this);
    QMetaObject::invokeMethod(
            s,
            [s, self, job = std::move(job), done = std::move(done)] {
                Result<void> r = s->runFileJob(job);
                if (self)
                    QMetaObject::invokeMethod(
                            self.data(),
                            [done, r] {
                                if (done)
                                    done(r);
                            },
                            Qt::QueuedConnection);
            },
            Qt::QueuedConnection);
}

void SshAgentTransport::close()
{
    if (!m_session || !m_open) {
        if (m_open) {
            m_open = false;
            Q_EMIT closed(QStringLiteral("the agent connection was closed"));
        }
        return;
    }
    SshSession* s = m_session;
    QMetaObject::invokeMethod(
            s, [s] { s->stop(QStringLiteral("the agent connection was closed")); }, Qt::QueuedConnection);
}

QString SshAgentTransport::describe() const
{
    return m_options.name.isEmpty() ? m_options.host : m_options.name;
}

} // namespace ty
