#pragma once

// The stderr sidecar of a run's console (PROTOCOL.md "On the node"),
// `<run_dir>/console.stderr`: its format, the parsing and the range set are
// core/agentproto/StderrRanges.h (shared with the core); here the agent's
// reader of it, from a file descriptor (POSIX).

#include "core/agentproto/StderrRanges.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ty::agent {

using agentproto::ByteRange;
using agentproto::formatStderrRange;
using agentproto::formatStderrTruncation;

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
    std::vector<ByteRange> take(long long from, long long& to, std::size_t maxRanges) const
    {
        return m_ranges.take(from, to, maxRanges);
    }

    // Truncation lines read so far: how many times the supervisor found the
    // console truncated (its "generation", PROTOCOL.md `tail`).
    std::int64_t truncations() const { return m_reader.truncations(); }

private:
    std::string m_path;
    int m_fd = -1;
    std::int64_t m_readPos = 0;
    agentproto::StderrSidecarReader m_reader;
    agentproto::StderrRangeSet m_ranges;
};

} // namespace ty::agent
