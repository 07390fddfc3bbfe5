#pragma once

#include "SeriesData.h"

#include <QList>
#include <QPointF>

#include <span>

namespace ty {

// Where a series is drawn: the visible x range [xMin, xMax] (axis units)
// maps linearly onto device pixels [pixelLeft, pixelLeft + pixelWidth) of the
// target, the way Qt Charts maps an axis range onto QChart::plotArea(). A
// point falls in pixel column floor(pixelLeft + (x - xMin) * pixelWidth /
// (xMax - xMin)). pixelLeft may be fractional (the plot area's left edge).
struct M4Viewport {
    double xMin = 0.0;
    double xMax = 1.0;
    double pixelLeft = 0.0;
    double pixelWidth = 1.0; // > 0
};

// The drawable sample of one series for one viewport.
struct M4Result {
    // Runs of consecutive finite points, each drawn as one polyline; never
    // empty lists. Across all segments at most 4 points per pixel column plus
    // one point on each side of the visible range (so lines that leave the
    // plot are drawn with their true slope).
    QList<QList<QPointF>> segments;
    // Non-finite y values inside [xMin, xMax], at most one per pixel column
    // and kind (drawn as markers, never as a line to a huge value).
    QList<SegmentedSeries::Gap> gaps;
    // Extent of the finite y values inside [xMin, xMax] (not the edge points
    // outside it); haveY is false when there is none.
    double yMin = 0.0;
    double yMax = 0.0;
    bool haveY = false;
    // Input points looked at (after the binary search on x), for diagnostics.
    qsizetype scanned = 0;

    qsizetype pointCount() const;
};

// M4 aggregation (Jugel, Jerzak, Hackenbroich, Markl: "M4: A Visualization-
// Oriented Time Series Data Aggregation", PVLDB 7(10), 2014): per pixel
// column keep the first, last, minimum and maximum point of the series, in
// input order. A polyline through that sample lights exactly the pixels of
// the polyline through all points when both are rasterised with the same
// transform and no antialiasing: inside one column every original segment
// lies between min and max (which the sample joins), and the lines between
// columns (last of one column to first of the next) are kept as they are.
// tests/ui/TestM4Decimator.cpp rasterises both and compares the pixels.
//
// Gaps: a non-finite y (NaN, +/-inf) ends a polyline; M4 runs on each run of
// finite points separately, so no line ever joins across a gap. Points with a
// non-finite x are skipped (there is nowhere to draw them).
//
// x must be sorted ascending (ties allowed; the step or time order the store
// returns); x.size() == y.size(). Cost: O(log n + points in range).
// A plain function: any thread.
M4Result decimateM4(std::span<const double> x, std::span<const double> y, const M4Viewport& viewport);

} // namespace ty
