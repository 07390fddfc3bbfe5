#include "M4Decimator.h"

#include "M4Sampler.h"

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

M4Index::M4Index(std::span<const double> x, std::span<const double> y)
{
    const qsizetype n = qsizetype(std::min(x.size(), y.size()));
    if (n == 0 || n >= qsizetype(kDirty))
        return;
    m_size = n;
    // Level 0 from the points.
    std::vector<Node> level(std::size_t((n + kFanout - 1) / kFanout));
    for (std::size_t blk = 0; blk < level.size(); ++blk) {
        const qsizetype a = qsizetype(blk) * kFanout;
        const qsizetype b = std::min(n, a + kFanout);
        Node node;
        node.iMin = node.iMax = std::uint32_t(a);
        node.min = node.max = y[a];
        bool dirty = false;
        for (qsizetype i = a; i < b; ++i) {
            const double v = y[i];
            if (!std::isfinite(v) || !std::isfinite(x[i])) {
                dirty = true;
                m_nonFiniteX = m_nonFiniteX || !std::isfinite(x[i]);
                continue;
            }
            if (v < node.min) {
                node.min = v;
                node.iMin = std::uint32_t(i);
            }
            if (v > node.max) {
                node.max = v;
                node.iMax = std::uint32_t(i);
            }
        }
        if (dirty)
            node.iMin = node.iMax = kDirty;
        level[blk] = node;
    }
    m_levels.push_back(std::move(level));
    // Higher levels from the one below, while a level has more than one block.
    while (m_levels.back().size() > 1) {
        const std::vector<Node>& below = m_levels.back();
        std::vector<Node> up((below.size() + kFanout - 1) / kFanout);
        for (std::size_t blk = 0; blk < up.size(); ++blk) {
            const std::size_t a = blk * kFanout;
            const std::size_t b = std::min(below.size(), a + kFanout);
            Node node = below[a];
            for (std::size_t k = a + 1; k < b && node.iMin != kDirty; ++k) {
                const Node& c = below[k];
                if (c.iMin == kDirty) {
                    node.iMin = node.iMax = kDirty;
                    break;
                }
                if (c.min < node.min) {
                    node.min = c.min;
                    node.iMin = c.iMin;
                }
                if (c.max > node.max) {
                    node.max = c.max;
                    node.iMax = c.iMax;
                }
            }
            up[blk] = node;
        }
        m_levels.push_back(std::move(up));
    }
}

