#include "SqliteWriter.h"

#include "MetricBlock.h"
#include "SqlCodec.h"
#include "SqliteFileAccess.h"
#include "SqliteSchema.h"

#include <QJsonDocument>
#include <QJsonArray>
#include <QDeadlineTimer>
#include <QLoggingCategory>
#include <QSet>
#include <QSqlDriver>
#include <QSqlError>

#include <sqlite3.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace ty {

Q_LOGGING_CATEGORY(lcStoreWriter, "trainyard.store.writer", QtWarningMsg)

namespace {

// Batches are cut short of the coalescing wait once this many points wait.
constexpr qint64 kCutBatchPoints = 100'000;
// BEGIN IMMEDIATE attempts (each waits up to busyTimeoutMs) before a batch fails.
constexpr int kBeginAttempts = 6;

bool isConstraint(const QSqlError& e)
{
    bool ok = false;
    const int code = e.nativeErrorCode().toInt(&ok);
    return ok && (code & 0xff) == SQLITE_CONSTRAINT;
}

qint64 pointsOf(const storeop::WriteOp& op)
{
    if (const auto* m = std::get_if<storeop::AppendMetrics>(&op))
        return m->points.size();
    return 0;
}

// Binds one metric row at parameters first..first+7 (id, key_id, step,
// epoch, wall_ms, value, kind, source).
void bindRawRow(sqlite3_stmt* s, int first, qint64 keyId, qint64 id, const MetricPoint& p)
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

// m_lastSteps slot of a series (key id, source).
qint64 seriesSlot(qint64 keyId, MetricSource source)
{
    return keyId * 4 + static_cast<int>(source);
}

} // namespace

SqliteWriter::SqliteWriter(QString path, QString connectionName, SqliteStoreOptions options, Callback onBatch)
    : m_path(std::move(path))
    , m_connectionName(std::move(connectionName))
    , m_options(options)
    , m_onBatch(std::move(onBatch))
{
    setObjectName(QStringLiteral("ty-store-writer"));
}

SqliteWriter::~SqliteWriter()
{
    stop();
}

Result<int> SqliteWriter::startWriter()
{
    {
        QMutexLocker lock(&m_mutex);
        m_started = true;
    }
    start();
    QMutexLocker lock(&m_mutex);
    while (!m_init)
        m_doneCond.wait(&m_mutex);
    const Result<int> init = *m_init;
    lock.unlock();
    if (!init)
        wait();
    return init;
}

void SqliteWriter::stop()
{
    {
        QMutexLocker lock(&m_mutex);
        if (!m_started)
            return;
        m_stopping = true;
        m_workCond.wakeAll();
        m_doneCond.wakeAll();
    }
    wait();
}

quint64 SqliteWriter::enqueue(storeop::WriteOp op, bool urgent)
{
    const qint64 points = pointsOf(op);
    QMutexLocker lock(&m_mutex);
    if (m_stopping || !m_started) {
        qCWarning(lcStoreWriter, "%s: write after the store was closed, dropped", qUtf8Printable(m_path));
        if (auto* c = std::get_if<storeop::CreateRun>(&op))
            c->done->set_value(fail(QStringLiteral("%1: the result store is closed").arg(m_path)));
        return m_queuedSeq;
    }
    // Back-pressure: let the writer catch up before queueing more points.
    if (points > 0 && QThread::currentThread() != this) {
        while (m_pendingPoints > m_options.maxPendingPoints && !m_stopping) {
            m_urgent = true;
            m_workCond.wakeAll();
            m_doneCond.wait(&m_mutex);
        }
    }
    const bool wasEmpty = m_queue.empty();
    m_queue.push_back(std::move(op));
    m_pendingPoints += points;
    const quint64 seq = ++m_queuedSeq;
    if (urgent)
        m_urgent = true;
    if (m_writerWaiting && (wasEmpty || m_urgent || m_pendingPoints >= kCutBatchPoints))
        m_workCond.wakeAll();
    return seq;
}

void SqliteWriter::waitCommitted(quint64 seq)
{
    QMutexLocker lock(&m_mutex);
    if (m_committedSeq >= seq)
        return;
    m_urgent = true;
    m_workCond.wakeAll();
    while (m_committedSeq < seq && isRunning())
        m_doneCond.wait(&m_mutex, QDeadlineTimer(200));
}

quint64 SqliteWriter::lastQueued() const
{
    QMutexLocker lock(&m_mutex);
    return m_queuedSeq;
}

std::optional<QString> SqliteWriter::takeError()
{
    QMutexLocker lock(&m_mutex);
    return std::exchange(m_error, std::nullopt);
}

void SqliteWriter::run()
{
    Result<int> init = initialize();
    if (!init) {
        // Setting up (pragmas, a migration) found the file damaged: explain
        // it like a read does (nothing was changed: the migration rolled back).
        if (const QString damage = damageReason(); !damage.isEmpty() && init.error().kind != ErrorKind::Damaged)
            init = fail(sqlitefile::damagedMessage(m_path, damage), ErrorKind::Damaged);
    }
    if (init) {
        if (auto prepared = prepareStatements(); !prepared)
            init = std::unexpected(prepared.error());
    }
    {
        QMutexLocker lock(&m_mutex);
        m_init = init;
        m_doneCond.wakeAll();
    }

    bool backlog = false; // the previous batch left writes queued: no coalescing wait
    while (init) {
        std::deque<storeop::WriteOp> batch;
        quint64 batchSeq = 0;
        {
            QMutexLocker lock(&m_mutex);
            while (m_queue.empty() && !m_stopping) {
                m_writerWaiting = true;
                m_workCond.wait(&m_mutex);
                m_writerWaiting = false;
            }
            if (m_queue.empty())
                break; // stopping, all committed
            if (!backlog && !m_urgent && !m_stopping && m_options.coalesceMs > 0) {
                QDeadlineTimer deadline(m_options.coalesceMs);
                while (!m_urgent && !m_stopping && m_pendingPoints < kCutBatchPoints) {
                    m_writerWaiting = true;
                    const bool woken = m_workCond.wait(&m_mutex, deadline);
                    m_writerWaiting = false;
                    if (!woken)
                        break;
                }
            }
            // Whole ops, oldest first, up to maxBatchPoints metric points.
            qint64 points = 0;
            while (!m_queue.empty() && (batch.empty() || points < m_options.maxBatchPoints)) {
                points += pointsOf(m_queue.front());
                batch.push_back(std::move(m_queue.front()));
                m_queue.pop_front();
            }
            batchSeq = m_queuedSeq - m_queue.size();
            backlog = !m_queue.empty();
            if (!backlog)
                m_urgent = false;
        }

        qint64 batchPoints = 0;
        for (const auto& op : batch)
            batchPoints += pointsOf(op);
        QList<std::pair<std::shared_ptr<std::promise<Result<RunId>>>, Result<RunId>>> created;
        const BatchOutcome outcome = applyBatch(batch, created);
        batch.clear();

        if (!outcome.error.isEmpty())
            qCWarning(lcStoreWriter, "%s", qUtf8Printable(outcome.error));
        if (m_onBatch
                && (!outcome.changedRuns.isEmpty() || !outcome.metricCounts.isEmpty() || !outcome.error.isEmpty()))
            m_onBatch(outcome);
        for (auto& [promise, result] : created)
            promise->set_value(outcome.error.isEmpty() ? result : fail(outcome.error));

        QMutexLocker lock(&m_mutex);
        m_committedSeq = batchSeq;
        m_pendingPoints -= batchPoints;
        if (!outcome.error.isEmpty() && !m_error)
            m_error = outcome.error;
        m_doneCond.wakeAll();
    }

    releaseStatements();
    if (m_db.isValid())
        m_db.close();
    m_handle = nullptr;
    m_db = QSqlDatabase();
    QSqlDatabase::removeDatabase(m_connectionName);

    // Anything queued after the loop ended (cannot happen after stop(), kept
    // defensive) must not leave createRun() callers waiting.
    QMutexLocker lock(&m_mutex);
    for (auto& op : m_queue)
        if (auto* c = std::get_if<storeop::CreateRun>(&op))
            c->done->set_value(fail(QStringLiteral("%1: the result store is closed").arg(m_path)));
    m_queue.clear();
    m_committedSeq = m_queuedSeq;
    m_doneCond.wakeAll();
}

