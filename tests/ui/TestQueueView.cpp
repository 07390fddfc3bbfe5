// The queue view: QueueModel's order and updates under QAbstractItemModelTester,
// then the whole path with a real store, a real RunEngine on its own thread
// and the local agent: a run that needs more CPUs than are free waits behind
// another; the view's actions hold, release and move it to the top; the
// policy selector writes scheduler.json and the engine follows.
#include "ui/mainwindow/MainWindow.h"
#include "ui/queue/QueueActions.h"
#include "ui/queue/QueueModel.h"
#include "ui/queue/QueueView.h"
#include "core/runs/QueuePolicy.h"
#include "core/runs/RunEngine.h"
#include "ui/runs/RunsModel.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QScopeGuard>
#include <QThread>

using namespace ty;

namespace {

RunRow row(RunId id, RunState state, int priority, qint64 createdSecs, const QString& reason = {})
{
    RunRow r;
    r.run.id = id;
    r.run.name = QStringLiteral("run-%1").arg(id);
    r.run.state = state;
    r.run.priority = priority;
    r.run.createdAt = QDateTime::fromSecsSinceEpoch(1700000000 + createdSecs, Qt::UTC);
    r.run.pendingReason = reason;
    return r;
}

QList<RunId> order(const QueueModel& m)
{
    QList<RunId> ids;
    for (int i = 0; i < m.rowCount(); ++i)
        ids << m.runIdAt(i);
    return ids;
}

} // namespace

