#include "tests/ui/UiTestSupport.h"
#include "ui/charts/MetricChartWidget.h"
#include "ui/charts/MetricChartsPanel.h"
#include "ui/compare/CompareTableModel.h"
#include "ui/compare/CompareView.h"
#include "ui/console/ConsoleTextView.h"
#include "ui/console/ConsoleView.h"
#include "ui/dialogs/SubmitDialog.h"
#include "ui/mainwindow/MainWindow.h"
#include "ui/nodes/NodesView.h"
#include "ui/runs/RunsModel.h"
#include "core/runs/LocalRunControl.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"
#include "core/store/SqliteResultStore.h"

#include "tests/support/TestSupport.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QLabel>
#include <QStatusBar>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QProcess>
#include <QScopeGuard>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTreeView>
#include <QHeaderView>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <limits>

#include <unistd.h>

using namespace ty;

namespace {

// Delivers a real drag-enter + drop of `paths` onto `target`.
bool dropFiles(QWidget* target, const QStringList& paths)
{
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& p : paths)
        urls << QUrl::fromLocalFile(p);
    mime.setUrls(urls);
    const QPoint pos = target->rect().center();
    QDragEnterEvent enter(pos, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    if (!enter.isAccepted())
        return false;
    QDropEvent drop(QPointF(pos), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    return drop.isAccepted();
}

SubmitDialog* openDialog(QWidget& window)
{
    SubmitDialog* found = nullptr;
    for (SubmitDialog* d : window.findChildren<SubmitDialog*>(QStringLiteral("submitDialog")))
        if (d->isVisible())
            found = d;
    return found;
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QTemporaryDir m_settingsDir; // the windows' QSettings, never the user's
    std::unique_ptr<ResultStore> m_store;

    // Runs like a sweep of the digits example: params, four metrics over 15 epochs.
    QList<RunId> addSweep(ResultStore& store, int count)
    {
        QList<RunId> ids;
        for (int i = 0; i < count; ++i) {
            const QString lr = QString::number(0.0001 * (i + 1), 'g', 3);
            RunRecord r;
            r.name = QStringLiteral("digits-sweep[lr=%1]").arg(lr);
            r.state = RunState::Succeeded;
            r.node = QStringLiteral("local");
            r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
            r.workdir = m_dir.path();
            r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-600 + i);
            r.finishedAt = r.startedAt.addSecs(120);
            r.exitCode = 0;
            const auto id = store.createRun(r,
                    {{QStringLiteral("lr"), lr}, {QStringLiteral("batch_size"), QStringLiteral("32")},
                            {QStringLiteral("epochs"), QStringLiteral("15")}});
            if (!id)
                return {};
            QList<MetricPoint> points;
            for (int e = 0; e < 15; ++e) {
                const qint64 wall = r.startedAt.toMSecsSinceEpoch() + e * 1000;
                const double loss = 2.3 / (1.0 + e * (0.2 + 0.01 * i));
                points << MetricPoint{*id, QStringLiteral("loss"), e, std::nullopt, wall, loss}
                       << MetricPoint{*id, QStringLiteral("train_loss"), e, std::nullopt, wall, loss * 1.01}
                       << MetricPoint{*id, QStringLiteral("val_loss"), e, std::nullopt, wall, loss * 1.1}
                       << MetricPoint{*id, QStringLiteral("val_accuracy"), e, std::nullopt, wall,
                                  0.9 - 0.5 / (1.0 + e + i * 0.1)};
            }
            store.appendMetrics(points);
            ids << *id;
        }
        return store.flush() ? ids : QList<RunId>{};
    }

    static QDockWidget* queueDock(MainWindow& w) { return w.findChild<QDockWidget*>(QStringLiteral("queueDock")); }
    static QDockWidget* nodesDock(MainWindow& w) { return w.findChild<QDockWidget*>(QStringLiteral("nodesDock")); }
    static QAction* resetLayoutAction(MainWindow& w)
    {
        return w.findChild<QAction*>(QStringLiteral("resetLayoutAction"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        QVERIFY(m_settingsDir.isValid());
        test::keepSettingsIn(m_settingsDir.path());
        QVERIFY(QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard"))
                        .fileName()
                        .startsWith(m_settingsDir.path()));
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
    }

    void cleanupTestCase() { m_store.reset(); }

    void fitsALaptopScreen()
    {
        // 1366x768 is still a common laptop screen: the window, its docks
        // and tool rows must be able to shrink to it (what the widgets ask
        // for at least, frame and panel aside), with every dock an engine brings.
        RunEngine engine(m_store.get(), m_store->location());
        engine.addLocalNode(test::agentPath(), m_dir.filePath(QStringLiteral("fits-state")));
        // A run whose command line alone is wider than any screen.
        RunRecord r;
        r.name = QStringLiteral("long-command");
        r.state = RunState::Failed;
        r.failureReason = QStringLiteral("RuntimeError: ") + QString(300, u'x');
        r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
        for (int i = 0; i < 60; ++i)
            r.argv << QStringLiteral("--option-%1=value-%1").arg(i);
        r.workdir = m_dir.path();
        const auto id = m_store->createRun(r, {});
        QVERIFY(id);
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        window.selectRun(*id);
        QTest::qWait(300); // docks and tabs laid out with their contents
        const auto least = [&] { return window.minimumSizeHint().expandedTo(window.minimumSize()); };
        QVERIFY2(least().width() <= 1280 && least().height() <= 700,
                qPrintable(QStringLiteral("%1x%2; central %3x%4")
                                   .arg(least().width())
                                   .arg(least().height())
                                   .arg(window.centralWidget()->minimumSizeHint().width())
                                   .arg(window.centralWidget()->minimumSizeHint().height())));
        window.resize(1280, 700);
        QTRY_VERIFY(window.width() <= 1280 && window.height() <= 700);
        // What the header cannot show is in its tooltip.
        const auto* header = window.findChild<QLabel*>(QStringLiteral("runHeader"));
        QVERIFY(header);
        QVERIFY(header->toolTip().contains(QStringLiteral("--option-59=value-59")));
    }

    void cancelOfARunOnAnUnreachableNodeSaysSo()
    {
        // Cancel pressed on a run whose node is not connected: nothing can be
        // sent, and the status bar says so instead of "Cancelling…" for ever.
        RunEngine engine(m_store.get(), m_store->location());
        const auto id = m_store->createRun(test::runningRecord(QStringLiteral("on-gone-node"), QStringLiteral("gone"),
                                                   QStringLiteral("ty-gone-7")),
                {});
        QVERIFY(id);
        QSignalSpy failed(&engine, &RunEngine::cancelFailed);
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        window.selectRun(*id);
        auto* cancel = window.findChild<QAction*>(QStringLiteral("cancelAction"));
        QVERIFY(cancel);
        QTRY_VERIFY(cancel->isEnabled());
        cancel->trigger();
        // A running run: asked first (TestRunActions checks the question itself).
        QMessageBox* confirm = nullptr;
        QTRY_VERIFY(
                (confirm = window.findChild<QMessageBox*>(QStringLiteral("cancelConfirmBox"))) && confirm->isVisible());
        confirm->findChild<QAbstractButton*>(QStringLiteral("confirmCancelButton"))->click();
        QTRY_COMPARE(failed.size(), 1);
        QCOMPARE(failed.front().at(0).value<RunId>(), *id);
        QTRY_VERIFY2(window.statusBar()->currentMessage().contains(
                             QStringLiteral("was not cancelled: node gone is not connected")),
                qPrintable(window.statusBar()->currentMessage()));
        QCOMPARE(m_store->run(*id)->state, RunState::Running); // nothing changed
    }

    void droppingScriptOpensPrefilledDialog()
    {
        const QString script = m_dir.filePath(QStringLiteral("train_mnist.py"));
        writeFile(script, "print('hi')\n");
        MainWindow window(m_store.get(), nullptr);
        QCOMPARE(window.objectName(), QStringLiteral("mainWindow"));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // Drop where the user would: on the runs table (it hands drops to the window).
        QWidget* table = window.findChild<QTableView*>(QStringLiteral("runsTable"))->viewport();
        QWidget* target = table->acceptDrops() ? table : &window;
        QVERIFY(dropFiles(target, {script}));
        QTRY_VERIFY(openDialog(window));
        SubmitDialog* d = openDialog(window);
        QCOMPARE(d->findChild<QLineEdit*>(QStringLiteral("nameEdit"))->text(), QStringLiteral("train_mnist"));
        QCOMPARE(d->findChild<QLineEdit*>(QStringLiteral("commandEdit"))->text(),
                QStringLiteral("python3 train_mnist.py"));
        QCOMPARE(d->findChild<QLineEdit*>(QStringLiteral("workdirEdit"))->text(), QFileInfo(script).absolutePath());
        QVERIFY(d->mode() == SubmitDialog::Mode::Form);
        QVERIFY(d->validate());
        d->reject();
        QTRY_VERIFY(!openDialog(window));
    }

    void submitFromDialogCreatesQueuedRun()
    {
        // A real engine without nodes: the run is recorded and stays queued.
        RunEngine engine(m_store.get(), m_store->location());
        const QString script = m_dir.filePath(QStringLiteral("sweep.py"));
        writeFile(script, "print('x')\n");
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QSignalSpy submitted(&window, &MainWindow::runSubmitted);
        QVERIFY(dropFiles(&window, {script}));
        QTRY_VERIFY(openDialog(window));
        SubmitDialog* d = openDialog(window);
        d->findChild<QLineEdit*>(QStringLiteral("nameEdit"))->setText(QStringLiteral("sweep lr=0.1"));
        d->findChild<QLineEdit*>(QStringLiteral("tagsEdit"))->setText(QStringLiteral("gui-test"));
        d->accept();
        QTRY_COMPARE(submitted.count(), 1);
        const RunId id = submitted.at(0).at(0).value<RunId>();
        QTRY_VERIFY(window.runsModel()->rowOf(id) >= 0);
        QTRY_COMPARE(window.selectedRun(), id); // the new run is selected
        const RunRow* row = window.runsModel()->rowData(id);
        QCOMPARE(row->run.name, QStringLiteral("sweep lr=0.1"));
        QCOMPARE(row->run.state, RunState::Queued);
        QCOMPARE(row->run.argv, (QStringList{QStringLiteral("python3"), QStringLiteral("sweep.py")}));
        QCOMPARE(row->run.tags, QStringList{QStringLiteral("gui-test")});
        auto stored = m_store->run(id);
        QVERIFY(stored);
        QCOMPARE(stored->workdir, QFileInfo(script).absolutePath());
        m_store->deleteRun(id);
        QVERIFY(m_store->flush());
    }

    void droppingTwoScriptsOpensOneDialogAfterTheOther()
    {
        const QString a = m_dir.filePath(QStringLiteral("a.sh"));
        const QString b = m_dir.filePath(QStringLiteral("b.py"));
        writeFile(a, "echo a\n");
        writeFile(b, "print('b')\n");
        MainWindow window(m_store.get(), nullptr);
        window.show();
        QVERIFY(dropFiles(&window, {a, b}));
        QTRY_VERIFY(openDialog(window));
        QCOMPARE(openDialog(window)->findChild<QLineEdit*>(QStringLiteral("commandEdit"))->text(),
                QStringLiteral("bash a.sh"));
        openDialog(window)->reject();
        QTRY_VERIFY(openDialog(window)
                && openDialog(window)->findChild<QLineEdit*>(QStringLiteral("nameEdit"))->text()
                        == QStringLiteral("b"));
        openDialog(window)->reject();
    }

    void droppingBadYamlShowsLineAndColumn()
    {
        const QString spec = m_dir.filePath(QStringLiteral("bad.yaml"));
        writeFile(spec, "name: bad\ncommand: [python3, train.py]\nresources:\n  gpus: many\n");
        MainWindow window(m_store.get(), nullptr);
        window.show();
        QVERIFY(dropFiles(&window, {spec}));
        QTRY_VERIFY(openDialog(window));
        SubmitDialog* d = openDialog(window);
        QVERIFY(d->mode() == SubmitDialog::Mode::Yaml);
        QCOMPARE(d->findChild<QPlainTextEdit*>(QStringLiteral("yamlEdit"))->toPlainText(),
                QStringLiteral("name: bad\ncommand: [python3, train.py]\nresources:\n  gpus: many\n"));
        auto* error = d->findChild<QLabel*>(QStringLiteral("errorLabel"));
        QVERIFY2(error->text().startsWith(QFileInfo(spec).absoluteFilePath() + QStringLiteral(":4:9:")),
                qPrintable(error->text()));
        QVERIFY(error->isVisible());
        d->reject();
    }

    void droppingUnknownFileGivesMessage()
    {
        const QString other = m_dir.filePath(QStringLiteral("notes.txt"));
        writeFile(other, "hello\n");
        MainWindow window(m_store.get(), nullptr);
        window.show();
        dropFiles(&window, {other, m_dir.filePath(QStringLiteral("missing.py"))});
        QTRY_VERIFY(window.findChild<QMessageBox*>(QStringLiteral("errorBox")));
        auto* box = window.findChild<QMessageBox*>(QStringLiteral("errorBox"));
        QVERIFY2(box->text().contains(QStringLiteral("notes.txt")), qPrintable(box->text()));
        QVERIFY(box->text().contains(QStringLiteral("missing.py")));
        QVERIFY(!openDialog(window));
        box->close();
    }

    void livePointsReachTheChartsOnceEach()
    {
        // A running run with two stored points; live batches (as the engine
        // sends them) reach its chart, paced, each point once: steps the
        // chart already has from the database are not added again.
        RunEngine engine(m_store.get(), m_store->location());
        RunRecord r = test::runningRecord(QStringLiteral("live-run"), QStringLiteral("local"));
        r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
        r.workdir = m_dir.path();
        r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-10);
        auto id = m_store->createRun(r, {});
        QVERIFY(id);
        m_store->appendMetrics({MetricPoint{*id, QStringLiteral("loss"), 0, std::nullopt, 1000, 1.0},
                MetricPoint{*id, QStringLiteral("loss"), 1, std::nullopt, 1001, 0.9}});
        QVERIFY(m_store->flush());
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        window.selectRun(*id);
        QTRY_COMPARE(window.charts()->keys(), QStringList{QStringLiteral("loss")});
        QTRY_COMPARE(window.charts()->chart(QStringLiteral("loss"))->segmentPointCounts(), QList<int>{2});
        for (int batch = 0; batch < 3; ++batch) {
            QList<MetricPoint> points;
            for (int k = 0; k < 4; ++k) // steps 1..4, 5..8, 9..12: step 1 is in the database already
                points.append(MetricPoint{*id, QStringLiteral("loss"), 1 + batch * 4 + k, std::nullopt, 2000, 0.5});
            points.append(MetricPoint{*id, QStringLiteral("acc"), batch, std::nullopt, 2000, 0.1 * batch});
            Q_EMIT engine.metricsReceived(*id, points);
        }
        QTRY_COMPARE(window.charts()->chart(QStringLiteral("loss"))->segmentPointCounts(), QList<int>{13});
        QTRY_COMPARE(window.charts()->keys(), (QStringList{QStringLiteral("acc"), QStringLiteral("loss")}));
        QCOMPARE(window.charts()->chart(QStringLiteral("acc"))->segmentPointCounts(), QList<int>{3});
        // Points of another run never reach this run's charts.
        Q_EMIT engine.metricsReceived(
                *id + 1000, {MetricPoint{*id + 1000, QStringLiteral("loss"), 99, std::nullopt, 3000, 0.1}});
        QTest::qWait(300);
        QCOMPARE(window.charts()->chart(QStringLiteral("loss"))->segmentPointCounts(), QList<int>{13});
        m_store->deleteRun(*id);
        QVERIFY(m_store->flush());
    }

    void firstStartShowsFourMetricsWithoutScrolling()
    {
        // The digits example's four metrics (loss, train_loss, val_loss,
        // val_accuracy) must be in view beside the run columns on a first
        // start at 1600x900, with the GPU columns beside them unscrolled too.
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).clear();
        RunRecord r;
        r.name = QStringLiteral("digits-mlp");
        r.state = RunState::Succeeded;
        r.node = QStringLiteral("local");
        r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
        r.workdir = m_dir.path();
        r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-9);
        r.finishedAt = QDateTime::currentDateTimeUtc();
        const auto id = m_store->createRun(r, {});
        QVERIFY(id);
        const QStringList keys{QStringLiteral("loss"), QStringLiteral("train_loss"), QStringLiteral("val_loss"),
                QStringLiteral("val_accuracy")};
        QList<MetricPoint> points;
        for (const QString& key : keys)
            points.append(MetricPoint{*id, key, 675, std::nullopt, 1000, 0.9667});
        m_store->appendMetrics(points);
        QVERIFY(m_store->flush());

        MainWindow window(m_store.get(), nullptr);
        window.resize(1600, 900); // before the first start's dock width is set
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const RunsModel* model = window.runsModel();
        QTRY_VERIFY(model->rowOf(*id) >= 0);
        QTRY_COMPARE(model->metricColumns().size(), keys.size());
        QTest::qWait(100); // the docks' first-start width
        auto* table = window.findChild<QTableView*>(QStringLiteral("runsTable"));
        QVERIFY(table);
        const int last = RunsModel::FirstMetricColumn + int(keys.size()) - 1;
        const int right = table->columnViewportPosition(last) + table->columnWidth(last);
        QVERIFY2(right <= table->viewport()->width(),
                qPrintable(QStringLiteral("last metric column ends at %1, table shows %2")
                                   .arg(right)
                                   .arg(table->viewport()->width())));
        QVERIFY(table->columnWidth(RunsModel::Name) >= 120);
        // The Nodes dock is tabbed with the Queue (issue 21): its tab shown,
        // the GPU columns are all in view.
        nodesDock(window)->raise();
        auto* nodes = window.findChild<QTreeView*>(QStringLiteral("nodesTree"));
        QVERIFY(nodes);
        QTRY_VERIFY(nodes->isVisible());
        QTRY_VERIFY2(nodes->header()->length() <= nodes->viewport()->width(),
                qPrintable(QStringLiteral("GPU columns need %1, shown %2")
                                   .arg(nodes->header()->length())
                                   .arg(nodes->viewport()->width())));
        QVERIFY2(nodes->columnWidth(NodesView::NameColumn) >= 80,
                qPrintable(QString::number(nodes->columnWidth(NodesView::NameColumn))));
        m_store->deleteRun(*id);
        QVERIFY(m_store->flush());
    }

