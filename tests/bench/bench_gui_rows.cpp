// bench_gui_rows: the GUI's event loop while a database of 10,000 runs has one
// live run (issue #22: "no GUI event-loop stall over 16 ms").
//
// Builds a result database with --runs finished runs (two params and three
// metric keys each) and one running run, opens the real MainWindow on it
// (shown; no engine: the GUI as a client beside the service), and writes the
// live run's metrics through a second store on the same file (another
// connection, as the service's process is) every --interval-ms. Two phases of
// --seconds each, in one process on the same database:
//   1. row updates: the GUI reads the rows of the runs that changed (today's);
//   2. full reloads: every change reloads every run (before issue #22;
//      MainWindow::setFullReloads).
// Measured per phase: the event loop's stalls (the gaps between the ticks of
// a 1 ms timer, minus 1 ms), and the lag from writing a point to the runs
// table showing its step.
//
//   cmake --preset dev -DTRAINYARD_BUILD_BENCH=ON && cmake --build build/dev --target bench_gui_rows
//   xvfb-run -a -s "-screen 0 1600x900x24" env QT_QPA_PLATFORM=xcb build/dev/tests/bench/bench_gui_rows
#include "ui/mainwindow/MainWindow.h"
#include "ui/runs/RunsModel.h"
#include "core/store/ResultStore.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace ty;

