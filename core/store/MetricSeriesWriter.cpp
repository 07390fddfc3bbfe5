#include "MetricSeriesWriter.h"

#include "MetricBlock.h"
#include "SqlCodec.h"
#include "SqliteFileAccess.h"

#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>

#include <sqlite3.h>

#include <algorithm>

namespace ty {

Q_DECLARE_LOGGING_CATEGORY(lcStoreWriter) // SqliteWriter.cpp: "trainyard.store.writer"

namespace {

// Binds one metric row at parameters first..first+7 (id, key_id, step,
// epoch, wall_ms, value, kind, source).
void bindRow(sqlite3_stmt* s, int first, qint64 keyId, qint64 id, const MetricPoint& p)
{
    using namespace sqlcodec;
    const MetricKind kind = metricKind(p.value);
    sqlite3_bind_int64(s, first, id);
    sqlite3_bind_int64(s, first + 1, keyId);
    sqlite3_bind_int64(s, first + 2, p.step);
    if (p.epoch)
        sqlite3_bind_double(s, first + 3, *p.epoch);
    else
        sqlite3_bind_null(s, first + 3);
    sqlite3_bind_int64(s, first + 4, p.wallTimeMs);
    if (metricHasSqlValue(kind))
        sqlite3_bind_double(s, first + 5, metricSqlValue(p.value, kind));
    else
        sqlite3_bind_null(s, first + 5);
    sqlite3_bind_int(s, first + 6, kind);
    sqlite3_bind_int(s, first + 7, static_cast<int>(p.source));
}

// m_lastSteps, m_tailRows and m_pendingIndex slot of a series (key id, source).
qint64 seriesSlot(qint64 keyId, MetricSource source)
{
    return keyId * 4 + static_cast<int>(source);
}

} // namespace

MetricSeriesWriter::MetricSeriesWriter(QString path, bool packBlocks)
    : m_path(std::move(path))
    , m_packBlocks(packBlocks)
{ }

MetricSeriesWriter::~MetricSeriesWriter()
{
    release();
}

std::unexpected<Error> MetricSeriesWriter::runFailure(RunId run, const QString& what, const QString& why) const
{
    return fail(QStringLiteral("%1: run %2: %3: %4").arg(m_path).arg(run).arg(what, why));
}

QString MetricSeriesWriter::sqliteWords() const
{
    return QString::fromUtf8(sqlite3_errmsg(m_handle));
}

Result<void> MetricSeriesWriter::prepare(const QSqlDatabase& db, sqlite3* handle)
{
    m_handle = handle;
    const std::pair<std::optional<QSqlQuery>*, const char*> statements[] = {
            {&m_insertKey, "INSERT INTO metric_keys (run_id, key) VALUES (?,?) ON CONFLICT (run_id, key) DO NOTHING"},
            {&m_selectKey, "SELECT id FROM metric_keys WHERE run_id = ? AND key = ?"},
            // Newest-first walk of metrics_series: stops at the first current row.
            {&m_selectLastStep,
                    "SELECT step FROM metrics WHERE key_id = ? AND source = ? AND superseded = 0 ORDER BY step DESC LIMIT 1"},
            {&m_markSuperseded,
                    "UPDATE metrics SET superseded = 1 WHERE key_id = ? AND source = ? AND step >= ? AND superseded = 0"},
            {&m_insertRestart,
                    "INSERT INTO metric_restarts (key_id, source, step, wall_ms, superseded) VALUES (?,?,?,?,?)"},
    };
    for (const auto& [q, sql] : statements) {
        q->emplace(db);
        if (!(*q)->prepare(QString::fromLatin1(sql)))
            return fail(QStringLiteral("%1: cannot prepare \"%2\": %3")
                                .arg(m_path, QString::fromLatin1(sql), (*q)->lastError().text()));
    }

    QByteArray multi = "INSERT INTO metrics (id, key_id, step, epoch, wall_ms, value, kind, source) VALUES ";
    for (int i = 0; i < kRowsPerStatement; ++i)
        multi += i ? ",(?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?)";
    const std::pair<sqlite3_stmt**, QByteArray> rawStatements[] = {
            {&m_insertMetric,
                    "INSERT INTO metrics (id, key_id, step, epoch, wall_ms, value, kind, source) VALUES (?,?,?,?,?,?,?,?)"},
            {&m_insertMetricMulti, multi},
            {&m_insertBlock,
                    "INSERT INTO metric_blocks (key_id, source, first_id, last_id, count, live, first_step, last_step, points)"
                    " VALUES (?,?,?,?,?,?,?,?,?)"},
            // The series' current rows, oldest first: what packing moves into a block.
            {&m_selectTail,
                    "SELECT id, step, epoch, wall_ms, value, kind FROM metrics"
                    " WHERE key_id = ?1 AND source = ?2 AND superseded = 0 ORDER BY id LIMIT ?3"},
            {&m_countTail,
                    "SELECT count(*) FROM (SELECT 1 FROM metrics WHERE key_id = ?1 AND source = ?2 AND superseded = 0 LIMIT ?3)"},
            {&m_deleteTail, "DELETE FROM metrics WHERE key_id = ?1 AND source = ?2 AND superseded = 0 AND id <= ?3"},
            // Blocks a restart at step ?3 may cut (their live prefix can reach it).
            {&m_selectCutBlocks,
                    "SELECT id, live, points FROM metric_blocks"
                    " WHERE key_id = ?1 AND source = ?2 AND live > 0 AND last_step >= ?3"},
            {&m_setLive, "UPDATE metric_blocks SET live = ?1 WHERE id = ?2"},
            // The newest block with current points holds the series' highest current step.
            {&m_lastLiveBlock,
                    "SELECT live, points FROM metric_blocks WHERE key_id = ?1 AND source = ?2 AND live > 0"
                    " ORDER BY first_id DESC LIMIT 1"},
            {&m_maxMetricId,
                    "SELECT max(coalesce((SELECT max(id) FROM metrics), 0),"
                    " coalesce((SELECT max(last_id) FROM metric_blocks), 0))"},
    };
    for (const auto& [stmt, sql] : rawStatements)
        if (sqlite3_prepare_v3(m_handle, sql.constData(), int(sql.size()) + 1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr)
                != SQLITE_OK)
            return fail(QStringLiteral("%1: cannot prepare %2: %3").arg(m_path, QString::fromUtf8(sql), sqliteWords()));
    return {};
}

void MetricSeriesWriter::release()
{
    for (sqlite3_stmt** stmt : {&m_insertMetric, &m_insertMetricMulti, &m_insertBlock, &m_selectTail, &m_countTail,
                 &m_deleteTail, &m_selectCutBlocks, &m_setLive, &m_lastLiveBlock, &m_maxMetricId}) {
        if (*stmt) {
            sqlite3_finalize(*stmt);
            *stmt = nullptr;
        }
    }
    for (auto* q : {&m_insertKey, &m_selectKey, &m_selectLastStep, &m_markSuperseded, &m_insertRestart})
        q->reset();
    m_handle = nullptr;
}

void MetricSeriesWriter::beginBatch()
{
    m_missingRuns.clear();
    m_nextMetricId = 0;
}

void MetricSeriesWriter::forgetRun(RunId run)
{
    forgetKeys(run);
}

void MetricSeriesWriter::rolledBack()
{
    forgetAllKeys();     // may hold ids of metric_keys rows that were rolled back
    m_lastSteps.clear(); // may hold steps of rows that were rolled back
    m_tailRows.clear();
    m_pending.clear();
    m_pendingIndex.clear();
}

void MetricSeriesWriter::forgetKeys(RunId run)
{
    m_keyIds.remove(run);
    for (KeyCacheEntry& e : m_keyCache)
        if (e.run == run)
            e = {};
    m_handleIds.erase(run);
    if (m_handleRun == run)
        m_handleSlots = nullptr;
}

void MetricSeriesWriter::forgetAllKeys()
{
    m_keyIds.clear();
    m_keyCache.fill({});
    m_handleIds.clear();
    m_handleSlots = nullptr;
}

Result<std::optional<qint64>> MetricSeriesWriter::keyIdOf(const MetricPoint& p)
{
    if (p.keyHandle == 0)
        return keyId(p.run, p.key);
    if (!m_handleSlots || m_handleRun != p.run) {
        m_handleSlots = &m_handleIds[p.run]; // node-based: stays valid until that run's entry is erased
        m_handleRun = p.run;
    }
    std::vector<HandleSlot>& slots = *m_handleSlots;
    if (p.keyHandle < slots.size()) {
        HandleSlot& slot = slots[p.keyHandle];
        if (slot.id != 0) {
            if (slot.key.constData() == p.key.constData() && slot.key.size() == p.key.size())
                return std::optional<qint64>(slot.id);
            if (slot.key == p.key) { // the same text in another string: hold this one
                slot.key = p.key;
                return std::optional<qint64>(slot.id);
            }
        }
    }
    auto id = keyId(p.run, p.key);
    if (!id || !*id || p.keyHandle > kMaxKeyHandle)
        return id;
    if (p.keyHandle >= slots.size())
        slots.resize(std::size_t(p.keyHandle) + 1);
    slots[p.keyHandle] = {p.key, **id};
    return id;
}

Result<std::optional<qint64>> MetricSeriesWriter::keyId(RunId run, const QString& key)
{
    // The slot is the string's alone: one string used by two runs shares a
    // slot, and the run decides.
    KeyCacheEntry& cached = m_keyCache[(quintptr(key.constData()) >> 4) % m_keyCache.size()];
    if (cached.run == run && cached.key.constData() == key.constData() && cached.key.size() == key.size())
        return std::optional<qint64>(cached.id);
    auto runIt = m_keyIds.find(run);
    if (runIt != m_keyIds.end()) {
        auto it = runIt->constFind(key);
        if (it != runIt->cend()) {
            cached = {run, key, *it};
            return std::optional<qint64>(*it);
        }
    }
    if (m_missingRuns.contains(run))
        return std::optional<qint64>();

    QSqlQuery& ins = *m_insertKey;
    ins.bindValue(0, QVariant::fromValue<qint64>(run));
    ins.bindValue(1, sqlcodec::textToSql(key));
    if (!ins.exec()) {
        if (sqlitefile::isConstraint(ins.lastError())) {
            qCDebug(lcStoreWriter, "metrics of unknown run %lld dropped", static_cast<long long>(run));
            m_missingRuns.insert(run);
            return std::optional<qint64>();
        }
        return runFailure(run, QStringLiteral("cannot record metric key %1").arg(key), ins.lastError().text());
    }
    QSqlQuery& sel = *m_selectKey;
    sel.bindValue(0, QVariant::fromValue<qint64>(run));
    sel.bindValue(1, sqlcodec::textToSql(key));
    if (!sel.exec() || !sel.next())
        return runFailure(run, QStringLiteral("cannot read metric key %1").arg(key), sel.lastError().text());
    const qint64 id = sel.value(0).toLongLong();
    sel.finish();
    m_keyIds[run].insert(key, id);
    cached = {run, key, id};
    return std::optional<qint64>(id);
}

Result<bool> MetricSeriesWriter::insertMetricRow(qint64 keyId, qint64 id, const MetricPoint& p)
{
    sqlite3_stmt* s = m_insertMetric;
    bindRow(s, 1, keyId, id, p);
    const int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(s);
        return true;
    }
    const QString msg = sqliteWords();
    sqlite3_reset(s);
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return false;
    return runFailure(p.run, QStringLiteral("cannot store metric %1").arg(p.key), msg);
}

