#include "PipelineRunner.h"

#include "core/common/Paths.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QPointer>

#include <cmath>

Q_LOGGING_CATEGORY(lcPipeline, "trainyard.pipeline")

namespace ty::pipeline {

struct PipelineRunner::Active {
    qint64 id = 0;
    PipelineProgress progress;
    QString node;
    qint64 createdMs = 0;
    qint64 endedMs = 0;
};

PipelineRunner::PipelineRunner(RunEngine* engine, ResultStore* store, QString databasePath, QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_store(store)
    , m_databasePath(std::move(databasePath))
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
    const auto run = m_engine->submit(*job, p.node);
    if (!run) {
        p.progress.setEnded(instance, StepState::Failed, QStringLiteral("cannot submit: ") + run.error().message);
        return;
    }
    p.progress.setRunning(instance, *run);
    m_byRun.insert(*run, {p.id, instance});
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
    qCInfo(lcPipeline).noquote() << QStringLiteral("pipeline %1: %2 %3%4")
                                            .arg(id)
                                            .arg(p.progress.instanceName(instance), stepStateName(state),
                                                    reason.isEmpty() ? QString() : QStringLiteral(": ") + reason);
    advance(p);
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
