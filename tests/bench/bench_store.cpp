// Result store metric write throughput (issue 5 goal: >= 1,000,000 points/s).
//
// Inserts N points (default 10,000,000; 4 interleaved keys, like loss / acc /
// lr / grad_norm, in appendMetrics() chunks of 10,000, made before timing)
// through SqliteResultStore -- packed into blocks (the default) and as rows
// only (packBlocks = false) -- and measures from the first append until
// flush() returns. The store has one metric insert path (MetricSeriesWriter:
// libsqlite3 on the writer connection's own handle); beside it, in the same
// run and on the same schema, pragmas and transaction size, baselines written
// here against a plain SQLite file through QtSql: a prepared QSqlQuery with
// bindValue() + exec() per row, and QSqlQuery::execBatch() over column
// lists. The anchors, the sqlite3 shell (no per-row API at all), each in one
// transaction: the same points as single rows via one INSERT ... SELECT FROM
// generate_series (the ceiling for rows only), and exactly the metric_blocks
// rows the blocks came to -- each row's columns as the store wrote them and a
// BLOB of that block's own length (the ceiling for blocks: about 2,400 rows
// for 10M points, of 34-168 KB here, so the rows' ceiling is no ceiling for
// them). Each store path ends as ratios to its anchors from the same run
// (blocks to both). Also times reading one key back (metrics(run, key)), and
// ends with the product's figures as ratios to each baseline.
//
// Usage: bench_store [N] [--dir DIR] [--paths blocks,rows,qtsql-loop,qtsql-batch] [--no-shell]
#include "core/store/SqliteResultStore.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <array>
#include <cstdio>
#include <tuple>

#include <sys/resource.h>

using namespace ty;

