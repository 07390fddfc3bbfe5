#include "MetricChartWidget.h"

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
        if (!l.data->isEmpty())
            names.append(l.name);
    return names;
}

std::vector<double> MetricChartWidget::lineValues(const QString& name) const
{
    std::vector<double> out;
    if (const Line* l = findLine(name))
        l->data->decode(0, l->data->size(), nullptr, nullptr, &out);
    return out;
}

std::vector<double> MetricChartWidget::lineSteps(const QString& name) const
{
    std::vector<double> out;
    if (const Line* l = findLine(name))
        l->data->decode(0, l->data->size(), &out, nullptr, nullptr);
    return out;
}

std::shared_ptr<const PackedMetricSeries> MetricChartWidget::lineData(const QString& name) const
{
    const Line* l = findLine(name);
    return l ? l->data : nullptr;
}

std::vector<double> MetricChartWidget::steps() const
{
    return lineSteps(QString());
}

std::vector<double> MetricChartWidget::values() const
{
    return lineValues(QString());
}

std::vector<double> MetricChartWidget::wallMs() const
{
    std::vector<double> out;
    const PackedMetricSeries& d = *m_lines.front().data;
    d.decode(0, d.size(), nullptr, &out, nullptr);
    return out;
}

double MetricChartWidget::firstWallMs() const
{
    const PackedMetricSeries& d = *m_lines.front().data;
    PackedMetricSeries::Chunk buf;
    for (qsizetype c = 0; c < d.chunkCount(); ++c) {
        const PackedMetricSeries::Chunk& ch = d.chunk(c, buf);
        for (int i = 0; i < ch.count; ++i)
            if (std::isfinite(ch.wallMs[std::size_t(i)]))
                return ch.wallMs[std::size_t(i)];
    }
    return std::numeric_limits<double>::quiet_NaN();
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
    l.data = std::make_shared<PackedMetricSeries>(); // DecimatedChart may still hold the old one
    l.nonFinite = 0;
    if (!addRaw(l, points))
        sortRaw(l);
    rebuild();
}

bool MetricChartWidget::addRaw(Line& l, const QList<SeriesPoint>& points)
{
    // Packed as they come: no column doubles, nothing already held is
    // copied (the stalls GrowthPacer spread out are gone with the vectors).
    PackedMetricSeries& d = *l.data;
    bool ordered = true;
    double lastStep = d.isEmpty() ? -std::numeric_limits<double>::infinity() : d.last().step;
    for (const SeriesPoint& p : points) {
        ordered = ordered && p.x >= lastStep;
        lastStep = p.x;
        d.append(p.x, p.wallMs, p.y);
        l.nonFinite += !std::isfinite(p.y);
    }
    return ordered;
}

void MetricChartWidget::sortRaw(Line& l)
{
    // A step went back (rare: points out of order): unpack, stable sort by
    // step, pack again into a new series (the chart still holds the old one
    // until rebuild()).
    std::vector<double> steps, wall, values;
    l.data->decode(0, l.data->size(), &steps, &wall, &values);
    std::vector<std::size_t> perm(steps.size());
    std::iota(perm.begin(), perm.end(), std::size_t(0));
    std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) { return steps[a] < steps[b]; });
    auto sorted = std::make_shared<PackedMetricSeries>();
    for (const std::size_t k : perm)
        sorted->append(steps[k], wall[k], values[k]);
    l.data = std::move(sorted);
}

bool MetricChartWidget::drawable() const
{
    return m_mode != XAxisMode::Epoch || m_epochs.isValid();
}

std::vector<double> MetricChartWidget::mapped(const Line& l, qsizetype from) const
{
    std::vector<double> steps, wall;
    l.data->decode(from, l.data->size(), &steps, &wall, nullptr);
    return mapX(m_mode, steps, wall, m_epochs, m_t0);
}

bool MetricChartWidget::drawPacked(const Line& l) const
{
    return PackedXMap{m_mode, m_t0}.directly(*l.data);
}

void MetricChartWidget::appendPoints(const QString& name, const QList<SeriesPoint>& points)
{
    if (points.isEmpty())
        return;
    Line& l = line(name);
    const qsizetype from = l.data->size();
    if (!addRaw(l, points)) {
        sortRaw(l);
        rebuild();
        return;
    }
    if (l.series < 0) {
        rebuild();
        return;
    }
    if (l.packed && !drawPacked(l)) {
        rebuild(); // the wall times went back: plain columns from now on
        return;
    }
    if (l.packed) {
        m_chart->packedAppended(l.series);
    } else if (drawable()) {
        const std::vector<double> x = mapped(l, from);
        std::vector<double> values;
        l.data->decode(from, l.data->size(), nullptr, nullptr, &values);
        m_chart->appendPoints(l.series, x, values);
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
            std::vector<double> steps, wall;
            l.data->decode(0, l.data->size(), &steps, &wall, nullptr);
            const std::vector<double> x = mapX(m_mode, steps, wall, m_epochs, m_t0);
            const std::vector<double> drawn = mapX(XAxisMode::Epoch, steps, wall, oldEpochs, m_t0);
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
        l.packed = false;
        if (!drawable() || l.data->isEmpty())
            continue;
        const QString name = l.name.isEmpty() ? m_key : m_key + QStringLiteral(" ") + l.name;
        if (drawPacked(l)) {
            l.packed = true;
            l.series = m_chart->addPackedSeries(name, lineColour(i), l.data, PackedXMap{m_mode, m_t0});
            continue;
        }
        SharedColumn x = std::make_shared<const std::vector<double>>(mapped(l, 0));
        auto values = std::make_shared<std::vector<double>>();
        l.data->decode(0, l.data->size(), nullptr, nullptr, values.get());
        SharedColumn y = std::move(values);
        sortByX(x, y);
        l.series = m_chart->addSeries(name, lineColour(i), x, y);
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
                const Line& l = m_lines.front().data->isEmpty() && m_lines.size() > 1 ? m_lines[1] : m_lines.front();
                const qsizetype at = l.data->lowerBoundStep(s);
                if (at >= l.data->size())
                    continue;
                PackedMetricSeries::Chunk buf;
                wall = l.data->at(at, buf).wallMs;
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
    if (!own.data->isEmpty()) {
        title += QStringLiteral("   %1 (%2 points").arg(number(own.data->last().value)).arg(own.data->size());
        if (own.nonFinite > 0)
            title += QStringLiteral(", %1 nan/inf").arg(own.nonFinite);
        title += u')';
    }
    for (std::size_t i = 1; i < m_lines.size(); ++i) {
        const Line& l = m_lines[i];
        if (!l.data->isEmpty())
            title += QStringLiteral("   %1 %2").arg(l.name, number(l.data->last().value));
    }
    m_chart->setTitle(title);
}

} // namespace ty
