// Property-based tests of ty::sched::schedule() over thousands of random
// clusters and queues. Every case has its own seed (base seed + case number),
// printed on failure; rerun one with TY_SCHED_SEED=<seed> TY_SCHED_CASES=1.

#include "SchedTestUtil.h"

#include <QHash>
#include <QRegularExpression>
#include <QTest>

#include <random>

using namespace ty::sched;
using namespace ty::sched::test;

namespace {

quint64 baseSeed()
{
    bool ok = false;
    const quint64 s = qEnvironmentVariable("TY_SCHED_SEED").toULongLong(&ok);
    return ok ? s : 20240601ULL;
}

int caseCount(int dflt)
{
    bool ok = false;
    const int n = qEnvironmentVariableIntValue("TY_SCHED_CASES", &ok);
    return ok && n > 0 ? n : dflt;
}

bool before(const PendingRun& a, const PendingRun& b)
{
    return a.submitMs != b.submitMs ? a.submitMs < b.submitMs : a.id < b.id;
}

// Empty when every invariant holds, else what broke.
QString checkInvariants(const RandomCase& c, const SchedulerDecision& d)
{
    QHash<ty::RunId, PendingRun> runs;
    for (const PendingRun& r : c.queue)
        runs.insert(r.id, r);
    QHash<QString, NodeState> nodes;
    for (const NodeState& n : c.state.nodes)
        nodes.insert(n.name, n);

    // Every run exactly once.
    QSet<ty::RunId> seen;
    for (const RunPlacement& p : d.placements) {
        if (!runs.contains(p.run) || seen.contains(p.run))
            return QStringLiteral("placement of unknown or duplicate run %1").arg(p.run);
        seen.insert(p.run);
    }
    for (const PendingInfo& p : d.pending) {
        if (!runs.contains(p.run) || seen.contains(p.run))
            return QStringLiteral("pending entry for unknown or duplicate run %1").arg(p.run);
        seen.insert(p.run);
    }
    if (seen.size() != runs.size())
        return QStringLiteral("%1 runs in, %2 accounted for").arg(runs.size()).arg(seen.size());

    // GPUs, CPUs, memory.
    QSet<QString> usedGpus;
    QHash<QString, int> cpus;
    QHash<QString, qint64> mem;
    QHash<QString, int> sweepCount;
    QHash<QString, QSet<int>> portsOnNode;
    for (const RunningAllocation& a : c.state.running) {
        for (const NodeShare& s : a.nodes) {
            for (int g : s.gpuIndices)
                usedGpus.insert(s.node + u'/' + QString::number(g));
            cpus[s.node] += s.cpus;
            mem[s.node] += s.memoryMiB;
            if (s.port)
                portsOnNode[s.node].insert(s.port);
        }
        if (!a.sweepId.isEmpty())
            ++sweepCount[a.sweepId];
    }
    for (const NodeState& n : c.state.nodes)
        for (int p : n.portsInUse)
            portsOnNode[n.name].insert(p);

    for (const RunPlacement& p : d.placements) {
        const PendingRun& r = runs[p.run];
        if (r.held)
            return QStringLiteral("held run %1 started").arg(r.id);
        const int minNodes = std::max(1, r.nodes);
        const int maxNodes = r.nodesMax > 0 ? std::max(minNodes, r.nodesMax) : minNodes;
        if (p.nodes.size() < minNodes || p.nodes.size() > maxNodes)
            return QStringLiteral("run %1 wants %2..%3 nodes, got %4 (gang not all-or-nothing)")
                    .arg(r.id)
                    .arg(minNodes)
                    .arg(maxNodes)
                    .arg(p.nodes.size());
        if (p.elastic != (r.nodesMax > 0))
            return QStringLiteral("run %1: placement elastic=%2, run nodesMax=%3")
                    .arg(r.id)
                    .arg(p.elastic)
                    .arg(r.nodesMax);
        QSet<QString> distinct;
        const QRegularExpression re(r.gpuTypeRegex);
        for (int rank = 0; rank < p.nodes.size(); ++rank) {
            const NodeAssignment& a = p.nodes[rank];
            if (!nodes.contains(a.node) || distinct.contains(a.node))
                return QStringLiteral("run %1 on unknown or repeated node %2").arg(r.id).arg(a.node);
            distinct.insert(a.node);
            const NodeState& n = nodes[a.node];
            if (!n.reachable)
                return QStringLiteral("run %1 placed on unreachable %2").arg(r.id).arg(a.node);
            if (r.avoidNodes.contains(a.node))
                return QStringLiteral("run %1 placed on avoided %2").arg(r.id).arg(a.node);
            if (a.gpuIndices.size() != r.gpus || a.cpus != r.cpus || a.memoryMiB != r.memoryMiB)
                return QStringLiteral("run %1 got wrong amounts on %2").arg(r.id).arg(a.node);
            for (int g : a.gpuIndices) {
                const QString key = a.node + u'/' + QString::number(g);
                if (usedGpus.contains(key))
                    return QStringLiteral("GPU %1 given twice (run %2)").arg(key).arg(r.id);
                usedGpus.insert(key);
                const auto gs
                        = std::find_if(n.gpus.begin(), n.gpus.end(), [g](const GpuState& x) { return x.index == g; });
                if (gs == n.gpus.end())
                    return QStringLiteral("run %1 got nonexistent GPU %2").arg(r.id).arg(key);
                if (gs->foreignBusy)
                    return QStringLiteral("run %1 got foreign-busy GPU %2").arg(r.id).arg(key);
                if (gs->memoryFreeMiB < r.gpuMemoryMiB)
                    return QStringLiteral("run %1 got GPU %2 with too little free memory").arg(r.id).arg(key);
                if (!r.gpuTypeRegex.isEmpty() && !re.match(gs->name).hasMatch())
                    return QStringLiteral("run %1 got GPU %2 of the wrong type").arg(r.id).arg(key);
            }
            cpus[a.node] += a.cpus;
            mem[a.node] += a.memoryMiB;
            const bool rendezvous = p.nodes.size() > 1 || r.distributed != DistributedKind::None || p.elastic;
            if (rendezvous) {
                if (a.env.value(u"NODE_RANK"_qs) != QString::number(rank)
                        || a.env.value(u"NNODES"_qs) != QString::number(p.nodes.size())
                        || a.env.value(u"WORLD_SIZE"_qs) != QString::number(p.nodes.size() * std::max(1, r.gpus)))
                    return QStringLiteral("run %1 rank %2 has wrong env").arg(r.id).arg(rank);
                if (a.env.value(u"MASTER_PORT"_qs) != QString::number(p.nodes[0].port)
                        || a.env.value(u"MASTER_ADDR"_qs) != nodes[p.nodes[0].node].address)
                    return QStringLiteral("run %1 rank %2 has wrong master").arg(r.id).arg(rank);
            }
            if (p.elastic
                    && (a.env.value(u"PET_NNODES"_qs) != QStringLiteral("%1:%2").arg(minNodes).arg(maxNodes)
                            || a.env.value(u"PET_RDZV_BACKEND"_qs) != u"c10d"_qs
                            || a.env.value(u"PET_RDZV_ENDPOINT"_qs)
                                    != QStringLiteral("%1:%2")
                                               .arg(nodes[p.nodes[0].node].address)
                                               .arg(p.nodes[0].port)))
                return QStringLiteral("run %1 rank %2 has wrong elastic rendezvous env").arg(r.id).arg(rank);
            if (!p.elastic && a.env.contains(u"PET_NNODES"_qs))
                return QStringLiteral("run %1 (not elastic) got elastic env").arg(r.id);
            if (a.port) {
                if (a.port < c.policy.portMin || a.port > c.policy.portMax || portsOnNode[a.node].contains(a.port))
                    return QStringLiteral("run %1 got busy or out-of-range port %2 on %3")
                            .arg(r.id)
                            .arg(a.port)
                            .arg(a.node);
                portsOnNode[a.node].insert(a.port);
            }
        }
        if (!r.sweepId.isEmpty())
            ++sweepCount[r.sweepId];
    }
    for (const NodeState& n : c.state.nodes) {
        if (cpus.value(n.name) > n.cpus || mem.value(n.name) > n.memoryMiB)
            return QStringLiteral("node %1 over-committed: %2/%3 CPUs, %4/%5 MiB")
                    .arg(n.name)
                    .arg(cpus.value(n.name))
                    .arg(n.cpus)
                    .arg(mem.value(n.name))
                    .arg(n.memoryMiB);
    }
    for (const RunPlacement& p : d.placements) {
        const PendingRun& r = runs[p.run];
        if (r.sweepMaxConcurrent > 0 && sweepCount.value(r.sweepId) > r.sweepMaxConcurrent)
            return QStringLiteral("sweep %1 over its cap %2").arg(r.sweepId).arg(r.sweepMaxConcurrent);
    }

    // Reasons match the policy.
    int waiting = 0;
    for (const PendingInfo& p : d.pending) {
        const PendingRun& r = runs[p.run];
        if (r.held != (p.reason.kind == PendingKind::Held))
            return QStringLiteral("run %1: held=%2 but reason %3")
                    .arg(r.id)
                    .arg(r.held)
                    .arg(renderPendingReason(p.reason));
        if (c.policy.backfill && p.reason.kind == PendingKind::BlockedByHead)
            return QStringLiteral("BlockedByHead under backfill");
        if (!c.policy.backfill && p.reason.kind == PendingKind::BackfillHeld)
            return QStringLiteral("BackfillHeld without backfill");
        if (p.reason.kind == PendingKind::WaitingForResources)
            ++waiting;
        if (renderPendingReason(p.reason).isEmpty())
            return QStringLiteral("empty reason for run %1").arg(r.id);
    }
    if (!c.policy.backfill && waiting > 1)
        return QStringLiteral("strict order but %1 runs wait for resources (only the head may)").arg(waiting);

    // FCFS: no run starts while an earlier one waits.
    if (c.policy.ordering == Ordering::Fcfs && !c.policy.backfill) {
        for (const PendingInfo& w : d.pending) {
            if (w.reason.kind != PendingKind::WaitingForResources && w.reason.kind != PendingKind::BlockedByHead)
                continue;
            for (const RunPlacement& p : d.placements)
                if (before(runs[w.run], runs[p.run]))
                    return QStringLiteral("FCFS violated: run %1 started while earlier run %2 waits")
                            .arg(p.run)
                            .arg(w.run);
        }
    }
    return {};
}

template <typename T> void shuffle(QList<T>& list, std::mt19937_64& rng)
{
    std::shuffle(list.begin(), list.end(), rng);
}

} // namespace

