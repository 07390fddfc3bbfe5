#include "SqliteMetricColumns.h"

#include "SqlCodec.h"

#include <QFileInfo>

#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace ty {

namespace {

QString sqliteError(sqlite3* db)
{
    return QString::fromUtf8(sqlite3_errmsg(db));
}

double decodeValue(sqlite3_stmt* s, int col, int kind)
{
    switch (kind) {
    case sqlcodec::Finite:
        return sqlite3_column_double(s, col);
    case sqlcodec::PosInf:
        return std::numeric_limits<double>::infinity();
    case sqlcodec::NegInf:
        return -std::numeric_limits<double>::infinity();
    case sqlcodec::NegZero:
        return -0.0;
    case sqlcodec::NaN:
    default:
        return std::numeric_limits<double>::quiet_NaN();
    }
}

} // namespace

SqliteMetricColumns::SqliteMetricColumns(QString path, sqlite3* db)
    : m_path(std::move(path))
    , m_db(db)
{
}

SqliteMetricColumns::~SqliteMetricColumns()
{
    endSnapshot();
    sqlite3_finalize(m_keys);
    sqlite3_finalize(m_series);
    sqlite3_finalize(m_count);
    sqlite3_finalize(m_extent);
    sqlite3_finalize(m_range);
    sqlite3_close(m_db);
}

Result<std::unique_ptr<SqliteMetricColumns>> SqliteMetricColumns::open(const QString& path, int busyTimeoutMs)
{
    if (!QFileInfo::exists(path))
        return fail(QStringLiteral("%1: no such result database").arg(path));
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        const QString why = db ? sqliteError(db) : QString::fromUtf8(sqlite3_errstr(rc));
        sqlite3_close(db);
        return fail(QStringLiteral("%1: cannot open for reading: %2").arg(path, why));
    }
    sqlite3_busy_timeout(db, busyTimeoutMs);
    std::unique_ptr<SqliteMetricColumns> r(new SqliteMetricColumns(path, db));

    // Schema 4 marks points replaced by a resumed run's later segment;
    // metrics() leaves them out, and so do we. Older files have no column.
    bool haveSuperseded = false;
    {
        sqlite3_stmt* info = nullptr;
        if (sqlite3_prepare_v2(db, "PRAGMA table_info(metrics)", -1, &info, nullptr) != SQLITE_OK)
            return fail(QStringLiteral("%1: cannot read the metrics table: %2").arg(path, sqliteError(db)));
        int columns = 0;
        while (sqlite3_step(info) == SQLITE_ROW) {
            ++columns;
            const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(info, 1));
            if (name && qstrcmp(name, "superseded") == 0)
                haveSuperseded = true;
        }
        sqlite3_finalize(info);
        if (columns == 0)
            return fail(QStringLiteral("%1: not a Trainyard result database (no metrics table)").arg(path));
    }
    const QByteArray where = haveSuperseded ? QByteArrayLiteral("key_id = ?1 AND superseded = 0")
                                            : QByteArrayLiteral("key_id = ?1");
    const QByteArray series = "SELECT step, wall_ms, value, kind FROM metrics WHERE " + where + " ORDER BY step, id";
    const QByteArray count = "SELECT count(*) FROM metrics WHERE " + where;
    // Index only (metrics_series holds key_id, step and the rowid): counts
    // superseded rows too, an upper bound.
    const QByteArray extent = "SELECT count(*), min(id), max(id) FROM metrics WHERE key_id = ?1";
    const QByteArray range = QByteArray("SELECT key_id, step, wall_ms, value, kind FROM metrics WHERE id BETWEEN ?1 AND ?2")
        + (haveSuperseded ? " AND superseded = 0" : "") + " ORDER BY id";
    if (sqlite3_prepare_v3(db, "SELECT id, key FROM metric_keys WHERE run_id = ?1 ORDER BY key", -1,
                           SQLITE_PREPARE_PERSISTENT, &r->m_keys, nullptr) != SQLITE_OK
        || sqlite3_prepare_v3(db, series.constData(), -1, SQLITE_PREPARE_PERSISTENT, &r->m_series, nullptr) != SQLITE_OK
        || sqlite3_prepare_v3(db, count.constData(), -1, SQLITE_PREPARE_PERSISTENT, &r->m_count, nullptr) != SQLITE_OK
        || sqlite3_prepare_v3(db, extent.constData(), -1, SQLITE_PREPARE_PERSISTENT, &r->m_extent, nullptr) != SQLITE_OK
        || sqlite3_prepare_v3(db, range.constData(), -1, SQLITE_PREPARE_PERSISTENT, &r->m_range, nullptr) != SQLITE_OK)
        return fail(QStringLiteral("%1: not a Trainyard result database: %2").arg(path, sqliteError(db)));
    return r;
}

