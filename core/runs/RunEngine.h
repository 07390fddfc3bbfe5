#pragma once

#include "core/agentproto/StderrRanges.h"
#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/nodes/AgentFiles.h"
#include "core/nodes/AgentTypes.h"
#include "core/nodes/WorkdirSync.h"
#include "core/runs/FairShareLedger.h"
#include "core/sched/Policy.h"
#include "core/sched/Preemption.h"
#include "core/sched/Scheduler.h"
#include "core/sched/SchedulerDecision.h"
#include "core/spec/JobSpec.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>

#include <functional>
#include <memory>

class QLockFile;
class QTimer;

namespace ty {

// The job spec a run was submitted with (its stored text, parsed against
// the folder it came from; its workdir the run's, resolved at submission).
// It was validated then, so this only fails for a database edited by hand.
Result<JobSpec> runSpecOf(const RunRecord& run);

class AgentClient;
class AgentTransport;
class Clock;
class NodePool;
struct AgentRunStatus;
class ResultStore;
struct StageFile;
class RunIngest;
using ByteRange = agentproto::ByteRange; // core/logs/StderrRanges.h

// The engine that turns submitted job specs into runs on nodes and keeps the
// result database in step with them:
//   submit -> store (queued) -> placement -> agent `start` -> agent `tail`
//   -> local console copy + terminal rendering + metric extraction -> store.
//
// Thread affinity: a RunEngine lives on one thread (the GUI moves it to a
// worker thread; the CLI keeps it on its main thread). submit() and cancel()
// may be called from any thread; everything else runs on the engine's thread.
//
// Problems of one run that its user should act on (a synced symlink leading
// nowhere on the node, artifacts that could not be listed or were refused, a
// console that cannot be followed or was truncated on its node) are logged
// and recorded as notices of the run in the store (RunNotice.h), which the
// GUI and `trainyardctl show` list.
//
// Ingestion ownership: several processes (the GUI, trainyardctl) may share one
// database. Only the process holding `<db>.ingest.lock` copies consoles and
// extracts metrics, so nothing is stored twice; the others still start and
// cancel runs and read the database. The owner picks up runs that others
// started (it polls the database) and, on start, re-attaches every run that
// was running, resuming each console at the byte offset stored for it.
//
// Nodes: their connections (heartbeats, reconnection with backoff, probes,
// GPU reports, removal, host keys) are a NodePool's (core/nodes/NodePool.h),
// on the engine's clock; the node methods below forward to it. What happens
// to a node's runs when it comes up or is lost is the engine's.
class RunEngine final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunEngine)

