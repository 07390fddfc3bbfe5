#include "StderrRanges.h"

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <fcntl.h>
#include <unistd.h>

namespace ty::agent {

std::string formatStderrRange(std::int64_t offset, std::int64_t length)
{
    return std::to_string(offset) + ' ' + std::to_string(length) + '\n';
}

std::string formatStderrTruncation(std::int64_t size)
{
    return std::to_string(size) + " 0\n";
}

StderrRangeReader::~StderrRangeReader()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void StderrRangeReader::refresh(std::int64_t consumedTo)
{
    while (!m_ranges.empty() && m_ranges.front().end() <= consumedTo)
        m_ranges.pop_front();
    if (m_fd < 0) {
        m_fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0)
            return;
    }
    char buf[65536];
    for (;;) {
        const ssize_t n = ::pread(m_fd, buf, sizeof buf, off_t(m_readPos));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        m_readPos += n;
        m_partial.append(buf, std::size_t(n));
    }
    std::size_t pos = 0;
    for (;;) {
        const std::size_t nl = m_partial.find('\n', pos);
        if (nl == std::string::npos)
            break;
        const char* p = m_partial.data() + pos;
        const char* e = m_partial.data() + nl;
        ByteRange r;
        auto a = std::from_chars(p, e, r.offset);
        bool ok = a.ec == std::errc() && a.ptr < e && *a.ptr == ' ';
        if (ok) {
            auto b = std::from_chars(a.ptr + 1, e, r.length);
            ok = b.ec == std::errc() && b.ptr == e && r.offset >= 0 && r.length >= 0;
        }
        pos = nl + 1;
        if (ok && r.length == 0) {
            // The console was truncated to r.offset: what lay beyond is gone.
            ++m_truncations;
            while (!m_ranges.empty() && m_ranges.back().offset >= r.offset)
                m_ranges.pop_back();
            if (!m_ranges.empty() && m_ranges.back().end() > r.offset)
                m_ranges.back().length = r.offset - m_ranges.back().offset;
            continue;
        }
        if (!ok || r.end() <= consumedTo)
            continue;
        if (!m_ranges.empty() && m_ranges.back().end() == r.offset)
            m_ranges.back().length += r.length;
        else if (m_ranges.empty() || m_ranges.back().end() < r.offset)
            m_ranges.push_back(r);
        // else: overlapping or out of order, not written by a supervisor: skipped
    }
    m_partial.erase(0, pos);
}

std::vector<ByteRange> StderrRangeReader::take(std::int64_t from, std::int64_t& to, std::size_t maxRanges)
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
        const std::int64_t b = std::max(r.offset, from);
        const std::int64_t e = std::min(r.end(), to);
        out.push_back(ByteRange{b, e - b});
    }
    // `to` may have been lowered: clip the last range to it.
    while (!out.empty() && out.back().offset >= to)
        out.pop_back();
    if (!out.empty() && out.back().end() > to)
        out.back().length = to - out.back().offset;
    return out;
}

} // namespace ty::agent
