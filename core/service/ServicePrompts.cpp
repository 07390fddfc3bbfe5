#include "ServicePrompts.h"

#include <QObject>
#include <QThread>

#include <chrono>

namespace ty::service {

ServicePrompts::ServicePrompts(QObject* context)
    : m_context(context)
{ }

ServicePrompts::~ServicePrompts()
{
    close();
}

void ServicePrompts::setAsker(Asker asker)
{
    m_asker = std::move(asker);
}

void ServicePrompts::answer(qint64 id, std::optional<QByteArray> passphrase)
{
    std::lock_guard lock(m_mutex);
    const auto q = m_open.value(id);
    if (!q || q->answered)
        return;
    q->answered = true;
    q->passphrase = std::move(passphrase);
    m_answered.notify_all();
}

void ServicePrompts::close()
{
    std::lock_guard lock(m_mutex);
    m_closed = true;
    for (const auto& q : std::as_const(m_open))
        q->answered = true; // declined
    m_answered.notify_all();
}

std::optional<QByteArray> ServicePrompts::passphrase(const QString& node, const QString& prompt)
{
    // Never wait on the service's own thread: it is the one that asks.
    if (QThread::currentThread() == m_context->thread())
        return std::nullopt;
    auto q = std::make_shared<Question>();
    qint64 id = 0;
    {
        std::lock_guard lock(m_mutex);
        if (m_closed)
            return std::nullopt;
        id = m_nextId++;
        m_open.insert(id, q);
        // Queued, never blocking: the service's thread may be waiting for
        // this session meanwhile (a shutdown); the wait below then ends by
        // close() or the timeout.
        QMetaObject::invokeMethod(
                m_context,
                [weak = weak_from_this(), id, node, prompt] {
                    const auto self = weak.lock();
                    if (self && (!self->m_asker || !self->m_asker(id, node, prompt)))
                        self->answer(id, std::nullopt);
                },
                Qt::QueuedConnection);
    }
    std::unique_lock lock(m_mutex);
    m_answered.wait_for(lock, std::chrono::milliseconds(kAnswerTimeoutMs), [&q] { return q->answered; });
    m_open.remove(id);
    std::optional<QByteArray> out = std::move(q->passphrase);
    q->passphrase.reset();
    return out;
}

} // namespace ty::service
