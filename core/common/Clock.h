#pragma once

// The time that engine logic reads and waits on: the current UTC time, and
// timers. The engine (core/runs/RunEngine), its nodes' heartbeats
// (core/nodes/NodeHealth) and its reconnection backoff and probes take one,
// for what depends on time: heartbeat timeouts, reconnection delays and
// probes, a run's time_limit, the submission times that order a FCFS queue,
// the times written into run records and notices. I/O cadences (the
// database poll, GPU reports, metric file polls) stay on QTimer.
//
// systemClock() is the default everywhere: QDateTime's UTC time,
// QElapsedTimer's monotonic time and QTimer, exactly as the code used them
// before it took a clock. Tests pass a manual one (tests/support/TestClock.h)
// whose time moves only when the test says, so timeouts and delays are
// asserted to the millisecond without sleeping.
//
// Units: milliseconds. Thread affinity: a clock's timers fire on the thread
// of their context object (for the engine, the engine's thread); systemClock()
// may be read from any thread. A clock must outlive everything that uses it.

#include <QDateTime>
#include <QObject>

#include <functional>

namespace ty {

// A repeating timer of a clock (Clock::createTimer): like QTimer, start()
// (re)starts it, and its callback runs every interval() ms until stop().
// Setting the interval of an active timer restarts it. A child of the object
// it was created for, so it moves threads with it and dies with it.
class ClockTimer : public QObject {
public:
    using QObject::QObject;
    virtual void setInterval(qint64 ms) = 0;
    virtual qint64 interval() const = 0;
    virtual void start() = 0;
    virtual void stop() = 0;
    virtual bool isActive() const = 0;
};

class Clock {
public:
    Clock() = default;
    Clock(const Clock&) = delete;
    Clock& operator=(const Clock&) = delete;
    virtual ~Clock() = default;

    // The current time, UTC, in ms since the Unix epoch
    // (QDateTime::currentMSecsSinceEpoch() for the system clock).
    virtual qint64 nowMs() const = 0;
    // The same as a QDateTime in UTC.
    QDateTime nowUtc() const { return QDateTime::fromMSecsSinceEpoch(nowMs(), Qt::UTC); }
    // A monotonic reading in ms from an arbitrary origin, for intervals: it
    // never goes back when the wall clock is set (QElapsedTimer).
    virtual qint64 monotonicMs() const = 0;

    // Calls `fn` once, `delayMs` ms from now (0: as soon as it can), on
    // `context`'s thread; not at all if `context` is destroyed first
    // (QTimer::singleShot with a context object).
    virtual void singleShot(qint64 delayMs, QObject* context, std::function<void()> fn) = 0;
    // A repeating timer that calls `fn` (on `parent`'s thread), created
    // stopped with interval 0; `parent` owns it (QObject child).
    virtual ClockTimer* createTimer(QObject* parent, std::function<void()> fn) = 0;
};

// The real clock: QDateTime, QElapsedTimer and QTimer. One per process,
// never destroyed.
Clock& systemClock();

} // namespace ty
