// M4 decimation (ui/charts/M4Decimator.h): bucket logic, gaps, the index,
// and the proof that matters: the decimated polyline rasterises to the same
// pixels as the full one (Qt's stroker, and SpanRaster exactly).
#include "ui/charts/DecimatedChart.h"
#include "ui/charts/M4Decimator.h"
#include "ui/charts/SpanRaster.h"

#include <QImage>
#include <QPainter>
#include <QRandomGenerator>
#include <QSet>
#include <QTest>
#include <QWidget>

#include <cmath>
#include <limits>
#include <vector>

using namespace ty;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Series {
    std::vector<double> x, y;
};

// Both images use this transform: x to the image width, y to its height
// (flipped), with a fractional left edge as Qt Charts' plot area has.
struct Transform {
    M4Viewport vp;
    double yMin = 0, yMax = 1;
    int height = 300;
    QPointF map(QPointF p) const
    {
        const double px = vp.pixelLeft + (p.x() - vp.xMin) * vp.pixelWidth / (vp.xMax - vp.xMin);
        const double py = height - (p.y() - yMin) * height / (yMax - yMin);
        return {px, py};
    }
};

enum class Draw { Lines, Polyline };

// Lines: every segment between consecutive points drawn on its own (the
// line rasteriser M4's proof assumes). Polyline: QPainter::drawPolyline, as
// Qt Charts draws a QLineSeries.
QImage rasterise(const QList<QList<QPointF>>& segments, const Transform& t, int width, qreal penWidth, Draw mode)
{
    QImage img(width, t.height, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing, false);
    // Qt Charts clips series to the plot area: so do both pictures.
    p.setClipRect(QRectF(t.vp.pixelLeft, 0, t.vp.pixelWidth, t.height));
    QPen pen(Qt::black, penWidth);
    pen.setCapStyle(Qt::FlatCap);
    pen.setJoinStyle(Qt::BevelJoin);
    p.setPen(pen);
    for (const QList<QPointF>& seg : segments) {
        QList<QPointF> mapped;
        mapped.reserve(seg.size());
        for (const QPointF& q : seg)
            mapped.append(t.map(q));
        if (mapped.size() == 1)
            p.drawPoint(mapped.first());
        else if (mode == Draw::Polyline)
            p.drawPolyline(mapped.constData(), int(mapped.size()));
        else
            for (qsizetype i = 1; i < mapped.size(); ++i)
                p.drawLine(mapped.at(i - 1), mapped.at(i));
    }
    return img;
}

// Every finite run of the full series, as a polyline (what drawing all points means).
QList<QList<QPointF>> allSegments(const Series& s)
{
    QList<QList<QPointF>> out;
    bool open = false;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
        if (!std::isfinite(s.y[i])) {
            open = false;
            continue;
        }
        if (!open)
            out.append(QList<QPointF>());
        open = true;
        out.last().append(QPointF(s.x[i], s.y[i]));
    }
    return out;
}

bool ink(const QImage& img, int c, int r)
{
    return c >= 0 && r >= 0 && c < img.width() && r < img.height() && qGray(img.pixel(c, r)) < 128;
}

// Differing pixels that have no inked pixel within one pixel (8-neighbourhood)
// in the other picture.
int farPixels(const QImage& a, const QImage& b)
{
    int n = 0;
    for (int r = 0; r < a.height(); ++r)
        for (int c = 0; c < a.width(); ++c) {
            if (a.pixel(c, r) == b.pixel(c, r))
                continue;
            const QImage& other = ink(a, c, r) ? b : a;
            bool near = false;
            for (int dr = -1; dr <= 1 && !near; ++dr)
                for (int dc = -1; dc <= 1 && !near; ++dc)
                    near = ink(other, c + dc, r + dr);
            n += !near;
        }
    return n;
}

int inkedPixels(const QImage& a)
{
    int n = 0;
    for (int r = 0; r < a.height(); ++r)
        for (int c = 0; c < a.width(); ++c)
            n += ink(a, c, r);
    return n;
}

// SpanRaster's picture of `segments` (black on white, RGB32), clipped to the
// same columns as rasterise() clips.
QImage spanRasterise(const QList<QList<QPointF>>& segments, const Transform& t, int width)
{
    QImage img(width, t.height, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::white);
    SpanRaster raster(img);
    for (const QList<QPointF>& seg : segments) {
        std::vector<QPointF> mapped;
        for (const QPointF& q : seg)
            mapped.push_back(t.map(q));
        raster.drawPolyline(mapped.data(), qsizetype(mapped.size()), qRgb(0, 0, 0));
    }
    return img;
}

int differingPixels(const QImage& a, const QImage& b)
{
    int n = 0;
    for (int r = 0; r < a.height(); ++r)
        for (int c = 0; c < a.width(); ++c)
            n += a.pixel(c, r) != b.pixel(c, r);
    return n;
}

