#include "Paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace ty {

QString defaultDatabasePath()
{
    const QString env = qEnvironmentVariable("TRAINYARD_DB");
    if (!env.isEmpty())
        return env;
    QString dir = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    if (dir.isEmpty())
        dir = QDir::homePath() + QStringLiteral("/.local/share");
    return dir + QStringLiteral("/trainyard/trainyard.db");
}

QString runDataDir(const QString& databasePath, qint64 runId)
{
    // Named after the database file, so two databases in one folder never
    // share a run's console copy.
    return QFileInfo(databasePath).absoluteFilePath() + QStringLiteral(".runs/") + QString::number(runId);
}

QString localAgentPath()
{
    const QString env = qEnvironmentVariable("TRAINYARD_AGENT");
    if (!env.isEmpty())
        return env;
    const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/trainyard-agent");
    if (QFileInfo(beside).isExecutable())
        return beside;
    // Build tree layout: build/app/{gui,cli}/ and build/app/agent/.
    const QString sibling = QCoreApplication::applicationDirPath() + QStringLiteral("/../agent/trainyard-agent");
    if (QFileInfo(sibling).isExecutable())
        return QFileInfo(sibling).canonicalFilePath();
    const QString onPath = QStandardPaths::findExecutable(QStringLiteral("trainyard-agent"));
    return onPath.isEmpty() ? beside : onPath;
}

} // namespace ty
