// Preemption's choice (core/sched/Preemption.h, issue #25): which running
// runs a waiting run of higher priority may stop, and what must never be
// chosen. Pure: the scheduler's pass, then planPreemptions, as the engine's
// pass calls them.
#include "SchedTestUtil.h"

#include "core/sched/Preemption.h"

#include <QTest>

using namespace ty;
using namespace ty::sched;
using namespace ty::sched::test;

namespace {

constexpr qint64 kNow = 1'800'000'000'000;

RunningRunInfo info(RunId run, int priority, bool preemptible = true, qint64 graceMs = 30000, qint64 gang = 0)
{
    return RunningRunInfo{run, preemptible, priority, graceMs, gang};
}

// Nodes ws1..ws<nodes> with `gpus` GPUs each, every GPU held by one run
// per node, 10, 11, ... (started an hour ago, an hour left).
ClusterState busyNodes(int nodes, int gpus)
{
    ClusterState s;
    QList<int> all;
    for (int g = 0; g < gpus; ++g)
        all << g;
    for (int n = 0; n < nodes; ++n) {
        const QString name = QStringLiteral("ws%1").arg(n + 1);
        s.nodes << makeNode(name, gpus);
        s.running << makeRunning(10 + n, name, all, kNow - kHour, kNow + kHour);
    }
    return s;
}

PendingRun waiting(RunId id, int priority, int gpus, int nodes = 1)
{
    PendingRun p = makeRun(id, kNow - kMin, gpus, kHour, nodes);
    p.priority = priority;
    return p;
}

QStringList nodesOf(const SchedulerDecision& d)
{
    QStringList out;
    for (const Preemption& p : d.preemptions)
        out << p.node;
    return out;
}

// The engine's order: the pass, its placements applied, then the choice.
SchedulerDecision decide(const ClusterState& state, const QList<PendingRun>& queue, PreemptionInput& in)
{
    SchedulerDecision d = schedule(state, queue, Policy::priorityAging(0), kNow);
    const ClusterState after = applyDecision(state, d, queue, kNow);
    planPreemptions(d, after, queue, in, kNow);
    return d;
}

const PendingInfo* pendingOf(const SchedulerDecision& d, RunId run)
{
    for (const PendingInfo& p : d.pending)
        if (p.run == run)
            return &p;
    return nullptr;
}

} // namespace

