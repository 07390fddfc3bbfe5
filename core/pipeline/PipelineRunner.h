#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/memo/MemoKey.h"
#include "core/memo/MemoStore.h"
#include "core/memo/TreeHasher.h"
#include "core/pipeline/PipelineProgress.h"
#include "core/runs/RunEngine.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QRegularExpression>
#include <QSet>
#include <QTimer>

#include <functional>
#include <memory>

namespace ty {
class RetryRunner;
struct JobSpec;
class ResultStore;
} // namespace ty

namespace ty::pipeline {

class HashWorker;

// Runs pipelines inside the service (trainyardd), so they advance with every
// window closed: each step instance becomes a run of the engine, named
// "<pipeline>/<instance>", a member of the pipeline's run group (RunGroupKind::
// Pipeline, whose id is the pipeline's: position the instance's index, role
// its name); its
// ending (RunEngine::runStateChanged) is collected and the pipeline moves on
// (PipelineProgress).
//
// Outputs: when a step succeeds, its `artifacts` (and the files its output
// params are read from) are copied from its node into
// `<db>.runs/<id>/outputs/` (Paths.h runDataDir; RunEngine::downloadArtifacts), output params
// are read from there (text trimmed, at most 64 KiB) or aggregated from the
// run's metrics in the result database, and metrics later steps reference
// are computed the same way. A run ending as `unknown` (node unreachable)
// is not an ending: the step waits for the run's real one.
//
// Memoization (a step with `memoize`, core/memo): before a step is
// submitted its key is computed (its resolved command, env, params, GPU
// type and count, the content of its workdir, its upstream steps' digests,
// key_extra, minus `ignore`). An entry of that key whose recorded outputs
// still exist in the result store with their hashes, and younger than
// max_age, is a hit: the step ends `cached` with the entry's output params,
// no run is made, and the hit is recorded. Otherwise the run is made with a
// notice saying why (MemoExplain: "train.py changed; param lr 0.01 ->
// 0.001"), and when it succeeds an entry is written with its outputs'
// content hashes. An expired entry, or one whose outputs are gone or
// changed, is evicted.
//
// Persistence (schema 12, ResultStore::putPipeline): every change of a
// pipeline is written to the result database as one document, so a
// restarted service takes up the pipelines still running (restore()): their
// steps' runs are followed again (a run that ended meanwhile is collected),
// and what was due starts. The pipeline is rebuilt from the text it was
// submitted with (reparsePipeline: the `uses:` files as they were then).
// Ended pipelines stay listed (describe(), ids()) from the database.
//
// Document (JSON, "format": "trainyard-pipeline-1"): {source: {yaml,
// origin, base_dir, source_path, params{}, used_files{path: text}}, node,
// cancelled, resumed_from, instances: [{state, run, reason, outputs{},
// digest, memo (MemoKey.h componentsToJson), after_ok [Slurm job ids]}] in PipelineProgress's
// instance order, view: describe()'s object}.
//
// Identical steps at the same time (Flyte's cache_serialize): a memoized
// step whose key is being computed by a running step (of this pipeline or
// another) does not run; it waits, saying for which run, and when that run
// succeeded it is a hit like any other; when it failed or was cancelled the
// first waiter runs itself.
//
// Slurm (issue #26): on a Slurm node (RunEngine::isSlurmNode) a step
// instance that needs nothing known only at its upstream's end is submitted
// as soon as its upstream steps are in Slurm's queue, behind their jobs
// (`--dependency=afterok:<job>[:<job>...] --kill-on-invalid-dep=yes`,
// RunEngine::setSlurmAfterOk, never in the run's job spec), so it waits in
// Slurm's queue, accruing age priority, and Slurm starts it the moment they
// succeeded. Eligible (PipelineProgress::startEarly, earlyStartObstacle):
// not memoized; no value from an upstream output or metric (command, env,
// params, `when:`); a list `depends:`, not a condition; no upstream step
// with `retry:` (a retry is a new job) or `continue_on: failed`; no step
// upstream of it (transitively) that writes outputs to stage into its
// workdir still to end; every upstream instance succeeded, cached, or
// running as a Slurm job on the pipeline's node, one at least. Its run's
// notices say which jobs it is behind. When an upstream run fails, Slurm
// cancels it (it never ran): the step ends skipped naming that upstream
// step, as any step after a failure, however the endings come in (one that
// comes first waits for the other). Where Slurm would still start it but
// the rules say not (an upstream step failed though its run succeeded: its
// outputs could not be collected; fail_fast stopped the pipeline while it
// waits in Slurm's queue), its job is cancelled and it ends skipped. The
// jobs it waits for are kept in the document (`after_ok`), so a restarted
// service that had not sent it to Slurm yet still sends it behind them.
//
// Thread: the engine's (every call and signal).
class PipelineRunner : public QObject {
    Q_OBJECT

public:
    PipelineRunner(RunEngine* engine, ResultStore* store, QString databasePath, QObject* parent = nullptr);
    ~PipelineRunner() override;

