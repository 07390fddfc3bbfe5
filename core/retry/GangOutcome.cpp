#include "GangOutcome.h"

#include "core/common/RunGroup.h"
#include "core/store/ResultStore.h"

namespace ty {

RunRecord gangOutcomeOf(const RunRecord& rank0, const QList<RunRecord>& ranks)
{
    if (rank0.state != RunState::Cancelled)
        return rank0;
    const RunGroupId gang = groupIdOf(rank0, RunGroupKind::Gang);
    if (gang <= 0)
        return rank0;
    const RunRecord* first = nullptr;
    int firstRank = 0;
    for (const RunRecord& r : ranks) {
        if (r.id == rank0.id || r.state != RunState::Failed)
            continue;
        const auto m = membershipOf(r, RunGroupKind::Gang);
        if (!m || m->group != gang)
            continue;
        const bool earlier = !first || r.finishedAt < first->finishedAt
                || (r.finishedAt == first->finishedAt && m->position < firstRank);
        if (earlier) {
            first = &r;
            firstRank = m->position;
        }
    }
    if (!first)
        return rank0; // cancelled with every rank (by the user): not a failure
    RunRecord out = rank0;
    out.state = RunState::Failed;
    out.failureKind = first->failureKind == FailureKind::None ? FailureKind::Other : first->failureKind;
    out.failureReason = QStringLiteral("rank %1 (run %2): %3").arg(firstRank).arg(first->id).arg(first->failureReason);
    out.exitCode = first->exitCode;
    out.exitSignal = first->exitSignal;
    return out;
}

RunRecord storedGangOutcomeOf(const ResultStore& store, const RunRecord& rank0)
{
    const RunGroupId gang = groupIdOf(rank0, RunGroupKind::Gang);
    if (gang <= 0 || rank0.state != RunState::Cancelled)
        return rank0;
    QList<RunRecord> ranks;
    for (const auto& [id, m] : store.groupMembers(gang))
        if (id != rank0.id)
            if (auto r = store.run(id))
                ranks.append(*r);
    return gangOutcomeOf(rank0, ranks);
}

} // namespace ty
