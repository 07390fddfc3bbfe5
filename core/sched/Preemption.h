#pragma once

#include "ClusterState.h"
#include "PendingRun.h"
#include "Pools.h"
#include "SchedulerDecision.h"

#include <QHash>
#include <QList>
#include <QSet>

namespace ty::sched {

// Preemption (issue #25): which running runs a waiting run may stop to take
// their GPUs, as a step after schedule(). Pure and deterministic: no I/O, no
// clock (`nowMs`, ms since the Unix epoch, UTC), any thread.
//
// A running run as preemption sees it. A run of ClusterState::running that
// is not listed in PreemptionInput::running is never chosen.
struct RunningRunInfo {
    RunId run = 0;
    bool preemptible = false; // the job spec's `preemptible: true`
    int priority = 0;
    qint64 graceMs = 0; // its spec's preemption.grace
    // The gang it is a rank of (a run group id), 0 for none: a gang is chosen
    // whole -- every rank, wherever it runs -- or not at all, and only when
    // every running rank qualifies.
    qint64 gang = 0;
};

struct PreemptionInput {
    QHash<RunId, RunningRunInfo> running; // by run
    // Runs already told to stop (their grace is running): never chosen
    // again, and nobody else counts on their GPUs.
    QSet<RunId> ending;
    // Nodes where a preemption was chosen earlier in this pass (one per node
    // and pass: the next pass sees the first one's claim). Updated by
    // planPreemptions.
    QSet<QString> nodesTaken;
    // Victims of lower priority (the queue policy's `preemption`); false:
    // only borrowers are taken back.
    bool byPriority = true;
    // The resource pools (Policy::pools, Pools.h): where a run may preempt,
    // and which borrowers its pool takes back. Empty: none.
    QList<ResourcePool> pools;
};

// For each run of `decision.pending` (in that order) that waits for
// resources (WaitingForResources, BlockedByHead, BackfillHeld) and could
// start if runs ended: the victims to stop, on as many nodes as it needs --
// one, or a gang's `nodes` (an elastic gang's minimum: PendingRun::nodes,
// whatever nodesMax), each distinct node fitting one rank.
//
// A victim is a running run of `state`, preemptible in `input.running`, not
// in `input.ending`, and, for a gang rank, whose every rank qualifies too;
// and either (with `input.byPriority`) its priority is strictly lower than
// the waiting run's PendingRun::priority (the raw priority, not the aged
// one), or it is a borrower taken back: with `input.pools`, a run of another
// pool whose every GPU is on nodes of the waiting run's pool (it borrowed
// them, Pools.h), whatever its priority, when the waiting run named that
// pool and is within its quotas there (GPUs per node x nodes). With pools, a
// run preempts only on the nodes it may run on: its pool's (never to
// borrow); naming none, nodes in no pool or in a pool whose quota allows it.
// On a node the waiting run may use (reachable, not avoided by name or
// label: PendingRun's avoid lists, so a run pinned to a node stays there;
// not in `input.nodesTaken`), the GPUs it can have are the free ones plus
// the victims' there that match its type and whose total memory is enough
// (a victim's GPU frees its memory); CPUs and memory likewise. Among the
// sets that make one rank fit on a node, the choice is, in this order:
//   0. the fewest victims that are not borrowers taken back: borrowers go first;
//   1. the fewest victims (a gang counts as one, with all its ranks);
//   2. the lowest priorities: the victims' priorities sorted from highest
//      down, compared element by element, lower first;
//   3. the least work lost: the smallest sum over victims of
//      (nowMs - startMs), so the most recently started first;
//   4. the node by name, then the victims' ids.
// At most kMaxCandidatesPerNode victims per node are considered (the lowest
// priority, then the most recently started): 2^12 subsets at worst.
//
// Nodes where a rank fits as things are (free nodes) come first: a run with
// as many free nodes as it needs waits for its turn and nobody is stopped
// for it. A gang with f < k free nodes takes them all and frees k - f
// others, greedily: the node whose cheapest set is cheapest in the order
// above, then again among the nodes left, the victims chosen so far counted
// as gone (a victim gang frees its every node, which may then need no
// victim of its own), until k - f are freed. That is greedy, node by node,
// not the cheapest set over all nodes at once. When fewer than k - f nodes
// can be freed, nothing is chosen for it: no partial preemption.
//
// Each chosen node becomes one Preemption in `decision.preemptions`, in node
// name order, all with the same preemptor: its victims are the new victims
// chosen there plus the earlier ones holding something there; a gang's free
// nodes are Preemptions without victims (held for it meanwhile, with the
// longest grace of its victims). Its GPUs are the lowest indices among those
// it can have there. The waiting run's PendingInfo becomes
// PendingKind::Preempting (preemptingReason of those claims; reclaimPool,
// on every one, names the pool when every victim is a borrower it takes
// back). Chosen victims join `input.ending`, the nodes `input.nodesTaken`.
//
// `state` is the cluster with the decision's placements applied
// (applyDecision): what runs now. `queue` holds the pending runs by id.
//
// Cost: nothing beyond O(R) for R running runs (with pools, O(R + N * P)
// for P pools) unless some waiting run has a higher priority than the
// lowest preemptible running one, or a preemptible borrower runs; for each
// such run O(R + N * 2^kMaxCandidatesPerNode) over N nodes, plus, for a
// gang of k nodes, 2^kMaxCandidatesPerNode again for each node where a
// victim chosen in one of its k steps also runs.
inline constexpr int kMaxCandidatesPerNode = 12;
void planPreemptions(SchedulerDecision& decision, const ClusterState& state, const QList<PendingRun>& queue,
        PreemptionInput& input, qint64 nowMs);

// A preemption under way: the waiting run keeps the GPUs, CPUs and memory it
// was promised on `node` until it starts there (victims still ending, or
// ended and not yet replaced), so nothing else takes them. A waiting gang
// has one per node (Preemption), held and released together: it starts
// only when every victim of every one has ended (core/runs/PreemptionPass.h).
struct PreemptionClaim {
    RunId preemptor = 0;
    QString node;
    QList<int> gpuIndices;
    int cpus = 0;
    qint64 memoryMiB = 0;
    QList<RunId> victims;
    qint64 graceMs = 0;
    QString reclaimPool; // Preemption::reclaimPool
};

// `state` with each claim held: a RunningAllocation (run 0, until nowMs +
// grace) holding the claim's GPUs that no running run holds, and its CPUs
// and memory less what its victims still running hold on that node.
ClusterState withClaimsHeld(ClusterState state, const QList<PreemptionClaim>& claims, qint64 nowMs);

// Whether every victim of `claim` has ended (none is in `state.running`).
bool victimsGone(const PreemptionClaim& claim, const ClusterState& state);

// The Preempting reason of a claim's waiting run.
PendingReason preemptingReason(const PreemptionClaim& claim);
// ... of a run with several claims (a gang: one per node): every victim, the
// nodes with victims and those without (held free nodes), the longest grace,
// the pool when every claim with victims names the same one.
PendingReason preemptingReason(const QList<PreemptionClaim>& claims);

} // namespace ty::sched