namespace {

// Printed in the header; bumped whenever what the benchmark measures changes
// (tests/bench/RESULTS.md marks each figure with the version that made it).
constexpr int kBenchVersion = 5;

const QStringList kKeys{
        QStringLiteral("train/loss"), QStringLiteral("train/acc"), QStringLiteral("lr"), QStringLiteral("grad_norm")};

// User + system CPU seconds of this process (self) or of its waited-for children.
double cpuSeconds(int who)
{
    rusage u{};
    getrusage(who, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Measured {
    QString name;
    double seconds = 0;
    double cpu = 0; // CPU seconds spent (all threads): a fairer figure on a loaded machine
    qint64 points = 0;
    qint64 transactions = 0;
    double readPerSecond = 0;
    // The metric_blocks rows the run left (blocks only), each as the store
    // wrote it but for the BLOB's bytes: the shell's blob ceiling writes
    // exactly these rows, each BLOB of its block's length.
    QList<std::array<qint64, 9>> blocks; // key_id, source, first_id, last_id, count, live, first_step, last_step, bytes
};

// The N points, in appendMetrics() chunks, made before any clock starts:
// this measures the writer, not the producer (which would share the CPUs).
QList<QList<MetricPoint>> makeChunks(RunId run, qint64 n)
{
    constexpr qint64 kChunk = 10'000;
    const qint64 t0 = 1'700'000'000'000;
    QList<QList<MetricPoint>> chunks;
    for (qint64 base = 0; base < n; base += kChunk) {
        QList<MetricPoint> chunk;
        chunk.reserve(kChunk);
        for (qint64 i = base; i < std::min(n, base + kChunk); ++i) {
            MetricPoint p;
            p.run = run;
            p.key = kKeys[i % 4];
            p.step = i / 4;
            if (i % 8 == 0)
                p.epoch = double(i / 4) / 1000.0;
            p.wallTimeMs = t0 + i;
            p.value = double(i) * 0.001;
            chunk.append(std::move(p));
        }
        chunks.append(std::move(chunk));
    }
    return chunks;
}

void removeDatabase(const QString& file)
{
    for (const QString& suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
        QFile::remove(file + suffix);
}

// The product: SqliteResultStore, blocks or rows only.
std::optional<Measured> benchStore(const QString& dir, bool packBlocks, const QString& name, qint64 n)
{
    const QString file = dir + QStringLiteral("/bench-") + name + QStringLiteral(".db");
    removeDatabase(file);
    SqliteStoreOptions options;
    options.packBlocks = packBlocks;
    auto store = SqliteResultStore::open(file, options);
    if (!store) {
        std::fprintf(stderr, "%s\n", qPrintable(store.error().message));
        return std::nullopt;
    }
    RunRecord r;
    r.name = QStringLiteral("bench");
    auto id = (*store)->createRun(r, {});
    if (!id) {
        std::fprintf(stderr, "%s\n", qPrintable(id.error().message));
        return std::nullopt;
    }
    QList<QList<MetricPoint>> chunks = makeChunks(*id, n);
    const qint64 transactionsBefore = (*store)->transactionsCommitted();
    QElapsedTimer timer;
    timer.start();
    const double cpu0 = cpuSeconds(RUSAGE_SELF);
    for (auto& chunk : chunks)
        (*store)->appendMetrics(std::move(chunk));
    if (auto f = (*store)->flush(); !f) {
        std::fprintf(stderr, "%s\n", qPrintable(f.error().message));
        return std::nullopt;
    }
    Measured m;
    m.name = name;
    m.seconds = timer.nsecsElapsed() / 1e9;
    m.cpu = cpuSeconds(RUSAGE_SELF) - cpu0;
    m.points = n;
    m.transactions = (*store)->transactionsCommitted() - transactionsBefore;

    QElapsedTimer readTimer;
    readTimer.start();
    const auto back = (*store)->metrics(*id, kKeys[0]);
    const double readSeconds = readTimer.nsecsElapsed() / 1e9;
    if (back.size() != (n + 3) / 4)
        std::fprintf(stderr, "%s: read back %lld points of %s, expected %lld\n", qPrintable(name),
                static_cast<long long>(back.size()), qPrintable(kKeys[0]), static_cast<long long>((n + 3) / 4));
    m.readPerSecond = back.size() / readSeconds;
    store->reset();
    {
        // What the blocks came to, row by row: the shell's blob ceiling writes the same rows.
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("bench-blocks"));
        db.setDatabaseName(file);
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(QStringLiteral("SELECT key_id, source, first_id, last_id, count, live, first_step, last_step,"
                                      " length(points) FROM metric_blocks ORDER BY id")))
                while (q.next()) {
                    std::array<qint64, 9> row{};
                    for (int i = 0; i < 9; ++i)
                        row[i] = q.value(i).toLongLong();
                    m.blocks.append(row);
                }
        }
        db = {};
        QSqlDatabase::removeDatabase(QStringLiteral("bench-blocks"));
    }
    removeDatabase(file);
    return m;
}

// A file with the store's schema, one run and the four keys (metric_keys ids
// 1..4, in kKeys order), made by the store and closed again: the baselines'
// and the shell's starting point.
bool seedDatabase(const QString& file)
{
    removeDatabase(file);
    auto store = SqliteResultStore::open(file);
    if (!store) {
        std::fprintf(stderr, "%s\n", qPrintable(store.error().message));
        return false;
    }
    auto id = (*store)->createRun(RunRecord{}, {});
    if (!id)
        return false;
    QList<MetricPoint> seed;
    for (const QString& k : kKeys)
        seed.append(MetricPoint{*id, k, -1, std::nullopt, 0, 0.0});
    (*store)->appendMetrics(seed);
    return (*store)->flush().has_value();
}

// A baseline: the same rows into the same schema through plain QtSql on its
// own connection, with the writer's pragmas and transaction size, no store
// code: `batch` false binds and executes one prepared INSERT per row, true
// fills column lists and calls execBatch() once per transaction.
std::optional<Measured> benchQtSql(const QString& dir, bool batch, const QString& name, qint64 n)
{
    const QString file = dir + QStringLiteral("/bench-") + name + QStringLiteral(".db");
    if (!seedDatabase(file))
        return std::nullopt;
    const SqliteStoreOptions defaults;
    QList<QList<MetricPoint>> chunks = makeChunks(1, n);
    QHash<QString, qint64> keyIds;
    for (int k = 0; k < kKeys.size(); ++k)
        keyIds.insert(kKeys[k], k + 1);
    std::optional<Measured> m;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("bench-baseline"));
        db.setDatabaseName(file);
        if (!db.open()) {
            std::fprintf(stderr, "%s: %s\n", qPrintable(file), qPrintable(db.lastError().text()));
            return std::nullopt;
        }
        QSqlQuery q(db);
        const auto exec = [&q](const QString& sql) {
            if (!q.exec(sql))
                std::fprintf(stderr, "%s: %s\n", qPrintable(sql), qPrintable(q.lastError().text()));
            return q.lastError().type() == QSqlError::NoError;
        };
        bool ok = exec(QStringLiteral("PRAGMA journal_mode=WAL")) && exec(QStringLiteral("PRAGMA synchronous=NORMAL"))
                && exec(QStringLiteral("PRAGMA foreign_keys=ON"))
                && exec(QStringLiteral("PRAGMA cache_size=-%1").arg(defaults.writerCacheKiB))
                && exec(QStringLiteral("PRAGMA wal_autocheckpoint=%1").arg(defaults.walAutocheckpointPages));
        ok = ok
                && q.prepare(
                        QStringLiteral("INSERT INTO metrics (id, key_id, step, epoch, wall_ms, value, kind, source)"
                                       " VALUES (?,?,?,?,?,?,?,?)"));
        QSqlQuery control(db);
        const QVariant noDouble(QMetaType::fromType<double>());
        QVariantList id, key, step, epoch, wall, value, kind, source;
        qint64 nextId = 10; // above the seed's four rows
        qint64 inTransaction = 0;
        qint64 transactions = 0;
        const auto commit = [&] {
            if (batch) {
                QVariantList* const columns[] = {&id, &key, &step, &epoch, &wall, &value, &kind, &source};
                for (int i = 0; i < 8; ++i) {
                    q.bindValue(i, *columns[i]);
                    columns[i]->clear();
                }
                ok = ok && q.execBatch();
            }
            ok = ok && control.exec(QStringLiteral("COMMIT"));
            inTransaction = 0;
            ++transactions;
        };
        QElapsedTimer timer;
        timer.start();
        const double cpu0 = cpuSeconds(RUSAGE_SELF);
        for (const auto& chunk : std::as_const(chunks)) {
            for (const MetricPoint& p : chunk) {
                if (!ok)
                    break;
                if (inTransaction == 0)
                    ok = control.exec(QStringLiteral("BEGIN IMMEDIATE"));
                // Finite values only (kind 0): the store's codec is not needed.
                const QVariant e = p.epoch ? QVariant(*p.epoch) : noDouble;
                if (batch) {
                    id.append(nextId++);
                    key.append(keyIds.value(p.key));
                    step.append(p.step);
                    epoch.append(e);
                    wall.append(p.wallTimeMs);
                    value.append(p.value);
                    kind.append(0);
                    source.append(static_cast<int>(p.source));
                } else {
                    q.bindValue(0, nextId++);
                    q.bindValue(1, keyIds.value(p.key));
                    q.bindValue(2, p.step);
                    q.bindValue(3, e);
                    q.bindValue(4, p.wallTimeMs);
                    q.bindValue(5, p.value);
                    q.bindValue(6, 0);
                    q.bindValue(7, static_cast<int>(p.source));
                    ok = q.exec();
                }
                if (++inTransaction >= defaults.maxBatchPoints)
                    commit();
            }
        }
        if (ok && inTransaction > 0)
            commit();
        if (ok) {
            m.emplace();
            m->name = name;
            m->seconds = timer.nsecsElapsed() / 1e9;
            m->cpu = cpuSeconds(RUSAGE_SELF) - cpu0;
            m->points = n;
            m->transactions = transactions;
            QElapsedTimer readTimer;
            readTimer.start();
            qint64 back = 0;
            if (control.exec(
                        QStringLiteral("SELECT step, value FROM metrics WHERE key_id = 1 AND step >= 0 ORDER BY step")))
                while (control.next())
                    ++back;
            m->readPerSecond = back / (readTimer.nsecsElapsed() / 1e9);
        } else {
            std::fprintf(stderr, "%s: %s %s\n", qPrintable(name), qPrintable(q.lastError().text()),
                    qPrintable(control.lastError().text()));
        }
    }
    QSqlDatabase::removeDatabase(QStringLiteral("bench-baseline"));
    removeDatabase(file);
    return m;
}

