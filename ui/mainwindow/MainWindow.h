#pragma once

#include "ui/charts/SeriesData.h"
#include "core/common/Run.h"
#include "ui/runs/RunRow.h"
#include "core/spec/JobSpec.h"

#include <QHash>
#include <QMap>
#include <QMainWindow>
#include <QPointer>
#include <QThread>
#include <QUrl>

class QAction;
class QDockWidget;
class QLabel;
class QSortFilterProxyModel;
class QSplitter;
class QTabWidget;
class QTableView;
class QTimer;
class QToolButton;

namespace ty {

class AttemptsStrip;

class AggregatedConsoleView;
class CompareLoader;
class CompareView;
class ConsoleView;
class MetricChartsPanel;
class NodesView;
class PoolsView;
class PipelinesView;
class QueueView;
class ResultStore;
class RunActions;
class RunControl;
class RunEndNotifier;
class RunsFilterBar;
class RunsModel;
class SettingsDialog;
class StoreReader;
class SubmitDialog;

// The main window: runs table (top), the selected run's Console and Metrics
// tabs and the Compare tab (bottom), actions Compare (Ctrl+D, several runs
// selected), Submit… (Ctrl+N), Open spec… (Ctrl+O), Cancel run… (asks first
// for a running run), Delete run (asks first), rename, tags and notes,
// re-run and archive (RunActions), Help > Keyboard shortcuts (F1) and About,
// node status in the status bar. Above the
// console, a header names the selected run (state, node, command, workdir)
// and marks its notices (RunNotice.h: "⚠ N notices", listed in its tooltip
// and, on a click, in a message box). Geometry, window
// state, splitter and sort order are remembered in QSettings.
//
// Layout (issue 21): the runs table and the tabs below it get most of the
// width; the Queue, Nodes and Pools (ui/queue/PoolsView.h) docks are tabbed
// together on the right, as wide as the Nodes tree's GPU columns need (at
// most a third of the window).
// View has a show/hide entry per dock and "Reset layout"
// (resetLayoutAction). The dock state is saved with kLayoutVersion: a state
// saved by another layout version (or none) gives the default layout, so a
// changed layout resets cleanly instead of restoring stale dock positions.
//
// Drag and drop anywhere on the window: a .yaml/.yml job spec opens the
// submit dialog in YAML mode (shown, editable, errors with line:column);
// .py/.sh files or folders open it pre-filled (jobSpecForScript), one dialog
// after the other. Anything else gets a message, never a crash.
//
// Data: database reads go through a StoreReader on a worker thread; the
// engine (on its own thread, may be null: then nothing can be submitted)
// is reached with queued calls and its signals arrive queued.
// GUI thread only. `store` and `engine` must outlive the window.
class MainWindow final : public QMainWindow {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MainWindow)

public:
    MainWindow(ResultStore* store, RunControl* control, QWidget* parent = nullptr);
    ~MainWindow() override;

    // What a drop of these URLs does (also the "Open spec…" action).
    // Returns false when nothing could be opened (a message says why).
    bool openPaths(const QList<QUrl>& urls);
    // Opens the submit dialog (non-modal to the event loop) in form mode.
    SubmitDialog* openSubmitDialog(const JobSpec& spec = {});
    // Opens the submit dialog in YAML mode with the file's text.
    SubmitDialog* openSpecDialog(const QString& path);
    // Submits through the engine (asynchronously); runSubmitted or
    // submitFailed follows.
    void submit(const JobSpec& spec);

