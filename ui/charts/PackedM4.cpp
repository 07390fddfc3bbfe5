#include "PackedM4.h"

#include "M4Sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ty {

namespace {

using Chunk = PackedMetricSeries::Chunk;
using Point = PackedMetricSeries::Point;
constexpr qsizetype K = PackedMetricSeries::kChunkPoints;

// The last two chunks decoded (x's column and the values): a pixel column's
// right edge and the next column's start share one.
class ChunkCache {
public:
    ChunkCache(const PackedMetricSeries& s, const PackedXMap& map)
        : m_s(s)
        , m_map(map)
        , m_mask((map.mode == XAxisMode::Step ? PackedMetricSeries::kSteps : PackedMetricSeries::kWalls)
                  | PackedMetricSeries::kValues)
    { }
    const Chunk& get(qsizetype c)
    {
        if (holds(m_buf[m_last], c))
            return m_buf[m_last];
        if (holds(m_buf[1 - m_last], c)) {
            m_last = 1 - m_last;
            return m_buf[m_last];
        }
        // Into the one used less recently (the tail is returned as it is).
        Chunk& victim = m_buf[1 - m_last];
        const Chunk& got = m_s.chunk(c, victim, m_mask);
        if (&got == &victim)
            m_last = 1 - m_last;
        return got;
    }
    // x of point k of a chunk (only its decoded columns are read).
    double x(const Chunk& ch, qsizetype k) const
    {
        return m_map.mode == XAxisMode::Step ? ch.step[std::size_t(k)] : m_map(0.0, ch.wallMs[std::size_t(k)]);
    }
    double x(qsizetype i) { return x(get(i / K), i % K); }
    double y(qsizetype i) { return get(i / K).value[std::size_t(i % K)]; }

private:
    const PackedMetricSeries& m_s;
    const PackedXMap& m_map;
    bool holds(const Chunk& buf, qsizetype c) const { return buf.index == c && (buf.columns & m_mask) == m_mask; }
    unsigned m_mask;
    Chunk m_buf[2];
    int m_last = 0;
};

// The first index in [from, to) whose x satisfies `pred` (to if none);
// pred goes from false to true along x (x non-decreasing): a binary search
// over the chunks' first points, then within one decoded chunk.
template <typename Pred>
qsizetype partitionPoint(
        const PackedMetricSeries& s, const PackedXMap& map, qsizetype from, qsizetype to, Pred pred, ChunkCache& cache)
{
    if (from >= to)
        return to;
    const qsizetype cFrom = from / K, cTo = (to - 1) / K + 1;
    qsizetype lo = cFrom + 1, hi = cTo;
    while (lo < hi) {
        const qsizetype mid = lo + (hi - lo) / 2;
        if (pred(map(s.summary(mid).first)))
            hi = mid;
        else
            lo = mid + 1;
    }
    const qsizetype c = lo - 1;
    const Chunk& ch = cache.get(c);
    const qsizetype base = c * K;
    qsizetype a = std::max(from, base) - base, b = std::min(to, base + ch.count) - base;
    while (a < b) {
        const qsizetype mid = a + (b - a) / 2;
        if (pred(cache.x(ch, mid)))
            b = mid;
        else
            a = mid + 1;
    }
    return a < ch.count ? base + a : std::min(to, base + K);
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
    ChunkCache cache(series, map);
    // As decimateM4: one point before the first visible one, one after the last.
    const qsizetype firstInside = partitionPoint(
            series, map, from, to, [&](double x) { return !(x < vp.xMin); }, cache);
    const qsizetype endInside = partitionPoint(
            series, map, firstInside, to, [&](double x) { return vp.xMax < x; }, cache);
    qsizetype begin = firstInside;
    qsizetype end = endInside;
    if (begin > from)
        --begin;
    if (end < to)
        ++end;
    out.scanned = end - begin;

    m4::Sampler sampler(out, vp, end - begin);
    using m4::Kept;
    const auto visit = [&](qsizetype i) { sampler.visit(i, cache.x(i), cache.y(i)); };
    const auto columnOf = [&](double xv) { return sampler.columnOf(xv); };

    const bool xFinite = map.mode == XAxisMode::Step ? series.stepsFinite() : series.wallsFinite();
    if (!xFinite) {
        // decimateM4 without its index: the point loop.
        for (qsizetype i = begin; i < end; ++i)
            visit(i);
        sampler.finish();
        return out;
    }

    // The point at index i as kept: from a chunk summary where it is a
    // chunk's first or last point, else decoded.
    const auto pointAt = [&](qsizetype i) {
        const qsizetype c = i / K;
        const PackedMetricSeries::Summary& s = series.summary(c);
        if (i == c * K)
            return Kept{i, map(s.first), s.first.value};
        if (i == c * K + s.count - 1)
            return Kept{i, map(s.last), s.last.value};
        return Kept{i, cache.x(i), cache.y(i)};
    };
    // The first minimum and maximum of the values in [i, j): whole chunks
    // from their summaries, the partial ones at either end decoded. False
    // when a value there is not finite.
    const auto rangeMinMax = [&](qsizetype i, qsizetype j, Kept& mn, Kept& mx) {
        bool have = false;
        qsizetype at = i;
        while (at < j) {
            const qsizetype c = at / K, base = c * K;
            const PackedMetricSeries::Summary& s = series.summary(c);
            const qsizetype chunkEnd = base + s.count;
            if (at == base && chunkEnd <= j) {
                if (!s.finiteValues)
                    return false;
                if (!have || s.min.value < mn.y)
                    mn = Kept{base + s.iMin, map(s.min), s.min.value};
                if (!have || s.max.value > mx.y)
                    mx = Kept{base + s.iMax, map(s.max), s.max.value};
                have = true;
                at = chunkEnd;
                continue;
            }
            const Chunk& ch = cache.get(c);
            const qsizetype stop = std::min(j, chunkEnd);
            for (; at < stop; ++at) {
                const double v = ch.value[std::size_t(at - base)];
                if (!(v - v == 0.0))
                    return false;
                if (!have || v < mn.y)
                    mn = Kept{at, cache.x(ch, at - base), v};
                if (!have || v > mx.y)
                    mx = Kept{at, cache.x(ch, at - base), v};
                have = true;
            }
        }
        return have;
    };

    // decimateM4's walk with its index: pixel column by pixel column; a
    // column of finite points inside [xMin, xMax] is its first, min, max
    // and last point; any other (gaps, the edge points) goes through the
    // point loop.
    qsizetype i = begin;
    while (i < end) {
        const qint64 col = columnOf(cache.x(i));
        // The first index in (i, end] past the column's right edge in x,
        // settled with the column formula itself (as decimateM4's columnEnd).
        const double edge = sampler.columnEdge(col);
        qsizetype j = partitionPoint(
                series, map, i + 1, end, [&](double x) { return x >= edge; }, cache);
        while (j > i + 1 && columnOf(cache.x(j - 1)) > col)
            --j;
        while (j < end && columnOf(cache.x(j)) <= col)
            ++j;
        Kept mn, mx;
        if (i < firstInside || j > endInside || !rangeMinMax(i, j, mn, mx)) {
            for (qsizetype k = i; k < j; ++k)
                visit(k);
        } else {
            sampler.column(pointAt(i), mn, mx, pointAt(j - 1));
        }
        i = j;
    }
    sampler.finish();
    return out;
}

qsizetype packedIndexAtOrBefore(const PackedMetricSeries& series, const PackedXMap& map, double at)
{
    if (series.isEmpty() || std::isnan(at))
        return -1;
    ChunkCache cache(series, map);
    return partitionPoint(
                   series, map, 0, series.size(), [&](double x) { return at < x; }, cache)
            - 1;
}

} // namespace ty
