#include "Cli.h"

#include "CliCommon.h"
#include "CliPassphrase.h"
#include "CommandHelp.h"
#include "Commands.h"
#include "ImportCommand.h"
#include "LsCommand.h"
#include "DaemonCommands.h"
#include "MetricsCommand.h"
#include "NodeCommands.h"
#include "PolicyCommand.h"
#include "QueueCommand.h"
#include "RunLabelCommands.h"
#include "ShowCommand.h"

#include "EventWait.h"
#include "SweepConsole.h"

#include "common/Paths.h"
#include "common/Run.h"
#include "nodes/AgentClient.h"
#include "nodes/NodeTransports.h"
#include "nodes/SshAgentTransport.h"
#include "runs/RunEngine.h"
#include "runs/StoredRunWait.h"
#include "service/ServiceClient.h"
#include "service/ServiceProtocol.h"
#include "spec/JobSpec.h"
#include "spec/Rerun.h"
#include "store/ResultStore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QTextStream>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <type_traits>
#include <optional>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace ty::cli {
namespace {

void printMessage(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    const bool categorised = context.category && std::strcmp(context.category, "default") != 0;
    QString line;
    if (type == QtWarningMsg || type == QtCriticalMsg || type == QtFatalMsg)
        line = QStringLiteral("trainyardctl: ");
    else if (categorised)
        line = QString::fromLatin1(context.category) + QStringLiteral(": ");
    line += escapedName(message) + u'\n';
    const QByteArray bytes = line.toLocal8Bit();
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stderr);
    std::fflush(stderr);
}

const char* kHelp =
    "Usage: trainyardctl [--db PATH] COMMAND [ARGS]   (--db may also follow the command)\n"
    "   or: trainyardctl COMMAND --help | trainyardctl help COMMAND   (the command's own usage and options)\n"
    "\n"
    "Commands:\n"
    "  validate FILE                 check a job spec; errors name file:line:column\n"
    "  submit FILE [--follow]        submit a job spec (or a .py/.sh script); --follow prints the console\n"
    "                                and exits with the run's exit status\n"
    "  ls [--json] [--archived]      list runs, newest first (a run with notices says how many);\n"
    "                                archived runs only with --archived\n"
    "  show RUN [--json]             one run's details: state, node, command, times, params, latest metrics,\n"
    "                                and its notices (problems to act on, e.g. a synced symlink leading nowhere)\n"
    "  artifacts RUN [--download DIR | --to-results]  files matching the spec's `artifacts` globs; copy them\n"
    "  logs RUN [--follow]           print a run's console\n"
    "  cancel RUN [--grace SECONDS]  SIGTERM to the run's process group, SIGKILL after the grace (10 s)\n"
    "  metrics RUN [--csv|--json] [--key K]  a run's metric points (--json: {key: [{step, epoch,\n"
    "                                wall_time, value}]})\n"
    "  rm RUN                        delete a finished run and its metrics from the database\n"
    "  rename RUN NAME               give a run another name\n"
    "  tag RUN [+TAG|-TAG|TAG]...    add (+ or bare) or remove (-) tags; without tags, list them\n"
    "  note RUN [TEXT|-]             set a run's notes (- reads stdin; \"\" clears); without TEXT, print them\n"
    "  archive RUN... | unarchive RUN...  leave finished runs out of ls and the GUI's table / bring them back\n"
    "  rerun RUN [--param K=V]... [--node N] [--follow]  submit a run again with its params (a sweep's run alone)\n"
    "  import RUN FILE...            add metrics from framework files: Lightning metrics.csv, TensorBoard\n"
    "                                events.out.tfevents.*, Hugging Face trainer_state.json, JSON lines\n"
    "  queue [--json]                waiting runs in scheduling order, with why each waits\n"
    "  hold RUN | release RUN        keep a queued run from starting / let it start again\n"
    "  priority RUN N | top RUN      change a waiting run's priority / put it first\n"
    "  policy [fcfs|priority|sjf|backfill|fair-share] [--queue Q] | policy [--queue Q] --json\n"
    "                                show or set the scheduling policy (default: backfill), of the\n"
    "                                default queue or of the queue named in specs as `queue: Q`\n"
    "  daemon status [--json] | start [--persist] | stop | log [--lines N]\n"
    "                                the Trainyard service (trainyardd) of the database: it owns the queue,\n"
    "                                the nodes and recording; started on demand, it stops when idle (5 min)\n"
    "  node add NAME --host ALIAS [--user U] [--port P] [--identity FILE] [--agent-path PATH]\n"
    "           [--label L]... [--accept-new-host-key]\n"
    "                                add an SSH node (ALIAS as in ~/.ssh/config): checks its host key,\n"
    "                                logs in, deploys the agent and lists its GPUs, then stores it\n"
    "  node ls [--json]              list the stored nodes\n"
    "  node trust NAME               accept a stored node's host key that is not known (any more),\n"
    "                                e.g. after it changed and ssh-keygen -R removed the old one\n"
    "  node rm NAME [--force]        forget a node; refused while runs on it have not ended (--force\n"
    "                                records them failed; their processes on the node are left alone)\n"
    "  submit FILE --node NAME       run only on that node (\"local\" = this machine)\n"
    "\n"
    "RUN is a run id or a run name (the newest run with that name).\n"
    "--json: one JSON document on stdout (names raw, times ISO 8601 UTC with ms); errors stay on stderr.\n"
    "SSH: ~/.ssh/config of the home directory in the password database (as ssh), or $TRAINYARD_SSH_CONFIG.\n"
    "A node that cannot be reached is reported with the reason (host key, authentication, network): submit\n"
    "then leaves the run queued and exits 5 (submit --follow waits for the node; Ctrl+C detaches); cancel\n"
    "and logs exit 5 (logs after printing what is stored).\n"
    "Database: --db PATH, else $TRAINYARD_DB, else ~/.local/share/trainyard/trainyard.db.\n"
    "Exit codes: 0 ok, 1 run failed, 2 usage, 3 invalid job spec, 4 no such run (or metric key), 5 database or agent error;\n"
    "submit --follow passes the run's own exit code through (128+N for signal N).\n";

