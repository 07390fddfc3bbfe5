#include "ListeningPorts.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ty::agent {

namespace {

constexpr unsigned kTcpListen = 0x0A; // TCP_LISTEN, include/net/tcp_states.h

bool hexValue(std::string_view s, unsigned& out)
{
    if (s.empty() || s.size() > 8)
        return false;
    unsigned v = 0;
    for (char c : s) {
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return false;
        v = v * 16 + unsigned(d);
    }
    out = v;
    return true;
}

// The next whitespace-separated word of `line` from `pos`.
std::string_view word(std::string_view line, std::size_t& pos)
{
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t'))
        ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t')
        ++pos;
    return line.substr(start, pos - start);
}

bool readWhole(const char* path, std::string& out, std::string* error)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (error)
            *error = std::string("cannot read ") + path + ": " + std::strerror(errno);
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

} // namespace

std::vector<int> listeningPortsIn(std::string_view text)
{
    std::vector<int> ports;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        std::size_t pos = 0;
        const std::string_view slot = word(line, pos); // "12:"
        if (slot.empty() || slot.back() != ':')
            continue;
        const std::string_view local = word(line, pos);
        word(line, pos); // rem_address
        const std::string_view st = word(line, pos);
        const std::size_t colon = local.rfind(':');
        unsigned state = 0, port = 0;
        if (colon == std::string_view::npos || !hexValue(st, state) || state != kTcpListen
                || !hexValue(local.substr(colon + 1), port) || port == 0 || port > 65535)
            continue;
        ports.push_back(int(port));
    }
    std::sort(ports.begin(), ports.end());
    ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
    return ports;
}

std::vector<int> listeningPorts(std::string* error)
{
    std::vector<int> all;
    std::string text;
    if (readWhole("/proc/net/tcp", text, error))
        all = listeningPortsIn(text);
    if (readWhole("/proc/net/tcp6", text, nullptr)) {
        const std::vector<int> v6 = listeningPortsIn(text);
        all.insert(all.end(), v6.begin(), v6.end());
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
    }
    return all;
}

} // namespace ty::agent
