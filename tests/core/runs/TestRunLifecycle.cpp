// The run lifecycle's table (core/runs/RunLifecycle.h) and its one
// transition function.
#include "core/runs/RunLifecycle.h"

#include <QRegularExpression>
#include <QTest>

using namespace ty;

class TestRunLifecycle final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void table_data()
    {
        QTest::addColumn<RunState>("from");
        QTest::addColumn<RunState>("to");
        QTest::addColumn<bool>("allowed");
        using S = RunState;
        const auto row
                = [](const char* name, S from, S to, bool allowed) { QTest::newRow(name) << from << to << allowed; };
        row("queued-held", S::Queued, S::Held, true);
        row("queued-starting", S::Queued, S::Starting, true);
        row("queued-running", S::Queued, S::Running, false); // always through starting
        row("held-queued", S::Held, S::Queued, true);
        row("held-starting", S::Held, S::Starting, false); // a held run never starts
        row("starting-running", S::Starting, S::Running, true);
        row("starting-unknown", S::Starting, S::Unknown, true);
        row("starting-queued", S::Starting, S::Queued, true); // a GPU claimed by another instance
        row("running-unknown", S::Running, S::Unknown, true);
        row("running-queued", S::Running, S::Queued, false);
        row("running-starting", S::Running, S::Starting, true); // a requeued Slurm job
        row("unknown-starting", S::Unknown, S::Starting, false);
        row("unknown-running", S::Unknown, S::Running, true);
        row("unknown-succeeded", S::Unknown, S::Succeeded, true);
        row("succeeded-running", S::Succeeded, S::Running, false);
        row("failed-queued", S::Failed, S::Queued, false); // a rerun is a new run
        row("cancelled-failed", S::Cancelled, S::Failed, false);
        row("running-running", S::Running, S::Running, true);
    }

    void table()
    {
        QFETCH(RunState, from);
        QFETCH(RunState, to);
        QFETCH(bool, allowed);
        QCOMPARE(transitionAllowed(from, to), allowed);
    }

    void transitionAppliesAndSaysWhenUnexpected()
    {
        RunRecord r;
        r.id = 7;
        r.state = RunState::Starting;
        QVERIFY(transition(r, RunState::Running, TransitionCause::StartAcknowledged));
        QCOMPARE(r.state, RunState::Running);
        // Outside the table: applied (no run is left stale), and warned.
        r.state = RunState::Succeeded;
        QTest::ignoreMessage(QtWarningMsg,
                QRegularExpression(
                        QStringLiteral("run 7: unexpected transition succeeded -> running \\(node_back\\)")));
        QVERIFY(!transition(r, RunState::Running, TransitionCause::NodeBack));
        QCOMPARE(r.state, RunState::Running);
        // A new record enters wherever it is made.
        RunRecord fresh;
        fresh.state = RunState::Failed;
        QVERIFY(transition(fresh, RunState::Queued, TransitionCause::Submitted));
        QCOMPARE(fresh.state, RunState::Queued);
    }
};

QTEST_GUILESS_MAIN(TestRunLifecycle)
#include "TestRunLifecycle.moc"
