#pragma once

#include "core/common/Run.h"

#include <QDateTime>

namespace ty {

// How long a run has run, as shown by `trainyardctl ls/show` and the runs
// table. Pure: `nowUtc` is passed in (the caller's clock), nothing is read.
//   NotStarted  no start time                              ms = -1
//   Ended       end recorded: finishedAt - startedAt       ms >= 0
//   Running     going: nowUtc - startedAt, counting on     ms >= 0
//   EndUnknown  state unknown (its node is away): it may   ms = -1
//               have ended there at any time since, so no
//               number is given rather than one that grows
// An ended run without an end time (a database edited by hand) counts 0.
struct RunDuration {
    enum class Kind { NotStarted, Ended, Running, EndUnknown };
    Kind kind = Kind::NotStarted;
    qint64 ms = -1;
};

RunDuration runDuration(const RunRecord& run, const QDateTime& nowUtc);

} // namespace ty