bool M4Index::minMax(std::span<const double> x, std::span<const double> y, qsizetype a, qsizetype b, qsizetype& iMin,
        qsizetype& iMax) const
{
    // [a, b) = loose points on the left [a, la), whole level-0 blocks
    // [la, rb), loose points on the right [rb, b). The blocks go first: left
    // to right over the largest aligned blocks that fit (climbing to the
    // highest level an aligned block fits, then down again), strict
    // comparisons keeping the first occurrence. Then the loose points, each
    // side only where its level-0 block (which they are part of) could hold
    // a new minimum or maximum: most columns read none or one side of them,
    // and reading the points themselves is most of the cost (cache misses).
    // The left points come before every block: scanned right to left with
    // <=, so an equal value there wins and the leftmost one last. The right
    // ones come after: left to right with <. Same result as one scan.
    if (!(a < b))
        return false;
    const int levels = int(m_levels.size());
    // Points in a block of level lvl: kFanout^(lvl + 1).
    const auto shiftOf = [](int lvl) { return kFanoutBits * (lvl + 1); };
    double mn = std::numeric_limits<double>::infinity();
    double mx = -mn;
    const bool checkX = m_nonFiniteX;
    // v - v is 0 for finite v, NaN for NaN and +/-inf.
    const auto finite = [&](qsizetype i) {
        const double v = y[std::size_t(i)];
        return v - v == 0.0 && (!checkX || std::isfinite(x[std::size_t(i)]));
    };
    const qsizetype la = std::min(b, (a + kFanout - 1) & ~qsizetype(kFanout - 1));
    const qsizetype rb = std::max(la, b & ~qsizetype(kFanout - 1));
    if (la == rb) {
        // No whole block: one plain scan.
        for (qsizetype i = a; i < b; ++i) {
            if (!finite(i))
                return false;
            const double v = y[std::size_t(i)];
            if (v < mn) {
                mn = v;
                iMin = i;
            }
            if (v > mx) {
                mx = v;
                iMax = i;
            }
        }
        return true;
    }
    // Whole blocks of level lvl in [from, to) (from, to aligned to them).
    const auto take = [&](int lvl, qsizetype from, qsizetype to) {
        const std::vector<Node>& level = m_levels[std::size_t(lvl)];
        const int shift = shiftOf(lvl);
        for (qsizetype k = from >> shift, end = to >> shift; k < end; ++k) {
            const Node& node = level[std::size_t(k)];
            if (node.iMin == kDirty)
                return false;
            if (node.min < mn) {
                mn = node.min;
                iMin = node.iMin;
            }
            if (node.max > mx) {
                mx = node.max;
                iMax = node.iMax;
            }
        }
        return true;
    };
    qsizetype pos = la;
    int lvl = 0; // pos is aligned to level lvl's blocks
    while (lvl + 1 < levels) {
        const qsizetype up = qsizetype(1) << shiftOf(lvl + 1);
        const qsizetype next = (pos + up - 1) & ~(up - 1);
        if (next > rb)
            break;
        if (!take(lvl, pos, next))
            return false;
        pos = next;
        ++lvl;
    }
    for (; lvl >= 0 && pos < rb; --lvl) {
        const int shift = shiftOf(lvl);
        const qsizetype end = pos + (((rb - pos) >> shift) << shift);
        if (!take(lvl, pos, end))
            return false;
        pos = end;
    }
    const std::vector<Node>& level0 = m_levels.front();
    if (a < la) {
        const Node& block = level0[std::size_t(a >> kFanoutBits)];
        // A dirty block: its non-finite value may lie in the loose part.
        const bool dirty = block.iMin == kDirty;
        const bool wantMin = dirty || block.min <= mn;
        const bool wantMax = dirty || block.max >= mx;
        if (wantMin || wantMax) {
            for (qsizetype i = la - 1; i >= a; --i) {
                if (dirty && !finite(i))
                    return false;
                const double v = y[std::size_t(i)];
                if (wantMin && v <= mn) {
                    mn = v;
                    iMin = i;
                }
                if (wantMax && v >= mx) {
                    mx = v;
                    iMax = i;
                }
            }
        }
    }
    if (rb < b) {
        const Node& block = level0[std::size_t(rb >> kFanoutBits)];
        const bool dirty = block.iMin == kDirty;
        const bool wantMin = dirty || block.min < mn;
        const bool wantMax = dirty || block.max > mx;
        if (wantMin || wantMax) {
            for (qsizetype i = rb; i < b; ++i) {
                if (dirty && !finite(i))
                    return false;
                const double v = y[std::size_t(i)];
                if (wantMin && v < mn) {
                    mn = v;
                    iMin = i;
                }
                if (wantMax && v > mx) {
                    mx = v;
                    iMax = i;
                }
            }
        }
    }
    return true;
}

