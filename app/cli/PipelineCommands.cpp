#include "PipelineCommands.h"

#include "Cli.h"
#include "EventWait.h"

#include "core/pipeline/PipelineSpec.h"
#include "core/service/ServiceClient.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

namespace ty::cli {

namespace {

// One line per step instance: "  train        succeeded  run 12  (reason)".
void printSteps(const QJsonObject& pipeline)
{
    for (const QJsonValue& v : pipeline.value(QStringLiteral("steps")).toArray()) {
        const QJsonObject s = v.toObject();
        const qint64 run = s.value(QStringLiteral("run")).toInteger();
        out() << "  " << escapedName(s.value(QStringLiteral("name")).toString()).leftJustified(20) << ' '
              << s.value(QStringLiteral("state")).toString().leftJustified(10)
              << (run ? QStringLiteral("  run %1").arg(run) : QString());
        const QString reason = s.value(QStringLiteral("reason")).toString();
        if (!reason.isEmpty())
            out() << "  (" << escapedName(reason) << ')';
        out() << '\n';
    }
}

void printPipeline(const QJsonObject& p)
{
    out() << "pipeline " << p.value(QStringLiteral("id")).toInteger() << ' '
          << escapedName(p.value(QStringLiteral("name")).toString()) << ": "
          << p.value(QStringLiteral("state")).toString() << '\n';
    printSteps(p);
}

int exitCodeOf(const QJsonObject& p)
{
    return p.value(QStringLiteral("state")).toString() == u"succeeded" ? Ok : RunFailed;
}

// Sends `op` (pipeline_submit, pipeline_resume) and, with `follow`, prints
// each step's changes to stderr until the pipeline ends: the exit code is
// its status. stdout holds the pipeline (JSON with `json`) as it ended, or
// as it started without `follow`.
int startPipeline(Context& ctx, const QString& op, const QJsonObject& request, bool follow, bool json)
{
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    EventWait wait;
    QSet<qint64> ids;                  // the pipelines made (a sweep makes several)
    QMap<qint64, QJsonObject> last;    // each as it stands
    QHash<QString, QString> lastState; // "id/instance" -> state and reason printed
    const auto onChange = [&](const QJsonObject& pipeline) {
        const qint64 id = pipeline.value(QStringLiteral("id")).toInteger();
        if (!ids.contains(id))
            return;
        last.insert(id, pipeline);
        // Progress goes to stderr, so stdout stays the JSON document with --json.
        const QString prefix = ids.size() > 1 ? QStringLiteral("%1 ").arg(id) : QString();
        for (const QJsonValue& v : pipeline.value(QStringLiteral("steps")).toArray()) {
            const QJsonObject s = v.toObject();
            const QString name = s.value(QStringLiteral("name")).toString();
            const QString state = s.value(QStringLiteral("state")).toString();
            const QString reason = s.value(QStringLiteral("reason")).toString();
            // A waiting step is shown once it says why (another run computes its key).
            const QString key = prefix + name;
            if (lastState.value(key) == state + reason || (state == u"waiting" && reason.isEmpty()))
                continue;
            lastState.insert(key, state + reason);
            const qint64 run = s.value(QStringLiteral("run")).toInteger();
            err() << prefix << escapedName(name) << ": " << state
                  << (run ? QStringLiteral(" (run %1)").arg(run) : QString())
                  << (reason.isEmpty() ? QString() : QStringLiteral(": ") + escapedName(reason)) << '\n';
        }
        err().flush();
        int worst = Ok;
        for (qint64 i : std::as_const(ids)) {
            if (!last.contains(i) || last.value(i).value(QStringLiteral("state")).toString() == u"running")
                return;
            worst = std::max(worst, exitCodeOf(last.value(i)));
        }
        wait.done(worst);
    };
    if (follow) {
        // Subscribed before the request, so no change is missed.
        QObject::connect(svc.get(), &service::ServiceClient::pipelineChanged, svc.get(),
                [&](const QJsonObject& pipeline) { onChange(pipeline); });
        QObject::connect(svc.get(), &service::ServiceClient::disconnected, svc.get(), [&] {
            err() << "trainyardctl: the service went away; the pipeline's state is unknown\n";
            wait.done(Unavailable);
        });
        if (auto s = svc->call(QStringLiteral("subscribe"), {{QStringLiteral("pipelines"), true}}); !s) {
            err() << escapedName(s.error().message) << '\n';
            return Unavailable;
        }
    }
    const auto started = svc->call(op, request);
    if (!started) {
        err() << escapedName(started.error().message) << '\n';
        if (started.error().kind == ErrorKind::NotFound)
            return NoSuchRun;
        if (started.error().kind != ErrorKind::InvalidInput)
            return Unavailable;
        return op == u"pipeline_submit" ? InvalidSpec : Usage; // a bad spec; a pipeline that cannot be resumed
    }
    QJsonArray made = started->value(QStringLiteral("pipelines")).toArray();
    if (made.isEmpty())
        made.append(started->value(QStringLiteral("pipeline")).toObject());
    for (const QJsonValue& v : std::as_const(made)) {
        const QJsonObject pipeline = v.toObject();
        const qint64 id = pipeline.value(QStringLiteral("id")).toInteger();
        ids.insert(id);
        const qint64 from = pipeline.value(QStringLiteral("resumed_from")).toInteger();
        err() << (from ? QStringLiteral("pipeline %1 resumes pipeline %2").arg(id).arg(from)
                       : QStringLiteral("submitted pipeline %1").arg(id))
              << " (" << escapedName(pipeline.value(QStringLiteral("name")).toString())
              << "): " << pipeline.value(QStringLiteral("steps")).toArray().size() << " step instances\n";
    }
    err().flush();
    const auto print = [&](const QList<QJsonObject>& pipelines) {
        if (json) {
            if (pipelines.size() == 1) {
                out() << QJsonDocument(pipelines.front()).toJson(QJsonDocument::Compact) << '\n';
            } else {
                QJsonArray all;
                for (const QJsonObject& p : pipelines)
                    all.append(p);
                out() << QJsonDocument(all).toJson(QJsonDocument::Compact) << '\n';
            }
            return;
        }
        for (const QJsonObject& p : pipelines)
            printPipeline(p);
    };
    if (!follow) {
        if (json) {
            QList<QJsonObject> now;
            for (const QJsonValue& v : std::as_const(made))
                now << v.toObject();
            print(now);
        }
        return Ok;
    }
    for (const QJsonValue& v : std::as_const(made))
        onChange(v.toObject()); // steps that started, were cached or skipped at once
    const int code = wait.exec();
    print(last.values());
    return code;
}

int submit(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("pipeline spec (.yaml)"));
    p.addOption(
            {QStringLiteral("follow"), QStringLiteral("print each step's changes; exit with the pipeline's status")});
    p.addOption({QStringLiteral("param"), QStringLiteral("override a pipeline param (name=value)"),
            QStringLiteral("name=value")});
    p.addOption({QStringLiteral("node"), QStringLiteral("run every step on this node"), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("json"), QStringLiteral("print the pipeline as JSON (when it ends, with --follow)")});
    if (!p.parse(QStringList{QStringLiteral("pipeline submit")} + args))
        return usageError(p.errorText());
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("pipeline submit needs exactly one FILE"));
    QMap<QString, QString> overrides;
    for (const QString& kv : p.values(QStringLiteral("param"))) {
        const qsizetype eq = kv.indexOf(u'=');
        if (eq <= 0)
            return usageError(QStringLiteral("--param needs name=value, got '%1'").arg(kv));
        overrides.insert(kv.left(eq), kv.mid(eq + 1));
    }
    const QString file = p.positionalArguments().front();
    // Checked here first, so a bad file is reported without a service.
    const auto spec = pipeline::parsePipelineFile(file, overrides);
    if (!spec) {
        err() << escapedName(spec.error().message) << '\n';
        return InvalidSpec;
    }
    QJsonObject params;
    for (auto it = overrides.cbegin(); it != overrides.cend(); ++it)
        params.insert(it.key(), it.value());
    const QJsonObject specJson{{QStringLiteral("yaml"), spec->yaml}, {QStringLiteral("origin"), file},
            {QStringLiteral("base_dir"), QFileInfo(file).absolutePath()},
            {QStringLiteral("source_path"), spec->sourcePath}, {QStringLiteral("params"), params}};
    return startPipeline(ctx, QStringLiteral("pipeline_submit"),
            {{QStringLiteral("spec"), specJson}, {QStringLiteral("node"), p.value(QStringLiteral("node"))}},
            p.isSet(QStringLiteral("follow")), p.isSet(QStringLiteral("json")));
}