QString SqliteWriter::systemReason() const
{
    if (!m_handle)
        return {};
    // SQLite reports a full disk as SQLITE_FULL without an errno (os_unix.c:
    // a short write is "not a system error"); its cause is ENOSPC, or a
    // max_page_count that Trainyard never sets.
    if ((sqlite3_extended_errcode(m_handle) & 0xff) == SQLITE_FULL)
        return QString::fromLocal8Bit(std::strerror(ENOSPC));
    if (const int e = sqlite3_system_errno(m_handle); e != 0)
        return QString::fromLocal8Bit(std::strerror(e));
    return {};
}

QString SqliteWriter::damageReason() const
{
    if (!m_handle) // not open, or the driver's SQLite is not the one linked here
        return {};
    const int code = sqlite3_extended_errcode(m_handle);
    return sqlitefile::isDamageCode(code) ? QString::fromUtf8(sqlite3_errstr(code)) : QString();
}

void SqliteWriter::fenceFailedBatch(const std::deque<storeop::WriteOp>& ops)
{
    for (const auto& op : ops) {
        if (const auto* m = std::get_if<storeop::AppendMetrics>(&op)) {
            for (const MetricPoint& p : m->points)
                if (p.source == MetricSource::Console && m_ingesting.contains(p.run))
                    m_fenced.insert(p.run);
        } else if (const auto* o = std::get_if<storeop::SetConsoleOffset>(&op)) {
            if (m_ingesting.contains(o->run))
                m_fenced.insert(o->run);
        }
    }
}

Result<void> SqliteWriter::exec(const QString& sql)
{
    QSqlQuery q(m_db);
    if (!q.exec(sql))
        return fail(QStringLiteral("%1: %2 failed: %3").arg(m_path, sql, q.lastError().text()));
    return {};
}

Result<int> SqliteWriter::initialize()
{
    m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connectionName);
    m_db.setDatabaseName(m_path);
    m_db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(m_options.busyTimeoutMs));
    if (!m_db.open())
        return fail(QStringLiteral("%1: cannot open the result database: %2").arg(m_path, m_db.lastError().text()));
    m_db.setNumericalPrecisionPolicy(QSql::LowPrecisionDouble);

    // The driver's sqlite3* is only usable with the libsqlite3 linked here
    // when the QSQLITE plugin links that same library: check before any
    // sqlite3_*() call touches it (m_handle stays null until then).
    {
        QSqlQuery q(m_db);
        if (!q.exec(QStringLiteral("SELECT sqlite_version(), sqlite_source_id()")) || !q.next())
            return fail(QStringLiteral("%1: cannot ask the SQLite driver its version: %2")
                                .arg(m_path, q.lastError().text()));
        if (const QString mismatch = sqlitefile::libraryMismatch(m_path, q.value(0).toString(), q.value(1).toString(),
                    QString::fromUtf8(sqlite3_libversion()), QString::fromUtf8(sqlite3_sourceid()));
                !mismatch.isEmpty())
            return fail(mismatch);
    }
    const QVariant h = m_db.driver()->handle();
    if (h.isValid() && qstrcmp(h.typeName(), "sqlite3*") == 0)
        m_handle = *static_cast<sqlite3* const*>(h.constData());
    if (!m_handle)
        return fail(QStringLiteral("%1: the QSQLITE driver gave no sqlite3 handle").arg(m_path));

    // Read-only look first: a refused file must not be touched, and setting
    // the journal mode below already writes to it.
    const Result<int> probed = SqliteSchema::probeVersion(m_db, m_path);
    if (!probed)
        return probed;

    // Page size of a new database (an existing one keeps its own): with
    // 16 KiB pages a metric batch is a quarter of the WAL frames (a pwrite()
    // each) of 4 KiB pages; tests/bench/bench_store. Must precede the
    // journal mode, which creates the file.
    if (auto r = exec(QStringLiteral("PRAGMA page_size=%1").arg(m_options.pageSize)); !r)
        return std::unexpected(r.error());
    {
        QSqlQuery q(m_db);
        if (!q.exec(QStringLiteral("PRAGMA journal_mode=WAL")) || !q.next())
            return fail(QStringLiteral("%1: cannot switch to WAL: %2").arg(m_path, q.lastError().text()));
        if (q.value(0).toString().compare(QLatin1String("wal"), Qt::CaseInsensitive) != 0)
            qCWarning(lcStoreWriter, "%s: journal mode is %s, not WAL (file system without shared memory?)",
                    qUtf8Printable(m_path), qUtf8Printable(q.value(0).toString()));
    }
    if (auto r = exec(QStringLiteral("PRAGMA synchronous=NORMAL")); !r)
        return std::unexpected(r.error());
    if (auto r = exec(QStringLiteral("PRAGMA foreign_keys=ON")); !r)
        return std::unexpected(r.error());
    if (auto r = exec(QStringLiteral("PRAGMA cache_size=-%1").arg(m_options.writerCacheKiB)); !r)
        return std::unexpected(r.error());
    if (auto r = exec(QStringLiteral("PRAGMA wal_autocheckpoint=%1").arg(m_options.walAutocheckpointPages)); !r)
        return std::unexpected(r.error());
    {
        QSqlQuery q(m_db);
        if (!q.exec(QStringLiteral("PRAGMA foreign_keys")) || !q.next() || q.value(0).toInt() != 1)
            return fail(QStringLiteral("%1: this SQLite library does not enforce foreign keys").arg(m_path));
    }

    if (*probed == SqliteSchema::kCurrentVersion)
        return *probed;

    // Migrate under the write lock, re-reading the version: another process
    // may have migrated the file since the probe.
    if (auto r = exec(QStringLiteral("BEGIN IMMEDIATE")); !r)
        return std::unexpected(r.error());
    auto rollback = [this] { QSqlQuery(m_db).exec(QStringLiteral("ROLLBACK")); };
    const Result<int> from = SqliteSchema::probeVersion(m_db, m_path);
    if (!from) {
        rollback();
        return from;
    }
    for (int v = *from; v < SqliteSchema::kCurrentVersion; ++v) {
        const QStringList step = SqliteSchema::migrationStep(v);
        if (step.isEmpty()) {
            rollback();
            return fail(QStringLiteral("%1: no migration from schema version %2").arg(m_path).arg(v));
        }
        for (const QString& sql : step) {
            QSqlQuery q(m_db);
            if (!q.exec(sql)) {
                const QString err = q.lastError().text();
                rollback();
                return fail(QStringLiteral("%1: migrating the schema from version %2 to %3 failed: %4 (in: %5)")
                                    .arg(m_path)
                                    .arg(v)
                                    .arg(v + 1)
                                    .arg(err, sql));
            }
        }
    }
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value"));
    q.addBindValue(QString::number(SqliteSchema::kCurrentVersion));
    if (!q.exec()) {
        const QString err = q.lastError().text();
        rollback();
        return fail(QStringLiteral("%1: cannot record the schema version: %2").arg(m_path, err));
    }
    q.finish();
    if (auto r = exec(QStringLiteral("COMMIT")); !r) {
        rollback();
        return std::unexpected(r.error());
    }
    if (*from != SqliteSchema::kCurrentVersion)
        qCInfo(lcStoreWriter, "%s: migrated the schema from version %d to %d", qUtf8Printable(m_path), *from,
                SqliteSchema::kCurrentVersion);
    return SqliteSchema::kCurrentVersion;
}

