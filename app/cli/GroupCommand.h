#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl group ls [--kind sweep|gang|pipeline|attempts] [--json]
//            | group show ID [--json]
// The run groups of the database (core/common/RunGroup.h): sweeps, gangs,
// pipelines and attempts, with their runs. Reads only.
int cmdGroup(Context& ctx, const QStringList& args);

} // namespace ty::cli
