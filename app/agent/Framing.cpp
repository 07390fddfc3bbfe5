#include "Framing.h"

#include "core/agentproto/Fields.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

namespace ty::agent {

std::string dumpJson(const Json& j)
{
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void FrameReader::append(const char* data, std::size_t size)
{
    if (m_splitter.hasError())
        return;
    // Compact lazily so a stream of small frames stays O(n).
    if (m_pos > 0 && (m_pos >= m_buf.size() || m_pos > 65536)) {
        m_buf.erase(0, m_pos);
        m_pos = 0;
    }
    m_buf.append(data, size);
}

std::optional<FrameReader::Frame> FrameReader::next()
{
    using agentproto::FrameSplitter;
    for (;;) {
        const FrameSplitter::Piece piece = m_splitter.next(std::string_view(m_buf).substr(m_pos));
        switch (piece.kind) {
        case FrameSplitter::Kind::NeedMore:
        case FrameSplitter::Kind::Error: return std::nullopt;
        case FrameSplitter::Kind::Payload:
            m_pos += piece.taken;
            m_payload.append(piece.bytes);
            if (piece.payloadDone) {
                Frame f{std::move(*m_pendingHeader), std::exchange(m_payload, std::string())};
                m_pendingHeader.reset();
                return f;
            }
            continue;
        case FrameSplitter::Kind::Header: break;
        }
        Json j = Json::parse(piece.bytes, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
            m_splitter.fail("is not a JSON object");
            return std::nullopt;
        }
        m_pos += piece.taken; // taken once accepted, as it always was
        const auto it = j.find(agentproto::fields::kLen);
        if (it == j.end())
            return Frame{std::move(j), {}};
        if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
            m_splitter.fail("has an invalid \"len\"");
            return std::nullopt;
        }
        const auto len = it->get<std::uint64_t>();
        if (len == 0)
            return Frame{std::move(j), {}};
        m_payload.reserve(std::size_t(std::min<std::uint64_t>(len, 4 * 1024 * 1024)));
        m_pendingHeader = std::move(j);
        m_splitter.expectPayload(len);
    }
}

SharedFd::~SharedFd()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void OutputQueue::push(std::string bytes)
{
    if (bytes.empty())
        return;
    m_bytes += bytes.size();
    m_chunks.push_back(Chunk{std::move(bytes), nullptr, 0, 0});
}

void OutputQueue::pushMessage(const Json& message)
{
    std::string s = dumpJson(message);
    s.push_back('\n');
    push(std::move(s));
}

void OutputQueue::pushFrame(Json header, std::string payload)
{
    header["len"] = payload.size();
    pushMessage(header);
    push(std::move(payload));
}

void OutputQueue::pushFileFrame(
        Json header, std::shared_ptr<const SharedFd> file, std::int64_t offset, std::size_t length)
{
    header["len"] = length;
    pushMessage(header);
    if (length == 0)
        return;
    m_bytes += length;
    m_chunks.push_back(Chunk{{}, std::move(file), offset, length});
}

void OutputQueue::consumed(std::size_t n)
{
    m_bytes -= n;
    while (n > 0) {
        const std::size_t avail = m_chunks.front().size() - m_frontOffset;
        if (n >= avail) {
            n -= avail;
            m_chunks.pop_front();
            m_frontOffset = 0;
        } else {
            m_frontOffset += n;
            n = 0;
        }
    }
}

bool OutputQueue::flush(int fd)
{
    while (!m_chunks.empty()) {
        Chunk& front = m_chunks.front();
        ssize_t w;
        if (front.file) {
            off_t from = off_t(front.fileOffset + std::int64_t(m_frontOffset));
            w = ::sendfile(fd, front.file->get(), &from, front.fileLength - m_frontOffset);
            if (w < 0 && (errno == EINVAL || errno == ENOSYS)) {
                // sendfile() refused this pair of files: the bytes, read here.
                std::string bytes(front.fileLength - m_frontOffset, '\0');
                const ssize_t r = ::pread(front.file->get(), bytes.data(), bytes.size(), from);
                if (r != ssize_t(bytes.size())) {
                    errno = EIO;
                    return false;
                }
                front = Chunk{std::move(bytes), nullptr, 0, 0};
                m_frontOffset = 0;
                continue;
            }
            if (w == 0) {
                errno = EIO; // the file ends before the bytes its frame announced
                return false;
            }
        } else {
            iovec iov[64];
            int n = 0;
            std::size_t off = m_frontOffset;
            for (auto it = m_chunks.begin(); it != m_chunks.end() && !it->file && n < 64; ++it, ++n) {
                iov[n].iov_base = const_cast<char*>(it->bytes.data() + off);
                iov[n].iov_len = it->bytes.size() - off;
                off = 0;
            }
            w = ::writev(fd, iov, n);
        }
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return true;
            return false;
        }
        consumed(std::size_t(w));
    }
    return true;
}

} // namespace ty::agent
