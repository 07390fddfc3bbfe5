// Preemption end to end (issue #25): the run engine, the real agent on the
// local node and real child processes. The node has one GPU (the recorded
// H200 through a stand-in nvidia-smi: there is no GPU here). A preemptible
// low-priority run holds it and writes a checkpoint; a high-priority run is
// submitted; the low one gets its signal (its trap writes a marker), ends
// `preempted`, the high one runs on the GPU it was promised (not a run that
// waited longer), then the low one's next attempt runs with
// TRAINYARD_RESUME_FROM set to its checkpoint.
#include "tests/support/TestSupport.h"

#include "core/retry/Checkpoints.h"
#include "core/retry/RetryRunner.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"
#include "core/store/RunNotice.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

using test::StandInGpu; // one recorded GPU, no NVML

class TestPreemptionEndToEnd final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_db;
    QString m_marks; // what the runs' scripts write
    std::unique_ptr<StandInGpu> m_gpu;
    test::LocalEngine m_rig; // store, engine with the local node, retries

    JobSpec spec(const QString& yaml)
    {
        return test::parsedSpec(yaml, QStringLiteral("preempt.yaml"), m_dir.filePath(QStringLiteral("wd")));
    }

    QString mark(const QString& name) const { return m_marks + u'/' + name; }
    QString readMark(const QString& name) const { return QString::fromUtf8(test::readFile(mark(name))).trimmed(); }

    // The victim: attempt 1 writes a complete checkpoint, says it is ready
    // and waits (at most a minute, so nothing outlives a failed test for
    // long); on `trapSignal` it writes a marker (which signal, which
    // attempt) and exits 0 `saveSec` seconds later (a checkpoint save in its
    // grace). Every attempt records the checkpoint it was told to resume from.
    QString victimSpec(const QString& trapSignal, const QString& extra, int saveSec = 1)
    {
        return QStringLiteral("name: victim\n"
                              "priority: 0\n"
                              "preemptible: true\n"
                              "resources: {gpus: 1}\n"
                              "command: |\n"
                              "  trap 'echo \"%2 attempt=$TRAINYARD_ATTEMPT\" > %1/signalled; sleep %4; exit 0' %2\n"
                              "  echo \"$TRAINYARD_RESUME_FROM\" > %1/resume-$TRAINYARD_ATTEMPT\n"
                              "  if [ \"$TRAINYARD_ATTEMPT\" = 1 ]; then\n"
                              "    mkdir -p \"$TRAINYARD_CHECKPOINT_DIR\"\n"
                              "    echo weights > \"$TRAINYARD_CHECKPOINT_DIR/epoch-3.pt\"\n"
                              "    touch \"$TRAINYARD_CHECKPOINT_DIR/epoch-3.pt.trainyard-done\"\n"
                              "    touch %1/ready\n"
                              "    i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
                              "  fi\n"
                              "%3")
                .arg(m_marks, trapSignal.mid(3), extra)
                .arg(saveSec);
    }

    QList<RunRecord> attemptsOf(RunId first) const { return m_rig.attemptsOf(first); }

    // The whole story, the victim trapping `signal`, its spec with
    // `victimExtra`; `victimId` gets the victim's first attempt.
    void runStory(const QString& signal, const QString& victimExtra, RunId* victimId = nullptr)
    {
        QSignalSpy reasons(m_rig.engine.get(), &RunEngine::pendingReasonsChanged);
        const auto victim = m_rig.engine->submit(spec(victimSpec(signal, victimExtra)));
        QVERIFY(victim);
        if (victimId)
            *victimId = *victim;
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(mark(QStringLiteral("ready"))), 15000);
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*victim)->state, RunState::Running, 15000);
        QCOMPARE(m_rig.store->run(*victim)->gpus, QList<int>{0});

        // Waits first (FCFS head), but of the victim's priority: it may not preempt.
        const auto bystander = m_rig.engine->submit(spec(QStringLiteral(
                "name: bystander\npriority: 0\nresources: {gpus: 1}\ncommand: 'echo bystander; sleep 0.2'\n")));
        QVERIFY(bystander);
        QTest::qWait(600); // a pass or two: it waits, and nobody is stopped for it
        QCOMPARE(m_rig.store->run(*bystander)->state, RunState::Queued);
        QVERIFY(!QFile::exists(mark(QStringLiteral("signalled"))));

        const auto urgent = m_rig.engine->submit(
                spec(QStringLiteral("name: urgent\npriority: 10\nresources: {gpus: 1}\n"
                                    "command: 'echo \"urgent on $CUDA_VISIBLE_DEVICES\"; sleep 1'\n")));
        QVERIFY(urgent);

        // The victim got its signal, and ended preempted (not cancelled, not failed by its exit code).
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(mark(QStringLiteral("signalled"))), 15000);
        QCOMPARE(readMark(QStringLiteral("signalled")), QStringLiteral("%1 attempt=1").arg(signal.mid(3)));
        QTRY_VERIFY_WITH_TIMEOUT(isTerminal(m_rig.store->run(*victim)->state), 15000);
        const RunRecord ended = *m_rig.store->run(*victim);
        QCOMPARE(ended.state, RunState::Failed);
        QCOMPARE(ended.failureKind, FailureKind::Preempted);
        QCOMPARE(ended.failureReason, QStringLiteral("preempted by run %1 (priority 10) on local").arg(*urgent));
        QCOMPARE(ended.exitCode, std::optional<int>(0));

        // While it was in its grace, the urgent run said why it waited.
        bool saidIt = false;
        for (const QList<QVariant>& args : std::as_const(reasons))
            saidIt = saidIt
                    || args.at(0).value<QHash<RunId, QString>>().value(*urgent)
                            == QStringLiteral("waiting: preempting run %1 on local (grace 30 s)").arg(*victim);
        QVERIFY2(saidIt, "no pass said 'waiting: preempting run N on local (grace 30 s)'");

        // The urgent run got the GPU, before the bystander that waited longer.
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*urgent)->state, RunState::Succeeded, 15000);
        const RunRecord u = *m_rig.store->run(*urgent);
        QCOMPARE(u.gpus, QList<int>{0});
        QVERIFY(u.startedAt >= ended.finishedAt.addMSecs(-50));
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*bystander)->state, RunState::Succeeded, 15000);
        const RunRecord b = *m_rig.store->run(*bystander);
        QVERIFY2(b.startedAt >= u.finishedAt.addMSecs(-50),
                qPrintable(QStringLiteral("bystander started %1, urgent finished %2")
                                   .arg(b.startedAt.toString(Qt::ISODateWithMs),
                                           u.finishedAt.toString(Qt::ISODateWithMs))));

        // Then the victim's next attempt, from its checkpoint.
        QTRY_COMPARE_WITH_TIMEOUT(attemptsOf(*victim).size(), 2, 15000);
        const RunId next = attemptsOf(*victim).at(1).id;
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(next)->state, RunState::Succeeded, 15000);
        const RunRecord again = *m_rig.store->run(next);
        QCOMPARE(again.env.value(kAttemptVar), QStringLiteral("2"));
        const QString resume = again.env.value(kResumeFromVar);
        QVERIFY2(resume.endsWith(QStringLiteral("/epoch-3.pt")) && QDir::isAbsolutePath(resume), qPrintable(resume));
        QCOMPARE(readMark(QStringLiteral("resume-2")), resume);
        QCOMPARE(readMark(QStringLiteral("resume-1")), QString());
        QCOMPARE(again.priority, 0);
    }

    QString agentState() const { return m_dir.filePath(QStringLiteral("state-%1").arg(QTest::currentTestFunction())); }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        QDir(m_dir.path()).mkpath(QStringLiteral("wd"));
        m_marks = m_dir.filePath(QStringLiteral("marks-%1").arg(QTest::currentTestFunction()));
        QDir().mkpath(m_marks);
        m_gpu = std::make_unique<StandInGpu>();
        QVERIFY(m_gpu->ok);
        m_db = m_dir.filePath(QStringLiteral("db-%1.db").arg(QTest::currentTestFunction()));
        // The queue's policy as trainyardctl writes it: strict FCFS, preemption on.
        QFile policy(m_db + QStringLiteral(".scheduler.json"));
        QVERIFY(policy.open(QIODevice::WriteOnly));
        policy.write(R"({"ordering": "fcfs", "backfill": false, "preemption": true})");
        policy.close();
        // Its own agent state per test: a run a failed test left behind does not hold the GPU here.
        const QString error = m_rig.open(m_db, agentState(), /*withRetries=*/true);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void cleanup()
    {
        m_rig.close();
        m_gpu.reset();
    }

    // The service goes away while the victim is in its grace and a new one
    // takes over: it learns from the victim's notice that the cancel it finds
    // was a preemption, so the victim ends `preempted` and is requeued from
    // its checkpoint, even when nothing preempts it again.
    void preemptionOutlivesAServiceRestartInTheGrace()
    {
        const auto victim = m_rig.engine->submit(spec(victimSpec(QStringLiteral("SIGTERM"), {}, 4)));
        QVERIFY(victim);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(mark(QStringLiteral("ready"))), 15000);
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*victim)->state, RunState::Running, 15000);
        const auto urgent = m_rig.engine->submit(
                spec(QStringLiteral("name: urgent\npriority: 10\nresources: {gpus: 1}\ncommand: 'echo urgent'\n")));
        QVERIFY(urgent);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(mark(QStringLiteral("signalled"))), 15000);

        m_rig.close(); // 4 s of its grace left
        const QString error = m_rig.open(m_db, agentState(), /*withRetries=*/true);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(m_rig.store->run(*victim)->state, RunState::Running);
        QVERIFY(m_rig.retries->restore() >= 0);
        // Its preemptor's user gives up on it: no pass of the new engine
        // preempts the victim again, so only its notice says what its
        // cancel was (without it, the victim would end `cancelled`, its
        // work not requeued).
        m_rig.engine->cancel(*urgent);

        QTRY_VERIFY_WITH_TIMEOUT(isTerminal(m_rig.store->run(*victim)->state), 20000);
        const RunRecord ended = *m_rig.store->run(*victim);
        QCOMPARE(runStateName(ended.state), runStateName(RunState::Failed));
        QCOMPARE(ended.failureKind, FailureKind::Preempted);
        QCOMPARE(ended.failureReason, QStringLiteral("preempted by run %1 (priority 10) on local").arg(*urgent));
        // Told to stop once: the new engine did not preempt it again (a
        // second signal in its grace could cut its checkpoint save short).
        int told = 0;
        for (const RunNotice& n : m_rig.store->notices(*victim))
            told += n.text.contains(QStringLiteral("SIGTERM sent, SIGKILL after")) ? 1 : 0;
        QCOMPARE(told, 1);
        QCOMPARE(m_rig.store->run(*urgent)->state, RunState::Cancelled);
        QTRY_COMPARE_WITH_TIMEOUT(attemptsOf(*victim).size(), 2, 15000);
        const RunId next = attemptsOf(*victim).at(1).id;
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(next)->state, RunState::Succeeded, 15000);
        QVERIFY(m_rig.store->run(next)->env.value(kResumeFromVar).endsWith(QStringLiteral("/epoch-3.pt")));
    }

    // Without `retry:`: SIGTERM, and requeued all the same (as Slurm and
    // Kubernetes requeue preempted work).
    void preemptedWithoutRetryIsRequeued()
    {
        RunId victim = 0;
        runStory(QStringLiteral("SIGTERM"), {}, &victim);
        if (QTest::currentTestFailed())
            return;
        // `trainyardctl show` says it (every run has ended: it needs no service).
        const RunId next = attemptsOf(victim).at(1).id;
        m_rig.close();
        QProcess ctl;
        ctl.start(QStringLiteral(TRAINYARD_CTL_PATH),
                {QStringLiteral("--db"), m_db, QStringLiteral("show"), QString::number(victim)});
        QVERIFY(ctl.waitForFinished(30000));
        const QString out = QString::fromUtf8(ctl.readAllStandardOutput());
        QCOMPARE(ctl.exitCode(), 0);
        static const QRegularExpression failure(
                QStringLiteral("^failure +preempted: preempted by run \\d+ \\(priority 10\\) on local$"),
                QRegularExpression::MultilineOption);
        QVERIFY2(failure.match(out).hasMatch(), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("attempt    2: run %1 succeeded").arg(next)), qPrintable(out));
    }

    // With `retry:` whose `on` names preempted, and the signal the spec names
    // (the agent's `cancel` with `signal`, protocol revision 6).
    void preemptedWithRetryAndItsOwnSignal()
    {
        RunId victim = 0;
        runStory(QStringLiteral("SIGUSR1"),
                QStringLiteral("preemption: {signal: SIGUSR1}\n"
                               "retry: {limit: 0, on: [preempted], backoff: {duration: 1s}}\n"),
                &victim);
        if (QTest::currentTestFailed())
            return;
        // Its `retry:` budget: an infrastructure retry, not one of `limit: 0`;
        // its backoff: the next attempt waited 1 s after the end.
        const RunRecord first = *m_rig.store->run(victim);
        const RunRecord next = *m_rig.store->run(attemptsOf(victim).at(1).id);
        QCOMPARE(next.notBefore.toMSecsSinceEpoch() - first.finishedAt.toMSecsSinceEpoch(), qint64(1000));
        bool retriedNotice = false;
        for (const RunNotice& n : m_rig.store->notices(first.id))
            retriedNotice = retriedNotice || n.text.startsWith(kRetriedNotice);
        QVERIFY(retriedNotice);
    }
};

QTEST_GUILESS_MAIN(TestPreemptionEndToEnd)
#include "TestPreemption.moc"
