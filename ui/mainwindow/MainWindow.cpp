#include "MainWindow.h"
#include "ui/i18n/RunTexts.h"

#include "ui/charts/MetricChartWidget.h"
#include "ui/charts/MetricChartsPanel.h"
#include "core/common/Paths.h"
#include "ui/compare/CompareLoader.h"
#include "ui/compare/CompareView.h"
#include "ui/console/AggregatedConsoleView.h"
#include "ui/console/ConsoleView.h"
#include "ui/dialogs/ArtifactsDialog.h"
#include "ui/dialogs/CommandLine.h"
#include "ui/dialogs/HelpDialogs.h"
#include "ui/dialogs/SubmitDialog.h"
#include "ui/mainwindow/RunActions.h"
#include "core/spec/Rerun.h"
#include "ui/nodes/NodesView.h"
#include "ui/queue/PoolsView.h"
#include "ui/notify/RunEndNotifier.h"
#include "ui/queue/QueueActions.h"
#include "core/pipeline/PipelineSpec.h"
#include "ui/pipelines/PipelinesView.h"
#include "ui/queue/QueueView.h"
#include "ui/runs/AttemptsStrip.h"
#include "ui/runs/RunStateStyle.h"
#include "ui/runs/RunsColumnChooser.h"
#include "ui/runs/RunsFilterBar.h"
#include "ui/runs/RunsFilterProxy.h"
#include "ui/runs/RunsModel.h"
#include "ui/runs/StoreReader.h"
#include "ui/settings/SettingsDialog.h"
#include "core/runs/RunControl.h"
#include "core/store/ResultStore.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLayout>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QFontMetrics>
#include <QStyle>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cstring>

namespace ty {

namespace {

bool isSpecFile(const QFileInfo& info)
{
    const QString s = info.suffix().toLower();
    return info.isFile() && (s == u"yaml" || s == u"yml");
}

// A .yaml whose top level has `steps:` (read only when under 1 MiB, as a job spec is).
bool isPipelineFile(const QFileInfo& info)
{
    QFile f(info.absoluteFilePath());
    if (info.size() > 1024 * 1024 || !f.open(QIODevice::ReadOnly))
        return false;
    return pipeline::looksLikePipeline(QString::fromUtf8(f.readAll()));
}

bool isScript(const QFileInfo& info)
{
    const QString s = info.suffix().toLower();
    return info.isDir() || (info.isFile() && (s == u"py" || s == u"sh"));
}

QList<SeriesPoint> toSeries(const QList<MetricPoint>& points)
{
    QList<SeriesPoint> out;
    out.reserve(points.size());
    for (const MetricPoint& p : points)
        out.append(SeriesPoint{double(p.step), p.value, double(p.wallTimeMs)});
    return out;
}

// "failed (CUDA OOM, exit 1): CUDA out of memory (torch.OutOfMemoryError)",
// "cancelled (SIGTERM)", "cancelled before it started", "queued: waiting
// for ...": the state with what ended it (or why it waits), each fact once.
QString headerStateText(const RunRecord& r)
{
    QString state = runStateText(r.state);
    QStringList facts;
    if (r.state == RunState::Failed && r.failureKind != FailureKind::None)
        facts << failureKindText(r.failureKind);
    if (r.exitSignal) {
        const char* abbrev = sigabbrev_np(*r.exitSignal);
        facts << (abbrev ? QStringLiteral("SIG%1").arg(QString::fromLatin1(abbrev))
                         : MainWindow::tr("signal %1").arg(*r.exitSignal));
    } else if (r.exitCode && r.state != RunState::Succeeded) {
        facts << MainWindow::tr("exit %1").arg(*r.exitCode);
    }
    if (!facts.isEmpty())
        state += QStringLiteral(" (%1)").arg(facts.join(QStringLiteral(", ")));
    QString reason = r.pendingReason.isEmpty() ? r.failureReason : r.pendingReason;
    if (reason == state || reason == runStateName(r.state))
        reason.clear(); // "cancelled: cancelled"
    else if (reason.startsWith(runStateName(r.state) + u' '))
        return reason.replace(0, runStateName(r.state).size(), state); // "cancelled before it started"
    if (!reason.isEmpty())
        state += QStringLiteral(": ") + reason;
    return state;
}

QSettings settings()
{
    return QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard"));
}

} // namespace

MainWindow::MainWindow(ResultStore* store, RunControl* control, QWidget* parent)
    : QMainWindow(parent)
    , m_store(store)
    , m_engine(control)
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(QStringLiteral("Trainyard"));
    setAcceptDrops(true);
    qRegisterMetaType<ty::RunRecord>();
    qRegisterMetaType<ty::MetricPoint>();
    qRegisterMetaType<QList<ty::MetricPoint>>();
    qRegisterMetaType<ty::RunRows>();
    qRegisterMetaType<ty::RunId>("ty::RunId");
    qRegisterMetaType<QMap<QString, QList<qint64>>>();

    m_reader = new StoreReader(store);
    m_reader->moveToThread(&m_readerThread);
    m_readerThread.setObjectName(QStringLiteral("store-reader"));
    connect(m_reader, &StoreReader::runsLoaded, this, &MainWindow::onRunsLoaded, Qt::QueuedConnection);
    connect(m_reader, &StoreReader::runsUpdated, this, &MainWindow::onRunsUpdated, Qt::QueuedConnection);
    connect(m_reader, &StoreReader::metricsLoaded, this, &MainWindow::onMetricsLoaded, Qt::QueuedConnection);
    // Resumed runs: a dashed marker where a series went back (after metricsLoaded made the charts).
    connect(
            m_reader, &StoreReader::restartsLoaded, this,
            [this](RunId run, int ticket, const QMap<QString, QList<qint64>>& stepsByKey) {
                if (ticket != m_metricsTicket || run != m_selected)
                    return;
                for (auto it = stepsByKey.cbegin(); it != stepsByKey.cend(); ++it)
                    m_charts->setRestarts(it.key(), it.value());
            },
            Qt::QueuedConnection);
    connect(m_reader, &StoreReader::externalChange, this, &MainWindow::scheduleReload, Qt::QueuedConnection);
    m_compareLoader = new CompareLoader(store);
    m_compareLoader->moveToThread(&m_readerThread);
    m_readerThread.start();

    m_notifier = new RunEndNotifier(this);
    createActions();
    createLayout();
    createQueueAndNodes();
    createPipelines();
    connectEngine();
    connect(m_store, &ResultStore::runsChanged, this, &MainWindow::scheduleReload);
    connect(m_store, &ResultStore::writeFailed, this, [this](const QString& message) {
        statusBar()->showMessage(tr("Database write failed: %1").arg(message), 10000);
    });
    // A damaged file found by a read or a write: said once, in words, with what to do.
    connect(m_store, &ResultStore::damaged, this, [this](const QString& explanation) {
        updateStoreNotice();
        updateActions();
        auto* box = new QMessageBox(
                QMessageBox::Warning, tr("Damaged result database"), explanation, QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("storeDamagedBox"));
        box->setTextInteractionFlags(Qt::TextSelectableByMouse); // the recovery command can be copied
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });

