#pragma once

#include "core/common/Result.h"

#include <QString>

namespace ty::service {

// Hand-overs between trainyardd and a process that runs the engine itself
// (the GUI, until it is a client of the service like trainyardctl).

// Asks the service of `databasePath`, if one runs, to stop, and waits until
// its process has exited (it answers its pending start requests first, 30 s
// at most; its runs keep going on their nodes). Returns the pid that
// stopped, or 0 when none was running. Errors: it did not stop in `timeoutMs`.
Result<qint64> stopService(const QString& databasePath, int timeoutMs = 40000);

// Starts trainyardd for `databasePath` in the background and returns at
// once; a service that is already running makes the new one exit. Returns
// whether the program could be started.
bool startServiceInBackground(const QString& databasePath);

} // namespace ty::service
