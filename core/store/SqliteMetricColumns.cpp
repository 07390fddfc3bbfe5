#include "SqliteMetricColumns.h"

#include "MetricBlock.h"
#include "SqlCodec.h"

#include <QFileInfo>

#include <sqlite3.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace ty {

// A key's points from one place (its rows, or one source's blocks), sorted by
// (step, id), with their arrival ids: what a merge of several needs (`id` is
// left empty where no merge follows: one source's blocks and no rows).
struct detail::MetricIdRun {
    MetricSeriesColumns c;
    std::vector<qint64> id;
    std::size_t size() const { return c.step.size(); }
    bool less(std::size_t i, double step, qint64 id) const
    {
        return c.step[i] < step || (c.step[i] == step && this->id[i] < id);
    }
};

namespace {

// reserve(n), then has the kernel map the new capacity's whole pages in one
// madvise(MADV_POPULATE_WRITE) call (Linux >= 5.14) instead of one page
// fault per 4 KiB when the columns are first written: the compare view
// fills ~240 MB of fresh columns, and on a VM each fault is a costly trap.
// Older kernels refuse the advice (EINVAL) and fault as before.
void reservePrefaulted(std::vector<double>& v, std::size_t n)
{
    v.reserve(n);
#ifdef MADV_POPULATE_WRITE
    const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(v.data() + v.size());
    const auto end = reinterpret_cast<std::uintptr_t>(v.data() + v.capacity());
    const std::uintptr_t first = (begin + page - 1) / page * page;
    const std::uintptr_t last = end / page * page;
    if (last > first + 16 * page)
        (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
#endif
}

QString sqliteError(sqlite3* db)
{
    return QString::fromUtf8(sqlite3_errmsg(db));
}

double decodeValue(sqlite3_stmt* s, int col, int kind)
{
    switch (kind) {
    case sqlcodec::Finite: return sqlite3_column_double(s, col);
    case sqlcodec::PosInf: return std::numeric_limits<double>::infinity();
    case sqlcodec::NegInf: return -std::numeric_limits<double>::infinity();
    case sqlcodec::NegZero: return -0.0;
    case sqlcodec::NaN:
    default: return std::numeric_limits<double>::quiet_NaN();
    }
}

using IdRun = detail::MetricIdRun;

void appendRange(MetricSeriesColumns& out, const MetricSeriesColumns& from, std::size_t begin, std::size_t end)
{
    out.step.insert(out.step.end(), from.step.begin() + std::ptrdiff_t(begin), from.step.begin() + std::ptrdiff_t(end));
    out.wallMs.insert(
            out.wallMs.end(), from.wallMs.begin() + std::ptrdiff_t(begin), from.wallMs.begin() + std::ptrdiff_t(end));
    out.value.insert(
            out.value.end(), from.value.begin() + std::ptrdiff_t(begin), from.value.begin() + std::ptrdiff_t(end));
}

// Stably reorders `r` by (step, id) (a run whose blocks are not in step order:
// only a damaged or hand-made database).
void sortRun(IdRun& r)
{
    std::vector<std::size_t> perm(r.size());
    for (std::size_t i = 0; i < perm.size(); ++i)
        perm[i] = i;
    std::stable_sort(
            perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) { return r.less(a, r.c.step[b], r.id[b]); });
    IdRun sorted;
    sorted.c.step.reserve(perm.size());
    sorted.c.wallMs.reserve(perm.size());
    sorted.c.value.reserve(perm.size());
    sorted.id.reserve(perm.size());
    for (std::size_t i : perm) {
        sorted.c.step.push_back(r.c.step[i]);
        sorted.c.wallMs.push_back(r.c.wallMs[i]);
        sorted.c.value.push_back(r.c.value[i]);
        sorted.id.push_back(r.id[i]);
    }
    r = std::move(sorted);
}

// Merges runs, each sorted by (step, id), into one series in (step, id)
// order: ORDER BY step, id over all of them. Copies maximal stretches of one
// run at a time (found by galloping), so a series that is mostly blocks with
// a tail of rows costs a few memcpys. One non-empty run is moved, not copied.
MetricSeriesColumns mergeRuns(std::vector<IdRun>& runs)
{
    std::erase_if(runs, [](const IdRun& r) { return r.size() == 0; });
    if (runs.empty())
        return {};
    if (runs.size() == 1)
        return std::move(runs.front().c);
    std::size_t total = 0;
    for (const IdRun& r : runs) {
        Q_ASSERT(r.id.size() == r.size());
        total += r.size();
    }
    MetricSeriesColumns out;
    out.step.reserve(total);
    out.wallMs.reserve(total);
    out.value.reserve(total);
    std::vector<std::size_t> pos(runs.size(), 0);
    for (;;) {
        // The run with the smallest head, and the smallest head of the others.
        std::ptrdiff_t m = -1, m2 = -1;
        for (std::size_t r = 0; r < runs.size(); ++r) {
            if (pos[r] == runs[r].size())
                continue;
            if (m < 0
                    || runs[r].less(pos[r], runs[std::size_t(m)].c.step[pos[std::size_t(m)]],
                            runs[std::size_t(m)].id[pos[std::size_t(m)]])) {
                m2 = m;
                m = std::ptrdiff_t(r);
            } else if (m2 < 0
                    || runs[r].less(pos[r], runs[std::size_t(m2)].c.step[pos[std::size_t(m2)]],
                            runs[std::size_t(m2)].id[pos[std::size_t(m2)]])) {
                m2 = std::ptrdiff_t(r);
            }
        }
        if (m < 0)
            break;
        IdRun& run = runs[std::size_t(m)];
        const std::size_t from = pos[std::size_t(m)];
        std::size_t end = run.size();
        if (m2 >= 0) {
            // run[from] is below the other head; find where run stops being so.
            const IdRun& other = runs[std::size_t(m2)];
            const double step = other.c.step[pos[std::size_t(m2)]];
            const qint64 id = other.id[pos[std::size_t(m2)]];
            std::size_t lo = from + 1, hi = from + 1, stride = 1;
            while (hi < run.size() && run.less(hi, step, id)) {
                lo = hi + 1;
                hi = from + (stride *= 2);
            }
            hi = std::min(hi, run.size());
            while (lo < hi) {
                const std::size_t mid = lo + (hi - lo) / 2;
                if (run.less(mid, step, id))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            end = lo;
        }
        appendRange(out, run.c, from, end);
        pos[std::size_t(m)] = end;
    }
    return out;
}

} // namespace

SqliteMetricColumns::SqliteMetricColumns(QString path, sqlite3* db)
    : m_path(std::move(path))
    , m_db(db)
{ }

SqliteMetricColumns::~SqliteMetricColumns()
{
    endSnapshot();
    sqlite3_finalize(m_keys);
    sqlite3_finalize(m_series);
    sqlite3_finalize(m_count);
    sqlite3_finalize(m_extent);
    sqlite3_finalize(m_range);
    sqlite3_finalize(m_blocks);
    sqlite3_finalize(m_blockSizes);
    sqlite3_finalize(m_keyName);
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
    // Schema 5 packs points into metric_blocks (MetricBlock.h); older files
    // have only rows.
    bool haveBlocks = false;
    {
        sqlite3_stmt* probe = nullptr;
        if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'metric_blocks'", -1,
                    &probe, nullptr)
                != SQLITE_OK)
            return fail(QStringLiteral("%1: cannot read the schema: %2").arg(path, sqliteError(db)));
        haveBlocks = sqlite3_step(probe) == SQLITE_ROW;
        sqlite3_finalize(probe);
    }
    const QByteArray where
            = haveSuperseded ? QByteArrayLiteral("key_id = ?1 AND superseded = 0") : QByteArrayLiteral("key_id = ?1");
    const QByteArray series
            = "SELECT step, wall_ms, value, kind, id FROM metrics WHERE " + where + " ORDER BY step, id";
    const QByteArray count = "SELECT count(*) FROM metrics WHERE " + where;
    // Index only (metrics_series holds key_id, step and the rowid): counts
    // superseded rows too, an upper bound.
    const QByteArray extent = "SELECT count(*), min(id), max(id) FROM metrics WHERE key_id = ?1";
    const QByteArray range
            = QByteArray("SELECT key_id, step, wall_ms, value, kind, id FROM metrics WHERE id BETWEEN ?1 AND ?2")
            + (haveSuperseded ? " AND superseded = 0" : "") + " ORDER BY id";
    if (sqlite3_prepare_v3(db, "SELECT id, key FROM metric_keys WHERE run_id = ?1 ORDER BY key", -1,
                SQLITE_PREPARE_PERSISTENT, &r->m_keys, nullptr)
                    != SQLITE_OK
            || sqlite3_prepare_v3(db, series.constData(), -1, SQLITE_PREPARE_PERSISTENT, &r->m_series, nullptr)
                    != SQLITE_OK
            || sqlite3_prepare_v3(db, count.constData(), -1, SQLITE_PREPARE_PERSISTENT, &r->m_count, nullptr)
                    != SQLITE_OK
            || sqlite3_prepare_v3(db, extent.constData(), -1, SQLITE_PREPARE_PERSISTENT, &r->m_extent, nullptr)
                    != SQLITE_OK
            || sqlite3_prepare_v3(db, range.constData(), -1, SQLITE_PREPARE_PERSISTENT, &r->m_range, nullptr)
                    != SQLITE_OK
            || sqlite3_prepare_v3(db, "SELECT run_id, key FROM metric_keys WHERE id = ?1", -1,
                       SQLITE_PREPARE_PERSISTENT, &r->m_keyName, nullptr)
                    != SQLITE_OK)
        return fail(QStringLiteral("%1: not a Trainyard result database: %2").arg(path, sqliteError(db)));
    // The live points of a key's blocks, per source in arrival order (index
    // metric_blocks_series); sum(live) reads no BLOB.
    if (haveBlocks
            && (sqlite3_prepare_v3(db,
                        "SELECT id, source, count, live, points FROM metric_blocks"
                        " WHERE key_id = ?1 AND live > 0 ORDER BY source, first_id",
                        -1, SQLITE_PREPARE_PERSISTENT, &r->m_blocks, nullptr)
                            != SQLITE_OK
                    || sqlite3_prepare_v3(db,
                               "SELECT source, sum(live) FROM metric_blocks"
                               " WHERE key_id = ?1 AND live > 0 GROUP BY source ORDER BY source",
                               -1, SQLITE_PREPARE_PERSISTENT, &r->m_blockSizes, nullptr)
                            != SQLITE_OK))
        return fail(QStringLiteral("%1: cannot read the metric_blocks table: %2").arg(path, sqliteError(db)));
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

