#pragma once

#include "core/common/Result.h"
#include "core/pipeline/Condition.h"
#include "core/spec/JobSpec.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

namespace ty::pipeline {

// `memoize:` of a step (or of the pipeline, for every step): a step whose
// key (core/memo) matches a succeeded step's is not run again.
struct MemoizeSpec {
    bool enabled = false;
    std::optional<qint64> maxAgeSec; // from the entry's creation; hits do not extend it; empty = no limit
    QString keyExtra;                // `key_extra`: a salt the user adds to the key
    QStringList ignore;              // `ignore`: params or env names left out of the key
};

// An output param: a value a step writes to a file in its workdir
// (`file: out/rows.txt`, its text trimmed, at most 64 KiB), or a metric of the
// step's run (`metric: val_accuracy`, `aggregate: max|min|last|first`).
struct OutputParamSpec {
    QString name;
    QString file;
    QString metric;
    QString aggregate = QStringLiteral("last");
};

// What a step references, each as written in a {{placeholder}} or condition:
// "params.lr", "item.shard", "steps.train.outputs.rows",
// "steps.train.metrics.val_accuracy.max" (aggregate: max|min|last|first).
struct Reference {
    enum class Kind { Param, Item, StepOutput, StepMetric } kind = Kind::Param;
    QString text;           // the whole name
    QString step;           // StepOutput/StepMetric: the upstream step
    QString name;           // param, item name, output name or metric key
    QString aggregate;      // StepMetric
    bool inCommand = false; // used by the command (a param so used is passed to the run), not only by `when`
};
std::optional<Reference> parseReference(const QString& text);

// A step's job spec before its references are known. Instantiated once at
// parse time (with stand-in values, so errors surface at submit) and once
// per launch with the real values.
class StepJob {
public:
    // The job spec with {{references}} filled from `values` (every name of
    // references(), "params.lr" -> "0.01"); `params` are added to the spec's
    // params (recorded, exported as TRAINYARD_PARAM_*, part of the key).
    Result<JobSpec> instantiate(const QMap<QString, QString>& values, const QMap<QString, QString>& params) const;
    struct Impl;
    std::shared_ptr<const Impl> d;
};

struct StepSpec {
    QString name;
    int line = 0; // 1-based, in the pipeline file
    int column = 0;
    QStringList depends;                            // `depends: [a, b]`: every one succeeded (or cached)
    std::optional<Condition> dependsIf;             // `depends: "a.succeeded && !b.failed"`
    std::optional<Condition> when;                  // `when:` over params and upstream outputs
    QList<std::pair<QString, QStringList>> forEach; // `for_each: {shard: [0, 1]}`: one instance per combination
    bool continueOnFailed = false; // `continue_on: failed`: its failure fails neither dependents nor the pipeline
    bool alwaysRun = false;        // `always_run: true`: never memoized
    // `inputs: [data/digits.npz, /srv/datasets/imagenet]`: files or folders
    // whose content is part of the memo key (relative to the step's workdir,
    // or absolute: a dataset outside it). A missing one makes the key fail:
    // the step runs, saying why.
    QStringList inputs;
    MemoizeSpec memoize;
    QList<OutputParamSpec> outputParams;
    QStringList upstream;        // every step this one waits for: depends, conditions' and placeholders' steps
    QList<Reference> references; // every reference of command and `when`, once each
    // What the step writes for others: its job spec's `artifacts` globs and
    // its output params' files (relative to its workdir). Memoization leaves
    // them out of a workdir's code hash: they are outputs, not code.
    QStringList outputGlobs;
    bool retries = false; // its job spec has `retry:` (a retried attempt is a new run, a new Slurm job)
    StepJob job;
};

// A validated pipeline: steps in file order, every name and reference
// checked, no cycle.
struct PipelineSpec {
    QString name;
    QString sourcePath;            // the file, empty for text
    QString yaml;                  // the text it was parsed from
    QString origin;                // how errors name it ("pipe.yaml")
    QString baseDir;               // what its relative paths (uses:, workdir) are relative to
    QMap<QString, QString> params; // after --param overrides
    // `sweep: {lr: [0.001, 0.01]}`: one pipeline per combination of these
    // params' values (expandPipelineSweep); a param set with --param is
    // not swept. Empty in each expanded pipeline.
    QList<std::pair<QString, QStringList>> sweep;
    // In an expanded pipeline: the combination it runs ("lr" -> "0.01").
    QList<std::pair<QString, QString>> sweptParams;
    bool failFast = true;
    QList<StepSpec> steps;
    // The `uses:` files as read when parsed, by the path written: a
    // pipeline re-parsed later (the service restarted) gets these texts,
    // not what the files hold by then.
    QMap<QString, QString> usedFiles;

    const StepSpec* step(const QString& name) const;
};

using FileReader = std::function<Result<QString>(const QString& absolutePath)>;

// Parses and validates a pipeline. Errors name origin, line and column:
//   "pipe.yaml:12:5: step 'eval' depends on 'trian', which is not a step (did you mean 'train'?)"
//   "pipe.yaml:3:3: the steps form a cycle: a -> b -> c -> a"
// `readFile` reads `uses:` files (default: readSpecText from disk).
// `paramOverrides` replace `params` values (trainyardctl pipeline submit --param).
Result<PipelineSpec> parsePipeline(const QString& yamlText, const QString& origin, const QString& baseDir,
        const QMap<QString, QString>& paramOverrides = {}, const FileReader& readFile = {});
// Whether a YAML text is a pipeline rather than a job spec: a mapping with a
// top-level `steps` key (a job spec has none). Text that is not YAML, or not
// a mapping, is not a pipeline (its parse as a job spec says what is wrong).
bool looksLikePipeline(const QString& yamlText);

// One pipeline per combination of `spec.sweep` (the last name varying
// fastest), each parsed again with its values as params and named
// "NAME[lr=0.01,bs=64]"; `spec` alone when it has no sweep. Error: more
// than 1000 combinations, or a combination the references refuse.
Result<QList<PipelineSpec>> expandPipelineSweep(const PipelineSpec& spec);

// The same pipeline parsed again from what `spec` kept (its text, origin,
// base folder, params, and the `uses:` files' texts as they were, never
// read again): how a restarted service or `pipeline resume` rebuilds one.
Result<PipelineSpec> reparsePipeline(const PipelineSpec& spec);
Result<PipelineSpec> parsePipelineFile(const QString& path, const QMap<QString, QString>& paramOverrides = {});

} // namespace ty::pipeline
