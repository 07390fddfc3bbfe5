#pragma once

// Wakes the agent's loop when a followed console grows, so a line a run
// writes goes to the client in the loop's next pass instead of at the next
// 20 ms tick (issue #27: the tick was about 10 ms of the 62 ms median from a
// line written on the node to its row painted in the GUI).
//
// Linux inotify: one IN_MODIFY watch per followed console file (splice()
// into a file raises it too, since Linux 6.0; the supervisor writes with
// splice or pwrite). The events carry no data: a readable fd() only means
// "some followed console changed", and the agent's pass looks at every tail
// as it already does. The kernel merges an unread event identical to the one
// before it, so a run writing 100,000 lines/s costs a wakeup per pass, not
// per write. Where inotify is missing or refused (another system, the
// per-user limit of instances or watches reached: fs.inotify.max_user_*),
// fd() is -1 or the file is not watched, and the 20 ms tick finds growth as
// before: nothing is lost, only latency. A console on a network file system
// (a Slurm job writing on another host) raises no event here either: the
// tick finds it.
//
// Not thread-safe: the agent's loop thread only. Errors are not reported
// (the tick is the fallback).

#include <map>
#include <string>

namespace ty::agent {

class ConsoleWatch {
public:
    ConsoleWatch();
    ~ConsoleWatch();
    ConsoleWatch(const ConsoleWatch&) = delete;
    ConsoleWatch& operator=(const ConsoleWatch&) = delete;

    // The descriptor to poll for POLLIN (non-blocking, close-on-exec); -1
    // when there is none.
    int fd() const { return m_fd; }
    // Watches `path` for `key` (a run id), replacing what `key` watched.
    // Returns false when it cannot be watched (then only the tick finds it).
    bool watch(const std::string& key, const std::string& path);
    // Stops watching for `key` (nothing when it watched nothing).
    void unwatch(const std::string& key);
    // Reads every pending event; true if there was any.
    bool drain();
    // Files watched now (distinct inodes), for tests.
    std::size_t watchedFiles() const { return m_uses.size(); }

private:
    int m_fd = -1;
    std::map<std::string, int> m_byKey; // key -> watch descriptor
    std::map<int, int> m_uses;          // watch descriptor -> keys using it (one inode, one descriptor)
};

} // namespace ty::agent
