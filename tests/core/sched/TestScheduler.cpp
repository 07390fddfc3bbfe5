// Concrete cases for ty::sched::schedule(): pending reason texts, packing,
// GPU eligibility, gang environment, orderings, backfill, sweeps.

#include "SchedTestUtil.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ty::sched;
using namespace ty::sched::test;

namespace {

// 2023-11-14 12:00:00 UTC.
constexpr qint64 kNoon = 1'699'963'200'000LL;

QString utcHHmm(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(u"HH:mm"_qs);
}

const PendingInfo* pendingOf(const SchedulerDecision& d, ty::RunId id)
{
    for (const PendingInfo& p : d.pending)
        if (p.run == id)
            return &p;
    return nullptr;
}

const RunPlacement* placementOf(const SchedulerDecision& d, ty::RunId id)
{
    for (const RunPlacement& p : d.placements)
        if (p.run == id)
            return &p;
    return nullptr;
}

QString reasonOf(const SchedulerDecision& d, ty::RunId id)
{
    const PendingInfo* p = pendingOf(d, id);
    return p ? renderPendingReason(p->reason, utcHHmm) : u"<started>"_qs;
}

} // namespace

class TestScheduler final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void reasonWaitingForGpus();
    void reasonHeldForBackfill();
    void reasonHeldAndFcfsHead();
    void reasonUnsatisfiableAndCpu();
    void reasonWhileANodeConnects();
    void reasonGang();
    void bestFitPacksFullestNode();
    void pciRootPreferred();
    void eligibility();
    void preferAndAvoid();
    void gangEnvironmentTorchAndTf();
    void portsAvoidBusy();
    void orderings();
    void fairShareOrdering();
    void fairShareFactorFormula();
    void fairShareManyAccounts();
    void reusedSchedulerKeepsLayoutOnlyWhileItHolds();
    void sweepCap();
    void reasonsSayWhatPeopleKnow();
    void firstFitBaseline();
    void backfillShortRunsOnly();
    void manyRunsSameShapeAreFast();
    void elasticTakesEveryFreeNodeUpToMax();
    void elasticTakesWhatIsFreeAboveMin();
    void elasticWaitsBelowMin();
    void elasticEnvironment();
    void elasticOnOneNodeIsStillElastic();
    void elasticHeadReservesItsMinimum();
};

void TestScheduler::reasonWaitingForGpus()
{
    // The example: ws-01 unreachable, ws-02 has one of its two 48 GiB GPUs busy.
    ClusterState s;
    NodeState ws1 = makeNode(u"ws-01"_qs, 4, 80 * kGiB);
    ws1.reachable = false;
    s.nodes << ws1 << makeNode(u"ws-02"_qs, 2, 48 * kGiB);
    s.running << makeRunning(5, u"ws-02"_qs, {0}, kNoon - kHour, kNoon + kHour);
    PendingRun r = makeRun(9, kNoon, 2);
    r.gpuMemoryMiB = 40 * kGiB;
    r.cpus = 0;
    r.memoryMiB = 0;
    const SchedulerDecision d = schedule(s, {r}, Policy::fcfs(), kNoon);
    QCOMPARE(d.placements.size(), 0);
    QCOMPARE(
            reasonOf(d, 9), u"waiting: needs 2 GPUs with >= 40 GiB free; best node ws-02 has 1 (ws-01 unreachable)"_qs);
    const PendingInfo* p = pendingOf(d, 9);
    QCOMPARE(p->reason.kind, PendingKind::WaitingForResources);
    QCOMPARE(p->reason.bestNode, u"ws-02"_qs);
    QCOMPARE(p->reason.bestNodeGpus, 1);
    QCOMPARE(p->reason.unreachableNodes, QStringList{u"ws-01"_qs});
    // The head's estimated start: when run 5 ends.
    QVERIFY(p->estimatedStartMs);
    QCOMPARE(*p->estimatedStartMs, kNoon + kHour);
}

void TestScheduler::reasonWhileANodeConnects()
{
    // The only GPU node is still making its first connection (a slow
    // ProxyJump): the run waits for it, it is not "never".
    ClusterState s;
    NodeState wj = makeNode(u"wj"_qs, 2, 80 * kGiB);
    wj.reachable = false;
    wj.connecting = true;
    NodeState down = makeNode(u"ws-09"_qs, 1, 80 * kGiB);
    down.reachable = false;
    s.nodes << wj << makeNode(u"cpu-01"_qs, 0, 0) << down;
    PendingRun r = makeRun(3, kNoon, 1);
    r.cpus = 0;
    r.memoryMiB = 0;
    SchedulerDecision d = schedule(s, {r}, Policy::fcfs(), kNoon);
    QCOMPARE(d.placements.size(), 0);
    const PendingInfo* p = pendingOf(d, 3);
    QCOMPARE(p->reason.kind, PendingKind::Unsatisfiable);
    QCOMPARE(p->reason.connectingNodes, QStringList{u"wj"_qs});
    QCOMPARE(p->reason.unreachableNodes, QStringList{u"ws-09"_qs});
    QCOMPARE(reasonOf(d, 3),
            u"waiting: needs 1 GPU; no node that can be reached now could hold it (wj still connecting; ws-09 unreachable)"_qs);
    // Connected: it is placed there.
    s.nodes[0].reachable = true;
    s.nodes[0].connecting = false;
    d = schedule(s, {r}, Policy::fcfs(), kNoon);
    QCOMPARE(d.placements.size(), 1);
    QCOMPARE(d.placements.front().nodes.front().node, u"wj"_qs);
}

