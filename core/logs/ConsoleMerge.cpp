#include "ConsoleMerge.h"

#include "StderrRanges.h"
#include "TerminalRenderer.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>

namespace ty {

bool mergedBefore(const MergedConsoleLine& a, const MergedConsoleLine& b)
{
    if (a.timeMs != b.timeMs)
        return a.timeMs < b.timeMs;
    if (a.run != b.run)
        return a.run < b.run;
    return a.offset < b.offset;
}

struct ConsoleMerge::Source {
    ConsoleMergeSource info;
    QString timesPath;
    std::unique_ptr<TerminalRenderer> renderer;
    ConsoleTimeIndex times;
    StderrSidecar stderrBytes{QString()}; // console.stderr beside the copy
    ConsoleLevelClassifier classifier;
    qint64 read = 0;
    bool finished = false;
};

ConsoleMerge::ConsoleMerge(int maxLineChars)
    : m_maxLineChars(maxLineChars)
{ }

ConsoleMerge::~ConsoleMerge() = default;

int ConsoleMerge::addSource(ConsoleMergeSource source)
{
    auto s = std::make_unique<Source>();
    s->renderer = std::make_unique<TerminalRenderer>(0, m_maxLineChars);
    m_sources.push_back(std::move(s));
    const int index = int(m_sources.size()) - 1;
    updateSource(index, std::move(source));
    return index;
}

void ConsoleMerge::updateSource(int index, ConsoleMergeSource source)
{
    Source& s = *m_sources.at(index);
    s.timesPath = !source.timesPath.isEmpty() ? source.timesPath
            : source.consolePath.isEmpty()    ? QString()
                                              : ConsoleTimeIndex::pathFor(source.consolePath);
    const QString sidecar = source.consolePath.isEmpty() ? QString() : StderrSidecar::pathFor(source.consolePath);
    if (sidecar != s.stderrBytes.path())
        s.stderrBytes = StderrSidecar(sidecar);
    s.info = std::move(source);
}

const ConsoleMergeSource& ConsoleMerge::source(int index) const
{
    return m_sources.at(index)->info;
}

int ConsoleMerge::indexOf(RunId run) const
{
    for (size_t i = 0; i < m_sources.size(); ++i) {
        if (m_sources[i]->info.run == run)
            return int(i);
    }
    return -1;
}

Result<qint64> ConsoleMerge::readSource(int index, qint64 maxBytes)
{
    Source& s = *m_sources.at(index);
    if (s.finished || s.info.consolePath.isEmpty() || maxBytes <= 0)
        return 0;
    QFile f(s.info.consolePath);
    if (!f.exists())
        return 0;
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("run %1 (%2): cannot read the console copy %3: %4")
                            .arg(s.info.run)
                            .arg(s.info.name, s.info.consolePath, f.errorString()));
    const qint64 size = f.size();
    if (size <= s.read)
        return 0;
    if (!f.seek(s.read))
        return fail(
                QStringLiteral("run %1 (%2): cannot seek in %3").arg(s.info.run).arg(s.info.name, s.info.consolePath));
    const QByteArray bytes = f.read(std::min(maxBytes, size - s.read));
    if (bytes.isEmpty())
        return 0;
    // The index after the bytes: RunIngest writes an entry before its bytes,
    // so every byte read here has its entry.
    if (!s.timesPath.isEmpty())
        s.times.readMore(s.timesPath);
    // Likewise the stderr ranges (written before their bytes); ranges
    // before the first row still to come are not kept.
    if (!s.stderrBytes.path().isEmpty()) {
        const qint64 pending = s.renderer->pendingStartOffset();
        s.stderrBytes.refresh(pending >= 0 ? pending : s.read);
    }
    const qint64 endMs = s.info.endMs > 0 ? s.info.endMs : QFileInfo(f).lastModified().toMSecsSinceEpoch();
    s.times.setFallback(s.info.startMs, endMs, size);
    // Settle rows only once caught up with the file: the result of reading
    // a finished file does not depend on the chunk size.
    feed(index, bytes, s.read + bytes.size() >= size);
    return bytes.size();
}

void ConsoleMerge::feed(int index, QByteArrayView bytes, bool settle)
{
    Source& s = *m_sources.at(index);
    if (s.finished || bytes.isEmpty())
        return;
    s.renderer->feed(bytes);
    s.read += bytes.size();
    if (settle)
        s.renderer->commitSettledRows();
    collect(s, index, false);
}

void ConsoleMerge::finishSource(int index)
{
    Source& s = *m_sources.at(index);
    if (s.finished)
        return;
    s.renderer->finish();
    collect(s, index, true);
    s.finished = true;
}

bool ConsoleMerge::isFinished(int index) const
{
    return m_sources.at(index)->finished;
}

qint64 ConsoleMerge::bytesRead(int index) const
{
    return m_sources.at(index)->read;
}

ConsoleTimeIndex& ConsoleMerge::times(int index)
{
    return m_sources.at(index)->times;
}

bool ConsoleMerge::timesEstimated(int index) const
{
    const Source& s = *m_sources.at(index);
    return !s.times.hasEntries() || (s.read > 0 && s.times.entries().front().offset > 0);
}

void ConsoleMerge::collect(Source& s, int index, bool final)
{
    if (s.renderer->committedCount() == 0)
        return;
    QList<ConsoleLine> lines = s.renderer->takeCommitted();
    qint64 tailStart = s.read;
    if (!final) {
        const qint64 pendingStart = s.renderer->pendingStartOffset();
        if (pendingStart >= 0)
            tailStart = pendingStart;
    }
    if (!s.stderrBytes.ranges().isEmpty())
        markStderrLines(lines, 0, tailStart, s.stderrBytes.ranges());
    m_out.reserve(m_out.size() + lines.size());
    for (qsizetype k = 0; k < lines.size(); ++k) {
        const ConsoleLine& line = lines.at(k);
        const qint64 next = k + 1 < lines.size() ? lines.at(k + 1).byteOffset : tailStart;
        const qint64 lastByte = std::max(line.byteOffset, next - 1);
        MergedConsoleLine m;
        m.timeMs = s.times.timeAt(lastByte);
        m.run = s.info.run;
        m.offset = line.byteOffset;
        m.text = line.text;
        m.source = index;
        m.level = s.classifier.classify(line.text);
        m.traceback = s.classifier.lastWasTraceback();
        m.truncated = line.truncated;
        m.fromStderr = line.fromStderr;
        m_out.append(std::move(m));
    }
}

QList<MergedConsoleLine> ConsoleMerge::takeLines()
{
    QList<MergedConsoleLine> out;
    out.swap(m_out);
    std::stable_sort(out.begin(), out.end(), mergedBefore);
    return out;
}

Result<QList<MergedConsoleLine>> ConsoleMerge::mergeFiles(const QList<ConsoleMergeSource>& sources, int maxLineChars)
{
    ConsoleMerge merge(maxLineChars);
    for (const ConsoleMergeSource& s : sources)
        merge.addSource(s);
    for (int i = 0; i < merge.sourceCount(); ++i) {
        for (;;) {
            const Result<qint64> n = merge.readSource(i, 4 << 20);
            if (!n)
                return std::unexpected(n.error());
            if (*n == 0)
                break;
        }
        merge.finishSource(i);
    }
    return merge.takeLines();
}

} // namespace ty
