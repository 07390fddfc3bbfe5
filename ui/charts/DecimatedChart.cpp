#include "DecimatedChart.h"

#include "ChartStyle.h"
#include "ChartView.h"
#include "GrowthPacer.h"
#include "HoverReadout.h"
#include "Smoothing.h"
#include "SpanRaster.h"
#include "XAxisMap.h"

#include <QCategoryAxis>
#include <QtConcurrent/QtConcurrentMap>
#include <QChart>
#include <QDateTime>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QLabel>
#include <QPainter>
#include <QPaintEngine>
#include <QThread>
#include <QSvgGenerator>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QScopedValueRollback>
#include <QTimer>
#include <QToolTip>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace ty {

namespace {

// Drawn before the first layout (hidden widgets, tests, exports): a nominal
// plot width; the real one re-decimates as soon as the plot area is known.
constexpr double kNominalWidth = 1000.0;

// Labels of a log10 axis fed with log10 values: powers of ten (every k-th
// when many decades show), else 1-2-5 or 1..9 per decade, else round linear
// values, whichever first gives at least three labels inside [lo, hi].
void setLogTicks(QCategoryAxis* axis, double lo, double hi)
{
    const QStringList old = axis->categoriesLabels();
    for (const QString& l : old)
        axis->remove(l);
    axis->setRange(lo, hi);
    axis->setStartValue(lo);
    std::vector<double> ticks;
    const int k0 = int(std::floor(lo)), k1 = int(std::ceil(hi));
    const auto inside = [&](double v) { return v > 0 && std::log10(v) >= lo && std::log10(v) <= hi; };
    if (hi - lo >= 3) {
        const int every = std::max(1, int(std::ceil((hi - lo) / 8)));
        for (int k = k0; k <= k1; ++k)
            if (k % every == 0 && inside(std::pow(10.0, k)))
                ticks.push_back(std::pow(10.0, k));
    } else {
        for (const std::vector<double>& mult :
                {std::vector<double>{1, 2, 5}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
            ticks.clear();
            for (int k = k0; k <= k1; ++k)
                for (double m : mult)
                    if (inside(m * std::pow(10.0, k)))
                        ticks.push_back(m * std::pow(10.0, k));
            if (ticks.size() >= 3)
                break;
        }
        if (ticks.size() < 3) {
            ticks.clear();
            const double a = std::pow(10.0, lo), b = std::pow(10.0, hi);
            const double step = niceStep((b - a) / 5.0);
            for (double v = std::ceil(a / step) * step; v <= b && ticks.size() < 20; v += step)
                if (inside(v))
                    ticks.push_back(v);
        }
    }
    double prev = lo;
    for (double v : ticks) {
        const double pos = std::log10(v);
        if (pos <= prev)
            continue;
        axis->append(QString::number(v, 'g', 4), pos);
        prev = pos;
    }
}

// Lines whose end lies this far (px) outside the plot area are cut there
// (same slope): the raster engine's fixed-point coordinates overflow on the
// far edge points of a deep zoom.
constexpr double kFar = 1.0e4;

QPointF towards(QPointF from, QPointF to, double xLimit)
{
    const double t = (xLimit - from.x()) / (to.x() - from.x());
    return QPointF(xLimit, from.y() + (to.y() - from.y()) * t);
}

} // namespace

// The series of a DecimatedChart: one item over the plot area, a child of
// the QChart (so its coordinates are the chart's, those of plotArea()),
// above the grid and axes (Qt Charts' series z value is 4).
class SeriesItem final : public QGraphicsItem {
public:
    SeriesItem(const DecimatedChart* owner, QGraphicsItem* parent)
        : QGraphicsItem(parent)
        , m_owner(owner)
    {
        setZValue(4.5);
        setAcceptedMouseButtons(Qt::NoButton);
        setAcceptHoverEvents(false);
    }
    QRectF boundingRect() const override { return m_rect.adjusted(-6, -6, 6, 6); }
    void setArea(const QRectF& r)
    {
        if (r == m_rect)
            return;
        prepareGeometryChange();
        m_rect = r;
    }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        m_owner->paintSeries(*painter, m_rect);
        m_owner->paintHover(*painter, m_rect);
    }

private:
    const DecimatedChart* m_owner;
    QRectF m_rect;
};

DecimatedChart::DecimatedChart(const QString& title, QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("decimatedChart:") + title);
    m_chart = newPlainChart(2);

    m_axisX = new QValueAxis;
    m_axisX->setLabelFormat(QStringLiteral("%g"));
    m_axisTime = new QDateTimeAxis;
    m_axisTime->setTickCount(5);
    m_axisLin = new QValueAxis;
    m_axisLin->setLabelFormat(QStringLiteral("%.3g"));
    m_axisLog = new QCategoryAxis;
    m_axisLog->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_axisY = m_axisLin;
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    m_axisX->setTitleText(tr("step"));
    applyChartPalette(m_chart, {m_axisX, m_axisTime, m_axisLin, m_axisLog}, palette());

    connect(m_axisX, &QValueAxis::rangeChanged, this, &DecimatedChart::onAxisRangeChanged);
    connect(m_axisTime, &QDateTimeAxis::rangeChanged, this, [this](const QDateTime& lo, const QDateTime& hi) {
        onAxisRangeChanged(double(lo.toMSecsSinceEpoch()), double(hi.toMSecsSinceEpoch()));
    });
    m_item = new SeriesItem(this, m_chart);
    m_anchor = new QLineSeries;
    m_anchor->setName(QStringLiteral("axes"));
    {
        // Attaching makes the axes announce their range: not a user zoom.
        const QScopedValueRollback guard(m_settingRange, true);
        attach(m_anchor);
    }
    connect(m_chart, &QChart::plotAreaChanged, this, [this](const QRectF& area) {
        static_cast<SeriesItem*>(m_item)->setArea(area);
        m_item->update();
        if (area.width() != m_lastWidth)
            QTimer::singleShot(0, this, &DecimatedChart::redecimate);
    });

    m_view = new ChartView(m_chart, this);
    m_view->setObjectName(QStringLiteral("chartView"));
    m_view->setAccessibleName(tr("Chart of %1").arg(title));
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumHeight(180);
    connect(m_view, &ChartView::wheelZoom, this, [this](double factor, double chartX) {
        const QRectF area = m_chart->plotArea();
        if (area.width() <= 0)
            return;
        const double anchor = m_lo + (chartX - area.left()) / area.width() * (m_hi - m_lo);
        zoomX(factor, anchor);
        Q_EMIT xRangeChanged(m_lo, m_hi);
    });
    connect(m_view, &ChartView::panned, this, [this](double dx) {
        const QRectF area = m_chart->plotArea();
        if (area.width() <= 0)
            return;
        panX(-dx / area.width());
        Q_EMIT xRangeChanged(m_lo, m_hi);
    });
    connect(m_view, &ChartView::resetRequested, this, [this] {
        resetZoom();
        Q_EMIT xRangeChanged(m_lo, m_hi);
    });
    connect(m_view, &ChartView::hovered, this, &DecimatedChart::showHover);
    connect(m_view, &ChartView::menuRequested, this, &DecimatedChart::menuRequested);
    connect(m_view, &ChartView::painted, this, &DecimatedChart::painted);

    m_notice = new QLabel(this);
    m_notice->setObjectName(QStringLiteral("chartNotice"));
    m_notice->setWordWrap(true);
    m_notice->setStyleSheet(QStringLiteral("color: #b35c00; padding: 0 6px;"));
    m_notice->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_notice);
    setTitle(title);
    setXRange(0, 1);
}

