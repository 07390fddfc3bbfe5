#include "SqliteResultStore.h"

#include "MetricBlock.h"
#include "SqlCodec.h"
#include "SqliteFileAccess.h"
#include "SqliteMetricColumns.h"
#include "SqliteSchema.h"
#include "SqliteWriter.h"

#include <QJsonDocument>
#include <QJsonArray>
#include <QDir>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QSqlError>
#include <QRegularExpression>
#include <QSqlQuery>

#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <vector>

namespace ty {

Q_LOGGING_CATEGORY(lcStore, "trainyard.store", QtWarningMsg)

namespace {

std::atomic<int> g_instances{0};
std::atomic<quint64> g_threadSerials{0};

// Serial number of the calling thread, unique for the life of the process
// (unlike thread ids and QThread addresses, which are reused).
quint64 threadSerial()
{
    thread_local const quint64 serial = ++g_threadSerials;
    return serial;
}

const QString kRunColumns = QStringLiteral(
        "id, name, state, spec_yaml, spec_path, node, gpus, argv, workdir, env, priority, created_at, started_at,"
        " finished_at, exit_code, exit_signal, failure_reason, agent_run_id, console_path, console_offset, notes, archived,"
        " failure_kind, pending_reason, not_before, slurm_job");

RunRecord runFromRow(const QSqlQuery& q)
{
    using namespace sqlcodec;
    RunRecord r;
    int i = 0;
    r.id = q.value(i++).toLongLong();
    r.name = q.value(i++).toString();
    r.state = runStateFromName(q.value(i++).toString()).value_or(RunState::Unknown);
    r.specYaml = q.value(i++).toString();
    r.specPath = q.value(i++).toString();
    r.node = q.value(i++).toString();
    r.gpus = intListFromJson(q.value(i++).toString());
    r.argv = stringListFromJson(q.value(i++).toString());
    r.workdir = q.value(i++).toString();
    r.env = stringMapFromJson(q.value(i++).toString());
    r.priority = q.value(i++).toInt();
    r.createdAt = timeFromSql(q.value(i++));
    r.startedAt = timeFromSql(q.value(i++));
    r.finishedAt = timeFromSql(q.value(i++));
    r.exitCode = optionalIntFromSql(q.value(i++));
    r.exitSignal = optionalIntFromSql(q.value(i++));
    r.failureReason = q.value(i++).toString();
    r.agentRunId = q.value(i++).toString();
    r.consolePath = q.value(i++).toString();
    r.consoleOffset = q.value(i++).toLongLong();
    r.notes = q.value(i++).toString();
    r.archived = q.value(i++).toInt() != 0;
    r.failureKind
            = failureKindFromName(q.value(i++).toString()).value_or(FailureKind::Other); // a newer Trainyard's kind
    r.pendingReason = q.value(i++).toString();
    r.notBefore = timeFromSql(q.value(i++));
    r.slurmJob = q.value(i++).toString();
    return r;
}

MetricSource sourceFromSql(qint64 v)
{
    return v == 1 ? MetricSource::File : MetricSource::Console;
}

// Columns: step, epoch, wall_ms, value, kind, source, superseded (then id, unused here).
MetricPoint pointFromRow(const QSqlQuery& q, RunId run, const QString& key)
{
    MetricPoint p;
    p.run = run;
    p.key = key;
    p.step = q.value(0).toLongLong();
    const QVariant epoch = q.value(1);
    if (!epoch.isNull())
        p.epoch = epoch.toDouble();
    p.wallTimeMs = q.value(2).toLongLong();
    p.value = sqlcodec::metricFromSql(q.value(3), q.value(4).toInt());
    p.source = sourceFromSql(q.value(5).toLongLong());
    p.superseded = q.value(6).toInt() != 0;
    return p;
}

// A metric_blocks row read through QtSql; `view` points into `bytes`.
struct LoadedBlock {
    QByteArray bytes;
    MetricBlockView view;
    int live = 0;
    MetricSource source = MetricSource::Console;
};

// A block point by its place in the order of a key's points.
struct BlockPointRef {
    qint64 step;
    qint64 id;
    int block;
    int index;
    auto operator<=>(const BlockPointRef&) const = default;
};

// Columns: id, source, count, live, points. A malformed block (a BLOB that is
// not a version-1 block, or count/live that do not match it) is skipped with a
// warning naming the file, run, key and block: the key's other points still load.
std::optional<LoadedBlock> loadBlock(const QSqlQuery& q, const QString& path, RunId run, const QString& key)
{
    LoadedBlock b;
    b.bytes = q.value(4).toByteArray();
    const qint64 count = q.value(2).toLongLong();
    const qint64 live = q.value(3).toLongLong();
    auto view = MetricBlockView::parse(b.bytes.constData(), std::size_t(b.bytes.size()));
    if (!view || view->count() != count || live < 0 || live > count) {
        qCWarning(lcStore,
                "%s: run %lld: metric %s: block %lld is malformed (%lld bytes, count %lld, live %lld%s); its points "
                "are left out",
                qUtf8Printable(path), static_cast<long long>(run), qUtf8Printable(key),
                static_cast<long long>(q.value(0).toLongLong()), static_cast<long long>(b.bytes.size()),
                static_cast<long long>(count), static_cast<long long>(live),
                view ? "" : ", not a version-1 metric block");
        return std::nullopt;
    }
    b.view = *view;
    b.live = int(live);
    b.source = sourceFromSql(q.value(1).toLongLong());
    return b;
}

MetricPoint pointFromBlock(const LoadedBlock& b, int i, RunId run, const QString& key)
{
    MetricPoint p;
    p.run = run;
    p.key = key;
    p.step = b.view.step(i);
    p.epoch = b.view.epoch(i);
    p.wallTimeMs = b.view.wallMs(i);
    p.value = b.view.value(i);
    p.source = b.source;
    p.superseded = i >= b.live;
    return p;
}

// A read-only transaction so multi-statement reads see one snapshot.
class ReadTransaction {
public:
    explicit ReadTransaction(QSqlDatabase& db)
        : m_db(db)
        , m_active(db.transaction())
    { }
    ~ReadTransaction()
    {
        if (m_active)
            m_db.commit();
    }
    Q_DISABLE_COPY_MOVE(ReadTransaction)

private:
    QSqlDatabase& m_db;
    bool m_active;
};

// How a read reports a failure: what could not be read, and SQLite's error
// (SqliteResultStore::readFailed()).
using ReadFailed = std::function<void(const QString& what, const QSqlError& error)>;

QSqlQuery prepared(const QSqlDatabase& db, const ReadFailed& failed, const QString& sql)
{
    QSqlQuery q(db);
    q.setForwardOnly(true);
    if (!q.prepare(sql))
        failed(QStringLiteral("cannot prepare \"%1\"").arg(sql), q.lastError());
    return q;
}

// After a `while (q.next())` loop: a step that failed ends the loop like the
// last row, so report it (a damaged page is often found only there).
void checkSteps(const QSqlQuery& q, const ReadFailed& failed, const QString& what)
{
    if (q.lastError().isValid())
        failed(what, q.lastError());
}

QList<std::pair<qint64, QString>> keysOf(const QSqlDatabase& db, RunId run, const ReadFailed& failed)
{
    QList<std::pair<qint64, QString>> keys;
    QSqlQuery q = prepared(db, failed, QStringLiteral("SELECT id, key FROM metric_keys WHERE run_id = ? ORDER BY key"));
    q.addBindValue(QVariant::fromValue<qint64>(run));
    if (!q.exec()) {
        failed(QStringLiteral("run %1: cannot read metric keys").arg(run), q.lastError());
        return keys;
    }
    while (q.next())
        keys.append({q.value(0).toLongLong(), q.value(1).toString()});
    checkSteps(q, failed, QStringLiteral("run %1: cannot read metric keys").arg(run));
    return keys;
}

} // namespace

namespace {

// Opens `file` read-only (mode=ro, else immutable=1: SqliteResultStore.h) and
// reads its schema version. Returns the URI that worked and the version.
Result<std::pair<QString, int>> probeReadOnly(const QString& file, const QString& whyReadOnly, int busyTimeoutMs)
{
    for (const bool immutable : {false, true}) {
        const QString uri = sqlitefile::readOnlyUri(file, immutable);
        const QString name = QStringLiteral("trainyard-store-probe-%1").arg(++g_instances);
        Result<int> probed = 0;
        bool cantOpen = false;
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
            db.setDatabaseName(uri);
            db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_URI;QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=%1")
                                         .arg(busyTimeoutMs));
            if (!db.open()) {
                cantOpen = sqlitefile::needsImmutable(db.lastError());
                probed = fail(QStringLiteral("%1: cannot open the result database read-only: %2")
                                      .arg(file, db.lastError().text()));
            } else {
                // SQLITE_CANTOPEN/READONLY here: a WAL database whose -wal/-shm cannot be created.
                QSqlQuery q(db);
                if (!q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master"))
                        && sqlitefile::needsImmutable(q.lastError())) {
                    cantOpen = true;
                    probed = fail(
                            QStringLiteral("%1: cannot read the result database: %2").arg(file, q.lastError().text()));
                } else {
                    q.finish();
                    probed = SqliteSchema::probeVersion(db, file);
                }
            }
            db.close();
        }
        QSqlDatabase::removeDatabase(name);
        if (cantOpen && !immutable)
            continue;
        if (!probed)
            return std::unexpected(probed.error());
        if (*probed < SqliteSchema::kCurrentVersion)
            return fail(QStringLiteral("%1: the result database has schema version %2, older than this Trainyard's %3, "
                                       "and it is read-only (%4), so it cannot be upgraded; nothing was changed. Open "
                                       "it once where it can be written, or copy it (with any -wal file beside it) to "
                                       "a writable folder and open the copy.")
                                .arg(file)
                                .arg(*probed)
                                .arg(SqliteSchema::kCurrentVersion)
                                .arg(whyReadOnly));
        if (immutable && QFileInfo(file + QStringLiteral("-wal")).size() > 0)
            qCWarning(lcStore,
                    "%s: read-only without its -shm file (it cannot be created): the changes still in %s-wal "
                    "are not shown",
                    qUtf8Printable(file), qUtf8Printable(file));
        return std::pair{uri, *probed};
    }
    return fail(QStringLiteral("%1: cannot open the result database read-only").arg(file)); // not reached
}

} // namespace

