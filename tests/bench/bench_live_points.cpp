// bench_live_points: the GUI's memory for a followed run's live metric points
// (issue #27): a 24-hour run at 1,000 points/s (86.4 M points over a few
// keys) fed as fast as it goes through the path MainWindow hands live points
// to (MainWindow::flushLivePoints -> MetricChartsPanel::appendPoints ->
// MetricChartWidget -> DecimatedChart), with the Metrics tab's panel shown
// and painted now and then. Prints RSS (VmRSS, VmHWM from /proc/self/status),
// the C heap in use (mallinfo2) and bytes per point at checkpoints, the time
// per appended point, the longest batch (a GUI-thread event) and the paint
// times. Then (v2) one full decimation frame and zoomed ones over the
// `loss` chart's points, from the packed series (decimateM4Packed) against
// plain x/y columns with their M4Index (what the chart did before issue #27),
// both in this run; "n/a" in a build without packed series.
//
//   bench_live_points [--hours H (24)] [--rate POINTS_PER_S (1000)]
//                     [--keys K (4, at most 4)] [--batch-ms MS (1000)]
//                     [--paint-every-min M (10)]
//
// Points: each training step logs every key with the same step and wall
// time (rate / K steps a second, wall time in ms), the values printed as a
// trainer's log line prints them (loss %.5f, lr %.3e, grad_norm %.4f,
// accuracy %.4f) and parsed back with strtod, as MetricExtractor reads a
// console line. A batch holds --batch-ms of simulated time per key (the
// window queues live points and hands them over every 100 ms of real time).
// Checkpoints at 1 h, 6 h and 24 h of simulated data (and the end).
// bytes/point = (VmRSS - VmRSS before the first point) / points.

#include "ui/charts/M4Decimator.h"
#include "ui/charts/MetricChartWidget.h"
#include "ui/charts/MetricChartsPanel.h"
#if __has_include("ui/charts/PackedM4.h")
#include "ui/charts/PackedM4.h"
#define HAVE_PACKED 1
#endif

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QPixmap>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <random>
#include <vector>

using namespace ty;

namespace {

double statusKiB(const char* field)
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray all = f.readAll();
    const QByteArray key = QByteArray(field) + ':';
    const qsizetype at = all.indexOf(key);
    if (at < 0)
        return 0;
    return std::strtod(all.constData() + at + key.size(), nullptr);
}

