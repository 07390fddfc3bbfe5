#include "PreemptionPass.h"

#include <QHash>

namespace ty::pass {

sched::SchedulerDecision decideWithPreemption(sched::Scheduler& scheduler, sched::ClusterState& state,
        const QList<sched::PendingRun>& queue, const std::function<const sched::Policy&(const QString&)>& policyOf,
        const std::function<sched::FairShareState(const sched::Policy&)>& usageOf,
        QList<sched::PreemptionClaim>& claims, sched::PreemptionInput input, qint64 nowMs)
{
    QHash<RunId, qsizetype> byId;
    for (qsizetype i = 0; i < queue.size(); ++i)
        byId.insert(queue[i].id, i);
    // A claim whose run is no longer queued (cancelled, held, started) is over.
    claims.removeIf([&](const sched::PreemptionClaim& c) {
        const auto it = byId.constFind(c.preemptor);
        return it == byId.cend() || queue[*it].held;
    });

    sched::SchedulerDecision decision;
    QSet<RunId> placedOrWaiting; // the claims' runs: not in the scheduler's queue below
    // 1. Claims whose victims have ended: their runs, alone, on their node.
    for (qsizetype i = 0; i < claims.size();) {
        const sched::PreemptionClaim claim = claims[i];
        if (!sched::victimsGone(claim, state)) {
            ++i;
            continue;
        }
        sched::PendingRun run = queue[byId.value(claim.preemptor)];
        for (const sched::NodeState& n : std::as_const(state.nodes))
            if (n.name != claim.node && !run.avoidNodes.contains(n.name))
                run.avoidNodes.append(n.name);
        QList<sched::PreemptionClaim> others = claims;
        others.removeAt(i);
        sched::Policy policy = policyOf(run.queue);
        policy.backfill = false;
        const sched::SchedulerDecision alone = scheduler.schedule(
                sched::withClaimsHeld(state, others, nowMs), {run}, policy, nowMs, sched::FairShareState{});
        claims.removeAt(i);
        if (alone.placements.isEmpty())
            continue; // dropped: scheduled as any other run below
        state = sched::applyDecision(state, alone, {run}, nowMs);
        decision.placements += alone.placements;
        placedOrWaiting.insert(claim.preemptor);
    }
    // 2. The claims still waiting hold what they were promised.
    for (const sched::PreemptionClaim& c : std::as_const(claims)) {
        placedOrWaiting.insert(c.preemptor);
        for (RunId v : c.victims)
            input.ending.insert(v);
        input.nodesTaken.insert(c.node);
    }
    sched::ClusterState held = sched::withClaimsHeld(state, claims, nowMs);
    QList<sched::PendingRun> rest;
    rest.reserve(queue.size());
    for (const sched::PendingRun& p : queue)
        if (!placedOrWaiting.contains(p.id))
            rest.append(p);

    // 3. The pass, with preemption after each queue that allows it.
    const sched::SchedulerDecision main = decideByQueue(scheduler, held, rest, policyOf, usageOf, nowMs,
            [&input, nowMs](sched::SchedulerDecision& part, const sched::ClusterState& after,
                    const QList<sched::PendingRun>& q, const sched::Policy& policy) {
                // Borrowers are taken back whether or not the policy lets runs preempt by priority.
                const bool reclaim = sched::poolsBorrow(policy.pools);
                if (!policy.preemption && !reclaim)
                    return;
                input.byPriority = policy.preemption;
                input.pools = policy.pools;
                sched::planPreemptions(part, after, q, input, nowMs);
            });
    decision.placements += main.placements;
    int position = 0;
    for (const sched::PreemptionClaim& c : std::as_const(claims)) {
        sched::PendingInfo info;
        info.run = c.preemptor;
        info.position = ++position;
        info.reason = sched::preemptingReason(c);
        decision.pending.append(info);
    }
    for (sched::PendingInfo info : main.pending) {
        info.position += position;
        decision.pending.append(info);
    }
    decision.preemptions = main.preemptions;
    // 4. New preemptions: claims from now on.
    for (const sched::Preemption& p : main.preemptions)
        claims.append(sched::PreemptionClaim{
                p.preemptor, p.node, p.gpuIndices, p.cpus, p.memoryMiB, p.victims, p.graceMs, p.reclaimPool});
    state = held;
    return decision;
}

} // namespace ty::pass
