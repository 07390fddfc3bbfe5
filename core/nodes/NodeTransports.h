#pragma once

#include "core/store/NodeRecord.h"

#include <QString>

#include <memory>

namespace ty {

class AgentTransport;
class SshPassphraseProvider;

// How a connection to a stored node is made, beyond its record.
struct NodeConnectOptions {
    bool acceptNewHostKey = false; // a host key not known yet is added to known_hosts (a changed one never is)
    int connectTimeoutSec = 0;     // > 0: instead of the default (the SSH config's ConnectTimeout still wins)
};

// The one place that builds a node's transport from its stored record, for
// the service's engine, the GUI's engine and Nodes view, and trainyardctl's
// node commands alike. Every stored node is an SSH workstation today (an
// SshAgentTransport over sshNodeOptionsFor(): qobject_cast to it for its
// host-key signals); other kinds (a Slurm login node) get their transport
// here. `localAgent`: the trainyard-agent binary deployed to nodes without
// an agent path of their own. `passphrases` may be null (batch mode: an
// encrypted key then fails authentication, naming the key).
// Thread affinity: create it on the thread that will own it (the engine's).
std::unique_ptr<AgentTransport> transportForNode(const NodeRecord& node, const QString& localAgent,
        std::shared_ptr<SshPassphraseProvider> passphrases, const NodeConnectOptions& options = {});

} // namespace ty
