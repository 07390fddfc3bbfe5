#include "ConsoleWatch.h"

#include <cerrno>
#include <iterator>

#ifdef __linux__
#include <sys/inotify.h>
#include <unistd.h>
#endif

namespace ty::agent {

#ifdef __linux__

ConsoleWatch::ConsoleWatch()
    : m_fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
{ }

ConsoleWatch::~ConsoleWatch()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

bool ConsoleWatch::watch(const std::string& key, const std::string& path)
{
    unwatch(key);
    if (m_fd < 0)
        return false;
    const int wd = ::inotify_add_watch(m_fd, path.c_str(), IN_MODIFY);
    if (wd < 0)
        return false;
    m_byKey[key] = wd;
    ++m_uses[wd];
    return true;
}

void ConsoleWatch::unwatch(const std::string& key)
{
    const auto it = m_byKey.find(key);
    if (it == m_byKey.end())
        return;
    const int wd = it->second;
    m_byKey.erase(it);
    if (--m_uses[wd] > 0)
        return;
    m_uses.erase(wd);
    // EINVAL: the kernel removed it already (the file was deleted).
    (void)::inotify_rm_watch(m_fd, wd);
}

bool ConsoleWatch::drain()
{
    if (m_fd < 0)
        return false;
    bool any = false;
    alignas(struct inotify_event) char buf[4096];
    for (;;) {
        const ssize_t n = ::read(m_fd, buf, sizeof buf);
        if (n > 0) {
            any = true;
            // IN_IGNORED: a watched file was deleted; its descriptor is gone.
            for (ssize_t at = 0; at + ssize_t(sizeof(inotify_event)) <= n;) {
                const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
                if (ev->mask & IN_IGNORED) {
                    for (auto it = m_byKey.begin(); it != m_byKey.end();)
                        it = it->second == ev->wd ? m_byKey.erase(it) : std::next(it);
                    m_uses.erase(ev->wd);
                }
                at += ssize_t(sizeof(inotify_event)) + ssize_t(ev->len);
            }
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return any;
    }
}

#else

ConsoleWatch::ConsoleWatch() = default;
ConsoleWatch::~ConsoleWatch() = default;
bool ConsoleWatch::watch(const std::string&, const std::string&)
{
    return false;
}
void ConsoleWatch::unwatch(const std::string&)
{ }
bool ConsoleWatch::drain()
{
    return false;
}

#endif

} // namespace ty::agent
