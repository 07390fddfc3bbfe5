#pragma once

#include "DecimatedChart.h"
#include "SeriesData.h"
#include "XAxisMap.h"

#include <QList>
#include <QWidget>

#include <vector>

class QChartView;

namespace ty {

// One metric curve (one key of one run) of the single-run Metrics tab, drawn
// through DecimatedChart like the compare view: M4 decimation per pixel
// column (at most ~4 points per column whatever the series' length), NaN/inf
// as gaps with a marker (NaN and -inf on the bottom edge, +inf on the top),
// log or linear y, zoom and pan.
//
// Fed only with plain SeriesPoint data (x = step, y = value, wallMs = wall
// time in ms since the Unix epoch, UTC, NaN when unknown), kept in step
// order. The x axis is mapped from them (XAxisMode: step, epoch through the
// run's EpochMap, seconds since t0, wall time shown in local time).
// appendPoints() hands new points to DecimatedChart::appendPoints, which
// re-decimates only the last pixel column onward (no full redraw); a point
// with a smaller step than the last one makes the series re-sort and redraw.
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

    // The x axis. `epochs` is used for XAxisMode::Epoch (invalid: nothing
    // drawn, a notice says why); `t0Ms` for RelativeTime.
    void setXAxis(XAxisMode mode, const EpochMap& epochs = {}, double t0Ms = 0.0);
    XAxisMode xAxisMode() const { return m_mode; }
    void setYScale(DecimatedChart::YScale scale);

    // Steps where the series went back (a resumed run,
    // ResultStore::metricRestarts): drawn as dashed vertical markers
    // (DecimatedChart::setMarkers) at the step's x on the current axis: the
    // step, its epoch, or, on the time axes, the wall time of the first point
    // at or after that step (no marker without one). Re-mapped when the axis
    // changes.
    void setRestarts(const QList<qint64>& steps);
    QList<qint64> restarts() const { return m_restarts; }

    // The points as received, in step order.
    const std::vector<double>& steps() const { return m_steps; }
    const std::vector<double>& values() const { return m_values; }
    const std::vector<double>& wallMs() const { return m_wall; }

    // What is drawn, for tests and the status line.
    qsizetype pointCount() const { return qsizetype(m_values.size()); }
    int segmentCount() const;
    QList<int> segmentPointCounts() const; // drawn (decimated) points per segment
    int gapMarkerCount() const;
    QChartView* chartView() const;
    DecimatedChart* decimatedChart() const { return m_chart; }

Q_SIGNALS:
    void xRangeChanged(double lo, double hi);
    void menuRequested(const QPoint& globalPos);

private:
    void reserveFor(std::size_t incoming); // grows the columns one at a time
    bool addRaw(const QList<SeriesPoint>& points); // false: not in step order any more
    void sortRaw();
    void rebuild();
    void updateTitle();
    bool drawable() const;
    std::vector<double> mapped(std::size_t from) const;
    void updateMarkers();

    QString m_key;
    QColor m_color;
    DecimatedChart* m_chart = nullptr;
    // Every point received (the chart needs them all to redraw on an axis
    // change): 24 bytes a point here plus DecimatedChart's x and y columns
    // (16 bytes), i.e. memory grows with the run's number of metric points,
    // not with the console's rate or the time spent following (issue 5).
    std::vector<double> m_steps, m_wall, m_values;
    qsizetype m_nonFinite = 0;
    XAxisMode m_mode = XAxisMode::Step;
    EpochMap m_epochs;
    double m_t0 = 0.0;
    QList<qint64> m_restarts;
};

} // namespace ty
