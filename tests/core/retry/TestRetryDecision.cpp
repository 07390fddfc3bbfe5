// Whether and when an ended attempt is retried (issue #25): one scenario per
// anchor report the issue names, the deadline, max_run_time, jitter and the
// backoff cap, every time asserted to the ms and every reason word for word.
#include "core/retry/RetryDecision.h"
#include "tests/support/TestClock.h"

#include <QTest>

using namespace ty;

namespace {
constexpr qint64 T0 = test::TestClock::kDefaultStartMs; // 2026-01-01T00:00:00Z: the first submit
constexpr qint64 kSec = 1000;
constexpr qint64 kMin = 60 * kSec;
constexpr qint64 kHour = 60 * kMin;

AttemptOutcome attempt(FailureKind kind, std::optional<qint64> startedMs, qint64 endedMs)
{
    return AttemptOutcome::of(kind, startedMs, endedMs);
}

RetryPolicy policy(int limit, RetryBackoff backoff = {})
{
    RetryPolicy p;
    p.limit = limit;
    p.backoff = backoff;
    return p;
}

// decideRetry as the engine calls it right at the last attempt's end.
RetryDecision decideAtEnd(const RetryPolicy& p, const QList<AttemptOutcome>& attempts, const RunLimits& limits = {})
{
    return decideRetry(p, attempts, T0, attempts.last().endedMs, 0.0, limits);
}
} // namespace