class TestQueueView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void modelOrderAndUpdates()
    {
        QueueModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.ordering(), sched::Ordering::Priority);
        model.setRuns({row(1, RunState::Running, 9, 0),
                row(2, RunState::Queued, 0, 10, QStringLiteral("waiting: needs 2 CPUs")), row(3, RunState::Held, 5, 20),
                row(4, RunState::Queued, 5, 5), row(5, RunState::Succeeded, 0, 1)});
        // Running and finished runs are not in the queue; priority first, then submit time.
        QCOMPARE(order(model), (QList<RunId>{4, 3, 2}));
        QCOMPARE(model.headerData(0, Qt::Vertical).toInt(), 1); // position
        QCOMPARE(model.headerData(2, Qt::Vertical).toInt(), 3);
        QCOMPARE(model.index(2, QueueModel::Id).data().toLongLong(), 2);
        QCOMPARE(model.index(2, QueueModel::Reason).data().toString(), QStringLiteral("waiting: needs 2 CPUs"));
        QCOMPARE(model.index(1, QueueModel::Reason).data().toString(), QStringLiteral("held by user"));
        QCOMPARE(model.index(1, QueueModel::State).data().toString(), QStringLiteral("held"));
        QCOMPARE(model.index(0, QueueModel::Priority).data().toInt(), 5);

        // A persistent index follows its run through a reorder.
        const QPersistentModelIndex two = model.index(2, QueueModel::Name);
        RunRecord moved = *model.run(2);
        moved.priority = 100;
        model.updateRun(moved);
        QCOMPARE(order(model), (QList<RunId>{2, 4, 3}));
        QVERIFY(two.isValid());
        QCOMPARE(two.row(), 0);
        QCOMPARE(two.data().toString(), QStringLiteral("run-2"));
        QCOMPARE(model.index(0, QueueModel::Priority).data().toInt(), 100);

        // FCFS: submission order whatever the priority.
        model.setOrdering(sched::Ordering::Fcfs);
        QCOMPARE(order(model), (QList<RunId>{4, 2, 3}));
        QCOMPARE(two.row(), 1);

        // A run that starts leaves; a new one arrives; a held one is released.
        RunRecord started = *model.run(4);
        started.state = RunState::Running;
        model.updateRun(started);
        model.updateRun(row(6, RunState::Queued, 0, 1).run);
        QCOMPARE(order(model), (QList<RunId>{6, 2, 3}));
        model.setRuns({row(2, RunState::Queued, 100, 10), row(3, RunState::Queued, 5, 20)});
        QCOMPARE(order(model), (QList<RunId>{2, 3}));
        QCOMPARE(model.run(3)->state, RunState::Queued);
        QCOMPARE(model.rowOf(6), -1);
        model.setRuns({});
        QCOMPARE(model.rowCount(), 0);
    }

    void viewActionsOnRealEngine()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString dbPath = dir.filePath(QStringLiteral("results.db"));
        auto opened = ResultStore::open(dbPath);
        QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
        std::unique_ptr<ResultStore> store = std::move(*opened);

        const test::EngineThread thread(store.get(), dbPath);
        RunEngine* engine = thread.engine();
        const auto onEngine = [&thread](const std::function<void()>& fn) { thread.run(fn); };
        bool owner = false;
        const QString agentState = dir.filePath(QStringLiteral("agent-state"));
        {
            MainWindow window(store.get(), thread.control());
            onEngine([&] {
                owner = engine->acquireIngestion();
                engine->addLocalNode(test::agentPath(), agentState);
            });
            QVERIFY(owner);
            window.show();
            QueueView* queue = window.queueView();
            QVERIFY(queue);
            QueueActions* actions = queue->queueActions();

            // A holds every CPU of this machine; B and C need as many and wait.
            const int cpus = QThread::idealThreadCount();
            auto specNamed = [&](const QString& name) {
                const QString yaml = QStringLiteral("name: %1\ncommand: [sleep, '60']\nresources: {cpus: %2}\n")
                                             .arg(name)
                                             .arg(cpus);
                auto s = parseJobSpec(yaml, QStringLiteral("%1.yaml").arg(name), dir.path());
                if (!s)
                    qFatal("%s", qPrintable(s.error().message));
                return *s;
            };
            QSignalSpy submitted(&window, &MainWindow::runSubmitted);
            window.submit(specNamed(QStringLiteral("first")));
            QTRY_COMPARE(submitted.count(), 1);
            const RunId a = submitted.at(0).at(0).value<RunId>();
            QTRY_VERIFY2_WITH_TIMEOUT(store->run(a)->state == RunState::Running,
                    qPrintable(runStateName(store->run(a)->state) + u' ' + store->run(a)->failureReason), 15000);
            QTRY_VERIFY_WITH_TIMEOUT(
                    window.runsModel()->rowData(a) && window.runsModel()->rowData(a)->run.state == RunState::Running,
                    15000);
            window.submit(specNamed(QStringLiteral("second")));
            QTRY_COMPARE(submitted.count(), 2);
            const RunId b = submitted.at(1).at(0).value<RunId>();
            window.submit(specNamed(QStringLiteral("third")));
            QTRY_COMPARE(submitted.count(), 3);
            const RunId c = submitted.at(2).at(0).value<RunId>();

            QueueModel* model = queue->model();
            QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 2, 10000);
            QCOMPARE(model->rowOf(a), -1); // running: not in the queue
            QCOMPARE(model->runIdAt(0), b);
            QCOMPARE(model->runIdAt(1), c);
            // The scheduler's reason, as stored with the run.
            QTRY_VERIFY_WITH_TIMEOUT(model->run(b)->pendingReason.startsWith(QStringLiteral("waiting")), 10000);
            QVERIFY2(model->index(0, QueueModel::Reason).data().toString().contains(QStringLiteral("CPU")),
                    qPrintable(model->index(0, QueueModel::Reason).data().toString()));

            // Hold B through the view's selection and its action.
            QSignalSpy finished(actions, &QueueActions::finished);
            queue->table()->selectRow(model->rowOf(b));
            QCOMPARE(actions->targets(), QList<RunId>{b});
            QVERIFY(actions->holdAction()->isEnabled());
            QVERIFY(!actions->releaseAction()->isEnabled());
            actions->holdAction()->trigger();
            QTRY_COMPARE(finished.count(), 1);
            QVERIFY(finished.at(0).at(2).toStringList().isEmpty());
            QTRY_COMPARE(model->run(b)->state, RunState::Held);
            QCOMPARE(store->run(b)->state, RunState::Held);
            QCOMPARE(model->index(model->rowOf(b), QueueModel::Reason).data().toString(),
                    QStringLiteral("held by user"));
            QTRY_VERIFY(actions->releaseAction()->isEnabled());
            QVERIFY(!actions->holdAction()->isEnabled());

            // Release it.
            actions->releaseAction()->trigger();
            QTRY_COMPARE(finished.count(), 2);
            QTRY_COMPARE(model->run(b)->state, RunState::Queued);
            QCOMPARE(store->run(b)->state, RunState::Queued);

            // Move C to the top: its priority rises above B's and it leads the queue.
            const int bPriority = store->run(b)->priority;
            queue->table()->selectRow(model->rowOf(c));
            QCOMPARE(actions->targets(), QList<RunId>{c});
            actions->moveToTopAction()->trigger();
            QTRY_COMPARE(finished.count(), 3);
            QTRY_VERIFY(store->run(c)->priority > bPriority);
            QTRY_COMPARE(model->runIdAt(0), c);
            QCOMPARE(model->index(0, QueueModel::Priority).data().toInt(), store->run(c)->priority);

            // An operation the engine refuses comes back as an error (and a message box).
            actions->hold({a});
            QTRY_COMPARE(finished.count(), 4);
            const QStringList errors = finished.at(3).at(2).toStringList();
            QCOMPARE(errors.size(), 1);
            QVERIFY2(errors.front().contains(QStringLiteral("not waiting")), qPrintable(errors.front()));
            QTRY_VERIFY(queue->findChild<QMessageBox*>(QStringLiteral("queueErrorBox")));
            delete queue->findChild<QMessageBox*>(QStringLiteral("queueErrorBox"));

            // The policy selector writes scheduler.json; the engine follows it.
            QComboBox* combo = queue->policyCombo();
            QCOMPARE(combo->currentText(), QStringLiteral("backfill")); // the default
            const int fcfs = combo->findText(QStringLiteral("fcfs"));
            QVERIFY(fcfs >= 0);
            combo->setCurrentIndex(fcfs);
            Q_EMIT combo->activated(fcfs);
            QFile file(queuePolicyPath(dbPath));
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
            QCOMPARE(json.value(QStringLiteral("ordering")).toString(), QStringLiteral("fcfs"));
            QCOMPARE(model->ordering(), sched::Ordering::Fcfs);
            QCOMPARE(model->runIdAt(0), b); // FCFS: submission order again
            auto engineOrdering = [&] {
                sched::Ordering o{};
                bool backfill = true;
                onEngine([&] {
                    o = engine->policy().ordering;
                    backfill = engine->policy().backfill;
                });
                return std::pair{o, backfill};
            };
            QTRY_VERIFY_WITH_TIMEOUT(engineOrdering() == std::pair(sched::Ordering::Fcfs, false), 10000);

            // Saving keeps the file's other settings (shares, aging).
            sched::Policy custom = *loadQueuePolicy(dbPath);
            custom.shares.insert(QStringLiteral("alice"), 3.0);
            custom.agingPerHour = 4.5;
            QVERIFY(saveQueuePolicy(dbPath, custom));
            QVERIFY(queue->choosePolicy(QStringLiteral("fair-share")));
            const sched::Policy saved = *loadQueuePolicy(dbPath);
            QCOMPARE(saved.ordering, sched::Ordering::FairShare);
            QCOMPARE(saved.shares.value(QStringLiteral("alice")), 3.0);
            QCOMPARE(saved.agingPerHour, 4.5);
            QCOMPARE(combo->currentText(), QStringLiteral("fair-share"));
            QTRY_VERIFY_WITH_TIMEOUT(engineOrdering().first == sched::Ordering::FairShare, 10000);
            QVERIFY(!queue->choosePolicy(QStringLiteral("lottery")));

            // Preemption (issue #25): off by default; the box turns it on in the file, the engine follows.
            QCheckBox* preemption = queue->preemptionCheck();
            QVERIFY(!preemption->isChecked());
            preemption->click();
            QVERIFY(loadQueuePolicy(dbPath)->preemption);
            QCOMPARE(loadQueuePolicy(dbPath)->ordering, sched::Ordering::FairShare); // the rest kept
            QTRY_VERIFY_WITH_TIMEOUT(
                    [&] {
                        bool on = false;
                        onEngine([&] { on = engine->policy().preemption; });
                        return on;
                    }(),
                    10000);

            // Another queue's policy, leaving the default's alone.
            queue->queueCombo()->setEditText(QStringLiteral("short"));
            QCOMPARE(queue->selectedQueue(), QStringLiteral("short"));
            QVERIFY(preemption->isChecked()); // a queue without its own entry follows the default's
            QVERIFY(queue->choosePolicy(QStringLiteral("sjf")));
            const QueuePolicies both = *loadQueuePolicies(dbPath);
            QCOMPARE(both.forQueue(QStringLiteral("short")).ordering, sched::Ordering::ShortestJobFirst);
            QCOMPARE(both.defaults.ordering, sched::Ordering::FairShare);
            QCOMPARE(combo->currentText(), QStringLiteral("sjf"));
            queue->queueCombo()->setCurrentIndex(0);
            QCOMPARE(queue->selectedQueue(), QString());
            QCOMPARE(combo->currentText(), QStringLiteral("fair-share"));
            QVERIFY(preemption->isChecked());

            // Cancel everything through the actions; A's process is stopped.
            actions->cancel({a, b, c});
            QTRY_COMPARE(finished.count(), 5);
            QTRY_VERIFY_WITH_TIMEOUT(isTerminal(store->run(a)->state), 20000);
            QTRY_COMPARE(model->rowCount(), 0);
            QCOMPARE(store->run(b)->state, RunState::Cancelled);
        }
    }
};

QTEST_MAIN(TestQueueView)
#include "TestQueueView.moc"