    // Issue 21: the docks took 40 % of the width; the compare table showed
    // less than one run column, its right-aligned values scrolled out of
    // view, and five runs fitted in the runs table. At 1600x900 on a first
    // start: at least ten runs in view, the Metrics tab's four charts
    // unscrolled, and in the Compare tab two run columns whose values are
    // whole and inside the table's viewport.
    void defaultLayoutGivesTheRunsAndCompareTheWidth()
    {
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).clear();
        QTemporaryDir dir;
        auto store = ResultStore::open(dir.filePath(QStringLiteral("layout.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        const QList<RunId> ids = addSweep(**store, 12);
        QCOMPARE(ids.size(), 12);
        MainWindow window(store->get(), nullptr);
        window.resize(1600, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_COMPARE(window.runsModel()->rowCount(), 12);
        QTest::qWait(100); // the default dock width and heights, once laid out

        // The docks: tabbed on the right, at most a third of the width.
        QCOMPARE(window.dockWidgetArea(queueDock(window)), Qt::RightDockWidgetArea);
        QCOMPARE(window.dockWidgetArea(nodesDock(window)), Qt::RightDockWidgetArea);
        QVERIFY(window.tabifiedDockWidgets(queueDock(window)).contains(nodesDock(window)));
        QTRY_VERIFY2(window.centralWidget()->width() >= window.width() * 65 / 100,
                qPrintable(
                        QStringLiteral("central %1 of %2").arg(window.centralWidget()->width()).arg(window.width())));

        // Runs table: ten runs and more, whole.
        auto* table = window.findChild<QTableView*>(QStringLiteral("runsTable"));
        QVERIFY(table);
        const auto wholeRows = [&] {
            int n = 0;
            while (n < window.runsProxy()->rowCount()
                    && table->viewport()->rect().contains(
                            table->visualRect(window.runsProxy()->index(n, RunsModel::Name))))
                ++n;
            return n;
        };
        QTRY_VERIFY(wholeRows() >= 10);
        const int whole = wholeRows();
        QVERIFY2(whole >= 10,
                qPrintable(QStringLiteral("%1 runs in view, table %2 px high")
                                   .arg(whole)
                                   .arg(table->viewport()->height())));

        // Metrics tab: the four charts of the selected run, none scrolled away.
        window.selectRun(ids.front());
        QTRY_COMPARE(window.charts()->keys().size(), 4);
        auto* tabs = window.findChild<QTabWidget*>(QStringLiteral("runTabs"));
        QVERIFY(tabs);
        tabs->setCurrentWidget(window.charts());
        QTest::qWait(50);
        for (const QString& key : window.charts()->keys()) {
            MetricChartWidget* chart = window.charts()->chart(key);
            const QRect r(chart->mapTo(window.charts()->viewport(), QPoint(0, 0)), chart->size());
            QVERIFY2(window.charts()->viewport()->rect().contains(r),
                    qPrintable(QStringLiteral("%1 at %2,%3 %4x%5, panel shows %6x%7")
                                       .arg(key)
                                       .arg(r.x())
                                       .arg(r.y())
                                       .arg(r.width())
                                       .arg(r.height())
                                       .arg(window.charts()->viewport()->width())
                                       .arg(window.charts()->viewport()->height())));
        }
        test::saveScreenshot(window, QStringLiteral("default-layout-metrics"));

        // Compare three runs: two run columns side by side, every value whole and in view.
        table->selectionModel()->select(
                QItemSelection(window.runsProxy()->index(0, 0), window.runsProxy()->index(2, 0)),
                QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QSignalSpy loaded(window.compareView(), &CompareView::loaded);
        window.compareAction()->trigger();
        QTRY_COMPARE(loaded.count(), 1);
        QTest::qWait(50);
        auto* compare = window.compareView()->findChild<QTableView*>(QStringLiteral("compareTable"));
        QVERIFY(compare && compare->isVisible());
        const QAbstractItemModel* model = compare->model();
        QCOMPARE(model->columnCount(), 3);
        const QRect viewport = compare->viewport()->rect();
        const QFontMetrics fm(compare->font());
        const int margin = compare->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, compare) + 1;
        int values = 0;
        for (int c = 0; c < 2; ++c) {
            const QString runName = model->headerData(c, Qt::Horizontal).toString();
            for (int r = 0; r < model->rowCount(); ++r) {
                const auto kind = CompareTableModel::RowKind(
                        model->headerData(r, Qt::Vertical, CompareTableModel::RowKindRole).toInt());
                if (kind == CompareTableModel::RowKind::Name || kind == CompareTableModel::RowKind::State)
                    continue;
                const QModelIndex index = model->index(r, c);
                const QString text = index.data().toString();
                const QRect cell = compare->visualRect(index);
                const QString where = QStringLiteral("%1 / %2 '%3': cell %4..%5 x %6..%7, viewport %8x%9")
                                              .arg(runName, model->headerData(r, Qt::Vertical).toString(), text)
                                              .arg(cell.left())
                                              .arg(cell.right())
                                              .arg(cell.top())
                                              .arg(cell.bottom())
                                              .arg(viewport.width())
                                              .arg(viewport.height());
                if (!viewport.contains(cell.topLeft()) && cell.top() >= viewport.height())
                    break; // rows below the fold: reached by scrolling down, not sideways
                QVERIFY2(viewport.left() <= cell.left() && cell.right() <= viewport.right(), qPrintable(where));
                // The text, right-aligned in its cell, is whole: its extent lies inside the viewport.
                const int textWidth = fm.horizontalAdvance(text);
                QVERIFY2(textWidth + 2 * margin <= cell.width(), qPrintable(where));
                QVERIFY2(cell.right() - margin - textWidth >= viewport.left(), qPrintable(where));
                ++values;
            }
        }
        QVERIFY2(values >= 2 * 3, qPrintable(QString::number(values))); // the params at least, in both runs
        test::saveScreenshot(window, QStringLiteral("default-layout-compare"));
    }

    // The layout is remembered (a moved dock, a hidden one, the splitter)
    // in QSettings; View > Reset layout and a state of an older layout
    // version give the default one.
    void layoutIsRememberedAndResets()
    {
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).clear();
        const auto isDefault = [](MainWindow& w) {
            return w.dockWidgetArea(queueDock(w)) == Qt::RightDockWidgetArea
                    && w.dockWidgetArea(nodesDock(w)) == Qt::RightDockWidgetArea
                    && w.tabifiedDockWidgets(queueDock(w)).contains(nodesDock(w))
                    && queueDock(w)->toggleViewAction()->isChecked() && nodesDock(w)->toggleViewAction()->isChecked()
                    && !queueDock(w)->isFloating() && !nodesDock(w)->isFloating();
        };
        QList<int> sizes;
        {
            MainWindow window(m_store.get(), nullptr);
            window.resize(1600, 900);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QTest::qWait(100);
            QVERIFY(isDefault(window));
            // View: show/hide per dock, and Reset layout.
            QMenu* view = nullptr;
            for (QMenu* m : window.menuBar()->findChildren<QMenu*>(QString(), Qt::FindDirectChildrenOnly))
                if (m->title() == u"&View")
                    view = m;
            QVERIFY(view);
            QVERIFY(view->actions().contains(queueDock(window)->toggleViewAction()));
            QVERIFY(view->actions().contains(nodesDock(window)->toggleViewAction()));
            QVERIFY(resetLayoutAction(window) && view->actions().contains(resetLayoutAction(window)));

            // Nodes moved to the left, the queue hidden, the runs table made taller.
            window.addDockWidget(Qt::LeftDockWidgetArea, nodesDock(window));
            queueDock(window)->toggleViewAction()->trigger();
            auto* splitter = window.findChild<QSplitter*>(QStringLiteral("mainSplitter"));
            QVERIFY(splitter);
            const int h = splitter->height();
            splitter->setSizes({h * 3 / 4, h - h * 3 / 4});
            QTest::qWait(50);
            sizes = splitter->sizes();
            QVERIFY(window.close());
        }
        {
            MainWindow window(m_store.get(), nullptr);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QTest::qWait(100);
            QCOMPARE(window.size(), QSize(1600, 900));
            QCOMPARE(window.dockWidgetArea(nodesDock(window)), Qt::LeftDockWidgetArea);
            QVERIFY(!queueDock(window)->toggleViewAction()->isChecked());
            QVERIFY(queueDock(window)->isHidden());
            auto* splitter = window.findChild<QSplitter*>(QStringLiteral("mainSplitter"));
            QCOMPARE(splitter->sizes(), sizes);

            // Reset layout: the default again, with its sizes.
            resetLayoutAction(window)->trigger();
            QTRY_VERIFY(isDefault(window));
            QTRY_VERIFY(splitter->sizes().value(0) < sizes.value(0) * 2 / 3);
            QTRY_VERIFY(window.centralWidget()->width() >= window.width() * 65 / 100);

            // A state saved by an older layout version (as the docks side by
            // side were saved, version 0), with the nodes on the left.
            window.addDockWidget(Qt::LeftDockWidgetArea, nodesDock(window));
            QVERIFY(window.close()); // saves the current version's state; replaced by an older one here
            QSettings s(QStringLiteral("Trainyard"), QStringLiteral("trainyard"));
            s.setValue(QStringLiteral("mainWindow/state"), window.saveState(0));
        }
        MainWindow window(m_store.get(), nullptr);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(100);
        QVERIFY(isDefault(window));
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).clear();
    }

    // Issue 21: a sweep's runs looked alike in the runs table (names cut at
    // their differing end, no param columns).
    void sweepRunsAreToldApart()
    {
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).clear();
        QList<RunId> ids;
        for (const QString& lr : {QStringLiteral("0.001"), QStringLiteral("0.0003")}) {
            RunRecord r;
            r.name = QStringLiteral("digits-sweep[lr=%1]").arg(lr);
            r.state = RunState::Succeeded;
            r.node = QStringLiteral("local");
            r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
            r.workdir = m_dir.path();
            const auto id = m_store->createRun(
                    r, {{QStringLiteral("lr"), lr}, {QStringLiteral("epochs"), QStringLiteral("5")}});
            QVERIFY(id);
            ids << *id;
        }
        QVERIFY(m_store->flush());
        MainWindow window(m_store.get(), nullptr);
        window.resize(1600, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const RunsModel* model = window.runsModel();
        QTRY_VERIFY(model->rowOf(ids[0]) >= 0 && model->rowOf(ids[1]) >= 0);
        QTRY_VERIFY(model->paramColumns().contains(QStringLiteral("lr")));
        auto* table = window.findChild<QTableView*>(QStringLiteral("runsTable"));
        QVERIFY(table);

        // The names as the table draws them in a Name column narrower than
        // they are (about 15 of their 22 characters).
        const QFontMetrics fm(table->font());
        const int width = fm.horizontalAdvance(QStringLiteral("digits-sweep[l"));
        const auto shown = [&](RunId id) {
            return fm.elidedText(
                    model->index(model->rowOf(id), RunsModel::Name).data().toString(), table->textElideMode(), width);
        };
        QVERIFY2(shown(ids[0]) != shown(ids[1]), qPrintable(shown(ids[0]) + QStringLiteral(" / ") + shown(ids[1])));

        // lr (swept) is a column by default, epochs (the same) is not.
        const int lrCol = model->firstParamColumn() + int(model->paramColumns().indexOf(QStringLiteral("lr")));
        const int epochsCol = model->firstParamColumn() + int(model->paramColumns().indexOf(QStringLiteral("epochs")));
        QCOMPARE(model->headerData(lrCol, Qt::Horizontal).toString(), QStringLiteral("lr"));
        QVERIFY(!table->isColumnHidden(lrCol));
        QVERIFY(table->isColumnHidden(epochsCol));
        QCOMPARE(model->index(model->rowOf(ids[1]), lrCol).data().toString(), QStringLiteral("0.0003"));
        QCOMPARE(model->index(model->rowOf(ids[0]), lrCol).data().toString(), QStringLiteral("0.001"));
        // The header's context menu is the chooser.
        QCOMPARE(table->horizontalHeader()->contextMenuPolicy(), Qt::CustomContextMenu);

        for (RunId id : ids)
            m_store->deleteRun(id);
        QVERIFY(m_store->flush());
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).clear();
    }