    // Changes (this process's writes, another's seen by the data version)
    // are gathered for a moment, then only the changed rows are read
    // (StoreReader::requestRunUpdates): what a change costs follows the
    // runs it touched, not the size of the database (issue #22).
    m_reloadTimer = new QTimer(this);
    m_reloadTimer->setSingleShot(true);
    m_reloadTimer->setInterval(100);
    connect(m_reloadTimer, &QTimer::timeout, this, [this] {
        if (m_fullReloads)
            m_reader->requestRuns();
        else
            m_reader->requestRunUpdates();
    });
    m_liveTimer = new QTimer(this);
    m_liveTimer->setSingleShot(true);
    m_liveTimer->setInterval(kLiveChartMs);
    connect(m_liveTimer, &QTimer::timeout, this, &MainWindow::flushLivePoints);
    m_tickTimer = new QTimer(this);
    m_tickTimer->setInterval(1000);
    connect(m_tickTimer, &QTimer::timeout, this, [this] { m_model->tick(); });
    m_tickTimer->start();
    // The service writes in its own process: its changes show within about
    // 350 ms (this poll plus the gathering above).
    m_versionTimer = new QTimer(this);
    m_versionTimer->setInterval(250);
    connect(m_versionTimer, &QTimer::timeout, m_reader, &StoreReader::requestVersionCheck);
    m_versionTimer->start();

    restoreSettings();
    m_reader->requestRuns();
    updateActions();
}

MainWindow::~MainWindow()
{
    m_readerThread.quit();
    m_readerThread.wait();
    delete m_reader;
    delete m_compareLoader;
}

void MainWindow::createActions()
{
    m_submitAction = new QAction(tr("&Submit…"), this);
    m_submitAction->setObjectName(QStringLiteral("submitAction"));
    m_submitAction->setShortcut(QKeySequence::New);
    m_submitAction->setToolTip(tr("Submit a run (Ctrl+N); or drop a script, folder or job spec on the window"));
    connect(m_submitAction, &QAction::triggered, this, [this] { openSubmitDialog(); });

    m_openAction = new QAction(tr("&Open spec or script…"), this);
    m_openAction->setObjectName(QStringLiteral("openAction"));
    m_openAction->setShortcut(QKeySequence::Open);
    connect(m_openAction, &QAction::triggered, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(this, tr("Open job spec or script"),
                QDir::currentPath(), tr("Job specs and scripts (*.yaml *.yml *.py *.sh);;All files (*)"));
        QList<QUrl> urls;
        for (const QString& f : files)
            urls << QUrl::fromLocalFile(f);
        if (!urls.isEmpty())
            openPaths(urls);
    });

    m_cancelAction = new QAction(tr("&Cancel run…"), this);
    m_cancelAction->setObjectName(QStringLiteral("cancelAction"));
    m_cancelAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    m_cancelAction->setToolTip(tr("Stop the selected runs (Ctrl+K; asks first for a running run): SIGTERM to its "
                                  "processes, SIGKILL after 10 s; a waiting run leaves the queue"));
    connect(m_cancelAction, &QAction::triggered, this, &MainWindow::cancelSelected);

    m_deleteAction = new QAction(tr("&Delete run…"), this);
    m_deleteAction->setObjectName(QStringLiteral("deleteAction"));
    m_deleteAction->setShortcut(QKeySequence::Delete);
    m_deleteAction->setToolTip(tr("Delete the selected finished run with its metrics and console copy"));
    connect(m_deleteAction, &QAction::triggered, this, &MainWindow::deleteSelected);

    m_compareAction = new QAction(tr("Co&mpare"), this);
    m_compareAction->setObjectName(QStringLiteral("compareAction"));
    m_compareAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    m_compareAction->setToolTip(
            tr("Compare the selected runs side by side (Ctrl+D; Ctrl/Shift+click to select several)"));
    connect(m_compareAction, &QAction::triggered, this, &MainWindow::compareSelected);

    m_artifactsAction = new QAction(tr("&Artifacts…"), this);
    m_artifactsAction->setObjectName(QStringLiteral("artifactsAction"));
    m_artifactsAction->setToolTip(tr("List the selected run's artifacts on its node and download them"));
    connect(m_artifactsAction, &QAction::triggered, this, [this] {
        if (m_selected)
            openArtifacts(m_selected);
    });

    auto* quit = new QAction(tr("&Quit"), this);
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_submitAction);
    file->addAction(m_openAction);
    file->addSeparator();
    file->addAction(quit);
    // Rename, tags and notes, re-run, archive. Edits are written by the
    // engine (RunActions), never on the GUI thread.
    m_runActions = new RunActions(
            m_engine, [this](RunId id) { return m_model ? m_model->rowData(id) : nullptr; }, this);
    connect(m_runActions, &RunActions::rerunRequested, this, [this](const RerunSpec& rerun, RunId from) {
        SubmitDialog* dialog = openSubmitDialog();
        dialog->setSpecText(rerun.yaml, rerun.spec.sourcePath, rerun.baseDir);
        dialog->setWindowTitle(tr("Re-run #%1 %2").arg(from).arg(rerun.spec.name));
    });
    connect(m_runActions, &RunActions::done, this, [this](const QString& what, const QStringList& errors) {
        if (errors.isEmpty())
            statusBar()->showMessage(what, 5000);
    });

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(m_cancelAction);
    run->addAction(m_deleteAction);
    run->addSeparator();
    for (QAction* a : m_runActions->actions()) {
        if (a)
            run->addAction(a);
        else
            run->addSeparator();
    }
    run->addSeparator();
    run->addAction(m_compareAction);
    run->addAction(m_artifactsAction);
    auto* aggregated = new QAction(tr("&Aggregated console"), this);
    aggregated->setObjectName(QStringLiteral("aggregatedConsoleAction"));
    aggregated->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    aggregated->setToolTip(tr("The selected runs' consoles merged by arrival time, filterable (Ctrl+L)"));
    connect(aggregated, &QAction::triggered, this, [this] { openAggregatedConsole(selectedRuns()); });
    run->addAction(aggregated);

    QToolBar* tb = addToolBar(tr("Main"));
    tb->setObjectName(QStringLiteral("mainToolBar"));
    tb->setMovable(false);
    tb->setToolButtonStyle(Qt::ToolButtonTextOnly);
    tb->addAction(m_submitAction);
    tb->addAction(m_openAction);
    tb->addSeparator();
    tb->addAction(m_cancelAction);
    tb->addAction(m_deleteAction);
    tb->addSeparator();
    tb->addAction(m_compareAction);
}

