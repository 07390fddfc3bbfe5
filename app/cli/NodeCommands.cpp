#include "NodeCommands.h"

#include "Cli.h"
#include "CliPassphrase.h"

#include "core/common/Paths.h"
#include "core/nodes/AgentClient.h"
#include "core/nodes/NodeTransports.h"
#include "core/runs/RunLifecycle.h"
#include "core/service/ServiceClient.h"
#include "core/service/ServiceProtocol.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/retry/RetryPolicy.h"
#include "core/spec/JobSpec.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTextStream>

#include <utility>

namespace ty::cli {

namespace {

// "Slurm 22.05.8, 1 partition:\n  debug (default, up): 2 nodes (vm), 2 CPUs, 7 GiB, gpu:2, no time limit\n"
QString slurmFactsText(const QJsonObject& info)
{
    const QJsonArray parts = info.value(QStringLiteral("partitions")).toArray();
    QString text = QStringLiteral("Slurm %1, %2 partition(s):\n")
                           .arg(escapedName(info.value(QStringLiteral("version")).toString()))
                           .arg(parts.size());
    for (const QJsonValue& v : parts) {
        const QJsonObject p = v.toObject();
        QStringList gres;
        for (const QJsonValue& g : p.value(QStringLiteral("gres")).toArray()) {
            const QJsonObject o = g.toObject();
            const QString type = o.value(QStringLiteral("type")).toString();
            gres << QStringLiteral("%1%2:%3")
                            .arg(escapedName(o.value(QStringLiteral("name")).toString()),
                                    type.isEmpty() ? QString() : u':' + escapedName(type))
                            .arg(o.value(QStringLiteral("count")).toInt());
        }
        QStringList nodeNames;
        for (const QJsonValue& n : p.value(QStringLiteral("nodes")).toArray())
            nodeNames << escapedName(n.toString());
        const QJsonValue maxTime = p.value(QStringLiteral("max_time_s"));
        text += QStringLiteral("  %1 (%2%3): %4 node(s) %5, %6 CPUs and %7 MiB per node, %8, %9\n")
                        .arg(escapedName(p.value(QStringLiteral("name")).toString()),
                                p.value(QStringLiteral("default")).toBool() ? QStringLiteral("default, ") : QString(),
                                escapedName(p.value(QStringLiteral("state")).toString()))
                        .arg(p.value(QStringLiteral("node_count")).toInt(nodeNames.size()))
                        .arg(nodeNames.join(u','))
                        .arg(p.value(QStringLiteral("cpus")).toInt())
                        .arg(p.value(QStringLiteral("memory_mib")).toInteger())
                        .arg(gres.isEmpty() ? QStringLiteral("no GPUs") : gres.join(u','),
                                maxTime.isNull() || maxTime.isUndefined()
                                        ? QStringLiteral("no time limit")
                                        : QStringLiteral("time limit %1 s").arg(maxTime.toInteger()));
    }
    return text;
}

// Connects to the node of `rec` once, as every command will (host key,
// login, agent deployed if needed), and prints who and what it is: user@host,
// agent, GPUs. `acceptNewHostKey`: a host key not known yet is added to
// known_hosts (a changed one is still refused). Returns why it failed, or an
// empty string.
QString probeNode(const NodeRecord& rec, bool acceptNewHostKey)
{
    NodeConnectOptions options;
    options.acceptNewHostKey = acceptNewHostKey;
    auto transport = transportForNode(rec, localAgentPath(), passphraseProvider(), options);
    auto* t = qobject_cast<SshAgentTransport*>(transport.get());
    AgentClient client(std::move(transport));
    QString failure;
    QObject::connect(&client, &AgentClient::disconnected, &client, [&failure](const QString& reason) {
        failure = reason;
        QCoreApplication::exit(1);
    });
    const bool slurm = rec.kind == NodeKind::Slurm;
    QObject::connect(&client, &AgentClient::ready, &client, [&client, &failure, slurm] {
        if (slurm) {
            // A login node: its cluster's partitions, not its own GPUs.
            client.slurmInfo([&failure](const Result<QJsonObject>& info) {
                if (!info) {
                    failure = info.error().message;
                    QCoreApplication::exit(1);
                    return;
                }
                out() << slurmFactsText(*info);
                QCoreApplication::exit(0);
            });
            return;
        }
        client.gpus([&failure](const Result<QList<AgentGpu>>& gpus) {
            if (!gpus) {
                failure = gpus.error().message;
                QCoreApplication::exit(1);
                return;
            }
            out() << "GPUs: " << (gpus->isEmpty() ? QStringLiteral("none (a CPU node)") : QString::number(gpus->size()))
                  << '\n';
            for (const AgentGpu& g : *gpus) {
                out() << "  " << g.index << ": " << escapedName(g.name);
                if (g.memoryTotalMib)
                    out() << ", " << qint64(*g.memoryTotalMib) << " MiB";
                if (g.memoryUsedMib)
                    out() << " (" << qint64(*g.memoryUsedMib) << " MiB used)";
                out() << ", " << g.uuid << '\n';
            }
            QCoreApplication::exit(0);
        });
    });
    err() << "connecting to " << rec.host << "...\n";
    err().flush();
    client.connectToAgent();
    if (QCoreApplication::exec() != 0)
        return failure.isEmpty() ? QStringLiteral("the connection ended") : failure;
    const AgentHello& hello = client.hello();
    out() << "node " << rec.name << ": " << escapedName(hello.user) << '@' << escapedName(hello.hostname)
          << ", trainyard-agent " << escapedName(hello.version);
    if (const auto d = t ? t->lastDeploy() : std::nullopt)
        out() << (d->uploaded ? " deployed to " : " (up to date) at ") << d->remotePath;
    else
        out() << " at " << rec.agentPath;
    out() << '\n';
    client.disconnectFromAgent();
    return {};
}

// "  labels: a100,ib" for `node ls`, "" for none.
QString labelsText(const QStringList& labels)
{
    return labels.isEmpty() ? QString() : QStringLiteral("  labels: ") + escapedJoin(labels, QStringLiteral(","));
}

// node label NAME [--add L]... [--remove L]...: changes a node's labels
// (local included) through the service, the database's one writer; with
// neither option it prints them.
int cmdNodeLabel(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("NAME"), QStringLiteral("the node (\"local\" = this machine)"));
    p.addOption({QStringLiteral("add"), QStringLiteral("a label to add (repeatable)"), QStringLiteral("LABEL")});
    p.addOption({QStringLiteral("remove"), QStringLiteral("a label to remove (repeatable)"), QStringLiteral("LABEL")});
    if (!p.parse(QStringList{QStringLiteral("node label")} + args))
        return usageError(p.errorText());
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("node label needs exactly one NAME"));
    const QString name = p.positionalArguments().front();
    const QStringList add = p.values(QStringLiteral("add"));
    const QStringList remove = p.values(QStringLiteral("remove"));
    for (const QString& l : add)
        if (const auto bad = nodeLabelError(l))
            return usageError(QStringLiteral("node label %1: --add: %2").arg(escapedName(name), *bad));
    std::optional<QStringList> current;
    if (name == u"local")
        current = ctx.store->localNodeLabels();
    else if (const auto rec = storedNode(ctx, name))
        current = rec->labels;
    if (!current) {
        err() << "trainyardctl: no node named '" << escapedName(name) << "' (see trainyardctl node ls)\n";
        return NoSuchRun;
    }
    if (add.isEmpty() && remove.isEmpty()) {
        out() << escapedName(name) << ":"
              << (current->isEmpty() ? QStringLiteral(" no labels") : labelsText(*current).mid(1)) << '\n';
        return Ok;
    }
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    const auto changed = svc->call(QStringLiteral("node_label"),
            {{QStringLiteral("node"), name}, {QStringLiteral("add"), QJsonArray::fromStringList(add)},
                    {QStringLiteral("remove"), QJsonArray::fromStringList(remove)}});
    if (!changed) {
        err() << "trainyardctl: " << escapedName(changed.error().message) << '\n';
        return changed.error().kind == ErrorKind::NotFound        ? NoSuchRun
                : changed.error().kind == ErrorKind::InvalidInput ? Usage
                                                                  : Unavailable;
    }
    QStringList labels;
    for (const QJsonValue& l : changed->value(QStringLiteral("labels")).toArray())
        labels << l.toString();
    out() << escapedName(name) << ":" << (labels.isEmpty() ? QStringLiteral(" no labels") : labelsText(labels).mid(1))
          << '\n';
    return Ok;
}

