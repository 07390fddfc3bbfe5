#include "MetricChartWidget.h"

#include "GrowthPacer.h"

#include "ChartView.h"

#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ty {

MetricChartWidget::MetricChartWidget(const QString& key, QWidget* parent)
    : QWidget(parent)
    , m_key(key)
    , m_color(0x15, 0x65, 0xc0)
{
    setObjectName(QStringLiteral("metricChart:") + key);
    m_chart = new DecimatedChart(key, this);
    m_chart->setMinimumHeight(200);
    connect(m_chart, &DecimatedChart::xRangeChanged, this, &MetricChartWidget::xRangeChanged);
    connect(m_chart, &DecimatedChart::menuRequested, this, &MetricChartWidget::menuRequested);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_chart);
    updateTitle();
}

MetricChartWidget::~MetricChartWidget() = default;

QChartView* MetricChartWidget::chartView() const
{
    return m_chart->chartView();
}

void MetricChartWidget::setSeriesColor(const QColor& color)
{
    if (color == m_color)
        return;
    m_color = color;
    rebuild();
}

void MetricChartWidget::clear()
{
    m_steps.clear();
    m_wall.clear();
    m_values.clear();
    m_nonFinite = 0;
    m_restarts.clear();
    rebuild();
}

void MetricChartWidget::setPoints(const QList<SeriesPoint>& points)
{
    m_steps.clear();
    m_wall.clear();
    m_values.clear();
    m_nonFinite = 0;
    if (!addRaw(points))
        sortRaw();
    rebuild();
}

void MetricChartWidget::reserveFor(std::size_t incoming)
{
    // Left to std::vector, the three columns (same size, same capacity)
    // reallocate in the same append: at a million points that is 3 x 16 MB
    // allocated, page-faulted and copied in one GUI-thread event, a stall of
    // 100-500 ms while following a fast run (bench_follow, issue 5). So a
    // column too small for this append grows now, and otherwise at most one
    // column per append grows ahead of need once it is 3/4 full: the copies
    // are spread over consecutive appends (and over time across every chart:
    // GrowthPacer). Growth stays geometric (x2, at 3/4 full at the
    // earliest), so the capacity is at most 8/3 of the points held.
    GrowthPacer::reserve({&m_steps, &m_wall, &m_values}, m_steps.size() + incoming);
}

bool MetricChartWidget::addRaw(const QList<SeriesPoint>& points)
{
    reserveFor(std::size_t(points.size()));
    bool ordered = true;
    double lastStep = m_steps.empty() ? -std::numeric_limits<double>::infinity() : m_steps.back();
    for (const SeriesPoint& p : points) {
        ordered = ordered && p.x >= lastStep;
        lastStep = p.x;
        m_steps.push_back(p.x);
        m_wall.push_back(p.wallMs);
        m_values.push_back(p.y);
        m_nonFinite += !std::isfinite(p.y);
    }
    return ordered;
}

void MetricChartWidget::sortRaw()
{
    std::vector<std::size_t> perm(m_steps.size());
    std::iota(perm.begin(), perm.end(), std::size_t(0));
    std::stable_sort(perm.begin(), perm.end(), [this](std::size_t a, std::size_t b) { return m_steps[a] < m_steps[b]; });
    std::vector<double> s(perm.size()), w(perm.size()), v(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k) {
        s[k] = m_steps[perm[k]];
        w[k] = m_wall[perm[k]];
        v[k] = m_values[perm[k]];
    }
    m_steps = std::move(s);
    m_wall = std::move(w);
    m_values = std::move(v);
}

bool MetricChartWidget::drawable() const
{
    return m_mode != XAxisMode::Epoch || m_epochs.isValid();
}

std::vector<double> MetricChartWidget::mapped(std::size_t from) const
{
    const std::span<const double> steps(m_steps), wall(m_wall);
    return mapX(m_mode, steps.subspan(from), wall.subspan(from), m_epochs, m_t0);
}

void MetricChartWidget::appendPoints(const QList<SeriesPoint>& points)
{
    if (points.isEmpty())
        return;
    const std::size_t from = m_steps.size();
    if (!addRaw(points)) {
        sortRaw();
        rebuild();
        return;
    }
    if (m_chart->seriesCount() == 0) {
        rebuild();
        return;
    }
    if (drawable()) {
        const std::vector<double> x = mapped(from);
        m_chart->appendPoints(0, x, std::span<const double>(m_values).subspan(from));
    }
    if (!m_restarts.isEmpty() && (m_mode == XAxisMode::RelativeTime || m_mode == XAxisMode::WallTime))
        updateMarkers(); // the point at a restart may have just arrived
    updateTitle();
}

