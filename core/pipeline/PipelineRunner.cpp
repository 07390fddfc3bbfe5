#include "PipelineRunner.h"

#include "HashWorker.h"

#include "core/common/Paths.h"
#include "core/memo/CachePolicy.h"
#include "core/memo/MemoExplain.h"
#include "core/memo/MemoStore.h"
#include "core/memo/TreeHasher.h"
#include "core/retry/GangOutcome.h"
#include "core/retry/RetryRunner.h"
#include "core/store/RunNotice.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QLoggingCategory>
#include <QPointer>
#include <QRegularExpression>
#include <QSet>

#include <cmath>

Q_LOGGING_CATEGORY(lcPipeline, "trainyard.pipeline")

namespace ty::pipeline {

namespace {
// A workdir-relative glob as artifacts are written: `**` any folders, `*`
// and `?` within one name.
QRegularExpression globPattern(const QString& glob)
{
    QString re;
    for (qsizetype i = 0; i < glob.size(); ++i) {
        const QChar ch = glob.at(i);
        if (ch == u'*' && i + 1 < glob.size() && glob.at(i + 1) == u'*') {
            re += QStringLiteral(".*");
            ++i;
        } else if (ch == u'*') {
            re += QStringLiteral("[^/]*");
        } else if (ch == u'?') {
            re += QStringLiteral("[^/]");
        } else {
            re += QRegularExpression::escape(QString(ch));
        }
    }
    return QRegularExpression(QRegularExpression::anchoredPattern(re));
}
} // namespace

struct PipelineRunner::Active {
    qint64 id = 0;
    PipelineProgress progress;
    QString node;
    qint64 createdMs = 0;
    qint64 endedMs = 0;
    QHash<int, MemoComponents> memo; // instance -> the key's components, for a memoized step's run
    QHash<int, QString> digests;     // instance -> what later steps' keys take of it (its key, or its outputs' digest)
    bool cancelled = false;
    qint64 resumedFrom = 0; // the pipeline this one resumed (pipeline resume), 0 none
    // Instances submitted before their upstream steps ended, queued in
    // Slurm behind these jobs (--dependency=afterok: the header's comment).
    QHash<int, QStringList> afterOk;
    // Such an instance whose run is to end skipped, and why, when it does not
    // succeed: its upstream failed, or fail_fast stopped the pipeline, and
    // its job was cancelled.
    QHash<int, QString> skipWhy;
    // Such an instance's run that ended without succeeding before its
    // upstream steps' endings came: its ending waits for theirs.
    QHash<int, RunRecord> heldEnds;
};

namespace {
constexpr auto kDocumentFormat = "trainyard-pipeline-1";

QJsonObject mapToJson(const QMap<QString, QString>& map)
{
    QJsonObject o;
    for (auto it = map.cbegin(); it != map.cend(); ++it)
        o.insert(it.key(), it.value());
    return o;
}

QMap<QString, QString> mapFromJson(const QJsonObject& o)
{
    QMap<QString, QString> map;
    for (auto it = o.begin(); it != o.end(); ++it)
        map.insert(it.key(), it.value().toString());
    return map;
}
} // namespace

PipelineRunner::PipelineRunner(RunEngine* engine, ResultStore* store, QString databasePath, QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_store(store)
    , m_databasePath(std::move(databasePath))
    , m_hashWorker(std::make_unique<HashWorker>())
{
    connect(m_engine, &RunEngine::runStateChanged, this, &PipelineRunner::onRunState);
    // Outputs are copied from a step's node: a step that succeeded while its
    // node is not connected (a restarted service, a dropped link) is
    // collected once the node is back.
    // The cache's age and size limits (CachePolicy.h): after each new entry, and hourly.
    m_evictTimer.setInterval(3600 * 1000);
    connect(&m_evictTimer, &QTimer::timeout, this, &PipelineRunner::evictCache);
    m_evictTimer.start();
    m_engine->setStageProvider([this](const RunRecord& run) { return stageSources(run); });
    connect(m_engine, &RunEngine::runStaging, this, &PipelineRunner::onStaging);
    connect(m_engine, &RunEngine::nodeStatusChanged, this, [this](const QString& node, bool ready) {
        if (!ready)
            return;
        for (const auto& [id, instance, run] : m_awaitingNode.take(node))
            collect(id, instance, run);
    });
}

PipelineRunner::~PipelineRunner()
{
    m_engine->setStageProvider({});
}

std::optional<std::pair<qint64, int>> PipelineRunner::instanceOf(const RunRecord& run) const
{
    if (const auto it = m_byRun.constFind(run.id); it != m_byRun.cend())
        return *it;
    // A gang's other ranks are runs of their own, in rank 0's groups: its
    // pipeline's, at the instance's index.
    if (const auto m = membershipOf(run, RunGroupKind::Pipeline); m && m_pipelines.count(m->group) > 0
            && m->position >= 0 && m->position < m_pipelines.at(m->group)->progress.instances().size())
        return std::pair<qint64, int>{m->group, m->position};
    return std::nullopt;
}

QList<RunEngine::StageSource> PipelineRunner::stageSources(const RunRecord& run) const
{
    QList<RunEngine::StageSource> out;
    const auto where = instanceOf(run);
    if (!where)
        return out;
    const auto it = m_pipelines.find(where->first);
    if (it == m_pipelines.end())
        return out;
    const PipelineProgress& progress = it->second->progress;
    const PipelineSpec& spec = progress.spec();
    QHash<QString, int> stepIndex;
    for (int s = 0; s < spec.steps.size(); ++s)
        stepIndex.insert(spec.steps.at(s).name, s);
    // Every step upstream of this one, nearest first (breadth first): a file
    // two of them made comes from the nearer.
    QList<int> order;
    QSet<int> seen{progress.instances().at(where->second).step};
    for (qsizetype k = -1; k < order.size(); ++k) {
        const int from = k < 0 ? progress.instances().at(where->second).step : order.at(k);
        for (const QString& up : spec.steps.at(from).upstream)
            if (const int s = stepIndex.value(up, -1); s >= 0 && !seen.contains(s)) {
                seen.insert(s);
                order << s;
            }
    }
    QSet<QString> taken;
    for (int s : std::as_const(order)) {
        for (const StepInstance& inst : progress.instances()) {
            if (inst.step != s || !inst.run || (inst.state != StepState::Succeeded && inst.state != StepState::Cached))
                continue;
            RunEngine::StageSource src;
            src.producer = inst.run;
            src.localRoot = runDataDir(m_databasePath, inst.run) + QStringLiteral("/outputs");
            QDirIterator files(
                    src.localRoot, QDir::Files | QDir::Hidden | QDir::NoSymLinks, QDirIterator::Subdirectories);
            while (files.hasNext()) {
                const QString rel = QDir(src.localRoot).relativeFilePath(files.next());
                if (!taken.contains(rel)) {
                    taken.insert(rel);
                    src.files << rel;
                }
            }
            src.files.sort();
            if (!src.files.isEmpty())
                out << src;
        }
    }
    return out;
}

void PipelineRunner::onStaging(RunId run, qint64 done, qint64 total)
{
    const auto where = m_byRun.constFind(run); // rank 0's copy stands for the gang's
    if (where == m_byRun.cend())
        return;
    const auto it = m_pipelines.find(where->first);
    if (it == m_pipelines.end())
        return;
    Active& p = *it->second;
    const StepInstance& inst = p.progress.instances().at(where->second);
    if (inst.state != StepState::Running || inst.run != run)
        return;
    p.progress.setNote(where->second,
            done < total ? QStringLiteral("copying its inputs to its node: %1 % of %2 MiB")
                                   .arg(total ? done * 100 / total : 100)
                                   .arg(double(total) / (1024.0 * 1024.0), 0, 'f', 1)
                         : QString());
    announce(p);
}

Result<qint64> PipelineRunner::newPipelineId(const QString& name, RunGroupId parent)
{
    auto id = m_store->createGroup(RunGroupKind::Pipeline, name, {}, parent);
    if (!id)
        return fail(QStringLiteral("cannot record pipeline %1: %2").arg(name, id.error().message));
    return *id;
}

Result<QList<qint64>> PipelineRunner::submitAll(const PipelineSpec& spec, const QString& node)
{
    const auto expanded = expandPipelineSweep(spec);
    if (!expanded)
        return std::unexpected(expanded.error());
    RunGroupId sweep = 0;
    if (!spec.sweep.isEmpty()) {
        auto id = m_store->createGroup(RunGroupKind::Sweep, spec.name);
        if (!id)
            return fail(
                    QStringLiteral("cannot record the sweep of pipeline %1: %2").arg(spec.name, id.error().message));
        sweep = *id;
    }
    QList<qint64> ids;
    for (const PipelineSpec& one : *expanded) {
        auto id = submit(one, node, sweep);
        if (!id)
            return std::unexpected(id.error());
        ids.append(*id);
    }
    return ids;
}

Result<qint64> PipelineRunner::submit(const PipelineSpec& spec, const QString& node, RunGroupId parent)
{
    const auto id = newPipelineId(spec.name, parent);
    if (!id)
        return std::unexpected(id.error());
    auto p = std::unique_ptr<Active>(
            new Active{*id, PipelineProgress(spec), node, QDateTime::currentMSecsSinceEpoch(), 0});
    qCInfo(lcPipeline).noquote()
            << QStringLiteral("pipeline %1 (%2): %3 steps").arg(p->id).arg(spec.name).arg(spec.steps.size());
    return adopt(std::move(p));
}

qint64 PipelineRunner::adopt(std::unique_ptr<Active> p)
{
    const qint64 id = p->id;
    Active& ref = *p;
    m_pipelines.emplace(id, std::move(p));
    advance(ref);
    return id;
}

int PipelineRunner::restore()
{
    int taken = 0;
    for (const PipelineRecord& r : m_store->pipelines(/*runningOnly=*/true)) {
        const QJsonObject doc = QJsonDocument::fromJson(r.document.toUtf8()).object();
        auto p = rebuild(r.id, doc, /*forResume=*/false);
        if (!p) {
            // Kept, ended: what it showed, and why it stopped here.
            qCWarning(lcPipeline).noquote()
                    << QStringLiteral("pipeline %1 cannot be taken up: %2").arg(r.id).arg(p.error().message);
            QJsonObject view = doc.value(QStringLiteral("view")).toObject();
            view.insert(QStringLiteral("state"), QStringLiteral("failed"));
            view.insert(QStringLiteral("reason"),
                    QString(QStringLiteral("not taken up after the service restarted: ") + p.error().message));
            PipelineRecord ended = r;
            ended.state = QStringLiteral("failed");
            ended.endedAt = QDateTime::currentDateTimeUtc();
            view.insert(QStringLiteral("ended_ms"), ended.endedAt.toMSecsSinceEpoch());
            QJsonObject kept = doc;
            kept.insert(QStringLiteral("view"), view);
            ended.document = QString::fromUtf8(QJsonDocument(kept).toJson(QJsonDocument::Compact));
            m_store->putPipeline(ended);
            continue;
        }
        Active& a = **p;
        const qint64 id = a.id;
        m_pipelines.emplace(id, std::move(*p));
        QList<std::pair<int, RunId>> running;
        for (int i = 0; i < a.progress.instances().size(); ++i)
            if (a.progress.instances().at(i).state == StepState::Running) {
                running.append({i, a.progress.instances().at(i).run});
                m_byRun.insert(a.progress.instances().at(i).run, {id, i});
                if (a.memo.contains(i))
                    m_keyInFlight.insert(memoKey(a.memo.value(i)), a.progress.instances().at(i).run);
            }
        qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1 (%2) taken up: %3 step(s) running")
                                                .arg(id)
                                                .arg(a.progress.spec().name)
                                                .arg(running.size());
        ++taken;
        // A run that ended while nobody followed it is collected now; the
        // others' endings come from the engine.
        for (const auto& [instance, run] : running) {
            const auto record = m_store->run(run);
            if (record && record->state == RunState::Queued && a.afterOk.contains(instance))
                m_engine->setSlurmAfterOk(run, a.afterOk.value(instance)); // not yet sent to Slurm
            if (!record)
                finishStep(id, instance, StepState::Failed,
                        QStringLiteral("run %1 is no longer in the result database").arg(run), {});
            else if (isTerminal(record->state))
                onRunState(*record);
        }
        if (const auto it = m_pipelines.find(id); it != m_pipelines.end())
            advance(*it->second);
    }
    return taken;
}

Result<qint64> PipelineRunner::resume(qint64 id)
{
    QJsonObject doc;
    if (const auto it = m_pipelines.find(id); it != m_pipelines.end()) {
        doc = documentOf(*it->second);
    } else if (const auto r = m_store->pipeline(id)) {
        doc = QJsonDocument::fromJson(r->document.toUtf8()).object();
    } else {
        return fail(QStringLiteral("no pipeline %1").arg(id), ErrorKind::NotFound);
    }
    const QString state = doc.value(QStringLiteral("view")).toObject().value(QStringLiteral("state")).toString();
    if (state == u"running" || state == u"succeeded")
        return fail(QStringLiteral("pipeline %1 %2: only a failed or cancelled pipeline is resumed")
                            .arg(id)
                            .arg(state == u"running" ? QStringLiteral("is running") : QStringLiteral("succeeded")),
                ErrorKind::InvalidInput);
    const auto newId
            = newPipelineId(doc.value(QStringLiteral("view")).toObject().value(QStringLiteral("name")).toString(), 0);
    if (!newId)
        return std::unexpected(newId.error());
    auto p = rebuild(*newId, doc, /*forResume=*/true);
    if (!p)
        return std::unexpected(p.error());
    (*p)->resumedFrom = id;
    (*p)->createdMs = QDateTime::currentMSecsSinceEpoch();
    qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1 resumes pipeline %2").arg((*p)->id).arg(id);
    return adopt(std::move(*p));
}

Result<std::unique_ptr<PipelineRunner::Active>> PipelineRunner::rebuild(
        qint64 id, const QJsonObject& doc, bool forResume) const
{
    if (doc.value(QStringLiteral("format")).toString() != QLatin1String(kDocumentFormat))
        return fail(QStringLiteral("pipeline %1: its stored document is not one this version reads").arg(id),
                ErrorKind::InvalidInput);
    const QJsonObject source = doc.value(QStringLiteral("source")).toObject();
    PipelineSpec written;
    written.yaml = source.value(QStringLiteral("yaml")).toString();
    written.origin = source.value(QStringLiteral("origin")).toString();
    written.baseDir = source.value(QStringLiteral("base_dir")).toString();
    written.sourcePath = source.value(QStringLiteral("source_path")).toString();
    written.params = mapFromJson(source.value(QStringLiteral("params")).toObject());
    written.usedFiles = mapFromJson(source.value(QStringLiteral("used_files")).toObject());
    auto spec = reparsePipeline(written);
    if (!spec)
        return std::unexpected(spec.error());
    if (const QString name = source.value(QStringLiteral("name")).toString(); !name.isEmpty())
        spec->name = name; // a sweep's "digits[lr=0.01]"
    auto p = std::unique_ptr<Active>(new Active{id, PipelineProgress(*spec),
            doc.value(QStringLiteral("node")).toString(), doc.value(QStringLiteral("created_ms")).toInteger(), 0});
    const QJsonArray instances = doc.value(QStringLiteral("instances")).toArray();
    if (instances.size() != p->progress.instances().size())
        return fail(QStringLiteral("pipeline %1: %2 step instances stored, %3 parsed")
                            .arg(id)
                            .arg(instances.size())
                            .arg(p->progress.instances().size()),
                ErrorKind::InvalidInput);
    const qint64 from = doc.value(QStringLiteral("id")).toInteger();
    for (int i = 0; i < instances.size(); ++i) {
        const QJsonObject o = instances.at(i).toObject();
        const auto state = stepStateFromName(o.value(QStringLiteral("state")).toString());
        if (!state)
            return fail(QStringLiteral("pipeline %1: step instance %2 has no valid state").arg(id).arg(i),
                    ErrorKind::InvalidInput);
        const RunId run = o.value(QStringLiteral("run")).toInteger();
        const QString reason = o.value(QStringLiteral("reason")).toString();
        const auto outputs = mapFromJson(o.value(QStringLiteral("outputs")).toObject());
        const QString digest = o.value(QStringLiteral("digest")).toString();
        if (forResume) {
            // What succeeded (or was reused) is reused; the rest runs again.
            if (*state != StepState::Succeeded && *state != StepState::Cached)
                continue;
            p->progress.setRunning(i, run);
            p->progress.setEnded(i, StepState::Cached,
                    run ? QStringLiteral("reused from pipeline %1 (run %2)").arg(from).arg(run)
                        : QStringLiteral("reused from pipeline %1 (%2)").arg(from).arg(reason),
                    outputs);
            if (!digest.isEmpty())
                p->digests.insert(i, digest);
            continue;
        }
        if (*state == StepState::Running)
            p->progress.setRunning(i, run);
        else if (*state != StepState::Waiting) {
            if (run)
                p->progress.setRunning(i, run);
            p->progress.setEnded(i, *state, reason, outputs);
        }
        if (!digest.isEmpty())
            p->digests.insert(i, digest);
        if (o.contains(QStringLiteral("after_ok"))) {
            QStringList jobs;
            for (const QJsonValue& j : o.value(QStringLiteral("after_ok")).toArray())
                jobs << j.toString();
            p->afterOk.insert(i, jobs);
        }
        if (o.contains(QStringLiteral("memo"))) {
            auto c = componentsFromJson(o.value(QStringLiteral("memo")).toObject());
            if (c)
                p->memo.insert(i, *c);
        }
    }
    if (!forResume) {
        p->resumedFrom = doc.value(QStringLiteral("resumed_from")).toInteger();
        if (doc.value(QStringLiteral("cancelled")).toBool()) {
            p->cancelled = true;
            (void)p->progress.cancel(); // its runs were cancelled before
        }
    }
    return p;
}

Result<void> PipelineRunner::cancel(qint64 id)
{
    const auto it = m_pipelines.find(id);
    if (it == m_pipelines.end())
        return fail(QStringLiteral("no pipeline %1").arg(id), ErrorKind::NotFound);
    Active& p = *it->second;
    if (p.progress.state() != PipelineState::Running)
        return fail(
                QStringLiteral("pipeline %1 has already ended (%2)").arg(id).arg(pipelineStateName(p.progress.state())),
                ErrorKind::InvalidInput);
    p.cancelled = true;
    for (int i : p.progress.cancel())
        m_engine->cancel(p.progress.instances().at(i).run);
    advance(p);
    return {};
}

void PipelineRunner::advance(Active& p)
{
    for (;;) {
        auto d = p.progress.advance();
        for (int i : d.skipped)
            qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 %3")
                                                    .arg(p.id)
                                                    .arg(p.progress.instanceName(i),
                                                            p.progress.instances().at(i).reason);
        for (int i : d.start)
            launch(p, i);
        if (m_engine->isSlurmNode(p.node)) {
            // On a Slurm node, what may wait in Slurm's queue behind its
            // upstream jobs goes now (the header's comment).
            const QList<int> early = p.progress.startEarly(
                    [&](int up) { return !slurmJobOf(p, p.progress.instances().at(up).run).isEmpty(); });
            for (int i : early) {
                p.afterOk.insert(i, upstreamJobs(p, i));
                launch(p, i);
                if (p.progress.instances().at(i).state != StepState::Running)
                    p.afterOk.remove(i);
            }
            d.start << early;
        }
        // A launch that failed at once (or ended cached) may let more move.
        if (d.start.isEmpty() && d.skipped.isEmpty() && d.failed.isEmpty())
            break;
        bool allLaunched = true;
        for (int i : d.start)
            allLaunched &= p.progress.instances().at(i).state == StepState::Running;
        if (allLaunched && d.failed.isEmpty() && d.skipped.isEmpty())
            break;
    }
    if (p.progress.state() != PipelineState::Running && !p.endedMs) {
        p.endedMs = QDateTime::currentMSecsSinceEpoch();
        qCInfo(lcPipeline).noquote()
                << QStringLiteral("pipeline %1 %2").arg(p.id).arg(pipelineStateName(p.progress.state()));
    }
    announce(p);
}

void PipelineRunner::launch(Active& p, int instance)
{
    const StepInstance& inst = p.progress.instances().at(instance);
    const StepSpec& step = p.progress.spec().steps.at(inst.step);
    auto job = step.job.instantiate(p.progress.valuesFor(instance), p.progress.paramsFor(instance));
    if (!job) {
        p.progress.setEnded(instance, StepState::Failed, job.error().message);
        return;
    }
    job->name = p.progress.spec().name + u'/' + p.progress.instanceName(instance);
    // The files output params are read from travel with the artifacts.
    for (const OutputParamSpec& o : step.outputParams)
        if (!o.file.isEmpty() && !job->artifacts.contains(o.file))
            job->artifacts << o.file;
    job->yaml = toYaml(*job); // what the run records (and its artifacts are listed from)
    if (!step.memoize.enabled) {
        submitStep(p, instance, *job, {});
        return;
    }
    // The key is hashed on the hashing thread; the step waits meanwhile.
    p.progress.setWaitingReason(instance, QStringLiteral("computing its memo key"));
    auto lookup = std::make_shared<MemoLookup>();
    const MemoJob m = memoJob(p, instance, *job);
    ResultStore* store = m_store;
    const QString db = m_databasePath;
    const qint64 id = p.id;
    m_hashWorker->run([store, db, m, lookup](TreeHasher& h) { computeMemo(h, *store, db, m, *lookup); }, this,
            [this, id, instance, job = *job, lookup] {
                if (goOn(id, instance, [&](Active& w) { launchMemoized(w, instance, job, *lookup); }))
                    advanceSoon(id);
            });
}

bool PipelineRunner::goOn(qint64 id, int instance, const std::function<void(Active&)>& next)
{
    const auto it = m_pipelines.find(id);
    if (it == m_pipelines.end())
        return false;
    Active& w = *it->second;
    if (w.progress.state() != PipelineState::Running || w.progress.instances().at(instance).state != StepState::Waiting)
        return false; // cancelled meanwhile
    if (w.progress.stopped())
        w.progress.setEnded(instance, StepState::Skipped, w.progress.stopReason()); // fail_fast meanwhile
    else
        next(w);
    return true;
}

void PipelineRunner::advanceSoon(qint64 id)
{
    // Once for all the lookups that came back together (a fan-out's):
    // each advance() writes the pipeline's whole document.
    if (m_advancePending.contains(id))
        return;
    m_advancePending.insert(id);
    QMetaObject::invokeMethod(
            this,
            [this, id] {
                m_advancePending.remove(id);
                if (const auto it = m_pipelines.find(id); it != m_pipelines.end())
                    advance(*it->second);
            },
            Qt::QueuedConnection);
}

void PipelineRunner::launchMemoized(Active& p, int instance, const JobSpec& job, const MemoLookup& lookup)
{
    QString whyRun;
    {
        const auto& c = lookup.components;
        if (!c) {
            whyRun = QStringLiteral("memoization: no key (%1); the step runs").arg(c.error().message);
        } else {
            if (tryMemoHit(p, instance, lookup, &whyRun))
                return;
            const QString key = memoKey(*c);
            if (const auto busy = m_keyInFlight.constFind(key); busy != m_keyInFlight.cend()) {
                m_keyWaiters[key].append({p.id, instance});
                p.progress.setWaitingReason(instance,
                        QStringLiteral("waiting for run %1, which computes the same key %2")
                                .arg(*busy)
                                .arg(key.left(12)));
                qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 waits for run %3 (same key)")
                                                        .arg(p.id)
                                                        .arg(p.progress.instanceName(instance))
                                                        .arg(*busy);
                return;
            }
            p.memo.insert(instance, *c);
        }
    }
    submitStep(p, instance, job, whyRun);
}

void PipelineRunner::submitStep(Active& p, int instance, const JobSpec& job, const QString& whyRun)
{
    const auto run = m_engine->submit(job, p.node,
            {RunGroupMembership{p.id, RunGroupKind::Pipeline, instance, p.progress.instanceName(instance)}});
    if (!run) {
        p.progress.setEnded(instance, StepState::Failed, QStringLiteral("cannot submit: ") + run.error().message);
        return;
    }
    p.progress.setRunning(instance, *run);
    m_byRun.insert(*run, {p.id, instance});
    if (p.afterOk.contains(instance)) {
        m_engine->setSlurmAfterOk(*run, p.afterOk.value(instance));
        qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 queued behind Slurm job(s) %3")
                                                .arg(p.id)
                                                .arg(p.progress.instanceName(instance))
                                                .arg(p.afterOk.value(instance).join(QStringLiteral(", ")));
    }
    if (p.memo.contains(instance))
        m_keyInFlight.insert(memoKey(p.memo.value(instance)), *run);
    if (!whyRun.isEmpty())
        m_store->addNotice(RunNotice{*run, {}, whyRun});
    qCInfo(lcPipeline).noquote()
            << QStringLiteral("pipeline %1: %2 is run %3").arg(p.id).arg(p.progress.instanceName(instance)).arg(*run);
}

QString PipelineRunner::slurmJobOf(const Active& p, RunId run)
{
    if (!run)
        return {};
    if (const auto it = m_slurmJobs.constFind(run); it != m_slurmJobs.cend())
        return *it;
    const auto r = m_store->run(run); // a pipeline taken up: its runs' records
    if (!r || r->slurmJob.isEmpty() || isTerminal(r->state) || r->node != p.node)
        return {};
    m_slurmJobs.insert(run, r->slurmJob);
    return r->slurmJob;
}

QStringList PipelineRunner::upstreamJobs(const Active& p, int instance)
{
    const PipelineProgress& progress = p.progress;
    const StepSpec& step = progress.spec().steps.at(progress.instances().at(instance).step);
    QStringList jobs;
    for (const StepInstance& up : progress.instances())
        if (up.state == StepState::Running && step.upstream.contains(progress.spec().steps.at(up.step).name))
            if (const QString job = slurmJobOf(p, up.run); !job.isEmpty() && !jobs.contains(job))
                jobs << job;
    return jobs;
}

QString PipelineRunner::failedUpstream(const Active& p, int instance, bool* pending, int* which) const
{
    const PipelineProgress& progress = p.progress;
    const StepSpec& step = progress.spec().steps.at(progress.instances().at(instance).step);
    *pending = false;
    for (int i = 0; i < progress.instances().size(); ++i) {
        const StepInstance& up = progress.instances().at(i);
        if (!step.upstream.contains(progress.spec().steps.at(up.step).name))
            continue;
        if (!isEnded(up.state))
            *pending = true;
        else if (up.state != StepState::Succeeded && up.state != StepState::Cached) {
            if (which)
                *which = i;
            return QStringLiteral("not run: step '%1' %2").arg(progress.instanceName(i), stepStateName(up.state));
        }
    }
    return {};
}

void PipelineRunner::onRunState(const RunRecord& run)
{
    const auto where = m_byRun.constFind(run.id);
    if (where == m_byRun.cend())
        return; // not ours
    const auto [id, instance] = *where;
    if (!isTerminal(run.state)) {
        // Unknown: the node may answer again. A run now in Slurm's queue
        // may let a later step queue behind it.
        if (!run.slurmJob.isEmpty() && m_engine->isSlurmNode(run.node) && m_slurmJobs.value(run.id) != run.slurmJob) {
            m_slurmJobs.insert(run.id, run.slurmJob);
            advanceSoon(id);
        }
        return;
    }
    m_byRun.erase(where);
    m_slurmJobs.remove(run.id);
    if (const auto it = m_pipelines.find(id);
            run.state != RunState::Succeeded && it != m_pipelines.end() && !it->second->cancelled) {
        // Queued behind its upstream jobs: Slurm cancelled it because one
        // of them failed (kill-on-invalid-dep), or this service did. It did
        // not run: skipped, as after a failure upstream in any pipeline.
        Active& p = *it->second;
        if (p.skipWhy.contains(instance)) {
            finishStep(id, instance, StepState::Skipped, p.skipWhy.value(instance), {});
            return;
        }
        if (p.afterOk.contains(instance)) {
            bool pending = false;
            const QString failed = failedUpstream(p, instance, &pending);
            if (!failed.isEmpty()) {
                finishStep(id, instance, StepState::Skipped, failed, {});
                return;
            }
            if (pending) { // the upstream's failure has not come yet
                p.heldEnds.insert(instance, run);
                return;
            }
        }
    }
    ended(id, instance, run);
}

void PipelineRunner::ended(qint64 id, int instance, const RunRecord& end)
{
    // A gang's step stopped because one of its ranks failed: failed as that
    // rank did (GangOutcome.h), so that its retry is followed, not a cancel.
    const RunRecord run = storedGangOutcomeOf(*m_store, end);
    switch (run.state) {
    case RunState::Succeeded:
        if (!run.node.isEmpty() && !m_engine->nodeReady(run.node))
            m_awaitingNode[run.node].append({id, instance, run});
        else
            collect(id, instance, run);
        break;
    case RunState::Cancelled: finishStep(id, instance, StepState::Cancelled, run.failureReason, {}); break;
    default:
        if (m_retries) {
            // Waited for before asking: the answer (retried / notRetried)
            // may come during decide() itself.
            m_awaitingRetry.insert(run.id, {id, instance});
            const RetryRunner::Outcome outcome = m_retries->decide(run);
            const bool answered = !m_awaitingRetry.contains(run.id);
            if (outcome == RetryRunner::Outcome::Retrying) {
                if (const auto it = m_pipelines.find(id); !answered && it != m_pipelines.end()) {
                    it->second->progress.setNote(instance,
                            QStringLiteral("run %1 failed (%2); being retried").arg(run.id).arg(run.failureReason));
                    announce(*it->second);
                }
                break;
            }
            m_awaitingRetry.remove(run.id);
            if (answered)
                break; // notRetried() failed the step
        }
        finishStep(id, instance, StepState::Failed,
                run.failureReason.isEmpty() ? QStringLiteral("run %1 failed").arg(run.id)
                                            : QStringLiteral("run %1: %2").arg(run.id).arg(run.failureReason),
                {});
        break;
    }
}

void PipelineRunner::collect(qint64 id, int instance, const RunRecord& run)
{
    const auto it = m_pipelines.find(id);
    if (it == m_pipelines.end())
        return;
    const PipelineSpec& spec = it->second->progress.spec();
    const StepSpec& step = spec.steps.at(it->second->progress.instances().at(instance).step);
    // What later steps read of this one's metrics.
    QList<std::pair<QString, QString>> metricRefs; // key, aggregate
    for (const StepSpec& s : spec.steps)
        for (const Reference& r : s.references)
            if (r.kind == Reference::Kind::StepMetric && r.step == step.name)
                metricRefs.append({r.name, r.aggregate});
    const QString dir = runDataDir(m_databasePath, run.id) + QStringLiteral("/outputs");
    const auto finish = [this, id, instance, run, step, metricRefs, dir](const QString& problem) {
        QMap<QString, QString> outputs;
        if (!problem.isEmpty()) {
            finishStep(id, instance, StepState::Failed, problem, {});
            return;
        }
        (void)m_store->flush(); // the run's last metric points are in the database
        for (const OutputParamSpec& o : step.outputParams) {
            if (!o.metric.isEmpty()) {
                const QString v = aggregate(run.id, o.metric, o.aggregate);
                if (v.isEmpty()) {
                    finishStep(id, instance, StepState::Failed,
                            QStringLiteral("output '%1': run %2 has no metric '%3'")
                                    .arg(o.name)
                                    .arg(run.id)
                                    .arg(o.metric),
                            {});
                    return;
                }
                outputs.insert(QStringLiteral("outputs.") + o.name, v);
                continue;
            }
            QFile f(QDir(dir).filePath(o.file));
            if (!f.open(QIODevice::ReadOnly)) {
                finishStep(id, instance, StepState::Failed,
                        QStringLiteral("output '%1': run %2 wrote no file '%3'").arg(o.name).arg(run.id).arg(o.file),
                        {});
                return;
            }
            const QByteArray text = f.read(64 * 1024 + 1);
            if (text.size() > 64 * 1024) {
                finishStep(id, instance, StepState::Failed,
                        QStringLiteral("output '%1': '%2' is over 64 KiB; an output param is a value, a file is an "
                                       "artifact")
                                .arg(o.name, o.file),
                        {});
                return;
            }
            outputs.insert(QStringLiteral("outputs.") + o.name, QString::fromUtf8(text).trimmed());
        }
        for (const auto& [key, how] : metricRefs) {
            const QString v = aggregate(run.id, key, how);
            if (!v.isEmpty())
                outputs.insert(QStringLiteral("metrics.%1.%2").arg(key, how), v);
        }
        const auto it = m_pipelines.find(id);
        if (it == m_pipelines.end() || !it->second->memo.contains(instance)) {
            finishStep(id, instance, StepState::Succeeded, {}, outputs);
            return;
        }
        // Its entry, with the outputs' hashes (on the hashing thread: a model
        // may be gigabytes), before the step ends: waiters on its key then hit.
        auto tree = std::make_shared<Result<TreeHash>>(TreeHash{});
        m_hashWorker->run(
                [dir, tree](TreeHasher& h) {
                    if (QFileInfo(dir).isDir())
                        *tree = h.hashTree(dir, false);
                },
                this,
                [this, id, instance, runId = run.id, outputs, tree] {
                    if (const auto p = m_pipelines.find(id); p != m_pipelines.end())
                        writeMemoEntry(*p->second, instance, runId, *tree, outputs);
                    finishStep(id, instance, StepState::Succeeded, {}, outputs);
                });
    };
    bool needsFiles = false;
    for (const OutputParamSpec& o : step.outputParams)
        needsFiles |= !o.file.isEmpty();
    // Declared artifacts are kept in the result store (memoization checks them there).
    if (!QDir().mkpath(dir)) {
        finish(QStringLiteral("cannot create %1").arg(dir));
        return;
    }
    m_engine->downloadArtifacts(
            run.id, dir, [self = QPointer(this), finish, needsFiles](const Result<ArtifactDownload>& r) {
                if (!self)
                    return; // the service is shutting down; the pipeline is not advanced
                if (!r && needsFiles) {
                    finish(QStringLiteral("cannot copy its outputs: ") + r.error().message);
                    return;
                }
                finish({});
            });
}

void PipelineRunner::finishStep(
        qint64 id, int instance, StepState state, const QString& reason, const QMap<QString, QString>& outputs)
{
    const auto it = m_pipelines.find(id);
    if (it == m_pipelines.end())
        return;
    Active& p = *it->second;
    p.progress.setEnded(instance, state, reason, outputs);
    // What later steps' keys take of this one: its own key when memoized,
    // else a digest of its output params.
    if (state == StepState::Succeeded) {
        QString digest = p.memo.contains(instance) ? memoKey(p.memo.value(instance)) : QString();
        if (digest.isEmpty()) {
            QStringList parts;
            for (auto o = outputs.cbegin(); o != outputs.cend(); ++o)
                parts << o.key() + u'=' + o.value();
            digest = QStringLiteral("outputs:") + parts.join(u'\n');
        }
        p.digests.insert(instance, digest);
    }
    qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 %3%4")
                                            .arg(id)
                                            .arg(p.progress.instanceName(instance), stepStateName(state),
                                                    reason.isEmpty() ? QString() : QStringLiteral(": ") + reason);
    if (p.memo.contains(instance))
        releaseKey(memoKey(p.memo.value(instance))); // its entry (if it succeeded) is written: collect()
    if (!p.afterOk.isEmpty())
        settleQueuedBehind(p);
    advance(p);
}

void PipelineRunner::settleQueuedBehind(Active& p)
{
    const PipelineProgress& progress = p.progress;
    // Steps queued behind upstream jobs that Slurm would still start: an
    // upstream step failed though its run succeeded (its outputs could not
    // be collected), or fail_fast stopped the pipeline (they would have been
    // skipped, not started). Their jobs are cancelled; they end skipped. An
    // upstream run that failed is Slurm's to act on (kill-on-invalid-dep).
    for (auto it = p.afterOk.cbegin(); it != p.afterOk.cend(); ++it) {
        const int i = it.key();
        const StepInstance& inst = progress.instances().at(i);
        if (inst.state != StepState::Running || p.skipWhy.contains(i) || p.heldEnds.contains(i))
            continue;
        bool pending = false;
        int which = -1;
        QString why = failedUpstream(p, i, &pending, &which);
        if (!why.isEmpty()) {
            const auto up = m_store->run(progress.instances().at(which).run);
            if (!up || up->state != RunState::Succeeded)
                continue;
        } else if (progress.stopped()) {
            const auto r = m_store->run(inst.run);
            if (r && (r->state == RunState::Queued || r->state == RunState::Starting))
                why = progress.stopReason();
        }
        if (why.isEmpty())
            continue;
        p.skipWhy.insert(i, why);
        qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2, queued in Slurm, is cancelled: %3")
                                                .arg(p.id)
                                                .arg(progress.instanceName(i), why);
        m_engine->cancel(inst.run);
    }
    // Endings that waited for their upstream steps'.
    QList<std::pair<int, RunRecord>> due;
    for (auto it = p.heldEnds.cbegin(); it != p.heldEnds.cend(); ++it) {
        bool pending = false;
        const QString why = failedUpstream(p, it.key(), &pending);
        if (!why.isEmpty())
            p.progress.setEnded(it.key(), StepState::Skipped, why);
        if (!why.isEmpty() || !pending)
            due.append({it.key(), it.value()});
    }
    const qint64 id = p.id;
    for (const auto& [i, run] : due) {
        p.heldEnds.remove(i);
        if (p.progress.instances().at(i).state == StepState::Skipped)
            qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 skipped: %3")
                                                    .arg(id)
                                                    .arg(p.progress.instanceName(i),
                                                            p.progress.instances().at(i).reason);
        else
            ended(id, i, run); // its upstream succeeded: its own ending
    }
}

void PipelineRunner::releaseKey(const QString& key)
{
    m_keyInFlight.remove(key);
    QList<qint64> touched;
    for (const auto& [id, instance] : m_keyWaiters.take(key)) {
        // A hit now, or it runs (or waits for the next one computing the key).
        if (!goOn(id, instance, [&](Active& w) { launch(w, instance); }))
            continue;
        if (!touched.contains(id))
            touched << id;
    }
    for (qint64 id : touched)
        if (const auto it = m_pipelines.find(id); it != m_pipelines.end())
            advance(*it->second);
}

PipelineRunner::MemoJob PipelineRunner::memoJob(const Active& p, int instance, const JobSpec& job) const
{
    const StepInstance& inst = p.progress.instances().at(instance);
    const StepSpec& step = p.progress.spec().steps.at(inst.step);
    MemoJob m;
    MemoComponents& c = m.components;
    c.step = step.name;
    c.command = job.shellCommand ? job.argv.last() : QString();
    c.argv = job.argv;
    c.env = job.env;
    c.params = job.params;
    c.gpuType = job.resources.gpuType;
    c.gpuCount = job.resources.gpus;
    c.keyExtra = step.memoize.keyExtra;
    for (int i = 0; i < p.progress.instances().size(); ++i) {
        const StepInstance& up = p.progress.instances().at(i);
        const QString name = p.progress.spec().steps.at(up.step).name;
        if (!step.upstream.contains(name))
            continue;
        QString& d = c.upstream[name];
        d += p.digests.value(i, stepStateName(up.state)); // fan-out: every instance's, in item order
    }
    m.ignore = step.memoize.ignore;
    // The step's code: its workdir as this machine sees it (the local node's,
    // or the one a sync would upload).
    if (QFileInfo(job.workdir).isDir()) {
        m.workdir = job.workdir;
        // What the pipeline's steps write there (outputs of earlier runs) is
        // not code: it is keyed through the upstream steps instead. Nor is
        // the result database when it lies in the workdir (it must not even
        // be opened: TreeHasher::hashTree), nor the pipeline file.
        for (const StepSpec& s : p.progress.spec().steps)
            for (const QString& glob : s.outputGlobs)
                m.outputGlobs << globPattern(glob);
        m.root = QDir(job.workdir).canonicalPath() + u'/';
        m.db = QFileInfo(m_databasePath).absoluteFilePath();
        m.dbCanonical = QFileInfo(QFileInfo(m_databasePath).absolutePath()).canonicalFilePath() + u'/'
                + QFileInfo(m_databasePath).fileName();
        // The pipeline's own files: what they say of a step is in its
        // resolved command, env and params already.
        for (const QString& f : QStringList{p.progress.spec().sourcePath} + p.progress.spec().usedFiles.keys())
            if (!f.isEmpty())
                m.specFiles << QFileInfo(f).canonicalFilePath();
    }
    for (const QString& in : step.inputs)
        m.inputs.append({in, QDir::cleanPath(QDir(job.workdir).absoluteFilePath(in))});
    return m;
}

void PipelineRunner::computeMemo(
        TreeHasher& hasher, ResultStore& store, const QString& databasePath, const MemoJob& m, MemoLookup& out)
{
    MemoComponents c = m.components;
    if (!m.workdir.isEmpty()) {
        auto tree = hasher.hashTree(m.workdir, true, [&](const QString& rel) {
            const QString abs = m.root + rel;
            if (abs.startsWith(m.db) || abs.startsWith(m.dbCanonical))
                return true; // the database, its -wal/-shm/-journal, <db>.runs/, its locks
            if (m.specFiles.contains(abs))
                return true;
            return std::any_of(m.outputGlobs.cbegin(), m.outputGlobs.cend(),
                    [&](const QRegularExpression& re) { return re.match(rel).hasMatch(); });
        });
        if (!tree) {
            out.components = std::unexpected(tree.error());
            return;
        }
        c.codeFiles = tree->files;
    }
    for (const auto& [written, path] : m.inputs) {
        auto d = hasher.hashInput(path);
        if (!d) {
            out.components = std::unexpected(d.error());
            return;
        }
        FileDigest digest = *d;
        digest.path = written; // as written: the key does not change with the workdir's location
        c.inputs << digest;
    }
    out.components = applyIgnore(c, m.ignore);
    // The entry of that key, and what its outputs hold now.
    out.entry = MemoStore(store).get(memoKey(*out.components));
    if (!out.entry || !*out.entry)
        return;
    const QString outputsDir = runDataDir(databasePath, (*out.entry)->run) + QStringLiteral("/outputs");
    for (const MemoOutput& o : (*out.entry)->outputs) {
        const QString path = QDir(outputsDir).filePath(o.path);
        if (!QFileInfo::exists(path)) {
            out.outputs.insert(o.path, std::optional<FileDigest>());
            continue;
        }
        auto d = hasher.hashInput(path);
        out.outputs.insert(o.path,
                d ? Result<std::optional<FileDigest>>(std::optional<FileDigest>(*d))
                  : Result<std::optional<FileDigest>>(std::unexpected(d.error())));
    }
}

bool PipelineRunner::tryMemoHit(Active& p, int instance, const MemoLookup& lookup, QString* why)
{
    const StepSpec& step = p.progress.spec().steps.at(p.progress.instances().at(instance).step);
    const MemoComponents& c = *lookup.components;
    const QString key = memoKey(c);
    MemoStore memo(*m_store);
    const auto& entry = lookup.entry;
    if (!entry) {
        *why = QStringLiteral("memoization: cannot read the cache (%1); the step runs").arg(entry.error().message);
        return false;
    }
    if (!*entry) {
        // A miss: say what differs from the newest entry of this step.
        const auto newest = memo.newest(p.progress.spec().name, step.name);
        const QStringList reasons = explainMiss(
                newest && *newest ? std::optional<MemoComponents>((*newest)->components) : std::nullopt, c);
        *why = QStringLiteral("ran because: %1")
                       .arg(reasons.isEmpty() ? QStringLiteral("no entry") : reasons.join(u"; "));
        return false;
    }
    const MemoEntry& e = **entry;
    MemoLookupRequest req;
    req.createdMs = e.created.toMSecsSinceEpoch();
    req.outputs = e.outputs;
    req.nowMs = QDateTime::currentMSecsSinceEpoch();
    if (step.memoize.maxAgeSec)
        req.maxAgeMs = *step.memoize.maxAgeSec * 1000;
    req.alwaysRun = step.alwaysRun;
    req.currentOutput = [&](const MemoOutput& o) -> Result<std::optional<FileDigest>> {
        return lookup.outputs.value(o.path, std::optional<FileDigest>()); // hashed on the hashing thread
    };
    const MemoDecision decision = decideMemo(req);
    if (!decision.hit) {
        if (decision.evict)
            (void)memo.remove(key);
        *why = QStringLiteral("ran because: %1").arg(decision.reasons.join(u"; "));
        return false;
    }
    (void)memo.recordHit(key, 0, p.progress.spec().name);
    p.digests.insert(instance, key);
    p.progress.setRunning(instance, e.run); // the run whose outputs it reuses (stage-in copies them from there)
    p.progress.setEnded(instance, StepState::Cached,
            QStringLiteral("reused run %1 (key %2, made %3)")
                    .arg(e.run)
                    .arg(key.left(12), e.created.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"))),
            e.outputParams);
    qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 cached (run %3)")
                                            .arg(p.id)
                                            .arg(p.progress.instanceName(instance))
                                            .arg(e.run);
    return true;
}

void PipelineRunner::writeMemoEntry(
        const Active& p, int instance, RunId run, const Result<TreeHash>& tree, const QMap<QString, QString>& outputs)
{
    if (!p.memo.contains(instance))
        return;
    const StepSpec& step = p.progress.spec().steps.at(p.progress.instances().at(instance).step);
    MemoEntry e;
    e.pipeline = p.progress.spec().name;
    e.step = step.name;
    e.components = p.memo.value(instance);
    e.run = run;
    e.outputParams = outputs;
    // The outputs as copied into the result store, each with its content hash.
    {
        if (!tree) {
            m_store->addNotice(RunNotice{run, {},
                    QStringLiteral("memoization: the outputs could not be hashed (%1); nothing was cached")
                            .arg(tree.error().message)});
            return;
        }
        for (const FileDigest& f : tree->files)
            if (f.kind == FileDigest::Kind::File || f.kind == FileDigest::Kind::Executable)
                e.outputs << MemoOutput{f.path, f.size, f.sha256};
    }
    if (auto put = MemoStore(*m_store).put(e); !put)
        m_store->addNotice(RunNotice{run, {}, QStringLiteral("memoization: not cached: %1").arg(put.error().message)});
    else
        evictCache(); // a new entry may take the cache over its size
}

QString PipelineRunner::aggregate(RunId run, const QString& key, const QString& how) const
{
    const QList<MetricPoint> points = m_store->metrics(run, key);
    if (points.isEmpty())
        return {};
    double v = how == u"first" ? points.front().value : points.back().value;
    if (how == u"max" || how == u"min")
        for (const MetricPoint& m : points)
            v = how == u"max" ? std::max(v, m.value) : std::min(v, m.value);
    // The shortest text that reads back as the same double: "0.9528" as the
    // console printed it, not "0.95279999999999998".
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

std::optional<QJsonObject> PipelineRunner::describe(qint64 id) const
{
    const auto it = m_pipelines.find(id);
    if (it == m_pipelines.end()) {
        // One of an earlier life of the service: as it was last written.
        const auto r = m_store->pipeline(id);
        if (!r)
            return std::nullopt;
        return QJsonDocument::fromJson(r->document.toUtf8()).object().value(QStringLiteral("view")).toObject();
    }
    const Active& p = *it->second;
    QJsonArray steps;
    for (int i = 0; i < p.progress.instances().size(); ++i) {
        const StepInstance& inst = p.progress.instances().at(i);
        QJsonObject outputs;
        for (auto o = inst.outputs.cbegin(); o != inst.outputs.cend(); ++o)
            outputs.insert(o.key(), o.value());
        steps.append(QJsonObject{{QStringLiteral("name"), p.progress.instanceName(i)},
                {QStringLiteral("step"), p.progress.spec().steps.at(inst.step).name},
                {QStringLiteral("state"), stepStateName(inst.state)}, {QStringLiteral("run"), inst.run},
                {QStringLiteral("reason"), inst.reason}, {QStringLiteral("outputs"), outputs},
                {QStringLiteral("upstream"),
                        QJsonArray::fromStringList(p.progress.spec().steps.at(inst.step).upstream)}});
    }
    QJsonObject params;
    for (auto it2 = p.progress.spec().params.cbegin(); it2 != p.progress.spec().params.cend(); ++it2)
        params.insert(it2.key(), it2.value());
    QJsonObject view{{QStringLiteral("id"), p.id}, {QStringLiteral("name"), p.progress.spec().name},
            {QStringLiteral("state"), pipelineStateName(p.progress.state())},
            {QStringLiteral("created_ms"), p.createdMs}, {QStringLiteral("ended_ms"), p.endedMs},
            {QStringLiteral("params"), params}, {QStringLiteral("steps"), steps}};
    if (p.resumedFrom)
        view.insert(QStringLiteral("resumed_from"), p.resumedFrom);
    return view;
}

QList<qint64> PipelineRunner::ids() const
{
    QSet<qint64> seen;
    QList<qint64> out;
    for (const PipelineRecord& r : m_store->pipelines())
        if (!seen.contains(r.id)) {
            seen.insert(r.id);
            out << r.id;
        }
    for (const auto& [id, p] : m_pipelines)
        if (!seen.contains(id))
            out << id; // its first write not committed yet
    std::sort(out.begin(), out.end());
    return out;
}

QJsonObject PipelineRunner::documentOf(const Active& p) const
{
    const PipelineSpec& spec = p.progress.spec();
    QJsonArray instances;
    for (int i = 0; i < p.progress.instances().size(); ++i) {
        const StepInstance& inst = p.progress.instances().at(i);
        QJsonObject o{{QStringLiteral("state"), stepStateName(inst.state)}, {QStringLiteral("run"), inst.run},
                {QStringLiteral("reason"), inst.reason}, {QStringLiteral("outputs"), mapToJson(inst.outputs)}};
        if (p.digests.contains(i))
            o.insert(QStringLiteral("digest"), p.digests.value(i));
        if (p.memo.contains(i))
            o.insert(QStringLiteral("memo"), componentsToJson(p.memo.value(i)));
        if (p.afterOk.contains(i))
            o.insert(QStringLiteral("after_ok"), QJsonArray::fromStringList(p.afterOk.value(i)));
        instances.append(o);
    }
    QJsonObject doc{{QStringLiteral("format"), QLatin1String(kDocumentFormat)}, {QStringLiteral("id"), p.id},
            {QStringLiteral("source"),
                    QJsonObject{{QStringLiteral("yaml"), spec.yaml}, {QStringLiteral("name"), spec.name},
                            {QStringLiteral("origin"), spec.origin}, {QStringLiteral("base_dir"), spec.baseDir},
                            {QStringLiteral("source_path"), spec.sourcePath},
                            {QStringLiteral("params"), mapToJson(spec.params)},
                            {QStringLiteral("used_files"), mapToJson(spec.usedFiles)}}},
            {QStringLiteral("node"), p.node}, {QStringLiteral("created_ms"), p.createdMs},
            {QStringLiteral("cancelled"), p.cancelled}, {QStringLiteral("instances"), instances},
            {QStringLiteral("view"), describe(p.id).value_or(QJsonObject{})}};
    if (p.resumedFrom)
        doc.insert(QStringLiteral("resumed_from"), p.resumedFrom);
    return doc;
}

void PipelineRunner::setRetries(RetryRunner* retries)
{
    m_retries = retries;
    if (!retries)
        return;
    connect(retries, &RetryRunner::retried, this, [this](RunId ended, RunId next, qint64 atMs) {
        const auto where = m_awaitingRetry.constFind(ended);
        if (where == m_awaitingRetry.cend())
            return;
        const auto [id, instance] = *where;
        m_awaitingRetry.erase(where);
        const auto it = m_pipelines.find(id);
        if (it == m_pipelines.end())
            return;
        Active& p = *it->second;
        p.progress.setRunning(instance, next);
        p.progress.setNote(instance,
                QStringLiteral("run %1 failed; retried as run %2, not before %3")
                        .arg(ended)
                        .arg(next)
                        .arg(QDateTime::fromMSecsSinceEpoch(atMs).toString(QStringLiteral("HH:mm:ss"))));
        m_byRun.insert(next, {id, instance});
        for (auto k = m_keyInFlight.begin(); k != m_keyInFlight.end(); ++k)
            if (k.value() == ended)
                k.value() = next;
        qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 is run %3 (a retry of run %4)")
                                                .arg(id)
                                                .arg(p.progress.instanceName(instance))
                                                .arg(next)
                                                .arg(ended);
        announce(p);
    });
    connect(retries, &RetryRunner::notRetried, this, [this](RunId ended, const QString& reason) {
        const auto where = m_awaitingRetry.constFind(ended);
        if (where == m_awaitingRetry.cend())
            return;
        const auto [id, instance] = *where;
        m_awaitingRetry.erase(where);
        finishStep(
                id, instance, StepState::Failed, QStringLiteral("run %1: not retried: %2").arg(ended).arg(reason), {});
    });
}

bool PipelineRunner::busy() const
{
    if (!m_awaitingRetry.isEmpty())
        return true;
    for (const auto& [id, p] : m_pipelines)
        if (p->progress.state() == PipelineState::Running || !p->endedMs)
            return true;
    return false;
}

void PipelineRunner::announce(const Active& p)
{
    const QJsonObject doc = documentOf(p);
    PipelineRecord r;
    r.id = p.id;
    r.name = p.progress.spec().name;
    r.state = pipelineStateName(p.progress.state());
    r.createdAt = QDateTime::fromMSecsSinceEpoch(p.createdMs, Qt::UTC);
    if (p.endedMs)
        r.endedAt = QDateTime::fromMSecsSinceEpoch(p.endedMs, Qt::UTC);
    r.document = QString::fromUtf8(QJsonDocument(doc).toJson(QJsonDocument::Compact));
    m_store->putPipeline(r);
    Q_EMIT pipelineChanged(p.id, doc.value(QStringLiteral("view")).toObject());
}

} // namespace ty::pipeline

namespace ty::pipeline {

void PipelineRunner::evictCache()
{
    const auto policy = loadCachePolicy(m_databasePath);
    if (!policy) {
        qCWarning(lcPipeline).noquote() << QStringLiteral("memoization: no eviction: %1").arg(policy.error().message);
        return;
    }
    MemoStore memo(*m_store);
    const auto removed = applyCachePolicy(memo, *policy, QDateTime::currentDateTimeUtc());
    if (!removed)
        qCWarning(lcPipeline).noquote()
                << QStringLiteral("memoization: eviction failed: %1").arg(removed.error().message);
    else if (!removed->isEmpty())
        qCInfo(lcPipeline).noquote() << QStringLiteral(
                "memoization: evicted %1 entr%2 (max_age %3, max_size %4; %5): %6")
                                                .arg(removed->size())
                                                .arg(removed->size() == 1 ? QStringLiteral("y") : QStringLiteral("ies"))
                                                .arg(formatCacheAge(policy->maxAgeSec),
                                                        formatCacheSize(policy->maxBytes),
                                                        cachePolicyPath(m_databasePath))
                                                .arg(removed->mid(0, 5).join(u", "));
}

} // namespace ty::pipeline
