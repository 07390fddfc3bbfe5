#include "LocalAgentTransport.h"

#include "core/common/PrivateFiles.h"
#include "core/nodes/NodesLog.h"

#include <QTimer>

#include <sys/stat.h>

namespace ty {

LocalAgentTransport::LocalAgentTransport(QString agentPath, QString stateDir, QObject* parent)
    : AgentTransport(parent)
    , m_agentPath(std::move(agentPath))
    , m_stateDir(std::move(stateDir))
    , m_process(new QProcess(this))
{
    m_process->setProcessChannelMode(QProcess::SeparateChannels);
    // The agent starts with the user's own umask, as over SSH: it makes its
    // own files private and gives that umask to the runs.
    m_process->setChildProcessModifier([] { ::umask(inheritedUmask()); });
    connect(m_process, &QProcess::started, this, &LocalAgentTransport::opened);
    connect(m_process, &QProcess::readyReadStandardOutput, this, [this] {
        const QByteArray bytes = m_process->readAllStandardOutput();
        if (!bytes.isEmpty())
            Q_EMIT received(bytes);
    });
    connect(m_process, &QProcess::readyReadStandardError, this, [this] { logStderr(false); });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            emitClosed(QStringLiteral("cannot start the agent %1: %2").arg(m_agentPath, m_process->errorString()));
    });
    connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        const QByteArray rest = m_process->readAllStandardOutput();
        if (!rest.isEmpty())
            Q_EMIT received(rest);
        logStderr(true);
        if (m_closing)
            emitClosed(QStringLiteral("the agent connection was closed"));
        else if (status == QProcess::CrashExit)
            emitClosed(QStringLiteral("the local agent %1 crashed").arg(m_agentPath));
        else
            emitClosed(QStringLiteral("the local agent %1 exited with code %2").arg(m_agentPath).arg(code));
    });
}

LocalAgentTransport::~LocalAgentTransport()
{
    m_process->disconnect(this);
    if (m_process->state() != QProcess::NotRunning) {
        m_process->closeWriteChannel();
        if (!m_process->waitForFinished(2000)) {
            m_process->kill();
            m_process->waitForFinished(1000);
        }
    }
}

void LocalAgentTransport::setProcessEnvironment(const QProcessEnvironment& env)
{
    m_process->setProcessEnvironment(env);
}

void LocalAgentTransport::open()
{
    if (m_process->state() != QProcess::NotRunning)
        return;
    m_closedEmitted = false;
    m_closing = false;
    QStringList args{QStringLiteral("--stdio")};
    if (!m_stateDir.isEmpty())
        args << QStringLiteral("--state-dir") << m_stateDir;
    m_process->start(m_agentPath, args, QIODevice::ReadWrite);
}

void LocalAgentTransport::write(const QByteArray& bytes)
{
    if (m_process->state() == QProcess::Running)
        m_process->write(bytes);
}

void LocalAgentTransport::close()
{
    if (m_process->state() == QProcess::NotRunning) {
        emitClosed(QStringLiteral("the agent connection was closed"));
        return;
    }
    m_closing = true;
    m_process->closeWriteChannel();
    QTimer::singleShot(3000, m_process, [p = m_process] {
        if (p->state() != QProcess::NotRunning)
            p->kill();
    });
}

QString LocalAgentTransport::describe() const
{
    return QStringLiteral("local");
}

qint64 LocalAgentTransport::processId() const
{
    return m_process->processId();
}

void LocalAgentTransport::emitClosed(const QString& reason)
{
    if (m_closedEmitted)
        return;
    m_closedEmitted = true;
    Q_EMIT closed(reason);
}

void LocalAgentTransport::logStderr(bool flushAll)
{
    m_stderrBuf += m_process->readAllStandardError();
    for (;;) {
        const qsizetype nl = m_stderrBuf.indexOf('\n');
        if (nl < 0)
            break;
        qCWarning(lcNodes).noquote() << "agent:" << QString::fromUtf8(m_stderrBuf.left(nl));
        m_stderrBuf.remove(0, nl + 1);
    }
    if (flushAll && !m_stderrBuf.isEmpty()) {
        qCWarning(lcNodes).noquote() << "agent:" << QString::fromUtf8(m_stderrBuf);
        m_stderrBuf.clear();
    }
}

} // namespace ty