public:
    // `store` must outlive the engine. `databasePath` locates the local console
    // copies (<db dir>/runs/<id>/console.log) and the ingestion lock.
    RunEngine(ResultStore* store, QString databasePath, QObject* parent = nullptr);
    // The same with the clock its logic reads and waits on (core/common/
    // Clock.h): heartbeat timeouts, reconnection backoff and probes,
    // time_limit, submission and end times of runs, notice times, the
    // scheduler's "now". The constructor above uses systemClock(); tests pass
    // a manual one (tests/support/TestClock.h). `clock` must outlive the
    // engine; its timers fire on the engine's thread.
    RunEngine(ResultStore* store, QString databasePath, Clock& clock, QObject* parent = nullptr);
    ~RunEngine() override;

    // Adds the local node, served by `agentPath` (a trainyard-agent) started as
    // a child process with `stateDir` (empty: the agent's default).
    void addLocalNode(const QString& agentPath, const QString& stateDir = {});
    // Adds a node served by an agent behind any transport (an SSH channel for
    // a workstation). The engine owns the transport; `name` must be unique.
    void addNode(const QString& name, std::unique_ptr<AgentTransport> transport);
    // Drops node `name` (trainyardctl node rm, through the service): its
    // connection is closed, its heartbeats and reconnections stop, and no run
    // is scheduled on it again (a run pinned to it waits as for an unknown
    // node). Its runs' records are the caller's (core/runs/NodeRemoval.h):
    // the engine stops following them (tails, metric files) and starting
    // them, and writes nothing more for them, not even when a reply of the
    // old connection comes. "local" and unknown names: nothing. Thread: the
    // engine's.
    void removeNode(const QString& name);
    // Host keys of node `name` (AgentTransport.h): the fingerprint of the
    // unknown key its last connection attempt refused (empty: none, or no
    // such node), and trusting the next unknown key, which the next
    // reconnection records in known_hosts (false: no such node, or its
    // transport has no host key). Thread: the engine's.
    QString rejectedHostKeyFingerprint(const QString& name) const;
    bool trustNewHostKey(const QString& name);
    // A lost node (connection closed, or no heartbeat within the timeout) is
    // reconnected after firstMs, then after doubling delays up to maxMs, until
    // it answers (default 1 s .. 30 s). Its runs are not failed meanwhile.
    // Between attempts it is probed every probeMs (default 1000; 0: never)
    // where its transport can tell (AgentTransport::probe(): an SSH node's
    // port): once it answers after a probe that found it silent, the backoff
    // is reset and it is reconnected at once, its runs asked for straight
    // after, instead of waiting out the delay.
    void setReconnectDelays(int firstMs, int maxMs);
    void setReconnectProbeInterval(int probeMs);
    // Heartbeats (NodeHealth pings) of nodes added after the call: interval
    // and the silence after which a node counts as lost (default 5 s / 15 s).
    void setHeartbeat(int intervalMs, int timeoutMs);
    // How often the metric files of runs attached afterwards are polled
    // while they are live (MetricFileFollower; default 2000 ms).
    void setMetricFilePollInterval(int intervalMs) { m_metricFilePollMs = intervalMs; }

    // Try to become the ingestion owner (see above). Returns whether it is.
    // When another process owns it, the engine tries again every second
    // (from its database poll) and takes over once that process is gone.
    bool acquireIngestion();
    bool ownsIngestion() const { return m_ownsIngestion; }

    // Records the run as queued and asks for it to be placed and started.
    // `node` (optional): the run may only be placed on that node (trainyardctl
    // submit --node NAME); empty: wherever the scheduler places it.
    // A spec with a `sweep` becomes one run per combination (expandSweep),
    // the members of a new sweep group (RunGroupKind::Sweep: position the
    // combination's index, role "lr=0.1,bs=32"), capped together at its
    // max_concurrent; submit() then returns the first run's id, submitAll()
    // every id in expansion order. Every run is also made a member of
    // `groups` (a pipeline's step: its pipeline's group), as it is created.
    // Thread-safe. Errors: a sweep value that breaks the spec, or the
    // database write failed.
    Result<RunId> submit(const JobSpec& spec, const QString& node = {}, const QList<RunGroupMembership>& groups = {});
    Result<QList<RunId>> submitAll(
            const JobSpec& spec, const QString& node = {}, const QList<RunGroupMembership>& groups = {});
    // Cancel: SIGTERM to the run's process group, SIGKILL after `graceMs`.
    // A queued run is cancelled at once. Thread-safe.
    void cancel(RunId id, int graceMs = 10000);

    // Console of a run for display only (trainyardctl logs): emits
    // consoleReceived from `fromOffset` and runStateChanged when it ends. The
    // ingestion owner already streams every active run; others tail the node
    // directly and learn the end from the database. Engine thread.
    void watch(RunId id, qint64 fromOffset, bool follow);

    // Queue operations on a queued (or held) run; thread-safe. They take
    // effect at the next scheduling pass of the ingestion owner. Errors name
    // the run and its state when it is not waiting any more.
    Result<void> hold(RunId id);    // queued -> held: never started, never blocks others
    Result<void> release(RunId id); // held -> queued
    Result<void> setPriority(RunId id, int priority);
    Result<void> moveToTop(RunId id); // priority above every other waiting run

    // Artifacts (the job spec's `artifacts` globs): asks the run's node for the
    // matching files (agent `list_files`) and records each in the store
    // (ArtifactRecord, path absolute on the node). Done by the ingestion owner
    // when a run ends, and on demand. Waits up to 30 s for the node to connect.
    // `cb` runs on the engine thread. Errors name the run and the node.
    void listArtifacts(RunId id, std::function<void(const Result<AgentFileList>&)> cb);
    // A scheduling pass on the engine thread's next turn (coalesced): for
    // whoever queued a run in the store directly (core/retry's next attempt).
    void scheduleSoon();
    // The files of a run on its node (agent `list_files`) matching `globs`,
    // relative to its workdir or run directory, without recording anything.
    // Waits up to 30 s for the node to connect. `cb` on the engine thread;
    // errors name the run and the node.
    void listRunFiles(
            const RunRecord& run, const QStringList& globs, std::function<void(const Result<AgentFileList>&)> cb);

    // Work still under way for runs that ended (the listing of their
    // artifacts): a short-lived process (trainyardctl) waits for
    // postRunWorkDone() before it destroys the engine, or that work is lost.
    bool postRunWorkPending() const { return m_postRunWork > 0; }
    // Start requests sent (or their workdir sync under way) whose reply has
    // not come yet. A process that ends with one pending closes the node's
    // connection under it: its run may well be going, but nobody would learn
    // so until the next owner asks the agent. A short-lived process therefore
    // calls stopStarting() (no further queued runs are started by it; the next
    // owner of the ingestion lock starts them) and waits for startsSettled()
    // before it destroys the engine. Engine thread.
    bool startsPending() const { return m_startRequests > 0; }
    void stopStarting() { m_stopStarting = true; }
    // Lists them, then copies every regular file into `destDir`/<path> over the
    // node's file transport (SFTP for SSH nodes); names that would land outside
    // `destDir` and symlinks are refused (WorkdirSync.h, downloadArtifacts());
    // refused ones are also recorded as a notice of the run.
    void downloadArtifacts(RunId id, const QString& destDir, std::function<void(const Result<ArtifactDownload>&)> cb);
    // Copies the regular files of `files` (a listRunFiles() answer for `run`,
    // whole or in part) into `destDir`/<path>, as downloadArtifacts() does
    // (the same refusals), over the node's file transport; records nothing.
    // Errors: its node is not connected, or the transport failed. `cb` on the
    // engine thread.
    void downloadRunFiles(const RunRecord& run, const AgentFileList& files, const QString& destDir,
            std::function<void(const Result<ArtifactDownload>&)> cb);

    // Stage-in: files made by earlier runs that a run needs in its workdir
    // before it starts (a pipeline step's upstream artifacts: core/pipeline
    // sets the provider). At each start (every rank of a gang: each is a run)
    // the provider is asked, on the engine thread, and the files it names go
    // to the run's workdir on its node (after its workdir sync, when it has
    // one) through the node's file transport (WorkdirSync.h stageToNode),
    // with runStaging() reporting progress. Files made by a run on the same
    // node in the same workdir (same path, same `sync`) are left in place
    // when they are still there with their size: nothing is copied. A
    // failed copy fails the run ("could not copy its inputs ...").
    // Several providers may be set, one per `owner` (core/pipeline's for a
    // step's upstream outputs, core/retry's CheckpointMirror for a resumed
    // attempt's checkpoint); their sources are taken together, in the order
    // the providers were first set. An empty provider removes the owner's.
    struct StageSource {
        RunId producer = 0; // the run that made them
        QString localRoot;  // their copies on this machine (the result store's outputs folder of `producer`)
        QStringList files;  // relative to localRoot, and where they go below the run's workdir
        // Set in the run's environment for this start (and in its record):
        // name -> a path relative to its workdir, made absolute on its node
        // (its synced copy's folder for `sync: true`).
        QMap<QString, QString> envPaths;
        // Non-empty: the run cannot start as it must (a checkpoint to resume
        // from that cannot be staged): it fails at once with these words,
        // nothing is copied, nothing is started.
        QString error;
    };
    using StageProvider = std::function<QList<StageSource>(const RunRecord& run)>;
    // The run group of the gang the run is a rank of (startGang), 0 for none.
    static RunGroupId gangOf(const RunRecord& run);
    void setStageProvider(StageProvider provider, const void* owner = nullptr);
    // A bound on a running run besides its spec's time_limit (core/retry:
    // its `deadline`, what its `max_run_time` leaves it): when (UTC ms) and
    // in words ("stopped at its deadline of 6h"); nullopt for none. Asked
    // when the run starts or is attached; the earlier of the two stops it,
    // as failed `time_limit` with those words. Engine thread.
    using StopProvider = std::function<std::optional<std::pair<qint64, QString>>(const RunRecord& run)>;
    void setStopProvider(StopProvider provider) { m_stopProvider = std::move(provider); }
    // A bound on a run that has not started yet (core/retry: its attempt
    // group's `deadline`, wall clock from the first submit, the time in the
    // queue included): when (UTC ms) it must end without starting, and in
    // words ("stopped at its deadline of 6h (from its first submit) while
    // still queued"); nullopt for none. Asked at the scheduling passes, only
    // for queued runs whose spec sets a `deadline`, and once per run (kept
    // while it waits). A queued run, or a retry waiting out its backoff
    // (RunRecord::notBefore), is failed `time_limit` with those words at that
    // moment and never started after it: a pass is armed for then on the
    // engine's clock (no polling). A held run is left held (its user holds
    // it); released after its deadline, it fails at the next pass. Engine
    // thread.
    void setWaitDeadlineProvider(StopProvider provider);

    // Whether `node` is a Slurm login node (NodeKind::Slurm): its runs go
    // to Slurm as batch jobs. Engine thread.
    bool isSlurmNode(const QString& node) const { return m_slurmNodes.contains(node); }
    // A queued run for a Slurm node is to wait in Slurm's queue until these
    // jobs (Slurm job ids) have succeeded: its sbatch gets
    // `--dependency=afterok:<job>[:<job>...] --kill-on-invalid-dep=yes`
    // (Slurm cancels it when one of them fails), and its notices say so. Not
    // part of its job spec (which refuses --dependency: a rerun of the
    // stored spec must not wait for those jobs again): held for the run's
    // next start only, never in a job array. A pipeline's step queued behind
    // its upstream steps (core/pipeline PipelineRunner). Engine thread.
    void setSlurmAfterOk(RunId run, const QStringList& jobs);

    // Whether the node's agent answered its handshake.
    bool nodeReady(const QString& node) const;
    // Whether the scheduler can place runs on the node: ready, and its GPUs
    // (and, revision 7, its listening ports) reported for this connection
    // (NodePool::NodeState::gpusKnown). An elastic gang submitted between
    // nodeReady() and this starts on fewer nodes. Engine thread.
    bool nodePlaceable(const QString& node) const;
    // Whether connecting to the node was tried and failed (it is not ready and
    // not still on its first attempt).
    bool nodeUnreachable(const QString& node) const;
    // The nodes this engine connects to (sorted by name).
    QStringList nodeNames() const;
    // A run of a node that stopped answering is `unknown`; when that node
    // has been silent too long (core/retry/NodeLossWatch.h) its run is
    // lost: failed as FailureKind::NodeLost with `reason`. Only a run still
    // unknown is changed. Engine thread.
    void declareLost(RunId id, const QString& reason);
    // Runs this engine sent a start for (or failed as unschedulable) whose
    // outcome its scheduling passes have not yet seen in the database
    // (diagnostics and tests: it returns to 0 once every start has settled,
    // however the runs ended). Engine thread.
    qsizetype startsInFlight() const { return m_starting.size(); }

    // GPU status for the Nodes view: every `intervalMs` (default 2000; 0 or
    // less: never) each ready node is sent a `gpus` request and its reply is
    // emitted as nodeGpusUpdated. Requests are only sent while something is
    // connected to nodeGpusUpdated (the CLI pays nothing), and at most one is
    // outstanding per node. Engine thread.
    void setGpuStatusInterval(int intervalMs);

    // The scheduling policy for queued runs. By default it is read from
    // `<db path>.scheduler.json` (QueuePolicy.h) before each pass, so a change
    // made by trainyardctl or another GUI takes effect at once; setPolicy()
    // fixes one instead (tests, simulations). Engine thread.
    void setPolicy(const sched::Policy& policy);
    const sched::Policy& policy() const { return m_policy; }
    // Why each queued run waits, as of the last scheduling pass (engine thread).
    QHash<RunId, QString> pendingReasons() const { return m_pendingReasons; }

    // Ingestion owner: the nodes whose runs are not yet up to date in the
    // store, each with why, by node name: "still
    // connecting", "unreachable: <reason>", "listing its runs", "fetching
    // run N's console". Unreachable nodes stay listed after caughtUp() (their
    // runs are as last recorded); the rest leave it as they catch up.
    // trainyardctl says which after its wait for caughtUp() ends.
    QList<std::pair<QString, QString>> nodesBehind() const;

