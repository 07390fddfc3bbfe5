#include "SubmitCommands.h"

#include "PipelineCommands.h"
#include "core/pipeline/PipelineSpec.h"

#include "Cli.h"
#include "RunWait.h"
#include "SweepConsole.h"

#include "core/common/Paths.h"
#include "core/common/Run.h"
#include "core/nodes/AgentClient.h"
#include "core/nodes/NodeTransports.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/runs/RunEngine.h"
#include "core/runs/StoredRunWait.h"
#include "core/service/ServiceClient.h"
#include "core/service/ServiceProtocol.h"
#include "core/spec/JobSpec.h"
#include "core/spec/Rerun.h"
#include "core/store/ResultStore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QTextStream>
#include <QTimer>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unistd.h>

namespace ty::cli {

namespace {

int waitForSweep(Context& ctx, service::ServiceClient& svc, const QList<RunId>& ids, bool follow);
// Where a submitted spec's text came from: what the service needs to parse it again.
struct SpecSource {
    QString origin;                   // for messages: the file, or "run N spec"
    QString baseDir;                  // relative workdirs resolve against it
    QMap<QString, QString> overrides; // --param
};
int submitSpec(Context& ctx, const JobSpec& spec, const SpecSource& source, const QString& node, bool follow);

// The options submit and rerun share: one positional argument, --follow,
// --param name=value (repeatable) and --node; `*overrides` gets the params.
// A usage error is returned as its exit code.
std::optional<int> parseSubmitOptions(QCommandLineParser& p, const QString& command, const QString& positional,
        const QStringList& args, QMap<QString, QString>* overrides)
{
    p.addPositionalArgument(positional,
            positional == u"RUN" ? QStringLiteral("the run to submit again")
                                 : QStringLiteral("job spec (.yaml) or script (.py/.sh)"));
    p.addOption({QStringLiteral("follow"), QStringLiteral("print the console and exit with the run's status")});
    p.addOption(
            {QStringLiteral("param"), QStringLiteral("override a param (name=value)"), QStringLiteral("name=value")});
    p.addOption({QStringLiteral("node"), QStringLiteral("run only on this node"), QStringLiteral("NAME")});
    if (!p.parse(QStringList{command} + args))
        return usageError(p.errorText());
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("%1 needs exactly one %2").arg(command, positional));
    for (const QString& kv : p.values(QStringLiteral("param"))) {
        const qsizetype eq = kv.indexOf(u'=');
        if (eq <= 0)
            return usageError(QStringLiteral("--param needs name=value, got '%1'").arg(kv));
        overrides->insert(kv.left(eq), kv.mid(eq + 1));
    }
    return std::nullopt;
}

} // namespace

int cmdSubmit(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    QMap<QString, QString> overrides;
    if (const auto bad = parseSubmitOptions(p, QStringLiteral("submit"), QStringLiteral("FILE"), args, &overrides))
        return *bad;
    const QString file = p.positionalArguments().front();
    const bool script
            = file.endsWith(QStringLiteral(".py")) || file.endsWith(QStringLiteral(".sh")) || QFileInfo(file).isDir();
    if (script && !overrides.isEmpty())
        return usageError(QStringLiteral("--param needs a job spec with params, not a script"));
    // A pipeline (top-level `steps:`) is submitted as one: trainyardctl pipeline submit.
    if (!script && QFileInfo(file).isFile() && QFileInfo(file).size() <= 1024 * 1024) {
        QFile f(file);
        if (f.open(QIODevice::ReadOnly) && pipeline::looksLikePipeline(QString::fromUtf8(f.readAll())))
            return cmdPipeline(ctx, QStringList{QStringLiteral("submit")} + args);
    }
    const Result<JobSpec> spec = script ? jobSpecForScript(file) : parseJobSpecFile(file, overrides);
    if (!spec) {
        err() << spec.error().message << '\n';
        return InvalidSpec;
    }
    const SpecSource source{file, script ? spec->workdir : QFileInfo(file).absolutePath(), overrides};
    return submitSpec(ctx, *spec, source, p.value(QStringLiteral("node")), p.isSet(QStringLiteral("follow")));
}