Result<std::unique_ptr<SqliteResultStore>> SqliteResultStore::open(
        const QString& path, const SqliteStoreOptions& options, StoreAccess access)
{
    if (path.isEmpty())
        return fail(QStringLiteral("no result database path given"));
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE")))
        return fail(QStringLiteral("%1: Qt's SQLite driver (QSQLITE) is not installed (Debian: libqt6sql6-sqlite)")
                            .arg(path));
    const QFileInfo info(path);
    const QString file = QDir::cleanPath(info.absoluteFilePath());
    if (info.isDir())
        return fail(QStringLiteral("%1: is a directory, not a result database").arg(file));

    // A file this process cannot write: read-only, or refused, before
    // anything (mkpath, the writer's pragmas) tries to write.
    if (info.exists()) {
        if (const QString why = sqlitefile::whyNotWritable(file); !why.isEmpty()) {
            if (access == StoreAccess::ReadWrite)
                return fail(
                        QStringLiteral("%1: cannot write the result database: %2").arg(file, why), ErrorKind::ReadOnly);
            if (auto header = SqliteSchema::checkFileHeader(file); !header)
                return std::unexpected(header.error());
            if (info.size() == 0)
                return fail(QStringLiteral("%1: the file is empty (no Trainyard tables yet) and read-only (%2): there "
                                           "is nothing in it to show")
                                    .arg(file, why));
            auto probed = probeReadOnly(file, why, options.busyTimeoutMs);
            if (!probed)
                return std::unexpected(probed.error());
            std::unique_ptr<SqliteResultStore> store(new SqliteResultStore(file, options, why, probed->first));
            store->m_schemaVersion = probed->second;
            return store;
        }
    }

    if (!QDir().mkpath(info.absolutePath()))
        return fail(QStringLiteral("%1: cannot create the directory %2").arg(file, info.absolutePath()));
    if (!info.exists())
        if (const QString why = sqlitefile::whyNotWritable(file); !why.isEmpty())
            return fail(QStringLiteral("%1: cannot create the result database: %2").arg(file, why));
    if (auto header = SqliteSchema::checkFileHeader(file); !header)
        return std::unexpected(header.error());

    // An existing file is first only read, so a refused one (newer schema,
    // someone else's database, a damaged one) is left as it was. (Not through
    // QSQLITE_OPEN_READONLY: a read-only connection to a WAL database leaves
    // -wal/-shm files behind, while the last read-write connection removes them.)
    if (info.exists() && info.size() > 0) {
        const QString name = QStringLiteral("trainyard-store-probe-%1").arg(++g_instances);
        Result<int> probed = 0;
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
            db.setDatabaseName(file);
            db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(options.busyTimeoutMs));
            if (!db.open())
                probed = fail(
                        QStringLiteral("%1: cannot open the result database: %2").arg(file, db.lastError().text()));
            else
                probed = SqliteSchema::probeVersion(db, file);
            db.close();
        }
        QSqlDatabase::removeDatabase(name);
        if (!probed)
            return std::unexpected(probed.error());
    }

    std::unique_ptr<SqliteResultStore> store(new SqliteResultStore(file, options, QString(), QString()));
    const Result<int> version = store->m_writer->startWriter();
    if (!version)
        return std::unexpected(version.error());
    store->m_schemaVersion = *version;
    return store;
}

SqliteResultStore::SqliteResultStore(QString path, SqliteStoreOptions options, QString readOnlyReason, QString readUri)
    : m_path(std::move(path))
    , m_options(options)
    , m_readOnlyReason(std::move(readOnlyReason))
    , m_readUri(std::move(readUri))
    , m_instance(++g_instances)
{
    if (!m_readOnlyReason.isEmpty())
        return; // no writer
    auto onBatch = [this](const SqliteWriter::BatchOutcome& outcome) {
        if (!outcome.damage.isEmpty())
            noteDamage(outcome.damage);
        // Runs on the writer thread, after the commit: hand over to the
        // store's own thread, so receivers see a normal signal.
        QMetaObject::invokeMethod(
                this,
                [this, outcome] {
                    if (!outcome.changedRuns.isEmpty())
                        Q_EMIT runsChanged(outcome.changedRuns);
                    for (const auto& [run, count] : outcome.metricCounts)
                        Q_EMIT metricsAppended(run, count);
                    if (!outcome.error.isEmpty())
                        Q_EMIT writeFailed(outcome.error);
                },
                Qt::QueuedConnection);
    };
    m_writer = std::make_unique<SqliteWriter>(
            m_path, QStringLiteral("trainyard-store-%1-writer").arg(m_instance), m_options, std::move(onBatch));
}

