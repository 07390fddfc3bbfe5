#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QString>

namespace ty {

class ResultStore;

// Deleting a run, in one place for the service (trainyardctl rm) and the
// GUI's Delete: the run's row with its params, metrics, notices and artifact
// records, then its local folder <db>.runs/<id>/ (console copy, its node
// offsets, downloaded artifacts). Nothing on the node is touched.
// Errors: the run does not exist, has not ended ("cancel it first"), or the
// database write failed (nothing was removed then). A folder that cannot be
// removed is left, and said, after the row is gone.
Result<void> deleteEndedRun(ResultStore& store, const QString& databasePath, RunId id);

} // namespace ty
