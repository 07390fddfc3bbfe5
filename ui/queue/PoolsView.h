#pragma once

#include "core/nodes/AgentTypes.h"
#include "core/sched/Pools.h"
#include "ui/runs/RunRow.h"

#include <QDateTime>
#include <QHash>
#include <QPointer>
#include <QWidget>

class QLabel;
class QTimer;
class QTreeWidget;
class QTreeWidgetItem;

namespace ty {

class ResultStore;
class RunControl;

// The Pools view (issue #25): every resource pool of `<db>.scheduler.json`
// (core/runs/QueuePolicy.h, core/sched/Pools.h) as a row -- its nodes (by
// their labels), GPUs on them, in use by its own runs, lent to other pools'
// runs, borrowed by its runs on other pools' nodes, idle -- and under it a
// row (spanning every column) with its nodes, label selector and lending,
// one row per project and per user with GPUs there or a quota entry
// ("project vision", quota column "8 of 8 GPUs"), then a spanned row per
// waiting run with the scheduler's reason ("run 3 vision-eval: waiting:
// project vision uses 2 of its 2 GPUs in pool a100", RunRecord::pendingReason).
//
// The numbers are sched::poolUsage over the cluster as the scheduler sees
// it: the nodes ("local" and the stored SSH nodes) with their labels from
// the database (NodeRecord::labels, ResultStore::localNodeLabels), their GPUs
// from RunControl::nodeGpusUpdated (a node not reported yet counts 0 GPUs),
// and the runs holding GPUs (starting, running, unknown) with their spec's
// user (else $USER), project and pool (pass::allocationOf).
//
// Data: setRuns / updateRuns with the runs table's StoreReader snapshots;
// setNodeGpus (connected to `engine` when given); the policy file and the
// labels are re-read every kRefreshMs while the view is visible, and when it
// is shown (refresh() at once). Recomputing is coalesced (one per event-loop
// turn).
//
// GUI thread only. `store` must outlive the view; `engine` may be null.
class PoolsView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PoolsView)

public:
    enum Column {
        NameColumn,
        GpusColumn,
        UsedColumn,
        LentColumn,
        BorrowedColumn,
        IdleColumn,
        DetailColumn,
        ColumnCount
    };
    static constexpr int kRefreshMs = 2000;
    static constexpr int kMaxWaitingRows = 50; // waiting runs shown per pool

    PoolsView(ResultStore* store, RunControl* engine, QString databasePath, QWidget* parent = nullptr);
    ~PoolsView() override;

    QSize sizeHint() const override { return {720, 300}; }
    QTreeWidget* tree() const { return m_tree; }
    QLabel* summary() const { return m_summary; }
    // The top-level row of pool `name`, nullptr when there is none.
    QTreeWidgetItem* poolItem(const QString& name) const;
    // What is shown, as computed at the last rebuild.
    const QList<sched::PoolUse>& usage() const { return m_usage; }

    void setRuns(const RunRows& rows);
    void updateRuns(const RunRows& changed, const QList<RunId>& removed);
    void setNodeGpus(const QString& node, const QList<AgentGpu>& gpus);
    // Re-reads the policy file and the nodes' labels, then rebuilds (at once).
    void refresh();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void scheduleRebuild();
    void rebuild();
    void track(const RunRecord& run);
    struct SpecInfo {
        size_t hash = 0;
        sched::RunningAllocation allocation; // without nodes: user, project, pool
    };
    const sched::RunningAllocation& accountOf(const RunRecord& run);

    ResultStore* m_store;
    QString m_databasePath;
    QTreeWidget* m_tree = nullptr;
    QLabel* m_summary = nullptr;
    QTimer* m_rebuildTimer = nullptr;
    QTimer* m_refreshTimer = nullptr;
    QList<sched::ResourcePool> m_pools;
    QString m_policyError;
    QList<QPair<QString, QStringList>> m_nodes; // name, labels: "local" first, then stored SSH nodes by name
    QHash<QString, int> m_gpuCounts;            // node -> GPUs reported
    QHash<RunId, RunRecord> m_runs;             // runs not ended
    QHash<RunId, SpecInfo> m_specs;
    QList<sched::PoolUse> m_usage;
    QHash<QString, QTreeWidgetItem*> m_items;
};

} // namespace ty
