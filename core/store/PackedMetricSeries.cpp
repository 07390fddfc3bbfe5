#include "PackedMetricSeries.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace ty {

namespace {

enum ColumnMode : unsigned char { kRaw = 0, kDecimal1 = 1, kDecimal2 = 2 };

// 10^p, exact in binary64 for p <= 22.
constexpr double kPow10[19]
        = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
constexpr int kMaxPower = 18;
constexpr double kMaxK = 9007199254740992.0; // 2^53

std::uint64_t bitsOf(double v)
{
    return std::bit_cast<std::uint64_t>(v);
}

// k with k / 10^p == v bit for bit, if there is one below 2^53.
bool decimalAt(double v, int p, std::int64_t& k)
{
    const double s = v * kPow10[p];
    if (!(std::abs(s) < kMaxK))
        return false; // also NaN and +-inf
    const auto ki = std::int64_t(std::nearbyint(s));
    if (bitsOf(double(ki) / kPow10[p]) != bitsOf(v))
        return false;
    k = ki;
    return true;
}

std::uint64_t zigzag(std::int64_t d)
{
    return (std::uint64_t(d) << 1) ^ std::uint64_t(d >> 63);
}

std::int64_t unzigzag(std::uint64_t z)
{
    return std::int64_t(z >> 1) ^ -std::int64_t(z & 1);
}

int widthOf(std::uint64_t v)
{
    return v == 0 ? 0 : 64 - std::countl_zero(v);
}

template <typename T> void put(std::vector<unsigned char>& out, T v)
{
    const std::size_t at = out.size();
    out.resize(at + sizeof v);
    std::memcpy(out.data() + at, &v, sizeof v);
}

template <typename T> T take(const unsigned char*& at)
{
    T v;
    std::memcpy(&v, at, sizeof v);
    at += sizeof v;
    return v;
}

// LSB-first bit packing of `width`-bit values (width 0..64).
class BitWriter {
public:
    explicit BitWriter(std::vector<unsigned char>& out)
        : m_out(out)
    { }
    void write(std::uint64_t v, int width)
    {
        if (width == 0)
            return;
        if (width > 32) {
            write(v & 0xffffffffu, 32);
            write(v >> 32, width - 32);
            return;
        }
        m_acc |= (v & ((std::uint64_t(1) << width) - 1)) << m_bits;
        m_bits += width;
        while (m_bits >= 8) {
            m_out.push_back(static_cast<unsigned char>(m_acc));
            m_acc >>= 8;
            m_bits -= 8;
        }
    }
    void finish()
    {
        if (m_bits > 0)
            m_out.push_back(static_cast<unsigned char>(m_acc));
        m_acc = 0;
        m_bits = 0;
    }

private:
    std::vector<unsigned char>& m_out;
    std::uint64_t m_acc = 0;
    int m_bits = 0;
};

class BitReader {
public:
    explicit BitReader(const unsigned char* at)
        : m_at(at)
    { }
    std::uint64_t read(int width)
    {
        if (width == 0)
            return 0;
        if (width > 32) {
            const std::uint64_t lo = read(32);
            return lo | (read(width - 32) << 32);
        }
        while (m_bits < width) {
            m_acc |= std::uint64_t(*m_at++) << m_bits;
            m_bits += 8;
        }
        const std::uint64_t v = m_acc & ((std::uint64_t(1) << width) - 1);
        m_acc >>= width;
        m_bits -= width;
        return v;
    }
    // Where the next column starts (the partial byte is skipped).
    const unsigned char* end() const { return m_at; }

private:
    const unsigned char* m_at;
    std::uint64_t m_acc = 0;
    int m_bits = 0;
};

// Decodes one column of `n` points written by encodeColumn; returns the
// byte after it.
const unsigned char* decodeColumn(const unsigned char* at, int n, double* out)
{
    const auto mode = take<unsigned char>(at);
    if (mode == kRaw) {
        std::memcpy(out, at, std::size_t(n) * sizeof(double));
        return at + std::size_t(n) * sizeof(double);
    }
    const int p = take<unsigned char>(at);
    const double scale = kPow10[p];
    auto k = take<std::int64_t>(at);
    out[0] = double(k) / scale;
    if (n == 1)
        return at;
    const int width = take<unsigned char>(at);
    BitReader bits(at);
    if (mode == kDecimal1) {
        for (int i = 1; i < n; ++i) {
            k = std::int64_t(std::uint64_t(k) + std::uint64_t(unzigzag(bits.read(width))));
            out[i] = double(k) / scale;
        }
    } else {
        auto d = take<std::int64_t>(at);
        BitReader dd(at);
        k = std::int64_t(std::uint64_t(k) + std::uint64_t(d));
        out[1] = double(k) / scale;
        for (int i = 2; i < n; ++i) {
            d = std::int64_t(std::uint64_t(d) + std::uint64_t(unzigzag(dd.read(width))));
            k = std::int64_t(std::uint64_t(k) + std::uint64_t(d));
            out[i] = double(k) / scale;
        }
        return dd.end();
    }
    return bits.end();
}

// The byte after a column of `n` points, without decoding it.
const unsigned char* skipColumn(const unsigned char* at, int n)
{
    const auto mode = take<unsigned char>(at);
    if (mode == kRaw)
        return at + std::size_t(n) * sizeof(double);
    at += 1 + sizeof(std::int64_t); // p, first k
    if (n == 1)
        return at;
    const int width = take<unsigned char>(at);
    int packed = n - 1;
    if (mode == kDecimal2) {
        at += sizeof(std::int64_t);
        packed = n - 2;
    }
    return at + (std::size_t(packed) * std::size_t(width) + 7) / 8;
}

} // namespace