int exitStatusOf(const RunRecord& r)
{
    if (r.state == RunState::Succeeded)
        return Ok;
    if (r.exitSignal)
        return 128 + *r.exitSignal;
    if (r.exitCode && *r.exitCode > 0 && *r.exitCode < 256)
        return *r.exitCode;
    return RunFailed;
}

// Ctrl+C while following detaches: the run keeps going on its node.
volatile std::sig_atomic_t g_interrupted = 0;
// Event-loop exit code: a node the command needs cannot be reached.
constexpr int kNodeDown = 200;
// Event-loop exit code: a bounded wait for the stored state ended first.
constexpr int kStillWaiting = 201;
// Event-loop exit code: the service's connection closed.
constexpr int kServiceGone = 203;
extern "C" void onSigint(int) { g_interrupted = 1; }

// Prints a run's console as it comes and ends the event loop when the run
// has ended and all of it was shown; from the engine of this process, or
// from the service (service::ServiceClient, whose signals have the same
// shapes; it sends a run's end only after its console).
template <class Source>
class Follower final : public QObject {
public:
    Follower(Source& engine, RunId id, bool printConsole, qint64 printFrom)
        : m_id(id)
        , m_print(printConsole)
        , m_printedUpTo(printFrom)
    {
        QObject::connect(&engine, &Source::consoleReceived, this, [this](RunId run, qint64 offset, const QByteArray& bytes) {
            if (run != m_id || !m_print)
                return;
            const qint64 end = offset + bytes.size();
            if (end <= m_printedUpTo)
                return;
            const qint64 skip = std::max<qint64>(0, m_printedUpTo - offset);
            ::fwrite(bytes.constData() + skip, 1, size_t(bytes.size() - skip), stdout);
            ::fflush(stdout);
            m_printedUpTo = end;
        });
        // Printing from a display-only watch (another process ingests): the
        // end is known from the database before the last bytes are shown, so
        // wait for the watch too.
        bool displayOnly = false;
        if constexpr (std::is_same_v<Source, RunEngine>)
            displayOnly = printConsole && !engine.ownsIngestion();
        QObject::connect(&engine, &Source::runStateChanged, this, [this, displayOnly](const RunRecord& r) {
            if (r.id != m_id)
                return;
            m_last = r;
            m_ended = isTerminal(r.state);
            if (m_ended && (!displayOnly || m_watchEnded))
                QCoreApplication::exit(0);
        });
        // What the run's user should act on (a synced link leading nowhere),
        // as the engine records it.
        QObject::connect(&engine, &Source::noticeAdded, this, [this](RunId run, const QString& text) {
            if (run == m_id)
                err() << "trainyardctl: run " << run << ": " << escapedName(text) << '\n';
            err().flush();
        });
        QObject::connect(&engine, &Source::watchEnded, this, [this](RunId run) {
            if (run != m_id)
                return;
            m_watchEnded = true;
            if (m_ended)
                QCoreApplication::exit(0);
        });
        auto* timer = new QTimer(this);
        QObject::connect(timer, &QTimer::timeout, this, [] {
            if (g_interrupted)
                QCoreApplication::exit(130);
        });
        timer->start(100);
    }
    std::optional<RunRecord> last() const { return m_last; }

private:
    RunId m_id;
    bool m_print;
    qint64 m_printedUpTo;
    std::optional<RunRecord> m_last;
    bool m_ended = false;
    bool m_watchEnded = false;
};

// Tells why a node the command needs cannot be reached (host key refused,
// authentication, network), once per distinct reason, and calls `onDown`
// with it (the first failure of each attempt) and `onUp` when it answers.
template <class Source>
class NodeWatch final : public QObject {
public:
    NodeWatch(Source& engine, const QString& node, std::function<void(const QString&)> onDown,
              std::function<void()> onUp = {})
    {
        if (node.isEmpty())
            return;
        QObject::connect(&engine, &Source::nodeStatusChanged, this,
                         [this, node, onDown = std::move(onDown), onUp = std::move(onUp)](const QString& n, bool ready,
                                                                                           const QString& reason) {
                             if (n != node)
                                 return;
                             if (ready) {
                                 m_said.clear();
                                 if (onUp)
                                     onUp();
                                 return;
                             }
                             if (reason != m_said) {
                                 err() << "trainyardctl: node " << escapedName(node) << " cannot be reached: " << escapedName(reason) << '\n';
                                 err().flush();
                                 m_said = reason;
                             }
                             if (onDown)
                                 onDown(reason);
                         });
    }

private:
    QString m_said;
};

int cmdValidate(const QStringList& args)
{
    if (args.size() != 1)
        return usageError(QStringLiteral("validate needs exactly one FILE"));
    const auto spec = parseJobSpecFile(args.front());
    if (!spec) {
        err() << spec.error().message << '\n';
        return InvalidSpec;
    }
    out() << args.front() << ": ok: run '" << escapedName(spec->name) << "': " << escapedJoin(spec->argv, QStringLiteral(" ")) << "\n  in " << escapedName(spec->workdir);
    if (spec->resources.gpus)
        out() << ", " << spec->resources.gpus << " GPU(s)";
    if (!spec->params.isEmpty())
        out() << ", " << spec->params.size() << " param(s)";
    out() << '\n';
    if (!spec->sweep.isEmpty()) {
        // Every combination is a spec of its own: each must be valid too.
        const auto runs = expandSweep(*spec);
        if (!runs) {
            err() << runs.error().message << '\n';
            return InvalidSpec;
        }
        QStringList axes;
        for (auto it = spec->sweep.cbegin(); it != spec->sweep.cend(); ++it)
            axes << QStringLiteral("%1 x %2").arg(escapedName(it.key())).arg(it.value().size());
        out() << "  sweep of " << runs->size() << " runs (" << axes.join(QStringLiteral(", ")) << ')';
        if (spec->maxConcurrent)
            out() << ", at most " << spec->maxConcurrent << " at once";
        out() << '\n';
    }
    return Ok;
}

