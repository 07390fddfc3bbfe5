#include "LocalRunControl.h"

#include "RunEngine.h"
#include "RunRemoval.h"
#include "core/nodes/AgentTransport.h"
#include "core/nodes/NodeTransports.h"
#include "core/nodes/SshPassphraseProvider.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDateTime>

namespace ty {

RunControl::RunControl(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<ty::RunId>("ty::RunId");
    qRegisterMetaType<ty::RunRecord>();
    qRegisterMetaType<QList<ty::MetricPoint>>();
    qRegisterMetaType<QHash<ty::RunId, QString>>();
    qRegisterMetaType<QList<ty::AgentGpu>>();
    qRegisterMetaType<ty::ErrorKind>();
}

RunControl::~RunControl() = default;

LocalRunControl::LocalRunControl(RunEngine* engine, ResultStore* store, QString agentPath,
        std::shared_ptr<SshPassphraseProvider> passphrases, QObject* parent)
    : RunControl(parent)
    , m_engine(engine)
    , m_store(store)
    , m_agentPath(std::move(agentPath))
    , m_passphrases(std::move(passphrases))
{
    // Queued even on one thread: a signal never comes from inside a call.
    constexpr auto queued = Qt::QueuedConnection;
    connect(engine, &RunEngine::runStateChanged, this, &RunControl::runStateChanged, queued);
    connect(engine, &RunEngine::consoleReceived, this, &RunControl::consoleReceived, queued);
    connect(engine, &RunEngine::metricsReceived, this, &RunControl::metricsReceived, queued);
    connect(engine, &RunEngine::pendingReasonsChanged, this, &RunControl::pendingReasonsChanged, queued);
    connect(engine, &RunEngine::nodeStatusChanged, this, &RunControl::nodeStatusChanged, queued);
    connect(engine, &RunEngine::nodeWarning, this, &RunControl::nodeWarning, queued);
    connect(engine, &RunEngine::cancelFailed, this, &RunControl::cancelFailed, queued);
    connect(engine, &RunEngine::nodeGpusUpdated, this, &RunControl::nodeGpusUpdated, queued);
    connect(engine, &RunEngine::noticeAdded, this, &RunControl::noticeAdded, queued);
}

LocalRunControl::~LocalRunControl() = default;

template <typename T>
void LocalRunControl::onEngine(std::function<void(RunEngine&, std::function<void(Result<T>)>)> work, Reply<T> done)
{
    QPointer<LocalRunControl> self(this);
    QPointer<RunEngine> engine = m_engine;
    auto answer = [self, done](Result<T> r) {
        QMetaObject::invokeMethod(
                self,
                [self, done, r = std::move(r)] {
                    if (self && done)
                        done(r);
                },
                Qt::QueuedConnection);
    };
    if (!engine) {
        answer(fail(QStringLiteral("no run engine"), ErrorKind::Unreachable));
        return;
    }
    QMetaObject::invokeMethod(
            engine,
            [engine, work = std::move(work), answer] {
                if (engine)
                    work(*engine, answer);
                else
                    answer(fail(QStringLiteral("no run engine"), ErrorKind::Unreachable));
            },
            Qt::QueuedConnection);
}

void LocalRunControl::submit(const JobSpec& spec, const QString& node, Reply<QList<RunId>> done)
{
    onEngine<QList<RunId>>([spec, node](RunEngine& e, auto answer) { answer(e.submitAll(spec, node)); }, done);
}

void LocalRunControl::cancel(const QList<RunId>& runs, int graceMs)
{
    onEngine<void>(
            [runs, graceMs](RunEngine& e, auto answer) {
                for (RunId id : runs)
                    e.cancel(id, graceMs);
                answer({});
            },
            {});
}

void LocalRunControl::queue(RunId run, QueueAction action, int priority, Reply<void> done)
{
    onEngine<void>(
            [run, action, priority](RunEngine& e, auto answer) {
                switch (action) {
                case QueueAction::Hold: return answer(e.hold(run));
                case QueueAction::Release: return answer(e.release(run));
                case QueueAction::Top: return answer(e.moveToTop(run));
                case QueueAction::Priority: return answer(e.setPriority(run, priority));
                }
            },
            done);
}

void LocalRunControl::listArtifacts(RunId run, Reply<AgentFileList> done)
{
    onEngine<AgentFileList>(
            [run](RunEngine& e, auto answer) {
                e.listArtifacts(run, [answer](const Result<AgentFileList>& l) { answer(l); });
            },
            done);
}

void LocalRunControl::downloadArtifacts(RunId run, const QString& destDir, Reply<ArtifactDownload> done)
{
    onEngine<ArtifactDownload>(
            [run, destDir](RunEngine& e, auto answer) {
                e.downloadArtifacts(run, destDir, [answer](const Result<ArtifactDownload>& d) { answer(d); });
            },
            done);
}

void LocalRunControl::addNode(const NodeRecord& node, bool acceptNewHostKey, Reply<void> done)
{
    ResultStore* store = m_store;
    const QString agentPath = m_agentPath;
    auto passphrases = m_passphrases;
    // Storing waits for the commit, and the transport must live on the
    // engine's thread: both happen there.
    onEngine<void>(
            [store, node, acceptNewHostKey, agentPath, passphrases](RunEngine& e, auto answer) {
                NodeRecord rec = node;
                if (!rec.addedAt.isValid())
                    rec.addedAt = QDateTime::currentDateTimeUtc();
                if (auto stored = store->addNode(rec); !stored)
                    return answer(std::unexpected(stored.error()));
                NodeConnectOptions options;
                options.acceptNewHostKey = acceptNewHostKey;
                e.addNode(rec.name, transportForNode(rec, agentPath, passphrases, options));
                answer({});
            },
            done);
}

void LocalRunControl::annotate(RunId run, const RunAnnotation& a, Reply<void> done)
{
    ResultStore* store = m_store;
    // annotateRun waits for the commit: on the engine's thread, not the caller's.
    onEngine<void>([store, run, a](RunEngine&, auto answer) { answer(store->annotateRun(run, a)); }, done);
}

namespace {
Error noPipelinesHere()
{
    return Error{
            QStringLiteral("pipelines run in trainyardd, not in an engine of this process"), ErrorKind::InvalidInput};
}
} // namespace

void LocalRunControl::submitPipeline(const QJsonObject&, const QString&, Reply<qint64> done)
{
    onEngine<qint64>([](RunEngine&, auto answer) { answer(std::unexpected(noPipelinesHere())); }, done);
}

void LocalRunControl::cancelPipeline(qint64, Reply<void> done)
{
    onEngine<void>([](RunEngine&, auto answer) { answer(std::unexpected(noPipelinesHere())); }, done);
}

void LocalRunControl::resumePipeline(qint64, Reply<qint64> done)
{
    onEngine<qint64>([](RunEngine&, auto answer) { answer(std::unexpected(noPipelinesHere())); }, done);
}

void LocalRunControl::removeMemoEntries(const QJsonObject&, Reply<QStringList> done)
{
    onEngine<QStringList>([](RunEngine&, auto answer) { answer(std::unexpected(noPipelinesHere())); }, done);
}

void LocalRunControl::deleteRun(RunId run, Reply<void> done)
{
    ResultStore* store = m_store;
    onEngine<void>(
            [store, run](RunEngine&, auto answer) { answer(deleteEndedRun(*store, store->location(), run)); }, done);
}

void LocalRunControl::rejectedHostKey(const QString& node, Reply<QString> done)
{
    onEngine<QString>([node](RunEngine& e, auto answer) { answer(e.rejectedHostKeyFingerprint(node)); }, done);
}

void LocalRunControl::trustHostKey(const QString& node, Reply<bool> done)
{
    onEngine<bool>([node](RunEngine& e, auto answer) { answer(e.trustNewHostKey(node)); }, done);
}

} // namespace ty
