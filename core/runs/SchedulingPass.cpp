#include "SchedulingPass.h"

#include "core/sched/SchedulerDecision.h"

#include <QDateTime>
#include <QMap>

namespace ty::pass {

QString sweepIdOf(const RunRecord& run)
{
    const RunGroupId sweep = groupIdOf(run, RunGroupKind::Sweep);
    return sweep > 0 ? QStringLiteral("sweep:%1").arg(sweep) : QString();
}

QString sweepNameOf(const RunRecord& run)
{
    // A swept run is named "<spec name>[k=v,...]" (expandSweep).
    const qsizetype open = run.name.lastIndexOf(u'[');
    return open > 0 && run.name.endsWith(u']') ? run.name.left(open) : run.name;
}

sched::NodeState nodeSnapshot(
        const NodePool::NodeState& n, const QStringList& labels, const QString& clientId, const QSet<int>& refusedGpus)
{
    sched::NodeState ns;
    ns.name = n.name;
    ns.address = n.hello.hostname;
    // Connected but its GPUs not reported yet (the few ms between the agent's
    // hello and its `gpus` reply): still connecting. Taken as reachable with
    // no GPUs, a pass in that window failed GPU runs as unschedulable.
    ns.reachable = n.ready && n.gpusKnown;
    ns.connecting = (!n.ready && !n.attempted) || (n.ready && !n.gpusKnown);
    ns.cpus = n.hello.cpus;
    ns.memoryMiB = n.hello.memoryMiB;
    ns.labels = labels;
    ns.portsInUse = n.listeningPorts; // whoever listens there: never a rendezvous port
    for (const AgentGpu& g : n.gpus) {
        sched::GpuState gs;
        gs.index = g.index;
        gs.uuid = g.uuid;
        gs.name = g.name;
        gs.memoryTotalMiB = qint64(g.memoryTotalMib.value_or(0));
        gs.memoryFreeMiB = gs.memoryTotalMiB - qint64(g.memoryUsedMib.value_or(0));
        for (const AgentGpuProcess& p : g.processes)
            if (p.run.isEmpty())
                gs.foreignBusy = true;
        for (const AgentGpuClaim& c : g.claims)
            if (c.client != clientId)
                gs.foreignBusy = true;
        if (refusedGpus.contains(g.index))
            gs.foreignBusy = true;
        ns.gpus.append(gs);
    }
    return ns;
}

sched::PendingRun pendingRunOf(
        const RunRecord& r, const Result<JobSpec>& spec, const QString& defaultUser, const QStringList& nodeNames)
{
    sched::PendingRun p;
    p.id = r.id;
    p.submitMs = r.createdAt.toMSecsSinceEpoch();
    p.priority = r.priority;
    p.user = defaultUser;
    if (spec) {
        const ResourceRequest& res = spec->resources;
        p.gpus = res.gpus;
        p.gpuMemoryMiB = res.gpuMemoryMiB;
        p.gpuTypeRegex = res.gpuType;
        p.cpus = res.cpus;
        p.memoryMiB = res.memoryMiB;
        p.nodes = res.nodes;
        p.nodesMax = res.nodesMax;
        p.estimatedRuntimeMs = spec->estimatedRuntimeSec.value_or(0) * 1000;
        p.timeLimitMs = spec->timeLimitSec.value_or(0) * 1000;
        if (!spec->user.isEmpty())
            p.user = spec->user;
        p.project = spec->project;
        p.queue = spec->queue;
        p.pool = spec->pool;
        p.sweepMaxConcurrent = spec->maxConcurrent;
        p.preferNodes = spec->preferNodes;
        p.avoidNodes = spec->avoidNodes;
        p.preferLabels = spec->preferLabels;
        p.avoidLabels = spec->avoidLabels;
    }
    p.sweepId = sweepIdOf(r);
    if (!p.sweepId.isEmpty())
        p.sweepName = sweepNameOf(r);
    p.held = r.state == RunState::Held;
    if (!r.node.isEmpty())
        for (const QString& other : nodeNames)
            if (other != r.node)
                p.avoidNodes.append(other); // the user chose the node
    return p;
}

sched::RunningAllocation allocationOf(
        const RunRecord& r, const Result<JobSpec>& spec, const QString& defaultUser, qint64 nowMs)
{
    sched::RunningAllocation a;
    a.run = r.id;
    sched::NodeShare share;
    share.node = r.node;
    share.gpuIndices = r.gpus;
    a.startMs = r.startedAt.isValid() ? r.startedAt.toMSecsSinceEpoch() : nowMs;
    a.user = defaultUser;
    if (spec) {
        share.cpus = spec->resources.cpus;
        share.memoryMiB = spec->resources.memoryMiB;
        a.timeLimitMs = spec->timeLimitSec.value_or(0) * 1000;
        if (spec->estimatedRuntimeSec)
            a.estimatedEndMs = a.startMs + *spec->estimatedRuntimeSec * 1000;
        if (!spec->user.isEmpty())
            a.user = spec->user;
        a.project = spec->project;
        a.pool = spec->pool;
    }
    a.sweepId = sweepIdOf(r);
    a.nodes.append(share);
    return a;
}

sched::SchedulerDecision decideByQueue(sched::Scheduler& scheduler, sched::ClusterState& state,
        const QList<sched::PendingRun>& queue, const std::function<const sched::Policy&(const QString&)>& policyOf,
        const std::function<sched::FairShareState(const sched::Policy&)>& usageOf, qint64 nowMs,
        const AfterQueue& afterQueue)
{
    QMap<QString, QList<sched::PendingRun>> byQueue; // "" (the default) sorts first
    for (const sched::PendingRun& p : queue)
        byQueue[p.queue].append(p);
    sched::SchedulerDecision decision;
    for (auto q = byQueue.cbegin(); q != byQueue.cend(); ++q) {
        const sched::Policy& policy = policyOf(q.key());
        const sched::FairShareState usage
                = policy.ordering == sched::Ordering::FairShare ? usageOf(policy) : sched::FairShareState{};
        sched::SchedulerDecision part = scheduler.schedule(state, q.value(), policy, nowMs, usage);
        state = sched::applyDecision(state, part, q.value(), nowMs);
        if (afterQueue)
            afterQueue(part, state, q.value(), policy);
        decision.placements += part.placements;
        decision.pending += part.pending;
        decision.preemptions += part.preemptions;
    }
    return decision;
}

QString pendingText(const sched::PendingInfo& info)
{
    QString text = sched::renderPendingReason(info.reason);
    // The head's reservation (backfill profile) is its estimated start.
    if (info.estimatedStartMs && info.reason.kind != sched::PendingKind::BackfillHeld)
        text += QStringLiteral("; ") + sched::renderEstimatedStart(*info.estimatedStartMs, info.reason, [](qint64 ms) {
            return QDateTime::fromMSecsSinceEpoch(ms).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
        });
    return text;
}

bool neverPlaceable(const sched::PendingInfo& info, const sched::ClusterState& state)
{
    return info.reason.kind == sched::PendingKind::Unsatisfiable && info.reason.unreachableNodes.isEmpty()
            && info.reason.connectingNodes.isEmpty() && !state.nodes.isEmpty();
}

} // namespace ty::pass