    // Starts a validated pipeline; its steps are submitted as it allows,
    // on `node` when given (else wherever the scheduler places them).
    // Returns the pipeline's id: the id of its new run group (> 0, never
    // used before in the database), part of group `parent` when > 0.
    // Errors: the group could not be stored.
    Result<qint64> submit(const PipelineSpec& spec, const QString& node = {}, RunGroupId parent = 0);
    // submit() for each pipeline of spec's sweep (expandPipelineSweep), in
    // order, all parts of one new sweep group; spec alone, in no sweep group,
    // when it has no sweep. Errors: the sweep's (nothing is submitted), a
    // group that could not be stored (those submitted before stay).
    Result<QList<qint64>> submitAll(const PipelineSpec& spec, const QString& node = {});
    // Takes up the pipelines the database says are running (call once,
    // before the event loop runs: the engine's endings then find them). A pipeline that cannot be
    // rebuilt is ended failed, saying why. Returns how many were taken up.
    int restore();
    // A new pipeline from pipeline `id`, which ended failed or cancelled:
    // its succeeded and cached step instances are reused (state cached,
    // their outputs and runs kept; Metaflow's resume), the others run again.
    // Same spec, params and node. NotFound for an unknown id; InvalidInput
    // while it runs or when it succeeded (nothing to resume).
    Result<qint64> resume(qint64 id);
    // Cancels waiting steps and the runs of running ones. NotFound for an
    // unknown id; InvalidInput when it already ended.
    Result<void> cancel(qint64 id);