class TestSchedulerProperties final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void invariants();
    void determinism();
    void keptSchedulerDecidesAsAFreshOne();
    void fcfsNeverOvertaken();
    void backfillNeverDelaysHead();
    void elasticInvariants();
    void elasticTakesEveryFittingNodeUpToMax();
    void elasticBackfillNeverDelaysHead();

private:
    void checkBackfillNeverDelaysHead(quint64 base, int cases, const GenOptions& go);
};

void TestSchedulerProperties::invariants()
{
    const quint64 base = baseSeed();
    const int cases = caseCount(4000);
    int placed = 0;
    int gangs = 0;
    for (int i = 0; i < cases; ++i) {
        const quint64 seed = base + quint64(i);
        std::mt19937_64 rng(seed);
        const RandomCase c = randomCase(rng);
        const SchedulerDecision d = schedule(c.state, c.queue, c.policy, c.now, c.fairShare);
        const QString err = checkInvariants(c, d);
        QVERIFY2(err.isEmpty(), qPrintable(QStringLiteral("seed %1: %2").arg(seed).arg(err)));
        placed += int(d.placements.size());
        for (const RunPlacement& p : d.placements)
            gangs += p.nodes.size() > 1;
    }
    qInfo("base seed %llu: %d cases, %d placements, %d gang placements", base, cases, placed, gangs);
    if (cases >= 1000) {
        QVERIFY(placed > cases); // the generator must exercise placement, not only waiting
        QVERIFY(gangs > 50);
    }
}

