#include "WriteRetry.h"

#include <algorithm>

namespace ty {

int WriteRetry::nextDelayMs()
{
    const int shift = std::min(m_tries, 5); // 250 << 5 = 8000
    ++m_tries;
    return std::min(kFirstDelayMs << shift, kMaxDelayMs);
}

QString WriteRetry::noticeText(qint64 storedOffset, const QString& why)
{
    return QStringLiteral("its console and metrics could not be recorded after byte %1 of its console (%2); "
                          "they are fetched from the node again from there once writes succeed (free space on "
                          "that disk if it is full)")
            .arg(storedOffset)
            .arg(why);
}

} // namespace ty
