// A gang's end as its retry sees it (issue #25): rank 0 stopped because
// another rank failed ends cancelled, yet the gang failed as that rank did.
#include "core/retry/GangOutcome.h"
#include "core/common/RunGroup.h"

#include <QTest>

using namespace ty;

namespace {

constexpr RunGroupId kGang = 7;
const QDateTime kT0 = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000LL, Qt::UTC);

RunRecord rank(RunId id, int position, RunState state, FailureKind kind, qint64 endedAfterMs,
        std::optional<int> exitCode = std::nullopt, const QString& reason = {})
{
    RunRecord r;
    r.id = id;
    r.name = position == 0 ? u"train"_qs : QStringLiteral("train#rank%1").arg(position);
    r.state = state;
    r.failureKind = kind;
    r.failureReason = reason;
    r.exitCode = exitCode;
    r.startedAt = kT0;
    r.finishedAt = kT0.addMSecs(endedAfterMs);
    r.groups.append(RunGroupMembership{kGang, RunGroupKind::Gang, position, {}});
    return r;
}

} // namespace

class TestGangOutcome final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void rankFailureIsTheGangs()
    {
        // Rank 2 exits 3 first, rank 1 then fails too (its peer went away),
        // rank 0 is stopped with the gang.
        const RunRecord r0 = rank(10, 0, RunState::Cancelled, FailureKind::Cancelled, 9000);
        const QList<RunRecord> ranks{rank(11, 1, RunState::Failed, FailureKind::ExitCode, 5000, 1, u"exit code 1"_qs),
                rank(12, 2, RunState::Failed, FailureKind::ExitCode, 4000, 3, u"exit code 3"_qs)};
        const RunRecord out = gangOutcomeOf(r0, ranks);
        QCOMPARE(out.id, 10);
        QCOMPARE(out.state, RunState::Failed);
        QCOMPARE(out.failureKind, FailureKind::ExitCode);
        QCOMPARE(out.exitCode, std::optional<int>(3));
        QCOMPARE(out.failureReason, u"rank 2 (run 12): exit code 3"_qs);
        QCOMPARE(out.finishedAt, r0.finishedAt); // rank 0's times: its attempt's
        QCOMPARE(out.startedAt, r0.startedAt);
    }

    void sameEndTimeLowestRankWins()
    {
        const RunRecord r0 = rank(10, 0, RunState::Cancelled, FailureKind::Cancelled, 9000);
        const QList<RunRecord> ranks{rank(12, 2, RunState::Failed, FailureKind::NodeLost, 4000),
                rank(11, 1, RunState::Failed, FailureKind::ExitCode, 4000, 2)};
        QCOMPARE(gangOutcomeOf(r0, ranks).failureKind, FailureKind::ExitCode);
    }

    void userCancelStaysCancelled()
    {
        // Every rank cancelled (trainyardctl cancel): not a failure, not retried.
        const RunRecord r0 = rank(10, 0, RunState::Cancelled, FailureKind::Cancelled, 9000);
        const QList<RunRecord> ranks{rank(11, 1, RunState::Cancelled, FailureKind::Cancelled, 9000)};
        const RunRecord out = gangOutcomeOf(r0, ranks);
        QCOMPARE(out.state, RunState::Cancelled);
        QCOMPARE(out.failureKind, FailureKind::Cancelled);
    }

    void rankZerosOwnEndStands()
    {
        // Rank 0 failed itself (or succeeded): its end is the gang's.
        const RunRecord r0 = rank(10, 0, RunState::Failed, FailureKind::ExitCode, 3000, 1, u"exit code 1"_qs);
        const QList<RunRecord> ranks{rank(11, 1, RunState::Failed, FailureKind::OomKilled, 2000)};
        QCOMPARE(gangOutcomeOf(r0, ranks).failureKind, FailureKind::ExitCode);
        const RunRecord ok = rank(10, 0, RunState::Succeeded, FailureKind::None, 3000, 0);
        QCOMPARE(gangOutcomeOf(ok, ranks).state, RunState::Succeeded);
    }

    void otherGangsRanksIgnored()
    {
        const RunRecord r0 = rank(10, 0, RunState::Cancelled, FailureKind::Cancelled, 9000);
        RunRecord stranger = rank(20, 1, RunState::Failed, FailureKind::ExitCode, 1000, 1);
        stranger.groups = {RunGroupMembership{kGang + 1, RunGroupKind::Gang, 1, {}}};
        QCOMPARE(gangOutcomeOf(r0, {stranger}).state, RunState::Cancelled);
        RunRecord alone = r0;
        alone.groups.clear(); // not a gang at all
        QCOMPARE(gangOutcomeOf(alone, {rank(11, 1, RunState::Failed, FailureKind::ExitCode, 1000, 1)}).state,
                RunState::Cancelled);
    }
};

QTEST_GUILESS_MAIN(TestGangOutcome)
#include "TestGangOutcome.moc"
