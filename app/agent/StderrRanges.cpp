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
    if (fd_ >= 0)
        ::close(fd_);
}

void StderrRangeReader::refresh(std::int64_t consumedTo)
{
    while (!ranges_.empty() && ranges_.front().end() <= consumedTo)
        ranges_.pop_front();
    if (fd_ < 0) {
        fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0)
            return;
    }
    char buf[65536];
    for (;;) {
        const ssize_t n = ::pread(fd_, buf, sizeof buf, off_t(readPos_));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        readPos_ += n;
        partial_.append(buf, std::size_t(n));
    }
    std::size_t pos = 0;
    for (;;) {
        const std::size_t nl = partial_.find('\n', pos);
        if (nl == std::string::npos)
            break;
        const char* p = partial_.data() + pos;
        const char* e = partial_.data() + nl;
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
            ++truncations_;
            while (!ranges_.empty() && ranges_.back().offset >= r.offset)
                ranges_.pop_back();
            if (!ranges_.empty() && ranges_.back().end() > r.offset)
                ranges_.back().length = r.offset - ranges_.back().offset;
            continue;
        }
        if (!ok || r.end() <= consumedTo)
            continue;
        if (!ranges_.empty() && ranges_.back().end() == r.offset)
            ranges_.back().length += r.length;
        else if (ranges_.empty() || ranges_.back().end() < r.offset)
            ranges_.push_back(r);
        // else: overlapping or out of order, not written by a supervisor: skipped
    }
    partial_.erase(0, pos);
}

std::vector<ByteRange> StderrRangeReader::take(std::int64_t from, std::int64_t& to, std::size_t maxRanges)
{
    std::vector<ByteRange> out;
    for (const ByteRange& r : ranges_) {
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
