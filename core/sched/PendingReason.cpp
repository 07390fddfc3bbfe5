#include "SchedulerDecision.h"

#include <QDateTime>

namespace ty::sched {
namespace {

QString gib(qint64 mib)
{
    if (mib % 1024 == 0)
        return QString::number(mib / 1024);
    return QString::number(double(mib) / 1024.0, 'f', 1);
}

QString plural(qint64 n, const QString& one, const QString& many)
{
    return QString::number(n) + QLatin1Char(' ') + (n == 1 ? one : many);
}

QString describeRequest(const PendingReason& r)
{
    QString s = u"needs "_qs;
    QStringList parts;
    if (r.gpus > 0) {
        QString g = plural(r.gpus, u"GPU"_qs, u"GPUs"_qs);
        if (!r.gpuType.isEmpty())
            g += u" matching '"_qs + r.gpuType + u"'"_qs;
        if (r.gpuMemoryMiB > 0)
            g += u" with >= "_qs + gib(r.gpuMemoryMiB) + u" GiB free"_qs;
        parts << g;
    }
    if (r.cpus > 0)
        parts << plural(r.cpus, u"CPU"_qs, u"CPUs"_qs);
    if (r.memoryMiB > 0)
        parts << gib(r.memoryMiB) + u" GiB memory"_qs;
    if (parts.isEmpty())
        parts << u"a node"_qs;
    s += parts.join(u", "_qs);
    if (r.nodesMax > 0)
        s += u" on each of at least "_qs + plural(r.nodes, u"node"_qs, u"nodes"_qs) + u" (elastic, up to "_qs
                + QString::number(r.nodesMax) + u")"_qs;
    else if (r.nodes > 1)
        s += u" on each of "_qs + QString::number(r.nodes) + u" nodes"_qs;
    return s;
}

QString describeBest(const PendingReason& r)
{
    if (r.bestNode.isEmpty())
        return u"no eligible node"_qs;
    QString s;
    if (r.nodes > 1 || r.nodesMax > 1)
        s = plural(r.fittingNodes, u"node fits"_qs, u"nodes fit"_qs) + u"; best other node "_qs;
    else
        s = u"best node "_qs;
    s += r.bestNode + u" has "_qs;
    if (r.gpus > 0 && r.bestNodeGpus < r.gpus)
        return s + QString::number(r.bestNodeGpus);
    QStringList have;
    if (r.gpus > 0)
        have << plural(r.bestNodeGpus, u"GPU"_qs, u"GPUs"_qs);
    // Free out of all: "0 CPUs" alone reads as a node without any.
    if (r.cpus > 0 && r.bestNodeCpus < r.cpus)
        have << QString::number(r.bestNodeCpus) + u" of "_qs + plural(r.bestNodeCpuTotal, u"CPU"_qs, u"CPUs"_qs)
                        + u" free"_qs;
    if (r.memoryMiB > 0 && r.bestNodeMemoryMiB < r.memoryMiB)
        have << gib(r.bestNodeMemoryMiB) + u" of "_qs + gib(r.bestNodeMemoryTotalMiB) + u" GiB memory free"_qs;
    if (have.isEmpty())
        have << u"room"_qs;
    return s + have.join(u", "_qs);
}

QString unreachableSuffix(const PendingReason& r)
{
    QStringList parts;
    if (!r.connectingNodes.isEmpty())
        parts << r.connectingNodes.join(u", "_qs) + u" still connecting"_qs;
    if (!r.unreachableNodes.isEmpty())
        parts << r.unreachableNodes.join(u", "_qs) + u" unreachable"_qs;
    return parts.isEmpty() ? QString() : u" ("_qs + parts.join(u"; "_qs) + u")"_qs;
}

QString hours(qint64 ms)
{
    if (ms % 3600000 == 0)
        return QString::number(ms / 3600000) + u" h"_qs;
    if (ms % 60000 == 0)
        return QString::number(ms / 60000) + u" min"_qs;
    return QString::number(double(ms) / 1000.0, 'g', 6) + u" s"_qs;
}

// An estimate made from the hidden default runtime is marked as such.
QString assumption(const PendingReason& r)
{
    if (!r.assumesDefaultRuntime)
        return {};
    return u" (assumes "_qs + hours(r.defaultRuntimeMs) + u" per run without estimated_runtime)"_qs;
}

} // namespace

QString renderEstimatedStart(qint64 startMs, const PendingReason& reason, const TimeFormatter& formatTime)
{
    const QString at = formatTime ? formatTime(startMs)
                                  : QDateTime::fromMSecsSinceEpoch(startMs).toLocalTime().toString(u"HH:mm"_qs);
    return u"estimated start ~"_qs + at + assumption(reason);
}

QString orderingName(Ordering ordering)
{
    switch (ordering) {
    case Ordering::Fcfs: return u"FCFS"_qs;
    case Ordering::Priority: return u"priority"_qs;
    case Ordering::ShortestJobFirst: return u"SJF"_qs;
    case Ordering::FairShare: return u"fair-share"_qs;
    }
    return {};
}

QString renderPendingReason(const PendingReason& r, const TimeFormatter& formatTime)
{
    const auto fmt = [&](qint64 ms) {
        if (formatTime)
            return formatTime(ms);
        return QDateTime::fromMSecsSinceEpoch(ms).toLocalTime().toString(u"HH:mm"_qs);
    };
    switch (r.kind) {
    case PendingKind::Held: return u"held by user"_qs;
    case PendingKind::SweepCap:
        return u"sweep "_qs + (r.sweepName.isEmpty() ? r.sweepId : r.sweepName) + u" at its cap: "_qs
                + QString::number(r.sweepRunning) + u" of "_qs + QString::number(r.sweepCap) + u" running"_qs;
    case PendingKind::BlockedByHead:
        return u"waiting for "_qs + orderingName(r.ordering) + u" head run "_qs + QString::number(r.otherRun);
    case PendingKind::BackfillHeld:
        return u"held for backfill reservation of run "_qs + QString::number(r.otherRun) + u" at ~"_qs + fmt(r.atMs)
                + assumption(r);
    case PendingKind::WaitingForResources:
        return u"waiting: "_qs + describeRequest(r) + u"; "_qs + describeBest(r) + unreachableSuffix(r);
    case PendingKind::Preempting: {
        QStringList ids;
        for (RunId v : r.victims)
            ids << QString::number(v);
        return u"waiting: "_qs
                + (r.reclaimPool.isEmpty() ? QString() : u"reclaiming pool "_qs + r.reclaimPool + u": "_qs)
                + u"preempting "_qs + (ids.size() == 1 ? u"run "_qs : u"runs "_qs) + ids.join(u", "_qs) + u" on "_qs
                + r.preemptNodes.join(u", "_qs)
                + (r.heldNodes.isEmpty() ? QString() : u" and holding "_qs + r.heldNodes.join(u", "_qs))
                + u" (grace "_qs + (r.graceMs > 0 ? hours(r.graceMs) : u"0 s"_qs) + u")"_qs;
    }
    case PendingKind::PoolQuota: {
        const QString who = (r.quotaProject ? u"project "_qs : u"user "_qs) + r.quotaAccount;
        const QString in = u" in pool "_qs + r.pool;
        if (r.quotaNeed > r.quotaLimit) // never, whatever the others do
            return u"waiting: "_qs + who + u" may use at most "_qs + plural(r.quotaLimit, u"GPU"_qs, u"GPUs"_qs) + in
                    + u", and this run needs "_qs + QString::number(r.quotaNeed);
        return u"waiting: "_qs + who + u" uses "_qs + QString::number(r.quotaUsed) + u" of "_qs
                + (r.quotaProject ? u"its "_qs : u"their "_qs) + plural(r.quotaLimit, u"GPU"_qs, u"GPUs"_qs) + in
                + (r.quotaUsed < r.quotaLimit ? u"; this run needs "_qs + QString::number(r.quotaNeed) : QString());
    }
    case PendingKind::NoSuchPool:
        return u"waiting: no pool named "_qs + r.pool + u" ("_qs
                + (r.pools.isEmpty() ? u"none configured"_qs : u"pools: "_qs + r.pools.join(u", "_qs)) + u")"_qs;
    case PendingKind::EmptyPool:
        return u"waiting: pool "_qs + r.pool + u" has no nodes ("_qs
                + (r.pools.isEmpty() ? u"every node is in an earlier pool"_qs
                                     : u"none carries its labels: "_qs + r.pools.join(u", "_qs))
                + u")"_qs;
    case PendingKind::Unsatisfiable:
        if (!r.connectingNodes.isEmpty()) // one of them may hold it: not "never" yet
            return u"waiting: "_qs + describeRequest(r) + u"; no node that can be reached now could hold it"_qs
                    + unreachableSuffix(r);
        return u"cannot start: "_qs + describeRequest(r) + u"; no reachable node could ever hold it"_qs
                + (r.bestNode.isEmpty() ? QString()
                                        : u" (best node "_qs + r.bestNode + u" has "_qs
                                        + QString::number(r.bestNodeGpus) + u" usable GPUs)"_qs)
                + unreachableSuffix(r);
    }
    return {};
}

} // namespace ty::sched
