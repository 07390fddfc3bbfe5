#include "NodeHealth.h"

#include "nodes/AgentClient.h"
#include "nodes/NodesLog.h"

#include <QElapsedTimer>
#include <QTimer>

namespace ty {
namespace {

qint64 nowMs()
{
    static QElapsedTimer clock = [] {
        QElapsedTimer t;
        t.start();
        return t;
    }();
    return clock.elapsed();
}

} // namespace

NodeHealth::NodeHealth(AgentClient* client, QObject* parent)
    : QObject(parent)
    , client_(client)
    , timer_(new QTimer(this))
{
    timer_->setInterval(intervalMs_);
    connect(timer_, &QTimer::timeout, this, &NodeHealth::tick);
    connect(client, &AgentClient::ready, this, &NodeHealth::onReady);
    connect(client, &AgentClient::output, this, &NodeHealth::alive);
    connect(client, &AgentClient::disconnected, this, [this] {
        timer_->stop();
        reachable_ = false;
    });
    if (client->isReady())
        onReady();
}

NodeHealth::~NodeHealth() = default;

void NodeHealth::setInterval(int ms)
{
    intervalMs_ = std::max(10, ms);
    timer_->setInterval(std::min(intervalMs_, std::max(10, timeoutMs_ / 3)));
}

void NodeHealth::setTimeout(int ms)
{
    timeoutMs_ = std::max(10, ms);
    setInterval(intervalMs_);
}

bool NodeHealth::isReachable() const
{
    return reachable_ && client_ && client_->isReady() && nowMs() - lastAliveMs_ <= timeoutMs_;
}

void NodeHealth::onReady()
{
    lastAliveMs_ = nowMs();
    reachable_ = true;
    timer_->start();
    Q_EMIT reachable();
}

void NodeHealth::alive()
{
    lastAliveMs_ = nowMs();
    if (!reachable_ && client_ && client_->isReady()) {
        reachable_ = true;
        Q_EMIT reachable();
    }
}

void NodeHealth::tick()
{
    if (!client_ || !client_->isReady()) {
        timer_->stop();
        return;
    }
    const qint64 now = nowMs();
    if (reachable_ && now - lastAliveMs_ > timeoutMs_) {
        reachable_ = false;
        const QString reason = QStringLiteral("node %1: no heartbeat for %2 s (timeout %3 s)")
                                   .arg(client_->nodeName())
                                   .arg((now - lastAliveMs_) / 1000.0, 0, 'f', 1)
                                   .arg(timeoutMs_ / 1000.0, 0, 'f', 1);
        qCWarning(lcNodes).noquote() << reason;
        Q_EMIT unreachable(reason);
        if (disconnectOnTimeout_ && client_)
            client_->disconnectFromAgent();
        return;
    }
    const qint64 sent = now;
    // Pings are sent at the configured interval (the timer may tick faster
    // to notice a timeout in time).
    if (now - lastPingMs_ < intervalMs_ - 5)
        return;
    lastPingMs_ = now;
    QPointer<NodeHealth> self(this);
    client_->ping([self, sent](const Result<qint64>& r) {
        if (!self || !r)
            return;
        self->lastRttMs_ = nowMs() - sent;
        self->alive();
    });
}

} // namespace ty
