#include "DecimatedChart.h"

#include "ChartStyle.h"
#include "ChartView.h"
#include "Smoothing.h"

#include <QChart>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QScatterSeries>
#include <QScopedValueRollback>
#include <QTimer>
#include <QToolTip>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace ty {

namespace {

QString formatY(double v)
{
    return std::isnan(v) ? QStringLiteral("nan")
        : std::isinf(v)  ? (v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf"))
                         : QString::number(v, 'g', 5);
}

} // namespace

DecimatedChart::DecimatedChart(const QString& title, QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("decimatedChart:") + title);
    m_chart = newPlainChart(2);

    m_axisX = new QValueAxis;
    m_axisX->setLabelFormat(QStringLiteral("%g"));
    m_axisTime = new QDateTimeAxis;
    m_axisTime->setTickCount(5);
    m_axisY = new QValueAxis;
    m_axisY->setLabelFormat(QStringLiteral("%.3g"));
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    m_axisX->setTitleText(tr("step"));

    connect(m_axisX, &QValueAxis::rangeChanged, this, &DecimatedChart::onAxisRangeChanged);
    connect(m_axisTime, &QDateTimeAxis::rangeChanged, this, [this](const QDateTime& lo, const QDateTime& hi) {
        onAxisRangeChanged(double(lo.toMSecsSinceEpoch()), double(hi.toMSecsSinceEpoch()));
    });
    connect(m_chart, &QChart::plotAreaChanged, this, [this](const QRectF& area) {
        if (area.width() != m_lastWidth)
            QTimer::singleShot(0, this, &DecimatedChart::redecimate);
    });

    m_view = new ChartView(m_chart, this);
    m_view->setObjectName(QStringLiteral("chartView"));
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

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    setTitle(title);
    setXRange(0, 1);
}

DecimatedChart::~DecimatedChart()
{
    // The axis not in the chart is ours.
    if (m_xKind == XAxisKind::Value)
        delete m_axisTime;
    else
        delete m_axisX;
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
    if (m_smoothing > 0)
        e->smoothed = smoothEma(*e->y, m_smoothing);
    // The raw layer's first line is added before the main one, so it is drawn behind it.
    for (Layer* layer : {&e->raw, &e->main}) {
        auto* s = new QLineSeries;
        s->setVisible(false);
        attach(s);
        layer->lines.append(s);
    }
    m_entries.push_back(std::move(e));
    const auto [lo, hi] = fullXRange();
    setXRange(lo, hi);
    return int(m_entries.size()) - 1;
}

void DecimatedChart::clearSeries()
{
    for (auto& e : m_entries)
        for (Layer* layer : {&e->raw, &e->main}) {
            for (QLineSeries* s : std::as_const(layer->lines)) {
                m_chart->removeSeries(s);
                delete s;
            }
            for (QScatterSeries* s : {layer->nan, layer->inf})
                if (s) {
                    m_chart->removeSeries(s);
                    delete s;
                }
        }
    m_entries.clear();
    setXRange(0, 1);
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
        e->smoothed = w > 0 ? smoothEma(*e->y, w) : std::vector<double>();
    redecimate();
}

std::pair<double, double> DecimatedChart::fullXRange() const
{
    bool have = false;
    double lo = 0, hi = 1;
    for (const auto& e : m_entries) {
        if (e->x->empty())
            continue;
        lo = have ? std::min(lo, e->x->front()) : e->x->front();
        hi = have ? std::max(hi, e->x->back()) : e->x->back();
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
    redecimate();
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

void DecimatedChart::redecimate()
{
    if (m_inRedecimate)
        return;
    const M4Viewport vp = viewport();
    if (vp.pixelWidth < 2)
        return; // not laid out yet; plotAreaChanged brings us back
    m_inRedecimate = true;
    m_lastWidth = vp.pixelWidth;
    int visibleCount = 0;
    for (const auto& e : m_entries)
        visibleCount += e->visible;
    const bool smooth = m_smoothing > 0;
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
            continue;
        }
        QPen pen(e->colour, visibleCount <= 12 ? 2 : 1);
        const std::span<const double> ys = smooth ? std::span<const double>(e->smoothed) : std::span<const double>(*e->y);
        const M4Result main = decimateM4(*e->x, ys, vp);
        extend(main);
        if (smooth) {
            const M4Result raw = decimateM4(*e->x, *e->y, vp);
            extend(raw);
            QColor faint = e->colour;
            faint.setAlpha(70);
            applyLayer(*e, e->raw, raw, QPen(faint, 1), true);
        } else {
            applyLayer(*e, e->raw, M4Result{}, QPen(), false);
        }
        applyLayer(*e, e->main, main, pen, true);
    }
    if (!haveY) {
        y0 = 0;
        y1 = 1;
    } else if (y1 <= y0) {
        const double pad = std::abs(y0) > 0 ? std::abs(y0) * 0.05 : 1.0;
        y0 -= pad;
        y1 += pad;
    } else {
        const double pad = (y1 - y0) * 0.05;
        y0 -= pad;
        y1 += pad;
    }
    m_yLo = y0;
    m_yHi = y1;
    setNiceRange(m_axisY, y0, y1);
    for (auto& e : m_entries)
        placeMarkers(e->main, y0, y1);
    m_inRedecimate = false;
}

