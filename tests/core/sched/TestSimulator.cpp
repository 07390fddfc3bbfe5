// ty::sched::simulate() and the scenarios that need simulated time:
// starvation, two large gangs, fair-share convergence over a day, node
// outages with and without checkpoint resume (#25).

#include "SchedTestUtil.h"
#include "core/sched/Simulator.h"

#include <QTest>

#include <random>

using namespace ty::sched;
using namespace ty::sched::test;

namespace {

SimJob job(ty::RunId id, qint64 submit, int gpus, qint64 runtime, int nodes = 1, int priority = 0,
        const QString& user = u"alice"_qs)
{
    SimJob j;
    j.run = makeRun(id, submit, gpus, runtime, nodes);
    j.run.priority = priority;
    j.run.user = user;
    j.runtimeMs = runtime;
    return j;
}

const SimJobOutcome& outcome(const SimReport& r, ty::RunId id)
{
    for (const SimJobOutcome& o : r.jobs)
        if (o.id == id)
            return o;
    qFatal("no outcome for run %lld", qint64(id));
}

// One 8-GPU node; 1-GPU runs (30 min) arrive every 3 min for a day -- more
// than the node can serve -- and one 8-GPU run arrives after 10 minutes.
QList<SimJob> starvationWorkload(int streamPriority)
{
    QList<SimJob> jobs;
    ty::RunId id = 1;
    for (qint64 t = 0; t < 24 * kHour; t += 3 * kMin)
        jobs << job(id++, t, 1, 30 * kMin, 1, streamPriority);
    jobs << job(9999, 10 * kMin, 8, kHour);
    return jobs;
}

} // namespace

class TestSimulator final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void metricsOnAHandComputedWorkload();
    void starvationUnderBackfill();
    void starvationUnderPriorityAging();
    void twoLargeGangsDoNotDeadlock();
    void fairShareConvergesWithinADay_data();
    void fairShareConvergesWithinADay();
    void loneUserGetsWholeCluster();
    void outageRestartsARunWithoutCheckpoints();
    void outageResumesFromTheNewestCheckpoint();
    void outageRequeuesOnAnotherNodeAndKeepsTheDownNodeEmpty();
};

// One 1-GPU node down from 3.5 h to 4 h under a 10 h run: without
// checkpoints all 3.5 h are lost and it runs 10 h again from 4 h.
void TestSimulator::outageRestartsARunWithoutCheckpoints()
{
    SimOptions o;
    o.outages = {SimNodeOutage{u"a"_qs, 3 * kHour + 30 * kMin, 4 * kHour}};
    const SimReport r = simulate({makeNode(u"a"_qs, 1)}, {job(1, 0, 1, 10 * kHour)}, o);
    const SimJobOutcome& j = outcome(r, 1);
    QCOMPARE(j.startMs, 0);
    QCOMPARE(j.attempts, 2);
    QCOMPARE(j.endMs, 14 * kHour);
    QCOMPARE(j.usedMs, 13 * kHour + 30 * kMin);
    QCOMPARE(r.interruptions, 1);
    QCOMPARE(r.lostGpuHours, 3.5);
    QCOMPARE(r.usedGpuHours, 13.5);
    QCOMPARE(r.makespanMs, 14 * kHour);
}

// The same outage with a checkpoint every hour and 6 min to resume: 3 h are
// kept, 0.5 h lost; a second outage inside the resume's 6 min loses only
// those minutes (nothing new was checkpointed), and the third attempt pays
// the overhead again.
void TestSimulator::outageResumesFromTheNewestCheckpoint()
{
    SimOptions o;
    o.checkpointIntervalMs = kHour;
    o.restartOverheadMs = 6 * kMin;
    o.outages = {SimNodeOutage{u"a"_qs, 3 * kHour + 30 * kMin, 4 * kHour}};
    SimReport r = simulate({makeNode(u"a"_qs, 1)}, {job(1, 0, 1, 10 * kHour)}, o);
    QCOMPARE(outcome(r, 1).attempts, 2);
    QCOMPARE(outcome(r, 1).endMs, 4 * kHour + 6 * kMin + 7 * kHour);
    QCOMPARE(r.lostGpuHours, 0.5);
    QCOMPARE(r.usedGpuHours, 3.5 + 7.1);

    o.outages << SimNodeOutage{u"a"_qs, 4 * kHour + 3 * kMin, 5 * kHour};
    r = simulate({makeNode(u"a"_qs, 1)}, {job(1, 0, 1, 10 * kHour)}, o);
    QCOMPARE(outcome(r, 1).attempts, 3);
    QCOMPARE(r.interruptions, 2);
    QCOMPARE(outcome(r, 1).endMs, 5 * kHour + 6 * kMin + 7 * kHour);
    QCOMPARE(r.lostGpuHours, 0.55); // 0.5 h + 3 min
}

