#include "ui/runs/RunsColumnChooser.h"
#include "ui/runs/RunsModel.h"
#include "ui/runs/StoreReader.h"
#include "core/store/ResultStore.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QHeaderView>
#include <QMenu>
#include <QSettings>
#include <QStandardPaths>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <memory>

using namespace ty;

namespace {

MetricPoint point(RunId run, const QString& key, qint64 step, double value)
{
    MetricPoint p;
    p.run = run;
    p.key = key;
    p.step = step;
    p.value = value;
    return p;
}

RunRow row(RunId id, const QString& name, RunState state, const QDateTime& started, qint64 durationS,
        std::initializer_list<std::pair<const char*, double>> metrics = {})
{
    RunRow r;
    r.run.id = id;
    r.run.name = name;
    r.run.state = state;
    r.run.node = QStringLiteral("local");
    r.run.startedAt = started;
    if (started.isValid() && isTerminal(state))
        r.run.finishedAt = started.addSecs(durationS);
    for (const auto& [k, v] : metrics)
        r.latest.insert(QString::fromLatin1(k), point(id, QString::fromLatin1(k), 10, v));
    return r;
}

QStringList columnOf(const QAbstractItemModel& m, int column, int role = Qt::DisplayRole)
{
    QStringList out;
    for (int r = 0; r < m.rowCount(); ++r)
        out << m.index(r, column).data(role).toString();
    return out;
}

} // namespace

