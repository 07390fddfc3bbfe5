#pragma once

#include "ServicePaths.h"
#include "core/common/Result.h"

#include <QObject>
#include <QSet>

#include <memory>

class QLockFile;
class QTimer;

namespace ty {

class ResultStore;
class RunEngine;
class RetryRunner;
class NodeLossWatch;
class CheckpointMirror;

namespace pipeline {
class PipelineRunner;
}

namespace service {

class ServicePrompts;
class ServiceServer;

// trainyardd's insides: the service lock, the result database, the run
// engine with every stored node, the socket server, and when to stop.
//
// It stays while it has work (a run queued, starting, running or unknown, a
// start or an artifact listing under way) or a client, and asks to stop once
// it has had neither for the idle time (persist: never).
//
// Thread affinity: the main thread of trainyardd; start() needs its event loop
// for everything after it.
class ServiceHost final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ServiceHost)

public:
    struct Options {
        QString databasePath;
        int idleExitSec = 300; // <= 0 with persist: never
        bool persist = false;
    };
    // Why start() failed: another service holds the lock (it names its pid and
    // host), or anything else (the database, the socket).
    enum class StartError { LockHeld, Other };

    explicit ServiceHost(Options options, QObject* parent = nullptr);
    ~ServiceHost() override;

    // Takes the lock, opens the database, connects the nodes and listens.
    Result<void> start(StartError* why = nullptr);
    // Stops scheduling, waits (30 s at most) for start replies and artifact
    // listings under way, closes the socket and lets the lock go. Runs keep
    // going on their nodes; the next service re-attaches them.
    void shutDown();

    const ServicePaths& paths() const { return m_paths; }
    RunEngine* engine() const { return m_engine.get(); }

Q_SIGNALS:
    // Idle for the idle time, or a client said `stop`.
    void stopRequested();

private:
    void connectNewNodes();
    void checkIdle();
    bool hasWork() const;

    Options m_options;
    ServicePaths m_paths;
    std::unique_ptr<QLockFile> m_lock;
    std::unique_ptr<ResultStore> m_store;
    std::unique_ptr<RunEngine> m_engine;
    std::unique_ptr<pipeline::PipelineRunner> m_pipelines;
    std::unique_ptr<CheckpointMirror> m_checkpoints; // RetryRunner's copies of checkpoints
    std::unique_ptr<RetryRunner> m_retries;          // after m_pipelines: destroyed before the engine
    std::unique_ptr<NodeLossWatch> m_nodeLoss;
    std::unique_ptr<ServiceServer> m_server;
    std::shared_ptr<ServicePrompts> m_prompts; // the nodes' login questions (passphrases, codes), asked of a client
    QSet<QString> m_nodes;                     // connected (or connecting) by name
    QTimer* m_idleTimer = nullptr;
    qint64 m_idleSinceMs = -1;
};

} // namespace service
} // namespace ty
