#include "Policy.h"

#include <cmath>

namespace ty::sched {

void FairShareState::decay(qint64 elapsedMs, qint64 halfLifeMs)
{
    if (elapsedMs <= 0 || halfLifeMs <= 0)
        return;
    const double f = std::exp2(-double(elapsedMs) / double(halfLifeMs));
    for (auto it = usageGpuHours.begin(); it != usageGpuHours.end(); ++it)
        it.value() *= f;
}

double fairShareFactor(double usage, double totalUsage, double share, double totalShares)
{
    if (totalUsage <= 0.0 || usage <= 0.0)
        return 1.0;
    if (share <= 0.0 || totalShares <= 0.0)
        return 0.0;
    const double u = usage / totalUsage;
    const double s = share / totalShares;
    return std::exp2(-u / s);
}

} // namespace ty::sched
