#pragma once

#include "MetricBlock.h"

#include <QtGlobal>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ty {

// One metric series' points (step, wall time, value) held packed, for a
// series that keeps growing while it is shown (the GUI following a run,
// issue #27): the same columns as a stored block (MetricBlock.h: step,
// wall_ms, value; no arrival ids, no epochs), compressed per chunk of
// kChunkPoints points so a 24-hour run at 1,000 points/s (86.4 M points)
// fits in a few hundred MB instead of the ~8 GB of plain double columns.
// MetricBlock's own encoding is 24 bytes a point for these three columns
// (32 with the ids), i.e. 2 GB at 86.4 M points: too much for that goal,
// hence the compression below. A stored block folds straight in
// (appendBlock), so a series read from the store and its live points are one
// column.
//
// Chunk encoding (every chunk but the newest, the open "tail", which stays
// plain until it holds kChunkPoints): per column (steps, wall times,
// values), one of
//   raw:      the 64-bit patterns as they are (8 bytes a point);
//   decimal:  every value v of the chunk is exactly k / 10^p for one p in
//             0..18 and integers |k| < 2^53 (k / 10^p correctly rounded, as
//             the C library's strtod reads the decimal text a trainer
//             prints: "0.31415" is 31415 / 10^5 bit for bit); the k are
//             stored as their first value and the zigzag first (order 1)
//             or second (order 2) differences, bit-packed at the chunk's
//             widest difference. Steps 1, 2, 3 ... cost 0 bits a point.
// Every value is checked to decode to its exact bit pattern before a
// decimal column is kept (NaN, +-inf and -0.0 make the column raw), so the
// series returns exactly the doubles appended, whatever they are.
//
// Each sealed chunk has a summary (first and last point, the first
// occurrence of its smallest and largest value, which columns are all
// finite): decimation (ui/charts/PackedM4) takes a chunk that falls inside
// one pixel column from it without decoding the chunk.
//
// Memory: the encoded chunks live in pages (the first kFirstPageBytes, each
// next twice the last, up to kPageBytes, so a short series stays small),
// never moved once written; summaries in fixed blocks of 256 (arrays
// a decimation pass streams through, unlike std::deque's 512-byte nodes). So an append is O(1) amortised and
// never copies what the series already holds (no vector doubling: the GUI
// thread never stalls on a big copy). bytes() says what the series holds.
//
// Order: the points are kept in the order appended; stepsNonDecreasing()
// and wallsNonDecreasing() say whether steps / wall times never went down
// (and were never NaN), which a chart needs to draw x = step / time.
//
// Thread: not synchronised. Reads (const members) from several threads are
// safe while nobody appends; chunk() decodes into the caller's buffer.
class PackedMetricSeries {
public:
    static constexpr int kChunkPoints = 256;
    static constexpr std::size_t kFirstPageBytes = 4 * 1024;
    static constexpr std::size_t kPageBytes = 256 * 1024;

    struct Point {
        double step = 0.0;
        double wallMs = 0.0; // ms since the Unix epoch, UTC (NaN when unknown)
        double value = 0.0;
    };
    // Which columns chunk() decodes (a bit mask).
    static constexpr unsigned kSteps = 1, kWalls = 2, kValues = 4, kAllColumns = 7;
    // A chunk's points as plain columns (the caller's buffer, reused).
    struct Chunk {
        qsizetype index = -1; // which chunk it holds (-1: none)
        unsigned columns = 0; // which of its columns (the others are stale)
        int count = 0;
        std::array<double, kChunkPoints> step, wallMs, value;
        Point point(int i) const { return {step[std::size_t(i)], wallMs[std::size_t(i)], value[std::size_t(i)]}; }
    };
    struct Summary {
        Point first, last;
        Point min, max;           // valid when finiteValues
        quint16 iMin = 0;         // index in the chunk of min (first occurrence)
        quint16 iMax = 0;         // and of max
        quint16 count = 0;        // points in the chunk
        bool finiteValues = true; // no NaN or +-inf value
        bool finiteSteps = true;
        bool finiteWalls = true;
    };

