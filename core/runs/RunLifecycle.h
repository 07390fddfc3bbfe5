#pragma once

#include "core/common/Run.h"

#include <QString>

namespace ty {

// A run's lifecycle: the states of Run.h and the one function through which
// the engine changes a run's state, with the cause of each change.
//
//   queued  -> held, starting, failed (unschedulable, start failed, deadline passed),
//              cancelled
//   held    -> queued, cancelled
//   starting-> running, failed, unknown (start reply lost), queued (a GPU
//              another Trainyard holds), cancelled, succeeded (ended before
//              its start was seen)
//   running -> succeeded, failed, cancelled, unknown (node lost), starting
//              (Slurm requeued its batch job: waiting in Slurm's queue again)
//   unknown -> running (node back), succeeded, failed, cancelled
//   succeeded, failed, cancelled: final
// plus a new run entering queued (submitted) or starting (a gang's rank).
//
// Pure; no thread affinity.

enum class TransitionCause {
    Submitted, // a new run (or a gang's rank, placed with its root)
    HeldByUser,
    ReleasedByUser,
    Placed,            // the scheduler placed it; its start goes out
    StartAcknowledged, // the node's agent started it
    StartReplyLost,    // the start went out, its reply did not come back
    GpuClaimed,        // the agent refused: a GPU is held by another Trainyard instance
    StartFailed,       // the start could not be made or was refused
    Unschedulable,     // no node could ever hold it
    Ended,             // the agent reported its end (exit status, signal, cancel, time limit)
    NodeLost,          // its node stopped answering (its state is unknown)
    NodeBack,          // its node answers again and lists it running
    NodeRemoved,       // node rm --force
    Cancelled,         // cancelled before it started
    Requeued,          // Slurm put its running batch job back in its queue (node failure, preemption, scontrol requeue)
    DeadlinePassed,    // still queued when its spec's deadline passed (core/retry)
};

QString transitionCauseName(TransitionCause cause);

// Whether a run may go from `from` to `to` (the table above; a state to
// itself is allowed).
bool transitionAllowed(RunState from, RunState to);

// Sets run.state to `to` because of `cause`, logging it (category
// trainyard.runs: "run 7: starting -> running (start_acknowledged)"). A
// transition outside the table is applied too, with a warning "unexpected
// transition" naming it, so a lifecycle gap shows up in the logs (and fails
// the engine's tests) instead of leaving a run in a stale state. Returns
// whether it was an allowed one.
bool transition(RunRecord& run, RunState to, TransitionCause cause);

} // namespace ty