void MainWindow::createLayout()
{
    m_model = new RunsModel(this);
    auto* filterProxy = new RunsFilterProxy(this); // filter and group by a RunQuery (the bar above the table)
    m_proxy = filterProxy;
    m_proxy->setObjectName(QStringLiteral("runsProxy"));
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RunsModel::SortRole);
    m_proxy->setDynamicSortFilter(true);
    connect(m_runActions, &RunActions::showArchivedChanged, filterProxy, &RunsFilterProxy::setShowArchived);

    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("runsTable"));
    m_table->setAccessibleName(tr("Runs"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunsModel::Started, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    // A sweep's names differ at the end (digits-sweep[lr=0.001] and
    // [lr=0.0003]): cut in the middle, never the tail (issue 21).
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->horizontalHeader()->setSectionResizeMode(RunsModel::Name, QHeaderView::Stretch);
    m_table->horizontalHeader()->setHighlightSections(false);
    {
        // Wide enough for the longest state as shown ("failed (CUDA OOM)",
        // "已失败 (无法调度)"), in this language and font, icon included.
        const QFontMetrics fm = m_table->fontMetrics();
        int widest = 0;
        for (const QString& text : runStateCellTexts())
            widest = std::max(widest, fm.horizontalAdvance(text));
        const int icon = m_table->style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, m_table);
        m_table->setColumnWidth(RunsModel::State, std::clamp(widest + icon + 24, 100, 240));
    }
    m_table->setColumnWidth(RunsModel::Name, 220);
    m_table->setColumnWidth(RunsModel::Node, 80);
    m_table->setColumnWidth(RunsModel::Gpus, 60);
    m_table->setColumnWidth(RunsModel::Started, 150);
    m_table->setColumnWidth(RunsModel::Duration, 76);
    m_table->setAcceptDrops(false);
    // Param columns: the swept ones shown, the rest from the header's menu.
    new RunsColumnChooser(m_table, m_model, QStringLiteral("runsTable"), this);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &MainWindow::onCurrentRowChanged);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &MainWindow::updateActions);
    connect(m_model, &QAbstractItemModel::columnsInserted, this, [this](const QModelIndex&, int first, int last) {
        // A metric column is as wide as its name (values such as 0.9667
        // are narrower), so that a run's usual four to six metrics fit
        // beside the run columns without scrolling.
        QHeaderView* header = m_table->horizontalHeader();
        for (int c = first; c <= last; ++c)
            m_table->setColumnWidth(c, std::clamp(header->sectionSizeHint(c), 72, 140));
    });

    auto* bottom = new QWidget;
    auto* bl = new QVBoxLayout(bottom);
    bl->setContentsMargins(0, 0, 0, 0);
    bl->setSpacing(2);
    m_header = new QLabel(bottom);
    m_header->setObjectName(QStringLiteral("runHeader"));
    m_header->setTextFormat(Qt::RichText);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setContentsMargins(6, 4, 6, 2);
    // A long command line or failure reason is cut at the window's edge
    // (whole in the tooltip) instead of widening the window past the screen.
    m_header->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_tabs = new QTabWidget(bottom);
    m_tabs->setObjectName(QStringLiteral("runTabs"));
    m_tabs->setAccessibleName(tr("Run details"));
    m_console = new ConsoleView;
    m_charts = new MetricChartsPanel;
    // Losses and accuracies first, then the rest.
    m_charts->setKeyRank([](const QString& key) { return RunsModel::isMainMetricKey(key) ? 0 : 1; });
    m_tabs->addTab(m_console, tr("Console"));
    m_tabs->addTab(m_charts, tr("Metrics"));
    m_compare = new CompareView(m_compareLoader);
    // Live runs in the comparison: their new points and ends are read again
    // from the database, a second after the first change at most.
    m_compareRefresh = new QTimer(this);
    m_compareRefresh->setSingleShot(true);
    m_compareRefresh->setInterval(1000);
    connect(m_compareRefresh, &QTimer::timeout, m_compare, &CompareView::refresh);
    m_tabs->addTab(m_compare, tr("Compare"));
    // A run's notices (RunNotice.h): what the engine only logged before, where
    // a GUI user never looks. Marked beside the header, listed on a click.
    m_notices = new QToolButton(bottom);
    m_notices->setObjectName(QStringLiteral("runNotices"));
    m_notices->setAccessibleName(tr("Notices of the run"));
    m_notices->setAutoRaise(true);
    m_notices->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_notices->setVisible(false);
    connect(m_notices, &QToolButton::clicked, this, &MainWindow::showNotices);
    auto* headerRow = new QHBoxLayout;
    headerRow->setContentsMargins(0, 0, 0, 0);
    headerRow->setSpacing(0);
    headerRow->addWidget(m_header, 1);
    headerRow->addWidget(m_notices);
    bl->addLayout(headerRow);
    // A retried run's attempts, each a link to its run (issue #25).
    m_attempts = new AttemptsStrip(bottom);
    connect(m_attempts, &AttemptsStrip::attemptActivated, this, &MainWindow::selectRun);
    bl->addWidget(m_attempts);
    bl->addWidget(m_tabs, 1);

    m_splitter = new QSplitter(Qt::Vertical);
    m_splitter->setObjectName(QStringLiteral("mainSplitter"));
    // The filter bar above the runs table. Grouped rows show their group in
    // the vertical header (a click there selects the group) on banded rows.
    auto* runsPane = new QWidget;
    auto* rl = new QVBoxLayout(runsPane);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->setSpacing(0);
    m_filterBar = new RunsFilterBar(filterProxy, runsPane);
    rl->addWidget(m_filterBar);
    rl->addWidget(m_table, 1);
    const auto showGrouping = [this, filterProxy] {
        m_table->setAlternatingRowColors(!filterProxy->isGrouped());
        m_table->verticalHeader()->setVisible(filterProxy->isGrouped());
    };
    connect(filterProxy, &RunsFilterProxy::groupByChanged, this, showGrouping);
    showGrouping();
    connect(m_table->verticalHeader(), &QHeaderView::sectionClicked, this, [this, filterProxy](int row) {
        const auto [first, count] = filterProxy->groupRows(row);
        if (!filterProxy->isGrouped() || count <= 0)
            return;
        const QItemSelection group(
                m_proxy->index(first, 0), m_proxy->index(first + count - 1, m_proxy->columnCount() - 1));
        m_table->selectionModel()->select(group, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    });
    m_splitter->addWidget(runsPane);
    m_splitter->addWidget(bottom);
    m_splitter->setStretchFactor(0, 1);
    m_splitter->setStretchFactor(1, 2);
    m_splitter->setChildrenCollapsible(false);
    setCentralWidget(m_splitter);

    m_nodeLabel = new QLabel;
    m_nodeLabel->setObjectName(QStringLiteral("nodeStatusLabel"));
    m_countLabel = new QLabel;
    m_countLabel->setObjectName(QStringLiteral("runCountLabel"));
    m_storeNotice = new QLabel;
    m_storeNotice->setObjectName(QStringLiteral("storeNotice"));
    statusBar()->addPermanentWidget(m_storeNotice);
    statusBar()->addPermanentWidget(m_countLabel);
    statusBar()->addPermanentWidget(m_nodeLabel);
    updateStoreNotice();
    m_nodeLabel->setText(m_engine ? tr("local: connecting…") : tr("no engine"));
    updateHeader();
}

void MainWindow::setNoEngineReason(const QString& why)
{
    m_nodeLabel->setText(tr("no engine"));
    m_nodeLabel->setToolTip(why);
    m_nodeLabel->setStyleSheet(QStringLiteral("color: #c62828;"));
    statusBar()->showMessage(why);
}

void MainWindow::connectEngine()
{
    if (!m_engine)
        return;
    connect(m_engine, &RunControl::runStateChanged, this, &MainWindow::onRunStateChanged);
    connect(m_engine, &RunControl::consoleReceived, this, &MainWindow::onConsoleReceived);
    connect(m_engine, &RunControl::metricsReceived, this, &MainWindow::onMetricsReceived);
    connect(m_engine, &RunControl::nodeStatusChanged, this, &MainWindow::onNodeStatus);
    // A connection that came up with a warning (a changed host key accepted
    // under StrictHostKeyChecking no): shown until another message replaces it.
    connect(m_engine, &RunControl::nodeWarning, this, [this](const QString& node, const QString& message) {
        statusBar()->showMessage(tr("Node %1: %2").arg(node, message));
    });
    connect(m_engine, &RunControl::cancelFailed, this, [this](RunId run, const QString& reason) {
        statusBar()->showMessage(tr("Run #%1 was not cancelled: %2").arg(run).arg(reason), 15000);
    });
    // The service came back (restarted): runs went on meanwhile.
    connect(m_engine, &RunControl::reconnected, this, [this] {
        statusBar()->showMessage(tr("Reconnected to the Trainyard service"), 5000);
        scheduleReload();
    });
}

