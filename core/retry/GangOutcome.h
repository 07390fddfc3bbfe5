#pragma once

#include "core/common/Run.h"

#include <QList>

namespace ty {

class ResultStore;

// The end that stands for a whole gang (issue #25: a rank's failure restarts
// the gang, counted once per gang restart, globally, not per node or rank).
//
// A gang's ranks are runs of their own; rank 0 (the submitted run) carries
// its retries (RetryRunner). When another rank fails, the engine stops the
// rest (RunEngine::stopGangAfterFailure), so rank 0 ends *cancelled*; read
// alone, that looks like a user's cancel and would never be retried. This
// returns `rank0` as the gang's end: unchanged when rank 0 did not end
// cancelled or no other rank failed; otherwise rank 0's record with state
// Failed and the failure kind, reason (prefixed "rank N (run X): "), exit
// code and signal of the rank that failed first (earliest finishedAt, then
// lowest rank). Timing fields (started, finished) stay rank 0's.
//
// `ranks`: the gang's runs (rank 0 may be among them, it is skipped), with
// their gang memberships. Pure.
RunRecord gangOutcomeOf(const RunRecord& rank0, const QList<RunRecord>& ranks);

// gangOutcomeOf() with the gang's ranks read from `store` (only when rank 0
// ended cancelled and is in a gang; otherwise `rank0` without a read).
// Thread: the store's.
RunRecord storedGangOutcomeOf(const ResultStore& store, const RunRecord& rank0);

} // namespace ty
