// What a user does to runs besides running them, in the real main window over
// a real result database: rename, tags and notes, archive, re-run; cancel
// asks first for a running run; one Cancel in the Run menu; the header says
// a cancelled run's end once; a sweep's submit names its runs; Help lists
// the shortcuts.
#include "ui/dialogs/HelpDialogs.h"
#include "ui/dialogs/RunEditDialog.h"
#include "ui/dialogs/SubmitDialog.h"
#include "ui/mainwindow/MainWindow.h"
#include "ui/mainwindow/RunActions.h"
#include "ui/queue/QueueActions.h"
#include "ui/queue/QueueView.h"
#include "core/runs/LocalRunControl.h"
#include "core/runs/RunEngine.h"
#include "ui/runs/AttemptsStrip.h"
#include "ui/runs/RunsModel.h"
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"
#include "tests/ui/UiTestSupport.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

namespace {

template <typename T> T* visible(QWidget& window, const QString& name)
{
    for (T* w : window.findChildren<T*>(name))
        if (w->isVisible())
            return w;
    return nullptr;
}

RunRecord finished(const QString& name, RunState state)
{
    RunRecord r;
    r.name = name;
    r.state = state;
    r.node = QStringLiteral("local");
    r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
    r.workdir = QDir::tempPath();
    r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-60);
    r.finishedAt = QDateTime::currentDateTimeUtc();
    return r;
}

QMenu* menuNamed(QMainWindow& window, const QString& title)
{
    for (QMenu* m : window.menuBar()->findChildren<QMenu*>(QString(), Qt::FindDirectChildrenOnly))
        if (m->title() == title)
            return m;
    return nullptr;
}

} // namespace

