#include "core/runs/FairShareLedger.h"
#include "core/runs/QueuePolicy.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace ty;

class TestQueuePolicy final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("t.db")); }
    void write(const QByteArray& json)
    {
        QFile f(queuePolicyPath(db()));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(json);
    }

private Q_SLOTS:
    void defaultsWithoutFile()
    {
        const auto p = loadQueuePolicy(db());
        QVERIFY(p);
        QCOMPARE(p->ordering, sched::Ordering::Priority);
        QVERIFY(p->backfill);
        QCOMPARE(queuePolicyName(*p), QStringLiteral("backfill"));
    }

    void roundTrip()
    {
        auto p = *queuePolicyNamed(QStringLiteral("fair-share"));
        p.shares = {{QStringLiteral("alice"), 2.0}, {QStringLiteral("bob"), 1.0}};
        p.usageHalfLifeMs = 3600 * 1000;
        p.fairShareBy = sched::FairShareBy::Project;
        QVERIFY(saveQueuePolicy(db(), p));
        const auto back = loadQueuePolicy(db());
        QVERIFY2(back, qPrintable(back ? QString() : back.error().message));
        QCOMPARE(back->ordering, sched::Ordering::FairShare);
        QVERIFY(back->backfill);
        QCOMPARE(back->shares, p.shares);
        QCOMPARE(back->usageHalfLifeMs, 3600 * 1000);
        QCOMPARE(back->fairShareBy, sched::FairShareBy::Project);
    }

    void perQueue()
    {
        write(R"({"ordering": "priority", "aging_per_hour": 3, "queues": {"short": {"ordering": "sjf"}, "strict": {"ordering": "fcfs", "backfill": false}}})");
        const auto all = loadQueuePolicies(db());
        QVERIFY2(all, qPrintable(all ? QString() : all.error().message));
        QCOMPARE(all->defaults.ordering, sched::Ordering::Priority);
        QCOMPARE(all->forQueue(QStringLiteral("short")).ordering, sched::Ordering::ShortestJobFirst);
        QCOMPARE(all->forQueue(QStringLiteral("short")).agingPerHour, 3.0); // from the top level
        QVERIFY(!all->forQueue(QStringLiteral("strict")).backfill);
        QCOMPARE(all->forQueue(QStringLiteral("other")).ordering, sched::Ordering::Priority);
        // Saving the default policy keeps the queues.
        QVERIFY(saveQueuePolicy(db(), *queuePolicyNamed(QStringLiteral("fcfs"))));
        const auto again = loadQueuePolicies(db());
        QVERIFY(again);
        QCOMPARE(again->defaults.ordering, sched::Ordering::Fcfs);
        QCOMPARE(again->queues.size(), 2);
        write(R"({"queues": {"x": {"queues": {}}}})");
        const auto nested = loadQueuePolicies(db());
        QVERIFY(!nested);
        QVERIFY2(nested.error().message.contains(QStringLiteral("(queue 'x'): unknown key 'queues'")),
                qPrintable(nested.error().message));
        QFile::remove(queuePolicyPath(db()));
    }

    // The issue's example, read into every queue's policy, and kept when a
    // policy is saved (trainyardctl policy, the Queue view).
    void pools()
    {
        write(R"({"ordering": "fcfs", "queues": {"short": {"ordering": "sjf"}},
                  "pools": {"v100": {"labels": ["v100"], "lend": false},
                            "a100": {"labels": ["a100", "ib"],
                                     "quota": {"users": {"default": 8, "alice": 16}, "projects": {"vision": 8}},
                                     "lend": true, "borrow_limit": 4}}})");
        const auto all = loadQueuePolicies(db());
        QVERIFY2(all, qPrintable(all ? QString() : all.error().message));
        const QList<sched::ResourcePool>& pools = all->defaults.pools;
        QCOMPARE(pools.size(), 2);
        QCOMPARE(pools[0].name, QStringLiteral("a100")); // name order
        QCOMPARE(pools[0].labels, (QStringList{QStringLiteral("a100"), QStringLiteral("ib")}));
        QCOMPARE(pools[0].users.limitOf(QStringLiteral("alice")), 16);
        QCOMPARE(pools[0].users.limitOf(QStringLiteral("bob")), 8);
        QCOMPARE(pools[0].projects.limitOf(QStringLiteral("vision")), 8);
        QCOMPARE(pools[0].projects.limitOf(QStringLiteral("nlp")), -1); // no default: no limit
        QVERIFY(pools[0].lend);
        QCOMPARE(pools[0].borrowLimit, 4);
        QCOMPARE(pools[1].name, QStringLiteral("v100"));
        QVERIFY(!pools[1].lend);
        QCOMPARE(pools[1].borrowLimit, 0);
        QVERIFY(pools[1].users.isEmpty());
        QCOMPARE(all->forQueue(QStringLiteral("short")).pools, pools);

        auto next = *all;
        next.defaults.ordering = sched::Ordering::Priority;
        QVERIFY(saveQueuePolicies(db(), next));
        const auto again = loadQueuePolicies(db());
        QVERIFY2(again, qPrintable(again ? QString() : again.error().message));
        QCOMPARE(again->defaults.pools, pools);
        QCOMPARE(again->forQueue(QStringLiteral("short")).pools, pools);
        QFile::remove(queuePolicyPath(db()));
    }

    void badFiles_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("not json") << QByteArray("{ordering") << QStringLiteral(": offset 2: unterminated object");
        QTest::newRow("array") << QByteArray("[1]") << QStringLiteral(": must be a JSON object");
        QTest::newRow("unknown key") << QByteArray(R"({"odering": "fcfs"})")
                                     << QStringLiteral(": unknown key 'odering'");
        QTest::newRow("bad ordering")
                << QByteArray(R"({"ordering": "lottery"})")
                << QStringLiteral(": 'ordering' must be fcfs, priority, sjf or fair-share, not 'lottery'");
        QTest::newRow("negative aging") << QByteArray(R"({"aging_per_hour": -1})")
                                        << QStringLiteral(": 'aging_per_hour' must be a number >= 0");
        QTest::newRow("bad share") << QByteArray(R"({"shares": {"a": "x"}})")
                                   << QStringLiteral(": share of 'a' must be a number >= 0");
        // Resource pools (issue #25): each error names the key.
        QTest::newRow("pools not an object") << QByteArray(R"({"pools": ["a100"]})")
                                             << QStringLiteral(": 'pools' must be an object of pool name -> pool");
        QTest::newRow("pool unknown key")
                << QByteArray(R"({"pools": {"a100": {"label": ["a100"]}}})")
                << QStringLiteral(": unknown key 'pools.a100.label' (known: labels, quota, lend, borrow_limit)");
        QTest::newRow("pool labels not strings")
                << QByteArray(R"({"pools": {"a100": {"labels": "a100"}}})")
                << QStringLiteral(": 'pools.a100.labels' must be an array of node labels");
        QTest::newRow("user quota not a number")
                << QByteArray(R"({"pools": {"a100": {"quota": {"users": {"alice": "lots"}}}}})")
                << QStringLiteral(": 'pools.a100.quota.users.alice' must be a whole number of GPUs >= 0, not 'lots'");
        QTest::newRow("project quota fractional")
                << QByteArray(R"({"pools": {"a100": {"quota": {"projects": {"vision": 2.5}}}}})")
                << QStringLiteral(": 'pools.a100.quota.projects.vision' must be a whole number of GPUs >= 0, not 2.5");
        QTest::newRow("quota unknown key")
                << QByteArray(R"({"pools": {"a100": {"quota": {"groups": {}}}}})")
                << QStringLiteral(": unknown key 'pools.a100.quota.groups' (known: users, projects)");
        QTest::newRow("lend not a boolean") << QByteArray(R"({"pools": {"a100": {"lend": "yes"}}})")
                                            << QStringLiteral(": 'pools.a100.lend' must be true or false");
        QTest::newRow("negative borrow limit")
                << QByteArray(R"({"pools": {"a100": {"borrow_limit": -4}}})")
                << QStringLiteral(": 'pools.a100.borrow_limit' must be a whole number of GPUs >= 0, not -4");
        QTest::newRow("pool name") << QByteArray(R"({"pools": {"a 100": {}}})")
                                   << QStringLiteral(": pool name 'a 100' must be letters, digits, '.', '_' or '-'");
        QTest::newRow("pools in a queue")
                << QByteArray(R"({"queues": {"short": {"pools": {}}}})")
                << QStringLiteral(" (queue 'short'): 'pools' are shared by every queue: set them at the top level");
    }

    void badFiles()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        write(json);
        const auto p = loadQueuePolicy(db());
        QVERIFY(!p);
        QVERIFY2(p.error().message.startsWith(queuePolicyPath(db()) + message), qPrintable(p.error().message));
        QFile::remove(queuePolicyPath(db()));
    }

    void fairShareUsageDecays()
    {
        sched::Policy p;
        p.usageHalfLifeMs = 3600 * 1000; // one hour
        const qint64 now = 1'800'000'000'000;
        RunRecord a; // alice: 2 GPUs for 1 h, ended 1 h ago -> 2 GPU-h, halved
        a.gpus = {0, 1};
        a.startedAt = QDateTime::fromMSecsSinceEpoch(now - 2 * 3600 * 1000, Qt::UTC);
        a.finishedAt = QDateTime::fromMSecsSinceEpoch(now - 3600 * 1000, Qt::UTC);
        a.name = QStringLiteral("alice");
        RunRecord b; // bob: 1 GPU, running for 30 min -> 0.5 GPU-h, no decay
        b.gpus = {2};
        b.startedAt = QDateTime::fromMSecsSinceEpoch(now - 1800 * 1000, Qt::UTC);
        b.name = QStringLiteral("bob");
        RunRecord c; // CPU-only: no GPU-hours
        c.startedAt = a.startedAt;
        c.finishedAt = a.finishedAt;
        c.name = QStringLiteral("carol");
        const auto usage = fairShareUsage({a, b, c}, p, now, [](const RunRecord& r) { return r.name; });
        QCOMPARE(usage.usageGpuHours.value(QStringLiteral("alice")), 1.0);
        QCOMPARE(usage.usageGpuHours.value(QStringLiteral("bob")), 0.5);
        QVERIFY(!usage.usageGpuHours.contains(QStringLiteral("carol")));
    }

    void ledgerChargesWhatTheRunsWould()
    {
        // The ledger keeps ended runs between passes; what it charges must be
        // what fairShareUsage charges for the same runs, by user or project.
        sched::Policy p;
        p.usageHalfLifeMs = 3600 * 1000;
        const qint64 hour = 3600 * 1000;
        const qint64 now = 1'800'000'000'000;
        FairShareLedger ledger;
        QList<RunRecord> runs;
        const auto add
                = [&](RunId id, int gpus, qint64 startAgo, qint64 endAgo, const QString& user, const QString& project) {
                      RunRecord r;
                      r.id = id;
                      for (int g = 0; g < gpus; ++g)
                          r.gpus << g;
                      r.startedAt = QDateTime::fromMSecsSinceEpoch(now - startAgo, Qt::UTC);
                      r.finishedAt = QDateTime::fromMSecsSinceEpoch(now - endAgo, Qt::UTC);
                      r.name = user + u'/' + project;
                      runs << r;
                      ledger.record(id, {now - startAgo, now - endAgo, gpus, user, project});
                  };
        add(1, 2, 2 * hour, hour, QStringLiteral("alice"), QStringLiteral("vision"));  // 2 GPU-h, halved
        add(2, 1, 5 * hour, 3 * hour, QStringLiteral("alice"), QStringLiteral("nlp")); // 2 GPU-h, an eighth
        add(3, 4, hour / 2, 0, QStringLiteral("bob"), QStringLiteral("vision"));       // 2 GPU-h, whole
        add(4, 0, hour, 0, QStringLiteral("carol"), QStringLiteral("nlp"));            // no GPU: not kept
        QCOMPARE(ledger.size(), 3);
        for (const auto by : {sched::FairShareBy::User, sched::FairShareBy::Project}) {
            sched::FairShareState fromLedger;
            ledger.chargeTo(fromLedger, now, p.usageHalfLifeMs, by);
            const auto fromRuns = fairShareUsage(runs, p, now, [by](const RunRecord& r) {
                return r.name.section(
                        u'/', by == sched::FairShareBy::User ? 0 : 1, by == sched::FairShareBy::User ? 0 : 1);
            });
            QCOMPARE(fromLedger.usageGpuHours.keys(), fromRuns.usageGpuHours.keys());
            for (auto it = fromRuns.usageGpuHours.cbegin(); it != fromRuns.usageGpuHours.cend(); ++it)
                QVERIFY2(std::abs(fromLedger.usageGpuHours.value(it.key()) - it.value()) < 1e-12, qPrintable(it.key()));
        }
        sched::FairShareState byUser;
        ledger.chargeTo(byUser, now, p.usageHalfLifeMs, sched::FairShareBy::User);
        QCOMPARE(byUser.usageGpuHours.value(QStringLiteral("alice")), 1.0 + 0.25);
        QCOMPARE(byUser.usageGpuHours.value(QStringLiteral("bob")), 2.0);
        // Out of the window: dropped; a run recorded again replaces itself.
        ledger.dropEndedBefore(now - 2 * hour);
        QCOMPARE(ledger.size(), 2);
        QVERIFY(!ledger.contains(2));
        ledger.record(3, {now - hour, now, 1, QStringLiteral("bob"), QString()});
        sched::FairShareState after;
        ledger.chargeTo(after, now, p.usageHalfLifeMs, sched::FairShareBy::User);
        QCOMPARE(after.usageGpuHours.value(QStringLiteral("bob")), 1.0);
        QCOMPARE(after.usageGpuHours.value(QStringLiteral("alice")), 1.0);
    }
};

QTEST_GUILESS_MAIN(TestQueuePolicy)
#include "TestQueuePolicy.moc"
