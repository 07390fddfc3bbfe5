#include "JobSpec.h"

#include "core/agentproto/CancelSignals.h"
#include "core/common/Combinations.h"

#include "ClosestName.h"
#include "JobSpecYaml.h"
#include "ShellTemplate.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QRegularExpression>
#include <QStringDecoder>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace ty {
namespace {

// Thrown only inside this file, caught in parseJobSpec: one error ends parsing.
struct SpecError {
    QString message;
    YAML::Mark mark;
};

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

class Parser {
public:
    Parser(QString origin, QString baseDir, QMap<QString, QString> overrides, QMap<QString, QString> references = {})
        : m_origin(std::move(origin))
        , m_baseDir(std::move(baseDir))
        , m_overrides(std::move(overrides))
        , m_references(std::move(references))
    { }

    JobSpec parse(const QString& text)
    {
        YAML::Node root;
        try {
            root = YAML::Load(text.toStdString());
        } catch (const YAML::ParserException& e) {
            QString message = QStringLiteral("YAML syntax error: ") + qs(e.msg);
            const QStringList lines = text.split(u'\n');
            if (e.mark.line >= 0 && e.mark.line < lines.size()) {
                const QString& bad = lines.at(e.mark.line);
                const qsizetype indentEnd = bad.indexOf(QRegularExpression(QStringLiteral("[^ \t]")));
                if (bad.left(indentEnd < 0 ? bad.size() : indentEnd).contains(u'\t'))
                    message += QStringLiteral(" (this line is indented with a tab; YAML allows spaces only)");
            }
            throw SpecError{message, e.mark};
        }
        return parseRoot(root, text);
    }