void TestSchedulerProperties::determinism()
{
    const quint64 base = baseSeed() + 1'000'000;
    const int cases = caseCount(1500);
    for (int i = 0; i < cases; ++i) {
        const quint64 seed = base + quint64(i);
        std::mt19937_64 rng(seed);
        RandomCase c = randomCase(rng);
        const QString a = dump(schedule(c.state, c.queue, c.policy, c.now, c.fairShare));
        const QString b = dump(schedule(c.state, c.queue, c.policy, c.now, c.fairShare));
        QVERIFY2(a == b, qPrintable(QStringLiteral("seed %1: same input, different output").arg(seed)));
        // Container order carries no meaning: shuffle queue, nodes, running runs.
        shuffle(c.queue, rng);
        shuffle(c.state.nodes, rng);
        shuffle(c.state.running, rng);
        const QString s = dump(schedule(c.state, c.queue, c.policy, c.now, c.fairShare));
        QVERIFY2(a == s,
                qPrintable(QStringLiteral("seed %1: shuffled containers changed the decision:\n%2\n---\n%3")
                                   .arg(seed)
                                   .arg(a, s)));
    }
}

// One Scheduler kept across many random clusters (each a new layout) and
// across changes of their free resources (the same layout): every decision is
// schedule()'s.
void TestSchedulerProperties::keptSchedulerDecidesAsAFreshOne()
{
    const quint64 base = baseSeed() + 5'000'000;
    const int cases = caseCount(800);
    Scheduler kept;
    int expectedBuilds = 0;
    for (int i = 0; i < cases; ++i) {
        const quint64 seed = base + quint64(i);
        std::mt19937_64 rng(seed);
        RandomCase c = randomCase(rng);
        for (int round = 0; round < 3; ++round) {
            const QString fresh = dump(schedule(c.state, c.queue, c.policy, c.now, c.fairShare));
            const QString reused = dump(kept.schedule(c.state, c.queue, c.policy, c.now, c.fairShare));
            QVERIFY2(fresh == reused,
                    qPrintable(QStringLiteral("seed %1 round %2: kept scheduler decided otherwise:\n%3\n---\n%4")
                                       .arg(seed)
                                       .arg(round)
                                       .arg(fresh, reused)));
            // Next round: the same nodes with other free memory and reachability.
            for (NodeState& n : c.state.nodes) {
                n.reachable = std::bernoulli_distribution(0.8)(rng);
                for (GpuState& g : n.gpus)
                    g.memoryFreeMiB = std::uniform_int_distribution<qint64>(0, g.memoryTotalMiB)(rng);
            }
        }
        ++expectedBuilds; // a new random cluster: names n00.. repeat, but GPUs differ (almost always)
        QVERIFY(kept.layoutBuilds() <= expectedBuilds);
    }
    QVERIFY2(kept.layoutBuilds() < cases * 3, "the layout is kept across rounds of one cluster");
}

