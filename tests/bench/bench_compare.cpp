// Compare view with 10 million points (issue 6 goals: first full paint
// < 1 s after choosing Compare, repaint after zoom/pan < 16 ms median, peak
// memory < 500 MB), beside drawing the raw points with Qt Charts.
//
// Writes a real SQLite result database through SqliteResultStore (its
// default, raw-sqlite insert path): R runs (default 100) of P points each
// (default 100,000), split over K metric keys (default 2: train/loss, a noisy
// decaying loss with rare spikes and one NaN, and train/accuracy), logged
// together at every step like a training script does. Then each measurement
// runs in a child process of its own (so peak RSS is its own):
//   trainyard: the real CompareView (1600x900) with a CompareLoader on a
//              worker thread, as MainWindow wires it; the clock starts at
//              setRuns() (what Compare does) and stops when every chart has
//              painted with its points.
//   store:     the same, reading through ResultStore::metrics() (the loader
//              before bench_compare; --before).
//   index:     the same, the column reader reading each key through the
//              (key_id, step) index instead of the run's rows in rowid
//              order (--index-read).
//   raw:       one QChartView per key (same grid, same width) with a
//              QLineSeries per run replace()d with all its points, loaded with
//              the same loader; --opengl adds the same with setUseOpenGL (only
//              on a real display, e.g. xvfb-run; never offscreen).
// Zoom/pan: 10 zoom-ins (x0.7 around 40 % of the range), 10 pans right and
// 10 left (5 % of the range), 10 zoom-outs, applied to every chart (as the
// view synchronises them); each frame = set the ranges + process posted
// events + a synchronous repaint() of the window, timed as a whole.
//
// Usage (a display is needed for OpenGL; offscreen works for the rest):
//   xvfb-run -s "-screen 0 1920x1080x24" bench_compare [--runs 100]
//       [--points 100000] [--keys 2] [--db FILE [--reuse]] [--before]
//       [--index-read] [--raw-runs N (0: skip raw)] [--opengl] [--screenshot FILE.png]
//       [--repeat N (the zoom/pan script N times, e.g. under perf)]
// Raw Qt Charts at 10M points takes tens of seconds and GBs: --raw-runs N
// draws only N runs raw and extrapolates times and memory above the empty
// window linearly to R runs (marked "extrapolated").
#include "ui/charts/DecimatedChart.h"
#include "ui/charts/RunColour.h"
#include "ui/compare/CompareLoader.h"
#include "ui/compare/CompareView.h"
#include "core/store/SqliteResultStore.h"

#include "ZoomPanScript.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLineSeries>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QValueAxis>
#include <QWindow>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

#include <sys/resource.h>

using namespace ty;

namespace {

struct Options {
    int runs = 100;
    qint64 points = 100'000; // per run, all keys together
    int keys = 2;
    QString db;
    bool reuse = false;
    bool before = false;
    bool indexRead = false;
    int rawRuns = -1; // -1: default (min(runs, 10)), 0: skip
    bool opengl = false;
    QString screenshot; // --screenshot FILE: the Trainyard view after the first paint, as PNG
    QString mode;       // child: trainyard | store | raw | raw-gl
    int repeat = 1;     // --repeat N: the zoom/pan script N times (for profiling the frames)
};

const char* const kKeyNames[] = {"train/loss", "train/accuracy", "val/loss", "lr", "grad_norm", "val/accuracy"};

double peakRssMb()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0; // KiB on Linux
}

// CPU seconds (user + system): of the whole process (RUSAGE_SELF) or of the
// calling thread (RUSAGE_THREAD). The machine is shared: wall times include
// waiting for a core, CPU times do not.
double cpuSeconds(int who)
{
    rusage u{};
    getrusage(who, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double p95(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(std::ceil(0.95 * double(v.size())) - 1))];
}

// ---- the database -----------------------------------------------------------

