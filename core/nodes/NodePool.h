#pragma once

// The nodes an engine (core/runs/RunEngine) connects to, by name, and
// everything about keeping each connected: its AgentClient over the transport
// it was added with, heartbeats (NodeHealth), reconnection with backoff after
// a loss, probes of a lost node (AgentTransport::probe), GPU reports,
// removal, and its transport's host-key answers. What happens to a node's
// runs when it comes up or is lost is the engine's: it reacts to the signals
// below and reaches a node's AgentClient through client() to start, tail and
// cancel runs.
//
// In core/nodes, not core/runs: it needs nothing of runs, jobs or the store,
// only agent clients, their transports and the clock.
//
// Time: `clock` (core/common/Clock.h), the engine's: reconnection delays,
// probes and heartbeats wait on it, so tests move it by hand.
//
// Thread affinity: the pool's thread (the engine's); its clients, timers,
// signals and callbacks live there. Nothing here is thread-safe.
//
// Errors: a node's connection failures arrive as nodeLost() (reason and
// ErrorKind as the transport told them); calls naming an unknown node do
// nothing and return null / false / empty.

#include "core/common/Result.h"
#include "core/logs/StderrRanges.h"
#include "core/nodes/AgentTypes.h"
#include "core/nodes/NodeFiles.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

namespace ty {

class AgentClient;
class AgentTransport;
class Clock;
class NodeHealth;

class NodePool final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(NodePool)

public:
    // What the pool knows of one node's connection.
    struct NodeState {
        QString name;
        bool ready = false;        // its agent answered the handshake of the current connection
        bool attempted = false;    // its first connection attempt ended (ready or lost)
        AgentHello hello;          // the current (or last) connection's
        QList<AgentGpu> gpus;      // as the agent last reported them (empty: none, or no report yet)
        bool gpusKnown = false;    // the current connection's first GPU report (or its failure) is in, and
                                   // from a revision-7 agent its first listening ports too; until then an
                                   // empty `gpus` says nothing and the node cannot be placed on
        QList<int> listeningPorts; // TCP ports in LISTEN on the node, ascending, as last reported with the
                                   // GPUs (revision 7; empty from an older agent): never rendezvous ports
        QString lastError;         // why it was last lost (empty while ready)
        QString connectionWarning; // the transport's warning() for the current connection (a changed host key accepted)
    };

    // `clock` must outlive the pool; its timers fire on the pool's thread.
    explicit NodePool(Clock& clock, QObject* parent = nullptr);
    // Disconnects every client (shutDown()) first.
    ~NodePool() override;

    // Adds node `name` served by an agent behind `transport` (owned from now
    // on) and connects to it. A node of that name already there is replaced
    // as if removed first.
    void add(const QString& name, std::unique_ptr<AgentTransport> transport);
    // Drops node `name`: its connection is closed (its pending requests fail
    // as for a lost connection), its heartbeats, reconnections and probes
    // stop and the pool emits nothing more about it (no nodeLost()); client()
    // and node() no longer find it. Returns false for an unknown name. Its
    // AgentClient object lives on until what is under way on it is over (the
    // failed replies of its pending requests, delivered from the event loop,
    // and its file jobs started through runFileJob()), then it is deleted.
    bool remove(const QString& name);
    // The engine is ending: every client is disconnected and lost nodes are
    // not reconnected any more. nodeLost() is still emitted for each.
    void shutDown();
    bool isShuttingDown() const { return m_shuttingDown; }

    // Reconnection of a lost node: after firstMs, then after doubling delays
    // up to maxMs (ms; default 1000 .. 30000). Between attempts it is probed
    // every probeMs (default 1000; 0: never) where its transport can tell;
    // once it answers after a probe that found it silent, the backoff is
    // reset and it is reconnected at once.
    void setReconnectDelays(int firstMs, int maxMs);
    void setReconnectProbeInterval(int probeMs) { m_reconnectProbeMs = probeMs; }
    // Heartbeats of nodes added after the call, ms: interval and the silence
    // after which a node counts as lost (default 5000 / 15000).
    void setHeartbeat(int intervalMs, int timeoutMs);