// A noisy training curve with spikes, a plateau and a few NaN gaps.
Series trainingCurve(int n, quint32 seed, bool withGaps)
{
    QRandomGenerator rng(seed);
    Series s;
    s.x.reserve(n);
    s.y.reserve(n);
    double level = 2.5;
    for (int i = 0; i < n; ++i) {
        level = level * 0.9995 + 0.0001;
        double v = level + (rng.generateDouble() - 0.5) * 0.3 * level;
        if (rng.bounded(2000) == 0)
            v += 3.0 * rng.generateDouble(); // spike between any sample points
        if (withGaps && (i % 7919 == 100 || i == n / 2 || i == n / 2 + 1))
            v = (i % 2) ? kNaN : kInf;
        s.x.push_back(i * 1.0);
        s.y.push_back(v);
    }
    return s;
}
// Shows `chart` at 900x500 and paints its series with paintSeries into a
// white image, over a plot area 300 px high from y = 20 (returned in
// `area`); a null image if the window never showed or laid out.
QImage paintShownChart(DecimatedChart& chart, QRectF& area)
{
    chart.resize(900, 500);
    chart.show();
    if (!QTest::qWaitForWindowExposed(&chart) || !QTest::qWaitFor([&] { return chart.viewport().pixelWidth > 100; }))
        return {};
    chart.redecimate();
    area = QRectF(chart.viewport().pixelLeft, 20.0, chart.viewport().pixelWidth, 300.0);
    QImage painted(int(std::ceil(area.right())) + 2, 340, QImage::Format_ARGB32_Premultiplied);
    painted.fill(Qt::white);
    QPainter p(&painted);
    chart.paintSeries(p, area);
    return painted;
}

} // namespace

