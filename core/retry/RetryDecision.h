#pragma once

// Whether, and when, a run whose attempt just ended is tried again (issue
// #25), from its retry policy (RetryPolicy.h, which holds the rules of the
// budgets and the backoff), its attempts so far and its two time bounds:
//   deadline      wall clock from the first submit, the time in the queue
//                 included: no retry is made that would start at or after
//                 it (the engine also stops what still runs or waits then)
//   max_run_time  execution only: the attempts' started..ended summed over
//                 all attempts, so a long queue, the backoff waits and
//                 attempts that never started use none of it (argo#16857,
//                 whose maxExecutionDuration is this sum; per attempt it
//                 would be `time_limit` again). No retry once the sum has
//                 reached it; remainingRunTimeMs is what the next attempt
//                 may still use, for the engine to stop it there.
//
// Pure: time comes in as ms values (UTC ms since the epoch), the jitter's
// random sample from the caller; nothing is read from a clock or a file.
// Any thread.

#include "core/common/FailureKind.h"
#include "core/retry/RetryClass.h"
#include "core/retry/RetryPolicy.h"

#include <QList>
#include <QString>

#include <optional>

namespace ty {

// One ended attempt of a run.
struct AttemptOutcome {
    RetryClass cls = RetryClass::Failed;
    // The finer kind, for the words only ("exit code" rather than "failed");
    // None: the words use the class.
    FailureKind kind = FailureKind::None;
    std::optional<qint64> startedMs; // nullopt: it never started (a failed start): no execution time
    qint64 endedMs = 0;              // when its end was recorded

    // The outcome of an attempt that ended with `kind` (class retryClassOf(kind)).
    static AttemptOutcome of(FailureKind kind, std::optional<qint64> startedMs, qint64 endedMs);
};

// The run's time bounds, from its spec's `deadline` and `max_run_time`; ms.
struct RunLimits {
    std::optional<qint64> deadlineMs;   // from the first submit
    std::optional<qint64> maxRunTimeMs; // execution summed over attempts
};

enum class RetryBudget {
    None,  // no retry, and no budget decided it
    Code,  // `limit`
    Infra, // `infra_limit`
};

enum class RetryVerdict {
    Retry,             // retried at RetryDecision::atMs
    NothingEnded,      // `attempts` is empty
    Succeeded,         // never retried
    Cancelled,         // never retried
    Unschedulable,     // never retried
    NotCovered,        // a code class that `on` does not name
    LimitReached,      // `limit` used up
    InfraLimitReached, // `infra_limit` used up
    MaxRunTimeUsedUp,  // max_run_time reached
    DeadlinePassed,    // the deadline has passed, or would before the retry starts
};

struct RetryDecision {
    RetryVerdict verdict = RetryVerdict::NothingEnded;
    bool retry() const { return verdict == RetryVerdict::Retry; }

    // For a retry: when to submit it (UTC ms since the epoch): the last
    // attempt's end plus waitMs, or nowMs where that has already passed.
    qint64 atMs = 0;
    qint64 waitMs = 0; // the backoff wait from the last attempt's end, jitter included
    // The budget the last ending draws on (None for never-retried and
    // uncovered classes), and the ordinal of this retry in it: 1 for its
    // first. For a refusal by a budget, the number of endings that drew on
    // it (limit + 1 when it is used up).
    RetryBudget budget = RetryBudget::None;
    int budgetAttempt = 0;
    std::optional<int> budgetLimit; // that budget's limit; nullopt: no limit
    // One line a user reads, for the run's notice and the attempts list:
    //   "exit code: retry 2 of 3, at 2026-01-01T00:01:30Z (a wait of 1m from its end)"
    //   "node lost: infra retry 2, without limit within its deadline, at ..."
    //   "failed 4 times (exit code, CUDA OOM); its retry limit is 3"
    //   "ended by node loss or preemption 6 times (node lost); its infra_limit is 5"
    //   "cancelled by the user: never retried"
    //   "CUDA OOM is not retried: its retry.on names failed, timeout"
    //   "its max_run_time of 2h is used up: 2h of execution over 3 attempts"
    //   "its deadline of 6h passed at 2026-01-01T06:00:00Z"
    //   "its deadline of 6h passes at 2026-01-01T06:00:00Z, before the retry would start at 2026-01-01T06:05:00Z"
    QString reason;
};

// Decides for the last of `attempts` (in the order they ran; every earlier
// one was retried). `firstSubmitMs`: when the run was first submitted (the
// deadline counts from it); `nowMs`: the caller's clock now;
// `jitterSample`: uniform in [-1, 1] (the caller's random draw; 0: none).
// Checks, in order: the class (never retried, not covered), its budget,
// max_run_time, the deadline.
RetryDecision decideRetry(const RetryPolicy& policy, const QList<AttemptOutcome>& attempts, qint64 firstSubmitMs,
        qint64 nowMs, double jitterSample, const RunLimits& limits = {});

// Execution time of the attempts: the sum of ended - started over those
// that started (a negative span counts 0); ms.
qint64 executionMs(const QList<AttemptOutcome>& attempts);
// What the next attempt may still run under max_run_time (>= 0), after the
// ended `attempts`; nullopt without max_run_time.
std::optional<qint64> remainingRunTimeMs(const QList<AttemptOutcome>& attempts, const RunLimits& limits);

} // namespace ty