Result<void> MetricSeriesWriter::insertPoint(const MetricPoint& p, qint64 id, QHash<RunId, int>& counts)
{
    auto key = keyIdOf(p);
    if (!key)
        return std::unexpected(key.error());
    if (!*key)
        return {}; // unknown run
    auto inserted = insertMetricRow(**key, id, p);
    if (!inserted)
        return std::unexpected(inserted.error());
    if (!*inserted) {
        // The cached key row is gone: another process deleted the run.
        forgetKeys(p.run);
        key = keyIdOf(p);
        if (!key)
            return std::unexpected(key.error());
        if (!*key)
            return {};
        inserted = insertMetricRow(**key, id, p);
        if (!inserted)
            return std::unexpected(inserted.error());
        if (!*inserted)
            return {};
    }
    ++counts[p.run];
    return {};
}

Result<void> MetricSeriesWriter::insertRowGroup(const RowPoint* rows, QHash<RunId, int>& counts)
{
    sqlite3_stmt* s = m_insertMetricMulti;
    for (int i = 0; i < kRowsPerStatement; ++i)
        bindRow(s, 1 + 8 * i, rows[i].keyId, rows[i].id, *rows[i].point);
    const int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(s);
        for (int i = 0; i < kRowsPerStatement; ++i)
            ++counts[rows[i].point->run];
        return {};
    }
    const QString msg = sqliteWords();
    sqlite3_reset(s);
    if ((rc & 0xff) != SQLITE_CONSTRAINT)
        return fail(QStringLiteral("%1: cannot store metrics: %2").arg(m_path, msg));
    // Statement-level failure: nothing of it was inserted. Row by row, to
    // keep the points whose run still exists.
    for (int i = 0; i < kRowsPerStatement; ++i)
        if (auto r = insertPoint(*rows[i].point, rows[i].id, counts); !r)
            return r;
    return {};
}

