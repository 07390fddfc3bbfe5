#include "StoredRunWait.h"

#include "core/store/ResultStore.h"

#include <QTimer>

namespace ty {

StoredRunWait::StoredRunWait(ResultStore* store, RunId run, Condition done, QObject* parent)
    : QObject(parent)
    , m_store(store)
    , m_run(run)
    , m_done(std::move(done))
    , m_timer(new QTimer(this))
{
    connect(m_timer, &QTimer::timeout, this, &StoredRunWait::check);
}

void StoredRunWait::start(int pollMs, qint64 timeoutMs)
{
    m_finished = false;
    m_timeoutMs = std::max<qint64>(0, timeoutMs);
    m_clock.start();
    m_timer->start(std::max(1, pollMs));
    check();
}

void StoredRunWait::check()
{
    if (m_finished || !m_clock.isValid())
        return;
    if (auto r = m_store->run(m_run)) {
        m_last = *r;
        if (m_done(*r)) {
            m_finished = true;
            m_timer->stop();
            Q_EMIT satisfied(*r);
            return;
        }
    }
    if (m_clock.elapsed() >= m_timeoutMs) {
        m_finished = true;
        m_timer->stop();
        Q_EMIT timedOut(m_last);
    }
}

} // namespace ty
