#pragma once

#include "ResultStore.h"
#include "SqliteStoreOptions.h"

#include <QMutex>
#include <QSet>
#include <QSqlDatabase>

class QSqlError;

#include <functional>
#include <memory>
#include <optional>

namespace ty {

class SqliteWriter;

// ResultStore on one SQLite file through QtSql (QSQLITE).
//
// Connections: one writer connection owned by a SqliteWriter thread, plus one
// read connection per calling thread, named "trainyard-store-<instance>-read-
// <thread serial>", opened on first use and closed when the store is destroyed
// (so a thread must not be reading through the store while it is destroyed).
// Every connection uses WAL (readers never block the writer and see only
// committed transactions), synchronous=NORMAL (a power cut may lose the last
// transactions, never corrupts) and a busy timeout. Several stores, in one or
// several processes (GUI and trainyardctl), may share a file.
//
// Read-only (StoreAccess::ReadOnlyIfNeeded on a file this process cannot
// write): no writer thread; read connections open the file as a "mode=ro" URI,
// or "immutable=1" where the -wal/-shm cannot be created (a read-only folder
// with no -wal: the main file is then the whole database). Migrations never
// run: a file older than kCurrentVersion is refused, naming both versions.
// Writes are refused: the calls returning a Result fail with the reason,
// async ones are dropped, the first with a warning and writeFailed, and the
// next flush() returns the reason.
//
// Damage (SQLITE_CORRUPT / SQLITE_NOTADB) found at open() is the open error;
// found later by a read or a write batch, it is warned about and emitted
// (damaged) once, later reads fail quietly (empty results), and writes are
// refused like on a read-only store: a damaged file is never written to.
//
// The destructor commits everything still queued, then closes the database.
class SqliteResultStore final : public ResultStore {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SqliteResultStore)

public:
    static Result<std::unique_ptr<SqliteResultStore>> open(
            const QString& path, const SqliteStoreOptions& options = {}, StoreAccess access = StoreAccess::ReadWrite);
    ~SqliteResultStore() override;

    Result<RunId> createRun(const RunRecord& r, const QMap<QString, QString>& params) override;
    void updateRun(const RunRecord& r) override;
    Result<void> annotateRun(RunId run, const RunAnnotation& annotation) override;
    void appendMetrics(QList<MetricPoint> points) override;
    void setConsoleOffset(RunId run, qint64 offset) override;
    void beginIngestion(RunId run) override;
    void deleteRun(RunId run) override;
    void addArtifact(const ArtifactRecord& a) override;
    void addNotice(const RunNotice& n) override;
    void setParams(RunId run, const QMap<QString, QString>& params) override;
    Result<void> addNode(const NodeRecord& n) override;
    Result<void> removeNode(const QString& name) override;
    void setNodeFacts(const QString& name, const QString& facts) override;
    Result<void> setNodeLabels(const QString& name, const QStringList& labels) override;
    Result<void> putMemoEntry(const MemoEntryRecord& e) override;
    Result<void> recordMemoHit(const MemoHitRecord& h) override;
    Result<void> removeMemoEntries(const QStringList& keys) override;
    void putPipeline(const PipelineRecord& p) override;
    Result<RunGroupId> createGroup(const RunGroupRecord& g) override;
    Result<void> joinGroup(RunId run, const RunGroupMembership& m) override;
    Result<void> flush() override;

    Result<RunRecord> run(RunId id) const override;
    QList<RunRecord> runs() const override;
    QList<RunRecord> unfinishedRuns(const QDateTime& endedSince = {}) const override;
    QList<RunRecord> endedRunsAfter(RunId afterId) const override;
    // The two statements unfinishedRuns() runs (runs, then their tags; with
    // `endedWindow` each takes the window's start, ms since the epoch, as its
    // one bind value), for tests that check SQLite's plan uses the indexes.
    static QStringList unfinishedRunsSql(bool endedWindow);
    QMap<QString, QString> params(RunId run) const override;
    QList<MetricPoint> metrics(RunId run, const QString& key = {}) const override;
    QStringList metricKeys(RunId run) const override;
    QMap<QString, MetricPoint> latestMetrics(RunId run) const override;
    QList<MetricPoint> allMetrics(RunId run, const QString& key = {}) const override;
    QList<MetricRestart> metricRestarts(RunId run, const QString& key = {}) const override;
    QList<ArtifactRecord> artifacts(RunId run) const override;
    QList<RunNotice> notices(RunId run) const override;
    QMap<RunId, QList<RunNotice>> allNotices() const override;
    Result<RunChanges> runChangesSince(qint64 afterSeq) const override;
    QList<NodeRecord> nodes() const override;
    QStringList localNodeLabels() const override;
    std::optional<MemoEntryRecord> memoEntry(const QString& key) const override;
    QList<MemoEntryRecord> memoEntries(const MemoEntryFilter& filter = {}) const override;
    QList<MemoHitRecord> memoHits(const QString& key) const override;
    QList<PipelineRecord> pipelines(bool runningOnly = false) const override;
    std::optional<PipelineRecord> pipeline(qint64 id) const override;
    QList<RunGroupRecord> groups(std::optional<RunGroupKind> kind = std::nullopt) const override;
    std::optional<RunGroupRecord> group(RunGroupId id) const override;
    QList<std::pair<RunId, RunGroupMembership>> groupMembers(RunGroupId id) const override;

    int schemaVersion() const override { return m_schemaVersion; }
    qint64 dataVersion() const override;
    qint64 transactionsCommitted() const override;
    // A SqliteMetricColumns on the file (its own read-only connection);
    // nullptr on a read-only store.
    Result<std::unique_ptr<MetricColumnReader>> openColumnReader() const override;
    QString location() const override { return m_path; }
    QString readOnlyReason() const override { return m_readOnlyReason; }
    QString damage() const override;

private:
    SqliteResultStore(QString path, SqliteStoreOptions options, QString readOnlyReason, QString readUri);

    // A failed read (`what`: "cannot read runs"): damage is noted once
    // (noteDamage), anything else is a warning naming the file.
    void readFailed(const QString& what, const QSqlError& error) const;
    // readFailed() as a callable, for the read helpers.
    std::function<void(const QString&, const QSqlError&)> readErrorSink() const;
    // Records the damage SQLite reported (`sqliteText`); the first call
    // warns and emits damaged() (queued to the store's thread).
    void noteDamage(const QString& sqliteText) const;
    // Why a write cannot be made (read-only, damaged), or nullopt.
    std::optional<QString> writeRefusal() const;
    // An async write is dropped because of writeRefusal(): true when so.
    bool refuseAsyncWrite() const;

    // The calling thread's read connection (opened on first use); invalid and
    // a warning if it cannot be opened.
    QSqlDatabase readConnection() const;
    QList<MetricPoint> readMetrics(RunId run, const QString& key, bool withSuperseded) const;

    const QString m_path;
    const SqliteStoreOptions m_options;
    const QString m_readOnlyReason; // empty: read-write, m_writer runs
    const QString m_readUri;        // read-only: what read connections open (QSQLITE_OPEN_URI)
    const int m_instance;
    int m_schemaVersion = 0;
    std::unique_ptr<SqliteWriter> m_writer;

    mutable QMutex m_readMutex;
    mutable QSet<QString> m_readConnections;

    mutable QMutex m_refusalMutex;
    mutable QString m_damage;                          // damage(): set once
    mutable bool m_warnedRefusal = false;              // the first refused async write was reported
    mutable std::optional<QString> m_unflushedRefusal; // for the next flush()
};

} // namespace ty