Result<void> SqliteWriter::prepareStatements()
{
    auto prep = [this](std::optional<QSqlQuery>& q, const char* sql) -> Result<void> {
        q.emplace(m_db);
        if (!q->prepare(QString::fromLatin1(sql)))
            return fail(QStringLiteral("%1: cannot prepare \"%2\": %3")
                                .arg(m_path, QString::fromLatin1(sql), q->lastError().text()));
        return {};
    };
    const std::pair<std::optional<QSqlQuery>*, const char*> statements[] = {
            // Both start with the mutable columns, in bindMutableRunFields() order.
            {&m_insertRun,
                    "INSERT INTO runs (state, node, gpus, argv, workdir, env, priority, started_at, finished_at,"
                    " exit_code, exit_signal, failure_reason, agent_run_id, console_path, failure_kind, pending_reason,"
                    " name, spec_yaml, spec_path, created_at, console_offset) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
            {&m_updateRun,
                    "UPDATE runs SET state = ?, node = ?, gpus = ?, argv = ?, workdir = ?, env = ?, priority = ?,"
                    " started_at = ?, finished_at = ?, exit_code = ?, exit_signal = ?, failure_reason = ?,"
                    " agent_run_id = ?, console_path = ?, failure_kind = ?, pending_reason = ? WHERE id = ?"},
            {&m_deleteTags, "DELETE FROM tags WHERE run_id = ?"},
            {&m_insertTag, "INSERT INTO tags (run_id, tag, position) VALUES (?,?,?)"},
            {&m_insertParam,
                    "INSERT INTO params (run_id, key, value) VALUES (?,?,?)"
                    " ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value"},
            {&m_setOffset, "UPDATE runs SET console_offset = ? WHERE id = ?"},
            {&m_markChange,
                    "INSERT INTO run_changes (run_id, seq) VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq"},
            {&m_maxChangeSeq, "SELECT COALESCE(MAX(seq), 0) FROM run_changes"},
            {&m_deleteRun, "DELETE FROM runs WHERE id = ?"},
            {&m_upsertArtifact,
                    "INSERT INTO artifacts (run_id, path, size, sha256, created_at) VALUES (?,?,?,?,?)"
                    " ON CONFLICT (run_id, path) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256,"
                    " created_at = excluded.created_at"},
            // A notice the run already has (same text) is not repeated: whoever
            // notices something again (a re-attached run's metric file, a second
            // download) adds nothing new, and the first time stays.
            {&m_insertNotice,
                    "INSERT INTO run_notices (run_id, at, text) SELECT ?, ?, ?"
                    " WHERE NOT EXISTS (SELECT 1 FROM run_notices WHERE run_id = ? AND text = ?)"},
            {&m_insertKey, "INSERT INTO metric_keys (run_id, key) VALUES (?,?) ON CONFLICT (run_id, key) DO NOTHING"},
            {&m_selectKey, "SELECT id FROM metric_keys WHERE run_id = ? AND key = ?"},
            {&m_insertMetric,
                    "INSERT INTO metrics (id, key_id, step, epoch, wall_ms, value, kind, source) VALUES (?,?,?,?,?,?,?,?)"},
            // Newest-first walk of metrics_series: stops at the first current row.
            {&m_selectLastStep,
                    "SELECT step FROM metrics WHERE key_id = ? AND source = ? AND superseded = 0 ORDER BY step DESC LIMIT 1"},
            {&m_markSuperseded,
                    "UPDATE metrics SET superseded = 1 WHERE key_id = ? AND source = ? AND step >= ? AND superseded = 0"},
            {&m_insertRestart,
                    "INSERT INTO metric_restarts (key_id, source, step, wall_ms, superseded) VALUES (?,?,?,?,?)"},
    };
    for (const auto& [q, sql] : statements)
        if (auto r = prep(*q, sql); !r)
            return r;

    // The QSQLITE driver's own handle (taken and checked by initialize()):
    // metric rows (RawSqlite), blocks and the tail/restart statements go
    // straight through libsqlite3.
    const auto raw = [this](sqlite3_stmt** stmt, const QByteArray& sql) -> Result<void> {
        if (sqlite3_prepare_v3(m_handle, sql.constData(), int(sql.size()) + 1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr)
                != SQLITE_OK)
            return fail(QStringLiteral("%1: cannot prepare %2: %3")
                                .arg(m_path, QString::fromUtf8(sql), QString::fromUtf8(sqlite3_errmsg(m_handle))));
        return {};
    };
    const std::pair<sqlite3_stmt**, QByteArray> rawStatements[] = {
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
        if (auto r = raw(stmt, sql); !r)
            return r;
    if (m_options.metricInsert == SqliteStoreOptions::MetricInsert::RawSqlite) {
        static constexpr char kSql[]
                = "INSERT INTO metrics (id, key_id, step, epoch, wall_ms, value, kind, source) VALUES (?,?,?,?,?,?,?,?)";
        if (auto r = raw(&m_rawInsertMetric, QByteArray(kSql)); !r)
            return r;
        // Many rows per sqlite3_step(): the per-statement cost (VDBE start and
        // halt, an allocation under SQLite's global memory mutex) is then paid
        // once per kRowsPerStatement rows. 64 x 8 parameters stay far below
        // SQLITE_MAX_VARIABLE_NUMBER (999 before 3.32, 32766 since).
        QByteArray multi = "INSERT INTO metrics (id, key_id, step, epoch, wall_ms, value, kind, source) VALUES ";
        for (int i = 0; i < kRowsPerStatement; ++i)
            multi += i ? ",(?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?)";
        if (auto r = raw(&m_rawInsertMetricMulti, multi); !r)
            return r;
    }
    return {};
}

void SqliteWriter::releaseStatements()
{
    for (sqlite3_stmt** stmt : {&m_rawInsertMetric, &m_rawInsertMetricMulti, &m_insertBlock, &m_selectTail,
                 &m_countTail, &m_deleteTail, &m_selectCutBlocks, &m_setLive, &m_lastLiveBlock, &m_maxMetricId}) {
        if (*stmt) {
            sqlite3_finalize(*stmt);
            *stmt = nullptr;
        }
    }
    for (auto* q : {&m_insertRun, &m_updateRun, &m_deleteTags, &m_insertTag, &m_insertParam, &m_setOffset, &m_deleteRun,
                 &m_upsertArtifact, &m_insertNotice, &m_insertKey, &m_selectKey, &m_insertMetric, &m_selectLastStep,
                 &m_markSuperseded, &m_insertRestart, &m_markChange, &m_maxChangeSeq})
        q->reset();
}

SqliteWriter::BatchOutcome SqliteWriter::applyBatch(std::deque<storeop::WriteOp>& ops,
        QList<std::pair<std::shared_ptr<std::promise<Result<RunId>>>, Result<RunId>>>& created)
{
    BatchOutcome out;
    QSet<RunId> changed;
    QHash<RunId, int> counts;
    QList<RunId> countOrder;
    auto touch = [&](RunId id) {
        if (!changed.contains(id)) {
            changed.insert(id);
            out.changedRuns.append(id);
        }
    };
    const auto lost = [&ops](const QString& why) {
        return QStringLiteral("%1; %2 queued writes were rolled back").arg(why).arg(ops.size());
    };

    Result<void> begun;
    for (int attempt = 0; attempt < kBeginAttempts; ++attempt) {
        begun = exec(QStringLiteral("BEGIN IMMEDIATE"));
        if (begun)
            break;
    }
    if (!begun) {
        out.damage = damageReason();
        const QString reason = systemReason();
        out.error = lost(reason.isEmpty() ? begun.error().message
                                          : QStringLiteral("%1 (%2)").arg(begun.error().message, reason));
        fenceFailedBatch(ops);
        for (auto& op : ops)
            if (auto* c = std::get_if<storeop::CreateRun>(&op))
                created.append({c->done, fail(out.error)});
        return out;
    }
    m_missingRuns.clear();

    QString error;
    // Points per run of this batch's metric writes; held-back points are
    // written (flushMetrics) before any other op that touches runs or
    // metrics and before the commit. A console offset touches neither: a
    // run's ingestion interleaves one with every chunk of points, and
    // flushing there wrote every series a few points at a time (rows, packed
    // again later) instead of a batch's points at once (blocks).
    QHash<RunId, int> metricCounts;
    m_nextMetricId = 0;
    for (auto& op : ops) {
        std::visit(
                [&](auto& o) {
                    using T = std::decay_t<decltype(o)>;
                    if (!error.isEmpty())
                        return;
                    if constexpr (!std::is_same_v<T,
                                          storeop::AppendMetrics> && !std::is_same_v<T, storeop::SetConsoleOffset>) {
                        if (auto r = flushMetrics(metricCounts); !r) {
                            error = r.error().message;
                            return;
                        }
                    }
                    if constexpr (std::is_same_v<T, storeop::CreateRun>) {
                        auto id = applyCreate(o);
                        if (id)
                            touch(*id);
                        else
                            error = id.error().message;
                        created.append({o.done, id});
                    } else if constexpr (std::is_same_v<T, storeop::UpdateRun>) {
                        auto r = applyUpdate(o);
                        if (!r)
                            error = r.error().message;
                        else if (*r)
                            touch(o.run.id);
                    } else if constexpr (std::is_same_v<T, storeop::AnnotateRun>) {
                        auto r = applyAnnotate(o);
                        if (!r)
                            error = r.error().message;
                        else if (*r)
                            touch(o.run);
                    } else if constexpr (std::is_same_v<T, storeop::AppendMetrics>) {
                        if (!m_fenced.isEmpty()) // queued after a failed batch of their run: dropped
                            o.points.removeIf([this](const MetricPoint& p) {
                                return p.source == MetricSource::Console && m_fenced.contains(p.run);
                            });
                        if (auto r = applyMetrics(o.points, metricCounts); !r)
                            error = r.error().message;
                        for (const MetricPoint& p :
                                std::as_const(o.points)) // const: no detach; m_pending points into it
                            if (!counts.contains(p.run)) {
                                counts.insert(p.run, 0);
                                countOrder.append(p.run);
                            }
                    } else if constexpr (std::is_same_v<T, storeop::SetConsoleOffset>) {
                        if (m_fenced.contains(o.run))
                            return; // queued after a failed batch of its run: dropped
                        auto r = applyConsoleOffset(o);
                        if (!r)
                            error = r.error().message;
                        else if (*r)
                            touch(o.run);
                    } else if constexpr (std::is_same_v<T, storeop::DeleteRun>) {
                        auto r = applyDelete(o);
                        if (!r)
                            error = r.error().message;
                        else
                            touch(o.run);
                    } else if constexpr (std::is_same_v<T, storeop::AddArtifact>) {
                        auto r = applyArtifact(o);
                        if (!r)
                            error = r.error().message;
                        else if (*r)
                            touch(o.artifact.run);
                    } else if constexpr (std::is_same_v<T, storeop::AddNotice>) {
                        auto r = applyNotice(o);
                        if (!r)
                            error = r.error().message;
                        else if (*r)
                            touch(o.notice.run);
                    } else if constexpr (std::is_same_v<T, storeop::SetParams>) {
                        auto r = applyParams(o);
                        if (!r)
                            error = r.error().message;
                        else if (*r)
                            touch(o.run);
                    } else if constexpr (std::is_same_v<T, storeop::PutNode>) {
                        if (auto r = applyPutNode(o); !r)
                            error = r.error().message;
                    } else if constexpr (std::is_same_v<T, storeop::RemoveNode>) {
                        if (auto r = applyRemoveNode(o); !r)
                            error = r.error().message;
                    } else if constexpr (std::is_same_v<T, storeop::BeginIngestion>) {
                        m_ingesting.insert(o.run);
                        m_fenced.remove(o.run);
                    }
                },
                op);
        if (!error.isEmpty())
            break;
    }

    if (error.isEmpty())
        if (auto r = flushMetrics(metricCounts); !r)
            error = r.error().message;
    for (auto it = metricCounts.cbegin(); it != metricCounts.cend(); ++it)
        counts[it.key()] += it.value();
    if (error.isEmpty()) {
        QList<RunId> touched = out.changedRuns;
        for (RunId id : std::as_const(countOrder))
            if (counts.value(id) > 0 && !changed.contains(id))
                touched.append(id);
        if (auto r = recordChanges(touched); !r)
            error = r.error().message;
    }
    if (error.isEmpty()) {
        if (auto c = exec(QStringLiteral("COMMIT")); !c)
            error = c.error().message;
    }
    if (!error.isEmpty()) {
        out.damage = damageReason();
        if (const QString reason = systemReason(); !reason.isEmpty())
            error = QStringLiteral("%1 (%2)").arg(error, reason);
        QSqlQuery(m_db).exec(QStringLiteral("ROLLBACK"));
        fenceFailedBatch(ops);
        m_keyIds.clear();    // may hold ids of metric_keys rows that were rolled back
        m_lastSteps.clear(); // may hold steps of rows that were rolled back
        m_tailRows.clear();
        m_pending.clear();
        m_pendingIndex.clear();
        m_batchId.clear();
        for (auto* l :
                {&m_batchKey, &m_batchStep, &m_batchEpoch, &m_batchWall, &m_batchValue, &m_batchKind, &m_batchSource})
            l->clear();
        out.error = lost(error);
        out.changedRuns.clear();
        for (auto& [promise, result] : created)
            result = fail(out.error);
        // Creates after the failing op never ran: fail them too.
        for (auto& op : ops) {
            if (auto* c = std::get_if<storeop::CreateRun>(&op)) {
                bool listed = false;
                for (const auto& pr : created)
                    listed = listed || pr.first == c->done;
                if (!listed)
                    created.append({c->done, fail(out.error)});
            }
        }
        return out;
    }
    m_transactions.fetch_add(1, std::memory_order_relaxed);
    for (RunId id : countOrder)
        if (counts.value(id) > 0)
            out.metricCounts.append({id, counts.value(id)});
    return out;
}

namespace {
// Binds the run fields updateRun() may change -- the first 16 placeholders of
// both the run INSERT and the run UPDATE -- and returns the next index.
int bindMutableRunFields(QSqlQuery& q, const RunRecord& r)
{
    using namespace sqlcodec;
    int i = 0;
    q.bindValue(i++, runStateName(r.state));
    q.bindValue(i++, textToSql(r.node));
    q.bindValue(i++, intListToJson(r.gpus));
    q.bindValue(i++, stringListToJson(r.argv));
    q.bindValue(i++, textToSql(r.workdir));
    q.bindValue(i++, stringMapToJson(r.env));
    q.bindValue(i++, r.priority);
    q.bindValue(i++, timeToSql(r.startedAt));
    q.bindValue(i++, timeToSql(r.finishedAt));
    q.bindValue(i++, optionalIntToSql(r.exitCode));
    q.bindValue(i++, optionalIntToSql(r.exitSignal));
    q.bindValue(i++, textToSql(r.failureReason));
    q.bindValue(i++, textToSql(r.agentRunId));
    q.bindValue(i++, textToSql(r.consolePath));
    q.bindValue(i++, textToSql(failureKindName(r.failureKind)));
    q.bindValue(i++, textToSql(r.pendingReason));
    return i;
}
} // namespace

Result<void> SqliteWriter::recordChanges(const QList<RunId>& runs)
{
    if (runs.isEmpty())
        return {};
    if (!m_maxChangeSeq->exec() || !m_maxChangeSeq->next())
        return fail(QStringLiteral("%1: cannot read the change sequence: %2")
                            .arg(m_path, m_maxChangeSeq->lastError().text()));
    const qint64 seq = m_maxChangeSeq->value(0).toLongLong() + 1;
    m_maxChangeSeq->finish();
    for (RunId id : runs) {
        m_markChange->bindValue(0, id);
        m_markChange->bindValue(1, seq);
        if (!m_markChange->exec())
            return fail(QStringLiteral("%1: run %2: cannot record its change: %3")
                                .arg(m_path)
                                .arg(id)
                                .arg(m_markChange->lastError().text()));
    }
    return {};
}

Result<RunId> SqliteWriter::applyCreate(const storeop::CreateRun& op)
{
    using namespace sqlcodec;
    const RunRecord& r = op.run;
    QSqlQuery& q = *m_insertRun;
    int i = bindMutableRunFields(q, r);
    q.bindValue(i++, textToSql(r.name));
    q.bindValue(i++, textToSql(r.specYaml));
    q.bindValue(i++, textToSql(r.specPath));
    q.bindValue(i++, timeToSql(r.createdAt.isValid() ? r.createdAt : QDateTime::currentDateTimeUtc()));
    q.bindValue(i++, QVariant::fromValue<qint64>(r.consoleOffset));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot create run \"%2\": %3").arg(m_path, r.name, q.lastError().text()));
    const RunId id = q.lastInsertId().toLongLong();
    q.finish();
    if (id <= 0)
        return fail(QStringLiteral("%1: cannot create run \"%2\": no id assigned").arg(m_path, r.name));

    if (auto t = replaceTags(id, r.tags); !t)
        return std::unexpected(t.error());
    QSqlQuery& p = *m_insertParam;
    for (auto it = op.params.cbegin(); it != op.params.cend(); ++it) {
        p.bindValue(0, QVariant::fromValue<qint64>(id));
        p.bindValue(1, sqlcodec::textToSql(it.key()));
        p.bindValue(2, sqlcodec::textToSql(it.value()));
        if (!p.exec())
            return fail(QStringLiteral("%1: run %2: cannot store param %3: %4")
                                .arg(m_path)
                                .arg(id)
                                .arg(it.key(), p.lastError().text()));
    }
    return id;
}

