#pragma once

// The class of an ended run as the retry policy (RetryPolicy.h) names them
// in a job spec's `retry.on` (issue #25). Coarser than FailureKind, which
// says why a run ended for the store and the GUI: the retry policy only needs
// to know which budget an ending draws on and whether the user asked for it
// to be retried.
//
// Pure: no I/O, no clock; any thread.

#include "core/common/FailureKind.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <optional>

namespace ty {

enum class RetryClass {
    Succeeded,     // "succeeded"      exit code 0: nothing to retry
    Failed,        // "failed"         the run's code failed: a non-zero exit code, a Python traceback, a start
                   //                  that failed on its node, an end without an exit status
    Signal,        // "signal"         killed by a signal without evidence of the OOM killer (a bare SIGKILL too)
    Oom,           // "oom"            killed by the kernel's out-of-memory killer, with evidence of it
    CudaOom,       // "cuda_oom"       CUDA ran out of memory
    Nccl,          // "nccl"           an NCCL error (distributed training)
    Timeout,       // "timeout"        stopped at its time_limit
    NodeLost,      // "node_lost"      its node lost it (infrastructure)
    Preempted,     // "preempted"      stopped for another run (infrastructure)
    Cancelled,     // "cancelled"      cancelled by the user: never retried
    Unschedulable, // "unschedulable"  no node could ever hold it: never retried (a retry could not either)
};

// The class of a run that ended with `kind` (FailureKind::None: it
// succeeded; pass only ended runs). ExitCode, PythonTraceback, StartFailed
// and Other are Failed; OomKilled is Oom; CudaOutOfMemory CudaOom;
// NcclError Nccl; TimeLimit Timeout; the others are their namesakes.
RetryClass retryClassOf(FailureKind kind);

// Node loss and preemption are the infrastructure's doing, not the code's:
// they draw on their own budget (`infra_limit`) and never on the code's
// `limit` (SkyPilot's rule: max_restarts_on_errors counts user-code failures
// only, skypilot#4169; Kubernetes Jobs do not count disruptions either).
bool isInfraRetryClass(RetryClass cls);
// Succeeded, Cancelled and Unschedulable: no policy retries them.
bool isNeverRetried(RetryClass cls);

// "failed", "cuda_oom", ... as in `retry.on` (the comments above).
QString retryClassName(RetryClass cls);
// The class named `name` exactly as retryClassName writes it; nullopt otherwise.
std::optional<RetryClass> retryClassFromName(QStringView name);
// Every name, in the enum's order.
QStringList retryClassNames();
// Words for messages: "failed", "killed by a signal", "OOM killer",
// "CUDA OOM", "NCCL error", "time limit", "node lost", "preempted",
// "cancelled", "unschedulable", "succeeded".
QString retryClassLabel(RetryClass cls);

} // namespace ty
