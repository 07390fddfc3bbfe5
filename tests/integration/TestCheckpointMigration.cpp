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
#include <QSignalSpy>
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

    static QList<RunRecord> attemptsOf(const ResultStore& store, RunId first) { return test::attemptsOf(store, first); }

    // The engine with ws1 and ws2 (both connected), retries, the mirror
    // (a listing every 300 ms) and node loss after 2 s; and the run, on ws1,
    // once its checkpoints are copied to this machine.
    struct Rig {
        std::unique_ptr<ResultStore> store;
        std::unique_ptr<RunEngine> engine;
        std::unique_ptr<RetryRunner> retries;
        std::unique_ptr<CheckpointMirror> mirror;
        std::unique_ptr<NodeLossWatch> loss;
        RunId first = 0;
        QString work;
        QString dir; // TRAINYARD_CHECKPOINT_DIR
        QString stop;

        ~Rig()
        {
            if (!stop.isEmpty())
                test::writeFile(stop, "stop\n"); // the first attempt's script, still going where ws1's agent left it
            loss.reset();
            retries.reset();
            mirror.reset();
            engine.reset();
        }
    };

    // `name`'s run writes epoch-1 and epoch-2 (each with its marker) and
    // epoch-3 (none) on ws1 and waits; retried with `retry`. Returns once
    // epoch-2 is copied to this machine (rig.first 0 on failure).
    void startOnWs1(Rig& rig, const QString& name, const QString& retry)
    {
        rig.work = m_tmp.filePath(name);
        test::writeFile(rig.work + QStringLiteral("/README"), "the run's workdir\n");
        rig.stop = m_tmp.filePath(QStringLiteral("stop-") + name);
        QDir().mkpath(QFileInfo(dbPath()).absolutePath());
        auto opened = ResultStore::open(dbPath());
        QVERIFY(opened);
        rig.store = std::move(*opened);
        rig.engine = std::make_unique<RunEngine>(rig.store.get(), dbPath());
        rig.engine->setReconnectDelays(200, 800);
        rig.engine->setHeartbeat(300, 1500);
        rig.engine->addNode(QStringLiteral("ws1"),
                std::make_unique<SshAgentTransport>(
                        m_sshd1.nodeOptions(QStringLiteral("ws1"), stateDir(QStringLiteral("ws1")))));
        rig.engine->addNode(QStringLiteral("ws2"),
                std::make_unique<SshAgentTransport>(
                        m_sshd2.nodeOptions(QStringLiteral("ws2"), stateDir(QStringLiteral("ws2")))));
        QVERIFY(rig.engine->acquireIngestion());
        rig.retries = std::make_unique<RetryRunner>(rig.engine.get(), rig.store.get());
        rig.retries->setJitterSource([] { return 0.0; });
        rig.mirror
                = std::make_unique<CheckpointMirror>(rig.engine.get(), rig.store.get(), dbPath(), systemClock(), 300);
        rig.retries->setCheckpointMirror(rig.mirror.get());
        rig.loss = std::make_unique<NodeLossWatch>(rig.engine.get(), rig.store.get(), systemClock(), 2000);
        RunEngine* engine = rig.engine.get();
        QVERIFY(test::waitUntil(
                [&] {
                    return engine->nodePlaceable(QStringLiteral("ws1")) && engine->nodePlaceable(QStringLiteral("ws2"));
                },
                30000));

        const auto spec
                = parseJobSpec(QStringLiteral("name: %2\n"
                                              "workdir: %2\n"
                                              "sync: true\n"
                                              "retry: %3\n"
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
                                       .arg(rig.stop, name, retry),
                        QStringLiteral("job.yaml"), m_tmp.path());
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        const auto first = rig.engine->submit(*spec, QStringLiteral("ws1"));
        QVERIFY(first);

        // Its checkpoints copied to this machine while it runs: epoch-2, the
        // newest complete one (epoch-3 has no marker).
        ResultStore& store = *rig.store;
        CheckpointMirror& mirror = *rig.mirror;
        QVERIFY2(test::waitUntil(
                         [&] {
                             const auto r = store.run(*first);
                             const auto copy = r ? mirror.copyOf(*r) : std::nullopt;
                             return copy && copy->name == u"epoch-2.ckpt";
                         },
                         60000),
                qPrintable(noticesOf(store, *first)));
        const RunRecord running = *store.run(*first);
        QCOMPARE(running.state, RunState::Running);
        QCOMPARE(running.node, QStringLiteral("ws1"));
        rig.dir = running.env.value(kCheckpointDirVar);
        const QString incomplete = syncDirFor(stateDir(QStringLiteral("ws1")), rig.work) + u'/' + rig.dir
                + QStringLiteral("/epoch-3.ckpt");
        QVERIFY(test::waitUntil([&] { return test::readFile(incomplete) == "half-of-epoch-3"; }, 10000));
        rig.first = *first;
    }

    // ws1 gone for good (its sshd stopped, its connections with it); waits
    // for the run's second attempt to end and returns its attempts.
    QList<RunRecord> loseWs1(Rig& rig)
    {
        m_sshd1.stop();
        ResultStore& store = *rig.store;
        const RunId first = rig.first;
        if (!test::waitUntil(
                    [&] {
                        const QList<RunRecord> a = attemptsOf(store, first);
                        return a.size() >= 2 && isTerminal(a[1].state);
                    },
                    90000))
            qWarning("%s", qPrintable(noticesOf(store, first)));
        store.flush();
        return attemptsOf(store, first);
    }

private Q_SLOTS:
    void initTestCase() { TY_START_SSHD_OR_SKIP(&m_sshd1, &m_sshd2); }

    void init()
    {
        QString error;
        if (!m_sshd1.sshdPid())
            QVERIFY2(m_sshd1.restart(&error), qPrintable(error));
    }

    // A run on ws1 writes two complete checkpoints and one incomplete, then
    // ws1 is gone: past node_lost_after the run is lost, its retry runs on
    // ws2 and finds the newest complete checkpoint, copied there before it
    // started, at TRAINYARD_RESUME_FROM.
    void lostNodesRunResumesOnTheOtherHostFromTheCopiedCheckpoint()
    {
        Rig rig;
        startOnWs1(rig, QStringLiteral("migrate"), QStringLiteral("{limit: 1, backoff: {duration: 1s}}"));
        QVERIFY(rig.first);
        QSignalSpy checked(rig.mirror.get(), &CheckpointMirror::checked);
        const QList<RunRecord> attempts = loseWs1(rig);
        QCOMPARE(attempts.size(), 2);
        QCOMPARE(attempts[0].state, RunState::Failed);
        QCOMPARE(attempts[0].failureKind, FailureKind::NodeLost);
        const RunRecord& second = attempts[1];
        QVERIFY2(second.state == RunState::Succeeded,
                qPrintable(second.failureReason + u'\n' + noticesOf(*rig.store, second.id)));
        QCOMPARE(second.node, QStringLiteral("ws2"));

        // On ws2: the newest complete checkpoint and its marker, byte for
        // byte, and nothing else; TRAINYARD_RESUME_FROM names it there.
        const QString on2 = syncDirFor(stateDir(QStringLiteral("ws2")), rig.work) + u'/' + rig.dir;
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
        const QString notices = noticesOf(*rig.store, second.id);
        QVERIFY2(notices.contains(QStringLiteral("checkpoint epoch-2.ckpt copied from ws1 (21 bytes) to ws2 before "
                                                 "attempt 2")),
                qPrintable(notices));
        const QString on1 = syncDirFor(stateDir(QStringLiteral("ws1")), rig.work) + u'/' + rig.dir;
        // Queued, it could not know where it would start: it names the
        // checkpoint and where it was written, not a path on ws1 as its
        // TRAINYARD_RESUME_FROM.
        QVERIFY2(notices.contains(QStringLiteral("resumes from epoch-2.ckpt, written on ws1 at %1/epoch-2.ckpt (copied "
                                                 "to the node it starts on, if another)")
                                          .arg(on1)),
                qPrintable(notices));
        QVERIFY2(!notices.contains(QStringLiteral("(TRAINYARD_RESUME_FROM)")), qPrintable(notices));

        // Not copied back: ws2's listing at the attempt's end showed the
        // staged checkpoint with the staging's time, and it is the same one;
        // the copy here is still ws1's.
        QVERIFY(test::waitUntil(
                [&] {
                    for (const QList<QVariant>& c : std::as_const(checked))
                        if (c.at(0).value<RunId>() == second.id)
                            return true;
                    return false;
                },
                10000));
        const auto held = rig.mirror->copyOf(second);
        QVERIFY(held);
        QCOMPARE(held->node, QStringLiteral("ws1"));
        QCOMPARE(held->producer, rig.first);
    }

    // The same, but the copy here lost part of its checkpoint before the
    // retry starts: the retry fails at once, saying what and where, and
    // nothing is started on ws2 (not a silent restart from epoch 0).
    void resumeWhoseCopyCannotBeStagedFailsLoudly()
    {
        Rig rig;
        startOnWs1(rig, QStringLiteral("broken"), QStringLiteral("{limit: 0, backoff: {duration: 1s}}"));
        QVERIFY(rig.first);
        const auto copy = rig.mirror->copyOf(*rig.store->run(rig.first));
        QVERIFY(copy);
        const QString copied = copy->localRoot + u'/' + rig.dir + QStringLiteral("/epoch-2.ckpt");
        test::writeFile(copied, "weights-of-ep"); // cut short behind the mirror's back
        const QList<RunRecord> attempts = loseWs1(rig);
        QCOMPARE(attempts.size(), 2);
        QCOMPARE(attempts[0].failureKind, FailureKind::NodeLost);
        const RunRecord& second = attempts[1];
        QCOMPARE(second.state, RunState::Failed);
        QCOMPARE(second.failureKind, FailureKind::StartFailed);
        QCOMPARE(second.node, QStringLiteral("ws2"));
        QCOMPARE(second.failureReason,
                QStringLiteral("attempt 2 was to resume from checkpoint epoch-2.ckpt (written on ws1), but its copy "
                               "on this machine is not whole: %1 is not the file that was copied: not started from "
                               "the beginning instead")
                        .arg(copied));
        QVERIFY2(noticesOf(*rig.store, second.id).contains(second.failureReason),
                qPrintable(noticesOf(*rig.store, second.id)));
        QVERIFY(!second.startedAt.isValid());
        const QString on2 = syncDirFor(stateDir(QStringLiteral("ws2")), rig.work) + u'/' + rig.dir;
        QVERIFY(!QFileInfo::exists(on2));
    }

    void cleanupTestCase()
    {
        m_sshd1.stop();
        m_sshd2.stop();
    }
};

QTEST_GUILESS_MAIN(TestCheckpointMigration)
#include "TestCheckpointMigration.moc"
