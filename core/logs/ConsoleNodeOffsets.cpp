#include "ConsoleNodeOffsets.h"

#include <QFile>
#include <QSaveFile>

namespace ty {

QString ConsoleNodeOffsets::pathFor(const QString& consolePath)
{
    if (consolePath.endsWith(QLatin1String(".log")))
        return consolePath.left(consolePath.size() - 4) + QStringLiteral(".node");
    return consolePath + QStringLiteral(".node");
}

Result<ConsoleNodeOffsets> ConsoleNodeOffsets::load(const QString& path)
{
    ConsoleNodeOffsets offsets;
    QFile f(path);
    if (!f.exists())
        return offsets;
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1: %2").arg(path, f.errorString()));
    const QByteArray data = f.readAll();
    int lineNo = 0;
    for (const QByteArray& line : data.split('\n')) {
        ++lineNo;
        if (line.isEmpty())
            continue;
        const QList<QByteArray> parts = line.split(' ');
        bool okLocal = false;
        bool okNode = false;
        bool okGeneration = false;
        const qint64 local = parts.size() == 3 ? parts[0].toLongLong(&okLocal) : -1;
        const qint64 node = parts.size() == 3 ? parts[1].toLongLong(&okNode) : -1;
        const qint64 generation = parts.size() == 3 ? parts[2].toLongLong(&okGeneration) : -1;
        if (!okLocal || !okNode || !okGeneration || local < 0 || node < 0 || generation < 0
                || (!offsets.m_entries.isEmpty() && local <= offsets.localBase()))
            return fail(QStringLiteral("%1:%2: not \"<local offset> <node offset> <generation>\" after the entries "
                                       "before it: \"%3\"")
                                .arg(path)
                                .arg(lineNo)
                                .arg(QString::fromUtf8(line.left(80))));
        offsets.m_entries.append(Entry{local, node, generation});
    }
    return offsets;
}

Result<void> ConsoleNodeOffsets::save(const QString& path) const
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    for (const Entry& e : m_entries)
        f.write(QByteArray::number(e.local) + ' ' + QByteArray::number(e.node) + ' ' + QByteArray::number(e.generation)
                + '\n');
    if (!f.commit())
        return fail(QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    return {};
}

void ConsoleNodeOffsets::rebase(qint64 local, qint64 node, qint64 generation)
{
    while (!m_entries.isEmpty() && m_entries.back().local >= local)
        m_entries.removeLast();
    m_entries.append(Entry{local, node, generation});
}

} // namespace ty
