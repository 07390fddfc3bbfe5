#include "Preemption.h"

#include <QRegularExpression>

#include <algorithm>
#include <optional>
#include <vector>

namespace ty::sched {
namespace {

// A victim candidate on one node: one run, or a gang's every rank.
struct Unit {
    QList<RunId> runs;  // every run it stops
    int priority = 0;   // the highest of its runs'
    qint64 lostMs = 0;  // nowMs - its earliest start
    qint64 graceMs = 0; // the longest of its runs'
    QList<int> gpus;    // its GPUs on this node that the waiting run can use
    int cpus = 0;       // on this node
    qint64 memoryMiB = 0;
};

struct Choice {
    int count = 0;
    std::vector<int> priorities; // highest first
    qint64 lostMs = 0;
    QString node;
    QList<RunId> victims; // ascending
    QList<int> gpus;
    qint64 graceMs = 0;

    bool operator<(const Choice& o) const
    {
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

    // Whether a running run may be stopped for a run of priority `above`
    // (alone: its gang is checked by the caller).
    const auto qualifies = [&input](RunId run, int above) {
        const auto it = input.running.constFind(run);
        return it != input.running.cend() && it->preemptible && it->priority < above && !input.ending.contains(run);
    };

    // The lowest priority among the runs that may be stopped: a waiting run
    // of no higher priority has no victim (most queues: everything at 0),
    // and is passed over without looking at the nodes.
    std::optional<int> lowest;
    for (const RunningAllocation& a : state.running)
        if (const auto it = input.running.constFind(a.run);
                it != input.running.cend() && it->preemptible && !input.ending.contains(a.run))
            lowest = lowest ? std::min(*lowest, it->priority) : it->priority;
    if (!lowest)
        return;

    for (PendingInfo& info : decision.pending) {
        const PendingKind kind = info.reason.kind;
        if (kind != PendingKind::WaitingForResources && kind != PendingKind::BlockedByHead
                && kind != PendingKind::BackfillHeld)
            continue;
        const PendingRun* p = byId.value(info.run);
        if (!p || p->held || p->nodes != 1 || p->priority <= *lowest)
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
            if (!qualifies(a.run, p->priority))
                gangBlocked.insert(it->gang);
        }

        std::optional<Choice> best;
        bool fitsWithout = false;
        for (const NodeState& n : state.nodes) {
            if (!n.reachable || input.nodesTaken.contains(n.name) || p->avoidNodes.contains(n.name)
                    || hasLabel(n, p->avoidLabels))
                continue;
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
                    if (!qualifies(a.run, p->priority))
                        continue;
                    const qint64 gang = input.running.value(a.run).gang;
                    if (gang != 0 && gangBlocked.contains(gang))
                        continue;
                    const QString key = gang != 0 ? QStringLiteral("g%1").arg(gang) : QStringLiteral("r%1").arg(a.run);
                    Unit& u = units[key];
                    if (u.runs.isEmpty()) {
                        u.runs = gang != 0 ? gangRuns.value(gang) : QList<RunId>{a.run};
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
                    ch.priorities.push_back(u.priority);
                    ch.lostMs += u.lostMs;
                    ch.victims += u.runs;
                    ch.graceMs = std::max(ch.graceMs, u.graceMs);
                }
                if (gpus.size() < p->gpus || cpus < p->cpus || mem < p->memoryMiB)
                    continue;
                if (best && best->count < ch.count)
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
        decision.preemptions.append(pre);
        for (RunId v : std::as_const(pre.victims))
            input.ending.insert(v);
        input.nodesTaken.insert(pre.node);
        PreemptionClaim claim{
                pre.preemptor, pre.node, pre.gpuIndices, pre.cpus, pre.memoryMiB, pre.victims, pre.graceMs};
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
    return r;
}

} // namespace ty::sched
