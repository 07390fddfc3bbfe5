#include "RunEngine.h"

#include "FailureClassifier.h"

#include "MetricFileFollower.h"
#include "PreemptionPass.h"
#include "QueuePolicy.h"
#include "RunIngest.h"
#include "RunLifecycle.h"
#include "SchedulingPass.h"
#include "WriteRetry.h"
#include "core/common/Clock.h"
#include "core/common/Paths.h"
#include "core/logs/ConsoleNodeOffsets.h"
#include "core/nodes/AgentClient.h"
#include "core/nodes/LocalAgentTransport.h"
#include "core/nodes/NodePool.h"
#include "core/nodes/WorkdirSync.h"
#include "core/retry/Checkpoints.h"
#include "core/sched/Scheduler.h"
#include "core/slurm/SlurmBatch.h"
#include "core/slurm/SlurmRuns.h"
#include "core/store/ResultStore.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QLoggingCategory>
#include <QMetaMethod>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScopeGuard>
#include <QSysInfo>
#include <QTimer>
#include <QUuid>

#include <algorithm>
#include <limits>

Q_LOGGING_CATEGORY(lcRuns, "trainyard.runs", QtWarningMsg)

namespace ty {

struct RunEngine::Active {
    std::unique_ptr<RunIngest> ingest; // null for display-only watches
    RunRecord run;
    QString node;
    bool cancelRequested = false;
    bool timeLimitHit = false;  // this engine cancelled it because its time_limit (or a StopProvider's bound) passed
    QString stopDetail;         // the StopProvider's words when its bound was the one hit
    qint64 catchUpTo = -1;      // the node's console size when the tail began (-1: not yet known); node offsets
    bool endedOnNode = false;   // the agent's list said it had exited: caught up only once recorded
    bool ingestNoticed = false; // an ingestion error was recorded as a notice (one per attach, not per chunk)
    // A write failed (stallIngestion): output is dropped until a retry
    // re-opens the ingest at the stored offset and tails again from what is
    // held; until that tail's first chunk (resyncing), the replaced tail's
    // bytes past what is held, and its end, are dropped too.
    bool stalled = false;
    bool resyncing = false;
    QString stallReason;
    WriteRetry retry;
    std::shared_ptr<MetricFileFollower> files; // metric_files + $TRAINYARD_METRICS_FILE (ingestion owner)
    // Display-only watches (no ingest): local offset = node offset +
    // watchShift (ConsoleNodeOffsets), and how far consoleReceived got.
    qint64 watchShift = 0;
    qint64 watchEnd = 0;
    // Its node was removed (removeNode): nothing more is written for the run
    // by this entry, whatever callback of the old connection still comes.
    bool dropped = false;
};

namespace {
constexpr int kPollIntervalMs = 500;
constexpr qint64 kIngestRetryMs = 1000; // how often a process that wants ingestion tries the lock again
constexpr qint64 kPeriodicPassMs = 30000;
constexpr qint64 kFirstConnectGraceMs = 5000;
constexpr int kFirstCancelSignalRevision = 6; // `cancel` takes `signal` (app/agent/PROTOCOL.md)
constexpr int kGpuStatusIntervalMs = 2000;    // the Nodes view's refresh (issue 3: "every 2 s by default")

} // namespace

// Callers use defaults when it fails. Its workdir is the run's, resolved
// once at submission: parsed again against that folder, a relative
// `workdir: wd` would become .../wd/wd.
Result<JobSpec> runSpecOf(const RunRecord& run)
{
    const QString baseDir = !run.specPath.isEmpty() ? QFileInfo(run.specPath).absolutePath()
            : !run.workdir.isEmpty()                ? run.workdir
                                                    : QDir::rootPath();
    auto spec = parseJobSpec(run.specYaml, QStringLiteral("run %1 spec").arg(run.id), baseDir);
    if (spec && !run.workdir.isEmpty())
        spec->workdir = run.workdir;
    return spec;
}

namespace {

QList<MetricRule> rulesFromSpec(const Result<JobSpec>& spec)
{
    QList<MetricRule> rules;
    if (spec)
        for (const MetricRuleSpec& r : spec->metricRules)
            rules.append(MetricRule{r.key, QRegularExpression(r.regex)});
    return rules;
}
} // namespace

namespace {

// The id this Trainyard instance gives the agents with each start, so a
// node's agent can tell two researchers' instances apart (GPU claims). One
// per result database, kept in `<db>.instance`: the GUI and trainyardctl on
// one database are one instance. "<host>-<8 hex>".
QString instanceIdFor(const QString& databasePath)
{
    QFile f(databasePath + QStringLiteral(".instance"));
    if (f.open(QIODevice::ReadOnly)) {
        const QString id = QString::fromUtf8(f.readAll()).trimmed();
        if (!id.isEmpty() && id.size() <= 128)
            return id;
        f.close();
    }
    const QString id = QSysInfo::machineHostName() + u'-' + QUuid::createUuid().toString(QUuid::Id128).left(8);
    QSaveFile out(f.fileName());
    if (out.open(QIODevice::WriteOnly)) {
        out.write(id.toUtf8() + '\n');
        if (!out.commit())
            qCWarning(lcRuns) << "cannot keep the instance id in" << f.fileName() << ":" << out.errorString();
    }
    return id;
}

} // namespace

RunEngine::RunEngine(ResultStore* store, QString databasePath, QObject* parent)
    : RunEngine(store, std::move(databasePath), systemClock(), parent)
{ }

RunEngine::RunEngine(ResultStore* store, QString databasePath, Clock& clock, QObject* parent)
    : QObject(parent)
    , m_store(store)
    , m_clock(clock)
    , m_databasePath(QFileInfo(databasePath).absoluteFilePath())
{
    qRegisterMetaType<ty::RunId>("ty::RunId");
    qRegisterMetaType<ty::RunRecord>();
    qRegisterMetaType<ty::MetricPoint>();
    qRegisterMetaType<QList<ty::MetricPoint>>();
    qRegisterMetaType<QHash<ty::RunId, QString>>();
    qRegisterMetaType<QList<ty::AgentGpu>>();
    m_policy = defaultQueuePolicy();
    m_createdMs = m_clock.nowMs();
    m_clientId = instanceIdFor(m_databasePath);
    m_pool = new NodePool(m_clock, this);
    connect(m_pool, &NodePool::nodeConnected, this,
            [this](const QString& node) { Q_EMIT nodeStatusChanged(node, true, QString()); });
    connect(m_pool, &NodePool::nodeReady, this, [this](const QString& node) {
        if (m_ownsIngestion && m_slurmNodes.contains(node))
            recordSlurmFacts(node);
        if (m_ownsIngestion)
            reattachRuns(node);
    });
    connect(m_pool, &NodePool::slurmChanged, this, &RunEngine::onSlurmChanged);
    connect(m_pool, &NodePool::nodeLost, this, &RunEngine::onNodeLost);
    connect(m_pool, &NodePool::gpusReported, this, [this](const QString& node, const QList<AgentGpu>& gpus) {
        m_refusedGpus.remove(node); // the report has the claims now
        if (m_listedNodes.contains(node))
            scheduleSoon(); // a GPU may have come free (or been taken)
        Q_EMIT nodeGpusUpdated(node, gpus);
    });
    connect(m_pool, &NodePool::nodeWarning, this, &RunEngine::nodeWarning);
    connect(m_pool, &NodePool::output, this, &RunEngine::onOutput);
    connect(m_pool, &NodePool::tailEnded, this, &RunEngine::onTailEnded);
    connect(m_pool, &NodePool::consoleTruncated, this, &RunEngine::onConsoleTruncated);
    m_pollTimer = new QTimer(this);
    m_pollTimer->setInterval(kPollIntervalMs);
    connect(m_pollTimer, &QTimer::timeout, this, &RunEngine::pollDatabase);
    m_pollTimer->start();
    m_gpuTimer = new QTimer(this);
    m_gpuTimer->setInterval(kGpuStatusIntervalMs);
    connect(m_gpuTimer, &QTimer::timeout, this, &RunEngine::pollGpus);
    m_gpuTimer->start();
    // A failed batch may have rolled back console metrics and offsets of the
    // runs being ingested: each starts again from what is stored.
    connect(m_store, &ResultStore::writeFailed, this, [this](const QString& why) {
        for (const auto& a : QList<std::shared_ptr<Active>>(m_active.values()))
            if (a->ingest)
                stallIngestion(a, why);
    });
}

RunEngine::~RunEngine()
{
    // Leave every run going; flush what was ingested so the next session
    // resumes exactly where this one stopped.
    m_shuttingDown = true;
    // Disconnecting answers requests still pending (a start whose reply has
    // not come: its run is recorded unknown), so flush after it.
    m_pool->shutDown();
    m_pool->disconnect(this); // the pool (a child) outlives this body: nothing more from it
    m_store->flush();
}

void RunEngine::addLocalNode(const QString& agentPath, const QString& stateDir)
{
    addNode(QStringLiteral("local"), std::make_unique<LocalAgentTransport>(agentPath, stateDir));
}

void RunEngine::addNode(const QString& name, std::unique_ptr<AgentTransport> transport)
{
    m_slurmNodes.remove(name);
    for (const NodeRecord& n : m_store->nodes())
        if (n.name == name && n.kind == NodeKind::Slurm)
            m_slurmNodes.insert(name);
    m_pool->add(name, std::move(transport));
}

bool RunEngine::acquireIngestion()
{
    if (m_ownsIngestion)
        return true;
    const bool firstTry = !m_wantsIngestion;
    m_wantsIngestion = true;
    QDir().mkpath(QFileInfo(m_databasePath).absolutePath());
    m_ingestLock = std::make_unique<QLockFile>(m_databasePath + QStringLiteral(".ingest.lock"));
    m_ingestLock->setStaleLockTime(0); // a crashed owner's lock is detected by its pid, not by age
    m_ownsIngestion = m_ingestLock->tryLock(0);
    if (!m_ownsIngestion) {
        qint64 pid = 0;
        QString host, app;
        m_ingestLock->getLockInfo(&pid, &host, &app);
        if (firstTry)
            qCInfo(lcRuns) << "another process" << pid << "ingests runs of" << m_databasePath;
        m_ingestLock.reset();
    }
    // Runs of this database that are still going are picked up once their node is ready.
    if (m_ownsIngestion)
        for (const QString& node : m_pool->names())
            if (m_pool->isReady(node))
                reattachRuns(node);
    return m_ownsIngestion;
}

bool RunEngine::nodeReady(const QString& node) const
{
    return m_pool->isReady(node);
}

bool RunEngine::nodePlaceable(const QString& node) const
{
    const NodePool::NodeState* n = m_pool->node(node);
    return n && n->ready && n->gpusKnown;
}

Result<RunId> RunEngine::submit(const JobSpec& spec, const QString& node, const QList<RunGroupMembership>& groups)
{
    auto ids = submitAll(spec, node, groups);
    if (!ids)
        return std::unexpected(ids.error());
    return ids->front();
}

Result<QList<RunId>> RunEngine::submitAll(
        const JobSpec& spec, const QString& node, const QList<RunGroupMembership>& groups)
{
    const auto expanded = expandSweep(spec);
    if (!expanded)
        return std::unexpected(expanded.error());
    // One group for the runs of a sweep: the scheduler caps them together and
    // the runs table groups them.
    RunGroupId sweep = 0;
    if (!spec.sweep.isEmpty()) {
        auto id = m_store->createGroup(RunGroupKind::Sweep, spec.name, m_clock.nowUtc());
        if (!id)
            return std::unexpected(id.error());
        sweep = *id;
    }
    QList<RunId> ids;
    for (const JobSpec& one : *expanded) {
        RunRecord r;
        r.name = one.name;
        r.node = node; // pre-set: the scheduler places it on this node only
        transition(r, RunState::Queued, TransitionCause::Submitted);
        r.specYaml = spec.yaml.isEmpty() ? toYaml(spec) : spec.yaml;
        r.specPath = spec.sourcePath;
        r.argv = one.argv;
        r.workdir = one.workdir;
        r.env = one.env;
        // Attempt 1 of a run that may be retried, or requeued after a
        // preemption (core/retry/Checkpoints.h).
        if (spec.retry || spec.preemptible)
            setAttemptEnvironment(r.env, 1,
                    checkpointDirFor(QStringLiteral("%1-%2")
                                             .arg(QString::number(m_clock.nowMs(), 36))
                                             .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'))),
                    {});
        r.tags = one.tags;
        r.groups = groups;
        if (sweep > 0) {
            // expandSweep names a combination "<name>[lr=0.1,bs=32]".
            const QString suffix = one.name.mid(spec.name.size());
            const QString role
                    = suffix.startsWith(u'[') && suffix.endsWith(u']') ? suffix.mid(1, suffix.size() - 2) : QString();
            r.groups.append(RunGroupMembership{sweep, RunGroupKind::Sweep, int(ids.size()), role});
        }
        r.priority = one.priority;
        r.createdAt = m_clock.nowUtc();
        auto id = m_store->createRun(r, one.params);
        if (!id)
            return std::unexpected(id.error());
        ids.append(*id);
    }
    QMetaObject::invokeMethod(
            this, [this] { scheduleSoon(); }, Qt::QueuedConnection);
    return ids;
}

void RunEngine::cancel(RunId id, int graceMs)
{
    cancelRun(id, graceMs, {});
}

void RunEngine::cancelRun(RunId id, int graceMs, const QString& signal)
{
    QMetaObject::invokeMethod(
            this,
            [this, id, graceMs, signal] {
                auto run = m_store->run(id);
                if (!run)
                    return;
                if (isTerminal(run->state)) {
                    // Ended already (another process cancelled it, or it exited):
                    // said, so that nothing waits for a change that will not come.
                    Q_EMIT runStateChanged(*run);
                    return;
                }
                // Cancelling one rank of a gang cancels them all (isTerminal stops the recursion).
                const RunGroupId gang = gangOf(*run);
                if (run->state == RunState::Queued || run->state == RunState::Held) {
                    transition(*run, RunState::Cancelled, TransitionCause::Cancelled);
                    run->finishedAt = m_clock.nowUtc();
                    run->failureKind = FailureKind::Cancelled;
                    run->failureReason = QStringLiteral("cancelled before it started");
                    run->pendingReason.clear();
                    commit(*run);
                    return;
                }
                const NodePool::NodeState* node = m_pool->node(run->node);
                AgentClient* client = m_pool->client(run->node);
                // A client still connecting queues the request until the agent's hello.
                if (!node || client->state() == AgentClient::State::Disconnected) {
                    const QString reason = QStringLiteral("node %1 is not connected%2")
                                                   .arg(run->node,
                                                           node && !node->lastError.isEmpty()
                                                                   ? QStringLiteral(" (%1)").arg(node->lastError)
                                                                   : QString());
                    qCWarning(lcRuns).noquote() << "cannot cancel run" << id << ":" << reason;
                    Q_EMIT cancelFailed(id, reason);
                    return;
                }
                if (auto active = m_active.value(id))
                    active->cancelRequested = true;
                if (gang > 0) {
                    m_cancelling.insert(id);
                    const QList<RunRecord> all = m_store->unfinishedRuns();
                    for (const RunRecord& r : all)
                        if (r.id != id && !isTerminal(r.state) && gangOf(r) == gang && !m_cancelling.contains(r.id))
                            cancelRun(r.id, graceMs, signal);
                }
                if (!signal.isEmpty() && signal != u"SIGTERM" && client->hello().revision < kFirstCancelSignalRevision)
                    addNotice(id,
                            QStringLiteral("the agent on node %1 (protocol revision %2) can only send SIGTERM: it was "
                                           "sent instead of %3")
                                    .arg(run->node)
                                    .arg(client->hello().revision)
                                    .arg(signal));
                client->cancel(
                        run->agentRunId, graceMs,
                        [this, id, nodeName = run->node, agentRun = run->agentRunId](const Result<void>& r) {
                            if (r)
                                return;
                            const QString why = r.error().message; // names the node already
                            AgentClient* n = m_pool->client(nodeName);
                            if (!n || !n->isReady()) {
                                qCWarning(lcRuns).noquote() << "cancel of run" << id << "failed:" << why;
                                Q_EMIT cancelFailed(id, why);
                                return;
                            }
                            // The agent refuses a run that is no longer running: another
                            // process cancelled it a moment ago, or it just ended. Nothing
                            // failed; the ingestion owner records how it ended.
                            n->status(agentRun, [this, id, why](const Result<AgentRunStatus>& status) {
                                if (status && !status->running) {
                                    qCInfo(lcRuns).noquote() << "run" << id << "had already ended on its node:" << why;
                                    return;
                                }
                                qCWarning(lcRuns).noquote() << "cancel of run" << id << "failed:" << why;
                                Q_EMIT cancelFailed(id, why);
                            });
                        },
                        signal);
                if (!m_ownsIngestion)
                    m_watched.insert(id, run->state);
            },
            Qt::QueuedConnection);
}

Result<void> RunEngine::changeWaiting(RunId id, const std::function<void(RunRecord&)>& change)
{
    auto run = m_store->run(id);
    if (!run)
        return fail(run.error().message);
    if (run->state != RunState::Queued && run->state != RunState::Held)
        return fail(QStringLiteral("run %1 is %2, not waiting in the queue").arg(id).arg(runStateName(run->state)));
    change(*run);
    m_store->updateRun(*run);
    if (auto flushed = m_store->flush(); !flushed)
        return flushed;
    QMetaObject::invokeMethod(
            this,
            [this, r = *run] {
                Q_EMIT runStateChanged(r);
                scheduleSoon();
            },
            Qt::QueuedConnection);
    return {};
}

Result<void> RunEngine::hold(RunId id)
{
    return changeWaiting(id, [](RunRecord& r) {
        transition(r, RunState::Held, TransitionCause::HeldByUser);
        r.pendingReason = QStringLiteral("held by user");
    });
}

Result<void> RunEngine::release(RunId id)
{
    return changeWaiting(id, [](RunRecord& r) {
        transition(r, RunState::Queued, TransitionCause::ReleasedByUser);
        r.pendingReason.clear();
    });
}

Result<void> RunEngine::setPriority(RunId id, int priority)
{
    return changeWaiting(id, [priority](RunRecord& r) { r.priority = priority; });
}

Result<void> RunEngine::moveToTop(RunId id)
{
    int top = std::numeric_limits<int>::min();
    const QList<RunRecord> all = m_store->unfinishedRuns();
    for (const RunRecord& r : all)
        if ((r.state == RunState::Queued || r.state == RunState::Held) && r.id != id)
            top = std::max(top, r.priority);
    return changeWaiting(id, [top](RunRecord& r) {
        if (top != std::numeric_limits<int>::min() && r.priority <= top)
            r.priority = top + 1;
    });
}

void RunEngine::watch(RunId id, qint64 fromOffset, bool follow)
{
    auto run = m_store->run(id);
    if (!run)
        return;
    if (m_ownsIngestion && m_active.contains(id))
        return; // already streaming, and the ingest resumes at the local copy's end
    m_watched.insert(id, run->state);
    AgentClient* client = m_pool->client(run->node);
    if (!client || run->agentRunId.isEmpty() || run->state == RunState::Starting) {
        // Not started yet (another process schedules it): tail once the
        // database says where it runs (pollDatabase).
        m_pendingWatch.insert(id, {fromOffset, follow});
        return;
    }
    auto active = std::make_shared<Active>();
    active->run = *run;
    active->node = run->node;
    // `fromOffset` counts bytes of the local copy (what the caller printed
    // of it); the node's file may have been truncated and followed since.
    // Bytes of the old content the copy lacks are on no node any more.
    qint64 nodeFrom = fromOffset;
    qint64 generation = 0;
    if (!run->consolePath.isEmpty()) {
        if (auto offsets = ConsoleNodeOffsets::load(ConsoleNodeOffsets::pathFor(run->consolePath))) {
            nodeFrom = std::max<qint64>(0, offsets->toNode(fromOffset));
            active->watchShift = offsets->toLocal(0);
            generation = offsets->generation();
        } else {
            qCWarning(lcRuns).noquote() << offsets.error().message;
        }
    }
    active->watchEnd = nodeFrom + active->watchShift;
    m_active.insert(id, active);
    const QString agentRun = run->agentRunId;
    // Queued by the client until the agent's hello if not ready yet.
    client->tail(
            agentRun, nodeFrom, follow,
            [this, id, agentRun](const Result<qint64>& r) {
                if (r || m_shuttingDown)
                    return;
                qCWarning(lcRuns) << "tail of" << agentRun << "failed:" << r.error().message;
                m_active.remove(id);
                Q_EMIT watchEnded(id);
            },
            /*followTruncation=*/true, generation);
}

void RunEngine::scheduleSoon()
{
    if (m_schedulePending)
        return;
    m_schedulePending = true;
    QTimer::singleShot(0, this, [this] {
        m_schedulePending = false;
        schedulePass();
    });
}

void RunEngine::setPolicy(const sched::Policy& policy)
{
    m_policy = policy;
    m_queuePolicies.clear();
    m_policyFixed = true;
    scheduleSoon();
}

void RunEngine::reloadPolicy()
{
    if (m_policyFixed)
        return;
    const QFileInfo file(queuePolicyPath(m_databasePath));
    const QDateTime modified = file.exists() ? file.lastModified() : QDateTime();
    if (m_policyLoaded && modified == m_policyModified)
        return;
    m_policyLoaded = true;
    m_policyModified = modified;
    auto policies = loadQueuePolicies(m_databasePath);
    if (!policies) {
        qCWarning(lcRuns) << policies.error().message << "- keeping the previous policy";
        return;
    }
    m_policy = policies->defaults;
    m_queuePolicies = policies->queues;
}

namespace {
// The OS user, the default fair-share account of a run.
QString osUser()
{
    const QString u = qEnvironmentVariable("USER");
    return u.isEmpty() ? qEnvironmentVariable("LOGNAME") : u;
}
} // namespace

const Result<JobSpec>& RunEngine::cachedSpec(const RunRecord& run)
{
    const size_t h = qHash(run.specYaml) ^ qHash(run.workdir);
    CachedSpec& c = m_specCache[run.id];
    if (!c.spec || c.yamlHash != h) {
        c.yamlHash = h;
        c.spec = std::make_shared<const Result<JobSpec>>(runSpecOf(run));
    }
    return *c.spec;
}

void RunEngine::setWaitDeadlineProvider(StopProvider provider)
{
    m_waitDeadlineProvider = std::move(provider);
    m_waitDeadlines.clear();
    scheduleSoon(); // the queued runs' deadlines are armed by the next pass
}

std::optional<std::pair<qint64, QString>> RunEngine::waitDeadlineOf(const RunRecord& run)
{
    if (const auto it = m_waitDeadlines.constFind(run.id); it != m_waitDeadlines.cend())
        return *it;
    std::optional<std::pair<qint64, QString>> deadline;
    // Only a spec with a deadline has one: the provider's lookups (the
    // run's attempts) are not paid for every queued run at every pass.
    if (const Result<JobSpec>& spec = cachedSpec(run); spec && spec->deadlineSec)
        deadline = m_waitDeadlineProvider(run);
    m_waitDeadlines.insert(run.id, deadline);
    return deadline;
}

FairShareLedger::Entry RunEngine::ledgerEntryOf(const RunRecord& r)
{
    FairShareLedger::Entry e;
    e.startMs = r.startedAt.isValid() ? r.startedAt.toMSecsSinceEpoch() : 0;
    e.endMs = r.finishedAt.isValid() ? r.finishedAt.toMSecsSinceEpoch() : 0;
    e.gpus = int(r.gpus.size());
    const Result<JobSpec>& spec = cachedSpec(r);
    e.user = spec && !spec->user.isEmpty() ? spec->user : osUser();
    if (spec)
        e.project = spec->project;
    return e;
}

QList<RunRecord> RunEngine::updateFairShareLedger(qint64 nowMs, qint64 windowMs)
{
    const qint64 windowStart = nowMs - windowMs;
    QList<RunRecord> unfinished;
    QList<RunRecord> ended;
    // Rebuilt when due, when the clock went back, or when the window grew
    // (a longer half-life: runs the ledger let go count again).
    if (!m_ledgerValid || nowMs - m_ledgerBuiltMs >= kLedgerRebuildMs || nowMs < m_ledgerBuiltMs
            || windowMs > m_ledgerWindowMs) {
        // From the database: every run that ended within the window.
        QList<RunRecord> runs = m_store->unfinishedRuns(QDateTime::fromMSecsSinceEpoch(windowStart, Qt::UTC));
        for (RunRecord& r : runs)
            (isTerminal(r.state) ? ended : unfinished).append(std::move(r));
        m_ledger.clear();
        m_ledgerMaxId = 0;
        m_ledgerBuiltMs = nowMs;
        m_ledgerWindowMs = windowMs;
        m_ledgerValid = true;
    } else {
        unfinished = m_store->unfinishedRuns();
        // Created and ended since the last pass (by anyone)...
        ended = m_store->endedRunsAfter(m_ledgerMaxId);
        // ...and those the last pass saw unfinished that are not any more.
        QSet<RunId> still;
        still.reserve(unfinished.size());
        for (const RunRecord& r : std::as_const(unfinished))
            still.insert(r.id);
        for (const RunId id : std::as_const(m_ledgerUnfinished)) {
            if (still.contains(id) || id > m_ledgerMaxId)
                continue;
            if (Result<RunRecord> r = m_store->run(id); r && isTerminal(r->state))
                ended.append(std::move(*r));
        }
    }
    for (const RunRecord& r : std::as_const(ended)) {
        m_ledger.record(r.id, ledgerEntryOf(r));
        m_ledgerMaxId = std::max(m_ledgerMaxId, r.id);
    }
    m_ledgerUnfinished.clear();
    m_ledgerUnfinished.reserve(unfinished.size());
    for (const RunRecord& r : std::as_const(unfinished)) {
        m_ledgerUnfinished.insert(r.id);
        m_ledgerMaxId = std::max(m_ledgerMaxId, r.id);
    }
    m_ledger.dropEndedBefore(windowStart);
    return unfinished;
}

// One pass of the pure scheduler (core/sched) over every node this engine
// knows: placements are started, every other queued run gets its reason.
void RunEngine::schedulePass()
{
    if (!m_ownsIngestion || m_stopStarting)
        return; // only one process starts queued runs (and not one about to end)
    // Until every node has answered or failed once, a pass would call the
    // ones still connecting unreachable (a few seconds at most).
    const qint64 sinceStart = m_clock.nowMs() - m_createdMs;
    QStringList names = m_pool->names();
    for (const QString& name : std::as_const(names)) {
        if (!m_pool->node(name)->attempted && sinceStart < kFirstConnectGraceMs) {
            m_clock.singleShot(200, this, [this] { scheduleSoon(); });
            return;
        }
    }
    reloadPolicy();
    const qint64 now = m_clock.nowMs();
    m_lastPassMs = now;
    // Snapshot: the nodes and the runs not ended, as the scheduler's types
    // (core/runs/SchedulingPass.h).
    sched::ClusterState state;
    // Nodes' labels (trainyardctl node add --label, node label), read each
    // pass so a change applies without a restart; "local" has no NodeRecord.
    QHash<QString, QStringList> labels;
    for (const NodeRecord& n : m_store->nodes())
        labels.insert(n.name, n.labels);
    labels.insert(QStringLiteral("local"), m_store->localNodeLabels());
    names.sort();
    for (const QString& name : std::as_const(names))
        state.nodes.append(
                pass::nodeSnapshot(*m_pool->node(name), labels.value(name), m_clientId, m_refusedGpus.value(name)));
    QList<sched::PendingRun> queue;
    QHash<RunId, RunRecord> queued;
    QSet<QString> pinnedElsewhere;
    // Only what a pass needs, so its cost follows the queue, not the history:
    // the runs not ended. Fair share's usage of ended runs is in the ledger
    // (updateFairShareLedger), kept for 30 half-lives: what is older counts
    // less than 1e-9 of its GPU hours.
    qint64 usageHalfLifeMs = 0;
    const auto usesFairShare = [&usageHalfLifeMs](const sched::Policy& p) {
        if (p.ordering == sched::Ordering::FairShare)
            usageHalfLifeMs = std::max(usageHalfLifeMs, std::max<qint64>(1, p.usageHalfLifeMs));
    };
    usesFairShare(m_policy);
    for (const sched::Policy& p : std::as_const(m_queuePolicies))
        usesFairShare(p);
    QList<RunRecord> all = usageHalfLifeMs > 0
            ? updateFairShareLedger(now, usageHalfLifeMs > now / 30 ? now : 30 * usageHalfLifeMs)
            : m_store->unfinishedRuns();
    if (usageHalfLifeMs == 0 && m_ledgerValid) {
        m_ledger.clear();
        m_ledgerValid = false;
    }
    // Runs this engine is starting right now: their 'starting' record may not
    // be committed yet, so the database can still say 'queued'. They hold
    // their resources; starting them again would be a double start.
    for (RunRecord& r : all) {
        const auto it = m_starting.find(r.id);
        if (it == m_starting.end())
            continue;
        if (r.state == RunState::Queued || r.state == RunState::Starting)
            r = *it; // our newer view of it
        else
            m_starting.erase(it); // the database has caught up
    }
    QSet<RunId> present;
    present.reserve(all.size());
    for (const RunRecord& r : std::as_const(all))
        present.insert(r.id);
    // Started runs that ended before this pass (the database caught up, and
    // the pass no longer reads them): their start is settled too.
    m_starting.removeIf([&present](const auto& it) { return !present.contains(it.key()); });
    qint64 wakeAt = 0; // the earliest notBefore or deadline of a queued run still ahead
    const auto wakeFor = [&wakeAt](qint64 at) { wakeAt = wakeAt == 0 ? at : std::min(wakeAt, at); };
    QHash<RunId, QString> waitingOutBackoff;
    sched::PreemptionInput preemption; // the running runs as preemption sees them (core/sched/Preemption.h)
    QList<RunRecord> toSlurm;          // queued runs for Slurm login nodes that answer
    for (const RunRecord& r : std::as_const(all)) {
        if (r.state == RunState::Queued && m_waitDeadlineProvider) {
            // Its deadline (core/retry), the time in the queue included:
            // failed at it, never started after it.
            if (const auto deadline = waitDeadlineOf(r)) {
                if (deadline->first <= now) {
                    RunRecord ended = r;
                    failRun(ended, deadline->second, FailureKind::TimeLimit);
                    ended.state = RunState::Failed;
                    m_starting.insert(ended.id, ended); // until the database says so too
                    continue;
                }
                wakeFor(deadline->first);
            }
        }
        if (r.state == RunState::Queued && r.notBefore.isValid() && r.notBefore.toMSecsSinceEpoch() > now) {
            // A retry waiting out its backoff (core/retry): not offered to
            // the scheduler before then; its reason (set with it) says so.
            wakeFor(r.notBefore.toMSecsSinceEpoch());
            waitingOutBackoff.insert(r.id, r.pendingReason);
            continue;
        }
        if (m_slurmNodes.contains(r.node)) {
            // Slurm places it, not this scheduler (issue #26): a queued run
            // goes to its login node as soon as that answers.
            if (r.state != RunState::Queued)
                continue;
            if (m_pool->isReady(r.node)) {
                toSlurm.append(r);
                toSlurm.last().pendingReason.clear();
            } else {
                waitingOutBackoff.insert(r.id, QStringLiteral("waiting for Slurm login node %1 to answer").arg(r.node));
            }
            continue;
        }
        if (r.state == RunState::Queued || r.state == RunState::Held) {
            queue.append(pass::pendingRunOf(r, cachedSpec(r), osUser(), names));
            queued.insert(r.id, r);
            if (!r.node.isEmpty() && !m_pool->contains(r.node) && !pinnedElsewhere.contains(r.node)) {
                // A node this process does not connect to (trainyardctl only
                // adds the nodes it needs): it is unreachable from here, so
                // the run waits instead of failing.
                sched::NodeState unknown;
                unknown.name = r.node;
                unknown.reachable = false;
                state.nodes.append(unknown);
                pinnedElsewhere.insert(r.node);
            }
        } else if (!isTerminal(r.state) && !r.node.isEmpty()) {
            state.running.append(pass::allocationOf(r, cachedSpec(r), osUser(), now));
            preemption.running.insert(r.id, runningInfoOf(r));
        }
    }
    if (!toSlurm.isEmpty())
        submitToSlurm(toSlurm);          // RunEngineSlurm.cpp
    if (m_specCache.size() > all.size()) // runs that ended (outside fair share's window) or were deleted
        m_specCache.removeIf([&present](const auto& it) { return !present.contains(it.key()); });
    if (m_waitDeadlines.size() > all.size())
        m_waitDeadlines.removeIf([&present](const auto& it) { return !present.contains(it.key()); });
    if (wakeAt > 0 && (m_notBeforeWakeMs <= now || wakeAt < m_notBeforeWakeMs)) {
        m_notBeforeWakeMs = wakeAt;
        m_clock.singleShot(wakeAt - now, this, [this] {
            m_notBeforeWakeMs = 0;
            scheduleSoon();
        });
    }
    if (queue.isEmpty()) {
        if (m_pendingReasons != waitingOutBackoff) {
            m_pendingReasons = waitingOutBackoff;
            Q_EMIT pendingReasonsChanged(m_pendingReasons);
        }
        return;
    }

    // The pure scheduler, one pass per queue, each with its own policy, and
    // preemption where a policy allows it (PreemptionPass.h).
    for (auto it = m_preempting.cbegin(); it != m_preempting.cend(); ++it)
        preemption.ending.insert(it.key());
    const sched::SchedulerDecision decision = pass::decideWithPreemption(
            m_scheduler, state, queue,
            [this](const QString& q) -> const sched::Policy& {
                return m_queuePolicies.contains(q) ? m_queuePolicies[q] : m_policy;
            },
            [this, &all, now](const sched::Policy& policy) {
                const bool byProject = policy.fairShareBy == sched::FairShareBy::Project;
                sched::FairShareState usage = fairShareUsage(all, policy, now, [this, byProject](const RunRecord& r) {
                    const FairShareLedger::Entry e = ledgerEntryOf(r);
                    return byProject ? e.project : e.user;
                });
                m_ledger.chargeTo(usage, now, policy.usageHalfLifeMs, policy.fairShareBy);
                return usage;
            },
            m_claims, preemption, now);
    startPreemptions(decision.preemptions, queued);
    // What each waiting run shows, and the starts.
    QHash<RunId, QString> reasons = waitingOutBackoff;
    for (const sched::PendingInfo& info : decision.pending) {
        const QString text = pass::pendingText(info);
        if (pass::neverPlaceable(info, state)) {
            // No node this engine knows could ever hold it: say so now rather
            // than leave it queued for ever. Until the database has the
            // write, the next pass must not read it as queued and start it.
            RunRecord unplaceable = queued.value(info.run);
            failRun(unplaceable, text, FailureKind::Unschedulable);
            unplaceable.state = RunState::Failed;
            m_starting.insert(unplaceable.id, unplaceable); // until the database says so too
            continue;
        }
        reasons.insert(info.run, text);
        // Kept with the run too, so every process sharing the database (the
        // CLI's ls, another GUI) shows why it waits.
        RunRecord& r = queued[info.run];
        if (r.pendingReason != text) {
            r.pendingReason = text;
            commit(r);
        }
    }
    for (const sched::RunPlacement& placement : decision.placements) {
        RunRecord r = queued.value(placement.run);
        if (placement.nodes.size() > 1 || placement.elastic) { // an elastic gang on one node is one too
            startGang(r, placement.nodes);
            continue;
        }
        const sched::NodeAssignment& a = placement.nodes.front();
        if (!m_pool->isReady(a.node))
            continue;
        r.gpus = a.gpuIndices;
        r.pendingReason.clear();
        for (auto it = a.env.cbegin(); it != a.env.cend(); ++it)
            r.env.insert(it.key(), it.value());
        startRun(r, a.node);
    }
    if (reasons != m_pendingReasons) {
        m_pendingReasons = reasons;
        Q_EMIT pendingReasonsChanged(m_pendingReasons);
    }
}

QString RunEngine::agentRunIdFor(const RunRecord& run) const
{
    // Unique per database and run, so several Trainyard databases can share
    // one node's agent without clashing; the creation time keeps a database
    // recreated at the same path from meeting its predecessor's runs.
    const QByteArray hash = QCryptographicHash::hash(
            (QSysInfo::machineHostName() + m_databasePath).toUtf8(), QCryptographicHash::Sha1)
                                    .toHex()
                                    .left(8);
    return QStringLiteral("ty-%1-%2-%3")
            .arg(QString::fromLatin1(hash))
            .arg(run.id)
            .arg(QString::number(run.createdAt.toMSecsSinceEpoch(), 36));
}

// A gang run: rank 0 is the submitted run; every other rank becomes a run
// of its own ("name#rank1", ...) on its node, all members of one gang group
// (position: the rank), so each has its own console, metrics and exit
// status; each rank is also in the groups rank 0 is in (its sweep, its
// pipeline), but for its attempts group (RetryRunner). All ranks are started
// in the same pass (the scheduler placed them all or none); if one cannot
// start, the others are cancelled, so nothing waits half-started for a
// rendezvous that never comes.
void RunEngine::startGang(RunRecord root, const QList<sched::NodeAssignment>& ranks)
{
    for (const sched::NodeAssignment& a : ranks)
        if (!m_pool->isReady(a.node))
            return; // placed on a node that just went away: next pass
    auto gang = m_store->createGroup(RunGroupKind::Gang, root.name, m_clock.nowUtc());
    const RunGroupMembership rank0{gang.value_or(0), RunGroupKind::Gang, 0, {}};
    if (auto joined = gang ? m_store->joinGroup(root.id, rank0) : Result<void>(std::unexpected(gang.error()));
            !joined) {
        failRun(root, QStringLiteral("could not record its gang: %1").arg(joined.error().message));
        return;
    }
    // The other ranks are in the groups rank 0 is in now (as stored: the
    // engine's record may predate them), at their own position in the gang.
    if (auto fresh = m_store->run(root.id))
        root.groups = fresh->groups;
    else
        root.groups.append(rank0);
    const QMap<QString, QString> params = m_store->params(root.id);
    QList<std::pair<RunRecord, QString>> starts;
    for (qsizetype rank = 0; rank < ranks.size(); ++rank) {
        const sched::NodeAssignment& a = ranks[rank];
        RunRecord r = root;
        if (rank > 0) {
            r.id = 0;
            r.name = root.name + QStringLiteral("#rank%1").arg(rank);
            transition(r, RunState::Starting, TransitionCause::Submitted);
            r.node = a.node;
            r.createdAt = m_clock.nowUtc();
            for (RunGroupMembership& m : r.groups)
                if (m.group == *gang)
                    m.position = int(rank);
            // Not in rank 0's attempts: a gang start is one attempt (rank 0), whatever its size.
            r.groups.removeIf([](const RunGroupMembership& m) { return m.kind == RunGroupKind::Attempts; });
            const auto id = m_store->createRun(r, params);
            if (!id) {
                failRun(root, QStringLiteral("could not record rank %1: %2").arg(rank).arg(id.error().message));
                cancelGang(*gang, root.id);
                return;
            }
            r.id = *id;
        }
        r.gpus = a.gpuIndices;
        r.pendingReason.clear();
        for (auto it = a.env.cbegin(); it != a.env.cend(); ++it)
            r.env.insert(it.key(), it.value());
        // An elastic gang's ranks meet under one rendezvous id: its gang's (ElasticRendezvous.h).
        if (a.env.contains(u"PET_RDZV_BACKEND"_qs))
            r.env.insert(u"PET_RDZV_ID"_qs, QString::number(*gang));
        starts.append({r, a.node});
    }
    for (const auto& [r, nodeName] : starts)
        startRun(r, nodeName);
}

RunGroupId RunEngine::gangOf(const RunRecord& run)
{
    return groupIdOf(run, RunGroupKind::Gang);
}

void RunEngine::cancelGang(RunGroupId gang, RunId except, int graceMs, const QString& signal)
{
    if (gang <= 0)
        return;
    const QList<RunRecord> all = m_store->unfinishedRuns();
    for (const RunRecord& r : all)
        if (r.id != except && !isTerminal(r.state) && gangOf(r) == gang)
            cancelRun(r.id, graceMs, signal);
}

void RunEngine::setSlurmAfterOk(RunId run, const QStringList& jobs)
{
    if (jobs.isEmpty())
        m_slurmAfterOk.remove(run);
    else
        m_slurmAfterOk.insert(run, jobs);
}

void RunEngine::startRun(RunRecord run, const QString& nodeName)
{
    transition(run, RunState::Starting, TransitionCause::Placed);
    run.node = nodeName;
    run.agentRunId = agentRunIdFor(run);
    commit(run);
    m_starting.insert(run.id, run);
    ++m_startRequests; // settled by sendStart's reply, or by a failed sync

    AgentStartRequest req;
    req.run = run.agentRunId;
    req.argv = run.argv;
    req.workdir = run.workdir;
    req.env = run.env;
    req.gpus = run.gpus;
    req.client = m_clientId;
    const Result<JobSpec>& spec = cachedSpec(run);
    if (m_slurmNodes.contains(nodeName)) {
        // A batch job: Slurm gives it its node and GPUs (core/slurm/SlurmBatch.h).
        const slurm::Submission job = slurm::submissionFor(spec ? *spec : JobSpec{}, run);
        req.slurm = true;
        req.slurmScript = job.script;
        req.slurmSbatch = job.sbatch;
        req.gpus.clear();
        if (const QStringList after = m_slurmAfterOk.take(run.id); !after.isEmpty()) {
            req.slurmSbatch << QStringLiteral("--dependency=afterok:") + after.join(u':')
                            << QStringLiteral("--kill-on-invalid-dep=yes");
            addNotice(run.id,
                    QStringLiteral("submitted behind Slurm job(s) %1 (afterok): Slurm starts it when they succeeded, "
                                   "and cancels it when one fails")
                            .arg(after.join(QStringLiteral(", "))));
        }
    }
    const bool sync = spec && spec->sync;
    // `sync: true`: the workdir goes to the node first (WorkdirSync.h), the run works in that copy.
    if (sync)
        req.workdir = syncDirFor(m_pool->node(nodeName)->hello.stateDir, spec->workdir);
    QStringList producers;
    QMap<QString, QString> stageEnv;
    QString stageError;
    const QList<StageFile> stage = stageFor(run, nodeName, sync, &producers, &stageEnv, &stageError);
    if (!stageError.isEmpty()) {
        qCWarning(lcRuns).noquote() << QStringLiteral("run %1: %2").arg(run.id).arg(stageError);
        addNotice(run.id, stageError);
        transition(run, RunState::Failed, TransitionCause::StartFailed);
        m_starting.insert(run.id, run); // until the database says so too
        failRun(run, stageError);
        cancelGang(gangOf(run), run.id);
        startSettled();
        return;
    }
    if (!stageEnv.isEmpty()) { // paths below its workdir there, absolute (its record says so too)
        for (auto it = stageEnv.cbegin(); it != stageEnv.cend(); ++it) {
            const QString path = QDir(req.workdir).filePath(it.value());
            req.env.insert(it.key(), path);
            run.env.insert(it.key(), path);
        }
        commit(run);
        m_starting.insert(run.id, run);
    }
    if (!sync && stage.isEmpty()) {
        sendStart(run, nodeName, req);
        return;
    }
    const QString localDir = sync ? spec->workdir : QString();
    const qint64 limit = sync ? spec->syncLimitMiB * 1024 * 1024 : 0;
    const QString remoteDir = req.workdir;
    // The notices and what failed, set on the file job's thread, read after it.
    auto dangling = std::make_shared<QString>();
    auto skipped = std::make_shared<QString>();
    auto staged = std::make_shared<QString>();
    auto failedTo = std::make_shared<QString>(QStringLiteral("sync its workdir"));
    // Stage-in progress, at most every 200 ms, to the engine's thread.
    auto report = [this, id = run.id, clock = std::make_shared<QElapsedTimer>()](qint64 done, qint64 total) {
        if (done != 0 && done != total && clock->isValid() && clock->elapsed() < 200)
            return;
        clock->start();
        QMetaObject::invokeMethod(
                this, [this, id, done, total] { Q_EMIT runStaging(id, done, total); }, Qt::QueuedConnection);
    };
    m_pool->runFileJob(
            nodeName,
            [localDir, limit, remoteDir, id = run.id, nodeName, dangling, skipped, staged, failedTo, stage, report,
                    producers, db = m_databasePath](NodeFiles& files) -> Result<void> {
                if (!localDir.isEmpty()) {
                    const auto scan = scanWorkdir(localDir, limit, db);
                    if (!scan)
                        return std::unexpected(scan.error());
                    if (!scan->skipped.isEmpty()) {
                        const QStringList shown = scan->skipped.mid(0, 5);
                        *skipped = QStringLiteral("sync of %1 to node %2 left out %3 entr(ies) it cannot copy: %4%5")
                                           .arg(localDir, nodeName)
                                           .arg(scan->skipped.size())
                                           .arg(shown.join(QStringLiteral(", ")),
                                                   scan->skipped.size() > shown.size() ? QStringLiteral(", ...")
                                                                                       : QString());
                        qCWarning(lcRuns).noquote() << QStringLiteral("run %1: %2").arg(id).arg(*skipped);
                    }
                    const auto synced = syncToNode(*scan, remoteDir, files);
                    if (!synced)
                        return std::unexpected(synced.error());
                    // Links are synced as they are (WorkdirSync.h); one whose target is not
                    // on the node too (`data -> ../shared_data`) fails the run when used.
                    if (!synced->danglingLinks.isEmpty()) {
                        const QStringList shown = synced->danglingLinks.mid(0, 5);
                        *dangling
                                = QStringLiteral("sync of %1 to node %2 made %3 symlink(s) that lead nowhere there "
                                                 "(their targets are not on the node, relative to %4): %5%6")
                                          .arg(localDir, nodeName)
                                          .arg(synced->danglingLinks.size())
                                          .arg(remoteDir, shown.join(QStringLiteral(", ")),
                                                  synced->danglingLinks.size() > shown.size() ? QStringLiteral(", ...")
                                                                                              : QString());
                        qCWarning(lcRuns).noquote() << QStringLiteral("run %1: %2").arg(id).arg(*dangling);
                    }
                }
                if (stage.isEmpty())
                    return {};
                *failedTo = QStringLiteral("copy its inputs (made by run %1)").arg(producers.join(u", "));
                QElapsedTimer took;
                took.start();
                const auto copied = stageToNode(stage, remoteDir, files, report);
                if (!copied)
                    return std::unexpected(copied.error());
                *staged = copied->copied
                        ? QStringLiteral("inputs made by run %1: %2 file(s), %3 MiB, copied into its workdir on "
                                         "node %4 in %5 s")
                                  .arg(producers.join(u", "))
                                  .arg(copied->copied)
                                  .arg(double(copied->bytesCopied) / (1024.0 * 1024.0), 0, 'f', 1)
                                  .arg(nodeName)
                                  .arg(double(took.elapsed()) / 1000.0, 0, 'f', 1)
                        : QStringLiteral("inputs made by run %1: all %2 file(s) already in its workdir on node %3 "
                                         "(made there): nothing copied")
                                  .arg(producers.join(u", "))
                                  .arg(copied->inPlace)
                                  .arg(nodeName);
                if (copied->copied && copied->inPlace)
                    *staged += QStringLiteral("; %1 file(s) already there (made there)").arg(copied->inPlace);
                qCInfo(lcRuns).noquote() << QStringLiteral("run %1: %2").arg(id).arg(*staged);
                return {};
            },
            [this, run, nodeName, req, dangling, skipped, staged, failedTo](const Result<void>& done) mutable {
                if (m_abandonedStarts.remove(run.id)) {
                    startSettled(); // its node was removed: its record is the removal's
                    return;
                }
                for (const QString* notice : {skipped.get(), dangling.get(), staged.get()})
                    if (!notice->isEmpty())
                        addNotice(run.id, *notice);
                if (done && m_pool->isReady(nodeName)) {
                    sendStart(run, nodeName, req);
                    return;
                }
                transition(run, RunState::Failed, TransitionCause::StartFailed);
                m_starting.insert(run.id, run); // until the database says so too
                failRun(run,
                        QStringLiteral("could not %1 to node %2: %3")
                                .arg(*failedTo, nodeName,
                                        done ? QStringLiteral("the node was lost") : done.error().message));
                cancelGang(gangOf(run), run.id);
                startSettled();
            });
}

void RunEngine::setStageProvider(StageProvider provider, const void* owner)
{
    for (auto it = m_stageProviders.begin(); it != m_stageProviders.end(); ++it)
        if (it->first == owner) {
            if (provider)
                it->second = std::move(provider);
            else
                m_stageProviders.erase(it);
            return;
        }
    if (provider)
        m_stageProviders.append({owner, std::move(provider)});
}

QList<StageFile> RunEngine::stageFor(const RunRecord& run, const QString& nodeName, bool sync, QStringList* producers,
        QMap<QString, QString>* envPaths, QString* error)
{
    QList<StageFile> out;
    QList<StageSource> sources;
    for (const auto& [owner, provider] : std::as_const(m_stageProviders))
        sources += provider(run);
    for (const StageSource& s : std::as_const(sources)) {
        if (!s.error.isEmpty() && error && error->isEmpty())
            *error = s.error;
        if (envPaths)
            envPaths->insert(s.envPaths);
        // Made on this node in this very workdir: what is there is that run's.
        bool inPlace = false;
        if (const auto made = m_store->run(s.producer)) {
            const Result<JobSpec> madeSpec = runSpecOf(*made);
            inPlace = made->node == nodeName && made->workdir == run.workdir && (madeSpec && madeSpec->sync) == sync;
        }
        if (!s.files.isEmpty())
            *producers << QString::number(s.producer);
        for (const QString& rel : s.files) {
            const QFileInfo local(s.localRoot + u'/' + rel);
            out << StageFile{local.absoluteFilePath(), rel, local.size(), inPlace};
        }
    }
    return out;
}

QString RunEngine::rejectedHostKeyFingerprint(const QString& name) const
{
    return m_pool->rejectedHostKeyFingerprint(name);
}

bool RunEngine::trustNewHostKey(const QString& name)
{
    return m_pool->trustNewHostKey(name);
}

void RunEngine::removeNode(const QString& name)
{
    if (name == u"local" || !m_pool->contains(name))
        return;
    // Its runs' records are the caller's (NodeRemoval: failed with --force):
    // what this engine was doing for them stops here, writing nothing, so no
    // ingest, metric file follower or start reply of the old connection
    // writes for them later. Before the pool closes the connection: that
    // answers its pending requests at once, with errors.
    for (auto it = m_active.begin(); it != m_active.end();) {
        if ((*it)->node == name) {
            (*it)->dropped = true;
            it = m_active.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = m_starting.begin(); it != m_starting.end();) {
        if (it->node == name) {
            if (it->state == RunState::Starting)
                m_abandonedStarts.insert(it.key()); // its start's callback is still to come
            it = m_starting.erase(it);
        } else {
            ++it;
        }
    }
    m_pool->remove(name);
    m_refusedGpus.remove(name);
    m_listedNodes.remove(name);
    Q_EMIT nodeStatusChanged(name, false, QStringLiteral("removed"));
}

void RunEngine::whenNodeReady(const QString& name, int timeoutMs, std::function<void(AgentClient*)> then)
{
    if (!m_pool->contains(name) || m_pool->isReady(name) || timeoutMs <= 0) {
        then(m_pool->isReady(name) ? m_pool->client(name) : nullptr);
        return;
    }
    m_clock.singleShot(100, this, [this, name, timeoutMs, then = std::move(then)]() mutable {
        whenNodeReady(name, timeoutMs - 100, std::move(then));
    });
}

void RunEngine::listArtifacts(RunId id, std::function<void(const Result<AgentFileList>&)> cb)
{
    auto run = m_store->run(id);
    if (run && run->agentRunId.isEmpty()) {
        // A run that ended a moment ago (a pipeline collecting a step that
        // took milliseconds) may have its start still in the writer's queue.
        m_store->flush();
        run = m_store->run(id);
    }
    if (!run) {
        if (cb)
            cb(fail(QStringLiteral("no run %1").arg(id)));
        return;
    }
    // Parsed here, not cached: only scheduling passes (which a GUI that does
    // not own ingestion never runs) empty the cache.
    const Result<JobSpec> spec = runSpecOf(*run);
    const QStringList globs = spec ? spec->artifacts : QStringList();
    if (globs.isEmpty() || run->agentRunId.isEmpty()) {
        if (cb)
            cb(fail(QStringLiteral("run %1 has no artifacts: %2")
                            .arg(id)
                            .arg(globs.isEmpty() ? QStringLiteral("its job spec lists no `artifacts` globs")
                                                 : QStringLiteral("it never started"))));
        return;
    }
    listArtifactsOf(*run, globs, std::move(cb));
}

void RunEngine::listRunFiles(
        const RunRecord& r, const QStringList& globs, std::function<void(const Result<AgentFileList>&)> cb)
{
    whenNodeReady(r.node, 30000, [r, globs, cb](AgentClient* client) {
        if (!client) {
            cb(fail(QStringLiteral("run %1: its node %2 is not connected").arg(r.id).arg(r.node)));
            return;
        }
        client->listFiles(r.agentRunId, globs, [r, cb](const Result<AgentFileList>& list) {
            if (!list) {
                cb(fail(QStringLiteral("run %1 on node %2: %3").arg(r.id).arg(r.node, list.error().message)));
                return;
            }
            cb(list);
        });
    });
}

void RunEngine::listArtifactsOf(
        const RunRecord& r, const QStringList& globs, std::function<void(const Result<AgentFileList>&)> cb)
{
    listRunFiles(r, globs, [this, r, cb](const Result<AgentFileList>& list) {
        if (!list) {
            if (cb)
                cb(list);
            return;
        }
        for (const AgentFileEntry& f : list->files) {
            ArtifactRecord a;
            a.run = r.id;
            a.path = f.absolutePath;
            a.size = f.size;
            a.createdAt = QDateTime::fromMSecsSinceEpoch(f.mtimeMs, Qt::UTC);
            m_store->addArtifact(a);
        }
        if (cb)
            cb(*list);
    });
}

void RunEngine::downloadArtifacts(
        RunId id, const QString& destDir, std::function<void(const Result<ArtifactDownload>&)> cb)
{
    listArtifacts(id, [this, id, destDir, cb](const Result<AgentFileList>& list) {
        if (!list) {
            if (cb)
                cb(std::unexpected(list.error()));
            return;
        }
        const auto run = m_store->run(id);
        if (!run) {
            if (cb)
                cb(fail(QStringLiteral("no run %1").arg(id)));
            return;
        }
        downloadRunFiles(*run, *list, destDir, [this, id, destDir, cb](const Result<ArtifactDownload>& result) {
            if (result && !result->refused.isEmpty()) {
                const QStringList shown = result->refused.mid(0, 5);
                addNotice(id,
                        QStringLiteral("artifact download to %1 refused %2 file(s): %3%4")
                                .arg(destDir)
                                .arg(result->refused.size())
                                .arg(shown.join(QStringLiteral("; ")),
                                        result->refused.size() > shown.size() ? QStringLiteral("; ...") : QString()));
            }
            if (cb)
                cb(result);
        });
    });
}

void RunEngine::downloadRunFiles(const RunRecord& run, const AgentFileList& files, const QString& destDir,
        std::function<void(const Result<ArtifactDownload>&)> cb)
{
    if (!m_pool->isReady(run.node)) {
        if (cb)
            cb(fail(QStringLiteral("run %1: its node %2 is not connected").arg(run.id).arg(run.node)));
        return;
    }
    auto result = std::make_shared<ArtifactDownload>();
    m_pool->runFileJob(
            run.node,
            [files, destDir, result](NodeFiles& nf) -> Result<void> {
                auto d = ty::downloadArtifacts(files, destDir, nf);
                if (!d)
                    return std::unexpected(d.error());
                *result = *d;
                return {};
            },
            [cb, result](const Result<void>& done) {
                if (!cb)
                    return;
                if (!done)
                    cb(std::unexpected(done.error()));
                else
                    cb(*result);
            });
}

void RunEngine::sendStart(RunRecord run, const QString& nodeName, const AgentStartRequest& req)
{
    m_pool->client(nodeName)->start(
            req, [this, run, nodeName](const Result<AgentStartReply>& reply) { onStartReply(run, nodeName, reply); });
}

void RunEngine::onStartReply(RunRecord run, const QString& nodeName, const Result<AgentStartReply>& reply)
{
    const auto settled = qScopeGuard([this] { startSettled(); });
    if (m_abandonedStarts.remove(run.id))
        return; // its node was removed meanwhile: its record is the removal's
    if (!reply && AgentClient::replyLost(reply.error())) {
        // The request went out, the reply did not come back (the
        // connection ended: this process is ending, or the node went
        // away). The agent may well have started it: unknown, until the
        // agent's list says (onNodeReady, here or in the next owner).
        qCWarning(lcRuns).noquote() << "run" << run.id << "is unknown:" << reply.error().message;
        transition(run, RunState::Unknown, TransitionCause::StartReplyLost);
        run.failureReason = QStringLiteral("the reply to its start on node %1 was lost (%2); its state is read from "
                                           "the node's agent when it answers again")
                                    .arg(nodeName, reply.error().message);
        m_starting.insert(run.id, run); // until the database says so too
        commit(run);
        return;
    }
    if (!reply && reply.error().kind == ErrorKind::GpuClaimed && gangOf(run) == 0) {
        // The node's agent refused a GPU that another researcher's
        // Trainyard holds: not this run's fault. Back to the queue; that
        // GPU counts as busy until the node reports its claims.
        for (int g : std::as_const(run.gpus))
            m_refusedGpus[nodeName].insert(g);
        qCInfo(lcRuns).noquote() << "run" << run.id << "back in the queue:" << reply.error().message;
        m_starting.remove(run.id);
        transition(run, RunState::Queued, TransitionCause::GpuClaimed);
        run.node.clear();
        run.gpus.clear();
        run.agentRunId.clear();
        run.failureReason.clear();
        commit(run);
        pollGpus();
        scheduleSoon();
        return;
    }
    if (!reply) {
        transition(run, RunState::Failed, TransitionCause::StartFailed);
        m_starting.insert(run.id, run); // until the database says so too
        failRun(run, QStringLiteral("could not start on node %1: %2").arg(nodeName, reply.error().message));
        cancelGang(gangOf(run), run.id);
        return;
    }
    if (!reply->slurmJob.isEmpty()) {
        // In Slurm's queue: starting until Slurm says it runs (onSlurmChanged).
        run.slurmJob = reply->slurmJob;
        run.pendingReason = QStringLiteral("waiting: submitted to Slurm as job %1").arg(run.slurmJob);
        addNotice(run.id, QStringLiteral("submitted to Slurm on %1 as job %2").arg(nodeName, run.slurmJob));
    } else {
        transition(run, RunState::Running, TransitionCause::StartAcknowledged);
        run.startedAt = QDateTime::fromMSecsSinceEpoch(reply->startedMs, Qt::UTC);
    }
    commit(run);
    m_starting.insert(run.id, run); // until the database says so too
    const NodePool::NodeState* node = m_pool->node(nodeName);
    if (node && !node->connectionWarning.isEmpty()) // started over a connection the user was warned about
        addNotice(run.id, QStringLiteral("node %1: %2").arg(nodeName, node->connectionWarning));
    if (node)
        attach(run, nodeName);
}

void RunEngine::startSettled()
{
    if (m_startRequests > 0 && --m_startRequests == 0)
        Q_EMIT startsSettled();
}

void RunEngine::attach(RunRecord run, const QString& nodeName)
{
    if (m_active.contains(run.id))
        return;
    auto active = std::make_shared<Active>();
    active->run = run;
    active->node = nodeName;
    active->ingest = std::make_unique<RunIngest>(run, m_store);
    active->ingest->setRules(rulesFromSpec(cachedSpec(run)));
    const auto resumeAt = active->ingest->open(runDataDir(m_databasePath, run.id));
    if (!resumeAt) {
        qCWarning(lcRuns) << resumeAt.error().message;
        addNotice(run.id,
                QStringLiteral("its console and metrics are not being recorded: %1").arg(resumeAt.error().message));
        return;
    }
    const bool inSlurmQueue = !run.slurmJob.isEmpty() && run.state == RunState::Starting;
    if (!inSlurmQueue && (active->ingest->run().consolePath != run.consolePath || run.state == RunState::Unknown)) {
        active->run.consolePath = active->ingest->run().consolePath;
        transition(active->run, RunState::Running, TransitionCause::NodeBack); // its node answers again
        active->ingest->run().state = RunState::Running;
        active->ingest->run().consolePath = active->run.consolePath;
        commit(active->run);
    }
    if (inSlurmQueue && active->ingest->run().consolePath != run.consolePath) {
        active->run.consolePath = active->ingest->run().consolePath;
        commit(active->run);
    }
    m_active.insert(run.id, active);
    if (run.slurmJob.isEmpty()) // Slurm enforces a batch job's --time itself
        stopAtTimeLimit(active);
    {
        // Metric files the run writes, followed beside its console.
        const Result<JobSpec>& runSpec = cachedSpec(run);
        active->files = std::shared_ptr<MetricFileFollower>(
                new MetricFileFollower(run.id, run.agentRunId, runSpec ? runSpec->metricFiles : QStringList(),
                        runDataDir(m_databasePath, run.id), m_store, m_pool->client(nodeName), this),
                [](MetricFileFollower* f) { f->deleteLater(); }); // may be dropped from inside its own callback
        connect(active->files.get(), &MetricFileFollower::pointsStored, this, &RunEngine::metricsReceived);
        active->files->start(m_metricFilePollMs);
    }
    tailActive(active);
}

// A spec's time_limit: counted from the run's start (also across a restart
// of this engine, which attaches it again), then it is cancelled with the
// usual grace and recorded as time_limit (finishRun).
void RunEngine::stopAtTimeLimit(const std::shared_ptr<Active>& active)
{
    const Result<JobSpec>& spec = cachedSpec(active->run);
    const qint64 startMs
            = active->run.startedAt.isValid() ? active->run.startedAt.toMSecsSinceEpoch() : m_clock.nowMs();
    std::optional<qint64> stopAt;
    QString detail;
    if (spec && spec->timeLimitSec && *spec->timeLimitSec > 0)
        stopAt = startMs + *spec->timeLimitSec * 1000;
    if (m_stopProvider)
        if (const auto bound = m_stopProvider(active->run); bound && (!stopAt || bound->first < *stopAt)) {
            stopAt = bound->first;
            detail = bound->second;
        }
    if (!stopAt)
        return;
    const qint64 leftMs = std::max<qint64>(0, *stopAt - m_clock.nowMs());
    // Weak: a timer outliving the engine (destroyed before it fires) must
    // not be the last owner of the run's state, whose destruction needs the
    // engine.
    m_clock.singleShot(leftMs, this, [this, weak = std::weak_ptr<Active>(active), detail] {
        const std::shared_ptr<Active> active = weak.lock();
        if (!active || m_shuttingDown || m_active.value(active->run.id) != active || active->cancelRequested)
            return;
        qCInfo(lcRuns).noquote() << QStringLiteral("run %1 reached %2: cancelling it")
                                            .arg(active->run.id)
                                            .arg(detail.isEmpty() ? QStringLiteral("its time limit") : detail);
        active->timeLimitHit = true;
        active->stopDetail = detail;
        cancel(active->run.id);
    });
}

void RunEngine::tailActive(const std::shared_ptr<Active>& active)
{
    const RunId id = active->run.id;
    const qint64 nodeFrom = active->ingest->fetchedNodeOffset();
    m_pool->client(active->node)
            ->tail(
                    active->run.agentRunId, nodeFrom, true,
                    [this, id, active, nodeFrom](const Result<qint64>& r) {
                        if (active->dropped)
                            return; // its node was removed
                        if (r) {
                            // Shorter than what we have: truncated on the node. Caught up
                            // once its new content is fetched (onConsoleTruncated).
                            if (*r >= nodeFrom)
                                active->catchUpTo = *r;
                            checkCaughtUp();
                            return;
                        }
                        if (m_shuttingDown)
                            return;
                        qCWarning(lcRuns) << "tail of run" << id << "failed:" << r.error().message;
                        addNotice(id,
                                QStringLiteral(
                                        "its console could not be followed on node %1 (%2); the console and metrics "
                                        "stored are what was read until then")
                                        .arg(active->node, r.error().message));
                        // The console cannot be followed (e.g. the local copy is longer than
                        // the node's file, and its agent predates revision 3, which reports
                        // that as a truncation): still record how the run ended, with what we have.
                        AgentClient* client = m_pool->client(active->node);
                        if (!client) {
                            m_active.remove(id);
                            return;
                        }
                        client->status(
                                active->run.agentRunId, [this, id, active](const Result<AgentRunStatus>& status) {
                                    if (status && !status->running && m_active.value(id) == active)
                                        finishRun(active, *status);
                                    else
                                        m_active.remove(id);
                                });
                    },
                    /*followTruncation=*/true, active->ingest->nodeGeneration());
}

std::shared_ptr<RunEngine::Active> RunEngine::findActive(const QString& node, const QString& agentRun) const
{
    for (const auto& a : m_active)
        if (a->node == node && a->run.agentRunId == agentRun)
            return a;
    return nullptr;
}

void RunEngine::onOutput(const QString& node, const QString& agentRun, qint64 offset, const QByteArray& bytes,
        const ByteRanges& stderrRanges)
{
    const auto active = findActive(node, agentRun);
    if (!active)
        return;
    // What the engine's signals say: offsets of the local copy.
    qint64 localOffset = offset + active->watchShift;
    if (active->ingest) {
        if (active->stalled)
            return; // asked for again from what is held once writes succeed
        if (active->resyncing && active->ingest->localOffset(offset) > active->ingest->fetchedOffset())
            return; // the replaced tail's, past what is held: the new tail sends it again
        active->resyncing = false;
        localOffset = active->ingest->localOffset(offset);
        const auto points = active->ingest->ingest(offset, bytes, stderrRanges);
        if (!points && active->ingest->writeFailed()) {
            stallIngestion(active, points.error().message);
            return;
        }
        if (!points) {
            qCWarning(lcRuns) << points.error().message;
            if (!std::exchange(active->ingestNoticed, true))
                addNotice(active->run.id,
                        QStringLiteral("its console could not be recorded: %1").arg(points.error().message));
            return;
        }
        if (!points->isEmpty())
            Q_EMIT metricsReceived(active->run.id, *points);
    }
    if (!active->ingest)
        active->watchEnd = localOffset + bytes.size();
    Q_EMIT consoleReceived(active->run.id, localOffset, bytes);
    if (active->ingest && active->catchUpTo >= 0 && active->ingest->fetchedNodeOffset() >= active->catchUpTo)
        checkCaughtUp();
}

void RunEngine::onConsoleTruncated(
        const QString& node, const QString& agentRun, qint64 offset, qint64 size, qint64 generation)
{
    const auto active = findActive(node, agentRun);
    if (!active)
        return;
    if (!active->ingest) {
        // Display-only: the owner records it; the new content follows what was shown.
        active->watchShift = active->watchEnd;
        return;
    }
    const RunId id = active->run.id;
    const qint64 kept = active->ingest->fetchedOffset();
    if (auto rebased = active->ingest->nodeConsoleTruncated(generation); !rebased) {
        qCWarning(lcRuns).noquote() << rebased.error().message;
        if (!std::exchange(active->ingestNoticed, true))
            addNotice(id, QStringLiteral("its console could not be recorded: %1").arg(rebased.error().message));
    }
    active->catchUpTo = size;
    qCWarning(lcRuns).noquote() << QStringLiteral(
            "console of run %1 on node %2 was truncated on the node (at %3 bytes, now %4); "
            "following it from its new start")
                                           .arg(id)
                                           .arg(node)
                                           .arg(offset)
                                           .arg(size);
    addNotice(id,
            QStringLiteral("its console was truncated on node %1 (at %2 bytes, now %3); it is followed from its new "
                           "start, whose output is recorded after the %4 bytes kept here")
                    .arg(node)
                    .arg(offset)
                    .arg(size)
                    .arg(kept));
    checkCaughtUp();
}

void RunEngine::onTailEnded(const QString& node, const QString& agentRun, qint64 offset)
{
    const auto active = findActive(node, agentRun);
    if (!active)
        return;
    if (active->ingest && (active->stalled || (active->resyncing && offset > active->ingest->fetchedNodeOffset())))
        return; // a tail whose bytes were dropped: the one asked for after the retry ends it
    if (!active->ingest) {
        // Display-only: the owner records the end; we learn it from the database.
        m_active.remove(active->run.id);
        Q_EMIT watchEnded(active->run.id);
        pollDatabase();
        return;
    }
    m_pool->client(node)->status(agentRun, [this, active](const Result<AgentRunStatus>& status) {
        if (active->dropped)
            return; // its node was removed
        if (!status) {
            qCWarning(lcRuns) << "status of run" << active->run.id << "failed:" << status.error().message;
            if (!m_shuttingDown) // the connection closing under it says nothing about the run
                addNotice(active->run.id,
                        QStringLiteral("how it ended could not be read from node %1: %2")
                                .arg(active->node, status.error().message));
            return;
        }
        if (!active->files) {
            finishRun(active, *status);
            return;
        }
        // Its metric files once more (what was written last), then the end.
        active->files->finish([this, active, s = *status] {
            if (m_active.value(active->run.id) == active)
                finishRun(active, s);
        });
    });
}

void RunEngine::finishRun(const std::shared_ptr<Active>& active, const AgentRunStatus& status)
{
    RunIngest& ingest = *active->ingest;
    const QList<MetricPoint> last = ingest.finish();
    if (!last.isEmpty())
        Q_EMIT metricsReceived(active->run.id, last);
    RunRecord run = ingest.run();
    run.finishedAt = QDateTime::fromMSecsSinceEpoch(status.finishedMs ? status.finishedMs : m_clock.nowMs(), Qt::UTC);
    run.exitCode = status.exitCode;
    run.exitSignal = status.signal;
    RunEnd end;
    end.exitCode = status.exitCode;
    end.signal = status.signal;
    end.cancelled = status.cancelled || active->cancelRequested;
    end.timeLimitHit = active->timeLimitHit;
    end.stopDetail = active->stopDetail;
    end.preempted = m_preempting.contains(run.id);
    end.preemptDetail = m_preempting.take(run.id);
    if (const Result<JobSpec>& spec = cachedSpec(run); spec)
        end.timeLimitSec = spec->timeLimitSec.value_or(0);
    end.lost = status.lost;
    end.lostError = status.error;
    end.slurmState = status.slurmState;
    if (const FailureDetector* console = ingest.failureDetector()) {
        end.consoleKind = console->kind();
        end.consoleReason = console->reason();
    }
    const FailureVerdict verdict = classifyRunEnd(end);
    transition(run,
            verdict.kind == FailureKind::None                ? RunState::Succeeded
                    : verdict.kind == FailureKind::Cancelled ? RunState::Cancelled
                                                             : RunState::Failed,
            TransitionCause::Ended);
    run.failureKind = verdict.kind;
    run.failureReason = verdict.detail;
    if (const QString why = m_stoppedWithGang.take(run.id); !why.isEmpty() && run.state == RunState::Cancelled)
        run.failureReason = why; // its gang stopped because another rank failed: RetryRunner reads the gang's end
    run.pendingReason.clear();
    m_active.remove(run.id);
    m_cancelling.remove(run.id);
    commit(run);
    if (run.state == RunState::Failed)
        stopGangAfterFailure(run);
    if (const Result<JobSpec>& spec = cachedSpec(run); spec && !spec->artifacts.isEmpty()) {
        ++m_postRunWork;
        // From this record: the store may not hold the run's start yet (a
        // run of a few milliseconds), and the listing needs its agent run id.
        listArtifactsOf(run, spec->artifacts, [this, id = run.id](const Result<AgentFileList>& r) {
            if (!r) {
                qCWarning(lcRuns) << "artifacts of run" << id << ":" << r.error().message;
                addNotice(id,
                        QStringLiteral("its artifacts could not be listed after it ended: %1").arg(r.error().message));
            }
            if (--m_postRunWork == 0 && !m_shuttingDown)
                Q_EMIT postRunWorkDone();
        });
    }
    m_store->flush();
    scheduleSoon();
    checkCaughtUp();
}

// A gang lives or dies whole: a rank that failed leaves the others waiting on
// a rendezvous (or a collective) that never completes, so they are stopped,
// and the gang's retry (rank 0's, RetryRunner) restarts all of it as one
// attempt with the failed rank's end as the gang's.
void RunEngine::stopGangAfterFailure(const RunRecord& failed)
{
    const RunGroupId gang = gangOf(failed);
    if (gang <= 0)
        return;
    const auto rank = membershipOf(failed, RunGroupKind::Gang);
    const QString why = QStringLiteral("stopped with its gang: rank %1 (run %2) failed%3")
                                .arg(rank ? rank->position : 0)
                                .arg(failed.id)
                                .arg(failed.failureReason.isEmpty() ? QString() : u": "_qs + failed.failureReason);
    const QList<RunRecord> all = m_store->unfinishedRuns();
    for (const RunRecord& r : all) {
        if (r.id == failed.id || isTerminal(r.state) || gangOf(r) != gang || m_stoppedWithGang.contains(r.id))
            continue;
        m_stoppedWithGang.insert(r.id, why);
        addNotice(r.id, why);
        cancelRun(r.id, 10000, {});
    }
}

void RunEngine::failRun(RunRecord run, const QString& reason, FailureKind kind)
{
    transition(run, RunState::Failed,
            kind == FailureKind::Unschedulable       ? TransitionCause::Unschedulable
                    : kind == FailureKind::NodeLost  ? TransitionCause::NodeLost
                    : kind == FailureKind::TimeLimit ? TransitionCause::DeadlinePassed
                                                     : TransitionCause::StartFailed);
    run.failureKind = kind;
    run.failureReason = reason;
    run.pendingReason.clear();
    run.finishedAt = m_clock.nowUtc();
    commit(run);
    stopGangAfterFailure(run);
}

void RunEngine::commit(const RunRecord& run)
{
    m_store->updateRun(run);
    Q_EMIT runStateChanged(run);
}

void RunEngine::stallIngestion(const std::shared_ptr<Active>& active, const QString& why)
{
    if (active->stalled || m_shuttingDown)
        return;
    active->stalled = true;
    active->stallReason = why;
    qCWarning(lcRuns).noquote() << QStringLiteral("run %1: ingestion stopped: %2").arg(active->run.id).arg(why);
    Q_EMIT ingestionStalled(active->run.id, why);
    m_clock.singleShot(active->retry.nextDelayMs(), this, [this, active] { retryIngestion(active); });
}

void RunEngine::retryIngestion(const std::shared_ptr<Active>& active)
{
    const RunId id = active->run.id;
    if (m_shuttingDown || m_active.value(id) != active || !active->stalled)
        return;
    const auto again = [this, active] {
        m_clock.singleShot(active->retry.nextDelayMs(), this, [this, active] { retryIngestion(active); });
    };
    // The notice is the probe: written, it says writes succeed again (and
    // the store drops it as a repeat where an earlier stall wrote it).
    const auto before = m_store->run(id);
    if (!before) {
        again();
        return;
    }
    addNotice(id, WriteRetry::noticeText(before->consoleOffset, active->stallReason));
    if (auto flushed = m_store->flush(); !flushed) {
        again();
        return;
    }
    // What is stored now is what the batches before the failure committed;
    // the writer drops the run's later console writes until open() (ResultStore::beginIngestion).
    const auto stored = m_store->run(id);
    if (!stored || !m_pool->isReady(active->node)) {
        // A lost node's runs are attached again when it is back.
        if (stored && m_pool->contains(active->node))
            again();
        return;
    }
    RunRecord run = active->ingest->run();
    run.consoleOffset = stored->consoleOffset;
    active->ingest.reset(); // closes the copy before it is opened again
    active->ingest = std::make_unique<RunIngest>(run, m_store);
    active->ingest->setRules(rulesFromSpec(cachedSpec(run)));
    const auto resumeAt = active->ingest->open(runDataDir(m_databasePath, id));
    if (!resumeAt) {
        active->stallReason = resumeAt.error().message;
        again();
        return;
    }
    active->stalled = false;
    active->resyncing = true;
    active->retry.reset();
    qCWarning(lcRuns).noquote()
            << QStringLiteral("run %1: ingestion resumes at byte %2").arg(id).arg(run.consoleOffset);
    tailActive(active);
}

void RunEngine::addNotice(RunId run, const QString& text)
{
    m_store->addNotice(RunNotice{run, m_clock.nowUtc(), text});
    Q_EMIT noticeAdded(run, text);
}

void RunEngine::reattachRuns(const QString& nodeName)
{
    // Re-attach every run of this node that was going when we last looked.
    m_pool->client(nodeName)->list([this, nodeName](const Result<QList<AgentRunStatus>>& list) {
        if (!list) {
            qCWarning(lcRuns) << "list on" << nodeName << "failed:" << list.error().message;
            return;
        }
        if (!m_pool->contains(nodeName))
            return; // removed meanwhile
        QHash<QString, AgentRunStatus> byId;
        for (const AgentRunStatus& s : *list)
            byId.insert(s.run, s);
        const QList<RunRecord> all = m_store->unfinishedRuns();
        for (const RunRecord& r : all) {
            if (r.node != nodeName || isTerminal(r.state) || r.state == RunState::Queued || r.state == RunState::Held
                    || m_active.contains(r.id))
                continue;
            // Being started by this engine right now (its workdir sync or
            // its start request is under way on this connection, placed
            // after the node came up): not in the agent's list yet, and
            // its own callback settles it (a lost connection fails it).
            if (const auto s = m_starting.constFind(r.id); s != m_starting.cend() && s->state == RunState::Starting)
                continue;
            // A start whose reply was lost (sendStart) is unknown, with no start time.
            const bool startUnanswered
                    = r.state == RunState::Starting || (r.state == RunState::Unknown && !r.startedAt.isValid());
            if (const auto s = byId.constFind(r.agentRunId); s != byId.cend()) {
                RunRecord going = r;
                if (!going.startedAt.isValid() && s->startedMs > 0 && !s->pending && s->slurmJob.isEmpty())
                    going.startedAt = QDateTime::fromMSecsSinceEpoch(s->startedMs, Qt::UTC);
                if (startUnanswered)
                    going.failureReason.clear();
                if (s->cancelled)
                    recallPreemption(going); // before its ending can come
                attach(going, nodeName);
                if (const auto a = m_active.value(r.id))
                    a->endedOnNode = !s->running && !s->pending && !s->ending;
                // A batch job's state as listed: its start (or its reason) while
                // no agent event told this engine of it (it was away).
                if (!s->slurmJob.isEmpty() && (s->pending || s->running))
                    onSlurmChanged(nodeName, *s);
            } else if (startUnanswered)
                failRun(r,
                        QStringLiteral("the start on node %1 was interrupted before its agent recorded the run")
                                .arg(nodeName));
            else
                failRun(r,
                        QStringLiteral("node %1's agent has no record of run %2 (%3)")
                                .arg(nodeName)
                                .arg(r.id)
                                .arg(r.agentRunId),
                        FailureKind::NodeLost);
        }
        // What the agent still runs that this database recorded as ended:
        // a run declared lost while its node was silent (NodeLossWatch).
        QSet<QString> followed;
        for (const RunRecord& r : all)
            followed.insert(r.agentRunId);
        for (const AgentRunStatus& s : *list)
            if ((s.running || s.pending) && !s.ending && !followed.contains(s.run))
                stopOrphan(nodeName, s.run);
        m_listedNodes.insert(nodeName);
        scheduleSoon();
        checkCaughtUp();
    });
}

// A run recorded failed as node_lost (its node was silent past
// node_lost_after) that its node, back, lists as still running: an orphan,
// as its retry (if any) owns the work now. Stopped there (cancel, the usual
// grace), with a notice; its recorded ending stays as it is. Only runs of
// this database (the agent run id as recorded) and of this node; others'
// runs on a shared agent are left alone.
void RunEngine::stopOrphan(const QString& nodeName, const QString& agentRun)
{
    bool ok = false;
    const RunId id = agentRun.section(u'-', 2, 2).toLongLong(&ok); // agentRunIdFor()
    if (!ok || id <= 0)
        return;
    const auto run = m_store->run(id);
    if (!run || run->agentRunId != agentRun || run->node != nodeName || run->state != RunState::Failed
            || run->failureKind != FailureKind::NodeLost)
        return;
    AgentClient* client = m_pool->client(nodeName);
    if (!client)
        return;
    // Who owns the work now: the newest attempt of its attempts group.
    QString owner;
    if (const auto attempts = membershipOf(*run, RunGroupKind::Attempts)) {
        const auto members = m_store->groupMembers(attempts->group);
        if (!members.isEmpty() && members.back().first != run->id)
            owner = QStringLiteral("attempt %1 (run %2) owns its work now")
                            .arg(members.back().second.position)
                            .arg(members.back().first);
    }
    const QString text = QStringLiteral("still running on %1 when the node came back after it was declared lost: "
                                        "stopped there; %2")
                                 .arg(nodeName, owner.isEmpty() ? QStringLiteral("its recorded ending stays") : owner);
    qCInfo(lcRuns).noquote() << QStringLiteral("run %1: %2").arg(id).arg(text);
    addNotice(id, text);
    client->cancel(agentRun, 10000, [id, nodeName](const Result<void>& r) {
        if (!r)
            qCWarning(lcRuns).noquote()
                    << QStringLiteral("run %1: could not stop it on %2: %3").arg(id).arg(nodeName, r.error().message);
    });
}

// A Slurm batch job's state from its login node's agent (PROTOCOL.md
// "Slurm"): its pending reason while Slurm holds it in the queue, and its
// start once Slurm runs it. Its end comes as any run's (onTailEnded).
void RunEngine::onSlurmChanged(const QString& node, const AgentRunStatus& status)
{
    const auto active = findActive(node, status.run);
    if (!active || !active->ingest)
        return;
    // Both copies: the engine's and the ingest's, from which the end is recorded.
    const auto apply = [this, &active](const std::function<void(RunRecord&)>& change) {
        change(active->run);
        change(active->ingest->run());
        commit(active->ingest->run());
    };
    if (status.pending) {
        const QString why = slurm::pendingReasonOf(status, m_clock.nowMs());
        if (active->run.state == RunState::Running) {
            // Requeued (a node failed, a preemption, `scontrol requeue`):
            // it waits in Slurm's queue again, and runs again from its start
            // (its console goes on after what the first start wrote).
            addNotice(active->run.id,
                    QStringLiteral("Slurm put job %1 back in its queue (%2): it is starting again")
                            .arg(status.slurmJob, status.slurmState));
            apply([&why](RunRecord& r) {
                transition(r, RunState::Starting, TransitionCause::Requeued);
                r.pendingReason = why;
            });
            return;
        }
        if (why != active->run.pendingReason)
            apply([&why](RunRecord& r) { r.pendingReason = why; });
        return;
    }
    if (status.running && active->run.state == RunState::Starting) {
        const qint64 at = status.runningMs > 0 ? status.runningMs : m_clock.nowMs();
        apply([at](RunRecord& r) {
            transition(r, RunState::Running, TransitionCause::StartAcknowledged);
            r.startedAt = QDateTime::fromMSecsSinceEpoch(at, Qt::UTC);
            r.pendingReason.clear();
        });
        addNotice(active->run.id, QStringLiteral("Slurm started job %1 on %2").arg(status.slurmJob, status.slurmNodes));
    }
}

// What the login node says of its cluster, kept with the node (NodeRecord::facts).
void RunEngine::recordSlurmFacts(const QString& node)
{
    m_pool->client(node)->slurmInfo([this, node](const Result<QJsonObject>& info) {
        if (!info) {
            qCWarning(lcRuns).noquote() << "Slurm on node" << node << ":" << info.error().message;
            Q_EMIT nodeWarning(node, info.error().message);
            return;
        }
        QJsonObject facts = *info;
        facts.insert(QStringLiteral("reported_at"), m_clock.nowMs());
        m_store->setNodeFacts(node, QString::fromUtf8(QJsonDocument(facts).toJson(QJsonDocument::Compact)));
    });
}

void RunEngine::checkCaughtUp()
{
    if (!m_ownsIngestion || m_caughtUpEmitted)
        return;
    for (const QString& name : m_pool->names()) {
        const NodePool::NodeState* n = m_pool->node(name);
        if (!n->attempted || (n->ready && !m_listedNodes.contains(name)))
            return;
    }
    for (const auto& a : std::as_const(m_active))
        if (a->ingest && (a->endedOnNode || a->catchUpTo < 0 || a->ingest->fetchedNodeOffset() < a->catchUpTo))
            return;
    m_caughtUpEmitted = true;
    Q_EMIT caughtUp();
}

QStringList RunEngine::nodeNames() const
{
    QStringList names = m_pool->names();
    names.sort();
    return names;
}

void RunEngine::declareLost(RunId id, const QString& reason)
{
    auto run = m_store->run(id);
    if (!run || run->state != RunState::Unknown)
        return;
    m_active.remove(id);
    failRun(*run, reason, FailureKind::NodeLost);
    m_store->flush();
    scheduleSoon();
}

bool RunEngine::nodeUnreachable(const QString& node) const
{
    const NodePool::NodeState* n = m_pool->node(node);
    return n && n->attempted && !n->ready;
}

QList<std::pair<QString, QString>> RunEngine::nodesBehind() const
{
    QList<std::pair<QString, QString>> behind;
    for (const QString& name : m_pool->names()) {
        const NodePool::NodeState* n = m_pool->node(name);
        QString why;
        if (!n->attempted)
            why = QStringLiteral("still connecting");
        else if (!n->ready)
            why = QStringLiteral("unreachable: %1").arg(n->lastError);
        else if (!m_listedNodes.contains(name))
            why = QStringLiteral("listing its runs");
        else {
            for (const auto& a : std::as_const(m_active)) {
                if (a->node == n->name && a->ingest
                        && (a->endedOnNode || a->catchUpTo < 0 || a->ingest->fetchedNodeOffset() < a->catchUpTo)) {
                    why = QStringLiteral("fetching run %1's console").arg(a->run.id);
                    break;
                }
            }
        }
        if (!why.isEmpty())
            behind.append({n->name, why});
    }
    std::sort(behind.begin(), behind.end());
    return behind;
}

void RunEngine::onNodeLost(const QString& node, const QString& reason, ErrorKind kind)
{
    QMetaObject::invokeMethod(
            this, [this] { checkCaughtUp(); }, Qt::QueuedConnection);
    Q_EMIT nodeStatusChanged(node, false, reason, kind);
    // Runs on it may well be going: they are not failed, just not watched --
    // "unknown" until the node answers again (the engine ending is not a
    // node loss: its runs stay as they were). The pool reconnects it with
    // backoff; reattachRuns() then resumes them at their stored offsets.
    for (auto it = m_active.begin(); it != m_active.end();) {
        if ((*it)->node == node) {
            if ((*it)->ingest && !m_shuttingDown) {
                RunRecord r = (*it)->ingest->run();
                transition(r, RunState::Unknown, TransitionCause::NodeLost);
                commit(r);
            }
            it = m_active.erase(it);
        } else {
            ++it;
        }
    }
}

void RunEngine::setReconnectDelays(int firstMs, int maxMs)
{
    m_pool->setReconnectDelays(firstMs, maxMs);
}

void RunEngine::setReconnectProbeInterval(int probeMs)
{
    m_pool->setReconnectProbeInterval(probeMs);
}

void RunEngine::setHeartbeat(int intervalMs, int timeoutMs)
{
    m_pool->setHeartbeat(intervalMs, timeoutMs);
}

void RunEngine::pollDatabase()
{
    // The owner went away (its trainyardctl ended, its GUI closed): one that
    // wanted to ingest takes over, or runs queued by others would wait with
    // nobody to start them and runs going on would not be recorded.
    const qint64 nowMs = m_clock.nowMs();
    if (m_wantsIngestion && !m_ownsIngestion && nowMs - m_lastIngestTryMs >= kIngestRetryMs) {
        m_lastIngestTryMs = nowMs;
        if (acquireIngestion()) {
            qCInfo(lcRuns) << "took over ingesting the runs of" << m_databasePath;
            scheduleSoon();
        }
    }
    if (m_ownsIngestion) {
        // A pass also when the policy file changed, and now and then while
        // runs wait: priority aging and backfill reservations move with time.
        const QFileInfo policyFile(queuePolicyPath(m_databasePath));
        const QDateTime policyModified = policyFile.exists() ? policyFile.lastModified() : QDateTime();
        const qint64 now = m_clock.nowMs();
        if ((!m_policyFixed && policyModified != m_policyModified)
                || (!m_pendingReasons.isEmpty() && now - m_lastPassMs >= kPeriodicPassMs))
            scheduleSoon();
    }
    const qint64 version = m_store->dataVersion();
    if (version == m_lastDataVersion)
        return;
    m_lastDataVersion = version;
    if (m_ownsIngestion)
        scheduleSoon(); // another process may have queued runs
    for (auto it = m_watched.begin(); it != m_watched.end(); ++it) {
        const auto run = m_store->run(it.key());
        if (!run || run->state == it.value())
            continue;
        it.value() = run->state;
        if (m_pendingWatch.contains(run->id) && !run->agentRunId.isEmpty() && run->state != RunState::Starting
                && run->state != RunState::Queued && run->state != RunState::Held) {
            const auto [from, follow] = m_pendingWatch.take(run->id);
            QMetaObject::invokeMethod(
                    this, [this, id = run->id, from, follow] { watch(id, from, follow); }, Qt::QueuedConnection);
        }
        Q_EMIT runStateChanged(*run);
    }
}

void RunEngine::setGpuStatusInterval(int intervalMs)
{
    if (intervalMs <= 0) {
        m_gpuTimer->stop();
        return;
    }
    m_gpuTimer->start(intervalMs);
}

void RunEngine::pollGpus()
{
    // The scheduling instance needs current GPU reports (processes it did not
    // start, other instances' claims come and go); a display-only one polls
    // only while someone shows them.
    if (!m_ownsIngestion && !isSignalConnected(QMetaMethod::fromSignal(&RunEngine::nodeGpusUpdated)))
        return;
    m_pool->pollGpus();
}

} // namespace ty