namespace {

// Submits a validated spec (submit, rerun) through the service and waits as
// submit does. The service parses `source` again (it trusts no client), so
// it gets the text, where it came from and the --param overrides.
int submitSpec(Context& ctx, const JobSpec& specIn, const SpecSource& source, const QString& node, bool follow)
{
    const JobSpec* spec = &specIn;
    if (!node.isEmpty() && node != u"local" && !storedNode(ctx, node))
        return usageError(QStringLiteral("--node: no node named '%1' (see trainyardctl node ls)").arg(node));
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    QJsonObject params;
    for (auto it = source.overrides.cbegin(); it != source.overrides.cend(); ++it)
        params.insert(it.key(), it.value());
    const QJsonObject specJson{{QStringLiteral("yaml"), spec->yaml}, {QStringLiteral("origin"), source.origin},
            {QStringLiteral("base_dir"), source.baseDir}, {QStringLiteral("source_path"), spec->sourcePath},
            {QStringLiteral("params"), params}};
    const auto submitted
            = svc->call(QStringLiteral("submit"), {{QStringLiteral("spec"), specJson}, {QStringLiteral("node"), node}});
    if (!submitted) {
        err() << escapedName(submitted.error().message) << '\n';
        return spec->sweep.isEmpty() ? Unavailable : InvalidSpec;
    }
    QList<RunId> ids;
    for (const QJsonValue& v : submitted->value(QStringLiteral("runs")).toArray())
        ids.append(v.toInteger());
    if (ids.isEmpty()) {
        err() << "trainyardctl: the service recorded no run\n";
        return Unavailable;
    }
    if (ids.size() == 1) {
        err() << "submitted run " << ids.front() << " (" << escapedName(spec->name) << ")\n";
        err().flush();
        return waitForRun(ctx, *svc, ids.front(), follow);
    }
    err() << "submitted sweep " << escapedName(spec->name) << ": " << ids.size() << " runs, " << ids.front() << " to "
          << ids.back();
    if (spec->maxConcurrent)
        err() << ", at most " << spec->maxConcurrent << " at once";
    err() << '\n';
    err().flush();
    return waitForSweep(ctx, *svc, ids, follow);
}

} // namespace

