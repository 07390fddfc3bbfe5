#pragma once

#include <cstdint>

namespace ty {

// Keeps a file that is appended to once and read near its end (a run's
// console: on the node, and the local copy) from filling the page cache.
//   Flush: bytes more than `window` behind the end handed to writeback
//          without waiting (Linux sync_file_range(SYNC_FILE_RANGE_WRITE)),
//          so they are clean, and droppable, soon after.
//   Drop:  bytes more than `window` behind the position (two windows behind
//          with Flush) dropped from the cache where they are clean
//          (posix_fadvise(POSIX_FADV_DONTNEED) skips dirty pages: nothing is
//          lost, nothing waits). The next call asks for the window before
//          again, so a disk that lags a window leaves nothing behind; one
//          that lags more leaves what was still dirty cached.
//   Wait:  (with Flush and Drop) a range is waited on until it is written
//          before it is dropped (sync_file_range WAIT_BEFORE|WRITE|
//          WAIT_AFTER), so nothing is left behind. Its writeback started a
//          window earlier, so that rarely waits; a disk slower than the
//          writer paces the writer, as the kernel's dirty limit would, but
//          a window sooner. For a writer that owns its thread.
// The supervisor on the node writes its run's console with all three (it is
// the run's own process: pacing it paces only that run). RunIngest's local
// copy, written and ingested at once on the engine's thread, which serves
// every run, flushes and drops without waiting. The node's reader, the
// agent's tail, also drops behind what it has sent, for a tail that keeps
// up. A reader still near the end (a follow) finds its bytes in the cache;
// one further back reads them from disk.
//
// Why: a console of many GiB otherwise evicts the rest of the machine's
// cache, and a fresh page costs far more than a recycled one where the machine
// is a VM that hands freed memory back to its host (free page reporting): on
// the 2-core Firecracker VM this project develops on, writing 1 GiB to fresh
// page cache took 4.1 CPU-s, with a trail 0.3 (tests/bench/RESULTS.md).
//
// Plain C++ and POSIX (no Qt): the agent uses it too. Elsewhere than Linux
// Flush and Wait do nothing, and Drop needs posix_fadvise (not on macOS or
// Windows). Errors are ignored: the cache is only a hint.
// Thread affinity: whoever owns the file descriptor.
class WriteBehind final {
public:
    enum Mode : unsigned { Flush = 1, Drop = 2, Wait = 4 };
    static constexpr std::int64_t kDefaultWindow = 32 * 1024 * 1024; // bytes

    explicit WriteBehind(unsigned modes, std::int64_t window = kDefaultWindow)
        : m_modes(modes)
        , m_window(window)
    { }

    // Starts at `position` (the file's size, or where a reader starts):
    // bytes before it are left as they are.
    void reset(std::int64_t position);

    // The writer's end, or the reader's position, is now `position` in the
    // file `fd`. Does nothing until it has moved a whole window; then one
    // or two system calls.
    void advance(int fd, std::int64_t position);

    std::int64_t flushedTo() const { return m_flushed; }
    std::int64_t droppedTo() const { return m_dropped; }

private:
    unsigned m_modes;
    std::int64_t m_window;
    std::int64_t m_start = 0;   // reset() point: bytes before it are not ours
    std::int64_t m_flushed = 0; // writeback started for [m_start, m_flushed)
    std::int64_t m_dropped = 0; // asked to drop [m_start, m_dropped)
};

} // namespace ty