// Waits for a submitted run through the service. Without `follow`: until its
// node took it (or refused it), or it is known to wait in the queue (then it
// says why and leaves it there: the service starts it). With it: until it
// ended, printing its console.
int waitForRun(Context& ctx, service::ServiceClient& svc, RunId id, bool follow)
{
    Follower follower(svc, id, follow, 0);
    constexpr int kQueued = 202;
    // While it waits in the queue, say why (once per change).
    auto lastReason = std::make_shared<QString>();
    // A service this command started may still be connecting its nodes: a
    // reason then is given a moment to go away (the run is placed).
    const int queuedGraceMs = svc.startedService() ? 1500 : 0;
    QObject::connect(&svc, &service::ServiceClient::pendingReasonsChanged, &follower,
                     [&follower, id, lastReason, follow, queuedGraceMs](const QHash<RunId, QString>& reasons) {
        const QString reason = reasons.value(id);
        if (reason.isEmpty())
            return;
        if (reason != *lastReason) {
            err() << "run " << id << " queued: " << escapedName(reason) << '\n';
            err().flush();
        }
        *lastReason = reason;
        if (!follow)
            QTimer::singleShot(queuedGraceMs, &follower, [] { QCoreApplication::exit(kQueued); });
    });
    if (!follow) {
        // Wait until the node took it (or refused it), then leave it running.
        QObject::connect(&svc, &service::ServiceClient::runStateChanged, &follower, [id](const RunRecord& r) {
            if (r.id == id && r.state != RunState::Queued && r.state != RunState::Starting)
                QCoreApplication::exit(0);
        });
    }
    QObject::connect(&svc, &service::ServiceClient::disconnected, &follower, [] { QCoreApplication::exit(kServiceGone); });
    // The node it must run on cannot be reached: say why; without --follow
    // leave it queued rather than wait for ever (with it, keep trying).
    const auto pinned = ctx.store->run(id);
    NodeWatch nodeWatch(svc, pinned && pinned->node != u"local" ? pinned->node : QString(), [&follower, follow](const QString&) {
        if (follow)
            return;
        if (const auto r = follower.last(); !r || r->state == RunState::Queued)
            QCoreApplication::exit(kNodeDown);
    });
    if (auto watching = svc.call(QStringLiteral("watch"), {{QStringLiteral("run"), id}, {QStringLiteral("console"), follow}}); !watching) {
        err() << "trainyardctl: " << escapedName(watching.error().message) << '\n';
        return Unavailable;
    }
    std::signal(SIGINT, onSigint);
    const int loop = QCoreApplication::exec();
    std::signal(SIGINT, SIG_DFL);
    // What the service said last is ahead of the database (its writes are
    // batched); the database has what the service did not send.
    Result<RunRecord> r = follower.last() ? Result<RunRecord>(*follower.last()) : ctx.store->run(id);
    if (!r) {
        err() << r.error().message << '\n';
        return Unavailable;
    }
    if (loop == kServiceGone) {
        err() << "trainyardctl: the Trainyard service stopped while run " << id << " was " << runStateName(r->state)
              << "; it keeps going and is recorded once the service runs again (trainyardctl daemon start)\n";
        return Unavailable;
    }
    if (loop == kNodeDown) {
        err() << "trainyardctl: run " << id << " stays queued; the service starts it once node " << escapedName(r->node)
              << " can be reached\n";
        return Unavailable;
    }
    if (loop == 130) {
        if (r->state == RunState::Queued)
            err() << "\ntrainyardctl: detached; run " << id << " stays queued; the service starts it\n";
        else
            err() << "\ntrainyardctl: detached; run " << id << " keeps running. Follow it again with: trainyardctl logs "
                  << id << " --follow\n";
        return 130;
    }
    if (loop == kQueued) {
        out() << "run " << id << " (" << escapedName(r->name) << ") queued: " << escapedName(*lastReason) << '\n';
        return Ok;
    }
    if (!follow) {
        out() << "run " << id << " (" << escapedName(r->name) << ") " << runStateName(r->state);
        if (r->node.isEmpty()) // refused before placement: the reason follows on stderr
            out() << " before it was placed on a node";
        else
            out() << " on " << escapedName(r->node);
        out() << '\n';
        if (r->state == RunState::Failed) {
            err() << "run " << id << " failed: " << escapedName(r->failureReason) << '\n';
            return RunFailed;
        }
        return Ok;
    }
    if (!isTerminal(r->state)) {
        err() << "trainyardctl: run " << id << " is " << runStateName(r->state) << '\n';
        return Unavailable;
    }
    err() << "trainyardctl: run " << id << " (" << escapedName(r->name) << ") " << runStateName(r->state);
    if (r->exitCode)
        err() << ", exit code " << *r->exitCode;
    if (r->exitSignal)
        err() << ", signal " << *r->exitSignal;
    if (!r->failureReason.isEmpty() && !(r->exitCode && r->failureReason == QStringLiteral("exit code %1").arg(*r->exitCode)))
        err() << ": " << escapedName(r->failureReason);
    err() << '\n';
    return exitStatusOf(*r);
}

