#pragma once

#include "SqliteStoreOptions.h"
#include "StoreWriteOp.h"
#include "common/Result.h"
#include "common/Run.h"

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

struct sqlite3_stmt;

namespace ty {

// The one thread that writes a SqliteResultStore's database. It owns its own
// named QSQLITE connection; opens it, sets the pragmas (WAL,
// synchronous=NORMAL, foreign_keys, busy timeout) and migrates the schema in
// start(); then applies queued writes in batches: everything queued while the
// previous batch was being committed (plus a short coalescing wait after an
// idle period) goes into one BEGIN IMMEDIATE ... COMMIT.
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
        QList<RunId> changedRuns;            // each once, in first-touch order
        QList<QPair<RunId, int>> metricCounts; // points committed per run
        QString error;                       // non-empty: the batch was rolled back
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

    // One op each; a returned error aborts (rolls back) the whole batch, while
    // an op that cannot apply (unknown run) is skipped with a debug message.
    Result<RunId> applyCreate(const storeop::CreateRun& op);
    Result<bool> applyUpdate(const storeop::UpdateRun& op);
    Result<void> replaceTags(RunId run, const QStringList& tags);
    Result<QHash<RunId, int>> applyMetrics(const QList<MetricPoint>& points);
    Result<bool> applyConsoleOffset(const storeop::SetConsoleOffset& op);
    Result<void> applyDelete(const storeop::DeleteRun& op);
    Result<bool> applyArtifact(const storeop::AddArtifact& op);
    Result<void> applyPutNode(const storeop::PutNode& op);
    Result<void> applyRemoveNode(const storeop::RemoveNode& op);

    // The metric_keys id of (run, key), inserting it if needed; nullopt when
    // the run does not exist.
    Result<std::optional<qint64>> keyId(RunId run, const QString& key);
    Result<bool> insertMetricRow(qint64 keyId, const MetricPoint& p); // false: foreign key gone
    // One point, re-resolving its key once if the cached key row vanished.
    Result<void> insertPoint(const MetricPoint& p, QHash<RunId, int>& counts);
    // RawSqlite: kRowsPerStatement points in one multi-row INSERT (falls back
    // to insertPoint() one by one when a foreign key fails).
    static constexpr int kRowsPerStatement = 64;
    using KeyedPoint = std::pair<qint64, const MetricPoint*>;
    Result<void> insertRawGroup(const KeyedPoint* rows, QHash<RunId, int>& counts);
    Result<void> flushBatchRows();
    // Whether p's step is <= the last current step of its series (key id,
    // source), i.e. p starts a new segment (a resumed run). Otherwise
    // records p's step as the series' last.
    Result<bool> goesBack(qint64 keyId, const MetricPoint& p);
    // Marks the series' current points with step >= p.step superseded and
    // records the restart in metric_restarts.
    Result<void> restartSeries(qint64 keyId, const MetricPoint& p);
    // The key id of p's series (nullopt: unknown run). When p goes back in
    // its series, `flushHeld` first writes the rows the caller holds back,
    // then restartSeries() marks what p supersedes.
    Result<std::optional<qint64>> seriesFor(const MetricPoint& p, const std::function<Result<void>()>& flushHeld);

    const QString m_path;
    const QString m_connectionName;
    const SqliteStoreOptions m_options;
    const Callback m_onBatch;

    // Queue, shared with the producers.
    mutable QMutex m_mutex;
    QWaitCondition m_workCond;   // writer waits for work
    QWaitCondition m_doneCond;   // producers wait for commits / room
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
    std::optional<QSqlQuery> m_insertRun, m_updateRun, m_deleteTags, m_insertTag, m_insertParam, m_setOffset,
        m_deleteRun, m_upsertArtifact, m_insertKey, m_selectKey, m_insertMetric, m_selectLastStep, m_markSuperseded,
        m_insertRestart;
    sqlite3_stmt* m_rawInsertMetric = nullptr;      // one row
    sqlite3_stmt* m_rawInsertMetricMulti = nullptr; // kRowsPerStatement rows
    QHash<RunId, QHash<QString, qint64>> m_keyIds; // cache of metric_keys, valid within committed state
    QSet<RunId> m_missingRuns;                      // runs found absent in this batch
    // Last current step per series (seriesSlot(key id, source)); nullopt: no
    // point yet. Loaded on first use, valid within committed state like m_keyIds.
    QHash<qint64, std::optional<qint64>> m_lastSteps;
    // QtSqlBatch columns, filled by insertMetricRow, written by flushBatchRows.
    QVariantList m_batchKey, m_batchStep, m_batchEpoch, m_batchWall, m_batchValue, m_batchKind, m_batchSource;
};

} // namespace ty
