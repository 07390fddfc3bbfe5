#include "SlurmRuns.h"

#include "core/slurm/SlurmText.h"

namespace ty::slurm {

QString pendingReasonOf(const AgentRunStatus& status, qint64 nowMs)
{
    constexpr qint64 kNoEstimateMs = 364LL * 24 * 3600 * 1000;
    std::optional<std::int64_t> start;
    if (status.startEstimateMs > 0 && status.startEstimateMs - nowMs < kNoEstimateMs)
        start = status.startEstimateMs;
    return QString::fromStdString(
            pendingText(status.reason.toStdString(), status.jobsAhead, status.partition.toStdString(), start));
}

} // namespace ty::slurm