Result<void> SqliteWriter::replaceTags(RunId run, const QStringList& tags)
{
    QSqlQuery& d = *m_deleteTags;
    d.bindValue(0, QVariant::fromValue<qint64>(run));
    if (!d.exec())
        return fail(
                QStringLiteral("%1: run %2: cannot replace tags: %3").arg(m_path).arg(run).arg(d.lastError().text()));
    QSqlQuery& q = *m_insertTag;
    int position = 0;
    for (const QString& tag : sqlcodec::normalizedTags(tags)) {
        q.bindValue(0, QVariant::fromValue<qint64>(run));
        q.bindValue(1, sqlcodec::textToSql(tag));
        q.bindValue(2, position++);
        if (!q.exec())
            return fail(QStringLiteral("%1: run %2: cannot store tag %3: %4")
                                .arg(m_path)
                                .arg(run)
                                .arg(tag, q.lastError().text()));
    }
    return {};
}

Result<bool> SqliteWriter::applyUpdate(const storeop::UpdateRun& op)
{
    using namespace sqlcodec;
    const RunRecord& r = op.run;
    QSqlQuery& q = *m_updateRun;
    const int i = bindMutableRunFields(q, r);
    q.bindValue(i, QVariant::fromValue<qint64>(r.id));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot update run %2: %3").arg(m_path).arg(r.id).arg(q.lastError().text()));
    if (q.numRowsAffected() <= 0) {
        qCDebug(lcStoreWriter, "update of unknown run %lld ignored", static_cast<long long>(r.id));
        return false;
    }
    return true;
}