DecimatedChart::~DecimatedChart()
{
    // The axes not in the chart are ours.
    if (m_xKind == XAxisKind::Value)
        delete m_axisTime;
    else
        delete m_axisX;
    if (m_axisY == m_axisLin)
        delete m_axisLog;
    else
        delete m_axisLin;
}

void DecimatedChart::setTitle(const QString& title)
{
    m_title = title;
    m_chart->setTitle(title);
}

void DecimatedChart::setXAxis(XAxisKind kind, const QString& title)
{
    if (kind != m_xKind) {
        // Adding an axis makes it announce its default range: not a user zoom.
        const QScopedValueRollback guard(m_settingRange, true);
        QAbstractAxis* from = m_xKind == XAxisKind::Value ? static_cast<QAbstractAxis*>(m_axisX) : m_axisTime;
        QAbstractAxis* to = kind == XAxisKind::Value ? static_cast<QAbstractAxis*>(m_axisX) : m_axisTime;
        const auto all = m_chart->series();
        for (QAbstractSeries* s : all)
            s->detachAxis(from);
        m_chart->removeAxis(from);
        m_chart->addAxis(to, Qt::AlignBottom);
        for (QAbstractSeries* s : all)
            s->attachAxis(to);
        m_xKind = kind;
        setXRange(m_lo, m_hi); // the new axis shows the current range
    }
    (kind == XAxisKind::Value ? static_cast<QAbstractAxis*>(m_axisX) : m_axisTime)->setTitleText(title);
}

void DecimatedChart::attach(QAbstractSeries* s)
{
    m_chart->addSeries(s);
    s->attachAxis(m_xKind == XAxisKind::Value ? static_cast<QAbstractAxis*>(m_axisX) : m_axisTime);
    s->attachAxis(m_axisY);
}

int DecimatedChart::addSeries(const QString& name, const QColor& colour, Column x, Column y)
{
    auto e = std::make_unique<Entry>();
    e->name = name;
    e->colour = colour;
    e->x = x ? std::move(x) : std::make_shared<const std::vector<double>>();
    e->y = y ? std::move(y) : std::make_shared<const std::vector<double>>();
    rebuildDerived(*e);
    m_entries.push_back(std::move(e));
    const auto [lo, hi] = fullXRange();
    setXRange(lo, hi);
    return int(m_entries.size()) - 1;
}

int DecimatedChart::addPackedSeries(
        const QString& name, const QColor& colour, std::shared_ptr<const PackedMetricSeries> data, PackedXMap map)
{
    auto e = std::make_unique<Entry>();
    e->name = name;
    e->colour = colour;
    e->x = std::make_shared<const std::vector<double>>();
    e->y = std::make_shared<const std::vector<double>>();
    e->packed = data ? std::move(data) : std::make_shared<const PackedMetricSeries>();
    e->packedMap = map;
    e->packedSeen = e->packed->size();
    rebuildDerived(*e);
    m_entries.push_back(std::move(e));
    const auto [lo, hi] = fullXRange();
    setXRange(lo, hi);
    return int(m_entries.size()) - 1;
}

void DecimatedChart::unpack(Entry& e)
{
    if (!e.packed)
        return;
    e.ownX.reset();
    e.ownY.reset();
    if (direct(e)) {
        e.x = std::make_shared<const std::vector<double>>();
        e.y = std::make_shared<const std::vector<double>>();
        return;
    }
    std::vector<double> steps, walls;
    auto y = std::make_shared<std::vector<double>>();
    e.packed->decode(0, e.packedSeen, &steps, &walls, y.get());
    auto x = std::make_shared<std::vector<double>>(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i)
        (*x)[i] = e.packedMap(steps[i], walls[i]);
    e.x = std::move(x);
    e.y = std::move(y);
}

bool DecimatedChart::entryRange(const Entry& e, qsizetype count, double& lo, double& hi) const
{
    if (e.packed && direct(e)) {
        if (count <= 0)
            return false;
        // From the summaries and the tail: no chunk decoded on every append.
        lo = e.packedMap(e.packed->summary(0).first);
        if (count == e.packed->size()) {
            hi = e.packedMap(e.packed->last());
        } else {
            PackedMetricSeries::Chunk buf;
            hi = e.packedMap(e.packed->at(count - 1, buf));
        }
        return true;
    }
    if (e.x->empty())
        return false;
    lo = e.x->front();
    hi = e.x->back();
    return true;
}

void DecimatedChart::packedAppended(int index)
{
    if (index < 0 || index >= seriesCount())
        return;
    Entry& e = *m_entries[std::size_t(index)];
    if (!e.packed)
        return;
    const qsizetype oldCount = e.packedSeen;
    const qsizetype count = e.packed->size();
    if (count <= oldCount)
        return;
    if (!direct(e)) {
        // Unpacked (smoothing, log axis): the plain path with the new points.
        std::vector<double> steps, walls, y;
        e.packed->decode(oldCount, count, &steps, &walls, &y);
        std::vector<double> x(steps.size());
        for (std::size_t i = 0; i < steps.size(); ++i)
            x[i] = e.packedMap(steps[i], walls[i]);
        e.packedSeen = count;
        appendPoints(index, x, y);
        return;
    }
    // The full range before these points (e.packedSeen is still oldCount),
    // as appendPoints() sees it.
    const auto [fullLo, fullHi] = fullXRange();
    const bool following = m_lo <= fullLo && m_hi >= fullHi;
    e.packedSeen = count;
    if (oldCount == 0) {
        // The first points: lay the series out from scratch.
        if (following)
            resetZoom();
        else
            redecimate();
        return;
    }
    PackedMetricSeries::Chunk buf;
    const double last = e.packedMap(e.packed->at(count - 1, buf));
    drawAppended(e, following, last, [&](const M4Viewport& vp, double& y0, double& y1, bool& haveY) {
        return appendTailPacked(e, oldCount, vp, y0, y1, haveY);
    });
}