    PackedMetricSeries() = default;
    PackedMetricSeries(const PackedMetricSeries&) = delete;
    PackedMetricSeries& operator=(const PackedMetricSeries&) = delete;

    void append(double step, double wallMs, double value);
    // The first `n` points of a stored block (its live ones), steps and wall
    // times converted to double as MetricBlockView::appendSteps does.
    void appendBlock(const MetricBlockView& block, int n);
    void clear();

    qsizetype size() const { return qsizetype(m_summaries.size()) * kChunkPoints + m_tail.count; }
    bool isEmpty() const { return size() == 0; }
    // Chunks: the sealed ones, then the tail when it holds points.
    qsizetype chunkCount() const { return qsizetype(m_summaries.size()) + (m_tail.count > 0 ? 1 : 0); }
    // Chunk c holds points [c * kChunkPoints, c * kChunkPoints + its count).
    const Summary& summary(qsizetype c) const
    {
        return c < qsizetype(m_summaries.size()) ? m_summaries[std::size_t(c)] : m_tailSummary;
    }
    // Chunk c's points: the `columns` asked for decoded into `buf` (nothing
    // done when it holds them already), or the tail itself.
    const Chunk& chunk(qsizetype c, Chunk& buf, unsigned columns = kAllColumns) const;
    Point at(qsizetype i, Chunk& buf) const;
    Point last() const { return m_tailSummary.count > 0 ? m_tailSummary.last : m_summaries.back().last; }
    // Points [from, to) appended to the given columns (null: not wanted).
    void decode(qsizetype from, qsizetype to, std::vector<double>* steps, std::vector<double>* wallMs,
            std::vector<double>* values) const;
    // The first index whose step is >= s (size() if none); needs
    // stepsNonDecreasing().
    qsizetype lowerBoundStep(double s) const;

    bool stepsNonDecreasing() const { return m_stepsSorted; }
    bool wallsNonDecreasing() const { return m_wallsSorted; }
    // No step / wall time is NaN or +-inf.
    bool stepsFinite() const { return m_stepsFinite; }
    bool wallsFinite() const { return m_wallsFinite; }
    // Bytes held: pages, summaries, the tail (not the allocator's overhead).
    std::size_t bytes() const;

private:
    void seal();
    void encodeColumn(const std::array<double, kChunkPoints>& column, std::vector<unsigned char>& out) const;
    struct Where {
        quint32 page = 0, offset = 0, size = 0;
    };
    // Append-only storage in blocks that never move (no reallocation copy).
    template <typename T> class Blocks {
    public:
        static constexpr std::size_t kPerBlock = 256;
        void push_back(const T& v)
        {
            if (m_size % kPerBlock == 0)
                m_blocks.push_back(std::make_unique<T[]>(kPerBlock));
            m_blocks.back()[m_size % kPerBlock] = v;
            ++m_size;
        }
        const T& operator[](std::size_t i) const { return m_blocks[i / kPerBlock][i % kPerBlock]; }
        const T& back() const { return (*this)[m_size - 1]; }
        std::size_t size() const { return m_size; }
        std::size_t capacity() const { return m_blocks.size() * kPerBlock; }
        void clear()
        {
            m_blocks.clear();
            m_size = 0;
        }

    private:
        std::vector<std::unique_ptr<T[]>> m_blocks;
        std::size_t m_size = 0;
    };

    Chunk m_tail;
    Summary m_tailSummary;
    Blocks<Summary> m_summaries;
    Blocks<Where> m_where;
    std::vector<std::unique_ptr<unsigned char[]>> m_pages;
    std::size_t m_pageSize = 0;  // of m_pages.back()
    std::size_t m_pageUsed = 0;  // of m_pages.back()
    std::size_t m_pageBytes = 0; // all pages
    bool m_stepsSorted = true, m_wallsSorted = true, m_stepsFinite = true, m_wallsFinite = true;
    double m_lastStep = 0.0, m_lastWall = 0.0;
    std::vector<unsigned char> m_scratch; // seal()'s encoding buffer
};

} // namespace ty
