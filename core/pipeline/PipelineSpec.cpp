#include "PipelineSpec.h"

#include "core/common/Combinations.h"

#include "core/spec/ClosestName.h"
#include "core/spec/JobSpecYaml.h"
#include "core/spec/ShellTemplate.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <yaml-cpp/yaml.h>

namespace ty::pipeline {

struct StepJob::Impl {
    YAML::Node root;     // the job spec's mapping (merged with its `uses:` file)
    QString commandText; // the document the command's marks point into
    QString origin;      // "pipe.yaml" (or "pipe.yaml (uses job.yaml)")
    QString baseDir;
};

namespace {

struct SpecError {
    QString message;
    YAML::Mark mark;
};

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

const QStringList& stepOnlyKeys()
{
    static const QStringList keys{QStringLiteral("name"), QStringLiteral("uses"), QStringLiteral("depends"),
            QStringLiteral("when"), QStringLiteral("for_each"), QStringLiteral("continue_on"),
            QStringLiteral("always_run"), QStringLiteral("memoize"), QStringLiteral("outputs"),
            QStringLiteral("inputs")};
    return keys;
}

// Job spec keys whose value is a mapping merged key by key over a `uses:` file's.
bool mergedKey(const QString& key)
{
    return key == u"env" || key == u"params" || key == u"resources";
}

const QRegularExpression& stepNamePattern()
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z_][A-Za-z0-9_-]*$"));
    return re;
}

bool boolValue(const YAML::Node& v, const QString& key)
{
    const QString b = v.IsScalar() ? qs(v.Scalar()) : QString();
    if (b == u"true" || b == u"yes" || b == u"on")
        return true;
    if (b == u"false" || b == u"no" || b == u"off")
        return false;
    throw SpecError{QStringLiteral("'%1' must be true or false").arg(key), v.Mark()};
}

QString scalar(const YAML::Node& v, const QString& key)
{
    if (!v.IsScalar())
        throw SpecError{QStringLiteral("'%1' must be a string").arg(key), v.Mark()};
    return qs(v.Scalar());
}

QStringList scalarList(const YAML::Node& v, const QString& key)
{
    if (v.IsScalar())
        return {qs(v.Scalar())};
    if (!v.IsSequence())
        throw SpecError{QStringLiteral("'%1' must be a list").arg(key), v.Mark()};
    QStringList out;
    for (const YAML::Node& e : v)
        out << scalar(e, key);
    return out;
}

// The mark `offset` characters into a plain scalar written on one line;
// the scalar's own mark for anything else (quoted, folded).
YAML::Mark markInside(const YAML::Node& v, const QString& text, int offset)
{
    YAML::Mark m = v.Mark();
    const QStringList lines = text.split(u'\n');
    if (m.line >= 0 && m.line < lines.size()) {
        const QString& line = lines.at(m.line);
        const QString value = qs(v.Scalar());
        if (line.mid(m.column, value.size()) == value)
            m.column += offset;
    }
    return m;
}

// " (did you mean 'X'?)" for a mistyped name, or nothing.
QString nearest(const QString& word, const QStringList& candidates)
{
    const QString best = closestName(word, candidates);
    return best.isEmpty() ? QString() : QStringLiteral(" (did you mean '%1'?)").arg(best);
}

class Parser {
public:
    Parser(QString origin, QString baseDir, QMap<QString, QString> overrides, FileReader readFile)
        : m_origin(std::move(origin))
        , m_baseDir(std::move(baseDir))
        , m_overrides(std::move(overrides))
        , m_readFile(std::move(readFile))
    { }

