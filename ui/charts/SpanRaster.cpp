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
    , m_rowStep(image.bytesPerLine() / qsizetype(sizeof(QRgb)))
    , m_columnStep(1)
    , m_width(image.width())
    , m_height(image.height())
    , m_clipTo(image.width())
{ }

SpanRaster::SpanRaster(QRgb* pixels, int width, int height)
    : m_bits(pixels)
    , m_rowStep(1)
    , m_columnStep(height)
    , m_width(width)
    , m_height(height)
    , m_clipTo(width)
{ }

void SpanRaster::composeColumnMajor(
        std::span<const QRgb* const> layers, int height, QImage& out, int firstColumn, int endColumn)
{
    if (height != out.height())
        return;
    composeColumnMajor(layers, height, reinterpret_cast<QRgb*>(out.bits()),
            out.bytesPerLine() / qsizetype(sizeof(QRgb)), out.width(), firstColumn, endColumn);
}

void SpanRaster::composeColumnMajor(std::span<const QRgb* const> layers, int height, QRgb* dst, qsizetype stride,
        int width, int firstColumn, int endColumn)
{
    firstColumn = std::max(firstColumn, 0);
    endColumn = std::min(endColumn, width);
    if (!dst || height <= 0 || firstColumn >= endColumn)
        return;
    // Tiles of 32 x 32: the column-major reads and row-major writes of a tile
    // stay in cache.
    constexpr int kTile = 32;
    for (int c0 = firstColumn; c0 < endColumn; c0 += kTile) {
        const int c1 = std::min(endColumn, c0 + kTile);
        for (int r0 = 0; r0 < height; r0 += kTile) {
            const int r1 = std::min(height, r0 + kTile);
            for (int c = c0; c < c1; ++c) {
                const qsizetype column = qsizetype(c) * height;
                for (int r = r0; r < r1; ++r) {
                    QRgb v = 0;
                    for (const QRgb* layer : layers) {
                        const QRgb p = layer[column + r];
                        v = p ? p : v;
                    }
                    dst[qsizetype(r) * stride + c] = v;
                }
            }
        }
    }
}

void SpanRaster::setColumnClip(int from, int to)
{
    m_clipFrom = std::clamp(from, 0, m_width);
    m_clipTo = std::clamp(to, m_clipFrom, m_width);
}

void SpanRaster::span(qint64 column, double y0, double y1, QRgb colour)
{
    if (column < m_clipFrom || column >= m_clipTo)
        return;
    if (y0 > y1)
        std::swap(y0, y1);
    if (!(y1 >= 0.0) || !(y0 < double(m_height)))
        return; // wholly above or below (or NaN)
    const qint64 r0 = y0 < 0.0 ? 0 : floorToInt(y0);
    const qint64 r1 = std::min<qint64>(m_height - 1, floorToInt(std::min(y1, double(m_height))));
    QRgb* p = m_bits + r0 * m_rowStep + column * m_columnStep;
    if (m_rowStep == 1) {
        std::fill(p, p + (r1 - r0 + 1), colour);
        return;
    }
    for (qint64 r = r0; r <= r1; ++r, p += m_rowStep)
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
    if (n <= 0)
        return;
    if (n == 1) {
        const QPointF p = pts[0];
        span(floorToInt(std::clamp(p.x(), -1.0, double(m_width))), p.y(), p.y(), colour);
        return;
    }
    // x non-decreasing (a series over steps or time, as the charts draw):
    // the polyline visits the columns left to right, so in every column the
    // spans of its segments join into one, from the lowest to the highest
    // height it has there. One span per column instead of one per segment
    // and column: the same pixels (a union of overlapping row ranges, each
    // clipped the same way), computed with drawLine's own formulas. Anything
    // else (x going back, a non-finite coordinate) goes segment by segment.
    for (qsizetype i = 0; i < n; ++i) {
        const double x = pts[i].x(), y = pts[i].y();
        if (!std::isfinite(x) || !std::isfinite(y) || (i > 0 && x < pts[i - 1].x())) {
            for (qsizetype k = 1; k < n; ++k)
                drawLine(pts[k - 1], pts[k], colour);
            return;
        }
    }
    const double width = double(m_width);
    const auto columnOf = [width](double x) { return floorToInt(std::clamp(x, -1.0, width)); };
    qint64 column = columnOf(pts[0].x());
    double lo = pts[0].y(), hi = lo;
    for (qsizetype i = 1; i < n; ++i) {
        const double x0 = pts[i - 1].x(), y0 = pts[i - 1].y(), x1 = pts[i].x(), y1 = pts[i].y();
        const qint64 next = columnOf(x1);
        if (next == column) {
            lo = std::min(lo, y1);
            hi = std::max(hi, y1);
            continue;
        }
        // Into a column to the right (so x1 > x0): leave this one at its
        // right edge, cross the columns between, enter `next` at its left edge.
        const double slope = (y1 - y0) / (x1 - x0);
        const double exit = y0 + (double(column + 1) - x0) * slope;
        span(column, std::min(lo, exit), std::max(hi, exit), colour);
        if (column + 1 < m_clipTo && next - 1 >= m_clipFrom) {
            const qint64 first = std::max<qint64>(column + 1, m_clipFrom);
            const qint64 last = std::min<qint64>(next - 1, m_clipTo - 1);
            for (qint64 c = first; c <= last; ++c)
                span(c, y0 + (double(c) - x0) * slope, y0 + (double(c + 1) - x0) * slope, colour);
        }
        column = next;
        const double entry = y0 + (double(next) - x0) * slope;
        lo = std::min(entry, y1);
        hi = std::max(entry, y1);
    }
    span(column, lo, hi, colour);
}

} // namespace ty