SqliteResultStore::~SqliteResultStore()
{
    m_writer.reset(); // commits what is queued
    QMutexLocker lock(&m_readMutex);
    // Closed here even when another thread opened them: removeDatabase()
    // drops the last reference, which closes the SQLite handle.
    for (const QString& name : std::as_const(m_readConnections))
        QSqlDatabase::removeDatabase(name);
}

Result<std::unique_ptr<MetricColumnReader>> SqliteResultStore::openColumnReader() const
{
    if (isReadOnly())
        return std::unique_ptr<MetricColumnReader>();
    auto opened = SqliteMetricColumns::open(m_path);
    if (!opened)
        return std::unexpected(opened.error());
    return std::unique_ptr<MetricColumnReader>(std::move(*opened));
}

QString SqliteResultStore::damage() const
{
    QMutexLocker lock(&m_refusalMutex);
    return m_damage;
}

void SqliteResultStore::noteDamage(const QString& sqliteText) const
{
    QString message;
    {
        QMutexLocker lock(&m_refusalMutex);
        if (!m_damage.isEmpty())
            return;
        m_damage = message = sqlitefile::damagedMessage(m_path, sqliteText);
    }
    qCWarning(lcStore, "%s", qUtf8Printable(message));
    auto* self = const_cast<SqliteResultStore*>(this);
    QMetaObject::invokeMethod(
            self, [self, message] { Q_EMIT self->damaged(message); }, Qt::QueuedConnection);
}

void SqliteResultStore::readFailed(const QString& what, const QSqlError& error) const
{
    if (sqlitefile::isDamage(error)) {
        noteDamage(error.databaseText());
        return;
    }
    if (!damage().isEmpty()) // explained once already; what fails after it follows from it
        return;
    qCWarning(lcStore, "%s: %s: %s", qUtf8Printable(m_path), qUtf8Printable(what), qUtf8Printable(error.text()));
}

std::function<void(const QString&, const QSqlError&)> SqliteResultStore::readErrorSink() const
{
    return [this](const QString& what, const QSqlError& error) { readFailed(what, error); };
}

std::optional<QString> SqliteResultStore::writeRefusal() const
{
    if (!m_readOnlyReason.isEmpty())
        return QStringLiteral("%1: cannot write the result database, it is open read-only: %2")
                .arg(m_path, m_readOnlyReason);
    if (QString d = damage(); !d.isEmpty())
        return QStringLiteral("not written: %1").arg(d);
    return std::nullopt;
}

bool SqliteResultStore::refuseAsyncWrite() const
{
    const std::optional<QString> why = writeRefusal();
    if (!why)
        return false;
    bool first = false;
    {
        QMutexLocker lock(&m_refusalMutex);
        first = !m_warnedRefusal;
        m_warnedRefusal = true;
        if (!m_unflushedRefusal)
            m_unflushedRefusal = *why;
    }
    // Damage was explained already (noteDamage); a read-only store says so
    // at its first refused write, not at each one.
    if (first && damage().isEmpty()) {
        qCWarning(lcStore, "%s (this and later writes are dropped)", qUtf8Printable(*why));
        auto* self = const_cast<SqliteResultStore*>(this);
        QMetaObject::invokeMethod(
                self, [self, message = *why] { Q_EMIT self->writeFailed(message); }, Qt::QueuedConnection);
    }
    return true;
}

QSqlDatabase SqliteResultStore::readConnection() const
{
    const QString name = QStringLiteral("trainyard-store-%1-read-%2").arg(m_instance).arg(threadSerial());
    if (QSqlDatabase::contains(name))
        return QSqlDatabase::database(name, false);
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    {
        QMutexLocker lock(&m_readMutex);
        m_readConnections.insert(name);
    }
    db.setDatabaseName(m_path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(m_options.busyTimeoutMs));
    if (!m_readUri.isEmpty()) {
        db.setDatabaseName(m_readUri);
        db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_URI;QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=%1")
                                     .arg(m_options.busyTimeoutMs));
    }
    if (!db.open())
        readFailed(QStringLiteral("cannot open a read connection"), db.lastError());
    db.setNumericalPrecisionPolicy(QSql::LowPrecisionDouble);
    return db;
}

// ---- writes ----------------------------------------------------------------

Result<RunId> SqliteResultStore::createRun(const RunRecord& r, const QMap<QString, QString>& params)
{
    if (auto why = writeRefusal())
        return fail(*why);
    // Refused before anything is queued, so that no batch fails for it.
    for (const RunGroupMembership& m : r.groups)
        if (!group(m.group))
            return fail(QStringLiteral("%1: cannot create run \"%2\": there is no run group %3")
                                .arg(m_path, r.name)
                                .arg(m.group),
                    ErrorKind::InvalidInput);
    auto done = std::make_shared<std::promise<Result<RunId>>>();
    auto future = done->get_future();
    m_writer->enqueue(storeop::CreateRun{r, params, std::move(done)}, /*urgent=*/true);
    return future.get();
}

void SqliteResultStore::updateRun(const RunRecord& r)
{
    if (refuseAsyncWrite())
        return;
    m_writer->enqueue(storeop::UpdateRun{r});
}

Result<void> SqliteResultStore::annotateRun(RunId run, const RunAnnotation& a)
{
    if (auto why = writeRefusal())
        return fail(*why);
    RunAnnotation clean = a;
    if (clean.name) {
        clean.name = clean.name->trimmed();
        if (clean.name->isEmpty())
            return fail(QStringLiteral("run %1: a run's name cannot be empty").arg(run), ErrorKind::InvalidInput);
    }
    if (clean.tags) {
        QStringList tags;
        for (const QString& t : std::as_const(*clean.tags)) {
            const QString tag = t.trimmed();
            if (tag.isEmpty())
                continue;
            if (tag.contains(u',') || tag.contains(QRegularExpression(QStringLiteral("\\s"))))
                return fail(QStringLiteral("run %1: tag '%2' has a comma or a space in it").arg(run).arg(tag),
                        ErrorKind::InvalidInput);
            if (!tags.contains(tag))
                tags << tag;
        }
        clean.tags = tags;
    }
    if (auto existing = this->run(run); !existing)
        return std::unexpected(existing.error());
    m_writer->enqueue(storeop::AnnotateRun{run, std::move(clean)}, /*urgent=*/true);
    return flush();
}

void SqliteResultStore::appendMetrics(QList<MetricPoint> points)
{
    if (points.isEmpty() || refuseAsyncWrite())
        return;
    m_writer->enqueue(storeop::AppendMetrics{std::move(points)});
}

void SqliteResultStore::setConsoleOffset(RunId run, qint64 offset)
{
    if (refuseAsyncWrite())
        return;
    m_writer->enqueue(storeop::SetConsoleOffset{run, offset});
}

void SqliteResultStore::beginIngestion(RunId run)
{
    if (!m_writer)
        return; // read-only: nothing is ingested into it
    m_writer->enqueue(storeop::BeginIngestion{run});
}

