#include "PolicyCommand.h"

#include "Cli.h"
#include "core/runs/QueuePolicy.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

namespace ty::cli {

int cmdPolicy(Context& ctx, const QStringList& argsIn)
{
    QStringList args = argsIn;
    const bool json = args.removeAll(QStringLiteral("--json")) > 0;
    QString queue;
    if (const qsizetype i = args.indexOf(QStringLiteral("--queue")); i >= 0) {
        if (i + 1 >= args.size())
            return usageError(QStringLiteral("--queue needs a queue name"));
        queue = args.at(i + 1);
        args.remove(i, 2);
    }
    if (args.size() > 1)
        return usageError(QStringLiteral("policy takes at most one NAME (%1)")
                                  .arg(queuePolicyNames().join(QStringLiteral(", "))));
    if (json && !args.isEmpty())
        return usageError(
                QStringLiteral("policy: --json shows the policies; it cannot set one (%1)").arg(args.front()));
    auto all = loadQueuePolicies(ctx.dbPath);
    if (!all) {
        err() << "trainyardctl: " << all.error().message << '\n';
        return Unavailable;
    }
    if (json) {
        if (!queue.isEmpty()) {
            printJson(QJsonDocument(QJsonObject{{QStringLiteral("queue"), queue},
                    {QStringLiteral("policy"), queuePolicyName(all->forQueue(queue))}}));
            return Ok;
        }
        QJsonObject queues;
        for (auto it = all->queues.cbegin(); it != all->queues.cend(); ++it)
            queues[it.key()] = queuePolicyName(it.value());
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("default"), queuePolicyName(all->defaults)},
                {QStringLiteral("queues"), queues}, {QStringLiteral("policy_file"), queuePolicyPath(ctx.dbPath)}}));
        return Ok;
    }
    if (args.isEmpty()) {
        if (!queue.isEmpty()) {
            out() << queuePolicyName(all->forQueue(queue)) << '\n';
            return Ok;
        }
        out() << queuePolicyName(all->defaults) << '\n';
        for (auto it = all->queues.cbegin(); it != all->queues.cend(); ++it)
            out() << "queue " << it.key() << ": " << queuePolicyName(it.value()) << '\n';
        return Ok;
    }
    const auto chosen = queuePolicyNamed(args.front(), all->forQueue(queue));
    if (!chosen)
        return usageError(chosen.error().message);
    if (queue.isEmpty())
        all->defaults = *chosen;
    else
        all->queues.insert(queue, *chosen);
    if (auto saved = saveQueuePolicies(ctx.dbPath, *all); !saved) {
        err() << "trainyardctl: " << saved.error().message << '\n';
        return Unavailable;
    }
    out() << (queue.isEmpty() ? QStringLiteral("policy: ") : QStringLiteral("queue %1: ").arg(queue))
          << queuePolicyName(*chosen) << '\n';
    return Ok;
}

} // namespace ty::cli
