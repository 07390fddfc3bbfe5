#pragma once

#include "ArtifactRecord.h"
#include "MemoRecord.h"
#include "MetricColumnReader.h"
#include "NodeRecord.h"
#include "PipelineRecord.h"
#include "RunNotice.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QList>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace ty {

// How ResultStore::open() may use an existing database file.
enum class StoreAccess {
    // Reads and writes. A file (or its folder) this process cannot write is
    // refused with an error naming the file and why, e.g. "its folder /x is
    // not writable (Read-only file system)".
    ReadWrite,
    // As ReadWrite when the file and its folder are writable; otherwise the
    // file is opened read-only (readOnlyReason() says why): reads work, every
    // write is refused with that reason, and nothing is created beside it.
    // For whatever only shows a database (trainyardctl ls/show/..., the GUI),
    // e.g. a colleague's results on a read-only share.
    ReadOnlyIfNeeded,
};

// ResultStore::runChangesSince(): what changed after a change number.
struct RunChanges {
    qint64 seq = 0;       // the latest change number: pass it to the next call
    QList<RunId> changed; // runs that exist and changed (created or updated), ascending
    QList<RunId> removed; // runs deleted since, ascending
};

// The result database: runs, their params, tags, metrics, console offsets,
// artifacts and notices. Abstract so that a PostgreSQL backend (team mode) can sit beside
// SqliteResultStore; callers only ever see this interface.
//
// Threads: every method may be called from any thread.
// - Writes are queued, in call order, to the store's single writer thread,
//   which applies them in batches, one transaction per batch. Operations
//   called in order from one thread are committed in that order, and never in
//   an earlier transaction than an operation called before them.
// - Reads run on a connection owned by the calling thread and see what was
//   committed when they run. After flush() (or createRun()) returns, the
//   caller's earlier writes are visible to every reader, in this process or
//   another one sharing the file.
// - Signals are emitted after the commit, in the thread the store object
//   lives in (queued there from the writer), so they need that thread's event
//   loop; connect() receivers get them as usual.
class ResultStore : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ResultStore)