void SqliteResultStore::deleteRun(RunId run)
{
    if (refuseAsyncWrite())
        return;
    m_writer->enqueue(storeop::DeleteRun{run});
}

void SqliteResultStore::addArtifact(const ArtifactRecord& a)
{
    if (refuseAsyncWrite())
        return;
    m_writer->enqueue(storeop::AddArtifact{a});
}

void SqliteResultStore::setParams(RunId run, const QMap<QString, QString>& params)
{
    if (!params.isEmpty() && !refuseAsyncWrite())
        m_writer->enqueue(storeop::SetParams{run, params});
}

void SqliteResultStore::addNotice(const RunNotice& n)
{
    if (refuseAsyncWrite())
        return;
    m_writer->enqueue(storeop::AddNotice{n});
}

Result<void> SqliteResultStore::addNode(const NodeRecord& n)
{
    if (auto why = writeRefusal())
        return fail(*why);
    if (n.name.trimmed().isEmpty())
        return fail(QStringLiteral("%1: a node needs a name").arg(m_path));
    if (n.host.trimmed().isEmpty())
        return fail(QStringLiteral("%1: node %2 needs a host").arg(m_path, n.name));
    m_writer->enqueue(storeop::PutNode{n}, /*urgent=*/true);
    return flush();
}

Result<void> SqliteResultStore::removeNode(const QString& name)
{
    if (auto why = writeRefusal())
        return fail(*why);
    bool known = false;
    for (const NodeRecord& n : nodes())
        known = known || n.name == name;
    if (!known)
        return fail(QStringLiteral("%1: no node named '%2'").arg(m_path, name));
    m_writer->enqueue(storeop::RemoveNode{name}, /*urgent=*/true);
    return flush();
}

void SqliteResultStore::setNodeFacts(const QString& name, const QString& facts)
{
    if (writeRefusal())
        return;
    m_writer->enqueue(storeop::SetNodeFacts{name, facts});
}

Result<void> SqliteResultStore::setNodeLabels(const QString& name, const QStringList& labels)
{
    if (auto why = writeRefusal())
        return fail(*why);
    for (const QString& l : labels)
        if (const auto bad = nodeLabelError(l))
            return fail(QStringLiteral("%1: node %2: %3").arg(m_path, name, *bad));
    if (name != u"local") {
        bool known = false;
        for (const NodeRecord& n : nodes())
            known = known || n.name == name;
        if (!known)
            return fail(QStringLiteral("%1: no node named '%2'").arg(m_path, name));
    }
    m_writer->enqueue(storeop::SetNodeLabels{name, labels}, /*urgent=*/true);
    return flush();
}

Result<void> SqliteResultStore::putMemoEntry(const MemoEntryRecord& e)
{
    if (auto why = writeRefusal())
        return fail(*why);
    if (e.key.isEmpty())
        return fail(QStringLiteral("%1: a memo entry needs a key").arg(m_path));
    if (e.step.isEmpty())
        return fail(QStringLiteral("%1: memo entry %2 needs a step").arg(m_path, e.key));
    m_writer->enqueue(storeop::PutMemoEntry{e}, /*urgent=*/true);
    return flush();
}

void SqliteResultStore::putPipeline(const PipelineRecord& p)
{
    if (p.id <= 0) {
        qWarning("%s: a pipeline needs an id > 0 (got %lld); not stored", qPrintable(m_path), qlonglong(p.id));
        return;
    }
    if (refuseAsyncWrite())
        return;
    m_writer->enqueue(storeop::PutPipeline{p});
}

Result<RunGroupId> SqliteResultStore::createGroup(const RunGroupRecord& g)
{
    if (auto why = writeRefusal())
        return fail(*why);
    if (g.parent > 0 && !group(g.parent))
        return fail(QStringLiteral("%1: cannot create %2 group \"%3\": there is no group %4 to be part of")
                            .arg(m_path, runGroupKindName(g.kind), g.name)
                            .arg(g.parent),
                ErrorKind::InvalidInput);
    auto done = std::make_shared<std::promise<Result<RunId>>>();
    auto future = done->get_future();
    m_writer->enqueue(storeop::CreateGroup{g, std::move(done)}, /*urgent=*/true);
    return future.get();
}

Result<void> SqliteResultStore::joinGroup(RunId run, const RunGroupMembership& m)
{
    if (auto why = writeRefusal())
        return fail(*why);
    if (auto existing = this->run(run); !existing)
        return std::unexpected(existing.error());
    if (!group(m.group))
        return fail(QStringLiteral("%1: run %2: cannot add it to group %3: there is no such group")
                            .arg(m_path)
                            .arg(run)
                            .arg(m.group),
                ErrorKind::InvalidInput);
    m_writer->enqueue(storeop::JoinGroup{run, m}, /*urgent=*/true);
    return flush();
}

Result<void> SqliteResultStore::recordMemoHit(const MemoHitRecord& h)
{
    if (auto why = writeRefusal())
        return fail(*why);
    m_writer->enqueue(storeop::RecordMemoHit{h}, /*urgent=*/true);
    return flush();
}

Result<void> SqliteResultStore::removeMemoEntries(const QStringList& keys)
{
    if (auto why = writeRefusal())
        return fail(*why);
    if (keys.isEmpty())
        return {};
    m_writer->enqueue(storeop::RemoveMemoEntries{keys}, /*urgent=*/true);
    return flush();
}

Result<void> SqliteResultStore::flush()
{
    if (m_writer) {
        m_writer->waitCommitted(m_writer->lastQueued());
        if (auto error = m_writer->takeError())
            return fail(*error);
    }
    QMutexLocker lock(&m_refusalMutex);
    if (auto refused = std::exchange(m_unflushedRefusal, std::nullopt))
        return fail(*refused);
    return {};
}

qint64 SqliteResultStore::transactionsCommitted() const
{
    return m_writer ? m_writer->transactionsCommitted() : 0;
}

// ---- reads -----------------------------------------------------------------

namespace {
// A run's memberships: run id, then what membershipFromRow() reads.
const QString kMembershipSelect = QStringLiteral("SELECT m.run_id, m.group_id, g.kind, m.position, m.role"
                                                 " FROM run_group_members m JOIN run_groups g ON g.id = m.group_id");

// Columns 1..4 of kMembershipSelect; nullopt for a kind this version does
// not know (a newer Trainyard's), which is left out.
std::optional<RunGroupMembership> membershipFromRow(const QSqlQuery& q)
{
    const auto kind = runGroupKindFromName(q.value(2).toString());
    if (!kind)
        return std::nullopt;
    return RunGroupMembership{q.value(1).toLongLong(), *kind, q.value(3).toInt(), q.value(4).toString()};
}
} // namespace

