#include "Framing.h"

#include <cerrno>

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
    if (!error_.empty())
        return;
    // Compact lazily so a stream of small frames stays O(n).
    if (pos_ > 0 && (pos_ >= buf_.size() || pos_ > 65536)) {
        buf_.erase(0, pos_);
        pos_ = 0;
    }
    buf_.append(data, size);
}

std::optional<FrameReader::Frame> FrameReader::next()
{
    if (!error_.empty())
        return std::nullopt;
    if (pendingHeader_) {
        if (buf_.size() - pos_ < pendingLen_)
            return std::nullopt;
        Frame f{std::move(*pendingHeader_), buf_.substr(pos_, pendingLen_)};
        pos_ += pendingLen_;
        pendingHeader_.reset();
        pendingLen_ = 0;
        return f;
    }
    const std::size_t nl = buf_.find('\n', pos_);
    if (nl == std::string::npos) {
        if (buf_.size() - pos_ > kMaxLineBytes) {
            ++lineNo_;
            error_ = "protocol error: line " + std::to_string(lineNo_) + " is longer than 1 MiB: "
                + buf_.substr(pos_, 200);
        }
        return std::nullopt;
    }
    ++lineNo_;
    std::string_view line(buf_.data() + pos_, nl - pos_);
    if (line.size() > kMaxLineBytes) {
        error_ = "protocol error: line " + std::to_string(lineNo_) + " is longer than 1 MiB: "
            + std::string(line.substr(0, 200));
        return std::nullopt;
    }
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        error_ = "protocol error: line " + std::to_string(lineNo_) + " is not a JSON object: "
            + std::string(line.substr(0, 200));
        return std::nullopt;
    }
    pos_ = nl + 1;
    if (auto it = j.find("len"); it != j.end()) {
        if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
            error_ = "protocol error: line " + std::to_string(lineNo_) + " has an invalid \"len\": "
                + std::string(line.substr(0, 200));
            return std::nullopt;
        }
        const auto len = it->get<std::uint64_t>();
        pendingHeader_ = std::move(j);
        pendingLen_ = std::size_t(len);
        return next();
    }
    return Frame{std::move(j), {}};
}

SharedFd::~SharedFd()
{
    if (fd_ >= 0)
        ::close(fd_);
}

void OutputQueue::push(std::string bytes)
{
    if (bytes.empty())
        return;
    bytes_ += bytes.size();
    chunks_.push_back(Chunk{std::move(bytes), nullptr, 0, 0});
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

void OutputQueue::pushFileFrame(Json header, std::shared_ptr<const SharedFd> file, std::int64_t offset, std::size_t length)
{
    header["len"] = length;
    pushMessage(header);
    if (length == 0)
        return;
    bytes_ += length;
    chunks_.push_back(Chunk{{}, std::move(file), offset, length});
}

void OutputQueue::consumed(std::size_t n)
{
    bytes_ -= n;
    while (n > 0) {
        const std::size_t avail = chunks_.front().size() - frontOffset_;
        if (n >= avail) {
            n -= avail;
            chunks_.pop_front();
            frontOffset_ = 0;
        } else {
            frontOffset_ += n;
            n = 0;
        }
    }
}

bool OutputQueue::flush(int fd)
{
    while (!chunks_.empty()) {
        Chunk& front = chunks_.front();
        ssize_t w;
        if (front.file) {
            off_t from = off_t(front.fileOffset + std::int64_t(frontOffset_));
            w = ::sendfile(fd, front.file->get(), &from, front.fileLength - frontOffset_);
            if (w < 0 && (errno == EINVAL || errno == ENOSYS)) {
                // sendfile() refused this pair of files: the bytes, read here.
                std::string bytes(front.fileLength - frontOffset_, '\0');
                const ssize_t r = ::pread(front.file->get(), bytes.data(), bytes.size(), from);
                if (r != ssize_t(bytes.size())) {
                    errno = EIO;
                    return false;
                }
                front = Chunk{std::move(bytes), nullptr, 0, 0};
                frontOffset_ = 0;
                continue;
            }
            if (w == 0) {
                errno = EIO; // the file ends before the bytes its frame announced
                return false;
            }
        } else {
            iovec iov[64];
            int n = 0;
            std::size_t off = frontOffset_;
            for (auto it = chunks_.begin(); it != chunks_.end() && !it->file && n < 64; ++it, ++n) {
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
