#include "SeriesData.h"

#include <cmath>

namespace ty {

SegmentedSeries SegmentedSeries::split(const QList<SeriesPoint>& points)
{
    SegmentedSeries out;
    bool open = false;
    for (const SeriesPoint& p : points) {
        if (std::isfinite(p.y) && std::isfinite(p.x)) {
            if (!open) {
                out.segments.append(QList<QPointF>());
                open = true;
            }
            out.segments.last().append(QPointF(p.x, p.y));
            continue;
        }
        open = false;
        if (!std::isfinite(p.x))
            continue; // no place to draw it
        const GapKind kind = std::isnan(p.y) ? GapKind::NaN : (p.y > 0 ? GapKind::PosInf : GapKind::NegInf);
        out.gaps.append(Gap{p.x, kind});
    }
    return out;
}

} // namespace ty
