#pragma once

#include "MetricBlock.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QHash>

#include <array>
#include <QList>
#include <QSet>
#include <QSqlQuery>
#include <QString>

#include <optional>
#include <unordered_map>
#include <vector>

class QSqlDatabase;
struct sqlite3;
struct sqlite3_stmt;

namespace ty {

// The metric half of SqliteWriter: writes a batch's metric points into
// metric_keys, metrics (rows) and metric_blocks (packed points, format in
// MetricBlock.h, schema 5), and handles a series that goes back (a resumed
// run: its overlapping points are marked superseded and the restart is
// recorded in metric_restarts, schema 4). It never begins or ends a
// transaction: SqliteWriter opens one per batch and commits or rolls it back.
//
// Series: (run, key, source), stored under its metric_keys id, which a
// point's key resolves to once per series: by MetricPoint::keyHandle where the
// producer interned its keys (the console's MetricExtractor), else by the
// key's QString identity or text (keyId()). Points are
// held back per series within a batch and written at flush(): at least
// kMinBulkBlockPoints new points of a series go into blocks at once (a bulk
// write); fewer become rows until the series' current rows make a full block
// (kMetricBlockPoints), which then replaces them. Rows go in through
// libsqlite3 on the writer connection's own sqlite3* (kRowsPerStatement rows
// per statement): the only metric insert path.
//
// Units: step is the trainer's step, wall times are ms since the Unix epoch
// (UTC); counts are points per run (QHash<RunId, int>), added to as points are
// written (rows that move into a block are not counted twice).
//
// Thread affinity: the writer thread only (SqliteWriter::run()), like the
// connection it is prepared on. Not copyable.
//
// Errors: a returned error means the open transaction must be rolled back
// (then call rolledBack()); points of a run that does not exist (or that
// another process deleted meanwhile) are dropped with a debug message, not
// an error.
class MetricSeriesWriter final {
    Q_DISABLE_COPY_MOVE(MetricSeriesWriter)

public:
    // `path` names the database in error messages; `packBlocks`:
    // SqliteStoreOptions::packBlocks (false: rows only).
    MetricSeriesWriter(QString path, bool packBlocks);
    ~MetricSeriesWriter(); // release()s

    // Prepares the statements on the writer connection `db`, whose driver
    // handle is `handle` (checked by SqliteWriter to run the libsqlite3
    // linked here). Error: a statement SQLite refused (schema mismatch).
    Result<void> prepare(const QSqlDatabase& db, sqlite3* handle);
    // Finalizes the statements; before the connection closes. Idempotent.
    void release();

    // A batch (transaction) begins: the next metric id is read again at its
    // first use, and runs found missing in an earlier batch are looked up again.
    void beginBatch();
    // Holds back `points` (arrival order) per series; a series going back or
    // holding a block's worth is written at once. The points are referenced,
    // not copied: `points` must stay alive and unchanged until flush().
    Result<void> append(const QList<MetricPoint>& points, QHash<RunId, int>& counts);
    // Writes every held-back point (blocks and rows), in series order. Before
    // any other write that touches runs or metrics, and before the commit.
    Result<void> flush(QHash<RunId, int>& counts);
    // The run is being deleted: forget its cached metric_keys ids.
    void forgetRun(RunId run);
    // The batch was rolled back: drop held-back points and every cache that
    // may describe rows that are no longer there.
    void rolledBack();

private:
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
    static constexpr int kMinBulkBlockPoints = 1024;
    static constexpr int kLegacyTail = -1; // m_tailRows: a series with >= a block of rows from before packing
    // Rows per multi-row INSERT: the per-statement cost (VDBE start and halt,
    // an allocation under SQLite's global memory mutex) is paid once per
    // kRowsPerStatement rows. 64 x 8 parameters stay far below
    // SQLITE_MAX_VARIABLE_NUMBER (999 before 3.32, 32766 since).
    static constexpr int kRowsPerStatement = 64;

