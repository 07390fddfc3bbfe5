#pragma once

#include "DecimatedChart.h"
#include "SeriesData.h"
#include "XAxisMap.h"
#include "core/store/PackedMetricSeries.h"

#include <QList>
#include <QWidget>

#include <memory>
#include <vector>

class QChartView;

namespace ty {

// One metric chart (one key of one run) of the single-run Metrics tab, drawn
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
//
// Memory: each line's points are held once, packed (PackedMetricSeries,
// core/store: ~2-3 bytes a point for decimal values a trainer prints, at
// most 24 + ~0.5), and drawn from there (DecimatedChart::addPackedSeries) on
// the step and time axes; only the epoch axis (and a time axis whose wall
// times go back) hands DecimatedChart plain mapped columns (16 bytes a
// point, as before issue #27).
//
// Lines: a key logged by several ranks of a distributed run (`loss[rank0]`,
// `loss[rank1]`, MetricExtractor::rankKey) is one chart with one line per
// rank. The line "" is the key's own; setPoints()/appendPoints() without a
// line name feed it and steps()/values()/wallMs() read it. Each other line is
// named ("rank1"), drawn in its own colour and kept in its own step order.
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

    void setPoints(const QList<SeriesPoint>& points) { setPoints(QString(), points); }
    void appendPoints(const QList<SeriesPoint>& points) { appendPoints(QString(), points); }
    void setPoints(const QString& line, const QList<SeriesPoint>& points);
    void appendPoints(const QString& line, const QList<SeriesPoint>& points);
    void clear();
    // The lines that hold points, "" (the key's own) first, then by name.
    QStringList lineNames() const;
    // The points of one line as received, in step order (empty: no such line).
    std::vector<double> lineValues(const QString& line) const;
    std::vector<double> lineSteps(const QString& line) const;
    // The packed points of one line (null: no such line). Not to be kept
    // across a setPoints() or an out-of-order append (a new series then).
    std::shared_ptr<const PackedMetricSeries> lineData(const QString& line) const;

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

    // The points of the key's own line as received, in step order (unpacked:
    // O(points) each).
    std::vector<double> steps() const;
    std::vector<double> values() const;
    std::vector<double> wallMs() const;
    // The first finite wall time of the key's own line (NaN: none); reads
    // only as far as it finds one.
    double firstWallMs() const;

    // What is drawn, for tests and the status line (the key's own line).
    qsizetype pointCount() const { return m_lines.front().data->size(); }
    int segmentCount() const;
    QList<int> segmentPointCounts() const; // drawn (decimated) points per segment
    int gapMarkerCount() const;
    QChartView* chartView() const;
    DecimatedChart* decimatedChart() const { return m_chart; }

Q_SIGNALS:
    void xRangeChanged(double lo, double hi);
    void menuRequested(const QPoint& globalPos);

private:
    struct Line {
        QString name;
        // Every point received (the chart needs them all to redraw on an axis
        // change), packed, shared with DecimatedChart when it draws from them
        // (issue #27; before it: 40 bytes a point and vector capacity).
        std::shared_ptr<PackedMetricSeries> data = std::make_shared<PackedMetricSeries>();
        qsizetype nonFinite = 0;
        int series = -1;     // DecimatedChart series index; -1: not drawn
        bool packed = false; // the series is drawn from `data` (addPackedSeries)
    };
    Line& line(const QString& name); // created on first use
    const Line* findLine(const QString& name) const;
    QColor lineColour(std::size_t index) const;
    static bool addRaw(Line& l, const QList<SeriesPoint>& points); // false: not in step order any more
    static void sortRaw(Line& l);
    void rebuild();
    void updateTitle();
    bool drawable() const;
    std::vector<double> mapped(const Line& l, qsizetype from) const;
    // Whether line `l` can be drawn from its packed points on this axis.
    bool drawPacked(const Line& l) const;
    void updateMarkers();

    QString m_key;
    QColor m_color;
    DecimatedChart* m_chart = nullptr;
    std::vector<Line> m_lines{1}; // [0]: the key's own line ("")
    XAxisMode m_mode = XAxisMode::Step;
    EpochMap m_epochs;
    double m_t0 = 0.0;
    QList<qint64> m_restarts;
};

} // namespace ty