void TestSchedulerProperties::fcfsNeverOvertaken()
{
    // Same invariant as in invariants(), with every case forced to strict FCFS.
    const quint64 base = baseSeed() + 2'000'000;
    const int cases = caseCount(2000);
    int blocked = 0;
    for (int i = 0; i < cases; ++i) {
        const quint64 seed = base + quint64(i);
        std::mt19937_64 rng(seed);
        RandomCase c = randomCase(rng);
        c.policy.ordering = Ordering::Fcfs;
        c.policy.backfill = false;
        const SchedulerDecision d = schedule(c.state, c.queue, c.policy, c.now, c.fairShare);
        const QString err = checkInvariants(c, d);
        QVERIFY2(err.isEmpty(), qPrintable(QStringLiteral("seed %1: %2").arg(seed).arg(err)));
        for (const PendingInfo& p : d.pending)
            blocked += p.reason.kind == PendingKind::BlockedByHead;
    }
    if (cases >= 1000)
        QVERIFY(blocked > 100);
}

void TestSchedulerProperties::backfillNeverDelaysHead()
{
    GenOptions go;
    go.allowSweeps = false;        // a capped sweep run ahead of the head may become startable later
    go.allowLowFreeMemory = false; // see GenOptions
    checkBackfillNeverDelaysHead(baseSeed() + 3'000'000, caseCount(3000), go);
}

// An elastic head is reserved its minimum; runs backfilled beside it (elastic
// ones too, on what is left) still never delay it.
void TestSchedulerProperties::elasticBackfillNeverDelaysHead()
{
    GenOptions go;
    go.allowSweeps = false;
    go.allowLowFreeMemory = false;
    go.allowElastic = true;
    checkBackfillNeverDelaysHead(baseSeed() + 7'000'000, caseCount(2000), go);
}

