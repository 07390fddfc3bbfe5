#pragma once

// Wire framing of PROTOCOL.md: one JSON object per '\n'-terminated line; an
// object with "len": N is followed by N raw bytes. Lines are limited to 1 MiB.
// The splitting into lines and payloads is core/agentproto/FrameSplitter.h
// (shared with the core); here: nlohmann::json on top of it, and the agent's
// outgoing queue.

#include "core/agentproto/FrameSplitter.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ty::agent {

using Json = nlohmann::json;

using agentproto::kMaxLineBytes;

// Incremental decoder of incoming frames. Feed bytes with append(), then call
// next() until it returns nullopt. After a protocol error, error() is
// non-empty (it names the line number and quotes the line's first 200 bytes)
// and next() returns nothing more. Bytes are copied once into the buffer
// here, and a payload's once more into its Frame.
class FrameReader {
public:
    struct Frame {
        Json header;         // the JSON object of the line
        std::string payload; // the `len` raw bytes, empty when none
    };

    void append(const char* data, std::size_t size);
    std::optional<Frame> next();
    const std::string& error() const { return m_splitter.error(); }
    std::uint64_t linesRead() const { return m_splitter.lines(); }

private:
    std::string m_buf;
    std::size_t m_pos = 0; // m_buf's bytes before it were taken by m_splitter
    agentproto::FrameSplitter m_splitter;
    std::optional<Json> m_pendingHeader; // its payload is being read
    std::string m_payload;               // that payload so far
};

// An open file descriptor with shared ownership: closed when its last owner
// (a console tail, a queued frame whose payload is still in the file) goes.
class SharedFd {
public:
    explicit SharedFd(int fd)
        : m_fd(fd)
    { }
    ~SharedFd();
    SharedFd(const SharedFd&) = delete;
    SharedFd& operator=(const SharedFd&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

// Outgoing bytes waiting for a non-blocking fd. Messages are queued whole, so
// frames from different sources never interleave.
class OutputQueue {
public:
    void push(std::string bytes);
    // Serialises `message` on one line (invalid UTF-8 replaced by U+FFFD).
    void pushMessage(const Json& message);
    // A header with "len" set to payload.size(), followed by the payload.
    void pushFrame(Json header, std::string payload);
    // A header with "len" set to `length`, followed by bytes [offset,
    // offset + length) of `file`, which must hold them (a console, appended
    // to only). They are not read here: flush() moves them from the page
    // cache to the fd with sendfile(2), without a copy through this process
    // where the fd is a pipe (sshd's, or the local client's).
    void pushFileFrame(Json header, std::shared_ptr<const SharedFd> file, std::int64_t offset, std::size_t length);

    std::size_t bytes() const { return m_bytes; }
    bool empty() const { return m_chunks.empty(); }

    // Writes what the fd accepts now. False on a fatal error with errno set:
    // the fd's (EPIPE, EBADF...), or EIO when a file frame's file no longer
    // holds its bytes (truncated: the stream could not stay framed). True
    // when the fd would block or the queue is empty.
    bool flush(int fd);

private:
    struct Chunk {
        std::string bytes;                    // or, with `file`:
        std::shared_ptr<const SharedFd> file; // bytes [fileOffset, fileOffset + fileLength) of it
        std::int64_t fileOffset = 0;
        std::size_t fileLength = 0;
        std::size_t size() const { return file ? fileLength : bytes.size(); }
    };
    void consumed(std::size_t n);

    std::deque<Chunk> m_chunks;
    std::size_t m_frontOffset = 0;
    std::size_t m_bytes = 0;
};

std::string dumpJson(const Json& j);

} // namespace ty::agent