    // `text`: the document the command's marks point into (placeholder errors).
    JobSpec parseRoot(const YAML::Node& root, const QString& text)
    {
        if (!root.IsDefined() || root.IsNull())
            throw SpecError{
                    QStringLiteral("the job spec is empty: it needs at least a 'command'"), YAML::Mark::null_mark()};
        if (!root.IsMap())
            throw SpecError{QStringLiteral("a job spec must be a mapping of keys (name, command, ...), not a %1")
                                    .arg(kindName(root)),
                    root.Mark()};

        JobSpec spec;
        spec.yaml = text;
        bool haveCommand = false;
        static const QStringList topKeys{QStringLiteral("name"), QStringLiteral("command"), QStringLiteral("workdir"),
                QStringLiteral("env"), QStringLiteral("params"), QStringLiteral("resources"),
                QStringLiteral("priority"), QStringLiteral("tags"), QStringLiteral("metrics"),
                QStringLiteral("estimated_runtime"), QStringLiteral("time_limit"), QStringLiteral("queue"),
                QStringLiteral("pool"), QStringLiteral("user"), QStringLiteral("project"), QStringLiteral("sweep"),
                QStringLiteral("prefer_nodes"), QStringLiteral("avoid_nodes"), QStringLiteral("prefer_labels"),
                QStringLiteral("avoid_labels"), QStringLiteral("max_concurrent"), QStringLiteral("sync"),
                QStringLiteral("sync_limit"), QStringLiteral("artifacts"), QStringLiteral("metric_files"),
                QStringLiteral("retry"), QStringLiteral("deadline"), QStringLiteral("max_run_time"),
                QStringLiteral("slurm"), QStringLiteral("preemptible"), QStringLiteral("preemption")};
        YAML::Mark preemptionMark = YAML::Mark::null_mark();
        bool havePreemption = false;
        for (auto it = root.begin(); it != root.end(); ++it) {
            const QString key = checkKey(it->first, topKeys, QString());
            const YAML::Node v = it->second; // a copy: `it->` is a temporary proxy (yaml-cpp), a reference would dangle
            if (key == u"name") {
                spec.name = scalar(v, key);
            } else if (key == u"command") {
                haveCommand = true;
                parseCommand(v, spec);
            } else if (key == u"workdir") {
                spec.workdir = scalar(v, key);
                m_workdirMark = v.Mark();
            } else if (key == u"env") {
                spec.env = stringMap(v, key);
            } else if (key == u"params") {
                m_paramsMark = v.Mark();
                spec.params = stringMap(v, key);
            } else if (key == u"resources") {
                parseResources(v, spec.resources);
            } else if (key == u"priority") {
                spec.priority = integer(v, key, -1000000, 1000000);
            } else if (key == u"tags") {
                spec.tags = stringList(v, key);
            } else if (key == u"metrics") {
                parseMetricRules(v, spec);
            } else if (key == u"estimated_runtime") {
                spec.estimatedRuntimeSec = duration(v, key);
            } else if (key == u"time_limit") {
                spec.timeLimitSec = duration(v, key);
            } else if (key == u"retry") {
                spec.retry = parseRetry(v);
            } else if (key == u"slurm") {
                parseSlurm(v, spec.slurm);
            } else if (key == u"preemptible") {
                spec.preemptible = boolean(v, key);
            } else if (key == u"preemption") {
                havePreemption = true;
                preemptionMark = it->first.Mark();
                parsePreemption(v, spec.preemption);
            } else if (key == u"deadline" || key == u"max_run_time") {
                const qint64 sec = duration(v, key);
                if (sec <= 0)
                    throw SpecError{QStringLiteral("'%1' must be longer than 0s").arg(key), v.Mark()};
                (key == u"deadline" ? spec.deadlineSec : spec.maxRunTimeSec) = sec;
            } else if (key == u"queue") {
                spec.queue = scalar(v, key);
            } else if (key == u"pool") {
                spec.pool = scalar(v, key);
                if (spec.pool.isEmpty() || spec.pool.contains(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]"))))
                    throw SpecError{QStringLiteral("'pool' must be a pool's name (letters, digits, '.', '_', '-'), "
                                                   "got '%1'")
                                            .arg(spec.pool),
                            v.Mark()};
            } else if (key == u"user") {
                spec.user = scalar(v, key);
            } else if (key == u"project") {
                spec.project = scalar(v, key);
            } else if (key == u"prefer_nodes") {
                spec.preferNodes = stringList(v, key);
            } else if (key == u"avoid_nodes") {
                spec.avoidNodes = stringList(v, key);
            } else if (key == u"prefer_labels") {
                spec.preferLabels = stringList(v, key);
            } else if (key == u"avoid_labels") {
                spec.avoidLabels = stringList(v, key);
            } else if (key == u"sweep") {
                parseSweep(v, spec);
            } else if (key == u"max_concurrent") {
                m_maxConcurrentMark = v.Mark();
                spec.maxConcurrent = int(integer(v, key, 0, 100000));
            } else if (key == u"sync") {
                const QString b = scalar(v, key);
                if (b == u"true" || b == u"yes" || b == u"on")
                    spec.sync = true;
                else if (b == u"false" || b == u"no" || b == u"off")
                    spec.sync = false;
                else
                    throw SpecError{QStringLiteral("'sync' must be true or false, got '%1'").arg(b), v.Mark()};
            } else if (key == u"sync_limit") {
                spec.syncLimitMiB = size(v, key);
                if (spec.syncLimitMiB <= 0)
                    throw SpecError{QStringLiteral("'sync_limit' must be more than 0"), v.Mark()};
            } else if (key == u"metric_files") {
                parseMetricFiles(v, spec);
            } else if (key == u"artifacts") {
                spec.artifacts = stringList(v, key);
                for (const QString& g : std::as_const(spec.artifacts)) {
                    if (g.isEmpty() || g.startsWith(u'/'))
                        throw SpecError{
                                QStringLiteral("artifact glob '%1' must be a relative path (to the run's workdir)")
                                        .arg(g),
                                v.Mark()};
                    if (g.split(u'/').contains(QStringLiteral("..")))
                        throw SpecError{
                                QStringLiteral(
                                        "artifact glob '%1' must not contain '..': artifacts come from inside the run's workdir")
                                        .arg(g),
                                v.Mark()};
                }
            }
        }
        if (!haveCommand)
            throw SpecError{QStringLiteral("missing required key 'command' (a list of arguments or a shell string)"),
                    root.Mark()};
        if (havePreemption && !spec.preemptible)
            throw SpecError{QStringLiteral("'preemption' says how a preemptible run is stopped, and this run is not "
                                           "preemptible: add 'preemptible: true'"),
                    preemptionMark};

        for (auto it = spec.sweep.cbegin(); it != spec.sweep.cend(); ++it)
            if (!spec.params.contains(it.key()))
                spec.params.insert(it.key(), it.value().front());
        if (spec.maxConcurrent && spec.sweep.isEmpty())
            throw SpecError{QStringLiteral("'max_concurrent' limits the runs of a 'sweep', and this spec has none"),
                    m_maxConcurrentMark};
        for (auto it = m_overrides.cbegin(); it != m_overrides.cend(); ++it) {
            if (!spec.params.contains(it.key()))
                throw SpecError{QStringLiteral("cannot set param '%1': the job spec has no such param").arg(it.key()),
                        YAML::Mark::null_mark()};
            spec.params.insert(it.key(), it.value());
        }
        substituteParams(spec);
        resolveWorkdir(spec);
        if (spec.name.isEmpty())
            spec.name = defaultName(spec);
        QMap<QString, QString> envNames; // variable -> param, to catch clashes (lr and LR)
        for (auto it = spec.params.cbegin(); it != spec.params.cend(); ++it) {
            QString var = QStringLiteral("TRAINYARD_PARAM_") + it.key().toUpper();
            var.replace(u'.', u'_').replace(u'-', u'_'); // a valid shell variable name
            if (envNames.contains(var))
                throw SpecError{QStringLiteral("params '%1' and '%2' would both be exported as %3: rename one")
                                        .arg(envNames.value(var), it.key(), var),
                        m_paramsMark};
            envNames.insert(var, it.key());
            spec.env.insert(var, it.value());
        }
        return spec;
    }

private:
    static QString kindName(const YAML::Node& n)
    {
        switch (n.Type()) {
        case YAML::NodeType::Map: return QStringLiteral("mapping");
        case YAML::NodeType::Sequence: return QStringLiteral("list");
        case YAML::NodeType::Scalar: return QStringLiteral("scalar");
        case YAML::NodeType::Null: return QStringLiteral("null");
        default: return QStringLiteral("undefined value");
        }
    }

    QString checkKey(const YAML::Node& keyNode, const QStringList& allowed, const QString& section)
    {
        if (!keyNode.IsScalar())
            throw SpecError{QStringLiteral("keys must be plain names"), keyNode.Mark()};
        const QString key = qs(keyNode.Scalar());
        if (allowed.contains(key)) {
            if (m_seen.contains(section + u'.' + key))
                throw SpecError{QStringLiteral("duplicate key '%1'").arg(key), keyNode.Mark()};
            m_seen.append(section + u'.' + key);
            return key;
        }
        const QString best = closestName(key, allowed);
        QString where = section.isEmpty() ? QString() : QStringLiteral(" in '%1'").arg(section);
        QString msg = QStringLiteral("unknown key '%1'%2").arg(key, where);
        if (!best.isEmpty())
            msg += QStringLiteral(" (did you mean '%1'?)").arg(best);
        else
            msg += QStringLiteral(" (allowed: %1)").arg(allowed.join(QStringLiteral(", ")));
        throw SpecError{msg, keyNode.Mark()};
    }

    static QString scalar(const YAML::Node& v, const QString& key)
    {
        if (!v.IsScalar())
            throw SpecError{QStringLiteral("'%1' must be a string, not a %2").arg(key, kindName(v)), v.Mark()};
        return qs(v.Scalar());
    }

    static qint64 integer(const YAML::Node& v, const QString& key, qint64 min, qint64 max)
    {
        if (!v.IsScalar())
            throw SpecError{QStringLiteral("'%1' must be an integer, not a %2").arg(key, kindName(v)), v.Mark()};
        bool ok = false;
        const qint64 n = qs(v.Scalar()).toLongLong(&ok);
        if (!ok)
            throw SpecError{QStringLiteral("'%1' must be an integer, got '%2'").arg(key, qs(v.Scalar())), v.Mark()};
        if (n < min || n > max)
            throw SpecError{QStringLiteral("'%1' must be between %2 and %3, got %4").arg(key).arg(min).arg(max).arg(n),
                    v.Mark()};
        return n;
    }

    static qint64 size(const YAML::Node& v, const QString& key)
    {
        const QString text = scalar(v, key);
        const auto mib = parseSizeMiB(text);
        if (!mib)
            throw SpecError{QStringLiteral("'%1' must be a size such as 40GiB, 512M or a number of MiB, got '%2'")
                                    .arg(key, text),
                    v.Mark()};
        return *mib;
    }

    static qint64 duration(const YAML::Node& v, const QString& key)
    {
        const QString text = scalar(v, key);
        const auto sec = parseDurationSec(text);
        if (!sec)
            throw SpecError{
                    QStringLiteral("'%1' must be a duration such as 90s, 30m, 2h or 1h30m, got '%2'").arg(key, text),
                    v.Mark()};
        return *sec;
    }

    static QStringList stringList(const YAML::Node& v, const QString& key)
    {
        if (v.IsScalar())
            return {qs(v.Scalar())};
        if (!v.IsSequence())
            throw SpecError{QStringLiteral("'%1' must be a list of strings, not a %2").arg(key, kindName(v)), v.Mark()};
        QStringList out;
        for (const auto& item : v) {
            if (!item.IsScalar())
                throw SpecError{
                        QStringLiteral("every item of '%1' must be a string, not a %2").arg(key, kindName(item)),
                        item.Mark()};
            out.append(qs(item.Scalar()));
        }
        return out;
    }

    QMap<QString, QString> stringMap(const YAML::Node& v, const QString& key)
    {
        if (v.IsNull())
            return {};
        if (!v.IsMap())
            throw SpecError{QStringLiteral("'%1' must be a mapping of names to values, not a %2").arg(key, kindName(v)),
                    v.Mark()};
        static const QRegularExpression nameRe(QStringLiteral("^[A-Za-z_][A-Za-z0-9_.-]*$"));
        QMap<QString, QString> out;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!it->first.IsScalar() || !nameRe.match(qs(it->first.Scalar())).hasMatch())
                throw SpecError{QStringLiteral("'%1' names must be identifiers (letters, digits, _ . -)").arg(key),
                        it->first.Mark()};
            const QString name = qs(it->first.Scalar());
            if (out.contains(name))
                throw SpecError{QStringLiteral("duplicate name '%1' in '%2'").arg(name, key), it->first.Mark()};
            if (!it->second.IsScalar())
                throw SpecError{QStringLiteral("value of '%1.%2' must be a string or number, not a %3")
                                        .arg(key, name, kindName(it->second)),
                        it->second.Mark()};
            out.insert(name, qs(it->second.Scalar()));
        }
        return out;
    }

    static double number(const YAML::Node& v, const QString& key)
    {
        if (!v.IsScalar())
            throw SpecError{QStringLiteral("'%1' must be a number, not a %2").arg(key, kindName(v)), v.Mark()};
        bool ok = false;
        const double x = qs(v.Scalar()).toDouble(&ok);
        if (!ok || !std::isfinite(x))
            throw SpecError{QStringLiteral("'%1' must be a number, got '%2'").arg(key, qs(v.Scalar())), v.Mark()};
        return x;
    }