void TestScheduler::reasonHeldForBackfill()
{
    // 8 GPUs, 4 busy until 14:05. Head 17 needs all 8; run 18 (3 h) would
    // delay it; run 19 (10 min) ends before 14:05 and is backfilled.
    const qint64 at1405 = kNoon + 2 * kHour + 5 * kMin;
    ClusterState s;
    s.nodes << makeNode(u"ws-01"_qs, 8);
    s.running << makeRunning(3, u"ws-01"_qs, {0, 1, 2, 3}, kNoon - kHour, at1405);
    const QList<PendingRun> q{makeRun(17, kNoon - 3 * kMin, 8), makeRun(18, kNoon - 2 * kMin, 1, 3 * kHour),
            makeRun(19, kNoon - kMin, 1, 10 * kMin)};
    const SchedulerDecision d = schedule(s, q, Policy::easyBackfill(), kNoon);
    QCOMPARE(reasonOf(d, 18), u"held for backfill reservation of run 17 at ~14:05"_qs);
    QCOMPARE(pendingOf(d, 18)->reason.kind, PendingKind::BackfillHeld);
    QCOMPARE(pendingOf(d, 18)->reason.atMs, at1405);
    const RunPlacement* p19 = placementOf(d, 19);
    QVERIFY(p19);
    QVERIFY(p19->backfilled);
    QCOMPARE(p19->nodes.first().gpuIndices, QList<int>{4});
    QVERIFY(d.reservation);
    QCOMPARE(d.reservation->run, 17);
    QCOMPARE(d.reservation->startMs, at1405);
    QCOMPARE(*pendingOf(d, 17)->estimatedStartMs, at1405);
    QCOMPARE(pendingOf(d, 17)->position, 1);
    QCOMPARE(pendingOf(d, 18)->position, 2);

    // Without backfill the same queue waits behind the head.
    const SchedulerDecision strict = schedule(s, q, Policy::fcfs(), kNoon);
    QCOMPARE(strict.placements.size(), 0);
    QCOMPARE(reasonOf(strict, 19), u"waiting for FCFS head run 17"_qs);
}

void TestScheduler::reasonHeldAndFcfsHead()
{
    ClusterState s;
    s.nodes << makeNode(u"ws-01"_qs, 2);
    PendingRun held = makeRun(11, kNoon - 10 * kMin, 1);
    held.held = true;
    const QList<PendingRun> q{held, makeRun(12, kNoon - 9 * kMin, 4), makeRun(13, kNoon - 8 * kMin, 1)};
    // Run 12 needs 4 GPUs on a 2-GPU node: it can never start and must not block 13.
    SchedulerDecision d = schedule(s, q, Policy::fcfs(), kNoon);
    QCOMPARE(reasonOf(d, 11), u"held by user"_qs);
    QCOMPARE(pendingOf(d, 12)->reason.kind, PendingKind::Unsatisfiable);
    QVERIFY(placementOf(d, 13));

    // With a satisfiable head, 13 waits for it.
    s.running << makeRunning(1, u"ws-01"_qs, {0}, kNoon - kHour, kNoon + kHour);
    const QList<PendingRun> q2{held, makeRun(12, kNoon - 9 * kMin, 2), makeRun(13, kNoon - 8 * kMin, 1)};
    d = schedule(s, q2, Policy::fcfs(), kNoon);
    QCOMPARE(reasonOf(d, 13), u"waiting for FCFS head run 12"_qs);
    QCOMPARE(reasonOf(d, 12), u"waiting: needs 2 GPUs, 1 CPU, 1 GiB memory; best node ws-01 has 1"_qs);
    d = schedule(s, q2, Policy::priorityAging(1.0), kNoon);
    QCOMPARE(reasonOf(d, 13), u"waiting for priority head run 12"_qs);
}

void TestScheduler::reasonUnsatisfiableAndCpu()
{
    ClusterState s;
    s.nodes << makeNode(u"ws-01"_qs, 2, 24 * kGiB, u"NVIDIA GeForce RTX 4090"_qs, 16, 64 * kGiB);
    PendingRun big = makeRun(1, kNoon, 1);
    big.gpuTypeRegex = u"A100|H100"_qs;
    PendingRun cpu = makeRun(2, kNoon, 1);
    cpu.cpus = 12;
    s.running << makeRunning(7, u"ws-01"_qs, {0}, kNoon - kHour, kNoon + kHour, 8, kGiB);
    const SchedulerDecision d = schedule(s, {big, cpu}, Policy::easyBackfill(), kNoon);
    QCOMPARE(reasonOf(d, 1),
            u"cannot start: needs 1 GPU matching 'A100|H100', 1 CPU, 1 GiB memory; no reachable node could ever hold it (best node ws-01 has 0 usable GPUs)"_qs);
    QCOMPARE(reasonOf(d, 2),
            u"waiting: needs 1 GPU, 12 CPUs, 1 GiB memory; best node ws-01 has 1 GPU, 8 of 16 CPUs free"_qs);
}

void TestScheduler::reasonGang()
{
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 8) << makeNode(u"b"_qs, 8) << makeNode(u"c"_qs, 8);
    s.running << makeRunning(1, u"b"_qs, {0, 1, 2, 3}, kNoon - kHour, kNoon + kHour);
    s.running << makeRunning(2, u"c"_qs, {0, 1, 2, 3, 4, 5}, kNoon - kHour, kNoon + 2 * kHour);
    const SchedulerDecision d = schedule(s, {makeRun(9, kNoon, 8, kHour, 2)}, Policy::fcfs(), kNoon);
    QCOMPARE(reasonOf(d, 9),
            u"waiting: needs 8 GPUs, 1 CPU, 1 GiB memory on each of 2 nodes; 1 node fits; best other node b has 4"_qs);
    QCOMPARE(*pendingOf(d, 9)->estimatedStartMs, kNoon + kHour);
    QCOMPARE(d.reservation->nodes.size(), 2);
}

void TestScheduler::bestFitPacksFullestNode()
{
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 8) << makeNode(u"b"_qs, 8) << makeNode(u"c"_qs, 8);
    s.running << makeRunning(1, u"b"_qs, {0, 1, 2, 3, 4}, kNoon - kHour, kNoon + kHour); // b: 3 free
    s.running << makeRunning(2, u"c"_qs, {0, 1}, kNoon - kHour, kNoon + kHour);          // c: 6 free
    const SchedulerDecision d = schedule(s, {makeRun(10, kNoon, 2), makeRun(11, kNoon + 1, 2)}, Policy::fcfs(), kNoon);
    // 10 goes to b (fullest that fits), leaving 1 there; 11 no longer fits b and goes to c.
    QCOMPARE(placementOf(d, 10)->nodes.first().node, u"b"_qs);
    QCOMPARE(placementOf(d, 10)->nodes.first().gpuIndices, (QList<int>{5, 6}));
    QCOMPARE(placementOf(d, 11)->nodes.first().node, u"c"_qs);
    QCOMPARE(placementOf(d, 11)->nodes.first().gpuIndices, (QList<int>{2, 3}));
    QCOMPARE(placementOf(d, 11)->nodes.first().gpuUuids, (QStringList{u"GPU-c-2"_qs, u"GPU-c-3"_qs}));
}

