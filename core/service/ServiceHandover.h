#pragma once

#include "core/common/Result.h"

#include <QString>

namespace ty::service {

// Stopping the service of a database (`trainyardctl daemon stop`).

// Asks the service of `databasePath`, if one runs, to stop, and waits until
// its process has exited (it answers its pending start requests first, 30 s
// at most; its runs keep going on their nodes). Returns the pid that
// stopped, or 0 when none was running. Errors: it did not stop in `timeoutMs`.
Result<qint64> stopService(const QString& databasePath, int timeoutMs = 40000);

} // namespace ty::service
