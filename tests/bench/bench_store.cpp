// Result store metric write throughput (issue 5 goal: >= 1,000,000 points/s).
//
// Inserts N points (default 10,000,000; 4 interleaved keys, like loss / acc /
// lr / grad_norm, in appendMetrics() chunks of 10,000, made before timing)
// through SqliteResultStore with each metric insert path, and measures from
// the first append until flush() returns. Beside it, the ceiling on this
// machine: the sqlite3 shell inserting the same rows into the same schema with
// the same pragmas via one INSERT ... SELECT FROM generate_series (no per-row
// API at all). Also times reading one key back (metrics(run, key)).
//
// Usage: bench_store [N] [--dir DIR] [--paths blocks,raw,loop,batch] [--no-shell]
// (blocks: the default store, points packed into metric_blocks; raw, loop,
// batch: rows only, through each row insert path.)
#include "core/store/SqliteResultStore.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cstdio>
#include <tuple>

#include <sys/resource.h>

using namespace ty;

namespace {

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
};

std::optional<Measured> benchStore(
        const QString& dir, SqliteStoreOptions::MetricInsert path, bool packBlocks, const QString& name, qint64 n)
{
    const QString file = dir + QStringLiteral("/bench-") + name + QStringLiteral(".db");
    QFile::remove(file);
    SqliteStoreOptions options;
    options.metricInsert = path;
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
    // The points are made before the clock starts: this measures the store,
    // not the producer (which would share the CPUs with the writer thread).
    constexpr qint64 kChunk = 10'000;
    const qint64 t0 = 1'700'000'000'000;
    QList<QList<MetricPoint>> chunks;
    for (qint64 base = 0; base < n; base += kChunk) {
        QList<MetricPoint> chunk;
        chunk.reserve(kChunk);
        for (qint64 i = base; i < std::min(n, base + kChunk); ++i) {
            MetricPoint p;
            p.run = *id;
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
    QFile::remove(file);
    QFile::remove(file + QStringLiteral("-wal"));
    QFile::remove(file + QStringLiteral("-shm"));
    return m;
}

// The same rows through the sqlite3 shell: INSERT ... SELECT, one transaction.
std::optional<Measured> benchShell(const QString& dir, qint64 n)
{
    const QString shell = QStandardPaths::findExecutable(QStringLiteral("sqlite3"));
    if (shell.isEmpty()) {
        std::fprintf(stderr, "sqlite3 shell not found (Debian: sqlite3): no ceiling measured\n");
        return std::nullopt;
    }
    const QString file = dir + QStringLiteral("/bench-shell.db");
    QFile::remove(file);
    {
        // Same schema and keys, created by the store itself.
        auto store = SqliteResultStore::open(file);
        if (!store)
            return std::nullopt;
        auto id = (*store)->createRun(RunRecord{}, {});
        QList<MetricPoint> seed;
        for (const QString& k : kKeys)
            seed.append(MetricPoint{*id, k, -1, std::nullopt, 0, 0.0});
        (*store)->appendMetrics(seed);
        (void)(*store)->flush();
    }
    // metric_keys ids 1..4 are the four keys (created in order above).
    const QString sql = QStringLiteral(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-%2;"
            " BEGIN IMMEDIATE;"
            " INSERT INTO metrics (key_id, step, epoch, wall_ms, value, kind)"
            " SELECT 1 + value % 4, value / 4, CASE WHEN value % 8 = 0 THEN (value / 4) / 1000.0 END,"
            " 1700000000000 + value, value * 0.001, 0 FROM generate_series(0, %1);"
            " COMMIT;")
                                .arg(n - 1)
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
    m.name = QStringLiteral("sqlite3 shell INSERT..SELECT");
    m.seconds = timer.nsecsElapsed() / 1e9;
    m.cpu = cpuSeconds(RUSAGE_CHILDREN) - cpu0;
    m.points = n;
    m.transactions = 1;
    if (p.exitCode() != 0) {
        std::fprintf(stderr, "sqlite3 failed: %s\n", p.readAllStandardError().constData());
        return std::nullopt;
    }
    QFile::remove(file);
    QFile::remove(file + QStringLiteral("-wal"));
    QFile::remove(file + QStringLiteral("-shm"));
    return m;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    qint64 n = 10'000'000;
    QString dir;
    QStringList paths{QStringLiteral("blocks"), QStringLiteral("raw"), QStringLiteral("loop"), QStringLiteral("batch")};
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

    std::printf("bench_store: %lld points, 4 keys, chunks of 10000, database in %s\n", static_cast<long long>(n),
            qPrintable(dir));
    std::printf(
            "%-30s %8s %12s %8s %12s %s\n", "", "wall s", "points/s", "CPU s", "points/CPU-s", "vs shell (wall, CPU)");
    std::optional<Measured> ceiling;
    if (shell) {
        ceiling = benchShell(dir, n);
        if (ceiling)
            std::printf("%-30s %8.2f %12.0f %8.2f %12.0f\n", qPrintable(ceiling->name), ceiling->seconds,
                    ceiling->points / ceiling->seconds, ceiling->cpu, ceiling->points / ceiling->cpu);
        std::fflush(stdout);
    }
    // blocks: the default (packed metric blocks, MetricBlock.h); the others
    // write rows only (packBlocks = false), through each row insert path.
    const std::tuple<QString, SqliteStoreOptions::MetricInsert, bool> all[] = {
            {QStringLiteral("blocks"), SqliteStoreOptions::MetricInsert::RawSqlite, true},
            {QStringLiteral("raw"), SqliteStoreOptions::MetricInsert::RawSqlite, false},
            {QStringLiteral("loop"), SqliteStoreOptions::MetricInsert::QtSqlLoop, false},
            {QStringLiteral("batch"), SqliteStoreOptions::MetricInsert::QtSqlBatch, false},
    };
    int status = 0;
    for (const auto& [name, path, packBlocks] : all) {
        if (!paths.contains(name))
            continue;
        const auto m = benchStore(dir, path, packBlocks, name, n);
        if (!m) {
            status = 1;
            continue;
        }
        std::printf("%-30s %8.2f %12.0f %8.2f %12.0f",
                qPrintable(QStringLiteral("store (") + name + QStringLiteral(")")), m->seconds, m->points / m->seconds,
                m->cpu, m->points / m->cpu);
        if (ceiling)
            std::printf("  %5.1f%%, %5.1f%%", 100.0 * ceiling->seconds / m->seconds, 100.0 * ceiling->cpu / m->cpu);
        std::printf("  [%lld transactions; one key read back at %.0f points/s]\n",
                static_cast<long long>(m->transactions), m->readPerSecond);
        std::fflush(stdout);
    }
    return status;
}
