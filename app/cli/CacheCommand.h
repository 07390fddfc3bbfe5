#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl cache ls [--pipeline P] [--step S] [--json]
//            | cache explain STEP [--pipeline P] [--json]
//            | cache rm KEY | --step S [--pipeline P] | --all | --older-than DURATION | --max-size SIZE
// The memoized steps' entries (core/memo). ls and explain read the
// database; rm asks the service (memo_rm), the database's only writer.
int cmdCache(Context& ctx, const QStringList& args);

} // namespace ty::cli