void DecimatedChart::applyLayer(Entry& e, Layer& layer, const M4Result& r, const QPen& pen, bool visible)
{
    layer.drawn = visible ? r.pointCount() : 0;
    layer.gaps = visible ? r.gaps : QList<SegmentedSeries::Gap>();
    while (layer.lines.size() < r.segments.size()) {
        auto* s = new QLineSeries;
        attach(s);
        layer.lines.append(s);
    }
    for (qsizetype i = 0; i < layer.lines.size(); ++i) {
        QLineSeries* s = layer.lines.at(i);
        if (visible && i < r.segments.size()) {
            if (s->pen() != pen)
                s->setPen(pen);
            if (s->color() != pen.color())
                s->setColor(pen.color());
            const QList<QPointF>& seg = r.segments.at(i);
            const bool single = seg.size() == 1;
            if (s->pointsVisible() != single)
                s->setPointsVisible(single);
            s->replace(seg);
            if (!s->isVisible())
                s->setVisible(true);
        } else {
            if (s->count())
                s->clear();
            if (s->isVisible())
                s->setVisible(false);
        }
    }
    Q_UNUSED(e);
}

void DecimatedChart::placeMarkers(Layer& layer, double y0, double y1)
{
    QList<QPointF> nan, inf;
    for (const SegmentedSeries::Gap& g : std::as_const(layer.gaps)) {
        if (g.kind == SegmentedSeries::GapKind::PosInf)
            inf.append(QPointF(g.x, y1));
        else if (g.kind == SegmentedSeries::GapKind::NegInf)
            inf.append(QPointF(g.x, y0));
        else
            nan.append(QPointF(g.x, y0));
    }
    layer.markers = int(nan.size() + inf.size());
    const auto place = [this](QScatterSeries*& s, const QList<QPointF>& pts, bool isNan) {
        if (!s && pts.isEmpty())
            return;
        if (!s) {
            s = new QScatterSeries;
            s->setName(isNan ? QStringLiteral("nan") : QStringLiteral("inf"));
            s->setMarkerShape(isNan ? QScatterSeries::MarkerShapeRotatedRectangle : QScatterSeries::MarkerShapeTriangle);
            s->setMarkerSize(isNan ? 9 : 10);
            const QColor c = isNan ? QColor(0xc6, 0x28, 0x28) : QColor(0xef, 0x6c, 0x00);
            s->setColor(c);
            s->setBorderColor(c);
            attach(s);
        }
        s->replace(pts);
    };
    place(layer.nan, nan, true);
    place(layer.inf, inf, false);
}

void DecimatedChart::showHover(double chartX, const QPoint& globalPos)
{
    const QRectF area = m_chart->plotArea();
    if (area.width() <= 0 || chartX < area.left() || chartX > area.right() || m_entries.empty()) {
        QToolTip::hideText();
        return;
    }
    const double x = m_lo + (chartX - area.left()) / area.width() * (m_hi - m_lo);
    QStringList lines;
    for (const auto& e : m_entries) {
        if (!e->visible || e->x->empty())
            continue;
        const std::vector<double>& xs = *e->x;
        auto it = std::lower_bound(xs.begin(), xs.end(), x);
        if (it == xs.end() || (it != xs.begin() && x - *(it - 1) < *it - x))
            --it;
        const std::size_t i = std::size_t(it - xs.begin());
        QString v = formatY((*e->y)[i]);
        if (m_smoothing > 0)
            v = formatY(e->smoothed[i]) + QStringLiteral(" (raw ") + v + u')';
        lines << QStringLiteral("<span style='color:%1'>&#9632;</span> %2: <b>%3</b>")
                     .arg(e->colour.name(), e->name.toHtmlEscaped(), v);
    }
    const QString where = m_xKind == XAxisKind::DateTimeMs
        ? QDateTime::fromMSecsSinceEpoch(qint64(x)).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
        : QString::number(x, 'g', 6);
    QToolTip::showText(globalPos, QStringLiteral("%1 %2<br>").arg(m_view->chart()->axes(Qt::Horizontal).value(0)
                                                                     ? m_view->chart()->axes(Qt::Horizontal).value(0)->titleText()
                                                                     : QString(), where)
                           + lines.join(QStringLiteral("<br>")),
                       m_view);
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
    return index >= 0 && index < seriesCount() ? qsizetype(m_entries[std::size_t(index)]->y->size()) : 0;
}

int DecimatedChart::gapMarkers(int index) const
{
    return index >= 0 && index < seriesCount() ? m_entries[std::size_t(index)]->main.markers : 0;
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
