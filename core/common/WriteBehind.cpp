#include "WriteBehind.h"

#include <algorithm>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#endif

namespace ty {

void WriteBehind::reset(std::int64_t position)
{
    m_start = position;
    m_flushed = position;
    m_dropped = position;
}

void WriteBehind::advance(int fd, std::int64_t position)
{
    if (fd < 0 || m_window <= 0)
        return;
    // Whole windows only: a call per window, not per append.
    const std::int64_t behind = (position - m_window) / m_window * m_window;
    if ((m_modes & Flush) && behind > m_flushed) {
#if defined(__linux__)
        ::sync_file_range(fd, m_flushed, behind - m_flushed, SYNC_FILE_RANGE_WRITE);
#endif
        m_flushed = behind;
    }
    if (!(m_modes & Drop))
        return;
    // After a flush, the window before: its writeback started a window ago.
    const std::int64_t dropTo = (m_modes & Flush) ? behind - m_window : behind;
    if (dropTo > m_dropped) {
        const std::int64_t from = std::max(m_dropped - m_window, m_start);
#if defined(__linux__)
        // Clean first: its writeback started a window ago, so this rarely
        // waits; without it a disk that lags (another job's I/O) leaves dirty
        // pages that posix_fadvise skips, and they would stay cached.
        if ((m_modes & Flush) && (m_modes & Wait))
            ::sync_file_range(fd, from, dropTo - from,
                    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
#endif
#if defined(POSIX_FADV_DONTNEED)
        ::posix_fadvise(fd, from, dropTo - from, POSIX_FADV_DONTNEED);
#else
        (void)from; // no posix_fadvise (macOS, Windows): the cache is the system's business
#endif
        m_dropped = dropTo;
    }
}

} // namespace ty
