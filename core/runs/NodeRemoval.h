#pragma once

#include "core/common/Result.h"

#include <QString>

namespace ty {

class ResultStore;

// Removing a node from the database (trainyardctl node rm, done by the
// service, which then drops it from its engine: RunEngine::removeNode).
// Runs on it that have not ended would wait for it for ever (logs, cancel):
// without `force` they make the removal refused; with it they are recorded
// as failed (FailureKind::NodeLost; their processes on the node are left
// alone). Returns how many runs were recorded as failed.
// Errors: no node of that name (NotFound); runs on it not ended, without
// `force` (InvalidInput, listing them); the database write (Storage).
Result<int> removeNodeRecords(ResultStore& store, const QString& name, bool force);

} // namespace ty