// The sqlite3 shell writing, in one transaction, either the same rows as the
// store (`blocks` empty: one INSERT ... SELECT FROM generate_series, the
// ceiling for rows only, and the single-row anchor for blocks) or exactly the
// metric_blocks rows the store's blocks came to (the ceiling for blocks): each
// row's columns as the store wrote them and a BLOB of that block's length, in
// one multi-row INSERT (zeroblob(), so no time goes to making the bytes;
// SQLite still writes every byte to the pages and the WAL). `n`: the points
// either carries.
std::optional<Measured> benchShell(const QString& dir, qint64 n, const QList<std::array<qint64, 9>>& blocks = {})
{
    const QString shell = QStandardPaths::findExecutable(QStringLiteral("sqlite3"));
    if (shell.isEmpty()) {
        std::fprintf(stderr, "sqlite3 shell not found (Debian: sqlite3): no ceiling measured\n");
        return std::nullopt;
    }
    const QString file = dir + QStringLiteral("/bench-shell.db");
    if (!seedDatabase(file))
        return std::nullopt;
    // metric_keys ids 1..4 are the four keys (created in order above, as the store's run created them).
    QString insert;
    if (!blocks.isEmpty()) {
        insert = QStringLiteral(" INSERT INTO metric_blocks (key_id, source, first_id, last_id, count, live,"
                                " first_step, last_step, points) VALUES ");
        insert.reserve(insert.size() + blocks.size() * 80);
        for (qsizetype i = 0; i < blocks.size(); ++i) {
            const auto& b = blocks[i];
            insert += QStringLiteral("%1(%2,%3,%4,%5,%6,%7,%8,%9,")
                              .arg(i ? QStringLiteral(",") : QString())
                              .arg(b[0])
                              .arg(b[1])
                              .arg(b[2])
                              .arg(b[3])
                              .arg(b[4])
                              .arg(b[5])
                              .arg(b[6])
                              .arg(b[7]);
            insert += QStringLiteral("zeroblob(%1))").arg(b[8]);
        }
        insert += QLatin1Char(';');
    } else {
        insert = QStringLiteral(
                " INSERT INTO metrics (key_id, step, epoch, wall_ms, value, kind)"
                " SELECT 1 + value % 4, value / 4, CASE WHEN value % 8 = 0 THEN (value / 4) / 1000.0 END,"
                " 1700000000000 + value, value * 0.001, 0 FROM generate_series(0, %1);")
                         .arg(n - 1);
    }
    const QString sql = QStringLiteral(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-%2;"
            " BEGIN IMMEDIATE;%1 COMMIT;")
                                .arg(insert)
                                .arg(SqliteStoreOptions{}.writerCacheKiB);
    QProcess p;
    p.setProgram(shell);
    p.setArguments({file});
    QElapsedTimer timer;
    timer.start();
    const double cpu0 = cpuSeconds(RUSAGE_CHILDREN);
    p.start();
    p.write(sql.toUtf8());
    p.closeWriteChannel();
    p.waitForFinished(-1);
    Measured m;
    m.name = blocks.isEmpty() ? QStringLiteral("sqlite3 shell, same rows")
                              : QStringLiteral("sqlite3 shell, same blobs");
    m.seconds = timer.nsecsElapsed() / 1e9;
    m.cpu = cpuSeconds(RUSAGE_CHILDREN) - cpu0;
    m.points = n;
    m.transactions = 1;
    if (p.exitCode() != 0) {
        std::fprintf(stderr, "sqlite3 failed: %s\n", p.readAllStandardError().constData());
        return std::nullopt;
    }
    removeDatabase(file);
    return m;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    qint64 n = 10'000'000;
    QString dir;
    QStringList paths{QStringLiteral("blocks"), QStringLiteral("rows"), QStringLiteral("qtsql-loop"),
            QStringLiteral("qtsql-batch")};
    bool shell = true;
    const QStringList args = app.arguments().mid(1);
    for (int i = 0; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--dir") && i + 1 < args.size())
            dir = args[++i];
        else if (args[i] == QLatin1String("--paths") && i + 1 < args.size())
            paths = args[++i].split(QLatin1Char(','));
        else if (args[i] == QLatin1String("--no-shell"))
            shell = false;
        else
            n = args[i].toLongLong();
    }
    QTemporaryDir tmp;
    if (dir.isEmpty())
        dir = tmp.path();
    QDir().mkpath(dir);

    std::printf("bench_store v%d: %lld points, 4 keys, chunks of 10000, database in %s\n", kBenchVersion,
            static_cast<long long>(n), qPrintable(dir));
    std::printf("%-30s %8s %12s %8s %12s\n", "", "wall s", "points/s", "CPU s", "points/CPU-s");
    const auto printRow = [](const QString& label, const Measured& m) {
        std::printf("%-30s %8.2f %12.0f %8.2f %12.0f", qPrintable(label), m.seconds, m.points / m.seconds, m.cpu,
                m.points / m.cpu);
    };
    std::optional<Measured> sameRows;
    if (shell) {
        sameRows = benchShell(dir, n);
        if (sameRows) {
            printRow(sameRows->name, *sameRows);
            std::printf("  [one INSERT ... SELECT, one transaction]\n");
        }
        std::fflush(stdout);
    }
    // blocks, rows: the product (packed metric blocks, MetricBlock.h, or rows
    // only); qtsql-*: the baselines above, rows only.
    enum class Kind { Blocks, Rows, QtSqlLoop, QtSqlBatch };
    const std::pair<QString, Kind> all[] = {
            {QStringLiteral("blocks"), Kind::Blocks},
            {QStringLiteral("rows"), Kind::Rows},
            {QStringLiteral("qtsql-loop"), Kind::QtSqlLoop},
            {QStringLiteral("qtsql-batch"), Kind::QtSqlBatch},
    };
    int status = 0;
    QList<Measured> product, baselines;
    // The store against the shell, same run: (store path, anchor).
    QList<std::pair<Measured, Measured>> anchored;
    for (const auto& [name, kind] : all) {
        if (!paths.contains(name))
            continue;
        const bool isProduct = kind == Kind::Blocks || kind == Kind::Rows;
        const auto m = isProduct ? benchStore(dir, kind == Kind::Blocks, name, n)
                                 : benchQtSql(dir, kind == Kind::QtSqlBatch, name, n);
        if (!m) {
            status = 1;
            continue;
        }
        (isProduct ? product : baselines).append(*m);
        const QString label
                = isProduct ? QStringLiteral("store (%1)").arg(name) : QStringLiteral("baseline %1").arg(name);
        printRow(label, *m);
        std::printf("  [%lld transactions; one key read back at %.0f points/s]\n",
                static_cast<long long>(m->transactions), m->readPerSecond);
        std::fflush(stdout);
        // Rows and blocks against the shell writing the same points as single
        // rows; blocks also against the shell writing the very blocks they
        // came to (measured right after).
        if (isProduct && sameRows)
            anchored.append({*m, *sameRows});
        if (kind == Kind::Blocks && shell && !m->blocks.isEmpty()) {
            if (const auto blobs = benchShell(dir, n, m->blocks)) {
                qint64 least = m->blocks.front()[8], most = least, bytes = 0;
                for (const auto& b : m->blocks) {
                    least = std::min(least, b[8]);
                    most = std::max(most, b[8]);
                    bytes += b[8];
                }
                printRow(blobs->name, *blobs);
                std::printf("  [the store's %lld rows: BLOBs of %lld-%lld bytes, %lld in all; one transaction]\n",
                        static_cast<long long>(m->blocks.size()), static_cast<long long>(least),
                        static_cast<long long>(most), static_cast<long long>(bytes));
                anchored.append({*m, *blobs});
            }
            std::fflush(stdout);
        }
    }
    // Each store path as a ratio to the shell writing the same points, from
    // this run: 1 = as fast as SQLite's own shell, < 1 slower.
    if (!anchored.isEmpty()) {
        std::printf("\nstore / sqlite3 shell, same run (shell time / store time):\n");
        for (const auto& [p, a] : std::as_const(anchored))
            std::printf("  %-40s %6.3fx wall, %6.3fx CPU\n",
                    qPrintable(QStringLiteral("store (%1) / %2:").arg(p.name, a.name.mid(8))), a.seconds / p.seconds,
                    a.cpu / p.cpu);
    }
    // The product beside each baseline, from this run: > 1 means the store
    // wrote the points faster (wall) or with less CPU than the baseline.
    if (!product.isEmpty() && !baselines.isEmpty()) {
        std::printf("\nproduct / baseline, same run (points/s wall, points per CPU-second):\n");
        for (const Measured& p : std::as_const(product))
            for (const Measured& b : std::as_const(baselines))
                std::printf("  store (%s) / %-12s %6.2fx wall, %6.2fx CPU\n", qPrintable(p.name),
                        qPrintable(b.name + QLatin1Char(':')), b.seconds / p.seconds, b.cpu / p.cpu);
    }
    return status;
}