int cmdNodeAdd(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("NAME"), QStringLiteral("Trainyard's name for the node"));
    p.addOption({QStringLiteral("host"), QStringLiteral("host alias as in ~/.ssh/config, or a host name"),
            QStringLiteral("ALIAS")});
    p.addOption({QStringLiteral("user"), QStringLiteral("login user (wins over ~/.ssh/config)"), QStringLiteral("U")});
    p.addOption({QStringLiteral("port"), QStringLiteral("TCP port (wins over ~/.ssh/config)"), QStringLiteral("P")});
    p.addOption({QStringLiteral("identity"), QStringLiteral("private key file, tried first"), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("agent-path"),
            QStringLiteral("use this trainyard-agent on the node instead of deploying one"), QStringLiteral("PATH")});
    p.addOption({QStringLiteral("accept-new-host-key"),
            QStringLiteral("add the host's key to known_hosts if it is not known yet")});
    p.addOption({QStringLiteral("label"), QStringLiteral("a label job specs can prefer or avoid (repeatable)"),
            QStringLiteral("LABEL")});
    p.addOption({QStringLiteral("kind"),
            QStringLiteral("ssh (a workstation, the default) or slurm (a Slurm cluster's login node: Slurm places its "
                           "runs)"),
            QStringLiteral("KIND")});
    p.addOption({QStringLiteral("node-lost-after"),
            QStringLiteral("how long it may be silent before its runs are lost and retried elsewhere (90s, 30m, "
                           "2h; default: the service's, 10m)"),
            QStringLiteral("DURATION")});
    if (!p.parse(QStringList{QStringLiteral("node add")} + args))
        return usageError(p.errorText());
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("node add needs exactly one NAME"));
    NodeRecord rec;
    rec.name = p.positionalArguments().front();
    rec.host = p.value(QStringLiteral("host"));
    rec.user = p.value(QStringLiteral("user"));
    rec.identityFile = p.value(QStringLiteral("identity"));
    rec.labels = p.values(QStringLiteral("label"));
    for (const QString& l : std::as_const(rec.labels))
        if (const auto bad = nodeLabelError(l))
            return usageError(QStringLiteral("node add: --label: %1").arg(*bad));
    rec.agentPath = p.value(QStringLiteral("agent-path"));
    if (p.isSet(QStringLiteral("kind"))) {
        const auto kind = nodeKindFromName(p.value(QStringLiteral("kind")));
        if (!kind)
            return usageError(QStringLiteral("node add: --kind must be ssh or slurm, not '%1'")
                                      .arg(escapedName(p.value(QStringLiteral("kind")))));
        rec.kind = *kind;
    }
    if (p.isSet(QStringLiteral("node-lost-after"))) {
        const QString text = p.value(QStringLiteral("node-lost-after"));
        const auto sec = parseDurationSec(text);
        if (!sec || *sec <= 0)
            return usageError(QStringLiteral("node add: --node-lost-after must be a duration (90s, 30m, 2h), not '%1'")
                                      .arg(escapedName(text)));
        rec.nodeLostAfterSec = *sec;
    }
    if (!rec.name.contains(QRegularExpression(QStringLiteral("^[A-Za-z0-9._-]{1,64}$"))) || rec.name == u"local")
        return usageError(
                QStringLiteral("node add: '%1' is not a valid node name (letters, digits, . _ -; not \"local\")")
                        .arg(rec.name));
    if (rec.host.isEmpty())
        return usageError(QStringLiteral("node add needs --host ALIAS"));
    if (!rec.identityFile.isEmpty() && !QFileInfo(rec.identityFile).isFile())
        return usageError(QStringLiteral("node add: --identity %1: no such file").arg(rec.identityFile));
    if (p.isSet(QStringLiteral("port"))) {
        bool ok = false;
        rec.port = p.value(QStringLiteral("port")).toInt(&ok);
        if (!ok || rec.port < 1 || rec.port > 65535)
            return usageError(QStringLiteral("--port needs a number from 1 to 65535"));
    }
    if (storedNode(ctx, rec.name))
        return usageError(
                QStringLiteral("node add: a node named '%1' exists already (node rm it first)").arg(rec.name));

    if (const QString failure = probeNode(rec, p.isSet(QStringLiteral("accept-new-host-key"))); !failure.isEmpty()) {
        out().flush();
        err() << "trainyardctl: node " << rec.name << " not added: " << failure << '\n';
        return Unavailable;
    }
    // Stored and connected by the service, the database's one writer (its
    // host key is known_hosts' now, if it was to be accepted).
    auto svc = connectService(ctx, false);
    if (!svc)
        return Unavailable;
    if (auto stored = svc->call(QStringLiteral("node_add"), {{QStringLiteral("node"), service::nodeToJson(rec)}});
            !stored) {
        err() << "trainyardctl: node " << rec.name << " not added: " << escapedName(stored.error().message) << '\n';
        return stored.error().kind == ErrorKind::InvalidInput ? Usage : Unavailable;
    }
    out() << "added node " << rec.name << '\n';
    return Ok;
}

} // namespace

