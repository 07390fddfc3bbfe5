#pragma once

// How to reach one SSH node and run its agent. Filled from a NodeRecord (the
// result database) plus process-wide settings; tests point configFile and
// knownHostsFile at temporary files so the real ~/.ssh is never touched.

#include "core/store/NodeRecord.h"

#include <QMap>
#include <QtGlobal>
#include <QString>
#include <QStringList>

namespace ty {

struct SshNodeOptions {
    QString name; // Trainyard's node name (messages, logs)
    QString host; // alias as in ~/.ssh/config (SSH_OPTIONS_HOST), or a host name
    // Explicit settings, applied AFTER the config file is parsed so they win
    // (libssh 0.10 lets a config `Port` overwrite an earlier option).
    QString user;                  // empty: config / local user
    int port = 0;                  // 0: config / 22
    QString identityFile;          // empty: config / default keys (ssh-agent is tried first anyway)
    QString configFile;            // empty: ~/.ssh/config then /etc/ssh/ssh_config
    QString knownHostsFile;        // empty: the config's UserKnownHostsFile / ~/.ssh/known_hosts
    bool acceptNewHostKey = false; // add an unknown host's key to known_hosts (user said yes)
    int connectTimeoutSec
            = 30; // TCP connect + each blocking step of the login, unless the SSH config sets ConnectTimeout

    // The agent. With `deployAgentFrom` (a local trainyard-agent binary) the
    // agent is uploaded over SFTP to
    //   <remoteCacheDir>/<version>-<sha256 prefix>/trainyard-agent
    // (remoteCacheDir relative to the remote home unless absolute) and run
    // from there; otherwise `remoteAgentPath` is run as is.
    QString deployAgentFrom;
    QString remoteCacheDir = QStringLiteral(".cache/trainyard/agent");
    QString remoteAgentPath = QStringLiteral("trainyard-agent");
    QStringList agentArgs;           // extra arguments after --stdio (e.g. --state-dir DIR)
    QMap<QString, QString> agentEnv; // run as `env K=V ... agent --stdio` (e.g. TRAINYARD_AGENT_STATE)
};

// Options for a node stored in the result database: its host alias and
// explicit user/port/identity; the agent at n.agentPath when set, else
// deployed from `localAgent` (a local trainyard-agent binary), else
// `trainyard-agent` from the node's PATH. $TRAINYARD_SSH_CONFIG, when set,
// replaces ~/.ssh/config (like `ssh -F FILE`).
inline SshNodeOptions sshNodeOptionsFor(const NodeRecord& n, const QString& localAgent)
{
    SshNodeOptions o;
    o.name = n.name;
    o.host = n.host;
    o.user = n.user;
    o.port = n.port;
    o.identityFile = n.identityFile;
    o.configFile = qEnvironmentVariable("TRAINYARD_SSH_CONFIG");
    if (!n.agentPath.isEmpty())
        o.remoteAgentPath = n.agentPath;
    else
        o.deployAgentFrom = localAgent;
    return o;
}

} // namespace ty
