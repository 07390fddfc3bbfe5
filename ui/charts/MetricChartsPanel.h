#pragma once

#include "DecimatedChart.h"
#include "SeriesData.h"
#include "XAxisMap.h"

#include <QMap>
#include <QScrollArea>

#include <functional>
#include <utility>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QSlider;

namespace ty {

class MetricChartWidget;
class SmoothingControl;

// The single-run Metrics tab. Small multiples: one MetricChartWidget per
// metric key, two per row, in (rank, key) order, in a scroll area, under a
// bar with the x axis (step, epoch, seconds since start, wall time in local
// time; objectName "metricsXAxis"), a log y check box ("metricsLogY") and
// the smoothing slider of the compare view ("metricsSmoothing", 0..999 for
// weights 0..0.999 of smoothEma, TensorBoard's debiased EMA; raw drawn faintly
// behind).
// Every chart draws through the M4 decimation (DecimatedChart); zoom and pan
// are synchronised across the charts. Right click on a chart: reset zoom,
// export as PNG or SVG.
//
// Epoch axis: the run's "epoch" metric (a key named "epoch", or ending in
// "/epoch") maps steps to epochs (EpochMap); without one nothing is drawn and
// each chart says why. Relative time counts from setRunStart() (or, when not
// given, the earliest point of any key).
//
// Fed with plain series data per key; a key seen for the first time gets a
// chart. The per-rank keys of a distributed run (`loss[rank0]`,
// `loss[rank1]`, MetricExtractor::rankKey) share the chart of their key
// (`loss`), one line per rank (MetricChartWidget's lines "rank0", "rank1").
// GUI thread only.
class MetricChartsPanel final : public QScrollArea {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MetricChartsPanel)

public:
    explicit MetricChartsPanel(QWidget* parent = nullptr);

    // Removes every chart and shows `message` (e.g. "No metrics yet"). Also
    // forgets the run start.
    void clear(const QString& message = {});
    void setSeries(const QString& key, const QList<SeriesPoint>& points);
    void appendPoints(const QString& key, const QList<SeriesPoint>& points);
    // Steps where series `key` went back (resumed run): dashed markers on its
    // chart (MetricChartWidget::setRestarts); ignored when `key` has no chart.
    void setRestarts(const QString& key, const QList<qint64>& steps);
    // ms since the Unix epoch (UTC) the run started at; <= 0: unknown.
    void setRunStart(qint64 ms);

    void setXAxis(XAxisMode mode);
    XAxisMode xAxis() const { return m_mode; }
    void setYScale(DecimatedChart::YScale scale);
    DecimatedChart::YScale yScale() const { return m_yScale; }
    // Every chart's smoothing weight, clamped to [0, 0.999]; moves the slider.
    void setSmoothing(double weight);
    double smoothing() const { return m_smoothing; }
    // The step -> epoch map in use (invalid without an epoch metric).
    EpochMap epochMap() const { return m_epochs; }

    // Charts are ordered by (rank(key), key); the default ranks all keys 0.
    void setKeyRank(std::function<int(const QString&)> rank);

    // The charts' keys (without rank suffixes), in display order.
    QStringList keys() const;
    // The chart that draws `key` (`loss[rank1]` -> the chart of `loss`).
    MetricChartWidget* chart(const QString& key) const { return m_charts.value(chartAndLine(key).first); }
    // {chart key, line name} of a stored key: {"loss", "rank1"}, {"acc", ""}.
    static std::pair<QString, QString> chartAndLine(const QString& key);

private:
    MetricChartWidget* ensureChart(const QString& key);
    void relayout();
    void refreshAxes(bool force);
    double startMs() const;
    void showChartMenu(MetricChartWidget* chart, const QPoint& globalPos);
    void syncRange(MetricChartWidget* from, double lo, double hi);

    QWidget* m_content = nullptr;
    QGridLayout* m_grid = nullptr;
    QLabel* m_placeholder = nullptr;
    QComboBox* m_axisCombo = nullptr;
    QCheckBox* m_logY = nullptr;
    SmoothingControl* m_smoothingControl = nullptr;
    double m_smoothing = 0.0;
    QMap<QString, MetricChartWidget*> m_charts;
    std::function<int(const QString&)> m_rank;
    XAxisMode m_mode = XAxisMode::Step;
    DecimatedChart::YScale m_yScale = DecimatedChart::YScale::Linear;
    EpochMap m_epochs;
    qint64 m_runStart = 0;
    double m_t0 = 0.0;
    bool m_syncing = false;
};

} // namespace ty
