#include "Cli.h"

#include "CliCommon.h"
#include "CliPassphrase.h"
#include "CommandHelp.h"
#include "Commands.h"
#include "ImportCommand.h"
#include "LsCommand.h"
#include "RunControlCommands.h"
#include "RunWait.h"
#include "SubmitCommands.h"
#include "ValidateCommand.h"
#include "ArtifactsCommand.h"
#include "CacheCommand.h"
#include "GroupCommand.h"
#include "DaemonCommands.h"
#include "MetricsCommand.h"
#include "NodeCommands.h"
#include "PipelineCommands.h"
#include "PolicyCommand.h"
#include "QueueCommand.h"
#include "RunLabelCommands.h"
#include "ShowCommand.h"

#include "core/common/Paths.h"
#include "core/common/Run.h"
#include "core/store/ResultStore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>
#include <QTextStream>

#include <cstdio>

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

const char* kHelp
        = "Usage: trainyardctl [--db PATH] COMMAND [ARGS]   (--db may also follow the command)\n"
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
          "  policy [fcfs|priority|sjf|backfill|fair-share] [--queue Q] [--preemption on|off]\n"
          "  policy [--queue Q] --json     show or set the scheduling policy (default: backfill), of the\n"
          "                                default queue or of the queue named in specs as `queue: Q`;\n"
          "                                --preemption on lets its waiting runs stop `preemptible` runs of\n"
          "                                lower priority; without NAME it also lists the resource pools\n"
          "                                (GPU quotas, lending, borrow limit) of the scheduler file\n"
          "  daemon status [--json] | start [--persist] | stop | log [--lines N]\n"
          "                                the Trainyard service (trainyardd) of the database: it owns the queue,\n"
          "                                the nodes and recording; started on demand, it stops when idle (5 min)\n"
          "  node add NAME --host ALIAS [--user U] [--port P] [--identity FILE] [--agent-path PATH]\n"
          "           [--label L]... [--node-lost-after DURATION] [--accept-new-host-key]\n"
          "                                add an SSH node (ALIAS as in ~/.ssh/config): checks its host key,\n"
          "                                logs in, deploys the agent and lists its GPUs, then stores it\n"
          "  node ls [--json]              list the stored nodes\n"
          "  node label NAME [--add L]... [--remove L]...\n"
          "                                change a node's labels (\"local\" too; pools, prefer/avoid_labels);\n"
          "                                the scheduler uses them at once; without options it prints them\n"
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

DatabaseUse reads(const QStringList&)
{
    return DatabaseUse::Reads;
}
DatabaseUse changes(const QStringList&)
{
    return DatabaseUse::Changes;
}
DatabaseUse creates(const QStringList&)
{
    return DatabaseUse::Creates;
}
// node ls reads; node add / rm change the node list (add may start a database).
DatabaseUse nodeUse(const QStringList& args)
{
    if (args.isEmpty())
        return DatabaseUse::Changes; // usage: nothing to start a database for
    return args.front() == u"ls" ? DatabaseUse::Reads : DatabaseUse::Creates;
}

// pipeline ls / show only read; submit may start a database, cancel changes it.
DatabaseUse pipelineUse(const QStringList& args)
{
    if (args.isEmpty())
        return DatabaseUse::Changes;
    if (args.front() == u"ls" || args.front() == u"show")
        return DatabaseUse::Reads;
    return args.front() == u"submit" ? DatabaseUse::Creates : DatabaseUse::Changes;
}

// cache ls / explain only read; rm changes the database (through the service);
// policy writes the file beside it, before anything was submitted too.
DatabaseUse cacheUse(const QStringList& args)
{
    if (!args.isEmpty() && args.front() == u"policy")
        return DatabaseUse::Creates;
    return !args.isEmpty() && args.front() == u"rm" ? DatabaseUse::Changes : DatabaseUse::Reads;
}

template <int (*F)(Context&, const QStringList&)> int plain(Context& ctx, const QString&, const QStringList& args)
{
    return F(ctx, args);
}

int labels(Context& ctx, const QString& command, const QStringList& args)
{
    return runLabelCommand(
            command, *ctx.store, [&ctx](const QString& spec) { return findRun(*ctx.store, spec); },
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
        {u"pipeline", pipelineUse, plain<cmdPipeline>},
        {u"cache", cacheUse, plain<cmdCache>},
        {u"group", reads, plain<cmdGroup>},
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