namespace {

struct Phase {
    std::vector<double> stallsMs; // one per tick gap
    std::vector<double> lagMs;    // one per point that reached the table
};

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

bool populate(const QString& path, int runs, RunId* live)
{
    const QString conn = QStringLiteral("populate");
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), conn);
        db.setDatabaseName(path);
        if (!db.open())
            return false;
        QSqlQuery q(db);
        q.exec(QStringLiteral("BEGIN"));
        const qint64 t0 = QDateTime::currentMSecsSinceEpoch() - qint64(runs) * 60'000;
        for (int i = 0; i < runs; ++i) {
            const bool last = i == runs - 1;
            q.prepare(QStringLiteral(
                    "INSERT INTO runs (name, state, node, created_at, started_at, finished_at, exit_code)"
                    " VALUES (?, ?, 'local', ?, ?, ?, ?)"));
            q.addBindValue(QStringLiteral("sweep-%1").arg(i));
            q.addBindValue(last ? QStringLiteral("running") : QStringLiteral("succeeded"));
            q.addBindValue(t0 + qint64(i) * 60'000);
            q.addBindValue(t0 + qint64(i) * 60'000 + 1000);
            q.addBindValue(last ? QVariant() : QVariant(t0 + qint64(i) * 60'000 + 50'000));
            q.addBindValue(last ? QVariant() : QVariant(0));
            if (!q.exec()) {
                std::fprintf(stderr, "%s\n", qPrintable(q.lastError().text()));
                return false;
            }
            const qint64 id = q.lastInsertId().toLongLong();
            for (const auto& [k, v] : {std::pair{"lr", QString::number(0.001 * (i % 10 + 1))},
                         std::pair{"seed", QString::number(i % 5)}}) {
                QSqlQuery p(db);
                p.prepare(QStringLiteral("INSERT INTO params (run_id, key, value) VALUES (?, ?, ?)"));
                p.addBindValue(id);
                p.addBindValue(QString::fromLatin1(k));
                p.addBindValue(v);
                p.exec();
            }
            if (last)
                *live = id;
        }
        q.exec(QStringLiteral("COMMIT"));
    }
    QSqlDatabase::removeDatabase(conn);
    return true;
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_gui_rows v1\n");
    std::fflush(stdout);
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("trainyard-bench-gui-rows"));
    QCommandLineParser parser;
    parser.addHelpOption();
    QCommandLineOption runsOpt(QStringLiteral("runs"), QStringLiteral("Finished runs in the database."),
            QStringLiteral("N"), QStringLiteral("10000"));
    QCommandLineOption secondsOpt(QStringLiteral("seconds"), QStringLiteral("Length of each phase."),
            QStringLiteral("S"), QStringLiteral("10"));
    QCommandLineOption intervalOpt(QStringLiteral("interval-ms"),
            QStringLiteral("How often the live run gets a point."), QStringLiteral("MS"), QStringLiteral("100"));
    parser.addOptions({runsOpt, secondsOpt, intervalOpt});
    parser.process(app);
    const int runs = parser.value(runsOpt).toInt();
    const int seconds = parser.value(secondsOpt).toInt();
    const int intervalMs = parser.value(intervalOpt).toInt();

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("results.db"));
    auto writer = ResultStore::open(path); // the service's side
    if (!writer) {
        std::fprintf(stderr, "%s\n", qPrintable(writer.error().message));
        return 1;
    }
    RunId live = 0;
    if (!populate(path, runs, &live))
        return 1;
    {
        QList<MetricPoint> points;
        for (RunId id = 1; id <= live; ++id)
            for (const char* key : {"loss", "val_acc", "epoch"}) {
                MetricPoint p;
                p.run = id;
                p.key = QString::fromLatin1(key);
                p.step = 100;
                p.value = 1.0 / double(id);
                p.wallTimeMs = QDateTime::currentMSecsSinceEpoch();
                points.append(p);
            }
        (*writer)->appendMetrics(points);
        if (!(*writer)->flush())
            return 1;
    }

    auto reader = ResultStore::open(path, StoreAccess::ReadOnlyIfNeeded); // the GUI's side
    if (!reader)
        return 1;
    QElapsedTimer load;
    load.start();
    MainWindow window(reader->get(), nullptr);
    window.resize(1500, 850);
    window.show();
    auto* model = window.findChild<RunsModel*>();
    while (model->rowCount() < runs)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    const double loadMs = double(load.nsecsElapsed()) / 1e6;

    Phase phases[2];
    Phase* current = nullptr;
    qint64 step = 1000;
    QHash<qint64, qint64> writtenAt; // step -> ns on `clock`
    QElapsedTimer clock;
    clock.start();
    qint64 lastTick = -1;
    qint64 lastShown = 0;

    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(1);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (current && lastTick >= 0)
            current->stallsMs.push_back(std::max(0.0, double(now - lastTick) / 1e6 - 1.0));
        lastTick = now;
    });
    QObject::connect(&window, &MainWindow::runsReloaded, [&] {
        const RunRow* row = model->rowData(live);
        if (!current || !row)
            return;
        const qint64 shown = row->latest.value(QStringLiteral("loss")).step;
        const qint64 now = clock.nsecsElapsed();
        for (qint64 s = lastShown + 1; s <= shown; ++s)
            if (auto it = writtenAt.constFind(s); it != writtenAt.cend())
                current->lagMs.push_back(double(now - *it) / 1e6);
        lastShown = std::max(lastShown, shown);
    });
    QTimer feed;
    feed.setInterval(intervalMs);
    QObject::connect(&feed, &QTimer::timeout, [&] {
        ++step;
        MetricPoint p;
        p.run = live;
        p.key = QStringLiteral("loss");
        p.step = step;
        p.value = 1.0 / double(step);
        p.wallTimeMs = QDateTime::currentMSecsSinceEpoch();
        writtenAt.insert(step, clock.nsecsElapsed());
        (*writer)->appendMetrics({p});
        (*writer)->setConsoleOffset(live, step * 100);
    });

    for (int i = 0; i < 2; ++i) {
        window.setFullReloads(i == 1);
        lastShown = step;
        current = &phases[i];
        lastTick = -1;
        probe.start();
        feed.start();
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < qint64(seconds) * 1000)
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
        feed.stop();
        probe.stop();
        current = nullptr;
        // Let the last change land before the next phase.
        QElapsedTimer settle;
        settle.start();
        while (settle.elapsed() < 1500)
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    }

    std::printf("bench_gui_rows: %d finished runs + 1 live run (a point every %d ms, written through another store),"
                " %d s per phase, platform %s; first full load %.0f ms\n\n",
            runs, intervalMs, seconds, qPrintable(QApplication::platformName()), loadMs);
    std::printf("| GUI event loop | row updates (issue #22) | full reloads (before) | ratio |\n|---|---|---|---|\n");
    const auto row = [&](const char* what, double a, double b, const char* unit) {
        std::printf("| %s | %.1f %s | %.1f %s | %.3f |\n", what, a, unit, b, unit, b > 0 ? a / b : 0.0);
    };
    const auto over = [](const Phase& p, double ms) {
        return double(std::count_if(p.stallsMs.begin(), p.stallsMs.end(), [ms](double s) { return s > ms; }));
    };
    row("max stall", percentile(phases[0].stallsMs, 1.0), percentile(phases[1].stallsMs, 1.0), "ms");
    row("p99 stall", percentile(phases[0].stallsMs, 0.99), percentile(phases[1].stallsMs, 0.99), "ms");
    row("stalls over 16 ms", over(phases[0], 16), over(phases[1], 16), "");
    row("point written -> shown, median", percentile(phases[0].lagMs, 0.5), percentile(phases[1].lagMs, 0.5), "ms");
    row("point written -> shown, max", percentile(phases[0].lagMs, 1.0), percentile(phases[1].lagMs, 1.0), "ms");
    std::printf(
            "\npoints shown: %zu (row updates), %zu (full reloads)\n", phases[0].lagMs.size(), phases[1].lagMs.size());
    return 0;
}