void TestScheduler::pciRootPreferred()
{
    ClusterState s;
    NodeState n = makeNode(u"a"_qs, 8);
    for (GpuState& g : n.gpus)
        g.pciRoot = g.index < 4 ? u"0000:00"_qs : u"0000:80"_qs;
    s.nodes << n;
    // GPUs 0,1 and 4 busy: root 00 has {2,3} free, root 80 has {5,6,7} free.
    s.running << makeRunning(1, u"a"_qs, {0, 1, 4}, kNoon - kHour, kNoon + kHour);
    SchedulerDecision d = schedule(s, {makeRun(10, kNoon, 2)}, Policy::fcfs(), kNoon);
    QCOMPARE(placementOf(d, 10)->nodes.first().gpuIndices, (QList<int>{2, 3})); // best-fitting root
    d = schedule(s, {makeRun(10, kNoon, 3)}, Policy::fcfs(), kNoon);
    QCOMPARE(placementOf(d, 10)->nodes.first().gpuIndices, (QList<int>{5, 6, 7})); // one root, not 2,3,5
    d = schedule(s, {makeRun(10, kNoon, 4)}, Policy::fcfs(), kNoon);
    QCOMPARE(placementOf(d, 10)->nodes.first().gpuIndices, (QList<int>{2, 5, 6, 7})); // fullest root first
    // Topology unknown: lowest indices.
    for (GpuState& g : s.nodes[0].gpus)
        g.pciRoot.clear();
    d = schedule(s, {makeRun(10, kNoon, 3)}, Policy::fcfs(), kNoon);
    QCOMPARE(placementOf(d, 10)->nodes.first().gpuIndices, (QList<int>{2, 3, 5}));
}

void TestScheduler::eligibility()
{
    ClusterState s;
    NodeState a = makeNode(u"a"_qs, 4, 80 * kGiB, u"NVIDIA H100 80GB HBM3"_qs);
    a.gpus[0].foreignBusy = true;
    a.gpus[1].memoryFreeMiB = 10 * kGiB; // someone else's process, not flagged
    NodeState b = makeNode(u"b"_qs, 4, 32 * kGiB, u"Tesla V100-SXM2-32GB"_qs);
    s.nodes << a << b;
    PendingRun r = makeRun(1, kNoon, 2);
    r.gpuTypeRegex = u"A100|H100"_qs;
    r.gpuMemoryMiB = 40 * kGiB;
    SchedulerDecision d = schedule(s, {r}, Policy::fcfs(), kNoon);
    QCOMPARE(placementOf(d, 1)->nodes.first().node, u"a"_qs);
    QCOMPARE(placementOf(d, 1)->nodes.first().gpuIndices, (QList<int>{2, 3}));
    // Three: only GPUs 2 and 3 are free now; GPU 0 (foreign-busy) frees up
    // when its process ends, so the run waits for it instead of failing.
    // GPU 1's unflagged use is taken as lasting.
    r.gpus = 3;
    d = schedule(s, {r}, Policy::fcfs(), kNoon);
    QCOMPARE(pendingOf(d, 1)->reason.kind, PendingKind::WaitingForResources);
    r.gpus = 4;
    d = schedule(s, {r}, Policy::fcfs(), kNoon);
    QCOMPARE(pendingOf(d, 1)->reason.kind, PendingKind::Unsatisfiable);
    r.gpus = 3;
    s.nodes[0].gpus[0].memoryTotalMiB = 16 * kGiB; // too small even when free
    d = schedule(s, {r}, Policy::fcfs(), kNoon);
    QCOMPARE(pendingOf(d, 1)->reason.kind, PendingKind::Unsatisfiable);
    // An invalid regex matches nothing rather than everything.
    r.gpus = 1;
    r.gpuTypeRegex = u"A100("_qs;
    d = schedule(s, {r}, Policy::fcfs(), kNoon);
    QCOMPARE(pendingOf(d, 1)->reason.kind, PendingKind::Unsatisfiable);
}

void TestScheduler::preferAndAvoid()
{
    ClusterState s;
    NodeState a = makeNode(u"a"_qs, 8);
    NodeState b = makeNode(u"b"_qs, 8);
    b.labels << u"nvlink"_qs;
    s.nodes << a << b;
    s.running << makeRunning(1, u"a"_qs, {0, 1, 2, 3}, kNoon - kHour, kNoon + kHour);
    PendingRun r = makeRun(10, kNoon, 1);
    QCOMPARE(placementOf(schedule(s, {r}, Policy::fcfs(), kNoon), 10)->nodes.first().node, u"a"_qs);
    r.preferLabels << u"nvlink"_qs;
    QCOMPARE(placementOf(schedule(s, {r}, Policy::fcfs(), kNoon), 10)->nodes.first().node, u"b"_qs);
    r.preferLabels.clear();
    r.avoidNodes << u"a"_qs;
    QCOMPARE(placementOf(schedule(s, {r}, Policy::fcfs(), kNoon), 10)->nodes.first().node, u"b"_qs);
    r.avoidLabels << u"nvlink"_qs;
    QCOMPARE(pendingOf(schedule(s, {r}, Policy::fcfs(), kNoon), 10)->reason.kind, PendingKind::Unsatisfiable);
}