double heapMiB()
{
    const struct mallinfo2 m = mallinfo2();
    return double(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
}

double parsed(const char* format, double v)
{
    char text[64];
    std::snprintf(text, sizeof text, format, v);
    return std::strtod(text, nullptr);
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    double hours = 24;
    int rate = 1000;
    int keys = 4;
    int batchMs = 1000;
    int paintEveryMin = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        const QByteArray a = argv[i];
        const char* v = argv[i + 1];
        if (a == "--hours")
            hours = std::atof(v);
        else if (a == "--rate")
            rate = std::atoi(v);
        else if (a == "--keys")
            keys = std::clamp(std::atoi(v), 1, 4);
        else if (a == "--batch-ms")
            batchMs = std::max(1, std::atoi(v));
        else if (a == "--paint-every-min")
            paintEveryMin = std::max(1, std::atoi(v));
        else {
            std::fprintf(stderr, "bench_live_points: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    std::printf("bench_live_points v2\n");
    const double stepsPerSecond = double(rate) / keys;
    std::printf("%.1f h at %d points/s over %d keys (%.0f steps/s), batches of %d ms, painted every %d min\n", hours,
            rate, keys, stepsPerSecond, batchMs, paintEveryMin);
    std::fflush(stdout);

    MetricChartsPanel panel;
    panel.resize(1600, 900);
    panel.show();
    const QString names[4]
            = {QStringLiteral("loss"), QStringLiteral("lr"), QStringLiteral("grad_norm"), QStringLiteral("accuracy")};
    // A first point per key, so every chart exists before the baseline.
    const double t0 = 1.7e12;
    std::mt19937_64 rng(27);
    std::normal_distribution<double> noise(0.0, 1.0);
    const auto valueOf = [&](int key, qint64 step) {
        const double s = double(step);
        switch (key) {
        case 0: return parsed("%.5f", 2.0 / (1.0 + s * 1e-5) * (1.0 + 0.05 * noise(rng)));
        case 1: return parsed("%.3e", 3e-4 * std::pow(0.999999, s));
        case 2: return parsed("%.4f", std::abs(1.0 + 0.3 * noise(rng)));
        default: return parsed("%.4f", std::clamp(1.0 - 0.9 / (1.0 + s * 1e-5) + 0.01 * noise(rng), 0.0, 1.0));
        }
    };
    qint64 step = 0;
    // Wall time: ms, the mean step time apart with +-1 ms of jitter.
    double wall = t0;
    const double stride = std::max(1.0, std::floor(1000.0 / stepsPerSecond));
    const auto nextWall = [&] { return wall += stride + double(rng() % 3) - 1.0; };
    for (int k = 0; k < keys; ++k)
        panel.appendPoints(names[k], {SeriesPoint{0.0, valueOf(k, 0), wall}});
    ++step;
    panel.grab();
    app.processEvents();
    const double baseRss = statusKiB("VmRSS");
    const double baseHeap = heapMiB();
    std::printf("before the points: VmRSS %.1f MiB, heap in use %.1f MiB\n", baseRss / 1024.0, baseHeap);

    const qint64 totalSteps = qint64(hours * 3600.0 * stepsPerSecond);
    const qint64 stepsPerBatch = std::max<qint64>(1, qint64(stepsPerSecond * batchMs / 1000.0));
    const qint64 stepsPerPaint = qint64(stepsPerSecond * 60.0 * paintEveryMin);
    std::vector<double> checkpoints = {1, 6, 24};
    checkpoints.erase(std::remove_if(checkpoints.begin(), checkpoints.end(), [&](double h) { return h > hours; }),
            checkpoints.end());
    if (checkpoints.empty() || checkpoints.back() < hours)
        checkpoints.push_back(hours);
    std::size_t nextCheck = 0;
    qint64 nextPaint = stepsPerPaint;
    double appendNs = 0, paintMsMax = 0, paintMsSum = 0, batchMsMax = 0;
    int paints = 0;
    qint64 pointsIn = keys;
    QElapsedTimer clock;
    std::vector<QList<SeriesPoint>> batch(static_cast<std::size_t>(keys));
    while (step <= totalSteps) {
        const qint64 end = std::min(totalSteps + 1, step + stepsPerBatch);
        for (auto& b : batch)
            b.clear();
        for (; step < end; ++step) {
            const double w = nextWall();
            for (int k = 0; k < keys; ++k)
                batch[std::size_t(k)].append(SeriesPoint{double(step), valueOf(k, step), w});
        }
        clock.start();
        for (int k = 0; k < keys; ++k)
            panel.appendPoints(names[k], batch[std::size_t(k)]);
        appendNs += double(clock.nsecsElapsed());
        batchMsMax = std::max(batchMsMax, double(clock.nsecsElapsed()) / 1e6);
        pointsIn += qint64(keys) * qint64(batch.front().size());
        if (step >= nextPaint) {
            nextPaint += stepsPerPaint;
            clock.start();
            panel.grab();
            app.processEvents();
            const double ms = double(clock.nsecsElapsed()) / 1e6;
            paintMsMax = std::max(paintMsMax, ms);
            paintMsSum += ms;
            ++paints;
        }
        const double simHours = double(step) / stepsPerSecond / 3600.0;
        if (nextCheck < checkpoints.size() && (simHours >= checkpoints[nextCheck] || step > totalSteps)) {
            ++nextCheck;
            const double rss = statusKiB("VmRSS"), hwm = statusKiB("VmHWM");
            std::printf("at %.1f h: %lld points; VmRSS %.1f MiB, VmHWM %.1f MiB, heap in use %.1f MiB; "
                        "%.2f bytes/point (RSS), %.2f (heap); append %.1f ns/point, longest batch %.1f ms; %d "
                        "paints, mean %.1f ms, max %.1f ms\n",
                    simHours, static_cast<long long>(pointsIn), rss / 1024.0, hwm / 1024.0, heapMiB(),
                    (rss - baseRss) * 1024.0 / double(pointsIn), (heapMiB() - baseHeap) * 1048576.0 / double(pointsIn),
                    appendNs / double(pointsIn), batchMsMax, paints, paints ? paintMsSum / paints : 0.0, paintMsMax);
            std::fflush(stdout);
        }
    }
    const MetricChartWidget* loss = panel.chart(names[0]);
    std::printf("chart 'loss' holds %lld points\n", static_cast<long long>(loss ? loss->pointCount() : 0));
#ifdef HAVE_PACKED
    // Decimation frames over the loss series: packed against plain + M4Index.
    const std::shared_ptr<const PackedMetricSeries> packed = loss->lineData(QString());
    std::vector<double> x, y;
    packed->decode(0, packed->size(), &x, nullptr, &y);
    clock.start();
    const M4Index index(x, y);
    const double indexMs = double(clock.nsecsElapsed()) / 1e6;
    std::printf("plain columns + M4Index: %.1f MiB (the index built in %.1f ms); packed series %.1f MiB\n",
            double(x.size()) * 16.0 / 1048576.0 + 0.0, indexMs, double(packed->bytes()) / 1048576.0);
    const double lo = x.front(), hi = x.back(), mid = (lo + hi) / 2;
    for (const double fraction : {1.0, 0.1, 0.01, 0.001, 0.0001}) {
        const double half = (hi - lo) * fraction / 2;
        const M4Viewport vp{mid - half, mid + half, 60.0, 760.0};
        const auto best = [&](auto&& frame) {
            double bestMs = 1e300;
            qsizetype drawn = 0;
            for (int r = 0; r < 5; ++r) {
                clock.start();
                drawn = frame().pointCount();
                bestMs = std::min(bestMs, double(clock.nsecsElapsed()) / 1e6);
            }
            return std::pair{bestMs, drawn};
        };
        const auto [plainMs, plainDrawn] = best([&] { return decimateM4(x, y, vp, &index); });
        const auto [packedMs, packedDrawn] = best([&] { return decimateM4Packed(*packed, PackedXMap{}, vp); });
        std::printf("frame over %g of the x range, 760 px: plain + index %.3f ms, packed %.3f ms (%.2fx); %lld / %lld "
                    "points drawn\n",
                fraction, plainMs, packedMs, packedMs / plainMs, static_cast<long long>(plainDrawn),
                static_cast<long long>(packedDrawn));
    }
#else
    std::printf("decimation frames: n/a (no packed series in this build)\n");
#endif
    return 0;
}
