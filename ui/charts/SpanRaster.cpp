#include "SpanRaster.h"

#include <algorithm>
#include <cmath>

namespace ty {

namespace {

// floor() of a value already clamped well inside qint64's range.
qint64 floorToInt(double v)
{
    const auto t = qint64(v);
    return double(t) > v ? t - 1 : t;
}

} // namespace

SpanRaster::SpanRaster(QImage& image)
    : m_bits(reinterpret_cast<QRgb*>(image.bits()))
    , m_stride(image.bytesPerLine() / qsizetype(sizeof(QRgb)))
    , m_width(image.width())
    , m_height(image.height())
{
}

void SpanRaster::span(qint64 column, double y0, double y1, QRgb colour)
{
    if (column < 0 || column >= m_width)
        return;
    if (y0 > y1)
        std::swap(y0, y1);
    if (!(y1 >= 0.0) || !(y0 < double(m_height)))
        return; // wholly above or below (or NaN)
    const qint64 r0 = y0 < 0.0 ? 0 : floorToInt(y0);
    const qint64 r1 = std::min<qint64>(m_height - 1, floorToInt(std::min(y1, double(m_height))));
    QRgb* p = m_bits + r0 * m_stride + column;
    for (qint64 r = r0; r <= r1; ++r, p += m_stride)
        *p = colour;
}

void SpanRaster::drawLine(QPointF a, QPointF b, QRgb colour)
{
    if (a.x() > b.x())
        std::swap(a, b);
    const double x0 = a.x(), y0 = a.y(), x1 = b.x(), y1 = b.y();
    if (!std::isfinite(x0) || !std::isfinite(x1) || !std::isfinite(y0) || !std::isfinite(y1))
        return;
    if (x1 < 0.0 || x0 >= double(m_width))
        return;
    const qint64 c0 = floorToInt(std::max(x0, -1.0));
    const qint64 c1 = floorToInt(std::min(x1, double(m_width)));
    if (c0 == c1 || x1 == x0) {
        span(c0, y0, y1, colour);
        return;
    }
    const double slope = (y1 - y0) / (x1 - x0);
    const qint64 first = std::max<qint64>(c0, 0);
    const qint64 last = std::min<qint64>(c1, m_width - 1);
    for (qint64 c = first; c <= last; ++c) {
        const double xa = c == c0 ? x0 : double(c);
        const double xb = c == c1 ? x1 : double(c + 1);
        const double ya = c == c0 ? y0 : y0 + (xa - x0) * slope;
        const double yb = c == c1 ? y1 : y0 + (xb - x0) * slope;
        span(c, ya, yb, colour);
    }
}

void SpanRaster::drawPolyline(const QPointF* pts, qsizetype n, QRgb colour)
{
    if (n == 1) {
        const QPointF p = pts[0];
        span(floorToInt(std::clamp(p.x(), -1.0, double(m_width))), p.y(), p.y(), colour);
        return;
    }
    for (qsizetype i = 1; i < n; ++i)
        drawLine(pts[i - 1], pts[i], colour);
}

} // namespace ty