M4Result decimateM4(std::span<const double> x, std::span<const double> y, const M4Viewport& vp, const M4Index* index)
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
    const qsizetype firstInside = qsizetype(lo - x.begin());
    const qsizetype endInside = qsizetype(hi - x.begin());
    qsizetype begin = firstInside;
    qsizetype end = endInside;
    if (begin > 0)
        --begin;
    if (end < n)
        ++end;
    out.scanned = end - begin;

    m4::Sampler sampler(out, vp, end - begin);
    const auto visit = [&](qsizetype i) { sampler.visit(i, x[i], y[i]); };
    const auto columnOf = [&](double xv) { return sampler.columnOf(xv); };
    const auto at = [&](qsizetype i) { return m4::Kept{i, x[i], y[i]}; };

    if (!index || index->size() != n || index->hasNonFiniteX()) {
        for (qsizetype i = begin; i < end; ++i)
            visit(i);
        sampler.finish();
        return out;
    }

    // With the index: walk pixel column by pixel column. A column's end is
    // found by galloping on the column formula (x sorted, so it is
    // monotone); a column of finite points inside [xMin, xMax] takes its
    // min/max from the index (the same four points the point loop keeps);
    // any other column (gaps, the edge points) goes through the point loop.
    // `hint`: the previous column's width in points, where the search for
    // this column's end starts (columns of evenly spaced steps are alike).
    const auto columnEnd = [&](qsizetype i, qint64 col, qsizetype hint) {
        // Gallop from the hint to the column's right edge in x (plain
        // comparisons), then settle the points next to it with the column
        // formula itself, so rounding never puts a point in another column
        // than the loop would. Finds the first index in (i, end] with
        // x >= edge (end if none) in [lower, upper].
        const double edge = sampler.columnEdge(col);
        const qsizetype guess = std::min(end, i + std::max<qsizetype>(1, hint));
        qsizetype lower = i + 1, upper = end;
        if (guess < end && x[guess] >= edge) {
            upper = guess;
            for (qsizetype step = 1;; step *= 2) {
                const qsizetype probe = upper - step;
                if (probe <= i)
                    break;
                if (x[probe] < edge) {
                    lower = probe + 1;
                    break;
                }
                upper = probe;
            }
        } else if (guess < end) {
            lower = guess + 1;
            for (qsizetype step = 1;; step *= 2) {
                const qsizetype probe = guess + step;
                if (probe >= end)
                    break;
                if (x[probe] >= edge) {
                    upper = probe;
                    break;
                }
                lower = probe + 1;
            }
        } else {
            lower = end;
        }
        lower = qsizetype(std::lower_bound(x.begin() + lower, x.begin() + upper, edge) - x.begin());
        while (lower > i + 1 && columnOf(x[lower - 1]) > col)
            --lower;
        while (lower < end && columnOf(x[lower]) <= col)
            ++lower;
        return lower;
    };
    // A column's min and max: up to kScanLimit points read one by one (a
    // plain loop over consecutive values, which the memory system streams),
    // more through the index (a few of its blocks and up to 2 x kFanout
    // points). Measured with tests/bench/bench_decimate --frames: reading
    // is cheaper than the index's scattered reads up to ~40 points a column.
    constexpr qsizetype kScanLimit = 40;
    const auto columnMinMax = [&](qsizetype from, qsizetype to, qsizetype& iMin, qsizetype& iMax) {
        if (to - from > kScanLimit)
            return index->minMax(x, y, from, to, iMin, iMax);
        // Values first (two independent min/max chains, no branches; the
        // sum of v - v is NaN as soon as one v is not finite), then the
        // first index of each: the same points as a scan keeping the first.
        double mn0 = y[from], mx0 = mn0, mn1 = mn0, mx1 = mn0, bad0 = 0.0, bad1 = 0.0;
        qsizetype k = from + 1;
        for (; k + 1 < to; k += 2) {
            const double v = y[k], w = y[k + 1];
            mn0 = std::min(mn0, v);
            mx0 = std::max(mx0, v);
            mn1 = std::min(mn1, w);
            mx1 = std::max(mx1, w);
            bad0 += v - v;
            bad1 += w - w;
        }
        if (k < to) {
            const double v = y[k];
            mn0 = std::min(mn0, v);
            mx0 = std::max(mx0, v);
            bad0 += v - v;
        }
        if (!(bad0 + bad1 + (y[from] - y[from]) == 0.0))
            return false;
        const double mn = std::min(mn0, mn1), mx = std::max(mx0, mx1);
        iMin = from;
        while (y[iMin] != mn)
            ++iMin;
        iMax = from;
        while (y[iMax] != mx)
            ++iMax;
        return true;
    };
    qsizetype i = begin;
    qsizetype width = 1;
    while (i < end) {
        const qint64 col = columnOf(x[i]);
        const qsizetype j = columnEnd(i, col, width);
        width = j - i;
        qsizetype iMin = 0, iMax = 0;
        if (i < firstInside || j > endInside || !columnMinMax(i, j, iMin, iMax)) {
            for (qsizetype k = i; k < j; ++k)
                visit(k);
        } else {
            sampler.column(at(i), at(iMin), at(iMax), at(j - 1));
        }
        i = j;
    }
    sampler.finish();
    return out;
}

} // namespace ty
