#include "SqliteWriter.h"

#include "SqliteFileAccess.h"
#include "SqliteSchema.h"

#include <QDeadlineTimer>
#include <QLoggingCategory>
#include <QSet>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>

#include <sqlite3.h>

#include <cerrno>
#include <cstring>

namespace ty {

// Also used by RecordWriter and MetricSeriesWriter (the writer thread's SQL).
Q_LOGGING_CATEGORY(lcStoreWriter, "trainyard.store.writer", QtWarningMsg)

namespace {

// Batches are cut short of the coalescing wait once this many points wait.
constexpr qint64 kCutBatchPoints = 100'000;
// BEGIN IMMEDIATE attempts (each waits up to busyTimeoutMs) before a batch fails.
constexpr int kBeginAttempts = 6;

qint64 pointsOf(const storeop::WriteOp& op)
{
    if (const auto* m = std::get_if<storeop::AppendMetrics>(&op))
        return m->points.size();
    return 0;
}

// What waits for the id an op creates (createRun, createGroup), else null.
std::shared_ptr<std::promise<Result<RunId>>> creationPromiseOf(const storeop::WriteOp& op)
{
    if (const auto* c = std::get_if<storeop::CreateRun>(&op))
        return c->done;
    if (const auto* g = std::get_if<storeop::CreateGroup>(&op))
        return g->done;
    return nullptr;
}

} // namespace

SqliteWriter::SqliteWriter(QString path, QString connectionName, SqliteStoreOptions options, Callback onBatch)
    : m_path(std::move(path))
    , m_connectionName(std::move(connectionName))
    , m_options(options)
    , m_onBatch(std::move(onBatch))
    , m_records(m_path)
    , m_metrics(m_path, m_options.packBlocks)
    , m_memo(m_path)
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
        if (auto done = creationPromiseOf(op))
            done->set_value(fail(QStringLiteral("%1: the result store is closed").arg(m_path)));
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
        if (auto done = creationPromiseOf(op))
            done->set_value(fail(QStringLiteral("%1: the result store is closed").arg(m_path)));
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
    if (auto r = m_records.prepare(m_db); !r)
        return r;
    if (auto r = m_memo.prepare(m_db); !r)
        return r;
    return m_metrics.prepare(m_db, m_handle);
}

void SqliteWriter::releaseStatements()
{
    m_records.release();
    m_metrics.release();
    m_memo.release();
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
            if (auto done = creationPromiseOf(op))
                created.append({done, fail(out.error)});
        return out;
    }
    m_metrics.beginBatch();

    QString error;
    // A record write's outcome: the error, or the run it changed.
    const auto note = [&](const Result<std::optional<RunId>>& r) {
        if (!r)
            error = r.error().message;
        else if (*r)
            touch(**r);
    };
    // Points per run of this batch's metric writes; held-back points are
    // written (MetricSeriesWriter::flush) before any other op that touches
    // runs or metrics and before the commit. A console offset touches
    // neither: a run's ingestion interleaves one with every chunk of points,
    // and flushing there wrote every series a few points at a time (rows,
    // packed again later) instead of a batch's points at once (blocks).
    QHash<RunId, int> metricCounts;
    for (auto& op : ops) {
        std::visit(
                [&](auto& o) {
                    using T = std::decay_t<decltype(o)>;
                    if (!error.isEmpty())
                        return;
                    if constexpr (!std::is_same_v<T,
                                          storeop::AppendMetrics> && !std::is_same_v<T, storeop::SetConsoleOffset>) {
                        if (auto r = m_metrics.flush(metricCounts); !r) {
                            error = r.error().message;
                            return;
                        }
                    }
                    if constexpr (std::is_same_v<T, storeop::CreateRun>) {
                        auto id = m_records.apply(o);
                        if (id)
                            touch(*id);
                        else
                            error = id.error().message;
                        created.append({o.done, id});
                    } else if constexpr (std::is_same_v<T, storeop::CreateGroup>) {
                        auto id = m_records.apply(o);
                        if (!id)
                            error = id.error().message;
                        created.append({o.done, id});
                    } else if constexpr (std::is_same_v<T, storeop::AppendMetrics>) {
                        if (!m_fenced.isEmpty()) // queued after a failed batch of their run: dropped
                            o.points.removeIf([this](const MetricPoint& p) {
                                return p.source == MetricSource::Console && m_fenced.contains(p.run);
                            });
                        if (auto r = m_metrics.append(o.points, metricCounts); !r)
                            error = r.error().message;
                        for (const MetricPoint& p :
                                std::as_const(o.points)) // const: no detach; m_metrics points into it
                            if (!counts.contains(p.run)) {
                                counts.insert(p.run, 0);
                                countOrder.append(p.run);
                            }
                    } else if constexpr (std::is_same_v<T, storeop::SetConsoleOffset>) {
                        if (m_fenced.contains(o.run))
                            return; // queued after a failed batch of its run: dropped
                        note(m_records.apply(o));
                    } else if constexpr (std::is_same_v<T, storeop::DeleteRun>) {
                        m_metrics.forgetRun(o.run);
                        note(m_records.apply(o));
                    } else if constexpr (std::is_same_v<T, storeop::BeginIngestion>) {
                        m_ingesting.insert(o.run);
                        m_fenced.remove(o.run);
                    } else if constexpr (
                            std::is_same_v<T,
                                    storeop::
                                            PutMemoEntry> || std::is_same_v<T, storeop::RecordMemoHit> || std::is_same_v<T, storeop::RemoveMemoEntries>) {
                        if (auto r = m_memo.apply(o); !r)
                            error = r.error().message;
                    } else {
                        note(m_records.apply(o)); // PutPipeline too: it changes no run
                    }
                },
                op);
        if (!error.isEmpty())
            break;
    }

    if (error.isEmpty())
        if (auto r = m_metrics.flush(metricCounts); !r)
            error = r.error().message;
    for (auto it = metricCounts.cbegin(); it != metricCounts.cend(); ++it)
        counts[it.key()] += it.value();
    if (error.isEmpty()) {
        QList<RunId> touched = out.changedRuns;
        for (RunId id : std::as_const(countOrder))
            if (counts.value(id) > 0 && !changed.contains(id))
                touched.append(id);
        if (auto r = m_records.recordChanges(touched); !r)
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
        m_metrics.rolledBack();
        out.error = lost(error);
        out.changedRuns.clear();
        for (auto& [promise, result] : created)
            result = fail(out.error);
        // Creates after the failing op never ran: fail them too.
        for (auto& op : ops) {
            if (auto done = creationPromiseOf(op)) {
                bool listed = false;
                for (const auto& pr : created)
                    listed = listed || pr.first == done;
                if (!listed)
                    created.append({done, fail(out.error)});
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

} // namespace ty