Result<bool> SqliteWriter::applyAnnotate(const storeop::AnnotateRun& op)
{
    using namespace sqlcodec;
    const RunAnnotation& a = op.annotation;
    QStringList sets;
    QVariantList binds;
    if (a.name) {
        sets << QStringLiteral("name = ?");
        binds << textToSql(*a.name);
    }
    if (a.notes) {
        sets << QStringLiteral("notes = ?");
        binds << textToSql(*a.notes);
    }
    if (a.archived) {
        sets << QStringLiteral("archived = ?");
        binds << QVariant(*a.archived ? 1 : 0);
    }
    // A no-op UPDATE when only the tags change: it says whether the run exists.
    if (sets.isEmpty())
        sets << QStringLiteral("id = id");
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("UPDATE runs SET %1 WHERE id = ?").arg(sets.join(QStringLiteral(", "))));
    for (const QVariant& b : std::as_const(binds))
        q.addBindValue(b);
    q.addBindValue(QVariant::fromValue<qint64>(op.run));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot change run %2: %3").arg(m_path).arg(op.run).arg(q.lastError().text()));
    if (q.numRowsAffected() <= 0)
        return false;
    if (a.tags)
        if (auto t = replaceTags(op.run, *a.tags); !t)
            return std::unexpected(t.error());
    return true;
}