    // "<path>: run <run>: <what>: <why>", the error of a metric write.
    std::unexpected<Error> runFailure(RunId run, const QString& what, const QString& why) const;
    // SQLite's words for the handle's last failure.
    QString sqliteWords() const;
    // The metric_keys id of (run, key), inserting it if needed; nullopt when
    // the run does not exist.
    Result<std::optional<qint64>> keyId(RunId run, const QString& key);
    // keyId(p.run, p.key), through the (run, p.keyHandle) table first when
    // the point carries a handle: a pointer compare (or, for a string of
    // another producer, a text compare) instead of hashing the text.
    Result<std::optional<qint64>> keyIdOf(const MetricPoint& p);
    // Packs `series`' held-back points (and its current rows, when a block
    // is due) into blocks, or appends them to `rows` for writeRows().
    Result<void> flushSeries(PendingSeries& series, std::vector<RowPoint>& rows, QHash<RunId, int>& counts);
    // false: the key row is gone (another process deleted the run); nothing written.
    Result<bool> writeBlock(
            const PendingSeries& series, const MetricBlockPoint* points, int n, QHash<RunId, int>& counts);
    // Inserts `rows` as metrics rows, kRowsPerStatement at a time, then the
    // rest one by one; clears `rows`.
    Result<void> writeRows(std::vector<RowPoint>& rows, QHash<RunId, int>& counts);
    // The next arrival id (metrics.id and block point ids share one sequence),
    // read from the database at the first use in each batch.
    Result<qint64> nextMetricId();
    // Current rows of a series not yet packed (kLegacyTail: a block or more).
    Result<int> tailRows(qint64 keyId, MetricSource source);
    Result<bool> insertMetricRow(qint64 keyId, qint64 id, const MetricPoint& p); // false: foreign key gone
    // One point, re-resolving its key once if the cached key row vanished.
    Result<void> insertPoint(const MetricPoint& p, qint64 id, QHash<RunId, int>& counts);
    // kRowsPerStatement points in one multi-row INSERT (falls back to
    // insertPoint() one by one when a foreign key fails).
    Result<void> insertRowGroup(const RowPoint* rows, QHash<RunId, int>& counts);
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
    const bool m_packBlocks;

    sqlite3* m_handle = nullptr;
    std::optional<QSqlQuery> m_insertKey, m_selectKey, m_selectLastStep, m_markSuperseded, m_insertRestart;
    sqlite3_stmt* m_insertMetric = nullptr;      // one row
    sqlite3_stmt* m_insertMetricMulti = nullptr; // kRowsPerStatement rows
    sqlite3_stmt *m_insertBlock = nullptr, *m_selectTail = nullptr, *m_countTail = nullptr, *m_deleteTail = nullptr,
                 *m_selectCutBlocks = nullptr, *m_setLive = nullptr, *m_lastLiveBlock = nullptr,
                 *m_maxMetricId = nullptr;

    std::vector<PendingSeries> m_pending;
    QHash<qint64, int> m_pendingIndex;             // seriesSlot -> index in m_pending
    QHash<qint64, int> m_tailRows;                 // seriesSlot -> tailRows(); valid within committed state
    qint64 m_nextMetricId = 0;                     // 0: not read yet in this batch
    QHash<RunId, QHash<QString, qint64>> m_keyIds; // cache of metric_keys, valid within committed state
    // In front of m_keyIds: (run, key) by the key's string data, so a
    // producer without handles that hands the same QString for every point
    // of a series costs a pointer compare per point, not two hash lookups.
    // An entry holds its QString, so its data cannot be freed and reused by
    // another string while cached.
    struct KeyCacheEntry {
        RunId run = 0;
        QString key;
        qint64 id = 0;
    };
    std::array<KeyCacheEntry, 64> m_keyCache;
    // In front of both, for points that carry MetricPoint::keyHandle (the
    // console's): per run, a flat table indexed by the handle. A slot holds
    // the key text it was resolved for, and is used only for that text:
    // handles are the producer's numbering (each MetricExtractor counts from
    // 1), so a run fed by a second producer, or by a new extractor after a
    // restart, may bring a known handle with another key; it is resolved by
    // its text and the slot taken over. Handles above kMaxKeyHandle are not
    // tabled (the text path). Valid within committed state, like m_keyIds.
    struct HandleSlot {
        QString key;
        qint64 id = 0; // 0: empty
    };
    static constexpr quint32 kMaxKeyHandle = 1u << 14;
    std::unordered_map<RunId, std::vector<HandleSlot>> m_handleIds;
    RunId m_handleRun = 0;                            // the run of m_handleSlots
    std::vector<HandleSlot>* m_handleSlots = nullptr; // m_handleIds[m_handleRun], or null
    void forgetKeys(RunId run);                       // from m_keyIds, m_keyCache and m_handleIds
    void forgetAllKeys();
    QSet<RunId> m_missingRuns; // runs found absent in this batch
    // Last current step per series (seriesSlot(key id, source)); nullopt: no
    // point yet. Loaded on first use, valid within committed state like m_keyIds.
    QHash<qint64, std::optional<qint64>> m_lastSteps;
};

} // namespace ty
