#pragma once

#include "ClusterState.h"
#include "PendingRun.h"
#include "Policy.h"
#include "SchedulerDecision.h"

#include <QList>

#include <memory>

namespace ty::sched {

// One scheduling pass: which pending runs start now, where, on which GPUs, and
// why every other run waits.
//
// Pure and deterministic: no I/O, no clock (time is `nowMs`, ms since the Unix
// epoch), no threads, no globals; safe to call from any thread. The result
// does not depend on the container order of `queue` or `state.nodes` (ties are
// broken by submit time, then run id, and nodes are taken by name), provided
// run ids and node names are unique.
//
// Every run in `queue` appears exactly once in the result: in `placements` or
// in `pending`. One call is one ordering domain; to schedule several queues
// with different policies over shared nodes, call it per queue and feed the
// next call applyDecision(state, ...).
//
// Resources: a run gets, on each of its `nodes` distinct nodes, `gpus` whole
// GPUs, `cpus` CPUs and `memoryMiB` memory; a node's CPUs/memory are never
// over-committed and a GPU is never given to two runs (already-running ones
// included). Eligible GPUs: not foreignBusy, name matches gpuTypeRegex
// (QRegularExpression, searched, case-sensitive; an invalid pattern matches
// nothing), memoryFreeMiB >= gpuMemoryMiB, on a reachable node not avoided by
// name or label. A foreign-busy GPU still counts towards whether a run could
// ever start (its memoryTotalMiB), so such a run waits instead of failing. Gang runs are all-or-nothing within a pass and nothing is
// held between passes, so two gangs cannot deadlock each other.
//
// Placement heuristic (PlacementRule::BestFit): among nodes that fit,
// preferred nodes (by name or label) first, then the fullest node -- fewest
// free GPUs, then fewest free CPUs, then least free memory, then name -- so
// whole GPUs and whole nodes stay free for large runs. A gang run takes the
// first `nodes` nodes in that order; an elastic gang (PendingRun::nodesMax)
// takes every node that fits, in that order, up to nodesMax, and waits while
// fewer than `nodes` fit; as the backfill head it is reserved its minimum
// (`nodes`), the earliest time that many fit, so runs beside it may use the rest. Within a node: if the node's GPUs report
// PCI roots, the GPUs come from the single root with the fewest eligible GPUs
// that still holds them all (best fit), else from the roots with the most
// eligible GPUs first; within a root (or when the topology is unknown), the
// lowest indices. FirstFit takes nodes by name and the lowest GPU indices.
//
// Pools (Policy::pools, Pools.h): before it may be placed, a run that names
// a pool is checked against its user's and project's GPU quotas there
// (usage from `state.running` plus what this pass placed); one over a quota
// is PendingKind::PoolQuota and, like a held run, blocks nobody. It is then
// placed on its pool's nodes, else (borrowing, RunPlacement::borrowed) on
// idle GPUs of lending pools within its pool's borrow limit; a run naming
// no pool avoids the nodes of pools whose quota it would exceed. Without
// pools none of this is built: the pass costs what it did without them.
//
// Runtimes: a pending run's is estimatedRuntimeMs (capped by timeLimitMs), else
// timeLimitMs, else Policy::defaultRuntimeMs. A running run ends at
// estimatedEndMs (capped by start + time limit), else start + time limit, else
// start + defaultRuntimeMs, and never before nowMs.
//
// Rendezvous ports: MASTER_PORT (and TF worker ports) are chosen on each node
// by probing [portMin, portMax] from portMin + (run id mod range size),
// skipping NodeState::portsInUse, ports of running runs on that node and
// ports handed out earlier in the same pass; 0 when the range is exhausted.
//
// Cost: O(Q log Q + Q * N) worst case for Q pending runs over N nodes, far
// less in practice: runs with the same resource shape share one fit test per
// pass (free resources only shrink during a pass). Memory O(Q + N * GPUs).
SchedulerDecision schedule(const ClusterState& state, const QList<PendingRun>& queue, const Policy& policy,
        qint64 nowMs, const FairShareState& fairShare = {});

namespace detail {
struct NodeLayout;
}

// schedule() pass after pass over one cluster, keeping what a pass derives
// from the nodes' names and GPU inventories alone (the nodes in name order,
// the index by name, each node's GPUs by index, GPU name ids, PCI groups)
// while those stay the same; free resources, reachability, ports and running
// allocations are read anew from every state. Decides exactly as schedule():
// each call checks the kept layout against state.nodes in O(nodes + GPUs) --
// names, GPU indices, GPU names and PCI roots, by string identity first, so a
// caller whose NodeStates share their strings pays a pointer compare each --
// and rebuilds it (O(N log N + GPUs)) when anything differs. On the 1,213-node
// trace cluster this is most of a pass (tests/bench/bench_scheduler).
//
// Not thread-safe: one instance per thread (the engine's); movable, cheap to
// construct. Holds copies of the node names and GPU keys, nothing else.
class Scheduler {
public:
    Scheduler();
    ~Scheduler();
    Scheduler(Scheduler&&) noexcept;
    Scheduler& operator=(Scheduler&&) noexcept;

    SchedulerDecision schedule(const ClusterState& state, const QList<PendingRun>& queue, const Policy& policy,
            qint64 nowMs, const FairShareState& fairShare = {});

    // How many times the layout was built (the first call counts one).
    int layoutBuilds() const { return m_layoutBuilds; }

private:
    std::unique_ptr<detail::NodeLayout> m_layout;
    int m_layoutBuilds = 0;
};

// Runtime the scheduler assumes for `run` (see above), ms.
qint64 expectedRuntimeMs(const PendingRun& run, const Policy& policy);

// The fair-share account of a run: its user or its project.
QString fairShareAccount(const PendingRun& run, const Policy& policy);

// `state` with the decision's placements added as running allocations started
// at nowMs with estimatedEndMs = RunPlacement::expectedEndMs. Runs are looked
// up in `queue` for user, project, sweep and time limit.
ClusterState applyDecision(
        ClusterState state, const SchedulerDecision& decision, const QList<PendingRun>& queue, qint64 nowMs);

} // namespace ty::sched
