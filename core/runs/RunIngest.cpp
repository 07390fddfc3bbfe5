#include "RunIngest.h"

#include "core/logs/ConsoleTimes.h"
#include "core/logs/FailureDetector.h"
#include "core/logs/MetricExtractor.h"
#include "core/logs/TerminalRenderer.h"
#include "core/store/ResultStore.h"

#include <QDateTime>
#include <QDir>
#include <QRegularExpression>

#include <cerrno>
#include <cstring>
#include <utility>

#include <unistd.h>

namespace ty {
namespace {
constexpr qint64 kReplayChunk = 1 << 20;
}

RunIngest::RunIngest(RunRecord run, ResultStore* store)
    : m_run(std::move(run))
    , m_store(store)
{ }

RunIngest::~RunIngest() = default;

Result<qint64> RunIngest::open(const QString& dir)
{
    if (!QDir().mkpath(dir))
        return fail(QStringLiteral("run %1: cannot create %2").arg(m_run.id).arg(dir));
    if (m_run.consolePath.isEmpty())
        m_run.consolePath = dir + QStringLiteral("/console.log");
    // Before anything is queued for the run: a failed write from here on
    // holds back what follows until the next open() (ResultStore.h).
    m_store->beginIngestion(m_run.id);
    m_copy.setFileName(m_run.consolePath);
    if (!m_copy.open(QIODevice::ReadWrite))
        return fail(QStringLiteral("run %1: cannot open the console copy %2: %3")
                            .arg(m_run.id)
                            .arg(m_run.consolePath, m_copy.errorString()));

    // The spec's own metric rules, already validated when it was submitted.
    m_extractor = std::make_unique<MetricExtractor>(m_rules);
    // Keys counted without a step on their line continue where they stopped.
    const QMap<QString, MetricPoint> latest = m_store->latestMetrics(m_run.id);
    for (auto it = latest.cbegin(); it != latest.cend(); ++it)
        m_extractor->setLastStep(it.key(), it.value().step);
    m_failures = std::make_unique<FailureDetector>();
    m_renderer = std::make_unique<TerminalRenderer>(0);
    m_renderer->setLineSink([this](const ConsoleLine& line) { takeLine(line); });
    // Rows further above the cursor than the program has ever moved it up are
    // final in practice; committing them after every chunk keeps curves live
    // while a progress bar below keeps redrawing.
    m_renderer->setSettleAfterFeed(true);

    m_fetched = m_copy.size();
    // Arrival times for the aggregated console; optional: without them it
    // interpolates, so a failure to open is no reason to stop ingesting.
    m_times.setFileName(ConsoleTimeIndex::pathFor(m_run.consolePath));
    (void)m_times.open(QIODevice::WriteOnly | QIODevice::Append);
    m_stderr = StderrSidecar(StderrSidecar::pathFor(m_run.consolePath));
    auto nodeOffsets = ConsoleNodeOffsets::load(ConsoleNodeOffsets::pathFor(m_run.consolePath));
    if (!nodeOffsets)
        return fail(QStringLiteral("run %1: %2").arg(m_run.id).arg(nodeOffsets.error().message));
    m_nodeOffsets = std::move(*nodeOffsets);
    if (m_fetched < m_nodeOffsets.localBase()) {
        // The copy lost bytes after a truncation on the node (deleted by
        // hand?): those of the old content are gone there too; the current
        // content is fetched again from its start, after what is left.
        m_nodeOffsets.rebase(m_fetched, m_nodeOffsets.nodeBase(), m_nodeOffsets.generation());
        if (auto saved = m_nodeOffsets.save(ConsoleNodeOffsets::pathFor(m_run.consolePath)); !saved)
            return fail(QStringLiteral("run %1: %2").arg(m_run.id).arg(saved.error().message));
    }
    const qint64 stored = m_run.consoleOffset;
    if (stored > m_fetched) {
        // The local copy lost bytes (deleted by hand?): fetch again from its
        // end, but lines before the stored offset were ingested already.
        m_suppressBefore = stored;
        m_rendererBase = m_fetched;
        m_ingested = stored;
    } else {
        m_rendererBase = stored;
        m_ingested = stored;
    }
    // Replay what was fetched but not ingested: rebuilds the renderer's live
    // rows exactly as they were, and ingests lines that were complete.
    if (m_fetched > m_rendererBase) {
        if (!m_copy.seek(m_rendererBase))
            return fail(QStringLiteral("run %1: cannot read %2").arg(m_run.id).arg(m_run.consolePath));
        qint64 left = m_fetched - m_rendererBase;
        m_feedTimeMs = QDateTime::currentMSecsSinceEpoch();
        while (left > 0) {
            const QByteArray chunk = m_copy.read(std::min(left, kReplayChunk));
            if (chunk.isEmpty())
                return fail(QStringLiteral("run %1: %2 is shorter than expected").arg(m_run.id).arg(m_run.consolePath));
            m_renderer->feed(chunk);
            left -= chunk.size();
        }
        processCommitted(false);
    }
    m_copyTrail.reset(m_fetched);
    return m_nodeOffsets.toNode(m_fetched);
}

Result<void> RunIngest::nodeConsoleTruncated(qint64 generation)
{
    m_nodeOffsets.rebase(m_fetched, 0, std::max<qint64>(generation, m_nodeOffsets.generation() + 1));
    if (auto saved = m_nodeOffsets.save(ConsoleNodeOffsets::pathFor(m_run.consolePath)); !saved)
        return fail(QStringLiteral("run %1: %2").arg(m_run.id).arg(saved.error().message));
    return {};
}

void RunIngest::setRules(QList<MetricRule> rules)
{
    m_rules = std::move(rules);
}

Result<QList<MetricPoint>> RunIngest::ingest(
        qint64 nodeOffset, QByteArrayView bytes, const QList<ByteRange>& nodeStderrRanges)
{
    m_writeFailed = false;
    // From here on, offsets of the local copy.
    const qint64 shift = m_nodeOffsets.toLocal(0);
    const qint64 offset = nodeOffset + shift;
    QList<ByteRange> stderrRanges = nodeStderrRanges;
    for (ByteRange& r : stderrRanges)
        r.offset += shift;
    if (offset > m_fetched)
        return fail(QStringLiteral("run %1: console bytes from offset %2 arrived, but only %3 bytes are held: a gap")
                            .arg(m_run.id)
                            .arg(offset)
                            .arg(m_fetched));
    const qint64 skip = m_fetched - offset;
    if (skip >= bytes.size())
        return QList<MetricPoint>{};
    const QByteArrayView fresh = bytes.sliced(skip);
    ByteRanges freshStderr;
    for (const ByteRange& r : stderrRanges) {
        const qint64 b = std::max(r.offset, m_fetched);
        const qint64 e = std::min(r.end(), m_fetched + fresh.size());
        if (e > b)
            freshStderr.append(ByteRange{b, e - b});
    }
    if (auto written = m_stderr.append(freshStderr); !written) {
        m_writeFailed = true; // nothing of the bytes is held: they can be given again
        return fail(QStringLiteral("run %1: %2").arg(m_run.id).arg(written.error().message));
    }
    // The time entry goes first, so a reader that sees the bytes sees their time.
    if (m_times.isOpen()) {
        m_times.write(ConsoleTimeIndex::formatEntry(m_fetched, QDateTime::currentMSecsSinceEpoch()));
        m_times.flush();
    }
    // Straight to the file at the held end (no QFile buffer, whose failure
    // would only show at a later flush, with "Unknown error"): a failed
    // write leaves the copy at m_fetched, cut back from a partial one, so
    // the same bytes can be asked for again (writeFailed()).
    const int fd = m_copy.handle();
    for (qint64 done = 0; done < fresh.size();) {
        const ssize_t n = ::pwrite(fd, fresh.data() + done, std::size_t(fresh.size() - done), off_t(m_fetched + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int e = n < 0 ? errno : ENOSPC; // pwrite() writes nothing without an error only when full
            // A partial write is the right bytes at the right place; cut it
            // anyway so the copy's size stays what is held (open() reads it).
            // Failing that, the next write overwrites them with the same bytes.
            [[maybe_unused]] const int cut = ::ftruncate(fd, off_t(m_fetched));
            m_writeFailed = true;
            return fail(QStringLiteral("run %1: cannot append to %2: %3")
                                .arg(m_run.id)
                                .arg(m_run.consolePath, QString::fromLocal8Bit(std::strerror(e))));
        }
        done += n;
    }
    m_fetched += fresh.size();
    m_copyTrail.advance(m_copy.handle(), m_fetched);
    m_feedTimeMs = QDateTime::currentMSecsSinceEpoch();
    m_renderer->feed(fresh);
    return processCommitted(false);
}

QList<MetricPoint> RunIngest::finish()
{
    m_feedTimeMs = QDateTime::currentMSecsSinceEpoch();
    m_renderer->finish();
    return processCommitted(true);
}

QString RunIngest::failureReason() const
{
    return m_failures ? m_failures->reason() : QString();
}

void RunIngest::takeLine(const ConsoleLine& line)
{
    if (m_rendererBase + line.byteOffset < m_suppressBefore)
        return; // ingested in an earlier session
    m_failures->feed(line.text);
    const QList<ExtractedMetric> found = m_extractor->extract(line.text);
    for (const ExtractedMetric& m : found) {
        MetricPoint p;
        p.run = m_run.id;
        p.key = m.key;
        p.keyHandle = m.keyHandle;
        p.step = m.step;
        p.epoch = m.epoch;
        p.wallTimeMs = m_feedTimeMs;
        p.value = m.value;
        m_points.append(p);
    }
}

QList<MetricPoint> RunIngest::processCommitted(bool final)
{
    // Each committed row went to takeLine(), the settled ones at the end of
    // the feed (see open()). Where the rows still being redrawn start (no text built: this runs per chunk).
    const qint64 pendingStart = final ? -1 : m_renderer->pendingStartOffset();
    const qint64 fedEnd = m_rendererBase + m_renderer->bytesFed();
    const qint64 pendingFrom = pendingStart < 0 ? fedEnd : m_rendererBase + pendingStart;
    QList<MetricPoint> points = std::exchange(m_points, {});
    qint64 newIngested;
    if (final) {
        newIngested = m_fetched;
    } else {
        newIngested = pendingFrom;
    }
    newIngested = std::max(newIngested, m_ingested);
    if (!points.isEmpty())
        m_store->appendMetrics(points);
    if (newIngested != m_ingested) {
        m_ingested = newIngested;
        m_run.consoleOffset = newIngested;
        m_store->setConsoleOffset(m_run.id, newIngested);
    }
    return points;
}

} // namespace ty
