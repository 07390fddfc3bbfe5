// Issue #25: a node gone for good -> the run is retried on the other host
// from the checkpoint copied off the lost one. Two real sshd "hosts" (ws1 on
// one sshd, ws2 on another, so ws1 can be stopped alone), the real agent on
// each (its own state folder: `sync: true` gives each node its own copy of
// the workdir, so a checkpoint on ws1 is not on ws2), the real RunEngine,
// RetryRunner, NodeLossWatch and CheckpointMirror, a real SQLite file.
// Skipped (QSKIP) unless root with /usr/sbin/sshd, as in CI.
#include "SshdFixture.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/nodes/WorkdirSync.h"
#include "core/retry/CheckpointMirror.h"
#include "core/retry/Checkpoints.h"
#include "core/retry/NodeLossWatch.h"
#include "core/retry/RetryRunner.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"
#include "core/store/RunNotice.h"
#include "tests/support/TestSupport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestCheckpointMigration final : public QObject {
    Q_OBJECT

    test::SshdFixture m_sshd1; // serves ws1
    test::SshdFixture m_sshd2; // serves ws2
    QTemporaryDir m_tmp;

    QString stateDir(const QString& node) const { return m_tmp.filePath(QStringLiteral("state-") + node); }
    QString dbPath() const { return m_tmp.filePath(QStringLiteral("db/trainyard.db")); }

    static QString noticesOf(ResultStore& store, RunId run)
    {
        QStringList texts;
        for (const RunNotice& n : store.notices(run))
            texts << n.text;
        return texts.join(u'\n');
    }

    static QList<RunRecord> attemptsOf(ResultStore& store, RunId first)
    {
        const auto r = store.run(first);
        if (!r)
            return {};
        const RunGroupId group = groupIdOf(*r, RunGroupKind::Attempts);
        if (group == 0)
            return {*r};
        QList<RunRecord> out;
        for (const auto& [id, m] : store.groupMembers(group))
            out.append(*store.run(id));
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString skip = test::SshdFixture::skipReason();
        if (!skip.isEmpty())
            QSKIP(qPrintable(skip));
        QString error;
        QVERIFY2(m_sshd1.start(&error), qPrintable(error));
        QVERIFY2(m_sshd2.start(&error), qPrintable(error));
    }

    // A run on ws1 writes two complete checkpoints and one incomplete, then
    // ws1 is gone (its sshd stopped): past node_lost_after the run is lost,
    // its retry runs on ws2 and finds the newest complete checkpoint,
    // copied there before it started, at TRAINYARD_RESUME_FROM.
    void lostNodesRunResumesOnTheOtherHostFromTheCopiedCheckpoint()
    {
        const QString work = m_tmp.filePath(QStringLiteral("work"));
        test::writeFile(work + QStringLiteral("/README"), "the run's workdir\n");
        const QString stop = m_tmp.filePath(QStringLiteral("stop-attempt-1"));
        QDir().mkpath(QFileInfo(dbPath()).absolutePath());
        auto opened = ResultStore::open(dbPath());
        QVERIFY(opened);
        std::unique_ptr<ResultStore> store = std::move(*opened);
        auto engine = std::make_unique<RunEngine>(store.get(), dbPath());
        engine->setReconnectDelays(200, 800);
        engine->setHeartbeat(300, 1500);
        engine->addNode(QStringLiteral("ws1"),
                std::make_unique<SshAgentTransport>(
                        m_sshd1.nodeOptions(QStringLiteral("ws1"), stateDir(QStringLiteral("ws1")))));
        engine->addNode(QStringLiteral("ws2"),
                std::make_unique<SshAgentTransport>(
                        m_sshd2.nodeOptions(QStringLiteral("ws2"), stateDir(QStringLiteral("ws2")))));
        QVERIFY(engine->acquireIngestion());
        auto retries = std::make_unique<RetryRunner>(engine.get(), store.get());
        retries->setJitterSource([] { return 0.0; });
        auto mirror = std::make_unique<CheckpointMirror>(engine.get(), store.get(), dbPath(), systemClock(), 300);
        retries->setCheckpointMirror(mirror.get());
        auto loss = std::make_unique<NodeLossWatch>(engine.get(), store.get(), systemClock(), 2000);
        QVERIFY(test::waitUntil(
                [&] { return engine->nodeReady(QStringLiteral("ws1")) && engine->nodeReady(QStringLiteral("ws2")); },
                30000));

        const auto spec
                = parseJobSpec(QStringLiteral("name: migrate\n"
                                              "workdir: work\n"
                                              "sync: true\n"
                                              "retry: {limit: 1, backoff: {duration: 1s}}\n"
                                              "command: |\n"
                                              "  d=$TRAINYARD_CHECKPOINT_DIR\n"
                                              "  if [ \"$TRAINYARD_ATTEMPT\" = 1 ]; then\n"
                                              "    mkdir -p $d\n"
                                              "    printf weights-of-epoch-1 > $d/epoch-1.ckpt\n"
                                              "    sleep 0.1; echo '{}' > $d/epoch-1.ckpt.trainyard-done\n"
                                              "    sleep 0.1; printf weights-of-epoch-2 > $d/epoch-2.ckpt\n"
                                              "    sleep 0.1; echo '{}' > $d/epoch-2.ckpt.trainyard-done\n"
                                              "    sleep 0.1; printf half-of-epoch-3 > $d/epoch-3.ckpt\n"
                                              "    echo saved\n"
                                              "    for i in $(seq 1200); do [ -e %1 ] && exit 1; sleep 0.1; done\n"
                                              "    exit 1\n"
                                              "  fi\n"
                                              "  echo \"resume=$TRAINYARD_RESUME_FROM\"\n"
                                              "  echo \"bytes=$(cat \"$TRAINYARD_RESUME_FROM\")\"\n"
                                              "  echo \"folder=$(ls $d | tr '\\n' ' ')\"\n")
                                       .arg(stop),
                        QStringLiteral("job.yaml"), m_tmp.path());
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        const auto first = engine->submit(*spec, QStringLiteral("ws1"));
        QVERIFY(first);

        // Its checkpoints copied to this machine while it runs: epoch-2, the
        // newest complete one (epoch-3 has no marker).
        QVERIFY2(test::waitUntil(
                         [&] {
                             const auto r = store->run(*first);
                             const auto copy = r ? mirror->copyOf(*r) : std::nullopt;
                             return copy && copy->name == u"epoch-2.ckpt";
                         },
                         60000),
                qPrintable(noticesOf(*store, *first)));
        const RunRecord running = *store->run(*first);
        QCOMPARE(running.state, RunState::Running);
        QCOMPARE(running.node, QStringLiteral("ws1"));
        const QString dir = running.env.value(kCheckpointDirVar);
        const QString on1 = syncDirFor(stateDir(QStringLiteral("ws1")), work) + u'/' + dir;
        QCOMPARE(test::readFile(on1 + QStringLiteral("/epoch-3.ckpt")), QByteArray("half-of-epoch-3"));

        // ws1 is gone: its sshd stopped, its connections with it.
        m_sshd1.stop();
        QVERIFY2(test::waitUntil(
                         [&] {
                             const QList<RunRecord> a = attemptsOf(*store, *first);
                             return a.size() == 2 && isTerminal(a[1].state);
                         },
                         90000),
                qPrintable(noticesOf(*store, *first)));
        store->flush();
        const QList<RunRecord> attempts = attemptsOf(*store, *first);
        QCOMPARE(attempts[0].state, RunState::Failed);
        QCOMPARE(attempts[0].failureKind, FailureKind::NodeLost);
        const RunRecord& second = attempts[1];
        QVERIFY2(second.state == RunState::Succeeded,
                qPrintable(second.failureReason + u'\n' + noticesOf(*store, second.id)));
        QCOMPARE(second.node, QStringLiteral("ws2"));

        // On ws2: the newest complete checkpoint and its marker, byte for
        // byte, and nothing else; TRAINYARD_RESUME_FROM names it there.
        const QString on2 = syncDirFor(stateDir(QStringLiteral("ws2")), work) + u'/' + dir;
        QCOMPARE(QDir(on2).entryList(QDir::Files | QDir::Hidden, QDir::Name),
                (QStringList{QStringLiteral("epoch-2.ckpt"), QStringLiteral("epoch-2.ckpt.trainyard-done")}));
        QCOMPARE(test::readFile(on2 + QStringLiteral("/epoch-2.ckpt")), QByteArray("weights-of-epoch-2"));
        QCOMPARE(test::readFile(on2 + QStringLiteral("/epoch-2.ckpt.trainyard-done")), QByteArray("{}\n"));
        const QString resume = on2 + QStringLiteral("/epoch-2.ckpt");
        QCOMPARE(second.env.value(kResumeFromVar), resume);
        const QByteArray console = test::readFile(second.consolePath);
        QVERIFY2(console.contains(("resume=" + resume + "\nbytes=weights-of-epoch-2\n").toUtf8()), console.constData());
        QVERIFY2(console.contains("folder=epoch-2.ckpt epoch-2.ckpt.trainyard-done \n"), console.constData());

        // Said: where the checkpoint came from and went, how big.
        const QString notices = noticesOf(*store, second.id);
        QVERIFY2(notices.contains(QStringLiteral("checkpoint epoch-2.ckpt copied from ws1 (21 bytes) to ws2 before "
                                                 "attempt 2")),
                qPrintable(notices));
        QVERIFY2(notices.contains(QStringLiteral("resumes from %1/epoch-2.ckpt").arg(on1)), qPrintable(notices));

        test::writeFile(stop, "stop\n"); // the first attempt's script, still going where ws1's agent left it
        loss.reset();
        retries.reset();
        mirror.reset();
        engine.reset();
    }

    void cleanupTestCase()
    {
        m_sshd1.stop();
        m_sshd2.stop();
    }
};

QTEST_GUILESS_MAIN(TestCheckpointMigration)
#include "TestCheckpointMigration.moc"
