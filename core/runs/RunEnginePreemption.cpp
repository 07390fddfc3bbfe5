// RunEngine's side of preemption (issue #25): the running runs as the pure
// choice sees them (core/sched/Preemption.h), and stopping the victims it
// chose. The pass itself is core/runs/PreemptionPass.h; a victim's ending is
// recorded `preempted` by finishRun (FailureClassifier rule 1b), and its next
// attempt is queued by the RetryRunner (core/retry/PreemptionRetry.h).

#include "RunEngine.h"

#include "core/store/ResultStore.h"
#include "core/store/RunNotice.h"

#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <limits>

Q_DECLARE_LOGGING_CATEGORY(lcRuns)

namespace ty {

namespace {

// The notice a victim gets when it is told to stop, and what its ending
// will say: "preempted by run 15 (priority 10) on ws1: SIGTERM sent, SIGKILL
// after 30 s" (the part before ": SIG" is the ending's reason). It is how a
// later service knows a run in its grace is being preempted (recallPreemption).
QString preemptionNotice(const QString& detail, const QString& signal, qint64 graceSec)
{
    return QStringLiteral("%1: %2 sent, SIGKILL after %3 s").arg(detail, signal).arg(graceSec);
}

// The ending's reason in the newest such notice of `notices`, empty for none.
QString preemptionDetailIn(const QList<RunNotice>& notices)
{
    static const QRegularExpression notice(
            QStringLiteral("^(preempted by run \\d+ \\(priority -?\\d+\\) on .+): SIG[A-Z0-9]+ sent, SIGKILL after "
                           "\\d+ s$"));
    for (auto it = notices.crbegin(); it != notices.crend(); ++it)
        if (const QRegularExpressionMatch m = notice.match(it->text); m.hasMatch())
            return m.captured(1);
    return {};
}

} // namespace

sched::RunningRunInfo RunEngine::runningInfoOf(const RunRecord& run)
{
    sched::RunningRunInfo info;
    info.run = run.id;
    info.priority = run.priority;
    info.gang = gangOf(run);
    if (const Result<JobSpec>& spec = cachedSpec(run); spec) {
        info.preemptible = spec->preemptible;
        info.graceMs = spec->preemption.graceSec * 1000;
    }
    return info;
}

void RunEngine::startPreemptions(const QList<sched::Preemption>& preemptions, const QHash<RunId, RunRecord>& queued)
{
    // A waiting gang's preemptions (one per node) may name a victim gang on
    // several of them: each victim is told once, by the first.
    QSet<RunId> told;
    for (const sched::Preemption& p : preemptions) {
        const RunRecord preemptor = queued.value(p.preemptor);
        // A borrower taken back by the pool it borrowed from (core/sched/Pools.h) is told so.
        const QString detail = p.reclaimPool.isEmpty()
                ? QStringLiteral("preempted by run %1 (priority %2) on %3")
                          .arg(p.preemptor)
                          .arg(preemptor.priority)
                          .arg(p.node)
                : QStringLiteral("preempted by run %1 on %2: pool %3 took back the GPUs it lent")
                          .arg(p.preemptor)
                          .arg(p.node, p.reclaimPool);
        for (RunId v : p.victims) {
            if (told.contains(v))
                continue;
            told.insert(v);
            const auto victim = m_store->run(v);
            if (!victim || isTerminal(victim->state))
                continue; // ended meanwhile: its GPUs are free anyway
            const Result<JobSpec>& spec = cachedSpec(*victim);
            const JobSpec::Preemption how = spec ? spec->preemption : JobSpec::Preemption{};
            qCInfo(lcRuns).noquote() << QStringLiteral("run %1: preempting run %2 on %3 (%4, grace %5 s)")
                                                .arg(p.preemptor)
                                                .arg(v)
                                                .arg(victim->node, how.signal)
                                                .arg(how.graceSec);
            m_preempting.insert(v, detail);
            addNotice(v, preemptionNotice(detail, how.signal, how.graceSec));
            cancelRun(v, int(std::min<qint64>(how.graceSec * 1000, std::numeric_limits<int>::max())), how.signal);
        }
    }
}

void RunEngine::recallPreemption(const RunRecord& run)
{
    if (m_preempting.contains(run.id))
        return;
    const QString detail = preemptionDetailIn(m_store->notices(run.id));
    if (detail.isEmpty())
        return;
    qCInfo(lcRuns).noquote() << QStringLiteral("run %1: in its grace, %2").arg(run.id).arg(detail);
    m_preempting.insert(run.id, detail);
}

} // namespace ty
