#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/nodes/AgentTypes.h"
#include "core/store/NodeRecord.h"

#include <QDateTime>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>

class QLocalServer;
class QLocalSocket;
class QTimer;

namespace ty {

class ResultStore;
class RunEngine;

namespace pipeline {
class PipelineRunner;
}

namespace service {

class ServicePrompts;
class PipelineOps;

// The socket side of trainyardd: accepts clients on a Unix-domain socket,
// answers their requests with the service's RunEngine and streams them the
// engine's live events (PROTOCOL.md).
//
// Only the service's own user is served: the socket file is 0600 in a 0700
// folder (ServicePaths.h), and every connection's peer uid is read with
// SO_PEERCRED; another uid (root included) gets one `refused` line naming
// both uids and is disconnected.
//
// Thread affinity: the engine's thread (trainyardd's main thread). `engine`
// and `store` must outlive the server.
class ServiceServer final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ServiceServer)

public:
    ServiceServer(RunEngine* engine, ResultStore* store, QString databasePath, QObject* parent = nullptr);
    ~ServiceServer() override;

    // Listens on `socketPath`, replacing a file left there by a service that
    // died (the caller holds the service lock, so nobody else is serving).
    // Errors: the socket cannot be created (path, system reason).
    Result<void> listen(const QString& socketPath);

    // Clients connected now.
    int clientCount() const { return int(m_clients.size()); }
    // When the last client went away, or the server started (invalid while one is connected).
    QDateTime lastClientLeft() const { return m_lastClientLeft; }

    // Passphrase questions of the service's SSH sessions go to the client
    // that subscribed to `prompts` last (PROTOCOL.md `prompt`).
    void setPrompts(std::shared_ptr<ServicePrompts> prompts);

    // Called before a node-bound request (submit with --node, cancel) so that a
    // node added to the database since the service started is connected.
    void setNodeResolver(std::function<void(const QString& node)> resolver) { m_nodeResolver = std::move(resolver); }

    // Pipeline requests go to `runner` (PipelineOps); its changes are sent
    // as `pipeline` events to clients subscribed to `pipelines`.
    void setPipelines(pipeline::PipelineRunner* runner);

Q_SIGNALS:
    // A client asked the service to stop (`trainyardctl daemon stop`).
    void stopRequested();
    // A node was removed (node_rm): the host connects a node of that name
    // again if one is added later.
    void nodeRemoved(const QString& node);
    // A node was stored by `node_add`: the host connects it at once, adding
    // a host key not known yet when `acceptNewHostKey` (a changed one never).
    void nodeAdded(const ty::NodeRecord& node, bool acceptNewHostKey);
    // A client connected or went away.
    void clientsChanged(int count);

private:
    struct Client;
    struct Watch;
    void onNewConnection();
    void onReadyRead(Client& c);
    void handle(Client& c, const QJsonObject& request);
    void reply(Client& c, const QJsonValue& id, QJsonObject body);
    void replyError(Client& c, const QJsonValue& id, const QString& kind, const QString& message);
    void send(Client& c, const QJsonObject& message);
    bool askPromptClient(qint64 id, QJsonObject event, const QString& what);
    void drop(QLocalSocket* socket);

    void opSubmit(Client& c, const QJsonValue& id, const QJsonObject& req);
    // The run a request names (`run`), as latest() has it; without one, the
    // request is answered `no_such_run` and nullopt returned.
    std::optional<RunRecord> requestedRun(Client& c, const QJsonValue& id, const QJsonObject& req);
    // A node stored since the service started is connected (m_nodeResolver)
    // before a request that needs the run's node.
    void connectNodeOf(const RunRecord& run);
    void opCancel(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opWatch(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opQueue(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opAnnotate(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opNodeRm(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opNodeAdd(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opNodeLabel(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opSubscribe(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opImportMetrics(Client& c, const QJsonValue& id, const QJsonObject& req);
    void opArtifacts(Client& c, const QJsonValue& id, const QJsonObject& req, bool download);
    // Answers a request later (artifacts wait for the node): to the client
    // that asked, if it is still connected.
    std::function<void(QJsonObject body, const Error* error)> laterReply(Client& c, const QJsonValue& id);
    void opStatus(Client& c, const QJsonValue& id);
    void opCaughtUp(Client& c, const QJsonValue& id);
    bool caughtUpNow() const;
    void answerCaughtUp();
    QJsonArray nodesBehind() const;

    void onConsole(RunId run, qint64 offset, const QByteArray& bytes);
    void onRunState(const RunRecord& run);
    void deliverState(const RunRecord& run);
    void deliverEnds();
    void onPending(const QHash<RunId, QString>& reasons);
    void onWatchEnded(RunId run);
    void sendConsole(Client& c, RunId run, qint64 offset, QByteArrayView bytes);
    void sendState(Client& c, const RunRecord& run);
    void sendNotice(Client& c, RunId run, const QString& text);
    // The newest record of a run this server knows: from the engine's
    // signals (ahead of the database's write-behind), else the database.
    std::optional<RunRecord> latest(RunId run) const;
    void broadcast(const QJsonObject& event);
    void onMetrics(RunId run, const QList<MetricPoint>& points);
    void onGpus(const QString& node, const QList<AgentGpu>& gpus);
    void onPipeline(const QJsonObject& pipeline);

    RunEngine* m_engine;
    ResultStore* m_store;
    QString m_databasePath;
    QLocalServer* m_server = nullptr;
    QHash<QLocalSocket*, std::shared_ptr<Client>> m_clients;
    QHash<RunId, RunRecord> m_latest;
    QHash<RunId, QStringList> m_liveNotices;
    // Ends not told yet (deliverEnds): waiting for post-run work, 30 s at most.
    static constexpr qint64 kPostRunWaitMs = 30000;
    QList<RunRecord> m_pendingEnds;
    qint64 m_endWaitStartedMs = -1;
    bool m_caughtUp = false;
    QTimer* m_caughtUpTimer = nullptr;
    QList<std::pair<QPointer<QLocalSocket>, QJsonValue>> m_caughtUpWaiters;
    QDateTime m_started;
    QDateTime m_lastClientLeft;
    std::function<void(const QString&)> m_nodeResolver;
    std::unique_ptr<PipelineOps> m_pipelineOps;
    QHash<QString, QJsonArray> m_lastGpus; // a new `gpus` subscriber gets these at once
    QHash<QString, QJsonObject> m_nodeStatus;
    std::shared_ptr<ServicePrompts> m_prompts;
    QList<QPointer<QLocalSocket>> m_promptClients; // in the order they subscribed
    QHash<qint64, QLocalSocket*>
            m_promptOwner; // open question -> the client asked // the last `node` event of each node, for a new subscriber
};

} // namespace service
} // namespace ty
