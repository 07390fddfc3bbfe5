#include "QueueCommand.h"

#include "Cli.h"
#include "core/runs/QueuePolicy.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include <algorithm>
#include <utility>

namespace ty::cli {

int cmdQueue(Context& ctx, const QStringList& args)
{
    const bool json = args == QStringList{QStringLiteral("--json")};
    if (!args.isEmpty() && !json)
        return usageError(QStringLiteral("queue takes no arguments but --json"));
    catchUp(ctx);
    const auto policy = loadQueuePolicy(ctx.dbPath);
    if (!policy) {
        err() << "trainyardctl: " << policy.error().message << '\n';
        return Unavailable;
    }
    QList<RunRecord> waiting;
    for (const RunRecord& r : ctx.store->runs())
        if (r.state == RunState::Queued || r.state == RunState::Held)
            waiting.append(r);
    // The order the scheduler considers them in, for the priority-type
    // policies (aging aside); the reasons come from the last pass.
    const bool byPriority = policy->ordering == sched::Ordering::Priority;
    std::sort(waiting.begin(), waiting.end(), [byPriority](const RunRecord& a, const RunRecord& b) {
        if (byPriority && a.priority != b.priority)
            return a.priority > b.priority;
        return a.id < b.id;
    });
    if (json) {
        QJsonArray runs;
        int position = 0;
        for (const RunRecord& r : std::as_const(waiting))
            runs.append(QJsonObject{
                    {QStringLiteral("position"), ++position},
                    {QStringLiteral("id"), r.id},
                    {QStringLiteral("name"), r.name},
                    {QStringLiteral("state"), runStateName(r.state)},
                    {QStringLiteral("priority"), r.priority},
                    {QStringLiteral("reason"), r.pendingReason.isEmpty() ? QJsonValue() : QJsonValue(r.pendingReason)},
            });
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("policy"), queuePolicyName(*policy)},
                {QStringLiteral("policy_file"), queuePolicyPath(ctx.dbPath)}, {QStringLiteral("runs"), runs}}));
        return Ok;
    }
    out() << "policy: " << queuePolicyName(*policy) << "  (" << queuePolicyPath(ctx.dbPath) << ")\n";
    if (waiting.isEmpty()) {
        out() << "no runs waiting\n";
        return Ok;
    }
    qsizetype nameWidth = 24; // never cut (see ls)
    for (const RunRecord& r : std::as_const(waiting))
        nameWidth = std::max(nameWidth, escapedName(r.name).size());
    out() << QStringLiteral("%1 %2  %3 %4 %5  %6\n")
                     .arg(QStringLiteral("POS"), 3)
                     .arg(QStringLiteral("ID"), 5)
                     .arg(QStringLiteral("NAME"), -int(nameWidth))
                     .arg(QStringLiteral("STATE"), -7)
                     .arg(QStringLiteral("PRIO"), 5)
                     .arg(QStringLiteral("REASON"));
    int position = 0;
    for (const RunRecord& r : std::as_const(waiting))
        out() << QStringLiteral("%1 %2  %3 %4 %5  %6\n")
                         .arg(++position, 3)
                         .arg(r.id, 5)
                         .arg(escapedName(r.name), -int(nameWidth))
                         .arg(runStateName(r.state), -7)
                         .arg(r.priority, 5)
                         .arg(r.pendingReason.isEmpty()
                                         ? QStringLiteral("(not scheduled yet: no trainyard process is running)")
                                         : escapedName(r.pendingReason));
    return Ok;
}

} // namespace ty::cli
