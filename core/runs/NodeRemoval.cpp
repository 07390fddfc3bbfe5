#include "NodeRemoval.h"

#include "RunLifecycle.h"
#include "core/store/ResultStore.h"

#include <QDateTime>
#include <QStringList>

#include <algorithm>

namespace ty {

Result<int> removeNodeRecords(ResultStore& store, const QString& name, bool force)
{
    const QList<NodeRecord> nodes = store.nodes();
    if (std::none_of(nodes.cbegin(), nodes.cend(), [&](const NodeRecord& n) { return n.name == name; }))
        return fail(QStringLiteral("no node named '%1' (see trainyardctl node ls)").arg(name), ErrorKind::NotFound);
    QList<RunRecord> onNode;
    for (const RunRecord& r : store.unfinishedRuns())
        if (r.node == name)
            onNode.append(r);
    if (!onNode.isEmpty() && !force) {
        QStringList ids;
        for (const RunRecord& r : std::as_const(onNode))
            ids << QStringLiteral("%1 (%2)").arg(r.id).arg(runStateName(r.state));
        return fail(
                QStringLiteral(
                        "node %1 still has runs that have not ended: %2. Cancel them first, or remove it with --force "
                        "(they are recorded as failed; their processes on the node are left alone)")
                        .arg(name, ids.join(QStringLiteral(", "))),
                ErrorKind::InvalidInput);
    }
    for (RunRecord r : std::as_const(onNode)) {
        r.failureKind = FailureKind::NodeLost;
        r.pendingReason.clear();
        r.failureReason = QStringLiteral("node %1 was removed while the run was %2 (trainyardctl node rm --force); "
                                         "its process there, if any, was left alone")
                                  .arg(name, runStateName(r.state));
        transition(r, RunState::Failed, TransitionCause::NodeRemoved);
        r.finishedAt = QDateTime::currentDateTimeUtc();
        store.updateRun(r);
    }
    if (auto removed = store.removeNode(name); !removed)
        return fail(removed.error().message, ErrorKind::Storage);
    return int(onNode.size());
}

} // namespace ty
