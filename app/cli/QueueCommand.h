#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl queue [--json]: the waiting runs (queued and held) in the
// order the scheduler considers them (by priority, then id, for the
// priority-type policies; by id otherwise), each with why it waits, as the
// last scheduling pass recorded it.
// --json: {"policy": NAME, "policy_file": PATH, "runs": [{"position": 1..,
// "id", "name", "state": "queued"|"held", "priority", "reason": the reason,
// or null when no pass has looked at it yet (no trainyard process runs)}]}.
// Returns the exit code (Cli.h): 0; 2 usage; 5 the policy file is unreadable.
int cmdQueue(Context& ctx, const QStringList& args);

} // namespace ty::cli
