#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/nodes/NodePool.h"
#include "core/sched/ClusterState.h"
#include "core/sched/PendingRun.h"
#include "core/sched/Policy.h"
#include "core/sched/Scheduler.h"
#include "core/sched/SchedulerDecision.h"
#include "core/spec/JobSpec.h"

#include <QSet>
#include <QString>
#include <QStringList>

#include <functional>

namespace ty::pass {

// A scheduling pass in three steps, the first and last here, pure:
//   snapshot (what the nodes and the runs not ended are, as the scheduler's
//   types) -> the pure scheduler (core/sched), one pass per queue ->
//   what each waiting run shows and whether it can ever start.
// RunEngine::schedulePass gathers the inputs (the pool, the database, the
// parsed specs) and acts on the decision (starts, records). No I/O, no
// clock: time comes in as `nowMs` (ms since the Unix epoch, UTC).

// The fair-share account of a run: its sweep group ("sweep:<group id>", empty
// for none), and the sweep's name as people know it ("digits[lr=0.1]" -> "digits").
QString sweepIdOf(const RunRecord& run);
QString sweepNameOf(const RunRecord& run);

// A node as the scheduler sees it: reachable or still connecting, its CPUs,
// memory and labels, and each GPU with its free memory. A GPU is busy for us
// when a process Trainyard did not start uses it, when another Trainyard
// instance claims it (a claim whose client is not `clientId`), or when the
// agent refused it to us since its last report (`refusedGpus`).
sched::NodeState nodeSnapshot(const NodePool::NodeState& node, const QStringList& labels, const QString& clientId,
        const QSet<int>& refusedGpus);

// A queued or held run as the scheduler's PendingRun: what its spec asks
// (resources, estimated runtime, time limit, queue, sweep cap, node and label
// preferences) and its account (the spec's `user`, else `defaultUser`; its
// project). A spec that does not parse (a database edited by hand) asks for
// nothing. A run pinned to a node (`submit --node`) avoids every other of
// `nodeNames`.
sched::PendingRun pendingRunOf(
        const RunRecord& run, const Result<JobSpec>& spec, const QString& defaultUser, const QStringList& nodeNames);

// A run that holds its node (starting, running, unknown) as the scheduler's
// RunningAllocation: its GPUs, CPUs and memory there, since when (its start;
// `nowMs` when not recorded yet), until when (time limit, estimated end) and
// for whom.
sched::RunningAllocation allocationOf(
        const RunRecord& run, const Result<JobSpec>& spec, const QString& defaultUser, qint64 nowMs);

// One scheduler pass per queue of `queue` (a spec's `queue:`), the default
// queue ("") first, then by name, each with `policyOf(queue)` and, for fair
// share, `usageOf(policy)`; each sees what the earlier ones placed, so
// nothing is double-booked across queues. `state` ends as the cluster with
// every placement applied (sched::applyDecision). `afterQueue`, when set, is
// called with each queue's part, the cluster with its placements applied,
// its runs and its policy, before the part joins the result (preemption:
// PreemptionPass.h).
using AfterQueue = std::function<void(sched::SchedulerDecision& part, const sched::ClusterState& state,
        const QList<sched::PendingRun>& queue, const sched::Policy& policy)>;
sched::SchedulerDecision decideByQueue(sched::Scheduler& scheduler, sched::ClusterState& state,
        const QList<sched::PendingRun>& queue, const std::function<const sched::Policy&(const QString&)>& policyOf,
        const std::function<sched::FairShareState(const sched::Policy&)>& usageOf, qint64 nowMs,
        const AfterQueue& afterQueue = {});

// What a waiting run shows (trainyardctl ls, the queue view): the reason in
// words and, where the scheduler estimates one, its start in local time
// ("...; expected to start about 2026-12-03 21:40").
QString pendingText(const sched::PendingInfo& info);

// Whether no node that `state` knows could ever hold the run: it is
// unsatisfiable on every node and none of them is unreachable or still
// connecting (one that comes back might). Such a run is failed as
// unschedulable rather than left queued for ever.
bool neverPlaceable(const sched::PendingInfo& info, const sched::ClusterState& state);

} // namespace ty::pass
