#include "Preemption.h"

#include <QRegularExpression>

#include <algorithm>
#include <deque>
#include <limits>
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
    QList<RunId> victims; // ascending; the new ones
    QList<int> gpus;
    qint64 graceMs = 0; // the longest of the new victims'
    QList<RunId> freed; // victims chosen on other nodes that hold something here

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

// What a waiting run finds on one node it may use: the free GPUs it can
// have, CPUs and memory, and the victim candidates there.
struct Room {
    const NodeState* node = nullptr;
    QList<int> freeGpus; // free, fitting, ascending
    int cpuFree = 0;
    qint64 memFree = 0;
    std::vector<Unit> units; // every candidate here (a gang whole), cheapest first
    QSet<RunId> runsHere;    // the candidates' runs that hold something here
};

// The cheapest set of victims on `room` that makes one rank of `p` fit,
// the runs of `planned` (victims chosen for the same run on other nodes)
// counted as gone: at most kMaxCandidatesPerNode candidates besides them.
std::optional<Choice> cheapestOn(const Room& room, const PendingRun& p, const QSet<RunId>& planned)
{
    QSet<int> baseGpus(room.freeGpus.cbegin(), room.freeGpus.cend());
    int baseCpus = room.cpuFree;
    qint64 baseMem = room.memFree;
    QList<RunId> freed; // planned victims that hold something here
    std::vector<const Unit*> cands;
    for (const Unit& u : room.units) {
        if (planned.contains(u.runs.front())) {
            for (int g : u.gpus)
                baseGpus.insert(g);
            baseCpus += u.cpus;
            baseMem += u.memoryMiB;
            freed += u.runs;
        } else if (cands.size() < size_t(kMaxCandidatesPerNode)) {
            cands.push_back(&u);
        }
    }
    std::optional<Choice> best;
    const int c = int(cands.size());
    // The empty set only counts where planned victims free the node.
    for (unsigned mask = freed.isEmpty() ? 1u : 0u; mask < (1u << c); ++mask) {
        QSet<int> gpus = baseGpus;
        int cpus = baseCpus;
        qint64 mem = baseMem;
        Choice ch;
        ch.node = room.node->name;
        for (int i = 0; i < c; ++i) {
            if (!(mask & (1u << i)))
                continue;
            const Unit& u = *cands[size_t(i)];
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
        if (gpus.size() < p.gpus || cpus < p.cpus || mem < p.memoryMiB)
            continue;
        if (best && (best->owners < ch.owners || (best->owners == ch.owners && best->count < ch.count)))
            continue; // fewer victims found already
        std::sort(ch.priorities.begin(), ch.priorities.end(), std::greater<>());
        std::sort(ch.victims.begin(), ch.victims.end());
        QList<int> all(gpus.cbegin(), gpus.cend());
        std::sort(all.begin(), all.end());
        ch.gpus = all.mid(0, p.gpus);
        if (!best || ch < *best)
            best = std::move(ch);
    }
    if (best)
        best->freed = freed;
    return best;
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

    // What runs where: each node's shares, in state.running's order.
    QHash<QString, QList<QPair<const RunningAllocation*, const NodeShare*>>> sharesOn;
    QHash<RunId, qint64> startOf;
    for (const RunningAllocation& a : state.running) {
        startOf.insert(a.run, a.startMs);
        for (const NodeShare& share : a.nodes)
            sharesOn[share.node].append({&a, &share});
    }

    for (PendingInfo& info : decision.pending) {
        const PendingKind kind = info.reason.kind;
        if (kind != PendingKind::WaitingForResources && kind != PendingKind::BlockedByHead
                && kind != PendingKind::BackfillHeld)
            continue;
        const PendingRun* p = byId.value(info.run);
        if (!p || p->held)
            continue;
        // Nodes it needs: a gang's size, an elastic gang's minimum.
        const int k = std::max(1, p->nodes);
        // Its pool, which takes back what it lent when the run is within its quota there.
        const int own = poolIndex(pools, p->pool);
        const int need = std::max(0, p->gpus) * k; // GPUs in all, as the scheduler's quota checks count them
        const int reclaimFrom = anyBorrower && own >= 0 && !usage->check(own, p->user, p->project, need) ? own : -1;
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

        // The nodes it may use, each free (one rank fits as things are) or
        // with its victim candidates.
        std::vector<Room> rooms;
        QList<const Room*> freeRooms;
        std::deque<Room> freeStore;
        for (const NodeState& n : state.nodes) {
            if (!n.reachable || input.nodesTaken.contains(n.name) || p->avoidNodes.contains(n.name)
                    || hasLabel(n, p->avoidLabels))
                continue;
            if (!pools.isEmpty()) {
                // Only where it may run: its pool's nodes (never to borrow);
                // naming none, a node in no pool or in one whose quota allows it.
                const int at = nodePool.value(n.name, -1);
                if (own >= 0 ? at != own
                             : (p->pool.isEmpty() ? at >= 0 && usage->check(at, p->user, p->project, need) : true))
                    continue;
            }
            Room room;
            room.node = &n;
            QSet<int> held;
            room.cpuFree = n.cpus;
            room.memFree = n.memoryMiB;
            QHash<QString, int> unitAt; // "r<id>" or "g<gang>" -> index in room.units
            for (const auto& [a, share] : std::as_const(sharesOn[n.name])) {
                for (int g : share->gpuIndices)
                    held.insert(g);
                room.cpuFree -= share->cpus;
                room.memFree -= share->memoryMiB;
                if (!qualifies(a->run, p->priority, reclaimFrom))
                    continue;
                const qint64 gang = input.running.value(a->run).gang;
                if (gang != 0 && gangBlocked.contains(gang))
                    continue;
                const QString key = gang != 0 ? QStringLiteral("g%1").arg(gang) : QStringLiteral("r%1").arg(a->run);
                auto at = unitAt.constFind(key);
                if (at == unitAt.cend()) {
                    Unit u;
                    u.runs = gang != 0 ? gangRuns.value(gang) : QList<RunId>{a->run};
                    u.borrower = reclaimFrom >= 0;
                    for (RunId r : std::as_const(u.runs))
                        u.borrower = u.borrower && lentBy.value(r, -1) == reclaimFrom;
                    u.priority = std::numeric_limits<int>::min();
                    for (RunId r : std::as_const(u.runs)) {
                        const RunningRunInfo ri = input.running.value(r);
                        u.priority = std::max(u.priority, ri.priority);
                        u.graceMs = std::max(u.graceMs, ri.graceMs);
                    }
                    // The earliest start of its runs (all of them: a gang's ranks start together).
                    qint64 start = a->startMs;
                    for (RunId r : std::as_const(u.runs))
                        start = std::min(start, startOf.value(r, start));
                    u.lostMs = std::max<qint64>(0, nowMs - start);
                    at = unitAt.insert(key, int(room.units.size()));
                    room.units.push_back(std::move(u));
                }
                Unit& u = room.units[size_t(*at)];
                for (int g : share->gpuIndices)
                    for (const GpuState& gs : n.gpus)
                        if (gs.index == g && gpuFits(gs, true))
                            u.gpus.append(g);
                u.cpus += share->cpus;
                u.memoryMiB += share->memoryMiB;
                room.runsHere.insert(a->run);
            }
            for (const GpuState& gs : n.gpus)
                if (!held.contains(gs.index) && gpuFits(gs, false))
                    room.freeGpus.append(gs.index);
            if (room.freeGpus.size() >= p->gpus && room.cpuFree >= p->cpus && room.memFree >= p->memoryMiB) {
                freeStore.push_back(std::move(room));
                freeRooms.append(&freeStore.back());
                if (freeRooms.size() >= k)
                    break; // it waits for its turn, not for resources: nobody is stopped for it
                continue;
            }
            std::sort(room.units.begin(), room.units.end(), [](const Unit& a, const Unit& b) {
                if (a.priority != b.priority)
                    return a.priority < b.priority;
                if (a.lostMs != b.lostMs)
                    return a.lostMs < b.lostMs;
                return a.runs < b.runs;
            });
            rooms.push_back(std::move(room));
        }
        if (freeRooms.size() >= k)
            continue;

        // Greedy, node by node: the cheapest node's set of victims, then the
        // cheapest on the rest, the victims chosen so far counted as gone,
        // until enough nodes are free; none if too few can be freed.
        QSet<RunId> planned;
        std::vector<std::optional<Choice>> best(rooms.size());
        for (size_t i = 0; i < rooms.size(); ++i)
            best[i] = cheapestOn(rooms[i], *p, planned);
        std::vector<Choice> chosen;
        std::vector<bool> taken(rooms.size(), false);
        const int toFree = k - int(freeRooms.size());
        while (int(chosen.size()) < toFree) {
            std::optional<size_t> pick;
            for (size_t i = 0; i < rooms.size(); ++i)
                if (best[i] && (!pick || *best[i] < *best[*pick]))
                    pick = i;
            if (!pick)
                break;
            Choice ch = std::move(*best[*pick]);
            best[*pick].reset(); // one rank per node
            QSet<RunId> newly(ch.victims.cbegin(), ch.victims.cend());
            planned.unite(newly);
            taken[*pick] = true;
            // Only the nodes where a new victim runs change.
            for (size_t i = 0; i < rooms.size(); ++i)
                if (!taken[i] && rooms[i].runsHere.intersects(newly))
                    best[i] = cheapestOn(rooms[i], *p, planned);
            chosen.push_back(std::move(ch));
        }
        if (int(chosen.size()) < toFree)
            continue; // no partial preemption: nothing is stopped

        // Every victim a borrower the run's pool takes back: the pool is named.
        int owners = 0;
        int borrowers = 0;
        qint64 graceMs = 0;
        for (const Choice& ch : chosen) {
            owners += ch.owners;
            borrowers += ch.borrowers;
            graceMs = std::max(graceMs, ch.graceMs);
        }
        const QString reclaimPool = owners == 0 && borrowers > 0 ? pools[reclaimFrom].name : QString();
        QList<Preemption> mine;
        for (const Choice& ch : chosen) {
            Preemption pre;
            pre.preemptor = p->id;
            pre.node = ch.node;
            pre.victims = ch.victims + ch.freed;
            std::sort(pre.victims.begin(), pre.victims.end());
            pre.victims.erase(std::unique(pre.victims.begin(), pre.victims.end()), pre.victims.end());
            for (RunId v : std::as_const(pre.victims))
                pre.graceMs = std::max(pre.graceMs, input.running.value(v).graceMs);
            pre.gpuIndices = ch.gpus;
            pre.cpus = p->cpus;
            pre.memoryMiB = p->memoryMiB;
            pre.reclaimPool = reclaimPool;
            mine.append(pre);
        }
        for (const Room* room : std::as_const(freeRooms)) {
            Preemption pre; // a free node held for the gang's other ranks: no victims
            pre.preemptor = p->id;
            pre.node = room->node->name;
            pre.gpuIndices = room->freeGpus.mid(0, std::max(0, p->gpus));
            pre.cpus = p->cpus;
            pre.memoryMiB = p->memoryMiB;
            pre.graceMs = graceMs;
            pre.reclaimPool = reclaimPool;
            mine.append(pre);
        }
        std::sort(mine.begin(), mine.end(), [](const Preemption& a, const Preemption& b) { return a.node < b.node; });
        QList<PreemptionClaim> claims;
        for (const Preemption& pre : std::as_const(mine)) {
            decision.preemptions.append(pre);
            for (RunId v : pre.victims)
                input.ending.insert(v);
            input.nodesTaken.insert(pre.node);
            claims.append(PreemptionClaim{pre.preemptor, pre.node, pre.gpuIndices, pre.cpus, pre.memoryMiB, pre.victims,
                    pre.graceMs, pre.reclaimPool});
        }
        info.reason = preemptingReason(claims);
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
    return preemptingReason(QList<PreemptionClaim>{claim});
}

PendingReason preemptingReason(const QList<PreemptionClaim>& claims)
{
    PendingReason r;
    r.kind = PendingKind::Preempting;
    bool reclaim = true;
    for (const PreemptionClaim& c : claims) {
        r.victims += c.victims;
        (c.victims.isEmpty() ? r.heldNodes : r.preemptNodes).append(c.node);
        r.graceMs = std::max(r.graceMs, c.graceMs);
        if (!c.victims.isEmpty()) {
            reclaim = reclaim && !c.reclaimPool.isEmpty()
                    && (r.reclaimPool.isEmpty() || r.reclaimPool == c.reclaimPool);
            r.reclaimPool = c.reclaimPool;
        }
    }
    if (!reclaim)
        r.reclaimPool.clear();
    std::sort(r.victims.begin(), r.victims.end());
    r.victims.erase(std::unique(r.victims.begin(), r.victims.end()), r.victims.end());
    r.preemptNodes.sort();
    r.preemptNodes.removeDuplicates();
    r.heldNodes.sort();
    r.heldNodes.removeDuplicates();
    return r;
}

} // namespace ty::sched