Result<void> SqliteMetricColumns::beginSnapshot()
{
    if (m_inSnapshot)
        return {};
    // A deferred transaction takes its snapshot at the first read; read one now.
    char* err = nullptr;
    if (sqlite3_exec(m_db, "BEGIN; SELECT 1 FROM metric_keys LIMIT 1", nullptr, nullptr, &err) != SQLITE_OK) {
        const QString why = QString::fromUtf8(err ? err : "unknown error");
        sqlite3_free(err);
        sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
        return fail(QStringLiteral("%1: cannot start a read transaction: %2").arg(m_path, why));
    }
    m_inSnapshot = true;
    return {};
}

void SqliteMetricColumns::endSnapshot()
{
    if (!m_inSnapshot)
        return;
    sqlite3_exec(m_db, "COMMIT", nullptr, nullptr, nullptr);
    m_inSnapshot = false;
}

Result<QList<std::pair<qint64, QString>>> SqliteMetricColumns::keys(RunId run)
{
    QList<std::pair<qint64, QString>> out;
    sqlite3_reset(m_keys);
    sqlite3_bind_int64(m_keys, 1, run);
    int rc;
    while ((rc = sqlite3_step(m_keys)) == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_keys, 1));
        out.append({sqlite3_column_int64(m_keys, 0), QString::fromUtf8(text, sqlite3_column_bytes(m_keys, 1))});
    }
    const QString why = rc == SQLITE_DONE ? QString() : sqliteError(m_db);
    sqlite3_reset(m_keys);
    if (rc != SQLITE_DONE)
        return fail(QStringLiteral("%1: run %2: cannot read metric keys: %3").arg(m_path).arg(run).arg(why));
    return out;
}

Result<MetricSeriesColumns> SqliteMetricColumns::series(qint64 keyId, qsizetype sizeHint)
{
    MetricSeriesColumns out;
    qsizetype expected = sizeHint;
    if (expected <= 0) {
        // Exact size first (an index-only count): the vectors then hold no
        // slack, which at 10^7 points would be up to 240 MB.
        sqlite3_reset(m_count);
        sqlite3_bind_int64(m_count, 1, keyId);
        if (sqlite3_step(m_count) == SQLITE_ROW)
            expected = qsizetype(sqlite3_column_int64(m_count, 0));
        sqlite3_reset(m_count);
    }
    out.step.reserve(std::size_t(expected));
    out.wallMs.reserve(std::size_t(expected));
    out.value.reserve(std::size_t(expected));

    sqlite3_stmt* s = m_series;
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, keyId);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        out.step.push_back(double(sqlite3_column_int64(s, 0)));
        out.wallMs.push_back(double(sqlite3_column_int64(s, 1)));
        out.value.push_back(decodeValue(s, 2, sqlite3_column_int(s, 3)));
    }
    const QString why = rc == SQLITE_DONE ? QString() : sqliteError(m_db);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return fail(QStringLiteral("%1: metric key id %2: cannot read points: %3").arg(m_path).arg(keyId).arg(why));
    if (out.value.capacity() > out.value.size() + out.value.size() / 8) {
        // A writer added points between the count and the read (outside a snapshot).
        out.step.shrink_to_fit();
        out.wallMs.shrink_to_fit();
        out.value.shrink_to_fit();
    }
    return out;
}

