#pragma once

// Which retry policy applies to an ended run (issue #25), preemption
// included. A preempted run is requeued as Slurm (`--requeue`, the default
// for preempted batch jobs under PreemptMode=REQUEUE) and Kubernetes (a
// preempted Job's pod is recreated) requeue preempted work: the user asked
// for `preemptible: true`, and a preemption is the system's doing, never the
// code's. So a preemptible run without `retry:` that ended `preempted` gets
// preemptionRequeuePolicy(): no retry of the code's failures, no limit on
// preemptions, no wait. A spec with `retry:` keeps its own policy, whose
// `infra_limit` and backoff bound preemptions too (RetryPolicy.h).
//
// Pure: no I/O, any thread.

#include "core/common/FailureKind.h"
#include "core/retry/RetryPolicy.h"
#include "core/spec/JobSpec.h"

#include <optional>

namespace ty {

// limit 0, on [], backoff 0s (factor 1, max 0s), jitter 0, infra_limit none.
RetryPolicy preemptionRequeuePolicy();

// The spec's `retry:`; else, for a preemptible spec and an ending of kind
// Preempted, preemptionRequeuePolicy(); else nullopt (not retried).
std::optional<RetryPolicy> retryPolicyFor(const JobSpec& spec, FailureKind ended);

} // namespace ty
