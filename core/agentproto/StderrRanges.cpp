#include "StderrRanges.h"

#include <algorithm>
#include <charconv>

namespace ty::agentproto {

std::string formatStderrRange(long long offset, long long length)
{
    return std::to_string(offset) + ' ' + std::to_string(length) + '\n';
}

std::string formatStderrTruncation(long long size)
{
    return std::to_string(size) + " 0\n";
}

std::optional<ByteRange> parseStderrLine(std::string_view line)
{
    const char* p = line.data();
    const char* e = line.data() + line.size();
    ByteRange r;
    const auto a = std::from_chars(p, e, r.offset);
    if (a.ec != std::errc() || a.ptr == e || *a.ptr != ' ')
        return std::nullopt;
    const auto b = std::from_chars(a.ptr + 1, e, r.length);
    if (b.ec != std::errc() || b.ptr != e || r.offset < 0 || r.length < 0)
        return std::nullopt;
    return r;
}

void StderrRangeSet::add(long long offset, long long length)
{
    if (length <= 0 || offset < 0)
        return;
    const ByteRange r{offset, length};
    if (m_ranges.empty() || m_ranges.back().end() < r.offset) {
        m_ranges.push_back(r);
        return;
    }
    if (m_ranges.back().end() == r.offset) {
        m_ranges.back().length += r.length;
        return;
    }
    // Overlapping or out of order (a re-fetched copy): merge into place.
    auto first = std::partition_point(
            m_ranges.begin(), m_ranges.end(), [&](const ByteRange& x) { return x.end() < r.offset; });
    auto last = first;
    long long b = r.offset, e = r.end();
    while (last != m_ranges.end() && last->offset <= e) {
        b = std::min(b, last->offset);
        e = std::max(e, last->end());
        ++last;
    }
    first = m_ranges.erase(first, last);
    m_ranges.insert(first, ByteRange{b, e - b});
}

bool StderrRangeSet::intersects(long long from, long long to) const
{
    if (from >= to)
        return false;
    auto it = std::partition_point(
            m_ranges.begin(), m_ranges.end(), [&](const ByteRange& x) { return x.end() <= from; });
    return it != m_ranges.end() && it->offset < to;
}

void StderrRangeSet::dropBefore(long long offset)
{
    while (!m_ranges.empty() && m_ranges.front().end() <= offset)
        m_ranges.pop_front();
}

void StderrRangeSet::cutAt(long long size)
{
    while (!m_ranges.empty() && m_ranges.back().offset >= size)
        m_ranges.pop_back();
    if (!m_ranges.empty() && m_ranges.back().end() > size)
        m_ranges.back().length = size - m_ranges.back().offset;
}

std::vector<ByteRange> StderrRangeSet::take(long long from, long long& to, std::size_t maxRanges) const
{
    std::vector<ByteRange> out;
    for (const ByteRange& r : m_ranges) {
        if (r.end() <= from)
            continue;
        if (r.offset >= to)
            break;
        if (out.size() == maxRanges) {
            to = std::max(r.offset, from + 1);
            break;
        }
        const long long b = std::max(r.offset, from);
        const long long e = std::min(r.end(), to);
        out.push_back(ByteRange{b, e - b});
    }
    // `to` may have been lowered: clip the last range to it.
    while (!out.empty() && out.back().offset >= to)
        out.pop_back();
    if (!out.empty() && out.back().end() > to)
        out.back().length = to - out.back().offset;
    return out;
}

void StderrSidecarReader::consume(std::string_view fresh, long long keepFrom, StderrRangeSet& into)
{
    into.dropBefore(keepFrom);
    m_partial.append(fresh);
    std::size_t pos = 0;
    for (;;) {
        const std::size_t nl = m_partial.find('\n', pos);
        if (nl == std::string::npos)
            break;
        const auto r = parseStderrLine(std::string_view(m_partial).substr(pos, nl - pos));
        pos = nl + 1;
        if (!r)
            continue;
        if (r->length == 0) {
            // The console was truncated to r->offset: what lay beyond is gone.
            ++m_truncations;
            into.cutAt(r->offset);
            continue;
        }
        if (r->end() > keepFrom)
            into.add(r->offset, r->length);
    }
    m_partial.erase(0, pos);
}

} // namespace ty::agentproto