Result<RunRecord> SqliteResultStore::run(RunId id) const
{
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    ReadTransaction tx(db);
    QSqlQuery q = prepared(db, failed, QStringLiteral("SELECT %1 FROM runs WHERE id = ?").arg(kRunColumns));
    q.addBindValue(QVariant::fromValue<qint64>(id));
    if (!q.exec() || (!q.next() && q.lastError().isValid())) {
        failed(QStringLiteral("cannot read run %1").arg(id), q.lastError());
        if (sqlitefile::isDamage(q.lastError()) || !damage().isEmpty())
            return fail(damage());
        return fail(QStringLiteral("%1: cannot read run %2: %3").arg(m_path).arg(id).arg(q.lastError().text()));
    }
    if (!q.isValid())
        return fail(QStringLiteral("%1: no run %2").arg(m_path).arg(id), ErrorKind::NotFound);
    RunRecord r = runFromRow(q);
    q.finish();
    QSqlQuery t = prepared(db, failed, QStringLiteral("SELECT tag FROM tags WHERE run_id = ? ORDER BY position"));
    t.addBindValue(QVariant::fromValue<qint64>(id));
    if (t.exec())
        while (t.next())
            r.tags.append(t.value(0).toString());
    if (t.lastError().isValid()) {
        failed(QStringLiteral("cannot read the tags of run %1").arg(id), t.lastError());
        if (!damage().isEmpty())
            return fail(damage());
        return fail(
                QStringLiteral("%1: cannot read the tags of run %2: %3").arg(m_path).arg(id).arg(t.lastError().text()));
    }
    t.finish();
    QSqlQuery g
            = prepared(db, failed, QStringLiteral("%1 WHERE m.run_id = ? ORDER BY m.group_id").arg(kMembershipSelect));
    g.addBindValue(QVariant::fromValue<qint64>(id));
    if (g.exec())
        while (g.next())
            if (auto m = membershipFromRow(g))
                r.groups.append(*m);
    if (g.lastError().isValid()) {
        failed(QStringLiteral("cannot read the groups of run %1").arg(id), g.lastError());
        if (!damage().isEmpty())
            return fail(damage());
        return fail(QStringLiteral("%1: cannot read the groups of run %2: %3")
                            .arg(m_path)
                            .arg(id)
                            .arg(g.lastError().text()));
    }
    return r;
}

namespace {
// The condition of the partial index runs_unfinished, word for word (SQLite
// uses a partial index only for a WHERE that contains its condition).
const QString kUnfinished = QStringLiteral("state NOT IN ('succeeded', 'failed', 'cancelled')");

// The SQL reading the runs of `selections` ("FROM runs WHERE ..." texts,
// joined by UNION ALL; one empty selection: every run) and their tags.
struct RunsSql {
    QString runs;
    QString tags;
    QString groups; // kMembershipSelect's columns
};

RunsSql runsSql(const QStringList& selections)
{
    if (selections.size() == 1 && selections.front().isEmpty())
        return {QStringLiteral("SELECT %1 FROM runs ORDER BY created_at DESC, id DESC").arg(kRunColumns),
                QStringLiteral("SELECT run_id, tag FROM tags ORDER BY run_id, position"),
                QStringLiteral("%1 ORDER BY m.run_id, m.group_id").arg(kMembershipSelect)};
    QStringList rowSelects;
    QStringList idSelects;
    for (const QString& from : selections) {
        rowSelects << QStringLiteral("SELECT %1 FROM runs %2").arg(kRunColumns, from);
        idSelects << QStringLiteral("SELECT id FROM runs %1").arg(from);
    }
    // No ORDER BY over the compound: it would make SQLite walk an index in
    // created_at order instead of the selections' own (sorted afterwards).
    const QString ids = idSelects.join(QStringLiteral(" UNION ALL "));
    return {rowSelects.join(QStringLiteral(" UNION ALL ")),
            QStringLiteral("SELECT run_id, tag FROM tags WHERE run_id IN (%1) ORDER BY run_id, position").arg(ids),
            QStringLiteral("%1 WHERE m.run_id IN (%2) ORDER BY m.run_id, m.group_id").arg(kMembershipSelect, ids)};
}

QStringList unfinishedSelections(bool endedWindow)
{
    QStringList selections{QStringLiteral("WHERE ") + kUnfinished};
    if (endedWindow) // the complement of kUnfinished, so no run is read twice
        selections << QStringLiteral(
                "WHERE finished_at >= ? AND state IN ('succeeded', 'failed', 'cancelled') AND gpus <> '[]'");
    return selections;
}

// The runs of `selections` (see runsSql; all of them together using `binds`
// in order) with their tags, newest first.
QList<RunRecord> readRuns(
        QSqlDatabase& db, const ReadFailed& failed, const QStringList& selections, const QVariantList& binds)
{
    QList<RunRecord> out;
    ReadTransaction tx(db);
    const RunsSql sql = runsSql(selections);
    QSqlQuery q = prepared(db, failed, sql.runs);
    for (const QVariant& b : binds)
        q.addBindValue(b);
    if (!q.exec()) {
        failed(QStringLiteral("cannot read runs"), q.lastError());
        return out;
    }
    while (q.next())
        out.append(runFromRow(q));
    checkSteps(q, failed, QStringLiteral("cannot read runs"));
    const bool everyRun = selections.size() == 1 && selections.front().isEmpty();
    if (!everyRun) // runsSql's ORDER BY is only for every run
        std::sort(out.begin(), out.end(), [](const RunRecord& a, const RunRecord& b) {
            return a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.id > b.id;
        });
    QHash<RunId, qsizetype> index;
    index.reserve(out.size());
    for (qsizetype i = 0; i < out.size(); ++i)
        index.insert(out[i].id, i);
    QSqlQuery t = prepared(db, failed, sql.tags);
    if (!everyRun)
        for (const QVariant& b : binds)
            t.addBindValue(b);
    if (!t.exec()) {
        failed(QStringLiteral("cannot read tags"), t.lastError());
        return out;
    }
    while (t.next()) {
        const auto it = index.constFind(t.value(0).toLongLong());
        if (it != index.cend())
            out[*it].tags.append(t.value(1).toString());
    }
    checkSteps(t, failed, QStringLiteral("cannot read tags"));
    t.finish();
    QSqlQuery g = prepared(db, failed, sql.groups);
    if (!everyRun)
        for (const QVariant& b : binds)
            g.addBindValue(b);
    if (!g.exec()) {
        failed(QStringLiteral("cannot read run groups"), g.lastError());
        return out;
    }
    while (g.next()) {
        const auto it = index.constFind(g.value(0).toLongLong());
        if (it != index.cend())
            if (auto m = membershipFromRow(g))
                out[*it].groups.append(*m);
    }
    checkSteps(g, failed, QStringLiteral("cannot read run groups"));
    return out;
}
} // namespace

QList<RunRecord> SqliteResultStore::runs() const
{
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    return readRuns(db, failed, {QString()}, {});
}

QList<RunRecord> SqliteResultStore::unfinishedRuns(const QDateTime& endedSince) const
{
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QVariantList binds;
    if (endedSince.isValid())
        binds << QVariant::fromValue<qint64>(endedSince.toMSecsSinceEpoch());
    return readRuns(db, failed, unfinishedSelections(endedSince.isValid()), binds);
}

QList<RunRecord> SqliteResultStore::endedRunsAfter(RunId afterId) const
{
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    return readRuns(db, failed,
            {QStringLiteral("WHERE id > ? AND state IN ('succeeded', 'failed', 'cancelled') AND gpus <> '[]'")},
            {QVariant::fromValue<qint64>(afterId)});
}

QStringList SqliteResultStore::unfinishedRunsSql(bool endedWindow)
{
    const RunsSql sql = runsSql(unfinishedSelections(endedWindow));
    return {sql.runs, sql.tags, sql.groups};
}