Result<QList<MetricSeriesColumns>> SqliteMetricColumns::runSeries(const QList<std::pair<qint64, QString>>& keys)
{
    m_lastRowOrder = false;
    QList<MetricSeriesColumns> out(keys.size());
    if (keys.isEmpty())
        return out;
    // Where the run's rows lie: index-only count and id extent per key.
    std::vector<qint64> counts(std::size_t(keys.size()), 0);
    qint64 lo = 0, hi = -1, total = 0;
    for (qsizetype k = 0; k < keys.size(); ++k) {
        sqlite3_reset(m_extent);
        sqlite3_bind_int64(m_extent, 1, keys[k].first);
        if (sqlite3_step(m_extent) != SQLITE_ROW) {
            const QString why = sqliteError(m_db);
            sqlite3_reset(m_extent);
            return fail(QStringLiteral("%1: metric %2: cannot read its extent: %3").arg(m_path, keys[k].second, why));
        }
        const qint64 n = sqlite3_column_int64(m_extent, 0);
        counts[std::size_t(k)] = n;
        if (n > 0) {
            const qint64 a = sqlite3_column_int64(m_extent, 1), b = sqlite3_column_int64(m_extent, 2);
            lo = total > 0 ? std::min(lo, a) : a;
            hi = total > 0 ? std::max(hi, b) : b;
            total += n;
        }
        sqlite3_reset(m_extent);
    }
    const bool together = total > 0 && double(hi - lo + 1) <= 1.5 * double(total);
    if (!together) {
        for (qsizetype k = 0; k < keys.size(); ++k) {
            auto s = series(keys[k].first, qsizetype(counts[std::size_t(k)]));
            if (!s)
                return std::unexpected(s.error());
            out[k] = std::move(*s);
        }
        return out;
    }
    // One pass in rowid order; rows of other keys (other runs) in the range are skipped.
    std::vector<std::pair<qint64, qsizetype>> slot; // key id -> index in keys, sorted by id
    for (qsizetype k = 0; k < keys.size(); ++k) {
        slot.emplace_back(keys[k].first, k);
        out[k].step.reserve(std::size_t(counts[std::size_t(k)]));
        out[k].wallMs.reserve(std::size_t(counts[std::size_t(k)]));
        out[k].value.reserve(std::size_t(counts[std::size_t(k)]));
    }
    std::sort(slot.begin(), slot.end());
    std::vector<char> unsorted(std::size_t(keys.size()), 0);
    qint64 lastKey = std::numeric_limits<qint64>::min();
    MetricSeriesColumns* cur = nullptr;
    qsizetype curIndex = -1;
    sqlite3_stmt* s = m_range;
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, lo);
    sqlite3_bind_int64(s, 2, hi);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const qint64 key = sqlite3_column_int64(s, 0);
        if (key != lastKey) {
            lastKey = key;
            const auto it = std::lower_bound(slot.begin(), slot.end(), std::pair<qint64, qsizetype>(key, 0));
            curIndex = it != slot.end() && it->first == key ? it->second : -1;
            cur = curIndex >= 0 ? &out[curIndex] : nullptr;
        }
        if (!cur)
            continue;
        const double step = double(sqlite3_column_int64(s, 1));
        if (!cur->step.empty() && step < cur->step.back())
            unsorted[std::size_t(curIndex)] = 1;
        cur->step.push_back(step);
        cur->wallMs.push_back(double(sqlite3_column_int64(s, 2)));
        cur->value.push_back(decodeValue(s, 3, sqlite3_column_int(s, 4)));
    }
    const QString why = rc == SQLITE_DONE ? QString() : sqliteError(m_db);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return fail(QStringLiteral("%1: ids %2..%3: cannot read points: %4").arg(m_path).arg(lo).arg(hi).arg(why));
    for (qsizetype k = 0; k < keys.size(); ++k) {
        MetricSeriesColumns& c = out[k];
        if (unsorted[std::size_t(k)]) {
            // Rows came in id order: a stable sort by step gives ORDER BY step, id.
            std::vector<std::size_t> perm(c.step.size());
            for (std::size_t i = 0; i < perm.size(); ++i)
                perm[i] = i;
            std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) { return c.step[a] < c.step[b]; });
            MetricSeriesColumns sorted;
            sorted.step.reserve(perm.size());
            sorted.wallMs.reserve(perm.size());
            sorted.value.reserve(perm.size());
            for (std::size_t i : perm) {
                sorted.step.push_back(c.step[i]);
                sorted.wallMs.push_back(c.wallMs[i]);
                sorted.value.push_back(c.value[i]);
            }
            c = std::move(sorted);
        }
        if (c.value.capacity() > c.value.size() + c.value.size() / 8) {
            // Superseded rows were counted in the reservation.
            c.step.shrink_to_fit();
            c.wallMs.shrink_to_fit();
            c.value.shrink_to_fit();
        }
    }
    m_lastRowOrder = true;
    return out;
}

} // namespace ty