Result<bool> SqliteWriter::applyConsoleOffset(const storeop::SetConsoleOffset& op)
{
    QSqlQuery& q = *m_setOffset;
    q.bindValue(0, QVariant::fromValue<qint64>(op.offset));
    q.bindValue(1, QVariant::fromValue<qint64>(op.run));
    if (!q.exec())
        return fail(QStringLiteral("%1: run %2: cannot store the console offset: %3")
                            .arg(m_path)
                            .arg(op.run)
                            .arg(q.lastError().text()));
    return q.numRowsAffected() > 0;
}

Result<void> SqliteWriter::applyDelete(const storeop::DeleteRun& op)
{
    m_keyIds.remove(op.run);
    QSqlQuery& q = *m_deleteRun;
    q.bindValue(0, QVariant::fromValue<qint64>(op.run));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot delete run %2: %3").arg(m_path).arg(op.run).arg(q.lastError().text()));
    return {};
}

Result<bool> SqliteWriter::applyArtifact(const storeop::AddArtifact& op)
{
    const ArtifactRecord& a = op.artifact;
    QSqlQuery& q = *m_upsertArtifact;
    q.bindValue(0, QVariant::fromValue<qint64>(a.run));
    q.bindValue(1, sqlcodec::textToSql(a.path));
    q.bindValue(2, QVariant::fromValue<qint64>(a.size));
    q.bindValue(3, sqlcodec::textToSql(a.sha256));
    q.bindValue(4, sqlcodec::timeToSql(a.createdAt.isValid() ? a.createdAt : QDateTime::currentDateTimeUtc()));
    if (!q.exec()) {
        if (isConstraint(q.lastError())) {
            qCDebug(lcStoreWriter, "artifact of unknown run %lld dropped", static_cast<long long>(a.run));
            return false;
        }
        return fail(QStringLiteral("%1: run %2: cannot record artifact %3: %4")
                            .arg(m_path)
                            .arg(a.run)
                            .arg(a.path, q.lastError().text()));
    }
    return true;
}

Result<bool> SqliteWriter::applyNotice(const storeop::AddNotice& op)
{
    const RunNotice& n = op.notice;
    QSqlQuery& q = *m_insertNotice;
    q.bindValue(0, QVariant::fromValue<qint64>(n.run));
    q.bindValue(1, sqlcodec::timeToSql(n.at.isValid() ? n.at : QDateTime::currentDateTimeUtc()));
    q.bindValue(2, sqlcodec::textToSql(n.text));
    q.bindValue(3, QVariant::fromValue<qint64>(n.run));
    q.bindValue(4, sqlcodec::textToSql(n.text));
    if (!q.exec()) {
        if (isConstraint(q.lastError())) {
            qCDebug(lcStoreWriter, "notice of unknown run %lld dropped", static_cast<long long>(n.run));
            return false;
        }
        return fail(QStringLiteral("%1: run %2: cannot record a notice: %3")
                            .arg(m_path)
                            .arg(n.run)
                            .arg(q.lastError().text()));
    }
    return q.numRowsAffected() > 0;
}

Result<bool> SqliteWriter::applyParams(const storeop::SetParams& op)
{
    QSqlQuery& p = *m_insertParam;
    for (auto it = op.params.cbegin(); it != op.params.cend(); ++it) {
        p.bindValue(0, QVariant::fromValue<qint64>(op.run));
        p.bindValue(1, sqlcodec::textToSql(it.key()));
        p.bindValue(2, sqlcodec::textToSql(it.value()));
        if (!p.exec()) {
            if (isConstraint(p.lastError())) {
                qCDebug(lcStoreWriter, "params of unknown run %lld dropped", static_cast<long long>(op.run));
                return false;
            }
            return fail(QStringLiteral("%1: run %2: cannot store param %3: %4")
                                .arg(m_path)
                                .arg(op.run)
                                .arg(it.key(), p.lastError().text()));
        }
    }
    return true;
}