bool DecimatedChart::appendTailPacked(
        Entry& e, qsizetype oldCount, const M4Viewport& vp, double& y0, double& y1, bool& haveY)
{
    // appendTail() over the packed points, whole chunks read from their
    // summaries where appendTail reads points one by one.
    const PackedMetricSeries& s = *e.packed;
    const qsizetype count = e.packedSeen;
    Layer& layer = e.main;
    if (oldCount == 0 || layer.segments.isEmpty())
        return false;
    PackedMetricSeries::Chunk buf;
    const PackedXMap& map = e.packedMap;
    const double lastX = map(s.at(oldCount - 1, buf));
    if (lastX > vp.xMax)
        return true;
    if (lastX < vp.xMin)
        return false;
    const double scale = vp.pixelWidth / (vp.xMax - vp.xMin);
    const auto columnOf = [&](double xv) { return std::floor(vp.pixelLeft + (xv - vp.xMin) * scale); };
    const double c0 = columnOf(lastX);
    // i0: the first point of the old last point's pixel column; every point
    // from i0 to oldCount must be finite.
    constexpr qsizetype K = PackedMetricSeries::kChunkPoints;
    qsizetype i0 = oldCount - 1;
    while (i0 > 0) {
        const qsizetype c = (i0 - 1) / K;
        const PackedMetricSeries::Summary& sum = s.summary(c);
        if (i0 - 1 == c * K + sum.count - 1 && sum.finiteValues && columnOf(map(sum.first)) == c0) {
            i0 = c * K; // the whole chunk lies in column c0
            continue;
        }
        const PackedMetricSeries::Chunk& ch = s.chunk(c, buf);
        const auto k = std::size_t(i0 - 1 - c * K);
        if (columnOf(map(ch.step[k], ch.wallMs[k])) != c0)
            break;
        --i0;
    }
    for (qsizetype i = i0; i < oldCount;) {
        const qsizetype c = i / K;
        const PackedMetricSeries::Summary& sum = s.summary(c);
        if (i == c * K && c * K + sum.count <= oldCount && sum.finiteValues) {
            i = c * K + sum.count;
            continue;
        }
        if (!std::isfinite(s.chunk(c, buf).value[std::size_t(i - c * K)]))
            return false; // a gap in the last column: let the full pass sort it out
        ++i;
    }
    QList<QPointF>& seg = layer.segments.last();
    const qsizetype drawnCount = seg.size();
    const double x0 = map(s.at(i0, buf));
    qsizetype keep = drawnCount;
    while (keep > 0 && seg.at(keep - 1).x() >= x0)
        --keep;
    if (keep == drawnCount)
        return false;
    const M4Result r = decimateM4Packed(s, map, vp, i0, count);
    if (r.segments.isEmpty())
        return false;
    seg.resize(keep);
    seg += r.segments.first();
    for (qsizetype i = 1; i < r.segments.size(); ++i)
        layer.segments.append(r.segments.at(i));
    layer.pen = mainPen(e);
    layer.drawn += r.pointCount() - (drawnCount - keep);
    layer.gaps += r.gaps;
    if (r.haveY) {
        y0 = haveY ? std::min(y0, r.yMin) : r.yMin;
        y1 = haveY ? std::max(y1, r.yMax) : r.yMax;
        haveY = true;
    }
    return true;
}

void DecimatedChart::appendPoints(int index, std::span<const double> x, std::span<const double> y)
{
    if (index < 0 || index >= seriesCount())
        return;
    const std::size_t n = std::min(x.size(), y.size());
    if (n == 0)
        return;
    Entry& e = *m_entries[std::size_t(index)];
    const auto [fullLo, fullHi] = fullXRange();
    const bool following = m_lo <= fullLo && m_hi >= fullHi;
    bool inOrder = std::is_sorted(x.begin(), x.begin() + qsizetype(n)) && (e.x->empty() || x[0] >= e.x->back());
    // Copy once; later appends grow our own columns.
    if (!e.ownX) {
        e.ownX = std::make_shared<std::vector<double>>(*e.x);
        e.ownY = std::make_shared<std::vector<double>>(*e.y);
        e.x = e.ownX;
        e.y = e.ownY;
    }
    const std::size_t oldCount = e.ownX->size();
    if (oldCount == 0)
        inOrder = false; // the first points: lay the series out from scratch
    const std::size_t oldMain = columns(e, true).x.size();
    const std::size_t oldRaw = columns(e, false).x.size();
    // Both columns doubling in one append is a 2 x 8 MB copy at a million
    // points, a visible stall while following a run (bench_follow):
    // GrowthPacer grows them on different appends, one at a time in the GUI.
    GrowthPacer::reserve({e.ownX.get(), e.ownY.get()}, oldCount + n);
    e.ownX->insert(e.ownX->end(), x.begin(), x.begin() + qsizetype(n));
    e.ownY->insert(e.ownY->end(), y.begin(), y.begin() + qsizetype(n));
    dropIndexes(e);
    if (!inOrder) {
        SharedColumn sx = e.ownX, sy = e.ownY;
        sortByX(sx, sy);
        *e.ownX = *sx;
        *e.ownY = *sy;
        rebuildDerived(e);
        if (following)
            resetZoom();
        else
            redecimate();
        return;
    }
    if (m_smoothing > 0) {
        // The EMA of the old points stays as it was, unless the series was
        // constant so far (TensorBoard leaves a constant series unsmoothed).
        std::vector<double> smoothed = smoothEma(*e.y, m_smoothing);
        const bool same = std::memcmp(smoothed.data(), e.smoothed.data(), oldCount * sizeof(double)) == 0;
        e.smoothed = std::move(smoothed);
        if (!same) {
            rebuildDerived(e);
            redecimate();
            return;
        }
    }
    appendDerived(e, oldCount);
    drawAppended(e, following, e.x->back(), [&](const M4Viewport& vp, double& y0, double& y1, bool& haveY) {
        bool ok = appendTail(e, e.main, columns(e, true), oldMain, mainPen(e), vp, y0, y1, haveY);
        if (ok && m_smoothing > 0)
            ok = appendTail(e, e.raw, columns(e, false), oldRaw, rawPen(e), vp, y0, y1, haveY);
        return ok;
    });
}

void DecimatedChart::drawAppended(Entry& e, bool following, double last,
        const std::function<bool(const M4Viewport&, double&, double&, bool&)>& tail)
{
    if (following && last > m_hi) {
        setXRange(m_lo, m_lo + (last - m_lo) * 1.25); // headroom: the next appends are incremental
        return;
    }
    if (!e.visible) {
        updateNotice();
        return;
    }
    const M4Viewport vp = drawViewport();
    bool haveY = m_haveDataY;
    double y0 = m_dataYLo, y1 = m_dataYHi;
    if (!tail(vp, y0, y1, haveY)) {
        redecimate();
        return;
    }
    const bool grew = haveY && (!m_haveDataY || y0 < m_yLo || y1 > m_yHi);
    m_haveDataY = haveY;
    m_dataYLo = haveY ? y0 : 0.0;
    m_dataYHi = haveY ? y1 : 0.0;
    if (grew) {
        // Out of the axis range: widen it with 25 % headroom on the side that
        // overflowed, so a falling loss does not re-lay out the chart (every
        // line, every label) on each append. The next full pass tightens it.
        const double span = std::max(y1 - y0, 1e-12);
        setYAxisRange(y0 < m_yLo ? y0 - 0.25 * span : y0, y1 > m_yHi ? y1 + 0.25 * span : y1);
    } else {
        placeMarkers(e.main);
        m_item->update();
    }
    updateNotice();
}