void TestScheduler::gangEnvironmentTorchAndTf()
{
    ClusterState s;
    NodeState a = makeNode(u"gpu-a"_qs, 4);
    a.address = u"10.0.0.1"_qs;
    NodeState b = makeNode(u"gpu-b"_qs, 4);
    b.address = u"10.0.0.2"_qs;
    s.nodes << b << a;
    PendingRun r = makeRun(42, kNoon, 4, kHour, 2);
    Policy p = Policy::fcfs();
    p.portMin = 29500;
    p.portMax = 29509;
    SchedulerDecision d = schedule(s, {r}, p, kNoon);
    const RunPlacement* pl = placementOf(d, 42);
    QVERIFY(pl);
    QCOMPARE(pl->nodes.size(), 2);
    QCOMPARE(pl->nodes[0].node, u"gpu-a"_qs); // equal fullness: by name
    const int port = 29500 + 42 % 10;
    for (int rank = 0; rank < 2; ++rank) {
        const auto& env = pl->nodes[rank].env;
        QCOMPARE(env.value(u"MASTER_ADDR"_qs), u"10.0.0.1"_qs);
        QCOMPARE(env.value(u"MASTER_PORT"_qs), QString::number(port));
        QCOMPARE(env.value(u"WORLD_SIZE"_qs), u"8"_qs);
        QCOMPARE(env.value(u"NODE_RANK"_qs), QString::number(rank));
        QCOMPARE(env.value(u"NNODES"_qs), u"2"_qs);
        QCOMPARE(env.value(u"NPROC_PER_NODE"_qs), u"4"_qs);
        QVERIFY(!env.contains(u"TF_CONFIG"_qs));
    }
    r.distributed = DistributedKind::TensorFlow;
    d = schedule(s, {r}, p, kNoon);
    pl = placementOf(d, 42);
    for (int rank = 0; rank < 2; ++rank) {
        const QJsonObject cfg = QJsonDocument::fromJson(pl->nodes[rank].env.value(u"TF_CONFIG"_qs).toUtf8()).object();
        const QJsonArray workers = cfg[u"cluster"_qs].toObject()[u"worker"_qs].toArray();
        QCOMPARE(workers.size(), 2);
        QCOMPARE(workers[0].toString(), QStringLiteral("10.0.0.1:%1").arg(port));
        QCOMPARE(workers[1].toString(), QStringLiteral("10.0.0.2:%1").arg(port));
        QCOMPARE(cfg[u"task"_qs].toObject()[u"type"_qs].toString(), u"worker"_qs);
        QCOMPARE(cfg[u"task"_qs].toObject()[u"index"_qs].toInt(), rank);
    }
    // A single-node run without a distributed kind gets no rendezvous env.
    d = schedule(s, {makeRun(43, kNoon, 1)}, p, kNoon);
    QVERIFY(placementOf(d, 43)->nodes.first().env.isEmpty());
}

void TestScheduler::portsAvoidBusy()
{
    ClusterState s;
    NodeState a = makeNode(u"a"_qs, 8);
    a.portsInUse << 29502;
    s.nodes << a << makeNode(u"b"_qs, 8);
    RunningAllocation ra = makeRunning(1, u"a"_qs, {}, kNoon - kHour, kNoon + kHour);
    ra.nodes[0].port = 29503;
    s.running << ra;
    Policy p = Policy::fcfs();
    p.portMin = 29500;
    p.portMax = 29504;
    // Run 2 starts probing at 29502 (2 mod 5): busy, 29503 busy, so 29504.
    // Run 7 also starts at 29502 on the same node and must skip 29504 too.
    PendingRun r2 = makeRun(2, kNoon, 2, kHour, 2);
    PendingRun r7 = makeRun(7, kNoon + 1, 2, kHour, 2);
    const SchedulerDecision d = schedule(s, {r2, r7}, p, kNoon);
    QCOMPARE(placementOf(d, 2)->nodes[0].node, u"a"_qs);
    QCOMPARE(placementOf(d, 2)->nodes[0].port, 29504);
    QCOMPARE(placementOf(d, 7)->nodes[0].node, u"a"_qs);
    QCOMPARE(placementOf(d, 7)->nodes[0].port, 29500);
}

void TestScheduler::orderings()
{
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 1);
    PendingRun old = makeRun(1, kNoon - 10 * kHour, 1, 5 * kHour);
    PendingRun important = makeRun(2, kNoon - kHour, 1, 3 * kHour);
    important.priority = 5;
    PendingRun quick = makeRun(3, kNoon, 1, 10 * kMin);
    const QList<PendingRun> q{quick, important, old};
    QCOMPARE(schedule(s, q, Policy::fcfs(), kNoon).placements.first().run, 1);
    QCOMPARE(schedule(s, q, Policy::shortestJobFirst(kHour), kNoon).placements.first().run, 3);
    // Priority 5 + 1 h * 0.1/h = 5.1 beats 0 + 10 h * 0.1/h = 1.0 ...
    QCOMPARE(schedule(s, q, Policy::priorityAging(0.1), kNoon).placements.first().run, 2);
    // ... but with aging 1/h the old run's 10 beats 6.
    QCOMPARE(schedule(s, q, Policy::priorityAging(1.0), kNoon).placements.first().run, 1);
    // SJF: unknown runtime falls back to the time limit, then the default.
    PendingRun unknown = makeRun(4, kNoon - 20 * kHour, 1, 0);
    QCOMPARE(schedule(s, {unknown, important}, Policy::shortestJobFirst(kHour), kNoon).placements.first().run, 4);
    unknown.timeLimitMs = 4 * kHour;
    QCOMPARE(schedule(s, {unknown, important}, Policy::shortestJobFirst(kHour), kNoon).placements.first().run, 2);
}

