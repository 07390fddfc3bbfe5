#include "StderrRanges.h"

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace ty::agent {

StderrRangeReader::~StderrRangeReader()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void StderrRangeReader::refresh(std::int64_t consumedTo)
{
    if (m_fd < 0) {
        m_fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0) {
            m_reader.consume({}, consumedTo, m_ranges);
            return;
        }
    }
    char buf[65536];
    for (;;) {
        const ssize_t n = ::pread(m_fd, buf, sizeof buf, off_t(m_readPos));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        m_readPos += n;
        // Each read's lines at once: the held ranges stay as small as before.
        m_reader.consume(std::string_view(buf, std::size_t(n)), consumedTo, m_ranges);
    }
    m_reader.consume({}, consumedTo, m_ranges);
}

} // namespace ty::agent