class TestPreemption final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void takesTheGpusOfALowerPriorityPreemptibleRun()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 2);
        s.running << makeRunning(10, QStringLiteral("ws1"), {0, 1}, kNow - kHour, kNow + kHour);
        PreemptionInput in;
        in.running.insert(10, info(10, 0, true, 45000));
        const SchedulerDecision d = decide(s, {waiting(20, 5, 2)}, in);
        QCOMPARE(d.placements.size(), 0);
        QCOMPARE(d.preemptions.size(), 1);
        const Preemption& p = d.preemptions.front();
        QCOMPARE(p.preemptor, RunId(20));
        QCOMPARE(p.node, QStringLiteral("ws1"));
        QCOMPARE(p.victims, QList<RunId>{10});
        QCOMPARE(p.gpuIndices, (QList<int>{0, 1}));
        QCOMPARE(p.graceMs, 45000);
        const PendingInfo* w = pendingOf(d, 20);
        QVERIFY(w);
        QCOMPARE(w->reason.kind, PendingKind::Preempting);
        QCOMPARE(renderPendingReason(w->reason), QStringLiteral("waiting: preempting run 10 on ws1 (grace 45 s)"));
        QVERIFY(in.ending.contains(10));
        QVERIFY(in.nodesTaken.contains(QStringLiteral("ws1")));
    }

    // Never a run that is not preemptible, nor one of equal or higher
    // priority, nor one already ending; nor when the waiting run fits as it
    // is (it waits for its turn); nor on a node the run avoids.
    void neverChoosesWhatItMustNot()
    {
        ClusterState s = busyNodes(3, 1);
        PreemptionInput in;
        in.running.insert(10, info(10, 0, /*preemptible*/ false));
        in.running.insert(11, info(11, 5)); // equal priority
        in.running.insert(12, info(12, 9)); // higher
        SchedulerDecision d = decide(s, {waiting(20, 5, 1)}, in);
        QCOMPARE(d.preemptions.size(), 0);
        QCOMPARE(pendingOf(d, 20)->reason.kind, PendingKind::WaitingForResources);

        // A lower-priority preemptible run, but already ending for another.
        in.running.insert(11, info(11, 1));
        in.ending.insert(11);
        d = decide(s, {waiting(20, 5, 1)}, in);
        QCOMPARE(d.preemptions.size(), 0);

        // A lower-priority preemptible run on a node the waiting run avoids.
        in.ending.clear();
        PendingRun avoider = waiting(20, 5, 1);
        avoider.avoidNodes << QStringLiteral("ws2");
        d = decide(s, {avoider}, in);
        QCOMPARE(d.preemptions.size(), 0);
        // ... and without the avoidance it is chosen.
        d = decide(s, {waiting(20, 5, 1)}, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().victims, QList<RunId>{11});

        // A free GPU somewhere: the blocked run waits for its turn, nobody is stopped.
        ClusterState free = s;
        free.nodes << makeNode(QStringLiteral("ws4"), 1);
        in = {};
        in.running.insert(11, info(11, 1));
        d = decide(free, {waiting(20, 5, 1)}, in);
        QCOMPARE(d.placements.size(), 1); // it simply starts on ws4
        QCOMPARE(d.preemptions.size(), 0);
    }

    // The fewest victims first, whatever their priorities.
    void fewestVictimsFirst()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 2) << makeNode(QStringLiteral("ws2"), 2);
        s.running << makeRunning(10, QStringLiteral("ws1"), {0}, kNow - kHour, kNow + kHour)
                  << makeRunning(11, QStringLiteral("ws1"), {1}, kNow - kHour, kNow + kHour)
                  << makeRunning(12, QStringLiteral("ws2"), {0, 1}, kNow - kHour, kNow + kHour);
        PreemptionInput in;
        in.running.insert(10, info(10, 0));
        in.running.insert(11, info(11, 0));
        in.running.insert(12, info(12, 3)); // higher than 10 and 11, yet one run instead of two
        const SchedulerDecision d = decide(s, {waiting(20, 5, 2)}, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().node, QStringLiteral("ws2"));
        QCOMPARE(d.preemptions.front().victims, QList<RunId>{12});
    }

    // As many victims: the lowest priority; as low: the most recently started.
    void lowestPriorityThenMostRecentlyStarted()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 1) << makeNode(QStringLiteral("ws2"), 1)
                << makeNode(QStringLiteral("ws3"), 1);
        s.running << makeRunning(10, QStringLiteral("ws1"), {0}, kNow - 3 * kHour, kNow + kHour)
                  << makeRunning(11, QStringLiteral("ws2"), {0}, kNow - 2 * kHour, kNow + kHour)
                  << makeRunning(12, QStringLiteral("ws3"), {0}, kNow - 1 * kHour, kNow + kHour);
        PreemptionInput in;
        in.running.insert(10, info(10, 1));
        in.running.insert(11, info(11, 0));
        in.running.insert(12, info(12, 1));
        SchedulerDecision d = decide(s, {waiting(20, 5, 1)}, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().victims, QList<RunId>{11}); // priority 0

        in = {};
        in.running.insert(10, info(10, 1));
        in.running.insert(11, info(11, 1));
        in.running.insert(12, info(12, 1));
        d = decide(s, {waiting(20, 5, 1)}, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().victims, QList<RunId>{12}); // started an hour ago: the least lost
        QCOMPARE(d.preemptions.front().node, QStringLiteral("ws3"));
    }

    // A free GPU plus one victim's: one victim, the free GPU used too.
    void freeGpusCountTowardsTheNeed()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 4);
        s.running << makeRunning(10, QStringLiteral("ws1"), {0, 1}, kNow - kHour, kNow + kHour)
                  << makeRunning(11, QStringLiteral("ws1"), {2}, kNow - 10 * kMin, kNow + kHour);
        PreemptionInput in;
        in.running.insert(10, info(10, 0));
        in.running.insert(11, info(11, 0));
        // Either alone makes room; 11 started later (less work lost).
        const SchedulerDecision d = decide(s, {waiting(20, 5, 2)}, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().victims, QList<RunId>{11});
        QCOMPARE(d.preemptions.front().gpuIndices, (QList<int>{2, 3}));
    }

    // A gang is stopped whole (every rank, on every node) or not at all.
    void gangWholeOrNotAtAll()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 2) << makeNode(QStringLiteral("ws2"), 2);
        s.running << makeRunning(30, QStringLiteral("ws1"), {0, 1}, kNow - kHour, kNow + kHour)
                  << makeRunning(31, QStringLiteral("ws2"), {0, 1}, kNow - kHour, kNow + kHour);
        PreemptionInput in;
        in.running.insert(30, info(30, 0, true, 30000, 7));
        in.running.insert(31, info(31, 0, true, 60000, 7));
        SchedulerDecision d = decide(s, {waiting(20, 5, 2)}, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().victims, (QList<RunId>{30, 31}));
        QCOMPARE(d.preemptions.front().node, QStringLiteral("ws1"));
        QCOMPARE(d.preemptions.front().graceMs, 60000); // the longest of the ranks'
        QCOMPARE(renderPendingReason(pendingOf(d, 20)->reason),
                QStringLiteral("waiting: preempting runs 30, 31 on ws1 (grace 1 min)"));

        // One rank not preemptible: the gang is not chosen, not even partly.
        in = {};
        in.running.insert(30, info(30, 0, true, 30000, 7));
        in.running.insert(31, info(31, 0, false, 30000, 7));
        d = decide(s, {waiting(20, 5, 2)}, in);
        QCOMPARE(d.preemptions.size(), 0);
        // One rank of higher priority: neither.
        in.running.insert(31, info(31, 6, true, 30000, 7));
        d = decide(s, {waiting(20, 5, 2)}, in);
        QCOMPARE(d.preemptions.size(), 0);
    }

    // One preemption per node and pass; a second waiting run goes elsewhere.
    void oneNodeOnePreemptionPerPass()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 2) << makeNode(QStringLiteral("ws2"), 1);
        s.running << makeRunning(10, QStringLiteral("ws1"), {0}, kNow - kHour, kNow + kHour)
                  << makeRunning(11, QStringLiteral("ws1"), {1}, kNow - kHour, kNow + kHour)
                  << makeRunning(12, QStringLiteral("ws2"), {0}, kNow - 5 * kHour, kNow + kHour);
        PreemptionInput in;
        in.running.insert(10, info(10, 0));
        in.running.insert(11, info(11, 0));
        in.running.insert(12, info(12, 0));
        const SchedulerDecision d = decide(s, {waiting(20, 6, 1), waiting(21, 5, 1)}, in);
        QCOMPARE(d.preemptions.size(), 2);
        QCOMPARE(d.preemptions[0].preemptor, RunId(20));
        QCOMPARE(d.preemptions[0].node, QStringLiteral("ws1"));
        QCOMPARE(d.preemptions[1].preemptor, RunId(21));
        QCOMPARE(d.preemptions[1].node, QStringLiteral("ws2"));
        QCOMPARE(d.preemptions[1].victims, QList<RunId>{12});
    }

    // A waiting gang (issue #25) preempts on as many nodes as it needs: one
    // Preemption per node, the same preemptor, and one reason naming all.
    void gangPreemptsOnTwoNodes()
    {
        ClusterState s = busyNodes(2, 2);
        PreemptionInput in;
        in.running.insert(10, info(10, 1));
        in.running.insert(11, info(11, 1, true, 60000));
        const SchedulerDecision d = decide(s, {waiting(20, 10, 2, 2)}, in);
        QCOMPARE(d.placements.size(), 0);
        QCOMPARE(d.preemptions.size(), 2);
        QCOMPARE(nodesOf(d), (QStringList{QStringLiteral("ws1"), QStringLiteral("ws2")}));
        for (const Preemption& p : d.preemptions) {
            QCOMPARE(p.preemptor, RunId(20));
            QCOMPARE(p.gpuIndices, (QList<int>{0, 1}));
        }
        QCOMPARE(d.preemptions[0].victims, QList<RunId>{10});
        QCOMPARE(d.preemptions[1].victims, QList<RunId>{11});
        QCOMPARE(d.preemptions[1].graceMs, 60000);
        const PendingInfo* w = pendingOf(d, 20);
        QVERIFY(w);
        QCOMPARE(w->reason.kind, PendingKind::Preempting);
        QCOMPARE(renderPendingReason(w->reason),
                QStringLiteral("waiting: preempting runs 10, 11 on ws1, ws2 (grace 1 min)"));
        QCOMPARE(in.ending, (QSet<RunId>{10, 11}));
        QCOMPARE(in.nodesTaken, (QSet<QString>{QStringLiteral("ws1"), QStringLiteral("ws2")}));
    }

    // A free node counts towards the gang: it is held, and only one node is
    // freed -- the cheapest (here the run started last, the least work lost).
    void gangUsesAFreeNodeFirst()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 2) << makeNode(QStringLiteral("ws2"), 2)
                << makeNode(QStringLiteral("ws3"), 2);
        s.running << makeRunning(10, QStringLiteral("ws1"), {0, 1}, kNow - 3 * kHour, kNow + kHour)
                  << makeRunning(11, QStringLiteral("ws2"), {0, 1}, kNow - kHour, kNow + kHour);
        PreemptionInput in;
        in.running.insert(10, info(10, 1));
        in.running.insert(11, info(11, 1));
        const SchedulerDecision d = decide(s, {waiting(20, 10, 2, 2)}, in);
        QCOMPARE(d.placements.size(), 0);
        QCOMPARE(nodesOf(d), (QStringList{QStringLiteral("ws2"), QStringLiteral("ws3")}));
        QCOMPARE(d.preemptions[0].victims, QList<RunId>{11});
        QVERIFY(d.preemptions[1].victims.isEmpty()); // ws3: free, held for the other rank
        QCOMPARE(d.preemptions[1].gpuIndices, (QList<int>{0, 1}));
        QCOMPARE(d.preemptions[1].graceMs, 30000);
        QCOMPARE(in.ending, QSet<RunId>{11});
        QCOMPARE(renderPendingReason(pendingOf(d, 20)->reason),
                QStringLiteral("waiting: preempting run 11 on ws2 and holding ws3 (grace 30 s)"));
    }

    // Only one of the two nodes it needs could be freed: nothing is
    // stopped, the gang just waits. Once the second can be freed too, both are.
    void gangNeverPreemptsPartly()
    {
        ClusterState s = busyNodes(2, 2);
        PreemptionInput in;
        in.running.insert(10, info(10, 1));
        in.running.insert(11, info(11, 1, /*preemptible*/ false));
        SchedulerDecision d = decide(s, {waiting(20, 10, 2, 2)}, in);
        QCOMPARE(d.preemptions.size(), 0);
        QCOMPARE(pendingOf(d, 20)->reason.kind, PendingKind::WaitingForResources);
        QVERIFY(in.ending.isEmpty());
        QVERIFY(in.nodesTaken.isEmpty());

        in.running.insert(11, info(11, 1));
        d = decide(s, {waiting(20, 10, 2, 2)}, in);
        QCOMPARE(d.preemptions.size(), 2);
    }

    // A gang never takes a run that is not preemptible, nor one of equal
    // priority; nor when enough nodes are free (it waits for its turn).
    void gangNeverChoosesWhatItMustNot()
    {
        ClusterState s = busyNodes(3, 1);
        PreemptionInput in;
        in.running.insert(10, info(10, 1, /*preemptible*/ false));
        in.running.insert(11, info(11, 10)); // equal priority
        in.running.insert(12, info(12, 1));
        SchedulerDecision d = decide(s, {waiting(20, 10, 1, 2)}, in);
        QCOMPARE(d.preemptions.size(), 0);
        QVERIFY(in.ending.isEmpty());

        // The equal-priority run lower: 11 and 12 are stopped, never 10.
        in.running.insert(11, info(11, 2));
        d = decide(s, {waiting(20, 10, 1, 2)}, in);
        QCOMPARE(nodesOf(d), (QStringList{QStringLiteral("ws2"), QStringLiteral("ws3")}));
        QCOMPARE(in.ending, (QSet<RunId>{11, 12}));

        // Two free nodes: it waits for its turn, nobody is stopped.
        ClusterState free = s;
        free.nodes << makeNode(QStringLiteral("ws4"), 1) << makeNode(QStringLiteral("ws5"), 1);
        in = {};
        in.running.insert(12, info(12, 1));
        d = decide(free, {waiting(20, 10, 1, 2)}, in);
        QCOMPARE(d.placements.size(), 1); // it simply starts on ws4 and ws5
        QCOMPARE(d.preemptions.size(), 0);
    }

    // An elastic gang (nodes: {min: 2, max: 4}) preempts for its minimum.
    void elasticGangPreemptsForItsMinimum()
    {
        ClusterState s;
        for (int i = 1; i <= 4; ++i) {
            const QString name = QStringLiteral("ws%1").arg(i);
            s.nodes << makeNode(name, 1);
            s.running << makeRunning(10 + i, name, {0}, kNow - i * kHour, kNow + kHour);
        }
        PreemptionInput in;
        for (int i = 1; i <= 4; ++i)
            in.running.insert(10 + i, info(10 + i, 1));
        PendingRun elastic = waiting(20, 10, 1, 2);
        elastic.nodesMax = 4;
        const SchedulerDecision d = decide(s, {elastic}, in);
        // The two started last: the least work lost.
        QCOMPARE(nodesOf(d), (QStringList{QStringLiteral("ws1"), QStringLiteral("ws2")}));
        QCOMPARE(in.ending, (QSet<RunId>{11, 12}));
        QCOMPARE(renderPendingReason(pendingOf(d, 20)->reason),
                QStringLiteral("waiting: preempting runs 11, 12 on ws1, ws2 (grace 30 s)"));
    }

    // A victim gang frees every node it holds: a waiting gang that chose it
    // on one node needs no other victim on the second; each Preemption names
    // the victims that hold something on its node.
    void victimGangFreesEveryNodeItHolds()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 2) << makeNode(QStringLiteral("ws2"), 2)
                << makeNode(QStringLiteral("ws3"), 2);
        s.running << makeRunning(30, QStringLiteral("ws1"), {0, 1}, kNow - kHour, kNow + kHour)
                  << makeRunning(31, QStringLiteral("ws2"), {0, 1}, kNow - kHour, kNow + kHour)
                  << makeRunning(40, QStringLiteral("ws3"), {0, 1}, kNow - kHour, kNow + kHour);
        PreemptionInput in;
        in.running.insert(30, info(30, 1, true, 30000, 7));
        in.running.insert(31, info(31, 1, true, 30000, 7));
        in.running.insert(40, info(40, 1));
        const SchedulerDecision d = decide(s, {waiting(20, 10, 2, 2)}, in);
        QCOMPARE(nodesOf(d), (QStringList{QStringLiteral("ws1"), QStringLiteral("ws2")}));
        QCOMPARE(d.preemptions[0].victims, (QList<RunId>{30, 31}));
        QCOMPARE(d.preemptions[1].victims, (QList<RunId>{30, 31}));
        QCOMPARE(in.ending, (QSet<RunId>{30, 31}));
        QCOMPARE(renderPendingReason(pendingOf(d, 20)->reason),
                QStringLiteral("waiting: preempting runs 30, 31 on ws1, ws2 (grace 30 s)"));
    }

    // A claim holds its GPUs while the victims end and after: another run
    // (even one that fits) does not get them; the claimed run does.
    void claimsHoldTheGpus()
    {
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("ws1"), 2);
        const PreemptionClaim claim{20, QStringLiteral("ws1"), {0, 1}, 1, kGiB, {10}, 30000};
        // Victim still running: it holds GPU 0 itself, the claim holds GPU 1.
        s.running << makeRunning(10, QStringLiteral("ws1"), {0}, kNow - kHour, kNow + kHour);
        QVERIFY(!victimsGone(claim, s));
        ClusterState held = withClaimsHeld(s, {claim}, kNow);
        SchedulerDecision d = schedule(held, {waiting(40, 0, 1)}, Policy::fcfs(), kNow);
        QCOMPARE(d.placements.size(), 0);
        // Victim ended: the claim holds both.
        s.running.clear();
        QVERIFY(victimsGone(claim, s));
        held = withClaimsHeld(s, {claim}, kNow);
        d = schedule(held, {waiting(40, 0, 1)}, Policy::fcfs(), kNow);
        QCOMPARE(d.placements.size(), 0);
        // Without the claim the run would start: the claim is what stops it.
        d = schedule(s, {waiting(40, 0, 1)}, Policy::fcfs(), kNow);
        QCOMPARE(d.placements.size(), 1);
        QCOMPARE(renderPendingReason(preemptingReason(claim)),
                QStringLiteral("waiting: preempting run 10 on ws1 (grace 30 s)"));
    }
};

QTEST_GUILESS_MAIN(TestPreemption)
#include "TestPreemption.moc"
