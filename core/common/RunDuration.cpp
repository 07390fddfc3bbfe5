#include "RunDuration.h"

#include <algorithm>

namespace ty {

RunDuration runDuration(const RunRecord& run, const QDateTime& nowUtc)
{
    if (!run.startedAt.isValid())
        return {};
    if (run.finishedAt.isValid())
        return {RunDuration::Kind::Ended, std::max<qint64>(0, run.startedAt.msecsTo(run.finishedAt))};
    if (isTerminal(run.state))
        return {RunDuration::Kind::Ended, 0};
    if (run.state == RunState::Unknown)
        return {RunDuration::Kind::EndUnknown, -1};
    return {RunDuration::Kind::Running, std::max<qint64>(0, run.startedAt.msecsTo(nowUtc))};
}

} // namespace ty
