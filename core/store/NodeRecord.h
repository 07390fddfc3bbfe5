#pragma once

#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <optional>

namespace ty {

// What a node is (schema 14, issue #26).
enum class NodeKind {
    Ssh,   // "ssh": a workstation; Trainyard's scheduler places runs on its GPUs
    Slurm, // "slurm": a Slurm cluster's login node; runs go to Slurm through sbatch and Slurm places them
};
// "ssh", "slurm": the stored and typed names (`node add --kind`).
QString nodeKindName(NodeKind kind);
std::optional<NodeKind> nodeKindFromName(QStringView name);

// A remote node (an SSH workstation) as stored in the result database's
// `nodes` table (schema version 2). Empty strings / 0 mean "not set": the
// value then comes from ~/.ssh/config (HostName, User, Port, IdentityFile)
// or from Trainyard's default (the agent deployed over SFTP).
struct NodeRecord {
    QString name;         // Trainyard's name for the node, unique (primary key)
    QString host;         // the host alias as written in ~/.ssh/config, or a host name
    QString user;         // explicit user, wins over the config file
    int port = 0;         // explicit TCP port, wins over the config file; 0: config/22
    QString identityFile; // explicit private key file, tried first
    QString agentPath;    // absolute remote path of a trainyard-agent to use instead of deploying one
    QDateTime addedAt;    // UTC, ms precision; invalid on input means "now"
    QStringList labels;   // free-form ("a100", "big-memory"): job specs prefer or avoid them (schema 3)
    NodeKind kind = NodeKind::Ssh;
    // What the node last reported of itself, as JSON (schema 14; '' before
    // the first report): for a Slurm node the agent's slurm_info reply
    // (version, partitions) plus "reported_at" (ms UTC). Written by the
    // engine when it connects (ResultStore::setNodeFacts), never by `node add`.
    QString facts;
    // How long the node may be silent before its runs are lost (issue #25,
    // core/retry/NodeLossWatch.h), in seconds (> 0); nullopt: the service's
    // value (TRAINYARD_NODE_LOST_AFTER, default 10 min). Schema 15
    // (nodes.node_lost_after, NULL when not set); `node add --node-lost-after`.
    std::optional<qint64> nodeLostAfterSec;

    bool operator==(const NodeRecord&) const = default;
};

// Node labels (NodeRecord::labels, the local node's labels, a pool's
// `labels`): 1 to 63 characters, letters, digits, '.', '_', '-', starting
// with a letter or digit ("a100", "big-memory"). Returns why `label` is not
// one, naming it (control characters escaped), or nullopt when it is.
std::optional<QString> nodeLabelError(QStringView label);

} // namespace ty