    void showsStoredRunsWithMetricsAndConsole()
    {
        const QString console = m_dir.filePath(QStringLiteral("console.log"));
        writeFile(console, "\x1b[33mepoch 1\x1b[0m loss=0.5\r\nepoch 2 loss=0.25\n");
        RunRecord r;
        r.name = QStringLiteral("stored-run");
        r.state = RunState::Succeeded;
        r.node = QStringLiteral("local");
        r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
        r.workdir = m_dir.path();
        r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-90);
        r.finishedAt = QDateTime::currentDateTimeUtc();
        r.exitCode = 0;
        r.consolePath = console;
        auto id = m_store->createRun(r, {{QStringLiteral("lr"), QStringLiteral("0.1")}});
        QVERIFY(id);
        QList<MetricPoint> points;
        const double values[] = {1.0, 0.5, std::numeric_limits<double>::quiet_NaN(), 0.25, 0.2};
        for (int i = 0; i < 5; ++i)
            points.append(MetricPoint{*id, QStringLiteral("loss"), i, std::nullopt, 1000 + i, values[i]});
        points.append(MetricPoint{*id, QStringLiteral("val_accuracy"), 4, std::nullopt, 2000, 0.93});
        m_store->appendMetrics(points);
        QVERIFY(m_store->flush());