    // `retry: 3`, or `retry: {limit, on, backoff: {duration, factor, max},
    // jitter, infra_limit}` (core/retry/RetryPolicy.h: rules and defaults).
    RetryPolicy parseRetry(const YAML::Node& v)
    {
        RetryPolicy policy;
        if (v.IsNull())
            return policy;
        const QString shape = QStringLiteral(
                "'retry' must be a number of retries (retry: 3) or a mapping (limit, on, backoff, jitter, infra_limit)");
        if (v.IsScalar()) {
            bool ok = false;
            qs(v.Scalar()).toLongLong(&ok);
            if (!ok)
                throw SpecError{QStringLiteral("%1, got '%2'").arg(shape, qs(v.Scalar())), v.Mark()};
            policy.limit = int(integer(v, QStringLiteral("retry"), 0, RetryPolicy::kMaxLimit));
            return policy;
        }
        if (!v.IsMap())
            throw SpecError{QStringLiteral("%1, not a %2").arg(shape, kindName(v)), v.Mark()};
        static const QStringList keys{QStringLiteral("limit"), QStringLiteral("on"), QStringLiteral("backoff"),
                QStringLiteral("jitter"), QStringLiteral("infra_limit")};
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString key = checkKey(it->first, keys, QStringLiteral("retry"));
            const YAML::Node value = it->second; // a copy: `it->` is a temporary proxy
            const QString full = QStringLiteral("retry.") + key;
            if (key == u"limit") {
                policy.limit = int(integer(value, full, 0, RetryPolicy::kMaxLimit));
            } else if (key == u"on") {
                // A null's mark is the next token's: name the key instead.
                policy.on = parseRetryOn(value, value.IsNull() ? it->first.Mark() : value.Mark());
            } else if (key == u"backoff") {
                policy.backoff = parseBackoff(value);
            } else if (key == u"jitter") {
                policy.jitter = number(value, full);
                if (policy.jitter < 0 || policy.jitter > 1)
                    throw SpecError{
                            QStringLiteral("'retry.jitter' must be between 0 and 1 (a fraction of each wait), got %1")
                                    .arg(qs(value.Scalar())),
                            value.Mark()};
            } else if (key == u"infra_limit") {
                bool isNumber = false;
                if (value.IsScalar())
                    qs(value.Scalar()).toLongLong(&isNumber);
                if (value.IsScalar() && value.Scalar() == "unlimited")
                    policy.infraLimit.reset();
                else if (value.IsScalar() && !isNumber)
                    throw SpecError{
                            QStringLiteral("'retry.infra_limit' must be a number of retries or 'unlimited', got '%1'")
                                    .arg(qs(value.Scalar())),
                            value.Mark()};
                else
                    policy.infraLimit = int(integer(value, full, 0, RetryPolicy::kMaxLimit));
            }
        }
        return policy;
    }

    QList<RetryClass> parseRetryOn(const YAML::Node& v, const YAML::Mark& mark)
    {
        if (!v.IsScalar() && !v.IsSequence())
            throw SpecError{
                    QStringLiteral("'retry.on' must be a list of classes like [failed, oom] ([] for none), not a %1")
                            .arg(kindName(v)),
                    mark};
        QList<RetryClass> out;
        const auto add = [&out](const YAML::Node& item) {
            if (!item.IsScalar())
                throw SpecError{
                        QStringLiteral("every item of 'retry.on' must be a class name, not a %1").arg(kindName(item)),
                        item.Mark()};
            const QString name = qs(item.Scalar());
            const RetryClass cls = retryOnClass(name, item.Mark());
            if (out.contains(cls))
                throw SpecError{QStringLiteral("'%1' is listed twice in 'retry.on'").arg(name), item.Mark()};
            out << cls;
        };
        if (v.IsScalar())
            add(v);
        else
            for (const auto& item : v)
                add(item);
        return out;
    }

    static bool boolean(const YAML::Node& v, const QString& key)
    {
        const QString b = scalar(v, key);
        if (b == u"true" || b == u"yes" || b == u"on")
            return true;
        if (b == u"false" || b == u"no" || b == u"off")
            return false;
        throw SpecError{QStringLiteral("'%1' must be true or false, got '%2'").arg(key, b), v.Mark()};
    }

    // `preemption: {signal: SIGTERM, grace: 30s}` (JobSpec::Preemption).
    void parsePreemption(const YAML::Node& v, JobSpec::Preemption& out)
    {
        if (!v.IsMap())
            throw SpecError{QStringLiteral("'preemption' must be a mapping (signal, grace), not a %1").arg(kindName(v)),
                    v.Mark()};
        static const QStringList keys{QStringLiteral("signal"), QStringLiteral("grace")};
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString key = checkKey(it->first, keys, QStringLiteral("preemption"));
            const YAML::Node value = it->second; // a copy: `it->` is a temporary proxy
            const QString full = QStringLiteral("preemption.") + key;
            if (key == u"grace") {
                out.graceSec = duration(value, full);
                if (out.graceSec < 0 || out.graceSec > 86400)
                    throw SpecError{QStringLiteral("'preemption.grace' must be between 0s and 1d"), value.Mark()};
                continue;
            }
            const QString name = scalar(value, full);
            if (!agentproto::cancelSignalNumber(name.toStdString())) {
                QStringList allowed;
                for (const agentproto::CancelSignal& s : agentproto::kCancelSignals)
                    allowed << QString::fromLatin1(s.name.data(), qsizetype(s.name.size()));
                QString msg = QStringLiteral("'preemption.signal' must be one of %1, got '%2'")
                                      .arg(allowed.join(QStringLiteral(", ")), name);
                if (allowed.contains(QStringLiteral("SIG") + name.toUpper()))
                    msg += QStringLiteral(" (did you mean 'SIG%1'?)").arg(name.toUpper());
                throw SpecError{msg, value.Mark()};
            }
            out.signal = name;
        }
    }

    // `slurm: {partition, account, qos, constraint, gpu_type, signal_grace, sbatch}`.
    void parseSlurm(const YAML::Node& v, JobSpec::SlurmOptions& out)
    {
        if (!v.IsMap())
            throw SpecError{QStringLiteral("'slurm' must be a mapping (partition, account, qos, constraint, gpu_type, "
                                           "signal_grace, sbatch), not a %1")
                                    .arg(kindName(v)),
                    v.Mark()};
        static const QStringList keys{QStringLiteral("partition"), QStringLiteral("account"), QStringLiteral("qos"),
                QStringLiteral("constraint"), QStringLiteral("gpu_type"), QStringLiteral("signal_grace"),
                QStringLiteral("sbatch")};
        static const QRegularExpression slurmWord(QStringLiteral("^[A-Za-z0-9._+:-]{1,128}$"));
        // What Trainyard sets itself: the run's console, name, directory and
        // allocation come from the job spec, never from extra options.
        static const QStringList reserved{QStringLiteral("--output"), QStringLiteral("--error"),
                QStringLiteral("--open-mode"), QStringLiteral("--job-name"), QStringLiteral("--chdir"),
                QStringLiteral("--parsable"), QStringLiteral("--wrap"), QStringLiteral("--export"),
                QStringLiteral("--partition"), QStringLiteral("--account"), QStringLiteral("--qos"),
                QStringLiteral("--gres"), QStringLiteral("--gpus"), QStringLiteral("--cpus-per-task"),
                QStringLiteral("--mem"), QStringLiteral("--time"), QStringLiteral("--nodes"), QStringLiteral("--array"),
                QStringLiteral("--dependency"), QStringLiteral("--signal"), QStringLiteral("--input"),
                QStringLiteral("--wait"), QStringLiteral("--test-only")};
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString key = checkKey(it->first, keys, QStringLiteral("slurm"));
            const YAML::Node value = it->second;
            const QString full = QStringLiteral("slurm.") + key;
            if (key == u"signal_grace") {
                out.signalGraceSec = duration(value, full);
                if (out.signalGraceSec <= 0 || out.signalGraceSec > 65535)
                    throw SpecError{QStringLiteral("'slurm.signal_grace' must be between 1s and 65535s"), value.Mark()};
                continue;
            }
            if (key == u"sbatch") {
                out.sbatch = stringList(value, full);
                for (const QString& arg : std::as_const(out.sbatch)) {
                    if (!arg.startsWith(QStringLiteral("--")) || arg.size() < 3 || arg.contains(u'\n'))
                        throw SpecError{QStringLiteral("'slurm.sbatch' takes long options (\"--exclusive\", "
                                                       "\"--reservation=x\"), one per item, not '%1'")
                                                .arg(arg),
                                value.Mark()};
                    QString name = arg.section(u'=', 0, 0);
                    // sbatch takes an unambiguous prefix of an option too ("--out").
                    for (const QString& r : reserved)
                        if (r.startsWith(name) && name.size() >= 4)
                            name = r;
                    if (reserved.contains(name))
                        throw SpecError{
                                QStringLiteral("'slurm.sbatch' cannot set %1: Trainyard sets it from the job "
                                               "spec%2")
                                        .arg(name,
                                                name == u"--partition" || name == u"--account" || name == u"--qos"
                                                        ? QStringLiteral(" (slurm.%1)").arg(name.mid(2))
                                                        : QString()),
                                value.Mark()};
                }
                continue;
            }
            // A constraint is an expression of node features ("a100&ib", "[rack1|rack2]").
            static const QRegularExpression constraintExpr(QStringLiteral("^[A-Za-z0-9._+:&|*()\\[\\]-]{1,256}$"));
            const QString word = scalar(value, full);
            if (!(key == u"constraint" ? constraintExpr : slurmWord).match(word).hasMatch())
                throw SpecError{QStringLiteral("'%1' must be a Slurm name (letters, digits, . _ + : -), got '%2'")
                                        .arg(full, word),
                        value.Mark()};
            (key == u"partition"                 ? out.partition
                            : key == u"account"  ? out.account
                            : key == u"qos"      ? out.qos
                            : key == u"gpu_type" ? out.gpuType
                                                 : out.constraint)
                    = word;
        }
    }

    // A name of `retry.on`; spec errors for the names that cannot stand there.
    static RetryClass retryOnClass(const QString& name, const YAML::Mark& mark)
    {
        if (const auto cls = retryClassFromName(name)) {
            switch (*cls) {
            case RetryClass::Succeeded:
                throw SpecError{
                        QStringLiteral("'succeeded' cannot be in 'retry.on': a run that succeeded is not retried"),
                        mark};
            case RetryClass::Cancelled:
                throw SpecError{
                        QStringLiteral("'cancelled' cannot be in 'retry.on': a cancel is the user's, never retried"),
                        mark};
            case RetryClass::Unschedulable:
                throw SpecError{QStringLiteral("'unschedulable' cannot be in 'retry.on': no node could ever hold the "
                                               "run, nor a retry of it"),
                        mark};
            default: return *cls;
            }
        }
        // The name `ls`, `show` and --json give a run's failure kind, where
        // `retry.on` names its class.
        if (const auto kind = failureKindFromName(name); kind && *kind != FailureKind::None) {
            const RetryClass cls = retryClassOf(*kind);
            throw SpecError{QStringLiteral("'%1' is a failure kind; 'retry.on' names its class, '%2'%3")
                                    .arg(name, retryClassName(cls),
                                            cls == RetryClass::Failed
                                                    ? QStringLiteral(" (exit code, traceback, failed start, other)")
                                                    : QString()),
                    mark};
        }
        QStringList retryable;
        for (const QString& n : retryClassNames())
            if (!isNeverRetried(*retryClassFromName(n)))
                retryable << n;
        const QString best = closestName(name, retryable);
        throw SpecError{
                QStringLiteral("unknown class '%1' in 'retry.on' %2")
                        .arg(name,
                                best.isEmpty() ? QStringLiteral("(known: %1)").arg(retryable.join(QStringLiteral(", ")))
                                               : QStringLiteral("(did you mean '%1'?)").arg(best)),
                mark};
    }

    RetryBackoff parseBackoff(const YAML::Node& v)
    {
        if (!v.IsMap())
            throw SpecError{QStringLiteral("'retry.backoff' must be a mapping (duration, factor, max), not a %1")
                                    .arg(kindName(v)),
                    v.Mark()};
        RetryBackoff b;
        std::optional<YAML::Mark> durationMark, maxMark;
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString key
                    = checkKey(it->first, {QStringLiteral("duration"), QStringLiteral("factor"), QStringLiteral("max")},
                            QStringLiteral("retry.backoff"));
            const YAML::Node value = it->second; // a copy: `it->` is a temporary proxy
            const QString full = QStringLiteral("retry.backoff.") + key;
            if (key == u"duration") {
                b.durationMs = duration(value, full) * 1000;
                durationMark = value.Mark();
            } else if (key == u"factor") {
                b.factor = number(value, full);
                if (b.factor < 1)
                    throw SpecError{QStringLiteral("'retry.backoff.factor' must be at least 1 (1: the same wait each "
                                                   "time), got %1")
                                            .arg(qs(value.Scalar())),
                            value.Mark()};
            } else if (key == u"max") {
                b.maxMs = duration(value, full) * 1000;
                maxMark = value.Mark();
            }
        }
        if (!maxMark)
            b.maxMs = std::max(b.maxMs, b.durationMs); // a longer duration alone is a constant wait, not an error
        else if (b.maxMs < b.durationMs)
            throw SpecError{QStringLiteral("'retry.backoff.max' (%1) is shorter than 'retry.backoff.duration' (%2%3): "
                                           "the first wait would pass the cap")
                                    .arg(retryDurationText(b.maxMs), retryDurationText(b.durationMs),
                                            durationMark ? QString() : QStringLiteral(", its default")),
                    *maxMark};
        return b;
    }

    void parseCommand(const YAML::Node& v, JobSpec& spec)
    {
        m_commandMark = v.Mark();
        if (v.IsScalar()) {
            const QString cmd = qs(v.Scalar()).trimmed();
            if (cmd.isEmpty())
                throw SpecError{QStringLiteral("'command' is empty"), v.Mark()};
            spec.argv = {QStringLiteral("/bin/sh"), QStringLiteral("-c"), cmd};
            spec.shellCommand = true;
            return;
        }
        if (v.IsSequence()) {
            spec.argv = stringList(v, QStringLiteral("command"));
            if (spec.argv.isEmpty() || spec.argv.front().isEmpty())
                throw SpecError{QStringLiteral("'command' needs at least the program to run"), v.Mark()};
            return;
        }
        throw SpecError{
                QStringLiteral("'command' must be a list of arguments or a shell string, not a %1").arg(kindName(v)),
                v.Mark()};
    }

    void parseSweep(const YAML::Node& v, JobSpec& spec)
    {
        if (!v.IsMap())
            throw SpecError{
                    QStringLiteral(
                            "'sweep' must be a mapping of param names to lists of values, like {lr: [0.001, 0.01]}"),
                    v.Mark()};
        const QMap<QString, QString> names = stringMapKeysOnly(v);
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString name = qs(it->first.Scalar());
            const QStringList values = stringList(it->second, QStringLiteral("sweep.") + name);
            if (values.isEmpty())
                throw SpecError{QStringLiteral("'sweep.%1' needs at least one value").arg(name), it->second.Mark()};
            spec.sweep.insert(name, values);
        }
        Q_UNUSED(names);
    }

    // Checks that a mapping's keys are identifiers, without looking at values.
    QMap<QString, QString> stringMapKeysOnly(const YAML::Node& v)
    {
        static const QRegularExpression nameRe(QStringLiteral("^[A-Za-z_][A-Za-z0-9_.-]*$"));
        QMap<QString, QString> out;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!it->first.IsScalar() || !nameRe.match(qs(it->first.Scalar())).hasMatch())
                throw SpecError{
                        QStringLiteral("'sweep' names must be identifiers (letters, digits, _ . -)"), it->first.Mark()};
            out.insert(qs(it->first.Scalar()), QString());
        }
        return out;
    }

    void parseResources(const YAML::Node& v, ResourceRequest& r)
    {
        if (v.IsNull())
            return;
        if (!v.IsMap())
            throw SpecError{
                    QStringLiteral(
                            "'resources' must be a mapping (gpus, gpu_memory, gpu_type, cpus, memory, nodes), not a %1")
                            .arg(kindName(v)),
                    v.Mark()};
        static const QStringList keys{QStringLiteral("gpus"), QStringLiteral("gpu_memory"), QStringLiteral("gpu_type"),
                QStringLiteral("cpus"), QStringLiteral("memory"), QStringLiteral("nodes")};
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString key = checkKey(it->first, keys, QStringLiteral("resources"));
            const YAML::Node value = it->second; // a copy: `it->` is a temporary proxy
            const QString full = QStringLiteral("resources.") + key;
            if (key == u"gpus")
                r.gpus = int(integer(value, full, 0, 64));
            else if (key == u"gpu_memory")
                r.gpuMemoryMiB = size(value, full);
            else if (key == u"gpu_type") {
                r.gpuType = scalar(value, full);
                const QRegularExpression re(r.gpuType);
                if (!re.isValid())
                    throw SpecError{
                            QStringLiteral("'%1' is not a valid regular expression: %2").arg(full, re.errorString()),
                            value.Mark()};
            } else if (key == u"cpus")
                r.cpus = int(integer(value, full, 0, 4096));
            else if (key == u"memory")
                r.memoryMiB = size(value, full);
            else if (key == u"nodes")
                parseNodes(value, full, r);
        }
    }

    // `nodes: 4` (a fixed gang) or `nodes: {min: 1, max: 4}` (an elastic one).
    void parseNodes(const YAML::Node& v, const QString& full, ResourceRequest& r)
    {
        if (!v.IsMap()) {
            if (!v.IsScalar())
                throw SpecError{QStringLiteral("'%1' must be an integer or a mapping {min: M, max: N}, not a %2")
                                        .arg(full, kindName(v)),
                        v.Mark()};
            r.nodes = int(integer(v, full, 1, 1024));
            r.nodesMax = 0;
            return;
        }
        static const QStringList keys{QStringLiteral("min"), QStringLiteral("max")};
        std::optional<int> min;
        std::optional<int> max;
        for (auto it = v.begin(); it != v.end(); ++it) {
            const QString key = checkKey(it->first, keys, full);
            const YAML::Node value = it->second;
            (key == u"min" ? min : max) = int(integer(value, full + u'.' + key, 1, 1024));
        }
        if (!min || !max)
            throw SpecError{QStringLiteral("'%1' as a mapping needs both 'min' and 'max' (an elastic gang, e.g. "
                                           "{min: 1, max: 4}); for a fixed gang write a number")
                                    .arg(full),
                    v.Mark()};
        if (*min > *max)
            throw SpecError{QStringLiteral("'%1.min' (%2) must not be greater than '%1.max' (%3)")
                                    .arg(full)
                                    .arg(*min)
                                    .arg(*max),
                    v.Mark()};
        r.nodes = *min;
        r.nodesMax = *max;
    }

    void parseMetricRules(const YAML::Node& v, JobSpec& spec)
    {
        if (v.IsNull())
            return;
        if (!v.IsSequence())
            throw SpecError{
                    QStringLiteral("'metrics' must be a list of rules like {key: loss, regex: 'loss=(?<value>\\S+)'}"),
                    v.Mark()};
        int index = 0;
        for (const auto& item : v) {
            const QString section = QStringLiteral("metrics[%1]").arg(index++);
            if (!item.IsMap())
                throw SpecError{
                        QStringLiteral("'%1' must be a mapping with 'regex' (and 'key')").arg(section), item.Mark()};
            MetricRuleSpec rule;
            rule.line = item.Mark().line + 1;
            rule.column = item.Mark().column + 1;
            YAML::Mark regexMark = item.Mark();
            bool haveRegex = false;
            for (auto it = item.begin(); it != item.end(); ++it) {
                const QString key = checkKey(it->first, {QStringLiteral("key"), QStringLiteral("regex")}, section);
                if (key == u"key") {
                    rule.key = scalar(it->second, section + QStringLiteral(".key"));
                } else {
                    rule.regex = scalar(it->second, section + QStringLiteral(".regex"));
                    regexMark = it->second.Mark();
                    haveRegex = true;
                }
            }
            if (!haveRegex)
                throw SpecError{QStringLiteral("'%1' needs a 'regex'").arg(section), item.Mark()};
            const QRegularExpression re(rule.regex);
            if (!re.isValid())
                throw SpecError{QStringLiteral("'%1.regex' is not a valid regular expression: %2 (at offset %3)")
                                        .arg(section, re.errorString())
                                        .arg(re.patternErrorOffset()),
                        regexMark};
            const QStringList groups = re.namedCaptureGroups();
            if (!groups.contains(QStringLiteral("value")))
                throw SpecError{
                        QStringLiteral("'%1.regex' needs a named group (?<value>...) for the number").arg(section),
                        regexMark};
            if (rule.key.isEmpty() && !groups.contains(QStringLiteral("key")))
                throw SpecError{
                        QStringLiteral("'%1' needs a 'key' or a named group (?<key>...) in its regex").arg(section),
                        item.Mark()};
            spec.metricRules.append(rule);
        }
    }

    // `metric_files: [globs]`: files the run writes metrics to (Lightning's
    // metrics.csv, TensorBoard event files, trainer_state.json, *.jsonl),
    // relative to the run's workdir on the node. `*`, `?` and `[...]` match
    // within one path component, `**` any number of directories.
    void parseMetricFiles(const YAML::Node& v, JobSpec& spec)
    {
        if (v.IsNull())
            return;
        if (!v.IsSequence() && !v.IsScalar())
            throw SpecError{
                    QStringLiteral(
                            "'metric_files' must be a list of globs like [lightning_logs/*/metrics.csv], not a %1")
                            .arg(kindName(v)),
                    v.Mark()};
        const auto check = [&spec](const YAML::Node& item) {
            if (!item.IsScalar())
                throw SpecError{QStringLiteral("every item of 'metric_files' must be a glob string, not a %1")
                                        .arg(kindName(item)),
                        item.Mark()};
            const QString g = qs(item.Scalar());
            if (g.isEmpty())
                throw SpecError{QStringLiteral("'metric_files' has an empty glob"), item.Mark()};
            if (g.startsWith(u'/'))
                throw SpecError{
                        QStringLiteral("metric file glob '%1' must be relative to the run's workdir, not absolute")
                                .arg(g),
                        item.Mark()};
            if (g.split(u'/').contains(QStringLiteral("..")))
                throw SpecError{
                        QStringLiteral(
                                "metric file glob '%1' must not contain '..': metric files come from inside the run's workdir")
                                .arg(g),
                        item.Mark()};
            spec.metricFiles.append(g);
        };
        if (v.IsScalar()) {
            check(v);
            return;
        }
        for (const auto& item : v)
            check(item);
    }

    // Which argument of a list command a shell runs as code: `[bash, -c, STRING, ...]`,
    // also after `env [NAME=value...]` and with combined flags (`-lc`, `-ec`). -1: none.
    static qsizetype shellStringIndex(const QStringList& argv)
    {
        static const QStringList shells{QStringLiteral("sh"), QStringLiteral("bash"), QStringLiteral("dash"),
                QStringLiteral("ash"), QStringLiteral("ksh"), QStringLiteral("mksh"), QStringLiteral("zsh"),
                QStringLiteral("busybox")};
        qsizetype i = 0;
        if (QFileInfo(argv.value(0)).fileName() == u"env") {
            ++i;
            while (i < argv.size() && (argv.at(i).contains(u'=') || argv.at(i).startsWith(u'-')))
                ++i;
        }
        if (i >= argv.size() || !shells.contains(QFileInfo(argv.at(i)).fileName()))
            return -1;
        if (QFileInfo(argv.at(i)).fileName() == u"busybox" && ++i < argv.size() && !shells.contains(argv.at(i)))
            return -1;
        bool sawC = false;
        for (++i; i < argv.size(); ++i) {
            const QString& a = argv.at(i);
            if (a == u"--") {
                ++i;
                break;
            }
            if (a.startsWith(u"--"))
                continue; // bash long options (--norc, --login)
            if (!a.startsWith(u'-') && !a.startsWith(u'+'))
                break;
            if (a.mid(1).contains(u'c'))
                sawC = true;
            if (a.endsWith(u'o') || a.endsWith(u'O'))
                ++i; // -o pipefail: the option's argument
        }
        return sawC && i < argv.size() ? i : -1;
    }

    // Line and column (0-based) of the `nth` placeholder of the command in the
    // spec text, found from the command's own mark; the mark itself when the
    // YAML spells it differently (escapes).
    YAML::Mark placeholderMark(const QString& text, int nth) const
    {
        YAML::Mark mark = m_commandMark;
        const QStringList lines = text.split(u'\n');
        qsizetype pos = 0;
        for (int l = 0; l < mark.line && l < lines.size(); ++l)
            pos += lines.at(l).size() + 1;
        pos += mark.column;
        auto it = placeholderPattern().globalMatch(text, pos);
        for (int k = 0; it.hasNext(); ++k) {
            const auto m = it.next();
            if (k < nth)
                continue;
            const QStringView before = QStringView(text).left(m.capturedStart());
            mark.line = int(before.count(u'\n'));
            mark.column = int(m.capturedStart() - (before.lastIndexOf(u'\n') + 1));
            return mark;
        }
        return mark;
    }

    void substituteParams(JobSpec& spec)
    {
        for (auto it = spec.params.cbegin(); it != spec.params.cend(); ++it)
            if (it.value().contains(QChar(0)))
                throw SpecError{
                        QStringLiteral("param '%1' holds a NUL character, which no argument can carry").arg(it.key()),
                        m_paramsMark};
        // Names a placeholder may use: the params, and the caller's references
        // (values filled the same way, neither recorded nor exported).
        QMap<QString, QString> values = m_references;
        for (auto it = spec.params.cbegin(); it != spec.params.cend(); ++it)
            values.insert(it.key(), it.value());
        const qsizetype shellIndex = spec.shellCommand ? spec.argv.size() - 1 : shellStringIndex(spec.argv);
        int seen = 0; // placeholders before this argument, to locate errors
        for (qsizetype a = 0; a < spec.argv.size(); ++a) {
            QString& arg = spec.argv[a];
            int here = 0;
            for (auto m = placeholderPattern().globalMatch(arg); m.hasNext(); m.next())
                ++here;
            const auto errorAt = [&](qsizetype offset, const QString& message) {
                int nth = seen;
                for (auto m = placeholderPattern().globalMatch(arg); m.hasNext();) {
                    if (m.next().capturedStart() >= offset)
                        break;
                    ++nth;
                }
                return SpecError{message, placeholderMark(spec.yaml, nth)};
            };
            for (auto m = placeholderPattern().globalMatch(arg); m.hasNext();) {
                const auto match = m.next();
                if (!values.contains(match.captured(1)))
                    throw errorAt(match.capturedStart(),
                            QStringLiteral("'command' uses {{%1}} but 'params' has no '%1'").arg(match.captured(1)));
            }
            if (a == shellIndex) {
                // A shell string: each value arrives as its literal bytes,
                // whatever quotes the placeholder stands in (ShellTemplate.h).
                const ShellTemplateResult filled = fillShellTemplate(arg, values);
                if (filled.error)
                    throw errorAt(filled.error->offset, QStringLiteral("'command': ") + filled.error->message);
                arg = filled.command;
            } else {
                // A plain argument: the value as is, one argument, no shell.
                QString out;
                qsizetype last = 0;
                for (auto m = placeholderPattern().globalMatch(arg); m.hasNext();) {
                    const auto match = m.next();
                    out += QStringView(arg).mid(last, match.capturedStart() - last);
                    out += values.value(match.captured(1));
                    last = match.capturedEnd();
                }
                if (last > 0)
                    arg = out + QStringView(arg).mid(last);
            }
            seen += here;
        }
    }

    void resolveWorkdir(JobSpec& spec)
    {
        QString dir = spec.workdir;
        if (dir.startsWith(QStringLiteral("~/")))
            dir = QDir::homePath() + dir.mid(1);
        if (dir.isEmpty())
            dir = m_baseDir;
        else if (QDir::isRelativePath(dir))
            dir = QDir(m_baseDir).filePath(dir);
        dir = QDir::cleanPath(QDir(dir).absolutePath());
        spec.workdir = dir;
    }

    static QString defaultName(const JobSpec& spec)
    {
        // The script a command runs is the best name: "python3 train.py" -> "train".
        const QStringList words = spec.shellCommand ? spec.argv.last().split(u' ', Qt::SkipEmptyParts) : spec.argv;
        for (const QString& w : words) {
            if (w.endsWith(QStringLiteral(".py")) || w.endsWith(QStringLiteral(".sh")))
                return QFileInfo(w).completeBaseName();
        }
        return QFileInfo(words.value(0)).fileName();
    }

    QString m_origin;
    QString m_baseDir;
    QMap<QString, QString> m_overrides;
    QMap<QString, QString> m_references;
    QStringList m_seen;
    YAML::Mark m_commandMark;
    YAML::Mark m_workdirMark;
    YAML::Mark m_maxConcurrentMark = YAML::Mark::null_mark();
    YAML::Mark m_paramsMark = YAML::Mark::null_mark();
};