QMap<QString, QString> SqliteResultStore::params(RunId run) const
{
    QMap<QString, QString> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed, QStringLiteral("SELECT key, value FROM params WHERE run_id = ?"));
    q.addBindValue(QVariant::fromValue<qint64>(run));
    if (!q.exec()) {
        failed(QStringLiteral("run %1: cannot read params").arg(run), q.lastError());
        return out;
    }
    while (q.next())
        out.insert(q.value(0).toString(), q.value(1).toString());
    checkSteps(q, failed, QStringLiteral("run %1: cannot read params").arg(run));
    return out;
}

QList<MetricPoint> SqliteResultStore::metrics(RunId run, const QString& key) const
{
    return readMetrics(run, key, false);
}

QList<MetricPoint> SqliteResultStore::allMetrics(RunId run, const QString& key) const
{
    return readMetrics(run, key, true);
}

QList<MetricPoint> SqliteResultStore::readMetrics(RunId run, const QString& key, bool withSuperseded) const
{
    QList<MetricPoint> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    ReadTransaction tx(db);
    const auto keys = keysOf(db, run, failed);
    QSqlQuery q = prepared(db, failed,
            withSuperseded
                    ? QStringLiteral("SELECT step, epoch, wall_ms, value, kind, source, superseded, id FROM metrics"
                                     " WHERE key_id = ? ORDER BY step, id")
                    : QStringLiteral("SELECT step, epoch, wall_ms, value, kind, source, superseded, id FROM metrics"
                                     " WHERE key_id = ? AND superseded = 0 ORDER BY step, id"));
    QSqlQuery b = prepared(db, failed,
            withSuperseded ? QStringLiteral("SELECT id, source, count, live, points FROM metric_blocks"
                                            " WHERE key_id = ? ORDER BY source, first_id")
                           : QStringLiteral("SELECT id, source, count, live, points FROM metric_blocks"
                                            " WHERE key_id = ? AND live > 0 ORDER BY source, first_id"));
    std::vector<LoadedBlock> blocks;
    std::vector<BlockPointRef> refs;
    for (const auto& [keyId, name] : keys) {
        if (!key.isEmpty() && name != key)
            continue;
        // The key's block points, as (step, id) references sorted like the rows.
        blocks.clear();
        refs.clear();
        b.bindValue(0, QVariant::fromValue<qint64>(keyId));
        if (!b.exec()) {
            failed(QStringLiteral("run %1: cannot read the blocks of metric %2").arg(run).arg(name), b.lastError());
        } else {
            while (b.next()) {
                auto block = loadBlock(b, m_path, run, name);
                if (!block)
                    continue;
                const int upTo = withSuperseded ? block->view.count() : block->live;
                const int index = int(blocks.size());
                for (int i = 0; i < upTo; ++i)
                    refs.push_back({block->view.step(i), block->view.id(i), index, i});
                blocks.push_back(std::move(*block));
            }
            checkSteps(b, failed, QStringLiteral("run %1: cannot read the blocks of metric %2").arg(run).arg(name));
            b.finish();
            if (!std::is_sorted(refs.begin(), refs.end()))
                std::sort(refs.begin(), refs.end());
        }
        auto takeBlockPointsBefore = [&](std::size_t& next, qint64 step, qint64 id) {
            for (; next < refs.size() && (refs[next].step < step || (refs[next].step == step && refs[next].id < id));
                    ++next)
                out.append(pointFromBlock(blocks[std::size_t(refs[next].block)], refs[next].index, run, name));
        };
        std::size_t next = 0;

        q.bindValue(0, QVariant::fromValue<qint64>(keyId));
        if (!q.exec()) {
            failed(QStringLiteral("run %1: cannot read metric %2").arg(run).arg(name), q.lastError());
        } else {
            while (q.next()) {
                if (next < refs.size())
                    takeBlockPointsBefore(next, q.value(0).toLongLong(), q.value(7).toLongLong());
                out.append(pointFromRow(q, run, name));
            }
            checkSteps(q, failed, QStringLiteral("run %1: cannot read metric %2").arg(run).arg(name));
            q.finish();
        }
        for (; next < refs.size(); ++next) // after the key's last row
            out.append(pointFromBlock(blocks[std::size_t(refs[next].block)], refs[next].index, run, name));
    }
    return out;
}

QStringList SqliteResultStore::metricKeys(RunId run) const
{
    QStringList out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    for (const auto& [id, name] : keysOf(db, run, failed))
        out.append(name);
    return out;
}

QMap<QString, MetricPoint> SqliteResultStore::latestMetrics(RunId run) const
{
    QMap<QString, MetricPoint> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    ReadTransaction tx(db);
    const auto keys = keysOf(db, run, failed);
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT step, epoch, wall_ms, value, kind, source, superseded, id FROM metrics"
                           " WHERE key_id = ? AND superseded = 0 ORDER BY step DESC, id DESC LIMIT 1"));
    // Per source, the live block with the largest first_id holds the source's
    // highest current block step at index live - 1 (current points of a
    // series have increasing steps in arrival order). Its last_step/last_id
    // bound that point's (step, id), so the BLOB is read only when the block
    // can beat the rows.
    QSqlQuery b = prepared(db, failed,
            QStringLiteral("SELECT id, last_step, last_id FROM metric_blocks"
                           " WHERE key_id = ? AND source = ? AND live > 0 ORDER BY first_id DESC LIMIT 1"));
    QSqlQuery blob = prepared(
            db, failed, QStringLiteral("SELECT id, source, count, live, points FROM metric_blocks WHERE id = ?"));
    for (const auto& [keyId, name] : keys) {
        std::optional<MetricPoint> best;
        qint64 bestStep = 0, bestId = 0;
        q.bindValue(0, QVariant::fromValue<qint64>(keyId));
        if (!q.exec()) {
            failed(QStringLiteral("run %1: cannot read metric %2").arg(run).arg(name), q.lastError());
            continue;
        }
        if (q.next()) {
            best = pointFromRow(q, run, name);
            bestStep = best->step;
            bestId = q.value(7).toLongLong();
        }
        q.finish();
        for (const MetricSource source : {MetricSource::Console, MetricSource::File}) {
            b.bindValue(0, QVariant::fromValue<qint64>(keyId));
            b.bindValue(1, int(source));
            if (!b.exec()) {
                failed(QStringLiteral("run %1: cannot read the blocks of metric %2").arg(run).arg(name), b.lastError());
                continue;
            }
            if (!b.next())
                continue;
            const qint64 blockId = b.value(0).toLongLong();
            const qint64 lastStep = b.value(1).toLongLong();
            const qint64 lastId = b.value(2).toLongLong();
            b.finish();
            if (best && std::pair(lastStep, lastId) < std::pair(bestStep, bestId))
                continue;
            blob.bindValue(0, QVariant::fromValue<qint64>(blockId));
            if (!blob.exec() || !blob.next()) {
                failed(QStringLiteral("run %1: cannot read block %2 of metric %3").arg(run).arg(blockId).arg(name),
                        blob.lastError());
                continue;
            }
            const auto block = loadBlock(blob, m_path, run, name);
            blob.finish();
            if (!block || block->live == 0)
                continue;
            const int i = block->live - 1;
            if (!best || std::pair(block->view.step(i), block->view.id(i)) > std::pair(bestStep, bestId)) {
                best = pointFromBlock(*block, i, run, name);
                bestStep = block->view.step(i);
                bestId = block->view.id(i);
            }
        }
        if (best)
            out.insert(name, *best);
    }
    return out;
}

