#pragma once

#include "core/nodes/AgentTypes.h"
#include "ui/runs/RunRow.h"
#include "core/store/NodeRecord.h"

#include <QHash>
#include <QPointer>
#include <QSet>
#include <QWidget>

#include <memory>

class QAction;
class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace ty {

class AddNodeDialog;
class ResultStore;
class RunControl;

// The Nodes view: one row per node (this machine as "local", plus every SSH
// node stored in the result database) with its reachability, and under it
// one row per GPU: index and name, memory used / total (MiB), utilisation
// (%), temperature (°C), power (W) and who holds it -- the name and id of a
// run of this database (the agent reports its run id per GPU process and the
// runs snapshot maps it to a run), "other process" (pid, name, memory) for
// anything else. A node whose agent reports no GPU says
// "no NVIDIA GPU (CPU node)". A node's labels (trainyardctl node add
// --label, node label; "local" too) are in its row's last column while it
// is reachable ("labels: a100, ib") and in its tooltip, re-read every 2 s.
//
// Data: RunControl::nodeStatusChanged and RunControl::nodeGpusUpdated (the
// engine asks every ready node for its GPUs every 2 s);
// setRuns() with the runs table's StoreReader snapshots for the run names.
//
// Add node… (addNodeAction): AddNodeDialog, then addNode(): the engine
// (RunControl::addNode) stores the NodeRecord and connects it. An unknown
// host key (a node lost with ErrorKind::HostKeyUnknown, whose refused key
// RunControl::rejectedHostKey gives) is shown with its SHA256 fingerprint in
// a question box (objectName "hostKeyBox"); on Yes the engine accepts it at
// its next connection attempt (it reconnects with backoff). A changed key is
// only reported, never offered.
//
// Aggregated console (aggregatedConsoleAction, context menu): asks the main
// window to merge the consoles of the node's latest runs
// (aggregatedConsoleRequested).
//
// GUI thread only. `store` must outlive the view; `engine` may be null.
class NodesView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(NodesView)

public:
    enum Column {
        NameColumn,
        StatusColumn,
        MemoryColumn,
        UtilizationColumn,
        TemperatureColumn,
        PowerColumn,
        HeldByColumn,
        ColumnCount
    };

    NodesView(ResultStore* store, RunControl* engine, QWidget* parent = nullptr);
    ~NodesView() override;

    QSize sizeHint() const override { return {720, 300}; } // room for the columns beside the runs table
    QTreeWidget* tree() const { return m_tree; }
    QAction* addNodeAction() const { return m_addAction; }
    // The top-level row of `node`, nullptr when it is not shown.
    QTreeWidgetItem* nodeItem(const QString& node) const;

    void setRuns(const RunRows& rows);
    // The runs started on `node` (those with a console), newest first, at
    // most kConsoleRuns: what "Aggregated console" (aggregatedConsoleAction,
    // also in the tree's context menu) merges for that node.
    static constexpr int kConsoleRuns = 50;
    QList<RunId> consoleRuns(const QString& node) const { return m_consoleRuns.value(node); }
    // Acts on the selected node (or the node of the selected GPU).
    QAction* aggregatedConsoleAction() const { return m_aggregatedAction; }
    QString selectedNode() const;
    void setStoredNodes(const QList<NodeRecord>& nodes);
    void setNodeStatus(
            const QString& node, bool ready, const QString& reason, ty::ErrorKind kind = ty::ErrorKind::Unspecified);
    void setNodeGpus(const QString& node, const QList<AgentGpu>& gpus);

    AddNodeDialog* openAddNodeDialog();
    // Stores `node` and adds it to the engine (asynchronous); nodeAdded follows.
    void addNode(const NodeRecord& node, bool acceptNewHostKey);
    // Asks whether to trust an unknown host key (non-modal "hostKeyBox"); on Yes
    // the node's SshAgentTransport gets setAcceptNewHostKey(true). Asked once
    // per node and fingerprint at a time; a declined fingerprint is not asked again.
    // `changed`: the key differs from the recorded one: said, never offered.
    void askHostKey(const QString& node, const QString& fingerprint, const QString& message, bool changed);

    // Who holds `gpu`: "name (#id)" of our runs, "other process (…)" else, "" when free.
    // `ours` maps the agent's run ids to (run id, name).
    static QString heldByText(const AgentGpu& gpu, const QHash<QString, std::pair<RunId, QString>>& ours);
    static QString memoryText(const AgentGpu& gpu);
    static QString cpuNodeText();

Q_SIGNALS:
    // addNode() finished: `error` empty when the node was stored and added.
    void nodeAdded(const QString& node, const QString& error);
    // A host key was accepted for `node` (the next connection records it).
    void hostKeyAccepted(const QString& node);
    // The user asked for the merged console of `node`'s runs (consoleRuns()).
    void aggregatedConsoleRequested(const QString& node, const QList<RunId>& runs);

private:
    struct NodeInfo {
        bool stored = false; // an SSH node from the database
        QString host;
        bool statusKnown = false;
        bool ready = false;
        QString reason;
        bool gpusKnown = false;
        QList<AgentGpu> gpus;
        QDateTime gpusAt;
        bool slurm = false; // a Slurm login node (NodeKind::Slurm): its partitions, not its GPUs
        QString slurmFacts; // NodeRecord::facts: the cluster as the login node's agent last reported it
        QStringList labels; // NodeRecord::labels, ResultStore::localNodeLabels for "local"
    };
    // Re-reads every node's labels from the store (at most every 2 s; the
    // GPU reports call it) and shows those that changed.
    void refreshLabels(bool force = false);
    // A Slurm login node's partitions as rows under it.
    void renderSlurm(QTreeWidgetItem* item, const NodeInfo& info);

    QTreeWidgetItem* ensureNode(const QString& node);
    void render(const QString& node);
    void checkHostKey(const QString& node, const QString& reason, bool changed);
    void showError(const QString& title, const QString& message);

    ResultStore* m_store;
    QPointer<RunControl> m_engine;
    QTreeWidget* m_tree = nullptr;
    QLabel* m_summary = nullptr;
    QAction* m_addAction = nullptr;
    QAction* m_aggregatedAction = nullptr;
    QHash<QString, QList<RunId>> m_consoleRuns; // node -> consoleRuns()
    QHash<QString, NodeInfo> m_nodes;
    QHash<QString, QTreeWidgetItem*> m_items;
    QHash<QString, std::pair<RunId, QString>> m_ourRuns; // agent run id -> (run id, name)
    QSet<QString> m_askingHostKey;                       // nodes with a host-key question open
    QSet<QString> m_declinedFingerprints;                // "node fingerprint"
    QDateTime m_labelsAt;                                // the last refreshLabels()
};

} // namespace ty
