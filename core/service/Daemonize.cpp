#include "Daemonize.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ty::service {

namespace {

bool writeAll(int fd, const char* data, size_t size)
{
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= size_t(n);
    }
    return true;
}

bool pointOutputAt(const std::string& logPath)
{
    const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log < 0)
        return false;
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::close(log);
    return true;
}

void makeParentDirs(const std::string& path)
{
    for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
        ::mkdir(path.substr(0, at).c_str(), 0700);
}

} // namespace

int detach(const std::string& logPath, std::string* error)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        *error = std::string("pipe: ") + std::strerror(errno);
        return -1;
    }
    const pid_t first = ::fork();
    if (first < 0) {
        *error = std::string("fork: ") + std::strerror(errno);
        return -1;
    }
    if (first > 0) {
        // The original process: wait for the word, then exit with it.
        ::close(fds[1]);
        int status = 0;
        ::waitpid(first, &status, 0); // the intermediate child exits at once
        std::string said;
        char buf[512];
        for (;;) {
            const ssize_t n = ::read(fds[0], buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            said.append(buf, size_t(n));
        }
        if (said.empty()) {
            std::fprintf(
                    stderr, "trainyardd: the service ended before it was ready (see its log: %s)\n", logPath.c_str());
            std::_Exit(1);
        }
        const int code = said[0] - '0';
        if (said.size() > 2)
            std::fprintf(stderr, "%s\n", said.c_str() + 2);
        std::_Exit(code);
    }
    ::close(fds[0]);
    ::setsid();
    const pid_t second = ::fork(); // no longer a session leader: can never gain a terminal
    if (second < 0)
        std::_Exit(1);
    if (second > 0)
        std::_Exit(0);
    if (::chdir("/") != 0) {
        // stays where it was; nothing depends on it
    }
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) {
        ::dup2(null, STDIN_FILENO);
        ::close(null);
    }
    makeParentDirs(logPath);
    rotateLog(logPath, 4ll << 20);
    pointOutputAt(logPath);
    return fds[1];
}

void reportReady(int fd)
{
    if (fd < 0)
        return;
    writeAll(fd, "0", 1);
    ::close(fd);
}

void reportFailure(int fd, int status, const std::string& message)
{
    if (fd < 0)
        return;
    const std::string line = std::to_string(status % 10) + " " + message;
    writeAll(fd, line.data(), line.size());
    ::close(fd);
}

bool rotateLog(const std::string& logPath, long long maxBytes)
{
    struct stat st { };
    if (::stat(logPath.c_str(), &st) != 0 || st.st_size <= maxBytes)
        return false;
    for (int i = 2; i >= 1; --i)
        ::rename((logPath + "." + std::to_string(i)).c_str(), (logPath + "." + std::to_string(i + 1)).c_str());
    ::rename(logPath.c_str(), (logPath + ".1").c_str());
    // Only when our output goes there (detached); a foreground service keeps its terminal.
    struct stat out { };
    if (::fstat(STDERR_FILENO, &out) == 0 && out.st_ino == st.st_ino && out.st_dev == st.st_dev)
        pointOutputAt(logPath);
    return true;
}

} // namespace ty::service