Result<void> MetricSeriesWriter::writeRows(std::vector<RowPoint>& rows, QHash<RunId, int>& counts)
{
    std::size_t i = 0;
    for (; i + kRowsPerStatement <= rows.size(); i += kRowsPerStatement)
        if (auto r = insertRowGroup(rows.data() + i, counts); !r)
            return r;
    for (; i < rows.size(); ++i)
        if (auto r = insertPoint(*rows[i].point, rows[i].id, counts); !r)
            return r;
    rows.clear();
    return {};
}

Result<qint64> MetricSeriesWriter::nextMetricId()
{
    if (m_nextMetricId == 0) {
        // Once per batch: another process may have written since the last one.
        sqlite3_stmt* s = m_maxMetricId;
        const int rc = sqlite3_step(s);
        const qint64 max = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
        sqlite3_reset(s);
        if (rc != SQLITE_ROW)
            return fail(QStringLiteral("%1: cannot read the last metric id: %2").arg(m_path, sqliteWords()));
        m_nextMetricId = max + 1;
    }
    return m_nextMetricId++;
}

Result<int> MetricSeriesWriter::tailRows(qint64 keyId, MetricSource source)
{
    const qint64 slot = seriesSlot(keyId, source);
    if (auto it = m_tailRows.constFind(slot); it != m_tailRows.cend())
        return *it;
    sqlite3_stmt* s = m_countTail;
    sqlite3_bind_int64(s, 1, keyId);
    sqlite3_bind_int(s, 2, static_cast<int>(source));
    sqlite3_bind_int(s, 3, kMetricBlockPoints);
    const int rc = sqlite3_step(s);
    const int n = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
    sqlite3_reset(s);
    if (rc != SQLITE_ROW)
        return fail(QStringLiteral("%1: cannot count the unpacked points of metric key %2: %3")
                            .arg(m_path)
                            .arg(keyId)
                            .arg(sqliteWords()));
    // A series with a block's worth of rows or more predates packing (schema
    // < 5): its rows stay rows, new points are packed on their own.
    const int tail = n >= kMetricBlockPoints ? kLegacyTail : n;
    m_tailRows.insert(slot, tail);
    return tail;
}