Q_SIGNALS:
    // The last piece of post-run work ended (see postRunWorkPending()).
    void postRunWorkDone();
    // The last pending start request was answered (see startsPending()).
    void startsSettled();
    // Raw console bytes [offset, offset + bytes.size()) of a run, as received;
    // offsets of the local copy (equal to the node's unless its file was
    // truncated there: RunIngest.h "Node offsets").
    void consoleReceived(ty::RunId run, qint64 offset, const QByteArray& bytes);
    // Metric points just extracted (already queued for the database).
    void metricsReceived(ty::RunId run, const QList<ty::MetricPoint>& points);
    // A run changed state (queued -> running -> succeeded ...).
    void runStateChanged(const ty::RunRecord& run);
    // After each scheduling pass: why every queued run waits ("waiting: needs
    // 2 GPUs with >= 40 GiB free; best node local has 1", ...).
    void pendingReasonsChanged(const QHash<ty::RunId, QString>& reasons);
    // Ingestion owner only, once: every node answered (or failed) once and
    // every run that was going has been fetched up to the console size its
    // node had when this engine attached it (runs that ended meanwhile are
    // recorded). trainyardctl ls waits for this to show the truth.
    void caughtUp();
    // A display-only watch (see watch()) delivered everything it will.
    void watchEnded(ty::RunId run);
    // Stage-in progress of a starting run (setStageProvider): bytes copied of
    // the bytes to copy, first with done = 0, at most every 200 ms after.
    void runStaging(ty::RunId run, qint64 doneBytes, qint64 totalBytes);
    // A node connected, or was lost (reason non-empty; `kind` says why where
    // the transport could tell: unreachable, host key unknown or changed,
    // authentication).
    void nodeStatusChanged(
            const QString& node, bool ready, const QString& reason, ty::ErrorKind kind = ty::ErrorKind::Unspecified);
    // A node's connection came up with a warning the user must see (a changed
    // host key accepted under StrictHostKeyChecking no); also logged, and
    // recorded as a notice of every run started over that connection.
    void nodeWarning(const QString& node, const QString& message);
    // cancel() could not reach the run: its node is not connected (reason
    // says why), or the agent refused the request. The run goes on.
    void cancelFailed(ty::RunId run, const QString& reason);
    // The GPUs a ready node reported (AgentClient::gpus; empty on a node
    // without an NVIDIA driver), from the periodic request above and once
    // when the node becomes ready.
    void nodeGpusUpdated(const QString& node, const QList<ty::AgentGpu>& gpus);
    // Ingestion owner: a write for the run failed (`why`: the file and the
    // system's reason, "No space left on device"); its console is asked for
    // again from the last byte it holds, with the run's stored offset, once
    // writes succeed (WriteRetry.h), and a notice on the run says so.
    void ingestionStalled(ty::RunId run, const QString& why);
    // A notice was recorded for the run (see above): what its user should
    // see and may have to act on.
    void noticeAdded(ty::RunId run, const QString& text);