class TestRetryDecision final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // argo#3513: with duration 5m and factor 2 Argo's first retry waited
    // 10m. Here the first wait is `duration`, the second duration·factor.
    void argo3513FirstWaitIsDuration()
    {
        const RetryPolicy p = policy(2, {5 * kMin, 2.0, kHour});
        QList<AttemptOutcome> attempts{attempt(FailureKind::ExitCode, T0 + 10 * kSec, T0 + kMin)};
        RetryDecision d = decideAtEnd(p, attempts);
        QVERIFY(d.retry());
        QCOMPARE(d.waitMs, 5 * kMin);
        QCOMPARE(d.atMs, T0 + 6 * kMin);
        QCOMPARE(d.budget, RetryBudget::Code);
        QCOMPARE(d.budgetAttempt, 1);
        QCOMPARE(d.budgetLimit, std::optional<int>(2));
        QCOMPARE(d.reason,
                QStringLiteral("exit code: retry 1 of 2, at 2026-01-01T00:06:00Z (a wait of 5m from its end)"));

        attempts << attempt(FailureKind::ExitCode, T0 + 6 * kMin + 30 * kSec, T0 + 8 * kMin);
        d = decideAtEnd(p, attempts);
        QVERIFY(d.retry());
        QCOMPARE(d.waitMs, 10 * kMin);
        QCOMPARE(d.atMs, T0 + 18 * kMin);
        QCOMPARE(d.budgetAttempt, 2);
        QCOMPARE(d.reason,
                QStringLiteral("exit code: retry 2 of 2, at 2026-01-01T00:18:00Z (a wait of 10m from its end)"));

        attempts << attempt(FailureKind::ExitCode, T0 + 18 * kMin, T0 + 20 * kMin);
        d = decideAtEnd(p, attempts);
        QVERIFY(!d.retry());
        QCOMPARE(d.verdict, RetryVerdict::LimitReached);
        QCOMPARE(d.budget, RetryBudget::Code);
        QCOMPARE(d.budgetAttempt, 3);
        QCOMPARE(d.reason, QStringLiteral("failed 3 times (exit code); its retry limit is 2"));
    }

    // The n-th wait is duration·factor^(n-1), capped at max, and counted
    // from the end of the attempt that just ended, however long it ran.
    void backoffCapCountedFromEachEnd()
    {
        const RetryPolicy p = policy(10, {30 * kSec, 2.0, 10 * kMin});
        const QList<qint64> waits{30 * kSec, kMin, 2 * kMin, 4 * kMin, 8 * kMin, 10 * kMin, 10 * kMin, 10 * kMin};
        QList<AttemptOutcome> attempts;
        qint64 start = T0 + 5 * kSec;
        for (int n = 1; n <= waits.size(); ++n) {
            const qint64 end = start + n * 7 * kMin; // each runs a different time
            attempts << attempt(FailureKind::CudaOutOfMemory, start, end);
            const RetryDecision d = decideAtEnd(p, attempts);
            QVERIFY(d.retry());
            QCOMPARE(d.budgetAttempt, n);
            QCOMPARE(d.waitMs, waits.at(n - 1));
            QCOMPARE(d.atMs, end + waits.at(n - 1));
            start = d.atMs + 3 * kSec; // the queue takes 3 s to start it
        }
    }

    // argo#9880: users who "never want application failures retried but
    // always want preemptions retried" wrote an OnError policy, and a real
    // preemption recorded as a plain failure never triggered it. Here a
    // preempted ending is an infra retry: it is retried whatever `limit` and
    // `on` say (only infra_limit stops it), and never uses up `limit`.
    void argo9880PreemptionIsAnInfraRetry()
    {
        const RetryPolicy neverCode = policy(0);
        QList<AttemptOutcome> attempts{attempt(FailureKind::Preempted, T0 + kMin, T0 + kHour)};
        RetryDecision d = decideAtEnd(neverCode, attempts);
        QVERIFY(d.retry());
        QCOMPARE(d.budget, RetryBudget::Infra);
        QCOMPARE(d.budgetAttempt, 1);
        QCOMPARE(d.budgetLimit, std::nullopt);
        QCOMPARE(d.waitMs, 30 * kSec);
        QCOMPARE(d.atMs, T0 + kHour + 30 * kSec);
        QCOMPARE(d.reason,
                QStringLiteral(
                        "preempted: infra retry 1, without limit, at 2026-01-01T01:00:30Z (a wait of 30s from its end)"));
        // The same run's code failure is not retried: limit 0 means it, and
        // the preemption before did not count against it.
        attempts << attempt(FailureKind::ExitCode, T0 + 2 * kHour, T0 + 3 * kHour);
        d = decideAtEnd(neverCode, attempts);
        QCOMPARE(d.verdict, RetryVerdict::LimitReached);
        QCOMPARE(d.reason, QStringLiteral("failed once (exit code); its retry limit is 0"));
        // Argo's bug was the class: the same ending classed as a failure
        // would not have been retried. The class decides, not the words.
        d = decideAtEnd(neverCode, {attempt(FailureKind::ExitCode, T0 + kMin, T0 + kHour)});
        QCOMPARE(d.verdict, RetryVerdict::LimitReached);

        // `on` naming only the code's classes still retries a preemption.
        RetryPolicy onFailed = policy(3);
        onFailed.on = {RetryClass::Failed};
        d = decideAtEnd(onFailed, {attempt(FailureKind::Preempted, T0 + kMin, T0 + kHour)});
        QVERIFY(d.retry());
        QCOMPARE(d.budget, RetryBudget::Infra);
        // What turns it off is infra_limit: 0.
        RetryPolicy noInfra = policy(3);
        noInfra.infraLimit = 0;
        d = decideAtEnd(noInfra, {attempt(FailureKind::Preempted, T0 + kMin, T0 + kHour)});
        QCOMPARE(d.verdict, RetryVerdict::InfraLimitReached);
        QCOMPARE(d.budget, RetryBudget::Infra);
        QCOMPARE(d.budgetAttempt, 1);
        QCOMPARE(d.budgetLimit, std::optional<int>(0));
        QCOMPARE(d.reason, QStringLiteral("ended by node loss or preemption once (preempted); its infra_limit is 0"));
        // A spec without `retry:` retries nothing.
        d = decideAtEnd(RetryPolicy::none(), {attempt(FailureKind::NodeLost, T0 + kMin, T0 + kHour)});
        QCOMPARE(d.verdict, RetryVerdict::InfraLimitReached);
        QCOMPARE(d.reason, QStringLiteral("ended by node loss or preemption once (node lost); its infra_limit is 0"));
    }

    // skypilot#10155: one transient error turned into 24 recoveries because
    // state from before a recovery (a stale clock) carried into the next
    // decision. Here each budget counts only its own endings, for the limit
    // and for the backoff's n: 24 node losses leave the code's whole limit
    // and its first wait; code failures leave infra_limit whole; and an
    // infra_limit ends a loop of recoveries.
    void skypilot10155BudgetsApart()
    {
        const RetryPolicy p = policy(1, {30 * kSec, 2.0, 10 * kMin});
        const QList<qint64> infraWaits{30 * kSec, kMin, 2 * kMin, 4 * kMin, 8 * kMin, 10 * kMin};
        QList<AttemptOutcome> attempts;
        qint64 t = T0;
        for (int k = 1; k <= 24; ++k) {
            attempts << attempt(FailureKind::NodeLost, t + kSec, t + kHour);
            const RetryDecision d = decideAtEnd(p, attempts);
            QVERIFY2(d.retry(), qPrintable(d.reason));
            QCOMPARE(d.budget, RetryBudget::Infra);
            QCOMPARE(d.budgetAttempt, k);
            QCOMPARE(d.waitMs, infraWaits.at(std::min(k, 6) - 1));
            t = d.atMs;
        }
        attempts << attempt(FailureKind::ExitCode, t + kSec, t + kHour);
        RetryDecision d = decideAtEnd(p, attempts);
        QVERIFY(d.retry());
        QCOMPARE(d.budget, RetryBudget::Code);
        QCOMPARE(d.budgetAttempt, 1);
        QCOMPARE(d.waitMs, 30 * kSec); // its n is 1, not 25
        QCOMPARE(d.atMs, t + kHour + 30 * kSec);
        t = d.atMs;
        attempts << attempt(FailureKind::PythonTraceback, t + kSec, t + kHour);
        d = decideAtEnd(p, attempts);
        QCOMPARE(d.verdict, RetryVerdict::LimitReached);
        QCOMPARE(d.budgetAttempt, 2);
        QCOMPARE(d.reason, QStringLiteral("failed twice (exit code, traceback); its retry limit is 1"));

        // The other way round, and infra_limit ending a loop of recoveries.
        RetryPolicy q = policy(3, {30 * kSec, 2.0, 10 * kMin});
        q.infraLimit = 2;
        attempts.clear();
        t = T0;
        const auto next = [&](FailureKind kind) {
            attempts << attempt(kind, t + kSec, t + kHour);
            const RetryDecision r = decideAtEnd(q, attempts);
            if (r.retry())
                t = r.atMs;
            return r;
        };
        QVERIFY(next(FailureKind::ExitCode).retry());
        QVERIFY(next(FailureKind::Signal).retry());
        d = next(FailureKind::NodeLost);
        QVERIFY(d.retry());
        QCOMPARE(d.budget, RetryBudget::Infra);
        QCOMPARE(d.budgetAttempt, 1);
        QCOMPARE(d.budgetLimit, std::optional<int>(2));
        QCOMPARE(d.waitMs, 30 * kSec); // two code failures before do not lengthen it
        QVERIFY(d.reason.startsWith(QStringLiteral("node lost: infra retry 1 of 2, at ")));
        d = next(FailureKind::Preempted);
        QVERIFY(d.retry());
        QCOMPARE(d.budgetAttempt, 2);
        QCOMPARE(d.waitMs, kMin);
        // Two infra endings used none of the code's limit: its third retry is there...
        d = next(FailureKind::NcclError);
        QVERIFY(d.retry());
        QCOMPARE(d.budget, RetryBudget::Code);
        QCOMPARE(d.budgetAttempt, 3);
        QCOMPARE(d.waitMs, 2 * kMin);
        QVERIFY(d.reason.startsWith(QStringLiteral("NCCL: retry 3 of 3, at ")));
        // ...and a third infra ending finds infra_limit used up.
        d = next(FailureKind::NodeLost);
        QCOMPARE(d.verdict, RetryVerdict::InfraLimitReached);
        QCOMPARE(d.budgetAttempt, 3);
        QCOMPARE(d.reason,
                QStringLiteral(
                        "ended by node loss or preemption 3 times (node lost, preempted); its infra_limit is 2"));
    }

    // argo#16857: a retry budget that counts the queue is used up by a
    // congested cluster before the code ran. max_run_time counts execution
    // only: a run queued 5 h with max_run_time 2h is still retried.
    void argo16857MaxRunTimeCountsExecutionOnly()
    {
        const RetryPolicy p = policy(5);
        const RunLimits limits{std::nullopt, 2 * kHour};
        QList<AttemptOutcome> attempts{attempt(FailureKind::ExitCode, T0 + 5 * kHour, T0 + 5 * kHour + 30 * kMin)};
        RetryDecision d = decideAtEnd(p, attempts, limits);
        QVERIFY2(d.retry(), qPrintable(d.reason));
        QCOMPARE(d.atMs, T0 + 5 * kHour + 30 * kMin + 30 * kSec);
        QCOMPARE(executionMs(attempts), 30 * kMin);
        QCOMPARE(remainingRunTimeMs(attempts, limits), std::optional<qint64>(90 * kMin));
        // A start that failed used no execution time.
        attempts << attempt(FailureKind::StartFailed, std::nullopt, T0 + 8 * kHour);
        d = decideAtEnd(p, attempts, limits);
        QVERIFY(d.retry());
        QCOMPARE(d.reason,
                QStringLiteral("start failed: retry 2 of 5, at 2026-01-01T08:01:00Z (a wait of 1m from its end)"));
        QCOMPARE(remainingRunTimeMs(attempts, limits), std::optional<qint64>(90 * kMin));
        // 30m + 90m: used up, whatever the wall clock says.
        attempts << attempt(FailureKind::TimeLimit, T0 + 9 * kHour, T0 + 10 * kHour + 30 * kMin);
        d = decideAtEnd(p, attempts, limits);
        QCOMPARE(d.verdict, RetryVerdict::MaxRunTimeUsedUp);
        QCOMPARE(d.reason, QStringLiteral("its max_run_time of 2h is used up: 2h of execution over 3 attempts"));
        QCOMPARE(remainingRunTimeMs(attempts, limits), std::optional<qint64>(0));
        // One ms short of it is still retried.
        attempts.last().endedMs -= 1;
        QVERIFY(decideAtEnd(p, attempts, limits).retry());
        QCOMPARE(remainingRunTimeMs(attempts, {}), std::nullopt);
    }

    // The deadline counts from the first submit, queue included; a retry
    // that would start at or after it is not made.
    void deadline()
    {
        const RetryPolicy p = policy(5, {kMin, 2.0, 10 * kMin});
        const RunLimits limits{6 * kHour, std::nullopt};
        const qint64 deadlineAt = T0 + 6 * kHour;
        // The first failure: a wait of 1m, ending a minute before the deadline.
        QList<AttemptOutcome> attempts{attempt(FailureKind::ExitCode, T0 + 5 * kHour, deadlineAt - 2 * kMin)};
        RetryDecision d = decideAtEnd(p, attempts, limits);
        QVERIFY(d.retry());
        QCOMPARE(d.atMs, deadlineAt - kMin);
        // The second: a wait of 2m would start it 30 s past the deadline.
        attempts << attempt(FailureKind::ExitCode, deadlineAt - kMin - 30 * kSec, deadlineAt - 90 * kSec);
        d = decideAtEnd(p, attempts, limits);
        QCOMPARE(d.verdict, RetryVerdict::DeadlinePassed);
        QCOMPARE(d.reason,
                QStringLiteral("its deadline of 6h passes at 2026-01-01T06:00:00Z, before the retry would start at "
                               "2026-01-01T06:00:30Z"));
        // Exactly at the deadline is too late; a ms before it is not.
        attempts.last().endedMs = deadlineAt - 2 * kMin;
        QCOMPARE(decideAtEnd(p, attempts, limits).verdict, RetryVerdict::DeadlinePassed);
        attempts.last().endedMs = deadlineAt - 2 * kMin - 1;
        d = decideAtEnd(p, attempts, limits);
        QVERIFY(d.retry());
        QCOMPARE(d.atMs, deadlineAt - 1);
        QCOMPARE(d.reason,
                QStringLiteral("exit code: retry 2 of 5, at 2026-01-01T05:59:59.999Z (a wait of 2m from its end)"));
        // Decided once the deadline has passed (a service that was down).
        d = decideRetry(
                p, {attempt(FailureKind::ExitCode, T0 + kHour, deadlineAt - 5 * kMin)}, T0, deadlineAt, 0.0, limits);
        QCOMPARE(d.verdict, RetryVerdict::DeadlinePassed);
        QCOMPARE(d.reason, QStringLiteral("its deadline of 6h passed at 2026-01-01T06:00:00Z"));
        // Infra retries without limit are bounded by it, and say so.
        d = decideAtEnd(p, {attempt(FailureKind::NodeLost, T0 + kHour, T0 + 2 * kHour)}, limits);
        QCOMPARE(d.reason,
                QStringLiteral("node lost: infra retry 1, without limit within its deadline, at 2026-01-01T02:01:00Z "
                               "(a wait of 1m from its end)"));
        d = decideAtEnd(p, {attempt(FailureKind::NodeLost, T0 + kHour, deadlineAt - 30 * kSec)}, limits);
        QCOMPARE(d.verdict, RetryVerdict::DeadlinePassed);
    }

    // jitter multiplies the wait by (1 + jitter·sample), after the cap.
    void jitterBounds()
    {
        RetryPolicy p = policy(9, {kMin, 2.0, 10 * kMin});
        p.jitter = 0.1;
        const QList<AttemptOutcome> first{attempt(FailureKind::ExitCode, T0, T0 + kHour)};
        const auto waitFor = [&](const QList<AttemptOutcome>& attempts, double sample) {
            return decideRetry(p, attempts, T0, attempts.last().endedMs, sample).waitMs;
        };
        QCOMPARE(waitFor(first, -1.0), 54 * kSec);
        QCOMPARE(waitFor(first, 1.0), 66 * kSec);
        QCOMPARE(waitFor(first, 0.0), kMin);
        QCOMPARE(waitFor(first, 0.25), 61'500);
        QCOMPARE(waitFor(first, 3.0), 66 * kSec); // the caller's sample is clamped
        qint64 previous = 0;
        for (int i = -100; i <= 100; ++i) {
            const qint64 w = waitFor(first, i / 100.0);
            QVERIFY(w >= 54 * kSec && w <= 66 * kSec);
            QVERIFY(w >= previous);
            previous = w;
        }
        // At the cap (the 5th wait: 1m·2^4 = 16m, capped at 10m) jitter still spreads it.
        QList<AttemptOutcome> five;
        for (int i = 0; i < 5; ++i)
            five << attempt(FailureKind::ExitCode, T0 + i * kHour, T0 + i * kHour + kMin);
        QCOMPARE(waitFor(five, 1.0), 11 * kMin);
        QCOMPARE(waitFor(five, -1.0), 9 * kMin);
        const RetryDecision d = decideRetry(p, five, T0, five.last().endedMs, 0.5);
        QCOMPARE(d.atMs, five.last().endedMs + 10 * kMin + 30 * kSec);
        QCOMPARE(d.reason,
                QStringLiteral("exit code: retry 5 of 9, at 2026-01-01T04:11:30Z (a wait of 10m30s from its end)"));
    }

    void neverRetried()
    {
        const RetryPolicy p;
        RetryDecision d = decideAtEnd(p, {attempt(FailureKind::None, T0, T0 + kHour)});
        QCOMPARE(d.verdict, RetryVerdict::Succeeded);
        QCOMPARE(d.reason, QStringLiteral("succeeded: nothing to retry"));
        d = decideAtEnd(p, {attempt(FailureKind::Cancelled, T0, T0 + kHour)});
        QCOMPARE(d.verdict, RetryVerdict::Cancelled);
        QCOMPARE(d.budget, RetryBudget::None);
        QCOMPARE(d.reason, QStringLiteral("cancelled by the user: never retried"));
        d = decideAtEnd(p, {attempt(FailureKind::Unschedulable, std::nullopt, T0 + kSec)});
        QCOMPARE(d.verdict, RetryVerdict::Unschedulable);
        QCOMPARE(d.reason, QStringLiteral("unschedulable: no node could ever hold it, nor a retry of it"));
        d = decideRetry(p, {}, T0, T0, 0.0);
        QCOMPARE(d.verdict, RetryVerdict::NothingEnded);
        QCOMPARE(d.reason, QStringLiteral("no attempt has ended"));
        // A cancel after two failures is not retried either, whatever is left.
        d = decideAtEnd(p,
                {attempt(FailureKind::ExitCode, T0, T0 + kMin),
                        attempt(FailureKind::Cancelled, T0 + 2 * kMin, T0 + kHour)});
        QCOMPARE(d.verdict, RetryVerdict::Cancelled);
    }

    void onNamesTheCodesClasses()
    {
        RetryPolicy p;
        p.on = {RetryClass::Failed, RetryClass::Timeout};
        const QList<AttemptOutcome> cuda{attempt(FailureKind::CudaOutOfMemory, T0, T0 + kHour)};
        RetryDecision d = decideAtEnd(p, cuda);
        QCOMPARE(d.verdict, RetryVerdict::NotCovered);
        QCOMPARE(d.budget, RetryBudget::None);
        QCOMPARE(d.reason, QStringLiteral("CUDA OOM is not retried: its retry.on names failed, timeout"));
        p.on = {};
        QCOMPARE(decideAtEnd(p, cuda).reason, QStringLiteral("CUDA OOM is not retried: its retry.on is empty"));
        p.on = {RetryClass::Oom}; // covers CUDA OOM too
        d = decideAtEnd(p, cuda);
        QVERIFY(d.retry());
        QCOMPARE(d.reason,
                QStringLiteral("CUDA OOM: retry 1 of 3, at 2026-01-01T01:00:30Z (a wait of 30s from its end)"));
        // Without a finer kind the words are the class's.
        d = decideAtEnd(RetryPolicy(), {AttemptOutcome{RetryClass::Signal, FailureKind::None, T0, T0 + kHour}});
        QCOMPARE(d.reason,
                QStringLiteral(
                        "killed by a signal: retry 1 of 3, at 2026-01-01T01:00:30Z (a wait of 30s from its end)"));
    }

    // Decided late (the service was down at the end): the wait has passed,
    // so the retry goes now; the wait reported is still the backoff's.
    void decidedLate()
    {
        const QList<AttemptOutcome> attempts{attempt(FailureKind::ExitCode, T0, T0 + kHour)};
        const RetryDecision d = decideRetry(RetryPolicy(), attempts, T0, T0 + 2 * kHour, 0.0);
        QVERIFY(d.retry());
        QCOMPARE(d.waitMs, 30 * kSec);
        QCOMPARE(d.atMs, T0 + 2 * kHour);
    }
};

QTEST_GUILESS_MAIN(TestRetryDecision)
#include "TestRetryDecision.moc"