class TestRunsModel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // Issue #22: the reader answers a change made through another store on
    // the same file (another process: the service) with that run's row only.
    void readerLoadsOnlyTheChangedRuns()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("results.db"));
        auto writer = ResultStore::open(path);
        QVERIFY2(writer.has_value(), writer ? "" : qPrintable(writer.error().message));
        QList<RunId> ids;
        for (int i = 0; i < 3; ++i)
            ids << *(*writer)->createRun(RunRecord{}, {});
        auto readStore = ResultStore::open(path, StoreAccess::ReadOnlyIfNeeded);
        QVERIFY(readStore.has_value());
        qRegisterMetaType<ty::RunRows>();
        qRegisterMetaType<QList<ty::RunId>>();
        StoreReader reader(readStore->get());
        QSignalSpy loaded(&reader, &StoreReader::runsLoaded);
        QSignalSpy updated(&reader, &StoreReader::runsUpdated);
        reader.requestRunUpdates(); // nothing loaded yet: a full load
        QVERIFY(loaded.wait(5000));
        QCOMPARE(loaded.at(0).at(0).value<RunRows>().size(), 3);

        (*writer)->appendMetrics({point(ids.at(1), QStringLiteral("loss"), 1, 0.5)});
        QVERIFY((*writer)->flush().has_value());
        reader.requestRunUpdates();
        QVERIFY(updated.wait(5000));
        const RunRows changed = updated.at(0).at(0).value<RunRows>();
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed.at(0).run.id, ids.at(1));
        QCOMPARE(changed.at(0).latest.value(QStringLiteral("loss")).value, 0.5);
        QVERIFY(updated.at(0).at(1).value<QList<RunId>>().isEmpty());

        (*writer)->deleteRun(ids.at(0));
        QVERIFY((*writer)->flush().has_value());
        reader.requestRunUpdates();
        QVERIFY(updated.wait(5000));
        QVERIFY(updated.at(1).at(0).value<RunRows>().isEmpty());
        QCOMPARE(updated.at(1).at(1).value<QList<RunId>>(), QList<RunId>{ids.at(0)});
        QCOMPARE(loaded.size(), 1); // never a full load again
    }

    // Issue #22: a change names its runs; only those rows move, in place,
    // and the column choices follow from per-key counts as a full load's do.
    void updatesTouchOnlyTheChangedRows()
    {
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2025-03-01T10:00:00.000Z"), Qt::ISODateWithMs);
        RunRows rows;
        for (RunId id = 5; id >= 1; --id) {
            RunRow r
                    = row(id, QStringLiteral("r%1").arg(id), RunState::Succeeded, t0, 10, {{"loss", 1.0 / double(id)}});
            r.run.createdAt = t0.addSecs(id);
            r.params.insert(QStringLiteral("lr"), QStringLiteral("0.%1").arg(id));
            rows.append(r);
        }
        RunsModel model;
        model.setRuns(rows);
        QCOMPARE(model.metricColumns(), QStringList{QStringLiteral("loss")});
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removedSpy(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy params(&model, &RunsModel::paramsChanged);
        QList<RunId> changedRuns; // the run of each dataChanged, when it was emitted
        connect(&model, &QAbstractItemModel::dataChanged, this,
                [&](const QModelIndex& topLeft) { changedRuns.append(model.runIdAt(topLeft.row())); });

        // Run 3 got a new metric key and a new value; run 2 was deleted; run 6 is new.
        RunRow three = rows.at(2);
        QCOMPARE(three.run.id, RunId(3));
        three.latest.insert(QStringLiteral("val_acc"), point(3, QStringLiteral("val_acc"), 11, 0.9));
        three.latest[QStringLiteral("loss")] = point(3, QStringLiteral("loss"), 11, 0.125);
        RunRow six = row(6, QStringLiteral("r6"), RunState::Running, t0, 0);
        six.run.createdAt = t0.addSecs(6);
        six.params.insert(QStringLiteral("lr"), QStringLiteral("0.6"));
        six.params.insert(QStringLiteral("seed"), QStringLiteral("1"));
        model.applyUpdates({three, six}, {2});

        QCOMPARE(reset.size(), 0);
        QCOMPARE(removedSpy.size(), 1);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(inserted.at(0).at(1).toInt(), 0); // newest first: at the top
        QCOMPARE(columnOf(model, RunsModel::Name), (QStringList{"r6", "r5", "r4", "r3", "r1"}));
        // dataChanged named run 3's row only.
        QCOMPARE(changedRuns, QList<RunId>{3});
        QCOMPARE(model.metricColumns(), (QStringList{QStringLiteral("loss"), QStringLiteral("val_acc")}));
        QCOMPARE(model.paramColumns(), (QStringList{QStringLiteral("lr"), QStringLiteral("seed")}));
        QVERIFY(params.size() >= 1);
        QCOMPARE(model.rowData(3)->latest.value(QStringLiteral("loss")).value, 0.125);
        QVERIFY(!model.rowData(2));

        // An older run arriving late goes where its creation puts it.
        RunRow late = row(0, QStringLiteral("r0"), RunState::Succeeded, t0, 1);
        late.run.id = 7;
        late.run.createdAt = t0.addMSecs(2500); // between r3 (t0+3s) and r1 (t0+1s)
        model.applyUpdates({late}, {});
        QCOMPARE(columnOf(model, RunsModel::Name), (QStringList{"r6", "r5", "r4", "r3", "r0", "r1"}));

        // The same as a full load of the same rows gives.
        RunsModel full;
        full.setRuns(model.rows());
        QCOMPARE(full.metricColumns(), model.metricColumns());
        QCOMPARE(full.paramColumns(), model.paramColumns());

        // The keys go with the last rows that held them.
        params.clear();
        model.applyUpdates({}, {6, 3});
        QCOMPARE(model.metricColumns(), QStringList{QStringLiteral("loss")});
        QCOMPARE(model.paramColumns(), QStringList{QStringLiteral("lr")});
        QCOMPARE(params.size(), 1);
        // A change that alters nothing shown (a console offset) signals nothing.
        changedRuns.clear();
        RunRow five = *model.rowData(5);
        five.run.consoleOffset += 100;
        model.applyUpdates({five}, {});
        QCOMPARE(changedRuns, QList<RunId>{});
        QCOMPARE(model.rowData(5)->run.consoleOffset, five.run.consoleOffset);
    }

    // Issue 21: a sweep's runs differ in their params and at the end of
    // their names; both must show.
    void sweepParamsAreColumns()
    {
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).remove(QStringLiteral("testRuns"));
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2025-03-01T10:00:00.000Z"), Qt::ISODateWithMs);
        RunRow a = row(1, QStringLiteral("digits-sweep[lr=0.001]"), RunState::Succeeded, t0, 60, {{"loss", 0.5}});
        RunRow b = row(
                2, QStringLiteral("digits-sweep[lr=0.0003]"), RunState::Succeeded, t0.addSecs(5), 60, {{"loss", 0.25}});
        RunRow c = row(
                3, QStringLiteral("digits-sweep[lr=0.01]"), RunState::Succeeded, t0.addSecs(9), 60, {{"loss", 0.75}});
        a.params = {{QStringLiteral("lr"), QStringLiteral("0.001")}, {QStringLiteral("epochs"), QStringLiteral("5")}};
        b.params = {{QStringLiteral("lr"), QStringLiteral("0.0003")}, {QStringLiteral("epochs"), QStringLiteral("5")}};
        c.params = {{QStringLiteral("lr"), QStringLiteral("0.01")}, {QStringLiteral("epochs"), QStringLiteral("5")}};

        RunsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(RunsModel::SortRole);
        QTableView view;
        view.setModel(&proxy);
        view.setSortingEnabled(true);
        auto* chooser = new RunsColumnChooser(&view, &model, QStringLiteral("testRuns"), &view);
        model.setRuns({c, b, a});

        QCOMPARE(model.paramColumns(), (QStringList{QStringLiteral("epochs"), QStringLiteral("lr")}));
        QCOMPARE(RunsModel::differingParamKeys(model.rows()), QStringList{QStringLiteral("lr")});
        const int epochsCol = model.firstParamColumn();
        const int lrCol = epochsCol + 1;
        QCOMPARE(model.headerData(lrCol, Qt::Horizontal).toString(), QStringLiteral("lr"));
        QCOMPARE(columnOf(model, lrCol),
                (QStringList{QStringLiteral("0.01"), QStringLiteral("0.0003"), QStringLiteral("0.001")}));
        // The swept param shows by default, the constant one does not.
        QVERIFY(!view.isColumnHidden(lrCol));
        QVERIFY(view.isColumnHidden(epochsCol));

        // Sorted numerically: 0.0003 < 0.001 < 0.01.
        view.sortByColumn(lrCol, Qt::AscendingOrder);
        QCOMPARE(columnOf(proxy, RunsModel::Name),
                (QStringList{QStringLiteral("digits-sweep[lr=0.0003]"), QStringLiteral("digits-sweep[lr=0.001]"),
                        QStringLiteral("digits-sweep[lr=0.01]")}));

        // The chooser (the header's context menu) adds the other param.
        std::unique_ptr<QMenu> menu(chooser->menu(&view));
        QAction* epochs = menu->findChild<QAction*>(QStringLiteral("param:epochs"));
        QVERIFY(epochs);
        QVERIFY(!epochs->isChecked());
        QVERIFY(menu->findChild<QAction*>(QStringLiteral("param:lr"))->isChecked());
        epochs->trigger();
        QVERIFY(!view.isColumnHidden(epochsCol));
        QCOMPARE(columnOf(model, epochsCol),
                (QStringList{QStringLiteral("5"), QStringLiteral("5"), QStringLiteral("5")}));

        // Remembered: a new table reads the choice back.
        QTableView view2;
        view2.setModel(&model);
        RunsColumnChooser chooser2(&view2, &model, QStringLiteral("testRuns"));
        QVERIFY(!view2.isColumnHidden(epochsCol));
        QVERIFY(!view2.isColumnHidden(lrCol));
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).remove(QStringLiteral("testRuns"));
    }

    void testerWithInsertsUpdatesRemovals()
    {
        RunsModel model;
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(RunsModel::SortRole);
        proxy.setDynamicSortFilter(true);
        proxy.sort(RunsModel::Started, Qt::DescendingOrder);
        QAbstractItemModelTester t1(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);

        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2025-03-01T10:00:00.000Z"), Qt::ISODateWithMs);
        RunRows rows{row(3, QStringLiteral("c"), RunState::Running, t0.addSecs(300), 0, {{"loss", 0.5}}),
                row(2, QStringLiteral("b"), RunState::Succeeded, t0.addSecs(100), 50,
                        {{"loss", 0.3}, {"val_acc", 0.91}}),
                row(1, QStringLiteral("a"), RunState::Failed, t0, 7)};
        model.setRuns(rows);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.metricColumns(), (QStringList{QStringLiteral("loss"), QStringLiteral("val_acc")}));
        QCOMPARE(model.columnCount(), RunsModel::FirstMetricColumn + 2);
        QCOMPARE(columnOf(proxy, RunsModel::Name),
                (QStringList{QStringLiteral("c"), QStringLiteral("b"), QStringLiteral("a")}));

        // Insert a new run at the top, drop "a", update "b": no reset.
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        RunRow b = rows.at(1);
        b.latest[QStringLiteral("val_acc")].value = 0.95;
        b.latest[QStringLiteral("val_acc")].step = 20;
        model.setRuns({row(4, QStringLiteral("d"), RunState::Queued, {}, 0), rows.at(0), b});
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(changed.count(), 1); // only b's row
        QCOMPARE(changed.at(0).at(0).value<QModelIndex>().row(), model.rowOf(2));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.rowOf(1), -1);
        const int valAcc = RunsModel::FirstMetricColumn + int(model.metricColumns().indexOf(QStringLiteral("val_acc")));
        QCOMPARE(model.index(model.rowOf(2), valAcc).data().toString(), QStringLiteral("0.95"));
        QCOMPARE(model.index(model.rowOf(4), RunsModel::State).data().toString(), QStringLiteral("queued"));

        // Live updates from the engine.
        RunRecord started = model.rowData(4)->run;
        started.state = RunState::Running;
        started.startedAt = t0.addSecs(1000);
        model.updateRun(started);
        QCOMPARE(model.index(model.rowOf(4), RunsModel::State).data().toString(), QStringLiteral("running"));
        model.updateLatestMetrics(4,
                {point(4, QStringLiteral("loss"), 0, 2.0), point(4, QStringLiteral("loss"), 1, 1.5),
                        point(4, QStringLiteral("accuracy"), 1, 0.4)});
        QVERIFY(model.metricColumns().contains(QStringLiteral("accuracy")));
        const int lossCol = RunsModel::FirstMetricColumn + int(model.metricColumns().indexOf(QStringLiteral("loss")));
        QCOMPARE(model.index(model.rowOf(4), lossCol).data().toString(), QStringLiteral("1.5"));
        // An older step does not move the latest value.
        model.updateLatestMetrics(4, {point(4, QStringLiteral("loss"), 0, 9.0)});
        QCOMPARE(model.index(model.rowOf(4), lossCol).data().toString(), QStringLiteral("1.5"));

        model.removeRun(3);
        QCOMPARE(model.rowCount(), 2);
        model.setRuns({});
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(RunsModel::FirstMetricColumn));
    }

    void sortsNumericallyThroughProxy()
    {
        RunsModel model;
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(RunsModel::SortRole);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2025-03-01T09:00:00.000Z"), Qt::ISODateWithMs);
        // Durations 9 s, 70 s, 600 s: as text "9s" > "10m 00s" > "1m 10s"; as numbers the reverse order.
        model.setRuns({row(1, QStringLiteral("nine"), RunState::Succeeded, t0, 9, {{"loss", 10.0}}),
                row(2, QStringLiteral("seventy"), RunState::Succeeded, t0.addSecs(-3600 * 30), 70, {{"loss", 9.0}}),
                row(3, QStringLiteral("six-hundred"), RunState::Failed, t0.addSecs(86400 * 40), 600,
                        {{"loss", std::numeric_limits<double>::quiet_NaN()}})});
        proxy.sort(RunsModel::Duration, Qt::AscendingOrder);
        QCOMPARE(columnOf(proxy, RunsModel::Name),
                (QStringList{QStringLiteral("nine"), QStringLiteral("seventy"), QStringLiteral("six-hundred")}));
        QCOMPARE(columnOf(proxy, RunsModel::Duration),
                (QStringList{QStringLiteral("9s"), QStringLiteral("1m 10s"), QStringLiteral("10m 00s")}));
        proxy.sort(RunsModel::Started, Qt::AscendingOrder);
        QCOMPARE(columnOf(proxy, RunsModel::Name),
                (QStringList{QStringLiteral("seventy"), QStringLiteral("nine"), QStringLiteral("six-hundred")}));
        // Shown in local time.
        QCOMPARE(proxy.index(1, RunsModel::Started).data().toString(),
                t0.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
        // "9" < "10" numerically (as text "10" < "9").
        const int lossCol = RunsModel::FirstMetricColumn;
        QCOMPARE(model.headerData(lossCol, Qt::Horizontal).toString(), QStringLiteral("loss"));
        proxy.sort(lossCol, Qt::DescendingOrder);
        QCOMPARE(proxy.index(0, RunsModel::Name).data().toString(), QStringLiteral("nine"));
        QCOMPARE(proxy.index(1, RunsModel::Name).data().toString(), QStringLiteral("seventy"));
        QCOMPARE(model.index(model.rowOf(3), lossCol).data().toString(), QStringLiteral("nan"));
        proxy.sort(RunsModel::State, Qt::AscendingOrder);
        QCOMPARE(proxy.index(0, RunsModel::State).data().toString(), QStringLiteral("failed"));

        // Live: a sorted proxy follows dataChanged.
        proxy.sort(RunsModel::Duration, Qt::AscendingOrder);
        RunRecord r = model.rowData(1)->run;
        r.finishedAt = r.startedAt.addSecs(5000);
        model.updateRun(r);
        QCOMPARE(proxy.index(2, RunsModel::Name).data().toString(), QStringLiteral("nine"));
    }

    void durationOfRunningRunTicks()
    {
        RunsModel model;
        const QDateTime t0 = QDateTime::currentDateTimeUtc().addSecs(-100);
        model.setRuns({row(1, QStringLiteral("r"), RunState::Running, t0, 0)});
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.tick(t0.addSecs(3725));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.index(0, RunsModel::Duration).data().toString(), QStringLiteral("1h 02m"));
        QCOMPARE(model.index(0, RunsModel::Duration).data(RunsModel::SortRole).toLongLong(), 3725000);
    }

    void durationOfARunWhoseNodeIsAwayDoesNotCountOn()
    {
        // Issue 20: its node is away (state unknown). Without a recorded end
        // it says its end is unknown; with one, end - start, however late.
        RunsModel model;
        const QDateTime t0 = QDateTime(QDate(2026, 12, 2), QTime(10, 0, 0), Qt::UTC);
        RunRow away = row(1, QStringLiteral("away"), RunState::Unknown, t0, 0);
        RunRow endedThenAway = row(2, QStringLiteral("ended-then-away"), RunState::Unknown, t0, 0);
        endedThenAway.run.finishedAt = t0.addSecs(75);
        model.setRuns({away, endedThenAway});
        model.tick(t0.addSecs(3 * 3600));
        QCOMPARE(model.index(0, RunsModel::Duration).data().toString(), QStringLiteral("unknown"));
        QVERIFY(model.index(0, RunsModel::Duration)
                        .data(Qt::ToolTipRole)
                        .toString()
                        .contains(QStringLiteral("may have ended")));
        QCOMPARE(model.index(1, RunsModel::Duration).data().toString(), QStringLiteral("1m 15s"));
        QCOMPARE(model.index(1, RunsModel::Duration).data(RunsModel::SortRole).toLongLong(), 75000);
    }

    void choosesMainMetrics()
    {
        RunRows rows{row(1, QStringLiteral("a"), RunState::Succeeded, {}, 0,
                {{"epoch", 3}, {"lr", 0.1}, {"train_loss", 0.2}, {"val_accuracy", 0.9}, {"grad_norm", 1.0},
                        {"val_loss", 0.3}, {"throughput", 100}})};
        QCOMPARE(RunsModel::chooseMainMetrics(rows, 3),
                (QStringList{
                        QStringLiteral("train_loss"), QStringLiteral("val_accuracy"), QStringLiteral("val_loss")}));
        // Only loss/accuracy-like keys get columns, however high the cap.
        QCOMPARE(RunsModel::chooseMainMetrics(rows, 10).size(), 3);
        QCOMPARE(RunsModel::chooseMainMetrics(rows, 2),
                (QStringList{QStringLiteral("train_loss"), QStringLiteral("val_accuracy")}));
        // No such key: a few of the others, never the bookkeeping ones.
        RunRows plain{row(2, QStringLiteral("b"), RunState::Succeeded, {}, 0,
                {{"epoch", 3}, {"lr", 0.1}, {"grad_norm", 1.0}, {"throughput", 100}, {"temp", 3}})};
        const QStringList others = RunsModel::chooseMainMetrics(plain, 6);
        QCOMPARE(others, (QStringList{QStringLiteral("grad_norm"), QStringLiteral("lr"), QStringLiteral("temp")}));
    }
};

QTEST_MAIN(TestRunsModel)
#include "TestRunsModel.moc"
