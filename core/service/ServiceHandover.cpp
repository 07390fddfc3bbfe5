#include "ServiceHandover.h"

#include "ServiceClient.h"
#include "ServicePaths.h"

#include <QDeadlineTimer>
#include <QFileInfo>
#include <QProcess>
#include <QThread>

#include <cerrno>
#include <csignal>

namespace ty::service {

Result<qint64> stopService(const QString& databasePath, int timeoutMs)
{
    auto svc = ServiceClient::connectTo(databasePath, ServiceClient::Start::Never, 3000);
    if (!svc)
        return 0;
    const qint64 pid = (*svc)->servicePid();
    if (auto stopped = (*svc)->call(QStringLiteral("stop")); !stopped)
        return std::unexpected(stopped.error());
    svc->reset();
    const QDeadlineTimer deadline(timeoutMs);
    while (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) {
        if (deadline.hasExpired())
            return fail(QStringLiteral("trainyardd (pid %1) was asked to stop but is still running after %2 s")
                                .arg(pid)
                                .arg(timeoutMs / 1000));
        QThread::msleep(20);
    }
    return pid;
}

} // namespace ty::service