// Adds the stored SSH node `name` to the engine (nothing for "local" or "").
// `connectTimeoutSec` > 0: instead of the default (the SSH config's
// ConnectTimeout still wins).
Result<void> addStoredNode(Context& ctx, RunEngine& engine, const QString& name, int connectTimeoutSec = 0)
{
    if (name.isEmpty() || name == u"local")
        return {};
    const auto n = storedNode(ctx, name);
    if (!n)
        return fail(QStringLiteral("no node named '%1' (see trainyardctl node ls)").arg(name));
    NodeConnectOptions options;
    options.connectTimeoutSec = connectTimeoutSec;
    engine.addNode(n->name, transportForNode(*n, localAgentPath(), passphraseProvider(), options));
    return {};
}

// Destroys an engine once the work under way for runs is done, 30 s at
// most: the start requests it sent (a run started for another trainyardctl's
// submit is recorded as its node's agent answers, not left unknown by this
// process ending) and the artifact listing of runs that ended under it. It
// starts no more queued runs meanwhile; the next ingestion owner does.
struct EngineDeleter {
    void operator()(RunEngine* engine) const
    {
        engine->stopStarting();
        if (engine->postRunWorkPending() || engine->startsPending()) {
            QEventLoop loop;
            const auto quitWhenIdle = [engine, &loop] {
                if (!engine->postRunWorkPending() && !engine->startsPending())
                    loop.quit();
            };
            QObject::connect(engine, &RunEngine::postRunWorkDone, &loop, quitWhenIdle);
            QObject::connect(engine, &RunEngine::startsSettled, &loop, quitWhenIdle);
            QTimer::singleShot(30000, &loop, &QEventLoop::quit);
            loop.exec();
        }
        delete engine;
    }
};
using EnginePtr = std::unique_ptr<RunEngine, EngineDeleter>;

// `ingest`: try to become the database's ingestion owner (records consoles,
// metrics and run ends); a display-only engine just reads nodes.
EnginePtr makeEngine(Context& ctx, const QString& node = {}, bool ingest = true)
{
    EnginePtr engine(new RunEngine(ctx.store.get(), ctx.dbPath));
    engine->addLocalNode(localAgentPath());
    if (auto added = addStoredNode(ctx, *engine, node); !added)
        err() << "trainyardctl: " << added.error().message << '\n';
    if (ingest)
        engine->acquireIngestion();
    return engine;
}

int waitForSweep(Context& ctx, service::ServiceClient& svc, const QList<RunId>& ids, bool follow);
// Where a submitted spec's text came from: what the service needs to parse it again.
struct SpecSource {
    QString origin;                      // for messages: the file, or "run N spec"
    QString baseDir;                     // relative workdirs resolve against it
    QMap<QString, QString> overrides;    // --param
};
int submitSpec(Context& ctx, const JobSpec& spec, const SpecSource& source, const QString& node, bool follow);