    // {id, name, state, created_ms, ended_ms, params{}, resumed_from, steps:
    // [{name, step, state, run, reason, outputs{}}]}: PROTOCOL.md's pipeline
    // object. Pipelines of earlier service lives are read from the database.
    std::optional<QJsonObject> describe(qint64 id) const;
    QList<qint64> ids() const; // ascending
    // A pipeline has not ended (the service stays up for it).
    bool busy() const;
    // Steps whose spec has `retry:` are retried in place (issue #25): a
    // failed run of one is asked of `retries` before the step fails; while
    // its next attempt is queued the step stays running ("attempt 2, not
    // before ..."), on that attempt's run. Null: every failure fails its step.
    void setRetries(RetryRunner* retries);
    // Evicts memoization's entries past the database's cache policy
    // (core/memo/CachePolicy.h: `<db>.cache.json`, max_age and max_size),
    // saying what went in the log. Done after each entry written and hourly;
    // the service also calls it once at start.
    void evictCache();

Q_SIGNALS:
    // A step of the pipeline changed state, or the pipeline did.
    void pipelineChanged(qint64 id, const QJsonObject& pipeline);

private:
    struct Active;
    // A new pipeline's id: its new run group's.
    Result<qint64> newPipelineId(const QString& name, RunGroupId parent);
    void advance(Active& p);
    void launch(Active& p, int instance);
    void onRunState(const RunRecord& run);
    // The step's run ended (not an early-queued one's cancellation by Slurm): collected, failed, retried.
    void ended(qint64 id, int instance, const RunRecord& run);
    // Slurm's job id of a pipeline's run now in Slurm's queue or running on
    // its node (empty: none, or it ended).
    QString slurmJobOf(const Active& p, RunId run);
    // The jobs of the running upstream instances of `instance`.
    QStringList upstreamJobs(const Active& p, int instance);
    // For an instance queued behind its upstream: "not run: step 'a' failed"
    // for the first upstream instance that ended other than succeeded or
    // cached; `pending`: one has not ended.
    // `which`: that instance.
    QString failedUpstream(const Active& p, int instance, bool* pending, int* which = nullptr) const;
    // After a step instance ended: what is queued in Slurm behind upstream
    // jobs and is not to start is cancelled, and the endings held for their
    // upstream's are settled.
    void settleQueuedBehind(Active& p);
    // The pipeline and instance a run is (rank 0 of a gang, or another rank).
    std::optional<std::pair<qint64, int>> instanceOf(const RunRecord& run) const;
    // Stage-in (RunEngine::setStageProvider): the outputs of every step
    // upstream of the run's (transitively), as copied into the result store.
    QList<RunEngine::StageSource> stageSources(const RunRecord& run) const;
    void onStaging(RunId run, qint64 done, qint64 total);
    void collect(qint64 id, int instance, const RunRecord& run);
    void finishStep(
            qint64 id, int instance, StepState state, const QString& reason, const QMap<QString, QString>& outputs);
    QString aggregate(RunId run, const QString& key, const QString& how) const;
    void announce(const Active& p);
    // The document of the header's comment; announce() stores it.
    QJsonObject documentOf(const Active& p) const;
    // The pipeline rebuilt from its document, as pipeline `id`: every
    // instance's state (restore), or only what succeeded, as cached (resume).
    Result<std::unique_ptr<Active>> rebuild(qint64 id, const QJsonObject& document, bool forResume) const;
    // Registers a pipeline and moves it on.
    qint64 adopt(std::unique_ptr<Active> p);
    // A memoized step's key, in two halves: what the main thread knows (the
    // resolved command, env, params, GPUs, upstream digests; which files to
    // hash and which to leave out), and what the hashing thread computes
    // (the workdir's and inputs' hashes, the entry of the key, its outputs'
    // current hashes).
    struct MemoJob {
        MemoComponents components; // without codeFiles and inputs
        QStringList ignore;
        QString workdir; // empty: not a folder here (nothing hashed)
        QString root, db, dbCanonical;
        QSet<QString> specFiles;
        QList<QRegularExpression> outputGlobs;
        QList<std::pair<QString, QString>> inputs; // as written, absolute
    };
    struct MemoLookup {
        Result<MemoComponents> components = MemoComponents{}; // an error: the key could not be computed
        Result<std::optional<MemoEntry>> entry = std::optional<MemoEntry>();
        QHash<QString, Result<std::optional<FileDigest>>> outputs; // the entry's outputs now, by path
    };
    MemoJob memoJob(const Active& p, int instance, const JobSpec& job) const;
    // On the hashing thread.
    static void computeMemo(
            TreeHasher& hasher, ResultStore& store, const QString& databasePath, const MemoJob& m, MemoLookup& out);
    // After the lookup: a hit (cached), a wait for the run computing the same
    // key, or the run submitted.
    void launchMemoized(Active& p, int instance, const JobSpec& job, const MemoLookup& lookup);
    void submitStep(Active& p, int instance, const JobSpec& job, const QString& whyRun);
    // Tries a memoized result: true when the instance ended cached.
    bool tryMemoHit(Active& p, int instance, const MemoLookup& lookup, QString* why);
    void writeMemoEntry(const Active& p, int instance, RunId run, const Result<TreeHash>& outputsTree,
            const QMap<QString, QString>& outputs);

    RunEngine* m_engine;
    ResultStore* m_store;
    QString m_databasePath;
    std::map<qint64, std::unique_ptr<Active>> m_pipelines;
    QHash<RunId, std::pair<qint64, int>> m_byRun; // run -> pipeline, instance
    struct Ended {
        qint64 pipeline = 0;
        int instance = 0;
        RunRecord run;
    };
    QHash<QString, QList<Ended>> m_awaitingNode; // succeeded steps to collect once their node is connected
    QHash<RunId, QString> m_slurmJobs;           // running runs of pipelines on Slurm nodes -> their Slurm job
    RetryRunner* m_retries = nullptr;
    QHash<RunId, std::pair<qint64, int>> m_awaitingRetry;       // failed step runs being retried -> pipeline, instance
    QHash<QString, RunId> m_keyInFlight;                        // memo key -> the run computing it
    QHash<QString, QList<std::pair<qint64, int>>> m_keyWaiters; // memo key -> instances waiting for that run
    // The run computing `key` ended: its waiters are launched again (a hit
    // when it succeeded), and their pipelines moved on.
    void releaseKey(const QString& key);
    // A waiting instance goes on (its key computed, the run it waited for
    // ended): `next` is called unless its pipeline ended or it no longer
    // waits (false, nothing done), or fail_fast stopped the pipeline
    // meanwhile (it is ended skipped). True: the pipeline is to advance.
    bool goOn(qint64 id, int instance, const std::function<void(Active&)>& next);
    // advance() of pipeline `id` from the event loop, once however often asked before it runs.
    void advanceSoon(qint64 id);
    QSet<qint64> m_advancePending;
    QTimer m_evictTimer;
    // Last: destroyed first, so no hashing job outlives what it reports to.
    std::unique_ptr<HashWorker> m_hashWorker; // workdirs and outputs are hashed on its thread
};

} // namespace ty::pipeline
