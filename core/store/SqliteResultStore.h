#pragma once

#include "ResultStore.h"
#include "SqliteStoreOptions.h"

#include <QMutex>
#include <QSet>
#include <QSqlDatabase>

#include <memory>

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
// The destructor commits everything still queued, then closes the database.
class SqliteResultStore final : public ResultStore {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SqliteResultStore)

public:
    static Result<std::unique_ptr<SqliteResultStore>> open(const QString& path,
                                                           const SqliteStoreOptions& options = {});
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
    QList<NodeRecord> nodes() const override;

    int schemaVersion() const override { return m_schemaVersion; }
    qint64 dataVersion() const override;
    qint64 transactionsCommitted() const override;
    QString location() const override { return m_path; }

private:
    SqliteResultStore(QString path, SqliteStoreOptions options);

    // The calling thread's read connection (opened on first use); invalid and
    // a warning if it cannot be opened.
    QSqlDatabase readConnection() const;
    QList<MetricPoint> readMetrics(RunId run, const QString& key, bool withSuperseded) const;

    const QString m_path;
    const SqliteStoreOptions m_options;
    const int m_instance;
    int m_schemaVersion = 0;
    std::unique_ptr<SqliteWriter> m_writer;

    mutable QMutex m_readMutex;
    mutable QSet<QString> m_readConnections;
};

} // namespace ty
