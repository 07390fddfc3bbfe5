#include "ConsoleFeeder.h"

#include "core/logs/TerminalRenderer.h"

#include <QFile>
#include <QFileInfo>
#include <QTimer>

#include <utility>

namespace ty {

ConsoleFeeder::ConsoleFeeder(QObject* parent)
    : QObject(parent)
    , m_flushTimer(new QTimer(this))
    , m_pollTimer(new QTimer(this))
{
    m_flushTimer->setSingleShot(true);
    m_flushTimer->setTimerType(Qt::PreciseTimer);
    m_flushTimer->setInterval(kFlushMs);
    connect(m_flushTimer, &QTimer::timeout, this, &ConsoleFeeder::flush);
    m_pollTimer->setInterval(kPollMs);
    connect(m_pollTimer, &QTimer::timeout, this, &ConsoleFeeder::poll);
}

ConsoleFeeder::~ConsoleFeeder() = default;

void ConsoleFeeder::stop()
{
    m_flushTimer->stop();
    m_pollTimer->stop();
}

void ConsoleFeeder::open(int ticket, const QString& path, bool pollFile)
{
    m_ticket = ticket;
    m_path = path;
    m_renderer = std::make_unique<TerminalRenderer>(0, kMaxLineChars);
    m_building.reset();
    m_ready.clear();
    m_readyBytes = 0;
    m_readyDropped = 0;
    m_next = 0;
    m_base = 0;
    m_skipped = 0;
    m_stderr = StderrSidecar(path.isEmpty() ? QString() : StderrSidecar::pathFor(path));
    m_reset = true;
    m_dirty = true;

    if (!path.isEmpty()) {
        const qint64 size = QFileInfo(path).size();
        // As much as the view can hold (its budget counts packed rows, about
        // the raw bytes for plain text), capped at kMaxInitialBytes.
        const qint64 window = std::min<qint64>(kMaxInitialBytes, m_budget);
        qint64 start = 0;
        if (size > window) {
            // Start on a line boundary near the end; the view says what was
            // not read (updated()'s `skippedBytes`).
            start = size - window;
            QFile f(path);
            if (f.open(QIODevice::ReadOnly) && f.seek(start)) {
                const QByteArray probe = f.read(64 * 1024);
                const qsizetype nl = probe.indexOf('\n');
                if (nl >= 0)
                    start += nl + 1;
            }
            // The renderer counts offsets from its first byte; keep ours absolute.
            m_next = start;
            m_base = start;
        }
        m_skipped = start;
        readFileFrom(start, size - start);
    }
    flush();
    m_pollTimer->setInterval(kPollMs);
    if (pollFile)
        m_pollTimer->start();
    else
        m_pollTimer->stop();
}

void ConsoleFeeder::setPolling(int ticket, bool pollFile)
{
    if (ticket != m_ticket)
        return;
    if (pollFile) {
        m_pollTimer->start();
    } else {
        m_pollTimer->stop();
        poll(); // whatever the file got last
    }
}

void ConsoleFeeder::readFileFrom(qint64 offset, qint64 maxBytes)
{
    if (m_path.isEmpty() || maxBytes <= 0)
        return;
    QFile f(m_path);
    if (!f.open(QIODevice::ReadOnly) || !f.seek(offset))
        return;
    constexpr qint64 kChunk = 1 << 20;
    qint64 left = maxBytes;
    while (left > 0) {
        const QByteArray chunk = f.read(std::min(left, kChunk));
        if (chunk.isEmpty())
            break;
        feed(chunk);
        left -= chunk.size();
    }
}

void ConsoleFeeder::feed(const QByteArray& bytes)
{
    if (!m_renderer) {
        m_renderer = std::make_unique<TerminalRenderer>(0, kMaxLineChars);
        m_base = m_next;
    }
    m_renderer->feed(bytes);
    m_next += bytes.size();
    if (m_renderer->committedCount() > 0) {
        QList<ConsoleLine> lines = m_renderer->takeCommitted();
        markStderr(lines, true);
        for (const ConsoleLine& line : std::as_const(lines))
            commit(line);
    }
    m_dirty = true;
}

void ConsoleFeeder::commit(const ConsoleLine& line)
{
    if (!m_building)
        m_building = std::make_shared<ScrollbackChunk>();
    m_building->append(line);
    if (!m_building->isFull())
        return;
    m_building->squeeze();
    m_readyBytes += m_building->memoryBytes();
    m_ready.append(std::move(m_building));
    // What the view would drop at once is not kept here either (a huge
    // initial read): memory stays within the view's budget.
    while (m_ready.size() > 1 && m_readyBytes > m_budget) {
        m_readyBytes -= m_ready.front()->memoryBytes();
        m_readyDropped += m_ready.front()->rowCount();
        m_ready.removeFirst();
    }
}

void ConsoleFeeder::markStderr(QList<ConsoleLine>& lines, bool committed)
{
    if (lines.isEmpty() || !m_renderer)
        return;
    const qint64 fedEnd = m_base + m_renderer->bytesFed();
    qint64 end = fedEnd;
    if (committed) {
        const QList<ConsoleLine> pending = m_renderer->pendingLines();
        if (!pending.isEmpty())
            end = m_base + pending.front().byteOffset;
    }
    // Ranges before the first row still needed are dropped: memory stays
    // bounded by the live rows, not by the run's length.
    m_stderr.refresh(m_base + lines.front().byteOffset);
    markStderrLines(lines, m_base, end, m_stderr.ranges());
}

void ConsoleFeeder::append(int ticket, qint64 offset, const QByteArray& bytes)
{
    if (ticket != m_ticket || bytes.isEmpty())
        return;
    const qint64 end = offset + bytes.size();
    if (end <= m_next)
        return; // already shown
    if (offset > m_next)
        readFileFrom(m_next, offset - m_next); // fill the gap when the copy has it
    if (offset < m_next)
        feed(bytes.mid(m_next - offset));
    else
        feed(bytes);
    // A gap the file could not fill: continue at the live offset.
    m_next = std::max(m_next, end);
    scheduleFlush();
}

void ConsoleFeeder::poll()
{
    if (m_path.isEmpty())
        return;
    const qint64 size = QFileInfo(m_path).size();
    if (size > m_next) {
        readFileFrom(m_next, std::min<qint64>(size - m_next, 8 << 20));
        scheduleFlush();
    }
}

void ConsoleFeeder::scheduleFlush()
{
    if (m_flushTimer->isActive())
        return; // an update is due already
    // Quiet for kFlushMs: now (after this pass's other bytes); else at the
    // end of the kFlushMs since the last update.
    const qint64 since = m_sinceFlush.isValid() ? m_sinceFlush.elapsed() : kFlushMs;
    m_flushTimer->start(int(std::max<qint64>(0, kFlushMs - since)));
}

void ConsoleFeeder::flush()
{
    if (!m_dirty)
        return;
    m_dirty = false;
    m_sinceFlush.start();
    if (m_building && m_building->rowCount() > 0) {
        m_building->squeeze();
        m_ready.append(std::move(m_building));
    }
    m_building.reset();
    QList<ScrollbackChunkPtr> committed;
    committed.swap(m_ready);
    m_readyBytes = 0;
    QList<ConsoleLine> pending = m_renderer ? m_renderer->pendingLines() : QList<ConsoleLine>{};
    markStderr(pending, false);
    const bool reset = m_reset;
    m_reset = false;
    Q_EMIT updated(m_ticket, reset, m_skipped, std::exchange(m_readyDropped, 0), committed, pending, m_next);
}

} // namespace ty
