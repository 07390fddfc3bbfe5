// The packed live series (core/store/PackedMetricSeries) and decimation
// straight from it (ui/charts/PackedM4), issue #27: the series returns
// exactly the points appended (bit for bit, across chunk boundaries, NaN
// payloads and -0.0 included), its decimated sample equals decimateM4 over
// the plain columns, and a followed chart costs a few bytes a point.

#include "core/store/MetricBlock.h"
#include "core/store/PackedMetricSeries.h"
#include "ui/charts/DecimatedChart.h"
#include "ui/charts/HoverReadout.h"
#include "ui/charts/M4Decimator.h"
#include "ui/charts/MetricChartWidget.h"
#include "ui/charts/PackedM4.h"

#include <QTest>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <malloc.h>
#include <random>
#include <vector>

using namespace ty;

namespace {

constexpr int K = PackedMetricSeries::kChunkPoints;

bool sameBits(double a, double b)
{
    return std::bit_cast<quint64>(a) == std::bit_cast<quint64>(b);
}

double printed(const char* format, double v)
{
    char text[64];
    std::snprintf(text, sizeof text, format, v);
    return std::strtod(text, nullptr);
}

struct Plain {
    std::vector<double> steps, walls, values;
    void add(PackedMetricSeries& s, double step, double wall, double value)
    {
        steps.push_back(step);
        walls.push_back(wall);
        values.push_back(value);
        s.append(step, wall, value);
    }
};

// Exact equality of two samples (QPointF's == is fuzzy).
QString sampleDifference(const M4Result& a, const M4Result& b)
{
    if (a.segments.size() != b.segments.size())
        return QStringLiteral("segments %1 vs %2").arg(a.segments.size()).arg(b.segments.size());
    for (qsizetype s = 0; s < a.segments.size(); ++s) {
        if (a.segments[s].size() != b.segments[s].size())
            return QStringLiteral("segment %1: %2 vs %3 points")
                    .arg(s)
                    .arg(a.segments[s].size())
                    .arg(b.segments[s].size());
        for (qsizetype i = 0; i < a.segments[s].size(); ++i) {
            const QPointF p = a.segments[s][i], q = b.segments[s][i];
            if (!sameBits(p.x(), q.x()) || !sameBits(p.y(), q.y()))
                return QStringLiteral("segment %1 point %2: (%3, %4) vs (%5, %6)")
                        .arg(s)
                        .arg(i)
                        .arg(p.x(), 0, 'g', 17)
                        .arg(p.y(), 0, 'g', 17)
                        .arg(q.x(), 0, 'g', 17)
                        .arg(q.y(), 0, 'g', 17);
        }
    }
    if (a.gaps.size() != b.gaps.size())
        return QStringLiteral("gaps %1 vs %2").arg(a.gaps.size()).arg(b.gaps.size());
    for (qsizetype i = 0; i < a.gaps.size(); ++i)
        if (!sameBits(a.gaps[i].x, b.gaps[i].x) || a.gaps[i].kind != b.gaps[i].kind)
            return QStringLiteral("gap %1").arg(i);
    if (a.haveY != b.haveY || (a.haveY && (!sameBits(a.yMin, b.yMin) || !sameBits(a.yMax, b.yMax))))
        return QStringLiteral("y extent");
    if (a.scanned != b.scanned)
        return QStringLiteral("scanned %1 vs %2").arg(a.scanned).arg(b.scanned);
    return {};
}

double heapInUse()
{
    const struct mallinfo2 m = mallinfo2();
    return double(m.uordblks + m.hblkhd);
}

} // namespace

