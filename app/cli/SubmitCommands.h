#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl submit FILE and rerun RUN (with --follow, --param, --node),
// a sweep as one submit of many runs; through the service, which is started
// when none runs. Return the exit code (Cli.h; --follow passes the run's own).
int cmdSubmit(Context& ctx, const QStringList& args);
int cmdRerun(Context& ctx, const QStringList& args);

} // namespace ty::cli
