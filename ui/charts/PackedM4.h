#pragma once

#include "M4Decimator.h"
#include "XAxisMap.h"
#include "core/store/PackedMetricSeries.h"

namespace ty {

// How a packed series' points map to chart x: the step, (wall - t0) / 1000
// seconds, or the wall time in ms, exactly as mapX() computes them (the
// epoch axis is not mapped from packed data: the chart gets plain columns
// there). directly(s) says whether x is then non-decreasing and finite over
// the whole series, which decimateM4Packed needs.
struct PackedXMap {
    XAxisMode mode = XAxisMode::Step;
    double t0Ms = 0.0;

    double operator()(double step, double wallMs) const
    {
        switch (mode) {
        case XAxisMode::RelativeTime: return (wallMs - t0Ms) / 1000.0;
        case XAxisMode::WallTime: return wallMs;
        default: return step;
        }
    }
    double operator()(const PackedMetricSeries::Point& p) const { return (*this)(p.step, p.wallMs); }
    bool directly(const PackedMetricSeries& s) const
    {
        switch (mode) {
        case XAxisMode::Step: return s.stepsNonDecreasing();
        case XAxisMode::RelativeTime:
        case XAxisMode::WallTime: return s.wallsNonDecreasing();
        case XAxisMode::Epoch: return false;
        }
        return false;
    }
};

// decimateM4 over points [from, to) of a packed series (x = map(step,
// wall), y = value), without unpacking it: the same M4Result, point for
// point, as decimateM4(x.subspan(from), y.subspan(from), vp) over the plain
// columns (tests/ui/TestPackedLiveSeries compares them). It walks pixel
// columns as decimateM4 does with an M4Index: a column's end by binary
// search (over the chunks' first points, then in one chunk), its min and
// max from the summaries of the whole chunks in it and a scan of the two
// partial ones (only the x and value columns decoded; the last two chunks
// kept); a column with a gap, and the edge points, through the point loop.
// Needs map.directly(series). Cost: O(columns x (log chunks + chunks per
// column) + decoded chunks x kChunkPoints). `to` < 0: the end. Any thread
// (reads only).
M4Result decimateM4Packed(const PackedMetricSeries& series, const PackedXMap& map, const M4Viewport& vp,
        qsizetype from = 0, qsizetype to = -1);

// indexAtOrBefore (HoverReadout.h) over a packed series' x: the last index
// with x <= at, -1 when none (or at is NaN). Needs map.directly(series).
qsizetype packedIndexAtOrBefore(const PackedMetricSeries& series, const PackedXMap& map, double at);

} // namespace ty
