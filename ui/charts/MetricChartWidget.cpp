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
    m_lines.assign(1, Line{});
    m_restarts.clear();
    rebuild();
}

MetricChartWidget::Line& MetricChartWidget::line(const QString& name)
{
    for (Line& l : m_lines)
        if (l.name == name)
            return l;
    Line l;
    l.name = name;
    // Named lines after the key's own, by name (rank2 before rank10).
    auto at = m_lines.begin() + 1;
    while (at != m_lines.end()
            && (at->name.size() < name.size() || (at->name.size() == name.size() && at->name < name)))
        ++at;
    return *m_lines.insert(at, std::move(l));
}

const MetricChartWidget::Line* MetricChartWidget::findLine(const QString& name) const
{
    for (const Line& l : m_lines)
        if (l.name == name)
            return &l;
    return nullptr;
}

QStringList MetricChartWidget::lineNames() const
{
    QStringList names;
    for (const Line& l : m_lines)
        if (!l.values.empty())
            names.append(l.name);
    return names;
}

std::vector<double> MetricChartWidget::lineValues(const QString& name) const
{
    const Line* l = findLine(name);
    return l ? l->values : std::vector<double>{};
}

std::vector<double> MetricChartWidget::lineSteps(const QString& name) const
{
    const Line* l = findLine(name);
    return l ? l->steps : std::vector<double>{};
}

QColor MetricChartWidget::lineColour(std::size_t index) const
{
    if (index == 0)
        return m_color;
    // The ranks of one run: the run's hue, each rank lighter or darker
    // and turned a little, so the lines stay apart and read as one run.
    const int h = m_color.hslHue() < 0 ? 0 : m_color.hslHue();
    const int k = int(index);
    return QColor::fromHsl(
            (h + 40 * k) % 360, std::clamp(m_color.hslSaturation(), 120, 255), std::clamp(60 + 35 * (k % 4), 40, 200));
}

void MetricChartWidget::setPoints(const QString& name, const QList<SeriesPoint>& points)
{
    Line& l = line(name);
    l.steps.clear();
    l.wall.clear();
    l.values.clear();
    l.nonFinite = 0;
    if (!addRaw(l, points))
        sortRaw(l);
    rebuild();
}

void MetricChartWidget::reserveFor(Line& l, std::size_t incoming)
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
    GrowthPacer::reserve({&l.steps, &l.wall, &l.values}, l.steps.size() + incoming);
}

bool MetricChartWidget::addRaw(Line& l, const QList<SeriesPoint>& points)
{
    reserveFor(l, std::size_t(points.size()));
    bool ordered = true;
    double lastStep = l.steps.empty() ? -std::numeric_limits<double>::infinity() : l.steps.back();
    for (const SeriesPoint& p : points) {
        ordered = ordered && p.x >= lastStep;
        lastStep = p.x;
        l.steps.push_back(p.x);
        l.wall.push_back(p.wallMs);
        l.values.push_back(p.y);
        l.nonFinite += !std::isfinite(p.y);
    }
    return ordered;
}

void MetricChartWidget::sortRaw(Line& l)
{
    std::vector<std::size_t> perm(l.steps.size());
    std::iota(perm.begin(), perm.end(), std::size_t(0));
    std::stable_sort(perm.begin(), perm.end(), [&l](std::size_t a, std::size_t b) { return l.steps[a] < l.steps[b]; });
    std::vector<double> s(perm.size()), w(perm.size()), v(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k) {
        s[k] = l.steps[perm[k]];
        w[k] = l.wall[perm[k]];
        v[k] = l.values[perm[k]];
    }
    l.steps = std::move(s);
    l.wall = std::move(w);
    l.values = std::move(v);
}

bool MetricChartWidget::drawable() const
{
    return m_mode != XAxisMode::Epoch || m_epochs.isValid();
}

std::vector<double> MetricChartWidget::mapped(const Line& l, std::size_t from) const
{
    const std::span<const double> steps(l.steps), wall(l.wall);
    return mapX(m_mode, steps.subspan(from), wall.subspan(from), m_epochs, m_t0);
}