Result<bool> MetricSeriesWriter::writeBlock(
        const PendingSeries& series, const MetricBlockPoint* points, int n, QHash<RunId, int>& counts)
{
    const QByteArray blob = encodeMetricBlock(points, n);
    sqlite3_stmt* s = m_insertBlock;
    sqlite3_bind_int64(s, 1, series.keyId);
    sqlite3_bind_int(s, 2, static_cast<int>(series.source));
    sqlite3_bind_int64(s, 3, points[0].id);
    sqlite3_bind_int64(s, 4, points[n - 1].id);
    sqlite3_bind_int(s, 5, n);
    sqlite3_bind_int(s, 6, n);
    sqlite3_bind_int64(s, 7, points[0].step);
    sqlite3_bind_int64(s, 8, points[n - 1].step);
    sqlite3_bind_blob(s, 9, blob.constData(), int(blob.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(s);
    const QString msg = rc == SQLITE_DONE ? QString() : sqliteWords();
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc == SQLITE_DONE) {
        counts[series.run] += n;
        return true;
    }
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return false; // the key row is gone: another process deleted the run
    return fail(QStringLiteral("%1: run %2: cannot store a block of %3 points of metric key %4: %5")
                        .arg(m_path)
                        .arg(series.run)
                        .arg(n)
                        .arg(series.keyId)
                        .arg(msg));
}

Result<void> MetricSeriesWriter::flushSeries(
        PendingSeries& series, std::vector<RowPoint>& rows, QHash<RunId, int>& counts)
{
    const int n = int(series.points.size());
    if (n == 0)
        return {};
    auto tail = tailRows(series.keyId, series.source);
    if (!tail)
        return std::unexpected(tail.error());
    const qint64 slot = seriesSlot(series.keyId, series.source);
    const int t = *tail == kLegacyTail ? 0 : *tail;
    // Few points: rows, packed later with the ones after them. Many new
    // points at once (a bulk write): blocks straight away, the rows left so
    // far joining them. A long-lived series: packed once its rows make a block.
    const bool bulk = n >= kMinBulkBlockPoints;
    if (!m_packBlocks || (!bulk && t + n < kMetricBlockPoints)) {
        for (int i = 0; i < n; ++i)
            rows.push_back({series.keyId, series.ids[std::size_t(i)], series.points[std::size_t(i)]});
        if (*tail != kLegacyTail)
            m_tailRows[slot] = t + n;
        series.points.clear();
        series.ids.clear();
        return {};
    }

    std::vector<MetricBlockPoint> all;
    all.reserve(std::size_t(t + n));
    if (t > 0) {
        sqlite3_stmt* s = m_selectTail;
        sqlite3_bind_int64(s, 1, series.keyId);
        sqlite3_bind_int(s, 2, static_cast<int>(series.source));
        sqlite3_bind_int(s, 3, t);
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            MetricBlockPoint b;
            b.id = sqlite3_column_int64(s, 0);
            b.step = sqlite3_column_int64(s, 1);
            if (sqlite3_column_type(s, 2) != SQLITE_NULL)
                b.epoch = sqlite3_column_double(s, 2);
            b.wallMs = sqlite3_column_int64(s, 3);
            const int kind = sqlite3_column_int(s, 5);
            b.value = kind == sqlcodec::Finite ? sqlite3_column_double(s, 4) : sqlcodec::metricFromSql({}, kind);
            all.push_back(b);
        }
        sqlite3_reset(s);
        if (rc != SQLITE_DONE)
            return runFailure(series.run,
                    QStringLiteral("cannot read the rows of metric %1 to pack").arg(series.points.front()->key),
                    sqliteWords());
    }
    const std::size_t fromRows = all.size();
    for (int i = 0; i < n; ++i) {
        const MetricPoint* p = series.points[std::size_t(i)];
        all.push_back({series.ids[std::size_t(i)], p->step, p->wallTimeMs, p->value, p->epoch});
    }
    // Full blocks, then what is left: a block of its own when it is big
    // enough, rows otherwise (packed with later points).
    const std::size_t total = all.size();
    std::size_t packed = total - total % kMetricBlockPoints;
    if (total - packed >= std::size_t(kMinBulkBlockPoints))
        packed = total;
    Q_ASSERT(packed >= fromRows); // tail rows (< one block) always go into the first block
    const std::size_t rowsMoved = std::min(fromRows, packed);
    if (rowsMoved > 0) {
        sqlite3_stmt* d = m_deleteTail;
        sqlite3_bind_int64(d, 1, series.keyId);
        sqlite3_bind_int(d, 2, static_cast<int>(series.source));
        sqlite3_bind_int64(d, 3, all[rowsMoved - 1].id);
        const int rc = sqlite3_step(d);
        sqlite3_reset(d);
        if (rc != SQLITE_DONE)
            return runFailure(series.run,
                    QStringLiteral("cannot move the rows of metric %1 into a block").arg(series.points.front()->key),
                    sqliteWords());
        // They were counted when they came in as rows.
        counts[series.run] -= int(rowsMoved);
    }
    for (std::size_t at = 0; at < packed; at += kMetricBlockPoints) {
        const int n = int(std::min<std::size_t>(kMetricBlockPoints, packed - at));
        auto written = writeBlock(series, all.data() + at, n, counts);
        if (!written)
            return std::unexpected(written.error());
        if (!*written) {
            // The run was deleted by another process since its key was
            // cached: each new point re-resolves its key (and is dropped).
            forgetKeys(series.run);
            for (std::size_t i = std::max(at, fromRows); i < at + std::size_t(n); ++i)
                if (auto r = insertPoint(*series.points[i - fromRows], all[i].id, counts); !r)
                    return r;
        }
    }
    for (std::size_t i = packed; i < total; ++i)
        rows.push_back({series.keyId, all[i].id, series.points[i - fromRows]});
    if (*tail != kLegacyTail)
        m_tailRows[slot] = int(total - packed);
    series.points.clear();
    series.ids.clear();
    return {};
}