    PipelineSpec parse(const QString& text)
    {
        m_text = text;
        YAML::Node root;
        try {
            root = YAML::Load(text.toStdString());
        } catch (const YAML::ParserException& e) {
            throw SpecError{QStringLiteral("YAML syntax error: ") + qs(e.msg), e.mark};
        }
        if (!root.IsMap())
            throw SpecError{QStringLiteral("a pipeline must be a mapping with 'steps'"), root.Mark()};
        PipelineSpec spec;
        spec.yaml = text;
        std::optional<YAML::Node> steps;
        MemoizeSpec memoize;
        static const QStringList topKeys{QStringLiteral("name"), QStringLiteral("params"), QStringLiteral("fail_fast"),
                QStringLiteral("memoize"), QStringLiteral("steps"), QStringLiteral("sweep")};
        std::optional<YAML::Node> sweep;
        for (auto it = root.begin(); it != root.end(); ++it) {
            const QString key = qs(it->first.Scalar());
            const YAML::Node v = it->second;
            if (!topKeys.contains(key))
                throw SpecError{QStringLiteral("unknown pipeline key '%1'%2").arg(key, nearest(key, topKeys)),
                        it->first.Mark()};
            if (key == u"name") {
                spec.name = scalar(v, key);
            } else if (key == u"params") {
                if (!v.IsMap())
                    throw SpecError{QStringLiteral("'params' must be a mapping of names to values"), v.Mark()};
                for (auto p = v.begin(); p != v.end(); ++p) {
                    const QString name = qs(p->first.Scalar());
                    if (!stepNamePattern().match(name).hasMatch())
                        throw SpecError{QStringLiteral("param name '%1' must be letters, digits, _ and -").arg(name),
                                p->first.Mark()};
                    spec.params.insert(name, scalar(p->second, name));
                }
                m_paramsMark = v.Mark();
            } else if (key == u"fail_fast") {
                spec.failFast = boolValue(v, key);
            } else if (key == u"memoize") {
                memoize = parseMemoize(v);
            } else if (key == u"steps") {
                steps = v;
            } else if (key == u"sweep") {
                sweep = v;
            }
        }
        if (sweep) {
            // Over the pipeline's params; a param set with --param is not swept.
            if (!sweep->IsMap() || sweep->size() == 0)
                throw SpecError{QStringLiteral("'sweep' must be a mapping of params to lists: {lr: [0.001, 0.01]}"),
                        sweep->Mark()};
            for (auto f = sweep->begin(); f != sweep->end(); ++f) {
                const QString name = qs(f->first.Scalar());
                if (!spec.params.contains(name))
                    throw SpecError{QStringLiteral("'sweep' names '%1', which is not a param of the pipeline%2")
                                            .arg(name, nearest(name, spec.params.keys())),
                            f->first.Mark()};
                const QStringList values = scalarList(f->second, name);
                if (values.isEmpty())
                    throw SpecError{QStringLiteral("'sweep' list '%1' is empty").arg(name), f->second.Mark()};
                if (!m_overrides.contains(name))
                    spec.sweep.append({name, values});
            }
        }
        for (auto it = m_overrides.cbegin(); it != m_overrides.cend(); ++it) {
            if (!spec.params.contains(it.key()))
                throw SpecError{QStringLiteral("cannot set param '%1': the pipeline has no such param%2")
                                        .arg(it.key(), nearest(it.key(), spec.params.keys())),
                        YAML::Mark::null_mark()};
            spec.params.insert(it.key(), it.value());
        }
        if (!steps || !steps->IsSequence() || steps->size() == 0)
            throw SpecError{QStringLiteral("a pipeline needs 'steps': a list of at least one step"),
                    steps ? steps->Mark() : root.Mark()};
        for (const YAML::Node& s : *steps)
            spec.steps.append(parseStep(s, memoize, spec));
        if (spec.name.isEmpty())
            spec.name = QStringLiteral("pipeline");
        checkReferences(spec);
        checkCycles(spec);
        for (int i = 0; i < spec.steps.size(); ++i)
            tryInstantiate(spec, spec.steps[i], m_stepNodes.at(i));
        spec.usedFiles = m_usedFiles;
        spec.origin = m_origin;
        spec.baseDir = m_baseDir;
        return spec;
    }

private:
    MemoizeSpec parseMemoize(const YAML::Node& v)
    {
        MemoizeSpec m;
        if (v.IsScalar()) {
            m.enabled = boolValue(v, QStringLiteral("memoize"));
            return m;
        }
        if (!v.IsMap())
            throw SpecError{QStringLiteral("'memoize' must be true, false or a mapping (max_age, key_extra, ignore)"),
                    v.Mark()};
        m.enabled = true;
        static const QStringList keys{QStringLiteral("max_age"), QStringLiteral("key_extra"), QStringLiteral("ignore"),
                QStringLiteral("enabled")};
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString key = qs(it->first.Scalar());
            const YAML::Node e = it->second;
            if (key == u"max_age") {
                const auto d = parseDurationSec(scalar(e, key));
                if (!d || *d <= 0)
                    throw SpecError{QStringLiteral("'max_age' must be a duration such as 30m or 1h"), e.Mark()};
                m.maxAgeSec = *d;
            } else if (key == u"key_extra") {
                m.keyExtra = scalar(e, key);
            } else if (key == u"ignore") {
                m.ignore = scalarList(e, key);
            } else if (key == u"enabled") {
                m.enabled = boolValue(e, key);
            } else {
                throw SpecError{QStringLiteral("unknown key '%1' in 'memoize'%2").arg(key, nearest(key, keys)),
                        it->first.Mark()};
            }
        }
        return m;
    }

    StepSpec parseStep(const YAML::Node& s, const MemoizeSpec& pipelineMemoize, const PipelineSpec& spec)
    {
        if (!s.IsMap())
            throw SpecError{QStringLiteral("a step must be a mapping (name, command or uses, ...)"), s.Mark()};
        StepSpec step;
        step.line = s.Mark().line + 1;
        step.column = s.Mark().column + 1;
        step.memoize = pipelineMemoize;
        YAML::Node job(YAML::NodeType::Map);
        std::optional<YAML::Node> uses; // a default YAML::Node is a defined null
        QStringList jobKeys;
        for (auto it = s.begin(); it != s.end(); ++it) {
            const QString key = qs(it->first.Scalar());
            const YAML::Node v = it->second;
            if (!stepOnlyKeys().contains(key)) {
                jobKeys << key;
                continue; // the job parser checks these
            }
            if (key == u"name") {
                step.name = scalar(v, key);
                if (!stepNamePattern().match(step.name).hasMatch())
                    throw SpecError{
                            QStringLiteral(
                                    "step name '%1' must start with a letter or _ and hold only letters, digits, _ and -")
                                    .arg(step.name),
                            v.Mark()};
                for (const StepSpec& other : spec.steps)
                    if (other.name == step.name)
                        throw SpecError{QStringLiteral("two steps are named '%1'").arg(step.name), v.Mark()};
            } else if (key == u"uses") {
                uses = v;
            } else if (key == u"depends") {
                if (v.IsSequence()) {
                    step.depends = scalarList(v, key);
                } else {
                    const QString text = scalar(v, key);
                    auto c = Condition::parse(text);
                    if (!c)
                        throw SpecError{QStringLiteral("'depends': %1").arg(c.error().message),
                                markInside(v, m_text, c.error().offset)};
                    // A lone name is the list form's one entry.
                    if (stepNamePattern().match(text.trimmed()).hasMatch())
                        step.depends = {text.trimmed()};
                    else
                        step.dependsIf = *c;
                }
            } else if (key == u"when") {
                const QString text = scalar(v, key);
                auto c = Condition::parse(text);
                if (!c)
                    throw SpecError{QStringLiteral("'when': %1").arg(c.error().message),
                            markInside(v, m_text, c.error().offset)};
                step.when = *c;
            } else if (key == u"for_each") {
                if (!v.IsMap() || v.size() == 0)
                    throw SpecError{QStringLiteral("'for_each' must be a mapping of names to lists: {shard: [0, 1]}"),
                            v.Mark()};
                for (auto f = v.begin(); f != v.end(); ++f) {
                    const QString name = qs(f->first.Scalar());
                    const QStringList items = scalarList(f->second, name);
                    if (items.isEmpty())
                        throw SpecError{QStringLiteral("'for_each' list '%1' is empty").arg(name), f->second.Mark()};
                    step.forEach.append({name, items});
                }
            } else if (key == u"continue_on") {
                const QString what = scalar(v, key);
                if (what != u"failed")
                    throw SpecError{QStringLiteral("'continue_on' takes 'failed', got '%1'").arg(what), v.Mark()};
                step.continueOnFailed = true;
            } else if (key == u"always_run") {
                step.alwaysRun = boolValue(v, key);
            } else if (key == u"memoize") {
                step.memoize = parseMemoize(v);
            } else if (key == u"inputs") {
                step.inputs = scalarList(v, key);
                for (const QString& in : std::as_const(step.inputs))
                    if (in.isEmpty())
                        throw SpecError{QStringLiteral("'inputs' has an empty path"), v.Mark()};
            } else if (key == u"outputs") {
                parseOutputs(v, step, job);
            }
        }
        if (step.name.isEmpty())
            throw SpecError{QStringLiteral("every step needs a 'name'"), s.Mark()};
        if (step.alwaysRun)
            step.memoize.enabled = false;

        // The job spec: the `uses:` file's mapping, with this step's job keys over it.
        auto impl = std::make_shared<StepJob::Impl>();
        impl->origin = m_origin;
        impl->baseDir = m_baseDir;
        impl->commandText = m_text;
        YAML::Node base;
        if (uses) {
            const QString written = scalar(*uses, QStringLiteral("uses"));
            const QString path = QDir::cleanPath(QDir(m_baseDir).absoluteFilePath(written));
            auto text = m_readFile ? m_readFile(path) : readSpecText(path, QStringLiteral("job spec"));
            if (!text)
                throw SpecError{QStringLiteral("step '%1': %2").arg(step.name, text.error().message), uses->Mark()};
            // The used file alone first: its own errors name its own lines.
            if (auto alone = parseJobSpec(*text, path, QFileInfo(path).absolutePath());
                    !alone && !alone.error().message.contains(QStringLiteral("{{")))
                throw SpecError{
                        QStringLiteral("step '%1' uses %2").arg(step.name, alone.error().message), uses->Mark()};
            m_usedFiles.insert(path, *text);
            try {
                base = YAML::Load(text->toStdString());
            } catch (const YAML::Exception& e) {
                throw SpecError{QStringLiteral("%1: %2").arg(path, qs(e.msg)), uses->Mark()};
            }
            impl->origin = QStringLiteral("%1 (step '%2' uses %3)").arg(m_origin, step.name, path);
            impl->baseDir = QFileInfo(path).absolutePath();
            if (!jobKeys.contains(QStringLiteral("command")))
                impl->commandText = *text;
        }
        for (auto it = (base.IsMap() ? base.begin() : job.end()); base.IsMap() && it != base.end(); ++it) {
            const QString key = qs(it->first.Scalar());
            if (key == u"name")
                continue; // the step names its run
            if (jobKeys.contains(key) && !mergedKey(key))
                continue;
            if (jobKeys.contains(key) && mergedKey(key) && it->second.IsMap()) {
                YAML::Node merged(YAML::NodeType::Map);
                const YAML::Node over = s[it->first.Scalar()];
                for (auto e = it->second.begin(); e != it->second.end(); ++e)
                    if (!over.IsMap() || !over[e->first.Scalar()])
                        merged.force_insert(e->first, e->second);
                if (over.IsMap())
                    for (auto e = over.begin(); e != over.end(); ++e)
                        merged.force_insert(e->first, e->second);
                job.force_insert(it->first, merged);
                continue;
            }
            job.force_insert(it->first, it->second);
        }
        for (auto it = s.begin(); it != s.end(); ++it) {
            const QString key = qs(it->first.Scalar());
            if (!jobKeys.contains(key) || (base.IsMap() && base[it->first.Scalar()] && mergedKey(key)))
                continue;
            job.force_insert(it->first, it->second);
        }
        impl->root = job;
        step.job.d = impl;

        // References of the command and of `when`.
        const YAML::Node command = job["command"];
        QStringList words;
        if (command.IsScalar())
            words << qs(command.Scalar());
        else if (command.IsSequence())
            for (const YAML::Node& w : command)
                if (w.IsScalar())
                    words << qs(w.Scalar());
        QStringList names;
        for (const QString& w : std::as_const(words))
            for (auto m = placeholderPattern().globalMatch(w); m.hasNext();)
                names << m.next().captured(1);
        const qsizetype inCommand = names.size();
        if (step.when)
            names << step.when->names();
        for (qsizetype k = 0; k < names.size(); ++k) {
            const QString& n = names.at(k);
            if (!n.contains(u'.'))
                continue; // a param of the job spec itself
            const auto ref = parseReference(n);
            if (!ref)
                throw SpecError{QStringLiteral("step '%1': '%2' is not a reference (params.NAME, item.NAME, "
                                               "steps.STEP.outputs.NAME or steps.STEP.metrics.KEY.max|min|last|first)")
                                        .arg(step.name, n),
                        s.Mark()};
            const auto known = std::find_if(step.references.begin(), step.references.end(),
                    [&](const Reference& r) { return r.text == ref->text; });
            if (known == step.references.end()) {
                step.references.append(*ref);
                step.references.last().inCommand = k < inCommand;
            } else {
                known->inCommand |= k < inCommand;
            }
        }
        m_stepNodes.append(s);
        return step;
    }

    void parseOutputs(const YAML::Node& v, StepSpec& step, YAML::Node& /*job*/)
    {
        if (!v.IsMap())
            throw SpecError{QStringLiteral("'outputs' must be a mapping: {params: {...}}"), v.Mark()};
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString key = qs(it->first.Scalar());
            if (key != u"params")
                throw SpecError{QStringLiteral("unknown key '%1' in 'outputs' (allowed: params; files a later "
                                               "step needs are the step's 'artifacts')")
                                        .arg(key),
                        it->first.Mark()};
            const YAML::Node params = it->second;
            if (!params.IsMap())
                throw SpecError{QStringLiteral("'outputs.params' must be a mapping of names"), params.Mark()};
            for (auto p = params.begin(); p != params.end(); ++p) {
                OutputParamSpec out;
                out.name = qs(p->first.Scalar());
                if (!stepNamePattern().match(out.name).hasMatch())
                    throw SpecError{QStringLiteral("output name '%1' must be letters, digits, _ and -").arg(out.name),
                            p->first.Mark()};
                const YAML::Node o = p->second;
                if (o.IsScalar()) {
                    out.file = qs(o.Scalar());
                } else if (o.IsMap()) {
                    for (auto f = o.begin(); f != o.end(); ++f) {
                        const QString k = qs(f->first.Scalar());
                        if (k == u"file")
                            out.file = scalar(f->second, k);
                        else if (k == u"metric")
                            out.metric = scalar(f->second, k);
                        else if (k == u"aggregate")
                            out.aggregate = scalar(f->second, k);
                        else
                            throw SpecError{QStringLiteral("unknown key '%1' in output '%2' (allowed: file, metric, "
                                                           "aggregate)")
                                                    .arg(k, out.name),
                                    f->first.Mark()};
                    }
                }
                if (out.file.isEmpty() == out.metric.isEmpty())
                    throw SpecError{
                            QStringLiteral("output '%1' needs either 'file' or 'metric'").arg(out.name), o.Mark()};
                if (!out.file.isEmpty()
                        && (out.file.startsWith(u'/') || out.file.split(u'/').contains(QStringLiteral(".."))))
                    throw SpecError{QStringLiteral("output '%1': file '%2' must be relative to the step's workdir, "
                                                   "without '..'")
                                            .arg(out.name, out.file),
                            o.Mark()};
                static const QStringList aggregates{
                        QStringLiteral("last"), QStringLiteral("first"), QStringLiteral("max"), QStringLiteral("min")};
                if (!aggregates.contains(out.aggregate))
                    throw SpecError{
                            QStringLiteral("output '%1': aggregate must be last, first, max or min").arg(out.name),
                            o.Mark()};
                step.outputParams.append(out);
            }
        }
    }

    void checkReferences(PipelineSpec& spec)
    {
        QStringList names;
        for (const StepSpec& s : spec.steps)
            names << s.name;
        for (int i = 0; i < spec.steps.size(); ++i) {
            StepSpec& step = spec.steps[i];
            const YAML::Mark at = m_stepNodes.at(i).Mark();
            QStringList upstream;
            const auto needStep = [&](const QString& name, const QString& how) {
                if (name == step.name)
                    throw SpecError{QStringLiteral("step '%1' %2 itself").arg(step.name, how), at};
                if (!names.contains(name))
                    throw SpecError{QStringLiteral("step '%1' %2 '%3', which is not a step%4")
                                            .arg(step.name, how, name, nearest(name, names)),
                            at};
                if (!upstream.contains(name))
                    upstream << name;
            };
            for (const QString& d : std::as_const(step.depends))
                needStep(d, QStringLiteral("depends on"));
            if (step.dependsIf) {
                for (const QString& n : step.dependsIf->names()) {
                    const qsizetype dot = n.lastIndexOf(u'.');
                    static const QStringList states{QStringLiteral("succeeded"), QStringLiteral("failed"),
                            QStringLiteral("skipped"), QStringLiteral("cached")};
                    if (dot < 0 || !states.contains(n.mid(dot + 1)))
                        throw SpecError{QStringLiteral("step '%1': in 'depends', '%2' must be STEP.succeeded, "
                                                       "STEP.failed, STEP.skipped or STEP.cached")
                                                .arg(step.name, n),
                                at};
                    needStep(n.left(dot), QStringLiteral("depends on"));
                }
            }
            QStringList items;
            for (const auto& f : std::as_const(step.forEach))
                items << f.first;
            for (const Reference& r : std::as_const(step.references)) {
                switch (r.kind) {
                case Reference::Kind::Param:
                    if (!spec.params.contains(r.name))
                        throw SpecError{QStringLiteral("step '%1' uses %2, and the pipeline has no param '%3'%4")
                                                .arg(step.name, r.text, r.name, nearest(r.name, spec.params.keys())),
                                at};
                    break;
                case Reference::Kind::Item:
                    if (!items.contains(r.name))
                        throw SpecError{QStringLiteral("step '%1' uses %2, and its 'for_each' has no '%3'")
                                                .arg(step.name, r.text, r.name),
                                at};
                    break;
                case Reference::Kind::StepOutput: {
                    needStep(r.step, QStringLiteral("uses the outputs of"));
                    const StepSpec* from = spec.step(r.step);
                    if (std::none_of(from->outputParams.cbegin(), from->outputParams.cend(),
                                [&](const OutputParamSpec& o) { return o.name == r.name; }))
                        throw SpecError{QStringLiteral("step '%1' uses %2, and step '%3' declares no output '%4'")
                                                .arg(step.name, r.text, r.step, r.name),
                                at};
                    break;
                }
                case Reference::Kind::StepMetric: needStep(r.step, QStringLiteral("uses the metrics of")); break;
                }
            }
            step.upstream = upstream;
        }
    }

    void checkCycles(const PipelineSpec& spec)
    {
        // Depth-first, in file order; a step met again while on the path closes a cycle.
        QHash<QString, int> mark; // 0 unseen, 1 on the path, 2 done
        QStringList path;
        std::function<void(const StepSpec&)> visit = [&](const StepSpec& s) {
            mark[s.name] = 1;
            path << s.name;
            for (const QString& u : s.upstream) {
                if (mark.value(u) == 1) {
                    // The path from u back to s, in the direction work flows.
                    QStringList cycle = path.mid(path.indexOf(u));
                    cycle << u;
                    const int at = int(std::find_if(spec.steps.cbegin(), spec.steps.cend(), [&](const StepSpec& x) {
                        return x.name == u;
                    }) - spec.steps.cbegin());
                    throw SpecError{QStringLiteral("the steps form a cycle: %1 (each waits for the next)")
                                            .arg(cycle.join(QStringLiteral(" -> "))),
                            m_stepNodes.at(at).Mark()};
                }
                if (mark.value(u) == 0)
                    visit(*spec.step(u));
            }
            path.removeLast();
            mark[s.name] = 2;
        };
        for (const StepSpec& s : spec.steps)
            if (mark.value(s.name) == 0)
                visit(s);
    }

    // Each step's job spec with stand-in values: errors in it surface at submit.
    void tryInstantiate(const PipelineSpec& spec, StepSpec& step, const YAML::Node& node)
    {
        QMap<QString, QString> values, params;
        for (const Reference& r : step.references) {
            if (r.kind == Reference::Kind::Param) {
                values.insert(r.text, spec.params.value(r.name));
                if (r.inCommand)
                    params.insert(r.name, spec.params.value(r.name));
            } else if (r.kind == Reference::Kind::Item) {
                for (const auto& f : step.forEach)
                    if (f.first == r.name) {
                        values.insert(r.text, f.second.front());
                        params.insert(r.name, f.second.front());
                    }
            } else {
                values.insert(r.text, QStringLiteral("0"));
            }
        }
        auto job = step.job.instantiate(values, params);
        if (!job) {
            // Errors without a place of their own ("missing required key
            // 'command'") are placed at the step.
            const QString unplaced = step.job.d->origin + QStringLiteral(": ");
            if (job.error().message.startsWith(unplaced))
                throw SpecError{
                        QStringLiteral("step '%1': %2").arg(step.name, job.error().message.mid(unplaced.size())),
                        node.Mark()};
            throw SpecError{job.error().message, YAML::Mark::null_mark()};
        }
        step.outputGlobs = job->artifacts;
        step.retries = job->retry.has_value();
        for (const OutputParamSpec& o : step.outputParams)
            if (!o.file.isEmpty() && !step.outputGlobs.contains(o.file))
                step.outputGlobs << o.file;
    }

    QString m_origin;
    QString m_baseDir;
    QMap<QString, QString> m_overrides;
    FileReader m_readFile;
    QString m_text;
    YAML::Mark m_paramsMark = YAML::Mark::null_mark();
    QList<YAML::Node> m_stepNodes;
    QMap<QString, QString> m_usedFiles;
};

} // namespace

