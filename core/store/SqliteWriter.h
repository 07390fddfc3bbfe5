#pragma once

#include "MemoWriter.h"
#include "MetricSeriesWriter.h"
#include "RecordWriter.h"
#include "SqliteStoreOptions.h"
#include "StoreWriteOp.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QHash>
#include <QList>
#include <QMutex>
#include <QSet>
#include <QSqlDatabase>
#include <QString>
#include <QThread>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

struct sqlite3;

namespace ty {

// The one thread that writes a SqliteResultStore's database: the write
// queue, its thread, batching and transactions. It owns its own named QSQLITE
// connection; opens it, sets the pragmas (WAL, synchronous=NORMAL,
// foreign_keys, busy timeout, page size, cache) and migrates the schema in
// start(); then applies queued writes in batches: everything queued while the
// previous batch was being committed (plus a short coalescing wait after an
// idle period, SqliteStoreOptions::coalesceMs; at most maxBatchPoints metric
// points) goes into one BEGIN IMMEDIATE ... COMMIT, all or nothing. The SQL
// of each write is elsewhere: metric points in MetricSeriesWriter (blocks,
// rows, resumed runs), memoized steps' entries and hits in MemoWriter, every
// other write in RecordWriter. Metric rows and
// blocks go through libsqlite3 on the connection's own sqlite3*, so start()
// refuses a QSQLITE plugin that carries its own SQLite (a version or source
// id other than the linked library's).
//
// A failed batch is rolled back whole; its error (SQLite's words, with the
// system's reason such as "No space left on device") goes to the callback and
// to takeError(), and the ingesting runs it held console writes of are fenced
// until their ingestion begins again (ResultStore::beginIngestion()).
//
// Thread affinity: enqueue()/waitCommitted()/takeError() from any thread
// (not the writer itself); start() and stop() from the owning thread; the
// callback runs on the writer thread.
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
    // The QSQLITE driver's connection, taken by initialize() once the driver
    // is seen to run the libsqlite3 linked here (sqlitefile::libraryMismatch).
    sqlite3* m_handle = nullptr;
    RecordWriter m_records;
    MetricSeriesWriter m_metrics;
    MemoWriter m_memo;
    // ResultStore::beginIngestion(): runs whose ingestion owner restarts from
    // the stored offset after a failure, and those of them whose console
    // metrics and offsets are dropped until it has (a failed batch held some).
    QSet<RunId> m_ingesting, m_fenced;
};

} // namespace ty