class TestM4Decimator : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void bucketsKeepFirstMinMaxLastInOrder()
    {
        // 10 px over x in [0, 10): one column per unit.
        const std::vector<double> x{0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.5, 2.5};
        const std::vector<double> y{5.0, 9.0, 1.0, 4.0, 3.0, 7.0, 8.0, 2.0};
        const M4Result r = decimateM4(x, y, M4Viewport{0, 10, 0, 10});
        QCOMPARE(r.segments.size(), 1);
        // column 0: first (0,5), max (0.2,9), min (0.4,1), last (0.8,3); 0.6 dropped.
        const QList<QPointF> expect{{0, 5}, {0.2, 9}, {0.4, 1}, {0.8, 3}, {1.0, 7}, {1.5, 8}, {2.5, 2}};
        QCOMPARE(r.segments.first(), expect);
        QCOMPARE(r.yMin, 1.0);
        QCOMPARE(r.yMax, 9.0);
        QVERIFY(r.haveY);
    }

    void singlePointColumnsAndDuplicates()
    {
        // Each point alone in its column: all kept once, not four times.
        const std::vector<double> x{0, 1, 2, 3};
        const std::vector<double> y{1, 2, 3, 4};
        const M4Result r = decimateM4(x, y, M4Viewport{0, 4, 0, 4});
        QCOMPARE(r.pointCount(), 4);
        // Min and max coincide with first/last: two points for a monotone column.
        const std::vector<double> x2{0, 0.1, 0.2, 0.3, 0.4};
        const std::vector<double> y2{1, 2, 3, 4, 5};
        const M4Result r2 = decimateM4(x2, y2, M4Viewport{0, 1, 0, 1});
        QCOMPARE(r2.segments.first(), (QList<QPointF>{{0, 1}, {0.4, 5}}));
        // A single point.
        const std::vector<double> x3{3};
        const std::vector<double> y3{7};
        const M4Result r3 = decimateM4(x3, y3, M4Viewport{0, 10, 0, 100});
        QCOMPARE(r3.segments, (QList<QList<QPointF>>{{QPointF(3, 7)}}));
        // Empty and degenerate viewports.
        QCOMPARE(decimateM4({}, {}, M4Viewport{}).pointCount(), 0);
        QCOMPARE(decimateM4(x, y, M4Viewport{1, 1, 0, 10}).pointCount(), 0);
    }

    void nanAndInfAreGaps()
    {
        // NaN/inf inside one column split it: both sides keep their own
        // first/min/max/last, no line crosses the gap, one marker per kind.
        const std::vector<double> x{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1.5};
        const std::vector<double> y{1, 5, kNaN, kNaN, 2, kInf, 3, 4, 1e300};
        const M4Result r = decimateM4(x, y, M4Viewport{0, 2, 0, 2});
        QCOMPARE(r.segments.size(), 3);
        QCOMPARE(r.segments.at(0), (QList<QPointF>{{0, 1}, {0.1, 5}}));
        QCOMPARE(r.segments.at(1), (QList<QPointF>{{0.4, 2}}));
        QCOMPARE(r.segments.at(2), (QList<QPointF>{{0.6, 3}, {0.7, 4}, {1.5, 1e300}}));
        QCOMPARE(r.gaps.size(), 2); // the two NaNs share a column: one marker
        QCOMPARE(r.gaps.at(0).x, 0.2);
        QVERIFY(r.gaps.at(0).kind == SegmentedSeries::GapKind::NaN);
        QVERIFY(r.gaps.at(1).kind == SegmentedSeries::GapKind::PosInf);
        // The y extent never includes a non-finite value.
        QCOMPARE(r.yMax, 1e300);
        // All NaN: no line at all, markers only.
        const std::vector<double> yn{kNaN, kNaN, -kInf};
        const std::vector<double> xn{0, 5, 9};
        const M4Result rn = decimateM4(xn, yn, M4Viewport{0, 10, 0, 10});
        QCOMPARE(rn.segments.size(), 0);
        QCOMPARE(rn.gaps.size(), 3);
        QVERIFY(!rn.haveY);
    }

    void keepsOneEdgePointEachSide()
    {
        std::vector<double> x, y;
        for (int i = 0; i < 1000; ++i) {
            x.push_back(i);
            y.push_back(i % 2 ? 1.0 : -1.0);
        }
        // Visible [100, 200] on 1000 px: every visible point kept, plus 99 and 201.
        const M4Result r = decimateM4(x, y, M4Viewport{100, 200, 0, 1000});
        QCOMPARE(r.segments.size(), 1);
        QCOMPARE(r.segments.first().first(), QPointF(99, 1));
        QCOMPARE(r.segments.first().last(), QPointF(201, 1));
        QCOMPARE(r.pointCount(), 103);
        QCOMPARE(r.scanned, 103);
        // Zoomed out on 10 px: at most 4 per column + 2 edge points.
        const M4Result z = decimateM4(x, y, M4Viewport{0, 999, 0, 10});
        QVERIFY2(z.pointCount() <= 4 * 11, qPrintable(QString::number(z.pointCount())));
        QCOMPARE(z.yMin, -1.0);
        QCOMPARE(z.yMax, 1.0);
    }

    void logSpaceSelectsTheSamePoints()
    {
        // A log axis draws log10(y). log10 is increasing, so in every pixel
        // column the first, last, minimum and maximum points are the same
        // points whether M4 looks at y or at log10(y): decimating in either
        // space gives the same sample (DecimatedChart decimates the log10
        // column it draws). Checked point by point on a curve over 6 decades.
        QRandomGenerator rng(7);
        std::vector<double> x, y, ly;
        for (int i = 0; i < 100000; ++i) {
            const double v = 1e3 * std::exp(-i / 8000.0) * (1.0 + 0.5 * rng.generateDouble())
                    + (rng.bounded(3000) == 0 ? 50.0 : 0.0);
            x.push_back(i);
            y.push_back(v);
            ly.push_back(std::log10(v));
        }
        for (const M4Viewport& vp : {M4Viewport{0, 99999, 0, 640}, M4Viewport{20000.5, 31000, 12.3, 900}}) {
            const M4Result lin = decimateM4(x, y, vp);
            const M4Result log = decimateM4(x, ly, vp);
            QCOMPARE(lin.segments.size(), log.segments.size());
            QCOMPARE(lin.pointCount(), log.pointCount());
            for (qsizetype s = 0; s < lin.segments.size(); ++s)
                for (qsizetype i = 0; i < lin.segments.at(s).size(); ++i) {
                    QCOMPARE(lin.segments.at(s).at(i).x(), log.segments.at(s).at(i).x());
                    QCOMPARE(std::log10(lin.segments.at(s).at(i).y()), log.segments.at(s).at(i).y());
                }
            QCOMPARE(std::log10(lin.yMin), log.yMin);
            QCOMPARE(std::log10(lin.yMax), log.yMax);
        }
    }

    void rasterisesIdenticallyOnLogAxis()
    {
        // The picture on a log axis: every point drawn at log10(y) versus the
        // M4 sample of log10(y), same transform, no antialiasing.
        QRandomGenerator rng(11);
        Series s;
        for (int i = 0; i < 100000; ++i) {
            double v = 10.0 * std::exp(-i / 15000.0) * (1.0 + 0.8 * rng.generateDouble());
            if (rng.bounded(1500) == 0)
                v *= 30; // spikes a decade and a half high
            s.x.push_back(i);
            s.y.push_back(std::log10(v));
        }
        Transform t;
        t.vp = M4Viewport{0, 99999, 3.6, 800};
        t.yMin = -2.5;
        t.yMax = 3;
        t.height = 400;
        const int imageWidth = 805;
        const M4Result r = decimateM4(s.x, s.y, t.vp);
        QVERIFY(r.pointCount() <= 4 * 801 + 2);
        for (Draw mode : {Draw::Lines, Draw::Polyline}) {
            const QImage full = rasterise(allSegments(s), t, imageWidth, 0.0, mode);
            const QImage sampled = rasterise(r.segments, t, imageWidth, 0.0, mode);
            const int diff = differingPixels(full, sampled);
            const int inked = inkedPixels(full);
            qInfo("log axis, %s: %d of %d inked pixels differ; %lld of 100000 points drawn",
                    mode == Draw::Lines ? "lines" : "polyline", diff, inked, qint64(r.pointCount()));
            QCOMPARE(farPixels(full, sampled), 0);
            if (mode == Draw::Lines)
                QVERIFY2(diff * 50 < inked, qPrintable(QString::number(diff)));
            QVERIFY(inked > 800);
        }
    }

    void indexMinMaxMatchesAScan()
    {
        // Ties (a coarse grid of values), a NaN and an inf in the middle.
        QRandomGenerator rng(7);
        std::vector<double> x, y;
        for (int i = 0; i < 70000; ++i) {
            x.push_back(i);
            y.push_back(double(rng.bounded(50)));
        }
        y[40000] = std::numeric_limits<double>::quiet_NaN();
        y[40100] = std::numeric_limits<double>::infinity();
        const M4Index index(x, y);
        QCOMPARE(index.size(), qsizetype(70000));
        int checked = 0, refused = 0;
        for (int t = 0; t < 3000; ++t) {
            const qsizetype a = rng.bounded(70000);
            const qsizetype len = 1 + rng.bounded(t % 3 == 0 ? 30000 : 300);
            const qsizetype b = std::min<qsizetype>(70000, a + len);
            qsizetype sMin = a, sMax = a;
            bool finite = true;
            for (qsizetype i = a; i < b; ++i) {
                finite = finite && std::isfinite(y[i]);
                if (y[i] < y[sMin])
                    sMin = i;
                if (y[i] > y[sMax])
                    sMax = i;
            }
            qsizetype iMin = -1, iMax = -1;
            const bool ok = index.minMax(x, y, a, b, iMin, iMax);
            QCOMPARE(ok, finite);
            if (!ok) {
                ++refused;
                continue;
            }
            QCOMPARE(iMin, sMin); // the first occurrence, like the point loop
            QCOMPARE(iMax, sMax);
            ++checked;
        }
        QVERIFY(checked > 2000);
        QVERIFY(refused > 10);
    }

    void indexGivesTheSameSample_data()
    {
        QTest::addColumn<bool>("gaps");
        QTest::addColumn<bool>("ties");
        QTest::newRow("curve") << false << false;
        QTest::newRow("curve with gaps") << true << false;
        QTest::newRow("steps and values with ties") << true << true;
    }

    void indexGivesTheSameSample()
    {
        // decimateM4 with an index must return exactly what the point loop
        // returns, for any viewport: zoomed in and out, fractional pixel
        // edges, ranges partly or wholly outside the data.
        QFETCH(bool, gaps);
        QFETCH(bool, ties);
        Series s = trainingCurve(100000, 11u, gaps);
        if (ties) {
            for (std::size_t i = 0; i < s.x.size(); ++i) {
                s.x[i] = double(i / 3); // each step three times
                if (std::isfinite(s.y[i]))
                    s.y[i] = std::round(s.y[i] * 4) / 4;
            }
        }
        const M4Index index(s.x, s.y);
        QRandomGenerator rng(99);
        const double last = s.x.back();
        qsizetype drawn = 0, scanned = 0;
        for (int t = 0; t < 400; ++t) {
            const double a = rng.generateDouble() * last * 1.1 - last * 0.05;
            const double span = std::pow(10.0, rng.generateDouble() * 5.5) * (t % 7 == 0 ? 100 : 1);
            const double left = rng.generateDouble() * 80;
            const double width = 1 + rng.bounded(1900) + rng.generateDouble() * (t % 2);
            const M4Viewport vp{a, a + span, left, width};
            const M4Result plain = decimateM4(s.x, s.y, vp);
            const M4Result fast = decimateM4(s.x, s.y, vp, &index);
            QCOMPARE(fast.segments, plain.segments);
            QCOMPARE(fast.gaps.size(), plain.gaps.size());
            for (qsizetype g = 0; g < plain.gaps.size(); ++g) {
                QCOMPARE(fast.gaps[g].x, plain.gaps[g].x);
                QCOMPARE(fast.gaps[g].kind, plain.gaps[g].kind);
            }
            QCOMPARE(fast.haveY, plain.haveY);
            QCOMPARE(fast.yMin, plain.yMin);
            QCOMPARE(fast.yMax, plain.yMax);
            drawn += plain.pointCount();
            scanned += plain.scanned;
        }
        QVERIFY(drawn > 10000); // the viewports did show data
        QVERIFY(scanned > 10 * drawn);

        // An index of other data (a different length) is not used.
        const M4Viewport vp{0, last, 0, 600};
        const M4Index shorter(std::span<const double>(s.x).first(1000), std::span<const double>(s.y).first(1000));
        QCOMPARE(decimateM4(s.x, s.y, vp, &shorter).segments, decimateM4(s.x, s.y, vp).segments);
    }

    void spanRasterRule()
    {
        QImage img(10, 10, QImage::Format_ARGB32_Premultiplied);
        img.fill(Qt::transparent);
        SpanRaster raster(img);
        const QRgb red = qRgb(255, 0, 0);
        // Inside one column: exactly the rows between the ends.
        raster.drawLine(QPointF(2.3, 1.9), QPointF(2.8, 5.2), red);
        for (int r = 0; r < 10; ++r)
            QCOMPARE(img.pixel(2, r) == red, r >= 1 && r <= 5);
        // Flat across columns 4..8 at y 7.5: one row in each column.
        raster.drawLine(QPointF(4.5, 7.5), QPointF(8.5, 7.5), red);
        for (int c = 0; c < 10; ++c)
            QCOMPARE(img.pixel(c, 7) == red, c >= 4 && c <= 8);
        QCOMPARE(img.pixel(3, 7), qRgba(0, 0, 0, 0));
        // Far outside: clipped, nothing outside written, no crash.
        img.fill(Qt::transparent);
        raster.drawLine(QPointF(-1e8, -5e8), QPointF(1e8, 5e8), red); // y = 5x through (0,0)
        int lit = 0;
        for (int r = 0; r < 10; ++r)
            for (int c = 0; c < 10; ++c)
                lit += img.pixel(c, r) == red;
        QCOMPARE(img.pixel(0, 0), red);
        QCOMPARE(img.pixel(1, 5), red);
        QCOMPARE(img.pixel(5, 0), qRgba(0, 0, 0, 0));
        QCOMPARE(lit, 11); // column 0: rows 0-5 (y 0 to 5 at its right edge), column 1: rows 5-9
        raster.drawLine(QPointF(20, 3), QPointF(30, 4), red);
        raster.drawLine(QPointF(3, -20), QPointF(4, -30), red);
        raster.drawLine(QPointF(3, kNaN), QPointF(4, 2), red);
        int after = 0;
        for (int r = 0; r < 10; ++r)
            for (int c = 0; c < 10; ++c)
                after += img.pixel(c, r) == red;
        QCOMPARE(after, lit);
    }

    void spanRasterPolylineIsItsSegments()
    {
        // drawPolyline's one-span-per-column path for x going right lights
        // exactly the pixels of its segments drawn one by one with drawLine:
        // random polylines with ties in x, points on column edges, runs far
        // outside the image on every side, flat and vertical parts; and the
        // segment-by-segment path (x going back, a non-finite point).
        QRandomGenerator rng(20261201);
        const QRgb red = qRgb(255, 0, 0);
        for (int round = 0; round < 400; ++round) {
            const int w = 1 + int(rng.bounded(60)), h = 1 + int(rng.bounded(40));
            const int n = 1 + int(rng.bounded(40));
            std::vector<QPointF> pts;
            double x = -20.0 + rng.generateDouble() * 30.0;
            for (int i = 0; i < n; ++i) {
                switch (rng.bounded(6)) {
                case 0: break;                                    // same x (vertical)
                case 1: x = std::floor(x) + 1.0; break;           // onto a column edge
                case 2: x += rng.generateDouble() * 0.3; break;   // same column, mostly
                case 3: x += rng.generateDouble() * 200.0; break; // far right
                default: x += rng.generateDouble() * 3.0; break;
                }
                const double y = rng.bounded(5) == 0 ? std::round(rng.generateDouble() * 4 * h - 2 * h)
                                                     : rng.generateDouble() * 3 * h - h;
                pts.emplace_back(x, y);
            }
            if (round % 10 == 9 && n > 2)
                std::swap(pts[1], pts[2]); // x may go back: the general path
            if (round % 20 == 19 && n > 3)
                pts[3].setY(kNaN);
            QImage a(w, h, QImage::Format_ARGB32_Premultiplied), b(w, h, QImage::Format_ARGB32_Premultiplied);
            a.fill(Qt::transparent);
            b.fill(Qt::transparent);
            SpanRaster(a).drawPolyline(pts.data(), qsizetype(pts.size()), red);
            SpanRaster rb(b);
            if (n == 1)
                rb.drawPolyline(pts.data(), 1, red);
            for (int i = 1; i < n; ++i)
                rb.drawLine(pts[std::size_t(i - 1)], pts[std::size_t(i)], red);
            if (a != b)
                QFAIL(qPrintable(QStringLiteral("round %1: %2 differing pixels (w %3, h %4, %5 points)")
                                         .arg(round)
                                         .arg(differingPixels(a, b))
                                         .arg(w)
                                         .arg(h)
                                         .arg(n)));
        }
    }

    void spanRasterColumnMajorComposes()
    {
        // Three layers of random polylines, column-major and composed, equal
        // the same polylines drawn in order into one QImage (the layers'
        // colours overlap: the later one must win), for several sizes.
        QRandomGenerator rng(77);
        for (int round = 0; round < 30; ++round) {
            const int w = 1 + int(rng.bounded(90)), h = 1 + int(rng.bounded(70));
            QImage expected(w, h, QImage::Format_ARGB32_Premultiplied);
            expected.fill(Qt::transparent);
            SpanRaster rowMajor(expected);
            std::vector<std::vector<QRgb>> layers(3, std::vector<QRgb>(std::size_t(w) * std::size_t(h), 0));
            for (std::size_t l = 0; l < layers.size(); ++l) {
                SpanRaster columnMajor(layers[l].data(), w, h);
                const QRgb colour = qRgb(60 * int(l) + 40, 200 - 50 * int(l), 90);
                for (int line = 0; line < 4; ++line) {
                    std::vector<QPointF> pts;
                    double x = -5.0 + rng.generateDouble() * 10.0;
                    for (int i = 0; i < 30; ++i) {
                        x += rng.generateDouble() * 4.0;
                        pts.emplace_back(x, rng.generateDouble() * 1.4 * h - 0.2 * h);
                    }
                    rowMajor.drawPolyline(pts.data(), qsizetype(pts.size()), colour);
                    columnMajor.drawPolyline(pts.data(), qsizetype(pts.size()), colour);
                }
            }
            std::vector<const QRgb*> parts;
            for (const auto& layer : layers)
                parts.push_back(layer.data());
            // In two column ranges (as two threads would), 0 left transparent.
            QImage composed(w, h, QImage::Format_ARGB32_Premultiplied);
            composed.fill(qRgb(1, 2, 3));
            SpanRaster::composeColumnMajor(parts, h, composed, 0, w / 3);
            SpanRaster::composeColumnMajor(parts, h, composed, w / 3, w + 5);
            int lit = 0;
            for (int r = 0; r < h; ++r)
                for (int c = 0; c < w; ++c)
                    lit += expected.pixel(c, r) != 0;
            QVERIFY(lit > 0); // lines crossed the image
            if (composed != expected)
                QFAIL(qPrintable(QStringLiteral("round %1 (%2 x %3): %4 differing pixels")
                                         .arg(round)
                                         .arg(w)
                                         .arg(h)
                                         .arg(differingPixels(composed, expected))));
        }
    }

    void spanRasterM4IsExact_data()
    {
        QTest::addColumn<double>("xMin");
        QTest::addColumn<double>("xMax");
        QTest::addColumn<double>("pixelLeft");
        QTest::addColumn<int>("width");
        QTest::addColumn<bool>("gaps");
        QTest::newRow("100k, all, 640px") << 0.0 << 99999.0 << 0.0 << 640 << false;
        QTest::newRow("100k, zoomed, fractional left") << 31234.5 << 40000.25 << 37.4 << 700 << false;
        QTest::newRow("100k, gaps, 1100px") << 0.0 << 99999.0 << 12.7 << 1100 << true;
        QTest::newRow("100k, gaps, zoomed") << 49000.0 << 51000.0 << 3.2 << 500 << true;
        QTest::newRow("100k, deep zoom, 2 points a column") << 70000.0 << 71000.0 << 0.5 << 500 << true;
    }

    void spanRasterM4IsExact()
    {
        // With SpanRaster's rule the M4 sample's picture is the picture of
        // all points, pixel for pixel (no tolerance), with and without the index.
        QFETCH(double, xMin);
        QFETCH(double, xMax);
        QFETCH(double, pixelLeft);
        QFETCH(int, width);
        QFETCH(bool, gaps);
        const Series s = trainingCurve(100000, 5u + quint32(width), gaps);
        Transform t;
        t.vp = M4Viewport{xMin, xMax, pixelLeft, double(width)};
        t.yMin = -0.5;
        t.yMax = 6.5;
        t.height = 400;
        const int imageWidth = int(std::ceil(pixelLeft)) + width + 1;
        const M4Index index(s.x, s.y);
        const M4Result r = decimateM4(s.x, s.y, t.vp, &index);
        // The pixel columns wholly inside the plot: a column cut by the plot's
        // edge also holds points outside [xMin, xMax], which the sample
        // leaves out (except the one next to the edge) and the chart clips.
        const int c0 = int(std::ceil(pixelLeft)), c1 = int(std::floor(pixelLeft + width));
        const auto plotOnly = [&](const QImage& in) {
            QImage out = in.convertToFormat(QImage::Format_RGB32);
            for (int row = 0; row < out.height(); ++row)
                for (int col = 0; col < out.width(); ++col)
                    if (col < c0 || col >= c1)
                        out.setPixel(col, row, qRgb(255, 255, 255));
            return out;
        };
        const QImage full = plotOnly(spanRasterise(allSegments(s), t, imageWidth));
        const QImage sampled = plotOnly(spanRasterise(r.segments, t, imageWidth));
        const int inked = inkedPixels(full);
        qInfo("span raster: %d inked pixels, %lld of 100000 points drawn", inked, qint64(r.pointCount()));
        QVERIFY(inked > width);
        QCOMPARE(differingPixels(full, sampled), 0);
        // And it draws lines where Qt does: every pixel within one pixel of
        // Qt's cosmetic ink, and the other way round.
        const QImage qt = plotOnly(rasterise(allSegments(s), t, imageWidth, 0.0, Draw::Lines));
        QCOMPARE(farPixels(qt, full), 0);
    }

    void chartPaintsWithSpanRaster()
    {
        // More than 12 series: thin opaque lines, painted by SpanRaster into
        // images split over the cores; the chart's picture must equal every
        // series' full polyline drawn in order with SpanRaster.
        DecimatedChart chart(QStringLiteral("loss"));
        QList<Series> all;
        QList<QColor> colours;
        for (int k = 0; k < 16; ++k) {
            Series s = trainingCurve(20000, 100u + quint32(k), false);
            for (double& v : s.y)
                v += 0.2 * k;
            colours.append(QColor::fromHsv(k * 22, 200, 180));
            chart.addSeries(QStringLiteral("run %1").arg(k), colours.last(),
                    std::make_shared<const std::vector<double>>(s.x), std::make_shared<const std::vector<double>>(s.y));
            all.append(std::move(s));
        }
        QRectF area;
        const QImage painted = paintShownChart(chart, area);
        QVERIFY(!painted.isNull());
        // The same map paintSeries uses: x over the plot width, y over the
        // axis range, then SpanRaster into the device pixels of the area.
        QImage expected(painted.size(), QImage::Format_ARGB32_Premultiplied);
        expected.fill(Qt::white);
        SpanRaster raster(expected);
        const double sx = area.width() / (chart.xMax() - chart.xMin());
        const double sy = area.height() / (chart.yMax() - chart.yMin());
        for (int k = 0; k < all.size(); ++k) {
            std::vector<QPointF> pts;
            for (std::size_t i = 0; i < all[k].x.size(); ++i)
                pts.emplace_back(area.left() + (all[k].x[i] - chart.xMin()) * sx,
                        area.bottom() - (all[k].y[i] - chart.yMin()) * sy);
            raster.drawPolyline(pts.data(), qsizetype(pts.size()), colours[k].rgba());
        }
        // paintSeries clips to the plot area's device pixels.
        const QRect clip = area.toAlignedRect();
        int differ = 0, inked = 0;
        for (int r = 0; r < painted.height(); ++r)
            for (int c = 0; c < painted.width(); ++c) {
                const QRgb want = clip.contains(c, r) ? expected.pixel(c, r) : qRgb(255, 255, 255);
                differ += painted.pixel(c, r) != want;
                inked += want != qRgb(255, 255, 255);
            }
        qInfo("chart: %d of %d inked pixels differ", differ, inked);
        QVERIFY(inked > 10000);
        QCOMPARE(differ, 0);
    }

    void denseWideLinesAreAliased()
    {
        // One series (a 2 px pen): drawn aliased where it has more than 1.5
        // points a pixel column (only the series' own colour, the faint raw
        // layer's and white), antialiased where it is sparse (blended edge
        // pixels).
        const QColor colour(0x1f, 0x77, 0xb4);
        QColor faint = colour;
        faint.setAlpha(70);
        const auto near = [](QRgb a, QRgb b) {
            return std::abs(qRed(a) - qRed(b)) <= 2 && std::abs(qGreen(a) - qGreen(b)) <= 2
                    && std::abs(qBlue(a) - qBlue(b)) <= 2;
        };
        QImage faintOverWhite(1, 1, QImage::Format_ARGB32_Premultiplied);
        faintOverWhite.fill(Qt::white);
        {
            QPainter p(&faintOverWhite);
            p.fillRect(0, 0, 1, 1, faint);
        }
        const QRgb faintPixel = faintOverWhite.pixel(0, 0);
        const auto blendedPixels = [&](int points) {
            DecimatedChart chart(QStringLiteral("loss"));
            const Series s = trainingCurve(points, 7u, false);
            chart.addSeries(QStringLiteral("run"), colour, std::make_shared<const std::vector<double>>(s.x),
                    std::make_shared<const std::vector<double>>(s.y));
            QRectF area;
            const QImage painted = paintShownChart(chart, area);
            if (painted.isNull())
                return -1;
            int blended = 0;
            for (int r = 0; r < painted.height(); ++r)
                for (int c = 0; c < painted.width(); ++c) {
                    const QRgb px = painted.pixel(c, r);
                    blended += !near(px, qRgb(255, 255, 255)) && !near(px, colour.rgb()) && !near(px, faintPixel);
                }
            return blended;
        };
        const int dense = blendedPixels(20000);
        const int sparse = blendedPixels(200);
        qInfo("blended pixels: dense %d, sparse %d", dense, sparse);
        QCOMPARE(dense, 0);
        QVERIFY2(sparse > 100, qPrintable(QString::number(sparse)));
    }

    void chartInsideAWindowDrawsWhereItIs()
    {
        // Painted through a widget hierarchy (a redirection offset in the
        // painter): the series land inside the chart's own plot area. (A bug
        // once blitted them at twice the offset: the right-hand chart of the
        // compare view was empty.)
        QWidget window;
        window.resize(1200, 700);
        auto* chart = new DecimatedChart(QStringLiteral("loss"), &window);
        chart->setGeometry(500, 250, 600, 400);
        QList<QColor> colours;
        for (int k = 0; k < 14; ++k) {
            const Series s = trainingCurve(5000, 300u + quint32(k), false);
            colours.append(QColor::fromHsv(k * 25, 255, 200));
            chart->addSeries(QStringLiteral("run %1").arg(k), colours.last(),
                    std::make_shared<const std::vector<double>>(s.x), std::make_shared<const std::vector<double>>(s.y));
        }
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(chart->viewport().pixelWidth > 100);
        chart->redecimate();
        const QImage shot = window.grab().toImage();
        QSet<QRgb> series;
        for (const QColor& c : std::as_const(colours))
            series.insert(c.rgb());
        int inside = 0, outside = 0;
        const QRect chartRect = chart->geometry();
        for (int r = 0; r < shot.height(); ++r)
            for (int c = 0; c < shot.width(); ++c)
                if (series.contains(shot.pixel(c, r) | 0xff000000u))
                    (chartRect.contains(c, r) ? inside : outside) += 1;
        qInfo("series pixels: %d inside the chart, %d outside", inside, outside);
        QVERIFY(inside > 5000);
        QCOMPARE(outside, 0);
    }

    void rasterisesIdentically_data()
    {
        QTest::addColumn<int>("points");
        QTest::addColumn<double>("xMin");
        QTest::addColumn<double>("xMax");
        QTest::addColumn<double>("pixelLeft");
        QTest::addColumn<int>("width");
        QTest::addColumn<qreal>("pen");
        QTest::addColumn<bool>("gaps");
        QTest::newRow("100k, all, 640px, cosmetic") << 100000 << 0.0 << 99999.0 << 0.0 << 640 << 0.0 << false;
        QTest::newRow("100k, all, 640px, 2px pen") << 100000 << 0.0 << 99999.0 << 0.0 << 640 << 2.0 << false;
        QTest::newRow("100k, zoomed, fractional left") << 100000 << 31234.5 << 40000.25 << 37.4 << 700 << 0.0 << false;
        QTest::newRow("100k, gaps, 1100px") << 100000 << 0.0 << 99999.0 << 12.7 << 1100 << 0.0 << true;
        QTest::newRow("100k, gaps, zoomed, 2px") << 100000 << 49000.0 << 51000.0 << 3.2 << 500 << 2.0 << true;
        QTest::newRow("3k, sparse, 1500px") << 3000 << 0.0 << 2999.0 << 0.5 << 1500 << 0.0 << true;
    }

    void rasterisesIdentically()
    {
        QFETCH(int, points);
        QFETCH(double, xMin);
        QFETCH(double, xMax);
        QFETCH(double, pixelLeft);
        QFETCH(int, width);
        QFETCH(qreal, pen);
        QFETCH(bool, gaps);
        const Series s = trainingCurve(points, 42u + quint32(width), gaps);
        Transform t;
        t.vp = M4Viewport{xMin, xMax, pixelLeft, double(width)};
        t.yMin = -0.5;
        t.yMax = 6.5;
        t.height = 400;
        const int imageWidth = int(std::ceil(pixelLeft)) + width + 1;
        const M4Result r = decimateM4(s.x, s.y, t.vp);
        QVERIFY2(r.pointCount() <= 4 * (width + 1) + 2, qPrintable(QString::number(r.pointCount())));
        if (points > 4 * width)
            QVERIFY(r.pointCount() < points / 2);
        // 1. Each line on its own (cosmetic pen), the rasteriser M4's proof
        // assumes. Qt's cosmetic rasteriser puts a steep line whose x sits
        // within a few 1/64 px of a column boundary in the neighbouring
        // column, so a handful of boundary pixels (measured: 2-39 of
        // 5,000-17,000 inked) move by one column. Tolerance: none farther
        // than 1 px from ink in the other picture, fewer than 2 %.
        if (pen == 0.0) {
            const QImage full = rasterise(allSegments(s), t, imageWidth, pen, Draw::Lines);
            const QImage sampled = rasterise(r.segments, t, imageWidth, pen, Draw::Lines);
            const int diff = differingPixels(full, sampled);
            const int inked = inkedPixels(full);
            qInfo("lines: %d of %d inked pixels differ", diff, inked);
            QCOMPARE(farPixels(full, sampled), 0);
            QVERIFY2(diff * 50 < inked, qPrintable(QString::number(diff)));
            QVERIFY(inked > width); // something was drawn
        }
        // 2. As polylines (how Qt Charts draws, also with a 2 px pen): Qt's
        // stroker places a line's pixels according to the lines before it
        // in the same polyline (joins), so a steep line that enters a column
        // from a different neighbour may fall one column over. Tolerance:
        // every differing pixel is within one pixel of ink in the other
        // picture (measured: 0-18 % of inked pixels shift, 2 px pens most).
        const QImage full = rasterise(allSegments(s), t, imageWidth, pen, Draw::Polyline);
        const QImage sampled = rasterise(r.segments, t, imageWidth, pen, Draw::Polyline);
        const int diff = differingPixels(full, sampled);
        const int far = farPixels(full, sampled);
        const int inked = inkedPixels(full);
        qInfo("polyline: %d of %d inked pixels differ, %d farther than 1 px; %lld of %d points drawn", diff, inked, far,
                qint64(r.pointCount()), points);
        QCOMPARE(far, 0);
        QVERIFY(inked > width);
    }
};

QTEST_MAIN(TestM4Decimator)
#include "TestM4Decimator.moc"
