#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl pipeline submit FILE [--param K=V]... [--node N] [--follow] [--json]
//            | pipeline ls [--json] | pipeline show ID [--json] | pipeline cancel ID
//            | pipeline resume ID [--follow] [--json]
// Pipelines run in the service (core/pipeline); this only asks it.
int cmdPipeline(Context& ctx, const QStringList& args);

} // namespace ty::cli