template <typename ParseFn> Result<JobSpec> parseReportingErrors(const QString& origin, ParseFn parse)
{
    try {
        return parse();
    } catch (const SpecError& e) {
        if (e.mark.is_null())
            return fail(QStringLiteral("%1: %2").arg(origin, e.message));
        return fail(
                QStringLiteral("%1:%2:%3: %4").arg(origin).arg(e.mark.line + 1).arg(e.mark.column + 1).arg(e.message));
    } catch (const YAML::Exception& e) {
        return fail(
                QStringLiteral("%1:%2:%3: %4").arg(origin).arg(e.mark.line + 1).arg(e.mark.column + 1).arg(qs(e.msg)));
    }
}

} // namespace

Result<JobSpec> parseJobSpec(const QString& yamlText, const QString& origin, const QString& baseDir,
        const QMap<QString, QString>& paramOverrides)
{
    Parser parser(origin, baseDir, paramOverrides);
    return parseReportingErrors(origin, [&] { return parser.parse(yamlText); });
}

Result<JobSpec> parseJobSpecNode(const YAML::Node& root, const QString& text, const QString& origin,
        const QString& baseDir, const QMap<QString, QString>& references)
{
    Parser parser(origin, baseDir, {}, references);
    return parseReportingErrors(origin, [&] { return parser.parseRoot(root, text); });
}

