#include "PreemptionPass.h"

#include <QHash>

#include <algorithm>

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
    // The runs with claims, in the claims' order (a gang has one per node).
    QList<RunId> preemptors;
    for (const sched::PreemptionClaim& c : std::as_const(claims))
        if (!preemptors.contains(c.preemptor))
            preemptors.append(c.preemptor);
    const auto claimsOf = [&claims](RunId run) {
        QList<sched::PreemptionClaim> mine;
        for (const sched::PreemptionClaim& c : std::as_const(claims))
            if (c.preemptor == run)
                mine.append(c);
        return mine;
    };
    // 1. Runs whose claims' victims have all ended: each alone, on its claims' nodes.
    for (RunId preemptor : std::as_const(preemptors)) {
        const QList<sched::PreemptionClaim> mine = claimsOf(preemptor);
        if (!std::all_of(mine.cbegin(), mine.cend(),
                    [&state](const sched::PreemptionClaim& c) { return sched::victimsGone(c, state); }))
            continue;
        QSet<QString> nodes;
        for (const sched::PreemptionClaim& c : mine)
            nodes.insert(c.node);
        sched::PendingRun run = queue[byId.value(preemptor)];
        for (const sched::NodeState& n : std::as_const(state.nodes))
            if (!nodes.contains(n.name) && !run.avoidNodes.contains(n.name))
                run.avoidNodes.append(n.name);
        claims.removeIf([preemptor](const sched::PreemptionClaim& c) { return c.preemptor == preemptor; });
        sched::Policy policy = policyOf(run.queue);
        policy.backfill = false;
        const sched::SchedulerDecision alone = scheduler.schedule(
                sched::withClaimsHeld(state, claims, nowMs), {run}, policy, nowMs, sched::FairShareState{});
        if (alone.placements.isEmpty())
            continue; // dropped: scheduled as any other run below
        state = sched::applyDecision(state, alone, {run}, nowMs);
        decision.placements += alone.placements;
        placedOrWaiting.insert(preemptor);
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
    for (RunId preemptor : std::as_const(preemptors)) {
        const QList<sched::PreemptionClaim> mine = claimsOf(preemptor);
        if (mine.isEmpty())
            continue; // placed or dropped above
        sched::PendingInfo info;
        info.run = preemptor;
        info.position = ++position;
        info.reason = sched::preemptingReason(mine);
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