        MainWindow window(m_store.get(), nullptr);
        QAbstractItemModelTester tester(window.runsProxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        window.selectRun(*id);
        QTRY_COMPARE(window.selectedRun(), *id);
        const RunsModel* model = window.runsModel();
        QCOMPARE(model->metricColumns(), (QStringList{QStringLiteral("loss"), QStringLiteral("val_accuracy")}));
        QCOMPARE(model->index(model->rowOf(*id), RunsModel::FirstMetricColumn + 1).data().toString(),
                QStringLiteral("0.93"));
        // Metrics tab: one chart per key, the nan cut the loss line in two.
        QTRY_COMPARE(window.charts()->keys(), (QStringList{QStringLiteral("loss"), QStringLiteral("val_accuracy")}));
        QCOMPARE(window.charts()->chart(QStringLiteral("loss"))->segmentPointCounts(), (QList<int>{2, 2}));
        QCOMPARE(window.charts()->chart(QStringLiteral("loss"))->gapMarkerCount(), 1);
        // Console tab: the local copy, rendered.
        QTRY_COMPARE(
                window.console()->textView()->toPlainText(), QStringLiteral("epoch 1 loss=0.5\nepoch 2 loss=0.25"));

        // A run written by someone else shows up without restarting.
        RunRecord q;
        q.name = QStringLiteral("queued-later");
        q.argv = {QStringLiteral("true")};
        q.workdir = m_dir.path();
        auto id2 = m_store->createRun(q, {});
        QVERIFY(id2);
        QTRY_VERIFY_WITH_TIMEOUT(window.runsModel()->rowOf(*id2) >= 0, 5000);
        QCOMPARE(window.selectedRun(), *id); // selection kept
        m_store->deleteRun(*id2);
        QVERIFY(m_store->flush());
        QTRY_VERIFY_WITH_TIMEOUT(window.runsModel()->rowOf(*id2) < 0, 5000);
    }