bool DecimatedChart::appendTail(Entry& e, Layer& layer, const Columns& c, std::size_t oldCount, const QPen& pen,
        const M4Viewport& vp, double& y0, double& y1, bool& haveY)
{
    Q_UNUSED(e);
    const std::size_t count = c.x.size();
    if (count == oldCount)
        return true;
    if (oldCount == 0 || layer.segments.isEmpty())
        return false;
    const double lastX = c.x[oldCount - 1];
    if (lastX > vp.xMax)
        return true; // all of it right of the plot already: the drawn sample stays as it is
    if (lastX < vp.xMin)
        return false;
    // The pixel column of the old last point is redone from its first point
    // on; columns before it keep their first/last/min/max (decimateM4's
    // column formula, repeated exactly).
    const double scale = vp.pixelWidth / (vp.xMax - vp.xMin);
    const auto columnOf = [&](double xv) { return std::floor(vp.pixelLeft + (xv - vp.xMin) * scale); };
    const double c0 = columnOf(lastX);
    std::size_t i0 = oldCount - 1;
    while (i0 > 0 && columnOf(c.x[i0 - 1]) == c0)
        --i0;
    for (std::size_t k = i0; k < oldCount; ++k)
        if (!std::isfinite(c.y[k]))
            return false; // a gap in the last column: let the full pass sort it out
    QList<QPointF>& s = layer.segments.last();
    const qsizetype drawnCount = s.size();
    qsizetype keep = drawnCount;
    while (keep > 0 && s.at(keep - 1).x() >= c.x[i0])
        --keep;
    if (keep == drawnCount)
        return false;
    const M4Result r = decimateM4(c.x.subspan(i0), c.y.subspan(i0), vp);
    if (r.segments.isEmpty())
        return false;
    s.resize(keep);
    s += r.segments.first();
    for (qsizetype i = 1; i < r.segments.size(); ++i)
        layer.segments.append(r.segments.at(i));
    layer.pen = pen;
    layer.drawn += r.pointCount() - (drawnCount - keep);
    layer.gaps += r.gaps;
    if (r.haveY) {
        y0 = haveY ? std::min(y0, r.yMin) : r.yMin;
        y1 = haveY ? std::max(y1, r.yMax) : r.yMax;
        haveY = true;
    }
    return true;
}

void DecimatedChart::beginUpdate()
{
    ++m_updateDepth;
}

void DecimatedChart::endUpdate()
{
    if (m_updateDepth == 0 || --m_updateDepth > 0)
        return;
    if (m_pendingRedecimate) {
        m_pendingRedecimate = false;
        redecimate();
    }
}

void DecimatedChart::clearSeries()
{
    m_entries.clear();
    m_item->update();
    setXRange(0, 1);
    updateNotice();
}

QString DecimatedChart::seriesName(int index) const
{
    return index >= 0 && index < seriesCount() ? m_entries[std::size_t(index)]->name : QString();
}

void DecimatedChart::setSeriesVisible(int index, bool visible)
{
    if (index < 0 || index >= seriesCount() || m_entries[std::size_t(index)]->visible == visible)
        return;
    m_entries[std::size_t(index)]->visible = visible;
    redecimate();
}

bool DecimatedChart::isSeriesVisible(int index) const
{
    return index >= 0 && index < seriesCount() && m_entries[std::size_t(index)]->visible;
}

void DecimatedChart::setSmoothing(double weight)
{
    const double w = std::clamp(std::isfinite(weight) ? weight : 0.0, 0.0, 0.999);
    if (w == m_smoothing)
        return;
    m_smoothing = w;
    for (auto& e : m_entries)
        rebuildDerived(*e);
    redecimate();
}

void DecimatedChart::dropIndexes(Entry& e)
{
    e.mainIndex.reset();
    e.rawIndex.reset();
}

void DecimatedChart::rebuildDerived(Entry& e)
{
    unpack(e);
    dropIndexes(e);
    e.smoothed = m_smoothing > 0 ? smoothEma(*e.y, m_smoothing) : std::vector<double>();
    for (std::vector<double>* v : {&e.logX, &e.logY, &e.logSX, &e.logSY}) {
        v->clear();
        v->shrink_to_fit();
    }
    e.skipped = 0;
    appendDerived(e, 0);
}

void DecimatedChart::appendDerived(Entry& e, std::size_t from)
{
    if (m_yScale != YScale::Log)
        return;
    const std::vector<double>& x = *e.x;
    const std::vector<double>& y = *e.y;
    const bool smooth = !e.smoothed.empty();
    for (std::size_t i = from; i < y.size(); ++i) {
        const double v = y[i];
        if (std::isfinite(v) && v <= 0) {
            ++e.skipped;
        } else {
            e.logX.push_back(x[i]);
            e.logY.push_back(std::isfinite(v) ? std::log10(v) : v);
        }
        if (smooth) {
            const double sv = e.smoothed[i];
            if (!(std::isfinite(sv) && sv <= 0)) {
                e.logSX.push_back(x[i]);
                e.logSY.push_back(std::isfinite(sv) ? std::log10(sv) : sv);
            }
        }
    }
}

DecimatedChart::Columns DecimatedChart::columns(const Entry& e, bool mainLayer) const
{
    const bool smooth = mainLayer && m_smoothing > 0;
    if (m_yScale == YScale::Log)
        return smooth ? Columns{e.logSX, e.logSY} : Columns{e.logX, e.logY};
    return Columns{*e.x, smooth ? std::span<const double>(e.smoothed) : std::span<const double>(*e.y)};
}

void DecimatedChart::setYScale(YScale scale)
{
    if (scale == m_yScale)
        return;
    QValueAxis* from = m_axisY;
    QValueAxis* to = scale == YScale::Log ? static_cast<QValueAxis*>(m_axisLog) : m_axisLin;
    const auto all = m_chart->series();
    for (QAbstractSeries* s : all)
        s->detachAxis(from);
    m_chart->removeAxis(from);
    m_chart->addAxis(to, Qt::AlignLeft);
    for (QAbstractSeries* s : all)
        s->attachAxis(to);
    m_axisY = to;
    m_yScale = scale;
    for (auto& e : m_entries)
        rebuildDerived(*e);
    redecimate();
}

qsizetype DecimatedChart::skippedPoints(int index) const
{
    return index >= 0 && index < seriesCount() && m_yScale == YScale::Log ? m_entries[std::size_t(index)]->skipped : 0;
}

