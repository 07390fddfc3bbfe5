#include "RunLifecycle.h"

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcRuns)

namespace ty {

QString transitionCauseName(TransitionCause cause)
{
    switch (cause) {
    case TransitionCause::Submitted: return QStringLiteral("submitted");
    case TransitionCause::HeldByUser: return QStringLiteral("held_by_user");
    case TransitionCause::ReleasedByUser: return QStringLiteral("released_by_user");
    case TransitionCause::Placed: return QStringLiteral("placed");
    case TransitionCause::StartAcknowledged: return QStringLiteral("start_acknowledged");
    case TransitionCause::StartReplyLost: return QStringLiteral("start_reply_lost");
    case TransitionCause::GpuClaimed: return QStringLiteral("gpu_claimed");
    case TransitionCause::StartFailed: return QStringLiteral("start_failed");
    case TransitionCause::Unschedulable: return QStringLiteral("unschedulable");
    case TransitionCause::Ended: return QStringLiteral("ended");
    case TransitionCause::NodeLost: return QStringLiteral("node_lost");
    case TransitionCause::NodeBack: return QStringLiteral("node_back");
    case TransitionCause::NodeRemoved: return QStringLiteral("node_removed");
    case TransitionCause::Cancelled: return QStringLiteral("cancelled");
    case TransitionCause::Requeued: return QStringLiteral("requeued");
    case TransitionCause::DeadlinePassed: return QStringLiteral("deadline_passed");
    }
    return QStringLiteral("?");
}

bool transitionAllowed(RunState from, RunState to)
{
    using S = RunState;
    if (from == to)
        return true;
    switch (from) {
    case S::Queued: return to == S::Held || to == S::Starting || to == S::Failed || to == S::Cancelled;
    case S::Held: return to == S::Queued || to == S::Cancelled;
    case S::Starting:
        return to == S::Running || to == S::Failed || to == S::Unknown || to == S::Queued || to == S::Cancelled
                || to == S::Succeeded;
    case S::Running:
        return to == S::Succeeded || to == S::Failed || to == S::Cancelled || to == S::Unknown || to == S::Starting;
    case S::Unknown: return to == S::Running || to == S::Succeeded || to == S::Failed || to == S::Cancelled;
    case S::Succeeded:
    case S::Failed:
    case S::Cancelled: return false;
    }
    return false;
}

bool transition(RunRecord& run, RunState to, TransitionCause cause)
{
    const RunState from = run.state;
    // A new record (id 0, or a rank made from its root) enters the lifecycle.
    const bool entering = cause == TransitionCause::Submitted;
    const bool allowed = entering || transitionAllowed(from, to);
    if (!allowed)
        qCWarning(lcRuns).noquote() << QStringLiteral("run %1: unexpected transition %2 -> %3 (%4)")
                                               .arg(run.id)
                                               .arg(runStateName(from), runStateName(to), transitionCauseName(cause));
    else if (from != to && !entering)
        qCDebug(lcRuns).noquote() << QStringLiteral("run %1: %2 -> %3 (%4)")
                                             .arg(run.id)
                                             .arg(runStateName(from), runStateName(to), transitionCauseName(cause));
    run.state = to;
    return allowed;
}

} // namespace ty
