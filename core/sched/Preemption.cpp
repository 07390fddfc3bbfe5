#include "Preemption.h"

#include <QRegularExpression>

#include <algorithm>
#include <optional>
#include <vector>

namespace ty::sched {
namespace {

// A victim candidate on one node: one run, or a gang's every rank.
struct Unit {
    bool borrower = false; // every run of it is a borrower taken back (Pools.h)
    QList<RunId> runs;     // every run it stops
    int priority = 0;      // the highest of its runs'
    qint64 lostMs = 0;     // nowMs - its earliest start
    qint64 graceMs = 0;    // the longest of its runs'
    QList<int> gpus;       // its GPUs on this node that the waiting run can use
    int cpus = 0;          // on this node
    qint64 memoryMiB = 0;
};

struct Choice {
    int borrowers = 0; // victims that are borrowers taken back (a gang counts one)
    int owners = 0;    // victims that are not borrowers taken back (a gang counts one)
    int count = 0;
    std::vector<int> priorities; // highest first
    qint64 lostMs = 0;
    QString node;
    QList<RunId> victims; // ascending
    QList<int> gpus;
    qint64 graceMs = 0;

    bool operator<(const Choice& o) const
    {
        if (owners != o.owners)
            return owners < o.owners;
        if (count != o.count)
            return count < o.count;
        if (priorities != o.priorities)
            return priorities < o.priorities;
        if (lostMs != o.lostMs)
            return lostMs < o.lostMs;
        if (node != o.node)
            return node < o.node;
        return victims < o.victims;
    }
};

bool hasLabel(const NodeState& n, const QStringList& labels)
{
    for (const QString& l : labels)
        if (n.labels.contains(l))
            return true;
    return false;
}

} // namespace

void planPreemptions(SchedulerDecision& decision, const ClusterState& state, const QList<PendingRun>& queue,
        PreemptionInput& input, qint64 nowMs)
{
    QHash<RunId, const PendingRun*> byId;
    for (const PendingRun& p : queue)
        byId.insert(p.id, &p);

    // Pools (Pools.h): each node's pool, and the pool each borrower took
    // GPUs from (a run of one pool whose every GPU is on nodes of another).
    const QList<ResourcePool>& pools = input.pools;
    const QHash<QString, int> nodePool = nodeToPool(pools, state.nodes);
    QHash<RunId, int> lentBy;
    std::optional<PoolUsage> usage;
    if (!pools.isEmpty()) {
        usage.emplace(pools);
        usage->chargeRunning(state, nodePool);
        for (const RunningAllocation& a : state.running) {
            const int own = poolIndex(pools, a.pool);
            if (own < 0 || a.nodes.isEmpty())
                continue;
            const int from = nodePool.value(a.nodes.front().node, -1);
            bool whole = from >= 0 && from != own;
            for (const NodeShare& s : a.nodes)
                whole = whole && nodePool.value(s.node, -1) == from;
            if (whole)
                lentBy.insert(a.run, from);
        }
    }

    // Whether a running run may be stopped for run `p` (alone: its gang is
    // checked by the caller): of lower priority, or a borrower of the pool
    // `reclaimFrom` (-1: none) that `p` takes back.
    const auto preemptible = [&input](RunId run) {
        const auto it = input.running.constFind(run);
        return it != input.running.cend() && it->preemptible && !input.ending.contains(run);
    };
    const auto qualifies = [&](RunId run, int above, int reclaimFrom) {
        if (!preemptible(run))
            return false;
        if (reclaimFrom >= 0 && lentBy.value(run, -1) == reclaimFrom)
            return true;
        return input.byPriority && input.running.value(run).priority < above;
    };

    // The lowest priority among the runs that may be stopped: a waiting run
    // of no higher priority has no victim (most queues: everything at 0),
    // and is passed over without looking at the nodes -- unless a borrower
    // may be taken back.
    std::optional<int> lowest;
    bool anyBorrower = false;
    for (const RunningAllocation& a : state.running)
        if (preemptible(a.run)) {
            if (input.byPriority) {
                const int prio = input.running.value(a.run).priority;
                lowest = lowest ? std::min(*lowest, prio) : prio;
            }
            anyBorrower = anyBorrower || lentBy.contains(a.run);
        }
    if (!lowest && !anyBorrower)
        return;

    for (PendingInfo& info : decision.pending) {
        const PendingKind kind = info.reason.kind;
        if (kind != PendingKind::WaitingForResources && kind != PendingKind::BlockedByHead
                && kind != PendingKind::BackfillHeld)
            continue;
        const PendingRun* p = byId.value(info.run);
        if (!p || p->held || p->nodes != 1)
            continue;
        // Its pool, which takes back what it lent when the run is within its quota there.
        const int own = poolIndex(pools, p->pool);
        const int reclaimFrom
                = anyBorrower && own >= 0 && !usage->check(own, p->user, p->project, std::max(0, p->gpus) * p->nodes)
                ? own
                : -1;
        if (reclaimFrom < 0 && (!lowest || p->priority <= *lowest))
            continue;
        const QRegularExpression typeRe(p->gpuTypeRegex);
        const auto gpuFits = [&](const GpuState& g, bool freed) {
            if (g.foreignBusy)
                return false;
            if (!p->gpuTypeRegex.isEmpty() && (!typeRe.isValid() || !typeRe.match(g.name).hasMatch()))
                return false;
            // A victim's GPU frees all its memory once the victim has ended.
            return (freed ? std::max(g.memoryFreeMiB, g.memoryTotalMiB) : g.memoryFreeMiB) >= p->gpuMemoryMiB;
        };
        // Gangs whose every running rank qualifies, with their runs.
        QHash<qint64, QList<RunId>> gangRuns;
        QSet<qint64> gangBlocked;
        for (const RunningAllocation& a : state.running) {
            const auto it = input.running.constFind(a.run);
            if (it == input.running.cend() || it->gang == 0)
                continue;
            gangRuns[it->gang].append(a.run);
            if (!qualifies(a.run, p->priority, reclaimFrom))
                gangBlocked.insert(it->gang);
        }

        std::optional<Choice> best;
        bool fitsWithout = false;
        for (const NodeState& n : state.nodes) {
            if (!n.reachable || input.nodesTaken.contains(n.name) || p->avoidNodes.contains(n.name)
                    || hasLabel(n, p->avoidLabels))
                continue;
            if (!pools.isEmpty()) {
                // Only where it may run: its pool's nodes (never to borrow);
                // naming none, a node in no pool or in one whose quota allows it.
                const int at = nodePool.value(n.name, -1);
                if (own >= 0 ? at != own
                             : (p->pool.isEmpty()
                                             ? at >= 0 && usage->check(at, p->user, p->project, std::max(0, p->gpus))
                                             : true))
                    continue;
            }
            QSet<int> held;
            int cpuFree = n.cpus;
            qint64 memFree = n.memoryMiB;
            QHash<QString, Unit> units; // "r<id>" or "g<gang>"
            for (const RunningAllocation& a : state.running) {
                for (const NodeShare& share : a.nodes) {
                    if (share.node != n.name)
                        continue;
                    for (int g : share.gpuIndices)
                        held.insert(g);
                    cpuFree -= share.cpus;
                    memFree -= share.memoryMiB;
                    if (!qualifies(a.run, p->priority, reclaimFrom))
                        continue;
                    const qint64 gang = input.running.value(a.run).gang;
                    if (gang != 0 && gangBlocked.contains(gang))
                        continue;
                    const QString key = gang != 0 ? QStringLiteral("g%1").arg(gang) : QStringLiteral("r%1").arg(a.run);
                    Unit& u = units[key];
                    if (u.runs.isEmpty()) {
                        u.runs = gang != 0 ? gangRuns.value(gang) : QList<RunId>{a.run};
                        u.borrower = reclaimFrom >= 0;
                        for (RunId r : std::as_const(u.runs))
                            u.borrower = u.borrower && lentBy.value(r, -1) == reclaimFrom;
                        u.priority = std::numeric_limits<int>::min();
                        for (RunId r : std::as_const(u.runs)) {
                            const RunningRunInfo info = input.running.value(r);
                            u.priority = std::max(u.priority, info.priority);
                            u.graceMs = std::max(u.graceMs, info.graceMs);
                        }
                        // The earliest start of its runs (all of them: a gang's ranks start together).
                        qint64 start = a.startMs;
                        for (const RunningAllocation& other : state.running)
                            if (u.runs.contains(other.run))
                                start = std::min(start, other.startMs);
                        u.lostMs = std::max<qint64>(0, nowMs - start);
                    }
                    for (int g : share.gpuIndices)
                        for (const GpuState& gs : n.gpus)
                            if (gs.index == g && gpuFits(gs, true))
                                u.gpus.append(g);
                    u.cpus += share.cpus;
                    u.memoryMiB += share.memoryMiB;
                }
            }
            QList<int> freeGpus;
            for (const GpuState& gs : n.gpus)
                if (!held.contains(gs.index) && gpuFits(gs, false))
                    freeGpus.append(gs.index);
            if (freeGpus.size() >= p->gpus && cpuFree >= p->cpus && memFree >= p->memoryMiB) {
                fitsWithout = true; // it waits for its turn, not for resources: nobody is stopped for it
                break;
            }
            std::vector<Unit> cands;
            for (const Unit& u : std::as_const(units))
                cands.push_back(u);
            std::sort(cands.begin(), cands.end(), [](const Unit& a, const Unit& b) {
                if (a.priority != b.priority)
                    return a.priority < b.priority;
                if (a.lostMs != b.lostMs)
                    return a.lostMs < b.lostMs;
                return a.runs < b.runs;
            });
            if (cands.size() > size_t(kMaxCandidatesPerNode))
                cands.resize(size_t(kMaxCandidatesPerNode));
            const int c = int(cands.size());
            for (unsigned mask = 1; mask < (1u << c); ++mask) {
                QSet<int> gpus(freeGpus.cbegin(), freeGpus.cend());
                int cpus = cpuFree;
                qint64 mem = memFree;
                Choice ch;
                ch.node = n.name;
                for (int i = 0; i < c; ++i) {
                    if (!(mask & (1u << i)))
                        continue;
                    const Unit& u = cands[size_t(i)];
                    for (int g : u.gpus)
                        gpus.insert(g);
                    cpus += u.cpus;
                    mem += u.memoryMiB;
                    ++ch.count;
                    ch.owners += u.borrower ? 0 : 1;
                    ch.borrowers += u.borrower ? 1 : 0;
                    ch.priorities.push_back(u.priority);
                    ch.lostMs += u.lostMs;
                    ch.victims += u.runs;
                    ch.graceMs = std::max(ch.graceMs, u.graceMs);
                }
                if (gpus.size() < p->gpus || cpus < p->cpus || mem < p->memoryMiB)
                    continue;
                if (best && (best->owners < ch.owners || (best->owners == ch.owners && best->count < ch.count)))
                    continue; // fewer victims found already
                std::sort(ch.priorities.begin(), ch.priorities.end(), std::greater<>());
                std::sort(ch.victims.begin(), ch.victims.end());
                QList<int> all(gpus.cbegin(), gpus.cend());
                std::sort(all.begin(), all.end());
                ch.gpus = all.mid(0, p->gpus);
                if (!best || ch < *best)
                    best = std::move(ch);
            }
        }
        if (fitsWithout || !best)
            continue;

        Preemption pre;
        pre.preemptor = p->id;
        pre.node = best->node;
        pre.victims = best->victims;
        pre.gpuIndices = best->gpus;
        pre.cpus = p->cpus;
        pre.memoryMiB = p->memoryMiB;
        pre.graceMs = best->graceMs;
        if (best->owners == 0 && best->borrowers > 0)
            pre.reclaimPool = pools[reclaimFrom].name;
        decision.preemptions.append(pre);
        for (RunId v : std::as_const(pre.victims))
            input.ending.insert(v);
        input.nodesTaken.insert(pre.node);
        PreemptionClaim claim{pre.preemptor, pre.node, pre.gpuIndices, pre.cpus, pre.memoryMiB, pre.victims,
                pre.graceMs, pre.reclaimPool};
        info.reason = preemptingReason(claim);
        info.estimatedStartMs.reset();
    }
}

ClusterState withClaimsHeld(ClusterState state, const QList<PreemptionClaim>& claims, qint64 nowMs)
{
    for (const PreemptionClaim& claim : claims) {
        QSet<int> held;
        int victimCpus = 0;
        qint64 victimMem = 0;
        for (const RunningAllocation& a : std::as_const(state.running))
            for (const NodeShare& share : a.nodes) {
                if (share.node != claim.node)
                    continue;
                for (int g : share.gpuIndices)
                    held.insert(g);
                if (claim.victims.contains(a.run)) {
                    victimCpus += share.cpus;
                    victimMem += share.memoryMiB;
                }
            }
        NodeShare hold;
        hold.node = claim.node;
        for (int g : claim.gpuIndices)
            if (!held.contains(g))
                hold.gpuIndices.append(g);
        hold.cpus = std::max(0, claim.cpus - victimCpus);
        hold.memoryMiB = std::max<qint64>(0, claim.memoryMiB - victimMem);
        if (hold.gpuIndices.isEmpty() && hold.cpus == 0 && hold.memoryMiB == 0)
            continue;
        RunningAllocation a;
        a.run = 0;
        a.startMs = nowMs;
        a.estimatedEndMs = nowMs + std::max<qint64>(1, claim.graceMs);
        a.nodes.append(hold);
        state.running.append(a);
    }
    return state;
}

bool victimsGone(const PreemptionClaim& claim, const ClusterState& state)
{
    for (const RunningAllocation& a : state.running)
        if (claim.victims.contains(a.run))
            return false;
    return true;
}

PendingReason preemptingReason(const PreemptionClaim& claim)
{
    PendingReason r;
    r.kind = PendingKind::Preempting;
    r.victims = claim.victims;
    r.preemptNode = claim.node;
    r.graceMs = claim.graceMs;
    r.reclaimPool = claim.reclaimPool;
    return r;
}

} // namespace ty::sched
