// The scheduling pass's pure steps (core/runs/SchedulingPass.h): the snapshot
// of nodes and runs as the scheduler's types, one pass per queue, and what a
// waiting run shows.
#include "core/runs/SchedulingPass.h"

#include <QDateTime>
#include <QTest>

using namespace ty;

namespace {

JobSpec specOf(const QString& yaml)
{
    auto s = parseJobSpec(yaml, QStringLiteral("<test>"), QStringLiteral("/tmp"));
    if (!s)
        qFatal("%s", qPrintable(s.error().message));
    return *s;
}

NodePool::NodeState nodeWithGpus(const QString& name, int gpus)
{
    NodePool::NodeState n;
    n.name = name;
    n.ready = true;
    n.gpusKnown = true; // its first GPU report is in
    n.attempted = true;
    n.hello.hostname = name + QStringLiteral(".lab");
    n.hello.cpus = 16;
    n.hello.memoryMiB = 64 * 1024;
    for (int i = 0; i < gpus; ++i) {
        AgentGpu g;
        g.index = i;
        g.uuid = QStringLiteral("GPU-%1-%2").arg(name).arg(i);
        g.name = QStringLiteral("NVIDIA A100-SXM4-80GB");
        g.memoryTotalMib = 81920;
        g.memoryUsedMib = 1024;
        n.gpus.append(g);
    }
    return n;
}

RunRecord waiting(RunId id, const QString& yaml, RunState state = RunState::Queued)
{
    RunRecord r;
    r.id = id;
    r.name = QStringLiteral("run-%1").arg(id);
    r.state = state;
    r.specYaml = yaml;
    r.createdAt = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000 + id, Qt::UTC);
    return r;
}

} // namespace

