#pragma once

#include "core/common/Run.h"
#include "core/sched/Policy.h"

#include <QHash>
#include <QString>

namespace ty {

// GPU-hours one run held, decayed to `nowMs`: gpus x (endMs - startMs) in
// hours x 2^(-(nowMs - endMs) / halfLifeMs), the end clamped to `nowMs` (a
// run still going is charged up to now, undecayed). 0 for an empty span.
// Decaying from the end of the usage is how Slurm's accumulated usage ages
// (PriorityDecayHalfLife, priority/multifactor).
double decayedGpuHours(int gpus, qint64 startMs, qint64 endMs, qint64 nowMs, qint64 halfLifeMs);

// Fair share's memory of the runs that ended: what each held (GPUs, from,
// until) and whose it was, so a scheduling pass reads the runs not ended
// plus the few that ended since the last pass, not months of history
// (5,000 past runs made every pass re-read 5,000 records: 137 ms median
// submit -> Running, bench_ssh --history 5000 --policy fair-share).
// RunEngine fills it incrementally and rebuilds it from the database now
// and then (deleted runs drop out then). Not thread-safe: the engine's thread.
class FairShareLedger {
public:
    struct Entry {
        qint64 startMs = 0;
        qint64 endMs = 0;
        int gpus = 0;
        QString user;    // the run's fair-share account by user (spec user, else the OS user)
        QString project; // and by project (spec project, may be empty)
    };

    void clear() { m_entries.clear(); }
    // Records an ended run, replacing an earlier entry of it. A run that held
    // no GPU, or has no span, charges nothing and is not kept.
    void record(RunId run, const Entry& entry);
    void forget(RunId run) { m_entries.remove(run); }
    bool contains(RunId run) const { return m_entries.contains(run); }
    qsizetype size() const { return m_entries.size(); }
    // Drops the runs that ended before `sinceMs` (outside the usage window).
    void dropEndedBefore(qint64 sinceMs);
    // Adds every run's decayed GPU-hours to its account in `state`
    // (FairShareBy::Project: the project's, the empty project being one account).
    void chargeTo(sched::FairShareState& state, qint64 nowMs, qint64 halfLifeMs, sched::FairShareBy by) const;

private:
    QHash<RunId, Entry> m_entries;
};

} // namespace ty
