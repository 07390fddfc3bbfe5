// The scheduling pass with preemption (core/runs/PreemptionPass.h), pure:
// off unless the queue's policy allows it, claims kept across passes until
// their run is placed on the promised node, and nothing else given their GPUs.
#include "core/runs/PreemptionPass.h"
#include "core/runs/QueuePolicy.h"

#include <QTest>

using namespace ty;
using namespace ty::sched;

namespace {

constexpr qint64 kNow = 1'800'000'000'000;

NodeState node(const QString& name, int gpus)
{
    NodeState n;
    n.name = name;
    n.cpus = 16;
    n.memoryMiB = 64 * 1024;
    for (int i = 0; i < gpus; ++i)
        n.gpus << GpuState{i, QStringLiteral("GPU-%1").arg(i), QStringLiteral("A100"), 81920, 81920, false, {}};
    return n;
}

RunningAllocation running(RunId id, QList<int> gpus, const QString& on = QStringLiteral("ws1"))
{
    RunningAllocation a;
    a.run = id;
    a.startMs = kNow - 3600000;
    a.nodes << NodeShare{on, std::move(gpus), 0, 0, 0};
    return a;
}

PendingRun waiting(RunId id, int priority, qint64 submitMs)
{
    PendingRun p;
    p.id = id;
    p.priority = priority;
    p.submitMs = submitMs;
    p.gpus = 1;
    return p;
}

struct Pass {
    Scheduler scheduler;
    Policy policy;
    QList<PreemptionClaim> claims;
    SchedulerDecision run(ClusterState state, const QList<PendingRun>& queue, const PreemptionInput& in)
    {
        return pass::decideWithPreemption(
                scheduler, state, queue, [this](const QString&) -> const Policy& { return policy; },
                [](const Policy&) { return FairShareState{}; }, claims, in, kNow);
    }
};

} // namespace