QString SqliteMetricColumns::describeKey(qint64 keyId)
{
    QString out = QStringLiteral("metric key id %1").arg(keyId);
    sqlite3_reset(m_keyName);
    sqlite3_bind_int64(m_keyName, 1, keyId);
    if (sqlite3_step(m_keyName) == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_keyName, 1));
        out = QStringLiteral("run %1: metric %2")
                      .arg(sqlite3_column_int64(m_keyName, 0))
                      .arg(QString::fromUtf8(text, sqlite3_column_bytes(m_keyName, 1)));
    }
    sqlite3_reset(m_keyName);
    return out;
}

Result<std::vector<std::pair<int, qint64>>> SqliteMetricColumns::blockSizes(qint64 keyId)
{
    std::vector<std::pair<int, qint64>> out;
    if (!m_blockSizes)
        return out;
    sqlite3_reset(m_blockSizes);
    sqlite3_bind_int64(m_blockSizes, 1, keyId);
    int rc;
    while ((rc = sqlite3_step(m_blockSizes)) == SQLITE_ROW)
        out.emplace_back(sqlite3_column_int(m_blockSizes, 0), sqlite3_column_int64(m_blockSizes, 1));
    const QString why = rc == SQLITE_DONE ? QString() : sqliteError(m_db);
    sqlite3_reset(m_blockSizes);
    if (rc != SQLITE_DONE)
        return fail(QStringLiteral("%1: %2: cannot read its blocks: %3").arg(m_path, describeKey(keyId), why));
    return out;
}

