#include "charts/MetricChartWidget.h"
#include "charts/MetricChartsPanel.h"

#include <QChart>
#include <QElapsedTimer>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QTest>
#include <QValueAxis>

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

QList<QLineSeries*> lineSeries(MetricChartWidget& w)
{
    QList<QLineSeries*> out;
    const auto all = w.chartView()->chart()->series();
    for (QAbstractSeries* s : all)
        if (s->type() == QAbstractSeries::SeriesTypeLine)
            out.append(static_cast<QLineSeries*>(s));
    return out;
}

int scatterPoints(MetricChartWidget& w)
{
    int n = 0;
    const auto all = w.chartView()->chart()->series();
    for (QAbstractSeries* s : all)
        if (s->type() == QAbstractSeries::SeriesTypeScatter)
            n += int(static_cast<QScatterSeries*>(s)->count());
    return n;
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

    void nanSplitsTheLine()
    {
        MetricChartWidget w(QStringLiteral("loss"));
        QCOMPARE(w.objectName(), QStringLiteral("metricChart:loss"));
        w.resize(400, 300);
        w.show();
        w.setPoints(pts({2.0, 1.5, 1.2, kNaN, 1.0, 0.9, kInf, 0.8}));
        QCOMPARE(w.pointCount(), 8);
        QCOMPARE(w.segmentPointCounts(), (QList<int>{3, 2, 1}));
        const auto lines = lineSeries(w);
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines.at(1)->at(0), QPointF(4, 1.0));
        QCOMPARE(scatterPoints(w), 2);
        QCOMPARE(w.gapMarkerCount(), 2);
        // The y axis spans the finite values only (padded), never up to a huge value.
        auto* y = qobject_cast<QValueAxis*>(w.chartView()->chart()->axes(Qt::Vertical).first());
        QVERIFY(y);
        QVERIFY2(y->max() <= 3.0, qPrintable(QString::number(y->max())));
        QVERIFY2(y->min() >= 0.0, qPrintable(QString::number(y->min())));
        QVERIFY(y->max() >= 2.0 && y->min() <= 0.8);
        // Paints without crashing.
        QImage img(400, 300, QImage::Format_ARGB32);
        w.render(&img);
    }

    void appendsLive()
    {
        MetricChartWidget w(QStringLiteral("val_acc"));
        w.setPoints(pts({0.5, 0.6}));
        QCOMPARE(w.segmentPointCounts(), (QList<int>{2}));
        w.appendPoints(pts({0.7, 0.75}, 2));
        QCOMPARE(w.segmentPointCounts(), (QList<int>{4})); // the open segment grew
        w.appendPoints(pts({kNaN}, 4));
        w.appendPoints(pts({0.8, 0.85, 0.9}, 5));
        QCOMPARE(w.segmentPointCounts(), (QList<int>{4, 3}));
        QCOMPARE(w.gapMarkerCount(), 1);
        // Out of order: rebuilt sorted.
        w.appendPoints({SeriesPoint{1.5, 0.55}});
        QCOMPARE(w.pointCount(), 9);
        QCOMPARE(w.segmentPointCounts(), (QList<int>{5, 3}));
        QCOMPARE(lineSeries(w).first()->at(2), QPointF(1.5, 0.55));
        // Only non-finite values: no line, markers only.
        w.setPoints(pts({kNaN, kInf, -kInf}));
        QCOMPARE(w.segmentCount(), 0);
        QCOMPARE(w.gapMarkerCount(), 3);
        w.clear();
        QCOMPARE(w.pointCount(), 0);
        QCOMPARE(lineSeries(w).size(), 0);
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

    void panelHasOneChartPerKey()
    {
        MetricChartsPanel panel;
        panel.resize(800, 600);
        panel.show();
        panel.setSeries(QStringLiteral("val_loss"), pts({1, 0.5}));
        panel.setSeries(QStringLiteral("loss"), pts({2, 1, 0.5}));
        panel.appendPoints(QStringLiteral("loss"), pts({0.4}, 3));
        panel.appendPoints(QStringLiteral("acc"), pts({0.9}));
        QCOMPARE(panel.keys(), (QStringList{QStringLiteral("acc"), QStringLiteral("loss"), QStringLiteral("val_loss")}));
        QVERIFY(panel.findChild<MetricChartWidget*>(QStringLiteral("metricChart:loss")));
        QCOMPARE(panel.chart(QStringLiteral("loss"))->pointCount(), 4);
        panel.setKeyRank([](const QString& key) { return key.startsWith(QStringLiteral("val_")) ? 0 : 1; });
        QCOMPARE(panel.keys(), (QStringList{QStringLiteral("val_loss"), QStringLiteral("acc"), QStringLiteral("loss")}));
        panel.clear(QStringLiteral("nothing"));
        QVERIFY(panel.keys().isEmpty());
        QVERIFY(!panel.findChild<MetricChartWidget*>(QStringLiteral("metricChart:loss")));
    }
};

QTEST_MAIN(TestMetricChart)
#include "TestMetricChart.moc"