    void selectRun(RunId run);
    RunId selectedRun() const { return m_selected; }
    RunsModel* runsModel() const { return m_model; }
    QSortFilterProxyModel* runsProxy() const { return m_proxy; } // a RunsFilterProxy
    // The query / saved queries / group-by bar above the runs table.
    RunsFilterBar* runsFilterBar() const { return m_filterBar; }
    ConsoleView* console() const { return m_console; }
    MetricChartsPanel* charts() const { return m_charts; }
    CompareView* compareView() const { return m_compare; }
    QAction* compareAction() const { return m_compareAction; }
    // The queue (dock "queueDock") and nodes (dock "nodesDock") views.
    QueueView* queueView() const { return m_queueView; }
    NodesView* nodesView() const { return m_nodesView; }
    PoolsView* poolsView() const { return m_poolsView; }
    QDockWidget* poolsDock() const { return m_poolsDock; }
    QDockWidget* queueDock() const { return m_queueDock; }
    QDockWidget* nodesDock() const { return m_nodesDock; }
    PipelinesView* pipelinesView() const { return m_pipelinesView; }
    // The version saveState() is tagged with in QSettings ("mainWindow/state");
    // bump it when the default layout changes.
    static constexpr int kLayoutVersion = 3; // 3: the Pools dock joined Queue and Nodes
    // View > Reset layout: docks tabbed on the right at their default width,
    // both shown, the runs table and the tabs at their default heights.
    // The sizes follow once the window is laid out (next event loop pass).
    void resetLayout();
    QAction* resetLayoutAction() const { return m_resetLayoutAction; }
    // The runs selected in the table, in table order.
    QList<RunId> selectedRuns() const;
    // Compare the selected runs (the Compare action, Ctrl+D): opens the
    // Compare tab and loads them on the store reader thread.
    void compareSelected();
    // The consoles of `runs` merged by arrival time (action "Aggregated
    // console", Ctrl+L, for the selected runs): opens the "aggregatedConsole" tab.
    void openAggregatedConsole(const QList<RunId>& runs);
    // The selected run's artifacts (ArtifactsDialog), non-modal.
    void openArtifacts(RunId run);
    // Rename, tags and notes, re-run, archive (Run menu and the table's context menu).
    RunActions* runActions() const { return m_runActions; }
    AggregatedConsoleView* aggregatedConsole() const { return m_aggregated; }
    // Benchmarks only (tests/bench/bench_gui_rows): every change reloads
    // every run, as before issue #22, to measure beside the row updates.
    void setFullReloads(bool on) { m_fullReloads = on; }

    // Tools > Settings… (Ctrl+,): theme, notifications, this database's
    // scheduling (SettingsDialog); one at a time, non-modal.
    SettingsDialog* openSettingsDialog();
    QAction* settingsAction() const { return m_settingsAction; }
    // Tells when a run ends (Settings > Notifications).
    RunEndNotifier* runEndNotifier() const { return m_notifier; }

    // Why there is no engine (the service could not be started): shown in
    // the status bar where the nodes' status would be.
    void setNoEngineReason(const QString& why);

Q_SIGNALS:
    void runSubmitted(ty::RunId run);
    void submitFailed(const QString& message);
    // The table took in what the database holds: a full snapshot (at
    // start) or the rows of runs that changed since (every later change).
    void runsReloaded();

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void createActions();
    void createLayout();
    void connectEngine();
    void restoreSettings();
    void saveSettings();
    void showError(const QString& title, const QString& message);
    void openNextQueued();

    void scheduleReload();
    void onRunsLoaded(const RunRows& rows);
    void onRunsUpdated(const RunRows& changed, const QList<RunId>& removed);
    // After the table took in a load or an update: selection, header, counts.
    void afterRunsChanged();
    void onCurrentRowChanged();
    void showRun(RunId run);
    // The runs of `run`'s attempts group among the loaded rows, in attempt order.
    QList<RunRecord> attemptsOf(const RunRecord& run) const;
    void updateHeader();
    void showNotices();
    void updateActions();
    // The status bar's "storeNotice": the database is open read-only, or
    // was found damaged (its tooltip says why and what to do); hidden otherwise.
    void updateStoreNotice();
    void onRunStateChanged(const RunRecord& run);
    // Asks the engine for the live console of `run` (none: an empty record,
    // or a run that ended), in place of the one followed before.
    void followConsole(const RunRecord& run);
    void onConsoleReceived(RunId run, qint64 offset, const QByteArray& bytes);
    void onMetricsReceived(RunId run, const QList<MetricPoint>& points);
    void onMetricsLoaded(RunId run, int ticket, const QMap<QString, QList<MetricPoint>>& series);
    void onNodeStatus(const QString& node, bool ready, const QString& reason);
    void appendLivePoints(const QList<MetricPoint>& points);
    void flushLivePoints();
    // Cancel run… (Ctrl+K): the selected unfinished runs; asks first when one
    // of them is running (a queued run loses nothing).
    void cancelSelected();
    void cancelRuns(const QList<RunId>& runs);
    void deleteSelected();
    void createQueueAndNodes();
    // The default dock places (tabbed, right) and, once laid out, sizes.
    void applyDefaultDocks();
    void applyDefaultSizes();