void PackedMetricSeries::encodeColumn(
        const std::array<double, kChunkPoints>& column, std::vector<unsigned char>& out) const
{
    const int n = kChunkPoints;
    // The smallest power of ten that holds every value, then every value
    // checked at it (exact at p is exact at a larger p only while k stays
    // below 2^53, so the check is what decides).
    std::array<std::int64_t, kChunkPoints> k;
    int p = 0;
    bool decimal = true;
    for (int i = 0; i < n && decimal; ++i) {
        if (decimalAt(column[std::size_t(i)], p, k[std::size_t(i)]))
            continue;
        decimal = false;
        for (int q = p + 1; q <= kMaxPower; ++q)
            if (decimalAt(column[std::size_t(i)], q, k[std::size_t(i)])) {
                p = q;
                decimal = true;
                break;
            }
    }
    for (int i = 0; i < n && decimal; ++i)
        decimal = decimalAt(column[std::size_t(i)], p, k[std::size_t(i)]);
    if (!decimal) {
        put<unsigned char>(out, kRaw);
        const std::size_t at = out.size();
        out.resize(at + std::size_t(n) * sizeof(double));
        std::memcpy(out.data() + at, column.data(), std::size_t(n) * sizeof(double));
        return;
    }
    // First and second differences (wrapping: any k fits), zigzagged.
    std::uint64_t or1 = 0, or2 = 0;
    for (int i = 1; i < n; ++i) {
        const std::int64_t d = std::int64_t(std::uint64_t(k[std::size_t(i)]) - std::uint64_t(k[std::size_t(i - 1)]));
        or1 |= zigzag(d);
        if (i >= 2) {
            const std::int64_t e
                    = std::int64_t(std::uint64_t(k[std::size_t(i - 1)]) - std::uint64_t(k[std::size_t(i - 2)]));
            or2 |= zigzag(std::int64_t(std::uint64_t(d) - std::uint64_t(e)));
        }
    }
    const int w1 = widthOf(or1), w2 = widthOf(or2);
    // Order 2 stores the first difference in 8 bytes more.
    const bool second = (n - 2) * w2 + 64 < (n - 1) * w1;
    put<unsigned char>(out, second ? kDecimal2 : kDecimal1);
    put<unsigned char>(out, static_cast<unsigned char>(p));
    put<std::int64_t>(out, k[0]);
    put<unsigned char>(out, static_cast<unsigned char>(second ? w2 : w1));
    if (second) {
        put<std::int64_t>(out, std::int64_t(std::uint64_t(k[1]) - std::uint64_t(k[0])));
        BitWriter bits(out);
        for (int i = 2; i < n; ++i) {
            const std::int64_t d
                    = std::int64_t(std::uint64_t(k[std::size_t(i)]) - std::uint64_t(k[std::size_t(i - 1)]));
            const std::int64_t e
                    = std::int64_t(std::uint64_t(k[std::size_t(i - 1)]) - std::uint64_t(k[std::size_t(i - 2)]));
            bits.write(zigzag(std::int64_t(std::uint64_t(d) - std::uint64_t(e))), w2);
        }
        bits.finish();
    } else {
        BitWriter bits(out);
        for (int i = 1; i < n; ++i)
            bits.write(
                    zigzag(std::int64_t(std::uint64_t(k[std::size_t(i)]) - std::uint64_t(k[std::size_t(i - 1)]))), w1);
        bits.finish();
    }
}

