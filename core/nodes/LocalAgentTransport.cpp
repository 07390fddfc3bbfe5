#include "LocalAgentTransport.h"

#include "common/PrivateFiles.h"
#include "nodes/NodesLog.h"

#include <QTimer>

#include <sys/stat.h>

namespace ty {

LocalAgentTransport::LocalAgentTransport(QString agentPath, QString stateDir, QObject* parent)
    : AgentTransport(parent)
    , agentPath_(std::move(agentPath))
    , stateDir_(std::move(stateDir))
    , process_(new QProcess(this))
{
    process_->setProcessChannelMode(QProcess::SeparateChannels);
    // The agent starts with the user's own umask, as over SSH: it makes its
    // own files private and gives that umask to the runs.
    process_->setChildProcessModifier([] { ::umask(inheritedUmask()); });
    connect(process_, &QProcess::started, this, &LocalAgentTransport::opened);
    connect(process_, &QProcess::readyReadStandardOutput, this, [this] {
        const QByteArray bytes = process_->readAllStandardOutput();
        if (!bytes.isEmpty())
            Q_EMIT received(bytes);
    });
    connect(process_, &QProcess::readyReadStandardError, this, [this] { logStderr(false); });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            emitClosed(QStringLiteral("cannot start the agent %1: %2").arg(agentPath_, process_->errorString()));
    });
    connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        const QByteArray rest = process_->readAllStandardOutput();
        if (!rest.isEmpty())
            Q_EMIT received(rest);
        logStderr(true);
        if (closing_)
            emitClosed(QStringLiteral("the agent connection was closed"));
        else if (status == QProcess::CrashExit)
            emitClosed(QStringLiteral("the local agent %1 crashed").arg(agentPath_));
        else
            emitClosed(QStringLiteral("the local agent %1 exited with code %2").arg(agentPath_).arg(code));
    });
}

LocalAgentTransport::~LocalAgentTransport()
{
    process_->disconnect(this);
    if (process_->state() != QProcess::NotRunning) {
        process_->closeWriteChannel();
        if (!process_->waitForFinished(2000)) {
            process_->kill();
            process_->waitForFinished(1000);
        }
    }
}

void LocalAgentTransport::setProcessEnvironment(const QProcessEnvironment& env)
{
    process_->setProcessEnvironment(env);
}

void LocalAgentTransport::open()
{
    if (process_->state() != QProcess::NotRunning)
        return;
    closedEmitted_ = false;
    closing_ = false;
    QStringList args{QStringLiteral("--stdio")};
    if (!stateDir_.isEmpty())
        args << QStringLiteral("--state-dir") << stateDir_;
    process_->start(agentPath_, args, QIODevice::ReadWrite);
}

void LocalAgentTransport::write(const QByteArray& bytes)
{
    if (process_->state() == QProcess::Running)
        process_->write(bytes);
}

void LocalAgentTransport::close()
{
    if (process_->state() == QProcess::NotRunning) {
        emitClosed(QStringLiteral("the agent connection was closed"));
        return;
    }
    closing_ = true;
    process_->closeWriteChannel();
    QTimer::singleShot(3000, process_, [p = process_] {
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
    return process_->processId();
}

void LocalAgentTransport::emitClosed(const QString& reason)
{
    if (closedEmitted_)
        return;
    closedEmitted_ = true;
    Q_EMIT closed(reason);
}

void LocalAgentTransport::logStderr(bool flushAll)
{
    stderrBuf_ += process_->readAllStandardError();
    for (;;) {
        const qsizetype nl = stderrBuf_.indexOf('\n');
        if (nl < 0)
            break;
        qCWarning(lcNodes).noquote() << "agent:" << QString::fromUtf8(stderrBuf_.left(nl));
        stderrBuf_.remove(0, nl + 1);
    }
    if (flushAll && !stderrBuf_.isEmpty()) {
        qCWarning(lcNodes).noquote() << "agent:" << QString::fromUtf8(stderrBuf_);
        stderrBuf_.clear();
    }
}

} // namespace ty
