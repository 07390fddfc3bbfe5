#include "RetryRunner.h"

#include "core/retry/CheckpointMirror.h"
#include "core/retry/Checkpoints.h"
#include "core/retry/GangOutcome.h"
#include "core/retry/PreemptionRetry.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include <QLoggingCategory>
#include <QRandomGenerator>

namespace ty {

Q_LOGGING_CATEGORY(lcRetry, "trainyard.retry", QtInfoMsg)

const QString kRetriedNotice = QStringLiteral("retried as run ");
const QString kNotRetriedNotice = QStringLiteral("not retried: ");

namespace {

// An ended run as its attempt: what kind of end (a failed run recorded
// without a kind counts as `failed`, never as a success).
AttemptOutcome outcomeOf(const RunRecord& r)
{
    FailureKind kind = r.failureKind;
    if (kind == FailureKind::None && r.state == RunState::Failed)
        kind = FailureKind::Other;
    if (kind == FailureKind::None && r.state == RunState::Cancelled)
        kind = FailureKind::Cancelled;
    const std::optional<qint64> started
            = r.startedAt.isValid() ? std::optional<qint64>(r.startedAt.toMSecsSinceEpoch()) : std::nullopt;
    const qint64 ended = r.finishedAt.isValid() ? r.finishedAt.toMSecsSinceEpoch() : started.value_or(0);
    return AttemptOutcome::of(kind, started, ended);
}

bool decided(const QList<RunNotice>& notices)
{
    for (const RunNotice& n : notices)
        if (n.text.startsWith(kRetriedNotice) || n.text.startsWith(kNotRetriedNotice))
            return true;
    return false;
}

QString localTime(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

} // namespace

RetryRunner::RetryRunner(RunEngine* engine, ResultStore* store, Clock& clock, QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_store(store)
    , m_clock(clock)
    , m_jitter([] { return QRandomGenerator::global()->generateDouble() * 2.0 - 1.0; })
{
    connect(m_engine, &RunEngine::runStateChanged, this, &RetryRunner::onRunState);
    m_engine->setStopProvider([this](const RunRecord& run) { return stopOf(run); });
    m_engine->setWaitDeadlineProvider([this](const RunRecord& run) { return waitDeadlineOf(run); });
}

RetryRunner::~RetryRunner()
{
    m_engine->setStopProvider({});
    m_engine->setWaitDeadlineProvider({});
}

std::optional<std::pair<qint64, QString>> RetryRunner::waitDeadlineOf(const RunRecord& run) const
{
    const Result<JobSpec> spec = runSpecOf(run);
    if (!spec || !spec->deadlineSec)
        return std::nullopt;
    // The first attempt's submit: the earliest of its attempts group (the
    // run alone before its first retry).
    qint64 firstSubmitMs = run.createdAt.toMSecsSinceEpoch();
    if (const auto group = membershipOf(run, RunGroupKind::Attempts))
        for (const auto& [id, m] : m_store->groupMembers(group->group))
            if (const auto r = id == run.id ? Result<RunRecord>(run) : m_store->run(id))
                firstSubmitMs = std::min(firstSubmitMs, r->createdAt.toMSecsSinceEpoch());
    return std::pair<qint64, QString>{firstSubmitMs + *spec->deadlineSec * 1000,
            QStringLiteral("stopped at its deadline of %1 (from its first submit) while still queued")
                    .arg(retryDurationText(*spec->deadlineSec * 1000))};
}

std::optional<std::pair<qint64, QString>> RetryRunner::stopOf(const RunRecord& run) const
{
    const Result<JobSpec> spec = runSpecOf(run);
    if (!spec || (!spec->deadlineSec && !spec->maxRunTimeSec))
        return std::nullopt;
    // The earlier attempts: the first one's submit, their execution.
    qint64 firstSubmitMs = run.createdAt.toMSecsSinceEpoch();
    QList<AttemptOutcome> earlier;
    if (const auto group = membershipOf(run, RunGroupKind::Attempts))
        for (const auto& [id, m] : m_store->groupMembers(group->group)) {
            if (id == run.id)
                continue;
            if (const auto r = m_store->run(id); r && isTerminal(r->state)) {
                firstSubmitMs = std::min(firstSubmitMs, r->createdAt.toMSecsSinceEpoch());
                earlier.append(outcomeOf(*r));
            }
        }
    std::optional<std::pair<qint64, QString>> out;
    const auto consider = [&out](qint64 at, const QString& why) {
        if (!out || at < out->first)
            out = std::pair<qint64, QString>{at, why};
    };
    if (spec->deadlineSec)
        consider(firstSubmitMs + *spec->deadlineSec * 1000,
                QStringLiteral("stopped at its deadline of %1 (from its first submit)")
                        .arg(retryDurationText(*spec->deadlineSec * 1000)));
    if (spec->maxRunTimeSec) {
        const qint64 started = run.startedAt.isValid() ? run.startedAt.toMSecsSinceEpoch() : m_clock.nowMs();
        const qint64 left = std::max<qint64>(0, *spec->maxRunTimeSec * 1000 - executionMs(earlier));
        consider(started + left,
                QStringLiteral("stopped at its max_run_time of %1 (execution over its attempts)")
                        .arg(retryDurationText(*spec->maxRunTimeSec * 1000)));
    }
    return out;
}

int RetryRunner::restore(qint64 withinMs)
{
    const qint64 since = m_clock.nowMs() - withinMs;
    int retried = 0;
    QList<RunRecord> ended;
    for (const RunRecord& r : m_store->runs())
        if (isTerminal(r.state) && r.state != RunState::Succeeded && r.finishedAt.isValid()
                && r.finishedAt.toMSecsSinceEpoch() >= since)
            ended.append(r);
    // Oldest first, so an attempt is decided before a later one could be.
    std::sort(ended.begin(), ended.end(), [](const RunRecord& a, const RunRecord& b) { return a.id < b.id; });
    for (const RunRecord& r : std::as_const(ended))
        if (!m_outcomes.contains(r.id) && !decided(m_store->notices(r.id)) // decided before: not again
                && decide(r) == Outcome::Retrying)
            ++retried;
    return retried;
}

void RetryRunner::onRunState(const RunRecord& run)
{
    if (isTerminal(run.state) && run.state != RunState::Succeeded)
        decide(run);
}

RetryRunner::Outcome RetryRunner::decide(const RunRecord& run)
{
    if (!isTerminal(run.state) || run.state == RunState::Succeeded)
        return Outcome::NotApplicable;
    if (const auto it = m_outcomes.constFind(run.id); it != m_outcomes.cend()) {
        retell(run.id);
        return *it;
    }
    const Outcome outcome = decideOnce(run);
    m_outcomes.insert(run.id, outcome);
    return outcome;
}

void RetryRunner::retell(RunId run)
{
    const auto it = m_told.constFind(run);
    if (it == m_told.cend())
        return; // not decided yet (its checkpoints are being listed: the signal follows) or nothing to tell
    const Told told = *it;
    QMetaObject::invokeMethod(
            this,
            [this, run, told] {
                if (told.next != 0)
                    Q_EMIT retried(run, told.next, told.atMs);
                else
                    Q_EMIT notRetried(run, told.reason);
            },
            Qt::QueuedConnection);
}

std::optional<RetryRunner::Outcome> RetryRunner::earlierDecision(const RunRecord& run)
{
    for (const RunNotice& n : m_store->notices(run.id)) {
        if (n.text.startsWith(kNotRetriedNotice)) {
            m_told.insert(run.id, Told{0, 0, n.text.mid(kNotRetriedNotice.size())});
            return Outcome::NotRetried;
        }
        if (n.text.startsWith(kRetriedNotice)) {
            // "retried as run 15 (attempt 2), ...": written by queueNext.
            const QString rest = n.text.mid(kRetriedNotice.size());
            qsizetype digits = 0;
            while (digits < rest.size() && rest.at(digits).isDigit())
                ++digits;
            const auto next = m_store->run(rest.left(digits).toLongLong());
            if (!next)
                return Outcome::NotApplicable; // its retry is gone (removed by hand): nothing to follow
            const qint64 at = next->notBefore.isValid() ? next->notBefore.toMSecsSinceEpoch()
                                                        : next->createdAt.toMSecsSinceEpoch();
            m_told.insert(run.id, Told{next->id, at, {}});
            return Outcome::Retrying;
        }
    }
    return std::nullopt;
}

RetryRunner::Outcome RetryRunner::decideOnce(const RunRecord& ended)
{
    if (const auto gang = membershipOf(ended, RunGroupKind::Gang); gang && gang->position > 0)
        return Outcome::NotApplicable; // rank 0's end decides for the gang
    // A gang's attempt ended as its first failed rank did (GangOutcome.h):
    // one decision, one count against the budget, per gang restart.
    const RunRecord run = storedGangOutcomeOf(*m_store, ended);
    const Result<JobSpec> spec = runSpecOf(run);
    const std::optional<RetryPolicy> policy = spec ? retryPolicyFor(*spec, run.failureKind) : std::nullopt;
    if (!policy) // no `retry:` (and not a preemptible run preempted: PreemptionRetry.h)
        return Outcome::NotApplicable;
    // Decided by an earlier service (which stopped before its pipeline
    // followed the decision): the same decision, told again.
    if (const auto earlier = earlierDecision(run)) {
        retell(run.id);
        return *earlier;
    }

    // Its attempts so far, oldest first; only the newest is decided.
    QList<RunRecord> attempts;
    if (const auto group = membershipOf(run, RunGroupKind::Attempts)) {
        // One attempt per gang start: its rank 0. (Databases of before
        // 2026-12 hold a retried gang's other ranks in the attempts group too,
        // where each counted as an attempt and the last one, a rank > 0,
        // stopped every decision.)
        RunId newest = 0;
        for (const auto& [id, m] : m_store->groupMembers(group->group)) {
            auto r = id == run.id ? Result<RunRecord>(run) : m_store->run(id);
            if (!r)
                continue;
            if (const auto rank = membershipOf(*r, RunGroupKind::Gang); rank && rank->position > 0)
                continue;
            newest = id;
            if (isTerminal(r->state))
                attempts.append(id == run.id ? *r : storedGangOutcomeOf(*m_store, *r));
        }
        if (newest != run.id)
            return Outcome::NotApplicable;
    } else {
        attempts.append(run);
    }
    QList<AttemptOutcome> outcomes;
    for (const RunRecord& r : std::as_const(attempts))
        outcomes.append(outcomeOf(r));
    RunLimits limits;
    if (spec->deadlineSec)
        limits.deadlineMs = *spec->deadlineSec * 1000;
    if (spec->maxRunTimeSec)
        limits.maxRunTimeMs = *spec->maxRunTimeSec * 1000;
    const qint64 now = m_clock.nowMs();
    const RetryDecision decision = decideRetry(*policy, outcomes, attempts.front().createdAt.toMSecsSinceEpoch(), now,
            std::clamp(m_jitter(), -1.0, 1.0), limits);
    if (!decision.retry()) {
        if (decision.verdict != RetryVerdict::Succeeded && decision.verdict != RetryVerdict::Cancelled
                && decision.verdict != RetryVerdict::NothingEnded) {
            m_store->addNotice(RunNotice{run.id, {}, kNotRetriedNotice + decision.reason});
            m_told.insert(run.id, Told{0, 0, decision.reason});
            qCInfo(lcRetry).noquote() << QStringLiteral("run %1 not retried: %2").arg(run.id).arg(decision.reason);
            Q_EMIT notRetried(run.id, decision.reason);
            return Outcome::NotRetried;
        }
        return Outcome::NotApplicable;
    }

    // The newest complete checkpoint, looked up on the node the attempt ran
    // on; else the copy of one on this machine.
    const QString checkpointDir = run.env.value(kCheckpointDirVar);
    const auto fromCopy = [this, run](QString* note) {
        const auto copy
                = m_mirror && !run.env.value(kCheckpointDirVar).isEmpty() ? m_mirror->copyOf(run) : std::nullopt;
        if (!copy)
            return QString();
        *note = QStringLiteral("the newest complete checkpoint is the copy of %1 on this machine (written on %2 by "
                               "run %3, %4): it is copied to the node this attempt is placed on, unless that is %2")
                        .arg(copy->name, copy->node)
                        .arg(copy->producer)
                        .arg(checkpointSizeText(copy->bytes));
        return copy->nodePath;
    };
    if (checkpointDir.isEmpty() || run.node.isEmpty() || run.agentRunId.isEmpty()
            || run.failureKind == FailureKind::NodeLost) { // its node does not answer: nothing to list there
        QString note;
        const QString resumeFrom = fromCopy(&note);
        queueNext(run, attempts, decision, resumeFrom, note);
        return Outcome::Retrying;
    }
    m_deciding.insert(run.id);
    m_engine->listRunFiles(run, checkpointGlobs(checkpointDir),
            [this, run, attempts, decision, checkpointDir, fromCopy](const Result<AgentFileList>& list) {
                QString resumeFrom;
                QString note;
                if (!list) {
                    note = QStringLiteral("its checkpoints could not be listed (%1): it starts from the beginning")
                                   .arg(list.error().message);
                } else {
                    const CheckpointChoice choice = newestCompleteCheckpoint(*list, checkpointDir);
                    resumeFrom = choice.path;
                    if (!choice.skipped.isEmpty())
                        note = QStringLiteral("incomplete checkpoint(s) skipped (no %1 marker: the save did not "
                                              "finish): %2")
                                       .arg(kCheckpointDoneSuffix, choice.skipped.join(QStringLiteral(", ")));
                }
                if (resumeFrom.isEmpty()) {
                    QString copied;
                    resumeFrom = fromCopy(&copied);
                    if (!resumeFrom.isEmpty())
                        note = note.isEmpty() ? copied : note + QStringLiteral("; ") + copied;
                }
                m_deciding.remove(run.id);
                queueNext(run, attempts, decision, resumeFrom, note);
            });
    return Outcome::Retrying;
}

void RetryRunner::queueNext(const RunRecord& last, const QList<RunRecord>& attempts, const RetryDecision& decision,
        const QString& resumeFrom, const QString& resumeNote)
{
    const auto fail = [&](const QString& why) {
        const QString text = kNotRetriedNotice + QStringLiteral("its retry could not be recorded: ") + why;
        m_store->addNotice(RunNotice{last.id, {}, text});
        qCWarning(lcRetry).noquote() << QStringLiteral("run %1: %2").arg(last.id).arg(text);
        m_told.insert(last.id, Told{0, 0, text});
        Q_EMIT notRetried(last.id, text);
    };
    RunGroupId group = groupIdOf(last, RunGroupKind::Attempts);
    if (group == 0) {
        auto made = m_store->createGroup(RunGroupKind::Attempts, last.name, m_clock.nowUtc());
        if (!made)
            return fail(made.error().message);
        group = *made;
        if (auto joined = m_store->joinGroup(last.id, RunGroupMembership{group, RunGroupKind::Attempts, 1, {}});
                !joined)
            return fail(joined.error().message);
    }
    const int attempt = int(attempts.size()) + 1;

    RunRecord next;
    next.name = last.name;
    next.state = RunState::Queued;
    next.specYaml = last.specYaml;
    next.specPath = last.specPath;
    next.argv = last.argv;
    next.workdir = last.workdir;
    next.env = last.env;
    setAttemptEnvironment(next.env, attempt,
            last.env.value(kCheckpointDirVar, checkpointDirFor(QString::number(attempts.front().id))), resumeFrom);
    // Where its checkpoint is: on that node, unless the node was lost or this
    // machine holds a copy of it (CheckpointMirror stages it on another node).
    const auto copy = m_mirror && !resumeFrom.isEmpty() ? m_mirror->copyOf(last) : std::nullopt;
    if (!resumeFrom.isEmpty() && last.failureKind != FailureKind::NodeLost && !(copy && copy->nodePath == resumeFrom))
        next.node = last.node;
    next.tags = last.tags;
    next.priority = last.priority;
    next.createdAt = m_clock.nowUtc();
    if (decision.atMs > m_clock.nowMs())
        next.notBefore = QDateTime::fromMSecsSinceEpoch(decision.atMs, Qt::UTC);
    next.pendingReason = QStringLiteral("attempt %1, not before %2: %3")
                                 .arg(attempt)
                                 .arg(localTime(decision.atMs), decision.reason);
    for (const RunGroupMembership& m : last.groups)
        if (m.kind == RunGroupKind::Sweep || m.kind == RunGroupKind::Pipeline)
            next.groups.append(m); // its place in its sweep or pipeline; a gang forms again at its start
    next.groups.append(RunGroupMembership{group, RunGroupKind::Attempts, attempt, {}});
    auto id = m_store->createRun(next, m_store->params(last.id));
    if (!id)
        return fail(id.error().message);

    m_store->addNotice(RunNotice{last.id, {},
            kRetriedNotice
                    + QStringLiteral("%1 (attempt %2), not before %3: %4")
                              .arg(*id)
                              .arg(attempt)
                              .arg(localTime(decision.atMs), decision.reason)});
    QString about = QStringLiteral("attempt %1 of run %2").arg(attempt).arg(attempts.front().id);
    if (resumeFrom.isEmpty())
        about += QStringLiteral(": no complete checkpoint, it starts from the beginning");
    else if (next.node.isEmpty() && copy)
        // It may start anywhere: TRAINYARD_RESUME_FROM is set where it starts
        // (the copy staged there, on another node than the writer).
        about += QStringLiteral(": resumes from %1, written on %2 at %3 (copied to the node it starts on, if another)")
                         .arg(copy->name, copy->node, resumeFrom);
    else
        about += QStringLiteral(": resumes from %1 (TRAINYARD_RESUME_FROM)").arg(resumeFrom);
    m_store->addNotice(RunNotice{*id, {}, about});
    if (!resumeNote.isEmpty())
        m_store->addNotice(RunNotice{*id, {}, resumeNote});
    qCInfo(lcRetry).noquote() << QStringLiteral("run %1 retried as run %2 (attempt %3) at %4")
                                         .arg(last.id)
                                         .arg(*id)
                                         .arg(attempt)
                                         .arg(localTime(decision.atMs));
    m_engine->scheduleSoon();
    m_told.insert(last.id, Told{*id, decision.atMs, {}});
    Q_EMIT retried(last.id, *id, decision.atMs);
}

} // namespace ty
