#pragma once

#include "CliCommon.h"

#include <QJsonObject>
#include <QList>
#include <QStringList>

namespace ty::cli {

// trainyardctl metrics RUN [--csv | --json] [--key K] [--attempts]: a run's
// metric points (as ResultStore::metrics gives them: superseded ones left
// out), by key, in step order. Text: each key, then "  step S [epoch E]
// VALUE" lines; --csv: run,key,step,epoch,wall_time,value; --json:
// metricsJson's object. --attempts: every attempt of a retried run as one
// series (core/retry/AttemptMetrics.h: a resumed attempt takes over from
// its first step); text marks where each attempt takes over, CSV's `run`
// and JSON's `run` name the attempt of each point.
// Returns the exit code (Cli.h): 0 (also for a run with no metrics: said on
// stderr; --json then prints {}); 2 usage; 4 no such run, or no metric K
// (the run's keys are listed on stderr, nothing on stdout).
int cmdMetrics(Context& ctx, const QStringList& args);

// metrics --json: an object keyed by metric, each an array of its points in
// the order given, {"step": int, "epoch": number or null, "wall_time": ISO
// 8601 UTC with ms, "value": number, or "nan", "inf", "-inf"}, e.g.
//   {"val_loss": [{"step": 45, "epoch": 1, "wall_time": "...", "value": 0.41}, ...]}
// so that `jq '.val_loss[-1].value'` is the last value. `withRun`: each
// point also has "run" (the attempt that logged it).
QJsonObject metricsJson(const QList<MetricPoint>& points, bool withRun = false);

} // namespace ty::cli