// Two nodes: the run lost on `a` starts on `b` in the same pass, and a run
// arriving while `a` is down waits for `b` rather than land on `a`.
void TestSimulator::outageRequeuesOnAnotherNodeAndKeepsTheDownNodeEmpty()
{
    SimOptions o;
    o.outages = {SimNodeOutage{u"a"_qs, kHour, 10 * kHour}};
    const QList<SimJob> jobs{job(1, 0, 1, 2 * kHour), job(2, 90 * kMin, 1, kHour)};
    const SimReport r = simulate({makeNode(u"a"_qs, 1), makeNode(u"b"_qs, 1)}, jobs, o);
    QCOMPARE(outcome(r, 1).startMs, 0);
    QCOMPARE(outcome(r, 1).endMs, 3 * kHour); // restarted on b at 1 h
    QCOMPARE(outcome(r, 2).startMs, 3 * kHour);
    QCOMPARE(outcome(r, 2).endMs, 4 * kHour);
    QCOMPARE(r.lostGpuHours, 1.0);
    QCOMPARE(r.interruptions, 1);
}

void TestSimulator::metricsOnAHandComputedWorkload()
{
    const QList<NodeState> nodes{makeNode(u"a"_qs, 2)};
    const QList<SimJob> jobs{job(1, 0, 2, kHour), job(2, 0, 1, kHour), job(3, 0, 1, 30 * kMin)};
    SimOptions o;
    o.starvationBoundMs = 30 * kMin;
    const SimReport r = simulate(nodes, jobs, o);
    QCOMPARE(outcome(r, 1).startMs, 0);
    QCOMPARE(outcome(r, 2).startMs, kHour);
    QCOMPARE(outcome(r, 3).startMs, kHour);
    QCOMPARE(r.meanWaitMs, double(40 * kMin));
    QCOMPARE(r.p95WaitMs, double(kHour));
    QCOMPARE(r.makespanMs, 2 * kHour);
    QCOMPARE(r.gpuUtilisation, 0.875); // (2*1 + 1 + 0.5) GPU-h / (2 GPUs * 2 h)
    QCOMPARE(r.starved, 2);
    QCOMPARE(r.started, 3);
    QCOMPARE(r.passes, 2); // t=0 and t=1h; t=1.5h and t=2h have an empty queue
}

void TestSimulator::starvationUnderBackfill()
{
    SimOptions o;
    o.policy = Policy::easyBackfill();
    o.horizonMs = 24 * kHour;
    const SimReport r = simulate({makeNode(u"a"_qs, 8)}, starvationWorkload(0), o);
    const SimJobOutcome& big = outcome(r, 9999);
    QVERIFY2(big.startMs >= 0, "the 8-GPU run was starved under backfill");
    // It waits at most for the runs already running when it became head (30 min each).
    QVERIFY2(big.startMs - big.submitMs <= kHour, qPrintable(QString::number(big.startMs - big.submitMs)));
    QVERIFY(r.started > 350); // the node stays busy (at most 384 half-hour runs fit in a day)
}

void TestSimulator::starvationUnderPriorityAging()
{
    // The stream has priority 2, the big run 0.
    SimOptions o;
    o.policy = Policy::priorityAging(1.0);
    o.horizonMs = 24 * kHour;
    o.tickMs = 5 * kMin;
    SimReport r = simulate({makeNode(u"a"_qs, 8)}, starvationWorkload(2), o);
    const SimJobOutcome& big = outcome(r, 9999);
    QVERIFY2(big.startMs >= 0, "the 8-GPU run was starved under priority with aging");
    QVERIFY2(big.startMs - big.submitMs <= 6 * kHour, qPrintable(QString::number(big.startMs - big.submitMs)));

    // Control: without aging the same workload does starve it -- the test can fail.
    o.policy = Policy::priorityAging(0.0);
    o.starvationBoundMs = 12 * kHour;
    r = simulate({makeNode(u"a"_qs, 8)}, starvationWorkload(2), o);
    QCOMPARE(outcome(r, 9999).startMs, -1);
    QVERIFY(r.starved >= 1);
}