void MainWindow::restoreSettings()
{
    QSettings s = settings();
    if (!restoreGeometry(s.value(QStringLiteral("mainWindow/geometry")).toByteArray())) {
        // First start: most of the screen.
        const QRect avail = screen() ? screen()->availableGeometry() : QRect(0, 0, 1400, 860);
        const QSize size = QSize(1600, 1000).boundedTo(avail.size() * 0.95);
        setGeometry(QStyle::alignedRect(Qt::LeftToRight, Qt::AlignCenter, size, avail));
    }
    // A state of another layout version (the docks side by side, 40 % of the
    // width, before version 2) is not restored: the default layout instead.
    const bool layoutRestored = restoreState(s.value(QStringLiteral("mainWindow/state")).toByteArray(), kLayoutVersion)
            && m_splitter->restoreState(s.value(QStringLiteral("mainWindow/splitter")).toByteArray());
    if (!layoutRestored)
        resetLayout();
    const int sortColumn = s.value(QStringLiteral("mainWindow/sortColumn"), int(RunsModel::Started)).toInt();
    const auto order = Qt::SortOrder(s.value(QStringLiteral("mainWindow/sortOrder"), int(Qt::DescendingOrder)).toInt());
    m_table->sortByColumn(sortColumn < RunsModel::FirstMetricColumn ? sortColumn : int(RunsModel::Started), order);
    m_tabs->setCurrentIndex(s.value(QStringLiteral("mainWindow/tab"), 0).toInt());
}

void MainWindow::saveSettings()
{
    QSettings s = settings();
    s.setValue(QStringLiteral("mainWindow/geometry"), saveGeometry());
    s.setValue(QStringLiteral("mainWindow/state"), saveState(kLayoutVersion));
    s.setValue(QStringLiteral("mainWindow/splitter"), m_splitter->saveState());
    s.setValue(QStringLiteral("mainWindow/sortColumn"), m_table->horizontalHeader()->sortIndicatorSection());
    s.setValue(QStringLiteral("mainWindow/sortOrder"), int(m_table->horizontalHeader()->sortIndicatorOrder()));
    s.setValue(QStringLiteral("mainWindow/tab"), m_tabs->currentIndex());
}

void MainWindow::resetLayout()
{
    applyDefaultDocks();
    m_defaultSizesPending = true;
    if (isVisible()) // else showEvent() applies them
        QTimer::singleShot(0, this, &MainWindow::applyDefaultSizes);
}

void MainWindow::applyDefaultDocks()
{
    for (QDockWidget* dock : {m_queueDock, m_nodesDock, m_poolsDock}) {
        dock->setFloating(false);
        addDockWidget(Qt::RightDockWidgetArea, dock); // moves it when it is elsewhere
        dock->show();
    }
    tabifyDockWidget(m_queueDock, m_nodesDock);
    tabifyDockWidget(m_nodesDock, m_poolsDock);
    m_queueDock->raise();
}

void MainWindow::applyDefaultSizes()
{
    if (!m_defaultSizesPending || !isVisible())
        return;
    m_defaultSizesPending = false;
    // The docks: as wide as the Nodes tree's GPU columns with room for a
    // GPU's name beside them, frames and scroll bar; never more than a third
    // of the window, so that the runs table and the Compare tab keep the rest.
    const QTreeWidget* tree = m_nodesView->tree();
    int need = 120; // the node / GPU name (the stretched column)
    for (int c = 0; c < NodesView::ColumnCount; ++c)
        if (c != NodesView::NameColumn)
            need += tree->header()->sectionSize(c);
    const QMargins margins = m_nodesView->layout() ? m_nodesView->layout()->contentsMargins() : QMargins();
    need += margins.left() + margins.right() + 2 * tree->frameWidth()
            + tree->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, tree)
            + 2 * style()->pixelMetric(QStyle::PM_DockWidgetFrameWidth, nullptr, m_nodesDock) + 4;
    resizeDocks({m_queueDock}, {std::clamp(need, 280, std::max(280, width() / 3))}, Qt::Horizontal);
    // Runs table 2/5 of the height (ten runs and more at 900 px), the
    // Console / Metrics / Compare tabs the rest (four charts unscrolled).
    const int h = std::max(m_splitter->height(), 400);
    m_splitter->setSizes({h * 2 / 5, h - h * 2 / 5});
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (m_defaultSizesPending) // docks only take a width once the window is laid out
        QTimer::singleShot(0, this, &MainWindow::applyDefaultSizes);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    saveSettings();
    QMainWindow::closeEvent(event);
}

// ---- drag and drop ---------------------------------------------------------

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dragMoveEvent(QDragMoveEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    if (!event->mimeData()->hasUrls()) {
        showError(tr("Nothing to open"), tr("Drop job specs (.yaml), scripts (.py, .sh) or folders here."));
        return;
    }
    event->acceptProposedAction();
    const QList<QUrl> urls = event->mimeData()->urls();
    // Open after the drop returns: the drag source must not wait on a dialog.
    QTimer::singleShot(0, this, [this, urls] { openPaths(urls); });
}

bool MainWindow::openPaths(const QList<QUrl>& urls)
{
    QStringList errors;
    QList<QueuedOpen> items;
    for (const QUrl& url : urls) {
        if (!url.isLocalFile()) {
            errors << tr("%1: only local files and folders can be opened").arg(url.toDisplayString());
            continue;
        }
        const QString path = url.toLocalFile();
        const QFileInfo info(path);
        if (!info.exists()) {
            errors << tr("%1: no such file or folder").arg(path);
        } else if (isSpecFile(info) && isPipelineFile(info)) {
            // A pipeline goes to the service as it is: its steps are job specs of their own.
            if (auto submitted = m_pipelinesView->submitFile(info.absoluteFilePath()); !submitted)
                errors << submitted.error().message;
            else
                m_tabs->setCurrentWidget(m_pipelinesView);
        } else if (isSpecFile(info)) {
            items.append(QueuedOpen{true, info.absoluteFilePath(), {}});
        } else if (isScript(info)) {
            auto spec = jobSpecForScript(info.absoluteFilePath());
            if (spec)
                items.append(QueuedOpen{false, info.absoluteFilePath(), *spec});
            else
                errors << spec.error().message;
        } else {
            errors << tr("%1: only .py and .sh scripts, folders and .yaml job specs can be submitted").arg(path);
        }
    }
    if (!errors.isEmpty())
        showError(tr("Cannot open"), errors.join(u'\n'));
    if (items.isEmpty())
        return false;
    m_openQueue += items;
    if (!m_dialog)
        openNextQueued();
    return true;
}

void MainWindow::openNextQueued()
{
    while (!m_openQueue.isEmpty() && !m_dialog) {
        const QueuedOpen next = m_openQueue.takeFirst();
        if (next.isSpec)
            openSpecDialog(next.path);
        else
            openSubmitDialog(next.spec);
    }
}

