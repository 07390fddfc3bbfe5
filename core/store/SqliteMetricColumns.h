#pragma once

#include "common/Result.h"
#include "common/Run.h"

#include <QList>
#include <QString>

#include <memory>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ty {

// One metric series as columns: what ResultStore::metrics(run, key) returns,
// without a MetricPoint (~70 bytes and a QString each) per point.
// 24 bytes a point.
struct MetricSeriesColumns {
    std::vector<double> step;   // trainer step, as stored (exact below 2^53)
    std::vector<double> wallMs; // ms since the Unix epoch, UTC
    std::vector<double> value;  // NaN/+-inf/-0.0 as stored (SqlCodec's kind column)
};

// Bulk, read-only, column-wise reads of a SQLite result database's metric
// series, straight through libsqlite3 (one prepared statement, no QVariant
// per cell): the compare view's loader reads 10^7 points with it
// (tests/bench/bench_compare, tests/bench/RESULTS.md "Compare view").
// It reads exactly what SqliteResultStore::metrics(run, key) returns: current
// points (superseded ones left out when the schema has that column), ordered
// by step, then arrival; keys ordered like metricKeys() (binary, UTF-8 order).
//
// Opens its own read-only connection (SQLITE_OPEN_READONLY, WAL readers do
// not block the store's writer and vice versa), with the store's busy
// timeout. The file must already exist with the store's schema
// (SqliteResultStore::open creates and migrates it).
//
// Thread: one thread at a time per object (the connection is not shared);
// create one per worker. Errors name the file and the run/key.
class SqliteMetricColumns {
public:
    static Result<std::unique_ptr<SqliteMetricColumns>> open(const QString& path, int busyTimeoutMs = 10000);
    ~SqliteMetricColumns();
    SqliteMetricColumns(const SqliteMetricColumns&) = delete;
    SqliteMetricColumns& operator=(const SqliteMetricColumns&) = delete;

    // A read transaction: every read between begin and end sees one snapshot
    // of the database (a writer committing meanwhile is not seen).
    Result<void> beginSnapshot();
    void endSnapshot();

    // (key id, key) of `run`, sorted by key like ResultStore::metricKeys().
    Result<QList<std::pair<qint64, QString>>> keys(RunId run);
    // Every current point of the series `keyId` (from keys()). `sizeHint`
    // (points expected, e.g. from a previous read) only pre-sizes the vectors.
    Result<MetricSeriesColumns> series(qint64 keyId, qsizetype sizeHint = 0);

    // Every current point of every series in `keys` (from keys(), all of
    // one run), in that order; each exactly what series() returns. When the
    // run's rows lie together in the table (one run's keys logged together,
    // the usual case: ids from min to max of its keys hold at most 1.5x its
    // rows) they are read in one pass in rowid (insertion) order, ~3x faster
    // than through the (key_id, step) index; a key whose steps are not
    // non-decreasing in that order is then stably sorted by step (= ORDER BY
    // step, id). Otherwise each key goes through series().
    Result<QList<MetricSeriesColumns>> runSeries(const QList<std::pair<qint64, QString>>& keys);
    // Whether the last runSeries() read in rowid order (diagnostics, tests).
    bool lastReadInRowOrder() const { return m_lastRowOrder; }

    QString path() const { return m_path; }

private:
    SqliteMetricColumns(QString path, sqlite3* db);

    QString m_path;
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_keys = nullptr;
    sqlite3_stmt* m_series = nullptr;
    sqlite3_stmt* m_count = nullptr;
    sqlite3_stmt* m_extent = nullptr; // count, min(id), max(id) of a key (index only)
    sqlite3_stmt* m_range = nullptr;  // current rows with id in [?1, ?2], rowid order
    bool m_lastRowOrder = false;
    bool m_inSnapshot = false;
};

} // namespace ty