void TestSimulator::twoLargeGangsDoNotDeadlock()
{
    // 4 nodes x 8 GPUs, busy with small runs; two gangs each need 3 whole nodes.
    const QList<NodeState> nodes{
            makeNode(u"n1"_qs, 8), makeNode(u"n2"_qs, 8), makeNode(u"n3"_qs, 8), makeNode(u"n4"_qs, 8)};
    const Policy policies[] = {Policy::fcfs(), Policy::easyBackfill(), Policy::priorityAging(1.0),
            Policy::fairShare({}), Policy::shortestJobFirst(kHour)};
    for (const Policy& p : policies) {
        std::mt19937_64 rng(7);
        QList<SimJob> jobs;
        ty::RunId id = 1;
        for (int i = 0; i < 40; ++i)
            jobs << job(id++, qint64(i) * kMin, 1 + int(rng() % 4), qint64(20 + rng() % 100) * kMin, 1, 0,
                    i % 2 ? u"alice"_qs : u"bob"_qs);
        jobs << job(501, 5 * kMin, 8, 2 * kHour, 3, 0, u"alice"_qs);
        jobs << job(502, 6 * kMin, 8, 2 * kHour, 3, 0, u"bob"_qs);
        SimOptions o;
        o.policy = p;
        const SimReport r = simulate(nodes, jobs, o);
        const SimJobOutcome& a = outcome(r, 501);
        const SimJobOutcome& b = outcome(r, 502);
        const QString what = orderingName(p.ordering) + (p.backfill ? u"+backfill"_qs : QString());
        QVERIFY2(a.startMs >= 0 && b.startMs >= 0, qPrintable(what + u": a gang never started"_qs));
        QVERIFY2(a.endMs <= b.startMs || b.endMs <= a.startMs, qPrintable(what + u": gangs overlapped on 4 nodes"_qs));
        QCOMPARE(r.neverStarted, 0);
    }
}

void TestSimulator::fairShareConvergesWithinADay_data()
{
    QTest::addColumn<double>("aliceShare");
    QTest::addColumn<double>("bobShare");
    QTest::newRow("3:1") << 3.0 << 1.0;
    QTest::newRow("1:1") << 1.0 << 1.0;
    QTest::newRow("1:4") << 1.0 << 4.0;
}

void TestSimulator::fairShareConvergesWithinADay()
{
    QFETCH(double, aliceShare);
    QFETCH(double, bobShare);
    // 16 GPUs; both users keep far more 1-2 GPU work queued than the cluster
    // can serve in a day (runtimes 10-60 min, seeded), so shares decide.
    const QList<NodeState> nodes{makeNode(u"a"_qs, 8), makeNode(u"b"_qs, 8)};
    std::mt19937_64 rng(42);
    QList<SimJob> jobs;
    ty::RunId id = 1;
    for (int i = 0; i < 1600; ++i) {
        const QString user = i % 2 ? u"bob"_qs : u"alice"_qs;
        const qint64 submit = qint64(rng() % 120) * kMin; // both flood the queue in the first two hours
        jobs << job(id++, submit, 1 + int(rng() % 2), qint64(10 + rng() % 51) * kMin, 1, 0, user);
    }
    SimOptions o;
    o.policy = Policy::fairShare({{u"alice"_qs, aliceShare}, {u"bob"_qs, bobShare}});
    o.policy.usageHalfLifeMs = 12 * kHour;
    o.horizonMs = 24 * kHour;
    const SimReport r = simulate(nodes, jobs, o);
    const double alice = r.gpuHoursByAccount.value(u"alice"_qs);
    const double bob = r.gpuHoursByAccount.value(u"bob"_qs);
    const double fa = alice / (alice + bob);
    const double want = aliceShare / (aliceShare + bobShare);
    qInfo("alice %.1f GPU-h, bob %.1f GPU-h: alice's fraction %.3f, share %.3f, utilisation %.3f", alice, bob, fa, want,
            r.gpuUtilisation);
    QVERIFY2(qAbs(fa - want) <= 0.05, qPrintable(QStringLiteral("fraction %1 vs share %2").arg(fa).arg(want)));
    QVERIFY(r.gpuUtilisation > 0.9); // fair share orders; it must not idle GPUs
}

void TestSimulator::loneUserGetsWholeCluster()
{
    const QList<NodeState> nodes{makeNode(u"a"_qs, 8), makeNode(u"b"_qs, 8)};
    QList<SimJob> jobs;
    for (int i = 0; i < 400; ++i)
        jobs << job(i + 1, 0, 1, kHour, 1, 0, u"carol"_qs);
    SimOptions o;
    o.policy = Policy::fairShare({{u"alice"_qs, 3.0}, {u"bob"_qs, 1.0}, {u"carol"_qs, 0.1}});
    o.horizonMs = 12 * kHour;
    const SimReport r = simulate(nodes, jobs, o);
    QCOMPARE(r.gpuUtilisation, 1.0);
    QCOMPARE(outcome(r, 16).startMs, 0); // all 16 GPUs at once
}

QTEST_GUILESS_MAIN(TestSimulator)
#include "TestSimulator.moc"
