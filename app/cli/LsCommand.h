#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl ls [--json] [--archived]: every run, newest last, one line
// each (id, name never cut, state with its failure kind, node, GPUs, start,
// duration, accuracy and loss metrics, why it waits or failed, notices), or
// a JSON array of runJson objects (CliCommon.h). Archived runs only with
// --archived. Returns the exit code (Cli.h): 0; 2 usage.
int cmdLs(Context& ctx, const QStringList& args);

} // namespace ty::cli
