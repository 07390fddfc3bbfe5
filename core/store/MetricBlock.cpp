#include "MetricBlock.h"

#include <algorithm>
#include <bit>
#include <compare>
#include <iterator>

namespace ty {

static_assert(std::endian::native == std::endian::little,
        "metric blocks are stored little-endian; a big-endian build needs byte swaps in MetricBlock.cpp");

namespace {

constexpr std::size_t kHeader = 16;
constexpr std::size_t kPerPoint = 32;     // id, step, wall_ms, value
constexpr std::size_t kPerPointEpoch = 9; // epoch, has_epoch

template <typename T> void put(unsigned char*& at, T v)
{
    std::memcpy(at, &v, sizeof v);
    at += sizeof v;
}

} // namespace

QByteArray encodeMetricBlock(const MetricBlockPoint* points, int n)
{
    Q_ASSERT(n >= 1 && n <= kMetricBlockPoints);
    const bool epochs = std::any_of(points, points + n, [](const MetricBlockPoint& p) { return p.epoch.has_value(); });
    const std::size_t size = kHeader + kPerPoint * n + (epochs ? kPerPointEpoch * n : 0);
    QByteArray out(qsizetype(size), Qt::Uninitialized);
    auto* at = reinterpret_cast<unsigned char*>(out.data());
    put<quint32>(at, kMetricBlockMagic);
    put<quint32>(at, quint32(n));
    put<quint32>(at, epochs ? 1u : 0u);
    put<quint32>(at, 0u);
    for (int i = 0; i < n; ++i)
        put<qint64>(at, points[i].id);
    for (int i = 0; i < n; ++i)
        put<qint64>(at, points[i].step);
    for (int i = 0; i < n; ++i)
        put<qint64>(at, points[i].wallMs);
    for (int i = 0; i < n; ++i)
        put<double>(at, points[i].value);
    if (epochs) {
        for (int i = 0; i < n; ++i)
            put<double>(at, points[i].epoch.value_or(0.0));
        for (int i = 0; i < n; ++i)
            put<unsigned char>(at, points[i].epoch ? 1 : 0);
    }
    Q_ASSERT(at == reinterpret_cast<unsigned char*>(out.data()) + size);
    return out;
}

std::optional<MetricBlockView> MetricBlockView::parse(const void* data, std::size_t size)
{
    if (!data || size < kHeader)
        return std::nullopt;
    const auto* b = static_cast<const unsigned char*>(data);
    quint32 head[4];
    std::memcpy(head, b, sizeof head);
    const quint32 n = head[1];
    const quint32 flags = head[2];
    if (head[0] != kMetricBlockMagic || n < 1 || n > quint32(kMetricBlockPoints) || (flags & ~1u) || head[3] != 0)
        return std::nullopt;
    const bool epochs = flags & 1u;
    if (size != kHeader + kPerPoint * n + (epochs ? kPerPointEpoch * n : 0))
        return std::nullopt;
    MetricBlockView v;
    v.m_n = int(n);
    v.m_ids = b + kHeader;
    v.m_steps = v.m_ids + 8 * n;
    v.m_walls = v.m_steps + 8 * n;
    v.m_values = v.m_walls + 8 * n;
    if (epochs) {
        v.m_epochs = v.m_values + 8 * n;
        v.m_hasEpoch = v.m_epochs + 8 * n;
    }
    return v;
}

int MetricBlockView::countBelow(qint64 s) const
{
    int lo = 0;
    int hi = m_n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (step(mid) < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

namespace {

// Reads the i-th little-endian i64 or f64 of a packed column as a double.
// A random-access iterator, so vector::insert() constructs the new elements
// straight from the block: no zero-fill pass over freshly reserved memory
// (with resize() that pass cost as much as the copy itself in bench_compare).
class PackedColumnIterator {
public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = double;
    using difference_type = std::ptrdiff_t;
    using pointer = const double*;
    using reference = double;

    PackedColumnIterator(const unsigned char* at, bool fromInt64)
        : m_at(at)
        , m_int(fromInt64)
    { }
    double operator*() const
    {
        if (m_int) {
            qint64 v;
            std::memcpy(&v, m_at, sizeof v);
            return double(v);
        }
        double v;
        std::memcpy(&v, m_at, sizeof v);
        return v;
    }
    double operator[](difference_type k) const { return *(*this + k); }
    PackedColumnIterator& operator++()
    {
        m_at += 8;
        return *this;
    }
    PackedColumnIterator operator++(int)
    {
        auto t = *this;
        m_at += 8;
        return t;
    }
    PackedColumnIterator& operator--()
    {
        m_at -= 8;
        return *this;
    }
    PackedColumnIterator operator--(int)
    {
        auto t = *this;
        m_at -= 8;
        return t;
    }
    PackedColumnIterator& operator+=(difference_type k)
    {
        m_at += 8 * k;
        return *this;
    }
    PackedColumnIterator& operator-=(difference_type k)
    {
        m_at -= 8 * k;
        return *this;
    }
    friend PackedColumnIterator operator+(PackedColumnIterator a, difference_type k) { return a += k; }
    friend PackedColumnIterator operator+(difference_type k, PackedColumnIterator a) { return a += k; }
    friend PackedColumnIterator operator-(PackedColumnIterator a, difference_type k) { return a -= k; }
    friend difference_type operator-(const PackedColumnIterator& a, const PackedColumnIterator& b)
    {
        return (a.m_at - b.m_at) / 8;
    }
    friend bool operator==(const PackedColumnIterator& a, const PackedColumnIterator& b) { return a.m_at == b.m_at; }
    friend auto operator<=>(const PackedColumnIterator& a, const PackedColumnIterator& b) { return a.m_at <=> b.m_at; }

private:
    const unsigned char* m_at;
    bool m_int;
};

} // namespace

void MetricBlockView::appendAs(std::vector<double>& out, const unsigned char* base, int n, bool fromInt64)
{
    const PackedColumnIterator first(base, fromInt64);
    out.insert(out.end(), first, first + n);
}

} // namespace ty
