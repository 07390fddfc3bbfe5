// Issue #25: a run whose job spec has `retry:` is tried again by the
// RetryRunner, through the run engine and the real agent on the local node:
// attempts are one run group, each waits out its backoff (notBefore), gets
// its attempt's environment and resumes from the newest complete checkpoint;
// a run not retried says why.
#include "tests/support/TestSupport.h"

#include "core/retry/Checkpoints.h"
#include "core/retry/RetryRunner.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestRetries final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_db;
    test::LocalEngine m_rig; // store, engine with the local node, retries

    JobSpec spec(const QString& yaml)
    {
        return test::parsedSpec(yaml, QStringLiteral("retry.yaml"), m_dir.filePath(QStringLiteral("wd")));
    }

    QList<RunRecord> attemptsOf(RunId first) const { return m_rig.attemptsOf(first); }

    QString noticesOf(RunId run)
    {
        QStringList out;
        for (const RunNotice& n : m_rig.store->notices(run))
            out << n.text;
        return out.join(u'\n');
    }

    QByteArray consoleOf(RunId run) { return test::readFile(m_rig.store->run(run)->consolePath); }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        QDir(m_dir.path()).mkpath(QStringLiteral("wd"));
        m_db = m_dir.filePath(QStringLiteral("db-%1.db").arg(QTest::currentTestFunction()));
        const QString error = m_rig.open(m_db, m_dir.filePath(QStringLiteral("state")), /*withRetries=*/true);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void cleanup() { m_rig.close(); }

    // Three attempts, then its limit: each an attempt of one group, each
    // started no earlier than its backoff after the previous one's end.
    void failingRunIsRetriedUpToItsLimitWithBackoff()
    {
        QSignalSpy retried(m_rig.retries.get(), &RetryRunner::retried);
        QSignalSpy gaveUp(m_rig.retries.get(), &RetryRunner::notRetried);
        const auto first = m_rig.engine->submit(spec(QStringLiteral(
                "name: flaky\ncommand: 'echo attempt=$TRAINYARD_ATTEMPT restarts=$TRAINYARD_RESTART_COUNT; exit 3'\n"
                "retry: {limit: 2, backoff: {duration: 1s, factor: 2, max: 10s}}\n")));
        QVERIFY(first);
        QTRY_COMPARE_WITH_TIMEOUT(gaveUp.size(), 1, 30000);
        QCOMPARE(retried.size(), 2);
        const QList<RunRecord> attempts = attemptsOf(*first);
        QCOMPARE(attempts.size(), 3);
        for (int i = 0; i < 3; ++i) {
            const RunRecord& a = attempts[i];
            QCOMPARE(a.state, RunState::Failed);
            QCOMPARE(a.failureKind, FailureKind::ExitCode);
            QCOMPARE(a.name, QStringLiteral("flaky"));
            QCOMPARE(membershipOf(a, RunGroupKind::Attempts)->position, i + 1);
            QCOMPARE(a.env.value(kAttemptVar), QString::number(i + 1));
            QCOMPARE(QString::fromUtf8(consoleOf(a.id)).trimmed(),
                    QStringLiteral("attempt=%1 restarts=%2").arg(i + 1).arg(i));
            // The same checkpoint folder for every attempt.
            QCOMPARE(a.env.value(kCheckpointDirVar), attempts[0].env.value(kCheckpointDirVar));
        }
        QVERIFY(attempts[0].env.value(kCheckpointDirVar).startsWith(QStringLiteral(".trainyard/checkpoints/")));
        // Backoff: 1 s after the first end, 2 s after the second (factor 2),
        // and the scheduler did not start them before.
        for (int i = 1; i < 3; ++i) {
            const qint64 wait
                    = attempts[i].notBefore.toMSecsSinceEpoch() - attempts[i - 1].finishedAt.toMSecsSinceEpoch();
            QCOMPARE(wait, qint64(1000) << (i - 1));
            QVERIFY2(attempts[i].startedAt >= attempts[i].notBefore,
                    qPrintable(attempts[i].startedAt.toString(Qt::ISODateWithMs)));
        }
        QVERIFY2(noticesOf(attempts[0].id).startsWith(kRetriedNotice + QString::number(attempts[1].id)),
                qPrintable(noticesOf(attempts[0].id)));
        QVERIFY2(noticesOf(attempts[2].id).contains(kNotRetriedNotice)
                        && noticesOf(attempts[2].id).contains(QStringLiteral("limit is 2")),
                qPrintable(noticesOf(attempts[2].id)));
        const auto group = m_rig.store->group(groupIdOf(attempts[0], RunGroupKind::Attempts));
        QCOMPARE(group->kind, RunGroupKind::Attempts);
        QCOMPARE(group->runs, 3);
        QCOMPARE(group->name, QStringLiteral("flaky"));
    }

    // The second attempt succeeds: nothing more; and a spec without `retry:`
    // is never retried, nor is a cancelled run.
    void retryStopsAtSuccessAndOnlyWithAPolicy()
    {
        const QString marker = m_dir.filePath(QStringLiteral("once"));
        const auto flaky = m_rig.engine->submit(spec(QStringLiteral(
                "name: once\ncommand: 'test -f %1 || { touch %1; exit 1; }'\nretry: {backoff: {duration: 1s}}\n")
                                                             .arg(marker)));
        const auto plain = m_rig.engine->submit(spec(QStringLiteral("name: plain\ncommand: 'exit 1'\n")));
        QVERIFY(flaky && plain);
        QTRY_VERIFY_WITH_TIMEOUT(attemptsOf(*flaky).size() == 2 && isTerminal(attemptsOf(*flaky).back().state), 20000);
        QCOMPARE(attemptsOf(*flaky).back().state, RunState::Succeeded);
        QTRY_VERIFY_WITH_TIMEOUT(isTerminal(m_rig.store->run(*plain)->state), 10000);
        QTest::qWait(300);
        QCOMPARE(attemptsOf(*plain).size(), 1);
        QCOMPARE(noticesOf(*plain), QString());
        QCOMPARE(m_rig.store->groups(RunGroupKind::Attempts).size(), 1);

        const auto cancelled = m_rig.engine->submit(
                spec(QStringLiteral("name: stop\ncommand: 'sleep 30'\nretry: {backoff: {duration: 1s}}\n")));
        QVERIFY(cancelled);
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*cancelled)->state, RunState::Running, 10000);
        m_rig.engine->cancel(*cancelled, 1000);
        QTRY_COMPARE_WITH_TIMEOUT(m_rig.store->run(*cancelled)->state, RunState::Cancelled, 10000);
        QTest::qWait(300);
        QCOMPARE(attemptsOf(*cancelled).size(), 1);
    }

    // The next attempt gets the newest checkpoint that has its marker; one
    // written after it without a marker (a save cut short) is skipped, said.
    void nextAttemptResumesFromTheNewestCompleteCheckpoint()
    {
        const auto first = m_rig.engine->submit(spec(QStringLiteral(
                "name: ckpt\n"
                "command: |\n"
                "  d=$TRAINYARD_CHECKPOINT_DIR\n"
                "  if [ \"$TRAINYARD_ATTEMPT\" = 1 ]; then\n"
                "    mkdir -p $d/epoch-2 && echo one > $d/epoch-1.pt && touch $d/epoch-1.pt.trainyard-done\n"
                "    sleep 0.05; echo two > $d/epoch-2/model.bin && touch $d/epoch-2.trainyard-done\n"
                "    sleep 0.05; echo three > $d/epoch-3.pt\n"
                "    exit 1\n"
                "  fi\n"
                "  echo resume=$TRAINYARD_RESUME_FROM\n"
                "retry: {limit: 1, backoff: {duration: 1s}}\n")));
        QVERIFY(first);
        QTRY_VERIFY_WITH_TIMEOUT(attemptsOf(*first).size() == 2 && isTerminal(attemptsOf(*first).back().state), 20000);
        const QList<RunRecord> attempts = attemptsOf(*first);
        QCOMPARE(attempts[1].state, RunState::Succeeded);
        const QString expected
                = QDir(m_dir.filePath(QStringLiteral("wd")))
                          .filePath(attempts[0].env.value(kCheckpointDirVar) + QStringLiteral("/epoch-2"));
        QCOMPARE(attempts[1].env.value(kResumeFromVar), expected);
        QCOMPARE(QString::fromUtf8(consoleOf(attempts[1].id)).trimmed(), QStringLiteral("resume=") + expected);
        const QString notices = noticesOf(attempts[1].id);
        QVERIFY2(notices.contains(QStringLiteral("resumes from ") + expected), qPrintable(notices));
        QVERIFY2(notices.contains(QStringLiteral("incomplete checkpoint(s) skipped"))
                        && notices.contains(QStringLiteral("epoch-3.pt")),
                qPrintable(notices));
        QVERIFY2(attempts[0].env.value(kResumeFromVar).isEmpty(), "the first attempt resumes from nothing");
    }

    // A deadline the backoff would pass: not retried, saying so.
    void deadlineStopsRetries()
    {
        QSignalSpy gaveUp(m_rig.retries.get(), &RetryRunner::notRetried);
        const auto first = m_rig.engine->submit(spec(
                QStringLiteral("name: late\ncommand: 'exit 2'\ndeadline: 2s\nretry: {backoff: {duration: 10s}}\n")));
        QVERIFY(first);
        QTRY_COMPARE_WITH_TIMEOUT(gaveUp.size(), 1, 10000);
        QCOMPARE(attemptsOf(*first).size(), 1);
        QVERIFY2(gaveUp.front().at(1).toString().contains(QStringLiteral("deadline")),
                qPrintable(gaveUp.front().at(1).toString()));
    }

    // A running run is stopped at its deadline; max_run_time counts the
    // execution of every attempt, so the second gets what the first left.
    void deadlineAndMaxRunTimeStopRunningAttempts()
    {
        const auto late = m_rig.engine->submit(spec(QStringLiteral("name: late\ncommand: 'sleep 30'\ndeadline: 2s\n")));
        QVERIFY(late);
        QTRY_VERIFY_WITH_TIMEOUT(isTerminal(m_rig.store->run(*late)->state), 15000);
        const RunRecord stopped = *m_rig.store->run(*late);
        QCOMPARE(stopped.failureKind, FailureKind::TimeLimit);
        QCOMPARE(stopped.failureReason, QStringLiteral("stopped at its deadline of 2s (from its first submit)"));
        QVERIFY(stopped.finishedAt.toMSecsSinceEpoch() - stopped.createdAt.toMSecsSinceEpoch() < 6000);

        QSignalSpy gaveUp(m_rig.retries.get(), &RetryRunner::notRetried);
        const auto first = m_rig.engine->submit(
                spec(QStringLiteral("name: budget\n"
                                    "command: 'if [ \"$TRAINYARD_ATTEMPT\" = 1 ]; then sleep 1; exit 1; fi; sleep 30'\n"
                                    "max_run_time: 3s\n"
                                    "retry: {limit: 2, backoff: {duration: 1s}}\n")));
        QVERIFY(first);
        QTRY_COMPARE_WITH_TIMEOUT(gaveUp.size(), 1, 20000);
        const QList<RunRecord> attempts = attemptsOf(*first);
        QCOMPARE(attempts.size(), 2);
        QCOMPARE(attempts[0].failureKind, FailureKind::ExitCode);
        QCOMPARE(attempts[1].failureKind, FailureKind::TimeLimit);
        QCOMPARE(attempts[1].failureReason,
                QStringLiteral("stopped at its max_run_time of 3s (execution over its attempts)"));
        const auto ran
                = [](const RunRecord& r) { return r.finishedAt.toMSecsSinceEpoch() - r.startedAt.toMSecsSinceEpoch(); };
        // 3 s in all, give or take the stop's own time (SIGTERM, exit).
        QVERIFY2(std::abs(ran(attempts[0]) + ran(attempts[1]) - 3000) < 700,
                qPrintable(QStringLiteral("%1 + %2 ms").arg(ran(attempts[0])).arg(ran(attempts[1]))));
        QVERIFY2(gaveUp.front().at(1).toString().contains(QStringLiteral("max_run_time")),
                qPrintable(gaveUp.front().at(1).toString()));
    }

    // The end-to-end case: the digits example, killed with SIGKILL in
    // its fifth epoch, is retried and resumes after its newest complete
    // checkpoint; its epochs and steps go on where they were.
    void digitsKilledMidEpochResumesFromItsCheckpoint()
    {
        QProcess probe;
        probe.start(
                QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral("import torch, sklearn")});
        if (!probe.waitForFinished(60000) || probe.exitCode() != 0)
            QSKIP("/usr/bin/python3 has no torch and scikit-learn");
        const QString wd = m_dir.filePath(QStringLiteral("digits"));
        QVERIFY(QDir().mkpath(wd));
        for (const QString& f : {QStringLiteral("examples/digits/train.py"), QStringLiteral("trainyard.py")})
            QVERIFY(QFile::copy(QStringLiteral(TRAINYARD_SOURCE_DIR "/resources/") + f,
                    QDir(wd).filePath(QFileInfo(f).fileName())));
        auto s = parseJobSpec(
                QStringLiteral(
                        "name: digits\n"
                        "env: {PYTHONUNBUFFERED: '1'}\n"
                        "command: |\n"
                        "  /usr/bin/python3 train.py --epochs 7 --min-accuracy 0 & p=$!\n"
                        "  if [ \"$TRAINYARD_ATTEMPT\" = 1 ]; then\n"
                        "    until [ -e \"$TRAINYARD_CHECKPOINT_DIR/epoch-4.pt.trainyard-done\" ]; do sleep 0.02; done\n"
                        "    kill -9 $p\n"
                        "  fi\n"
                        "  wait $p\n"
                        "retry: {limit: 1, backoff: {duration: 1s}}\n"),
                QStringLiteral("digits.yaml"), wd);
        QVERIFY2(s, s ? "" : qPrintable(s.error().message));
        const auto first = m_rig.engine->submit(*s);
        QVERIFY(first);
        QTRY_VERIFY_WITH_TIMEOUT(attemptsOf(*first).size() == 2 && isTerminal(attemptsOf(*first).back().state), 120000);
        const QList<RunRecord> attempts = attemptsOf(*first);
        QCOMPARE(attempts[0].state, RunState::Failed);
        QCOMPARE(attempts[0].exitCode, std::optional<int>(137)); // the shell's child killed by SIGKILL
        QVERIFY2(attempts[1].state == RunState::Succeeded, qPrintable(attempts[1].failureReason));
        // Killed before epoch 5's checkpoint was marked: attempt 2 starts at epoch 5.
        const QString console = QString::fromUtf8(consoleOf(attempts[1].id));
        const QString from = attempts[1].env.value(kResumeFromVar);
        QVERIFY2(from.endsWith(QStringLiteral("/epoch-4.pt")) || from.endsWith(QStringLiteral("/epoch-5.pt")),
                qPrintable(from));
        const int next = from.endsWith(QStringLiteral("/epoch-4.pt")) ? 5 : 6;
        QVERIFY2(console.contains(QStringLiteral("resumed from %1 at epoch %2").arg(from).arg(next)),
                qPrintable(console));
        QVERIFY2(!console.contains(QStringLiteral("epoch=1 ")), qPrintable(console));
        // The metrics go on where they were: attempt 2's first val_accuracy
        // is at the step after attempt 1's epochs up to the checkpoint.
        const auto before = m_rig.store->metrics(attempts[0].id, QStringLiteral("val_accuracy"));
        const auto after = m_rig.store->metrics(attempts[1].id, QStringLiteral("val_accuracy"));
        QVERIFY(before.size() >= next - 1);
        QCOMPARE(after.size(), 7 - next + 1);
        const qint64 perEpoch = before[1].step - before[0].step;
        QCOMPARE(after.front().step, before[next - 2].step + perEpoch);
        QCOMPARE(after.back().step, before[0].step + 6 * perEpoch);
    }

    // A run that ended while no service ran is decided at the next start;
    // once decided, never again.
    void restoreDecidesRunsEndedWithoutAService()
    {
        m_rig.retries.reset(); // no retry runner while it ends
        const auto first = m_rig.engine->submit(
                spec(QStringLiteral("name: orphan\ncommand: 'exit 5'\nretry: {limit: 1, backoff: {duration: 1s}}\n")));
        QVERIFY(first);
        QTRY_VERIFY_WITH_TIMEOUT(isTerminal(m_rig.store->run(*first)->state), 10000);
        QTest::qWait(200);
        QCOMPARE(attemptsOf(*first).size(), 1);
        m_rig.retries = std::make_unique<RetryRunner>(m_rig.engine.get(), m_rig.store.get());
        QCOMPARE(m_rig.retries->restore(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(attemptsOf(*first).size() == 2 && isTerminal(attemptsOf(*first).back().state), 20000);
        QCOMPARE(m_rig.retries->restore(), 0);
        QTest::qWait(300);
        QCOMPARE(attemptsOf(*first).size(), 2);
    }
};

QTEST_GUILESS_MAIN(TestRetries)
#include "TestRetries.moc"