int resume(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("ID"), QStringLiteral("a failed or cancelled pipeline"));
    p.addOption(
            {QStringLiteral("follow"), QStringLiteral("print each step's changes; exit with the pipeline's status")});
    p.addOption({QStringLiteral("json"), QStringLiteral("print the pipeline as JSON (when it ends, with --follow)")});
    if (!p.parse(QStringList{QStringLiteral("pipeline resume")} + args))
        return usageError(p.errorText());
    bool ok = false;
    const qint64 id = p.positionalArguments().size() == 1 ? p.positionalArguments().front().toLongLong(&ok) : 0;
    if (!ok || id <= 0)
        return usageError(QStringLiteral("pipeline resume needs one pipeline id"));
    return startPipeline(ctx, QStringLiteral("pipeline_resume"), {{QStringLiteral("pipeline"), id}},
            p.isSet(QStringLiteral("follow")), p.isSet(QStringLiteral("json")));
}

int list(Context& ctx, const QStringList& args, bool one)
{
    QCommandLineParser p;
    if (one)
        p.addPositionalArgument(QStringLiteral("ID"), QStringLiteral("the pipeline"));
    p.addOption({QStringLiteral("json"), QStringLiteral("one JSON document on stdout")});
    if (!p.parse(QStringList{QStringLiteral("pipeline")} + args))
        return usageError(p.errorText());
    if (p.positionalArguments().size() != (one ? 1 : 0))
        return usageError(one ? QStringLiteral("pipeline show needs one pipeline id")
                              : QStringLiteral("pipeline ls takes no argument"));
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    QJsonObject req;
    if (one) {
        bool ok = false;
        const qint64 id = p.positionalArguments().front().toLongLong(&ok);
        if (!ok || id <= 0)
            return usageError(QStringLiteral("'%1' is not a pipeline id").arg(p.positionalArguments().front()));
        req.insert(QStringLiteral("pipeline"), id);
    }
    const auto r = svc->call(QStringLiteral("pipelines"), req);
    if (!r) {
        err() << escapedName(r.error().message) << '\n';
        return r.error().kind == ErrorKind::NotFound ? NoSuchRun : Unavailable;
    }
    const QJsonArray pipelines = r->value(QStringLiteral("pipelines")).toArray();
    if (p.isSet(QStringLiteral("json"))) {
        out() << QJsonDocument(one ? QJsonDocument(pipelines.first().toObject()) : QJsonDocument(pipelines))
                         .toJson(QJsonDocument::Compact)
              << '\n';
        return Ok;
    }
    for (const QJsonValue& v : pipelines) {
        if (one)
            printPipeline(v.toObject());
        else
            out() << v.toObject().value(QStringLiteral("id")).toInteger() << '\t'
                  << escapedName(v.toObject().value(QStringLiteral("name")).toString()) << '\t'
                  << v.toObject().value(QStringLiteral("state")).toString() << '\n';
    }
    return Ok;
}

