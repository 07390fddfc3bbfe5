#pragma once

#include <QImage>
#include <QPointF>
#include <QRgb>

#include <span>

namespace ty {

// Draws 1-pixel aliased polylines straight into a QImage, for charts of many
// series where QPainter's cosmetic line stroker (~50 ns a point, measured in
// tests/bench/bench_compare) is most of a repaint.
//
// The rule ("column spans"): pixel (c, r) covers [c, c+1) x [r, r+1) in image
// coordinates. A line segment lights, in every pixel column c it crosses,
// the rows from floor(y) to floor(y') where y and y' are the line's heights
// where it enters and leaves that column (at its end points inside the
// column). So a segment inside one column lights exactly the rows between its
// ends, and a polyline lights a connected set of pixels.
//
// Why this rule: with it, the M4 sample (M4Decimator.h) gives exactly the
// picture of all points, with no tolerance: inside a pixel column the
// polyline through all points and the one through first/min/max/last both
// light the rows from floor(min) to floor(max) (each is a path through min
// and max that stays between them), and the lines between columns are the
// same two points in both. tests/ui/TestSpanRaster.cpp checks it pixel for
// pixel and checks the rule against Qt's cosmetic stroker (every pixel
// within one pixel of Qt's ink).
//
// Colour: written as is (no blending): for opaque pens. Coordinates may lie
// far outside the image (clipped per column and row; keep |x| below ~1e9).
// Thread: any; one image per thread.
//
// Memory layout: a QImage (row-major), or a column-major buffer, where a
// span is consecutive memory: charts of many noisy series write spans of
// tens of pixels in every column, and row-major that is one cache line a
// pixel (tests/bench/bench_decimate measures both). composeColumnMajor()
// turns column-major layers into one row-major image.
class SpanRaster {
public:
    // `image` must be Format_ARGB32_Premultiplied or Format_ARGB32 and outlive this.
    explicit SpanRaster(QImage& image);
    // A column-major buffer of width x height pixels: pixel (c, r) at
    // pixels[c * height + r]; must outlive this.
    SpanRaster(QRgb* pixels, int width, int height);

    // Composes columns [firstColumn, endColumn) of column-major layers
    // (each out.width() x height, laid out as the constructor above takes)
    // into the same columns of `out` (row-major, Format_ARGB32_Premultiplied
    // or Format_ARGB32, out.height() == height): each pixel is the last
    // layer's pixel that is not 0 (transparent), else 0. With opaque colours
    // that is painting the layers in order. Disjoint column ranges may be
    // composed by different threads at once.
    static void composeColumnMajor(
            std::span<const QRgb* const> layers, int height, QImage& out, int firstColumn, int endColumn);
    // The same into raw row-major pixels: out[r * stride + c], `width`
    // columns. For threads sharing one image: take its bits() once, on one
    // thread (QImage::bits() checks for a detach and writes the image's
    // header every time it is called).
    static void composeColumnMajor(std::span<const QRgb* const> layers, int height, QRgb* out, qsizetype stride,
            int width, int firstColumn, int endColumn);

    // Only columns [from, to) are drawn from now on (default: all); a
    // thread can draw its own columns of a shared buffer.
    void setColumnClip(int from, int to);

    // Draws the polyline through pts[0..n) (n >= 2; a single point draws
    // its pixel) in `colour` (an opaque premultiplied ARGB value).
    void drawPolyline(const QPointF* pts, qsizetype n, QRgb colour);
    // One segment (the polyline's building block).
    void drawLine(QPointF a, QPointF b, QRgb colour);

private:
    void span(qint64 column, double y0, double y1, QRgb colour);

    QRgb* m_bits = nullptr;
    qsizetype m_rowStep = 0;    // pixels from (c, r) to (c, r + 1)
    qsizetype m_columnStep = 0; // pixels from (c, r) to (c + 1, r)
    int m_width = 0, m_height = 0;
    int m_clipFrom = 0, m_clipTo = 0; // columns drawn: [m_clipFrom, m_clipTo)
};

} // namespace ty