Result<void> SqliteWriter::applyPutNode(const storeop::PutNode& op)
{
    const NodeRecord& n = op.node;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral(
            "INSERT OR REPLACE INTO nodes (name, host, user, port, identity_file, agent_path, added_at, labels)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(sqlcodec::textToSql(n.name));
    q.addBindValue(sqlcodec::textToSql(n.host));
    q.addBindValue(sqlcodec::textToSql(n.user));
    q.addBindValue(n.port);
    q.addBindValue(sqlcodec::textToSql(n.identityFile));
    q.addBindValue(sqlcodec::textToSql(n.agentPath));
    q.addBindValue(sqlcodec::timeToSql(n.addedAt.isValid() ? n.addedAt : QDateTime::currentDateTimeUtc()));
    q.addBindValue(
            QString::fromUtf8(QJsonDocument(QJsonArray::fromStringList(n.labels)).toJson(QJsonDocument::Compact)));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot store node %2: %3").arg(m_path, n.name, q.lastError().text()));
    return {};
}

Result<void> SqliteWriter::applyRemoveNode(const storeop::RemoveNode& op)
{
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("DELETE FROM nodes WHERE name = ?"));
    q.addBindValue(sqlcodec::textToSql(op.name));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot remove node %2: %3").arg(m_path, op.name, q.lastError().text()));
    return {};
}

Result<std::optional<qint64>> SqliteWriter::keyId(RunId run, const QString& key)
{
    auto runIt = m_keyIds.find(run);
    if (runIt != m_keyIds.end()) {
        auto it = runIt->constFind(key);
        if (it != runIt->cend())
            return std::optional<qint64>(*it);
    }
    if (m_missingRuns.contains(run))
        return std::optional<qint64>();

    QSqlQuery& ins = *m_insertKey;
    ins.bindValue(0, QVariant::fromValue<qint64>(run));
    ins.bindValue(1, sqlcodec::textToSql(key));
    if (!ins.exec()) {
        if (isConstraint(ins.lastError())) {
            qCDebug(lcStoreWriter, "metrics of unknown run %lld dropped", static_cast<long long>(run));
            m_missingRuns.insert(run);
            return std::optional<qint64>();
        }
        return fail(QStringLiteral("%1: run %2: cannot record metric key %3: %4")
                            .arg(m_path)
                            .arg(run)
                            .arg(key, ins.lastError().text()));
    }
    QSqlQuery& sel = *m_selectKey;
    sel.bindValue(0, QVariant::fromValue<qint64>(run));
    sel.bindValue(1, sqlcodec::textToSql(key));
    if (!sel.exec() || !sel.next())
        return fail(QStringLiteral("%1: run %2: cannot read metric key %3: %4")
                            .arg(m_path)
                            .arg(run)
                            .arg(key, sel.lastError().text()));
    const qint64 id = sel.value(0).toLongLong();
    sel.finish();
    m_keyIds[run].insert(key, id);
    return std::optional<qint64>(id);
}

Result<bool> SqliteWriter::insertMetricRow(qint64 keyId, qint64 id, const MetricPoint& p)
{
    using namespace sqlcodec;
    switch (m_options.metricInsert) {
    case SqliteStoreOptions::MetricInsert::RawSqlite: {
        sqlite3_stmt* s = m_rawInsertMetric;
        bindRawRow(s, 1, keyId, id, p);
        const int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE) {
            sqlite3_reset(s);
            return true;
        }
        const QString msg = QString::fromUtf8(sqlite3_errmsg(sqlite3_db_handle(s)));
        sqlite3_reset(s);
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
            return false;
        return fail(QStringLiteral("%1: run %2: cannot store metric %3: %4").arg(m_path).arg(p.run).arg(p.key, msg));
    }
    case SqliteStoreOptions::MetricInsert::QtSqlLoop: {
        const MetricKind kind = metricKind(p.value);
        QSqlQuery& q = *m_insertMetric;
        q.bindValue(0, QVariant::fromValue<qint64>(id));
        q.bindValue(1, QVariant::fromValue<qint64>(keyId));
        q.bindValue(2, QVariant::fromValue<qint64>(p.step));
        q.bindValue(3, p.epoch ? QVariant(*p.epoch) : QVariant(QMetaType::fromType<double>()));
        q.bindValue(4, QVariant::fromValue<qint64>(p.wallTimeMs));
        q.bindValue(5,
                metricHasSqlValue(kind) ? QVariant(metricSqlValue(p.value, kind))
                                        : QVariant(QMetaType::fromType<double>()));
        q.bindValue(6, static_cast<int>(kind));
        q.bindValue(7, static_cast<int>(p.source));
        if (q.exec())
            return true;
        if (isConstraint(q.lastError()))
            return false;
        return fail(QStringLiteral("%1: run %2: cannot store metric %3: %4")
                            .arg(m_path)
                            .arg(p.run)
                            .arg(p.key, q.lastError().text()));
    }
    case SqliteStoreOptions::MetricInsert::QtSqlBatch: {
        const MetricKind kind = metricKind(p.value);
        m_batchId.append(id);
        m_batchKey.append(keyId);
        m_batchStep.append(p.step);
        m_batchEpoch.append(p.epoch ? QVariant(*p.epoch) : QVariant(QMetaType::fromType<double>()));
        m_batchWall.append(p.wallTimeMs);
        m_batchValue.append(metricHasSqlValue(kind) ? QVariant(metricSqlValue(p.value, kind))
                                                    : QVariant(QMetaType::fromType<double>()));
        m_batchKind.append(static_cast<int>(kind));
        m_batchSource.append(static_cast<int>(p.source));
        return true;
    }
    }
    return true;
}

Result<void> SqliteWriter::flushBatchRows()
{
    if (m_batchKey.isEmpty())
        return {};
    QSqlQuery& q = *m_insertMetric;
    q.bindValue(0, m_batchId);
    q.bindValue(1, m_batchKey);
    q.bindValue(2, m_batchStep);
    q.bindValue(3, m_batchEpoch);
    q.bindValue(4, m_batchWall);
    q.bindValue(5, m_batchValue);
    q.bindValue(6, m_batchKind);
    q.bindValue(7, m_batchSource);
    const bool ok = q.execBatch();
    for (auto* l : {&m_batchId, &m_batchKey, &m_batchStep, &m_batchEpoch, &m_batchWall, &m_batchValue, &m_batchKind,
                 &m_batchSource})
        l->clear();
    if (!ok)
        return fail(QStringLiteral("%1: cannot store metrics: %2").arg(m_path, q.lastError().text()));
    return {};
}

