#pragma once

#include <QByteArray>
#include <QtGlobal>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace ty {

// A packed block of one metric series' points: the `points` BLOB of a
// metric_blocks row (schema 5, SqliteSchema.cpp). The writer packs a series
// (key id, source) into blocks of up to kMetricBlockPoints points once it
// has that many current points, so a 10^7-point run is ~2,500 rows of ~130
// KiB instead of 10^7 rows: bulk writes skip SQLite's per-row B-tree work
// and the compare view reads a series with one memcpy per block.
//
// Format, version 1 (all integers and doubles little-endian; doubles are
// IEEE 754 binary64 bit patterns, so NaN payloads, +-inf and -0.0 are kept
// exactly, unlike the REAL column of `metrics`):
//   offset 0   u32 magic 0x314B4C42 ("BLK1" read as bytes: 'B','L','K','1')
//   offset 4   u32 n      number of points, 1 .. kMetricBlockPoints
//   offset 8   u32 flags  bit 0: the epoch arrays below are present
//   offset 12  u32 0      reserved
//   offset 16  i64 id[n]       arrival sequence (shared with metrics.id; ties on step keep this order)
//              i64 step[n]     trainer step, strictly increasing within a block
//              i64 wall_ms[n]  ms since the Unix epoch, UTC
//              f64 value[n]
//   if flags & 1:
//              f64 epoch[n]    (0 where absent)
//              u8  has_epoch[n] (1: present, 0: absent)
// Total size: 16 + 32 n (+ 9 n with epochs) bytes; a BLOB of any other size,
// magic or flags is malformed and rejected by MetricBlockView::parse().
//
// Points in a block are the series' current points at the time they were
// packed, in arrival order, with strictly increasing steps. A later restart
// (a resumed run going back to step s) supersedes a suffix of them; the row's
// `live` column says how many leading points are still current.
inline constexpr int kMetricBlockPoints = 4096;
inline constexpr quint32 kMetricBlockMagic = 0x314B4C42u;

struct MetricBlockPoint {
    qint64 id = 0;
    qint64 step = 0;
    qint64 wallMs = 0;
    double value = 0.0;
    std::optional<double> epoch;
};

// Encodes `n` points (1 <= n <= kMetricBlockPoints; steps strictly increasing,
// not checked here). Little-endian hosts only (checked at compile time).
QByteArray encodeMetricBlock(const MetricBlockPoint* points, int n);

// Read-only view of an encoded block (not owning; the bytes must outlive it,
// e.g. sqlite3_column_blob() until the statement steps again).
class MetricBlockView {
public:
    // nullopt: not a version-1 block (wrong size, magic, flags or count).
    static std::optional<MetricBlockView> parse(const void* data, std::size_t size);

    int count() const { return m_n; }
    bool hasEpochs() const { return m_epochs != nullptr; }
    qint64 id(int i) const { return load<qint64>(m_ids, i); }
    qint64 step(int i) const { return load<qint64>(m_steps, i); }
    qint64 wallMs(int i) const { return load<qint64>(m_walls, i); }
    double value(int i) const { return load<double>(m_values, i); }
    std::optional<double> epoch(int i) const
    {
        if (!m_epochs || !m_hasEpoch[i])
            return std::nullopt;
        return load<double>(m_epochs, i);
    }
    MetricBlockPoint point(int i) const { return {id(i), step(i), wallMs(i), value(i), epoch(i)}; }

    // Number of leading points with step < s (binary search; steps are
    // strictly increasing): what stays current when a restart at step s
    // supersedes the rest.
    int countBelow(qint64 s) const;

    // Appends points [0, n) of each column, converted to double (steps and
    // wall times exact below 2^53), to `out` (the compare view's columns).
    void appendSteps(std::vector<double>& out, int n) const { appendAs(out, m_steps, n, true); }
    void appendWallMs(std::vector<double>& out, int n) const { appendAs(out, m_walls, n, true); }
    void appendValues(std::vector<double>& out, int n) const { appendAs(out, m_values, n, false); }

private:
    template <typename T> static T load(const unsigned char* base, int i)
    {
        T v;
        std::memcpy(&v, base + std::size_t(i) * sizeof(T), sizeof(T));
        return v;
    }
    static void appendAs(std::vector<double>& out, const unsigned char* base, int n, bool fromInt64);

    int m_n = 0;
    const unsigned char* m_ids = nullptr;
    const unsigned char* m_steps = nullptr;
    const unsigned char* m_walls = nullptr;
    const unsigned char* m_values = nullptr;
    const unsigned char* m_epochs = nullptr;
    const unsigned char* m_hasEpoch = nullptr;
};

} // namespace ty
