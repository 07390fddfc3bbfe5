#pragma once

#include "ui/runs/RunRow.h"

#include <QAbstractTableModel>
#include <QList>
#include <QModelIndexList>

#include <algorithm>

namespace ty {

// What the runs table (RunsModel) and the queue (QueueModel) share: a table
// with a row per run, fed from the same StoreReader snapshots and updates and
// from RunControl::runStateChanged, and asked which run a row holds. Each
// model chooses which runs it shows and in what order; updates never reset
// the model, so a view's selection stays. GUI thread only.
class RunTableModel : public QAbstractTableModel {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunTableModel)

public:
    // data(index, RunIdRole): the row's run id (qint64), in every column.
    enum { RunIdRole = Qt::UserRole + 1 };

    using QAbstractTableModel::QAbstractTableModel;
    ~RunTableModel() override = default;

    // A full snapshot (StoreReader::runsLoaded), newest first; rows of runs in
    // both keep their place in a view.
    virtual void setRuns(const RunRows& rows) = 0;
    // One run changed (RunControl::runStateChanged).
    virtual void updateRun(const RunRecord& run) = 0;
    // Runs that changed or went (StoreReader::runsUpdated). Returns whether
    // this model's rows changed; costs what the changed runs cost.
    virtual bool applyUpdates(const RunRows& changed, const QList<RunId>& removed) = 0;

    virtual RunId runIdAt(int row) const = 0; // 0 when out of range
    virtual int rowOf(RunId run) const = 0;   // -1 when absent

    // The runs of `rows` (a view's selected rows), top to bottom.
    static QList<RunId> runIds(QModelIndexList rows)
    {
        std::sort(
                rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
        QList<RunId> ids;
        ids.reserve(rows.size());
        for (const QModelIndex& i : std::as_const(rows))
            ids << i.data(RunIdRole).toLongLong();
        return ids;
    }
};

} // namespace ty