void DecimatedChart::setNotice(const QString& text)
{
    m_callerNotice = text;
    updateNotice();
}

QString DecimatedChart::noticeText() const
{
    return m_notice->text();
}

void DecimatedChart::updateNotice()
{
    QStringList parts;
    if (!m_callerNotice.isEmpty())
        parts << m_callerNotice;
    if (m_yScale == YScale::Log) {
        qsizetype skipped = 0;
        for (const auto& e : m_entries)
            if (e->visible)
                skipped += e->skipped;
        if (skipped > 0)
            parts << (skipped == 1 ? tr("Log scale: 1 value <= 0 skipped")
                                   : tr("Log scale: %1 values <= 0 skipped").arg(skipped));
    }
    const QString text = parts.join(QStringLiteral(" · "));
    if (text != m_notice->text())
        m_notice->setText(text);
    m_notice->setVisible(!text.isEmpty());
}

Result<void> DecimatedChart::exportPng(const QString& path) const
{
    if (!const_cast<DecimatedChart*>(this)->grab().save(path, "PNG"))
        return fail(QStringLiteral("%1: cannot write PNG").arg(path));
    return {};
}

Result<void> DecimatedChart::exportSvg(const QString& path) const
{
    QSize size = m_view->size();
    if (size.width() < 50 || size.height() < 50)
        size = QSize(800, 500);
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(size);
    gen.setViewBox(QRect(QPoint(0, 0), size));
    gen.setTitle(m_title);
    gen.setDescription(tr("Trainyard chart"));
    QPainter painter;
    if (!painter.begin(&gen))
        return fail(QStringLiteral("%1: cannot write SVG").arg(path));
    static_cast<QGraphicsView*>(m_view)->render(&painter, QRectF(QPointF(0, 0), size), m_view->viewport()->rect());
    painter.end();
    if (QFileInfo(path).size() <= 0)
        return fail(QStringLiteral("%1: cannot write SVG").arg(path));
    return {};
}

std::pair<double, double> DecimatedChart::fullXRange() const
{
    bool have = false;
    double lo = 0, hi = 1;
    for (const auto& e : m_entries) {
        double elo = 0, ehi = 0;
        if (!entryRange(*e, e->packedSeen, elo, ehi))
            continue;
        lo = have ? std::min(lo, elo) : elo;
        hi = have ? std::max(hi, ehi) : ehi;
        have = true;
    }
    if (!(hi > lo)) {
        lo -= 1;
        hi += 1;
    }
    return {lo, hi};
}

void DecimatedChart::resetZoom()
{
    const auto [lo, hi] = fullXRange();
    setXRange(lo, hi);
}

void DecimatedChart::zoomX(double factor, double anchor)
{
    const double lo = anchor - (anchor - m_lo) * factor;
    const double hi = anchor + (m_hi - anchor) * factor;
    if (hi - lo < 1e-9 * std::max(1.0, std::abs(anchor)))
        return;
    setXRange(lo, hi);
}

void DecimatedChart::panX(double fraction)
{
    const double d = (m_hi - m_lo) * fraction;
    setXRange(m_lo + d, m_hi + d);
}

void DecimatedChart::setXRange(double lo, double hi)
{
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi))
        return;
    m_lo = lo;
    m_hi = hi;
    // Decimate for the new range while the x axis lays out its labels.
    std::unique_ptr<Pass> pass = startDecimation();
    m_settingRange = true;
    if (m_xKind == XAxisKind::Value) {
        setNiceRange(m_axisX, lo, hi);
    } else {
        const qint64 span = qint64(hi - lo);
        m_axisTime->setFormat(span < 86'400'000 ? QStringLiteral("HH:mm:ss") : QStringLiteral("MM-dd HH:mm"));
        m_axisTime->setRange(QDateTime::fromMSecsSinceEpoch(qint64(std::floor(lo))),
                QDateTime::fromMSecsSinceEpoch(qint64(std::ceil(hi))));
    }
    m_settingRange = false;
    finishDecimation(std::move(pass));
}

void DecimatedChart::onAxisRangeChanged(double lo, double hi)
{
    if (m_settingRange)
        return;
    userRange(lo, hi); // rubber band zoom
}

void DecimatedChart::userRange(double lo, double hi)
{
    setXRange(lo, hi);
    Q_EMIT xRangeChanged(m_lo, m_hi);
}

M4Viewport DecimatedChart::viewport() const
{
    const QRectF area = m_chart->plotArea();
    return M4Viewport{m_lo, m_hi, area.left(), area.width()};
}

M4Viewport DecimatedChart::drawViewport() const
{
    const M4Viewport vp = viewport();
    return vp.pixelWidth >= 2 ? vp : M4Viewport{m_lo, m_hi, 0.0, kNominalWidth};
}

QPen DecimatedChart::mainPen(const Entry& e) const
{
    int visibleCount = 0;
    for (const auto& other : m_entries)
        visibleCount += other->visible;
    return QPen(e.colour, visibleCount <= 12 ? 2 : 1);
}

QPen DecimatedChart::rawPen(const Entry& e) const
{
    QColor faint = e.colour;
    faint.setAlpha(70);
    return QPen(faint, 1);
}

void DecimatedChart::redecimate()
{
    finishDecimation(startDecimation());
}

// One full pass: every visible series (main and, when smoothing, raw layer)
// decimated with its index, on the thread pool when there is enough work.
// startDecimation() hands the work to the pool and returns at once, so the
// GUI thread can do other work (setXRange: the x axis' label layout) while
// it runs; finishDecimation() waits for it and applies the samples. In
// between nothing may touch m_entries (the GUI thread stays inside one call).
struct DecimatedChart::Pass {
    struct Job {
        Entry* e = nullptr;
        Columns mc, rc;
        M4Result main, raw;
        bool packed = false; // decimateM4Packed from e->packed
    };
    bool active = false;
    bool laidOut = false;
    M4Viewport vp;
    bool smooth = false;
    std::vector<Job> jobs;
    QFuture<void> future;
    // The pool's tasks write into `jobs`: never free them under a running pass.
    ~Pass() { future.waitForFinished(); }
};

