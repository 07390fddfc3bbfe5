#include "MetricChartsPanel.h"

#include "core/logs/MetricExtractor.h"

#include "MetricChartWidget.h"
#include "SmoothingControl.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSlider>

#include <algorithm>
#include <cmath>

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

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(2, 0, 2, 0);
    bar->addWidget(new QLabel(tr("X axis:"), m_content));
    m_axisCombo = new QComboBox(m_content);
    m_axisCombo->setObjectName(QStringLiteral("metricsXAxis"));
    m_axisCombo->setAccessibleName(tr("X axis"));
    for (XAxisMode m : {XAxisMode::Step, XAxisMode::Epoch, XAxisMode::RelativeTime, XAxisMode::WallTime})
        m_axisCombo->addItem(xAxisTitle(m), int(m));
    connect(m_axisCombo, &QComboBox::currentIndexChanged, this,
            [this](int i) { setXAxis(XAxisMode(m_axisCombo->itemData(i).toInt())); });
    bar->addWidget(m_axisCombo);
    bar->addSpacing(12);
    m_logY = new QCheckBox(tr("Log Y"), m_content);
    m_logY->setObjectName(QStringLiteral("metricsLogY"));
    m_logY->setToolTip(tr("Logarithmic y axis; values <= 0 are skipped"));
    connect(m_logY, &QCheckBox::toggled, this,
            [this](bool on) { setYScale(on ? DecimatedChart::YScale::Log : DecimatedChart::YScale::Linear); });
    bar->addWidget(m_logY);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("Smoothing:"), m_content));
    m_smoothingControl = new SmoothingControl(QStringLiteral("metricsSmoothing"), m_content);
    connect(m_smoothingControl, &SmoothingControl::weightChanged, this, [this](double w) {
        m_smoothing = w;
        for (MetricChartWidget* c : std::as_const(m_charts))
            c->decimatedChart()->setSmoothing(w);
    });
    bar->addWidget(m_smoothingControl);
    bar->addStretch(1);
    m_grid->addLayout(bar, 0, 0, 1, 2);

    m_placeholder = new QLabel(m_content);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setEnabled(false);
    m_grid->addWidget(m_placeholder, 1, 0, 1, 2);
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
    m_epochs = EpochMap();
    m_runStart = 0;
    m_t0 = 0;
    m_placeholder->setText(message);
    relayout();
}

MetricChartWidget* MetricChartsPanel::ensureChart(const QString& key)
{
    if (MetricChartWidget* c = m_charts.value(key))
        return c;
    auto* c = new MetricChartWidget(key, m_content);
    c->setYScale(m_yScale);
    c->setXAxis(m_mode, m_epochs, m_t0);
    c->decimatedChart()->setSmoothing(m_smoothing);
    connect(c, &MetricChartWidget::xRangeChanged, this, [this, c](double lo, double hi) { syncRange(c, lo, hi); });
    connect(c, &MetricChartWidget::menuRequested, this, [this, c](const QPoint& pos) { showChartMenu(c, pos); });
    m_charts.insert(key, c);
    relayout();
    return c;
}

void MetricChartsPanel::setSmoothing(double weight)
{
    m_smoothingControl->setWeight(weight); // weightChanged applies it
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
        std::stable_sort(
                keys.begin(), keys.end(), [this](const QString& a, const QString& b) { return m_rank(a) < m_rank(b); });
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
        m_grid->addWidget(c, 2 + i / 2, i % 2);
        c->show();
        ++i;
    }
    for (int r = 0; r < m_grid->rowCount(); ++r)
        m_grid->setRowStretch(r, 0);
    m_grid->setRowStretch(2 + (i + 1) / 2, 1);
    m_grid->setColumnStretch(0, 1);
    m_grid->setColumnStretch(1, 1);
}

double MetricChartsPanel::startMs() const
{
    if (m_runStart > 0)
        return double(m_runStart);
    bool have = false;
    double t0 = 0;
    for (const MetricChartWidget* c : m_charts) {
        // In step order: the first is (nearly always) the earliest.
        const double w = c->firstWallMs();
        if (std::isfinite(w)) {
            t0 = have ? std::min(t0, w) : w;
            have = true;
        }
    }
    return t0;
}

