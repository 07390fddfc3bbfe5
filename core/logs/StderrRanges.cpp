#include "StderrRanges.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <string_view>

namespace ty {

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
    m_reader.consume(std::string_view(fresh.constData(), std::size_t(fresh.size())), keepFrom, m_ranges);
}

Result<void> StderrSidecar::append(const ByteRanges& ranges)
{
    if (ranges.isEmpty())
        return {};
    QByteArray text;
    for (const ByteRange& r : ranges) {
        if (r.length <= 0)
            continue;
        text += QByteArray::fromStdString(agentproto::formatStderrRange(r.offset, r.length));
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
