#pragma once

#include "SeriesData.h"

#include <QList>
#include <QPointF>

#include <cstdint>
#include <span>
#include <vector>

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
    // Input points in the drawn range (the visible ones and the two edge
    // points), for diagnostics.
    qsizetype scanned = 0;

    qsizetype pointCount() const;
};

// A min/max summary of one series (x, y) over blocks of kFanout,
// kFanout^2, ... points, so decimateM4 finds the minimum and maximum y of a
// pixel column of k points in O(kFanout * log(k)) instead of O(k): the
// usual "sparse decomposition" of a range into whole blocks of a B-ary tree
// plus at most kFanout - 1 loose points per level on each side.
// Memory: 24 bytes per kFanout points per level (~1.6 bytes a point).
// Blocks holding a non-finite x or y are marked: decimateM4 then looks at
// the column point by point (gaps must split the line exactly there).
// Built once, O(n), for data that no longer change (the chart rebuilds it
// when a series grows); immutable afterwards, so readable from any thread.
// Series of 2^32 points or more get no index (valid() is false).
class M4Index {
public:
    static constexpr int kFanoutBits = 4;
    static constexpr int kFanout = 1 << kFanoutBits;

    M4Index() = default;
    M4Index(std::span<const double> x, std::span<const double> y);

    // The number of points summarised (0: no index).
    qsizetype size() const { return m_size; }
    bool valid() const { return m_size > 0; }
    // Whether some x is non-finite (decimateM4 then ignores the index).
    bool hasNonFiniteX() const { return m_nonFiniteX; }

    // The first index of the minimum and of the maximum y in [a, b)
    // (0 <= a < b <= size(); y the data the index was built from). False
    // when [a, b) holds a non-finite x or y (iMin/iMax then undefined).
    bool minMax(std::span<const double> x, std::span<const double> y, qsizetype a, qsizetype b, qsizetype& iMin,
            qsizetype& iMax) const;

private:
    static constexpr std::uint32_t kDirty = 0xffffffffu; // iMin of a block with a non-finite value
    struct Node {
        double min = 0.0, max = 0.0;
        std::uint32_t iMin = kDirty, iMax = kDirty;
    };
    std::vector<std::vector<Node>> m_levels; // level L: blocks of kFanout^(L+1) points
    qsizetype m_size = 0;
    bool m_nonFiniteX = false;
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
// returns); x.size() == y.size(). Cost: O(log n + points in range); with
// `index` (built from exactly these x and y) O(columns x kFanout x log n),
// the same result. A plain function: any thread.
M4Result decimateM4(std::span<const double> x, std::span<const double> y, const M4Viewport& viewport,
        const M4Index* index = nullptr);

} // namespace ty