std::unique_ptr<DecimatedChart::Pass> DecimatedChart::startDecimation()
{
    auto pass = std::make_unique<Pass>();
    if (m_updateDepth > 0) {
        m_pendingRedecimate = true;
        return pass;
    }
    if (m_inRedecimate)
        return pass;
    pass->active = true;
    pass->laidOut = viewport().pixelWidth >= 2;
    pass->vp = drawViewport();
    pass->smooth = m_smoothing > 0;
    m_inRedecimate = true;
    ++m_fullRedecimations;
    pass->jobs.reserve(m_entries.size());
    qsizetype totalPoints = 0;
    for (auto& e : m_entries) {
        if (!e->visible)
            continue;
        Pass::Job job{e.get(), columns(*e, true), pass->smooth ? columns(*e, false) : Columns{}, {}, {}};
        job.packed = direct(*e);
        totalPoints += job.packed ? qsizetype(e->packedSeen) / 64 : qsizetype(job.mc.x.size() + job.rc.x.size());
        pass->jobs.push_back(std::move(job));
    }
    const auto decimate = [vp = pass->vp, smooth = pass->smooth](Pass::Job& job) {
        Entry& e = *job.e;
        if (job.packed) {
            job.main = decimateM4Packed(*e.packed, e.packedMap, vp, 0, e.packedSeen);
            return;
        }
        if (!e.mainIndex)
            e.mainIndex = std::make_shared<const M4Index>(job.mc.x, job.mc.y);
        job.main = decimateM4(job.mc.x, job.mc.y, vp, e.mainIndex.get());
        if (smooth) {
            if (!e.rawIndex)
                e.rawIndex = std::make_shared<const M4Index>(job.rc.x, job.rc.y);
            job.raw = decimateM4(job.rc.x, job.rc.y, vp, e.rawIndex.get());
        }
    };
    // Below ~100k points a thread hand-off costs more than it saves.
    if (pass->jobs.size() > 1 && totalPoints > 100000)
        pass->future = QtConcurrent::map(pass->jobs, decimate);
    else
        std::for_each(pass->jobs.begin(), pass->jobs.end(), decimate);
    return pass;
}

void DecimatedChart::finishDecimation(std::unique_ptr<Pass> pass)
{
    if (!pass || !pass->active)
        return;
    pass->future.waitForFinished();
    // Not laid out: plotAreaChanged brings us back with the real width.
    m_lastWidth = pass->laidOut ? pass->vp.pixelWidth : -1;
    bool haveY = false;
    double y0 = 0, y1 = 1;
    const auto extend = [&](const M4Result& r) {
        if (!r.haveY)
            return;
        y0 = haveY ? std::min(y0, r.yMin) : r.yMin;
        y1 = haveY ? std::max(y1, r.yMax) : r.yMax;
        haveY = true;
    };
    for (auto& e : m_entries) {
        if (!e->visible) {
            applyLayer(*e, e->main, M4Result{}, QPen(), false);
            applyLayer(*e, e->raw, M4Result{}, QPen(), false);
        }
    }
    for (Pass::Job& job : pass->jobs) {
        Entry& e = *job.e;
        extend(job.main);
        if (pass->smooth) {
            extend(job.raw);
            applyLayer(e, e.raw, job.raw, rawPen(e), true);
        } else {
            applyLayer(e, e.raw, M4Result{}, QPen(), false);
        }
        applyLayer(e, e.main, job.main, mainPen(e), true);
    }
    m_haveDataY = haveY;
    m_dataYLo = haveY ? y0 : 0.0;
    m_dataYHi = haveY ? y1 : 0.0;
    setYAxisRange(m_dataYLo, m_dataYHi);
    updateNotice();
    m_inRedecimate = false;
}

void DecimatedChart::setYAxisRange(double y0, double y1)
{
    const bool log = m_yScale == YScale::Log;
    if (!m_haveDataY) {
        y0 = 0;
        y1 = 1;
    } else if (y1 <= y0) {
        const double pad = log ? 0.5 : (std::abs(y0) > 0 ? std::abs(y0) * 0.05 : 1.0);
        y0 -= pad;
        y1 += pad;
    } else {
        const double pad = (y1 - y0) * 0.05;
        y0 -= pad;
        y1 += pad;
    }
    m_yLo = y0;
    m_yHi = y1;
    if (log)
        setLogTicks(m_axisLog, y0, y1);
    else
        setNiceRange(m_axisLin, y0, y1);
    m_item->update();
}

void DecimatedChart::applyLayer(Entry& e, Layer& layer, const M4Result& r, const QPen& pen, bool visible)
{
    Q_UNUSED(e);
    layer.visible = visible;
    layer.drawn = visible ? r.pointCount() : 0;
    layer.gaps = visible ? r.gaps : QList<SegmentedSeries::Gap>();
    layer.segments = visible ? r.segments : QList<QList<QPointF>>();
    layer.pen = pen;
    placeMarkers(layer);
    m_item->update();
}

void DecimatedChart::placeMarkers(Layer& layer)
{
    layer.markers = int(layer.gaps.size());
}

void DecimatedChart::setMarkers(QList<double> xs)
{
    if (xs == m_markers)
        return;
    m_markers = std::move(xs);
    m_item->update();
}

