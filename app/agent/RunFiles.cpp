#include "RunFiles.h"

#include "Posix.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ty::agent {

namespace {

std::vector<std::string> splitPath(const std::string& s)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= s.size()) {
        const std::size_t slash = s.find('/', start);
        const std::size_t end = slash == std::string::npos ? s.size() : slash;
        if (end > start)
            parts.push_back(s.substr(start, end - start));
        if (slash == std::string::npos)
            break;
        start = slash + 1;
    }
    return parts;
}

std::string realPath(const std::string& path)
{
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf))
        return {};
    return buf;
}

bool inside(const std::string& realRoot, const std::string& real)
{
    if (real.empty())
        return false;
    if (realRoot == "/")
        return real.size() > 1;
    return real.size() > realRoot.size() && real.compare(0, realRoot.size(), realRoot) == 0
            && real[realRoot.size()] == '/';
}

std::int64_t mtimeMsOf(const struct stat& st)
{
    return std::int64_t(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

} // namespace

std::string checkRelativePattern(const std::string& glob)
{
    if (glob.empty())
        return "empty path";
    if (glob.front() == '/')
        return "'" + glob + "' is absolute: paths are relative to the run's directory";
    for (const auto& c : splitPath(glob))
        if (c == "..")
            return "'" + glob + "' has a '..' component: paths must stay inside the run's directory";
    if (glob.find('\0') != std::string::npos)
        return "path with a NUL byte";
    return {};
}

int openConfined(const std::string& root, const std::string& rel, RunFile& info, std::string& error)
{
    if (auto e = checkRelativePattern(rel); !e.empty()) {
        error = e;
        return -1;
    }
    const std::string realRoot = realPath(root);
    if (realRoot.empty()) {
        error = "cannot open " + root + ": " + errnoText(errno);
        return -1;
    }
    const std::string abs = realRoot + "/" + rel;
    if (!inside(realRoot, realPath(abs))) {
        error = fileExists(abs) ? "'" + rel + "' leads outside " + root + " (a symlink?)"
                                : "no file '" + rel + "' in " + root;
        return -1;
    }
    // O_NONBLOCK: a FIFO named like a metric file must not hang the agent.
    const int fd = ::open(abs.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        error = "cannot open " + abs + ": " + errnoText(errno);
        return -1;
    }
    struct stat st { };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        error = abs + " is not a regular file";
        return -1;
    }
    info.path = rel;
    info.size = std::int64_t(st.st_size);
    info.mtimeMs = mtimeMsOf(st);
    return fd;
}

std::string base64Encode(const char* data, std::size_t size)
{
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((size + 2) / 3 * 4);
    const auto* p = reinterpret_cast<const unsigned char*>(data);
    std::size_t i = 0;
    for (; i + 3 <= size; i += 3) {
        const unsigned v = (unsigned(p[i]) << 16) | (unsigned(p[i + 1]) << 8) | p[i + 2];
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    if (i + 1 == size) {
        const unsigned v = unsigned(p[i]) << 16;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += "==";
    } else if (i + 2 == size) {
        const unsigned v = (unsigned(p[i]) << 16) | (unsigned(p[i + 1]) << 8);
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += '=';
    }
    return out;
}

} // namespace ty::agent