    ResultStore* m_store;
    QPointer<RunControl> m_engine; // the engine, in trainyardd (ServiceRunControl) or here
    RunId m_followedConsole = 0;   // the run whose live console the engine sends (followConsole)
    QThread m_readerThread;
    StoreReader* m_reader = nullptr;

    RunsModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    RunsFilterBar* m_filterBar = nullptr;
    QSplitter* m_splitter = nullptr;
    QTabWidget* m_tabs = nullptr;
    QLabel* m_header = nullptr;
    AttemptsStrip* m_attempts = nullptr;
    QToolButton* m_notices = nullptr; // "⚠ N notices" right of the header; hidden when the run has none
    ConsoleView* m_console = nullptr;
    MetricChartsPanel* m_charts = nullptr;
    QLabel* m_nodeLabel = nullptr;
    QLabel* m_countLabel = nullptr;
    QLabel* m_storeNotice = nullptr;
    QAction* m_submitAction = nullptr;
    QAction* m_openAction = nullptr;
    QAction* m_cancelAction = nullptr;
    QAction* m_deleteAction = nullptr;
    QAction* m_compareAction = nullptr;
    QAction* m_artifactsAction = nullptr;
    RunActions* m_runActions = nullptr;
    CompareLoader* m_compareLoader = nullptr; // lives on m_readerThread
    CompareView* m_compare = nullptr;
    QTimer* m_compareRefresh = nullptr; // a compared run changed: refresh the comparison (at most once a second)
    void compareRunChanged(RunId run);
    AggregatedConsoleView* m_aggregated = nullptr; // created on first use
    QTimer* m_reloadTimer = nullptr;
    QTimer* m_tickTimer = nullptr;
    bool m_fullReloads = false;
    QTimer* m_versionTimer = nullptr; // polls the database's data version (another process wrote?)
    // Live points reach the charts at most every kLiveChartMs: a chatty run
    // sends dozens of batches a second, and each append repaints the
    // Metrics tab (antialiased curves: the GUI thread's largest cost while
    // following 100k lines/s, tests/bench/bench_follow).
    static constexpr int kLiveChartMs = 100;
    QTimer* m_liveTimer = nullptr;
    QMap<QString, QList<SeriesPoint>> m_liveQueue; // per key, points not on the charts yet
    QueueView* m_queueView = nullptr;
    NodesView* m_nodesView = nullptr;
    PoolsView* m_poolsView = nullptr;
    QDockWidget* m_poolsDock = nullptr;
    QDockWidget* m_queueDock = nullptr;
    QDockWidget* m_nodesDock = nullptr;
    PipelinesView* m_pipelinesView = nullptr; // a tab beside Compare
    void createPipelines();
    QAction* m_resetLayoutAction = nullptr;
    QAction* m_settingsAction = nullptr;
    QPointer<SettingsDialog> m_settingsDialog;
    RunEndNotifier* m_notifier = nullptr;
    bool m_defaultSizesPending = false; // applyDefaultSizes() once shown and laid out

    struct QueuedOpen {
        bool isSpec = false;
        QString path;
        JobSpec spec;
    };
    QList<QueuedOpen> m_openQueue;
    QPointer<SubmitDialog> m_dialog;

    RunId m_selected = 0;
    RunId m_selectOnArrival = 0;
    bool m_selectedFirstRun = false;
    QString m_consolePathShown;
    int m_metricsTicket = 0;
    bool m_metricsLoaded = false;
    QList<MetricPoint> m_liveBuffer;   // live points that came while the metrics were loading
    QHash<QString, qint64> m_lastStep; // per key, last step drawn
    QHash<QString, QString> m_nodeStatus;
};

} // namespace ty
