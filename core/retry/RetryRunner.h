#pragma once

#include "core/common/Clock.h"
#include "core/common/Run.h"
#include "core/retry/RetryDecision.h"

#include <QObject>
#include <QHash>
#include <QSet>

#include <functional>
#include <optional>

namespace ty {

class RunEngine;
class ResultStore;
class CheckpointMirror;

// Retries the runs whose job spec has `retry:` (issue #25), and requeues
// preemptible runs that were preempted even without it (PreemptionRetry.h),
// inside the service (trainyardd), so a retry at 3 am has a process awake for it.
//
// When a run ends (RunEngine::runStateChanged) other than succeeded, its
// attempts so far -- the runs of its attempts group (RunGroupKind::Attempts;
// made at the first retry, the first run at position 1), or the run alone --
// go to decideRetry (RetryDecision.h) with the spec's policy, `deadline`
// and `max_run_time`. A retry is the next attempt: a new queued run with the
// same spec, params, workdir, tags and groups (its sweep's place; not the
// gang: rank 0's retry forms it again), in the attempts group at the next
// position, not started before the backoff's end (RunRecord::notBefore,
// waited out by the engine's scheduler), with the attempt's environment
// (Checkpoints.h: TRAINYARD_ATTEMPT, ..., TRAINYARD_RESUME_FROM the newest
// complete checkpoint, found on the ended attempt's node first, else the
// copy of one on this machine (CheckpointMirror, where one is set: a node
// lost). An attempt that resumes from a checkpoint of which this machine
// holds no copy is placed on the node that holds it; one whose copy is here
// may go to any node, the copy staged there before it starts). Both runs
// get a notice ("retried as run 15 at 10:42:30: retry 1 of 3 after exit
// code 1" / "attempt 2 of run 12 ..."); a run not retried gets one saying
// why ("not retried: failed 4 times (exit code); its retry limit is 3").
// Only the newest attempt of a group is decided; a gang's other ranks are
// left alone (rank 0 decides, with the gang's end: when another rank failed
// and the engine stopped rank 0 with it, that rank's failure, GangOutcome.h,
// so a gang restart counts once against the budget, whatever its size). A pipeline's step run is retried in place:
// the next attempt is in the pipeline's group as the same step, and the
// pipeline (PipelineRunner::setRetries) follows it instead of failing.
//
// Once per ended run: a run that already has a retry notice is not decided
// again; restore() decides the runs that ended while no service ran.
//
// Thread: the engine's (its signals, its store); the clock's timers there.
class RetryRunner : public QObject {
    Q_OBJECT

public:
    // Also bounds running runs (RunEngine::setStopProvider) by their spec's
    // `deadline` (from the first attempt's submit) and what `max_run_time`
    // leaves them after the earlier attempts' execution, and queued ones,
    // a retry waiting out its backoff included (RunEngine::
    // setWaitDeadlineProvider), by that `deadline`: the engine fails them
    // `time_limit` then, never starting them after it.
    RetryRunner(RunEngine* engine, ResultStore* store, Clock& clock = systemClock(), QObject* parent = nullptr);
    ~RetryRunner() override;

    // When `run` (running) must stop for its deadline or max_run_time, and
    // the words its ending gets; nullopt when its spec sets neither.
    std::optional<std::pair<qint64, QString>> stopOf(const RunRecord& run) const;
    // When `run` (not started) must end unstarted for its deadline (UTC ms:
    // the first attempt's submit plus `deadline`), and the words: "stopped at
    // its deadline of 6h (from its first submit) while still queued";
    // nullopt when its spec sets none.
    std::optional<std::pair<qint64, QString>> waitDeadlineOf(const RunRecord& run) const;

    // Decides the runs that ended within the last `withinMs` (default a
    // week) without a decision recorded (a service that stopped between a
    // run's end and its retry). Returns how many were retried.
    int restore(qint64 withinMs = 7LL * 24 * 3600 * 1000);
    // The jitter's sample in [-1, 1] (default: uniform random); tests fix it.
    void setJitterSource(std::function<double()> sample) { m_jitter = std::move(sample); }
    // The copies of checkpoints on this machine (null: none; not owned; it
    // must outlive this or be unset first).
    void setCheckpointMirror(CheckpointMirror* mirror) { m_mirror = mirror; }
    // Retries whose checkpoint lookup is still under way.
    bool busy() const { return !m_deciding.isEmpty(); }

    enum class Outcome {
        NotApplicable, // not ended failed, no `retry:`, an older attempt, a gang's rank > 0
        NotRetried,    // decided against (notRetried() emitted; a notice says why)
        Retrying,      // the next attempt is (being) queued: retried() follows
    };
    // Decides `run` (ended) now, once: a later call for the same run (the
    // runStateChanged slot after a pipeline asked) gives the same outcome.
    // A pipeline's step run is decided when its pipeline asks (before the
    // pipeline fails the step) or when its end arrives here, whichever first.
    // retried() / notRetried() come once the decision is made: during this
    // call (nothing to look up), later (its checkpoints listed first), and
    // again, queued, for each later call, so a caller that waits for them
    // only after this returns still hears them. A run decided by an earlier
    // service (its notice) keeps that decision, told again the same way
    // (a service stopped between a pipeline step's end and its pipeline
    // following the retry: the next service's pipeline follows it).
    Outcome decide(const RunRecord& run);

Q_SIGNALS:
    // `next` is the attempt queued for the ended run `ended`, not before `atMs`.
    void retried(ty::RunId ended, ty::RunId next, qint64 atMs);
    // `ended` is not retried, for `reason`.
    void notRetried(ty::RunId ended, const QString& reason);

private:
    Outcome decideOnce(const RunRecord& ended);
    // Emits the decision told for `run` again, queued (nothing when none is).
    void retell(RunId run);
    // The decision an earlier process recorded for `run` (its notice), or
    // nullopt; remembered for retell().
    std::optional<Outcome> earlierDecision(const RunRecord& run);
    void onRunState(const RunRecord& run);
    void queueNext(const RunRecord& last, const QList<RunRecord>& attempts, const RetryDecision& decision,
            const QString& resumeFrom, const QString& resumeNote);

    RunEngine* m_engine;
    ResultStore* m_store;
    CheckpointMirror* m_mirror = nullptr;
    Clock& m_clock;
    std::function<double()> m_jitter;
    QSet<RunId> m_deciding;           // ended runs whose next attempt is being made
    QHash<RunId, Outcome> m_outcomes; // decided in this process
    struct Told {
        RunId next = 0; // 0: not retried, for `reason`
        qint64 atMs = 0;
        QString reason;
    };
    QHash<RunId, Told> m_told; // what retried()/notRetried() said for each decided run
};

// The notices a decision leaves on the ended run begin with one of these.
extern const QString kRetriedNotice;    // "retried as run "
extern const QString kNotRetriedNotice; // "not retried: "

} // namespace ty