std::optional<Reference> parseReference(const QString& text)
{
    const QStringList parts = text.split(u'.');
    Reference r;
    r.text = text;
    if (parts.size() == 2 && parts[0] == u"params") {
        r.kind = Reference::Kind::Param;
        r.name = parts[1];
    } else if (parts.size() == 2 && parts[0] == u"item") {
        r.kind = Reference::Kind::Item;
        r.name = parts[1];
    } else if (parts.size() == 4 && parts[0] == u"steps" && parts[2] == u"outputs") {
        r.kind = Reference::Kind::StepOutput;
        r.step = parts[1];
        r.name = parts[3];
    } else if (parts.size() >= 5 && parts[0] == u"steps" && parts[2] == u"metrics") {
        // Metric keys may hold dots ("val.acc"): the last part is the aggregate.
        r.kind = Reference::Kind::StepMetric;
        r.step = parts[1];
        r.name = parts.mid(3, parts.size() - 4).join(u'.');
        r.aggregate = parts.last();
        static const QStringList aggregates{
                QStringLiteral("last"), QStringLiteral("first"), QStringLiteral("max"), QStringLiteral("min")};
        if (!aggregates.contains(r.aggregate))
            return std::nullopt;
    } else {
        return std::nullopt;
    }
    if (r.name.isEmpty() || (r.kind >= Reference::Kind::StepOutput && r.step.isEmpty()))
        return std::nullopt;
    return r;
}