void TestScheduler::fairShareOrdering()
{
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 4);
    QList<PendingRun> q;
    for (int i = 0; i < 8; ++i) {
        PendingRun r = makeRun(100 + i, kNoon - (i < 4 ? 100 : 50) * kMin + i, 1);
        r.user = i < 4 ? u"alice"_qs : u"bob"_qs; // alice submitted first
        q << r;
    }
    FairShareState fs;
    fs.usageGpuHours.insert(u"alice"_qs, 10.0);
    fs.usageGpuHours.insert(u"bob"_qs, 2.0);
    // Equal shares: bob (less usage) first; the in-pass charge (1 GPU-hour per
    // run) lets alice in once bob's usage + charges pass hers... not within 4 runs.
    SchedulerDecision d = schedule(s, q, Policy::fairShare({}), kNoon, fs);
    QCOMPARE(d.placements.size(), 4);
    for (const RunPlacement& p : d.placements)
        QVERIFY2(p.run >= 104, "bob's runs first");
    // Shares 9:1 for alice: alice's 10/9 < bob's 2/1, so alice first.
    d = schedule(s, q, Policy::fairShare({{u"alice"_qs, 9.0}, {u"bob"_qs, 1.0}}), kNoon, fs);
    QCOMPARE(d.placements.first().run, 100);
    // Equal usage, equal shares: placements alternate (in-pass charge).
    fs.usageGpuHours[u"alice"_qs] = 0;
    fs.usageGpuHours[u"bob"_qs] = 0;
    d = schedule(s, q, Policy::fairShare({}), kNoon, fs);
    QList<ty::RunId> ids;
    for (const RunPlacement& p : d.placements)
        ids << p.run;
    QCOMPARE(ids, (QList<ty::RunId>{100, 104, 101, 105}));
    // By project.
    for (PendingRun& r : q)
        r.project = r.user == u"alice"_qs ? u"nlp"_qs : u"vision"_qs;
    fs.usageGpuHours.clear();
    fs.usageGpuHours.insert(u"nlp"_qs, 0.0);
    fs.usageGpuHours.insert(u"vision"_qs, 50.0);
    d = schedule(s, q, Policy::fairShare({}, FairShareBy::Project), kNoon, fs);
    QCOMPARE(d.placements.first().run, 100);
}

void TestScheduler::fairShareFactorFormula()
{
    // F = 2^(-U/S) (Slurm classic fair share).
    QCOMPARE(fairShareFactor(0, 0, 1, 2), 1.0);
    QCOMPARE(fairShareFactor(5, 10, 1, 2), 0.5);   // used exactly its share
    QCOMPARE(fairShareFactor(10, 10, 1, 2), 0.25); // used everything with half the shares
    QCOMPARE(fairShareFactor(10, 10, 1, 1), 0.5);  // lone user
    QVERIFY(qAbs(fairShareFactor(2, 10, 3, 4) - std::exp2(-0.2 / 0.75)) < 1e-12);
    FairShareState fs;
    fs.usageGpuHours.insert(u"x"_qs, 8.0);
    fs.decay(2 * kHour, kHour);
    QCOMPARE(fs.usageGpuHours.value(u"x"_qs), 2.0);
}

void TestScheduler::sweepCap()
{
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 8);
    RunningAllocation ra = makeRunning(1, u"a"_qs, {0}, kNoon - kHour, kNoon + kHour);
    ra.sweepId = u"lr-sweep"_qs;
    s.running << ra;
    QList<PendingRun> q;
    for (int i = 0; i < 4; ++i) {
        PendingRun r = makeRun(10 + i, kNoon + i, 1);
        r.sweepId = u"lr-sweep"_qs;
        r.sweepMaxConcurrent = 2;
        q << r;
    }
    q << makeRun(20, kNoon + 10, 1);
    const SchedulerDecision d = schedule(s, q, Policy::fcfs(), kNoon);
    QVERIFY(placementOf(d, 10));
    QVERIFY(!placementOf(d, 11));
    QVERIFY(placementOf(d, 20)); // a capped sweep run does not block others
    QCOMPARE(reasonOf(d, 11), u"sweep lr-sweep at its cap: 2 of 2 running"_qs);
}

void TestScheduler::reasonsSayWhatPeopleKnow()
{
    // The sweep by its name, not its internal id.
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 8);
    QList<PendingRun> q;
    for (int i = 0; i < 2; ++i) {
        PendingRun r = makeRun(10 + i, kNoon + i, 1);
        r.sweepId = u"sweep:1796186905410"_qs;
        r.sweepName = u"digits-sweep"_qs;
        r.sweepMaxConcurrent = 1;
        q << r;
    }
    SchedulerDecision d = schedule(s, q, Policy::fcfs(), kNoon);
    QCOMPARE(reasonOf(d, 11), u"sweep digits-sweep at its cap: 1 of 1 running"_qs);

    // A CPU-only node with none free: "0 of 2 free", not "has 0 CPUs".
    ClusterState cpuNode;
    cpuNode.nodes << makeNode(u"local"_qs, 0, 0, QString(), 2, 8 * kGiB);
    cpuNode.running << makeRunning(1, u"local"_qs, {}, kNoon - kMin, kNoon + 2 * kHour + 5 * kMin, 2, kGiB);
    PendingRun two = makeRun(2, kNoon, 0);
    two.cpus = 2;
    d = schedule(cpuNode, {two}, Policy::easyBackfill(), kNoon);
    const auto hhmm = [](qint64 ms) { return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(u"HH:mm"_qs); };
    QCOMPARE(reasonOf(d, 2), u"waiting: needs 2 CPUs, 1 GiB memory; best node local has 0 of 2 CPUs free"_qs);
    // The head's estimate from a real estimate is marked as an estimate only...
    const PendingInfo* head = pendingOf(d, 2);
    QVERIFY(head && head->estimatedStartMs);
    QCOMPARE(renderEstimatedStart(*head->estimatedStartMs, head->reason, hhmm), u"estimated start ~14:05"_qs);
    // ...one from the hidden default runtime says what it assumes.
    cpuNode.running.front().estimatedEndMs = 0;
    d = schedule(cpuNode, {two}, Policy::easyBackfill(), kNoon);
    head = pendingOf(d, 2);
    QVERIFY(head && head->estimatedStartMs);
    QCOMPARE(renderEstimatedStart(*head->estimatedStartMs, head->reason, hhmm),
            u"estimated start ~12:59 (assumes 1 h per run without estimated_runtime)"_qs);
    // So does a backfill hold that rests on it.
    ClusterState gpus;
    gpus.nodes << makeNode(u"ws-01"_qs, 8);
    gpus.running << makeRunning(3, u"ws-01"_qs, {0, 1, 2, 3}, kNoon - kMin, 0);
    const QList<PendingRun> bq{makeRun(17, kNoon - 3 * kMin, 8), makeRun(18, kNoon - 2 * kMin, 1, 3 * kHour)};
    d = schedule(gpus, bq, Policy::easyBackfill(), kNoon);
    const PendingInfo* held = pendingOf(d, 18);
    QVERIFY(held);
    QCOMPARE(renderPendingReason(held->reason, hhmm),
            u"held for backfill reservation of run 17 at ~12:59 (assumes 1 h per run without estimated_runtime)"_qs);
}