Result<void> MetricSeriesWriter::flush(QHash<RunId, int>& counts)
{
    std::vector<RowPoint> rows;
    for (PendingSeries& series : m_pending)
        if (auto r = flushSeries(series, rows, counts); !r)
            return r;
    m_pending.clear();
    m_pendingIndex.clear();
    return writeRows(rows, counts);
}

Result<bool> MetricSeriesWriter::goesBack(qint64 keyId, const MetricPoint& p)
{
    const qint64 slot = seriesSlot(keyId, p.source);
    auto it = m_lastSteps.find(slot);
    if (it == m_lastSteps.end()) {
        QSqlQuery& q = *m_selectLastStep;
        q.bindValue(0, QVariant::fromValue<qint64>(keyId));
        q.bindValue(1, static_cast<int>(p.source));
        if (!q.exec())
            return runFailure(
                    p.run, QStringLiteral("cannot read the last step of metric %1").arg(p.key), q.lastError().text());
        std::optional<qint64> last;
        if (q.next())
            last = q.value(0).toLongLong();
        q.finish();
        // Current points of a series have strictly increasing steps in
        // arrival order: the newest block with current points ends at its
        // highest packed one.
        sqlite3_stmt* s = m_lastLiveBlock;
        sqlite3_bind_int64(s, 1, keyId);
        sqlite3_bind_int(s, 2, static_cast<int>(p.source));
        const int rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            const int live = sqlite3_column_int(s, 0);
            const auto view
                    = MetricBlockView::parse(sqlite3_column_blob(s, 1), std::size_t(sqlite3_column_bytes(s, 1)));
            if (!view || live < 1 || live > view->count()) {
                sqlite3_reset(s);
                return fail(QStringLiteral("%1: run %2: metric %3 has a malformed block in metric_blocks")
                                    .arg(m_path)
                                    .arg(p.run)
                                    .arg(p.key));
            }
            const qint64 step = view->step(live - 1);
            if (!last || step > *last)
                last = step;
        }
        sqlite3_reset(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            return runFailure(
                    p.run, QStringLiteral("cannot read the last block of metric %1").arg(p.key), sqliteWords());
        it = m_lastSteps.insert(slot, last);
    }
    if (it->has_value() && p.step <= **it)
        return true;
    *it = p.step;
    return false;
}

