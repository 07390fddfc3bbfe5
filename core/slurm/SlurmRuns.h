#pragma once

// What the engine says about a run on a Slurm node (issue #26), from the
// status its login node's agent reports (PROTOCOL.md "Slurm"). Pure; any thread.

#include "core/nodes/AgentTypes.h"

#include <QString>

namespace ty::slurm {

// A pending batch job's reason in Trainyard's words (SlurmText.h pendingText):
// "waiting: Slurm says Priority: 14 jobs ahead in partition gpu, start estimated ...".
// Slurm's estimate is left out when it is a year or more after `nowMs`
// (ms UTC): backfill says "now + 365 days" while a job ahead has no time
// limit, which is no estimate at all.
QString pendingReasonOf(const AgentRunStatus& status, qint64 nowMs);

} // namespace ty::slurm
