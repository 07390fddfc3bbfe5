#pragma once

#include "SeriesData.h"

#include <QMap>
#include <QScrollArea>

#include <functional>

class QGridLayout;
class QLabel;

namespace ty {

class MetricChartWidget;

// Small multiples: one MetricChartWidget per metric key, two per row, in
// (rank, key) order, in a scroll area. Fed with plain series data per key; a key seen for
// the first time gets a chart. GUI thread only.
class MetricChartsPanel final : public QScrollArea {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MetricChartsPanel)

public:
    explicit MetricChartsPanel(QWidget* parent = nullptr);

    // Removes every chart and shows `message` (e.g. "No metrics yet").
    void clear(const QString& message = {});
    void setSeries(const QString& key, const QList<SeriesPoint>& points);
    void appendPoints(const QString& key, const QList<SeriesPoint>& points);

    // Charts are ordered by (rank(key), key); the default ranks all keys 0.
    void setKeyRank(std::function<int(const QString&)> rank);

    // In display order.
    QStringList keys() const;
    MetricChartWidget* chart(const QString& key) const { return m_charts.value(key); }

private:
    MetricChartWidget* ensureChart(const QString& key);
    void relayout();

    QWidget* m_content = nullptr;
    QGridLayout* m_grid = nullptr;
    QLabel* m_placeholder = nullptr;
    QMap<QString, MetricChartWidget*> m_charts;
    std::function<int(const QString&)> m_rank;
};

} // namespace ty
