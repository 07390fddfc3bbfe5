#include "M4Decimator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ty {

qsizetype M4Result::pointCount() const
{
    qsizetype n = 0;
    for (const QList<QPointF>& s : segments)
        n += s.size();
    return n;
}

namespace {

// The column being aggregated for the current run of finite points.
struct Bucket {
    qint64 column = 0;
    qsizetype first = -1, last = -1, min = -1, max = -1;
    bool open() const { return first >= 0; }
};

} // namespace

M4Result decimateM4(std::span<const double> x, std::span<const double> y, const M4Viewport& vp)
{
    M4Result out;
    const qsizetype n = qsizetype(std::min(x.size(), y.size()));
    if (n == 0 || !(vp.xMax > vp.xMin) || !(vp.pixelWidth > 0))
        return out;

    // Points before xMin and after xMax matter only for the line into and
    // out of the visible range: start one point before the first visible one
    // and stop one point after the last visible one.
    const auto lo = std::lower_bound(x.begin(), x.begin() + n, vp.xMin);
    const auto hi = std::upper_bound(lo, x.begin() + n, vp.xMax);
    qsizetype begin = qsizetype(lo - x.begin());
    qsizetype end = qsizetype(hi - x.begin());
    if (begin > 0)
        --begin;
    if (end < n)
        ++end;
    out.scanned = end - begin;

    const double scale = vp.pixelWidth / (vp.xMax - vp.xMin);
    const auto columnOf = [&](double xv) -> qint64 {
        const double c = std::floor(vp.pixelLeft + (xv - vp.xMin) * scale);
        // Far outside the plot: clamp (only the edge points get there).
        return qint64(std::clamp(c, -1e15, 1e15));
    };

    Bucket b;
    bool segmentOpen = false;
    const auto flush = [&] {
        if (!b.open())
            return;
        qsizetype idx[4] = {b.first, b.min, b.max, b.last};
        std::sort(std::begin(idx), std::end(idx));
        QList<QPointF>& seg = out.segments.last();
        for (int k = 0; k < 4; ++k) {
            if (k > 0 && idx[k] == idx[k - 1])
                continue;
            seg.append(QPointF(x[idx[k]], y[idx[k]]));
        }
        b = Bucket{};
    };

    qint64 lastGapColumn = std::numeric_limits<qint64>::min();
    unsigned lastGapKinds = 0;
    for (qsizetype i = begin; i < end; ++i) {
        const double xv = x[i];
        const double yv = y[i];
        if (!std::isfinite(xv))
            continue;
        const bool inside = xv >= vp.xMin && xv <= vp.xMax;
        if (!std::isfinite(yv)) {
            flush();
            segmentOpen = false;
            if (inside) {
                const auto kind = std::isnan(yv) ? SegmentedSeries::GapKind::NaN
                                                 : (yv > 0 ? SegmentedSeries::GapKind::PosInf
                                                           : SegmentedSeries::GapKind::NegInf);
                const qint64 col = columnOf(xv);
                const unsigned bit = 1u << unsigned(kind);
                if (col != lastGapColumn) {
                    lastGapColumn = col;
                    lastGapKinds = 0;
                }
                if (!(lastGapKinds & bit)) {
                    lastGapKinds |= bit;
                    out.gaps.append(SegmentedSeries::Gap{xv, kind});
                }
            }
            continue;
        }
        if (inside) {
            out.yMin = out.haveY ? std::min(out.yMin, yv) : yv;
            out.yMax = out.haveY ? std::max(out.yMax, yv) : yv;
            out.haveY = true;
        }
        if (!segmentOpen) {
            out.segments.append(QList<QPointF>());
            segmentOpen = true;
        }
        const qint64 col = columnOf(xv);
        if (b.open() && col != b.column)
            flush();
        if (!b.open()) {
            b.column = col;
            b.first = b.last = b.min = b.max = i;
            continue;
        }
        b.last = i;
        if (yv < y[b.min])
            b.min = i;
        if (yv > y[b.max])
            b.max = i;
    }
    flush();
    return out;
}

} // namespace ty
