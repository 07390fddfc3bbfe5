// The duration shown for a run (trainyardctl ls/show, the runs table), as a
// pure function of the record and the caller's clock: a run whose end is
// known shows end - start however late it is looked at; one whose node is
// away (unknown) says its end is unknown instead of counting on.
#include "core/common/RunDuration.h"

#include <QTest>

using namespace ty;

namespace {
const QDateTime kStart = QDateTime(QDate(2026, 12, 2), QTime(10, 0, 0), Qt::UTC);

RunRecord record(RunState state, const QDateTime& started, const QDateTime& finished = {})
{
    RunRecord r;
    r.state = state;
    r.startedAt = started;
    r.finishedAt = finished;
    return r;
}
} // namespace

class TestRunDuration final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void notStarted()
    {
        const RunDuration d = runDuration(record(RunState::Queued, {}), kStart);
        QCOMPARE(int(d.kind), int(RunDuration::Kind::NotStarted));
        QCOMPARE(d.ms, qint64(-1));
    }

    void endedIsEndMinusStartWhenLookedAtLater()
    {
        const RunRecord r = record(RunState::Succeeded, kStart, kStart.addMSecs(90500));
        for (const QDateTime& now : {kStart.addSecs(91), kStart.addSecs(10 * 3600)}) {
            const RunDuration d = runDuration(r, now);
            QCOMPARE(int(d.kind), int(RunDuration::Kind::Ended));
            QCOMPARE(d.ms, qint64(90500));
        }
    }

    void endKnownWhileItsNodeIsAwayIsNotCounted()
    {
        // Its end was recorded (the agent's exit status) and then the node
        // went away: the end stays end - start.
        const RunRecord r = record(RunState::Unknown, kStart, kStart.addSecs(42));
        const RunDuration d = runDuration(r, kStart.addSecs(3600));
        QCOMPARE(int(d.kind), int(RunDuration::Kind::Ended));
        QCOMPARE(d.ms, qint64(42000));
    }

    void endUnknownWhileItsNodeIsAway()
    {
        const RunRecord r = record(RunState::Unknown, kStart);
        for (const QDateTime& now : {kStart.addSecs(5), kStart.addSecs(7200)}) {
            const RunDuration d = runDuration(r, now);
            QCOMPARE(int(d.kind), int(RunDuration::Kind::EndUnknown));
            QCOMPARE(d.ms, qint64(-1));
        }
    }

    void runningCountsOn()
    {
        const RunRecord r = record(RunState::Running, kStart);
        QCOMPARE(runDuration(r, kStart.addSecs(3725)).ms, qint64(3725000));
        QCOMPARE(int(runDuration(r, kStart.addSecs(3725)).kind), int(RunDuration::Kind::Running));
        QCOMPARE(runDuration(r, kStart.addSecs(-5)).ms, qint64(0)); // a clock behind the start
    }

    void terminalWithoutEndCountsZero()
    {
        const RunDuration d = runDuration(record(RunState::Failed, kStart), kStart.addSecs(100));
        QCOMPARE(int(d.kind), int(RunDuration::Kind::Ended));
        QCOMPARE(d.ms, qint64(0));
    }
};

QTEST_GUILESS_MAIN(TestRunDuration)
#include "TestRunDuration.moc"
