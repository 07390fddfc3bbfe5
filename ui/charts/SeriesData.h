#pragma once

#include <QList>
#include <QPointF>

#include <limits>

namespace ty {

// Plain series data, the only thing the chart classes are fed with (they know
// nothing of runs or the database, so swapping Qt Charts for Qt Graphs stays
// inside ui/charts). x is whatever the caller chose as the x axis (step today;
// epoch or time later); y may be NaN or +/-inf. wallMs: the point's wall
// time, ms since the Unix epoch (UTC), NaN when not known (needed only for
// the time axes of the Metrics tab).
struct SeriesPoint {
    double x = 0.0;
    double y = 0.0;
    double wallMs = std::numeric_limits<double>::quiet_NaN();
};

// A series cut at its non-finite values: each segment is a run of
// consecutive finite points (drawn as one line), each gap a non-finite value
// (drawn as a marker, never as a line to a huge value).
struct SegmentedSeries {
    enum class GapKind { NaN, PosInf, NegInf };
    struct Gap {
        double x = 0.0;
        GapKind kind = GapKind::NaN;
    };
    QList<QList<QPointF>> segments; // non-empty lists, in input order
    QList<Gap> gaps;

    // Splits `points` (in the order given). Consecutive non-finite values
    // each give a gap; segments are never empty.
    static SegmentedSeries split(const QList<SeriesPoint>& points);
};

} // namespace ty