void DecimatedChart::paintSeries(QPainter& painter, const QRectF& area) const
{
    if (!(area.width() > 0) || !(area.height() > 0) || !(m_hi > m_lo) || !(m_yHi > m_yLo) || m_entries.empty())
        return;
    painter.save();
    painter.setClipRect(area);
    painter.setBrush(Qt::NoBrush);
    const double sx = area.width() / (m_hi - m_lo);
    const double sy = area.height() / (m_yHi - m_yLo);
    const double left = area.left(), bottom = area.bottom();
    const double farLeft = left - kFar, farRight = area.right() + kFar;
    const auto map
            = [&](const QPointF& q) { return QPointF(left + (q.x() - m_lo) * sx, bottom - (q.y() - m_yLo) * sy); };
    std::vector<QPointF>& pts = m_mapped;
    if (!m_markers.isEmpty()) {
        // Vertical markers (restarts) under every series.
        QPen dash(QColor(0x9e, 0x9e, 0x9e), 1.0, Qt::DashLine);
        dash.setCosmetic(true);
        painter.setRenderHint(QPainter::Antialiasing, false);
        painter.setPen(dash);
        for (const double x : std::as_const(m_markers)) {
            if (!std::isfinite(x) || x < m_lo || x > m_hi)
                continue;
            const double px = left + (x - m_lo) * sx;
            painter.drawLine(QPointF(px, area.top()), QPointF(px, area.bottom()));
        }
    }
    // The device pixel grid, when painting straight onto it is possible (a
    // raster device, integer translation, no scaling): the integer offset
    // from painter coordinates to device pixels.
    const QTransform dt = painter.deviceTransform();
    const bool rasterDevice = painter.paintEngine() && painter.paintEngine()->type() == QPaintEngine::Raster
            && dt.type() <= QTransform::TxTranslate && dt.dx() == std::floor(dt.dx()) && dt.dy() == std::floor(dt.dy())
            && painter.device() && painter.device()->devicePixelRatioF() == 1.0;
    // A polyline of one segment, mapped and with its far ends cut; false
    // for a single point (drawn as a dot).
    // Points [from, to] (inclusive) of a segment, mapped, with the segment's
    // own far ends (when the range reaches them) cut at kFar; false for fewer
    // than two points (a dot). Whole segments and the raster parts' column
    // ranges both go through here, so both cut exactly alike.
    const auto mapRange = [&](const QList<QPointF>& seg, qsizetype from, qsizetype to, std::vector<QPointF>& out) {
        out.resize(std::size_t(to - from + 1));
        for (qsizetype i = from; i <= to; ++i)
            out[std::size_t(i - from)] = map(seg.at(i));
        if (out.size() < 2)
            return false;
        // The edge points outside the range: cut far lines at kFar.
        const std::size_t n = out.size();
        if (from == 0 && out[0].x() < farLeft && out[1].x() > out[0].x())
            out[0] = towards(out[0], out[1], farLeft);
        if (to == seg.size() - 1 && out[n - 1].x() > farRight && out[n - 2].x() < out[n - 1].x())
            out[n - 1] = towards(out[n - 1], out[n - 2], farRight);
        return true;
    };
    const auto mapSegment = [&](const QList<QPointF>& seg, std::vector<QPointF>& out) {
        return !seg.isEmpty() && mapRange(seg, 0, seg.size() - 1, out);
    };
    const auto drawDots = [&](const Layer& layer) {
        for (const QList<QPointF>& seg : layer.segments) {
            if (seg.size() != 1)
                continue;
            painter.save();
            painter.setRenderHint(QPainter::Antialiasing, true);
            painter.setPen(Qt::NoPen);
            painter.setBrush(layer.pen.color());
            painter.drawEllipse(map(seg.first()), 2.5, 2.5);
            painter.restore();
        }
    };
    const auto drawGaps = [&](const Layer& layer) {
        if (layer.gaps.isEmpty())
            return;
        // nan/inf: a marker on the bottom (NaN, -inf) or top (+inf) edge.
        painter.save();
        painter.setRenderHint(QPainter::Antialiasing, true);
        painter.setPen(Qt::NoPen);
        const QColor nanColour(0xc6, 0x28, 0x28), infColour(0xef, 0x6c, 0x00);
        for (const SegmentedSeries::Gap& g : std::as_const(layer.gaps)) {
            const double px = left + (g.x - m_lo) * sx;
            if (g.kind == SegmentedSeries::GapKind::NaN) {
                const double py = area.bottom(), r = 4.5;
                const QPointF diamond[4] = {{px, py - r}, {px + r, py}, {px, py + r}, {px - r, py}};
                painter.setBrush(nanColour);
                painter.drawPolygon(diamond, 4);
            } else {
                const bool top = g.kind == SegmentedSeries::GapKind::PosInf;
                const double py = top ? area.top() : area.bottom(), r = 5.0;
                const QPointF tri[3] = {{px, py - r}, {px + r, py + r * 0.7}, {px - r, py + r * 0.7}};
                painter.setBrush(infColour);
                painter.drawPolygon(tri, 3);
            }
        }
        painter.restore();
    };

    // All faint raw layers first, then every main line over them.
    for (const bool mainPass : {false, true}) {
        std::vector<const Layer*> layers;
        bool allThinOpaque = true;
        for (const auto& e : m_entries) {
            const Layer& layer = mainPass ? e->main : e->raw;
            if (!layer.visible || !e->visible || layer.segments.isEmpty())
                continue;
            layers.push_back(&layer);
            allThinOpaque = allThinOpaque && layer.pen.widthF() <= 1.0 && layer.pen.color().alpha() == 255;
        }
        if (layers.empty())
            continue;
        if (rasterDevice && allThinOpaque) {
            // Many thin opaque lines: SpanRaster straight into a column-major
            // buffer of the plot area's device pixels, split over the cores
            // by pixel columns: each part draws every series, in paint order,
            // clipped to its own columns (only the points that reach them),
            // then turns its columns of the buffer into the same columns of
            // one image, which is blitted once. Column ranges are disjoint,
            // so the parts share buffer and image without locks; a polyline
            // cut to the points around a column range draws exactly the
            // pixels the whole one draws there (SpanRaster's formulas use a
            // segment's own ends only).
            // The image covers the plot area in whole painter units; the
            // painter's transform is an integer translation (rasterDevice), so
            // they are whole device pixels too and the image is blitted
            // unscaled. (Not dt.mapRect with the transform reset: dt includes
            // the widget's redirection offset, which the painter adds again.)
            const QRect device = area.toAlignedRect();
            const QPointF offset = QPointF(-device.left(), -device.top());
            const int w = device.width(), h = device.height();
            // Parts of at least 64 columns: below that a hand-off costs more.
            const int parts = std::clamp(std::min(QThread::idealThreadCount(), w / 64), 1, 8);
            std::vector<QRgb>& buffer = m_rasterColumns;
            buffer.resize(std::size_t(w) * std::size_t(h));
            if (m_rasterImage.size() != device.size())
                m_rasterImage = QImage(device.size(), QImage::Format_ARGB32_Premultiplied);
            // The image's pixels, taken here: the parts write disjoint columns
            // of them, but QImage::bits() itself is not for concurrent calls.
            QRgb* const pixels = reinterpret_cast<QRgb*>(m_rasterImage.bits());
            const qsizetype stride = m_rasterImage.bytesPerLine() / qsizetype(sizeof(QRgb));
            // Device x of a point: exactly what map() then + offset gives.
            const auto deviceX = [&](const QPointF& q) { return (left + (q.x() - m_lo) * sx) + offset.x(); };
            const auto rasterise = [&](int part) {
                const int c0 = int(qint64(w) * part / parts), c1 = int(qint64(w) * (part + 1) / parts);
                std::fill(buffer.begin() + qsizetype(c0) * h, buffer.begin() + qsizetype(c1) * h, QRgb(0));
                SpanRaster raster(buffer.data(), w, h);
                raster.setColumnClip(c0, c1);
                std::vector<QPointF> mapped;
                for (const Layer* layer : layers) {
                    const QRgb colour = layer->pen.color().rgba(); // opaque: premultiplied as is
                    for (const QList<QPointF>& seg : layer->segments) {
                        const qsizetype n = seg.size();
                        if (n < 2)
                            continue; // a dot: drawDots
                        // The points in [c0, c1) and one on each side.
                        const auto before = [&](const QPointF& q, double c) { return deviceX(q) < c; };
                        const qsizetype first = qsizetype(
                                std::lower_bound(seg.cbegin(), seg.cend(), double(c0), before) - seg.cbegin());
                        const qsizetype pastEnd = qsizetype(
                                std::lower_bound(seg.cbegin() + first, seg.cend(), double(c1), before) - seg.cbegin());
                        const qsizetype from = std::max<qsizetype>(first - 1, 0);
                        const qsizetype to = std::min(pastEnd, n - 1); // inclusive
                        if (to <= from || !mapRange(seg, from, to, mapped))
                            continue;
                        for (QPointF& q : mapped)
                            q += offset;
                        raster.drawPolyline(mapped.data(), qsizetype(mapped.size()), colour);
                    }
                }
                const QRgb* layer = buffer.data();
                SpanRaster::composeColumnMajor(std::span<const QRgb* const>(&layer, 1), h, pixels, stride, w, c0, c1);
            };
            std::vector<int> order(std::size_t(parts), 0);
            std::iota(order.begin(), order.end(), 0);
            if (order.size() > 1)
                QtConcurrent::blockingMap(order, rasterise);
            else
                rasterise(0);
            painter.drawImage(device.topLeft(), m_rasterImage);
            for (const Layer* layer : layers) {
                drawDots(*layer);
                if (mainPass)
                    drawGaps(*layer);
            }
            continue;
        }
        for (const Layer* layerPtr : layers) {
            const Layer& layer = *layerPtr;
            QPen pen = layer.pen;
            const bool thin = pen.widthF() <= 1.0;
            pen.setCosmetic(true);
            if (thin) {
                // As TestM4Decimator rasterises: the picture equals all points'.
                pen.setCapStyle(Qt::FlatCap);
                pen.setJoinStyle(Qt::BevelJoin);
            }
            painter.setRenderHint(QPainter::Antialiasing, !thin);
            painter.setPen(pen);
            for (const QList<QPointF>& seg : layer.segments) {
                if (!mapSegment(seg, pts))
                    continue;
                // A wide line denser than the pixel columns (the M4 sample
                // of many points: up to four a column) is a band of vertical
                // strokes where antialiasing shows no edge worth its cost:
                // Qt's stroker spent ~8 ms a 4,000-point polyline on joins
                // (atan2) while following a chatty run (bench_follow). Drawn
                // aliased, it takes the rasteriser's fast path.
                const bool dense = !thin && double(pts.size()) > 1.5 * area.width();
                if (dense)
                    painter.setRenderHint(QPainter::Antialiasing, false);
                painter.drawPolyline(pts.data(), int(pts.size()));
                if (dense)
                    painter.setRenderHint(QPainter::Antialiasing, true);
            }
            drawDots(layer);
            if (mainPass)
                drawGaps(layer);
        }
    }
    painter.restore();
}

