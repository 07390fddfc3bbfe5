#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl logs RUN [--follow], cancel RUN [--grace S], rm RUN, and
// hold / release / priority / top of a waiting run: through the service.
// Return the exit code (Cli.h).
int cmdLogs(Context& ctx, const QStringList& args);
int cmdCancel(Context& ctx, const QStringList& args);
int cmdRm(Context& ctx, const QStringList& args);
int cmdQueueOp(Context& ctx, const QString& op, const QStringList& args);

} // namespace ty::cli
