#include "NodeHealth.h"

#include "core/nodes/AgentClient.h"
#include "core/nodes/NodesLog.h"

#include "core/common/Clock.h"

namespace ty {

NodeHealth::NodeHealth(AgentClient* client, QObject* parent)
    : NodeHealth(client, systemClock(), parent)
{ }

NodeHealth::NodeHealth(AgentClient* client, Clock& clock, QObject* parent)
    : QObject(parent)
    , m_client(client)
    , m_clock(clock)
    , m_timer(clock.createTimer(this, [this] { tick(); }))
{
    m_timer->setInterval(m_intervalMs);
    connect(client, &AgentClient::ready, this, &NodeHealth::onReady);
    connect(client, &AgentClient::output, this, &NodeHealth::alive);
    connect(client, &AgentClient::disconnected, this, [this] {
        m_timer->stop();
        m_reachable = false;
    });
    if (client->isReady())
        onReady();
}

NodeHealth::~NodeHealth() = default;

void NodeHealth::setInterval(int ms)
{
    m_intervalMs = std::max(10, ms);
    m_timer->setInterval(std::min(m_intervalMs, std::max(10, m_timeoutMs / 3)));
}

void NodeHealth::setTimeout(int ms)
{
    m_timeoutMs = std::max(10, ms);
    setInterval(m_intervalMs);
}

bool NodeHealth::isReachable() const
{
    return m_reachable && m_client && m_client->isReady() && m_clock.monotonicMs() - m_lastAliveMs <= m_timeoutMs;
}

void NodeHealth::onReady()
{
    m_lastAliveMs = m_clock.monotonicMs();
    m_reachable = true;
    m_timer->start();
    Q_EMIT reachable();
}

void NodeHealth::alive()
{
    m_lastAliveMs = m_clock.monotonicMs();
    if (!m_reachable && m_client && m_client->isReady()) {
        m_reachable = true;
        Q_EMIT reachable();
    }
}

void NodeHealth::tick()
{
    if (!m_client || !m_client->isReady()) {
        m_timer->stop();
        return;
    }
    const qint64 now = m_clock.monotonicMs();
    if (m_reachable && now - m_lastAliveMs > m_timeoutMs) {
        m_reachable = false;
        const QString reason = QStringLiteral("node %1: no heartbeat for %2 s (timeout %3 s)")
                                       .arg(m_client->nodeName())
                                       .arg((now - m_lastAliveMs) / 1000.0, 0, 'f', 1)
                                       .arg(m_timeoutMs / 1000.0, 0, 'f', 1);
        qCWarning(lcNodes).noquote() << reason;
        Q_EMIT unreachable(reason);
        if (m_disconnectOnTimeout && m_client)
            m_client->disconnectFromAgent();
        return;
    }
    const qint64 sent = now;
    // Pings are sent at the configured interval (the timer may tick faster
    // to notice a timeout in time).
    if (now - m_lastPingMs < m_intervalMs - 5)
        return;
    m_lastPingMs = now;
    QPointer<NodeHealth> self(this);
    m_client->ping([self, sent](const Result<qint64>& r) {
        if (!self || !r)
            return;
        self->m_lastRttMs = self->m_clock.monotonicMs() - sent;
        self->alive();
    });
}

} // namespace ty
