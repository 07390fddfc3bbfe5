#pragma once

// A manual clock (core/common/Clock.h) for tests of engine logic: its time
// stands still until the test calls advance(), which fires the timers that
// fall due on the way, in order, each at its own due time. Nothing sleeps,
// and what a test asserts about a timeout holds to the millisecond.
//
//   TestClock clock;                        // 2026-01-01T00:00:00Z
//   RunEngine engine(store, dbPath, clock); // a run with time_limit: 90s starts
//   clock.advance(89999);                   // not cancelled yet
//   clock.advance(1);                       // cancelled now
//
// advance(ms) first runs the event loop's pending work (queued replies of
// the fake transport, AgentClient's queued callbacks, the engine's
// scheduling pass: chains of queued calls up to kEventRounds deep), then
// repeatedly takes the earliest timer due by the end (ties: the order they
// were armed), sets the time to its due time, calls it and runs pending work
// again, so whatever a callback started (a ping answered at once) happens at
// that instant; timers armed meanwhile fire within the same advance when
// they fall due by its end. Finally the time is the end, and pending work
// runs once more; advance(0) only runs pending work and what is due now. A
// timer whose context object was destroyed is dropped. The clock's timers
// fire in an order that depends only on due times and arming order, never on
// the machine's speed (real I/O, such as the store's writer thread, still
// takes the time it takes: flush() before reading what the engine wrote).
//
// nowMs() starts at `startMs` (default 2026-01-01T00:00:00Z, UTC, ms since
// the epoch); monotonicMs() at 0, and both move together.
//
// Thread affinity: one thread, the one that calls advance(), which must be
// that of every object whose timers it runs (the engine under test). Not
// thread-safe.

#include "core/common/Clock.h"

#include <QPointer>

#include <optional>
#include <vector>

namespace ty::test {

class TestClock final : public Clock {
public:
    static constexpr qint64 kDefaultStartMs = 1767225600000; // 2026-01-01T00:00:00Z
    static constexpr int kEventRounds = 10;

    explicit TestClock(qint64 startMs = kDefaultStartMs);
    ~TestClock() override;

    qint64 nowMs() const override { return m_startMs + m_elapsedMs; }
    qint64 monotonicMs() const override { return m_elapsedMs; }
    void singleShot(qint64 delayMs, QObject* context, std::function<void()> fn) override;
    ClockTimer* createTimer(QObject* parent, std::function<void()> fn) override;

    // Moves the time `ms` (>= 0) forward, firing every timer due by then (see above).
    void advance(qint64 ms);
    // ms from now to the next armed timer (0: due now); nullopt when none is armed.
    std::optional<qint64> nextDueInMs() const;
    // Timers armed and not yet fired (single shots and active repeating timers).
    int armedTimers() const;

private:
    class Timer;
    struct Entry {
        qint64 dueMs = 0; // monotonic
        quint64 seq = 0;  // arming order
        QPointer<QObject> context;
        std::function<void()> fn;
    };
    void arm(qint64 dueMs, QObject* context, std::function<void()> fn);
    void disarm(const QObject* context); // a repeating timer's entry, at stop() or restart
    // The earliest entry due by `untilMs` (removed), or nullopt.
    std::optional<Entry> takeDue(qint64 untilMs);
    static void runPendingEvents();

    qint64 m_startMs;
    qint64 m_elapsedMs = 0;
    quint64 m_nextSeq = 0;
    std::vector<Entry> m_entries;
};

} // namespace ty::test
