#pragma once

#include "SchedulingPass.h"
#include "core/sched/Preemption.h"

namespace ty::pass {

// A scheduling pass with preemption (issue #25), pure (no I/O, no clock:
// `nowMs`, ms since the Unix epoch, UTC); RunEngine::schedulePass gathers
// the inputs and acts on the result (RunEnginePreemption.cpp).
//
//  1. Each run with claims (sched::PreemptionClaim: a preemption under way;
//     a gang has one per node, all its nodes) whose every claim's victims
//     have ended: it is placed alone, on its claims' nodes only, with the
//     other runs' claims held. Placed: its claims are done. Not placed (a
//     node went away, a foreign process took a GPU) or its run no longer
//     queued: its claims are all dropped, and the run is scheduled as any
//     other below. A gang some of whose victims still run keeps every claim.
//  2. The remaining claims are held (sched::withClaimsHeld): nothing else
//     gets their GPUs while the victims are in their grace, nor after. Their
//     runs are left out of the scheduler's queue and shown as
//     PendingKind::Preempting (one reason per run, all its claims).
//  3. decideByQueue, and after each queue whose policy has `preemption`
//     or whose pools borrow (sched::poolsBorrow: borrowers are taken back,
//     Pools.h), sched::planPreemptions over what still waits.
//  4. Each new preemption becomes a claim (a gang's: one per node).
//
// `claims` is updated in place (done and dropped ones removed, new ones
// added); `input.running` describes the running runs (preemptible,
// priority, grace, gang), `input.ending` the runs already told to stop.
// The result holds every placement (the claims' first), every waiting run
// (the claims' runs as Preempting) and the new preemptions. `state` ends as
// decideByQueue leaves it, the claims held.
sched::SchedulerDecision decideWithPreemption(sched::Scheduler& scheduler, sched::ClusterState& state,
        const QList<sched::PendingRun>& queue, const std::function<const sched::Policy&(const QString&)>& policyOf,
        const std::function<sched::FairShareState(const sched::Policy&)>& usageOf,
        QList<sched::PreemptionClaim>& claims, sched::PreemptionInput input, qint64 nowMs);

} // namespace ty::pass