Result<void> SqliteMetricColumns::readRows(
        qint64 keyId, qsizetype expected, MetricSeriesColumns& out, std::vector<qint64>* ids)
{
    out.step.reserve(std::size_t(std::max<qsizetype>(expected, 0)));
    out.wallMs.reserve(std::size_t(std::max<qsizetype>(expected, 0)));
    out.value.reserve(std::size_t(std::max<qsizetype>(expected, 0)));
    if (ids)
        ids->reserve(std::size_t(std::max<qsizetype>(expected, 0)));
    sqlite3_stmt* s = m_series;
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, keyId);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        out.step.push_back(double(sqlite3_column_int64(s, 0)));
        out.wallMs.push_back(double(sqlite3_column_int64(s, 1)));
        out.value.push_back(decodeValue(s, 2, sqlite3_column_int(s, 3)));
        if (ids)
            ids->push_back(sqlite3_column_int64(s, 4));
    }
    const QString why = rc == SQLITE_DONE ? QString() : sqliteError(m_db);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return fail(QStringLiteral("%1: %2: cannot read points: %3").arg(m_path, describeKey(keyId), why));
    return {};
}

Result<void> SqliteMetricColumns::readBlocks(
        qint64 keyId, const std::vector<std::pair<int, qint64>>& sizes, std::vector<IdRun>& runs, bool withIds)
{
    sqlite3_stmt* s = m_blocks;
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, keyId);
    int rc;
    int source = -1;
    IdRun* run = nullptr;
    bool sorted = true;
    auto finishRun = [&] {
        if (run && !sorted) {
            if (!withIds) { // block order (first_id) then index: arrival order, all a stable sort needs
                run->id.resize(run->size());
                for (std::size_t i = 0; i < run->id.size(); ++i)
                    run->id[i] = qint64(i);
            }
            sortRun(*run);
            if (!withIds)
                run->id = {};
        }
        sorted = true;
    };
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const qint64 count = sqlite3_column_int64(s, 2);
        const qint64 live = sqlite3_column_int64(s, 3);
        const void* blob = sqlite3_column_blob(s, 4);
        const int bytes = sqlite3_column_bytes(s, 4);
        const auto view = MetricBlockView::parse(blob, std::size_t(std::max(bytes, 0)));
        if (!view || view->count() != count || live < 1 || live > count) {
            const qint64 blockId = sqlite3_column_int64(s, 0);
            sqlite3_reset(s);
            return fail(QStringLiteral("%1: %2: metric block %3 is malformed (%4 bytes, count %5, live %6%7); "
                                       "the database is damaged or was written by an incompatible Trainyard")
                                .arg(m_path, describeKey(keyId))
                                .arg(blockId)
                                .arg(bytes)
                                .arg(count)
                                .arg(live)
                                .arg(view ? QString() : QStringLiteral(", not a version-1 metric block")));
        }
        const int blockSource = sqlite3_column_int(s, 1);
        if (!run || blockSource != source) {
            finishRun();
            source = blockSource;
            qint64 expected = 0;
            for (const auto& [src, n] : sizes)
                expected = src == source ? n : expected;
            run = &runs.emplace_back();
            reservePrefaulted(run->c.step, std::size_t(expected));
            reservePrefaulted(run->c.wallMs, std::size_t(expected));
            reservePrefaulted(run->c.value, std::size_t(expected));
            if (withIds)
                run->id.reserve(std::size_t(expected));
        }
        const int n = int(live);
        // Current points of one source rise in step in arrival order, so
        // blocks in first_id order continue each other; check it all the same.
        if (sorted && run->size() > 0
                && !(withIds ? run->less(run->size() - 1, double(view->step(0)), view->id(0))
                             : run->c.step.back() < double(view->step(0))))
            sorted = false;
        view->appendSteps(run->c.step, n);
        view->appendWallMs(run->c.wallMs, n);
        view->appendValues(run->c.value, n);
        if (withIds) {
            const std::size_t at = run->id.size();
            run->id.resize(at + std::size_t(n));
            for (int i = 0; i < n; ++i)
                run->id[at + std::size_t(i)] = view->id(i);
        }
    }
    const QString why = rc == SQLITE_DONE ? QString() : sqliteError(m_db);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return fail(QStringLiteral("%1: %2: cannot read its metric blocks: %3").arg(m_path, describeKey(keyId), why));
    finishRun();
    return {};
}

