#pragma once

// The stderr sidecar of a run's console (PROTOCOL.md "On the node"):
// `<run_dir>/console.stderr`, text, one line per stderr chunk appended to
// console.log: "<offset> <length>\n" (decimal bytes of console.log). The
// supervisor appends the line *before* the chunk's bytes, so a reader that
// sees console bytes and then reads the sidecar knows every stderr range in
// them. Ranges are disjoint and in increasing order; adjacent ones may be
// merged by readers. A missing file means "no stderr information" (a run of
// an older agent), an empty one "no stderr yet".
//
// A line of length 0, "<size> 0\n", records that console.log was truncated
// (by hand, or by logrotate's copytruncate) to `size` bytes and is written on
// from there: ranges before it that reach past `size` described bytes that
// are gone and are cut at `size`; the ranges after it continue from there.
// Readers from before it skip the line as malformed.

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace ty::agent {

struct ByteRange {
    std::int64_t offset = 0;
    std::int64_t length = 0;
    std::int64_t end() const { return offset + length; }
};

// "<offset> <length>\n"
std::string formatStderrRange(std::int64_t offset, std::int64_t length);
// "<size> 0\n": the console was truncated to `size` bytes (see above).
std::string formatStderrTruncation(std::int64_t size);

// Incremental reader of a sidecar that grows while it is read. Not thread safe.
class StderrRangeReader {
public:
    explicit StderrRangeReader(std::string path)
        : m_path(std::move(path))
    { }
    ~StderrRangeReader();
    StderrRangeReader(const StderrRangeReader&) = delete;
    StderrRangeReader& operator=(const StderrRangeReader&) = delete;

    // Reads the complete lines appended since the last call (opening the
    // file when it appears), merging adjacent ranges and forgetting those
    // that end at or before `consumedTo`. Malformed lines are skipped; a
    // truncation line cuts the ranges held at its size.
    void refresh(std::int64_t consumedTo);

    // The ranges intersecting [from, to), clipped to it, in order; at most
    // `maxRanges` of them. When more exist, `to` is lowered to the start of
    // the first one left out, so the caller sends a shorter chunk.
    std::vector<ByteRange> take(std::int64_t from, std::int64_t& to, std::size_t maxRanges);

    // Truncation lines read so far: how many times the supervisor found the
    // console truncated (its "generation", PROTOCOL.md `tail`).
    std::int64_t truncations() const { return m_truncations; }

private:
    std::string m_path;
    int m_fd = -1;
    std::int64_t m_readPos = 0;
    std::string m_partial;
    std::deque<ByteRange> m_ranges;
    std::int64_t m_truncations = 0;
};

} // namespace ty::agent