QJsonArray nodesJson(const QList<NodeRecord>& stored, const QStringList& localLabels)
{
    const auto orNull = [](const QString& s) { return s.isEmpty() ? QJsonValue() : QJsonValue(s); };
    QJsonArray nodes;
    nodes.append(QJsonObject{
            {QStringLiteral("name"), QStringLiteral("local")},
            {QStringLiteral("local"), true},
            {QStringLiteral("host"), QJsonValue()},
            {QStringLiteral("user"), QJsonValue()},
            {QStringLiteral("port"), QJsonValue()},
            {QStringLiteral("identity_file"), QJsonValue()},
            {QStringLiteral("agent_path"), localAgentPath()},
            {QStringLiteral("agent_deployed"), false},
            {QStringLiteral("added_at"), QJsonValue()},
            {QStringLiteral("labels"), QJsonArray::fromStringList(localLabels)},
            {QStringLiteral("kind"), QStringLiteral("ssh")},
            {QStringLiteral("node_lost_after_sec"), QJsonValue()},
            {QStringLiteral("slurm"), QJsonValue()},
    });
    for (const NodeRecord& n : stored)
        nodes.append(QJsonObject{
                {QStringLiteral("name"), n.name},
                {QStringLiteral("local"), false},
                {QStringLiteral("host"), n.host},
                {QStringLiteral("user"), orNull(n.user)},
                {QStringLiteral("port"), n.port ? QJsonValue(n.port) : QJsonValue()},
                {QStringLiteral("identity_file"), orNull(n.identityFile)},
                {QStringLiteral("agent_path"), orNull(n.agentPath)},
                {QStringLiteral("agent_deployed"), n.agentPath.isEmpty()},
                {QStringLiteral("added_at"), jsonTime(n.addedAt)},
                {QStringLiteral("labels"), QJsonArray::fromStringList(n.labels)},
                {QStringLiteral("kind"), nodeKindName(n.kind)},
                {QStringLiteral("node_lost_after_sec"),
                        n.nodeLostAfterSec ? QJsonValue(*n.nodeLostAfterSec) : QJsonValue()},
                {QStringLiteral("slurm"),
                        n.kind == NodeKind::Slurm && !n.facts.isEmpty()
                                ? QJsonValue(QJsonDocument::fromJson(n.facts.toUtf8()).object())
                                : QJsonValue()},
        });
    return nodes;
}

