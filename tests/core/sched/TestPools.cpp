// Resource pools (core/sched/Pools.h, issue #25): per-user and per-project
// GPU quotas in a pool, the reason a run over its quota gives, that such a
// run never holds up the queue, borrowing idle GPUs of a lending pool, and
// taking them back by preempting preemptible borrowers. Pure: the
// scheduler's pass, then planPreemptions, as the engine's pass calls them.
#include "SchedTestUtil.h"

#include "core/sched/Preemption.h"

#include <QTest>

using namespace ty;
using namespace ty::sched;
using namespace ty::sched::test;

namespace {

constexpr qint64 kNow = 1'800'000'000'000;

NodeState labelled(const QString& name, int gpus, const QString& label)
{
    NodeState n = makeNode(name, gpus);
    n.labels << label;
    return n;
}

ResourcePool pool(const QString& name, const QString& label)
{
    ResourcePool p;
    p.name = name;
    p.labels << label;
    return p;
}

PendingRun run(RunId id, int gpus, const QString& user, const QString& project, const QString& inPool,
        qint64 submitMs = kNow - kHour, int nodes = 1)
{
    PendingRun r = makeRun(id, submitMs, gpus, kHour, nodes);
    r.user = user;
    r.project = project;
    r.pool = inPool;
    return r;
}

RunningAllocation running(RunId id, const QString& node, QList<int> gpus, const QString& user, const QString& project,
        const QString& inPool)
{
    RunningAllocation a = makeRunning(id, node, std::move(gpus), kNow - kHour, kNow + 10 * kHour);
    a.user = user;
    a.project = project;
    a.pool = inPool;
    return a;
}

Policy fcfsWith(QList<ResourcePool> pools)
{
    Policy p = Policy::fcfs();
    p.pools = std::move(pools);
    return p;
}

const PendingInfo* pendingOf(const SchedulerDecision& d, RunId id)
{
    for (const PendingInfo& p : d.pending)
        if (p.run == id)
            return &p;
    return nullptr;
}

const RunPlacement* placementOf(const SchedulerDecision& d, RunId id)
{
    for (const RunPlacement& p : d.placements)
        if (p.run == id)
            return &p;
    return nullptr;
}

// The kind of a waiting run's reason; -1 for a run that is not waiting.
PendingKind kindOf(const SchedulerDecision& d, RunId id)
{
    const PendingInfo* p = pendingOf(d, id);
    return p ? p->reason.kind : static_cast<PendingKind>(-1);
}

QString reasonOf(const SchedulerDecision& d, RunId id)
{
    const PendingInfo* p = pendingOf(d, id);
    return p ? renderPendingReason(p->reason) : QStringLiteral("(not pending)");
}

// The engine's order: the pass, its placements applied, then the choice.
SchedulerDecision decideAndPreempt(
        const ClusterState& state, const QList<PendingRun>& queue, const Policy& policy, PreemptionInput& in)
{
    SchedulerDecision d = schedule(state, queue, policy, kNow);
    const ClusterState after = applyDecision(state, d, queue, kNow);
    in.pools = policy.pools;
    in.byPriority = policy.preemption;
    planPreemptions(d, after, queue, in, kNow);
    return d;
}

} // namespace

