#pragma once

#include <QString>
#include <QStringView>

#include <optional>

namespace ty {

// Why a run ended without succeeding, as one word the store, JSON and the
// GUI agree on (RunRecord::failureKind; the one-line detail is
// RunRecord::failureReason). Decided once, when the run's end is recorded
// (core/runs/FailureClassifier.h). Stored by name (failureKindName), so the
// names below are a storage format: never rename one, only add. The order
// of the enumerators is not stored (an added one may go where it reads best).
enum class FailureKind {
    None,            // ""                  not failed (running, queued, succeeded), or recorded before schema v9
    ExitCode,        // "exit_code"         exited with a non-zero code and nothing more specific is known
    Signal,          // "signal"            killed by a signal (SIGKILL without evidence of the OOM killer is this)
    OomKilled,       // "oom_killed"        killed by the kernel's out-of-memory killer, with evidence of it
    CudaOutOfMemory, // "cuda_oom"          its console says CUDA ran out of memory
    PythonTraceback, // "python_traceback"  its console ends a Python traceback (detail: the exception line)
    NcclError,       // "nccl_error"        its console holds an NCCL error (distributed training)
    TimeLimit,       // "time_limit"        stopped at its job spec's time_limit
    NodeLost,        // "node_lost"         its node lost the run (rebooted, removed, agent without a record of it)
    Preempted,       // "preempted"         stopped to give its resources to another run, to be retried (issue #25:
                     //                     the engine's preemption, core/sched/Preemption.h, or Slurm's)
    Cancelled,       // "cancelled"         cancelled by the user (or with its gang)
    StartFailed,     // "start_failed"      could not be started on its node
    Unschedulable,   // "unschedulable"     no node this engine knows could ever hold it
    Other,           // "other"             ended without an exit status and without any of the above
};

// "exit_code", "cuda_oom", ...; "" for None.
QString failureKindName(FailureKind kind);
// The kind named `name` (as failureKindName writes it; "" is None), nullopt
// for a name this version does not know (a newer Trainyard's).
std::optional<FailureKind> failureKindFromName(QStringView name);
// A short label for narrow columns: "exit code", "signal", "OOM killer",
// "CUDA OOM", "traceback", "NCCL", "time limit", "node lost", "preempted", "cancelled",
// "start failed", "unschedulable", "other"; "" for None.
QString failureKindLabel(FailureKind kind);

} // namespace ty