// The options submit and rerun share: one positional argument, --follow,
// --param name=value (repeatable) and --node; `*overrides` gets the params.
// A usage error is returned as its exit code.
std::optional<int> parseSubmitOptions(QCommandLineParser& p, const QString& command, const QString& positional,
                                      const QStringList& args, QMap<QString, QString>* overrides)
{
    p.addPositionalArgument(positional, positional == u"RUN" ? QStringLiteral("the run to submit again")
                                                             : QStringLiteral("job spec (.yaml) or script (.py/.sh)"));
    p.addOption({QStringLiteral("follow"), QStringLiteral("print the console and exit with the run's status")});
    p.addOption({QStringLiteral("param"), QStringLiteral("override a param (name=value)"), QStringLiteral("name=value")});
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

int cmdSubmit(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    QMap<QString, QString> overrides;
    if (const auto bad = parseSubmitOptions(p, QStringLiteral("submit"), QStringLiteral("FILE"), args, &overrides))
        return *bad;
    const QString file = p.positionalArguments().front();
    const bool script = file.endsWith(QStringLiteral(".py")) || file.endsWith(QStringLiteral(".sh")) || QFileInfo(file).isDir();
    if (script && !overrides.isEmpty())
        return usageError(QStringLiteral("--param needs a job spec with params, not a script"));
    const Result<JobSpec> spec = script ? jobSpecForScript(file) : parseJobSpecFile(file, overrides);
    if (!spec) {
        err() << spec.error().message << '\n';
        return InvalidSpec;
    }
    const SpecSource source{file, script ? spec->workdir : QFileInfo(file).absolutePath(), overrides};
    return submitSpec(ctx, *spec, source, p.value(QStringLiteral("node")), p.isSet(QStringLiteral("follow")));
}

// rename / tag / note / archive through the service's `annotate` op,
// connecting (starting it) at the first change, once.
RunAnnotator serviceAnnotator(const Context& ctx)
{
    auto svc = std::make_shared<std::unique_ptr<service::ServiceClient>>();
    return [&ctx, svc](RunId run, const RunAnnotation& a) -> Result<void> {
        if (!*svc) {
            auto c = service::ServiceClient::connectTo(ctx.dbPath, service::ServiceClient::Start::IfNeeded);
            if (!c)
                return std::unexpected(c.error());
            *svc = std::move(*c);
        }
        QJsonObject req = service::annotationToJson(a);
        req.insert(QStringLiteral("run"), run);
        if (auto done = (*svc)->call(QStringLiteral("annotate"), req); !done)
            return std::unexpected(done.error());
        return {};
    };
}

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
    const QJsonObject specJson{{QStringLiteral("yaml"), spec->yaml},
                               {QStringLiteral("origin"), source.origin},
                               {QStringLiteral("base_dir"), source.baseDir},
                               {QStringLiteral("source_path"), spec->sourcePath},
                               {QStringLiteral("params"), params}};
    const auto submitted = svc->call(QStringLiteral("submit"), {{QStringLiteral("spec"), specJson}, {QStringLiteral("node"), node}});
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
    err() << "submitted sweep " << escapedName(spec->name) << ": " << ids.size() << " runs, " << ids.front() << " to " << ids.back();
    if (spec->maxConcurrent)
        err() << ", at most " << spec->maxConcurrent << " at once";
    err() << '\n';
    err().flush();
    return waitForSweep(ctx, *svc, ids, follow);
}

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
        QObject::connect(&svc, &service::ServiceClient::consoleReceived, &guard, [console](RunId run, qint64 offset, const QByteArray& bytes) {
            const QByteArray lines = console->feed(run, offset, bytes);
            if (lines.isEmpty())
                return;
            ::fwrite(lines.constData(), 1, size_t(lines.size()), stdout);
            ::fflush(stdout);
        });
    QObject::connect(&svc, &service::ServiceClient::runStateChanged, &guard, [=](const RunRecord& r) {
        if (!remaining->contains(r.id))
            return;
        const bool done = follow ? isTerminal(r.state) : (r.state != RunState::Queued && r.state != RunState::Starting && r.state != RunState::Held);
        if (done)
            finish(r);
    });
    // Without --follow, the runs that wait with a reason are left to the
    // service once every other one has started.
    const int queuedGraceMs = svc.startedService() ? 1500 : 0;
    QObject::connect(&svc, &service::ServiceClient::pendingReasonsChanged, &guard, [=, &guard](const QHash<RunId, QString>& reasons) {
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
        if (auto w = svc.call(QStringLiteral("watch"), {{QStringLiteral("run"), id}, {QStringLiteral("console"), follow}}); !w) {
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

int cmdLogs(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN"), QStringLiteral("run id or name"));
    p.addOption({QStringLiteral("follow"), QStringLiteral("keep printing until the run ends")});
    if (!p.parse(QStringList{QStringLiteral("logs")} + args) || p.positionalArguments().size() != 1)
        return usageError(p.errorText().isEmpty() ? QStringLiteral("logs needs exactly one RUN") : p.errorText());
    auto run = findRun(*ctx.store, p.positionalArguments().front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    const bool follow = p.isSet(QStringLiteral("follow"));
    // Without --follow and no other process ingesting: store what the node
    // has first, then print the stored copy. What is shown is then kept, also
    // if the node's console is emptied before anything else stores it.
    std::optional<QStringList> behind;
    if (!follow && !isTerminal(run->state)) {
        behind = catchUp(ctx);
        if (behind)
            run = ctx.store->run(run->id);
        if (!run) {
            err() << run.error().message << '\n';
            return NoSuchRun;
        }
    }
    qint64 printed = 0;
    if (!run->consolePath.isEmpty()) {
        QFile f(run->consolePath);
        if (f.open(QIODevice::ReadOnly)) {
            while (!f.atEnd()) {
                const QByteArray chunk = f.read(1 << 20);
                ::fwrite(chunk.constData(), 1, size_t(chunk.size()), stdout);
                printed += chunk.size();
            }
            ::fflush(stdout);
        }
    }
    if (isTerminal(run->state) && !follow)
        return Ok;
    if (isTerminal(run->state))
        return exitStatusOf(*run);
    const auto nodeDown = [&] {
        err() << "trainyardctl: printed the console as stored here (" << printed << " bytes); the rest is on node "
              << escapedName(run->node) << ", which cannot be reached\n";
        return Unavailable;
    };
    // Not started yet (the service schedules it): without --follow there
    // is nothing on a node to wait for; the watch would wait until it starts.
    if (!follow && (run->agentRunId.isEmpty() || run->state == RunState::Queued || run->state == RunState::Held
                    || run->state == RunState::Starting)) {
        err() << "trainyardctl: run " << run->id << " is " << runStateName(run->state) << "; it has printed nothing yet\n";
        return Ok;
    }
    if (!follow) {
        // The service stored and this printed what the node had, unless the
        // node could not be reached or the service not asked.
        if (ctx.store->isReadOnly())
            return Ok; // as last recorded in it (said above)
        if (behind && !behind->contains(run->node.isEmpty() ? QStringLiteral("local") : run->node))
            return Ok;
        return nodeDown();
    }
    // Following: the rest as the service records it, from what was printed.
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    Follower follower(*svc, run->id, true, printed);
    NodeWatch watch(*svc, run->node.isEmpty() ? QStringLiteral("local") : run->node, [](const QString&) {});
    QObject::connect(svc.get(), &service::ServiceClient::disconnected, &follower, [] { QCoreApplication::exit(kServiceGone); });
    if (auto w = svc->call(QStringLiteral("watch"), {{QStringLiteral("run"), run->id}, {QStringLiteral("console"), true},
                                                     {QStringLiteral("from"), printed}});
        !w) {
        err() << "trainyardctl: " << escapedName(w.error().message) << '\n';
        return Unavailable;
    }
    std::signal(SIGINT, onSigint);
    const int loop = QCoreApplication::exec();
    std::signal(SIGINT, SIG_DFL);
    if (loop == 130)
        return 130;
    if (loop == kServiceGone) {
        err() << "trainyardctl: the Trainyard service stopped while run " << run->id << " was going\n";
        return Unavailable;
    }
    const auto finished = follower.last() ? Result<RunRecord>(*follower.last()) : ctx.store->run(run->id);
    return finished ? exitStatusOf(*finished) : Unavailable;
}

int cmdCancel(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN"), QStringLiteral("run id or name"));
    p.addOption({QStringLiteral("grace"), QStringLiteral("seconds between SIGTERM and SIGKILL"), QStringLiteral("seconds"), QStringLiteral("10")});
    if (!p.parse(QStringList{QStringLiteral("cancel")} + args) || p.positionalArguments().size() != 1)
        return usageError(p.errorText().isEmpty() ? QStringLiteral("cancel needs exactly one RUN") : p.errorText());
    auto run = findRun(*ctx.store, p.positionalArguments().front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    if (isTerminal(run->state)) {
        out() << "run " << run->id << " already " << runStateName(run->state) << '\n';
        return Ok;
    }
    bool ok = false;
    const double grace = p.value(QStringLiteral("grace")).toDouble(&ok);
    if (!ok || grace < 0)
        return usageError(QStringLiteral("--grace needs a number of seconds"));
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    Follower follower(*svc, run->id, false, 0);
    // Ended before the loop runs (another cancel finished the run between the
    // read above and the first poll): the code is kept, not lost to an
    // exit() before exec(), which would leave this command waiting for ever.
    EventWait wait;
    // A waiting run is cancelled in the database; a started one through its
    // node's agent, once the service has it connected (or not at all if it
    // cannot be reached).
    const bool waiting = run->state == RunState::Queued || run->state == RunState::Held;
    const QString node = run->node.isEmpty() ? QStringLiteral("local") : run->node;
    bool sent = false;
    const auto send = [&] {
        if (sent)
            return;
        sent = true;
        if (auto c = svc->call(QStringLiteral("cancel"), {{QStringLiteral("run"), run->id}, {QStringLiteral("grace_ms"), int(grace * 1000)}}); !c) {
            err() << "trainyardctl: " << escapedName(c.error().message) << '\n';
            wait.done(kNodeDown);
        }
    };
    NodeWatch watch(*svc, waiting ? QString() : node, [&sent, &wait](const QString&) {
        if (!sent)
            wait.done(kNodeDown);
    }, [&] { QTimer::singleShot(0, svc.get(), send); });
    // The end is recorded by the service (for this cancel or another one at
    // the same time): the stored state is read again every 250 ms, for the
    // grace and kCancelWaitMs more at most.
    constexpr qint64 kCancelWaitMs = 30000;
    const qint64 waitMs = qint64(grace * 1000) + kCancelWaitMs;
    StoredRunWait ended(ctx.store.get(), run->id, [](const RunRecord& r) { return isTerminal(r.state); });
    QObject::connect(&ended, &StoredRunWait::satisfied, &watch, [&wait] { wait.done(0); });
    QObject::connect(&ended, &StoredRunWait::timedOut, &watch, [&wait] { wait.done(kStillWaiting); });
    QObject::connect(svc.get(), &service::ServiceClient::cancelFailed, &watch, [id = run->id, &ended, &wait](RunId r, const QString& reason) {
        if (r != id)
            return;
        ended.check(); // ended meanwhile: cancelled, not failed
        if (ended.finished())
            return;
        err() << "trainyardctl: " << reason << '\n';
        wait.done(kNodeDown);
    });
    QObject::connect(svc.get(), &service::ServiceClient::disconnected, &watch, [&wait] { wait.done(kServiceGone); });
    bool nodeReady = waiting;
    if (!waiting)
        if (const auto status = svc->call(QStringLiteral("status")))
            for (const QJsonValue& n : status->value(QStringLiteral("nodes")).toArray())
                if (n.toObject().value(QStringLiteral("name")).toString() == node)
                    nodeReady = n.toObject().value(QStringLiteral("ready")).toBool();
    if (nodeReady)
        QTimer::singleShot(0, svc.get(), send);
    ended.start(250, waitMs);
    std::signal(SIGINT, onSigint);
    const int loop = wait.exec();
    std::signal(SIGINT, SIG_DFL);
    if (loop == kNodeDown) {
        if (const auto now = ctx.store->run(run->id); now && isTerminal(now->state)) {
            out() << "run " << run->id << " " << runStateName(now->state) << '\n';
            return Ok;
        }
        err() << "trainyardctl: run " << run->id << " was not cancelled: its node " << node
              << " cannot be reached (the run goes on there if it is running)\n";
        return Unavailable;
    }
    if (loop == 130)
        return 130;
    if (loop == kServiceGone) {
        err() << "trainyardctl: the Trainyard service stopped before run " << run->id << " ended\n";
        return Unavailable;
    }
    auto after = ctx.store->run(run->id);
    if (loop == kStillWaiting) {
        err() << "trainyardctl: run " << run->id << " was sent the cancel but is still "
              << (after ? runStateName(after->state) : QStringLiteral("?")) << " after " << waitMs / 1000
              << " s; its end is recorded once its node's agent reports it\n";
        return Unavailable;
    }
    out() << "run " << run->id << " " << (after ? runStateName(after->state) : QStringLiteral("?")) << '\n';
    return Ok;
}

int cmdRm(Context& ctx, const QStringList& args)
{
    if (args.size() != 1)
        return usageError(QStringLiteral("rm needs exactly one RUN"));
    auto run = findRun(*ctx.store, args.front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    if (!isTerminal(run->state)) {
        err() << "run " << run->id << " is " << runStateName(run->state) << ": cancel it first\n";
        return Usage;
    }
    // The service deletes it (the row, then its folder with the console
    // copy and downloaded artifacts), as the GUI's Delete does.
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    if (auto deleted = svc->call(QStringLiteral("delete_run"), {{QStringLiteral("run"), run->id}}); !deleted) {
        err() << "trainyardctl: " << escapedName(deleted.error().message) << '\n';
        return Unavailable;
    }
    out() << "deleted run " << run->id << '\n';
    return Ok;
}

// hold / release / priority / top: change a waiting run, through the
// service (started when not running), whose engine schedules with it.
int cmdQueueOp(Context& ctx, const QString& op, const QStringList& args)
{
    const int want = op == u"priority" ? 2 : 1;
    if (args.size() != want)
        return usageError(op == u"priority" ? QStringLiteral("priority needs RUN and a number")
                                            : QStringLiteral("%1 needs exactly one RUN").arg(op));
    auto run = findRun(*ctx.store, args.front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    QJsonObject req{{QStringLiteral("run"), run->id}, {QStringLiteral("action"), op}};
    if (op == u"priority") {
        bool ok = false;
        const int priority = args.at(1).toInt(&ok);
        if (!ok)
            return usageError(QStringLiteral("priority must be an integer, not '%1'").arg(args.at(1)));
        req.insert(QStringLiteral("priority"), priority);
    }
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    const auto done = svc->call(QStringLiteral("queue"), req);
    if (!done) {
        err() << "trainyardctl: " << escapedName(done.error().message) << '\n';
        return done.error().kind == ErrorKind::NotFound ? NoSuchRun : Usage;
    }
    const QJsonObject after = done->value(QStringLiteral("run")).toObject();
    out() << "run " << run->id << " " << after.value(QStringLiteral("state")).toString() << ", priority "
          << after.value(QStringLiteral("priority")).toInt() << '\n';
    return Ok;
}

// trainyardctl artifacts RUN [--download DIR]: the files of the run matching
// its spec's `artifacts` globs (asked from its node, recorded in the
// database); --download copies them (default: the run's local results folder,
// <db>.runs/<id>/artifacts). Refused names are listed and make the exit code 5.
int cmdArtifacts(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN"), QStringLiteral("run id or name"));
    p.addOption({QStringLiteral("download"), QStringLiteral("copy them into DIR"), QStringLiteral("DIR")});
    p.addOption({QStringLiteral("to-results"), QStringLiteral("copy them into the run's local results folder")});
    if (!p.parse(QStringList{QStringLiteral("artifacts")} + args) || p.positionalArguments().size() != 1)
        return usageError(p.errorText().isEmpty() ? QStringLiteral("artifacts needs exactly one RUN") : p.errorText());
    auto run = findRun(*ctx.store, p.positionalArguments().front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    QString dest = p.value(QStringLiteral("download"));
    if (dest.isEmpty() && p.isSet(QStringLiteral("to-results")))
        dest = runDataDir(ctx.dbPath, run->id) + QStringLiteral("/artifacts");
    // Nothing to ask a node for: said at once, as the GUI does. Not an error
    // (exit 0, like an empty listing): the run did what its spec asked.
    const Result<JobSpec> spec = parseJobSpec(run->specYaml, QStringLiteral("run %1 spec").arg(run->id),
                                              run->workdir.isEmpty() ? QDir::rootPath() : run->workdir);
    if (spec && spec->artifacts.isEmpty()) {
        err() << "trainyardctl: run " << run->id << " (" << escapedName(run->name)
              << ") has no artifacts: its job spec declares no `artifacts:` globs\n";
        return Ok;
    }
    auto engine = makeEngine(ctx, run->node, false);
    int code = Ok;
    EventWait wait;
    auto print = [&](const AgentFileList& l) {
        QList<AgentFileEntry> files = l.files; // by path, as ls lists them
        std::sort(files.begin(), files.end(),
                  [](const AgentFileEntry& a, const AgentFileEntry& b) { return a.absolutePath < b.absolutePath; });
        for (const AgentFileEntry& f : std::as_const(files))
            out() << escapedName(f.absolutePath) << '\t' << f.size << '\t' << f.type
                  << (f.type == u"symlink" ? QStringLiteral(" -> ") + escapedName(f.linkTarget) : QString()) << '\n';
    };
    if (dest.isEmpty()) {
        engine->listArtifacts(run->id, [&](const Result<AgentFileList>& l) {
            if (!l) {
                err() << "trainyardctl: " << l.error().message << '\n';
                code = Unavailable;
            } else {
                print(*l);
            }
            wait.done(0);
        });
    } else {
        engine->downloadArtifacts(run->id, dest, [&](const Result<ArtifactDownload>& d) {
            if (!d) {
                err() << "trainyardctl: " << d.error().message << '\n';
                code = Unavailable;
            } else {
                for (const QString& f : d->downloaded)
                    out() << "downloaded " << escapedName(QDir(dest).filePath(f)) << '\n';
                for (const QString& r : d->refused)
                    err() << "trainyardctl: run " << run->id << ": artifact " << escapedName(r) << '\n';
                if (!d->refused.isEmpty())
                    code = Unavailable;
            }
            wait.done(0);
        });
    }
    wait.exec(); // the answer may have come already (a run that never started)
    ctx.store->flush();
    return code;
}

// Dispatches a command that needs the database (below run()).

} // namespace

void installMessageHandler()
{
    qInstallMessageHandler(&printMessage);
}

int run(const QStringList& argsIn)
{
    QStringList args = argsIn.mid(1);
    QString dbPath;
    // --db may come anywhere (trainyardctl ls --db x.db), not only first.
    for (qsizetype i = 0; i < args.size(); ++i) {
        if (args[i] == u"--db" && i + 1 < args.size()) {
            dbPath = args[i + 1];
            args.remove(i, 2);
            --i;
        } else if (args[i].startsWith(QStringLiteral("--db="))) {
            dbPath = args[i].mid(5);
            args.remove(i);
            --i;
        }
    }
    while (!args.isEmpty() && args.front().startsWith(u'-')) {
        const QString opt = args.takeFirst();
        if (opt == u"--help" || opt == u"-h") {
            out() << kHelp;
            return Ok;
        }
        if (opt == u"--version") {
            out() << "trainyardctl " << QCoreApplication::applicationVersion() << '\n';
            return Ok;
        }
        if (opt == u"--db" && !args.isEmpty())
            dbPath = args.takeFirst();
        else if (opt.startsWith(QStringLiteral("--db=")))
            dbPath = opt.mid(5);
        else
            return usageError(QStringLiteral("unknown option '%1'").arg(opt));
    }
    if (args.isEmpty()) {
        err() << kHelp;
        return Usage;
    }
    const QString command = args.takeFirst();
    if (args.contains(QStringLiteral("--help")) || args.contains(QStringLiteral("-h"))) {
        const QString help = commandHelp(command);
        out() << (help.isEmpty() ? QString::fromLatin1(kHelp) : help);
        return Ok;
    }
    if (command == u"validate")
        return cmdValidate(args);
    if (command == u"daemon") // before the database is opened: the service opens it
        return daemonCommand(dbPath.isEmpty() ? defaultDatabasePath() : dbPath, args, out(), err());
    if (command == u"help") {
        const QString help = args.isEmpty() ? QString() : commandHelp(args.front());
        out() << (help.isEmpty() ? QString::fromLatin1(kHelp) : help);
        return Ok;
    }
    const Command* cmd = findCommand(command);
    if (!cmd)
        return usageError(QStringLiteral("unknown command '%1'").arg(command));

    Context ctx;
    ctx.dbPath = dbPath.isEmpty() ? defaultDatabasePath() : dbPath;
    // Only what adds something new (a run, a node, a policy) may start a
    // database; a command about runs that exist creates no file or folder.
    const DatabaseUse use = cmd->use(args);
    if (use != DatabaseUse::Creates && !QFileInfo::exists(ctx.dbPath)) {
        err() << "trainyardctl: no result database at " << escapedName(ctx.dbPath)
              << " (nothing was submitted with it yet; the database is --db PATH, else $TRAINYARD_DB, else "
              << escapedName(defaultDatabasePath()) << ")\n";
        return Unavailable;
    }
    // Commands that only show the database also work on one this user cannot
    // write (a colleague's results on a read-only share); the others refuse it.
    const bool readsOnly = use == DatabaseUse::Reads;
    auto store = ResultStore::open(ctx.dbPath, readsOnly ? StoreAccess::ReadOnlyIfNeeded : StoreAccess::ReadWrite);
    if (!store) {
        err() << "trainyardctl: " << store.error().message;
        if (!readsOnly && store.error().kind == ErrorKind::ReadOnly)
            err() << "; '" << command << "' changes it, so it did not run (" << readingCommandNames()
                  << " only read it and work)";
        err() << '\n';
        return Unavailable;
    }
    ctx.store = std::move(*store);
    const int code = cmd->run(ctx, command, args);
    // A damaged file found while reading was explained once (the store's
    // warning); what was printed is incomplete, so the command did not succeed.
    if (!ctx.store->damage().isEmpty())
        return Unavailable;
    return code;
}

} // namespace ty::cli

namespace ty::cli {
namespace {

DatabaseUse reads(const QStringList&) { return DatabaseUse::Reads; }
DatabaseUse changes(const QStringList&) { return DatabaseUse::Changes; }
DatabaseUse creates(const QStringList&) { return DatabaseUse::Creates; }
// node ls reads; node add / rm change the node list (add may start a database).
DatabaseUse nodeUse(const QStringList& args)
{
    if (args.isEmpty())
        return DatabaseUse::Changes; // usage: nothing to start a database for
    return args.front() == u"ls" ? DatabaseUse::Reads : DatabaseUse::Creates;
}

template <int (*F)(Context&, const QStringList&)>
int plain(Context& ctx, const QString&, const QStringList& args)
{
    return F(ctx, args);
}

int labels(Context& ctx, const QString& command, const QStringList& args)
{
    return runLabelCommand(command, *ctx.store, [&ctx](const QString& spec) { return findRun(*ctx.store, spec); },
                           serviceAnnotator(ctx), args, out(), err());
}

const Command kCommands[] = {
    {u"submit", creates, plain<cmdSubmit>},
    {u"rerun", changes, plain<cmdRerun>},
    {u"ls", reads, plain<cmdLs>},
    {u"show", reads, plain<cmdShow>},
    {u"logs", reads, plain<cmdLogs>},
    {u"metrics", reads, plain<cmdMetrics>},
    {u"artifacts", reads, plain<cmdArtifacts>},
    {u"cancel", changes, plain<cmdCancel>},
    {u"rm", changes, plain<cmdRm>},
    {u"rename", changes, labels},
    {u"tag", changes, labels},
    {u"note", changes, labels},
    {u"archive", changes, labels},
    {u"unarchive", changes, labels},
    {u"import", changes, plain<cmdImport>},
    {u"queue", reads, plain<cmdQueue>},
    {u"hold", changes, cmdQueueOp},
    {u"release", changes, cmdQueueOp},
    {u"priority", changes, cmdQueueOp},
    {u"top", changes, cmdQueueOp},
    {u"policy", creates, plain<cmdPolicy>},
    {u"node", nodeUse, plain<cmdNode>},
};

} // namespace

std::span<const Command> commands()
{
    return kCommands;
}

const Command* findCommand(QStringView name)
{
    for (const Command& c : kCommands)
        if (c.name == name)
            return &c;
    return nullptr;
}

QString readingCommandNames()
{
    QStringList names;
    for (const Command& c : kCommands)
        if (c.use({}) == DatabaseUse::Reads)
            names.append(c.name.toString());
    // The last two joined by "and": "ls, show, ..., queue and artifacts".
    const QString last = names.takeLast();
    return names.join(QStringLiteral(", ")) + QStringLiteral(" and ") + last;
}

} // namespace ty::cli
