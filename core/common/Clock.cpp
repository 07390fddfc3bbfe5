#include "Clock.h"

#include <QElapsedTimer>
#include <QTimer>

#include <chrono>

namespace ty {
namespace {

class SystemClockTimer final : public ClockTimer {
public:
    SystemClockTimer(QObject* parent, std::function<void()> fn)
        : ClockTimer(parent)
        , m_timer(new QTimer(this))
    {
        QObject::connect(m_timer, &QTimer::timeout, this, std::move(fn));
    }
    void setInterval(qint64 ms) override { m_timer->setInterval(std::chrono::milliseconds(ms)); }
    qint64 interval() const override { return m_timer->intervalAsDuration().count(); }
    void start() override { m_timer->start(); }
    void stop() override { m_timer->stop(); }
    bool isActive() const override { return m_timer->isActive(); }

private:
    QTimer* m_timer;
};

class SystemClock final : public Clock {
public:
    SystemClock() { m_monotonic.start(); }
    qint64 nowMs() const override { return QDateTime::currentMSecsSinceEpoch(); }
    qint64 monotonicMs() const override { return m_monotonic.elapsed(); }
    void singleShot(qint64 delayMs, QObject* context, std::function<void()> fn) override
    {
        QTimer::singleShot(std::chrono::milliseconds(delayMs), context, std::move(fn));
    }
    ClockTimer* createTimer(QObject* parent, std::function<void()> fn) override
    {
        return new SystemClockTimer(parent, std::move(fn));
    }

private:
    QElapsedTimer m_monotonic;
};

} // namespace

Clock& systemClock()
{
    static SystemClock* clock = new SystemClock; // never destroyed: timers of static objects may outlive main()
    return *clock;
}

} // namespace ty
