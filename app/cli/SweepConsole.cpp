#include "SweepConsole.h"

#include <algorithm>

namespace ty::cli {

void SweepConsole::addRun(RunId run, const QString& prefix)
{
    m_runs[run].prefix = prefix.toUtf8() + " | ";
}

QByteArray SweepConsole::feed(RunId run, qint64 offset, const QByteArray& bytes)
{
    const auto it = m_runs.find(run);
    if (it == m_runs.end())
        return {};
    Run& r = *it;
    const qint64 end = offset + bytes.size();
    if (end <= r.seenUpTo)
        return {};
    const qint64 skip = std::max<qint64>(0, r.seenUpTo - offset);
    r.partial += bytes.mid(skip);
    r.seenUpTo = end;
    QByteArray out;
    qsizetype from = 0;
    for (qsizetype nl = r.partial.indexOf('\n'); nl >= 0; nl = r.partial.indexOf('\n', from)) {
        out += r.prefix;
        out += r.partial.mid(from, nl + 1 - from);
        from = nl + 1;
    }
    r.partial.remove(0, from);
    return out;
}

QByteArray SweepConsole::finish(RunId run)
{
    const auto it = m_runs.find(run);
    if (it == m_runs.end() || it->partial.isEmpty())
        return {};
    QByteArray out = it->prefix + it->partial + '\n';
    it->partial.clear();
    return out;
}

} // namespace ty::cli