QList<MetricRestart> SqliteResultStore::metricRestarts(RunId run, const QString& key) const
{
    QList<MetricRestart> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    ReadTransaction tx(db);
    const auto keys = keysOf(db, run, failed);
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT step, wall_ms, superseded, source FROM metric_restarts"
                           " WHERE key_id = ? ORDER BY id"));
    for (const auto& [keyId, name] : keys) {
        if (!key.isEmpty() && name != key)
            continue;
        q.bindValue(0, QVariant::fromValue<qint64>(keyId));
        if (!q.exec()) {
            failed(QStringLiteral("run %1: cannot read the restarts of metric %2").arg(run).arg(name), q.lastError());
            continue;
        }
        while (q.next()) {
            MetricRestart r;
            r.run = run;
            r.key = name;
            r.step = q.value(0).toLongLong();
            r.wallTimeMs = q.value(1).toLongLong();
            r.superseded = q.value(2).toInt();
            r.source = q.value(3).toInt() == 1 ? MetricSource::File : MetricSource::Console;
            out.append(r);
        }
        checkSteps(q, failed, QStringLiteral("run %1: cannot read the restarts of metric %2").arg(run).arg(name));
        q.finish();
    }
    return out;
}

QList<ArtifactRecord> SqliteResultStore::artifacts(RunId run) const
{
    QList<ArtifactRecord> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT path, size, sha256, created_at FROM artifacts"
                           " WHERE run_id = ? ORDER BY path"));
    q.addBindValue(QVariant::fromValue<qint64>(run));
    if (!q.exec()) {
        failed(QStringLiteral("run %1: cannot read artifacts").arg(run), q.lastError());
        return out;
    }
    while (q.next()) {
        ArtifactRecord a;
        a.run = run;
        a.path = q.value(0).toString();
        a.size = q.value(1).toLongLong();
        a.sha256 = q.value(2).toString();
        a.createdAt = sqlcodec::timeFromSql(q.value(3));
        out.append(a);
    }
    checkSteps(q, failed, QStringLiteral("run %1: cannot read artifacts").arg(run));
    return out;
}

QList<RunNotice> SqliteResultStore::notices(RunId run) const
{
    QList<RunNotice> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q
            = prepared(db, failed, QStringLiteral("SELECT at, text FROM run_notices WHERE run_id = ? ORDER BY at, id"));
    q.addBindValue(QVariant::fromValue<qint64>(run));
    if (!q.exec()) {
        failed(QStringLiteral("run %1: cannot read notices").arg(run), q.lastError());
        return out;
    }
    while (q.next())
        out.append(RunNotice{run, sqlcodec::timeFromSql(q.value(0)), q.value(1).toString()});
    checkSteps(q, failed, QStringLiteral("run %1: cannot read notices").arg(run));
    return out;
}

QMap<RunId, QList<RunNotice>> SqliteResultStore::allNotices() const
{
    QMap<RunId, QList<RunNotice>> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q
            = prepared(db, failed, QStringLiteral("SELECT run_id, at, text FROM run_notices ORDER BY run_id, at, id"));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read notices"), q.lastError());
        return out;
    }
    while (q.next()) {
        const RunId run = q.value(0).toLongLong();
        out[run].append(RunNotice{run, sqlcodec::timeFromSql(q.value(1)), q.value(2).toString()});
    }
    checkSteps(q, failed, QStringLiteral("cannot read notices"));
    return out;
}

Result<RunChanges> SqliteResultStore::runChangesSince(qint64 afterSeq) const
{
    if (m_schemaVersion < 10)
        return fail(QStringLiteral("%1: schema version %2 records no run changes (version 10 does)")
                            .arg(m_path)
                            .arg(m_schemaVersion));
    RunChanges out;
    out.seq = afterSeq;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    ReadTransaction tx(db); // the changes and the rows they name from one snapshot
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT c.run_id, c.seq, r.id IS NULL FROM run_changes c"
                           " LEFT JOIN runs r ON r.id = c.run_id WHERE c.seq > ? ORDER BY c.run_id"));
    q.addBindValue(QVariant::fromValue<qint64>(afterSeq));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read run changes"), q.lastError());
        return fail(QStringLiteral("%1: cannot read run changes: %2").arg(m_path, q.lastError().text()));
    }
    while (q.next()) {
        out.seq = std::max(out.seq, q.value(1).toLongLong());
        (q.value(2).toBool() ? out.removed : out.changed).append(q.value(0).toLongLong());
    }
    if (q.lastError().isValid()) {
        failed(QStringLiteral("cannot read run changes"), q.lastError());
        return fail(QStringLiteral("%1: cannot read run changes: %2").arg(m_path, q.lastError().text()));
    }
    return out;
}

namespace {

constexpr const char* kMemoColumns = "key, pipeline, step, %1, created_at, last_hit_at, hit_count, run_id, outputs,"
                                     " output_params, output_bytes";

MemoEntryRecord memoEntryFromRow(const QSqlQuery& q)
{
    MemoEntryRecord e;
    e.key = q.value(0).toString();
    e.pipeline = q.value(1).toString();
    e.step = q.value(2).toString();
    e.components = q.value(3).toString();
    e.createdAt = sqlcodec::timeFromSql(q.value(4));
    e.lastHitAt = sqlcodec::timeFromSql(q.value(5));
    e.hitCount = q.value(6).toLongLong();
    e.run = q.value(7).toLongLong();
    e.outputs = q.value(8).toString();
    e.outputParams = q.value(9).toString();
    e.outputBytes = q.value(10).toLongLong();
    return e;
}

} // namespace

std::optional<MemoEntryRecord> SqliteResultStore::memoEntry(const QString& key) const
{
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT %1 FROM memo_entries WHERE key = ?")
                    .arg(QString::fromLatin1(kMemoColumns).arg(QStringLiteral("components"))));
    q.addBindValue(key);
    if (!q.exec()) {
        failed(QStringLiteral("cannot read memo entry %1").arg(key), q.lastError());
        return std::nullopt;
    }
    if (!q.next()) {
        checkSteps(q, failed, QStringLiteral("cannot read memo entry %1").arg(key));
        return std::nullopt;
    }
    return memoEntryFromRow(q);
}

QList<MemoEntryRecord> SqliteResultStore::memoEntries(const MemoEntryFilter& filter) const
{
    QList<MemoEntryRecord> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QStringList where;
    if (filter.pipeline)
        where << QStringLiteral("pipeline = ?");
    if (filter.step)
        where << QStringLiteral("step = ?");
    const QString sql
            = QStringLiteral("SELECT %1 FROM memo_entries%2 ORDER BY created_at DESC, key DESC%3")
                      .arg(QString::fromLatin1(kMemoColumns)
                                      .arg(filter.withComponents ? QStringLiteral("components") : QStringLiteral("''")),
                              where.isEmpty() ? QString()
                                              : QStringLiteral(" WHERE ") + where.join(QStringLiteral(" AND ")),
                              filter.limit >= 0 ? QStringLiteral(" LIMIT %1").arg(filter.limit) : QString());
    QSqlQuery q = prepared(db, failed, sql);
    if (filter.pipeline)
        q.addBindValue(sqlcodec::textToSql(*filter.pipeline));
    if (filter.step)
        q.addBindValue(sqlcodec::textToSql(*filter.step));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read memo entries"), q.lastError());
        return out;
    }
    while (q.next())
        out.append(memoEntryFromRow(q));
    checkSteps(q, failed, QStringLiteral("cannot read memo entries"));
    return out;
}

