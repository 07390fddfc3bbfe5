#include "CommandHelp.h"

#include <QStringList>

namespace ty::cli {
namespace {

struct Option {
    const char* flag;
    const char* meaning;
};

struct CommandEntry {
    const char* name;
    const char* usage; // after "trainyardctl "
    const char* summary;
    std::initializer_list<Option> options;
};

// One entry per command (aliases such as hold/release share one).
const CommandEntry kCommands[] = {
        {"validate", "validate FILE", "Check a job spec; errors name file:line:column.", {}},
        {"submit", "submit FILE [--follow] [--node NAME]",
                "Submit a job spec (or a .py/.sh script) as a run; a pipeline file (one with steps:) is submitted as "
                "pipeline submit does.",
                {{"--follow",
                         "print the run's console as it comes and exit with the run's exit status (Ctrl+C detaches)"},
                        {"--node NAME", "run only on that node (\"local\" = this machine)"}}},
        {"ls", "ls [--json] [--archived]", "List runs, newest first (a run with notices says how many).",
                {{"--json", "one JSON document on stdout"}, {"--archived", "list archived runs only"}}},
        {"show", "show RUN [--json]",
                "One run's details: state, node, command, times, params, latest metrics and its notices.",
                {{"--json", "one JSON document on stdout"}}},
        {"artifacts", "artifacts RUN [--download DIR | --to-results]",
                "List the files matching the spec's `artifacts` globs, or copy them.",
                {{"--download DIR", "copy the artifacts into DIR"},
                        {"--to-results", "copy them into the run's results folder"}}},
        {"logs", "logs RUN [--follow]", "Print a run's console.",
                {{"--follow", "keep printing as the run writes, until it ends"}}},
        {"cancel", "cancel RUN [--grace SECONDS]",
                "Send SIGTERM to the run's process group, SIGKILL after the grace period.",
                {{"--grace SECONDS", "seconds between SIGTERM and SIGKILL (default 10)"}}},
        {"metrics", "metrics RUN [--csv|--json] [--key K] [--attempts]",
                "Print a run's metric points (--attempts: every attempt of a retried run as one series).",
                {{"--csv", "comma-separated values with a header line"},
                        {"--json", "{key: [{step, epoch, wall_time, value}]}"}, {"--key K", "only metric K"},
                        {"--attempts",
                                "a retried run's attempts as one series; each resumed attempt takes over from "
                                "its first step"}}},
        {"rm", "rm RUN", "Delete a finished run and its metrics from the database.", {}},
        {"rename", "rename RUN NAME", "Give a run another name.", {}},
        {"tag", "tag RUN [+TAG|-TAG|TAG]...", "Add (+ or bare) or remove (-) tags; without tags, list them.", {}},
        {"note", "note RUN [TEXT|-]", "Set a run's notes (- reads stdin; \"\" clears); without TEXT, print them.", {}},
        {"archive", "archive RUN... | unarchive RUN...",
                "Leave finished runs out of ls and the GUI's table, or bring them back.", {}},
        {"rerun", "rerun RUN [--param K=V]... [--node N] [--follow]",
                "Submit a run again with its params (a sweep's run alone).",
                {{"--param K=V", "override parameter K (repeatable)"}, {"--node N", "run only on node N"},
                        {"--follow", "print the console and exit with the run's exit status"}}},
        {"import", "import RUN FILE...",
                "Add metrics from framework files: Lightning metrics.csv, TensorBoard events.out.tfevents.*, "
                "Hugging Face trainer_state.json, JSON lines.",
                {}},
        {"queue", "queue [--json]", "Waiting runs in scheduling order, with why each waits.",
                {{"--json", "one JSON document on stdout"}}},
        {"hold", "hold RUN | release RUN", "Keep a queued run from starting, or let it start again.", {}},
        {"priority", "priority RUN N | top RUN", "Change a waiting run's priority, or put it first.", {}},
        {"policy",
                "policy [fcfs|priority|sjf|backfill|fair-share] [--queue Q] [--preemption on|off] | policy [--queue Q] "
                "--json",
                "Show or set the scheduling policy (default: backfill). Shown, it lists the resource pools too "
                "(GPU quotas per user and project, lending, borrow limit: the scheduler file's \"pools\").",
                {{"--queue Q", "the queue named in specs as `queue: Q` (default: the default queue)"},
                        {"--preemption on|off",
                                "whether its waiting runs may stop `preemptible` runs of lower priority (default: "
                                "off)"},
                        {"--json", "print the policy as one JSON document"}}},
        {"daemon", "daemon status [--json] | start [--persist] | stop | log [--lines N]",
                "The Trainyard service (trainyardd) of the database: it owns the queue, the nodes and recording; "
                "started on demand, it stops when idle (5 min).",
                {{"--json", "status as one JSON document"},
                        {"--persist", "start it so that it does not stop when idle"},
                        {"--lines N", "the last N lines of its log"}}},
        {"node",
                "node add NAME --host ALIAS [options] | node ls [--json] | node label NAME [--add L]... [--remove L]... "
                "| node trust NAME | node rm NAME [--force]",
                "Manage SSH nodes. add checks the host key, logs in, deploys the agent and lists its GPUs (a Slurm "
                "login node: the cluster's version and partitions), then stores the node; label changes the labels of "
                "any node, \"local\" (this machine) included, and the scheduler places by them at once (pools, "
                "prefer/avoid); trust accepts a stored node's changed host key; rm forgets a node.",
                {{"--host ALIAS", "add: the host, as in ~/.ssh/config"},
                        {"--kind ssh|slurm", "add: slurm for a Slurm cluster's login node (its runs go to sbatch)"},
                        {"--user U", "add: login user"}, {"--port P", "add: SSH port"},
                        {"--identity FILE", "add: private key file"},
                        {"--agent-path PATH", "add: where the agent is deployed on the node"},
                        {"--label L", "add: a label for placement (repeatable)"},
                        {"--add L", "label: add label L (repeatable; letters, digits, . _ -)"},
                        {"--remove L", "label: remove label L (repeatable)"},
                        {"--node-lost-after D", "add: how long it may be silent before its runs are lost (30m)"},
                        {"--accept-new-host-key", "add: accept a host key not yet known"},
                        {"--json", "ls: one JSON document on stdout"},
                        {"--force", "rm: also while runs on it have not ended (they are recorded failed)"}}},
        {"pipeline",
                "pipeline submit FILE [--param K=V]... [--node N] [--follow] [--json] | pipeline ls [--json] | "
                "pipeline show ID [--json] | pipeline cancel ID | pipeline resume ID [--follow] [--json]",
                "Pipelines of steps (prepare -> train -> evaluate) run by the service: each step is a run, started "
                "when the steps it depends on have ended; steps marked memoize are reused when nothing they depend "
                "on changed. Pipelines are kept in the result database and outlive the service. resume starts a "
                "failed or cancelled pipeline again, reusing the steps that succeeded.",
                {{"--param K=V", "submit: override pipeline param K (repeatable)"},
                        {"--node N", "submit: run every step on node N"},
                        {"--follow", "submit, resume: print each step's changes and exit with the pipeline's status"},
                        {"--json", "the pipeline (or the list) as JSON"}}},
        {"cache",
                "cache ls [--pipeline P] [--step S] [--json] | cache explain STEP [--pipeline P] [--json] | "
                "cache rm KEY | --step S [--pipeline P] | --all | --older-than DURATION | --max-size SIZE | "
                "cache policy [--max-age DURATION|off] [--max-size SIZE|off] [--json]",
                "Memoized pipeline steps: list the entries, explain a step (its newest entry and why its last run "
                "ran), remove entries or evict them by age or total output size. policy shows or sets the limits "
                "the service keeps the cache within (default 90d and 50G; <db>.cache.json).",
                {{"--pipeline P", "only pipeline P's entries"}, {"--step S", "only step S's entries"},
                        {"--older-than DURATION", "rm: entries made at least DURATION ago (30m, 7d)"},
                        {"--max-size SIZE",
                                "rm: the oldest entries until the rest's outputs total at most SIZE; "
                                "policy: the limit kept"},
                        {"--max-age DURATION", "policy: entries made longer ago are evicted"},
                        {"--all", "rm: every entry"}, {"--json", "one JSON document on stdout"}}},
        {"group", "group ls [--kind sweep|gang|pipeline|attempts] [--json] | group show ID [--json]",
                "Run groups: a sweep's runs, a gang's ranks, a pipeline's step runs, a retried run's attempts. "
                "ls lists them with their sizes; show lists a group's runs in order (combination, rank, step, "
                "attempt). `ls group:ID` and `ls group:sweep` filter runs by group.",
                {{"--kind KIND", "ls: only groups of this kind"}, {"--json", "one JSON document on stdout"}}},
};

const char* aliasOf(const QString& command)
{
    if (command == u"release")
        return "hold";
    if (command == u"top")
        return "priority";
    if (command == u"unarchive")
        return "archive";
    return nullptr;
}

} // namespace

QString commandHelp(const QString& commandIn)
{
    const char* alias = aliasOf(commandIn);
    const QString command = alias ? QString::fromLatin1(alias) : commandIn;
    for (const CommandEntry& c : kCommands) {
        if (command != QLatin1String(c.name))
            continue;
        QString text = QStringLiteral("Usage: trainyardctl [--db PATH] %1\n\n%2\n")
                               .arg(QString::fromUtf8(c.usage), QString::fromUtf8(c.summary));
        if (c.options.size() > 0) {
            text += QStringLiteral("\nOptions:\n");
            for (const Option& o : c.options) {
                const QString flag = QString::fromUtf8(o.flag);
                text += QStringLiteral("  ") + flag.leftJustified(24) + u' ' + QString::fromUtf8(o.meaning) + u'\n';
            }
        }
        text += QStringLiteral("  %1 %2\n")
                        .arg(QStringLiteral("--db PATH").leftJustified(24),
                                QStringLiteral("the result database (else $TRAINYARD_DB)"));
        if (c.options.size() == 0)
            text.insert(text.lastIndexOf(QStringLiteral("  --db")), QStringLiteral("\nOptions:\n"));
        if (QString::fromUtf8(c.usage).contains(QStringLiteral("RUN")))
            text += QStringLiteral("\nRUN is a run id or a run name (the newest run with that name).\n");
        return text;
    }
    return {};
}

} // namespace ty::cli