void TestScheduler::firstFitBaseline()
{
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 8) << makeNode(u"b"_qs, 8);
    s.running << makeRunning(1, u"b"_qs, {0, 1, 2, 3, 4}, kNoon - kHour, kNoon + kHour);
    Policy p = Policy::fcfs();
    p.placement = PlacementRule::FirstFit;
    QCOMPARE(placementOf(schedule(s, {makeRun(9, kNoon, 2)}, p, kNoon), 9)->nodes.first().node, u"a"_qs);
    QCOMPARE(placementOf(schedule(s, {makeRun(9, kNoon, 2)}, Policy::fcfs(), kNoon), 9)->nodes.first().node, u"b"_qs);
}

void TestScheduler::backfillShortRunsOnly()
{
    // Two nodes; the head needs a whole node at t+1h (node a frees then).
    // Long runs may still use node b, which the reservation does not need.
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 8) << makeNode(u"b"_qs, 8);
    s.running << makeRunning(1, u"a"_qs, {0, 1, 2, 3, 4, 5, 6, 7}, kNoon - kHour, kNoon + kHour);
    s.running << makeRunning(2, u"b"_qs, {0, 1, 2, 3, 4, 5}, kNoon - kHour, kNoon + 3 * kHour);
    const QList<PendingRun> q{makeRun(10, kNoon - 5, 8), makeRun(11, kNoon - 4, 2, 10 * kHour)};
    const SchedulerDecision d = schedule(s, q, Policy::easyBackfill(), kNoon);
    QCOMPARE(d.reservation->nodes.first().node, u"a"_qs);
    QCOMPARE(d.reservation->startMs, kNoon + kHour);
    QVERIFY(placementOf(d, 11));
    QCOMPARE(placementOf(d, 11)->nodes.first().node, u"b"_qs);
}

void TestScheduler::manyRunsSameShapeAreFast()
{
    // 10,000 pending runs on 100 x 8 GPUs: the pass must consider all of them.
    ClusterState s;
    for (int n = 0; n < 100; ++n)
        s.nodes << makeNode(QStringLiteral("node%1").arg(n, 3, 10, QLatin1Char('0')), 8);
    QList<PendingRun> q;
    for (int i = 0; i < 10000; ++i)
        q << makeRun(i + 1, kNoon - 10000 + i, (i % 3) + 1, kHour + i);
    QElapsedTimer t;
    t.start();
    const SchedulerDecision d = schedule(s, q, Policy::easyBackfill(), kNoon);
    const qint64 ms = t.elapsed();
    QCOMPARE(d.placements.size() + d.pending.size(), 10000);
    int gpus = 0;
    for (const RunPlacement& p : d.placements)
        gpus += int(p.nodes.first().gpuIndices.size());
    QVERIFY(gpus <= 800 && gpus >= 790); // nearly full; EASY keeps the head's GPUs free
    qInfo("10k-run pass: %lld ms", ms);
    QVERIFY2(ms < 1000, "a pass over 10k runs must not take seconds (see bench_scheduler for timings)");
}

namespace {

// Four 2-GPU nodes a..d with addresses, `busy` of them (from d backwards)
// fully taken by runs ending at noon + 1 h, 2 h, ...
ClusterState fourNodes(int busy)
{
    ClusterState s;
    for (const QString& n : {u"a"_qs, u"b"_qs, u"c"_qs, u"d"_qs}) {
        NodeState node = makeNode(n, 2);
        node.address = u"10.0.1."_qs + QString::number(n.at(0).unicode() - 'a' + 1);
        s.nodes << node;
    }
    const QStringList order{u"d"_qs, u"c"_qs, u"b"_qs, u"a"_qs};
    for (int i = 0; i < busy; ++i)
        s.running << makeRunning(100 + i, order[i], {0, 1}, kNoon - kHour, kNoon + (i + 1) * kHour);
    return s;
}

PendingRun elasticRun(ty::RunId id, int minNodes, int maxNodes, int gpus = 2)
{
    PendingRun r = makeRun(id, kNoon, gpus);
    r.nodes = minNodes;
    r.nodesMax = maxNodes;
    return r;
}

QStringList nodesOf(const RunPlacement* p)
{
    QStringList out;
    if (p)
        for (const NodeAssignment& a : p->nodes)
            out << a.node;
    return out;
}

} // namespace

// `nodes: {min: 1, max: 4}` on four free nodes: all four, not one (a fixed
// gang of `min` would take one).
void TestScheduler::elasticTakesEveryFreeNodeUpToMax()
{
    const SchedulerDecision d = schedule(fourNodes(0), {elasticRun(7, 1, 4)}, Policy::fcfs(), kNoon);
    const RunPlacement* pl = placementOf(d, 7);
    QVERIFY(pl);
    QVERIFY(pl->elastic);
    QCOMPARE(nodesOf(pl), (QStringList{u"a"_qs, u"b"_qs, u"c"_qs, u"d"_qs}));
    // At most max: {1, 3} on four free nodes takes three.
    const SchedulerDecision three = schedule(fourNodes(0), {elasticRun(7, 1, 3)}, Policy::fcfs(), kNoon);
    QCOMPARE(placementOf(three, 7)->nodes.size(), 3);
    // A fixed gang still takes exactly its size.
    const SchedulerDecision fixed = schedule(fourNodes(0), {makeRun(8, kNoon, 2, kHour, 2)}, Policy::fcfs(), kNoon);
    QCOMPARE(placementOf(fixed, 8)->nodes.size(), 2);
    QVERIFY(!placementOf(fixed, 8)->elastic);
}

void TestScheduler::elasticTakesWhatIsFreeAboveMin()
{
    // d and c busy: {2, 4} starts now on the two free nodes.
    SchedulerDecision d = schedule(fourNodes(2), {elasticRun(7, 2, 4)}, Policy::fcfs(), kNoon);
    QCOMPARE(nodesOf(placementOf(d, 7)), (QStringList{u"a"_qs, u"b"_qs}));
    // d busy: three of four.
    d = schedule(fourNodes(1), {elasticRun(7, 2, 4)}, Policy::fcfs(), kNoon);
    QCOMPARE(nodesOf(placementOf(d, 7)), (QStringList{u"a"_qs, u"b"_qs, u"c"_qs}));
    // Runs earlier in the pass shrink what is left: a one-node run takes a first.
    PendingRun first = makeRun(6, kNoon - 1, 2);
    first.preferNodes << u"a"_qs;
    d = schedule(fourNodes(1), {first, elasticRun(7, 1, 4)}, Policy::fcfs(), kNoon);
    QCOMPARE(nodesOf(placementOf(d, 6)), QStringList{u"a"_qs});
    QCOMPARE(nodesOf(placementOf(d, 7)), (QStringList{u"b"_qs, u"c"_qs}));
}

