#include "PolicyCommand.h"

#include "Cli.h"
#include "core/runs/QueuePolicy.h"
#include "core/runs/RunEngine.h"
#include "core/runs/SchedulingPass.h"
#include "core/store/ResultStore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include <optional>

namespace ty::cli {

namespace {
// "alice 16, bob 4, anyone else 8"; empty for no limit.
QString describeQuota(const sched::GpuQuota& q)
{
    QStringList parts;
    for (auto it = q.limits.cbegin(); it != q.limits.cend(); ++it)
        parts << QStringLiteral("%1 %2").arg(it.key()).arg(it.value());
    if (q.defaultLimit >= 0)
        parts << QStringLiteral("%1 %2")
                         .arg(q.limits.isEmpty() ? QStringLiteral("anyone") : QStringLiteral("anyone else"))
                         .arg(q.defaultLimit);
    return parts.join(QStringLiteral(", "));
}

// One line per pool (core/sched/Pools.h), as the scheduler file sets it.
QString describePool(const sched::ResourcePool& p)
{
    QStringList parts;
    parts << (p.labels.isEmpty() ? QStringLiteral("every node not in an earlier pool")
                                 : QStringLiteral("nodes labelled %1").arg(p.labels.join(QStringLiteral(" + "))));
    const QString users = describeQuota(p.users);
    const QString projects = describeQuota(p.projects);
    parts << (users.isEmpty() ? QStringLiteral("users: no GPU limit") : QStringLiteral("user GPUs: ") + users);
    parts << (projects.isEmpty() ? QStringLiteral("projects: no GPU limit")
                                 : QStringLiteral("project GPUs: ") + projects);
    parts << (p.lend ? QStringLiteral("lends idle GPUs") : QStringLiteral("does not lend"));
    parts << (p.borrowLimit > 0 ? QStringLiteral("borrows up to %1 GPUs").arg(p.borrowLimit)
                                : QStringLiteral("does not borrow"));
    return QStringLiteral("pool %1: ").arg(p.name) + parts.join(QStringLiteral("; "));
}

// What each pool holds now (sched::poolUsage, as the Pools view counts it),
// from the database: the nodes by their labels, the runs holding GPUs with
// their spec's accounts. GPUs per node are the service's to know (the Pools
// view shows them): not counted here.
QList<sched::PoolUse> currentUsage(const ResultStore& store, const QList<sched::ResourcePool>& pools)
{
    sched::ClusterState state;
    sched::NodeState local;
    local.name = QStringLiteral("local");
    local.labels = store.localNodeLabels();
    state.nodes << local;
    for (const NodeRecord& n : store.nodes()) {
        if (n.kind != NodeKind::Ssh)
            continue;
        sched::NodeState s;
        s.name = n.name;
        s.labels = n.labels;
        state.nodes << s;
    }
    QString user = qEnvironmentVariable("USER");
    if (user.isEmpty())
        user = qEnvironmentVariable("LOGNAME");
    for (const RunRecord& r : store.unfinishedRuns())
        if ((r.state == RunState::Starting || r.state == RunState::Running || r.state == RunState::Unknown)
                && !r.node.isEmpty() && !r.gpus.isEmpty())
            state.running << pass::allocationOf(r, runSpecOf(r), user, 0);
    return sched::poolUsage(pools, state);
}

// "  nodes: local; its runs hold 2 GPUs there, lent 0, borrowed 2" and a
// line per account: "  project vision: 4 of 4 GPUs".
QString describeUse(const sched::PoolUse& u)
{
    const auto gpus = [](int n) { return n == 1 ? QStringLiteral("1 GPU") : QStringLiteral("%1 GPUs").arg(n); };
    QString text = QStringLiteral("  nodes: %1; its runs hold %2 there, %3 lent to other pools, %4 borrowed\n")
                           .arg(u.nodes.isEmpty() ? QStringLiteral("none") : escapedJoin(u.nodes, QStringLiteral(", ")),
                                   gpus(u.used))
                           .arg(u.lent)
                           .arg(u.borrowed);
    const auto accounts = [&](const QList<sched::AccountUse>& list, const QString& kind) {
        for (const sched::AccountUse& a : list) {
            if (a.account.isEmpty() && a.used == 0)
                continue;
            text += QStringLiteral("  %1 %2: %3\n")
                            .arg(kind, a.account.isEmpty() ? QStringLiteral("(none)") : escapedName(a.account),
                                    a.limit < 0 ? QString(gpus(a.used) + QStringLiteral(", no limit"))
                                                : QStringLiteral("%1 of %2").arg(a.used).arg(gpus(a.limit)));
        }
    };
    accounts(u.projects, QStringLiteral("project"));
    accounts(u.users, QStringLiteral("user"));
    return text;
}

QJsonObject quotaJson(const sched::GpuQuota& q)
{
    QJsonObject o;
    for (auto it = q.limits.cbegin(); it != q.limits.cend(); ++it)
        o.insert(it.key(), it.value());
    return o;
}

QJsonObject poolsJson(const QList<sched::ResourcePool>& pools)
{
    QJsonObject all;
    for (const sched::ResourcePool& p : pools)
        all.insert(p.name,
                QJsonObject{{QStringLiteral("labels"), QJsonArray::fromStringList(p.labels)},
                        {QStringLiteral("user_gpus"), quotaJson(p.users)},
                        {QStringLiteral("user_default_gpus"),
                                p.users.defaultLimit >= 0 ? QJsonValue(p.users.defaultLimit) : QJsonValue()},
                        {QStringLiteral("project_gpus"), quotaJson(p.projects)},
                        {QStringLiteral("project_default_gpus"),
                                p.projects.defaultLimit >= 0 ? QJsonValue(p.projects.defaultLimit) : QJsonValue()},
                        {QStringLiteral("lend"), p.lend}, {QStringLiteral("borrow_limit"), p.borrowLimit}});
    return all;
}
} // namespace

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
                {QStringLiteral("queues"), queues}, {QStringLiteral("pools"), poolsJson(all->defaults.pools)},
                {QStringLiteral("policy_file"), queuePolicyPath(ctx.dbPath)}}));
        return Ok;
    }
    // "backfill", or "backfill, preemption on" where it is on (off by default).
    const auto describe = [](const sched::Policy& p) -> QString {
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
        const QList<sched::PoolUse> use = currentUsage(*ctx.store, all->defaults.pools);
        for (qsizetype i = 0; i < all->defaults.pools.size(); ++i)
            out() << describePool(all->defaults.pools[i]) << '\n' << describeUse(use[i]);
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
