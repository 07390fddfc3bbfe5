// The single-run Metrics tab: MetricChartWidget / MetricChartsPanel drawn
// through DecimatedChart (M4), live appends that redo only the tail, the x
// axes (step, epoch, relative and wall time), the log y axis, SVG export.
#include "ui/charts/ChartStyle.h"
#include "ui/charts/ChartView.h"
#include "ui/charts/GrowthPacer.h"
#include "ui/charts/DecimatedChart.h"
#include "ui/charts/M4Decimator.h"
#include "ui/charts/Smoothing.h"
#include "ui/charts/MetricChartWidget.h"
#include "ui/charts/MetricChartsPanel.h"
#include "ui/charts/XAxisMap.h"
#include "ui/runs/StoreReader.h"
#include "core/store/ResultStore.h"

#include <QApplication>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QDateTimeAxis>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QMouseEvent>
#include <QTemporaryDir>
#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QSlider>
#include <QTest>
#include <QValueAxis>
#include <QXmlStreamReader>

#include <cmath>
#include <limits>

using namespace ty;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

QList<SeriesPoint> pts(std::initializer_list<double> ys, double x0 = 0)
{
    QList<SeriesPoint> out;
    double x = x0;
    for (double y : ys)
        out.append(SeriesPoint{x++, y});
    return out;
}

// A noisy decaying loss, step i, wall time t0 + i seconds.
QList<SeriesPoint> lossCurve(int from, int to, double t0 = 1.7e12)
{
    QList<SeriesPoint> out;
    for (int i = from; i < to; ++i)
        out.append(SeriesPoint{double(i),
                2.0 / (1.0 + i * 0.01) + 0.05 * std::sin(i * 0.37) + ((i % 997) == 0 ? 1.5 : 0.0), t0 + i * 1000.0});
    return out;
}

// What decimateM4 gives for these points on the chart's current viewport.
QList<QList<QPointF>> expectedSample(
        const DecimatedChart& c, const std::vector<double>& x, const std::vector<double>& y)
{
    return decimateM4(x, y, c.viewport()).segments;
}

int svgStrokesOf(const QString& svg, const QColor& colour, bool* valid)
{
    // Counts path/polyline elements inside groups stroked with `colour`.
    QXmlStreamReader xml(svg);
    QList<bool> stroked; // per open element: inside a group of that stroke
    int n = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const bool inside = (!stroked.isEmpty() && stroked.last())
                    || xml.attributes().value(QStringLiteral("stroke")).compare(colour.name(), Qt::CaseInsensitive)
                            == 0;
            stroked.append(inside);
            if (inside && (xml.name() == u"path" || xml.name() == u"polyline"))
                ++n;
        } else if (xml.isEndElement()) {
            stroked.removeLast();
        }
    }
    *valid = !xml.hasError();
    return n;
}
// Moves the mouse, no button held, to x value `x` at mid-height of the plot:
// a MouseMove with buttons() == Qt::NoButton sent to the chart view's
// viewport through QApplication, as a real mouse's move is delivered. Qt
// drops such a move (QApplication::notify) unless the viewport has mouse
// tracking: the bug of issue 21, where only a held button showed values.
void hoverAt(DecimatedChart& chart, double x)
{
    ChartView* view = chart.chartView();
    const QRectF area = chart.chart()->plotArea();
    const double px = area.left() + (x - chart.xMin()) / (chart.xMax() - chart.xMin()) * area.width();
    const QPoint pos = view->mapFromScene(chart.chart()->mapToScene(QPointF(px, area.center().y())));
    QWidget* viewport = view->viewport();
    QMouseEvent move(QEvent::MouseMove, QPointF(pos), QPointF(viewport->mapToGlobal(pos)), Qt::NoButton, Qt::NoButton,
            Qt::NoModifier);
    QApplication::sendEvent(viewport, &move);
}
} // namespace

