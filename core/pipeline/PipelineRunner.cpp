#include "PipelineRunner.h"

#include "core/common/Paths.h"
#include "core/memo/MemoExplain.h"
#include "core/memo/MemoStore.h"
#include "core/memo/TreeHasher.h"
#include "core/store/RunNotice.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
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
};

PipelineRunner::PipelineRunner(RunEngine* engine, ResultStore* store, QString databasePath, QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_store(store)
    , m_databasePath(std::move(databasePath))
    , m_hasher(std::make_unique<TreeHasher>())
{
    connect(m_engine, &RunEngine::runStateChanged, this, &PipelineRunner::onRunState);
}

PipelineRunner::~PipelineRunner() = default;

qint64 PipelineRunner::submit(const PipelineSpec& spec, const QString& node)
{
    auto p = std::unique_ptr<Active>(
            new Active{m_nextId++, PipelineProgress(spec), node, QDateTime::currentMSecsSinceEpoch(), 0});
    const qint64 id = p->id;
    Active& ref = *p;
    m_pipelines.emplace(id, std::move(p));
    qCInfo(lcPipeline).noquote()
            << QStringLiteral("pipeline %1 (%2): %3 steps").arg(id).arg(spec.name).arg(spec.steps.size());
    advance(ref);
    return id;
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
    for (int i : p.progress.cancel())
        m_engine->cancel(p.progress.instances().at(i).run);
    advance(p);
    return {};
}

void PipelineRunner::advance(Active& p)
{
    for (;;) {
        const auto d = p.progress.advance();
        for (int i : d.skipped)
            qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 %3")
                                                    .arg(p.id)
                                                    .arg(p.progress.instanceName(i),
                                                            p.progress.instances().at(i).reason);
        for (int i : d.start)
            launch(p, i);
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
    job->tags << QStringLiteral("pipeline:%1").arg(p.id) << QStringLiteral("step:") + step.name;
    // The files output params are read from travel with the artifacts.
    for (const OutputParamSpec& o : step.outputParams)
        if (!o.file.isEmpty() && !job->artifacts.contains(o.file))
            job->artifacts << o.file;
    job->yaml = toYaml(*job); // what the run records (and its artifacts are listed from)
    QString whyRun;
    if (step.memoize.enabled) {
        auto c = memoComponents(p, instance, *job);
        if (!c) {
            whyRun = QStringLiteral("memoization: no key (%1); the step runs").arg(c.error().message);
        } else {
            if (tryMemoHit(p, instance, *c, &whyRun))
                return;
            p.memo.insert(instance, *c);
        }
    }
    const auto run = m_engine->submit(*job, p.node);
    if (!run) {
        p.progress.setEnded(instance, StepState::Failed, QStringLiteral("cannot submit: ") + run.error().message);
        return;
    }
    p.progress.setRunning(instance, *run);
    m_byRun.insert(*run, {p.id, instance});
    if (!whyRun.isEmpty())
        m_store->addNotice(RunNotice{*run, {}, whyRun});
    qCInfo(lcPipeline).noquote()
            << QStringLiteral("pipeline %1: %2 is run %3").arg(p.id).arg(p.progress.instanceName(instance)).arg(*run);
}

void PipelineRunner::onRunState(const RunRecord& run)
{
    const auto where = m_byRun.constFind(run.id);
    if (where == m_byRun.cend() || !isTerminal(run.state))
        return; // not ours, or not ended (unknown: the node may answer again)
    const auto [id, instance] = *where;
    m_byRun.erase(where);
    switch (run.state) {
    case RunState::Succeeded: collect(id, instance, run); break;
    case RunState::Cancelled: finishStep(id, instance, StepState::Cancelled, run.failureReason, {}); break;
    default:
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
        if (const auto it = m_pipelines.find(id); it != m_pipelines.end())
            writeMemoEntry(*it->second, instance, run.id, dir, outputs);
        finishStep(id, instance, StepState::Succeeded, {}, outputs);
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
    advance(p);
}

Result<MemoComponents> PipelineRunner::memoComponents(const Active& p, int instance, const JobSpec& job)
{
    const StepInstance& inst = p.progress.instances().at(instance);
    const StepSpec& step = p.progress.spec().steps.at(inst.step);
    MemoComponents c;
    c.step = step.name;
    c.command = job.shellCommand ? job.argv.last() : QString();
    c.argv = job.argv;
    c.env = job.env;
    c.params = job.params;
    c.gpuType = job.resources.gpuType;
    c.gpuCount = job.resources.gpus;
    c.keyExtra = step.memoize.keyExtra;
    // The step's code: its workdir as this machine sees it (the local node's,
    // or the one a sync would upload).
    if (QFileInfo(job.workdir).isDir()) {
        // What the pipeline's steps write there (outputs of earlier runs) is
        // not code: it is keyed through the upstream steps instead. Nor is
        // the result database when it lies in the workdir (it must not even
        // be opened: TreeHasher::hashTree), nor the pipeline file.
        QList<QRegularExpression> outputs;
        for (const StepSpec& s : p.progress.spec().steps)
            for (const QString& glob : s.outputGlobs)
                outputs << globPattern(glob);
        const QString root = QDir(job.workdir).canonicalPath() + u'/';
        const QString db = QFileInfo(m_databasePath).absoluteFilePath();
        const QString dbCanonical = QFileInfo(QFileInfo(m_databasePath).absolutePath()).canonicalFilePath() + u'/'
                + QFileInfo(m_databasePath).fileName();
        // The pipeline's own files: what they say of a step is in its
        // resolved command, env and params already.
        QSet<QString> specFiles;
        for (const QString& f : QStringList{p.progress.spec().sourcePath} + p.progress.spec().usedFiles.keys())
            if (!f.isEmpty())
                specFiles << QFileInfo(f).canonicalFilePath();
        auto tree = m_hasher->hashTree(job.workdir, true, [&](const QString& rel) {
            const QString abs = root + rel;
            if (abs.startsWith(db) || abs.startsWith(dbCanonical))
                return true; // the database, its -wal/-shm/-journal, <db>.runs/, its locks
            if (specFiles.contains(abs))
                return true;
            return std::any_of(outputs.cbegin(), outputs.cend(),
                    [&](const QRegularExpression& re) { return re.match(rel).hasMatch(); });
        });
        if (!tree)
            return std::unexpected(tree.error());
        c.codeFiles = tree->files;
    }
    for (int i = 0; i < p.progress.instances().size(); ++i) {
        const StepInstance& up = p.progress.instances().at(i);
        const QString name = p.progress.spec().steps.at(up.step).name;
        if (!step.upstream.contains(name))
            continue;
        QString& d = c.upstream[name];
        d += p.digests.value(i, stepStateName(up.state)); // fan-out: every instance's, in item order
    }
    return applyIgnore(c, step.memoize.ignore);
}

bool PipelineRunner::tryMemoHit(Active& p, int instance, const MemoComponents& c, QString* why)
{
    const StepSpec& step = p.progress.spec().steps.at(p.progress.instances().at(instance).step);
    const QString key = memoKey(c);
    MemoStore memo(*m_store);
    const auto entry = memo.get(key);
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
    const QString outputsDir = runDataDir(m_databasePath, e.run) + QStringLiteral("/outputs");
    MemoLookupRequest req;
    req.createdMs = e.created.toMSecsSinceEpoch();
    req.outputs = e.outputs;
    req.nowMs = QDateTime::currentMSecsSinceEpoch();
    if (step.memoize.maxAgeSec)
        req.maxAgeMs = *step.memoize.maxAgeSec * 1000;
    req.alwaysRun = step.alwaysRun;
    req.currentOutput = [&](const MemoOutput& o) -> Result<std::optional<FileDigest>> {
        const QString path = QDir(outputsDir).filePath(o.path);
        if (!QFileInfo::exists(path))
            return std::optional<FileDigest>();
        auto d = m_hasher->hashInput(path);
        if (!d)
            return std::unexpected(d.error());
        return std::optional<FileDigest>(*d);
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
        const Active& p, int instance, RunId run, const QString& outputsDir, const QMap<QString, QString>& outputs)
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
    if (QFileInfo(outputsDir).isDir()) {
        auto tree = m_hasher->hashTree(outputsDir, false);
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
    return QString::number(v, 'g', 17);
}

std::optional<QJsonObject> PipelineRunner::describe(qint64 id) const
{
    const auto it = m_pipelines.find(id);
    if (it == m_pipelines.end())
        return std::nullopt;
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
                {QStringLiteral("reason"), inst.reason}, {QStringLiteral("outputs"), outputs}});
    }
    QJsonObject params;
    for (auto it2 = p.progress.spec().params.cbegin(); it2 != p.progress.spec().params.cend(); ++it2)
        params.insert(it2.key(), it2.value());
    return QJsonObject{{QStringLiteral("id"), p.id}, {QStringLiteral("name"), p.progress.spec().name},
            {QStringLiteral("state"), pipelineStateName(p.progress.state())},
            {QStringLiteral("created_ms"), p.createdMs}, {QStringLiteral("ended_ms"), p.endedMs},
            {QStringLiteral("params"), params}, {QStringLiteral("steps"), steps}};
}

QList<qint64> PipelineRunner::ids() const
{
    QList<qint64> out;
    for (const auto& [id, p] : m_pipelines)
        out << id;
    return out;
}

bool PipelineRunner::busy() const
{
    for (const auto& [id, p] : m_pipelines)
        if (p->progress.state() == PipelineState::Running || !p->endedMs)
            return true;
    return false;
}

void PipelineRunner::announce(const Active& p)
{
    if (const auto d = describe(p.id))
        Q_EMIT pipelineChanged(p.id, *d);
}

} // namespace ty::pipeline
