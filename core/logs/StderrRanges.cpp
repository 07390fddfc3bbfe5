#include "StderrRanges.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>

namespace ty {

void StderrRanges::add(qint64 offset, qint64 length)
{
    if (length <= 0 || offset < 0)
        return;
    ByteRange r{offset, length};
    if (m_ranges.empty() || m_ranges.back().end() < r.offset) {
        m_ranges.push_back(r);
        return;
    }
    if (m_ranges.back().end() == r.offset) {
        m_ranges.back().length += r.length;
        return;
    }
    // Overlapping or out of order (a re-fetched copy): merge into place.
    auto first = std::partition_point(
            m_ranges.begin(), m_ranges.end(), [&](const ByteRange& x) { return x.end() < r.offset; });
    auto last = first;
    qint64 b = r.offset, e = r.end();
    while (last != m_ranges.end() && last->offset <= e) {
        b = std::min(b, last->offset);
        e = std::max(e, last->end());
        ++last;
    }
    first = m_ranges.erase(first, last);
    m_ranges.insert(first, ByteRange{b, e - b});
}

bool StderrRanges::intersects(qint64 from, qint64 to) const
{
    if (from >= to)
        return false;
    auto it = std::partition_point(
            m_ranges.begin(), m_ranges.end(), [&](const ByteRange& x) { return x.end() <= from; });
    return it != m_ranges.end() && it->offset < to;
}

void StderrRanges::dropBefore(qint64 offset)
{
    while (!m_ranges.empty() && m_ranges.front().end() <= offset)
        m_ranges.pop_front();
}

QString StderrSidecar::pathFor(const QString& consolePath)
{
    return QFileInfo(consolePath).dir().filePath(QStringLiteral("console.stderr"));
}

StderrSidecar::StderrSidecar(QString path)
    : m_path(std::move(path))
{ }

void StderrSidecar::refresh(qint64 keepFrom)
{
    m_ranges.dropBefore(keepFrom);
    if (m_path.isEmpty())
        return;
    QFile f(m_path);
    if (!f.open(QIODevice::ReadOnly) || f.size() <= m_readPos || !f.seek(m_readPos))
        return;
    const QByteArray fresh = f.readAll();
    m_readPos += fresh.size();
    m_partial += fresh;
    qsizetype pos = 0;
    for (;;) {
        const qsizetype nl = m_partial.indexOf('\n', pos);
        if (nl < 0)
            break;
        const QByteArrayView line = QByteArrayView(m_partial).sliced(pos, nl - pos);
        pos = nl + 1;
        const qsizetype sp = line.indexOf(' ');
        if (sp <= 0)
            continue;
        bool ok1 = false, ok2 = false;
        const qint64 off = line.first(sp).toLongLong(&ok1);
        const qint64 len = line.sliced(sp + 1).toLongLong(&ok2);
        if (ok1 && ok2 && off + len > keepFrom)
            m_ranges.add(off, len);
    }
    m_partial.remove(0, pos);
}

Result<void> StderrSidecar::append(const ByteRanges& ranges)
{
    if (ranges.isEmpty())
        return {};
    QByteArray text;
    for (const ByteRange& r : ranges) {
        if (r.length <= 0)
            continue;
        text += QByteArray::number(r.offset) + ' ' + QByteArray::number(r.length) + '\n';
    }
    if (text.isEmpty())
        return {};
    QFile f(m_path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Append) || f.write(text) != text.size())
        return fail(QStringLiteral("cannot append to %1: %2").arg(m_path, f.errorString()));
    return {};
}

void markStderrLines(QList<ConsoleLine>& lines, qint64 base, qint64 end, const StderrRanges& ranges)
{
    if (ranges.isEmpty())
        return; // fromStderr stays as the renderer left it: false (the usual run writes no stderr for a while)
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const qint64 from = base + lines[i].byteOffset;
        qint64 to = i + 1 < lines.size() ? base + lines[i + 1].byteOffset : end;
        to = std::max(to, from + 1);
        lines[i].fromStderr = ranges.intersects(from, to);
    }
}

} // namespace ty
