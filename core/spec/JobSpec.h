#pragma once

#include "core/common/Result.h"
#include "core/retry/RetryPolicy.h"

#include <QFileInfo>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

namespace ty {

// A metric rule from the spec: `regex` must contain a named group `value`;
// an optional group `key` names the metric per match, else `key` is used;
// an optional group `step` gives the step.
struct MetricRuleSpec {
    QString key;
    QString regex;
    int line = 0; // 1-based position in the spec file, for error messages
    int column = 0;
};

// Resource request of one run (per node). Sizes are MiB, times are seconds.
struct ResourceRequest {
    int gpus = 0;
    qint64 gpuMemoryMiB = 0; // minimum free memory on each GPU
    QString gpuType;         // regex on the GPU name, e.g. "A100|H100"; empty = any
    int cpus = 0;            // 0 = no requirement
    qint64 memoryMiB = 0;    // 0 = no requirement
    int nodes = 1;           // > 1: gang (all nodes or none); elastic (nodesMax > 0): the minimum
    // Elastic gang (`nodes: {min: M, max: N}`, 1 <= M <= N <= 1024): started on
    // as many nodes as fit at the time, between `nodes` (M) and nodesMax (N),
    // with torchrun's elastic rendezvous (c10d) environment. 0 = a fixed gang
    // of exactly `nodes` (`nodes: 4`).
    int nodesMax = 0;
    bool elastic() const { return nodesMax > 0; }
};

// A validated job spec. Produced only by parseJobSpec*(), so every field is
// already checked: argv is non-empty, workdir absolute.
struct JobSpec {
    QString name;
    // Exactly what gets exec'd. A YAML list is used as is (no shell at all); a
    // YAML string becomes {"/bin/sh", "-c", string}: one round of shell, the
    // one the user wrote.
    QStringList argv;
    bool shellCommand = false;
    QString workdir;               // absolute
    QMap<QString, QString> env;    // added to the node's environment
    QMap<QString, QString> params; // recorded; {{name}} in command is replaced; exported as TRAINYARD_PARAM_<NAME>
    ResourceRequest resources;
    int priority = 0;
    QStringList tags;
    QList<MetricRuleSpec> metricRules;
    std::optional<qint64> estimatedRuntimeSec;
    std::optional<qint64> timeLimitSec;
    // `retry: {limit, on, backoff, jitter, infra_limit}` or `retry: 3`
    // (core/retry/RetryPolicy.h: the rules and the defaults of missing
    // keys); nullopt without `retry:` (nothing is retried).
    std::optional<RetryPolicy> retry;
    // `deadline: 6h`: wall clock from the first submit, the time in the
    // queue included; `max_run_time: 2h`: execution only, summed over the
    // run's attempts (core/retry/RetryDecision.h). Seconds, > 0.
    std::optional<qint64> deadlineSec;
    std::optional<qint64> maxRunTimeSec;
    QStringList preferNodes;  // `prefer_nodes`: placed there first when they fit
    QStringList avoidNodes;   // `avoid_nodes`: never placed there
    QStringList preferLabels; // `prefer_labels`: nodes with one of these labels first
    QStringList avoidLabels;  // `avoid_labels`: never on a node with one of these labels
    QString queue;            // empty = default queue
    // `pool: a100`: the resource pool (scheduler file's "pools",
    // core/sched/Pools.h) it runs in and whose quotas it counts against;
    // empty = none named: charged to the pool of the nodes it lands on.
    QString pool;
    QString user; // empty = the OS user
    QString project;
    // `sweep: {lr: [0.001, 0.01], batch_size: [32, 64]}`: one run per
    // combination (expandSweep). Swept names join `params` (first value as
    // the default) so {{lr}} works; values are kept as written.
    QMap<QString, QStringList> sweep;
    int maxConcurrent = 0; // `max_concurrent`: runs of this sweep at once, 0 = no cap
    // `sync: true`: before the run starts, `workdir` is uploaded to the node
    // (core/nodes/WorkdirSync.h: .gitignore honoured, unchanged files skipped)
    // and the run works in that copy. `sync_limit` caps the bytes uploaded (MiB).
    bool sync = false;
    qint64 syncLimitMiB = 500;
    // `artifacts: ["*.pt", "out/**"]`: globs relative to the run's workdir (and
    // run directory) listed after the run and recorded as its artifacts. Never
    // absolute, never with a `..` component.
    QStringList artifacts;
    // `metric_files: ["lightning_logs/*/metrics.csv", "runs/**/events.out.tfevents.*"]`:
    // globs relative to the run's workdir on the node (`**`: any directories),
    // followed while the run is live and imported once more after it ends,
    // besides `$TRAINYARD_METRICS_FILE`. Never absolute, never with `..`.
    QStringList metricFiles;
    // `slurm: {partition, account, qos, constraint, gpu_type, signal_grace,
    // sbatch}`: how a run on a Slurm node (NodeKind::Slurm) asks Slurm for
    // its allocation (core/slurm/SlurmBatch.h turns it and `resources` into
    // sbatch options). Ignored on other nodes. Names are Slurm's words
    // ([A-Za-z0-9._+:-], at most 128 characters); `sbatch` adds options
    // Trainyard has no key for ("--exclusive", "--reservation=x"), each one
    // argument starting with "--", never one Trainyard sets itself.
    struct SlurmOptions {
        QString partition, account, qos, constraint;
        QString gpuType;           // GRES type: --gres=gpu:<gpu_type>:<gpus>; empty: any GPU
        qint64 signalGraceSec = 0; // > 0: --signal=B:USR1@<grace> (a checkpoint's warning before the time limit)
        QStringList sbatch;
        bool operator==(const SlurmOptions&) const = default;
    } slurm;
    // `preemptible: true` (default false): while it runs, a queued run of
    // strictly higher priority may take its GPUs when the queue's policy
    // allows preemption (QueuePolicy.h `preemption`; core/sched/Preemption.h
    // chooses). It gets `preemption.signal`, then SIGKILL after
    // `preemption.grace`, ends `preempted` and is queued again as its next
    // attempt from its newest complete checkpoint (core/retry), with or
    // without `retry:` (a spec's `retry.infra_limit` bounds it).
    bool preemptible = false;
    // `preemption: {signal: SIGUSR1, grace: 2m}`: signal one of
    // agentproto::kCancelSignals (default SIGTERM), grace 0s..1d (default 30s).
    // Only with `preemptible: true`.
    struct Preemption {
        QString signal = QStringLiteral("SIGTERM");
        qint64 graceSec = 30;
        bool operator==(const Preemption&) const = default;
    } preemption;
    QString sourcePath; // the file it was read from, empty for text
    QString yaml;       // the text it was parsed from
};

// Parse and validate a job spec.
// `origin` is the name used in messages (a path, or "<submit dialog>");
// relative workdirs are resolved against `baseDir`.
// Errors name origin, line and column (1-based) and the key, e.g.
//   "job.yaml:4:3: unknown key 'comand' (did you mean 'command'?)".
// `paramOverrides` replace values of `params` before {{name}} substitution
// (trainyardctl submit --param lr=0.01); a name the spec lacks is an error.
Result<JobSpec> parseJobSpec(const QString& yamlText, const QString& origin, const QString& baseDir,
        const QMap<QString, QString>& paramOverrides = {});
Result<JobSpec> parseJobSpecFile(const QString& path, const QMap<QString, QString>& paramOverrides = {});

// The text of a spec file (a job spec, a pipeline: `what` names it in
// errors): at most 1 MiB, valid UTF-8 (an error names the line and column
// of the first bad byte), not a folder.
Result<QString> readSpecText(const QString& path, const QString& what);

// A spec file read (readSpecText) and parsed by parse(text, its folder),
// errors naming `path`; the spec's sourcePath is the file's absolute path.
template <class Spec, class Parse> Result<Spec> parseSpecFile(const QString& path, const QString& what, Parse&& parse)
{
    const auto text = readSpecText(path, what);
    if (!text)
        return std::unexpected(text.error());
    Result<Spec> spec = parse(*text, QFileInfo(path).absolutePath());
    if (spec)
        spec->sourcePath = QFileInfo(path).absoluteFilePath();
    return spec;
}

// One spec per combination of `spec.sweep` (the Cartesian product, the last
// name in sorted order varying fastest, values in the order written), each
// with its params set, {{placeholders}} filled and sweep cleared; the name
// gets the combination appended: "digits-mlp[lr=0.01]". A spec without a
// sweep gives itself. Errors as parseJobSpec's.
Result<QList<JobSpec>> expandSweep(const JobSpec& spec);

// A spec for a script dropped on the window: `python3 file.py` / `bash file.sh`,
// workdir = its folder, name = file stem. A folder: its train.py / main.py / run.sh.
Result<JobSpec> jobSpecForScript(const QString& path);

// YAML text of a spec (used to store what was run, and by the submit dialog).
QString toYaml(const JobSpec& spec);

// Sizes: plain numbers are MiB; suffixes K/M/G/T with optional "i" and "B"
// ("40GiB", "16G", "512M"). Durations: seconds, or "90s", "30m", "2h", "1d", "1h30m".
std::optional<qint64> parseSizeMiB(QStringView text);
std::optional<qint64> parseDurationSec(QStringView text);

} // namespace ty
