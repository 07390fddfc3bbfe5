#include "AggregatedConsoleFeeder.h"

#include <algorithm>

#include <QElapsedTimer>
#include <QFileInfo>
#include <QTimer>

namespace ty {

AggregatedConsoleFeeder::AggregatedConsoleFeeder(QObject* parent)
    : QObject(parent)
    , m_pollTimer(new QTimer(this))
{
    m_pollTimer->setInterval(kPollMs);
    connect(m_pollTimer, &QTimer::timeout, this, &AggregatedConsoleFeeder::poll);
}

AggregatedConsoleFeeder::~AggregatedConsoleFeeder() = default;

void AggregatedConsoleFeeder::stop()
{
    m_pollTimer->stop();
}

bool AggregatedConsoleFeeder::readAll(int index, qint64& done, qint64 total)
{
    QElapsedTimer sinceProgress;
    sinceProgress.start();
    for (;;) {
        if (m_abort.load())
            return false;
        const Result<qint64> n = m_merge->readSource(index, kReadChunk);
        if (!n) {
            m_errors << n.error().message;
            return true;
        }
        if (*n == 0)
            return true;
        done += *n;
        if (sinceProgress.elapsed() > 100) {
            Q_EMIT progress(m_ticket, done, total, true);
            sinceProgress.restart();
        }
    }
}

void AggregatedConsoleFeeder::open(int ticket, const QList<ConsoleMergeSource>& sources, const QList<bool>& live)
{
    m_ticket = ticket;
    m_merge = std::make_unique<ConsoleMerge>();
    m_live = live;
    m_errors.clear();
    m_pollTimer->stop();
    qint64 total = 0;
    for (const ConsoleMergeSource& s : sources) {
        m_merge->addSource(s);
        if (!s.consolePath.isEmpty())
            total += std::max<qint64>(QFileInfo(s.consolePath).size(), 0);
    }
    m_live.resize(sources.size());
    Q_EMIT progress(m_ticket, 0, total, true);
    qint64 done = 0;
    for (int i = 0; i < m_merge->sourceCount(); ++i) {
        if (!readAll(i, done, total))
            return;
        if (!m_live.at(i))
            m_merge->finishSource(i);
    }
    emitLines(true);
    Q_EMIT progress(m_ticket, done, total, false);
    check();
    if (m_live.contains(true))
        m_pollTimer->start();
}

void AggregatedConsoleFeeder::updateSource(int ticket, const ConsoleMergeSource& source, bool live)
{
    if (ticket != m_ticket || !m_merge)
        return;
    const int i = m_merge->indexOf(source.run);
    if (i < 0)
        return;
    m_merge->updateSource(i, source);
    m_live[i] = live;
    if (!live) {
        qint64 done = 0;
        readAll(i, done, 0);
        m_merge->finishSource(i);
        emitLines(false);
        check();
    } else if (!m_pollTimer->isActive()) {
        m_pollTimer->start();
    }
}

void AggregatedConsoleFeeder::poll()
{
    if (!m_merge)
        return;
    bool any = false;
    for (int i = 0; i < m_merge->sourceCount(); ++i) {
        if (!m_live.at(i))
            continue;
        any = true;
        const Result<qint64> n = m_merge->readSource(i, 8 * kReadChunk);
        if (!n && !m_errors.contains(n.error().message)) {
            m_errors << n.error().message;
            check();
        }
    }
    if (m_merge->waitingLines() > 0)
        emitLines(false);
    if (!any)
        m_pollTimer->stop();
}

void AggregatedConsoleFeeder::emitLines(bool reset)
{
    QList<MergedConsoleLine> lines = m_merge->takeLines();
    if (lines.size() <= kBatchLines) {
        if (reset || !lines.isEmpty())
            Q_EMIT linesReady(m_ticket, reset, lines);
        return;
    }
    for (qsizetype from = 0; from < lines.size(); from += kBatchLines) {
        Q_EMIT linesReady(m_ticket, reset && from == 0, lines.mid(from, kBatchLines));
    }
}

void AggregatedConsoleFeeder::check()
{
    QList<qint64> estimated;
    for (int i = 0; i < m_merge->sourceCount(); ++i) {
        if (m_merge->bytesRead(i) > 0 && m_merge->timesEstimated(i))
            estimated << m_merge->source(i).run;
        const QString err = m_merge->times(i).error();
        if (!err.isEmpty() && !m_errors.contains(err))
            m_errors << err;
    }
    Q_EMIT sourcesChecked(m_ticket, estimated, m_errors);
}

} // namespace ty
