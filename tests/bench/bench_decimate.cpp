// The two halves of a compare view frame, alone and on one thread: M4
// decimation with the index (ui/charts/M4Decimator.h) and SpanRaster drawing
// the sample (ui/charts/SpanRaster.h), over bench_compare's zoom/pan script
// (10 zoom-ins x0.7 around 40 % of the range, 10 pans right and 10 left of
// 5 %, 10 zoom-outs) on S series of P points (default 100 x 50,000: one key of
// bench_compare's 100 runs x 100k points over 2 keys) in a W x H plot
// (default 700 x 400, a chart of the 1600x900 compare view).
//
// Prints CPU ms per frame for all series (one thread; the view splits the
// series over the cores) and ns per pixel column, beside a plain scan of
// every visible point for min/max (what decimating without the index costs).
//
// Usage: bench_decimate [--series 100] [--points 50000] [--width 700]
//        [--height 400] [--repeat 5] [--frames (each frame's figures)]
#include "ui/charts/M4Decimator.h"
#include "ui/charts/SpanRaster.h"

#include "ZoomPanScript.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QRandomGenerator>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace ty;

namespace {

struct Series {
    std::vector<double> x, y;
    M4Index index;
};

// A noisy decaying loss with rare spikes, like bench_compare's train/loss.
Series makeSeries(qsizetype n, quint32 seed)
{
    QRandomGenerator rng(seed);
    Series s;
    s.x.resize(std::size_t(n));
    s.y.resize(std::size_t(n));
    double level = 2.3 + rng.generateDouble() * 0.4;
    for (qsizetype i = 0; i < n; ++i) {
        level = level * (1.0 - 3.0 / double(n)) + 0.02 / double(n);
        double v = level * (1.0 + (rng.generateDouble() - 0.5) * 0.3);
        if (rng.bounded(5000) == 0)
            v += 2.0 * rng.generateDouble();
        s.x[std::size_t(i)] = double(i * 2);
        s.y[std::size_t(i)] = v;
    }
    s.index = M4Index(s.x, s.y);
    return s;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_decimate v2\n");
    std::fflush(stdout);
    QCoreApplication app(argc, argv);
    int seriesCount = 100, width = 700, height = 400, repeat = 5;
    bool perFrame = false;
    qsizetype points = 50'000;
    const QStringList args = app.arguments();
    for (int i = 1; i < args.size(); ++i) {
        const QString& a = args[i];
        const auto next = [&] { return i + 1 < args.size() ? args[++i].toLongLong() : 0; };
        if (a == QLatin1String("--series"))
            seriesCount = int(next());
        else if (a == QLatin1String("--points"))
            points = next();
        else if (a == QLatin1String("--width"))
            width = int(next());
        else if (a == QLatin1String("--height"))
            height = int(next());
        else if (a == QLatin1String("--repeat"))
            repeat = int(next());
        else if (a == QLatin1String("--frames"))
            perFrame = true;
        else {
            std::fprintf(stderr, "unknown argument %s\n", qPrintable(a));
            return 2;
        }
    }
    if (seriesCount < 1 || points < 2 || width < 2 || height < 2 || repeat < 1) {
        std::fprintf(stderr, "--series, --points, --width, --height, --repeat must be positive\n");
        return 2;
    }
    std::vector<Series> series;
    series.reserve(std::size_t(seriesCount));
    for (int k = 0; k < seriesCount; ++k)
        series.push_back(makeSeries(points, 1000u + quint32(k)));
    double yLo = 1e300, yHi = -1e300;
    for (const Series& s : series)
        for (const double v : s.y) {
            yLo = std::min(yLo, v);
            yHi = std::max(yHi, v);
        }

    // The frames: bench_compare's script.
    std::vector<std::pair<double, double>> frames;
    for (const ZoomPanFrame& step : zoomPanScript(0.0, double((points - 1) * 2)))
        frames.emplace_back(step.lo, step.hi);

    QImage image(width, height, QImage::Format_ARGB32_Premultiplied);
    std::vector<double> decimateMs, pointLoopMs, rasterMs, rowRasterMs, scanMs;
    std::vector<QRgb> columns;
    qint64 pixelColumns = 0, drawn = 0, scannedPoints = 0;
    volatile double sink = 0;
    std::vector<M4Result> results(series.size());
    std::vector<QPointF> mapped;
    for (int r = 0; r < repeat; ++r) {
        for (const auto& [lo, hi] : frames) {
            const M4Viewport vp{lo, hi, 0.3, double(width) - 0.6};
            QElapsedTimer t;
            t.start();
            for (std::size_t k = 0; k < series.size(); ++k)
                results[k] = decimateM4(series[k].x, series[k].y, vp, &series[k].index);
            decimateMs.push_back(t.nsecsElapsed() / 1e6);

            // The same without the index: every point in range visited.
            t.restart();
            for (std::size_t k = 0; k < series.size(); ++k)
                sink = sink + double(decimateM4(series[k].x, series[k].y, vp).scanned);
            pointLoopMs.push_back(t.nsecsElapsed() / 1e6);

            // Draw as the chart does: column-major, composed into an image.
            const double sx = vp.pixelWidth / (hi - lo), sy = double(height) / (yHi - yLo);
            const auto draw = [&](SpanRaster& raster) {
                for (std::size_t k = 0; k < series.size(); ++k) {
                    for (const QList<QPointF>& seg : std::as_const(results[k].segments)) {
                        mapped.resize(std::size_t(seg.size()));
                        for (qsizetype i = 0; i < seg.size(); ++i)
                            mapped[std::size_t(i)] = QPointF(
                                    vp.pixelLeft + (seg[i].x() - lo) * sx, double(height) - (seg[i].y() - yLo) * sy);
                        raster.drawPolyline(mapped.data(), qsizetype(mapped.size()), qRgb(30 + int(k), 90, 160));
                    }
                }
            };
            t.restart();
            columns.assign(std::size_t(width) * std::size_t(height), 0);
            SpanRaster columnRaster(columns.data(), width, height);
            draw(columnRaster);
            const QRgb* layer = columns.data();
            SpanRaster::composeColumnMajor(std::span<const QRgb* const>(&layer, 1), height, image, 0, width);
            rasterMs.push_back(t.nsecsElapsed() / 1e6);

            // The same into a row-major QImage straight away.
            t.restart();
            image.fill(Qt::transparent);
            SpanRaster rowRaster(image);
            draw(rowRaster);
            rowRasterMs.push_back(t.nsecsElapsed() / 1e6);

            // Baseline: min/max of every visible point, no columns, no index.
            t.restart();
            for (const Series& s : series) {
                const auto from = std::lower_bound(s.x.begin(), s.x.end(), lo) - s.x.begin();
                const auto to = std::upper_bound(s.x.begin(), s.x.end(), hi) - s.x.begin();
                double mn = 1e300, mx = -1e300;
                for (auto i = from; i < to; ++i) {
                    mn = std::min(mn, s.y[std::size_t(i)]);
                    mx = std::max(mx, s.y[std::size_t(i)]);
                }
                sink = sink + mn + mx;
                scannedPoints += to - from;
            }
            scanMs.push_back(t.nsecsElapsed() / 1e6);
            if (perFrame && r == repeat - 1)
                std::printf(
                        "  frame %2zu: %8.1f points a column: index %6.2f ms, point loop %6.2f ms, raster %6.2f ms (row-major %6.2f)\n",
                        std::size_t(decimateMs.size() - 1) % frames.size(), double(results[0].scanned) / width,
                        decimateMs.back(), pointLoopMs.back(), rasterMs.back(), rowRasterMs.back());
            if (r == 0)
                for (const M4Result& res : results) {
                    drawn += res.pointCount();
                    pixelColumns += qint64(width);
                }
        }
    }
    const double perColumn = 1e6 * median(decimateMs) / (double(series.size()) * width);
    std::printf("bench_decimate: %d series x %lld points, %d x %d plot, %zu frames x %d\n", seriesCount,
            static_cast<long long>(points), width, height, frames.size(), repeat);
    std::printf("  M4 decimation (index):      median %7.2f ms a frame, %5.1f ns a pixel column\n", median(decimateMs),
            perColumn);
    std::printf("  M4 decimation (point loop): median %7.2f ms a frame\n", median(pointLoopMs));
    std::printf(
            "  SpanRaster, column-major + compose (the chart's): median %7.2f ms a frame, %lld points drawn a pass\n",
            median(rasterMs), static_cast<long long>(drawn / qint64(frames.size())));
    std::printf("  SpanRaster straight into a row-major QImage:      median %7.2f ms a frame\n", median(rowRasterMs));
    std::printf("  baseline, min/max scan of every visible point: median %7.2f ms a frame (%lld points a pass)\n",
            median(scanMs), static_cast<long long>(scannedPoints / qint64(frames.size() * repeat)));
    std::printf("(one thread; the compare view splits series over the cores. bench_compare's frame goal: 16 ms.)\n");
    return 0;
}