Result<MetricSeriesColumns> SqliteMetricColumns::series(qint64 keyId, qsizetype sizeHint)
{
    auto sizes = blockSizes(keyId);
    if (!sizes)
        return std::unexpected(sizes.error());
    const bool blocks = !sizes->empty();
    qsizetype expected = blocks ? 0 : sizeHint; // with blocks: the rows' own count
    if (expected <= 0) {
        // Exact size first (an index-only count): the vectors then hold no
        // slack, which at 10^7 points would be up to 240 MB.
        sqlite3_reset(m_count);
        sqlite3_bind_int64(m_count, 1, keyId);
        if (sqlite3_step(m_count) == SQLITE_ROW)
            expected = qsizetype(sqlite3_column_int64(m_count, 0));
        sqlite3_reset(m_count);
    }
    std::vector<IdRun> runs(1);
    if (auto rows = readRows(keyId, expected, runs[0].c, blocks ? &runs[0].id : nullptr); !rows)
        return std::unexpected(rows.error());
    if (blocks) {
        // Ids only to merge: not for one source's blocks alone (the usual
        // packed series), 8 bytes a point less to write.
        const bool withIds = runs[0].size() > 0 || sizes->size() > 1;
        if (auto read = readBlocks(keyId, *sizes, runs, withIds); !read)
            return std::unexpected(read.error());
    }
    MetricSeriesColumns out = mergeRuns(runs);
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
    // Keys that also have packed points: their rows are read with ids, then
    // merged with the blocks by (step, id).
    std::vector<std::vector<std::pair<int, qint64>>> blockSizesOf(std::size_t(keys.size()));
    std::vector<std::vector<qint64>> rowIds(std::size_t(keys.size()));
    for (qsizetype k = 0; k < keys.size(); ++k) {
        auto sizes = blockSizes(keys[k].first);
        if (!sizes)
            return std::unexpected(sizes.error());
        blockSizesOf[std::size_t(k)] = std::move(*sizes);
        if (!blockSizesOf[std::size_t(k)].empty())
            rowIds[std::size_t(k)].reserve(std::size_t(counts[std::size_t(k)]));
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
    std::vector<qint64>* curIds = nullptr;
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
            curIds = curIndex >= 0 && !blockSizesOf[std::size_t(curIndex)].empty() ? &rowIds[std::size_t(curIndex)]
                                                                                   : nullptr;
        }
        if (!cur)
            continue;
        const double step = double(sqlite3_column_int64(s, 1));
        if (!cur->step.empty() && step < cur->step.back())
            unsorted[std::size_t(curIndex)] = 1;
        cur->step.push_back(step);
        cur->wallMs.push_back(double(sqlite3_column_int64(s, 2)));
        cur->value.push_back(decodeValue(s, 3, sqlite3_column_int(s, 4)));
        if (curIds)
            curIds->push_back(sqlite3_column_int64(s, 5));
    }
    const QString why = rc == SQLITE_DONE ? QString() : sqliteError(m_db);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return fail(QStringLiteral("%1: ids %2..%3: cannot read points: %4").arg(m_path).arg(lo).arg(hi).arg(why));
    for (qsizetype k = 0; k < keys.size(); ++k) {
        MetricSeriesColumns& c = out[k];
        const bool blocks = !blockSizesOf[std::size_t(k)].empty();
        if (unsorted[std::size_t(k)]) {
            // Rows came in id order: a stable sort by step gives ORDER BY step, id.
            IdRun rows{std::move(c), std::move(rowIds[std::size_t(k)])};
            if (!blocks) {
                rows.id.resize(rows.size());
                for (std::size_t i = 0; i < rows.id.size(); ++i)
                    rows.id[i] = qint64(i); // arrival order is all a stable sort needs
            }
            sortRun(rows);
            c = std::move(rows.c);
            rowIds[std::size_t(k)] = std::move(rows.id);
        }
        if (blocks) {
            std::vector<IdRun> runs(1);
            runs[0].c = std::move(c);
            runs[0].id = std::move(rowIds[std::size_t(k)]);
            const bool withIds = runs[0].size() > 0 || blockSizesOf[std::size_t(k)].size() > 1;
            if (auto read = readBlocks(keys[k].first, blockSizesOf[std::size_t(k)], runs, withIds); !read)
                return std::unexpected(read.error());
            c = mergeRuns(runs);
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

Result<QList<std::pair<QString, MetricSeriesColumns>>> SqliteMetricColumns::runMetrics(RunId run, Plan plan)
{
    const auto ids = keys(run);
    if (!ids)
        return std::unexpected(ids.error());
    QList<std::pair<QString, MetricSeriesColumns>> out;
    out.reserve(ids->size());
    if (plan == Plan::KeyByKey) {
        for (const auto& [keyId, key] : *ids) {
            auto s = series(keyId);
            if (!s)
                return fail(QStringLiteral("%1 (run %2, metric %3)").arg(s.error().message).arg(run).arg(key),
                        s.error().kind);
            out.append({key, std::move(*s)});
        }
        return out;
    }
    auto all = runSeries(*ids);
    if (!all)
        return fail(QStringLiteral("%1 (run %2)").arg(all.error().message).arg(run), all.error().kind);
    for (qsizetype k = 0; k < ids->size(); ++k)
        out.append({ids->at(k).second, std::move((*all)[k])});
    return out;
}

} // namespace ty
