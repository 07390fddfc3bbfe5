#pragma once

// Which bytes of a run's console came from its stderr, written once for both
// sides: the agent (app/agent/StderrRanges.h reads a run's sidecar from its
// file descriptor; the supervisor writes it) and the core (core/logs/
// StderrRanges.h: the sidecar beside a console copy, through QFile).
// Standard C++ only; no I/O here: the adapters read and write the files.
//
// The sidecar `console.stderr` (app/agent/PROTOCOL.md "On the node"): text,
// one line per stderr chunk appended to console.log, "<offset> <length>\n"
// (decimal bytes of console.log). Writers append the line *before* the
// chunk's bytes, so a reader that sees console bytes and then reads the
// sidecar knows every stderr range in them. A missing file means "no stderr
// information" (a run of an older agent), an empty one "no stderr yet".
//
// A line of length 0, "<size> 0\n", records that console.log was truncated
// (by hand, or by logrotate's copytruncate) to `size` bytes and is written on
// from there: ranges before it that reach past `size` described bytes that
// are gone and are cut at `size`; the ranges after it continue from there.
// Readers from before revision 3 skip the line as malformed.
//
// Offsets and lengths are bytes, `long long` (the core's qint64).
// Thread affinity: none; each object is used by one thread at a time.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ty::agentproto {

// The bytes [offset, offset + length) of a console.
struct ByteRange {
    long long offset = 0;
    long long length = 0;
    long long end() const { return offset + length; }
    friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// "<offset> <length>\n"
std::string formatStderrRange(long long offset, long long length);
// "<size> 0\n": the console was truncated to `size` bytes (see above).
std::string formatStderrTruncation(long long size);
// One sidecar line, without its '\n': exactly two decimal numbers >= 0
// separated by one space; nullopt for anything else. Length 0 is a
// truncation line.
std::optional<ByteRange> parseStderrLine(std::string_view line);

// A sorted set of disjoint, non-adjacent ranges: adjacent and overlapping
// ones are merged as they are added.
class StderrRangeSet {
public:
    using const_iterator = std::deque<ByteRange>::const_iterator;

    // Adds [offset, offset + length); empty or negative ones are ignored.
    // Appending after the last range is O(1); anything else (a re-fetched
    // copy) is merged into place.
    void add(long long offset, long long length);
    // Whether any stderr byte lies in [from, to).
    bool intersects(long long from, long long to) const;
    // Forgets ranges that end at or before `offset` (bounded memory).
    void dropBefore(long long offset);
    // The console was truncated to `size` bytes: ranges beyond it are cut.
    void cutAt(long long size);
    // The ranges intersecting [from, to), clipped to it, in order; at most
    // `maxRanges` of them. When more exist, `to` is lowered to the start of
    // the first one left out, so the caller sends a shorter chunk.
    std::vector<ByteRange> take(long long from, long long& to, std::size_t maxRanges) const;

    void clear() { m_ranges.clear(); }
    bool empty() const { return m_ranges.empty(); }
    std::size_t size() const { return m_ranges.size(); }
    const_iterator begin() const { return m_ranges.begin(); }
    const_iterator end() const { return m_ranges.end(); }

private:
    std::deque<ByteRange> m_ranges;
};

// The incremental reader of a sidecar that grows while it is read: the
// adapter reads the bytes appended since its last read and hands them to
// consume(). Holds the last incomplete line until its '\n' comes; the
// ranges go to a set the caller keeps.
class StderrSidecarReader {
public:
    // Forgets the ranges of `into` that end at or before `keepFrom`, then
    // adds to it the ranges of the complete lines in `fresh` (after the held
    // partial line) that end after `keepFrom`. Malformed lines are skipped;
    // a truncation line cuts the ranges held at its size and counts in
    // truncations().
    void consume(std::string_view fresh, long long keepFrom, StderrRangeSet& into);

    // Truncation lines read so far: how many times the supervisor found the
    // console truncated (its "generation", PROTOCOL.md `tail`).
    long long truncations() const { return m_truncations; }

private:
    std::string m_partial;
    long long m_truncations = 0;
};

} // namespace ty::agentproto