class TestPackedLiveSeries : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void returnsExactlyWhatWasAppended()
    {
        // Chunks of every kind: decimal values (order 1 and 2), integer
        // steps with jitter-free and jittered wall times, then chunks that
        // must stay raw (NaN payloads, +-inf, -0.0, subnormals, arbitrary
        // bit patterns, fractional steps), and an open tail.
        PackedMetricSeries s;
        Plain p;
        std::mt19937_64 rng(7);
        double wall = 1.7e12;
        for (int i = 0; i < 3 * K; ++i) {
            wall += 3 + double(rng() % 3);
            p.add(s, double(i), wall, printed("%.5f", 2.0 / (1.0 + i * 1e-3) + 0.01 * double(rng() % 100)));
        }
        for (int i = 3 * K; i < 4 * K; ++i)
            p.add(s, double(i), 1.7e12 + i * 4.0, printed("%.3e", 3e-4 * std::pow(0.999, i))); // lr
        const double specials[] = {std::bit_cast<double>(quint64(0x7ff8000000000123)),         // NaN with a payload
                -std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                -std::numeric_limits<double>::infinity(), -0.0, 0.0, std::numeric_limits<double>::denorm_min(), 1e300,
                -1e-300, 0.1, 9007199254740993.0, std::nextafter(0.3, 1.0)};
        for (int i = 4 * K; i < 6 * K; ++i) {
            const double v = (i % 7 == 0) ? specials[std::size_t(i / 7) % std::size(specials)]
                                          : std::bit_cast<double>(rng() & 0x7fefffffffffffffULL);
            const double w = (i % 50 == 0) ? std::numeric_limits<double>::quiet_NaN() : 1.7e12 + i;
            p.add(s, i + 0.25 * (i % 3), w, v);
        }
        for (int i = 6 * K; i < 6 * K + 77; ++i)
            p.add(s, double(i), 1.7e12 + i, double(i % 5)); // the open tail
        QCOMPARE(s.size(), qsizetype(p.values.size()));
        QCOMPARE(s.chunkCount(), qsizetype(7));
        PackedMetricSeries::Chunk buf;
        for (qsizetype i = 0; i < s.size(); ++i) {
            const PackedMetricSeries::Point q = s.at(i, buf);
            const auto k = std::size_t(i);
            QVERIFY2(sameBits(q.step, p.steps[k]) && sameBits(q.wallMs, p.walls[k]) && sameBits(q.value, p.values[k]),
                    qPrintable(QStringLiteral("point %1").arg(i)));
        }
        // Ranges across chunk boundaries.
        for (const auto& [from, to] :
                {std::pair<qsizetype, qsizetype>{0, s.size()}, {K - 3, 2 * K + 5}, {5 * K, 6 * K + 77}, {100, 101}}) {
            std::vector<double> st, wa, va;
            s.decode(from, to, &st, &wa, &va);
            QCOMPARE(qsizetype(va.size()), to - from);
            for (qsizetype i = from; i < to; ++i) {
                const auto k = std::size_t(i - from), j = std::size_t(i);
                QVERIFY(sameBits(st[k], p.steps[j]) && sameBits(wa[k], p.walls[j]) && sameBits(va[k], p.values[j]));
            }
        }
        QCOMPARE(s.last().value, p.values.back());
        QVERIFY(!s.wallsNonDecreasing()); // NaN wall times
        // Decimal chunks are packed small: 1,000 chunks of a printed loss with
        // jittered wall times take under 6 bytes a point, summaries included.
        PackedMetricSeries small;
        wall = 1.7e12;
        for (int i = 0; i < 1000 * K; ++i) {
            wall += 3 + double(rng() % 3);
            small.append(double(i), wall, printed("%.5f", 2.0 / (1.0 + i * 1e-3) + 0.01 * double(rng() % 100)));
        }
        QVERIFY2(small.bytes() < std::size_t(small.size()) * 6, qPrintable(QString::number(small.bytes())));

        // A stored block folds in: the same points as MetricBlockView reads.
        std::vector<MetricBlockPoint> block;
        for (int i = 0; i < 300; ++i)
            block.push_back(MetricBlockPoint{i + 1, 10 * i, 1700000000000 + i, printed("%.4f", 1.0 / (i + 1)), {}});
        const QByteArray bytes = encodeMetricBlock(block.data(), int(block.size()));
        const auto view = MetricBlockView::parse(bytes.constData(), std::size_t(bytes.size()));
        QVERIFY(view);
        PackedMetricSeries fromBlock;
        fromBlock.appendBlock(*view, 290);
        QCOMPARE(fromBlock.size(), qsizetype(290));
        for (int i = 0; i < 290; ++i) {
            const PackedMetricSeries::Point q = fromBlock.at(i, buf);
            QCOMPARE(q.step, double(10 * i));
            QCOMPARE(q.wallMs, double(1700000000000 + i));
            QVERIFY(sameBits(q.value, view->value(i)));
        }
        QCOMPARE(fromBlock.lowerBoundStep(2555), qsizetype(256));
        QCOMPARE(fromBlock.lowerBoundStep(2560), qsizetype(256));
        QCOMPARE(fromBlock.lowerBoundStep(1e9), qsizetype(290));
    }

    void decimationEqualsPlainColumns()
    {
        // 300k points: a noisy decimal loss, a stretch of constant values,
        // NaN/inf gaps (one inside a chunk, a run of them), steps with
        // holes; x = step and x = seconds since start.
        PackedMetricSeries s;
        Plain p;
        std::mt19937_64 rng(27);
        std::normal_distribution<double> noise(0.0, 1.0);
        double wall = 1.7e12;
        qint64 step = 0;
        for (int i = 0; i < 300000; ++i) {
            step += (i % 10000 == 0) ? 500 : 1;
            wall += 3 + double(rng() % 3);
            double v = printed("%.5f", 2.0 / (1.0 + step * 1e-4) * (1.0 + 0.05 * noise(rng)));
            if (i >= 50000 && i < 60000)
                v = 0.5;
            if (i == 123457 || (i >= 200000 && i < 200300))
                v = std::numeric_limits<double>::quiet_NaN();
            if (i == 250001)
                v = std::numeric_limits<double>::infinity();
            p.add(s, double(step), wall, v);
        }
        for (const XAxisMode mode : {XAxisMode::Step, XAxisMode::RelativeTime}) {
            const PackedXMap map{mode, 1.7e12};
            QVERIFY(map.directly(s));
            std::vector<double> x(p.steps.size());
            for (std::size_t i = 0; i < x.size(); ++i)
                x[i] = map(p.steps[i], p.walls[i]);
            const M4Index index(x, p.values);
            const double lo = x.front(), hi = x.back(), span = hi - lo;
            const M4Viewport viewports[] = {
                    {lo, hi, 0.0, 800.0},                              // all of it
                    {lo - span * 0.1, hi + span * 0.3, 57.5, 1213.0},  // with margins, fractional left
                    {lo + span * 0.41, lo + span * 0.42, 3.25, 700.0}, // zoomed: a few points a column
                    {lo + span * 0.5, lo + span * 0.5001, 0.0, 900.0}, // columns wider than points
                    {x[123000], x[124000], 10.0, 333.0},               // around the lone NaN
                    {x[199000], x[201000], 0.0, 640.0},                // the NaN run
                    {x[50000] - 1, x[60000] + 1, 0.0, 3.0},            // 3 columns, constant values
                    {hi + 10, hi + 20, 0.0, 100.0},                    // right of every point
                    {lo - 20, lo - 10, 0.0, 100.0},                    // left of every point
            };
            for (const M4Viewport& vp : viewports) {
                const M4Result plain = decimateM4(x, p.values, vp);
                const M4Result withIndex = decimateM4(x, p.values, vp, &index);
                const M4Result packed = decimateM4Packed(s, map, vp);
                const QString what = QStringLiteral("mode %1, x %2..%3, %4 px")
                                             .arg(int(mode))
                                             .arg(vp.xMin, 0, 'g', 12)
                                             .arg(vp.xMax, 0, 'g', 12)
                                             .arg(vp.pixelWidth);
                const QString d1 = sampleDifference(packed, plain);
                QVERIFY2(d1.isEmpty(), qPrintable(what + QStringLiteral(": ") + d1));
                QCOMPARE(sampleDifference(withIndex, plain), QString());
                // A sub-range, as the chart's live tail uses it.
                const std::size_t from = 777, to = 260000;
                const M4Result plainPart = decimateM4(std::span<const double>(x).subspan(from, to - from),
                        std::span<const double>(p.values).subspan(from, to - from), vp);
                const QString d2
                        = sampleDifference(decimateM4Packed(s, map, vp, qsizetype(from), qsizetype(to)), plainPart);
                QVERIFY2(d2.isEmpty(), qPrintable(what + QStringLiteral(" (part): ") + d2));
            }
            // The hover's "last point at or before x".
            for (const double at : {lo - 1, lo, x[1000], x[1000] + 0.5, x[256 * 7 - 1], hi, hi + 1})
                QCOMPARE(packedIndexAtOrBefore(s, map, at),
                        qsizetype(std::upper_bound(x.begin(), x.end(), at) - x.begin()) - 1);
        }
    }

    void followedChartCostsAFewBytesAPoint()
    {
        // A chart following a run for 1.5 M points (decimal values, as a
        // trainer prints them), 250 at a time: the heap grows by the packed
        // series, not by 40-60 bytes a point of plain columns.
        MetricChartWidget w(QStringLiteral("loss"));
        w.resize(800, 400);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        std::mt19937_64 rng(5);
        std::normal_distribution<double> noise(0.0, 1.0);
        double wall = 1.7e12;
        w.appendPoints({SeriesPoint{0.0, 2.0, wall}});
        const double before = heapInUse();
        constexpr int kPoints = 1500000;
        int step = 1;
        while (step < kPoints) {
            QList<SeriesPoint> batch;
            for (int i = 0; i < 250; ++i, ++step) {
                wall += 3 + double(rng() % 3);
                batch.append(SeriesPoint{
                        double(step), printed("%.5f", 2.0 / (1.0 + step * 1e-5) * (1.0 + 0.05 * noise(rng))), wall});
            }
            w.appendPoints(batch);
        }
        w.decimatedChart()->redecimate();
        const double perPoint = (heapInUse() - before) / kPoints;
        qInfo("heap: %.2f bytes a point", perPoint);
        QCOMPARE(w.pointCount(), qsizetype(step));
        QVERIFY2(perPoint < 6.0, qPrintable(QString::number(perPoint)));
        // And what is drawn is the sample of every point.
        const std::vector<double> x = w.steps(), y = w.values();
        const M4Result all = decimateM4(x, y, w.decimatedChart()->viewport());
        const auto drawn = w.decimatedChart()->drawnSegments(0);
        QCOMPARE(drawn.size(), all.segments.size());
        QVERIFY(drawn == all.segments);
    }

    void packedChartThroughSmoothingLogAndTimeAxes()
    {
        // A packed line unpacked while smoothing or the log axis is on,
        // packed again after, appends in between: every point kept and the
        // drawn sample that of every point; the hover reads the packed
        // points; the time axis draws from them too.
        MetricChartWidget w(QStringLiteral("loss"));
        w.resize(800, 400);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        DecimatedChart* c = w.decimatedChart();
        double wall = 1.7e12;
        int step = 0;
        const auto feed = [&](int n) {
            QList<SeriesPoint> batch;
            for (int i = 0; i < n; ++i, ++step) {
                wall += 4;
                batch.append(SeriesPoint{double(step), printed("%.4f", 1.0 + std::sin(step * 0.01) * 0.5), wall});
            }
            w.appendPoints(batch);
        };
        const auto drawnIsEveryPoint = [&](XAxisMode mode) {
            const std::vector<double> steps = w.steps(), walls = w.wallMs(), y = w.values();
            const std::vector<double> x = mapX(mode, steps, walls, {}, 1.7e12);
            return c->drawnSegments(0) == decimateM4(x, y, c->viewport()).segments;
        };
        feed(3000);
        QVERIFY(drawnIsEveryPoint(XAxisMode::Step));
        c->setSmoothing(0.6);
        feed(1000);
        QCOMPARE(c->totalPoints(0), qsizetype(4000));
        c->setYScale(DecimatedChart::YScale::Log);
        feed(500);
        QCOMPARE(c->totalPoints(0), qsizetype(4500));
        c->setYScale(DecimatedChart::YScale::Linear);
        c->setSmoothing(0);
        feed(700);
        QCOMPARE(c->totalPoints(0), qsizetype(5200));
        QCOMPARE(w.pointCount(), qsizetype(5200));
        c->redecimate();
        QVERIFY(drawnIsEveryPoint(XAxisMode::Step));
        c->setHoverX(1234.5);
        QVERIFY2(c->hoverText().contains(formatHoverValue(w.values()[1234])), qPrintable(c->hoverText()));
        w.setXAxis(XAxisMode::RelativeTime, {}, 1.7e12);
        feed(300);
        c->redecimate();
        QVERIFY(drawnIsEveryPoint(XAxisMode::RelativeTime));
    }
};

QTEST_MAIN(TestPackedLiveSeries)
#include "TestPackedLiveSeries.moc"