void DecimatedChart::showHover(double chartX, const QPoint& globalPos)
{
    const QRectF area = m_chart->plotArea();
    if (std::isnan(chartX) || area.width() <= 0 || chartX < area.left() || chartX > area.right() || m_entries.empty()) {
        setHoverX(std::numeric_limits<double>::quiet_NaN());
        QToolTip::hideText();
        return;
    }
    setHoverX(m_lo + (chartX - area.left()) / area.width() * (m_hi - m_lo));
    QToolTip::showText(globalPos, hoverHtml(), m_view);
}

void DecimatedChart::setHoverX(double x)
{
    if (std::isnan(x) && std::isnan(m_hoverX))
        return;
    m_hoverX = x;
    m_item->update();
}

QString DecimatedChart::hoverHeader() const
{
    const QAbstractAxis* axis = m_chart->axes(Qt::Horizontal).value(0);
    const QString where = m_xKind == XAxisKind::DateTimeMs
            ? QDateTime::fromMSecsSinceEpoch(qint64(m_hoverX)).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
            : formatHoverValue(m_hoverX);
    return (axis ? axis->titleText() + u' ' : QString()) + where;
}

QList<DecimatedChart::HoverValue> DecimatedChart::hoverValues() const
{
    QList<HoverValue> out;
    if (std::isnan(m_hoverX))
        return out;
    for (const auto& e : m_entries) {
        if (!e->visible)
            continue;
        QString v;
        if (direct(*e)) {
            const qsizetype i = packedIndexAtOrBefore(*e->packed, e->packedMap, m_hoverX);
            if (i < 0 || i >= e->packedSeen)
                continue;
            PackedMetricSeries::Chunk buf;
            out.append(HoverValue{e->name, e->colour, formatHoverValue(e->packed->at(i, buf).value)});
            continue;
        }
        const qsizetype i = indexAtOrBefore(*e->x, m_hoverX);
        if (i < 0)
            continue;
        v = formatHoverValue((*e->y)[std::size_t(i)]);
        if (m_smoothing > 0 && std::size_t(i) < e->smoothed.size())
            v = formatHoverValue(e->smoothed[std::size_t(i)]) + QStringLiteral(" (raw ") + v + u')';
        out.append(HoverValue{e->name, e->colour, v});
    }
    return out;
}

QString DecimatedChart::hoverText() const
{
    if (std::isnan(m_hoverX))
        return {};
    QStringList lines{hoverHeader()};
    for (const HoverValue& r : hoverValues())
        lines << r.name + QStringLiteral(": ") + r.value;
    return lines.join(u'\n');
}

QString DecimatedChart::hoverHtml() const
{
    QStringList lines{hoverHeader().toHtmlEscaped()};
    for (const HoverValue& r : hoverValues())
        lines << QStringLiteral("<span style='color:%1'>&#9632; %2</span>: <b>%3</b>")
                         .arg(r.colour.name(), r.name.toHtmlEscaped(), r.value.toHtmlEscaped());
    return lines.join(QStringLiteral("<br>"));
}

void DecimatedChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyChartPalette(m_chart, {m_axisX, m_axisTime, m_axisLin, m_axisLog}, palette());
}

void DecimatedChart::paintHover(QPainter& painter, const QRectF& area) const
{
    if (std::isnan(m_hoverX) || !(m_hi > m_lo) || !(area.width() > 0))
        return;
    const double px = area.left() + (m_hoverX - m_lo) / (m_hi - m_lo) * area.width();
    if (px < area.left() || px > area.right())
        return;
    painter.save();
    QPen pen(QColor(0x60, 0x60, 0x60), 1);
    pen.setCosmetic(true);
    painter.setPen(pen);
    painter.setRenderHint(QPainter::Antialiasing, false);
    painter.drawLine(QPointF(px, area.top()), QPointF(px, area.bottom()));
    painter.restore();
}

qsizetype DecimatedChart::drawnPoints(int index) const
{
    return index >= 0 && index < seriesCount() ? m_entries[std::size_t(index)]->main.drawn : 0;
}

qsizetype DecimatedChart::drawnRawPoints(int index) const
{
    return index >= 0 && index < seriesCount() ? m_entries[std::size_t(index)]->raw.drawn : 0;
}

qsizetype DecimatedChart::totalPoints(int index) const
{
    if (index < 0 || index >= seriesCount())
        return 0;
    const Entry& e = *m_entries[std::size_t(index)];
    return e.packed ? e.packedSeen : qsizetype(e.y->size());
}

int DecimatedChart::gapMarkers(int index) const
{
    return index >= 0 && index < seriesCount() ? m_entries[std::size_t(index)]->main.markers : 0;
}

QList<QList<QPointF>> DecimatedChart::drawnSegments(int index) const
{
    QList<QList<QPointF>> out;
    if (index < 0 || index >= seriesCount())
        return out;
    return m_entries[std::size_t(index)]->main.segments;
}

double DecimatedChart::yMin() const
{
    return m_yLo;
}

double DecimatedChart::yMax() const
{
    return m_yHi;
}

} // namespace ty