void TestScheduler::elasticWaitsBelowMin()
{
    // Only a is free: {2, 4} waits, and says so in its own words.
    const SchedulerDecision d = schedule(fourNodes(3), {elasticRun(7, 2, 4)}, Policy::fcfs(), kNoon);
    QVERIFY(d.placements.isEmpty());
    const PendingInfo* p = pendingOf(d, 7);
    QVERIFY(p);
    QCOMPARE(p->reason.kind, PendingKind::WaitingForResources);
    QCOMPARE(p->reason.nodes, 2);
    QCOMPARE(p->reason.nodesMax, 4);
    QCOMPARE(p->reason.fittingNodes, 1);
    QCOMPARE(reasonOf(d, 7),
            u"waiting: needs 2 GPUs, 1 CPU, 1 GiB memory on each of at least 2 nodes (elastic, up to 4); 1 node fits; "
            "best other node b has 0"_qs);
    // It starts when its second node frees (d's run ends at 13:00).
    QCOMPARE(*p->estimatedStartMs, kNoon + kHour);
    // A cluster of three nodes never holds {4, 6}.
    ClusterState small = fourNodes(0);
    small.nodes.removeLast();
    const SchedulerDecision never = schedule(small, {elasticRun(8, 4, 6)}, Policy::fcfs(), kNoon);
    QCOMPARE(pendingOf(never, 8)->reason.kind, PendingKind::Unsatisfiable);
}

void TestScheduler::elasticEnvironment()
{
    Policy p = Policy::fcfs();
    p.portMin = 29500;
    p.portMax = 29509;
    const SchedulerDecision d = schedule(fourNodes(1), {elasticRun(42, 1, 4)}, p, kNoon);
    const RunPlacement* pl = placementOf(d, 42);
    QVERIFY(pl);
    QCOMPARE(pl->nodes.size(), 3);
    const QString port = QString::number(29500 + 42 % 10);
    QCOMPARE(QString::number(pl->nodes[0].port), port);
    for (int rank = 0; rank < 3; ++rank) {
        const auto& env = pl->nodes[rank].env;
        // What a fixed gang gets, with the nodes it actually got.
        QCOMPARE(env.value(u"MASTER_ADDR"_qs), u"10.0.1.1"_qs);
        QCOMPARE(env.value(u"MASTER_PORT"_qs), port);
        QCOMPARE(env.value(u"NNODES"_qs), u"3"_qs);
        QCOMPARE(env.value(u"NODE_RANK"_qs), QString::number(rank));
        QCOMPARE(env.value(u"NPROC_PER_NODE"_qs), u"2"_qs);
        QCOMPARE(env.value(u"WORLD_SIZE"_qs), u"6"_qs);
        // torchrun's elastic rendezvous (its PET_<ARG> environment).
        QCOMPARE(env.value(u"PET_NNODES"_qs), u"1:4"_qs);
        QCOMPARE(env.value(u"TRAINYARD_NNODES"_qs), u"1:4"_qs);
        QCOMPARE(env.value(u"PET_NPROC_PER_NODE"_qs), u"2"_qs);
        QCOMPARE(env.value(u"PET_RDZV_BACKEND"_qs), u"c10d"_qs);
        QCOMPARE(env.value(u"PET_RDZV_ENDPOINT"_qs), QString(u"10.0.1.1:"_qs + port));
        QCOMPARE(env.value(u"PET_RDZV_CONF"_qs), rank == 0 ? u"is_host=1"_qs : u"is_host=0"_qs);
        QVERIFY(!env.contains(u"PET_RDZV_ID"_qs)); // the engine's: the gang's group id
    }
    // A fixed gang gets none of torchrun's elastic settings.
    const SchedulerDecision fixed = schedule(fourNodes(0), {makeRun(43, kNoon, 2, kHour, 2)}, p, kNoon);
    QVERIFY(!placementOf(fixed, 43)->nodes[0].env.contains(u"PET_NNODES"_qs));
}

void TestScheduler::elasticOnOneNodeIsStillElastic()
{
    // {1, 4} with one free node: one rank, with the rendezvous env (torchrun
    // --nnodes=1:4 waits for no one and runs on one node).
    const SchedulerDecision d = schedule(fourNodes(3), {elasticRun(7, 1, 4)}, Policy::fcfs(), kNoon);
    const RunPlacement* pl = placementOf(d, 7);
    QVERIFY(pl);
    QVERIFY(pl->elastic);
    QCOMPARE(nodesOf(pl), QStringList{u"a"_qs});
    QCOMPARE(pl->nodes[0].env.value(u"NNODES"_qs), u"1"_qs);
    QCOMPARE(pl->nodes[0].env.value(u"PET_NNODES"_qs), u"1:4"_qs);
    QCOMPARE(pl->nodes[0].env.value(u"PET_RDZV_ENDPOINT"_qs),
            QString(u"10.0.1.1:"_qs + QString::number(pl->nodes[0].port)));
    QVERIFY(pl->nodes[0].port > 0);
}