SubmitDialog* MainWindow::openSubmitDialog(const JobSpec& spec)
{
    auto* dialog = new SubmitDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (!spec.argv.isEmpty())
        dialog->setSpec(spec);
    m_dialog = dialog;
    connect(dialog, &QDialog::accepted, this, [this, dialog] { submit(dialog->spec()); });
    connect(dialog, &QDialog::finished, this, [this] {
        m_dialog = nullptr;
        QTimer::singleShot(0, this, &MainWindow::openNextQueued);
    });
    dialog->open();
    return dialog;
}

SubmitDialog* MainWindow::openSpecDialog(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        showError(tr("Cannot open"), tr("%1: cannot read job spec: %2").arg(path, f.errorString()));
        return nullptr;
    }
    if (f.size() > 1024 * 1024) {
        showError(tr("Cannot open"), tr("%1: a job spec larger than 1 MiB is not a job spec").arg(path));
        return nullptr;
    }
    const QString text = QString::fromUtf8(f.readAll());
    SubmitDialog* dialog = openSubmitDialog();
    dialog->setSpecText(text, QFileInfo(path).absoluteFilePath(), QFileInfo(path).absolutePath());
    dialog->setWindowTitle(tr("Submit %1").arg(QFileInfo(path).fileName()));
    return dialog;
}

void MainWindow::submit(const JobSpec& spec)
{
    if (!m_engine) {
        const QString msg = tr("Cannot submit '%1': no run engine.").arg(spec.name);
        showError(tr("Submit failed"), msg);
        Q_EMIT submitFailed(msg);
        return;
    }
    statusBar()->showMessage(tr("Submitting %1…").arg(spec.name), 3000);
    QPointer<MainWindow> self(this);
    m_engine->submit(spec, QString(), [self, name = spec.name](const Result<QList<RunId>>& ids) {
        if (!self)
            return;
        if (ids && !ids->isEmpty()) {
            const RunId first = ids->front();
            self->m_selectOnArrival = first;
            self->statusBar()->showMessage(ids->size() == 1 ? tr("Submitted %1 as run #%2").arg(name).arg(first)
                                                            : tr("Submitted %1: %2 runs, #%3 to #%4")
                                                                      .arg(name)
                                                                      .arg(ids->size())
                                                                      .arg(first)
                                                                      .arg(ids->back()),
                    5000);
            self->scheduleReload();
            Q_EMIT self->runSubmitted(first);
        } else {
            const QString message = ids ? tr("'%1' made no runs").arg(name) : ids.error().message;
            self->showError(tr("Submit failed"), message);
            Q_EMIT self->submitFailed(message);
        }
    });
}