Result<JobSpec> StepJob::instantiate(const QMap<QString, QString>& values, const QMap<QString, QString>& params) const
{
    YAML::Node root = d->root;
    if (!params.isEmpty()) {
        // The params the step receives join its job spec's own (theirs win).
        YAML::Node copy(YAML::NodeType::Map);
        YAML::Node merged(YAML::NodeType::Map);
        for (auto it = root.begin(); it != root.end(); ++it) {
            if (it->first.Scalar() == "params") {
                if (it->second.IsMap())
                    for (auto p = it->second.begin(); p != it->second.end(); ++p)
                        if (!params.contains(qs(p->first.Scalar())))
                            merged.force_insert(p->first, p->second);
                continue;
            }
            copy.force_insert(it->first, it->second);
        }
        for (auto it = params.cbegin(); it != params.cend(); ++it)
            merged[it.key().toStdString()] = it.value().toStdString();
        copy["params"] = merged;
        root = copy;
    }
    return parseJobSpecNode(root, d->commandText, d->origin, d->baseDir, values);
}

const StepSpec* PipelineSpec::step(const QString& name) const
{
    for (const StepSpec& s : steps)
        if (s.name == name)
            return &s;
    return nullptr;
}

Result<PipelineSpec> parsePipeline(const QString& yamlText, const QString& origin, const QString& baseDir,
        const QMap<QString, QString>& paramOverrides, const FileReader& readFile)
{
    Parser parser(origin, baseDir, paramOverrides, readFile);
    try {
        return parser.parse(yamlText);
    } catch (const SpecError& e) {
        if (e.mark.is_null())
            return fail(e.message.startsWith(origin) ? e.message : QStringLiteral("%1: %2").arg(origin, e.message),
                    ErrorKind::InvalidInput);
        return fail(
                QStringLiteral("%1:%2:%3: %4").arg(origin).arg(e.mark.line + 1).arg(e.mark.column + 1).arg(e.message),
                ErrorKind::InvalidInput);
    } catch (const YAML::Exception& e) {
        return fail(
                QStringLiteral("%1:%2:%3: %4").arg(origin).arg(e.mark.line + 1).arg(e.mark.column + 1).arg(qs(e.msg)),
                ErrorKind::InvalidInput);
    }
}