    void headerMarksTheSelectedRunsNotices()
    {
        // What the engine only logged before (a synced link leading nowhere)
        // is a notice of the run: the header above the console marks it,
        // lists it in its tooltip and, on a click, in a message box.
        RunRecord r;
        r.name = QStringLiteral("digits-mlp");
        r.state = RunState::Succeeded;
        r.node = QStringLiteral("ws1");
        r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
        r.workdir = m_dir.path();
        r.exitCode = 0;
        const auto noisy = m_store->createRun(r, {});
        r.name = QStringLiteral("quiet-run");
        const auto quiet = m_store->createRun(r, {});
        QVERIFY(noisy && quiet);

        MainWindow window(m_store.get(), nullptr);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.runsModel()->rowOf(*noisy) >= 0 && window.runsModel()->rowOf(*quiet) >= 0);
        window.selectRun(*noisy);
        QTRY_COMPARE(window.selectedRun(), *noisy);
        auto* marker = window.findChild<QToolButton*>(QStringLiteral("runNotices"));
        QVERIFY(marker);
        QVERIFY(!marker->isVisible()); // none yet

        // Recorded by the engine (another thread, or another process) after the window opened.
        const QString text = QStringLiteral("sync of /home/u/digits to node ws1 made 1 symlink(s) that lead nowhere "
                                            "there: data -> ../shared_data <b>");
        m_store->addNotice(RunNotice{*noisy, {}, text});
        QVERIFY(m_store->flush());
        QTRY_VERIFY_WITH_TIMEOUT(marker->isVisible(), 5000);
        QCOMPARE(marker->text(), QStringLiteral("⚠ 1 notice"));
        QVERIFY2(marker->toolTip().contains(text.toHtmlEscaped()), qPrintable(marker->toolTip()));
        const auto* header = window.findChild<QLabel*>(QStringLiteral("runHeader"));
        QVERIFY(header);
        QVERIFY(header->text().contains(QStringLiteral("digits-mlp"))); // still the header of that run
        // On the header's line, right of it.
        QCOMPARE(marker->parentWidget(), header->parentWidget());
        QVERIFY(qAbs(marker->geometry().center().y() - header->geometry().center().y()) < header->height());