class TestRunActions : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ResultStore> m_store;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
    }

    void cleanupTestCase() { m_store.reset(); }

    // Issue #25: a retried run's attempts, under its header, each a link to
    // its run; the one shown is bold, the queued one says when it may start.
    void attemptsOfARetriedRunAreListedUnderItsHeader()
    {
        const auto group = m_store->createGroup(RunGroupRecord{0, RunGroupKind::Attempts, QStringLiteral("flaky"), {}});
        QVERIFY(group);
        QList<RunId> ids;
        for (int attempt = 1; attempt <= 3; ++attempt) {
            RunRecord r = finished(QStringLiteral("flaky"), attempt == 3 ? RunState::Queued : RunState::Failed);
            if (attempt == 3) {
                r.node.clear();
                r.startedAt = {};
                r.finishedAt = {};
                r.notBefore = QDateTime::currentDateTimeUtc().addSecs(600);
            } else {
                r.failureKind = attempt == 1 ? FailureKind::Signal : FailureKind::ExitCode;
                r.exitCode = attempt == 1 ? std::nullopt : std::optional<int>(3);
                r.startedAt = r.finishedAt.addSecs(-72);
            }
            r.groups = {RunGroupMembership{*group, RunGroupKind::Attempts, attempt, {}}};
            const auto id = m_store->createRun(r, {});
            QVERIFY(id);
            ids.append(*id);
        }
        RunRecord alone = finished(QStringLiteral("alone"), RunState::Failed);
        const auto single = m_store->createRun(alone, {});
        QVERIFY(single);
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.resize(1400, 800);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(ids[2]) >= 0);
        window.selectRun(ids[1]);
        auto* strip = window.findChild<AttemptsStrip*>(QStringLiteral("runAttempts"));
        QVERIFY(strip);
        QTRY_VERIFY(strip->isVisible());
        const QString notBefore
                = QDateTime::currentDateTimeUtc().addSecs(600).toLocalTime().toString(QStringLiteral("HH:mm"));
        QVERIFY2(strip->plainText().startsWith(
                         QStringLiteral("Attempt 2 of 3:  1 failed (signal) on local, 1m 12s  ·  "
                                        "2 failed (exit code) on local, 1m 12s  ·  3 queued, not before ")),
                qPrintable(strip->plainText()));
        QVERIFY2(strip->plainText().contains(notBefore), qPrintable(strip->plainText()));
        QVERIFY(strip->text().contains(QStringLiteral("<b>2</b>")));
        QVERIFY(strip->text().contains(QStringLiteral("<a href='%1'>1</a>").arg(ids[0])));
        test::saveScreenshot(window, QStringLiteral("attempts-strip"));
        // A click on attempt 1 shows that run.
        Q_EMIT strip->linkActivated(QString::number(ids[0]));
        QTRY_VERIFY(strip->plainText().startsWith(QStringLiteral("Attempt 1 of 3:")));
        // A run without attempts shows none.
        window.selectRun(*single);
        QTRY_VERIFY(!strip->isVisible());
    }

    void renameTagsAndNotesReachTheDatabase()
    {
        RunRecord r = finished(QStringLiteral("digits-sweep[lr=0.001]"), RunState::Succeeded);
        r.tags = {QStringLiteral("digits")};
        const auto id = m_store->createRun(r, {});
        QVERIFY(id);
        // Edits are written by the engine (RunControl::annotate).
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        window.selectRun(*id);
        RunActions* actions = window.runActions();
        QTRY_VERIFY(actions->renameAction()->isEnabled());
        QCOMPARE(actions->renameAction()->shortcut(), QKeySequence(Qt::Key_F2));
        actions->renameAction()->trigger();
        RunEditDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = visible<RunEditDialog>(window, QStringLiteral("runEditDialog"))));
        auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("runNameEdit"));
        QCOMPARE(name->text(), r.name);
        name->setText(QStringLiteral("digits best lr"));
        dialog->findChild<QLineEdit*>(QStringLiteral("runTagsEdit"))->setText(QStringLiteral("digits, best baseline"));
        dialog->findChild<QPlainTextEdit*>(QStringLiteral("runNotesEdit"))
                ->setPlainText(QStringLiteral("lr 1e-3 wins"));
        // An empty name cannot be saved.
        auto* save = dialog->findChild<QDialogButtonBox*>(QStringLiteral("runEditButtons"))
                             ->button(QDialogButtonBox::Save);
        name->setText(QStringLiteral("   "));
        QVERIFY(!save->isEnabled());
        name->setText(QStringLiteral("digits best lr"));
        QVERIFY(save->isEnabled());
        save->click();
        QTRY_COMPARE(m_store->run(*id)->name, QStringLiteral("digits best lr"));
        const RunRecord stored = *m_store->run(*id);
        QCOMPARE(stored.tags,
                (QStringList{QStringLiteral("digits"), QStringLiteral("best"), QStringLiteral("baseline")}));
        QCOMPARE(stored.notes, QStringLiteral("lr 1e-3 wins"));
        // The table and the header follow.
        QTRY_COMPARE(window.runsModel()->rowData(*id)->run.name, QStringLiteral("digits best lr"));
        auto* header = window.findChild<QLabel*>(QStringLiteral("runHeader"));
        QTRY_VERIFY2(header->toolTip().contains(QStringLiteral("notes: lr 1e-3 wins")), qPrintable(header->toolTip()));
        QVERIFY(header->toolTip().contains(QStringLiteral("tags: digits, best, baseline")));
        QTRY_VERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("Renamed run #%1").arg(*id)));
    }

    void archivedRunsLeaveTheTableUntilShown()
    {
        const auto keep = m_store->createRun(finished(QStringLiteral("keep-me"), RunState::Succeeded), {});
        const auto old = m_store->createRun(finished(QStringLiteral("old-junk"), RunState::Failed), {});
        RunRecord live = finished(QStringLiteral("still-running"), RunState::Running);
        live.finishedAt = {};
        const auto running = m_store->createRun(live, {});
        QVERIFY(keep && old && running);
        // Edits are written by the engine (RunControl::annotate).
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*old) >= 0);
        const auto shown = [&](RunId id) {
            const int source = window.runsModel()->rowOf(id);
            return source >= 0 && window.runsProxy()->mapFromSource(window.runsModel()->index(source, 0)).isValid();
        };
        QVERIFY(shown(*old));
        RunActions* actions = window.runActions();
        // A running run cannot be archived (and the tooltip says why).
        window.selectRun(*running);
        QTRY_VERIFY(!actions->archiveAction()->isEnabled());
        QVERIFY(actions->archiveAction()->toolTip().contains(QStringLiteral("Only finished runs")));
        window.selectRun(*old);
        QTRY_VERIFY(actions->archiveAction()->isEnabled());
        actions->archiveAction()->trigger();
        QTRY_VERIFY(m_store->run(*old)->archived);
        QTRY_VERIFY(!shown(*old));
        QVERIFY(shown(*keep));
        QVERIFY(!m_store->run(*keep)->archived);
        // View > Show archived runs brings it back; Unarchive puts it back for good.
        actions->showArchivedAction()->setChecked(true);
        QTRY_VERIFY(shown(*old));
        window.selectRun(*old);
        QTRY_VERIFY(actions->unarchiveAction()->isEnabled());
        actions->unarchiveAction()->trigger();
        QTRY_VERIFY(!m_store->run(*old)->archived);
        actions->showArchivedAction()->setChecked(false);
        QTRY_VERIFY(shown(*old));
    }

    void rerunOpensTheSubmitDialogWithTheRunsParams()
    {
        QTemporaryDir dir;
        const QString specPath = dir.filePath(QStringLiteral("sweep.yaml"));
        RunRecord r = finished(QStringLiteral("digits-sweep[lr=0.01]"), RunState::Succeeded);
        r.specPath = specPath;
        r.specYaml = QStringLiteral("name: digits-sweep\ncommand: [python3, train.py, --lr, '{{lr}}']\nworkdir: .\n"
                                    "sweep: {lr: [0.001, 0.01]}\n");
        const auto sweep
                = m_store->createGroup(RunGroupRecord{0, RunGroupKind::Sweep, QStringLiteral("digits-sweep"), {}});
        QVERIFY(sweep);
        r.groups = {RunGroupMembership{*sweep, RunGroupKind::Sweep, 1, QStringLiteral("lr=0.01")}};
        const auto id = m_store->createRun(r, {{QStringLiteral("lr"), QStringLiteral("0.01")}});
        QVERIFY(id);
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        QSignalSpy submitted(&window, &MainWindow::runSubmitted);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        window.selectRun(*id);
        QTRY_VERIFY(window.runActions()->rerunAction()->isEnabled());
        window.runActions()->rerunAction()->trigger();
        SubmitDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = visible<SubmitDialog>(window, QStringLiteral("submitDialog"))));
        QVERIFY(dialog->mode() == SubmitDialog::Mode::Yaml);
        const auto spec = dialog->validate();
        QVERIFY2(spec, qPrintable(dialog->errorText()));
        QCOMPARE(spec->argv,
                (QStringList{QStringLiteral("python3"), QStringLiteral("train.py"), QStringLiteral("--lr"),
                        QStringLiteral("0.01")}));
        QVERIFY(spec->sweep.isEmpty());
        QCOMPARE(spec->name, r.name);
        QCOMPARE(spec->workdir, QDir(r.workdir).absolutePath()); // where it ran
        dialog->accept();
        QTRY_COMPARE(submitted.size(), 1);
        const RunId again = submitted.front().front().value<RunId>();
        QVERIFY(again != *id);
        QCOMPARE(m_store->params(again).value(QStringLiteral("lr")), QStringLiteral("0.01"));
        QCOMPARE(m_store->run(again)->name, r.name);
        QTRY_VERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("as run #%1").arg(again)),
                qPrintable(window.statusBar()->currentMessage()));
    }

    void cancelAsksFirstForARunningRunOnly()
    {
        RunEngine engine(m_store.get(), m_store->location());
        const auto running = m_store->createRun(test::runningRecord(QStringLiteral("long-training"),
                                                        QStringLiteral("gone"), QStringLiteral("ty-gone-9")),
                {});
        RunRecord waiting;
        waiting.name = QStringLiteral("waiting-one");
        waiting.state = RunState::Queued;
        waiting.specYaml = QStringLiteral("name: waiting-one\ncommand: [true]\n");
        waiting.argv = {QStringLiteral("true")};
        waiting.workdir = QDir::tempPath();
        const auto queued = m_store->createRun(waiting, {});
        QVERIFY(running && queued);
        QSignalSpy failed(&engine, &RunEngine::cancelFailed);
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*running) >= 0 && window.runsModel()->rowOf(*queued) >= 0);
        auto* cancel = window.findChild<QAction*>(QStringLiteral("cancelAction"));
        QCOMPARE(cancel->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_K));

        window.selectRun(*running);
        QTRY_VERIFY(cancel->isEnabled());
        cancel->trigger();
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = visible<QMessageBox>(window, QStringLiteral("cancelConfirmBox"))));
        QVERIFY2(box->text().contains(QStringLiteral("#%1 long-training").arg(*running)), qPrintable(box->text()));
        // "Keep running" is the default and sends nothing.
        box->defaultButton()->click();
        QTest::qWait(200);
        QCOMPARE(failed.size(), 0);
        QCOMPARE(m_store->run(*running)->state, RunState::Running);
        cancel->trigger();
        QTRY_VERIFY((box = visible<QMessageBox>(window, QStringLiteral("cancelConfirmBox"))));
        box->findChild<QAbstractButton*>(QStringLiteral("confirmCancelButton"))->click();
        QTRY_COMPARE(failed.size(), 1); // the engine was asked (its node is gone)

        // A waiting run loses nothing: cancelled at once, no question.
        window.selectRun(*queued);
        QTRY_VERIFY(cancel->isEnabled());
        cancel->trigger();
        QTRY_COMPARE(m_store->run(*queued)->state, RunState::Cancelled);
        QVERIFY(!visible<QMessageBox>(window, QStringLiteral("cancelConfirmBox")));
    }

    void oneCancelInTheRunMenuAndTheQueuesOnlyForWaitingRuns()
    {
        RunEngine engine(m_store.get(), m_store->location());
        const auto running = m_store->createRun(test::runningRecord(QStringLiteral("menu-running"),
                                                        QStringLiteral("gone"), QStringLiteral("ty-gone-10")),
                {});
        QVERIFY(running);
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*running) >= 0);
        QMenu* run = menuNamed(window, QStringLiteral("&Run"));
        QVERIFY(run);
        QStringList cancels;
        for (QAction* a : run->actions())
            if (a->text().remove(u'&').startsWith(QStringLiteral("Cancel")))
                cancels << a->text();
        QCOMPARE(cancels, QStringList{QStringLiteral("&Cancel run…")});
        window.selectRun(*running);
        QTRY_VERIFY(window.findChild<QAction*>(QStringLiteral("cancelAction"))->isEnabled());
        // Nothing waiting is selected: the queue's Cancel is off.
        QVERIFY(!window.queueView()->queueActions()->cancelAction()->isEnabled());
    }

    void headerSaysACancelledRunsEndOnce()
    {
        RunRecord r = finished(QStringLiteral("stopped"), RunState::Cancelled);
        r.exitSignal = 15;
        r.failureReason = QStringLiteral("cancelled");
        const auto id = m_store->createRun(r, {});
        RunRecord q = finished(QStringLiteral("never-started"), RunState::Cancelled);
        q.failureReason = QStringLiteral("cancelled before it started");
        const auto early = m_store->createRun(q, {});
        QVERIFY(id && early);
        MainWindow window(m_store.get(), nullptr);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        window.selectRun(*id);
        auto* header = window.findChild<QLabel*>(QStringLiteral("runHeader"));
        QTRY_VERIFY2(header->text().contains(QStringLiteral(">cancelled (SIGTERM)<")), qPrintable(header->text()));
        QVERIFY(!header->text().contains(QStringLiteral("cancelled: cancelled")));
        QVERIFY(!header->text().contains(QStringLiteral("signal 15")));
        window.selectRun(*early);
        QTRY_VERIFY2(
                header->text().contains(QStringLiteral(">cancelled before it started<")), qPrintable(header->text()));
    }

    // Issue #22: the runs table and the header say what kind of failure
    // ended a run, and a queued run's header says why it waits.
    void tableAndHeaderSayTheFailureKind()
    {
        RunRecord r = finished(QStringLiteral("oom-run"), RunState::Failed);
        r.exitCode = 1;
        r.failureKind = FailureKind::CudaOutOfMemory;
        r.failureReason = QStringLiteral("CUDA out of memory (torch.OutOfMemoryError)");
        const auto id = m_store->createRun(r, {});
        RunRecord q;
        q.name = QStringLiteral("waiting-run");
        q.state = RunState::Queued;
        q.pendingReason = QStringLiteral("waiting: needs 2 GPUs; best node local has 1");
        const auto waiting = m_store->createRun(q, {});
        QVERIFY(id && waiting);
        MainWindow window(m_store.get(), nullptr);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        RunsModel* model = window.runsModel();
        QCOMPARE(model->index(model->rowOf(*id), RunsModel::State).data().toString(),
                QStringLiteral("failed (CUDA OOM)"));
        QVERIFY2(model->index(model->rowOf(*id), RunsModel::State)
                         .data(Qt::ToolTipRole)
                         .toString()
                         .contains(QStringLiteral("[cuda_oom]: CUDA out of memory (torch.OutOfMemoryError)")),
                qPrintable(model->index(model->rowOf(*id), RunsModel::State).data(Qt::ToolTipRole).toString()));
        window.selectRun(*id);
        auto* header = window.findChild<QLabel*>(QStringLiteral("runHeader"));
        QTRY_VERIFY2(header->text().contains(QStringLiteral(
                             ">failed (CUDA OOM, exit 1): CUDA out of memory (torch.OutOfMemoryError)<")),
                qPrintable(header->text()));
        window.selectRun(*waiting);
        QTRY_VERIFY2(header->text().contains(QStringLiteral(">queued: waiting: needs 2 GPUs; best node local has 1<")),
                qPrintable(header->text()));
    }

    void submittingASweepSaysHowManyRuns()
    {
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        QSignalSpy submitted(&window, &MainWindow::runSubmitted);
        window.show();
        auto spec = parseJobSpec(QStringLiteral("name: digits-sweep\ncommand: [true, '{{lr}}']\n"
                                                "sweep: {lr: [0.1, 0.01, 0.001]}\n"),
                QStringLiteral("sweep.yaml"), QDir::tempPath());
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        window.submit(*spec);
        QTRY_COMPARE(submitted.size(), 1);
        const RunId first = submitted.front().front().value<RunId>();
        QTRY_VERIFY2(window.statusBar()->currentMessage()
                        == QStringLiteral("Submitted digits-sweep: 3 runs, #%1 to #%2").arg(first).arg(first + 2),
                qPrintable(window.statusBar()->currentMessage()));
    }

    void helpListsTheShortcutsAndAbout()
    {
        QCoreApplication::setApplicationVersion(QStringLiteral("9.8.7"));
        MainWindow window(m_store.get(), nullptr);
        window.show();
        QMenu* help = menuNamed(window, QStringLiteral("&Help"));
        QVERIFY(help);
        QCOMPARE(window.menuBar()->actions().constLast(), help->menuAction()); // last, as on every desktop
        const QList<ShortcutEntry> entries = collectShortcuts(&window);
        const auto keysOf = [&](const QString& what) {
            for (const ShortcutEntry& e : entries)
                if (e.what == what)
                    return e.keys;
            return QString();
        };
        QCOMPARE(keysOf(QStringLiteral("Cancel run")),
                QKeySequence(Qt::CTRL | Qt::Key_K).toString(QKeySequence::NativeText));
        QCOMPARE(keysOf(QStringLiteral("Compare")),
                QKeySequence(Qt::CTRL | Qt::Key_D).toString(QKeySequence::NativeText));
        QCOMPARE(keysOf(QStringLiteral("Rename")), QStringLiteral("F2"));
        QCOMPARE(keysOf(QStringLiteral("Find in the console")),
                QKeySequence(QKeySequence::Find).toString(QKeySequence::NativeText));
        window.findChild<QAction*>(QStringLiteral("shortcutsAction"))->trigger();
        QTableWidget* table = nullptr;
        QTRY_VERIFY((table = window.findChild<QTableWidget*>(QStringLiteral("shortcutsTable"))) && table->isVisible());
        QCOMPARE(table->rowCount(), int(entries.size()));
        window.findChild<QAction*>(QStringLiteral("aboutAction"))->trigger();
        QMessageBox* about = nullptr;
        QTRY_VERIFY((about = visible<QMessageBox>(window, QStringLiteral("aboutBox"))));
        QVERIFY2(about->text().contains(QStringLiteral("Trainyard 9.8.7")), qPrintable(about->text()));
    }
};

QTEST_MAIN(TestRunActions)
#include "TestRunActions.moc"
