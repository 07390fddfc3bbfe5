#include "PipelineProgress.h"

#include "core/common/Combinations.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>

namespace ty::pipeline {

namespace {
const std::pair<StepState, const char*> kStateNames[] = {{StepState::Waiting, "waiting"},
        {StepState::Running, "running"}, {StepState::Succeeded, "succeeded"}, {StepState::Failed, "failed"},
        {StepState::Skipped, "skipped"}, {StepState::Cached, "cached"}, {StepState::Cancelled, "cancelled"}};
}

QString stepStateName(StepState state)
{
    for (const auto& [s, name] : kStateNames)
        if (s == state)
            return QLatin1StringView(name);
    return {};
}

std::optional<StepState> stepStateFromName(const QString& name)
{
    for (const auto& [s, n] : kStateNames)
        if (name == QLatin1StringView(n))
            return s;
    return std::nullopt;
}

bool isEnded(StepState state)
{
    return state != StepState::Waiting && state != StepState::Running;
}

QString pipelineStateName(PipelineState state)
{
    switch (state) {
    case PipelineState::Running: return QStringLiteral("running");
    case PipelineState::Succeeded: return QStringLiteral("succeeded");
    case PipelineState::Failed: return QStringLiteral("failed");
    case PipelineState::Cancelled: return QStringLiteral("cancelled");
    }
    return {};
}

PipelineProgress::PipelineProgress(const PipelineSpec& spec)
    : m_spec(spec)
{
    for (int s = 0; s < m_spec.steps.size(); ++s) {
        const auto& forEach = m_spec.steps.at(s).forEach;
        if (forEach.isEmpty()) {
            m_instances.append(StepInstance{s});
            continue;
        }
        QList<qsizetype> sizes;
        for (const auto& [name, items] : forEach)
            sizes << items.size();
        int item = 0;
        forEachCombination(sizes, [&](const QList<qsizetype>& index) {
            StepInstance inst{s, item++};
            for (qsizetype k = 0; k < forEach.size(); ++k)
                inst.itemValues.insert(forEach.at(k).first, forEach.at(k).second.at(index.at(k)));
            m_instances.append(inst);
            return true;
        });
    }
}

QList<int> PipelineProgress::instancesOf(int step) const
{
    QList<int> out;
    for (int i = 0; i < m_instances.size(); ++i)
        if (m_instances.at(i).step == step)
            out << i;
    return out;
}

StepState PipelineProgress::stepState(int step) const
{
    bool anyRunning = false, anyWaiting = false, anyFailed = false, anyCancelled = false, allSkipped = true,
         allCached = true;
    for (int i : instancesOf(step)) {
        const StepState s = m_instances.at(i).state;
        anyRunning |= s == StepState::Running;
        anyWaiting |= s == StepState::Waiting;
        anyFailed |= s == StepState::Failed;
        anyCancelled |= s == StepState::Cancelled;
        allSkipped &= s == StepState::Skipped;
        allCached &= s == StepState::Cached;
    }
    if (anyRunning)
        return StepState::Running;
    if (anyWaiting)
        return StepState::Waiting;
    if (anyFailed)
        return StepState::Failed;
    if (anyCancelled)
        return StepState::Cancelled;
    if (allSkipped)
        return StepState::Skipped;
    if (allCached)
        return StepState::Cached;
    return StepState::Succeeded;
}

PipelineState PipelineProgress::state() const
{
    bool failed = false;
    for (int s = 0; s < m_spec.steps.size(); ++s) {
        const StepState st = stepState(s);
        if (!isEnded(st))
            return PipelineState::Running;
        failed |= st == StepState::Failed && !m_spec.steps.at(s).continueOnFailed;
    }
    if (m_cancelled)
        return PipelineState::Cancelled;
    return failed ? PipelineState::Failed : PipelineState::Succeeded;
}

QString PipelineProgress::instanceName(int instance) const
{
    const StepInstance& inst = m_instances.at(instance);
    QString name = m_spec.steps.at(inst.step).name;
    if (inst.item >= 0) {
        QStringList parts;
        for (const auto& f : m_spec.steps.at(inst.step).forEach)
            parts << f.first + u'=' + inst.itemValues.value(f.first);
        name += u'[' + parts.join(u',') + u']';
    }
    return name;
}

std::optional<QString> PipelineProgress::lookup(int instance, const QString& name) const
{
    const auto ref = parseReference(name);
    if (!ref)
        return std::nullopt;
    switch (ref->kind) {
    case Reference::Kind::Param:
        if (!m_spec.params.contains(ref->name))
            return std::nullopt;
        return m_spec.params.value(ref->name);
    case Reference::Kind::Item:
        if (!m_instances.at(instance).itemValues.contains(ref->name))
            return std::nullopt;
        return m_instances.at(instance).itemValues.value(ref->name);
    case Reference::Kind::StepOutput:
    case Reference::Kind::StepMetric: {
        int step = -1;
        for (int s = 0; s < m_spec.steps.size(); ++s)
            if (m_spec.steps.at(s).name == ref->step)
                step = s;
        if (step < 0)
            return std::nullopt;
        const QString key = ref->kind == Reference::Kind::StepOutput
                ? QStringLiteral("outputs.") + ref->name
                : QStringLiteral("metrics.%1.%2").arg(ref->name, ref->aggregate);
        const QList<int> from = instancesOf(step);
        if (m_spec.steps.at(step).forEach.isEmpty()) {
            const StepInstance& up = m_instances.at(from.front());
            if (!up.outputs.contains(key))
                return std::nullopt;
            return up.outputs.value(key);
        }
        QJsonArray gathered; // the fan-out's values in item order
        for (int i : from) {
            const StepInstance& up = m_instances.at(i);
            if (up.state == StepState::Skipped)
                continue;
            if (!up.outputs.contains(key))
                return std::nullopt;
            gathered.append(up.outputs.value(key));
        }
        return QString::fromUtf8(QJsonDocument(gathered).toJson(QJsonDocument::Compact));
    }
    }
    return std::nullopt;
}

QMap<QString, QString> PipelineProgress::valuesFor(int instance) const
{
    QMap<QString, QString> values;
    for (const Reference& r : m_spec.steps.at(m_instances.at(instance).step).references)
        if (const auto v = lookup(instance, r.text))
            values.insert(r.text, *v);
    return values;
}

QMap<QString, QString> PipelineProgress::paramsFor(int instance) const
{
    QMap<QString, QString> params;
    const StepInstance& inst = m_instances.at(instance);
    for (const Reference& r : m_spec.steps.at(inst.step).references)
        if (r.kind == Reference::Kind::Param && r.inCommand)
            params.insert(r.name, m_spec.params.value(r.name));
    for (auto it = inst.itemValues.cbegin(); it != inst.itemValues.cend(); ++it)
        params.insert(it.key(), it.value());
    return params;
}

PipelineProgress::Decision PipelineProgress::advance()
{
    Decision d;
    for (int s = 0; s < m_spec.steps.size(); ++s) {
        const StepSpec& step = m_spec.steps.at(s);
        const QList<int> mine = instancesOf(s);
        const bool waiting = std::any_of(mine.cbegin(), mine.cend(),
                [&](int i) { return m_instances.at(i).state == StepState::Waiting && !m_offered.contains(i); });
        if (!waiting)
            continue;
        const auto skipAll = [&](const QString& reason, StepState as = StepState::Skipped) {
            for (int i : mine)
                if (m_instances.at(i).state == StepState::Waiting && !m_offered.contains(i)) {
                    m_instances[i].state = as;
                    m_instances[i].reason = reason;
                    if (as == StepState::Skipped)
                        d.skipped << i;
                }
        };
        if (m_cancelled) {
            skipAll(QStringLiteral("the pipeline was cancelled"), StepState::Cancelled);
            continue;
        }
        // Wait for every upstream step to end.
        QHash<QString, StepState> up;
        bool ready = true;
        for (const QString& u : step.upstream) {
            int us = -1;
            for (int k = 0; k < m_spec.steps.size(); ++k)
                if (m_spec.steps.at(k).name == u)
                    us = k;
            up.insert(u, stepState(us));
            ready &= isEnded(up.value(u));
        }
        if (!ready)
            continue;
        // Steps whose outputs or metrics it uses must have given them; the
        // list form asks the same of every upstream step.
        QStringList needed = step.depends;
        for (const Reference& r : step.references)
            if ((r.kind == Reference::Kind::StepOutput || r.kind == Reference::Kind::StepMetric)
                    && !needed.contains(r.step))
                needed << r.step;
        if (!step.dependsIf)
            for (const QString& u : step.upstream)
                if (!needed.contains(u))
                    needed << u;
        QString blocked;
        for (const QString& u : std::as_const(needed)) {
            const StepState st = up.value(u);
            const bool continues = st == StepState::Failed && m_spec.step(u)->continueOnFailed;
            if (st == StepState::Succeeded || st == StepState::Cached || continues)
                continue;
            blocked = QStringLiteral("not run: step '%1' %2").arg(u, stepStateName(st));
            break;
        }
        if (!blocked.isEmpty()) {
            skipAll(blocked);
            continue;
        }
        if (m_stopped) {
            skipAll(m_stopReason);
            continue;
        }
        if (step.dependsIf) {
            const auto holds = step.dependsIf->evaluate([&](const QString& name) -> std::optional<QString> {
                const qsizetype dot = name.lastIndexOf(u'.');
                const StepState st = up.value(name.left(dot));
                const QString what = name.mid(dot + 1);
                bool v = false;
                if (what == u"succeeded")
                    v = st == StepState::Succeeded || st == StepState::Cached;
                else if (what == u"failed")
                    v = st == StepState::Failed;
                else if (what == u"skipped")
                    v = st == StepState::Skipped || st == StepState::Cancelled;
                else if (what == u"cached")
                    v = st == StepState::Cached;
                return v ? QStringLiteral("true") : QStringLiteral("false");
            });
            if (!holds || !*holds) {
                skipAll(holds ? QStringLiteral("not run: depends '%1' is false").arg(step.dependsIf->text())
                              : holds.error().message);
                continue;
            }
        }
        for (int i : mine) {
            if (m_instances.at(i).state != StepState::Waiting || m_offered.contains(i))
                continue;
            if (step.when) {
                const auto holds = step.when->evaluate([&](const QString& name) { return lookup(i, name); });
                if (!holds) {
                    m_instances[i].state = StepState::Failed;
                    m_instances[i].reason
                            = QStringLiteral("'when' of step '%1': %2").arg(step.name, holds.error().message);
                    d.failed << i;
                    noteFailure(i);
                    continue;
                }
                if (!*holds) {
                    m_instances[i].state = StepState::Skipped;
                    m_instances[i].reason = QStringLiteral("not run: when '%1' is false").arg(step.when->text());
                    d.skipped << i;
                    continue;
                }
            }
            m_offered.insert(i);
            d.start << i;
        }
    }
    return d;
}

QString earlyStartObstacle(const PipelineSpec& spec, int step)
{
    const StepSpec& s = spec.steps.at(step);
    if (s.upstream.isEmpty())
        return QStringLiteral("it has no upstream step");
    if (s.memoize.enabled)
        return QStringLiteral("it is memoized (its key takes its upstream steps' results)");
    for (const Reference& r : s.references)
        if (r.kind == Reference::Kind::StepOutput || r.kind == Reference::Kind::StepMetric)
            return QStringLiteral("it takes %1 from step '%2'").arg(r.text, r.step);
    if (s.dependsIf)
        return QStringLiteral("its depends is a condition");
    for (const QString& u : s.upstream) {
        const StepSpec* up = spec.step(u);
        if (!up)
            return QStringLiteral("step '%1' is unknown").arg(u);
        if (up->continueOnFailed)
            return QStringLiteral("upstream step '%1' has continue_on: failed").arg(u);
        if (up->retries)
            return QStringLiteral("upstream step '%1' has retry:").arg(u);
    }
    return {};
}

QList<int> PipelineProgress::startEarly(const std::function<bool(int instance)>& queued)
{
    QList<int> out;
    if (m_stopped || m_cancelled)
        return out;
    QHash<QString, int> stepIndex;
    for (int s = 0; s < m_spec.steps.size(); ++s)
        stepIndex.insert(m_spec.steps.at(s).name, s);
    for (int s = 0; s < m_spec.steps.size(); ++s) {
        const StepSpec& step = m_spec.steps.at(s);
        const QList<int> mine = instancesOf(s);
        if (std::none_of(mine.cbegin(), mine.cend(),
                    [&](int i) { return m_instances.at(i).state == StepState::Waiting && !m_offered.contains(i); }))
            continue;
        if (!earlyStartObstacle(m_spec, s).isEmpty())
            continue;
        // Every direct upstream instance ended well or queued in Slurm.
        bool ok = true, anyRunning = false;
        for (const QString& u : step.upstream)
            for (int i : instancesOf(stepIndex.value(u))) {
                const StepState st = m_instances.at(i).state;
                if (st == StepState::Running && m_instances.at(i).run && queued(i))
                    anyRunning = true;
                else if (st != StepState::Succeeded && st != StepState::Cached)
                    ok = false;
            }
        if (!ok || !anyRunning)
            continue;
        // No step upstream (transitively) with outputs to stage still to end.
        QList<int> order;
        QSet<int> seen{s};
        for (qsizetype k = -1; k < order.size() && ok; ++k)
            for (const QString& u : m_spec.steps.at(k < 0 ? s : order.at(k)).upstream)
                if (const int us = stepIndex.value(u, -1); us >= 0 && !seen.contains(us)) {
                    seen.insert(us);
                    order << us;
                    const StepState st = stepState(us);
                    if (!m_spec.steps.at(us).outputGlobs.isEmpty() && st != StepState::Succeeded
                            && st != StepState::Cached)
                        ok = false;
                }
        if (!ok)
            continue;
        for (int i : mine) {
            if (m_instances.at(i).state != StepState::Waiting || m_offered.contains(i))
                continue;
            if (step.when) {
                const auto holds = step.when->evaluate([&](const QString& name) { return lookup(i, name); });
                if (!holds || !*holds)
                    continue; // advance() says what it is once the upstream steps ended
            }
            m_offered.insert(i);
            out << i;
        }
    }
    return out;
}

void PipelineProgress::setRunning(int instance, RunId run)
{
    m_offered.insert(instance);
    m_instances[instance].state = StepState::Running;
    m_instances[instance].run = run;
    m_instances[instance].reason.clear(); // why it waited
}

void PipelineProgress::setNote(int instance, const QString& note)
{
    if (!isEnded(m_instances[instance].state))
        m_instances[instance].reason = note;
}

void PipelineProgress::setWaitingReason(int instance, const QString& reason)
{
    m_offered.insert(instance);
    m_instances[instance].reason = reason;
}

void PipelineProgress::setEnded(
        int instance, StepState state, const QString& reason, const QMap<QString, QString>& outputs)
{
    m_offered.insert(instance);
    StepInstance& inst = m_instances[instance];
    inst.state = state;
    inst.reason = reason;
    inst.outputs = outputs;
    if (state == StepState::Failed)
        noteFailure(instance);
}

void PipelineProgress::noteFailure(int instance)
{
    if (m_spec.failFast && !m_spec.steps.at(m_instances.at(instance).step).continueOnFailed && !m_stopped) {
        m_stopped = true;
        m_stopReason = QStringLiteral("not run: step '%1' failed and fail_fast is on").arg(instanceName(instance));
    }
}

QList<int> PipelineProgress::cancel()
{
    m_cancelled = true;
    QList<int> running;
    for (int i = 0; i < m_instances.size(); ++i) {
        StepInstance& inst = m_instances[i];
        if (inst.state == StepState::Running)
            running << i;
        else if (inst.state == StepState::Waiting) {
            inst.state = StepState::Cancelled;
            inst.reason = QStringLiteral("the pipeline was cancelled");
        }
    }
    return running;
}

} // namespace ty::pipeline