bool looksLikePipeline(const QString& yamlText)
{
    try {
        const YAML::Node root = YAML::Load(yamlText.toStdString());
        return root.IsMap() && root["steps"];
    } catch (const YAML::Exception&) {
        return false;
    }
}

Result<QList<PipelineSpec>> expandPipelineSweep(const PipelineSpec& spec)
{
    if (spec.sweep.isEmpty())
        return QList<PipelineSpec>{spec};
    qsizetype total = 1;
    QList<qsizetype> sizes;
    for (const auto& [name, values] : spec.sweep) {
        sizes << values.size();
        total *= values.size();
    }
    if (total > 1000)
        return fail(QStringLiteral("%1: the sweep makes %2 pipelines; at most 1000").arg(spec.origin).arg(total),
                ErrorKind::InvalidInput);
    QList<PipelineSpec> out;
    std::optional<Error> error;
    // The last name varies fastest, values in the order written.
    forEachCombination(sizes, [&](const QList<qsizetype>& index) {
        PipelineSpec one = spec;
        QStringList label;
        QList<std::pair<QString, QString>> picked;
        for (qsizetype d = 0; d < spec.sweep.size(); ++d) {
            const auto& [name, values] = spec.sweep.at(d);
            picked.append({name, values.at(index.at(d))});
            one.params.insert(name, values.at(index.at(d)));
            label << name + u'=' + values.at(index.at(d));
        }
        auto parsed = reparsePipeline(one); // references take the combination's values
        if (!parsed) {
            error = parsed.error();
            return false;
        }
        parsed->name = spec.name + u'[' + label.join(u',') + u']';
        parsed->sweep.clear();
        parsed->sweptParams = picked;
        out.append(*parsed);
        return true;
    });
    if (error)
        return std::unexpected(*error);
    return out;
}

Result<PipelineSpec> reparsePipeline(const PipelineSpec& spec)
{
    const QMap<QString, QString> used = spec.usedFiles;
    auto again = parsePipeline(
            spec.yaml, spec.origin, spec.baseDir, spec.params, [used](const QString& path) -> Result<QString> {
                const auto it = used.constFind(path);
                if (it == used.cend())
                    return fail(QStringLiteral("%1: not among the files the pipeline used when submitted").arg(path),
                            ErrorKind::InvalidInput);
                return *it;
            });
    if (again)
        again->sourcePath = spec.sourcePath;
    return again;
}

Result<PipelineSpec> parsePipelineFile(const QString& path, const QMap<QString, QString>& paramOverrides)
{
    return parseSpecFile<PipelineSpec>(
            path, QStringLiteral("pipeline"), [&](const QString& text, const QString& baseDir) {
                return parsePipeline(text, path, baseDir, paramOverrides);
            });
}

} // namespace ty::pipeline