class TestPreemptionPass final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void offUnlessThePolicyAllowsIt()
    {
        QVERIFY(!defaultQueuePolicy().preemption); // the default queue policy: off
        ClusterState s;
        s.nodes << node(QStringLiteral("ws1"), 1);
        s.running << running(10, {0});
        PreemptionInput in;
        in.running.insert(10, RunningRunInfo{10, true, 0, 30000, 0});
        Pass p;
        p.policy = defaultQueuePolicy();
        SchedulerDecision d = p.run(s, {waiting(20, 5, kNow)}, in);
        QCOMPARE(d.preemptions.size(), 0);
        QCOMPARE(p.claims.size(), 0);
        p.policy.preemption = true;
        d = p.run(s, {waiting(20, 5, kNow)}, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(p.claims.size(), 1);
    }

    // Resource pools that borrow (issue #25): the owning pool takes its GPUs
    // back from a preemptible borrower with preemption by priority off, and
    // the claim keeps them for the owner until the borrower has ended.
    void poolsTakeBackLentGpusWithPreemptionOff()
    {
        ClusterState s;
        s.nodes << node(QStringLiteral("ws1"), 1) << node(QStringLiteral("ws2"), 1);
        s.nodes[0].labels << QStringLiteral("a100");
        s.nodes[1].labels << QStringLiteral("v100");
        RunningAllocation borrower = running(10, {0}); // a v100 run on a100's ws1
        borrower.pool = QStringLiteral("v100");
        s.running << borrower;
        PreemptionInput in;
        in.running.insert(10, RunningRunInfo{10, true, 9, 30000, 0});
        PendingRun owner = waiting(20, 0, kNow);
        owner.pool = QStringLiteral("a100");
        Pass p;
        p.policy = defaultQueuePolicy();
        ResourcePool a100;
        a100.name = QStringLiteral("a100");
        a100.labels << QStringLiteral("a100");
        ResourcePool v100;
        v100.name = QStringLiteral("v100");
        v100.labels << QStringLiteral("v100");
        p.policy.pools = {a100, v100};
        // Nobody borrows: nothing to take back, and nothing is planned.
        SchedulerDecision d = p.run(s, {owner}, in);
        QCOMPARE(d.preemptions.size(), 0);
        p.policy.pools[1].borrowLimit = 1;
        d = p.run(s, {owner}, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().victims, QList<RunId>{10});
        QCOMPARE(d.preemptions.front().reclaimPool, QStringLiteral("a100"));
        QCOMPARE(p.claims.size(), 1);
        QCOMPARE(p.claims.front().reclaimPool, QStringLiteral("a100"));
        // The next pass, the borrower in its grace: the claim says why the owner waits.
        in.ending.insert(10);
        d = p.run(s, {owner}, in);
        QCOMPARE(d.pending.size(), 1);
        QCOMPARE(renderPendingReason(d.pending.front().reason),
                QStringLiteral("waiting: reclaiming pool a100: preempting run 10 on ws1 (grace 30 s)"));
        // Gone: the owner starts on ws1.
        s.running.clear();
        d = p.run(s, {owner}, in);
        QCOMPARE(d.placements.size(), 1);
        QCOMPARE(d.placements.front().nodes.front().node, QStringLiteral("ws1"));
    }

    // Pass 1 preempts; pass 2 (victim in its grace) keeps the claim and
    // chooses nothing new; pass 3 (victim gone) starts the claimed run there,
    // not the FCFS head that waited longer.
    void claimKeepsTheGpusUntilItsRunStarts()
    {
        ClusterState s;
        s.nodes << node(QStringLiteral("ws1"), 1);
        s.running << running(10, {0});
        PreemptionInput in;
        in.running.insert(10, RunningRunInfo{10, true, 0, 30000, 0});
        Pass p;
        p.policy = Policy::fcfs();
        p.policy.preemption = true;
        const QList<PendingRun> queue{waiting(19, 0, kNow - 60000), waiting(20, 5, kNow)};
        SchedulerDecision d = p.run(s, queue, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().preemptor, RunId(20));

        in.ending.insert(10); // the engine told it to stop
        d = p.run(s, queue, in);
        QCOMPARE(d.preemptions.size(), 0);
        QCOMPARE(d.placements.size(), 0);
        QCOMPARE(p.claims.size(), 1);
        bool shown = false;
        for (const PendingInfo& i : d.pending)
            shown = shown
                    || (i.run == 20
                            && renderPendingReason(i.reason)
                                    == QStringLiteral("waiting: preempting run 10 on ws1 (grace 30 s)"));
        QVERIFY(shown);

        s.running.clear(); // it ended
        d = p.run(s, queue, in);
        QCOMPARE(d.placements.size(), 1);
        QCOMPARE(d.placements.front().run, RunId(20));
        QCOMPARE(d.placements.front().nodes.front().gpuIndices, QList<int>{0});
        QCOMPARE(p.claims.size(), 0);
    }

    // A waiting gang (issue #25): one claim per node, held together while
    // either victim runs (another run that fits gets neither node's GPU),
    // then the gang is placed on both nodes at once and the claims are done.
    void gangClaimsHeldUntilEveryVictimEnded()
    {
        ClusterState s;
        s.nodes << node(QStringLiteral("ws1"), 1) << node(QStringLiteral("ws2"), 1);
        s.running << running(10, {0}, QStringLiteral("ws1")) << running(11, {0}, QStringLiteral("ws2"));
        PreemptionInput in;
        in.running.insert(10, RunningRunInfo{10, true, 1, 30000, 0});
        in.running.insert(11, RunningRunInfo{11, true, 1, 30000, 0});
        Pass p;
        p.policy = Policy::fcfs();
        p.policy.preemption = true;
        PendingRun gang = waiting(20, 10, kNow);
        gang.nodes = 2;
        const QList<PendingRun> queue{waiting(19, 0, kNow - 60000), gang};
        SchedulerDecision d = p.run(s, queue, in);
        QCOMPARE(d.preemptions.size(), 2);
        QCOMPARE(p.claims.size(), 2);
        for (const PreemptionClaim& c : std::as_const(p.claims))
            QCOMPARE(c.preemptor, RunId(20));

        // Run 10 ended, 11 still in its grace: nothing starts, not even run
        // 19 on ws1's free GPU; one reason for the gang, naming both.
        in.ending = {10, 11};
        s.running.removeFirst();
        d = p.run(s, queue, in);
        QCOMPARE(d.preemptions.size(), 0);
        QCOMPARE(d.placements.size(), 0);
        QCOMPARE(p.claims.size(), 2);
        int shown = 0;
        for (const PendingInfo& i : d.pending)
            if (i.run == 20) {
                ++shown;
                QCOMPARE(renderPendingReason(i.reason),
                        QStringLiteral("waiting: preempting runs 10, 11 on ws1, ws2 (grace 30 s)"));
            }
        QCOMPARE(shown, 1);

        // Both ended: the gang starts on both nodes, run 19 still waits.
        s.running.clear();
        d = p.run(s, queue, in);
        QCOMPARE(d.placements.size(), 1);
        QCOMPARE(d.placements.front().run, RunId(20));
        QCOMPARE(d.placements.front().nodes.size(), 2);
        QCOMPARE(d.placements.front().nodes[0].node, QStringLiteral("ws1"));
        QCOMPARE(d.placements.front().nodes[1].node, QStringLiteral("ws2"));
        QCOMPARE(p.claims.size(), 0);
    }

    // An elastic gang (min 2, max 3) with one free node: it holds that node,
    // frees one more, and starts on those two only once its victim ended.
    void elasticGangStartsOnItsClaimedNodes()
    {
        ClusterState s;
        s.nodes << node(QStringLiteral("ws1"), 1) << node(QStringLiteral("ws2"), 1) << node(QStringLiteral("ws3"), 1);
        s.running << running(10, {0}, QStringLiteral("ws1")) << running(11, {0}, QStringLiteral("ws2"));
        s.running[1].startMs = kNow - 60000; // the least work lost
        PreemptionInput in;
        in.running.insert(10, RunningRunInfo{10, true, 1, 30000, 0});
        in.running.insert(11, RunningRunInfo{11, true, 1, 30000, 0});
        Pass p;
        p.policy = Policy::fcfs();
        p.policy.preemption = true;
        PendingRun gang = waiting(20, 10, kNow);
        gang.nodes = 2;
        gang.nodesMax = 3;
        SchedulerDecision d = p.run(s, {gang}, in);
        QCOMPARE(p.claims.size(), 2);
        QCOMPARE(d.preemptions.size(), 2);
        QCOMPARE(d.preemptions[0].node, QStringLiteral("ws2"));
        QCOMPARE(d.preemptions[0].victims, QList<RunId>{11});
        QCOMPARE(d.preemptions[1].node, QStringLiteral("ws3"));
        QVERIFY(d.preemptions[1].victims.isEmpty());

        // Victim in its grace: the free node ws3 stays held (run 21 does not get it).
        in.ending = {11};
        d = p.run(s, {gang, waiting(21, 0, kNow)}, in);
        QCOMPARE(d.placements.size(), 0);
        s.running.removeLast(); // 11 ended
        d = p.run(s, {gang, waiting(21, 0, kNow)}, in);
        QCOMPARE(d.placements.size(), 1);
        QCOMPARE(d.placements.front().run, RunId(20));
        QCOMPARE(d.placements.front().nodes.size(), 2);
        QVERIFY(d.placements.front().elastic);
        QCOMPARE(p.claims.size(), 0);
    }

    // A claim whose run left the queue (cancelled) is dropped: its GPUs are free again.
    void claimOfARunNoLongerQueuedIsDropped()
    {
        ClusterState s;
        s.nodes << node(QStringLiteral("ws1"), 1);
        Pass p;
        p.policy = Policy::fcfs();
        p.claims << PreemptionClaim{20, QStringLiteral("ws1"), {0}, 0, 0, {10}, 30000};
        const SchedulerDecision d = p.run(s, {waiting(21, 0, kNow)}, {});
        QCOMPARE(p.claims.size(), 0);
        QCOMPARE(d.placements.size(), 1);
        QCOMPARE(d.placements.front().run, RunId(21));
    }
};

QTEST_GUILESS_MAIN(TestPreemptionPass)
#include "TestPreemptionPass.moc"