void MetricChartsPanel::refreshAxes(bool force)
{
    EpochMap epochs;
    if (const MetricChartWidget* c = m_charts.value(pickEpochKey(m_charts.keys())))
        epochs = EpochMap::fromSeries(c->steps(), c->values());
    const double t0 = startMs();
    const bool changed = !(epochs == m_epochs) || t0 != m_t0;
    m_epochs = epochs;
    m_t0 = t0;
    if (!changed && !force)
        return;
    for (MetricChartWidget* c : std::as_const(m_charts))
        c->setXAxis(m_mode, m_epochs, m_t0); // a no-op unless what it draws changes
}

std::pair<QString, QString> MetricChartsPanel::chartAndLine(const QString& key)
{
    // `loss[rank1]` (MetricExtractor::rankKey): line "rank1" of chart "loss".
    if (const auto split = MetricExtractor::splitRankKey(key))
        return {split->first, QStringLiteral("rank") + QString::number(split->second)};
    return {key, QString()};
}

void MetricChartsPanel::setSeries(const QString& key, const QList<SeriesPoint>& points)
{
    const auto [chartKey, line] = chartAndLine(key);
    ensureChart(chartKey)->setPoints(line, points);
    refreshAxes(false);
}

void MetricChartsPanel::appendPoints(const QString& key, const QList<SeriesPoint>& points)
{
    const auto [chartKey, line] = chartAndLine(key);
    const bool fresh = !m_charts.contains(chartKey);
    ensureChart(chartKey)->appendPoints(line, points);
    // New epoch knots (or the first points ever) can move every chart's x.
    if (fresh || isEpochKey(chartKey))
        refreshAxes(false);
}

void MetricChartsPanel::setRestarts(const QString& key, const QList<qint64>& steps)
{
    if (MetricChartWidget* c = m_charts.value(chartAndLine(key).first))
        c->setRestarts(steps);
}

void MetricChartsPanel::setRunStart(qint64 ms)
{
    m_runStart = ms > 0 ? ms : 0;
    refreshAxes(false);
}

void MetricChartsPanel::setXAxis(XAxisMode mode)
{
    const int index = m_axisCombo->findData(int(mode));
    if (m_axisCombo->currentIndex() != index) {
        m_axisCombo->setCurrentIndex(index); // comes back here
        return;
    }
    if (mode == m_mode)
        return;
    m_mode = mode;
    refreshAxes(true);
}

void MetricChartsPanel::setYScale(DecimatedChart::YScale scale)
{
    const bool log = scale == DecimatedChart::YScale::Log;
    if (m_logY->isChecked() != log) {
        m_logY->setChecked(log); // comes back here
        return;
    }
    m_yScale = scale;
    for (MetricChartWidget* c : std::as_const(m_charts))
        c->setYScale(scale);
}

void MetricChartsPanel::syncRange(MetricChartWidget* from, double lo, double hi)
{
    if (m_syncing)
        return;
    m_syncing = true;
    for (MetricChartWidget* c : std::as_const(m_charts))
        if (c != from)
            c->decimatedChart()->setXRange(lo, hi);
    m_syncing = false;
}

void MetricChartsPanel::showChartMenu(MetricChartWidget* chart, const QPoint& globalPos)
{
    QMenu menu(this);
    QAction* reset = menu.addAction(tr("Reset zoom"));
    menu.addAction(tr("Export chart as PNG…"));
    QAction* svg = menu.addAction(tr("Export chart as SVG…"));
    QAction* chosen = menu.exec(globalPos);
    if (!chosen)
        return;
    DecimatedChart* c = chart->decimatedChart();
    if (chosen == reset) {
        for (MetricChartWidget* other : std::as_const(m_charts))
            other->decimatedChart()->resetZoom();
        return;
    }
    QString safe = chart->key();
    safe.replace(u'/', u'_');
    const bool isSvg = chosen == svg;
    const QString path
            = QFileDialog::getSaveFileName(this, isSvg ? tr("Export chart as SVG") : tr("Export chart as PNG"),
                    safe + (isSvg ? QStringLiteral(".svg") : QStringLiteral(".png")),
                    isSvg ? tr("SVG images (*.svg)") : tr("PNG images (*.png)"));
    if (path.isEmpty())
        return;
    const Result<void> r = isSvg ? c->exportSvg(path) : c->exportPng(path);
    if (!r)
        QMessageBox::warning(this, tr("Export failed"), r.error().message);
}

} // namespace ty