public:
    ~ResultStore() override = default;

    // Opens (creating it and its parent directories when missing) the SQLite
    // result database at `path`, migrating an older schema to the current one.
    // Errors name the file: not an SQLite file, another program's database, a
    // schema newer than this binary (the file is then left untouched), a
    // damaged file (what is wrong and how to recover it; nothing is changed),
    // a file that cannot be written (see StoreAccess), one opened read-only
    // whose schema is older than this binary (it cannot be upgraded), I/O.
    static Result<std::unique_ptr<ResultStore>> open(const QString& path, StoreAccess access = StoreAccess::ReadWrite);

    // ---- writes -----------------------------------------------------------
    // Inserts a run with its tags and params and waits until it is committed.
    // r.id is ignored (the database assigns it, never reusing a deleted one);
    // an invalid r.createdAt becomes the current time. The run joins the
    // groups of r.groups (each must exist: else InvalidInput, nothing
    // stored). Returns the new id.
    virtual Result<RunId> createRun(const RunRecord& r, const QMap<QString, QString>& params) = 0;
    // Async. Replaces the execution fields of run r.id: state, node, gpus,
    // argv, workdir, env, priority, startedAt, finishedAt, exitCode,
    // exitSignal, failureKind, failureReason, pendingReason, notBefore,
    // agentRunId, consolePath. Not changed:
    // specYaml, specPath, createdAt (fixed at creation), consoleOffset (only
    // setConsoleOffset() moves it, so a stale record cannot move it back), and
    // the user's name, tags, notes and archived flag (only annotateRun()
    // changes them, so an engine finishing a run from the record it started
    // with cannot undo a rename made meanwhile). An unknown id is ignored.
    virtual void updateRun(const RunRecord& r) = 0;
    // Changes what the user says about run `run` (RunAnnotation: name, tags,
    // notes, archived), nothing else, and waits until it is committed; the
    // run counts as changed (runsChanged). Names are trimmed; tags are
    // trimmed, empty ones dropped, duplicates dropped. Errors: no such run, an
    // empty name, a tag with a comma or white space, the write failed.
    virtual Result<void> annotateRun(RunId run, const RunAnnotation& annotation) = 0;
    // Async, batched. Points of an unknown (e.g. deleted) run are dropped.
    // A point's keyHandle (MetricPoint) only speeds up finding its key; the
    // key text decides where it is stored.
    virtual void appendMetrics(QList<MetricPoint> points) = 0;
    // Async. Committed in the same or a later transaction than every
    // appendMetrics() called before it, so after a crash the stored offset
    // never runs ahead of the stored metrics.
    virtual void setConsoleOffset(RunId run, qint64 offset) = 0;
    // Async. Removes the run with its tags, params, metrics, artifacts and notices.
    virtual void deleteRun(RunId run) = 0;
    // Async. Records (or replaces, by run and path) an artifact of a.run.
    virtual void addArtifact(const ArtifactRecord& a) = 0;
    // Async. Records a notice of n.run (RunNotice.h); an invalid n.at becomes
    // the current time. A notice of an unknown (e.g. deleted) run is dropped,
    // and so is one whose text the run already has (the first one stays).
    // The run counts as changed (runsChanged) when one is recorded.
    // Async. Sets these params of an existing run: new names are added, a
    // name it has already gets the new value, the others stay (a framework's
    // hparams imported from a metric file). Params of an unknown run are dropped.
    virtual void setParams(RunId run, const QMap<QString, QString>& params) = 0;
    virtual void addNotice(const RunNotice& n) = 0;
    // Inserts (or replaces, by name) a node and waits until it is committed.
    // An invalid n.addedAt becomes the current time. Errors: empty name or
    // host, the database write failed.
    virtual Result<void> addNode(const NodeRecord& n) = 0;
    // Removes the node and waits until it is committed. Its runs stay (they
    // keep the node's name). Errors: no node of that name, the write failed.
    virtual Result<void> removeNode(const QString& name) = 0;
    // Async. Replaces the stored facts (NodeRecord::facts) of node `name`;
    // nothing for a node not (or no longer) stored.
    virtual void setNodeFacts(const QString& name, const QString& facts) = 0;
    // Replaces the labels of node `name` and waits until they are committed:
    // a stored node's NodeRecord::labels, or for "local" (this machine, never
    // a NodeRecord) the database's localNodeLabels(). `labels` in order,
    // each valid (nodeLabelError). Errors: a bad label (named), no node of
    // that name, the write failed.
    virtual Result<void> setNodeLabels(const QString& name, const QStringList& labels) = 0;
    // Async. The run's ingestion owner (re)starts from the run's stored
    // console offset. From then on, when a batch holding the run's console
    // metrics (MetricSource::Console) or console offset fails (writeFailed),
    // the writer drops the run's later console metrics and offsets unapplied
    // until the next beginIngestion() for it: they were queued assuming the
    // rolled-back writes, and committing them would store an offset past
    // metrics that are not stored. The owner starts again from the stored
    // offset (RunIngest::open()), which calls this before anything else.
    virtual void beginIngestion(RunId run) = 0;
    // Memoized steps (schema 11; core/memo/MemoStore.h is the way in, which
    // checks what an entry holds): each waits until committed and returns
    // the write's error, if any. putMemoEntry() inserts e, or replaces the
    // entry of e.key whole (its earlier hits go); an invalid e.createdAt
    // becomes now. Errors: an empty key or step. recordMemoHit() adds one to
    // the entry's hit count, sets its last hit (an invalid h.at: now) and
    // records the hit; an unknown key changes nothing (no error: the entry may
    // have been evicted meanwhile). removeMemoEntries() removes those entries
    // with their hits; unknown keys are skipped.
    virtual Result<void> putMemoEntry(const MemoEntryRecord& e) = 0;
    virtual Result<void> recordMemoHit(const MemoHitRecord& h) = 0;
    virtual Result<void> removeMemoEntries(const QStringList& keys) = 0;
    // Async. Inserts the pipeline, or replaces the one of p.id whole
    // (schema 12; core/pipeline/PipelineRunner.h writes them). An invalid
    // p.createdAt becomes now. p.id must be > 0 (else refused, with a warning).
    // Its run group (RunGroupKind::Pipeline, of the same id and name) is made
    // with it when missing; an id that is a group of another kind is stored
    // without one.
    virtual void putPipeline(const PipelineRecord& p) = 0;
    // Run groups (schema 13; core/common/RunGroup.h). createGroup() inserts g
    // (g.id and g.runs are ignored; an invalid g.createdAt becomes now) and
    // waits until it is committed; returns its id, never one used before.
    // Errors: g.parent > 0 names no group, the write failed. Runs join a
    // group when they are created (RunRecord::groups, createRun) or later by
    // joinGroup(), which waits until committed and counts the run as changed;
    // joining again changes the run's position and role there. Errors: no
    // such run, no such group, the write failed. A group of a sweep, gang or
    // attempts is removed with its last run (deleteRun); a pipeline's stays
    // with the pipeline.
    virtual Result<RunGroupId> createGroup(const RunGroupRecord& g) = 0;
    // The same for a group of `kind` named `name`.
    Result<RunGroupId> createGroup(
            RunGroupKind kind, const QString& name, const QDateTime& createdAt = {}, RunGroupId parent = 0)
    {
        return createGroup(RunGroupRecord{0, kind, name, createdAt, parent});
    }
    virtual Result<void> joinGroup(RunId run, const RunGroupMembership& m) = 0;
    // Blocks until everything queued (by any thread) before the call is
    // committed (or has failed). Returns the error of the first batch that
    // failed since the previous flush() call, if any; each failure is
    // returned by one flush() only (and also emitted as writeFailed).
    virtual Result<void> flush() = 0;

    // ---- reads ------------------------------------------------------------
    virtual Result<RunRecord> run(RunId id) const = 0;
    // Newest first (created_at, then id, descending).
    virtual QList<RunRecord> runs() const = 0;
    // The runs that have not ended (every state but succeeded, failed and
    // cancelled) and, when `endedSince` is valid, also the ended runs that
    // held GPUs and finished at or after it (what fair share's decayed usage
    // reads). Ordered like runs(). What the scheduler reads on every pass:
    // its cost follows those runs, not the size of the database (indexes
    // runs_unfinished and runs_finished_at, SqliteSchema version 6).
    virtual QList<RunRecord> unfinishedRuns(const QDateTime& endedSince = {}) const = 0;
    // The ended runs that held GPUs with an id above `afterId` (the runs
    // created since the caller last looked): how fair share's ledger learns of
    // runs that other processes created and ended between two passes.
    // Found by the primary key, so its cost follows the new runs only.
    virtual QList<RunRecord> endedRunsAfter(RunId afterId) const = 0;
    virtual QMap<QString, QString> params(RunId run) const = 0;
    // The current points (what charts and compare show): superseded ones
    // (replaced by a resumed run's later segment, see MetricPoint) are left
    // out. Ordered by key (binary, i.e. UTF-8 byte order), then step, then
    // arrival. An empty key means every key. NaN/+-inf/-0.0 come back as stored.
    virtual QList<MetricPoint> metrics(RunId run, const QString& key = {}) const = 0;
    // Sorted like metrics().
    virtual QStringList metricKeys(RunId run) const = 0;
    // Per key, the last current point in metrics() order (highest step, latest arrival).
    virtual QMap<QString, MetricPoint> latestMetrics(RunId run) const = 0;
    // Every stored point, superseded ones too (MetricPoint::superseded set),
    // ordered like metrics().
    virtual QList<MetricPoint> allMetrics(RunId run, const QString& key = {}) const = 0;
    // A new reader of metric series as columns (MetricColumnReader.h), for
    // one thread at a time: millions of points without a MetricPoint each.
    // nullptr when this store offers none for its database (SQLite: a store
    // opened read-only, whose file a second connection may be unable to open
    // where its -shm cannot be created); read metrics() then. Errors: the
    // reader's connection could not be opened (naming the file).
    virtual Result<std::unique_ptr<MetricColumnReader>> openColumnReader() const = 0;
    // Where series went back (resumed runs): ordered by key, then arrival.
    // Charts draw a marker at each `step`. An empty key means every key.
    virtual QList<MetricRestart> metricRestarts(RunId run, const QString& key = {}) const = 0;
    // Ordered by path.
    virtual QList<ArtifactRecord> artifacts(RunId run) const = 0;
    // Oldest first (time, then the order they were added).
    virtual QList<RunNotice> notices(RunId run) const = 0;
    // Every run's notices in one read (runs without any are absent), each
    // list ordered like notices(): for the runs list (GUI, trainyardctl ls).
    virtual QMap<RunId, QList<RunNotice>> allNotices() const = 0;

    // Every stored node, ordered by name.
    virtual QList<NodeRecord> nodes() const = 0;
    // The labels of the local node ("local"), as setNodeLabels stored them;
    // empty when none were set (or they cannot be read).
    virtual QStringList localNodeLabels() const = 0;

    // The memo entry of `key`, nullopt when there is none (or it cannot be read).
    virtual std::optional<MemoEntryRecord> memoEntry(const QString& key) const = 0;
    // Entries matching `filter`, newest first (created_at, then key, descending).
    virtual QList<MemoEntryRecord> memoEntries(const MemoEntryFilter& filter = {}) const = 0;
    // The hits of `key`, oldest first (time, then the order recorded).
    virtual QList<MemoHitRecord> memoHits(const QString& key) const = 0;
    // Pipelines by id, ascending; with `runningOnly`, those whose state is
    // "running". pipeline(): nullopt when there is none (or it cannot be read).
    virtual QList<PipelineRecord> pipelines(bool runningOnly = false) const = 0;
    virtual std::optional<PipelineRecord> pipeline(qint64 id) const = 0;
    // Run groups by id, ascending, with their member counts (RunGroupRecord::
    // runs); only those of `kind` when it is given. group(): nullopt when
    // there is none (or it cannot be read). groupMembers(): the group's runs
    // with their place in it, in position order (then by run id): a sweep's
    // combinations, a gang's ranks, a pipeline's step instances, the attempts.
    virtual QList<RunGroupRecord> groups(std::optional<RunGroupKind> kind = std::nullopt) const = 0;
    virtual std::optional<RunGroupRecord> group(RunGroupId id) const = 0;
    virtual QList<std::pair<RunId, RunGroupMembership>> groupMembers(RunGroupId id) const = 0;

    // The runs whose stored data (record, tags, params, notices, artifacts,
    // console offset, metrics) changed in a write transaction committed
    // after change number `afterSeq`, by any process: how a reader in
    // another process (the GUI beside the service) reloads only those rows.
    // Start with afterSeq = 0 for every change ever recorded, or take `seq`
    // from a call made before a full load and pass it on from then on.
    // Fails (kind Unspecified) on a database older than schema version 10
    // that this store could not migrate (opened read-only): reload
    // everything instead. Reader thread affinity as every read.
    virtual Result<RunChanges> runChangesSince(qint64 afterSeq) const = 0;

    virtual int schemaVersion() const = 0;
    // Changes whenever anything (this store's writer, another store, another
    // process) commits to the database after the calling thread's previous
    // call; poll it to notice another process's writes. Only comparisons
    // between calls from the same thread are meaningful.
    virtual qint64 dataVersion() const = 0;
    // Write transactions this store has committed so far (diagnostics, tests).
    virtual qint64 transactionsCommitted() const = 0;
    // The database's location (a file path for SQLite).
    virtual QString location() const = 0;

    // Why this store cannot write (opened read-only by
    // StoreAccess::ReadOnlyIfNeeded: "its folder /x is not writable
    // (Permission denied)"), or empty when it can. Fixed at open().
    virtual QString readOnlyReason() const = 0;
    bool isReadOnly() const { return !readOnlyReason().isEmpty(); }
    // Empty until a read or a write finds the file damaged (SQLite reports
    // SQLITE_CORRUPT or SQLITE_NOTADB); then the explanation (what is wrong,
    // that nothing was changed, how to recover: SqliteFileAccess.h), and
    // every later write is refused with it. Reported once (damaged(), one
    // warning), however many reads fail afterwards.
    virtual QString damage() const = 0;

Q_SIGNALS:
    // Runs created, updated, console offsets moved, or deleted (run(id) then
    // fails) in one committed batch; each id once.
    void runsChanged(const QList<ty::RunId>& ids);
    // `count` points of `run` were committed in one batch.
    void metricsAppended(ty::RunId run, int count);
    // A queued write failed and was rolled back (what, where, why: with the
    // system's reason, e.g. "No space left on device", where SQLite had one).
    void writeFailed(const QString& message);
    // The database was found damaged (damage() now returns `explanation`);
    // emitted once per store.
    void damaged(const QString& explanation);

protected:
    explicit ResultStore(QObject* parent = nullptr);
};

} // namespace ty