class TestMetricChart : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void splitPureFunction()
    {
        const SegmentedSeries s = SegmentedSeries::split(pts({1, 2, kNaN, kNaN, 3, kInf, 4, 5, 6, -kInf}));
        QCOMPARE(s.segments.size(), 3);
        QCOMPARE(s.segments.at(0).size(), 2);
        QCOMPARE(s.segments.at(1).size(), 1);
        QCOMPARE(s.segments.at(2).size(), 3);
        QCOMPARE(s.segments.at(2).first(), QPointF(6, 4));
        QCOMPARE(s.gaps.size(), 4);
        QCOMPARE(s.gaps.at(0).x, 2.0);
        QVERIFY(s.gaps.at(2).kind == SegmentedSeries::GapKind::PosInf);
        QVERIFY(s.gaps.at(3).kind == SegmentedSeries::GapKind::NegInf);
        QVERIFY(SegmentedSeries::split({}).segments.isEmpty());
    }

    void epochMapInterpolates()
    {
        // Epoch index logged every step: one knot per epoch, at its first step.
        std::vector<double> steps, epochs;
        for (int s = 0; s < 300; ++s) {
            steps.push_back(s);
            epochs.push_back(s / 100);
        }
        const EpochMap perStep = EpochMap::fromSeries(steps, epochs);
        QVERIFY(perStep.isValid());
        QCOMPARE(perStep.knotCount(), 3);
        QCOMPARE(perStep.epochAt(0), 0.0);
        QCOMPARE(perStep.epochAt(50), 0.5);
        QCOMPARE(perStep.epochAt(100), 1.0);
        QCOMPARE(perStep.epochAt(250), 2.5); // after the last knot: step / steps-per-epoch
        // Logged at the end of each epoch (Keras): linear between the logged steps.
        const std::vector<double> s2{99, 199, 349}, e2{1, 2, 3};
        const EpochMap ends = EpochMap::fromSeries(s2, e2);
        QCOMPARE(ends.epochAt(149), 1.5);
        QCOMPARE(ends.epochAt(274), 2.5); // a 150-step epoch
        QCOMPARE(ends.epochAt(424), 3.5); // extrapolated with the last epoch's length
        // One knot: "epoch 2 ended at step 500", from (0, 0).
        const std::vector<double> s3{500}, e3{2};
        QCOMPARE(EpochMap::fromSeries(s3, e3).epochAt(125), 0.5);
        // Nothing usable.
        const std::vector<double> s4{0, 10}, e4{kNaN, 0};
        QVERIFY(!EpochMap::fromSeries(s4, e4).isValid());
        QVERIFY(!EpochMap::fromSeries({}, {}).isValid());
        QVERIFY(isEpochKey(QStringLiteral("train/epoch")) && !isEpochKey(QStringLiteral("epochs_left")));
        QCOMPARE(pickEpochKey({QStringLiteral("train/epoch"), QStringLiteral("epoch"), QStringLiteral("loss")}),
                QStringLiteral("epoch"));
    }

    void nanSplitsTheLine()
    {
        MetricChartWidget w(QStringLiteral("loss"));
        QCOMPARE(w.objectName(), QStringLiteral("metricChart:loss"));
        w.resize(400, 300);
        w.show();
        w.setPoints(pts({2.0, 1.5, 1.2, kNaN, 1.0, 0.9, kInf, 0.8}));
        QCOMPARE(w.pointCount(), 8);
        QCOMPARE(w.segmentPointCounts(), (QList<int>{3, 2, 1}));
        QCOMPARE(w.decimatedChart()->drawnSegments(0).at(1).at(0), QPointF(4, 1.0));
        QCOMPARE(w.gapMarkerCount(), 2);
        // The y axis spans the finite values only (padded), never up to a huge value.
        DecimatedChart* c = w.decimatedChart();
        QVERIFY2(c->yMax() <= 3.0, qPrintable(QString::number(c->yMax())));
        QVERIFY2(c->yMin() >= 0.0, qPrintable(QString::number(c->yMin())));
        QVERIFY(c->yMax() >= 2.0 && c->yMin() <= 0.8);
        QImage img(400, 300, QImage::Format_ARGB32);
        w.render(&img); // paints without crashing
    }

    void appendsLive()
    {
        MetricChartWidget w(QStringLiteral("val_acc"));
        w.resize(400, 300);
        w.show();
        w.setPoints(pts({0.5, 0.6}));
        QCOMPARE(w.segmentPointCounts(), (QList<int>{2}));
        w.appendPoints(pts({0.7, 0.75}, 2));
        QCOMPARE(w.segmentPointCounts(), (QList<int>{4})); // the open segment grew
        w.appendPoints(pts({kNaN}, 4));
        w.appendPoints(pts({0.8, 0.85, 0.9}, 5));
        QCOMPARE(w.segmentPointCounts(), (QList<int>{4, 3}));
        QCOMPARE(w.gapMarkerCount(), 1);
        // Out of order: re-sorted by step.
        w.appendPoints({SeriesPoint{1.5, 0.55}});
        QCOMPARE(w.pointCount(), 9);
        QCOMPARE(w.segmentPointCounts(), (QList<int>{5, 3}));
        QCOMPARE(w.decimatedChart()->drawnSegments(0).first().at(2), QPointF(1.5, 0.55));
        // Only non-finite values: no line, markers only.
        w.setPoints(pts({kNaN, kInf, -kInf}));
        QCOMPARE(w.segmentCount(), 0);
        QCOMPARE(w.gapMarkerCount(), 3);
        w.clear();
        QCOMPARE(w.pointCount(), 0);
        QCOMPARE(w.segmentCount(), 0);
    }

    void drawsThroughM4()
    {
        // 200,000 points on a ~560 px plot: at most 4 per pixel column are handed
        // to Qt Charts, exactly decimateM4's sample.
        MetricChartWidget w(QStringLiteral("loss"));
        w.resize(600, 300);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QList<SeriesPoint> points = lossCurve(0, 200000);
        w.setPoints(points);
        DecimatedChart* c = w.decimatedChart();
        QTRY_VERIFY(c->viewport().pixelWidth > 100);
        QTest::qWait(20); // the queued re-decimation for the final plot width
        std::vector<double> x, y;
        for (const SeriesPoint& p : points) {
            x.push_back(p.x);
            y.push_back(p.y);
        }
        QCOMPARE(c->drawnSegments(0), expectedSample(*c, x, y));
        const qsizetype drawn = c->drawnPoints(0);
        QVERIFY2(drawn <= 4 * (qsizetype(c->viewport().pixelWidth) + 1) + 2, qPrintable(QString::number(drawn)));
        QCOMPARE(w.pointCount(), 200000);
    }

    void paintedPictureEqualsAllPoints()
    {
        // The chart paints the series itself (paintSeries: a 1 px cosmetic
        // pen, no antialiasing, once more than 12 series show). Its picture
        // of the M4 sample against every point drawn with the same map and
        // pen: no pixel farther than 1 px from ink in the other picture
        // (TestM4Decimator's polyline criterion, here on the real item).
        DecimatedChart c(QStringLiteral("loss"));
        c.resize(900, 400);
        c.show();
        QVERIFY(QTest::qWaitForWindowExposed(&c));
        auto x = std::make_shared<std::vector<double>>();
        auto y = std::make_shared<std::vector<double>>();
        for (int i = 0; i < 100000; ++i) {
            x->push_back(i);
            y->push_back(2.0 / (1.0 + i * 0.001) + 0.1 * std::sin(i * 0.37) + ((i % 997) == 0 ? 1.5 : 0.0));
        }
        c.beginUpdate();
        for (int k = 0; k < 13; ++k)
            c.addSeries(QString::number(k), Qt::black, x, y);
        QCOMPARE(c.drawnPoints(0), 0); // deferred to endUpdate()
        c.endUpdate();
        QTRY_VERIFY(c.viewport().pixelWidth > 100);
        QTest::qWait(20);
        c.zoomX(0.5, 30000.0);
        const QRectF area = c.chart()->plotArea();
        QVERIFY(c.drawnPoints(0) <= 4 * (qsizetype(area.width()) + 1) + 2);
        QVERIFY(c.drawnPoints(0) > 0);
        const int w = int(std::ceil(area.right())) + 2, h = int(std::ceil(area.bottom())) + 2;
        QImage painted(w, h, QImage::Format_RGB32);
        painted.fill(Qt::white);
        {
            QPainter p(&painted);
            c.paintSeries(p, area);
        }
        QImage full(w, h, QImage::Format_RGB32);
        full.fill(Qt::white);
        {
            QPainter p(&full);
            p.setRenderHint(QPainter::Antialiasing, false);
            p.setClipRect(area);
            QPen pen(Qt::black, 1);
            pen.setCosmetic(true);
            pen.setCapStyle(Qt::FlatCap);
            pen.setJoinStyle(Qt::BevelJoin);
            p.setPen(pen);
            const double sx = area.width() / (c.xMax() - c.xMin()), sy = area.height() / (c.yMax() - c.yMin());
            QList<QPointF> pts;
            for (std::size_t i = 0; i < x->size(); ++i)
                pts.append(QPointF(area.left() + ((*x)[i] - c.xMin()) * sx, area.bottom() - ((*y)[i] - c.yMin()) * sy));
            p.drawPolyline(pts.constData(), int(pts.size()));
        }
        const auto ink = [](const QImage& img, int col, int row) {
            return col >= 0 && row >= 0 && col < img.width() && row < img.height() && qGray(img.pixel(col, row)) < 128;
        };
        int differ = 0, far = 0, inked = 0;
        for (int row = 0; row < h; ++row)
            for (int col = 0; col < w; ++col) {
                inked += ink(full, col, row);
                if (ink(full, col, row) == ink(painted, col, row))
                    continue;
                ++differ;
                const QImage& other = ink(full, col, row) ? painted : full;
                bool near = false;
                for (int dr = -1; dr <= 1 && !near; ++dr)
                    for (int dc = -1; dc <= 1 && !near; ++dc)
                        near = ink(other, col + dc, row + dr);
                far += !near;
            }
        qInfo("painted: %d of %d inked pixels differ, %d farther than 1 px; %lld of 100000 points drawn", differ, inked,
                far, qint64(c.drawnPoints(0)));
        QVERIFY(inked > area.width());
        QCOMPARE(far, 0);
    }

    void liveAppendsRedoOnlyTheTail()
    {
        MetricChartWidget w(QStringLiteral("loss"));
        w.resize(600, 300);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        DecimatedChart* c = w.decimatedChart();
        w.setPoints(lossCurve(0, 1000));
        QTRY_VERIFY(c->viewport().pixelWidth > 100);
        QTest::qWait(20);
        // A run logging 100 points a second for 10 minutes, 10 at a time.
        const int before = c->fullRedecimations();
        std::vector<double> x, y;
        for (const SeriesPoint& p : lossCurve(0, 1000)) {
            x.push_back(p.x);
            y.push_back(p.y);
        }
        for (int from = 1000; from < 60000; from += 10) {
            const QList<SeriesPoint> batch = lossCurve(from, from + 10);
            w.appendPoints(batch);
            for (const SeriesPoint& p : batch) {
                x.push_back(p.x);
                y.push_back(p.y);
            }
        }
        const int full = c->fullRedecimations() - before;
        // 5,900 appends; the range grows by 25 % at a time: ln(60) / ln(1.25) ~ 19 full passes.
        qInfo("5900 appends, %d full re-decimations", full);
        QVERIFY2(full <= 40, qPrintable(QString::number(full)));
        QCOMPARE(w.pointCount(), 60000);
        // The incrementally kept sample equals a fresh decimation of every point.
        QCOMPARE(c->drawnSegments(0), expectedSample(*c, x, y));
        QVERIFY(c->xMax() >= 59999);
        // The y axis covers the appended values too.
        QVERIFY(c->yMin() <= *std::min_element(y.begin(), y.end()));
        QVERIFY(c->yMax() >= *std::max_element(y.begin(), y.end()));
        // A gap arriving live: marker, and the line does not cross it.
        w.appendPoints({SeriesPoint{60000, kNaN, 1.76e12}, SeriesPoint{60001, 0.2, 1.76e12}});
        QCOMPARE(w.gapMarkerCount(), 1);
        QCOMPARE(c->drawnSegments(0).size(), 2);

        // Zoomed in on the start: points appended far right change nothing drawn.
        c->setXRange(0, 500);
        const auto zoomed = c->drawnSegments(0);
        const int before2 = c->fullRedecimations();
        w.appendPoints(lossCurve(60002, 60100));
        QCOMPARE(c->fullRedecimations(), before2);
        QCOMPARE(c->drawnSegments(0), zoomed);
        QCOMPARE(c->xMax(), 500.0);
    }

    void logAxisSkipsNonPositive()
    {
        MetricChartWidget w(QStringLiteral("loss"));
        w.resize(500, 300);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        DecimatedChart* c = w.decimatedChart();
        w.setPoints(pts({100, 10, 0, 1, -3, 0.1, kNaN, 0.01}));
        w.setYScale(DecimatedChart::YScale::Log);
        QVERIFY(c->yScale() == DecimatedChart::YScale::Log);
        QCOMPARE(c->skippedPoints(0), 2);
        QVERIFY2(c->noticeText().contains(QStringLiteral("2 values <= 0 skipped")), qPrintable(c->noticeText()));
        auto* notice = c->findChild<QLabel*>(QStringLiteral("chartNotice"));
        QVERIFY(notice && notice->isVisible());
        // Drawn in log10 space; the skipped points are left out, the NaN still a gap.
        QCOMPARE(c->drawnSegments(0), (QList<QList<QPointF>>{{{0, 2}, {1, 1}, {3, 0}, {5, -1}}, {{7, -2}}}));
        QCOMPARE(w.gapMarkerCount(), 1);
        // The y axis is a log axis with labels at powers of ten.
        auto* axis = qobject_cast<QCategoryAxis*>(c->chart()->axes(Qt::Vertical).first());
        QVERIFY(axis);
        QVERIFY(axis->categoriesLabels().contains(QStringLiteral("1")));
        QVERIFY(axis->categoriesLabels().contains(QStringLiteral("100")));
        QVERIFY(c->yMin() < -2 && c->yMax() > 2);
        // Live appends on the log axis count their skipped values too.
        w.appendPoints(pts({0.001, -1}, 8));
        QCOMPARE(c->skippedPoints(0), 3);
        QCOMPARE(c->drawnSegments(0).last(), (QList<QPointF>{{7, -2}, {8, -3}}));
        // Back to linear: everything drawn, no notice.
        w.setYScale(DecimatedChart::YScale::Linear);
        QCOMPARE(c->skippedPoints(0), 0);
        QVERIFY(c->noticeText().isEmpty());
        QVERIFY(!notice->isVisible());
        QVERIFY(qobject_cast<QCategoryAxis*>(c->chart()->axes(Qt::Vertical).first()) == nullptr);
        // A narrow range (within one decade) still gets labels.
        w.setPoints(pts({0.30, 0.35, 0.5, 0.62}));
        w.setYScale(DecimatedChart::YScale::Log);
        QVERIFY2(axis->categoriesLabels().size() >= 3, qPrintable(axis->categoriesLabels().join(u' ')));
        QImage img(500, 300, QImage::Format_ARGB32);
        w.render(&img);
    }

    void panelAxes()
    {
        MetricChartsPanel panel;
        panel.resize(900, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const double t0 = 1.7e12;
        // 300 steps, 100 per epoch, the epoch index logged every step.
        QList<SeriesPoint> epoch;
        for (int s = 0; s < 300; ++s)
            epoch.append(SeriesPoint{double(s), double(s / 100), t0 + s * 500.0});
        panel.setSeries(QStringLiteral("loss"), lossCurve(0, 300, t0));
        panel.setSeries(QStringLiteral("epoch"), epoch);
        panel.setRunStart(qint64(t0) - 10'000);
        DecimatedChart* loss = panel.chart(QStringLiteral("loss"))->decimatedChart();

        panel.setXAxis(XAxisMode::Epoch);
        QCOMPARE(panel.chart(QStringLiteral("loss"))->xAxisMode(), XAxisMode::Epoch);
        QCOMPARE(loss->fullXRange().first, 0.0);
        QCOMPARE(loss->fullXRange().second, 2.99);
        QVERIFY(loss->noticeText().isEmpty());
        // Live: a point of step 300 lands at epoch 3.
        panel.appendPoints(QStringLiteral("loss"), lossCurve(300, 301, t0));
        QCOMPARE(loss->fullXRange().second, 3.0);

        panel.setXAxis(XAxisMode::RelativeTime);
        QCOMPARE(loss->fullXRange().first, 10.0); // seconds since the run started
        QCOMPARE(loss->fullXRange().second, 310.0);

        panel.setXAxis(XAxisMode::WallTime);
        QVERIFY(loss->xAxisKind() == DecimatedChart::XAxisKind::DateTimeMs);
        auto* time = qobject_cast<QDateTimeAxis*>(loss->chart()->axes(Qt::Horizontal).first());
        QVERIFY(time);
        // Stored UTC, shown in local time.
        QCOMPARE(time->min().toMSecsSinceEpoch(), qint64(t0));
        QCOMPARE(time->min().timeSpec(), Qt::LocalTime);

        panel.setYScale(DecimatedChart::YScale::Log);
        QVERIFY(loss->yScale() == DecimatedChart::YScale::Log);
        auto* logBox = panel.findChild<QWidget*>(QStringLiteral("metricsLogY"));
        QVERIFY(logBox);

        // Without an epoch metric: nothing drawn on the epoch axis, and it says why.
        MetricChartsPanel other;
        other.resize(900, 500);
        other.show();
        other.setSeries(QStringLiteral("loss"), lossCurve(0, 100, t0));
        other.setXAxis(XAxisMode::Epoch);
        DecimatedChart* c = other.chart(QStringLiteral("loss"))->decimatedChart();
        QCOMPARE(c->seriesCount(), 0);
        QVERIFY2(c->noticeText().contains(QStringLiteral("epoch")), qPrintable(c->noticeText()));
        // The epoch arrives: drawn.
        QList<SeriesPoint> e2;
        for (int s = 0; s < 100; s += 10)
            e2.append(SeriesPoint{double(s), s / 50.0, t0});
        other.appendPoints(QStringLiteral("epoch"), e2);
        QCOMPARE(c->seriesCount(), 1);
        QCOMPARE(c->fullXRange().first, 0.0);
        QCOMPARE(c->fullXRange().second, 99 / 50.0);
    }

    void exportsSvgWithTheSeriesPaths()
    {
        QTemporaryDir dir;
        DecimatedChart chart(QStringLiteral("loss"));
        chart.resize(640, 400);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        auto x = std::make_shared<std::vector<double>>();
        auto a = std::make_shared<std::vector<double>>();
        auto b = std::make_shared<std::vector<double>>();
        for (int i = 0; i < 5000; ++i) {
            x->push_back(i);
            a->push_back(std::sin(i * 0.01));
            b->push_back(i == 2500 ? kNaN : std::cos(i * 0.01));
        }
        const QColor ca(0x1f, 0x77, 0xb4), cb(0xff, 0x7f, 0x0e);
        chart.addSeries(QStringLiteral("a"), ca, x, a);
        chart.addSeries(QStringLiteral("b"), cb, x, b);
        QTest::qWait(20);
        const QString path = dir.filePath(QStringLiteral("loss.svg"));
        const Result<void> r = chart.exportSvg(path);
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(f.readAll());
        bool valid = false;
        const int pathsA = svgStrokesOf(svg, ca, &valid);
        QVERIFY(valid);
        const int pathsB = svgStrokesOf(svg, cb, &valid);
        QVERIFY2(pathsA >= 1, qPrintable(svg.left(3000)));
        QVERIFY(pathsB >= 2); // the NaN cut b in two
        QVERIFY(svg.contains(QStringLiteral("<title>loss</title>")));
        // An unwritable path is an error naming it.
        const Result<void> bad = chart.exportSvg(dir.filePath(QStringLiteral("no/such/dir/x.svg")));
        QVERIFY(!bad);
        QVERIFY(bad.error().message.contains(QStringLiteral("x.svg")));
        QVERIFY(chart.exportPng(dir.filePath(QStringLiteral("loss.png"))));
    }

    void rangeChangesStayFast()
    {
        // A chart that goes from a tiny range to a wide one and back (a new
        // run selected) must not create a tick per 0.2 units on the way.
        MetricChartWidget w(QStringLiteral("loss"));
        w.resize(400, 300);
        w.show();
        QElapsedTimer t;
        t.start();
        w.setPoints(pts({0.5}));
        QList<SeriesPoint> wide;
        for (int i = 0; i < 3000; ++i)
            wide.append(SeriesPoint{double(i * 1000), 1000.0 / (i + 1)});
        w.setPoints(wide);
        w.setPoints(pts({0.001, 0.002}));
        w.setPoints(wide);
        QImage img(400, 300, QImage::Format_ARGB32);
        w.render(&img);
        QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
        auto* x = qobject_cast<QValueAxis*>(w.chartView()->chart()->axes(Qt::Horizontal).first());
        QCOMPARE(x->min(), 0.0);
        QCOMPARE(x->max(), 2999000.0);
        QCOMPARE(x->tickInterval(), 500000.0);
    }

    void growthAheadIsPacedAcrossCharts()
    {
        // One ahead-of-need column growth per GrowthPacer::kSpacingMs in the
        // whole GUI: the second ask within the spacing is refused, one after
        // it granted. And two charts following the same points still grow
        // their columns (doubled at 3/4 full at the earliest: never past 8/3
        // of the points; every point kept).
        QTest::qWait(GrowthPacer::kSpacingMs + 10);
        QVERIFY(GrowthPacer::mayGrowAhead());
        QVERIFY(!GrowthPacer::mayGrowAhead());
        QTest::qWait(GrowthPacer::kSpacingMs + 10);
        QVERIFY(GrowthPacer::mayGrowAhead());
        MetricChartWidget a(QStringLiteral("loss")), b(QStringLiteral("acc"));
        int n = 0;
        for (int batch = 0; batch < 200; ++batch) {
            QList<SeriesPoint> pts;
            for (int i = 0; i < 500; ++i, ++n)
                pts.append(SeriesPoint{double(n), 1.0 / (n + 1)});
            a.appendPoints(pts);
            b.appendPoints(pts);
            if (batch % 20 == 0)
                QTest::qWait(GrowthPacer::kSpacingMs / 4);
        }
        for (const MetricChartWidget* w : {&a, &b}) {
            // The points are packed now (no column capacity to bound): every
            // point kept, in order.
            QCOMPARE(w->pointCount(), qsizetype(n));
            QCOMPARE(w->steps().size(), std::size_t(n));
            QCOMPARE(w->steps().back(), double(n - 1));
            QCOMPARE(w->values().size(), std::size_t(n));
        }
    }

    void niceRangeChangesOnlyWhatChanged()
    {
        // Every range or interval change makes Qt Charts lay out all labels
        // again: a pan that keeps the interval is one change, a zoom that
        // changes it two. A range change lays them out at once: then the
        // range never has more than ~10 ticks of the interval (a small
        // interval never meets a wide range); an interval change is laid
        // out later, and never sees over 1,000 of its ticks in the old range.
        QValueAxis axis;
        int changes = 0, worstAtRange = 0, worstAtInterval = 0;
        const auto ticks = [&] { return int((axis.max() - axis.min()) / axis.tickInterval()); };
        connect(&axis, &QValueAxis::rangeChanged, this, [&] {
            ++changes;
            worstAtRange = std::max(worstAtRange, ticks());
        });
        connect(&axis, &QValueAxis::tickIntervalChanged, this, [&] {
            ++changes;
            worstAtInterval = std::max(worstAtInterval, ticks());
        });
        connect(&axis, &QValueAxis::tickAnchorChanged, this, [&] { ++changes; });
        connect(&axis, &QValueAxis::tickTypeChanged, this, [&] { ++changes; });
        setNiceRange(&axis, 0.0, 1.0);
        QCOMPARE(axis.tickType(), QValueAxis::TicksDynamic);
        QCOMPARE(axis.tickAnchor(), 0.0);
        QCOMPARE(axis.tickInterval(), 0.2);
        changes = 0;
        setNiceRange(&axis, 0.1, 1.1); // a pan: same interval
        QCOMPARE(changes, 1);
        changes = 0;
        setNiceRange(&axis, 0.0, 3000.0); // wide
        QCOMPARE(changes, 2);
        QCOMPARE(axis.tickInterval(), 500.0);
        setNiceRange(&axis, 100.0, 1000.0); // a zoom in
        QCOMPARE(axis.tickInterval(), 200.0);
        setNiceRange(&axis, 0.0, 0.01); // very narrow at once
        QCOMPARE(axis.tickInterval(), 0.002);
        QCOMPARE(axis.min(), 0.0);
        QCOMPARE(axis.max(), 0.01);
        setNiceRange(&axis, 0.0, 1e6); // very wide at once
        QCOMPARE(axis.tickInterval(), 200000.0);
        QVERIFY2(worstAtRange <= 10, qPrintable(QString::number(worstAtRange)));
        QVERIFY2(worstAtInterval <= 1000, qPrintable(QString::number(worstAtInterval)));
        changes = 0;
        setNiceRange(&axis, 0.0, 1e6); // nothing new
        QCOMPARE(changes, 0);
    }

    // Issue 21: the readout followed only a held button (the viewport had no
    // mouse tracking). Hovering lists each visible series' value at the
    // nearest step at or before the cursor.
    void hoverWithoutButtonListsEverySeries()
    {
        DecimatedChart chart(QStringLiteral("loss"));
        chart.resize(700, 400);
        const auto col
                = [](std::vector<double> v) { return std::make_shared<const std::vector<double>>(std::move(v)); };
        chart.addSeries(QStringLiteral("digits-sweep[lr=0.001]"), QColor(0x1f77b4), col({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                col({2.5, 2.25, 2.0, 1.75, 1.5, 1.25, 1.0, 0.75, 0.5, 0.25}));
        chart.addSeries(QStringLiteral("digits-sweep[lr=0.0003]"), QColor(0xff7f0e), col({0, 3, 6, 9}),
                col({3.0, 2.875, 2.75, 2.625}));
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QTRY_VERIFY(chart.chart()->plotArea().width() > 100);
        QVERIFY(chart.hoverText().isEmpty());

        hoverAt(chart, 4.5);
        QTRY_VERIFY(!chart.hoverText().isEmpty());
        QStringList lines = chart.hoverText().split(u'\n');
        QCOMPARE(lines.size(), 3);
        QVERIFY2(lines[0].startsWith(QStringLiteral("step 4.")), qPrintable(lines[0]));
        QCOMPARE(lines[1], QStringLiteral("digits-sweep[lr=0.001]: 1.5"));
        QCOMPARE(lines[2], QStringLiteral("digits-sweep[lr=0.0003]: 2.875")); // step 3, not the nearer 6
        QVERIFY(chart.hoverX() > 4.0 && chart.hoverX() < 5.0);

        // Hidden series are not listed; smoothing shows smoothed and raw.
        chart.setSeriesVisible(0, false);
        chart.setSmoothing(0.5);
        hoverAt(chart, 6.5);
        QTRY_VERIFY(chart.hoverText().split(u'\n').value(0).startsWith(QStringLiteral("step 6.")));
        const std::vector<double> b{3.0, 2.875, 2.75, 2.625};
        const std::vector<double> sb = smoothEma(b, 0.5);
        lines = chart.hoverText().split(u'\n');
        QCOMPARE(lines.size(), 2);
        QCOMPARE(
                lines[1], QStringLiteral("digits-sweep[lr=0.0003]: %1 (raw 2.75)").arg(QString::number(sb[2], 'g', 6)));

        // The cursor line is painted where the cursor is.
        QImage img(chart.chartView()->viewport()->size(), QImage::Format_ARGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            chart.paintHover(p, chart.chart()->plotArea());
        }
        const QRectF area = chart.chart()->plotArea();
        const int px
                = int(area.left() + (chart.hoverX() - chart.xMin()) / (chart.xMax() - chart.xMin()) * area.width());
        const int midY = int(area.center().y());
        QVERIFY(img.pixelColor(px, midY) != QColor(Qt::white) || img.pixelColor(px + 1, midY) != QColor(Qt::white));
        QCOMPARE(img.pixelColor(px + 10, midY), QColor(Qt::white));

        // Leaving the plot hides the readout.
        chart.setHoverX(kNaN);
        QVERIFY(chart.hoverText().isEmpty());
    }

    // The per-run Metrics tab: the same hover, and the compare view's smoothing.
    void metricsTabHoverAndSmoothing()
    {
        MetricChartsPanel panel;
        panel.resize(1000, 700);
        panel.setSeries(QStringLiteral("loss"), pts({4, 2, 3, 1, 2, 0.5}));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        DecimatedChart* chart = panel.chart(QStringLiteral("loss"))->decimatedChart();
        QTRY_VERIFY(chart->chart()->plotArea().width() > 100);
        hoverAt(*chart, 2.5);
        QTRY_VERIFY(!chart->hoverText().isEmpty());
        QCOMPARE(chart->hoverText().split(u'\n').value(1), QStringLiteral("loss: 3"));

        auto* slider = panel.findChild<QSlider*>(QStringLiteral("metricsSmoothing"));
        QVERIFY(slider);
        const std::vector<double> raw{4, 2, 3, 1, 2, 0.5};
        QCOMPARE(chart->drawnSegments(0).value(0).size(), qsizetype(raw.size()));
        QCOMPARE(chart->drawnSegments(0).value(0).value(2).y(), 3.0);
        slider->setValue(600);
        QCOMPARE(panel.smoothing(), 0.6);
        QCOMPARE(chart->smoothing(), 0.6);
        const std::vector<double> expected = smoothEma(raw, 0.6);
        const QList<QPointF> drawn = chart->drawnSegments(0).value(0);
        QCOMPARE(drawn.size(), qsizetype(expected.size()));
        for (std::size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(drawn[qsizetype(i)].x(), double(i));
            QCOMPARE(drawn[qsizetype(i)].y(), expected[i]);
        }
        QCOMPARE(chart->drawnRawPoints(0), qsizetype(raw.size()));
        // A chart added later gets the panel's smoothing too.
        panel.setSeries(QStringLiteral("acc"), pts({0.1, 0.5}));
        QCOMPARE(panel.chart(QStringLiteral("acc"))->decimatedChart()->smoothing(), 0.6);
    }

    void panelHasOneChartPerKey()
    {
        MetricChartsPanel panel;
        panel.resize(800, 600);
        panel.show();
        panel.setSeries(QStringLiteral("val_loss"), pts({1, 0.5}));
        panel.setSeries(QStringLiteral("loss"), pts({2, 1, 0.5}));
        panel.appendPoints(QStringLiteral("loss"), pts({0.4}, 3));
        panel.appendPoints(QStringLiteral("acc"), pts({0.9}));
        QCOMPARE(
                panel.keys(), (QStringList{QStringLiteral("acc"), QStringLiteral("loss"), QStringLiteral("val_loss")}));
        QVERIFY(panel.findChild<MetricChartWidget*>(QStringLiteral("metricChart:loss")));
        QCOMPARE(panel.chart(QStringLiteral("loss"))->pointCount(), 4);
        panel.setKeyRank([](const QString& key) { return key.startsWith(QStringLiteral("val_")) ? 0 : 1; });
        QCOMPARE(
                panel.keys(), (QStringList{QStringLiteral("val_loss"), QStringLiteral("acc"), QStringLiteral("loss")}));
        // Zoom one chart: the others follow.
        panel.chart(QStringLiteral("loss"))->decimatedChart()->zoomX(0.5, 1.0);
        Q_EMIT panel.chart(QStringLiteral("loss"))->decimatedChart()->xRangeChanged(0.25, 1.75);
        QCOMPARE(panel.chart(QStringLiteral("acc"))->decimatedChart()->xMin(), 0.25);
        panel.clear(QStringLiteral("nothing"));
        QVERIFY(panel.keys().isEmpty());
        QVERIFY(!panel.findChild<MetricChartWidget*>(QStringLiteral("metricChart:loss")));
    }

    void rankKeysShareOneChart()
    {
        // A distributed run stores `loss[rank0]` and `loss[rank1]`
        // (MetricExtractor::rankKey): one chart `loss`, one line per rank.
        MetricChartsPanel panel;
        panel.resize(800, 600);
        panel.show();
        panel.setSeries(QStringLiteral("loss[rank1]"), pts({8.2, 6.5, 5.2}, 1));
        panel.appendPoints(QStringLiteral("loss[rank0]"), pts({9.5, 7.5}, 1));
        panel.appendPoints(QStringLiteral("loss[rank0]"), pts({6.0}, 3));
        panel.appendPoints(QStringLiteral("val_acc[rank0]"), pts({0.6}, 5));
        QCOMPARE(panel.keys(), (QStringList{QStringLiteral("loss"), QStringLiteral("val_acc")}));
        MetricChartWidget* loss = panel.chart(QStringLiteral("loss[rank1]"));
        QVERIFY(loss);
        QCOMPARE(loss, panel.chart(QStringLiteral("loss")));
        QCOMPARE(loss->objectName(), QStringLiteral("metricChart:loss"));
        QCOMPARE(loss->lineNames(), (QStringList{QStringLiteral("rank0"), QStringLiteral("rank1")}));
        QCOMPARE(loss->lineValues(QStringLiteral("rank0")), (std::vector<double>{9.5, 7.5, 6.0}));
        QCOMPARE(loss->lineValues(QStringLiteral("rank1")), (std::vector<double>{8.2, 6.5, 5.2}));
        QCOMPARE(loss->lineSteps(QStringLiteral("rank0")), (std::vector<double>{1, 2, 3}));
        DecimatedChart* c = loss->decimatedChart();
        QCOMPARE(c->seriesCount(), 2);
        QCOMPARE(c->seriesName(0), QStringLiteral("loss rank0"));
        QCOMPARE(c->seriesName(1), QStringLiteral("loss rank1"));
        QCOMPARE(c->totalPoints(0), 3); // the live append reached rank 0's line
        QCOMPARE(c->totalPoints(1), 3);
        QVERIFY(c->drawnPoints(0) > 0 && c->drawnPoints(1) > 0);
        QVERIFY(!panel.findChild<MetricChartWidget*>(QStringLiteral("metricChart:loss[rank0]")));
        QCOMPARE(panel.chart(QStringLiteral("val_acc"))->decimatedChart()->seriesCount(), 1);
    }

    void markersArePaintedAndExported()
    {
        DecimatedChart c(QStringLiteral("loss"));
        c.resize(640, 400);
        std::vector<double> x, y;
        for (int i = 0; i <= 10; ++i) {
            x.push_back(i);
            y.push_back(1.0 + 0.1 * i); // a line that never reaches the marker columns' middle
        }
        c.addSeries(QStringLiteral("run"), QColor(0x1f, 0x77, 0xb4), std::make_shared<const std::vector<double>>(x),
                std::make_shared<const std::vector<double>>(y));
        c.setMarkers({2.5, 7.5});
        QCOMPARE(c.markers(), (QList<double>{2.5, 7.5}));
        c.setXRange(0, 10);
        QImage img(200, 100, QImage::Format_ARGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            c.paintSeries(p, QRectF(0, 0, 200, 100));
        }
        const QRgb grey = qRgb(0x9e, 0x9e, 0x9e);
        const auto greyIn = [&](int col) {
            int n = 0;
            for (int row = 0; row < img.height(); ++row)
                n += img.pixel(col, row) == grey;
            return n;
        };
        // 2.5 and 7.5 of 0..10 over 200 px: columns 50 and 150, dashed top to bottom.
        QVERIFY2(greyIn(50) >= 40, qPrintable(QString::number(greyIn(50))));
        QVERIFY2(greyIn(150) >= 40, qPrintable(QString::number(greyIn(150))));
        QVERIFY(greyIn(50) < 100); // dashed, not solid
        QCOMPARE(greyIn(100), 0);
        // Outside the visible range: not drawn (clipped).
        c.setXRange(3, 10);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            c.paintSeries(p, QRectF(0, 0, 200, 100));
        }
        int greyTotal = 0;
        for (int col = 0; col < img.width(); ++col)
            greyTotal += greyIn(col);
        QVERIFY(greyTotal > 0);                                // 7.5 still in view
        QCOMPARE(greyIn(int((7.5 - 3) / 7 * 200)), greyTotal); // and nothing else
        // The SVG export goes through the same paint: a grey stroke is in it.
        c.show();
        QTest::qWait(0);
        QTemporaryDir dir;
        const QString svg = dir.filePath(QStringLiteral("m.svg"));
        QVERIFY(c.exportSvg(svg));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("stroke=\"#9e9e9e\""));
        c.setMarkers({});
        QVERIFY(c.markers().isEmpty());
    }

    void restartFromStoreIsMarked()
    {
        QTemporaryDir dir;
        auto opened = ResultStore::open(dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
        std::unique_ptr<ResultStore> store = std::move(*opened);
        RunRecord r;
        r.name = QStringLiteral("resumed");
        r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
        r.workdir = dir.path();
        auto id = store->createRun(r, {});
        QVERIFY(id);
        const QString key = QStringLiteral("loss");
        QList<MetricPoint> first, second;
        for (int s = 1; s <= 10; ++s)
            first.append(MetricPoint{*id, key, s, std::nullopt, 1000 + 1000 * s, 1.0 / s});
        store->appendMetrics(first);
        QVERIFY(store->flush());
        for (int s = 5; s <= 8; ++s) // resumed from the checkpoint at step 5
            second.append(MetricPoint{*id, key, s, std::nullopt, 100000 + 1000 * s, 0.5 / s});
        store->appendMetrics(second);
        QVERIFY(store->flush());

        MetricChartsPanel panel;
        panel.resize(800, 600);
        panel.show();
        StoreReader reader(store.get());
        connect(&reader, &StoreReader::metricsLoaded, &panel,
                [&panel](RunId, int, const QMap<QString, QList<MetricPoint>>& series) {
                    for (auto it = series.cbegin(); it != series.cend(); ++it) {
                        QList<SeriesPoint> pts;
                        for (const MetricPoint& p : it.value())
                            pts.append(SeriesPoint{double(p.step), p.value, double(p.wallTimeMs)});
                        panel.setSeries(it.key(), pts);
                    }
                });
        connect(&reader, &StoreReader::restartsLoaded, &panel,
                [&panel](RunId, int, const QMap<QString, QList<qint64>>& steps) {
                    for (auto it = steps.cbegin(); it != steps.cend(); ++it)
                        panel.setRestarts(it.key(), it.value());
                });
        QSignalSpy restarts(&reader, &StoreReader::restartsLoaded);
        reader.requestMetrics(*id, 7);
        QTRY_COMPARE(restarts.size(), 1);
        QCOMPARE(restarts.first().at(0).value<RunId>(), *id);
        QCOMPARE(restarts.first().at(1).toInt(), 7);
        MetricChartWidget* chart = panel.chart(key);
        QVERIFY(chart);
        QCOMPARE(chart->xAxisMode(), XAxisMode::Step);
        QCOMPARE(chart->restarts(), (QList<qint64>{5}));
        QCOMPARE(chart->decimatedChart()->markers(), (QList<double>{5.0}));
        // Wall time axis: at the first point of the new segment (step 5, resumed).
        panel.setXAxis(XAxisMode::WallTime);
        QCOMPARE(chart->decimatedChart()->markers(), (QList<double>{105000.0}));
        panel.setXAxis(XAxisMode::Step);
        QCOMPARE(chart->decimatedChart()->markers(), (QList<double>{5.0}));
    }

    // Issue #25: a retried run's second attempt resumed at step 5: selected,
    // it shows attempt 1's steps 1-4 and its own 5-8 as one line, marked at
    // 5; the first attempt alone shows its own 1-6.
    void attemptsReadAsOneSeries()
    {
        QTemporaryDir dir;
        auto opened = ResultStore::open(dir.filePath(QStringLiteral("results.db")));
        QVERIFY(opened);
        std::unique_ptr<ResultStore> store = std::move(*opened);
        RunRecord r;
        r.name = QStringLiteral("retried");
        r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
        r.workdir = dir.path();
        const auto group = store->createGroup(RunGroupKind::Attempts, r.name, QDateTime::currentDateTimeUtc());
        QVERIFY(group);
        QList<RunId> ids;
        for (int a = 1; a <= 2; ++a) {
            RunRecord attempt = r;
            attempt.groups = {RunGroupMembership{*group, RunGroupKind::Attempts, a, {}}};
            auto id = store->createRun(attempt, {});
            QVERIFY(id);
            ids << *id;
        }
        const QString key = QStringLiteral("loss");
        QList<MetricPoint> first, second;
        for (int s = 1; s <= 6; ++s)
            first.append(MetricPoint{ids[0], key, s, std::nullopt, 1000 * s, 1.0 / s});
        for (int s = 5; s <= 8; ++s)
            second.append(MetricPoint{ids[1], key, s, std::nullopt, 100000 + 1000 * s, 0.5 / s});
        store->appendMetrics(first);
        store->appendMetrics(second);
        QVERIFY(store->flush());

        StoreReader reader(store.get());
        QSignalSpy loaded(&reader, &StoreReader::metricsLoaded);
        QSignalSpy restarts(&reader, &StoreReader::restartsLoaded);
        reader.requestMetrics(ids[1], 1);
        QTRY_COMPARE(restarts.size(), 1);
        using Series = QMap<QString, QList<MetricPoint>>;
        using Steps = QMap<QString, QList<qint64>>;
        const auto series = loaded.first().at(2).value<Series>();
        QStringList got;
        for (const MetricPoint& p : series.value(key))
            got << QStringLiteral("%1:%2").arg(p.run == ids[0] ? 1 : 2).arg(p.step);
        QCOMPARE(got,
                QStringList({u"1:1"_qs, u"1:2"_qs, u"1:3"_qs, u"1:4"_qs, u"2:5"_qs, u"2:6"_qs, u"2:7"_qs, u"2:8"_qs}));
        QCOMPARE(restarts.first().at(2).value<Steps>().value(key), (QList<qint64>{5}));

        reader.requestMetrics(ids[0], 2);
        QTRY_COMPARE(restarts.size(), 2);
        QCOMPARE(loaded.last().at(2).value<Series>().value(key).size(), 6);
        QVERIFY(restarts.last().at(2).value<Steps>().isEmpty());
    }
};

QTEST_MAIN(TestMetricChart)
#include "TestMetricChart.moc"