void MetricChartWidget::setXAxis(XAxisMode mode, const EpochMap& epochs, double t0Ms)
{
    bool same = mode == m_mode && (mode != XAxisMode::Epoch || epochs == m_epochs)
        && (mode != XAxisMode::RelativeTime || t0Ms == m_t0);
    const bool wasDrawable = drawable();
    const bool wasEpoch = m_mode == XAxisMode::Epoch;
    const EpochMap oldEpochs = m_epochs;
    m_mode = mode;
    m_epochs = epochs;
    m_t0 = t0Ms;
    if (!same && mode == XAxisMode::Epoch && wasEpoch && wasDrawable && drawable() && m_chart->seriesCount() == 1) {
        // A new epoch knot while live: usually the points already drawn keep
        // their epoch (same steps per epoch); then nothing is redrawn. The x
        // drawn so far are recomputed from the old map rather than kept (8
        // bytes a point less, issue 5).
        const std::vector<double> x = mapped(0);
        const std::vector<double> drawn = mapX(XAxisMode::Epoch, m_steps, m_wall, oldEpochs, m_t0);
        same = x.size() == drawn.size();
        for (std::size_t i = 0; same && i < x.size(); ++i)
            same = std::abs(x[i] - drawn[i]) <= 1e-9 * std::max(1.0, std::abs(x[i]));
    }
    if (!same)
        rebuild();
}

void MetricChartWidget::setYScale(DecimatedChart::YScale scale)
{
    m_chart->setYScale(scale);
}

void MetricChartWidget::rebuild()
{
    m_chart->clearSeries();
    m_chart->setXAxis(m_mode == XAxisMode::WallTime ? DecimatedChart::XAxisKind::DateTimeMs
                                                    : DecimatedChart::XAxisKind::Value,
                      xAxisTitle(m_mode));
    if (!drawable()) {
        m_chart->setNotice(tr("No 'epoch' metric logged: not drawn on the epoch axis."));
    } else {
        m_chart->setNotice({});
        if (!m_values.empty()) {
            SharedColumn x = std::make_shared<const std::vector<double>>(mapped(0));
            SharedColumn y = std::make_shared<const std::vector<double>>(m_values);
            sortByX(x, y);
            m_chart->addSeries(m_key, m_color, x, y);
        }
    }
    updateMarkers();
    updateTitle();
}

void MetricChartWidget::setRestarts(const QList<qint64>& steps)
{
    m_restarts = steps;
    updateMarkers();
}

void MetricChartWidget::updateMarkers()
{
    QList<double> xs;
    if (drawable()) {
        const bool timeAxis = m_mode == XAxisMode::RelativeTime || m_mode == XAxisMode::WallTime;
        for (const qint64 step : std::as_const(m_restarts)) {
            const double s = double(step);
            double wall = std::numeric_limits<double>::quiet_NaN();
            if (timeAxis) {
                // The wall time of the first point at or after the step.
                const auto it = std::lower_bound(m_steps.begin(), m_steps.end(), s);
                if (it == m_steps.end())
                    continue;
                wall = m_wall[std::size_t(it - m_steps.begin())];
                if (!std::isfinite(wall))
                    continue;
            }
            const double one[] = {s}, w[] = {wall};
            const std::vector<double> x = mapX(m_mode, one, w, m_epochs, m_t0);
            if (!x.empty() && std::isfinite(x.front()))
                xs.append(x.front());
        }
    }
    m_chart->setMarkers(std::move(xs));
}

int MetricChartWidget::segmentCount() const
{
    return int(m_chart->drawnSegments(0).size());
}

QList<int> MetricChartWidget::segmentPointCounts() const
{
    QList<int> counts;
    const auto segs = m_chart->drawnSegments(0);
    for (const QList<QPointF>& s : segs)
        counts.append(int(s.size()));
    return counts;
}

int MetricChartWidget::gapMarkerCount() const
{
    return m_chart->gapMarkers(0);
}

void MetricChartWidget::updateTitle()
{
    QString title = m_key;
    if (!m_values.empty()) {
        const double last = m_values.back();
        const QString v = std::isnan(last) ? QStringLiteral("nan")
            : std::isinf(last)             ? (last > 0 ? QStringLiteral("inf") : QStringLiteral("-inf"))
                                           : QString::number(last, 'g', 5);
        title += QStringLiteral("   %1 (%2 points").arg(v).arg(m_values.size());
        if (m_nonFinite > 0)
            title += QStringLiteral(", %1 nan/inf").arg(m_nonFinite);
        title += u')';
    }
    m_chart->setTitle(title);
}

} // namespace ty