void MetricChartWidget::appendPoints(const QString& name, const QList<SeriesPoint>& points)
{
    if (points.isEmpty())
        return;
    Line& l = line(name);
    const std::size_t from = l.steps.size();
    if (!addRaw(l, points)) {
        sortRaw(l);
        rebuild();
        return;
    }
    if (l.series < 0) {
        rebuild();
        return;
    }
    if (drawable()) {
        const std::vector<double> x = mapped(l, from);
        m_chart->appendPoints(l.series, x, std::span<const double>(l.values).subspan(from));
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
    if (!same && mode == XAxisMode::Epoch && wasEpoch && wasDrawable && drawable() && m_chart->seriesCount() > 0) {
        // A new epoch knot while live: usually the points already drawn keep
        // their epoch (same steps per epoch); then nothing is redrawn. The x
        // drawn so far are recomputed from the old map rather than kept (8
        // bytes a point less, issue 5).
        same = true;
        for (const Line& l : m_lines) {
            const std::vector<double> x = mapped(l, 0);
            const std::vector<double> drawn = mapX(XAxisMode::Epoch, l.steps, l.wall, oldEpochs, m_t0);
            same = same && x.size() == drawn.size();
            for (std::size_t i = 0; same && i < x.size(); ++i)
                same = std::abs(x[i] - drawn[i]) <= 1e-9 * std::max(1.0, std::abs(x[i]));
        }
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
    m_chart->setXAxis(
            m_mode == XAxisMode::WallTime ? DecimatedChart::XAxisKind::DateTimeMs : DecimatedChart::XAxisKind::Value,
            xAxisTitle(m_mode));
    if (!drawable()) {
        m_chart->setNotice(tr("No 'epoch' metric logged: not drawn on the epoch axis."));
    } else {
        m_chart->setNotice({});
    }
    for (std::size_t i = 0; i < m_lines.size(); ++i) {
        Line& l = m_lines[i];
        l.series = -1;
        if (!drawable() || l.values.empty())
            continue;
        SharedColumn x = std::make_shared<const std::vector<double>>(mapped(l, 0));
        SharedColumn y = std::make_shared<const std::vector<double>>(l.values);
        sortByX(x, y);
        l.series = m_chart->addSeries(
                l.name.isEmpty() ? m_key : m_key + QStringLiteral(" ") + l.name, lineColour(i), x, y);
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
                const Line& l = m_lines.front().values.empty() && m_lines.size() > 1 ? m_lines[1] : m_lines.front();
                const auto it = std::lower_bound(l.steps.begin(), l.steps.end(), s);
                if (it == l.steps.end())
                    continue;
                wall = l.wall[std::size_t(it - l.steps.begin())];
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
    const int series = m_lines.front().series;
    return series < 0 ? 0 : int(m_chart->drawnSegments(series).size());
}

QList<int> MetricChartWidget::segmentPointCounts() const
{
    QList<int> counts;
    const int series = m_lines.front().series;
    if (series < 0)
        return counts;
    const auto segs = m_chart->drawnSegments(series);
    for (const QList<QPointF>& s : segs)
        counts.append(int(s.size()));
    return counts;
}

int MetricChartWidget::gapMarkerCount() const
{
    const int series = m_lines.front().series;
    return series < 0 ? 0 : m_chart->gapMarkers(series);
}

void MetricChartWidget::updateTitle()
{
    QString title = m_key;
    const auto number = [](double last) {
        return std::isnan(last)    ? QStringLiteral("nan")
                : std::isinf(last) ? (last > 0 ? QStringLiteral("inf") : QStringLiteral("-inf"))
                                   : QString::number(last, 'g', 5);
    };
    const Line& own = m_lines.front();
    if (!own.values.empty()) {
        title += QStringLiteral("   %1 (%2 points").arg(number(own.values.back())).arg(own.values.size());
        if (own.nonFinite > 0)
            title += QStringLiteral(", %1 nan/inf").arg(own.nonFinite);
        title += u')';
    }
    for (std::size_t i = 1; i < m_lines.size(); ++i) {
        const Line& l = m_lines[i];
        if (!l.values.empty())
            title += QStringLiteral("   %1 %2").arg(l.name, number(l.values.back()));
    }
    m_chart->setTitle(title);
}

} // namespace ty
