#include "MetricChartWidget.h"

#include "ChartStyle.h"

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace ty {

namespace {
constexpr int kShowPointsBelow = 40; // draw point markers on short series
} // namespace

MetricChartWidget::MetricChartWidget(const QString& key, QWidget* parent)
    : QWidget(parent)
    , m_key(key)
    , m_color(0x15, 0x65, 0xc0)
{
    setObjectName(QStringLiteral("metricChart:") + key);
    m_chart = newPlainChart(4);

    m_axisX = new QValueAxis;
    m_axisX->setLabelFormat(QStringLiteral("%g"));
    m_axisX->setTitleText(tr("step"));
    m_axisY = new QValueAxis;
    m_axisY->setLabelFormat(QStringLiteral("%.3g"));
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);

    m_nanMarkers = new QScatterSeries;
    m_nanMarkers->setName(QStringLiteral("nan"));
    m_nanMarkers->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
    m_nanMarkers->setMarkerSize(9);
    m_nanMarkers->setColor(QColor(0xc6, 0x28, 0x28));
    m_nanMarkers->setBorderColor(QColor(0xc6, 0x28, 0x28));
    m_infMarkers = new QScatterSeries;
    m_infMarkers->setName(QStringLiteral("inf"));
    m_infMarkers->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    m_infMarkers->setMarkerSize(10);
    m_infMarkers->setColor(QColor(0xef, 0x6c, 0x00));
    m_infMarkers->setBorderColor(QColor(0xef, 0x6c, 0x00));
    for (QScatterSeries* s : {m_nanMarkers, m_infMarkers}) {
        m_chart->addSeries(s);
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
    }

    m_view = new QChartView(m_chart, this);
    m_view->setObjectName(QStringLiteral("chartView"));
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumHeight(200);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    updateAxes();
    updateTitle();
}

MetricChartWidget::~MetricChartWidget() = default;

void MetricChartWidget::setSeriesColor(const QColor& color)
{
    m_color = color;
    for (QLineSeries* s : std::as_const(m_segments))
        s->setPen(QPen(m_color, 2));
}

void MetricChartWidget::clear()
{
    for (QLineSeries* s : std::as_const(m_segments)) {
        m_chart->removeSeries(s);
        delete s;
    }
    m_segments.clear();
    m_nanMarkers->clear();
    m_infMarkers->clear();
    m_gaps.clear();
    m_points.clear();
    m_segmentOpen = false;
    m_haveFinite = false;
    m_haveX = false;
    updateAxes();
    updateTitle();
}

void MetricChartWidget::setPoints(const QList<SeriesPoint>& points)
{
    clear();
    appendPoints(points);
}

void MetricChartWidget::appendPoints(const QList<SeriesPoint>& points)
{
    if (points.isEmpty())
        return;
    bool ordered = true;
    double lastX = m_points.isEmpty() ? -std::numeric_limits<double>::infinity() : m_points.last().x;
    for (const SeriesPoint& p : points) {
        if (p.x < lastX)
            ordered = false;
        lastX = p.x;
    }
    if (!ordered) {
        QList<SeriesPoint> all = m_points + points;
        std::stable_sort(all.begin(), all.end(), [](const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; });
        clear();
        addPoints(all);
    } else {
        addPoints(points);
    }
    const bool showPoints = m_points.size() < kShowPointsBelow;
    for (QLineSeries* seg : std::as_const(m_segments))
        seg->setPointsVisible(showPoints || seg->count() == 1);
    updateAxes();
    updateTitle();
}

QLineSeries* MetricChartWidget::newSegment()
{
    auto* s = new QLineSeries;
    s->setPen(QPen(m_color, 2));
    m_chart->addSeries(s);
    s->attachAxis(m_axisX);
    s->attachAxis(m_axisY);
    m_segments.append(s);
    return s;
}