        m_store->addNotice(RunNotice{*noisy, {}, QStringLiteral("its artifacts could not be listed after it ended")});
        QVERIFY(m_store->flush());
        QTRY_COMPARE_WITH_TIMEOUT(marker->text(), QStringLiteral("⚠ 2 notices"), 5000);

        QTest::mouseClick(marker, Qt::LeftButton);
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = window.findChild<QMessageBox*>(QStringLiteral("noticesBox"))) && box->isVisible());
        QVERIFY2(box->text().contains(text), qPrintable(box->text())); // plain text, not markup
        QVERIFY(box->text().contains(QStringLiteral("its artifacts could not be listed after it ended")));
        box->close();

        // Another run: its own (no) notices.
        window.selectRun(*quiet);
        QTRY_COMPARE(window.selectedRun(), *quiet);
        QTRY_VERIFY(!marker->isVisible());
        window.selectRun(*noisy);
        QTRY_VERIFY(marker->isVisible());
    }

    void readOnlyDatabaseIsShownReadOnly()
    {
        // A colleague's results on a read-only share (a read-only mount
        // refuses root too): the runs are shown, the window says it is
        // read-only, and what would write is disabled.
        if (::geteuid() != 0)
            QSKIP("needs root to mount a tmpfs");
        const QString share = m_dir.filePath(QStringLiteral("share"));
        QVERIFY(QDir().mkpath(share));
        if (QProcess::execute(QStringLiteral("mount"),
                    {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"), QStringLiteral("size=16m"),
                            QStringLiteral("tmpfs"), share})
                != 0)
            QSKIP("cannot mount a tmpfs");
        const auto unmount = qScopeGuard([&share] {
            if (QProcess::execute(QStringLiteral("umount"), {share}) != 0)
                QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), share});
        });
        const QString db = share + QStringLiteral("/trainyard.db");
        RunId id = 0;
        {
            auto writer = ResultStore::open(db);
            QVERIFY(writer);
            RunRecord r;
            r.name = QStringLiteral("colleague-run");
            r.state = RunState::Succeeded;
            auto created = (*writer)->createRun(r, {});
            QVERIFY(created);
            id = *created;
        }
        QCOMPARE(
                QProcess::execute(QStringLiteral("mount"), {QStringLiteral("-o"), QStringLiteral("remount,ro"), share}),
                0);

        auto store = ResultStore::open(db, StoreAccess::ReadOnlyIfNeeded);
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        RunEngine engine(store->get(), db);
        LocalRunControl control(&engine, store->get());
        MainWindow window(store->get(), &control);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.runsModel()->rowOf(id) >= 0);
        window.selectRun(id);
        const auto* notice = window.findChild<QLabel*>(QStringLiteral("storeNotice"));
        QVERIFY(notice);
        QVERIFY(notice->isVisible());
        QCOMPARE(notice->text(), QStringLiteral("Read-only: trainyard.db"));
        QVERIFY2(notice->toolTip().contains(db) && notice->toolTip().contains(QStringLiteral("Read-only file system")),
                qPrintable(notice->toolTip()));
        QVERIFY2(window.windowTitle().contains(QStringLiteral("(read-only)")), qPrintable(window.windowTitle()));
        QVERIFY(!window.findChild<QAction*>(QStringLiteral("submitAction"))->isEnabled());
        QVERIFY(!window.findChild<QAction*>(QStringLiteral("deleteAction"))->isEnabled());
        QCOMPARE(QDir(share).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                QStringList{QStringLiteral("trainyard.db")});
    }

    void damagedDatabaseIsExplainedOnce()
    {
        // Pages under the metric rows go bad while the window is open: one
        // message (with the recovery command), the notice, writes disabled.
        const QString db = m_dir.filePath(QStringLiteral("damaged/trainyard.db"));
        RunId id = 0;
        {
            SqliteStoreOptions rows;
            rows.packBlocks = false;
            auto writer = SqliteResultStore::open(db, rows);
            QVERIFY(writer);
            RunRecord r;
            r.name = QStringLiteral("spoilt");
            r.state = RunState::Succeeded;
            auto created = (*writer)->createRun(r, {});
            QVERIFY(created);
            id = *created;
            QList<MetricPoint> points;
            for (int i = 0; i < 40000; ++i)
                points << MetricPoint{id, QStringLiteral("loss"), i, std::nullopt, 1'700'000'000'000 + i, i * 0.25};
            (*writer)->appendMetrics(points);
            QVERIFY((*writer)->flush());
        }
        {
            QFile f(db);
            const qint64 size = f.size();
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.seek(size / 2));
            f.write(QByteArray(int(size / 4), '\xFF'));
        }
        auto store = ResultStore::open(db);
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        RunEngine engine(store->get(), db); // with an engine, delete would be offered on a sound database
        LocalRunControl control(&engine, store->get());
        MainWindow window(store->get(), &control);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.runsModel()->rowOf(id) >= 0);
        const auto* notice = window.findChild<QLabel*>(QStringLiteral("storeNotice"));
        QVERIFY(notice);
        QVERIFY(!notice->isVisible());
        window.selectRun(id); // reads its metrics
        QTRY_VERIFY_WITH_TIMEOUT(
                !window.findChildren<QMessageBox*>(QStringLiteral("storeDamagedBox")).isEmpty(), 10000);
        window.selectRun(0);
        window.selectRun(id); // read again: no second message
        QTest::qWait(500);
        const auto boxes = window.findChildren<QMessageBox*>(QStringLiteral("storeDamagedBox"));
        QCOMPARE(boxes.size(), 1);
        QVERIFY2(boxes.front()->text().startsWith(
                         db + QStringLiteral(" is damaged (SQLite: database disk image is malformed)")),
                qPrintable(boxes.front()->text()));
        QVERIFY(boxes.front()->text().contains(QStringLiteral("\".recover\"")));
        QCOMPARE(notice->text(), QStringLiteral("Damaged: trainyard.db"));
        QVERIFY(notice->isVisible());
        QVERIFY(!window.findChild<QAction*>(QStringLiteral("deleteAction"))->isEnabled());
        boxes.front()->close();
    }
};

QTEST_MAIN(TestMainWindow)
#include "TestMainWindow.moc"
