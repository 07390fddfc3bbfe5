#include "NodePool.h"

#include "AgentClient.h"
#include "AgentTransport.h"
#include "NodeHealth.h"
#include "NodesLog.h"
#include "core/common/Clock.h"

#include <QTimer>

#include <algorithm>

namespace ty {

struct NodePool::Node {
    NodeState state;
    AgentClient* client = nullptr;
    NodeHealth* health = nullptr;  // heartbeats; disconnects the client when the node goes silent
    int reconnectDelayMs = 0;      // the last reconnection delay (0: connected, or never lost)
    int reconnectGeneration = 0;   // a scheduled reconnection is void once this moved on
    bool probing = false;          // probeLostNode() is under way
    bool probeInFlight = false;    // the transport's probe has not answered yet
    bool probeFoundSilent = false; // a probe since the loss found it not answering
    int fileJobs = 0;              // runFileJob()s whose `done` has not run yet
    bool removed = false;
};

NodePool::NodePool(Clock& clock, QObject* parent)
    : QObject(parent)
    , m_clock(clock)
{ }

NodePool::~NodePool()
{
    shutDown();
}

void NodePool::add(const QString& name, std::unique_ptr<AgentTransport> transport)
{
    if (m_nodes.contains(name))
        remove(name);
    auto node = std::make_shared<Node>();
    node->state.name = name;
    node->client = new AgentClient(std::move(transport), this);
    node->client->setNodeName(name);
    node->health = new NodeHealth(node->client, m_clock, this);
    node->health->setInterval(m_heartbeatIntervalMs);
    node->health->setTimeout(m_heartbeatTimeoutMs);
    AgentClient* c = node->client;
    connect(c, &AgentClient::ready, this, [this, name](const AgentHello&) { onConnected(name); });
    connect(c, &AgentClient::disconnected, this,
            [this, name](const QString& reason, ErrorKind kind) { onLost(name, reason, kind); });
    connect(c, &AgentClient::warning, this, [this, name](const QString& message) {
        if (const auto n = m_nodes.value(name))
            n->state.connectionWarning = message;
        qCWarning(lcNodes).noquote() << "node" << name << ":" << message;
        Q_EMIT nodeWarning(name, message);
    });
    connect(c, &AgentClient::output, this,
            [this, name](const QString& run, qint64 offset, const QByteArray& bytes, const ByteRanges& stderrRanges) {
                Q_EMIT output(name, run, offset, bytes, stderrRanges);
            });
    connect(c, &AgentClient::tailEnded, this,
            [this, name](const QString& run, qint64 offset) { Q_EMIT tailEnded(name, run, offset); });
    connect(c, &AgentClient::slurmChanged, this,
            [this, name](const AgentRunStatus& status) { Q_EMIT slurmChanged(name, status); });
    connect(c, &AgentClient::consoleTruncated, this,
            [this, name](const QString& run, qint64 offset, qint64 size, qint64 generation) {
                Q_EMIT consoleTruncated(name, run, offset, size, generation);
            });
    m_nodes.insert(name, node);
    c->connectToAgent();
}

bool NodePool::remove(const QString& name)
{
    const auto node = m_nodes.take(name);
    if (!node)
        return false;
    node->removed = true;
    ++node->reconnectGeneration; // a scheduled reconnection or probe finds it removed anyway
    node->state.ready = false;
    QObject::disconnect(node->health, nullptr, this, nullptr);
    QObject::disconnect(node->client, nullptr, this, nullptr);
    // Its pending requests fail now; their callbacks run from the event loop,
    // before the deferred deletion below.
    node->client->disconnectFromAgent();
    qCInfo(lcNodes).noquote() << "node" << name << "removed";
    m_removed.append(node);
    releaseIfIdle(node);
    return true;
}

void NodePool::releaseIfIdle(const std::shared_ptr<Node>& node)
{
    if (!node->removed || node->fileJobs > 0 || node->probeInFlight)
        return;
    if (!m_removed.removeOne(node))
        return;
    node->health->deleteLater();
    node->client->deleteLater();
    node->health = nullptr;
    node->client = nullptr;
}

void NodePool::shutDown()
{
    m_shuttingDown = true;
    // Disconnecting answers requests still pending, and says nodeLost().
    for (const auto& node : QList<std::shared_ptr<Node>>(m_nodes.values()))
        if (node->client)
            node->client->disconnectFromAgent();
}

void NodePool::setReconnectDelays(int firstMs, int maxMs)
{
    m_reconnectFirstMs = std::max(1, firstMs);
    m_reconnectMaxMs = std::max(m_reconnectFirstMs, maxMs);
}

void NodePool::setHeartbeat(int intervalMs, int timeoutMs)
{
    m_heartbeatIntervalMs = intervalMs;
    m_heartbeatTimeoutMs = timeoutMs;
}

const NodePool::NodeState* NodePool::node(const QString& name) const
{
    const auto it = m_nodes.constFind(name);
    return it == m_nodes.cend() ? nullptr : &(*it)->state;
}

AgentClient* NodePool::client(const QString& name) const
{
    const auto it = m_nodes.constFind(name);
    return it == m_nodes.cend() ? nullptr : (*it)->client;
}

bool NodePool::isReady(const QString& name) const
{
    const auto it = m_nodes.constFind(name);
    return it != m_nodes.cend() && (*it)->state.ready;
}

void NodePool::runFileJob(const QString& name, NodeFileJob job, std::function<void(const Result<void>&)> done)
{
    const auto node = m_nodes.value(name);
    if (!node) {
        QTimer::singleShot(0, this, [name, done = std::move(done)] {
            if (done)
                done(fail(QStringLiteral("node %1: no such node").arg(name)));
        });
        return;
    }
    ++node->fileJobs;
    node->client->runFileJob(std::move(job), [this, node, done = std::move(done)](const Result<void>& r) {
        --node->fileJobs;
        if (done)
            done(r);
        releaseIfIdle(node);
    });
}

QString NodePool::rejectedHostKeyFingerprint(const QString& name) const
{
    const AgentClient* c = client(name);
    return c ? c->rejectedHostKeyFingerprint() : QString();
}

bool NodePool::trustNewHostKey(const QString& name)
{
    AgentClient* c = client(name);
    return c && c->trustNewHostKey();
}

void NodePool::onConnected(const QString& name)
{
    const auto node = m_nodes.value(name);
    if (!node)
        return;
    node->state.attempted = true;
    node->state.ready = true;
    node->state.gpusKnown = false;
    node->reconnectDelayMs = 0;
    node->state.lastError.clear();
    node->state.hello = node->client->hello();
    Q_EMIT nodeConnected(name);
    std::weak_ptr<Node> weak = node;
    // The node can be placed on once its GPUs and (revision 7) its listening
    // ports are in, whichever reply comes last.
    const bool askPorts = node->state.hello.revision >= 7;
    auto outstanding = std::make_shared<int>(askPorts ? 2 : 1);
    const auto oneIn = [this, name, outstanding](const std::shared_ptr<Node>& n) {
        if (--*outstanding > 0)
            return;
        n->state.gpusKnown = true;
        Q_EMIT nodeReady(name);
    };
    refreshListeningPorts(node, [weak, oneIn] {
        if (const auto n = weak.lock(); n && !n->removed)
            oneIn(n);
    });
    node->client->gpus([this, name, weak, oneIn](const Result<QList<AgentGpu>>& gpus) {
        const auto n = weak.lock();
        if (!n || n->removed)
            return;
        n->state.gpus = gpus ? *gpus : QList<AgentGpu>{};
        if (gpus)
            Q_EMIT gpusReported(name, *gpus);
        oneIn(n);
    });
}

void NodePool::refreshListeningPorts(const std::shared_ptr<Node>& node, std::function<void()> done)
{
    if (node->state.hello.revision < 7) {
        node->state.listeningPorts.clear();
        return;
    }
    const QString name = node->state.name;
    std::weak_ptr<Node> weak = node;
    node->client->listeningPorts([name, weak, done = std::move(done)](const Result<QList<int>>& ports) {
        const auto n = weak.lock();
        if (!n || n->removed)
            return;
        if (ports)
            n->state.listeningPorts = *ports;
        else
            qCDebug(lcNodes) << "listening_ports on" << name << "failed:" << ports.error().message;
        if (done)
            done();
    });
}

void NodePool::onLost(const QString& name, const QString& reason, ErrorKind kind)
{
    const auto node = m_nodes.value(name);
    if (!node)
        return;
    node->state.attempted = true;
    node->state.ready = false;
    node->state.lastError = reason;
    node->state.connectionWarning.clear();
    Q_EMIT nodeLost(name, reason, kind);
    if (m_shuttingDown || node->removed)
        return;
    // Reconnect with backoff: first m_reconnectFirstMs, then doubling up to m_reconnectMaxMs.
    node->reconnectDelayMs
            = node->reconnectDelayMs == 0 ? m_reconnectFirstMs : std::min(node->reconnectDelayMs * 2, m_reconnectMaxMs);
    const int generation = ++node->reconnectGeneration;
    std::weak_ptr<Node> weak = node;
    m_clock.singleShot(node->reconnectDelayMs, this, [this, weak, generation] {
        const auto n = weak.lock();
        if (n && !n->removed && !m_shuttingDown && n->reconnectGeneration == generation
                && n->client->state() == AgentClient::State::Disconnected)
            n->client->connectToAgent();
    });
    if (!node->probing && m_reconnectProbeMs > 0) {
        node->probing = true;
        node->probeFoundSilent = false;
        m_clock.singleShot(m_reconnectProbeMs, this, [this, name] { probeLostNode(name); });
    }
}

void NodePool::probeLostNode(const QString& name)
{
    const auto node = m_nodes.value(name);
    if (!node)
        return;
    if (m_shuttingDown || node->client->state() != AgentClient::State::Disconnected) {
        node->probing = false; // connected (or connecting) again
        return;
    }
    node->probeInFlight = true;
    std::weak_ptr<Node> weak = node;
    node->client->probe([this, name, weak](std::optional<bool> answers) {
        const auto n = weak.lock();
        if (!n)
            return;
        n->probeInFlight = false;
        if (n->removed) {
            releaseIfIdle(n);
            return;
        }
        if (m_shuttingDown || !answers || n->client->state() != AgentClient::State::Disconnected) {
            n->probing = false; // this transport cannot tell, or it is connecting already
            return;
        }
        if (!*answers) {
            n->probeFoundSilent = true;
            m_clock.singleShot(m_reconnectProbeMs, this, [this, name] { probeLostNode(name); });
            return;
        }
        n->probing = false;
        if (!n->probeFoundSilent)
            return; // it answered all along: what fails is not the network; the backoff stands
        // It answers again: at once, with the backoff reset.
        qCInfo(lcNodes).noquote() << "node" << name << "answers again; reconnecting now";
        n->reconnectDelayMs = 0;
        ++n->reconnectGeneration;
        n->client->connectToAgent();
    });
}

void NodePool::pollGpus()
{
    for (const auto& node : std::as_const(m_nodes)) {
        const QString name = node->state.name;
        if (!node->state.ready || m_gpuRequests.contains(name))
            continue;
        m_gpuRequests.insert(name);
        refreshListeningPorts(node, {});
        std::weak_ptr<Node> weak = node;
        node->client->gpus([this, name, weak](const Result<QList<AgentGpu>>& gpus) {
            m_gpuRequests.remove(name);
            if (!gpus) {
                qCDebug(lcNodes) << "gpus on" << name << "failed:" << gpus.error().message;
                return;
            }
            const auto n = weak.lock();
            if (!n || n->removed)
                return;
            n->state.gpus = *gpus;
            Q_EMIT gpusReported(name, *gpus);
        });
    }
}

} // namespace ty