QList<MemoHitRecord> SqliteResultStore::memoHits(const QString& key) const
{
    QList<MemoHitRecord> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT key, at, run_id, pipeline FROM memo_hits WHERE key = ? ORDER BY at, id"));
    q.addBindValue(key);
    if (!q.exec()) {
        failed(QStringLiteral("cannot read the hits of memo entry %1").arg(key), q.lastError());
        return out;
    }
    while (q.next())
        out.append(MemoHitRecord{q.value(0).toString(), sqlcodec::timeFromSql(q.value(1)), q.value(2).toLongLong(),
                q.value(3).toString()});
    checkSteps(q, failed, QStringLiteral("cannot read the hits of memo entry %1").arg(key));
    return out;
}

namespace {
// A row of "SELECT id, name, state, created_at, ended_at, document FROM pipelines".
PipelineRecord pipelineFromRow(const QSqlQuery& q)
{
    return PipelineRecord{q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString(),
            sqlcodec::timeFromSql(q.value(3)), sqlcodec::timeFromSql(q.value(4)), q.value(5).toString()};
}
} // namespace

QList<PipelineRecord> SqliteResultStore::pipelines(bool runningOnly) const
{
    QList<PipelineRecord> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT id, name, state, created_at, ended_at, document FROM pipelines%1 ORDER BY id")
                    .arg(runningOnly ? QStringLiteral(" WHERE state = 'running'") : QString()));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read the pipelines"), q.lastError());
        return out;
    }
    while (q.next())
        out.append(pipelineFromRow(q));
    checkSteps(q, failed, QStringLiteral("cannot read the pipelines"));
    return out;
}

std::optional<PipelineRecord> SqliteResultStore::pipeline(qint64 id) const
{
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT id, name, state, created_at, ended_at, document FROM pipelines WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) {
        failed(QStringLiteral("cannot read pipeline %1").arg(id), q.lastError());
        return std::nullopt;
    }
    if (!q.next()) {
        checkSteps(q, failed, QStringLiteral("cannot read pipeline %1").arg(id));
        return std::nullopt;
    }
    return pipelineFromRow(q);
}

namespace {
const QString kGroupSelect
        = QStringLiteral("SELECT g.id, g.kind, g.name, g.created_at, COALESCE(g.parent, 0),"
                         " (SELECT COUNT(*) FROM run_group_members m WHERE m.group_id = g.id) FROM run_groups g");

// kGroupSelect's columns; nullopt for a kind this version does not know.
std::optional<RunGroupRecord> groupFromRow(const QSqlQuery& q)
{
    const auto kind = runGroupKindFromName(q.value(1).toString());
    if (!kind)
        return std::nullopt;
    RunGroupRecord g;
    g.id = q.value(0).toLongLong();
    g.kind = *kind;
    g.name = q.value(2).toString();
    g.createdAt = sqlcodec::timeFromSql(q.value(3));
    g.parent = q.value(4).toLongLong();
    g.runs = q.value(5).toInt();
    return g;
}
} // namespace

QList<RunGroupRecord> SqliteResultStore::groups(std::optional<RunGroupKind> kind) const
{
    QList<RunGroupRecord> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("%1%2 ORDER BY g.id")
                    .arg(kGroupSelect, kind ? QStringLiteral(" WHERE g.kind = ?") : QString()));
    if (kind)
        q.addBindValue(runGroupKindName(*kind));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read the run groups"), q.lastError());
        return out;
    }
    while (q.next())
        if (auto g = groupFromRow(q))
            out.append(*g);
    checkSteps(q, failed, QStringLiteral("cannot read the run groups"));
    return out;
}

std::optional<RunGroupRecord> SqliteResultStore::group(RunGroupId id) const
{
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed, QStringLiteral("%1 WHERE g.id = ?").arg(kGroupSelect));
    q.addBindValue(QVariant::fromValue<qint64>(id));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read run group %1").arg(id), q.lastError());
        return std::nullopt;
    }
    if (!q.next()) {
        checkSteps(q, failed, QStringLiteral("cannot read run group %1").arg(id));
        return std::nullopt;
    }
    return groupFromRow(q);
}

QList<std::pair<RunId, RunGroupMembership>> SqliteResultStore::groupMembers(RunGroupId id) const
{
    QList<std::pair<RunId, RunGroupMembership>> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(
            db, failed, QStringLiteral("%1 WHERE m.group_id = ? ORDER BY m.position, m.run_id").arg(kMembershipSelect));
    q.addBindValue(QVariant::fromValue<qint64>(id));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read the runs of group %1").arg(id), q.lastError());
        return out;
    }
    while (q.next())
        if (auto m = membershipFromRow(q))
            out.append({q.value(0).toLongLong(), *m});
    checkSteps(q, failed, QStringLiteral("cannot read the runs of group %1").arg(id));
    return out;
}

QList<NodeRecord> SqliteResultStore::nodes() const
{
    QList<NodeRecord> out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed,
            QStringLiteral("SELECT name, host, user, port, identity_file, agent_path, added_at, labels, kind, facts,"
                           " node_lost_after FROM nodes ORDER BY name"));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read nodes"), q.lastError());
        return out;
    }
    while (q.next()) {
        NodeRecord n;
        n.name = q.value(0).toString();
        n.host = q.value(1).toString();
        n.user = q.value(2).toString();
        n.port = q.value(3).toInt();
        n.identityFile = q.value(4).toString();
        n.agentPath = q.value(5).toString();
        n.addedAt = sqlcodec::timeFromSql(q.value(6));
        const QJsonArray labels = QJsonDocument::fromJson(q.value(7).toString().toUtf8()).array();
        for (const QJsonValue& l : labels)
            n.labels.append(l.toString());
        n.kind = nodeKindFromName(q.value(8).toString()).value_or(NodeKind::Ssh);
        n.facts = q.value(9).toString();
        if (!q.value(10).isNull() && q.value(10).toLongLong() > 0)
            n.nodeLostAfterSec = q.value(10).toLongLong();
        out.append(n);
    }
    checkSteps(q, failed, QStringLiteral("cannot read nodes"));
    return out;
}

QStringList SqliteResultStore::localNodeLabels() const
{
    QStringList out;
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q = prepared(db, failed, QStringLiteral("SELECT value FROM meta WHERE key = 'local_node_labels'"));
    if (!q.exec()) {
        failed(QStringLiteral("cannot read the local node's labels"), q.lastError());
        return out;
    }
    if (q.next())
        for (const QJsonValue& l : QJsonDocument::fromJson(q.value(0).toString().toUtf8()).array())
            out.append(l.toString());
    checkSteps(q, failed, QStringLiteral("cannot read the local node's labels"));
    return out;
}

qint64 SqliteResultStore::dataVersion() const
{
    QSqlDatabase db = readConnection();
    const ReadFailed failed = readErrorSink();
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA data_version")) || !q.next()) {
        failed(QStringLiteral("cannot read data_version"), q.lastError());
        return -1;
    }
    return q.value(0).toLongLong();
}

} // namespace ty