Result<int> MetricSeriesWriter::cutBlocks(qint64 keyId, const MetricPoint& p)
{
    struct Cut {
        qint64 id;
        int live;
    };
    QList<Cut> cuts;
    int superseded = 0;
    sqlite3_stmt* s = m_selectCutBlocks;
    sqlite3_bind_int64(s, 1, keyId);
    sqlite3_bind_int(s, 2, static_cast<int>(p.source));
    sqlite3_bind_int64(s, 3, p.step);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const qint64 id = sqlite3_column_int64(s, 0);
        const int live = sqlite3_column_int(s, 1);
        const auto view = MetricBlockView::parse(sqlite3_column_blob(s, 2), std::size_t(sqlite3_column_bytes(s, 2)));
        if (!view || live > view->count()) {
            sqlite3_reset(s);
            return fail(QStringLiteral("%1: run %2: metric %3: block %4 in metric_blocks is malformed")
                                .arg(m_path)
                                .arg(p.run)
                                .arg(p.key)
                                .arg(id));
        }
        const int keep = std::min(live, view->countBelow(p.step));
        if (keep < live) {
            cuts.append({id, keep});
            superseded += live - keep;
        }
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return runFailure(p.run, QStringLiteral("cannot read the blocks of metric %1").arg(p.key), sqliteWords());
    for (const Cut& c : cuts) {
        sqlite3_stmt* u = m_setLive;
        sqlite3_bind_int(u, 1, c.live);
        sqlite3_bind_int64(u, 2, c.id);
        const int urc = sqlite3_step(u);
        sqlite3_reset(u);
        if (urc != SQLITE_DONE)
            return runFailure(
                    p.run, QStringLiteral("cannot mark superseded points of metric %1").arg(p.key), sqliteWords());
    }
    return superseded;
}

