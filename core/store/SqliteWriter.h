#pragma once

#include "MetricBlock.h"
#include "SqliteStoreOptions.h"
#include "StoreWriteOp.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QHash>
#include <QList>
#include <QMutex>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QThread>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ty {

// The one thread that writes a SqliteResultStore's database. It owns its own
// named QSQLITE connection; opens it, sets the pragmas (WAL,
// synchronous=NORMAL, foreign_keys, busy timeout) and migrates the schema in
// start(); then applies queued writes in batches: everything queued while the
// previous batch was being committed (plus a short coalescing wait after an
// idle period) goes into one BEGIN IMMEDIATE ... COMMIT. Metric rows and
// blocks go through libsqlite3 on that connection's own sqlite3*, so start()
// refuses a QSQLITE plugin that carries its own SQLite (a version or source
// id other than the linked library's).
//
// Thread affinity: enqueue()/waitCommitted()/flushError() from any thread
// (not the writer itself); start() and stop() from the owning thread.
class SqliteWriter final : public QThread {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SqliteWriter)

public:
    // What one committed (or failed) batch did; handed to the callback on the
    // writer thread after the commit.
    struct BatchOutcome {
        QList<RunId> changedRuns;              // each once, in first-touch order
        QList<QPair<RunId, int>> metricCounts; // points committed per run
        QString error;                         // non-empty: the batch was rolled back
        QString damage;                        // non-empty: because the file is damaged (SQLite's words)
    };
    using Callback = std::function<void(const BatchOutcome&)>;

    SqliteWriter(QString path, QString connectionName, SqliteStoreOptions options, Callback onBatch);
    ~SqliteWriter() override; // stop()s

    // Starts the thread and waits until the database is open and migrated.
    // Returns the schema version, or the error (the thread has then exited).
    Result<int> startWriter();
    // Commits what is queued, then ends the thread. Idempotent.
    void stop();

    // Queues a write; returns its sequence number (1, 2, ...). `urgent` skips
    // the coalescing wait. Blocks while too many metric points are pending.
    quint64 enqueue(storeop::WriteOp op, bool urgent = false);
    // Waits until every op with sequence <= seq is committed or failed.
    void waitCommitted(quint64 seq);
    // The sequence number of the most recently queued op.
    quint64 lastQueued() const;
    // Takes (returns and clears) the first batch error since the previous call.
    std::optional<QString> takeError();

    qint64 transactionsCommitted() const { return m_transactions.load(std::memory_order_relaxed); }

protected:
    void run() override;