Result<QString> readSpecText(const QString& path, const QString& what)
{
    QFile f(path);
    if (QFileInfo(path).isDir())
        return fail(QStringLiteral("%1: is a folder, not a %2").arg(path, what));
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("%1: cannot read %2: %3").arg(path, what, f.errorString()));
    constexpr qint64 kMaxSpec = 1024 * 1024;
    // Read at most one byte past the limit: /dev/zero or a FIFO must not
    // exhaust memory before the size check.
    const QByteArray bytes = f.read(kMaxSpec + 1);
    if (bytes.size() > kMaxSpec)
        return fail(QStringLiteral("%1: a %2 larger than 1 MiB is not a %2").arg(path, what));
    // Invalid UTF-8 would silently become U+FFFD and the run would get other
    // bytes than the file holds: refuse it, saying where.
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = decoder(bytes);
    if (decoder.hasError()) {
        const QByteArray valid = [&] {
            // The longest valid prefix locates the bad byte.
            qsizetype lo = 0, hi = bytes.size();
            while (lo < hi) {
                const qsizetype mid = (lo + hi + 1) / 2;
                QStringDecoder d(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
                (void)QString(d(QByteArrayView(bytes).first(mid)));
                if (d.hasError())
                    hi = mid - 1;
                else
                    lo = mid;
            }
            return bytes.left(lo);
        }();
        const qsizetype line = valid.count('\n') + 1;
        const qsizetype column = QString::fromUtf8(valid.mid(valid.lastIndexOf('\n') + 1)).size() + 1;
        return fail(QStringLiteral("%1:%2:%3: not valid UTF-8 (byte 0x%4)")
                            .arg(path)
                            .arg(line)
                            .arg(column)
                            .arg(quint8(bytes.at(std::min<qsizetype>(valid.size(), bytes.size() - 1))), 2, 16,
                                    QLatin1Char('0')));
    }
    return text;
}

