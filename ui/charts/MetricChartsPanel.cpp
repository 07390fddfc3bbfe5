#include "MetricChartsPanel.h"

#include "MetricChartWidget.h"

#include <QGridLayout>
#include <QLabel>

#include <algorithm>

namespace ty {

MetricChartsPanel::MetricChartsPanel(QWidget* parent)
    : QScrollArea(parent)
{
    setObjectName(QStringLiteral("metricChartsPanel"));
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    m_content = new QWidget;
    m_grid = new QGridLayout(m_content);
    m_grid->setContentsMargins(4, 4, 4, 4);
    m_grid->setSpacing(6);
    m_placeholder = new QLabel(m_content);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setEnabled(false);
    m_grid->addWidget(m_placeholder, 0, 0, 1, 2);
    setWidget(m_content);
    clear(tr("Select a run to see its metrics."));
}

void MetricChartsPanel::clear(const QString& message)
{
    for (MetricChartWidget* c : std::as_const(m_charts)) {
        m_grid->removeWidget(c);
        delete c;
    }
    m_charts.clear();
    m_placeholder->setText(message);
    relayout();
}

MetricChartWidget* MetricChartsPanel::ensureChart(const QString& key)
{
    if (MetricChartWidget* c = m_charts.value(key))
        return c;
    auto* c = new MetricChartWidget(key, m_content);
    m_charts.insert(key, c);
    relayout();
    return c;
}

void MetricChartsPanel::setKeyRank(std::function<int(const QString&)> rank)
{
    m_rank = std::move(rank);
    relayout();
}

QStringList MetricChartsPanel::keys() const
{
    QStringList keys = m_charts.keys();
    if (m_rank)
        std::stable_sort(keys.begin(), keys.end(),
                         [this](const QString& a, const QString& b) { return m_rank(a) < m_rank(b); });
    return keys;
}

void MetricChartsPanel::relayout()
{
    for (MetricChartWidget* c : std::as_const(m_charts))
        m_grid->removeWidget(c);
    m_placeholder->setVisible(m_charts.isEmpty());
    int i = 0;
    const QStringList ordered = keys();
    for (const QString& key : ordered) {
        MetricChartWidget* c = m_charts.value(key);
        m_grid->addWidget(c, 1 + i / 2, i % 2);
        c->show();
        ++i;
    }
    for (int r = 0; r < m_grid->rowCount(); ++r)
        m_grid->setRowStretch(r, 0);
    m_grid->setRowStretch(1 + (i + 1) / 2, 1);
    m_grid->setColumnStretch(0, 1);
    m_grid->setColumnStretch(1, 1);
}

void MetricChartsPanel::setSeries(const QString& key, const QList<SeriesPoint>& points)
{
    ensureChart(key)->setPoints(points);
}

void MetricChartsPanel::appendPoints(const QString& key, const QList<SeriesPoint>& points)
{
    ensureChart(key)->appendPoints(points);
}

} // namespace ty
