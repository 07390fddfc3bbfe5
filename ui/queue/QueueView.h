#pragma once

#include "core/common/Result.h"
#include "ui/runs/RunRow.h"

#include <QDateTime>
#include <QPointer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QTableView;
class QToolBar;

namespace ty {

class QueueActions;
class QueueModel;
class RunControl;

// The queue view: waiting runs in scheduling order (QueueModel) under a
// toolbar with the scheduling policy selector and the queue operations
// (QueueActions, also in the table's context menu).
//
// Policy selector (objectName "policyCombo"): fcfs, priority, sjf, backfill,
// fair-share (queuePolicyNames()). It shows the policy of
// `<db dir>/scheduler.json` (re-read when the file changes, e.g. by
// trainyardctl policy) and a choice is written there with saveQueuePolicy,
// keeping the file's shares, aging and runtimes (queuePolicyNamed with the
// current file as base). The engine re-reads that file before each pass and
// passes again when it changes, so it follows within its poll interval.
//
// GUI thread only; `engine` may be null (operations disabled).
class QueueView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueView)

public:
    QueueView(RunControl* engine, QString databasePath, QWidget* parent = nullptr);

    QSize sizeHint() const override { return {720, 360}; } // room for the toolbar and the reasons
    QueueModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QComboBox* policyCombo() const { return m_policy; }
    QComboBox* queueCombo() const { return m_queue; }
    QCheckBox* preemptionCheck() const { return m_preemption; }
    // The queue the policy selector applies to; empty = the default queue.
    QString selectedQueue() const;
    QueueActions* queueActions() const { return m_actions; }

    // A StoreReader snapshot (the runs table's).
    void setRuns(const RunRows& rows);
    // Runs that changed or went (StoreReader::runsUpdated).
    void updateRuns(const RunRows& changed, const QList<RunId>& removed);
    // RunControl::runStateChanged.
    void updateRun(const RunRecord& run);
    // The runs selected in the queue, in queue order.
    QList<RunId> selectedRuns() const;
    void syncTargets();

    // Re-reads scheduler.json when it changed since the last read; updates the
    // selector and the queue order. Errors go to the status label.
    void reloadPolicy(bool force = false);
    // Writes the named preset (queuePolicyNames()) to scheduler.json, keeping
    // the file's other settings. Returns the error, shown in a message box by
    // the selector.
    Result<void> choosePolicy(const QString& name);
    // Turns preemption (core/sched/Preemption.h) on or off for the selected
    // queue in scheduler.json, keeping the rest. Errors as choosePolicy's.
    Result<void> choosePreemption(bool on);

Q_SIGNALS:
    // The selection changed (the main window points the queue actions at it).
    void selectionChanged();
    void policyChanged(const QString& name);

private:
    static constexpr int kMaxFittedRows = 300;
    void showPolicy(const QString& name);
    void fitRows();
    void updateSummary();

    QString m_databasePath;
    QueueModel* m_model = nullptr;
    QueueActions* m_actions = nullptr;
    QTableView* m_table = nullptr;
    QComboBox* m_policy = nullptr;
    QComboBox* m_queue = nullptr;
    QCheckBox* m_preemption = nullptr;
    QLabel* m_summary = nullptr;
    QDateTime m_policyModified;
    bool m_policyRead = false;
};

} // namespace ty