    // Sends a `gpus` request to every ready node without one outstanding;
    // each answer updates its NodeState::gpus and is emitted as gpusReported().
    void pollGpus();

    bool contains(const QString& name) const { return m_nodes.contains(name); }
    // Null for an unknown name. Valid until the node is removed or the pool
    // destroyed; do not keep it across event-loop turns.
    const NodeState* node(const QString& name) const;
    // The node's client (null for an unknown name): requests for its runs.
    AgentClient* client(const QString& name) const;
    bool isReady(const QString& name) const;
    // AgentClient::runFileJob on node `name`, counted, so that a removed
    // node's client outlives the job (`done` always runs, on this thread).
    // Use this, not client()->runFileJob(). Unknown node: `done` gets an
    // error naming it, from the event loop.
    void runFileJob(const QString& name, NodeFileJob job, std::function<void(const Result<void>&)> done);
    QStringList names() const { return m_nodes.keys(); }

    // Host keys (AgentTransport.h): the fingerprint of the unknown key the
    // node's last connection attempt refused (empty: none, or no such node),
    // and trusting the next unknown key, which the next reconnection records
    // in known_hosts (false: no such node, or its transport has no host key).
    QString rejectedHostKeyFingerprint(const QString& name) const;
    bool trustNewHostKey(const QString& name);

Q_SIGNALS:
    // The node's agent answered the handshake (NodeState::ready and hello set).
    void nodeConnected(const QString& node);
    // After nodeConnected(), once the first GPU request of that connection
    // was answered (gpusReported() came first when it succeeded): the node's
    // facts are in; its runs may be looked at.
    void nodeReady(const QString& node);
    // The connection ended or failed (`kind`: what the transport could tell:
    // unreachable, host key unknown or changed, authentication). Emitted
    // before the reconnection is scheduled.
    void nodeLost(const QString& node, const QString& reason, ty::ErrorKind kind);
    // A GPU request was answered (NodeState::gpus already updated).
    void gpusReported(const QString& node, const QList<ty::AgentGpu>& gpus);
    // The transport warned before the handshake (a changed host key accepted
    // under StrictHostKeyChecking no); also logged.
    void nodeWarning(const QString& node, const QString& message);
    // A client's output signals (AgentClient.h), with the node's name.
    void output(const QString& node, const QString& run, qint64 offset, const QByteArray& bytes,
            const ty::ByteRanges& stderrRanges);
    void tailEnded(const QString& node, const QString& run, qint64 offset);
    void consoleTruncated(const QString& node, const QString& run, qint64 offset, qint64 size, qint64 generation);
    void slurmChanged(const QString& node, const ty::AgentRunStatus& status);

private:
    struct Node;
    void onConnected(const QString& name);
    void onLost(const QString& name, const QString& reason, ErrorKind kind);
    void probeLostNode(const QString& name);
    // Asks a revision-7 agent for its listening ports into the node's state,
    // then calls `done` (not called for an older agent, nor when the node is
    // gone by the reply).
    void refreshListeningPorts(const std::shared_ptr<Node>& node, std::function<void()> done);
    // Deletes a removed node's client and heartbeats once nothing is under way on them.
    void releaseIfIdle(const std::shared_ptr<Node>& node);

    Clock& m_clock;
    QHash<QString, std::shared_ptr<Node>> m_nodes;
    QList<std::shared_ptr<Node>> m_removed; // removed, their client not yet deleted (file jobs under way)
    QSet<QString> m_gpuRequests;            // nodes with a `gpus` request outstanding
    bool m_shuttingDown = false;
    int m_reconnectFirstMs = 1000;
    int m_reconnectMaxMs = 30000;
    int m_reconnectProbeMs = 1000;
    int m_heartbeatIntervalMs = 5000;
    int m_heartbeatTimeoutMs = 15000;
};

} // namespace ty