Result<void> createDatabase(const Options& o)
{
    QFile::remove(o.db);
    QFile::remove(o.db + QStringLiteral("-wal"));
    QFile::remove(o.db + QStringLiteral("-shm"));
    auto store = SqliteResultStore::open(o.db);
    if (!store)
        return std::unexpected(store.error());
    const qint64 perKey = o.points / o.keys;
    const qint64 t0 = 1'735'000'000'000; // Dec 2024, ms UTC
    QElapsedTimer timer;
    timer.start();
    for (int r = 0; r < o.runs; ++r) {
        std::mt19937_64 rng(quint64(r) * 7919 + 1);
        std::normal_distribution<double> gauss;
        std::uniform_real_distribution<double> uni;
        const double lr = std::pow(10.0, -4.0 + 2.0 * r / std::max(1, o.runs - 1));
        RunRecord rec;
        rec.name = QStringLiteral("sweep-lr-%1").arg(lr, 0, 'g', 3);
        rec.state = RunState::Succeeded;
        rec.startedAt = QDateTime::fromMSecsSinceEpoch(t0 + qint64(r) * 60'000, Qt::UTC);
        auto id = (*store)->createRun(rec,
                {{QStringLiteral("lr"), QString::number(lr, 'g', 3)}, {QStringLiteral("seed"), QString::number(r % 5)},
                        {QStringLiteral("batch_size"), QStringLiteral("128")}});
        if (!id)
            return std::unexpected(id.error());
        const double tau = perKey * (0.05 + 0.25 * uni(rng));
        const double floor = 0.05 + 0.3 * uni(rng);
        const qint64 nanAt = r == o.runs / 2 ? perKey * 3 / 4 : -1; // one diverged batch
        double wall = double(t0 + qint64(r) * 60'000);
        QList<MetricPoint> chunk;
        chunk.reserve(20'000);
        for (qint64 s = 0; s < perKey; ++s) {
            wall += 40.0 + 20.0 * uni(rng);
            const double decay = std::exp(-double(s) / tau);
            double loss = 2.3 * decay + floor + std::abs(gauss(rng)) * (0.02 + 0.2 * decay);
            if (uni(rng) < 2e-4)
                loss *= 2.0 + 4.0 * uni(rng); // spike
            if (s == nanAt)
                loss = std::numeric_limits<double>::quiet_NaN();
            const double acc = std::clamp(1.0 - 0.9 * decay - floor * 0.3 + 0.02 * gauss(rng), 0.0, 1.0);
            for (int k = 0; k < o.keys; ++k) {
                MetricPoint p;
                p.run = *id;
                p.key = QString::fromLatin1(kKeyNames[k % 6]);
                p.step = s;
                p.wallTimeMs = qint64(wall);
                p.value = k == 0 ? loss : k == 1 ? acc : loss * (1.0 + 0.1 * k) + 0.01 * gauss(rng);
                chunk.append(std::move(p));
            }
            if (chunk.size() >= 20'000) {
                (*store)->appendMetrics(std::move(chunk));
                chunk = {};
                chunk.reserve(20'000);
            }
        }
        if (!chunk.isEmpty())
            (*store)->appendMetrics(std::move(chunk));
    }
    if (auto f = (*store)->flush(); !f)
        return f;
    std::printf("database: %s, %d runs x %lld points (%d keys x %lld steps) written in %.1f s, %.0f MB\n",
            qPrintable(o.db), o.runs, static_cast<long long>(perKey * o.keys), o.keys, static_cast<long long>(perKey),
            timer.nsecsElapsed() / 1e9, QFileInfo(o.db).size() / 1e6);
    return {};
}

QList<RunId> runIds(ResultStore& store, int n)
{
    QList<RunId> ids;
    for (const RunRecord& r : store.runs())
        ids.append(r.id);
    std::sort(ids.begin(), ids.end());
    return ids.mid(0, n);
}

// ---- measuring --------------------------------------------------------------

void waitExposed(QWidget& w)
{
    QElapsedTimer t;
    t.start();
    while ((!w.windowHandle() || !w.windowHandle()->isExposed()) && t.elapsed() < 5000)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    for (int i = 0; i < 10; ++i)
        QCoreApplication::processEvents();
}

// Runs the event loop until `done()` or `limitS` seconds.
bool spinUntil(const std::function<bool()>& done, double limitS)
{
    QElapsedTimer t;
    t.start();
    QTimer tick; // wakes WaitForMoreEvents
    tick.start(20);
    while (!done()) {
        if (t.elapsed() > limitS * 1000)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
    }
    return true;
}

struct Figures {
    QString label;
    double dataS = 0;       // data in memory (loader finished)
    double firstPaintS = 0; // every chart painted with its points
    std::vector<double> zoomMs, panMs;
    double dataCpuS = 0, firstPaintCpuS = 0; // process CPU seconds at those points
    std::vector<double> zoomCpuMs, panCpuMs; // GUI thread CPU per frame
    double paintsPerFrame = 0;
    double peakMb = 0;
    double idleMb = 0; // peak RSS with the empty window shown
    qint64 drawn = 0;  // points handed to Qt Charts at full range (all charts)
    qint64 points = 0; // points loaded
    int runs = 0;
};

void printFigures(const Figures& f, double scale)
{
    // One machine-readable line for the parent, then the human one.
    std::printf("ROW|%s|%d|%lld|%.3f|%.3f|%.2f|%.2f|%.2f|%.2f|%.0f|%.0f|%lld|%.2f|%.3f|%.3f|%.3f|%.2f|%.2f\n",
            qPrintable(f.label), f.runs, static_cast<long long>(f.points), f.dataS, f.firstPaintS, median(f.zoomMs),
            p95(f.zoomMs), median(f.panMs), p95(f.panMs), f.peakMb, f.idleMb, static_cast<long long>(f.drawn),
            f.paintsPerFrame, scale, f.dataCpuS, f.firstPaintCpuS, median(f.zoomCpuMs), median(f.panCpuMs));
    std::fflush(stdout);
}

// The zoom/pan script over [lo, hi]; `apply(lo, hi)` sets every chart's range.
void zoomPan(double lo, double hi, const std::function<void(double, double)>& apply, QWidget& window,
        const std::function<int()>& paints, Figures& f)
{
    double cpuMs = 0;
    const auto frame = [&](double a, double b) {
        const int p0 = paints();
        QElapsedTimer t;
        const double c0 = cpuSeconds(RUSAGE_THREAD);
        t.start();
        apply(a, b);
        QCoreApplication::sendPostedEvents();
        window.repaint();
        const double ms = t.nsecsElapsed() / 1e6;
        cpuMs = (cpuSeconds(RUSAGE_THREAD) - c0) * 1e3;
        f.paintsPerFrame += paints() - p0;
        return ms;
    };
    for (const ZoomPanFrame& step : zoomPanScript(lo, hi)) {
        const double ms = frame(step.lo, step.hi);
        (step.zoom ? f.zoomMs : f.panMs).push_back(ms);
        (step.zoom ? f.zoomCpuMs : f.panCpuMs).push_back(cpuMs);
    }
}

int runTrainyard(const Options& o, CompareLoader::ReadPath readPath)
{
    auto store = SqliteResultStore::open(o.db);
    if (!store) {
        std::fprintf(stderr, "%s\n", qPrintable(store.error().message));
        return 1;
    }
    const QList<RunId> ids = runIds(**store, o.runs);
    QThread thread;
    thread.setObjectName(QStringLiteral("store-reader"));
    auto* loader = new CompareLoader(store->get());
    loader->setReadPath(readPath);
    const bool viaStore = readPath == CompareLoader::ReadPath::ResultStore;
    loader->moveToThread(&thread);
    thread.start();

    Figures f;
    f.label = viaStore ? QStringLiteral("Trainyard, loader via ResultStore::metrics()")
            : readPath == CompareLoader::ReadPath::ColumnsByIndex ? QStringLiteral("Trainyard, columns read by index")
                                                                  : QStringLiteral("Trainyard CompareView");
    f.runs = int(ids.size());
    {
        CompareView view(loader);
        view.resize(1600, 900);
        view.show();
        waitExposed(view);
        f.idleMb = peakRssMb();

        QElapsedTimer clock;
        std::atomic<qint64> dataNs{0};
        std::atomic<double> dataCpu{0};
        QObject::connect(
                loader, &CompareLoader::loaded, loader,
                [&] {
                    dataNs = clock.nsecsElapsed();
                    dataCpu = cpuSeconds(RUSAGE_SELF);
                },
                Qt::DirectConnection);
        bool viewLoaded = false;
        QSet<DecimatedChart*> pending;
        int paints = 0;
        QObject::connect(&view, &CompareView::loaded, &view, [&] {
            viewLoaded = true;
            for (const QString& key : view.keys()) {
                DecimatedChart* c = view.chart(key);
                pending.insert(c);
                QObject::connect(c, &DecimatedChart::painted, &view, [&, c] {
                    ++paints;
                    qint64 drawn = 0;
                    for (int i = 0; i < c->seriesCount(); ++i)
                        drawn += c->drawnPoints(i);
                    if (drawn > 0)
                        pending.remove(c);
                });
            }
        });
        const double cpu0 = cpuSeconds(RUSAGE_SELF);
        clock.start();
        view.setRuns(ids);
        if (!spinUntil([&] { return viewLoaded && pending.isEmpty(); }, 600)) {
            std::fprintf(stderr, "trainyard: no full paint within 600 s\n");
            return 1;
        }
        f.firstPaintS = clock.nsecsElapsed() / 1e9;
        f.firstPaintCpuS = cpuSeconds(RUSAGE_SELF) - cpu0;
        f.dataS = dataNs / 1e9;
        f.dataCpuS = dataCpu - cpu0;
        std::printf("  %s: data loaded at %.3f s (%.3f s CPU) (%s), first full paint at %.3f s (%.3f s CPU)\n",
                qPrintable(f.label), f.dataS, f.dataCpuS,
                loader->lastLoadUsedColumns() ? "SqliteMetricColumns" : "ResultStore::metrics()", f.firstPaintS,
                f.firstPaintCpuS);
        // Let the queued re-decimations (plot area settled) finish before zooming.
        QElapsedTimer settle;
        settle.start();
        while (settle.elapsed() < 300)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        if (!o.screenshot.isEmpty() && !view.window()->grab().save(o.screenshot))
            std::fprintf(stderr, "cannot write %s\n", qPrintable(o.screenshot));

        QList<DecimatedChart*> charts;
        for (const QString& key : view.keys())
            charts.append(view.chart(key));
        for (DecimatedChart* c : std::as_const(charts))
            for (int i = 0; i < c->seriesCount(); ++i) {
                f.drawn += c->drawnPoints(i);
                f.points += c->totalPoints(i);
            }
        const auto [lo, hi] = charts.isEmpty() ? std::pair<double, double>{0, 1} : charts.front()->fullXRange();
        for (int r = 0; r < o.repeat; ++r)
            zoomPan(
                    lo, hi,
                    [&](double a, double b) {
                        for (DecimatedChart* c : std::as_const(charts))
                            c->setXRange(a, b);
                    },
                    view, [&] { return paints; }, f);
        f.paintsPerFrame /= double(f.zoomMs.size() + f.panMs.size());
        f.peakMb = peakRssMb();
    }
    thread.quit();
    thread.wait();
    delete loader;
    printFigures(f, 1.0);
    return 0;
}

// A QChartView that reports its paints.
class RawView final : public QChartView {
public:
    RawView(QChart* chart, std::function<void(QChartView*)> onPaint)
        : QChartView(chart)
        , m_onPaint(std::move(onPaint))
    { }

protected:
    void paintEvent(QPaintEvent* e) override
    {
        QChartView::paintEvent(e);
        m_onPaint(this);
    }

private:
    std::function<void(QChartView*)> m_onPaint;
};

int runRaw(const Options& o, bool opengl)
{
    if (opengl && QGuiApplication::platformName() != QLatin1String("xcb")) {
        std::printf("  raw Qt Charts OpenGL: skipped (platform %s; OpenGL only on a real display, e.g. xvfb-run)\n",
                qPrintable(QGuiApplication::platformName()));
        return 0;
    }
    auto store = SqliteResultStore::open(o.db);
    if (!store) {
        std::fprintf(stderr, "%s\n", qPrintable(store.error().message));
        return 1;
    }
    const int n = o.rawRuns > 0 ? std::min(o.rawRuns, o.runs) : o.runs;
    const QList<RunId> ids = runIds(**store, n);
    CompareLoader loader(store->get());

    Figures f;
    f.label = opengl ? QStringLiteral("raw Qt Charts, OpenGL") : QStringLiteral("raw Qt Charts");
    f.runs = int(ids.size());
    // Same geometry as CompareView: charts two per row on about 60 % of the
    // width, the rest (legend and table there) left empty.
    QWidget window;
    auto* outer = new QHBoxLayout(&window);
    auto* chartsBox = new QWidget;
    auto* grid = new QGridLayout(chartsBox);
    grid->setContentsMargins(2, 2, 2, 2);
    grid->setSpacing(4);
    outer->addWidget(chartsBox, 3);
    outer->addWidget(new QWidget, 2);
    window.resize(1600, 900);
    window.show();
    waitExposed(window);
    f.idleMb = peakRssMb();

    int paints = 0;
    QSet<QChartView*> pending;
    QList<QChart*> charts;
    QElapsedTimer clock;
    const double cpu0 = cpuSeconds(RUSAGE_SELF);
    clock.start();
    const CompareDataPtr data = loader.load(ids);
    f.dataS = clock.nsecsElapsed() / 1e9;
    const QStringList keys = data->keys();
    double xlo = 0, xhi = 1;
    int i = 0;
    for (const QString& key : keys) {
        auto* chart = new QChart;
        chart->legend()->hide();
        chart->setTitle(key);
        auto* ax = new QValueAxis;
        auto* ay = new QValueAxis;
        chart->addAxis(ax, Qt::AlignBottom);
        chart->addAxis(ay, Qt::AlignLeft);
        double ylo = 0, yhi = 1;
        bool have = false;
        for (const CompareRun& r : data->runs) {
            auto it = r.metrics.constFind(key);
            if (it == r.metrics.cend())
                continue;
            const std::vector<double>& xs = *it->step;
            const std::vector<double>& ys = *it->value;
            QList<QPointF> pts;
            pts.reserve(qsizetype(xs.size()));
            for (std::size_t k = 0; k < xs.size(); ++k) {
                if (!std::isfinite(ys[k]))
                    continue; // Qt Charts has no gaps
                pts.append(QPointF(xs[k], ys[k]));
                ylo = have ? std::min(ylo, ys[k]) : ys[k];
                yhi = have ? std::max(yhi, ys[k]) : ys[k];
                have = true;
            }
            f.points += pts.size();
            if (!pts.isEmpty()) {
                xlo = std::min(xlo, pts.front().x());
                xhi = std::max(xhi, pts.back().x());
            }
            auto* s = new QLineSeries;
            s->setPen(QPen(runColour(r.run.id), 1));
            s->setUseOpenGL(opengl);
            s->replace(pts);
            chart->addSeries(s);
            s->attachAxis(ax);
            s->attachAxis(ay);
        }
        ax->setRange(xlo, xhi);
        ay->setRange(ylo, yhi);
        charts.append(chart);
        auto* cv = new RawView(chart, [&paints, &pending](QChartView* v) {
            ++paints;
            pending.remove(v);
        });
        cv->setRenderHint(QPainter::Antialiasing);
        cv->setMinimumHeight(240);
        grid->addWidget(cv, i / 2, i % 2);
        pending.insert(cv);
        ++i;
    }
    grid->setRowStretch((i + 1) / 2, 1);
    if (!spinUntil([&] { return pending.isEmpty(); }, 600)) {
        std::fprintf(stderr, "raw: no full paint within 600 s\n");
        return 1;
    }
    f.firstPaintS = clock.nsecsElapsed() / 1e9;
    f.firstPaintCpuS = cpuSeconds(RUSAGE_SELF) - cpu0;
    std::printf("  %s (%d runs): data loaded at %.3f s, first full paint at %.3f s\n", qPrintable(f.label), f.runs,
            f.dataS, f.firstPaintS);
    std::fflush(stdout);
    f.drawn = f.points; // Qt Charts gets every point
    zoomPan(
            xlo, xhi,
            [&](double a, double b) {
                for (QChart* c : std::as_const(charts))
                    static_cast<QValueAxis*>(c->axes(Qt::Horizontal).constFirst())->setRange(a, b);
            },
            window, [&] { return paints; }, f);
    f.paintsPerFrame /= double(f.zoomMs.size() + f.panMs.size());
    f.peakMb = peakRssMb();
    printFigures(f, double(o.runs) / f.runs);
    return 0;
}

// ---- the parent: database, children, table ---------------------------------

struct Row {
    QStringList cells;
    double scale = 1;
};

std::optional<Row> runChild(const QString& self, const Options& o, const QString& mode)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QStringList args{QStringLiteral("--mode"), mode, QStringLiteral("--db"), o.db, QStringLiteral("--runs"),
            QString::number(o.runs), QStringLiteral("--points"), QString::number(o.points), QStringLiteral("--keys"),
            QString::number(o.keys), QStringLiteral("--raw-runs"), QString::number(o.rawRuns),
            QStringLiteral("--repeat"), QString::number(o.repeat)};
    if (!o.screenshot.isEmpty() && mode == QLatin1String("trainyard"))
        args << QStringLiteral("--screenshot") << o.screenshot;
    p.start(self, args);
    if (!p.waitForStarted()) {
        std::fprintf(stderr, "cannot start %s\n", qPrintable(self));
        return std::nullopt;
    }
    std::optional<Row> row;
    QByteArray buffer;
    const auto drain = [&] {
        buffer += p.readAllStandardOutput();
        qsizetype nl;
        while ((nl = buffer.indexOf('\n')) >= 0) {
            const QByteArray line = buffer.left(nl);
            buffer.remove(0, nl + 1);
            if (line.startsWith("ROW|")) {
                Row r;
                r.cells = QString::fromUtf8(line.mid(4)).split(u'|');
                r.scale = r.cells.value(13).toDouble();
                row = r;
            } else {
                std::printf("%s\n", line.constData());
                std::fflush(stdout);
            }
        }
    };
    while (!p.waitForFinished(200))
        drain();
    drain();
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        std::printf("  (%s exited with %d%s)\n", qPrintable(mode), p.exitCode(),
                p.exitStatus() == QProcess::NormalExit ? "" : ", crashed");
    return row;
}

void printTable(const QList<Row>& rows)
{
    std::printf("\n%-46s %5s %10s %8s %11s %9s %9s %9s %9s %8s %10s %7s %21s %19s\n", "", "runs", "points", "data s",
            "1st paint s", "zoom med", "zoom p95", "pan med", "pan p95", "peak MB", "drawn pts", "paints/f",
            "CPU s: data/1st paint", "CPU ms: zoom/pan med");
    for (const Row& r : rows) {
        const QStringList& c = r.cells;
        std::printf("%-46s %5s %10s %8s %11s %9s %9s %9s %9s %8s %10s %7s %21s %19s\n", qPrintable(c[0]),
                qPrintable(c[1]), qPrintable(c[2]), qPrintable(c[3]), qPrintable(c[4]),
                qPrintable(c[5] + QStringLiteral("ms")), qPrintable(c[6] + QStringLiteral("ms")),
                qPrintable(c[7] + QStringLiteral("ms")), qPrintable(c[8] + QStringLiteral("ms")), qPrintable(c[9]),
                qPrintable(c[11]), qPrintable(c[12]), qPrintable(c.value(14) + QStringLiteral(" / ") + c.value(15)),
                qPrintable(c.value(16) + QStringLiteral(" / ") + c.value(17)));
        if (r.scale > 1.0001) {
            // Linear in the number of series: times, and memory above the empty window.
            const double s = r.scale;
            const auto t = [&](int i) { return QString::number(c[i].toDouble() * s, 'f', i >= 5 ? 1 : 2); };
            const double mb = c[10].toDouble() + (c[9].toDouble() - c[10].toDouble()) * s;
            std::printf("%-46s %5.0f %10.0f %8s %11s %9s %9s %9s %9s %8.0f %10.0f %7s\n",
                    qPrintable(QStringLiteral("  extrapolated x%1").arg(s, 0, 'g', 3)), c[1].toDouble() * s,
                    c[2].toDouble() * s, qPrintable(t(3)), qPrintable(t(4)), qPrintable(t(5) + QStringLiteral("ms")),
                    qPrintable(t(6) + QStringLiteral("ms")), qPrintable(t(7) + QStringLiteral("ms")),
                    qPrintable(t(8) + QStringLiteral("ms")), mb, c[11].toDouble() * s, "");
        }
    }
    std::printf("\ngoals (issue 6): first paint < 1 s, zoom/pan repaint < 16 ms median, peak < 500 MB.\n"
                "issue's baseline, raw Qt Charts 6.4.2, 10M points, 1600x900: 9.4 s first paint, 5.9 s per zoom,"
                " 2.6 GB; OpenGL (llvmpipe, Xvfb): 7.5 s, 0.41 s, 1.95 GB.\n");
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it). Not in the
    // children's output (--mode), which the parent reads.
    if (std::none_of(argv + 1, argv + argc, [](const char* a) { return std::strcmp(a, "--mode") == 0; }))
        std::printf("bench_compare v1\n");
    Options o;
    QStringList args;
    for (int i = 1; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    for (int i = 0; i < args.size(); ++i) {
        const QString& a = args[i];
        const auto next = [&] { return i + 1 < args.size() ? args[++i] : QString(); };
        if (a == QLatin1String("--runs"))
            o.runs = next().toInt();
        else if (a == QLatin1String("--points"))
            o.points = next().toLongLong();
        else if (a == QLatin1String("--keys"))
            o.keys = std::clamp(next().toInt(), 1, 6);
        else if (a == QLatin1String("--db"))
            o.db = next();
        else if (a == QLatin1String("--reuse"))
            o.reuse = true;
        else if (a == QLatin1String("--before"))
            o.before = true;
        else if (a == QLatin1String("--index-read"))
            o.indexRead = true;
        else if (a == QLatin1String("--raw-runs"))
            o.rawRuns = next().toInt();
        else if (a == QLatin1String("--opengl"))
            o.opengl = true;
        else if (a == QLatin1String("--screenshot"))
            o.screenshot = next();
        else if (a == QLatin1String("--mode"))
            o.mode = next();
        else if (a == QLatin1String("--repeat"))
            o.repeat = std::max(1, next().toInt());
        else {
            std::fprintf(stderr, "unknown argument %s\n", qPrintable(a));
            return 2;
        }
    }
    if (o.runs < 1 || o.points < o.keys) {
        std::fprintf(stderr, "--runs and --points must be positive\n");
        return 2;
    }
    if (!o.mode.isEmpty()) {
        QApplication app(argc, argv);
        if (o.mode == QLatin1String("trainyard"))
            return runTrainyard(o, CompareLoader::ReadPath::Auto);
        if (o.mode == QLatin1String("store"))
            return runTrainyard(o, CompareLoader::ReadPath::ResultStore);
        if (o.mode == QLatin1String("index"))
            return runTrainyard(o, CompareLoader::ReadPath::ColumnsByIndex);
        if (o.mode == QLatin1String("raw") || o.mode == QLatin1String("raw-gl"))
            return runRaw(o, o.mode == QLatin1String("raw-gl"));
        return 2;
    }

    QCoreApplication app(argc, argv);
    if (o.rawRuns < 0)
        o.rawRuns = std::min(o.runs, 10);
    QTemporaryDir tmp;
    const bool own = o.db.isEmpty();
    if (own)
        o.db = tmp.filePath(QStringLiteral("compare.db"));
    std::printf("bench_compare: %d runs x %lld points, %d keys, platform %s\n", o.runs,
            static_cast<long long>(o.points), o.keys,
            qgetenv("QT_QPA_PLATFORM").isEmpty() ? "default" : qgetenv("QT_QPA_PLATFORM").constData());
    if (!(o.reuse && QFileInfo::exists(o.db))) {
        if (auto r = createDatabase(o); !r) {
            std::fprintf(stderr, "%s\n", qPrintable(r.error().message));
            return 1;
        }
    } else {
        std::printf("database: %s (reused)\n", qPrintable(o.db));
    }
    std::fflush(stdout);
    const QString self = QCoreApplication::applicationFilePath();
    QList<Row> rows;
    QStringList modes{QStringLiteral("trainyard")};
    if (o.indexRead)
        modes << QStringLiteral("index");
    if (o.before)
        modes << QStringLiteral("store");
    if (o.rawRuns > 0) {
        modes << QStringLiteral("raw");
        if (o.opengl)
            modes << QStringLiteral("raw-gl");
    }
    for (const QString& m : modes)
        if (auto r = runChild(self, o, m))
            rows.append(*r);
    printTable(rows);
    return rows.size() == modes.size() || (o.opengl && rows.size() + 1 == modes.size()) ? 0 : 1;
}
