#include "PolicyCommand.h"

#include "Cli.h"
#include "core/runs/QueuePolicy.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include <optional>

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
    // Preemption (issue #25): whether the queue's waiting runs may stop
    // preemptible runs of lower priority.
    std::optional<bool> preemption;
    if (const qsizetype i = args.indexOf(QStringLiteral("--preemption")); i >= 0) {
        const QString v = i + 1 < args.size() ? args.at(i + 1) : QString();
        if (v != u"on" && v != u"off")
            return usageError(QStringLiteral("--preemption needs on or off"));
        preemption = v == u"on";
        args.remove(i, 2);
    }
    if (json && preemption)
        return usageError(QStringLiteral("policy: --json shows the policies; it cannot set --preemption"));
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
    // "backfill", or "backfill, preemption on" where it is on (off by default).
    const auto describe = [](const sched::Policy& p) {
        return queuePolicyName(p) + (p.preemption ? QStringLiteral(", preemption on") : QString());
    };
    if (args.isEmpty() && !preemption) {
        if (!queue.isEmpty()) {
            out() << describe(all->forQueue(queue)) << '\n';
            return Ok;
        }
        out() << describe(all->defaults) << '\n';
        for (auto it = all->queues.cbegin(); it != all->queues.cend(); ++it)
            out() << "queue " << it.key() << ": " << describe(it.value()) << '\n';
        return Ok;
    }
    auto chosen = args.isEmpty() ? Result<sched::Policy>(all->forQueue(queue))
                                 : queuePolicyNamed(args.front(), all->forQueue(queue));
    if (!chosen)
        return usageError(chosen.error().message);
    if (preemption)
        chosen->preemption = *preemption;
    if (queue.isEmpty())
        all->defaults = *chosen;
    else
        all->queues.insert(queue, *chosen);
    if (auto saved = saveQueuePolicies(ctx.dbPath, *all); !saved) {
        err() << "trainyardctl: " << saved.error().message << '\n';
        return Unavailable;
    }
    out() << (queue.isEmpty() ? QStringLiteral("policy: ") : QStringLiteral("queue %1: ").arg(queue))
          << describe(*chosen) << '\n';
    return Ok;
}

} // namespace ty::cli
