#pragma once

#include "CliCommon.h"

#include <QJsonObject>
#include <QStringList>

namespace ty::cli {

// trainyardctl show RUN [--json]: one run's details (state, node, command,
// times, params, latest metrics, tags, notes, console, notices).
// Returns the exit code (Cli.h): 0; 2 usage; 4 no such run (said on stderr).
int cmdShow(Context& ctx, const QStringList& args);

// show --json's object: runJson's (CliCommon.h: the element of ls --json)
// and
//   console_path          the local console copy, null when there is none
//   duration_ms           ms run so far or in all; null when it has not
//                         started, or its end is not known (its node is away)
//   latest_metric_steps   {key: step} of the points in latest_metrics
QJsonObject showJson(const ResultStore& store, const RunRecord& r);

} // namespace ty::cli
