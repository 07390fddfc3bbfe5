#pragma once

#include <QStringList>

class QTextStream;

namespace ty::cli {

// trainyardctl daemon status|start|stop|log: the service of one result
// database (core/service, trainyardd).
//   status [--json]        whether it runs: pid, version, clients, runs by state, nodes
//   start [--persist]      start it when it is not running (--persist: never stop when idle)
//   stop                   stop it once its pending starts are answered (runs keep going)
//   log [--lines N]        the end of its log (the whole of it with --lines 0)
// Returns the exit code (Cli.h): 0; 2 usage; 5 not running (status, stop
// say so) or it could not be started or reached.
int daemonCommand(const QString& databasePath, const QStringList& args, QTextStream& out, QTextStream& err);

} // namespace ty::cli