void TestSchedulerProperties::elasticInvariants()
{
    const quint64 base = baseSeed() + 8'000'000;
    const int cases = caseCount(3000);
    GenOptions go;
    go.allowElastic = true;
    int elastic = 0;
    int partial = 0; // placed on fewer nodes than its max
    for (int i = 0; i < cases; ++i) {
        const quint64 seed = base + quint64(i);
        std::mt19937_64 rng(seed);
        const RandomCase c = randomCase(rng, go);
        const SchedulerDecision d = schedule(c.state, c.queue, c.policy, c.now, c.fairShare);
        const QString err = checkInvariants(c, d);
        QVERIFY2(err.isEmpty(), qPrintable(QStringLiteral("seed %1: %2").arg(seed).arg(err)));
        for (const RunPlacement& p : d.placements) {
            if (!p.elastic)
                continue;
            ++elastic;
            for (const PendingRun& r : c.queue)
                if (r.id == p.run && p.nodes.size() < std::max(r.nodes, r.nodesMax))
                    ++partial;
        }
    }
    qInfo("%d elastic placements, %d on fewer nodes than their max", elastic, partial);
    if (cases >= 1000) {
        QVERIFY(elastic > 100);
        QVERIFY(partial > 10);
    }
}

// One elastic run alone: it gets exactly min(max, nodes that fit it), counted
// here by brute force over the free resources, and waits below its minimum.
void TestSchedulerProperties::elasticTakesEveryFittingNodeUpToMax()
{
    const quint64 base = baseSeed() + 9'000'000;
    const int cases = caseCount(3000);
    GenOptions go;
    go.maxQueue = 1;
    int placedCount = 0;
    int waited = 0;
    for (int i = 0; i < cases; ++i) {
        const quint64 seed = base + quint64(i);
        std::mt19937_64 rng(seed);
        RandomCase c = randomCase(rng, go);
        PendingRun r = makeRun(5000, c.now, std::uniform_int_distribution<int>(0, 2)(rng));
        r.nodes = std::uniform_int_distribution<int>(1, 3)(rng);
        r.nodesMax = r.nodes + std::uniform_int_distribution<int>(0, 4)(rng);
        // Nodes that fit it now: reachable, enough free CPUs, memory and usable GPUs.
        int fitting = 0;
        for (const NodeState& n : c.state.nodes) {
            if (!n.reachable)
                continue;
            int cpus = n.cpus;
            qint64 mem = n.memoryMiB;
            QSet<int> busy;
            for (const RunningAllocation& a : c.state.running)
                for (const NodeShare& s : a.nodes)
                    if (s.node == n.name) {
                        cpus -= s.cpus;
                        mem -= s.memoryMiB;
                        for (int g : s.gpuIndices)
                            busy.insert(g);
                    }
            int gpus = 0;
            for (const GpuState& g : n.gpus)
                gpus += !g.foreignBusy && !busy.contains(g.index);
            fitting += cpus >= r.cpus && mem >= r.memoryMiB && gpus >= r.gpus;
        }
        const SchedulerDecision d = schedule(c.state, {r}, c.policy, c.now, c.fairShare);
        const QString what = QStringLiteral("seed %1: elastic %2..%3, %4 nodes fit")
                                     .arg(seed)
                                     .arg(r.nodes)
                                     .arg(r.nodesMax)
                                     .arg(fitting);
        if (fitting >= r.nodes) {
            QVERIFY2(d.placements.size() == 1, qPrintable(what + u": not placed"_qs));
            QVERIFY2(d.placements[0].nodes.size() == std::min(fitting, r.nodesMax),
                    qPrintable(what + QStringLiteral(": got %1").arg(d.placements[0].nodes.size())));
            ++placedCount;
        } else {
            QVERIFY2(d.placements.isEmpty(), qPrintable(what + u": placed below its minimum"_qs));
            QCOMPARE(d.pending.size(), 1);
            QVERIFY2(d.pending[0].reason.kind == PendingKind::WaitingForResources
                            || d.pending[0].reason.kind == PendingKind::Unsatisfiable,
                    qPrintable(what));
            QCOMPARE(d.pending[0].reason.nodesMax, r.nodesMax);
            ++waited;
        }
    }
    qInfo("%d placed, %d waited", placedCount, waited);
    if (cases >= 1000)
        QVERIFY(placedCount > 100 && waited > 100);
}

