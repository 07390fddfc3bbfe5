// Resource pools end to end (issue #25): the run engine, the real agent on
// the local node and real child processes. The node (one recorded GPU
// through a stand-in nvidia-smi: there is no GPU here) is in pool a100 (its
// `labels: []` takes every node: the local node has no stored labels),
// where project vision may use 1 GPU. Under
// strict FCFS, a second vision run waits with the quota as its reason, a
// later run of another project starts past it (a quota-blocked run holds up
// nobody), and the vision run starts once the first one's GPU is back.
#include "tests/support/TestSupport.h"

#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestPoolsEndToEnd final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<test::StandInGpu> m_gpu;
    test::LocalEngine m_rig; // store, engine with the local node

    JobSpec spec(const QString& yaml)
    {
        return test::parsedSpec(yaml, QStringLiteral("pools.yaml"), m_dir.filePath(QStringLiteral("wd")));
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        QDir(m_dir.path()).mkpath(QStringLiteral("wd"));
        m_gpu = std::make_unique<test::StandInGpu>();
        QVERIFY(m_gpu->ok);
        const QString db = m_dir.filePath(QStringLiteral("pools.db"));
        // Strict FCFS: a run that waits for resources would hold up every later one.
        test::writeFile(db + QStringLiteral(".scheduler.json"),
                R"({"ordering": "fcfs", "backfill": false,
                    "pools": {"a100": {"labels": [], "quota": {"projects": {"vision": 1}}}}})");
        const QString error = m_rig.open(db, m_dir.filePath(QStringLiteral("agent-state")), /*withRetries=*/false);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void cleanup()
    {
        m_rig.close();
        m_gpu.reset();
    }

    void quotaBlockedRunWaitsWithItsReasonAndStartsWhenUsageDrops()
    {
        const QString release = m_dir.filePath(QStringLiteral("release"));
        // Holds the GPU (vision's 1 of 1 in a100) until told, a minute at most.
        const auto first = m_rig.engine->submit(spec(
                QStringLiteral("name: first\nproject: vision\npool: a100\nresources: {gpus: 1}\n"
                               "command: 'i=0; while [ ! -e %1 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done'\n")
                        .arg(release)));
        QVERIFY(first);
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*first)->state, RunState::Running, 15000);
        QCOMPARE(m_rig.store->run(*first)->gpus, QList<int>{0});

        QSignalSpy reasons(m_rig.engine.get(), &RunEngine::pendingReasonsChanged);
        const auto second = m_rig.engine->submit(
                spec(QStringLiteral("name: second\nproject: vision\npool: a100\nresources: {gpus: 1}\n"
                                    "command: 'echo \"second on $CUDA_VISIBLE_DEVICES\"'\n")));
        QVERIFY(second);
        const QString reason = QStringLiteral("waiting: project vision uses 1 of its 1 GPU in pool a100");
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*second)->pendingReason, reason, 15000);
        QCOMPARE(m_rig.store->run(*second)->state, RunState::Queued);

        // Submitted later, of another project and without GPUs: it starts
        // now, past the run over its quota.
        const auto other = m_rig.engine->submit(spec(QStringLiteral(
                "name: other\nproject: nlp\npool: a100\nresources: {gpus: 0, cpus: 1}\ncommand: 'echo other'\n")));
        QVERIFY(other);
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*other)->state, RunState::Succeeded, 15000);
        QCOMPARE(m_rig.store->run(*first)->state, RunState::Running);
        QCOMPARE(m_rig.store->run(*second)->state, RunState::Queued);
        QCOMPARE(m_rig.store->run(*second)->pendingReason, reason);

        // The first ends: vision holds nothing in a100, and the second gets the GPU.
        test::writeFile(release, "go\n");
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*first)->state, RunState::Succeeded, 15000);
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*second)->state, RunState::Succeeded, 15000);
        const RunRecord s = *m_rig.store->run(*second);
        QCOMPARE(s.gpus, QList<int>{0});
        QVERIFY(s.startedAt >= m_rig.store->run(*first)->finishedAt.addMSecs(-50));
        QCOMPARE(s.pendingReason, QString());
        bool said = false;
        for (const QList<QVariant>& args : std::as_const(reasons))
            said = said || args.at(0).value<QHash<RunId, QString>>().value(*second) == reason;
        QVERIFY2(said, "no pass said the quota to the engine's clients");
    }
};

QTEST_GUILESS_MAIN(TestPoolsEndToEnd)
#include "TestPools.moc"
