#include "PackedM4.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ty {

namespace {

using Chunk = PackedMetricSeries::Chunk;
constexpr qsizetype K = PackedMetricSeries::kChunkPoints;

// The first index in [from, to) whose x satisfies `pred` (to if none);
// pred goes from false to true along x (x non-decreasing): a binary search
// over the chunks' first points, then a scan of one decoded chunk.
template <typename Pred>
qsizetype partitionPoint(
        const PackedMetricSeries& s, const PackedXMap& map, qsizetype from, qsizetype to, Pred pred, Chunk& buf)
{
    if (from >= to)
        return to;
    const qsizetype cFrom = from / K, cTo = (to - 1) / K + 1;
    // The first chunk after cFrom whose first point satisfies pred.
    qsizetype lo = cFrom + 1, hi = cTo;
    while (lo < hi) {
        const qsizetype mid = lo + (hi - lo) / 2;
        if (pred(map(s.summary(mid).first)))
            hi = mid;
        else
            lo = mid + 1;
    }
    const qsizetype c = lo - 1;
    const Chunk& ch = s.chunk(c, buf);
    const qsizetype base = c * K;
    const qsizetype stop = std::min(to, base + ch.count);
    for (qsizetype i = std::max(from, base); i < stop; ++i)
        if (pred(map(ch.step[std::size_t(i - base)], ch.wallMs[std::size_t(i - base)])))
            return i;
    return std::min(to, base + K);
}

} // namespace

M4Result decimateM4Packed(
        const PackedMetricSeries& series, const PackedXMap& map, const M4Viewport& vp, qsizetype from, qsizetype to)
{
    M4Result out;
    if (to < 0 || to > series.size())
        to = series.size();
    from = std::max<qsizetype>(0, from);
    if (from >= to || !(vp.xMax > vp.xMin) || !(vp.pixelWidth > 0))
        return out;
    Chunk buf;
    // As decimateM4: one point before the first visible one, one after the last.
    const qsizetype firstInside = partitionPoint(
            series, map, from, to, [&](double x) { return !(x < vp.xMin); }, buf);
    const qsizetype endInside = partitionPoint(
            series, map, firstInside, to, [&](double x) { return vp.xMax < x; }, buf);
    qsizetype begin = firstInside;
    qsizetype end = endInside;
    if (begin > from)
        --begin;
    if (end < to)
        ++end;
    out.scanned = end - begin;

    const double scale = vp.pixelWidth / (vp.xMax - vp.xMin);
    const auto columnOf = [&](double xv) -> qint64 {
        const double c = std::clamp(vp.pixelLeft + (xv - vp.xMin) * scale, -1e15, 1e15);
        const auto t = qint64(c);
        return double(t) > c ? t - 1 : t;
    };

    // decimateM4's bucket, holding the points it keeps rather than indexes
    // into plain columns.
    struct Kept {
        qsizetype i = -1;
        double x = 0.0, y = 0.0;
    };
    struct Bucket {
        qint64 column = 0;
        Kept first, last, min, max;
        bool open() const { return first.i >= 0; }
    } b;
    bool segmentOpen = false;
    const qsizetype capacity = std::min<qsizetype>(end - begin, 4 * (qsizetype(vp.pixelWidth) + 2) + 2);
    const auto openSegment = [&] {
        out.segments.append(QList<QPointF>());
        if (out.segments.size() == 1)
            out.segments.last().reserve(capacity);
        segmentOpen = true;
    };
    const auto flush = [&] {
        if (!b.open())
            return;
        const bool minFirst = b.min.i <= b.max.i;
        const Kept order[4] = {b.first, minFirst ? b.min : b.max, minFirst ? b.max : b.min, b.last};
        QList<QPointF>& seg = out.segments.last();
        for (int k = 0; k < 4; ++k) {
            if (k > 0 && order[k].i == order[k - 1].i)
                continue;
            seg.append(QPointF(order[k].x, order[k].y));
        }
        b = Bucket{};
    };
    const auto extendY = [&](double yv) {
        out.yMin = out.haveY ? std::min(out.yMin, yv) : yv;
        out.yMax = out.haveY ? std::max(out.yMax, yv) : yv;
        out.haveY = true;
    };
    qint64 lastGapColumn = std::numeric_limits<qint64>::min();
    unsigned lastGapKinds = 0;
    // decimateM4's visit(), point by point.
    const auto visit = [&](qsizetype i, double xv, double yv) {
        if (!std::isfinite(xv))
            return;
        const bool inside = xv >= vp.xMin && xv <= vp.xMax;
        if (!std::isfinite(yv)) {
            flush();
            segmentOpen = false;
            if (inside) {
                const auto kind = std::isnan(yv)
                        ? SegmentedSeries::GapKind::NaN
                        : (yv > 0 ? SegmentedSeries::GapKind::PosInf : SegmentedSeries::GapKind::NegInf);
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
            return;
        }
        if (inside)
            extendY(yv);
        if (!segmentOpen)
            openSegment();
        const qint64 col = columnOf(xv);
        if (b.open() && col != b.column)
            flush();
        const Kept p{i, xv, yv};
        if (!b.open()) {
            b.column = col;
            b.first = b.last = b.min = b.max = p;
            return;
        }
        b.last = p;
        if (yv < b.min.y)
            b.min = p;
        if (yv > b.max.y)
            b.max = p;
    };

    const bool stepX = map.mode == XAxisMode::Step;
    qsizetype i = begin;
    while (i < end) {
        const qsizetype c = i / K;
        const qsizetype base = c * K;
        const PackedMetricSeries::Summary& s = series.summary(c);
        const qsizetype chunkEnd = base + s.count;
        if (i == base && chunkEnd <= endInside && base >= firstInside && s.finiteValues
                && (stepX ? s.finiteSteps : s.finiteWalls)) {
            const double x0 = map(s.first), x1 = map(s.last);
            if (columnOf(x0) == columnOf(x1)) {
                // One pixel column, every point inside and finite: what the
                // point loop keeps of it is its first, min, max and last.
                const bool minFirst = s.iMin <= s.iMax;
                const PackedMetricSeries::Point& a = minFirst ? s.min : s.max;
                const PackedMetricSeries::Point& z = minFirst ? s.max : s.min;
                visit(base, x0, s.first.value);
                visit(base + (minFirst ? s.iMin : s.iMax), map(a), a.value);
                visit(base + (minFirst ? s.iMax : s.iMin), map(z), z.value);
                visit(chunkEnd - 1, x1, s.last.value);
                i = chunkEnd;
                continue;
            }
        }
        const Chunk& ch = series.chunk(c, buf);
        const qsizetype stop = std::min(end, chunkEnd);
        for (; i < stop; ++i) {
            const auto k = std::size_t(i - base);
            visit(i, map(ch.step[k], ch.wallMs[k]), ch.value[k]);
        }
    }
    flush();
    return out;
}

qsizetype packedIndexAtOrBefore(const PackedMetricSeries& series, const PackedXMap& map, double at)
{
    if (series.isEmpty() || std::isnan(at))
        return -1;
    Chunk buf;
    return partitionPoint(
                   series, map, 0, series.size(), [&](double x) { return at < x; }, buf)
            - 1;
}

} // namespace ty