void TestSchedulerProperties::checkBackfillNeverDelaysHead(quint64 base, int cases, const GenOptions& go)
{
    // With runtimes equal to estimates and no new submissions, the backfill
    // head starts no later than the reservation of the first pass: simulate
    // forward, running schedule() at every run end.
    int checked = 0;
    int backfilled = 0;
    for (int i = 0; i < cases; ++i) {
        const quint64 seed = base + quint64(i);
        std::mt19937_64 rng(seed);
        RandomCase c = randomCase(rng, go);
        c.policy.backfill = true;
        c.policy.ordering = (i % 2) ? Ordering::Fcfs : Ordering::ShortestJobFirst;
        ClusterState st = c.state;
        QList<PendingRun> queue = c.queue;
        qint64 t = c.now;
        SchedulerDecision d = schedule(st, queue, c.policy, t);
        if (!d.reservation)
            continue;
        ++checked;
        const ty::RunId head = d.reservation->run;
        const qint64 reservedAt = d.reservation->startMs;
        bool headStarted = false;
        QHash<QString, qint64> freeBefore; // GPU memory free before a forward-simulated run took it
        for (int step = 0; step < 10000 && !headStarted; ++step) {
            for (const RunPlacement& p : d.placements) {
                backfilled += p.backfilled;
                if (p.run == head) {
                    QVERIFY2(t <= reservedAt,
                            qPrintable(QStringLiteral("seed %1: head %2 reserved for %3 started at %4")
                                               .arg(seed)
                                               .arg(head)
                                               .arg(reservedAt)
                                               .arg(t)));
                    headStarted = true;
                }
                for (const NodeAssignment& a : p.nodes)
                    for (NodeState& n : st.nodes)
                        if (n.name == a.node)
                            for (GpuState& g : n.gpus)
                                if (a.gpuIndices.contains(g.index)) {
                                    freeBefore.insert(n.name + u'/' + QString::number(g.index), g.memoryFreeMiB);
                                    g.memoryFreeMiB = g.memoryTotalMiB / 10;
                                }
            }
            if (headStarted)
                break;
            st = applyDecision(st, d, queue, t);
            queue.removeIf([&d](const PendingRun& r) {
                return std::any_of(d.placements.begin(), d.placements.end(),
                        [&r](const RunPlacement& p) { return p.run == r.id; });
            });
            // Next end (runtimes equal estimates).
            qint64 next = std::numeric_limits<qint64>::max();
            for (const RunningAllocation& a : st.running)
                next = std::min(next, a.estimatedEndMs);
            QVERIFY2(next != std::numeric_limits<qint64>::max(),
                    qPrintable(
                            QStringLiteral("seed %1: nothing running but head %2 never started").arg(seed).arg(head)));
            QVERIFY2(next <= reservedAt,
                    qPrintable(QStringLiteral("seed %1: head %2 reserved for %3 still waits at %4")
                                       .arg(seed)
                                       .arg(head)
                                       .arg(reservedAt)
                                       .arg(next)));
            t = next;
            for (const RunningAllocation& a : st.running) {
                if (a.estimatedEndMs != t)
                    continue;
                for (const NodeShare& s : a.nodes)
                    for (NodeState& n : st.nodes)
                        if (n.name == s.node)
                            for (GpuState& g : n.gpus)
                                if (s.gpuIndices.contains(g.index))
                                    // Back to what it was before we took it (a foreign process's
                                    // memory stays taken); runs of the initial state free it all.
                                    g.memoryFreeMiB = freeBefore.value(
                                            n.name + u'/' + QString::number(g.index), g.memoryTotalMiB);
            }
            st.running.removeIf([t](const RunningAllocation& a) { return a.estimatedEndMs == t; });
            d = schedule(st, queue, c.policy, t);
        }
        QVERIFY2(headStarted, qPrintable(QStringLiteral("seed %1: head never started").arg(seed)));
    }
    qInfo("%d cases with a reservation checked forward, %d backfilled starts", checked, backfilled);
    if (cases >= 1000) {
        QVERIFY(checked > cases / 10);
        QVERIFY(backfilled > 0);
    }
}

QTEST_GUILESS_MAIN(TestSchedulerProperties)
#include "TestSchedulerProperties.moc"
