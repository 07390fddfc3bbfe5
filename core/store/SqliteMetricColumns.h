#pragma once

#include "MetricColumnReader.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QList>
#include <QString>

#include <memory>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ty {

namespace detail {
struct MetricIdRun; // SqliteMetricColumns.cpp
}

// Bulk, read-only, column-wise reads of a SQLite result database's metric
// series (SqliteResultStore's MetricColumnReader), straight through
// libsqlite3 (one prepared statement, no QVariant per cell): the compare
// view's loader reads 10^7 points with it
// (tests/bench/bench_compare, tests/bench/RESULTS.md "Compare view").
// It reads exactly what SqliteResultStore::metrics(run, key) returns: current
// points, ordered by step, then arrival id; keys ordered like metricKeys()
// (binary, UTF-8 order). A key's points are its rows of `metrics` (superseded
// ones left out when the schema has that column, version 4+) and, from schema
// version 5 on, the live points (the first `live`) of its packed
// `metric_blocks` rows (format: MetricBlock.h), decoded a column at a time
// and merged with the rows by (step, id). Files older than version 5 have no
// metric_blocks table and are read from rows alone.
//
// Opens its own read-only connection (SQLITE_OPEN_READONLY, WAL readers do
// not block the store's writer and vice versa), with the store's busy
// timeout. The file must already exist with the store's schema
// (SqliteResultStore::open creates and migrates it).
//
// Thread: one thread at a time per object (the connection is not shared);
// create one per worker. Errors name the file and the run/key; a malformed
// block (a BLOB that is not a version-1 block, or count/live that do not
// match it) is an error naming the block too, not a partial series.

class SqliteMetricColumns final : public MetricColumnReader {
public:
    static Result<std::unique_ptr<SqliteMetricColumns>> open(const QString& path, int busyTimeoutMs = 10000);
    ~SqliteMetricColumns() override;

    Result<void> beginSnapshot() override;
    void endSnapshot() override;
    // keys(), then runSeries() (Plan::Fastest) or series() per key
    // (Plan::KeyByKey). A series() error adds "(run R, metric K)", a
    // runSeries() one "(run R)".
    Result<QList<std::pair<QString, MetricSeriesColumns>>> runMetrics(RunId run, Plan plan = Plan::Fastest) override;

    // (key id, key) of `run`, sorted by key like ResultStore::metricKeys().
    Result<QList<std::pair<qint64, QString>>> keys(RunId run);
    // Every current point of the series `keyId` (from keys()), rows and
    // blocks. `sizeHint` (rows expected, e.g. from a previous read) only
    // pre-sizes the vectors; a key with blocks is sized exactly and ignores it.
    Result<MetricSeriesColumns> series(qint64 keyId, qsizetype sizeHint = 0);

    // Every current point of every series in `keys` (from keys(), all of
    // one run), in that order; each exactly what series() returns. When the
    // run's rows lie together in the table (one run's keys logged together,
    // the usual case: ids from min to max of its keys hold at most 1.5x its
    // rows) they are read in one pass in rowid (insertion) order, ~3x faster
    // than through the (key_id, step) index; a key whose steps are not
    // non-decreasing in that order is then stably sorted by step (= ORDER BY
    // step, id), and a key with blocks has them merged in by (step, id).
    // Otherwise (also when the run has blocks only) each key goes through
    // series().
    Result<QList<MetricSeriesColumns>> runSeries(const QList<std::pair<qint64, QString>>& keys);
    // Whether the last runSeries() read in rowid order (diagnostics, tests).
    bool lastReadInRowOrder() const { return m_lastRowOrder; }

    QString path() const { return m_path; }

private:
    SqliteMetricColumns(QString path, sqlite3* db);

    // "run R: metric K" for errors (or the key id when it is gone).
    QString describeKey(qint64 keyId);
    // (source, live points) of the key's blocks; empty without any (or
    // without the table).
    Result<std::vector<std::pair<int, qint64>>> blockSizes(qint64 keyId);
    // The key's current rows in (step, id) order, with their ids when `ids`.
    Result<void> readRows(qint64 keyId, qsizetype expected, MetricSeriesColumns& out, std::vector<qint64>* ids);
    // Appends one run per source holding the live points of the key's blocks,
    // each in (step, id) order, with their ids when `withIds` (needed to
    // merge with other runs). A malformed block is an error naming it.
    Result<void> readBlocks(qint64 keyId, const std::vector<std::pair<int, qint64>>& sizes,
            std::vector<detail::MetricIdRun>& runs, bool withIds);

    QString m_path;
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_keys = nullptr;
    sqlite3_stmt* m_series = nullptr;
    sqlite3_stmt* m_count = nullptr;
    sqlite3_stmt* m_extent = nullptr;     // count, min(id), max(id) of a key (index only)
    sqlite3_stmt* m_range = nullptr;      // current rows with id in [?1, ?2], rowid order
    sqlite3_stmt* m_blocks = nullptr;     // a key's live blocks (null before schema 5)
    sqlite3_stmt* m_blockSizes = nullptr; // live points per source of a key's blocks (null before schema 5)
    sqlite3_stmt* m_keyName = nullptr;    // run id and key of a key id (error messages)
    bool m_lastRowOrder = false;
    bool m_inSnapshot = false;
};

} // namespace ty