Result<void> MetricSeriesWriter::restartSeries(qint64 keyId, const MetricPoint& p)
{
    // The same step as the last one is a correction (a framework logging a
    // key twice at one step, e.g. Lightning's epoch on its train and val
    // rows): the newer value replaces the older, but that is no restart.
    const qint64 slot = seriesSlot(keyId, p.source);
    const auto last = m_lastSteps.constFind(slot);
    const bool sameStep = last != m_lastSteps.cend() && last->has_value() && **last == p.step;
    QSqlQuery& u = *m_markSuperseded;
    u.bindValue(0, QVariant::fromValue<qint64>(keyId));
    u.bindValue(1, static_cast<int>(p.source));
    u.bindValue(2, QVariant::fromValue<qint64>(p.step));
    if (!u.exec())
        return runFailure(
                p.run, QStringLiteral("cannot mark superseded points of metric %1").arg(p.key), u.lastError().text());
    const int supersededRows = u.numRowsAffected();
    if (auto tail = m_tailRows.find(slot); tail != m_tailRows.end() && *tail != kLegacyTail)
        *tail = std::max(0, *tail - supersededRows);
    auto supersededPacked = cutBlocks(keyId, p);
    if (!supersededPacked)
        return std::unexpected(supersededPacked.error());
    const int superseded = supersededRows + *supersededPacked;
    if (sameStep)
        return {};
    QSqlQuery& r = *m_insertRestart;
    r.bindValue(0, QVariant::fromValue<qint64>(keyId));
    r.bindValue(1, static_cast<int>(p.source));
    r.bindValue(2, QVariant::fromValue<qint64>(p.step));
    r.bindValue(3, QVariant::fromValue<qint64>(p.wallTimeMs));
    r.bindValue(4, superseded);
    if (!r.exec()) {
        if (sqlitefile::isConstraint(r.lastError())) {
            // The cached key row is gone (another process deleted the run):
            // the point's insert re-resolves its key or drops it.
            forgetKeys(p.run);
            m_lastSteps.remove(slot);
            m_tailRows.remove(slot);
            return {};
        }
        return runFailure(p.run,
                QStringLiteral("cannot record the restart of metric %1 at step %2").arg(p.key).arg(p.step),
                r.lastError().text());
    }
    qCDebug(lcStoreWriter, "run %lld: metric %s went back to step %lld, %d points superseded",
            static_cast<long long>(p.run), qUtf8Printable(p.key), static_cast<long long>(p.step), superseded);
    m_lastSteps.insert(slot, p.step);
    return {};
}

Result<void> MetricSeriesWriter::append(const QList<MetricPoint>& points, QHash<RunId, int>& counts)
{
    for (const MetricPoint& p : points) {
        auto key = keyIdOf(p);
        if (!key)
            return std::unexpected(key.error());
        if (!*key)
            continue; // unknown run
        const qint64 slot = seriesSlot(**key, p.source);
        auto at = m_pendingIndex.constFind(slot);
        if (at == m_pendingIndex.cend()) {
            at = m_pendingIndex.insert(slot, int(m_pending.size()));
            m_pending.push_back({**key, p.run, p.source, {}});
        }
        PendingSeries& series = m_pending[std::size_t(*at)];
        // The arrival id: ties on step (two sources of a key, a superseded
        // and a current point) keep the order the points came in.
        auto arrival = nextMetricId();
        if (!arrival)
            return std::unexpected(arrival.error());
        auto back = goesBack(**key, p);
        if (!back)
            return std::unexpected(back.error());
        if (*back) {
            // A resumed run (rare): what the series holds back goes in
            // first, so that the points this one supersedes are there to be marked.
            std::vector<RowPoint> rows;
            if (auto r = flushSeries(series, rows, counts); !r)
                return r;
            if (auto r = writeRows(rows, counts); !r)
                return r;
            if (auto r = restartSeries(**key, p); !r)
                return r;
            // The restart may have found the key gone (another process).
            auto again = keyIdOf(p);
            if (!again)
                return std::unexpected(again.error());
            if (!*again || **again != series.keyId) {
                if (*again) {
                    std::vector<RowPoint> one{{**again, *arrival, &p}};
                    if (auto r = writeRows(one, counts); !r)
                        return r;
                }
                continue;
            }
        }
        series.points.push_back(&p);
        series.ids.push_back(*arrival);
        if (series.points.size() >= std::size_t(kMetricBlockPoints)) {
            std::vector<RowPoint> rows;
            if (auto r = flushSeries(series, rows, counts); !r)
                return r;
            if (auto r = writeRows(rows, counts); !r)
                return r;
        }
    }
    return {};
}

} // namespace ty
