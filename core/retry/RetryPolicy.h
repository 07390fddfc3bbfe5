#pragma once

// A job spec's retry policy (issue #25), as JobSpec parses it from
//
//   retry: {limit: 3, on: [failed, oom, node_lost, preempted, timeout],
//           backoff: {duration: 30s, factor: 2, max: 10m}, jitter: 0.1, infra_limit: 5}
//
// or `retry: 3` (the same as `retry: {limit: 3}`: every other key its
// default). What the policy decides for an ended attempt is
// RetryDecision.h's decideRetry. A spec without `retry:` has no policy
// (JobSpec::retry is nullopt): nothing is retried, as before #25, since a
// re-run nobody asked for can repeat what a run does besides computing (a
// shared output folder, an upload); such a caller uses RetryPolicy::none().
//
// The two budgets (SkyPilot's rule, skypilot#4169; argo#1796 asks for it):
//  - `limit` (default 3): retries after the code's failures, the classes
//    that `on` names. 0: none.
//  - `infra_limit` (default: no limit; the run's `deadline` bounds it):
//    retries after node loss and preemption. These are retried whatever
//    `on` says (argo#9880: users want preemptions retried even where they
//    never want their code's failures retried, and a preemption mistaken
//    for a failure was the bug there); `on` may name them, as the issue's
//    example does, which changes nothing. `infra_limit: 0` turns them off.
//  An ending draws only on its own budget: five preemptions leave all of
//  `limit` to the code, and three code failures leave all of `infra_limit`.
//
// `on` (default: every class a retry can help, below): the code's classes
// retried. `oom` covers both the kernel's OOM killer and CUDA OOM (an ML
// user who writes "oom" means both); `cuda_oom` alone covers CUDA OOM only.
// Only the kernel's OOM killer cannot be named alone. `succeeded`,
// `cancelled` and `unschedulable` are never retried and cannot be listed.
//
// Backoff: the n-th wait of a budget is duration·factor^(n-1), capped at
// max, counted from the end of the attempt that just ended; the first wait
// is `duration` (argo#3513: Argo's first wait was duration·factor). n counts
// per budget: the first retry after a preemption waits `duration` even after
// three code failures, so one budget's history never lengthens the other's
// waits (the stale state skypilot#10155 carried across recoveries).
// `jitter` (0..1, default 0) then multiplies the wait by (1 + jitter·s), s
// uniform in [-1, 1] drawn by the caller: applied after the cap, so waits at
// the cap still spread (a jittered wait may pass `max` by up to jitter·max).
//
// Defaults when `retry:` omits a key, chosen so that `retry: 3` means "any
// failure, three times, with waits growing from 30s to 10m":
//   limit 3; on [failed, signal, oom, cuda_oom, nccl, timeout, node_lost,
//   preempted] (signal too: without the agent's evidence of the OOM killer,
//   most OOM kills are a bare SIGKILL and classed `signal`); backoff
//   {duration: 30s, factor: 2, max: 10m} (the example; Kubernetes
//   Jobs use 10s·2^n capped at 6m, of the same order), `max` being
//   `duration` instead where only a longer `duration` is written; jitter 0
//   (the waits are exactly as written; retries go through the queue, which
//   already spreads their starts); infra_limit none.
//
// Units: ms. Pure value type: no I/O, any thread.

#include "core/retry/RetryClass.h"

#include <QList>
#include <QString>

#include <optional>

namespace ty {

struct RetryBackoff {
    qint64 durationMs = 30'000; // the first wait, >= 0
    double factor = 2.0;        // >= 1 (the parser refuses less; decideRetry treats less as 1)
    qint64 maxMs = 600'000; // the cap of an un-jittered wait, >= durationMs (where it is less, waits are capped at it)
    bool operator==(const RetryBackoff&) const = default;
};

// The classes `on` holds when the spec does not write it (above).
QList<RetryClass> defaultRetryOn();

struct RetryPolicy {
    static constexpr int kDefaultLimit = 3;
    static constexpr int kMaxLimit = 10000; // what the parser accepts for `limit` and `infra_limit`

    int limit = kDefaultLimit;               // retries of code failures; 0: none
    QList<RetryClass> on = defaultRetryOn(); // as written (order kept, no repeats); may name infra classes
    RetryBackoff backoff;
    double jitter = 0.0;           // 0..1
    std::optional<int> infraLimit; // retries after node loss or preemption; nullopt: no limit
    bool operator==(const RetryPolicy&) const = default;

    // Nothing retried: limit 0, infra_limit 0 (a spec without `retry:`).
    static RetryPolicy none();

    // Whether an ending of class `cls` may be retried at all, budgets aside:
    // infra classes always, never-retried classes never, the code's classes
    // when `on` names them (`oom` in `on` covering CudaOom too).
    bool covers(RetryClass cls) const;
};

// The n-th wait of a budget (n >= 1; less counts as 1) before jitter:
// duration·factor^(n-1), capped at max; ms. Never overflows (computed in
// double and capped before it becomes an integer).
qint64 backoffWaitMs(const RetryBackoff& backoff, int n);
// `waitMs`·(1 + jitter·sample), rounded to the ms; `jitter` clamped to
// [0, 1] and `sample` to [-1, 1] (NaN: 0), so the result is >= 0.
qint64 jitteredWaitMs(qint64 waitMs, double jitter, double sample);

// "30s", "1m30s", "6h", "1d2h", "2.5s" (ms as decimals of a second); "0s".
// How decideRetry's words spell durations.
QString retryDurationText(qint64 ms);

} // namespace ty
