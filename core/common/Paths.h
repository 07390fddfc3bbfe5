#pragma once

#include <QString>

namespace ty {

// Where Trainyard keeps its data on this machine.
// Result database: --db PATH > $TRAINYARD_DB > <AppDataLocation>/trainyard.db.
QString defaultDatabasePath();
// Local copies of run consoles and downloaded artifacts: <db path>.runs/<run id>/
// (e.g. ~/.local/share/trainyard/trainyard.db.runs/7/console.log).
QString runDataDir(const QString& databasePath, qint64 runId);
// The trainyard-agent executable to use for the local node: $TRAINYARD_AGENT,
// else next to the running binary, else on PATH.
QString localAgentPath();

} // namespace ty