int cmdNode(Context& ctx, const QStringList& args)
{
    const QString sub = args.value(0);
    const QStringList rest = args.mid(1);
    if (sub == u"add")
        return cmdNodeAdd(ctx, rest);
    if (sub == u"label")
        return cmdNodeLabel(ctx, rest);
    if (sub == u"trust") {
        // A stored node whose host key is not known (any more): after its key
        // changed and the old entry was removed (ssh-keygen -R), or a new
        // known_hosts. Accepts the key shown, as node add --accept-new-host-key.
        if (rest.size() != 1 || rest.front().startsWith(u'-'))
            return usageError(QStringLiteral("node trust needs exactly one NAME"));
        const auto rec = storedNode(ctx, rest.front());
        if (!rec) {
            err() << "trainyardctl: no node named '" << rest.front() << "' (see trainyardctl node ls)\n";
            return NoSuchRun;
        }
        if (const QString failure = probeNode(*rec, true); !failure.isEmpty()) {
            out().flush();
            err() << "trainyardctl: node " << rec->name << ": " << failure << '\n';
            return Unavailable;
        }
        out() << "node " << rec->name << " is reachable; its host key is in known_hosts\n";
        return Ok;
    }
    if (sub == u"ls") {
        const bool json = rest == QStringList{QStringLiteral("--json")};
        if (!rest.isEmpty() && !json)
            return usageError(QStringLiteral("node ls takes no arguments but --json"));
        if (json) {
            printJson(QJsonDocument(nodesJson(ctx.store->nodes(), ctx.store->localNodeLabels())));
            return Ok;
        }
        out() << QStringLiteral("%1 %2 %3 %4 %5  %6\n")
                         .arg(QStringLiteral("NAME"), -12)
                         .arg(QStringLiteral("HOST"), -20)
                         .arg(QStringLiteral("USER"), -10)
                         .arg(QStringLiteral("PORT"), -5)
                         .arg(QStringLiteral("ADDED"), -19)
                         .arg(QStringLiteral("AGENT"));
        out() << QStringLiteral("%1 %2 %3 %4 %5  %6\n")
                         .arg(QStringLiteral("local"), -12)
                         .arg(QStringLiteral("(this machine)"), -20)
                         .arg(QStringLiteral("-"), -10)
                         .arg(QStringLiteral("-"), -5)
                         .arg(QStringLiteral("-"), -19)
                         .arg(localAgentPath() + labelsText(ctx.store->localNodeLabels()));
        for (const NodeRecord& n : ctx.store->nodes())
            out() << QStringLiteral("%1 %2 %3 %4 %5  %6\n")
                             .arg(escapedName(n.name), -12)
                             .arg(escapedName(n.host), -20)
                             .arg(n.user.isEmpty() ? QStringLiteral("-") : escapedName(n.user), -10)
                             .arg(n.port ? QString::number(n.port) : QStringLiteral("-"), -5)
                             .arg(localTime(n.addedAt), -19)
                             .arg((n.agentPath.isEmpty() ? QStringLiteral("(deployed)") : escapedName(n.agentPath))
                                     + labelsText(n.labels)
                                     + (n.kind == NodeKind::Slurm ? QStringLiteral("  (Slurm login node)") : QString())
                                     + (n.nodeLostAfterSec ? QStringLiteral("  node_lost_after: %1")
                                                                     .arg(retryDurationText(*n.nodeLostAfterSec * 1000))
                                                           : QString()));
        // What each Slurm login node last said of its cluster.
        for (const NodeRecord& n : ctx.store->nodes()) {
            if (n.kind != NodeKind::Slurm)
                continue;
            out() << '\n' << "node " << escapedName(n.name) << ": ";
            if (n.facts.isEmpty())
                out() << "Slurm, not reported yet (the service asks when it connects)\n";
            else
                out() << slurmFactsText(QJsonDocument::fromJson(n.facts.toUtf8()).object());
        }
        return Ok;
    }
    if (sub == u"rm") {
        QStringList names = rest;
        const bool force = names.removeAll(QStringLiteral("--force")) > 0;
        if (names.size() != 1)
            return usageError(QStringLiteral("node rm needs exactly one NAME"));
        const QString name = names.front();
        if (!storedNode(ctx, name)) {
            err() << "trainyardctl: no node named '" << name << "' (see trainyardctl node ls)\n";
            return NoSuchRun;
        }
        // The service removes it (core/runs/NodeRemoval.h) and drops it
        // from its engine, so nothing is scheduled there again.
        auto svc = connectService(ctx);
        if (!svc)
            return Unavailable;
        const auto removed = svc->call(
                QStringLiteral("node_rm"), {{QStringLiteral("node"), name}, {QStringLiteral("force"), force}});
        if (!removed) {
            err() << "trainyardctl: " << escapedName(removed.error().message) << '\n';
            return removed.error().kind == ErrorKind::NotFound ? NoSuchRun : Unavailable;
        }
        const int failed = removed->value(QStringLiteral("failed_runs")).toInt();
        out() << "removed node " << name;
        if (failed > 0)
            out() << "; " << failed << " run(s) on it recorded as failed";
        out() << '\n';
        return Ok;
    }
    return usageError(QStringLiteral("node needs add, ls, label, trust or rm"));
}

} // namespace ty::cli
