#include "ServiceHost.h"

#include "ServicePrompts.h"
#include "ServiceServer.h"
#include "core/common/Paths.h"
#include "core/pipeline/PipelineRunner.h"
#include "core/retry/CheckpointMirror.h"
#include "core/retry/NodeLossWatch.h"
#include "core/retry/RetryRunner.h"
#include "core/nodes/AgentTransport.h"
#include "core/nodes/NodeTransports.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QEventLoop>
#include <QLockFile>
#include <QLoggingCategory>
#include <QTimer>

Q_DECLARE_LOGGING_CATEGORY(lcService)

namespace ty::service {

ServiceHost::ServiceHost(Options options, QObject* parent)
    : QObject(parent)
    , m_options(std::move(options))
{ }

ServiceHost::~ServiceHost()
{
    shutDown();
}

Result<void> ServiceHost::start(StartError* why)
{
    if (why)
        *why = StartError::Other;
    auto paths = servicePathsFor(m_options.databasePath);
    if (!paths)
        return std::unexpected(paths.error());
    m_paths = *paths;
    // The database's folder: the lock lives beside the database.
    if (!QDir().mkpath(QFileInfo(m_paths.databasePath).absolutePath()))
        return fail(QStringLiteral("cannot create the folder of %1").arg(m_paths.databasePath));
    m_lock = std::make_unique<QLockFile>(m_paths.lock);
    m_lock->setStaleLockTime(0); // only a dead holder's lock is stale, however old
    if (!m_lock->tryLock(0)) {
        qint64 pid = 0;
        QString host, app;
        if (m_lock->error() == QLockFile::LockFailedError && m_lock->getLockInfo(&pid, &host, &app)) {
            if (why)
                *why = StartError::LockHeld;
            return fail(QStringLiteral("another Trainyard service (pid %1 on %2) already serves %3; it holds %4")
                                .arg(pid)
                                .arg(host, m_paths.databasePath, m_paths.lock));
        }
        return fail(QStringLiteral("cannot take the service lock %1 (%2)")
                            .arg(m_paths.lock,
                                    m_lock->error() == QLockFile::PermissionError
                                            ? QStringLiteral("permission denied: the database's folder is not writable")
                                            : QStringLiteral("the folder cannot be written")));
    }
    auto store = ResultStore::open(m_paths.databasePath);
    if (!store)
        return std::unexpected(store.error());
    m_store = std::move(*store);
    m_prompts = std::make_shared<ServicePrompts>(this);
    m_engine = std::make_unique<RunEngine>(m_store.get(), m_paths.databasePath);
    m_engine->addLocalNode(localAgentPath());
    m_nodes.insert(QStringLiteral("local"));
    connectNewNodes();
    if (!m_engine->acquireIngestion())
        qCInfo(lcService)
                << "another process (a GUI of an older version?) ingests this database; taking over when it ends";
    m_server = std::make_unique<ServiceServer>(m_engine.get(), m_store.get(), m_paths.databasePath);
    m_server->setPrompts(m_prompts);
    m_pipelines = std::make_unique<pipeline::PipelineRunner>(m_engine.get(), m_store.get(), m_paths.databasePath);
    m_server->setPipelines(m_pipelines.get());
    // Retries before the pipelines are taken up: a step run that failed
    // while no service ran is retried (and followed), not failed.
    m_retries = std::make_unique<RetryRunner>(m_engine.get(), m_store.get());
    m_pipelines->setRetries(m_retries.get());
    m_checkpoints = std::make_unique<CheckpointMirror>(m_engine.get(), m_store.get(), m_paths.databasePath,
            systemClock(), CheckpointMirror::intervalFromEnvironment());
    m_retries->setCheckpointMirror(m_checkpoints.get());
    if (const int taken = m_pipelines->restore())
        qCInfo(lcService) << "took up" << taken << "running pipeline(s) of the last service";
    m_pipelines->evictCache();
    m_nodeLoss = std::make_unique<NodeLossWatch>(
            m_engine.get(), m_store.get(), systemClock(), NodeLossWatch::lostAfterFromEnvironment());
    if (const int retried = m_retries->restore())
        qCInfo(lcService) << "retried" << retried << "run(s) that ended while no service ran";
    m_server->setNodeResolver([this](const QString&) { connectNewNodes(); });
    connect(m_server.get(), &ServiceServer::stopRequested, this, &ServiceHost::stopRequested);
    connect(m_server.get(), &ServiceServer::nodeRemoved, this, [this](const QString& node) { m_nodes.remove(node); });
    connect(m_server.get(), &ServiceServer::nodeAdded, this, [this](const NodeRecord& node, bool acceptNewHostKey) {
        if (m_nodes.contains(node.name))
            return;
        m_nodes.insert(node.name);
        NodeConnectOptions options;
        options.acceptNewHostKey = acceptNewHostKey;
        m_engine->addNode(node.name, transportForNode(node, localAgentPath(), m_prompts, options));
    });
    if (auto listening = m_server->listen(m_paths.socket); !listening)
        return listening;
    m_idleTimer = new QTimer(this);
    connect(m_idleTimer, &QTimer::timeout, this, &ServiceHost::checkIdle);
    m_idleTimer->start(1000);
    qCInfo(lcService).noquote()
            << "serving" << m_paths.databasePath << "on" << m_paths.socket
            << (m_options.persist ? QStringLiteral("(persistent)")
                                  : QStringLiteral("(stops after %1 s idle)").arg(m_options.idleExitSec));
    return {};
}

void ServiceHost::connectNewNodes()
{
    // Nodes added with `trainyardctl node add` or the Nodes view since the
    // service started; an encrypted key with no agent asks a client for its
    // passphrase (ServicePrompts), or fails authentication with its reason.
    for (const NodeRecord& n : m_store->nodes()) {
        if (m_nodes.contains(n.name))
            continue;
        m_nodes.insert(n.name);
        m_engine->addNode(n.name, transportForNode(n, localAgentPath(), m_prompts));
    }
}

bool ServiceHost::hasWork() const
{
    if (m_engine->startsPending() || m_engine->postRunWorkPending() || m_pipelines->busy() || m_retries->busy()
            || m_checkpoints->busy())
        return true;
    for (const RunRecord& r : m_store->unfinishedRuns())
        if (r.state != RunState::Held)
            return true;
    return false;
}

void ServiceHost::checkIdle()
{
    connectNewNodes();
    if (m_options.persist || m_options.idleExitSec <= 0)
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (m_server->clientCount() > 0 || hasWork()) {
        m_idleSinceMs = -1;
        return;
    }
    if (m_idleSinceMs < 0)
        m_idleSinceMs = now;
    if (now - m_idleSinceMs >= qint64(m_options.idleExitSec) * 1000) {
        qCInfo(lcService) << "idle for" << m_options.idleExitSec << "s: stopping";
        m_idleTimer->stop();
        Q_EMIT stopRequested();
    }
}

void ServiceHost::shutDown()
{
    if (m_idleTimer)
        m_idleTimer->stop();
    if (m_prompts) {
        m_prompts->close(); // a session waiting for a passphrase or a code gives up now
        m_prompts->setAsker({});
        m_prompts->setLoginAsker({});
    }
    m_server.reset(); // no new requests
    m_pipelines.reset();
    // What uses the engine goes before it (their destructors unset its providers).
    m_nodeLoss.reset();
    m_retries.reset();
    m_checkpoints.reset();
    if (m_engine) {
        m_engine->stopStarting();
        if (m_engine->postRunWorkPending() || m_engine->startsPending()) {
            QEventLoop loop;
            RunEngine* engine = m_engine.get();
            const auto quitWhenIdle = [engine, &loop] {
                if (!engine->postRunWorkPending() && !engine->startsPending())
                    loop.quit();
            };
            connect(engine, &RunEngine::postRunWorkDone, &loop, quitWhenIdle);
            connect(engine, &RunEngine::startsSettled, &loop, quitWhenIdle);
            QTimer::singleShot(30000, &loop, &QEventLoop::quit);
            loop.exec();
        }
        m_engine.reset();
    }
    if (m_store) {
        (void)m_store->flush();
        m_store.reset();
    }
    if (m_lock)
        m_lock.reset(); // unlocks
}

} // namespace ty::service
