#pragma once

// The agent protocol's framing (app/agent/PROTOCOL.md "Framing"), written
// once for both sides: the agent's FrameReader (app/agent/Framing.h, with
// nlohmann::json) and the core's AgentFrameDecoder (core/nodes, with
// QJsonDocument) are thin adapters around it. Standard C++ only, no JSON
// library: the caller parses each header line with its own, then says how
// many payload bytes follow (two-phase).
//
// The stream: one JSON object per '\n'-terminated line; a line whose object
// has "len": N is followed by N raw bytes that belong to it. Bytes may arrive
// in any split. A line longer than kMaxLineBytes (1 MiB) is a protocol error,
// and so is one the caller refuses (fail()); error() then reads
// "protocol error: line N <what>: <the line's first 200 bytes>" and the
// splitter yields nothing more.
//
// Copies: none. The splitter keeps no bytes; the caller buffers what is not
// taken yet and hands it in again with what arrives after it. A header line
// and payload bytes come back as views into the caller's bytes, so the
// caller copies a payload byte once, into its frame. Cost is linear in the
// bytes fed (a partial line is not searched twice for its '\n').
// Not thread-safe: one stream, one thread at a time.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ty::agentproto {

// The longest header line, '\n' not counted.
inline constexpr std::size_t kMaxLineBytes = 1024 * 1024;
// How much of an offending line an error quotes.
inline constexpr std::size_t kQuotedLineBytes = 200;

class FrameSplitter {
public:
    enum class Kind {
        NeedMore, // every byte of `input` that can be judged now was taken: feed more
        Header,   // `bytes`: one complete line, '\n' not included
        Payload,  // `bytes`: the next bytes of the payload announced by expectPayload()
        Error,    // error() says why; every later call returns Error too
    };
    struct Piece {
        Kind kind = Kind::NeedMore;
        std::string_view bytes;   // a view into `input`
        std::size_t taken = 0;    // bytes of `input` used: the caller's next input starts after them
        bool payloadDone = false; // Payload: this piece ends the payload
    };

    // `input`: the stream's bytes from the first one not taken yet, in the
    // caller's buffer. A line not complete yet is not taken: the caller keeps
    // it and hands it in again, at the front of `input`, with the bytes after
    // it. After a Header, the caller calls expectPayload() when the line has
    // a "len", or fail() when it refuses the line, before the next call.
    Piece next(std::string_view input);

    // The last Header's "len": the next `length` bytes are its payload.
    // 0: no payload (the frame is complete with its header).
    void expectPayload(std::uint64_t length) { m_payloadLeft = length; }
    // Refuses the last Header line (until the next call of next(), whose
    // input must still hold it): error() becomes "protocol error: line N
    // <what>: <its first 200 bytes>", e.g. what = "is not a JSON object".
    void fail(std::string_view what);

    bool hasError() const { return !m_error.empty(); }
    // Empty while there is none. The quoted bytes are the line's, raw (not
    // necessarily valid UTF-8): errorQuote() is that tail of error().
    const std::string& error() const { return m_error; }
    std::string_view errorQuote() const;
    // Lines taken so far, counting one that was refused or too long.
    std::uint64_t lines() const { return m_lineNo; }
    // Whether a payload is being read, and how many of its bytes are to come.
    bool inPayload() const { return m_payloadLeft > 0; }
    std::uint64_t payloadLeft() const { return m_payloadLeft; }
    // Back to the start of a stream.
    void reset();

private:
    void setError(std::string_view what, std::string_view line);

    std::uint64_t m_lineNo = 0;
    std::uint64_t m_payloadLeft = 0;
    std::size_t m_scanned = 0; // bytes at the front of `input` known to hold no '\n'
    std::string_view m_line;   // the last Header, for fail()
    std::string m_error;
    std::size_t m_quoteSize = 0;
};

} // namespace ty::agentproto
