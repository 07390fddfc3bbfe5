#include "TestClock.h"

#include <QCoreApplication>

#include <algorithm>

namespace ty::test {

// A repeating timer of a TestClock: each firing arms the next, `interval`
// after its own due time. A generation number voids what a stop() or
// restart left armed.
class TestClock::Timer final : public ClockTimer {
public:
    Timer(TestClock& clock, QObject* parent, std::function<void()> fn)
        : ClockTimer(parent)
        , m_clock(clock)
        , m_fn(std::move(fn))
    { }
    void setInterval(qint64 ms) override
    {
        m_intervalMs = std::max<qint64>(0, ms);
        if (m_active)
            start();
    }
    qint64 interval() const override { return m_intervalMs; }
    void start() override
    {
        m_clock.disarm(this);
        m_active = true;
        armNext(m_clock.monotonicMs(), ++m_generation);
    }
    void stop() override
    {
        m_clock.disarm(this);
        m_active = false;
        ++m_generation;
    }
    bool isActive() const override { return m_active; }

private:
    void armNext(qint64 fromMs, quint64 generation)
    {
        // An interval of 0 would fire for ever within one advance(): 1 ms instead.
        const qint64 dueMs = fromMs + std::max<qint64>(1, m_intervalMs);
        m_clock.arm(dueMs, this, [this, generation, dueMs] {
            if (!m_active || generation != m_generation)
                return;
            armNext(dueMs, generation);
            m_fn();
        });
    }

    TestClock& m_clock;
    std::function<void()> m_fn;
    qint64 m_intervalMs = 0;
    bool m_active = false;
    quint64 m_generation = 0;
};

TestClock::TestClock(qint64 startMs)
    : m_startMs(startMs)
{ }

TestClock::~TestClock() = default;

void TestClock::singleShot(qint64 delayMs, QObject* context, std::function<void()> fn)
{
    arm(m_elapsedMs + std::max<qint64>(0, delayMs), context, std::move(fn));
}

ClockTimer* TestClock::createTimer(QObject* parent, std::function<void()> fn)
{
    return new Timer(*this, parent, std::move(fn));
}

void TestClock::arm(qint64 dueMs, QObject* context, std::function<void()> fn)
{
    m_entries.push_back(Entry{dueMs, m_nextSeq++, context, std::move(fn)});
}

void TestClock::disarm(const QObject* context)
{
    std::erase_if(m_entries, [context](const Entry& e) { return e.context == context; });
}

std::optional<TestClock::Entry> TestClock::takeDue(qint64 untilMs)
{
    auto best = m_entries.end();
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
        if (it->dueMs > untilMs)
            continue;
        if (best == m_entries.end() || it->dueMs < best->dueMs || (it->dueMs == best->dueMs && it->seq < best->seq))
            best = it;
    }
    if (best == m_entries.end())
        return std::nullopt;
    Entry e = std::move(*best);
    m_entries.erase(best);
    return e;
}

void TestClock::runPendingEvents()
{
    // One round runs what was posted before it (QCoreApplication defers what
    // is posted meanwhile to the next round): kEventRounds rounds follow a
    // chain of queued calls that deep (a reply the fake transport queues,
    // AgentClient's queued callback, the request it makes, its reply, ...).
    for (int i = 0; i < kEventRounds; ++i)
        QCoreApplication::processEvents(QEventLoop::AllEvents);
}

void TestClock::advance(qint64 ms)
{
    const qint64 endMs = m_elapsedMs + std::max<qint64>(0, ms);
    runPendingEvents();
    while (auto e = takeDue(endMs)) {
        m_elapsedMs = std::max(m_elapsedMs, e->dueMs);
        if (!e->context)
            continue; // destroyed meanwhile (QTimer::singleShot with a context does the same)
        e->fn();
        runPendingEvents();
    }
    m_elapsedMs = endMs;
    runPendingEvents();
}

std::optional<qint64> TestClock::nextDueInMs() const
{
    std::optional<qint64> next;
    for (const Entry& e : m_entries)
        if (e.context)
            next = std::min(next.value_or(e.dueMs), e.dueMs);
    return next ? std::optional<qint64>(std::max<qint64>(0, *next - m_elapsedMs)) : std::nullopt;
}

int TestClock::armedTimers() const
{
    return int(std::count_if(m_entries.begin(), m_entries.end(), [](const Entry& e) { return e.context; }));
}

} // namespace ty::test