void MainWindow::showError(const QString& title, const QString& message)
{
    statusBar()->showMessage(message, 10000);
    // Non-blocking: a drop handler must not sit in a nested event loop.
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

// ---- runs -------------------------------------------------------------------

void MainWindow::scheduleReload()
{
    if (!m_reloadTimer->isActive())
        m_reloadTimer->start();
}

void MainWindow::onRunsLoaded(const RunRows& rows)
{
    for (const RunRow& r : rows)
        m_notifier->observe(r.run);
    m_model->setRuns(rows);
    m_queueView->setRuns(rows);
    m_nodesView->setRuns(rows);
    m_poolsView->setRuns(rows);
    afterRunsChanged();
}

void MainWindow::onRunsUpdated(const RunRows& changed, const QList<RunId>& removed)
{
    // What the Nodes view shows of runs (their names, the consoles of a
    // node's latest runs) moves with a run's start, node or name, not with
    // each chunk of a live run's metrics.
    bool nodesMoved = !removed.isEmpty();
    for (const RunRow& r : changed)
        m_notifier->observe(r.run);
    for (const RunId id : removed)
        m_notifier->forget(id);
    for (const RunRow& r : changed) {
        const RunRow* old = m_model->rowData(r.run.id);
        nodesMoved = nodesMoved || !old || old->run.node != r.run.node || old->run.startedAt != r.run.startedAt
                || old->run.agentRunId != r.run.agentRunId || old->run.name != r.run.name;
    }
    m_model->applyUpdates(changed, removed);
    m_queueView->updateRuns(changed, removed);
    m_poolsView->updateRuns(changed, removed);
    if (nodesMoved)
        m_nodesView->setRuns(m_model->rows());
    afterRunsChanged();
}

void MainWindow::afterRunsChanged()
{
    const RunRows& rows = m_model->rows();
    m_queueView->queueActions()->refresh();
    int active = 0, queued = 0;
    for (const RunRow& r : rows) {
        if (r.run.state == RunState::Running || r.run.state == RunState::Starting)
            ++active;
        else if (r.run.state == RunState::Queued || r.run.state == RunState::Held)
            ++queued;
    }
    m_countLabel->setText(tr("%1 runs · %2 running · %3 queued").arg(rows.size()).arg(active).arg(queued));

    if (m_selectOnArrival && m_model->rowOf(m_selectOnArrival) >= 0) {
        selectRun(std::exchange(m_selectOnArrival, 0));
    } else if (m_selected && m_model->rowOf(m_selected) < 0) {
        m_selected = 0; // deleted
        m_console->clear(tr("Select a run to see its console."));
        m_charts->clear(tr("Select a run to see its metrics."));
    } else if (!m_selected && !m_selectedFirstRun && m_proxy->rowCount() > 0) {
        m_selectedFirstRun = true;
        m_table->setCurrentIndex(m_proxy->index(0, 0));
    }
    if (m_selected) {
        // The record may have changed (state, console path).
        if (const RunRow* row = m_model->rowData(m_selected))
            onRunStateChanged(row->run);
    }
    updateHeader();
    updateActions();
    m_runActions->refresh();
    Q_EMIT runsReloaded();
}

void MainWindow::selectRun(RunId run)
{
    const int row = m_model->rowOf(run);
    if (row < 0)
        return;
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
    m_table->setCurrentIndex(index);
    m_table->scrollTo(index);
}

void MainWindow::onCurrentRowChanged()
{
    const QModelIndex current = m_table->currentIndex();
    const RunId id = current.isValid() ? current.data(RunsModel::RunIdRole).toLongLong() : 0;
    if (id != m_selected)
        showRun(id);
    updateActions();
}

void MainWindow::showRun(RunId id)
{
    m_selected = id;
    followConsole(RunRecord{});
    m_liveBuffer.clear();
    m_liveQueue.clear();
    m_liveTimer->stop();
    m_lastStep.clear();
    m_metricsLoaded = false;
    const RunRow* row = m_model->rowData(id);
    if (!row) {
        m_consolePathShown.clear();
        m_console->clear(tr("Select a run to see its console."));
        m_charts->clear(tr("Select a run to see its metrics."));
        updateHeader();
        return;
    }
    m_consolePathShown = row->run.consolePath;
    m_console->setRun(id, row->run.consolePath, !isTerminal(row->run.state));
    followConsole(row->run);
    m_charts->clear(tr("Loading metrics…"));
    m_reader->requestMetrics(id, ++m_metricsTicket);
    updateHeader();
}

QList<RunRecord> MainWindow::attemptsOf(const RunRecord& run) const
{
    const auto group = membershipOf(run, RunGroupKind::Attempts);
    if (!group)
        return {};
    QList<std::pair<int, RunRecord>> found;
    for (int i = 0; i < m_model->rowCount(); ++i) {
        const RunRecord& r = m_model->rowAt(i).run;
        for (const RunGroupMembership& m : r.groups)
            if (m.group == group->group)
                found.append({m.position, r});
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    QList<RunRecord> out;
    for (const auto& [position, r] : std::as_const(found))
        out.append(r);
    return out;
}

void MainWindow::updateHeader()
{
    const RunRow* row = m_selected ? m_model->rowData(m_selected) : nullptr;
    if (!row) {
        m_header->setText(
                tr("<i>No run selected — drop a training script, a folder or a job spec here, or press Ctrl+N.</i>"));
        m_header->setToolTip({});
        m_notices->setVisible(false);
        m_attempts->setAttempts({}, 0, {});
        return;
    }
    m_attempts->setAttempts(attemptsOf(row->run), row->run.id, QDateTime::currentDateTimeUtc());
    if (row->notices.isEmpty()) {
        m_notices->setVisible(false);
    } else {
        const qsizetype count = row->notices.size();
        m_notices->setText(count == 1 ? tr("⚠ 1 notice") : tr("⚠ %1 notices").arg(count));
        QStringList items;
        for (const RunNotice& n : row->notices)
            items << QStringLiteral("<li>%1 &nbsp;%2</li>")
                             .arg(n.at.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")),
                                     n.text.toHtmlEscaped());
        m_notices->setToolTip(QStringLiteral("<p>%1</p><ul style='margin:0'>%2</ul><p><i>%3</i></p>")
                                      .arg(tr("Run #%1 has notices:").arg(row->run.id), items.join(QString()),
                                              tr("Click to show them in a window (text can be copied).")));
        m_notices->setVisible(true);
    }
    const RunRecord& r = row->run;
    const QString state = headerStateText(r);
    const QString command = r.argv.size() == 3 && r.argv.at(0) == u"/bin/sh" && r.argv.at(1) == u"-c"
            ? r.argv.at(2)
            : CommandLine::join(r.argv);
    m_header->setText(QStringLiteral("<b>%1</b> &nbsp;#%2 &nbsp;<span style='color:%3'>%4</span> &nbsp;on %5"
                                     " &nbsp;·&nbsp; <code>%6</code> &nbsp;in <code>%7</code>")
                              .arg(r.name.toHtmlEscaped())
                              .arg(r.id)
                              .arg(RunStateStyle::color(r.state).name(), state.toHtmlEscaped(),
                                      (r.node.isEmpty() ? tr("(not placed)") : r.node).toHtmlEscaped(),
                                      command.toHtmlEscaped(), r.workdir.toHtmlEscaped()));
    QString extra;
    if (!r.tags.isEmpty())
        extra += tr("\ntags: %1").arg(r.tags.join(QStringLiteral(", ")));
    for (const RunGroupMembership& m : r.groups)
        extra += u'\n' + membershipText(m);
    if (r.archived)
        extra += tr("\narchived");
    if (!r.notes.isEmpty())
        extra += tr("\nnotes: %1").arg(r.notes);
    m_header->setToolTip(
            tr("<p style='white-space:pre-wrap'>%1 #%2 %3 on %4\n%5\nin %6%7</p>")
                    .arg(r.name.toHtmlEscaped())
                    .arg(r.id)
                    .arg(state.toHtmlEscaped(), (r.node.isEmpty() ? tr("(not placed)") : r.node).toHtmlEscaped(),
                            command.toHtmlEscaped(), r.workdir.toHtmlEscaped(), extra.toHtmlEscaped()));
}

void MainWindow::showNotices()
{
    const RunRow* row = m_selected ? m_model->rowData(m_selected) : nullptr;
    if (!row || row->notices.isEmpty())
        return;
    QStringList lines;
    for (const RunNotice& n : row->notices)
        lines << QStringLiteral("%1  %2").arg(
                n.at.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")), n.text);
    // Non-blocking, like showError(): no nested event loop.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Notices of %1 #%2").arg(row->run.name).arg(row->run.id),
            lines.join(QStringLiteral("\n\n")), QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("noticesBox"));
    box->setTextFormat(Qt::PlainText);
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::openArtifacts(RunId run)
{
    const RunRow* row = m_model->rowData(run);
    const QString name = row ? row->run.name : QString();
    auto* dialog = new ArtifactsDialog(
            m_engine, run, name, runDataDir(m_store->location(), run) + QStringLiteral("/artifacts"), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
}

SettingsDialog* MainWindow::openSettingsDialog()
{
    if (!m_settingsDialog) {
        m_settingsDialog = new SettingsDialog(m_store->location(), !m_store->isReadOnly(), this);
        m_settingsDialog->setAttribute(Qt::WA_DeleteOnClose);
        // A policy chosen there shows in the Queue view at once.
        connect(m_settingsDialog, &SettingsDialog::applied, this, [this] { m_queueView->reloadPolicy(true); });
    }
    m_settingsDialog->show();
    m_settingsDialog->raise();
    m_settingsDialog->activateWindow();
    return m_settingsDialog;
}

void MainWindow::updateStoreNotice()
{
    const QString file = QFileInfo(m_store->location()).fileName();
    if (const QString damage = m_store->damage(); !damage.isEmpty()) {
        m_storeNotice->setText(tr("Damaged: %1").arg(file));
        m_storeNotice->setToolTip(damage);
    } else if (m_store->isReadOnly()) {
        m_storeNotice->setText(tr("Read-only: %1").arg(file));
        m_storeNotice->setToolTip(tr("%1 is open read-only: %2. Its runs are shown as last recorded in it; nothing "
                                     "can be submitted, cancelled, renamed or deleted here.")
                                          .arg(m_store->location(), m_store->readOnlyReason()));
    } else {
        m_storeNotice->clear();
        m_storeNotice->setToolTip(QString());
    }
    m_storeNotice->setVisible(!m_storeNotice->text().isEmpty());
    setWindowTitle(m_store->isReadOnly() ? tr("Trainyard — %1 (read-only)").arg(m_store->location())
                                         : QStringLiteral("Trainyard"));
}

void MainWindow::updateActions()
{
    const RunRow* row = m_selected ? m_model->rowData(m_selected) : nullptr;
    // A database that cannot be written (read-only, damaged) is only shown.
    const bool writable = !m_store->isReadOnly() && m_store->damage().isEmpty();
    m_submitAction->setEnabled(m_engine != nullptr && writable);
    bool anyUnfinished = false;
    for (RunId id : selectedRuns())
        if (const RunRow* r = m_model->rowData(id); r && !isTerminal(r->run.state))
            anyUnfinished = true;
    m_cancelAction->setEnabled(m_engine && anyUnfinished && writable);
    m_deleteAction->setEnabled(m_engine && row && isTerminal(row->run.state) && writable);
    m_compareAction->setEnabled(!selectedRuns().isEmpty());
    m_artifactsAction->setEnabled(row && m_engine);
    m_deleteAction->setToolTip(row && !isTerminal(row->run.state)
                    ? tr("Cancel the run first: only finished runs can be deleted")
                    : tr("Delete the selected finished run with its metrics and console copy"));
}

QList<RunId> MainWindow::selectedRuns() const
{
    return RunTableModel::runIds(m_table->selectionModel()->selectedRows());
}

void MainWindow::compareSelected()
{
    const QList<RunId> ids = selectedRuns();
    if (ids.isEmpty())
        return;
    m_compare->setRuns(ids);
    m_tabs->setCurrentWidget(m_compare);
}

void MainWindow::openAggregatedConsole(const QList<RunId>& runs)
{
    QList<RunRecord> records;
    for (const RunId id : runs) {
        if (const RunRow* row = m_model->rowData(id))
            records << row->run;
    }
    if (records.isEmpty())
        return;
    if (!m_aggregated) {
        m_aggregated = new AggregatedConsoleView;
        m_aggregated->setObjectName(QStringLiteral("aggregatedConsole"));
        m_tabs->addTab(m_aggregated, tr("Aggregated console"));
    }
    m_aggregated->setRuns(records);
    m_tabs->setCurrentWidget(m_aggregated);
}

void MainWindow::onRunStateChanged(const RunRecord& run)
{
    m_notifier->observe(run);
    compareRunChanged(run.id);
    if (m_aggregated)
        m_aggregated->updateRun(run);
    m_model->updateRun(run);
    m_queueView->updateRun(run);
    m_queueView->queueActions()->refresh();
    if (run.id == m_selected) {
        if (run.consolePath != m_consolePathShown) {
            // Started: the console copy exists now.
            m_consolePathShown = run.consolePath;
            m_console->setRun(run.id, run.consolePath, !isTerminal(run.state));
            followConsole(run);
        } else if (isTerminal(run.state)) {
            m_console->setLive(false);
            followConsole(RunRecord{});
        }
        updateHeader();
        updateActions();
    }
}

void MainWindow::followConsole(const RunRecord& run)
{
    // The live bytes of the run shown (the console view reads what its file
    // holds and drops what it has twice); none for a run that ended.
    const RunId wanted = run.id != 0 && !isTerminal(run.state) && !run.consolePath.isEmpty() ? run.id : 0;
    if (!m_engine || wanted == m_followedConsole)
        return;
    if (m_followedConsole != 0)
        m_engine->unfollowConsole(m_followedConsole);
    m_followedConsole = wanted;
    if (wanted != 0)
        m_engine->followConsole(wanted, QFileInfo(run.consolePath).size());
}

void MainWindow::onConsoleReceived(RunId run, qint64 offset, const QByteArray& bytes)
{
    m_console->appendBytes(run, offset, bytes);
}

void MainWindow::compareRunChanged(RunId run)
{
    if (m_compare->runs().contains(run) && !m_compareRefresh->isActive())
        m_compareRefresh->start();
}

void MainWindow::onMetricsReceived(RunId run, const QList<MetricPoint>& points)
{
    m_model->updateLatestMetrics(run, points);
    compareRunChanged(run);
    if (run != m_selected)
        return;
    if (!m_metricsLoaded) {
        m_liveBuffer += points;
        return;
    }
    appendLivePoints(points);
}

void MainWindow::appendLivePoints(const QList<MetricPoint>& points)
{
    for (const MetricPoint& p : points) {
        auto last = m_lastStep.constFind(p.key);
        if (last != m_lastStep.cend() && p.step <= *last)
            continue; // already drawn from the database
        m_lastStep.insert(p.key, p.step);
        m_liveQueue[p.key].append(SeriesPoint{double(p.step), p.value, double(p.wallTimeMs)});
    }
    if (!m_liveQueue.isEmpty() && !m_liveTimer->isActive())
        m_liveTimer->start();
}

void MainWindow::flushLivePoints()
{
    const QMap<QString, QList<SeriesPoint>> queue = std::exchange(m_liveQueue, {});
    for (auto it = queue.cbegin(); it != queue.cend(); ++it)
        m_charts->appendPoints(it.key(), it.value());
}

void MainWindow::onMetricsLoaded(RunId run, int ticket, const QMap<QString, QList<MetricPoint>>& series)
{
    if (ticket != m_metricsTicket || run != m_selected)
        return;
    m_charts->clear(tr("No metrics yet. Lines like 'loss=0.31', 'val_acc: 0.9' or JSON records become curves here."));
    if (const RunRow* row = m_model->rowData(run); row && row->run.startedAt.isValid())
        m_charts->setRunStart(row->run.startedAt.toMSecsSinceEpoch()); // the Metrics tab's relative time
    for (auto it = series.cbegin(); it != series.cend(); ++it) {
        m_charts->setSeries(it.key(), toSeries(it.value()));
        if (!it.value().isEmpty())
            m_lastStep.insert(it.key(), it.value().last().step);
    }
    m_metricsLoaded = true;
    appendLivePoints(std::exchange(m_liveBuffer, {}));
}

void MainWindow::onNodeStatus(const QString& node, bool ready, const QString& reason)
{
    m_nodeStatus.insert(node, ready ? tr("ready") : (reason.isEmpty() ? tr("not ready") : reason));
    QStringList parts;
    for (auto it = m_nodeStatus.cbegin(); it != m_nodeStatus.cend(); ++it)
        parts << QStringLiteral("%1: %2").arg(it.key(), it.value());
    parts.sort();
    m_nodeLabel->setText(parts.join(QStringLiteral(" · ")));
    m_nodeLabel->setStyleSheet(ready ? QString() : QStringLiteral("color: #c62828;"));
}

void MainWindow::cancelSelected()
{
    if (!m_engine)
        return;
    QList<RunId> runs;
    QStringList running;
    for (RunId id : selectedRuns()) {
        const RunRow* row = m_model->rowData(id);
        if (!row || isTerminal(row->run.state))
            continue;
        runs << id;
        if (row->run.state != RunState::Queued && row->run.state != RunState::Held)
            running << QStringLiteral("#%1 %2").arg(id).arg(row->run.name);
    }
    if (runs.isEmpty())
        return;
    if (running.isEmpty()) { // waiting runs lose nothing: no question
        cancelRuns(runs);
        return;
    }
    // Like Delete, a running run's work is at stake: ask, without a nested
    // event loop (open(), not exec()).
    const QString text = running.size() == 1
            ? tr("Cancel the running run %1?\nIts processes get SIGTERM, and SIGKILL after 10 s.").arg(running.front())
            : tr("Cancel %1 running runs?\n%2\nTheir processes get SIGTERM, and SIGKILL after 10 s.")
                      .arg(running.size())
                      .arg(running.join(u'\n'));
    auto* box = new QMessageBox(QMessageBox::Question, tr("Cancel run"), text, QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("cancelConfirmBox"));
    box->addButton(tr("Cancel run"), QMessageBox::DestructiveRole)
            ->setObjectName(QStringLiteral("confirmCancelButton"));
    box->setDefaultButton(box->addButton(tr("Keep running"), QMessageBox::RejectRole));
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [this, box, runs](QAbstractButton* button) {
        if (box->buttonRole(button) == QMessageBox::DestructiveRole)
            cancelRuns(runs);
    });
    box->open();
}

void MainWindow::cancelRuns(const QList<RunId>& runs)
{
    if (!m_engine)
        return;
    m_engine->cancel(runs);
    statusBar()->showMessage(
            runs.size() == 1 ? tr("Cancelling run #%1…").arg(runs.front()) : tr("Cancelling %1 runs…").arg(runs.size()),
            5000);
}

void MainWindow::deleteSelected()
{
    const RunRow* row = m_selected ? m_model->rowData(m_selected) : nullptr;
    if (!row || !isTerminal(row->run.state))
        return;
    const RunId id = row->run.id;
    const QString name = row->run.name;
    const auto answer = QMessageBox::question(this, tr("Delete run"),
            tr("Delete run #%1 '%2' with its params, metrics and local console copy?\nThis cannot be undone.")
                    .arg(id)
                    .arg(name),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes)
        return;
    if (!m_engine)
        return;
    // The engine deletes it (RunRemoval.h); the GUI thread never waits for the write.
    QPointer<MainWindow> self = this;
    m_engine->deleteRun(id, [self, id, name](const Result<void>& deleted) {
        if (!self)
            return;
        if (!deleted) {
            self->statusBar()->showMessage(
                    tr("Run #%1 '%2' was not deleted: %3").arg(id).arg(name, deleted.error().message), 10000);
            return;
        }
        self->m_model->removeRun(id);
        self->statusBar()->showMessage(tr("Deleted run #%1 '%2'").arg(id).arg(name), 5000);
    });
}

// ---- pipelines ----------------------------------------------------------------

void MainWindow::createPipelines()
{
    m_pipelinesView = new PipelinesView(m_store, m_engine);
    m_pipelinesView->setRunLookup([this](RunId id) -> const RunRecord* {
        const RunRow* row = m_model->rowData(id);
        return row ? &row->run : nullptr;
    });
    m_tabs->addTab(m_pipelinesView, tr("Pipelines"));
    connect(m_pipelinesView, &PipelinesView::runActivated, this, [this](RunId run) {
        selectRun(run);
        m_tabs->setCurrentWidget(m_console);
    });
    connect(m_pipelinesView, &PipelinesView::message, this,
            [this](const QString& text) { statusBar()->showMessage(text, 6000); });
}

// ---- queue and nodes --------------------------------------------------------

void MainWindow::createQueueAndNodes()
{
    m_queueView = new QueueView(m_engine, m_store->location());
    m_nodesView = new NodesView(m_store, m_engine);
    m_poolsView = new PoolsView(m_store, m_engine, m_store->location());

    // The queue actions work on the runs table's selection or the queue's,
    // whichever changed last; the runs table knows every run.
    QueueActions* actions = m_queueView->queueActions();
    actions->setLookup([this](RunId id) -> const RunRecord* {
        const RunRow* row = m_model->rowData(id);
        return row ? &row->run : nullptr;
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this, actions] { actions->setTargets(selectedRuns()); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { m_runActions->setSelection(selectedRuns()); });
    connect(m_queueView, &QueueView::selectionChanged, this,
            [this, actions] { actions->setTargets(m_queueView->selectedRuns()); });
    connect(actions, &QueueActions::finished, this,
            [this](const QString& op, const QList<RunId>& runs, const QStringList& errors) {
                if (errors.isEmpty())
                    statusBar()->showMessage(tr("%1: %n run(s)", nullptr, int(runs.size())).arg(op), 4000);
                scheduleReload();
            });

    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this, actions](const QPoint& pos) {
        actions->setTargets(selectedRuns());
        QMenu menu(this);
        for (QAction* a : actions->actions()) {
            if (a == actions->cancelAction())
                menu.addAction(m_cancelAction); // running runs too, and it asks first
            else if (a)
                menu.addAction(a);
            else
                menu.addSeparator();
        }
        menu.addSeparator();
        for (QAction* a : m_runActions->actions()) {
            if (a)
                menu.addAction(a);
            else
                menu.addSeparator();
        }
        menu.addSeparator();
        menu.addAction(m_compareAction);
        menu.addAction(m_artifactsAction);
        menu.addAction(m_deleteAction);
        menu.exec(m_table->viewport()->mapToGlobal(pos));
    });

    m_queueDock = new QDockWidget(tr("Queue"), this);
    m_queueDock->setObjectName(QStringLiteral("queueDock"));
    m_queueDock->setWidget(m_queueView);
    m_nodesDock = new QDockWidget(tr("Nodes"), this);
    m_nodesDock->setObjectName(QStringLiteral("nodesDock"));
    m_nodesDock->setWidget(m_nodesView);
    connect(m_nodesView, &NodesView::aggregatedConsoleRequested, this,
            [this](const QString&, const QList<RunId>& runs) { openAggregatedConsole(runs); });
    // Resource pools (issue #25): their GPUs, loans and quota use.
    m_poolsDock = new QDockWidget(tr("Pools"), this);
    m_poolsDock->setObjectName(QStringLiteral("poolsDock"));
    m_poolsDock->setWidget(m_poolsView);
    addDockWidget(Qt::RightDockWidgetArea, m_queueDock);
    addDockWidget(Qt::RightDockWidgetArea, m_nodesDock); // tabbed by restoreSettings' default layout
    addDockWidget(Qt::RightDockWidgetArea, m_poolsDock);

    // Menus: the queue operations under Run, the docks and Add node under View.
    const QList<QMenu*> menus = menuBar()->findChildren<QMenu*>(QString(), Qt::FindDirectChildrenOnly);
    for (QMenu* m : menus) {
        if (m->title() != tr("&Run"))
            continue;
        m->addSeparator();
        // The queue's Cancel is the queue view's own: the Run menu has Cancel run… already.
        for (QAction* a : actions->actions()) {
            if (a == actions->cancelAction())
                continue;
            if (a)
                m->addAction(a);
            else
                m->addSeparator();
        }
    }
    QMenu* view = menuBar()->addMenu(tr("&View"));
    m_queueDock->toggleViewAction()->setObjectName(QStringLiteral("showQueueAction"));
    m_nodesDock->toggleViewAction()->setObjectName(QStringLiteral("showNodesAction"));
    view->addAction(m_queueDock->toggleViewAction());
    view->addAction(m_nodesDock->toggleViewAction());
    m_poolsDock->toggleViewAction()->setObjectName(QStringLiteral("showPoolsAction"));
    view->addAction(m_poolsDock->toggleViewAction());
    m_resetLayoutAction = view->addAction(tr("&Reset layout"));
    m_resetLayoutAction->setObjectName(QStringLiteral("resetLayoutAction"));
    m_resetLayoutAction->setToolTip(
            tr("Queue, Nodes and Pools tabbed on the right, the runs table and its tabs at their default sizes"));
    connect(m_resetLayoutAction, &QAction::triggered, this, &MainWindow::resetLayout);
    view->addSeparator();
    view->addAction(m_runActions->showArchivedAction());
    view->addSeparator();
    view->addAction(m_nodesView->addNodeAction());

    // Tools: the settings that otherwise live in files.
    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    m_settingsAction = new QAction(tr("&Settings…"), this);
    m_settingsAction->setObjectName(QStringLiteral("settingsAction"));
    m_settingsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    m_settingsAction->setMenuRole(QAction::PreferencesRole);
    m_settingsAction->setToolTip(tr("Theme, notifications and this database's scheduling policy (Ctrl+,)"));
    connect(m_settingsAction, &QAction::triggered, this, [this] { openSettingsDialog(); });
    tools->addAction(m_settingsAction);

    // Help last, as on every desktop.
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    auto* shortcuts = new QAction(tr("&Keyboard shortcuts"), this);
    shortcuts->setObjectName(QStringLiteral("shortcutsAction"));
    shortcuts->setShortcut(QKeySequence::HelpContents);
    connect(shortcuts, &QAction::triggered, this, [this] { openShortcutsDialog(this); });
    help->addAction(shortcuts);
    auto* about = new QAction(tr("&About Trainyard"), this);
    about->setObjectName(QStringLiteral("aboutAction"));
    about->setMenuRole(QAction::AboutRole);
    connect(about, &QAction::triggered, this, [this] { openAboutBox(this); });
    help->addAction(about);
}

} // namespace ty
