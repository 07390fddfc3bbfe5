#include "FairShareLedger.h"

#include <algorithm>
#include <cmath>

namespace ty {

double decayedGpuHours(int gpus, qint64 startMs, qint64 endMs, qint64 nowMs, qint64 halfLifeMs)
{
    const qint64 end = std::min(endMs, nowMs);
    if (gpus <= 0 || end <= startMs)
        return 0.0;
    const double gpuHours = double(gpus) * double(end - startMs) / 3.6e6;
    return gpuHours * std::exp2(-double(nowMs - end) / double(std::max<qint64>(1, halfLifeMs)));
}

void FairShareLedger::record(RunId run, const Entry& entry)
{
    if (entry.gpus <= 0 || entry.endMs <= entry.startMs) {
        m_entries.remove(run);
        return;
    }
    m_entries.insert(run, entry);
}

void FairShareLedger::dropEndedBefore(qint64 sinceMs)
{
    m_entries.removeIf([sinceMs](const auto& it) { return it.value().endMs < sinceMs; });
}

void FairShareLedger::chargeTo(
        sched::FairShareState& state, qint64 nowMs, qint64 halfLifeMs, sched::FairShareBy by) const
{
    for (const Entry& e : m_entries)
        state.charge(by == sched::FairShareBy::Project ? e.project : e.user,
                decayedGpuHours(e.gpus, e.startMs, e.endMs, nowMs, halfLifeMs));
}

} // namespace ty
