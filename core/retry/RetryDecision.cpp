#include "RetryDecision.h"

#include <QDateTime>

#include <algorithm>

namespace ty {
namespace {

// "2026-01-01T06:00:00Z", with ms only where there are some.
QString timeText(qint64 ms)
{
    const QDateTime t = QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
    return t.toString(ms % 1000 ? Qt::ISODateWithMs : Qt::ISODate);
}

QString endingLabel(const AttemptOutcome& a)
{
    return a.kind != FailureKind::None && retryClassOf(a.kind) == a.cls ? failureKindLabel(a.kind)
                                                                        : retryClassLabel(a.cls);
}

QString timesText(int n)
{
    if (n == 1)
        return QStringLiteral("once");
    if (n == 2)
        return QStringLiteral("twice");
    return QStringLiteral("%1 times").arg(n);
}

// The endings that drew on a budget: their count and their labels, each
// once, in the order they first came.
struct BudgetUse {
    int count = 0;
    QStringList labels;
};

BudgetUse budgetUse(const QList<AttemptOutcome>& attempts, bool infra)
{
    BudgetUse use;
    for (const AttemptOutcome& a : attempts) {
        if (isNeverRetried(a.cls) || isInfraRetryClass(a.cls) != infra)
            continue;
        ++use.count;
        const QString label = endingLabel(a);
        if (!use.labels.contains(label))
            use.labels << label;
    }
    return use;
}

RetryDecision refuse(RetryVerdict verdict, QString reason)
{
    RetryDecision d;
    d.verdict = verdict;
    d.reason = std::move(reason);
    return d;
}

} // namespace

AttemptOutcome AttemptOutcome::of(FailureKind kind, std::optional<qint64> startedMs, qint64 endedMs)
{
    return {retryClassOf(kind), kind, startedMs, endedMs};
}

qint64 executionMs(const QList<AttemptOutcome>& attempts)
{
    qint64 total = 0;
    for (const AttemptOutcome& a : attempts)
        if (a.startedMs)
            total += std::max<qint64>(0, a.endedMs - *a.startedMs);
    return total;
}

std::optional<qint64> remainingRunTimeMs(const QList<AttemptOutcome>& attempts, const RunLimits& limits)
{
    if (!limits.maxRunTimeMs)
        return std::nullopt;
    return std::max<qint64>(0, *limits.maxRunTimeMs - executionMs(attempts));
}

RetryDecision decideRetry(const RetryPolicy& policy, const QList<AttemptOutcome>& attempts, qint64 firstSubmitMs,
        qint64 nowMs, double jitterSample, const RunLimits& limits)
{
    if (attempts.isEmpty())
        return refuse(RetryVerdict::NothingEnded, QStringLiteral("no attempt has ended"));
    const AttemptOutcome& last = attempts.last();

    // The class: some are never retried, and the code's only when `on` names them.
    switch (last.cls) {
    case RetryClass::Succeeded: return refuse(RetryVerdict::Succeeded, QStringLiteral("succeeded: nothing to retry"));
    case RetryClass::Cancelled:
        return refuse(RetryVerdict::Cancelled, QStringLiteral("cancelled by the user: never retried"));
    case RetryClass::Unschedulable:
        return refuse(RetryVerdict::Unschedulable,
                QStringLiteral("unschedulable: no node could ever hold it, nor a retry of it"));
    default: break;
    }
    if (!policy.covers(last.cls)) {
        QStringList names;
        for (RetryClass c : policy.on)
            names << retryClassName(c);
        return refuse(RetryVerdict::NotCovered,
                names.isEmpty() ? QStringLiteral("%1 is not retried: its retry.on is empty").arg(endingLabel(last))
                                : QStringLiteral("%1 is not retried: its retry.on names %2")
                                          .arg(endingLabel(last), names.join(QStringLiteral(", "))));
    }

    // Its budget: each draws only on its own (RetryPolicy.h).
    const bool infra = isInfraRetryClass(last.cls);
    const BudgetUse use = budgetUse(attempts, infra);
    const std::optional<int> budgetLimit = infra ? policy.infraLimit : std::optional<int>(std::max(0, policy.limit));
    if (budgetLimit && use.count > *budgetLimit) {
        RetryDecision d = refuse(infra ? RetryVerdict::InfraLimitReached : RetryVerdict::LimitReached,
                infra ? QStringLiteral("ended by node loss or preemption %1 (%2); its infra_limit is %3")
                                .arg(timesText(use.count), use.labels.join(QStringLiteral(", ")))
                                .arg(*budgetLimit)
                      : QStringLiteral("failed %1 (%2); its retry limit is %3")
                                .arg(timesText(use.count), use.labels.join(QStringLiteral(", ")))
                                .arg(*budgetLimit));
        d.budget = infra ? RetryBudget::Infra : RetryBudget::Code;
        d.budgetAttempt = use.count;
        d.budgetLimit = budgetLimit;
        return d;
    }

    // max_run_time: execution only, over every attempt.
    if (limits.maxRunTimeMs) {
        const qint64 used = executionMs(attempts);
        if (used >= *limits.maxRunTimeMs)
            return refuse(RetryVerdict::MaxRunTimeUsedUp,
                    QStringLiteral("its max_run_time of %1 is used up: %2 of execution over %3 attempt%4")
                            .arg(retryDurationText(*limits.maxRunTimeMs), retryDurationText(used))
                            .arg(attempts.size())
                            .arg(attempts.size() == 1 ? QString() : QStringLiteral("s")));
    }

    // The wait, counted from the last attempt's end; n counts per budget.
    const qint64 waitMs = jitteredWaitMs(backoffWaitMs(policy.backoff, use.count), policy.jitter, jitterSample);
    const qint64 atMs = std::max(last.endedMs + waitMs, nowMs);

    // The deadline: wall clock from the first submit; a retry must start before it.
    if (limits.deadlineMs) {
        const qint64 deadlineAt = firstSubmitMs + *limits.deadlineMs;
        const QString deadline = retryDurationText(*limits.deadlineMs);
        if (nowMs >= deadlineAt)
            return refuse(RetryVerdict::DeadlinePassed,
                    QStringLiteral("its deadline of %1 passed at %2").arg(deadline, timeText(deadlineAt)));
        if (atMs >= deadlineAt)
            return refuse(RetryVerdict::DeadlinePassed,
                    QStringLiteral("its deadline of %1 passes at %2, before the retry would start at %3")
                            .arg(deadline, timeText(deadlineAt), timeText(atMs)));
    }

    RetryDecision d;
    d.verdict = RetryVerdict::Retry;
    d.atMs = atMs;
    d.waitMs = waitMs;
    d.budget = infra ? RetryBudget::Infra : RetryBudget::Code;
    d.budgetAttempt = use.count;
    d.budgetLimit = budgetLimit;
    QString which;
    if (!infra)
        which = QStringLiteral("retry %1 of %2").arg(use.count).arg(*budgetLimit);
    else if (budgetLimit)
        which = QStringLiteral("infra retry %1 of %2").arg(use.count).arg(*budgetLimit);
    else
        which = QStringLiteral("infra retry %1, without limit%2")
                        .arg(use.count)
                        .arg(limits.deadlineMs ? QStringLiteral(" within its deadline") : QString());
    d.reason = QStringLiteral("%1: %2, at %3 (a wait of %4 from its end)")
                       .arg(endingLabel(last), which, timeText(atMs), retryDurationText(waitMs));
    return d;
}

} // namespace ty