Result<JobSpec> parseJobSpecFile(const QString& path, const QMap<QString, QString>& paramOverrides)
{
    return parseSpecFile<JobSpec>(path, QStringLiteral("job spec"), [&](const QString& text, const QString& baseDir) {
        return parseJobSpec(text, path, baseDir, paramOverrides);
    });
}

Result<QList<JobSpec>> expandSweep(const JobSpec& spec)
{
    if (spec.sweep.isEmpty())
        return QList<JobSpec>{spec};
    // Over the sorted names, the last varying fastest.
    const QStringList names = spec.sweep.keys();
    QList<qsizetype> sizes;
    for (const QString& name : names)
        sizes << spec.sweep.value(name).size();
    QList<JobSpec> out;
    const QString origin = spec.sourcePath.isEmpty() ? QStringLiteral("<job spec>") : spec.sourcePath;
    const QString baseDir = spec.sourcePath.isEmpty() ? spec.workdir : QFileInfo(spec.sourcePath).absolutePath();
    std::optional<Error> error;
    forEachCombination(sizes, [&](const QList<qsizetype>& index) {
        QMap<QString, QString> combination;
        QStringList label;
        for (qsizetype i = 0; i < names.size(); ++i) {
            const QString& value = spec.sweep.value(names[i]).at(index[i]);
            combination.insert(names[i], value);
            label.append(names[i] + u'=' + value);
        }
        auto one = parseJobSpec(spec.yaml, origin, baseDir, combination);
        if (!one) {
            error = one.error();
            return false;
        }
        one->sourcePath = spec.sourcePath;
        one->workdir = spec.workdir; // resolved once, by the parse that made `spec`: not against itself again
        one->sweep.clear();
        one->name = spec.name + u'[' + label.join(u',') + u']';
        out.append(*one);
        return true;
    });
    if (error)
        return std::unexpected(*error);
    return out;
}