void TestScheduler::elasticHeadReservesItsMinimum()
{
    // a, b: 1 GPU each, busy until 13:00; c busy until 15:00; d free.
    // The head {2, 4} cannot start now (one node free); at 13:00 three nodes
    // fit it, but it is reserved two (a, b): d stays free for a 2 h run that
    // backfills now. Reserved for its max, d would be held too.
    ClusterState s;
    for (const QString& n : {u"a"_qs, u"b"_qs, u"c"_qs, u"d"_qs})
        s.nodes << makeNode(n, 1);
    s.running << makeRunning(1, u"a"_qs, {0}, kNoon - kHour, kNoon + kHour);
    s.running << makeRunning(2, u"b"_qs, {0}, kNoon - kHour, kNoon + kHour);
    s.running << makeRunning(3, u"c"_qs, {0}, kNoon - kHour, kNoon + 3 * kHour);
    PendingRun head = elasticRun(10, 2, 4, 1);
    PendingRun small = makeRun(11, kNoon + 1, 1, 2 * kHour);
    const SchedulerDecision d = schedule(s, {head, small}, Policy::easyBackfill(), kNoon);
    QVERIFY(d.reservation);
    QCOMPARE(d.reservation->run, 10);
    QCOMPARE(d.reservation->startMs, kNoon + kHour);
    QCOMPARE(d.reservation->nodes.size(), 2);
    QCOMPARE(d.reservation->nodes[0].node, u"a"_qs);
    QCOMPARE(d.reservation->nodes[1].node, u"b"_qs);
    const RunPlacement* bf = placementOf(d, 11);
    QVERIFY2(bf, qPrintable(reasonOf(d, 11)));
    QCOMPARE(nodesOf(bf), QStringList{u"d"_qs});
    QVERIFY(bf->backfilled);
}

QTEST_GUILESS_MAIN(TestScheduler)
#include "TestScheduler.moc"

// Past 16 accounts the pass finds them by hash rather than by comparing: the
// ordering must not change with how many there are. 40 users, one run each,
// usage 40 - i GPU-hours: the 5 least-used (users 35..39) get the 5 GPUs.
void TestScheduler::fairShareManyAccounts()
{
    ClusterState s;
    s.nodes << makeNode(u"a"_qs, 5) << makeNode(u"r"_qs, 0);
    // Each user also has a running run holding one CPU on "r": their accounts
    // are named there first, so the queued runs find them again.
    for (int i = 0; i < 40; ++i) {
        RunningAllocation a = makeRunning(10 + i, u"r"_qs, {}, kNoon - kHour, kNoon + kHour);
        a.user = QStringLiteral("user%1").arg(i);
        s.running << a;
    }
    QList<PendingRun> q;
    FairShareState fs;
    for (int i = 0; i < 40; ++i) {
        PendingRun r = makeRun(100 + i, kNoon - 100 * kMin + i, 1); // user 0 submitted first
        r.user = QStringLiteral("user%1").arg(i);
        fs.usageGpuHours.insert(QStringLiteral("user%1").arg(i), double(40 - i));
        q << r;
    }
    const SchedulerDecision d = schedule(s, q, Policy::fairShare({}), kNoon, fs);
    QList<ty::RunId> ids;
    for (const RunPlacement& p : d.placements)
        ids << p.run;
    QCOMPARE(ids, (QList<ty::RunId>{139, 138, 137, 136, 135}));
    // And the same through a kept Scheduler, twice (its layout reused).
    Scheduler sched;
    QCOMPARE(dump(sched.schedule(s, q, Policy::fairShare({}), kNoon, fs)), dump(d));
    QCOMPARE(dump(sched.schedule(s, q, Policy::fairShare({}), kNoon, fs)), dump(d));
    QCOMPARE(sched.layoutBuilds(), 1);
}

// A kept Scheduler rebuilds its node layout exactly when a node's name, a
// GPU's index, name or PCI root changes, or nodes come or go, and decides as
// schedule() does before and after; free memory, reachability and equal
// strings in new QString instances keep the layout.
void TestScheduler::reusedSchedulerKeepsLayoutOnlyWhileItHolds()
{
    ClusterState s;
    s.nodes << makeNode(u"b"_qs, 2) << makeNode(u"a"_qs, 4, 40 * kGiB, u"NVIDIA A100-SXM4-40GB"_qs);
    s.running << makeRunning(5, u"b"_qs, {0}, kNoon - kHour, kNoon + kHour);
    QList<PendingRun> q;
    for (int i = 0; i < 4; ++i)
        q << makeRun(10 + i, kNoon - 10 * kMin + i, 2);
    q[1].gpuTypeRegex = u"A100"_qs;
    Scheduler sched;
    const auto same = [&](const char* what) {
        const QString fresh = dump(schedule(s, q, Policy::fcfs(), kNoon));
        const QString kept = dump(sched.schedule(s, q, Policy::fcfs(), kNoon));
        if (fresh != kept)
            qWarning("%s:\nfresh:\n%s\nkept:\n%s", what, qPrintable(fresh), qPrintable(kept));
        return fresh == kept;
    };
    QVERIFY(same("first"));
    QCOMPARE(sched.layoutBuilds(), 1);

    s.nodes[1].gpus[0].memoryFreeMiB = 0; // dynamic: kept
    s.nodes[0].reachable = false;
    QVERIFY(same("free memory and reachability changed"));
    s.nodes[0].reachable = true;
    s.nodes[0].name = QString::fromUtf8("b"); // equal text, another QString: kept
    QVERIFY(same("equal names"));
    QCOMPARE(sched.layoutBuilds(), 1);

    // Renamed, and now first by name; its running run is found under the new
    // name (a stale layout would miss it and give its GPU away).
    s.nodes[0].name = u"0"_qs;
    s.running[0].nodes[0].node = u"0"_qs;
    QVERIFY(same("renamed node"));
    QCOMPARE(sched.layoutBuilds(), 2);
    s.nodes[1].gpus[3].name = u"NVIDIA H100 80GB HBM3"_qs;
    QVERIFY(same("GPU name"));
    QCOMPARE(sched.layoutBuilds(), 3);
    s.nodes[1].gpus[0].index = 7; // now the last by index
    QVERIFY(same("GPU index"));
    QCOMPARE(sched.layoutBuilds(), 4);
    s.nodes[1].gpus[0].pciRoot = u"0000:40"_qs;
    QVERIFY(same("PCI root"));
    QCOMPARE(sched.layoutBuilds(), 5);
    s.nodes << makeNode(u"00"_qs, 8);
    QVERIFY(same("node added"));
    QCOMPARE(sched.layoutBuilds(), 6);
    s.nodes.removeFirst();
    QVERIFY(same("node removed"));
    QCOMPARE(sched.layoutBuilds(), 7);
    QVERIFY(same("unchanged again"));
    QCOMPARE(sched.layoutBuilds(), 7);
}
