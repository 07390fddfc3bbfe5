#include "Posix.h"

#include <cerrno>
#include <cstring>
#include <ctime>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ty::agent {

std::int64_t nowMs()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::int64_t monotonicMs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::string errnoText(int err)
{
    return std::strerror(err);
}

std::optional<std::string> readFile(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    std::string out;
    char buf[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const int e = errno;
            ::close(fd);
            errno = e;
            return std::nullopt;
        }
        if (n == 0)
            break;
        out.append(buf, std::size_t(n));
    }
    ::close(fd);
    return out;
}

bool writeAll(int fd, std::string_view data)
{
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        data.remove_prefix(std::size_t(n));
    }
    return true;
}

std::string writeFileAtomic(const std::string& path, std::string_view data)
{
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return "cannot create " + tmp + ": " + errnoText(errno);
    if (!writeAll(fd, data)) {
        const int e = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        return "cannot write " + tmp + ": " + errnoText(e);
    }
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        return "cannot rename " + tmp + " to " + path + ": " + errnoText(e);
    }
    return {};
}

bool setNonBlocking(int fd, bool on)
{
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0)
        return false;
    return ::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK)) == 0;
}

bool setCloseOnExec(int fd)
{
    const int flags = ::fcntl(fd, F_GETFD);
    return flags >= 0 && ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

void closeFrom(int lowest, int keep)
{
    // close_range(2) is Linux 5.9+; called through syscall() so the binary
    // does not need glibc 2.34 (the agent must run on older distributions).
#if defined(SYS_close_range)
    if (keep < lowest) {
        if (::syscall(SYS_close_range, unsigned(lowest), ~0U, 0U) == 0)
            return;
    } else {
        bool ok = true;
        if (keep > lowest)
            ok = ::syscall(SYS_close_range, unsigned(lowest), unsigned(keep - 1), 0U) == 0;
        if (ok && ::syscall(SYS_close_range, unsigned(keep + 1), ~0U, 0U) == 0)
            return;
    }
#endif
    long maxFd = ::sysconf(_SC_OPEN_MAX);
    if (maxFd < 0 || maxFd > 65536)
        maxFd = 65536;
    for (int fd = lowest; fd < maxFd; ++fd)
        if (fd != keep)
            ::close(fd);
}

bool fileExists(const std::string& path)
{
    return ::access(path.c_str(), F_OK) == 0;
}

bool isDirectory(const std::string& path)
{
    struct stat st { };
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::int64_t fileSize(const std::string& path)
{
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0)
        return -1;
    return std::int64_t(st.st_size);
}

std::string makeDirs(const std::string& path, unsigned mode)
{
    if (path.empty())
        return "empty directory path";
    std::string cur;
    std::size_t pos = 0;
    while (pos != std::string::npos) {
        pos = path.find('/', pos + 1);
        cur = path.substr(0, pos);
        if (cur.empty() || cur == "/")
            continue;
        if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST)
            return "cannot create directory " + cur + ": " + errnoText(errno);
    }
    if (!isDirectory(path))
        return path + " is not a directory";
    return {};
}

} // namespace ty::agent