private:
    Result<int> initialize();
    Result<void> prepareStatements();
    void releaseStatements();
    BatchOutcome applyBatch(std::deque<storeop::WriteOp>& ops,
            QList<std::pair<std::shared_ptr<std::promise<Result<RunId>>>, Result<RunId>>>& created);
    Result<void> exec(const QString& sql);
    // The system's reason for the connection's last failure ("No space left
    // on device"), or empty; read before anything else runs on it.
    QString systemReason() const;
    // SQLite's words when the connection's last failure says the file is
    // damaged (SQLITE_CORRUPT, SQLITE_NOTADB), else empty; read like systemReason().
    QString damageReason() const;
    // Fences (m_fenced) the ingesting runs whose console metrics or offset
    // were in the failed batch `ops`.
    void fenceFailedBatch(const std::deque<storeop::WriteOp>& ops);

    // One op each; a returned error aborts (rolls back) the whole batch, while
    // an op that cannot apply (unknown run) is skipped with a debug message.
    // Marks `runs` changed by the open transaction (run_changes, schema v10):
    // one new change number for all of them.
    Result<void> recordChanges(const QList<RunId>& runs);
    Result<RunId> applyCreate(const storeop::CreateRun& op);
    Result<bool> applyUpdate(const storeop::UpdateRun& op);
    // Whether the run exists (and so changed).
    Result<bool> applyAnnotate(const storeop::AnnotateRun& op);
    Result<void> replaceTags(RunId run, const QStringList& tags);
    // Queues the points of one append per series (m_pending); a series
    // going back (resumed run) or holding a block's worth is written at once.
    Result<void> applyMetrics(const QList<MetricPoint>& points, QHash<RunId, int>& counts);
    Result<bool> applyConsoleOffset(const storeop::SetConsoleOffset& op);
    Result<void> applyDelete(const storeop::DeleteRun& op);
    Result<bool> applyArtifact(const storeop::AddArtifact& op);
    Result<bool> applyNotice(const storeop::AddNotice& op);
    Result<bool> applyParams(const storeop::SetParams& op);
    Result<void> applyPutNode(const storeop::PutNode& op);
    Result<void> applyRemoveNode(const storeop::RemoveNode& op);

    // The metric_keys id of (run, key), inserting it if needed; nullopt when
    // the run does not exist.
    Result<std::optional<qint64>> keyId(RunId run, const QString& key);

    // Metric points held back within a batch, per series (key id, source),
    // in arrival order. Pointers into the batch's AppendMetrics ops.
    struct PendingSeries {
        qint64 keyId = 0;
        RunId run = 0;
        MetricSource source = MetricSource::Console;
        std::vector<const MetricPoint*> points;
        std::vector<qint64> ids; // arrival id of each point (nextMetricId() when it was queued)
    };
    // A point to insert as a row with its arrival id.
    struct RowPoint {
        qint64 keyId = 0;
        qint64 id = 0;
        const MetricPoint* point = nullptr;
    };
    // Packing (format and schema: MetricBlock.h, SqliteSchema.cpp version 5):
    // at least this many new points of one series at once go into a block
    // straight away (a bulk write); fewer become rows until the series'
    // current rows make a full block (kMetricBlockPoints), which then
    // replaces them. A series holds at most one block's worth of rows.
    static constexpr int kMinBulkBlockPoints = 1024;
    static constexpr int kLegacyTail = -1; // m_tailRows: a series with >= a block of rows from before packing
    // Writes every held-back point (blocks and rows), in series order.
    Result<void> flushMetrics(QHash<RunId, int>& counts);
    // Packs `series`' held-back points (and its current rows, when a block
    // is due) into blocks, or appends them to `rows` for writeRows().
    Result<void> flushSeries(PendingSeries& series, std::vector<RowPoint>& rows, QHash<RunId, int>& counts);
    // false: the key row is gone (another process deleted the run); nothing written.
    Result<bool> writeBlock(
            const PendingSeries& series, const MetricBlockPoint* points, int n, QHash<RunId, int>& counts);
    Result<void> writeRows(std::vector<RowPoint>& rows, QHash<RunId, int>& counts);
    // The next arrival id (metrics.id and block point ids share one sequence),
    // read from the database at the first use in each batch.
    Result<qint64> nextMetricId();
    // Current rows of a series not yet packed (kLegacyTail: a block or more).
    Result<int> tailRows(qint64 keyId, MetricSource source);
    Result<bool> insertMetricRow(qint64 keyId, qint64 id, const MetricPoint& p); // false: foreign key gone
    // One point, re-resolving its key once if the cached key row vanished.
    Result<void> insertPoint(const MetricPoint& p, qint64 id, QHash<RunId, int>& counts);
    // RawSqlite: kRowsPerStatement points in one multi-row INSERT (falls back
    // to insertPoint() one by one when a foreign key fails).
    static constexpr int kRowsPerStatement = 64;
    Result<void> insertRawGroup(const RowPoint* rows, QHash<RunId, int>& counts);
    Result<void> flushBatchRows();
    // Whether p's step is <= the last current step of its series (key id,
    // source), i.e. p starts a new segment (a resumed run). Otherwise
    // records p's step as the series' last.
    Result<bool> goesBack(qint64 keyId, const MetricPoint& p);
    // Marks the series' current points with step >= p.step superseded (rows
    // and blocks) and records the restart in metric_restarts.
    Result<void> restartSeries(qint64 keyId, const MetricPoint& p);
    // The block part of restartSeries(): shortens `live` of the blocks whose
    // current points reach p.step; returns how many points it superseded.
    Result<int> cutBlocks(qint64 keyId, const MetricPoint& p);

    const QString m_path;
    const QString m_connectionName;
    const SqliteStoreOptions m_options;
    const Callback m_onBatch;

    // Queue, shared with the producers.
    mutable QMutex m_mutex;
    QWaitCondition m_workCond; // writer waits for work
    QWaitCondition m_doneCond; // producers wait for commits / room
    std::deque<storeop::WriteOp> m_queue;
    quint64 m_queuedSeq = 0;
    quint64 m_committedSeq = 0;
    qint64 m_pendingPoints = 0;
    bool m_urgent = false;
    bool m_stopping = false;
    bool m_writerWaiting = false;
    bool m_started = false;
    std::optional<QString> m_error;
    std::optional<Result<int>> m_init;

    std::atomic<qint64> m_transactions{0};

    // Writer-thread state.
    QSqlDatabase m_db;
    std::optional<QSqlQuery> m_markChange, m_maxChangeSeq;
    std::optional<QSqlQuery> m_insertRun, m_updateRun, m_deleteTags, m_insertTag, m_insertParam, m_setOffset,
            m_deleteRun, m_upsertArtifact, m_insertNotice, m_insertKey, m_selectKey, m_insertMetric, m_selectLastStep,
            m_markSuperseded, m_insertRestart;
    // The QSQLITE driver's connection, taken by initialize() once the driver
    // is seen to run the libsqlite3 linked here (sqlitefile::libraryMismatch).
    sqlite3* m_handle = nullptr;
    sqlite3_stmt* m_rawInsertMetric = nullptr;      // one row
    sqlite3_stmt* m_rawInsertMetricMulti = nullptr; // kRowsPerStatement rows
    sqlite3_stmt *m_insertBlock = nullptr, *m_selectTail = nullptr, *m_countTail = nullptr, *m_deleteTail = nullptr,
                 *m_selectCutBlocks = nullptr, *m_setLive = nullptr, *m_lastLiveBlock = nullptr,
                 *m_maxMetricId = nullptr;
    std::vector<PendingSeries> m_pending;
    QHash<qint64, int> m_pendingIndex;             // seriesSlot -> index in m_pending
    QHash<qint64, int> m_tailRows;                 // seriesSlot -> tailRows(); valid within committed state
    qint64 m_nextMetricId = 0;                     // 0: not read yet in this batch
    QHash<RunId, QHash<QString, qint64>> m_keyIds; // cache of metric_keys, valid within committed state
    QSet<RunId> m_missingRuns;                     // runs found absent in this batch
    // ResultStore::beginIngestion(): runs whose ingestion owner restarts from
    // the stored offset after a failure, and those of them whose console
    // metrics and offsets are dropped until it has (a failed batch held some).
    QSet<RunId> m_ingesting, m_fenced;
    // Last current step per series (seriesSlot(key id, source)); nullopt: no
    // point yet. Loaded on first use, valid within committed state like m_keyIds.
    QHash<qint64, std::optional<qint64>> m_lastSteps;
    // QtSqlBatch columns, filled by insertMetricRow, written by flushBatchRows.
    QVariantList m_batchId, m_batchKey, m_batchStep, m_batchEpoch, m_batchWall, m_batchValue, m_batchKind,
            m_batchSource;
};

} // namespace ty