int cancel(Context& ctx, const QStringList& args)
{
    bool ok = false;
    const qint64 id = args.size() == 1 ? args.front().toLongLong(&ok) : 0;
    if (!ok || id <= 0)
        return usageError(QStringLiteral("pipeline cancel needs one pipeline id"));
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    const auto r = svc->call(QStringLiteral("pipeline_cancel"), {{QStringLiteral("pipeline"), id}});
    if (!r) {
        err() << escapedName(r.error().message) << '\n';
        return r.error().kind == ErrorKind::NotFound ? NoSuchRun : Usage;
    }
    printPipeline(r->value(QStringLiteral("pipeline")).toObject());
    return Ok;
}

} // namespace

int cmdPipeline(Context& ctx, const QStringList& args)
{
    const QString sub = args.value(0);
    const QStringList rest = args.mid(1);
    if (sub == u"submit")
        return submit(ctx, rest);
    if (sub == u"ls")
        return list(ctx, rest, false);
    if (sub == u"show")
        return list(ctx, rest, true);
    if (sub == u"cancel")
        return cancel(ctx, rest);
    if (sub == u"resume")
        return resume(ctx, rest);
    return usageError(QStringLiteral("pipeline needs submit, ls, show, cancel or resume"));
}

} // namespace ty::cli
