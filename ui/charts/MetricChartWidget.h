#pragma once

#include "SeriesData.h"

#include <QList>
#include <QWidget>

class QChart;
class QChartView;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace ty {

// One metric curve (one key of one run) drawn with Qt Charts: a QChartView
// whose line is cut into segments at NaN/inf values, with a marker at each
// such value (NaN and -inf on the bottom edge, +inf on the top edge) so a
// non-finite value is visible but never drawn as a line to a huge number.
//
// Fed only with plain SeriesPoint data. appendPoints() extends the last
// segment in place (no full redraw) when points arrive in x order; a point
// with a smaller x than the last one makes it rebuild from all points.
// OpenGL is never enabled (it crashes under the offscreen platform).
// GUI thread only.
class MetricChartWidget final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MetricChartWidget)

public:
    // objectName is "metricChart:<key>", its chart view's "chartView".
    explicit MetricChartWidget(const QString& key, QWidget* parent = nullptr);
    ~MetricChartWidget() override;

    QString key() const { return m_key; }
    void setSeriesColor(const QColor& color);

    void setPoints(const QList<SeriesPoint>& points);
    void appendPoints(const QList<SeriesPoint>& points);
    void clear();

    // What is drawn, for tests and the status line.
    qsizetype pointCount() const { return m_points.size(); }
    int segmentCount() const { return int(m_segments.size()); }
    QList<int> segmentPointCounts() const;
    int gapMarkerCount() const;
    QChartView* chartView() const { return m_view; }

private:
    void rebuild();
    void addPoints(const QList<SeriesPoint>& points);
    QLineSeries* newSegment();
    void updateAxes();
    void updateTitle();

    QString m_key;
    QColor m_color;
    QList<SeriesPoint> m_points;
    QChartView* m_view = nullptr;
    QChart* m_chart = nullptr;
    QValueAxis* m_axisX = nullptr;
    QValueAxis* m_axisY = nullptr;
    QList<QLineSeries*> m_segments;
    QScatterSeries* m_nanMarkers = nullptr;
    QScatterSeries* m_infMarkers = nullptr;
    QList<SegmentedSeries::Gap> m_gaps;
    bool m_segmentOpen = false;
    double m_minX = 0, m_maxX = 0, m_minY = 0, m_maxY = 0;
    bool m_haveFinite = false;
    bool m_haveX = false;
    double m_lastFinite = 0;
};

} // namespace ty