Result<JobSpec> jobSpecForScript(const QString& path)
{
    QFileInfo info(path);
    if (!info.exists())
        return fail(QStringLiteral("%1: no such file or folder").arg(path));
    if (info.isDir()) {
        for (const char* candidate : {"train.py", "main.py", "run.py", "train.sh", "run.sh"}) {
            const QString p = QDir(info.absoluteFilePath()).filePath(QString::fromLatin1(candidate));
            if (QFileInfo::exists(p)) {
                auto spec = jobSpecForScript(p);
                if (spec) {
                    spec->name = info.fileName();
                    spec->yaml = toYaml(*spec); // the text says what runs, name included
                }
                return spec;
            }
        }
        return fail(
                QStringLiteral("%1: a folder needs a train.py, main.py, run.py, train.sh or run.sh to run").arg(path));
    }
    JobSpec spec;
    const QString suffix = info.suffix().toLower();
    if (suffix == u"py")
        spec.argv = {QStringLiteral("python3"), info.fileName()};
    else if (suffix == u"sh")
        spec.argv = {QStringLiteral("bash"), info.fileName()};
    else
        return fail(
                QStringLiteral("%1: only .py and .sh scripts, folders and .yaml job specs can be submitted").arg(path));
    spec.workdir = info.absolutePath();
    spec.name = info.completeBaseName();
    spec.yaml = toYaml(spec);
    return spec;
}

namespace {
void emitScalar(YAML::Emitter& out, const QString& s)
{
    out << s.toStdString();
}
} // namespace