void MetricChartWidget::addPoints(const QList<SeriesPoint>& points)
{
    m_points += points;
    const SegmentedSeries cut = SegmentedSeries::split(points);
    // Walk the input again to know, per segment, whether it continues the
    // segment that was open before these points.
    int seg = 0;
    bool inFinite = false;
    int gapIndex = 0;
    for (const SeriesPoint& p : points) {
        const bool finite = std::isfinite(p.x) && std::isfinite(p.y);
        if (std::isfinite(p.x)) {
            m_minX = m_haveX ? std::min(m_minX, p.x) : p.x;
            m_maxX = m_haveX ? std::max(m_maxX, p.x) : p.x;
            m_haveX = true;
        }
        if (finite) {
            m_minY = m_haveFinite ? std::min(m_minY, p.y) : p.y;
            m_maxY = m_haveFinite ? std::max(m_maxY, p.y) : p.y;
            m_haveFinite = true;
            m_lastFinite = p.y;
            if (!inFinite) {
                QLineSeries* target = m_segmentOpen && !m_segments.isEmpty() ? m_segments.last() : newSegment();
                target->append(cut.segments.at(seg++));
                inFinite = true;
            }
            m_segmentOpen = true;
        } else {
            inFinite = false;
            m_segmentOpen = false;
            if (std::isfinite(p.x))
                m_gaps.append(cut.gaps.at(gapIndex++));
        }
    }
}

int MetricChartWidget::gapMarkerCount() const
{
    return int(m_nanMarkers->count() + m_infMarkers->count());
}

QList<int> MetricChartWidget::segmentPointCounts() const
{
    QList<int> counts;
    for (const QLineSeries* s : m_segments)
        counts.append(int(s->count()));
    return counts;
}

void MetricChartWidget::updateAxes()
{
    double x0 = m_haveX ? m_minX : 0, x1 = m_haveX ? m_maxX : 1;
    if (x1 <= x0) {
        x0 -= 1;
        x1 += 1;
    }
    double y0 = m_haveFinite ? m_minY : 0, y1 = m_haveFinite ? m_maxY : 1;
    if (y1 <= y0) {
        const double pad = std::abs(y0) > 0 ? std::abs(y0) * 0.05 : 1.0;
        y0 -= pad;
        y1 += pad;
    } else {
        const double pad = (y1 - y0) * 0.05;
        y0 -= pad;
        y1 += pad;
    }
    // Round ticks without stretching the range (ChartStyle.h).
    setNiceRange(m_axisX, x0, x1);
    setNiceRange(m_axisY, y0, y1);

    // Markers sit on the plot's edges: they depend on the y range.
    QList<QPointF> nan, inf;
    for (const SegmentedSeries::Gap& g : std::as_const(m_gaps)) {
        if (g.kind == SegmentedSeries::GapKind::PosInf)
            inf.append(QPointF(g.x, y1));
        else if (g.kind == SegmentedSeries::GapKind::NegInf)
            inf.append(QPointF(g.x, y0));
        else
            nan.append(QPointF(g.x, y0));
    }
    if (nan.size() != m_nanMarkers->count() || !nan.isEmpty())
        m_nanMarkers->replace(nan);
    if (inf.size() != m_infMarkers->count() || !inf.isEmpty())
        m_infMarkers->replace(inf);
}

void MetricChartWidget::updateTitle()
{
    QString title = m_key;
    if (!m_points.isEmpty()) {
        const double last = m_points.last().y;
        const QString v = std::isnan(last) ? QStringLiteral("nan")
            : std::isinf(last)             ? (last > 0 ? QStringLiteral("inf") : QStringLiteral("-inf"))
                                           : QString::number(last, 'g', 5);
        title += QStringLiteral("   %1 (%2 points").arg(v).arg(m_points.size());
        if (!m_gaps.isEmpty())
            title += QStringLiteral(", %1 nan/inf").arg(m_gaps.size());
        title += u')';
    }
    m_chart->setTitle(title);
}

} // namespace ty