void PackedMetricSeries::append(double step, double wallMs, double value)
{
    if (!isEmpty()) {
        m_stepsSorted = m_stepsSorted && step >= m_lastStep;
        m_wallsSorted = m_wallsSorted && wallMs >= m_lastWall;
    } else {
        m_stepsSorted = step == step;
        m_wallsSorted = wallMs == wallMs;
    }
    m_lastStep = step;
    m_lastWall = wallMs;
    m_stepsFinite = m_stepsFinite && std::isfinite(step);
    m_wallsFinite = m_wallsFinite && std::isfinite(wallMs);
    const int i = m_tail.count;
    m_tail.step[std::size_t(i)] = step;
    m_tail.wallMs[std::size_t(i)] = wallMs;
    m_tail.value[std::size_t(i)] = value;
    m_tail.count = i + 1;
    m_tail.index = qsizetype(m_summaries.size());
    m_tail.columns = kAllColumns;
    Summary& s = m_tailSummary;
    const Point p{step, wallMs, value};
    if (i == 0) {
        s = Summary{};
        s.first = s.min = s.max = p;
    }
    s.last = p;
    s.count = quint16(i + 1);
    s.finiteSteps = s.finiteSteps && std::isfinite(step);
    s.finiteWalls = s.finiteWalls && std::isfinite(wallMs);
    if (!std::isfinite(value))
        s.finiteValues = false;
    else if (s.finiteValues) {
        if (value < s.min.value) {
            s.min = p;
            s.iMin = quint16(i);
        }
        if (value > s.max.value) {
            s.max = p;
            s.iMax = quint16(i);
        }
    }
    if (m_tail.count == kChunkPoints)
        seal();
}

void PackedMetricSeries::appendBlock(const MetricBlockView& block, int n)
{
    n = std::clamp(n, 0, block.count());
    for (int i = 0; i < n; ++i)
        append(double(block.step(i)), double(block.wallMs(i)), block.value(i));
}

void PackedMetricSeries::seal()
{
    m_scratch.clear();
    encodeColumn(m_tail.step, m_scratch);
    encodeColumn(m_tail.wallMs, m_scratch);
    encodeColumn(m_tail.value, m_scratch);
    if (m_pages.empty() || m_pageUsed + m_scratch.size() > m_pageSize) {
        const std::size_t next = m_pages.empty() ? kFirstPageBytes : std::min(kPageBytes, 2 * m_pageSize);
        m_pageSize = std::max(next, m_scratch.size());
        m_pages.push_back(std::make_unique_for_overwrite<unsigned char[]>(m_pageSize));
        m_pageBytes += m_pageSize;
        m_pageUsed = 0;
    }
    std::memcpy(m_pages.back().get() + m_pageUsed, m_scratch.data(), m_scratch.size());
    m_where.push_back(Where{quint32(m_pages.size() - 1), quint32(m_pageUsed), quint32(m_scratch.size())});
    m_pageUsed += m_scratch.size();
    m_summaries.push_back(m_tailSummary);
    m_tail.count = 0;
    m_tail.index = -1;
    m_tailSummary = Summary{};
}

