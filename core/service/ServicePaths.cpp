#include "ServicePaths.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace ty {

namespace {

// The socket's folder must be ours and closed to others: anyone who could
// write there could put their own socket in its place.
Result<void> ensurePrivateDir(const QString& dir)
{
    const QByteArray path = QFile::encodeName(dir);
    if (::mkdir(path.constData(), 0700) != 0 && errno != EEXIST)
        return fail(QStringLiteral("cannot create the service folder %1: %2")
                            .arg(dir, QString::fromLocal8Bit(std::strerror(errno))));
    struct stat st { };
    if (::lstat(path.constData(), &st) != 0)
        return fail(QStringLiteral("cannot read the service folder %1: %2")
                            .arg(dir, QString::fromLocal8Bit(std::strerror(errno))));
    if (!S_ISDIR(st.st_mode))
        return fail(
                QStringLiteral("the service folder %1 is not a folder (a link or a file is in its place)").arg(dir));
    if (st.st_uid != ::geteuid())
        return fail(QStringLiteral("the service folder %1 belongs to uid %2, not to you (uid %3)")
                            .arg(dir)
                            .arg(st.st_uid)
                            .arg(::geteuid()));
    if ((st.st_mode & 077) != 0 && ::chmod(path.constData(), 0700) != 0)
        return fail(
                QStringLiteral("the service folder %1 is open to other users (mode %2) and cannot be closed: %3")
                        .arg(dir, QString::number(st.st_mode & 0777, 8), QString::fromLocal8Bit(std::strerror(errno))));
    return {};
}

} // namespace

Result<ServicePaths> servicePathsFor(const QString& databasePath)
{
    ServicePaths p;
    p.databasePath = QFileInfo(databasePath).absoluteFilePath();
    const QString key = QString::fromLatin1(
            QCryptographicHash::hash(QFile::encodeName(p.databasePath), QCryptographicHash::Sha1).toHex().left(16));
    const QString xdgRuntime = qEnvironmentVariable("XDG_RUNTIME_DIR");
    if (!xdgRuntime.isEmpty() && QFileInfo(xdgRuntime).isDir()) {
        p.runtimeDir = xdgRuntime + QStringLiteral("/trainyard");
    } else {
        const QString tmp = qEnvironmentVariable("TMPDIR", QStringLiteral("/tmp"));
        p.runtimeDir = QStringLiteral("%1/trainyard-%2").arg(tmp).arg(::geteuid());
    }
    if (auto ok = ensurePrivateDir(p.runtimeDir); !ok)
        return std::unexpected(ok.error());
    p.socket = p.runtimeDir + QStringLiteral("/d-") + key + QStringLiteral(".sock");
    p.lock = p.databasePath + QStringLiteral(".service.lock");
    QString state = qEnvironmentVariable("XDG_STATE_HOME");
    if (state.isEmpty())
        state = QDir::homePath() + QStringLiteral("/.local/state");
    p.log = state + QStringLiteral("/trainyard/trainyardd-") + key + QStringLiteral(".log");
    return p;
}

QString serviceExecutablePath()
{
    const QString env = qEnvironmentVariable("TRAINYARD_DAEMON");
    if (!env.isEmpty())
        return env;
    const QString dir = QCoreApplication::applicationDirPath();
    const QString beside = dir + QStringLiteral("/trainyardd");
    if (QFileInfo(beside).isExecutable())
        return beside;
    // Build tree layout: build/app/{gui,cli}/ beside build/app/daemon/.
    const QString sibling = dir + QStringLiteral("/../daemon/trainyardd");
    if (QFileInfo(sibling).isExecutable())
        return QFileInfo(sibling).canonicalFilePath();
    const QString onPath = QStandardPaths::findExecutable(QStringLiteral("trainyardd"));
    return onPath.isEmpty() ? beside : onPath;
}

} // namespace ty
