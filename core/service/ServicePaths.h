#pragma once

#include "core/common/Result.h"

#include <QString>

namespace ty {

// Where trainyardd, the per-user service of one result database, keeps its
// socket, its lock and its log (PROTOCOL.md beside this file).
//
//   socket:  $XDG_RUNTIME_DIR/trainyard/d-<key>.sock, or, without
//            XDG_RUNTIME_DIR (no systemd-logind), /tmp/trainyard-<uid>/d-<key>.sock
//   lock:    <db path>.service.lock (QLockFile: pid, host and program of the holder)
//   log:     $XDG_STATE_HOME/trainyard/trainyardd-<key>.log (~/.local/state/...),
//            rotated to .1 .. .3 once over 4 MiB
//
// <key> is the first 16 hex digits of the SHA-1 of the database's absolute
// path (a socket path must stay under 108 bytes), so two databases of one user
// get two services.
struct ServicePaths {
    QString databasePath; // absolute
    QString runtimeDir;   // the socket's folder: mode 0700, owned by this user
    QString socket;
    QString lock;
    QString log;
};

// The paths for `databasePath`. Creates the runtime folder (0700) when it is
// missing. Errors: the folder cannot be made, is not a folder, belongs to
// another user, or others can enter it (a socket there could be replaced).
Result<ServicePaths> servicePathsFor(const QString& databasePath);

// The trainyardd executable: $TRAINYARD_DAEMON, else next to the running
// binary, else in the build tree beside it (app/daemon/), else on PATH.
QString serviceExecutablePath();

} // namespace ty
