#pragma once

#include <QImage>
#include <QPointF>
#include <QRgb>

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
class SpanRaster {
public:
    // `image` must be Format_ARGB32_Premultiplied or Format_ARGB32 and outlive this.
    explicit SpanRaster(QImage& image);

    // Draws the polyline through pts[0..n) (n >= 2; a single point draws
    // its pixel) in `colour` (an opaque premultiplied ARGB value).
    void drawPolyline(const QPointF* pts, qsizetype n, QRgb colour);
    // One segment (the polyline's building block).
    void drawLine(QPointF a, QPointF b, QRgb colour);

private:
    void span(qint64 column, double y0, double y1, QRgb colour);

    QRgb* m_bits = nullptr;
    qsizetype m_stride = 0; // in pixels
    int m_width = 0, m_height = 0;
};

} // namespace ty