private:
    struct Node;
    struct Active;
    void reloadPolicy();
    void checkCaughtUp();
    void schedulePass();
    void startRun(RunRecord run, const QString& node);
    void sendStart(RunRecord run, const QString& node, const AgentStartRequest& req);
    // The agent's answer to a start of `run` (one run, or one task of an
    // array): running, in Slurm's queue, unknown (reply lost), back in the
    // queue (a GPU claimed) or failed. Settles one start request.
    void onStartReply(RunRecord run, const QString& node, const Result<AgentStartReply>& reply);
    // Queued runs for Slurm login nodes that answer, submitted: a sweep's
    // runs for one node together as one job array (core/slurm/SlurmArrays.h)
    // where the node's agent has revision 5, the others one by one.
    // RunEngineSlurm.cpp.
    void submitToSlurm(const QList<RunRecord>& runs);
    void startArray(QList<RunRecord> runs, const QString& node);
    // `then` gets the node's client once it is ready, null after `timeoutMs` or for an unknown node.
    void whenNodeReady(const QString& node, int timeoutMs, std::function<void(AgentClient*)> then);
    void startGang(RunRecord root, const QList<sched::NodeAssignment>& ranks);
    // The provider's files for a start of `run` on `nodeName` (`sync`: its
    // workdir is synced there), each marked in place when its producer ran
    // there in the same workdir; `producers` gets their run ids.
    // `envPaths` (optional) gets the sources' envPaths, `error` (optional)
    // the first source's error.
    QList<StageFile> stageFor(const RunRecord& run, const QString& nodeName, bool sync, QStringList* producers,
            QMap<QString, QString>* envPaths = nullptr, QString* error = nullptr);
    void cancelGang(RunGroupId gang, RunId except, int graceMs = 10000, const QString& signal = {});
    // The other unfinished ranks of `failed`'s gang (none: not a rank), cancelled
    // with the words "stopped with its gang: rank 1 (run 14) failed: ..." as
    // their notice and failure reason. Engine thread.
    void stopGangAfterFailure(const RunRecord& failed);
    // cancel() with the signal the agent sends first (agentproto::kCancelSignals;
    // empty: SIGTERM). Engine thread or any (queued).
    void cancelRun(RunId id, int graceMs, const QString& signal);

    // Preemption (issue #25; RunEnginePreemption.cpp). Engine thread.
    // A running run as the preemption choice sees it (its spec's
    // `preemptible` and grace, its priority, its gang).
    sched::RunningRunInfo runningInfoOf(const RunRecord& run);
    // Stops each victim of `preemptions` (its spec's signal, then SIGKILL
    // after its grace) and remembers it as preempted, so that its end is
    // recorded as such (finishRun). `queued`: the waiting runs by id.
    void startPreemptions(const QList<sched::Preemption>& preemptions, const QHash<RunId, RunRecord>& queued);
    // A run found told to stop (its agent has its cancel) by an engine that
    // did not tell it: if an earlier engine preempted it (its notice says
    // so), it is a victim in its grace again (m_preempting), so it ends
    // `preempted` and is requeued, not cancelled, and no pass chooses it again.
    void recallPreemption(const RunRecord& run);
    QList<sched::PreemptionClaim> m_claims; // preemptions under way: their runs wait for these GPUs
    QHash<RunId, QString> m_preempting;     // victims told to stop -> the words their ending gets
    void attach(RunRecord run, const QString& node);
    void onOutput(const QString& node, const QString& agentRun, qint64 offset, const QByteArray& bytes,
            const QList<ByteRange>& stderrRanges);
    void onTailEnded(const QString& node, const QString& agentRun, qint64 offset);
    // The node's console of a run was truncated there (AgentClient::
    // consoleTruncated): its new content is recorded after what the local
    // copy holds, with a notice and a warning.
    void onConsoleTruncated(
            const QString& node, const QString& agentRun, qint64 offset, qint64 size, qint64 generation);
    // The node is ready (NodePool::nodeReady) and this engine owns ingestion:
    // its agent's list says which of its runs go on (attached again),
    // which it has no record of (failed), and which still run though they
    // were declared lost meanwhile (stopped: stopOrphan).
    void reattachRuns(const QString& node);
    // A run of this database the node's agent lists as still running though
    // it was recorded failed node_lost (declared lost while the node was
    // silent): cancelled there, with a notice; its record is not changed.
    void stopOrphan(const QString& node, const QString& agentRun);
    // NodePool::nodeLost: its runs being followed become unknown.
    void onNodeLost(const QString& node, const QString& reason, ErrorKind kind);
    void finishRun(const std::shared_ptr<Active>& active, const AgentRunStatus& status);
    // listArtifacts() for a run record in hand (its agent run id set).
    void listArtifactsOf(
            const RunRecord& run, const QStringList& globs, std::function<void(const Result<AgentFileList>&)> cb);
    // Records the run failed with `kind` (a start that failed, unless said).
    void failRun(RunRecord run, const QString& reason, FailureKind kind = FailureKind::StartFailed);
    // Cancels the run once its spec's time_limit has passed since its start.
    void stopAtTimeLimit(const std::shared_ptr<Active>& active);
    void pollDatabase();
    void pollGpus();
    void commit(const RunRecord& run);
    // Records `text` as a notice of the run (ResultStore::addNotice): what its
    // user should see and may have to act on, where a GUI shows no log. The
    // caller logs it too, as before.
    void addNotice(RunId run, const QString& text);
    // Tails the run from what its ingest holds.
    void tailActive(const std::shared_ptr<Active>& active);
    // A write of the run's ingestion failed: drop its output and retry.
    void stallIngestion(const std::shared_ptr<Active>& active, const QString& why);
    // Probes with the notice; once it is written, starts the ingest again at
    // the stored offset and tails from what is held; otherwise backs off.
    void retryIngestion(const std::shared_ptr<Active>& active);
    Result<void> changeWaiting(RunId id, const std::function<void(RunRecord&)>& change);
    std::shared_ptr<Active> findActive(const QString& node, const QString& agentRun) const;
    QString agentRunIdFor(const RunRecord& run) const;

    ResultStore* m_store;
    Clock& m_clock;
    QString m_databasePath;
    QString m_clientId;                      // this Trainyard instance, for GPU claims (instanceIdFor)
    QHash<QString, QSet<int>> m_refusedGpus; // node -> GPUs another instance holds, until its next GPU report
    // Slurm login nodes (NodeKind::Slurm, as stored when added): their runs
    // skip Trainyard's scheduler and go to Slurm as batch jobs (issue #26).
    QSet<QString> m_slurmNodes;
    QHash<RunId, QStringList> m_slurmAfterOk; // setSlurmAfterOk(), until the run's start
    void onSlurmChanged(const QString& node, const AgentRunStatus& status);
    void recordSlurmFacts(const QString& node);
    std::unique_ptr<QLockFile> m_ingestLock;
    bool m_ownsIngestion = false;
    bool m_wantsIngestion = false; // acquireIngestion() was called: take over when the owner goes
    qint64 m_lastIngestTryMs = 0;
    NodePool* m_pool = nullptr;                     // the nodes and their connections (a child)
    QSet<QString> m_listedNodes;                    // nodes whose runs were re-attached after connecting
    QSet<RunId> m_abandonedStarts;                  // starts under way on a node removed since (removeNode)
    QHash<RunId, std::shared_ptr<Active>> m_active; // runs being tailed, by run id
    QHash<RunId, RunRecord> m_starting;             // start requests in flight, unschedulable runs failed:
                                                    // our view until the database has it (schedulePass)
    QList<std::pair<const void*, StageProvider>> m_stageProviders; // by owner (setStageProvider)
    QHash<RunId, QString> m_stoppedWithGang;                       // ranks cancelled because another rank failed: why
    QSet<RunId> m_cancelling;                                      // gang ranks being cancelled (no cancel loops)
    QHash<RunId, RunState> m_watched;                              // display-only watches (non-owner): last state seen
    QHash<RunId, std::pair<qint64, bool>> m_pendingWatch;          // watch() of runs not started yet: offset, follow
    QHash<RunId, QString> m_pendingReasons;
    // Parsed job specs by run: a scheduling pass looks at every unfinished
    // run's spec (and fair share's ledger at those of the runs that ended
    // since the last pass), and a start, attach and end each need it again; parsing
    // the YAML every time cost O(runs) parses per pass and five per run.
    // Keyed by the spec text's hash as well, so an edited spec is parsed
    // again; runs a pass no longer reads (ended, deleted) are dropped after
    // it. The reference cachedSpec() returns stays valid until then. Engine thread.
    struct CachedSpec {
        size_t yamlHash = 0;
        std::shared_ptr<const Result<JobSpec>> spec;
    };
    QHash<RunId, CachedSpec> m_specCache;
    const Result<JobSpec>& cachedSpec(const RunRecord& run);
    // m_waitDeadlineProvider's answer for a queued run, asked once.
    std::optional<std::pair<qint64, QString>> waitDeadlineOf(const RunRecord& run);
    // Fair share's usage of ended runs (see FairShareLedger), while a policy
    // uses fair share. A pass adds the runs created and ended since the last
    // one (ids above m_ledgerMaxId) and those the last pass saw unfinished
    // (m_ledgerUnfinished) that have ended; every kLedgerRebuildMs it is
    // rebuilt from the database, which drops deleted runs. Engine thread.
    static constexpr qint64 kLedgerRebuildMs = 10 * 60 * 1000;
    FairShareLedger m_ledger;
    bool m_ledgerValid = false;
    qint64 m_ledgerBuiltMs = 0;
    qint64 m_ledgerWindowMs = 0; // how far back it holds ended runs
    RunId m_ledgerMaxId = 0;
    QSet<RunId> m_ledgerUnfinished;
    // The runs not ended, with the ledger brought up to date first; `windowMs`:
    // how far back ended runs count.
    QList<RunRecord> updateFairShareLedger(qint64 nowMs, qint64 windowMs);
    FairShareLedger::Entry ledgerEntryOf(const RunRecord& r);
    sched::Policy m_policy;                       // the default queue's
    QMap<QString, sched::Policy> m_queuePolicies; // other queues' (scheduler.json "queues")
    sched::Scheduler m_scheduler;                 // keeps the nodes' layout between passes
    bool m_policyFixed = false;
    bool m_policyLoaded = false;
    QDateTime m_policyModified;
    qint64 m_lastPassMs = 0;
    StopProvider m_stopProvider;
    StopProvider m_waitDeadlineProvider;
    // Its answers by queued run (setWaitDeadlineProvider), dropped with the run's spec cache entry.
    QHash<RunId, std::optional<std::pair<qint64, QString>>> m_waitDeadlines;
    // A pass is armed for then (a queued run's notBefore or deadline); 0: none.
    qint64 m_notBeforeWakeMs = 0;
    qint64 m_createdMs = 0;
    bool m_caughtUpEmitted = false;
    QTimer* m_pollTimer = nullptr;
    QTimer* m_gpuTimer = nullptr; // nodeGpusUpdated
    bool m_schedulePending = false;
    bool m_shuttingDown = false; // destructor: lost nodes are not reconnected
    int m_postRunWork = 0;       // artifact listings of ended runs not answered yet
    int m_startRequests = 0;     // startsPending()
    bool m_stopStarting = false; // stopStarting(): no scheduling passes any more
    void startSettled();         // one of m_startRequests was answered
    qint64 m_lastDataVersion = -1;
    int m_metricFilePollMs = 2000;
};

} // namespace ty