class TestSchedulingPass final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void nodeSnapshotMarksGpusThatAreNotOurs()
    {
        NodePool::NodeState n = nodeWithGpus(QStringLiteral("ws1"), 4);
        n.gpus[1].processes.append({4242, QStringLiteral("python3"), 2000.0, QString()}); // not started by Trainyard
        n.gpus[2].claims.append({QStringLiteral("ty-9"), QStringLiteral("other-instance")});
        n.gpus[3].claims.append({QStringLiteral("ty-3"), QStringLiteral("us")});                    // our own claim
        n.gpus[0].processes.append({77, QStringLiteral("python3"), 500.0, QStringLiteral("ty-3")}); // our run
        const sched::NodeState s = pass::nodeSnapshot(n, {QStringLiteral("a100")}, QStringLiteral("us"), QSet<int>{3});
        QCOMPARE(s.name, QStringLiteral("ws1"));
        QCOMPARE(s.address, QStringLiteral("ws1.lab"));
        QVERIFY(s.reachable && !s.connecting);
        QCOMPARE(s.cpus, 16);
        QCOMPARE(s.labels, QStringList{QStringLiteral("a100")});
        QCOMPARE(s.gpus.size(), 4);
        QCOMPARE(s.gpus[0].memoryFreeMiB, 81920 - 1024);
        QCOMPARE(s.gpus[0].foreignBusy, false); // its process is our run's
        QCOMPARE(s.gpus[1].foreignBusy, true);  // a foreign process
        QCOMPARE(s.gpus[2].foreignBusy, true);  // another instance's claim
        QCOMPARE(s.gpus[3].foreignBusy, true);  // refused to us since the last report
        NodePool::NodeState connecting;
        connecting.name = QStringLiteral("ws2");
        const sched::NodeState c = pass::nodeSnapshot(connecting, {}, QStringLiteral("us"), {});
        QVERIFY(!c.reachable && c.connecting);
    }

    void pendingRunCarriesItsSpecAndPin()
    {
        const QString yaml
                = QStringLiteral("name: t\ncommand: 'true'\nresources: {gpus: 2, gpu_memory: 40G, cpus: 4}\n"
                                 "estimated_runtime: 10m\ntime_limit: 1h\nuser: alice\nproject: vision\nqueue: big\n"
                                 "avoid_nodes: [ws9]\n");
        RunRecord r = waiting(5, yaml, RunState::Held);
        r.priority = 7;
        r.node = QStringLiteral("ws2"); // submit --node ws2
        // A tag that looks like a sweep's is only a tag: the run's sweep group decides.
        r.tags = {QStringLiteral("sweep:1700"), QStringLiteral("x")};
        r.groups = {RunGroupMembership{31, RunGroupKind::Gang, 0, {}},
                RunGroupMembership{32, RunGroupKind::Sweep, 1, QStringLiteral("lr=0.1")}};
        r.name = QStringLiteral("digits[lr=0.1]");
        const sched::PendingRun p = pass::pendingRunOf(r, specOf(yaml), QStringLiteral("osuser"),
                {QStringLiteral("local"), QStringLiteral("ws1"), QStringLiteral("ws2")});
        QCOMPARE(p.id, RunId(5));
        QCOMPARE(p.priority, 7);
        QVERIFY(p.held);
        QCOMPARE(p.gpus, 2);
        QCOMPARE(p.gpuMemoryMiB, qint64(40 * 1024));
        QCOMPARE(p.cpus, 4);
        QCOMPARE(p.estimatedRuntimeMs, qint64(600000));
        QCOMPARE(p.timeLimitMs, qint64(3600000));
        QCOMPARE(p.user, QStringLiteral("alice"));
        QCOMPARE(p.project, QStringLiteral("vision"));
        QCOMPARE(p.queue, QStringLiteral("big"));
        QCOMPARE(p.sweepId, QStringLiteral("sweep:32"));
        QCOMPARE(p.sweepName, QStringLiteral("digits"));
        // Its own avoid list, then every node but the one it is pinned to.
        QCOMPARE(p.avoidNodes, (QStringList{QStringLiteral("ws9"), QStringLiteral("local"), QStringLiteral("ws1")}));
        // A spec that does not parse asks for nothing; the account is the OS user.
        const sched::PendingRun bare = pass::pendingRunOf(waiting(6, QStringLiteral("{")), fail(QStringLiteral("bad")),
                QStringLiteral("osuser"), {QStringLiteral("local")});
        QCOMPARE(bare.gpus, 0);
        QCOMPARE(bare.user, QStringLiteral("osuser"));
        QVERIFY(bare.avoidNodes.isEmpty());
    }

    void allocationHoldsItsShareUntilItsEstimate()
    {
        const QString yaml = QStringLiteral("name: t\ncommand: 'true'\nresources: {cpus: 3, memory: 8G}\n"
                                            "estimated_runtime: 90s\n");
        RunRecord r = waiting(9, yaml, RunState::Running);
        r.node = QStringLiteral("ws1");
        r.gpus = {0, 2};
        r.startedAt = QDateTime::fromMSecsSinceEpoch(1'700'000'100'000, Qt::UTC);
        const sched::RunningAllocation a = pass::allocationOf(r, specOf(yaml), QStringLiteral("osuser"), 42);
        QCOMPARE(a.run, RunId(9));
        QCOMPARE(a.startMs, qint64(1'700'000'100'000));
        QCOMPARE(a.estimatedEndMs, qint64(1'700'000'190'000));
        QCOMPARE(a.user, QStringLiteral("osuser"));
        QCOMPARE(a.nodes.size(), 1);
        QCOMPARE(a.nodes[0].node, QStringLiteral("ws1"));
        QCOMPARE(a.nodes[0].gpuIndices, (QList<int>{0, 2}));
        QCOMPARE(a.nodes[0].cpus, 3);
        QCOMPARE(a.nodes[0].memoryMiB, qint64(8 * 1024));
        r.startedAt = {}; // starting: held from now
        QCOMPARE(pass::allocationOf(r, specOf(yaml), QStringLiteral("osuser"), 42).startMs, qint64(42));
    }

    void queuesArePassedInTurnWithoutDoubleBooking()
    {
        // One node with 2 GPUs; the default queue's run takes both, so the
        // "big" queue's run (its own policy) waits though it came first.
        sched::ClusterState state;
        state.nodes.append(pass::nodeSnapshot(nodeWithGpus(QStringLiteral("ws1"), 2), {}, QStringLiteral("us"), {}));
        const QString big = QStringLiteral("name: b\ncommand: 'true'\nresources: {gpus: 2}\nqueue: big\n");
        const QString plain = QStringLiteral("name: p\ncommand: 'true'\nresources: {gpus: 2}\n");
        const QList<sched::PendingRun> queue{
                pass::pendingRunOf(waiting(1, big), specOf(big), QStringLiteral("u"), {QStringLiteral("ws1")}),
                pass::pendingRunOf(waiting(2, plain), specOf(plain), QStringLiteral("u"), {QStringLiteral("ws1")})};
        sched::Policy fcfs;
        sched::Policy priority;
        priority.ordering = sched::Ordering::Priority;
        QStringList asked;
        sched::Scheduler scheduler;
        const sched::SchedulerDecision d = pass::decideByQueue(
                scheduler, state, queue,
                [&](const QString& q) -> const sched::Policy& {
                    asked << q;
                    return q.isEmpty() ? fcfs : priority;
                },
                [](const sched::Policy&) { return sched::FairShareState{}; }, 1'700'000'500'000);
        QCOMPARE(asked, (QStringList{QString(), QStringLiteral("big")})); // the default queue first
        QCOMPARE(d.placements.size(), 1);
        QCOMPARE(d.placements[0].run, RunId(2));
        QCOMPARE(d.pending.size(), 1);
        QCOMPARE(d.pending[0].run, RunId(1));
        QCOMPARE(d.pending[0].reason.kind, sched::PendingKind::WaitingForResources);
        QCOMPARE(state.running.size(), 1); // the placement is in the state the next queue saw
        QVERIFY(!pass::neverPlaceable(d.pending[0], state));
    }

    void unsatisfiableOnEveryReachableNodeFails()
    {
        sched::PendingInfo info;
        info.run = 3;
        info.reason.kind = sched::PendingKind::Unsatisfiable;
        sched::ClusterState state;
        QVERIFY(!pass::neverPlaceable(info, state)); // no node known yet: wait
        state.nodes.append(sched::NodeState{});
        QVERIFY(pass::neverPlaceable(info, state));
        info.reason.connectingNodes = {QStringLiteral("ws2")}; // one still connecting might hold it
        QVERIFY(!pass::neverPlaceable(info, state));
        info.reason.connectingNodes.clear();
        info.reason.unreachableNodes = {QStringLiteral("ws3")};
        QVERIFY(!pass::neverPlaceable(info, state));
        info.reason.kind = sched::PendingKind::Held;
        info.reason.unreachableNodes.clear();
        QVERIFY(!pass::neverPlaceable(info, state));
    }

    void pendingTextSaysTheExpectedStart()
    {
        sched::PendingInfo info;
        info.run = 4;
        info.reason.kind = sched::PendingKind::Held;
        QCOMPARE(pass::pendingText(info), QStringLiteral("held by user"));
        const qint64 at = QDateTime(QDate(2026, 12, 3), QTime(21, 40)).toMSecsSinceEpoch(); // local time
        info.reason.kind = sched::PendingKind::WaitingForResources;
        info.reason.gpus = 2;
        info.estimatedStartMs = at;
        const QString text = pass::pendingText(info);
        QVERIFY2(text.contains(QStringLiteral("2026-12-03 21:40")), qPrintable(text));
        QVERIFY2(text.startsWith(sched::renderPendingReason(info.reason) + QStringLiteral("; ")), qPrintable(text));
        // A run held for the head's backfill reservation already names the time.
        info.reason.kind = sched::PendingKind::BackfillHeld;
        QCOMPARE(pass::pendingText(info), sched::renderPendingReason(info.reason));
    }
};

QTEST_GUILESS_MAIN(TestSchedulingPass)
#include "TestSchedulingPass.moc"
