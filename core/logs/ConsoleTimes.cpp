#include "ConsoleTimes.h"

#include <QFile>

#include <algorithm>

namespace ty {

QString ConsoleTimeIndex::pathFor(const QString& consolePath)
{
    if (consolePath.endsWith(QLatin1String(".log")))
        return consolePath.left(consolePath.size() - 4) + QStringLiteral(".times");
    return consolePath + QStringLiteral(".times");
}

QByteArray ConsoleTimeIndex::formatEntry(qint64 offset, qint64 timeMs)
{
    return QByteArray::number(offset) + ' ' + QByteArray::number(timeMs) + '\n';
}

void ConsoleTimeIndex::append(qint64 offset, qint64 timeMs)
{
    while (!m_entries.empty() && m_entries.back().offset >= offset)
        m_entries.pop_back();
    m_entries.push_back({offset, timeMs});
}

int ConsoleTimeIndex::readMore(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    if (f.size() < m_readPos) {
        // Rewritten from scratch (should not happen): start over.
        m_entries.clear();
        m_readPos = 0;
        m_lineNo = 0;
    }
    if (!f.seek(m_readPos))
        return 0;
    const QByteArray data = f.readAll();
    int read = 0;
    qsizetype pos = 0;
    for (;;) {
        const qsizetype nl = data.indexOf('\n', pos);
        if (nl < 0)
            break;
        ++m_lineNo;
        const QByteArrayView line(data.constData() + pos, nl - pos);
        pos = nl + 1;
        const qsizetype sp = line.indexOf(' ');
        bool okOffset = false;
        bool okTime = false;
        const qint64 offset = sp > 0 ? line.first(sp).toLongLong(&okOffset) : 0;
        const qint64 time = sp > 0 ? line.sliced(sp + 1).toLongLong(&okTime) : 0;
        if (!okOffset || !okTime || offset < 0) {
            if (m_error.isEmpty())
                m_error = QStringLiteral("%1:%2: not \"<offset> <ms>\": \"%3\"")
                                  .arg(path)
                                  .arg(m_lineNo)
                                  .arg(QString::fromUtf8(line.first(std::min<qsizetype>(line.size(), 60))));
            continue;
        }
        append(offset, time);
        ++read;
    }
    m_readPos += pos;
    return read;
}

void ConsoleTimeIndex::setFallback(qint64 startMs, qint64 endMs, qint64 endOffset)
{
    m_startMs = startMs;
    m_endMs = endMs;
    m_endOffset = endOffset;
}

qint64 ConsoleTimeIndex::timeAt(qint64 offset) const
{
    if (!m_entries.empty() && offset >= m_entries.front().offset) {
        const auto it = std::upper_bound(
                m_entries.begin(), m_entries.end(), offset, [](qint64 o, const Entry& e) { return o < e.offset; });
        return std::prev(it)->timeMs;
    }
    // Before the first entry, or no index: interpolate.
    const qint64 endOffset = m_entries.empty() ? m_endOffset : m_entries.front().offset;
    const qint64 endMs = m_entries.empty() ? m_endMs : m_entries.front().timeMs;
    if (m_startMs <= 0)
        return std::max<qint64>(endMs, 0);
    if (endMs <= m_startMs || endOffset <= 0)
        return m_startMs;
    const double f = std::clamp(double(offset) / double(endOffset), 0.0, 1.0);
    return m_startMs + qint64(f * double(endMs - m_startMs));
}

} // namespace ty
