#include "PreemptionRetry.h"

namespace ty {

RetryPolicy preemptionRequeuePolicy()
{
    RetryPolicy p;
    p.limit = 0;
    p.on = {};
    p.backoff = RetryBackoff{0, 1.0, 0};
    p.jitter = 0.0;
    p.infraLimit.reset();
    return p;
}

std::optional<RetryPolicy> retryPolicyFor(const JobSpec& spec, FailureKind ended)
{
    if (spec.retry)
        return spec.retry;
    if (spec.preemptible && ended == FailureKind::Preempted)
        return preemptionRequeuePolicy();
    return std::nullopt;
}

} // namespace ty