// trainyardctl rerun RUN [--param name=value]... [--node NAME] [--follow]:
// the run's spec with its params (specForRerun), changed by --param.
int cmdRerun(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    QMap<QString, QString> overrides;
    if (const auto bad = parseSubmitOptions(p, QStringLiteral("rerun"), QStringLiteral("RUN"), args, &overrides))
        return *bad;
    auto run = findRun(*ctx.store, p.positionalArguments().front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    auto rerun = specForRerun(*run, ctx.store->params(run->id));
    if (!rerun) {
        err() << escapedName(rerun.error().message) << '\n';
        return InvalidSpec;
    }
    auto spec = parseJobSpec(rerun->yaml, QStringLiteral("run %1 spec").arg(run->id), rerun->baseDir, overrides);
    if (!spec) {
        err() << escapedName(spec.error().message) << '\n';
        return InvalidSpec;
    }
    spec->sourcePath = run->specPath;
    err() << "again: run " << run->id << " (" << escapedName(run->name) << ")\n";
    const SpecSource source{QStringLiteral("run %1 spec").arg(run->id), rerun->baseDir, overrides};
    return submitSpec(ctx, *spec, source, p.value(QStringLiteral("node")), p.isSet(QStringLiteral("follow")));
}

namespace {

// A sweep: without --follow, wait until every run has started or is known
// to wait in the queue (a capped sweep's later runs wait for earlier ones;
// the service starts them); with it, until every run has ended, printing
// their consoles (SweepConsole: each line behind its run's name) and one
// line per run as it ends.
int waitForSweep(Context& ctx, service::ServiceClient& svc, const QList<RunId>& ids, bool follow)
{
    QObject guard;
    auto remaining = std::make_shared<QSet<RunId>>(ids.cbegin(), ids.cend());
    auto failed = std::make_shared<int>(0);
    auto queued = std::make_shared<QHash<RunId, QString>>();
    auto console = std::make_shared<SweepConsole>();
    for (RunId id : ids) {
        const auto r = ctx.store->run(id);
        console->addRun(id, escapedName(r ? r->name : QString::number(id)));
    }
    auto finish = [=](const RunRecord& r) {
        if (!remaining->remove(r.id))
            return;
        queued->remove(r.id);
        if (follow) {
            const QByteArray rest = console->finish(r.id);
            ::fwrite(rest.constData(), 1, size_t(rest.size()), stdout);
            ::fflush(stdout);
        }
        if (follow || r.state == RunState::Failed) {
            err() << "run " << r.id << " (" << escapedName(r.name) << ") " << runStateName(r.state);
            if (!r.failureReason.isEmpty())
                err() << ": " << escapedName(r.failureReason);
            err() << '\n';
            err().flush();
        }
        if (r.state != RunState::Succeeded && (follow || isTerminal(r.state)))
            ++*failed;
        if (remaining->isEmpty())
            QCoreApplication::exit(0);
    };
    if (follow)
        QObject::connect(&svc, &service::ServiceClient::consoleReceived, &guard,
                [console](RunId run, qint64 offset, const QByteArray& bytes) {
                    const QByteArray lines = console->feed(run, offset, bytes);
                    if (lines.isEmpty())
                        return;
                    ::fwrite(lines.constData(), 1, size_t(lines.size()), stdout);
                    ::fflush(stdout);
                });
    QObject::connect(&svc, &service::ServiceClient::runStateChanged, &guard, [=](const RunRecord& r) {
        if (!remaining->contains(r.id))
            return;
        const bool done = follow
                ? isTerminal(r.state)
                : (r.state != RunState::Queued && r.state != RunState::Starting && r.state != RunState::Held);
        if (done)
            finish(r);
    });
    // Without --follow, the runs that wait with a reason are left to the
    // service once every other one has started.
    const int queuedGraceMs = svc.startedService() ? 1500 : 0;
    QObject::connect(&svc, &service::ServiceClient::pendingReasonsChanged, &guard,
            [=, &guard](const QHash<RunId, QString>& reasons) {
                if (follow)
                    return;
                for (auto it = reasons.cbegin(); it != reasons.cend(); ++it)
                    if (remaining->contains(it.key()))
                        queued->insert(it.key(), it.value());
                QTimer::singleShot(queuedGraceMs, &guard, [=] {
                    for (auto it = queued->cbegin(); it != queued->cend(); ++it)
                        if (!remaining->contains(it.key()))
                            return;
                    if (!queued->isEmpty() && queued->size() == remaining->size())
                        QCoreApplication::exit(0);
                });
            });
    QObject::connect(&svc, &service::ServiceClient::noticeAdded, &guard, [](RunId run, const QString& text) {
        err() << "trainyardctl: run " << run << ": " << escapedName(text) << '\n';
        err().flush();
    });
    QObject::connect(&svc, &service::ServiceClient::disconnected, &guard, [] { QCoreApplication::exit(kServiceGone); });
    for (RunId id : ids)
        if (auto w
                = svc.call(QStringLiteral("watch"), {{QStringLiteral("run"), id}, {QStringLiteral("console"), follow}});
                !w) {
            err() << "trainyardctl: " << escapedName(w.error().message) << '\n';
            return Unavailable;
        }
    auto* timer = new QTimer(&guard);
    QObject::connect(timer, &QTimer::timeout, &guard, [] {
        if (g_interrupted)
            QCoreApplication::exit(130);
    });
    timer->start(100);
    std::signal(SIGINT, onSigint);
    const int loop = remaining->isEmpty() ? 0 : QCoreApplication::exec();
    std::signal(SIGINT, SIG_DFL);
    if (loop == kServiceGone) {
        err() << "trainyardctl: the Trainyard service stopped; the sweep's runs go on and are recorded once it runs again\n";
        return Unavailable;
    }
    if (loop == 130) {
        err() << "\ntrainyardctl: detached; the sweep's runs go on (the service starts the queued ones)\n";
        return 130;
    }
    if (!follow && !queued->isEmpty()) {
        QList<RunId> waiting = queued->keys();
        std::sort(waiting.begin(), waiting.end());
        for (RunId id : waiting)
            out() << "run " << id << " queued: " << escapedName(queued->value(id)) << '\n';
    }
    return *failed ? RunFailed : Ok;
}

} // namespace

} // namespace ty::cli