void PackedMetricSeries::clear()
{
    m_tail.count = 0;
    m_tail.index = -1;
    m_tailSummary = Summary{};
    m_summaries.clear();
    m_where.clear();
    m_pages.clear();
    m_pageSize = m_pageUsed = m_pageBytes = 0;
    m_stepsSorted = m_wallsSorted = m_stepsFinite = m_wallsFinite = true;
}

const PackedMetricSeries::Chunk& PackedMetricSeries::chunk(qsizetype c, Chunk& buf, unsigned columns) const
{
    if (c >= qsizetype(m_summaries.size()))
        return m_tail;
    if (buf.index == c && (buf.columns & columns) == columns)
        return buf;
    const Where& w = m_where[std::size_t(c)];
    const unsigned char* at = m_pages[w.page].get() + w.offset;
    at = (columns & kSteps) ? decodeColumn(at, kChunkPoints, buf.step.data()) : skipColumn(at, kChunkPoints);
    if (columns & kWalls)
        at = decodeColumn(at, kChunkPoints, buf.wallMs.data());
    else if (columns & kValues)
        at = skipColumn(at, kChunkPoints);
    if (columns & kValues)
        decodeColumn(at, kChunkPoints, buf.value.data());
    buf.count = kChunkPoints;
    buf.index = c;
    buf.columns = columns;
    return buf;
}

PackedMetricSeries::Point PackedMetricSeries::at(qsizetype i, Chunk& buf) const
{
    return chunk(i / kChunkPoints, buf).point(int(i % kChunkPoints));
}

void PackedMetricSeries::decode(qsizetype from, qsizetype to, std::vector<double>* steps, std::vector<double>* wallMs,
        std::vector<double>* values) const
{
    from = std::max<qsizetype>(0, from);
    to = std::min(to, size());
    if (from >= to)
        return;
    for (std::vector<double>* v : {steps, wallMs, values})
        if (v)
            v->reserve(v->size() + std::size_t(to - from));
    Chunk buf;
    for (qsizetype c = from / kChunkPoints; c * kChunkPoints < to; ++c) {
        const Chunk& ch = chunk(c, buf);
        const qsizetype base = c * kChunkPoints;
        const auto a = std::size_t(std::max(from, base) - base);
        const auto b = std::size_t(std::min(to, base + ch.count) - base);
        if (steps)
            steps->insert(steps->end(), ch.step.begin() + a, ch.step.begin() + b);
        if (wallMs)
            wallMs->insert(wallMs->end(), ch.wallMs.begin() + a, ch.wallMs.begin() + b);
        if (values)
            values->insert(values->end(), ch.value.begin() + a, ch.value.begin() + b);
    }
}

qsizetype PackedMetricSeries::lowerBoundStep(double s) const
{
    // The first chunk whose last step is >= s, then within it.
    qsizetype lo = 0, hi = chunkCount();
    while (lo < hi) {
        const qsizetype mid = lo + (hi - lo) / 2;
        if (summary(mid).last.step < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == chunkCount())
        return size();
    Chunk buf;
    const Chunk& ch = chunk(lo, buf);
    const auto it = std::lower_bound(ch.step.begin(), ch.step.begin() + ch.count, s);
    return lo * kChunkPoints + qsizetype(it - ch.step.begin());
}

std::size_t PackedMetricSeries::bytes() const
{
    return m_pageBytes + m_summaries.capacity() * sizeof(Summary) + m_where.capacity() * sizeof(Where) + sizeof(*this);
}

} // namespace ty