class TestPools final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void membershipByLabels()
    {
        QList<ResourcePool> pools{pool(QStringLiteral("a100"), QStringLiteral("a100")), ResourcePool{}};
        pools[1].name = QStringLiteral("rest"); // no labels: every other node
        NodeState a = labelled(QStringLiteral("a1"), 8, QStringLiteral("a100"));
        a.labels << QStringLiteral("ib");
        const NodeState other = labelled(QStringLiteral("v1"), 4, QStringLiteral("v100"));
        QCOMPARE(poolOfNode(pools, a), 0);
        QCOMPARE(poolOfNode(pools, other), 1);
        pools[0].labels << QStringLiteral("nvlink"); // every label must be there
        QCOMPARE(poolOfNode(pools, a), 1);
        pools.removeLast();
        QCOMPARE(poolOfNode(pools, other), -1);
    }

    // A user's limit in the pool: the named entry, else the default; what
    // the account already holds there, plus the run, must fit in it.
    void userQuotaNamedAndDefault()
    {
        ResourcePool a100 = pool(QStringLiteral("a100"), QStringLiteral("a100"));
        a100.users.defaultLimit = 2;
        a100.users.limits.insert(QStringLiteral("alice"), 6);
        ClusterState s;
        s.nodes << labelled(QStringLiteral("a1"), 8, QStringLiteral("a100"));
        s.running << running(1, QStringLiteral("a1"), {0, 1, 2, 3}, QStringLiteral("alice"), QStringLiteral("nlp"),
                QStringLiteral("a100"));
        const QList<PendingRun> queue{
                run(10, 4, QStringLiteral("alice"), QStringLiteral("nlp"), QStringLiteral("a100"), kNow - 3 * kMin),
                run(11, 3, QStringLiteral("bob"), QStringLiteral("nlp"), QStringLiteral("a100"), kNow - 2 * kMin),
                run(12, 2, QStringLiteral("alice"), QStringLiteral("nlp"), QStringLiteral("a100"), kNow - kMin),
                run(13, 2, QStringLiteral("bob"), QStringLiteral("nlp"), QStringLiteral("a100"), kNow)};
        const SchedulerDecision d = schedule(s, queue, fcfsWith({a100}), kNow);
        // alice holds 4 of her 6: 4 more would be 8.
        QCOMPARE(kindOf(d, 10), PendingKind::PoolQuota);
        QCOMPARE(reasonOf(d, 10),
                QStringLiteral("waiting: user alice uses 4 of their 6 GPUs in pool a100; this run needs 4"));
        // bob has no entry: the default 2, and he asks 3.
        QCOMPARE(reasonOf(d, 11),
                QStringLiteral("waiting: user bob may use at most 2 GPUs in pool a100, and this run needs 3"));
        // 4 + 2 = 6 is within alice's limit, 2 within bob's default.
        QVERIFY(placementOf(d, 12));
        QVERIFY(placementOf(d, 13));
        QCOMPARE(placementOf(d, 12)->pool, QStringLiteral("a100"));
        QVERIFY(!placementOf(d, 12)->borrowed);
    }

    // The wording, and a gang counted as gpus x nodes, both running
    // and pending.
    void projectQuotaCountsGangsAndNamesTheQuota()
    {
        ResourcePool a100 = pool(QStringLiteral("a100"), QStringLiteral("a100"));
        a100.projects.limits.insert(QStringLiteral("vision"), 8);
        ClusterState s;
        for (const char* name : {"a1", "a2", "a3", "a4"})
            s.nodes << labelled(QString::fromLatin1(name), 8, QStringLiteral("a100"));
        // A running gang: 4 GPUs on each of 2 nodes = 8.
        RunningAllocation gang = running(1, QStringLiteral("a1"), {0, 1, 2, 3}, QStringLiteral("alice"),
                QStringLiteral("vision"), QStringLiteral("a100"));
        gang.nodes << NodeShare{QStringLiteral("a2"), {0, 1, 2, 3}, 1, kGiB, 0};
        s.running << gang;
        const QList<PendingRun> queue{
                run(10, 1, QStringLiteral("bob"), QStringLiteral("vision"), QStringLiteral("a100"), kNow - kMin),
                run(11, 1, QStringLiteral("bob"), QStringLiteral("nlp"), QStringLiteral("a100"), kNow)};
        SchedulerDecision d = schedule(s, queue, fcfsWith({a100}), kNow);
        QCOMPARE(reasonOf(d, 10), QStringLiteral("waiting: project vision uses 8 of its 8 GPUs in pool a100"));
        QVERIFY(pendingOf(d, 10));
        const PendingReason& r = pendingOf(d, 10)->reason;
        QCOMPARE(r.quotaProject, true);
        QCOMPARE(r.quotaAccount, QStringLiteral("vision"));
        QCOMPARE(r.pool, QStringLiteral("a100"));
        QCOMPARE(r.quotaUsed, 8);
        QCOMPARE(r.quotaLimit, 8);
        QVERIFY(placementOf(d, 11)); // project nlp has no limit

        // A pending gang of 3 nodes x 2 GPUs needs 6: with the gang above
        // ended, 6 of 8 fit; two such gangs do not (the second would make 12).
        s.running.clear();
        const QList<PendingRun> gangs{
                run(20, 2, QStringLiteral("alice"), QStringLiteral("vision"), QStringLiteral("a100"), kNow - kMin, 3),
                run(21, 2, QStringLiteral("alice"), QStringLiteral("vision"), QStringLiteral("a100"), kNow, 3)};
        d = schedule(s, gangs, fcfsWith({a100}), kNow);
        QVERIFY(placementOf(d, 20));
        QCOMPARE(placementOf(d, 20)->nodes.size(), 3);
        QCOMPARE(reasonOf(d, 21),
                QStringLiteral("waiting: project vision uses 6 of its 8 GPUs in pool a100; this run needs 6"));
    }

    // Held runs never block the head; neither does a run over its quota:
    // with strict FCFS, the run behind it starts.
    void quotaBlockedRunDoesNotBlockTheHead()
    {
        ResourcePool a100 = pool(QStringLiteral("a100"), QStringLiteral("a100"));
        a100.projects.limits.insert(QStringLiteral("vision"), 2);
        ClusterState s;
        s.nodes << labelled(QStringLiteral("a1"), 4, QStringLiteral("a100"));
        s.running << running(1, QStringLiteral("a1"), {0, 1}, QStringLiteral("alice"), QStringLiteral("vision"),
                QStringLiteral("a100"));
        const QList<PendingRun> queue{
                run(10, 2, QStringLiteral("alice"), QStringLiteral("vision"), QStringLiteral("a100"), kNow - kMin),
                run(11, 2, QStringLiteral("bob"), QStringLiteral("nlp"), QStringLiteral("a100"), kNow)};
        Policy strict = fcfsWith({a100});
        strict.backfill = false;
        const SchedulerDecision d = schedule(s, queue, strict, kNow);
        QCOMPARE(kindOf(d, 10), PendingKind::PoolQuota);
        QVERIFY2(placementOf(d, 11), qPrintable(reasonOf(d, 11)));
        QCOMPARE(placementOf(d, 11)->nodes.front().gpuIndices, (QList<int>{2, 3}));
        QVERIFY(!d.reservation); // nobody waits for resources
    }

    // A run that names no pool is charged to the pool of the nodes it lands
    // on, and kept off them when its quota there is used up.
    void runWithoutPoolIsChargedWhereItRuns()
    {
        ResourcePool a100 = pool(QStringLiteral("a100"), QStringLiteral("a100"));
        a100.projects.limits.insert(QStringLiteral("vision"), 2);
        ClusterState s;
        s.nodes << labelled(QStringLiteral("a1"), 4, QStringLiteral("a100")) << makeNode(QStringLiteral("n1"), 1);
        s.running << running(1, QStringLiteral("a1"), {0, 1}, QStringLiteral("alice"), QStringLiteral("vision"), {});
        const QList<PendingRun> queue{run(10, 1, QStringLiteral("alice"), QStringLiteral("vision"), {}, kNow - kMin),
                run(11, 1, QStringLiteral("alice"), QStringLiteral("vision"), {}, kNow)};
        const SchedulerDecision d = schedule(s, queue, fcfsWith({a100}), kNow);
        // The first goes to the node in no pool; a1's free GPUs are not for vision.
        QVERIFY(placementOf(d, 10));
        QCOMPARE(placementOf(d, 10)->nodes.front().node, QStringLiteral("n1"));
        QCOMPARE(placementOf(d, 10)->pool, QString());
        QCOMPARE(reasonOf(d, 11), QStringLiteral("waiting: project vision uses 2 of its 2 GPUs in pool a100"));
    }

    // A pool none of whose nodes is there (a label removed) keeps its runs
    // waiting, naming the pool and its labels, instead of failing them as
    // unsatisfiable; they start once a node carries the labels again.
    void emptyPoolWaitsAndSaysSo()
    {
        const ResourcePool lab = pool(QStringLiteral("lab"), QStringLiteral("lab"));
        ClusterState s;
        s.nodes << makeNode(QStringLiteral("local"), 1);
        const QList<PendingRun> queue{
                run(10, 1, QStringLiteral("alice"), QStringLiteral("nlp"), QStringLiteral("lab"))};
        SchedulerDecision d = schedule(s, queue, fcfsWith({lab}), kNow);
        QCOMPARE(kindOf(d, 10), PendingKind::EmptyPool);
        QCOMPARE(reasonOf(d, 10), QStringLiteral("waiting: pool lab has no nodes (none carries its labels: lab)"));
        s.nodes[0].labels << QStringLiteral("lab");
        d = schedule(s, queue, fcfsWith({lab}), kNow);
        QVERIFY(placementOf(d, 10));
    }

    void unknownPoolWaitsAndSaysSo()
    {
        ClusterState s;
        s.nodes << labelled(QStringLiteral("a1"), 4, QStringLiteral("a100"));
        const QList<PendingRun> queue{
                run(10, 1, QStringLiteral("alice"), QStringLiteral("vision"), QStringLiteral("a10"), kNow - kMin),
                run(11, 1, QStringLiteral("alice"), QStringLiteral("vision"), QStringLiteral("a100"), kNow)};
        Policy strict = fcfsWith({pool(QStringLiteral("a100"), QStringLiteral("a100")),
                pool(QStringLiteral("v100"), QStringLiteral("v100"))});
        strict.backfill = false;
        const SchedulerDecision d = schedule(s, queue, strict, kNow);
        QCOMPARE(reasonOf(d, 10), QStringLiteral("waiting: no pool named a10 (pools: a100, v100)"));
        QVERIFY(placementOf(d, 11));
        // Without pools, `pool:` means nothing.
        const SchedulerDecision none = schedule(s, queue, Policy::fcfs(), kNow);
        QCOMPARE(none.placements.size(), 2);
    }

    // A run whose pool is full borrows idle GPUs of a pool that lends, up to
    // its pool's borrow limit; never from one that does not lend.
    void borrowsFromALendingPool()
    {
        ResourcePool a100 = pool(QStringLiteral("a100"), QStringLiteral("a100"));
        a100.borrowLimit = 4;
        ResourcePool v100 = pool(QStringLiteral("v100"), QStringLiteral("v100"));
        ClusterState s;
        s.nodes << labelled(QStringLiteral("a1"), 2, QStringLiteral("a100"))
                << labelled(QStringLiteral("v1"), 4, QStringLiteral("v100"));
        s.running << running(1, QStringLiteral("a1"), {0, 1}, QStringLiteral("alice"), QStringLiteral("nlp"),
                QStringLiteral("a100"));
        const QList<PendingRun> queue{
                run(10, 2, QStringLiteral("bob"), QStringLiteral("nlp"), QStringLiteral("a100"), kNow - kMin)};

        SchedulerDecision d = schedule(s, queue, fcfsWith({a100, v100}), kNow);
        const RunPlacement* p = placementOf(d, 10);
        QVERIFY2(p, qPrintable(reasonOf(d, 10)));
        QCOMPARE(p->nodes.front().node, QStringLiteral("v1"));
        QVERIFY(p->borrowed);
        QCOMPARE(p->pool, QStringLiteral("a100"));
        QCOMPARE(p->lentBy, QStringLiteral("v100"));

        // A pool that does not lend keeps its GPUs.
        v100.lend = false;
        d = schedule(s, queue, fcfsWith({a100, v100}), kNow);
        QVERIFY(d.placements.isEmpty());
        QCOMPARE(kindOf(d, 10), PendingKind::WaitingForResources);

        // The borrow limit counts what the pool's runs borrowed already: 3 + 2 > 4.
        v100.lend = true;
        s.running << running(2, QStringLiteral("v1"), {0, 1, 2}, QStringLiteral("carol"), QStringLiteral("nlp"),
                QStringLiteral("a100"));
        s.nodes[1] = labelled(QStringLiteral("v1"), 8, QStringLiteral("v100"));
        d = schedule(s, queue, fcfsWith({a100, v100}), kNow);
        QVERIFY(d.placements.isEmpty());
        a100.borrowLimit = 5;
        d = schedule(s, queue, fcfsWith({a100, v100}), kNow);
        QVERIFY(placementOf(d, 10) && placementOf(d, 10)->borrowed);

        // Runs of the lending pool come first on its nodes: no borrowing while
        // its own pool has room.
        s.running.removeFirst();
        d = schedule(s, queue, fcfsWith({a100, v100}), kNow);
        QVERIFY(placementOf(d, 10));
        QCOMPARE(placementOf(d, 10)->nodes.front().node, QStringLiteral("a1"));
        QVERIFY(!placementOf(d, 10)->borrowed);
    }

    // The lending pool takes its GPUs back: a run of it, within its quota,
    // preempts a preemptible borrower whatever the borrower's priority, with
    // preemption by priority off; a borrower that is not preemptible is
    // waited for.
    void reclaimPreemptsPreemptibleBorrowers()
    {
        ResourcePool a100 = pool(QStringLiteral("a100"), QStringLiteral("a100"));
        ResourcePool v100 = pool(QStringLiteral("v100"), QStringLiteral("v100"));
        v100.borrowLimit = 2;
        ClusterState s;
        s.nodes << labelled(QStringLiteral("a1"), 2, QStringLiteral("a100"))
                << labelled(QStringLiteral("v1"), 1, QStringLiteral("v100"));
        s.running << running(10, QStringLiteral("a1"), {0, 1}, QStringLiteral("bob"), QStringLiteral("nlp"),
                QStringLiteral("v100")); // borrowed
        PendingRun owner = run(20, 2, QStringLiteral("alice"), QStringLiteral("vision"), QStringLiteral("a100"));
        owner.priority = 0;
        const Policy policy = fcfsWith({a100, v100}); // preemption (by priority) off
        QVERIFY(!policy.preemption);

        PreemptionInput in;
        in.running.insert(10, RunningRunInfo{10, /*preemptible*/ true, /*priority*/ 50, 20000, 0});
        SchedulerDecision d = decideAndPreempt(s, {owner}, policy, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().victims, QList<RunId>{10});
        QCOMPARE(d.preemptions.front().node, QStringLiteral("a1"));
        QCOMPARE(d.preemptions.front().reclaimPool, QStringLiteral("a100"));
        QCOMPARE(
                reasonOf(d, 20), QStringLiteral("waiting: reclaiming pool a100: preempting run 10 on a1 (grace 20 s)"));

        // Not preemptible: waited for.
        in = {};
        in.running.insert(10, RunningRunInfo{10, false, 50, 20000, 0});
        d = decideAndPreempt(s, {owner}, policy, in);
        QVERIFY(d.preemptions.isEmpty());
        QCOMPARE(kindOf(d, 20), PendingKind::WaitingForResources);

        // Over its own quota, the owner takes nothing back.
        a100.projects.limits.insert(QStringLiteral("vision"), 1);
        in = {};
        in.running.insert(10, RunningRunInfo{10, true, 50, 20000, 0});
        d = decideAndPreempt(s, {owner}, fcfsWith({a100, v100}), in);
        QVERIFY(d.preemptions.isEmpty());
        QCOMPARE(kindOf(d, 20), PendingKind::PoolQuota);

        // A run of a third pool is no owner of a1: it takes nothing back.
        a100.projects.limits.clear();
        ResourcePool h100 = pool(QStringLiteral("h100"), QStringLiteral("h100"));
        owner.pool = QStringLiteral("h100");
        s.nodes << labelled(QStringLiteral("h1"), 1, QStringLiteral("h100"));
        d = decideAndPreempt(s, {owner}, fcfsWith({a100, h100, v100}), in);
        QVERIFY(d.preemptions.isEmpty());
    }

    // With preemption by priority on too, the borrower goes before a
    // lower-priority run of the pool itself.
    void borrowersArePreemptedFirst()
    {
        ResourcePool a100 = pool(QStringLiteral("a100"), QStringLiteral("a100"));
        ResourcePool v100 = pool(QStringLiteral("v100"), QStringLiteral("v100"));
        v100.borrowLimit = 2;
        ClusterState s;
        s.nodes << labelled(QStringLiteral("a1"), 4, QStringLiteral("a100"))
                << labelled(QStringLiteral("v1"), 1, QStringLiteral("v100"));
        // Own run 11 started last (least work lost) and is of lowest priority:
        // preemption by priority alone would pick it.
        RunningAllocation own = running(11, QStringLiteral("a1"), {0, 1}, QStringLiteral("alice"),
                QStringLiteral("vision"), QStringLiteral("a100"));
        own.startMs = kNow - kMin;
        s.running << own
                  << running(10, QStringLiteral("a1"), {2, 3}, QStringLiteral("bob"), QStringLiteral("nlp"),
                             QStringLiteral("v100"));
        PendingRun owner = run(20, 2, QStringLiteral("carol"), QStringLiteral("vision"), QStringLiteral("a100"));
        owner.priority = 5;
        Policy policy = fcfsWith({a100, v100});
        policy.preemption = true;
        PreemptionInput in;
        in.running.insert(10, RunningRunInfo{10, true, 9, 30000, 0});
        in.running.insert(11, RunningRunInfo{11, true, 0, 30000, 0});
        const SchedulerDecision d = decideAndPreempt(s, {owner}, policy, in);
        QCOMPARE(d.preemptions.size(), 1);
        QCOMPARE(d.preemptions.front().victims, QList<RunId>{10});
        QCOMPARE(d.preemptions.front().gpuIndices, (QList<int>{2, 3}));
    }

    // What the Pools view and trainyardctl policy show (poolUsage): each
    // pool's nodes and GPUs, its own use, what it lent and borrowed, and each
    // account's use against its limit -- counted as the scheduler counts.
    void usageCountsOwnLentBorrowedAndQuota()
    {
        ResourcePool a100 = pool(QStringLiteral("a100"), QStringLiteral("a100"));
        a100.projects.limits.insert(QStringLiteral("vision"), 8);
        a100.users.defaultLimit = 6;
        a100.users.limits.insert(QStringLiteral("dave"), 2); // holds nothing: listed with 0
        a100.borrowLimit = 4;
        ResourcePool v100 = pool(QStringLiteral("v100"), QStringLiteral("v100"));
        ClusterState s;
        s.nodes << labelled(QStringLiteral("a1"), 4, QStringLiteral("a100"))
                << labelled(QStringLiteral("a2"), 4, QStringLiteral("a100"))
                << labelled(QStringLiteral("v1"), 8, QStringLiteral("v100")) << makeNode(QStringLiteral("cpu"), 2);
        // vision: 4 + 2 on a100's nodes and 2 borrowed on v1 = 8 of 8.
        s.running << running(1, QStringLiteral("a1"), {0, 1, 2, 3}, QStringLiteral("alice"), QStringLiteral("vision"),
                QStringLiteral("a100"))
                  << running(2, QStringLiteral("a2"), {0, 1}, QStringLiteral("bob"), QStringLiteral("vision"),
                             QStringLiteral("a100"))
                  << running(3, QStringLiteral("v1"), {0, 1}, QStringLiteral("bob"), QStringLiteral("vision"),
                             QStringLiteral("a100"))
                  // no pool named: charged to v100, where it runs
                  << running(4, QStringLiteral("v1"), {2, 3, 4}, QStringLiteral("carol"), QStringLiteral("nlp"), {})
                  // no pool named, on a node in no pool: nobody's
                  << running(5, QStringLiteral("cpu"), {0}, QStringLiteral("carol"), QStringLiteral("nlp"), {});
        const QList<PoolUse> use = poolUsage({a100, v100}, s);
        QCOMPARE(use.size(), 2);
        const PoolUse& a = use[0];
        QCOMPARE(a.name, QStringLiteral("a100"));
        QCOMPARE(a.nodes, (QStringList{QStringLiteral("a1"), QStringLiteral("a2")}));
        QCOMPARE(a.gpus, 8);
        QCOMPARE(a.used, 6);
        QCOMPARE(a.lent, 0);
        QCOMPARE(a.borrowed, 2);
        QCOMPARE(a.idle(), 2);
        QCOMPARE(a.projects, (QList<AccountUse>{{QStringLiteral("vision"), 8, 8}}));
        QCOMPARE(a.users,
                (QList<AccountUse>{{QStringLiteral("alice"), 4, 6}, {QStringLiteral("bob"), 4, 6},
                        {QStringLiteral("dave"), 0, 2}}));
        const PoolUse& v = use[1];
        QCOMPARE(v.nodes, QStringList{QStringLiteral("v1")});
        QCOMPARE(v.gpus, 8);
        QCOMPARE(v.used, 3);
        QCOMPARE(v.lent, 2);
        QCOMPARE(v.borrowed, 0);
        QCOMPARE(v.idle(), 3);
        QCOMPARE(v.users, (QList<AccountUse>{{QStringLiteral("carol"), 3, -1}}));
        QCOMPARE(v.projects, (QList<AccountUse>{{QStringLiteral("nlp"), 3, -1}}));

        // The scheduler's own count agrees: vision is at 8 of 8 in a100.
        const QList<ResourcePool> pools{a100, v100};
        PoolUsage sched(pools);
        sched.chargeRunning(s, nodeToPool(pools, s.nodes));
        QCOMPARE(sched.used(0, QStringLiteral("vision"), true), a.projects.front().used);
        QCOMPARE(sched.borrowed(0), a.borrowed);

        QVERIFY(poolUsage({}, s).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestPools)
#include "TestPools.moc"
