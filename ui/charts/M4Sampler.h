#pragma once

// The definition of an M4 sample, point by point, shared by decimateM4
// (plain columns) and decimateM4Packed (a packed series): both must give the
// same points for the same series and viewport, so the rule lives here once.
// Private to ui/charts.
//
// Points are fed in x order, each with its index i and its x and y. A pixel
// column of finite points keeps its first, minimum, maximum and last point
// (the first of equal minima / maxima), in index order, each once; a
// non-finite y ends the segment and, inside [xMin, xMax], records a gap (one
// per kind per column); a non-finite x is skipped. y's range covers the
// finite points inside [xMin, xMax].
//
// Not thread-safe: one sample on one thread.

#include "M4Decimator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ty::m4 {

// A point kept for the sample: its index and values.
struct Kept {
    qsizetype i = -1;
    double x = 0.0, y = 0.0;
};

class Sampler {
public:
    // `points`: how many points will be fed at most (for the first
    // segment's reservation).
    Sampler(M4Result& out, const M4Viewport& vp, qsizetype points)
        : m_out(out)
        , m_vp(vp)
        , m_scale(vp.pixelWidth / (vp.xMax - vp.xMin))
        , m_capacity(std::min<qsizetype>(points, 4 * (qsizetype(vp.pixelWidth) + 2) + 2))
    { }

    // The pixel column of x: floor(pixelLeft + (x - xMin) * scale), clamped
    // far outside the plot (only edge points get there), exactly (|c| <=
    // 1e15 < 2^53) and without a libm call: it runs for every point, or a
    // few times per column with an index.
    qint64 columnOf(double xv) const
    {
        const double c = std::clamp(m_vp.pixelLeft + (xv - m_vp.xMin) * m_scale, -1e15, 1e15);
        const auto t = qint64(c);
        return double(t) > c ? t - 1 : t;
    }
    // The x where column `col` ends (its right edge).
    double columnEdge(qint64 col) const { return m_vp.xMin + (double(col + 1) - m_vp.pixelLeft) / m_scale; }

    // One point, in order.
    void visit(qsizetype i, double xv, double yv)
    {
        if (!std::isfinite(xv))
            return;
        const bool inside = xv >= m_vp.xMin && xv <= m_vp.xMax;
        if (!std::isfinite(yv)) {
            flush();
            m_segmentOpen = false;
            if (inside) {
                const auto kind = std::isnan(yv)
                        ? SegmentedSeries::GapKind::NaN
                        : (yv > 0 ? SegmentedSeries::GapKind::PosInf : SegmentedSeries::GapKind::NegInf);
                const qint64 col = columnOf(xv);
                const unsigned bit = 1u << unsigned(kind);
                if (col != m_lastGapColumn) {
                    m_lastGapColumn = col;
                    m_lastGapKinds = 0;
                }
                if (!(m_lastGapKinds & bit)) {
                    m_lastGapKinds |= bit;
                    m_out.gaps.append(SegmentedSeries::Gap{xv, kind});
                }
            }
            return;
        }
        if (inside)
            extendY(yv);
        if (!m_segmentOpen)
            openSegment();
        const qint64 col = columnOf(xv);
        if (m_b.open() && col != m_b.column)
            flush();
        const Kept p{i, xv, yv};
        if (!m_b.open()) {
            m_b.column = col;
            m_b.first = m_b.last = m_b.min = m_b.max = p;
            return;
        }
        m_b.last = p;
        if (yv < m_b.min.y)
            m_b.min = p;
        if (yv > m_b.max.y)
            m_b.max = p;
    }

    // A whole column of finite points inside [xMin, xMax] at once (found
    // with an index or summaries): what visiting each of them would keep.
    void column(const Kept& first, const Kept& min, const Kept& max, const Kept& last)
    {
        flush();
        if (!m_segmentOpen)
            openSegment();
        extendY(min.y);
        extendY(max.y);
        emitColumn(first, min, max, last);
    }

    // Ends the sample (the last column).
    void finish() { flush(); }

private:
    struct Bucket {
        qint64 column = 0;
        Kept first, last, min, max;
        bool open() const { return first.i >= 0; }
    };

    void openSegment()
    {
        m_out.segments.append(QList<QPointF>());
        if (m_out.segments.size() == 1)
            m_out.segments.last().reserve(m_capacity);
        m_segmentOpen = true;
    }
    // first <= min, max <= last by index: only min and max may be out of order.
    void emitColumn(const Kept& first, const Kept& min, const Kept& max, const Kept& last)
    {
        const bool minFirst = min.i <= max.i;
        const Kept* order[4] = {&first, minFirst ? &min : &max, minFirst ? &max : &min, &last};
        QList<QPointF>& seg = m_out.segments.last();
        for (int k = 0; k < 4; ++k) {
            if (k > 0 && order[k]->i == order[k - 1]->i)
                continue;
            seg.append(QPointF(order[k]->x, order[k]->y));
        }
    }
    void flush()
    {
        if (!m_b.open())
            return;
        emitColumn(m_b.first, m_b.min, m_b.max, m_b.last);
        m_b = Bucket{};
    }
    void extendY(double yv)
    {
        m_out.yMin = m_out.haveY ? std::min(m_out.yMin, yv) : yv;
        m_out.yMax = m_out.haveY ? std::max(m_out.yMax, yv) : yv;
        m_out.haveY = true;
    }

    M4Result& m_out;
    const M4Viewport& m_vp;
    const double m_scale;
    const qsizetype m_capacity;
    Bucket m_b;
    bool m_segmentOpen = false;
    qint64 m_lastGapColumn = std::numeric_limits<qint64>::min();
    unsigned m_lastGapKinds = 0;
};

} // namespace ty::m4
