#pragma once

#include "ui/runs/RunRow.h"
#include "core/sched/Policy.h"

#include "ui/runs/RunTableModel.h"

#include <QHash>

namespace ty {

// The queue: every waiting run (state queued or held) in the order the
// scheduler considers them, with its position (vertical header), id, name, priority, state and
// why it waits (RunRecord::pendingReason, which the scheduling pass keeps up
// to date while a run is queued).
//
// Order (the same as `trainyardctl queue`): under Ordering::Priority, higher
// priority first (aging aside); otherwise, and within one priority, by
// submission time, then run id. Shortest-job-first and fair-share orders
// depend on specs and usage the scheduler computes per pass; they are shown
// in submission order.
//
// Updates keep a view's selection: rows leaving the queue are removed, new
// ones inserted, a changed order is a layoutChanged with persistent indexes
// moved, then dataChanged for every row. Never a reset.
//
// GUI thread only. Fed with the same StoreReader snapshots as the runs table
// (setRuns) and with RunControl::runStateChanged (updateRun).
class QueueModel final : public RunTableModel {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueModel)

public:
    // The position in the queue (1 = considered first) is the vertical
    // header (headerData, Qt::Vertical), so column 0 stays the run's id.
    enum Column { Id, Name, Priority, State, Reason, ColumnCount };

    explicit QueueModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The waiting runs of a full snapshot (others are ignored).
    void setRuns(const RunRows& rows) override;
    // One run changed: inserted, updated, or removed when it stopped waiting.
    void updateRun(const RunRecord& run) override;
    // Runs that changed or went (StoreReader::runsUpdated). Returns whether
    // the queue changed: runs that neither wait nor waited cost nothing.
    bool applyUpdates(const RunRows& changed, const QList<RunId>& removed) override;
    // The policy's ordering decides the order (see above).
    void setOrdering(sched::Ordering ordering);
    sched::Ordering ordering() const { return m_ordering; }

    static bool isWaiting(RunState state) { return state == RunState::Queued || state == RunState::Held; }
    // The reason text shown for a waiting run.
    static QString reasonText(const RunRecord& run);

    RunId runIdAt(int row) const override;
    int rowOf(RunId run) const override;
    const RunRecord* run(RunId run) const; // nullptr when absent

private:
    void apply(QList<RunRecord> runs);
    bool lessThan(const RunRecord& a, const RunRecord& b) const;
    void rebuildIndex();

    QList<RunRecord> m_runs; // in queue order
    QHash<RunId, int> m_rowOf;
    sched::Ordering m_ordering = sched::Ordering::Priority;
};

} // namespace ty