QString toYaml(const JobSpec& spec)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value;
    emitScalar(out, spec.name);
    out << YAML::Key << "command" << YAML::Value;
    if (spec.shellCommand && spec.argv.size() == 3) {
        emitScalar(out, spec.argv.at(2));
    } else {
        out << YAML::Flow << YAML::BeginSeq;
        for (const QString& a : spec.argv)
            emitScalar(out, a);
        out << YAML::EndSeq;
    }
    out << YAML::Key << "workdir" << YAML::Value;
    emitScalar(out, spec.workdir);
    auto emitMap = [&](const char* key, const QMap<QString, QString>& map, bool skipParamEnv) {
        QMap<QString, QString> shown;
        for (auto it = map.cbegin(); it != map.cend(); ++it)
            if (!skipParamEnv || !it.key().startsWith(QStringLiteral("TRAINYARD_PARAM_")))
                shown.insert(it.key(), it.value());
        if (shown.isEmpty())
            return;
        out << YAML::Key << key << YAML::Value << YAML::BeginMap;
        for (auto it = shown.cbegin(); it != shown.cend(); ++it) {
            out << YAML::Key;
            emitScalar(out, it.key());
            out << YAML::Value;
            emitScalar(out, it.value());
        }
        out << YAML::EndMap;
    };
    emitMap("env", spec.env, true);
    emitMap("params", spec.params, false);
    const ResourceRequest& r = spec.resources;
    if (r.gpus || r.gpuMemoryMiB || !r.gpuType.isEmpty() || r.cpus || r.memoryMiB || r.nodes != 1 || r.elastic()) {
        out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
        if (r.gpus)
            out << YAML::Key << "gpus" << YAML::Value << r.gpus;
        if (r.gpuMemoryMiB)
            out << YAML::Key << "gpu_memory" << YAML::Value << (std::to_string(r.gpuMemoryMiB) + "MiB");
        if (!r.gpuType.isEmpty()) {
            out << YAML::Key << "gpu_type" << YAML::Value;
            emitScalar(out, r.gpuType);
        }
        if (r.cpus)
            out << YAML::Key << "cpus" << YAML::Value << r.cpus;
        if (r.memoryMiB)
            out << YAML::Key << "memory" << YAML::Value << (std::to_string(r.memoryMiB) + "MiB");
        if (r.elastic())
            out << YAML::Key << "nodes" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "min"
                << YAML::Value << r.nodes << YAML::Key << "max" << YAML::Value << r.nodesMax << YAML::EndMap;
        else if (r.nodes != 1)
            out << YAML::Key << "nodes" << YAML::Value << r.nodes;
        out << YAML::EndMap;
    }
    if (spec.priority)
        out << YAML::Key << "priority" << YAML::Value << spec.priority;
    if (!spec.tags.isEmpty()) {
        out << YAML::Key << "tags" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const QString& t : spec.tags)
            emitScalar(out, t);
        out << YAML::EndSeq;
    }
    if (!spec.metricRules.isEmpty()) {
        out << YAML::Key << "metrics" << YAML::Value << YAML::BeginSeq;
        for (const MetricRuleSpec& rule : spec.metricRules) {
            out << YAML::BeginMap;
            if (!rule.key.isEmpty()) {
                out << YAML::Key << "key" << YAML::Value;
                emitScalar(out, rule.key);
            }
            out << YAML::Key << "regex" << YAML::Value << YAML::SingleQuoted;
            emitScalar(out, rule.regex);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (spec.estimatedRuntimeSec)
        out << YAML::Key << "estimated_runtime" << YAML::Value << (std::to_string(*spec.estimatedRuntimeSec) + "s");
    if (spec.timeLimitSec)
        out << YAML::Key << "time_limit" << YAML::Value << (std::to_string(*spec.timeLimitSec) + "s");
    if (spec.retry) {
        // Every key, defaults too: the text records what applied to the run,
        // whatever a later version's defaults are. Whole seconds, as parsed.
        const RetryPolicy& p = *spec.retry;
        const auto seconds = [](qint64 ms) { return std::to_string((ms + 999) / 1000) + "s"; };
        const auto number = [](double x) { return QString::number(x, 'g', QLocale::FloatingPointShortest); };
        out << YAML::Key << "retry" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "limit" << YAML::Value << p.limit;
        out << YAML::Key << "on" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (RetryClass c : p.on)
            emitScalar(out, retryClassName(c));
        out << YAML::EndSeq;
        out << YAML::Key << "backoff" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "duration" << YAML::Value << seconds(p.backoff.durationMs);
        out << YAML::Key << "factor" << YAML::Value;
        emitScalar(out, number(p.backoff.factor));
        out << YAML::Key << "max" << YAML::Value << seconds(p.backoff.maxMs);
        out << YAML::EndMap;
        out << YAML::Key << "jitter" << YAML::Value;
        emitScalar(out, number(p.jitter));
        out << YAML::Key << "infra_limit" << YAML::Value;
        if (p.infraLimit)
            out << *p.infraLimit;
        else
            out << "unlimited";
        out << YAML::EndMap;
    }
    if (spec.slurm != JobSpec::SlurmOptions{}) {
        const JobSpec::SlurmOptions& s = spec.slurm;
        out << YAML::Key << "slurm" << YAML::Value << YAML::BeginMap;
        for (const auto& [key, value] :
                {std::pair{"partition", &s.partition}, std::pair{"account", &s.account}, std::pair{"qos", &s.qos},
                        std::pair{"constraint", &s.constraint}, std::pair{"gpu_type", &s.gpuType}}) {
            if (value->isEmpty())
                continue;
            out << YAML::Key << key << YAML::Value;
            emitScalar(out, *value);
        }
        if (s.signalGraceSec > 0)
            out << YAML::Key << "signal_grace" << YAML::Value << (std::to_string(s.signalGraceSec) + "s");
        if (!s.sbatch.isEmpty()) {
            out << YAML::Key << "sbatch" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const QString& a : s.sbatch)
                emitScalar(out, a);
            out << YAML::EndSeq;
        }
        out << YAML::EndMap;
    }
    if (spec.preemptible) {
        out << YAML::Key << "preemptible" << YAML::Value << true;
        out << YAML::Key << "preemption" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "signal" << YAML::Value;
        emitScalar(out, spec.preemption.signal);
        out << YAML::Key << "grace" << YAML::Value << (std::to_string(spec.preemption.graceSec) + "s");
        out << YAML::EndMap;
    }
    if (spec.deadlineSec)
        out << YAML::Key << "deadline" << YAML::Value << (std::to_string(*spec.deadlineSec) + "s");
    if (spec.maxRunTimeSec)
        out << YAML::Key << "max_run_time" << YAML::Value << (std::to_string(*spec.maxRunTimeSec) + "s");
    if (!spec.pool.isEmpty()) {
        out << YAML::Key << "pool" << YAML::Value;
        emitScalar(out, spec.pool);
    }
    if (!spec.queue.isEmpty()) {
        out << YAML::Key << "queue" << YAML::Value;
        emitScalar(out, spec.queue);
    }
    if (!spec.user.isEmpty()) {
        out << YAML::Key << "user" << YAML::Value;
        emitScalar(out, spec.user);
    }
    if (!spec.project.isEmpty()) {
        out << YAML::Key << "project" << YAML::Value;
        emitScalar(out, spec.project);
    }
    auto emitList = [&](const char* key, const QStringList& list) {
        if (list.isEmpty())
            return;
        out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const QString& v : list)
            emitScalar(out, v);
        out << YAML::EndSeq;
    };
    emitList("prefer_nodes", spec.preferNodes);
    emitList("avoid_nodes", spec.avoidNodes);
    emitList("prefer_labels", spec.preferLabels);
    emitList("avoid_labels", spec.avoidLabels);
    if (!spec.sweep.isEmpty()) {
        out << YAML::Key << "sweep" << YAML::Value << YAML::BeginMap;
        for (auto it = spec.sweep.cbegin(); it != spec.sweep.cend(); ++it) {
            out << YAML::Key;
            emitScalar(out, it.key());
            out << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const QString& v : it.value())
                emitScalar(out, v);
            out << YAML::EndSeq;
        }
        out << YAML::EndMap;
    }
    if (spec.maxConcurrent)
        out << YAML::Key << "max_concurrent" << YAML::Value << spec.maxConcurrent;
    if (spec.sync)
        out << YAML::Key << "sync" << YAML::Value << true;
    if (spec.syncLimitMiB != JobSpec{}.syncLimitMiB)
        out << YAML::Key << "sync_limit" << YAML::Value << (std::to_string(spec.syncLimitMiB) + "MiB");
    emitList("artifacts", spec.artifacts);
    emitList("metric_files", spec.metricFiles);
    out << YAML::EndMap;
    return QString::fromUtf8(out.c_str()) + u'\n';
}

std::optional<qint64> parseSizeMiB(QStringView text)
{
    static const QRegularExpression re(QStringLiteral("^\\s*([0-9]+(?:\\.[0-9]+)?)\\s*([KMGT]?)(i?)(B?)\\s*$"),
            QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(text.toString());
    if (!m.hasMatch())
        return std::nullopt;
    const double number = m.captured(1).toDouble();
    const QString unit = m.captured(2).toUpper();
    if (unit.isEmpty() && !m.captured(4).isEmpty())
        return std::nullopt; // "512B" bytes: too small to mean anything here
    double mib = number;
    if (unit == u"K")
        mib = number / 1024.0;
    else if (unit == u"G")
        mib = number * 1024.0;
    else if (unit == u"T")
        mib = number * 1024.0 * 1024.0;
    return qint64(mib + 0.5);
}

std::optional<qint64> parseDurationSec(QStringView text)
{
    static const QRegularExpression whole(QStringLiteral("^\\s*(?:[0-9]+\\s*[dhms]?\\s*)+$"));
    static const QRegularExpression part(QStringLiteral("([0-9]+)\\s*([dhms]?)"));
    if (!whole.match(text.toString()).hasMatch())
        return std::nullopt;
    qint64 total = 0;
    auto it = part.globalMatch(text.toString());
    int parts = 0;
    while (it.hasNext()) {
        const auto m = it.next();
        const qint64 n = m.captured(1).toLongLong();
        const QString u = m.captured(2);
        if (u.isEmpty() && parts > 0)
            return std::nullopt;
        total += n * (u == u"d" ? 86400 : u == u"h" ? 3600 : u == u"m" ? 60 : 1);
        ++parts;
    }
    return total;
}

} // namespace ty