Result<void> SqliteWriter::insertPoint(const MetricPoint& p, qint64 id, QHash<RunId, int>& counts)
{
    auto key = keyId(p.run, p.key);
    if (!key)
        return std::unexpected(key.error());
    if (!*key)
        return {}; // unknown run
    auto inserted = insertMetricRow(**key, id, p);
    if (!inserted)
        return std::unexpected(inserted.error());
    if (!*inserted) {
        // The cached key row is gone: another process deleted the run.
        m_keyIds.remove(p.run);
        key = keyId(p.run, p.key);
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

Result<void> SqliteWriter::insertRawGroup(const RowPoint* rows, QHash<RunId, int>& counts)
{
    sqlite3_stmt* s = m_rawInsertMetricMulti;
    for (int i = 0; i < kRowsPerStatement; ++i)
        bindRawRow(s, 1 + 8 * i, rows[i].keyId, rows[i].id, *rows[i].point);
    const int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(s);
        for (int i = 0; i < kRowsPerStatement; ++i)
            ++counts[rows[i].point->run];
        return {};
    }
    const QString msg = QString::fromUtf8(sqlite3_errmsg(sqlite3_db_handle(s)));
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

Result<void> SqliteWriter::writeRows(std::vector<RowPoint>& rows, QHash<RunId, int>& counts)
{
    std::size_t i = 0;
    if (m_rawInsertMetricMulti)
        for (; i + kRowsPerStatement <= rows.size(); i += kRowsPerStatement)
            if (auto r = insertRawGroup(rows.data() + i, counts); !r)
                return r;
    for (; i < rows.size(); ++i)
        if (auto r = insertPoint(*rows[i].point, rows[i].id, counts); !r)
            return r;
    rows.clear();
    return flushBatchRows();
}

Result<qint64> SqliteWriter::nextMetricId()
{
    if (m_nextMetricId == 0) {
        // Once per batch: another process may have written since the last one.
        sqlite3_stmt* s = m_maxMetricId;
        const int rc = sqlite3_step(s);
        const qint64 max = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
        sqlite3_reset(s);
        if (rc != SQLITE_ROW)
            return fail(QStringLiteral("%1: cannot read the last metric id: %2")
                                .arg(m_path, QString::fromUtf8(sqlite3_errmsg(m_handle))));
        m_nextMetricId = max + 1;
    }
    return m_nextMetricId++;
}

Result<int> SqliteWriter::tailRows(qint64 keyId, MetricSource source)
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
                            .arg(QString::fromUtf8(sqlite3_errmsg(m_handle))));
    // A series with a block's worth of rows or more predates packing (schema
    // < 5): its rows stay rows, new points are packed on their own.
    const int tail = n >= kMetricBlockPoints ? kLegacyTail : n;
    m_tailRows.insert(slot, tail);
    return tail;
}

Result<bool> SqliteWriter::writeBlock(
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
    const QString msg = rc == SQLITE_DONE ? QString() : QString::fromUtf8(sqlite3_errmsg(m_handle));
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

Result<void> SqliteWriter::flushSeries(PendingSeries& series, std::vector<RowPoint>& rows, QHash<RunId, int>& counts)
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
    if (!m_options.packBlocks || (!bulk && t + n < kMetricBlockPoints)) {
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
            return fail(QStringLiteral("%1: run %2: cannot read the rows of metric %3 to pack: %4")
                                .arg(m_path)
                                .arg(series.run)
                                .arg(series.points.front()->key, QString::fromUtf8(sqlite3_errmsg(m_handle))));
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
            return fail(QStringLiteral("%1: run %2: cannot move the rows of metric %3 into a block: %4")
                                .arg(m_path)
                                .arg(series.run)
                                .arg(series.points.front()->key, QString::fromUtf8(sqlite3_errmsg(m_handle))));
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
            m_keyIds.remove(series.run);
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

Result<void> SqliteWriter::flushMetrics(QHash<RunId, int>& counts)
{
    std::vector<RowPoint> rows;
    for (PendingSeries& series : m_pending)
        if (auto r = flushSeries(series, rows, counts); !r)
            return r;
    m_pending.clear();
    m_pendingIndex.clear();
    return writeRows(rows, counts);
}

Result<bool> SqliteWriter::goesBack(qint64 keyId, const MetricPoint& p)
{
    const qint64 slot = seriesSlot(keyId, p.source);
    auto it = m_lastSteps.find(slot);
    if (it == m_lastSteps.end()) {
        QSqlQuery& q = *m_selectLastStep;
        q.bindValue(0, QVariant::fromValue<qint64>(keyId));
        q.bindValue(1, static_cast<int>(p.source));
        if (!q.exec())
            return fail(QStringLiteral("%1: run %2: cannot read the last step of metric %3: %4")
                                .arg(m_path)
                                .arg(p.run)
                                .arg(p.key, q.lastError().text()));
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
            return fail(QStringLiteral("%1: run %2: cannot read the last block of metric %3: %4")
                                .arg(m_path)
                                .arg(p.run)
                                .arg(p.key, QString::fromUtf8(sqlite3_errmsg(m_handle))));
        it = m_lastSteps.insert(slot, last);
    }
    if (it->has_value() && p.step <= **it)
        return true;
    *it = p.step;
    return false;
}

Result<int> SqliteWriter::cutBlocks(qint64 keyId, const MetricPoint& p)
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
        return fail(QStringLiteral("%1: run %2: cannot read the blocks of metric %3: %4")
                            .arg(m_path)
                            .arg(p.run)
                            .arg(p.key, QString::fromUtf8(sqlite3_errmsg(m_handle))));
    for (const Cut& c : cuts) {
        sqlite3_stmt* u = m_setLive;
        sqlite3_bind_int(u, 1, c.live);
        sqlite3_bind_int64(u, 2, c.id);
        const int urc = sqlite3_step(u);
        sqlite3_reset(u);
        if (urc != SQLITE_DONE)
            return fail(QStringLiteral("%1: run %2: cannot mark superseded points of metric %3: %4")
                                .arg(m_path)
                                .arg(p.run)
                                .arg(p.key, QString::fromUtf8(sqlite3_errmsg(m_handle))));
    }
    return superseded;
}

Result<void> SqliteWriter::restartSeries(qint64 keyId, const MetricPoint& p)
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
        return fail(QStringLiteral("%1: run %2: cannot mark superseded points of metric %3: %4")
                            .arg(m_path)
                            .arg(p.run)
                            .arg(p.key, u.lastError().text()));
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
        if (isConstraint(r.lastError())) {
            // The cached key row is gone (another process deleted the run):
            // the point's insert re-resolves its key or drops it.
            m_keyIds.remove(p.run);
            m_lastSteps.remove(slot);
            m_tailRows.remove(slot);
            return {};
        }
        return fail(QStringLiteral("%1: run %2: cannot record the restart of metric %3 at step %4: %5")
                            .arg(m_path)
                            .arg(p.run)
                            .arg(p.key)
                            .arg(p.step)
                            .arg(r.lastError().text()));
    }
    qCDebug(lcStoreWriter, "run %lld: metric %s went back to step %lld, %d points superseded",
            static_cast<long long>(p.run), qUtf8Printable(p.key), static_cast<long long>(p.step), superseded);
    m_lastSteps.insert(slot, p.step);
    return {};
}

Result<void> SqliteWriter::applyMetrics(const QList<MetricPoint>& points, QHash<RunId, int>& counts)
{
    for (const MetricPoint& p : points) {
        auto key = keyId(p.run, p.key);
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
            auto again = keyId(p.run, p.key);
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
