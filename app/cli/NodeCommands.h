#pragma once

#include "CliCommon.h"

#include <QJsonArray>
#include <QList>
#include <QStringList>

namespace ty::cli {

// trainyardctl node add|ls|trust|rm: the SSH nodes of the database.
//   add NAME --host ALIAS [--user U] [--port P] [--identity FILE]
//       [--agent-path PATH] [--label L]... [--accept-new-host-key]
//                        connects once (host key, login, agent deployed),
//                        lists its GPUs, then stores it
//   ls [--json]          the nodes: "local" (this machine) first, then the stored ones
//   trust NAME           accepts a stored node's host key that is not known (any more)
//   rm NAME [--force]    forgets it; refused while runs on it have not ended
//                        (--force records them failed)
// Returns the exit code (Cli.h): 0; 2 usage; 4 no such node; 5 it cannot
// be reached, runs on it have not ended (rm), or the database failed.
int cmdNode(Context& ctx, const QStringList& args);

// node ls --json: an array, "local" first, then `stored` in order; each
// {"name", "local": bool, "host", "user", "port", "identity_file",
//  "agent_path", "agent_deployed": bool, "added_at": ISO 8601 UTC with ms,
//  "labels": [..]}. What is not set is null: user and port (then the SSH
// config's apply), identity_file, agent_path (the agent is deployed by
// Trainyard: agent_deployed); for "local" host, user, port and added_at are
// null and agent_path is this machine's trainyard-agent; its labels are
// `localLabels` (trainyardctl node label local).
QJsonArray nodesJson(const QList<NodeRecord>& stored, const QStringList& localLabels = {});

} // namespace ty::cli
