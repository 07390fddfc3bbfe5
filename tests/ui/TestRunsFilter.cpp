#include "tests/ui/UiTestSupport.h"
#include "ui/mainwindow/MainWindow.h"
#include "ui/runs/RunsFilterBar.h"
#include "ui/runs/RunsFilterProxy.h"
#include "ui/runs/RunsModel.h"
#include "ui/runs/StoreReader.h"
#include "core/store/ResultStore.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <memory>

using namespace ty;

namespace {

QString s(const char* text)
{
    return QString::fromUtf8(text);
}

struct RunSpec {
    const char* name;
    RunState state;
    const char* node;
    QStringList tags;
    QMap<QString, QString> params;
    double loss;
};

// A sweep as it lands in the result database: learning rates written in
// every float form, two tags, two nodes, one run without any param.
QList<RunSpec> sweepRuns()
{
    return {
            {"mlp lr=1e-4 a", RunState::Succeeded, "gpu1", {s("baseline")}, {{s("lr"), s("1e-4")}, {s("bs"), s("32")}},
                    0.30},
            {"mlp lr=0.0005", RunState::Succeeded, "gpu1", {s("baseline"), s("sweep")},
                    {{s("lr"), s("0.0005")}, {s("bs"), s("64")}}, 0.25},
            {"mlp lr=1e-3", RunState::Failed, "gpu2", {s("baseline")}, {{s("lr"), s("1e-3")}, {s("bs"), s("32")}},
                    0.40},
            {"mlp lr=.01", RunState::Succeeded, "gpu2", {s("sweep")}, {{s("lr"), s(".01")}, {s("bs"), s("64")}}, 0.90},
            {"mlp lr=5e-4 b", RunState::Running, "gpu2", {s("sweep")}, {{s("lr"), s("5e-4")}, {s("bs"), s("32")}},
                    0.27},
            {"mlp lr=0.0001 c", RunState::Succeeded, "gpu1", {}, {{s("lr"), s("0.0001")}}, 0.31},
            {"notebook", RunState::Queued, "local", {s("baseline")}, {}, 0.0},
    };
}

QStringList namesShown(const QAbstractItemModel& m)
{
    QStringList out;
    for (int r = 0; r < m.rowCount(); ++r)
        out << m.index(r, RunsModel::Name).data().toString();
    return out;
}

QStringList sorted(QStringList l)
{
    l.sort();
    return l;
}

void clearFilterSettings()
{
    QSettings st(QStringLiteral("Trainyard"), QStringLiteral("trainyard"));
    st.remove(QStringLiteral("runsFilter"));
    st.sync();
}

} // namespace

class TestRunsFilter : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ResultStore> m_store;
    QList<RunId> m_ids;

    // Loads every run of the store into `model` the way the main window does:
    // through a StoreReader (here on this thread) and its runsLoaded snapshot.
    bool load(RunsModel& model)
    {
        StoreReader reader(m_store.get());
        QSignalSpy loaded(&reader, &StoreReader::runsLoaded);
        reader.requestRuns();
        if (!loaded.wait(10000))
            return false;
        model.setRuns(loaded.at(0).at(0).value<RunRows>());
        return true;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        // Our own settings file: other GUI tests running at the same time
        // must not restore the queries written here.
        test::keepSettingsIn(m_dir.filePath(QStringLiteral("config")));
        clearFilterSettings();
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2025-04-01T09:00:00.000Z"), Qt::ISODateWithMs);
        int i = 0;
        for (const RunSpec& spec : sweepRuns()) {
            RunRecord r;
            r.name = QString::fromUtf8(spec.name);
            r.state = spec.state;
            r.node = QString::fromUtf8(spec.node);
            r.tags = spec.tags;
            r.createdAt = t0.addSecs(60 * i);
            if (spec.state != RunState::Queued)
                r.startedAt = t0.addSecs(60 * i + 5);
            if (isTerminal(spec.state))
                r.finishedAt = t0.addSecs(60 * i + 50);
            r.specYaml = QStringLiteral("name: %1\ncommand: python3 train.py\n%2")
                                 .arg(r.name, i == 3 ? s("queue: long\n") : QString());
            auto id = m_store->createRun(r, spec.params);
            QVERIFY2(id, id ? "" : qPrintable(id.error().message));
            m_ids << *id;
            if (spec.loss > 0) {
                MetricPoint p;
                p.run = *id;
                p.key = QStringLiteral("loss");
                p.step = 100;
                p.wallTimeMs = t0.addSecs(60 * i + 30).toMSecsSinceEpoch();
                p.value = spec.loss;
                m_store->appendMetrics({p});
            }
            ++i;
        }
        QVERIFY(m_store->flush());
    }

    void init() { clearFilterSettings(); }

    void cleanupTestCase()
    {
        clearFilterSettings();
        m_store.reset();
    }

    void paramsReachTheModel()
    {
        RunsModel model;
        QVERIFY(load(model));
        QCOMPARE(model.rowCount(), 7);
        const RunRow* row = model.rowData(m_ids.at(2));
        QVERIFY(row);
        QCOMPARE(row->params.value(QStringLiteral("lr")), s("1e-3"));
        QCOMPARE(row->run.tags, QStringList{s("baseline")});
    }

    // The issue's example on a real database: exactly the baseline runs with
    // a learning rate below 1e-3, whatever float form it was written in.
    void issueExampleKeepsExactlyTheMatchingRuns()
    {
        RunsModel model;
        RunsFilterProxy proxy;
        proxy.setSourceModel(&model);
        proxy.sort(RunsModel::Started, Qt::DescendingOrder);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(load(model));
        QCOMPARE(proxy.rowCount(), 7);

        QVERIFY(proxy.setQueryText(QStringLiteral("lr < 1e-3 and tag:baseline")));
        QCOMPARE(sorted(namesShown(proxy)), (QStringList{s("mlp lr=0.0005"), s("mlp lr=1e-4 a")}));

        // An invalid query says where, and the rows stay as they were.
        QSignalSpy changed(&proxy, &RunsFilterProxy::queryChanged);
        const auto bad = proxy.setQueryText(QStringLiteral("lr < and tag:baseline"));
        QVERIFY(!bad);
        QCOMPARE(bad.error().message, s("column 6: expected a value after '<', found 'and'"));
        QCOMPARE(changed.count(), 0);
        QCOMPARE(sorted(namesShown(proxy)), (QStringList{s("mlp lr=0.0005"), s("mlp lr=1e-4 a")}));

        QVERIFY(proxy.setQueryText(QStringLiteral("lr <= 1e-3 and tag:baseline and not state:failed")));
        QCOMPARE(sorted(namesShown(proxy)), (QStringList{s("mlp lr=0.0005"), s("mlp lr=1e-4 a")}));
        QVERIFY(proxy.setQueryText(QStringLiteral("(node:gpu2 or node:local) and metric.loss < 0.5")));
        QCOMPARE(sorted(namesShown(proxy)), (QStringList{s("mlp lr=1e-3"), s("mlp lr=5e-4 b")}));
        QVERIFY(proxy.setQueryText(QStringLiteral("queue:long")));
        QCOMPARE(namesShown(proxy), QStringList{s("mlp lr=.01")});
        QVERIFY(proxy.setQueryText(QStringLiteral("not has:lr")));
        QCOMPARE(namesShown(proxy), QStringList{s("notebook")});

        // Live changes go through the filter: a run that starts to match
        // appears, one that stops matching goes.
        QVERIFY(proxy.setQueryText(QStringLiteral("state:running")));
        QCOMPARE(namesShown(proxy), QStringList{s("mlp lr=5e-4 b")});
        RunRecord done = model.rowData(m_ids.at(4))->run;
        done.state = RunState::Succeeded;
        done.finishedAt = done.startedAt.addSecs(40);
        model.updateRun(done);
        QCOMPARE(proxy.rowCount(), 0);
        RunRecord queued = model.rowData(m_ids.at(6))->run;
        queued.state = RunState::Running;
        queued.startedAt = queued.createdAt.addSecs(1);
        model.updateRun(queued);
        QCOMPARE(namesShown(proxy), QStringList{s("notebook")});

        // A reload from the database keeps the filter.
        QVERIFY(proxy.setQueryText(QStringLiteral("bs = 64")));
        QVERIFY(load(model));
        QCOMPARE(sorted(namesShown(proxy)), (QStringList{s("mlp lr=.01"), s("mlp lr=0.0005")}));

        QVERIFY(proxy.setQueryText(QString()));
        QCOMPARE(proxy.rowCount(), 7);
    }

    // Grouping sorts by the group key (groups ascend in either column order,
    // runs without the key last) and labels each group's first row.
    void groupByParam()
    {
        RunsModel model;
        RunsFilterProxy proxy;
        proxy.setSourceModel(&model);
        proxy.sort(RunsModel::Name, Qt::AscendingOrder);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(load(model));

        QSignalSpy grouped(&proxy, &RunsFilterProxy::groupByChanged);
        proxy.setGroupBy(RunGroupBy{RunGroupBy::Kind::Param, s("lr")});
        QCOMPARE(grouped.count(), 1);
        // 1e-4 == 0.0001 (one group, by name within it), 5e-4 == 0.0005, 1e-3, .01, then no lr.
        const QStringList byLr{s("mlp lr=0.0001 c"), s("mlp lr=1e-4 a"), s("mlp lr=0.0005"), s("mlp lr=5e-4 b"),
                s("mlp lr=1e-3"), s("mlp lr=.01"), s("notebook")};
        QCOMPARE(namesShown(proxy), byLr);
        QCOMPARE(proxy.groupCount(), 5);
        QCOMPARE(proxy.groupRows(1), (std::pair<int, int>{0, 2}));
        QCOMPARE(proxy.groupRows(3), (std::pair<int, int>{2, 2}));
        QCOMPARE(proxy.groupRows(6), (std::pair<int, int>{6, 1}));
        QCOMPARE(proxy.groupLabel(0), s("lr = 0.0001"));
        QCOMPARE(proxy.groupLabel(4), s("lr = 1e-3"));
        QCOMPARE(proxy.groupLabel(6), s("no lr"));
        QCOMPARE(proxy.headerData(0, Qt::Vertical).toString(), s("lr = 0.0001 · 2 runs"));
        QCOMPARE(proxy.headerData(1, Qt::Vertical).toString(), QString());
        QCOMPARE(proxy.headerData(5, Qt::Vertical).toString(), s("lr = .01 · 1 run"));
        // Banded by group: rows of the second group have a background, the first not.
        QVERIFY(!proxy.index(0, RunsModel::Name).data(Qt::BackgroundRole).isValid());
        QVERIFY(proxy.index(2, RunsModel::Name).data(Qt::BackgroundRole).isValid());
        QVERIFY(!proxy.index(4, RunsModel::Name).data(Qt::BackgroundRole).isValid());

        // Descending by name: groups keep their order, names reverse inside.
        proxy.sort(RunsModel::Name, Qt::DescendingOrder);
        QCOMPARE(namesShown(proxy),
                (QStringList{s("mlp lr=1e-4 a"), s("mlp lr=0.0001 c"), s("mlp lr=5e-4 b"), s("mlp lr=0.0005"),
                        s("mlp lr=1e-3"), s("mlp lr=.01"), s("notebook")}));

        // Filter and group together.
        QVERIFY(proxy.setQueryText(QStringLiteral("tag:sweep")));
        QCOMPARE(namesShown(proxy), (QStringList{s("mlp lr=5e-4 b"), s("mlp lr=0.0005"), s("mlp lr=.01")}));
        QCOMPARE(proxy.groupCount(), 2);
        QCOMPARE(proxy.groupRows(2), (std::pair<int, int>{2, 1}));

        // Ungrouped: the plain column sort again, vertical header is the source's.
        proxy.setGroupBy({});
        QVERIFY(!proxy.isGrouped());
        QCOMPARE(namesShown(proxy), (QStringList{s("mlp lr=5e-4 b"), s("mlp lr=0.0005"), s("mlp lr=.01")}));
        QCOMPARE(proxy.groupRows(1), (std::pair<int, int>{1, 1}));
        QCOMPARE(proxy.groupCount(), 0);
        QCOMPARE(proxy.paramNames(), (QStringList{s("bs"), s("lr")}));
    }

    void groupByStateTagAndNode()
    {
        RunsModel model;
        RunsFilterProxy proxy;
        proxy.setSourceModel(&model);
        proxy.sort(RunsModel::Name, Qt::AscendingOrder);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(load(model));

        proxy.setGroupBy(RunGroupBy{RunGroupBy::Kind::State, {}});
        // Lifecycle order: queued, running, succeeded, failed.
        QCOMPARE(namesShown(proxy),
                (QStringList{s("notebook"), s("mlp lr=5e-4 b"), s("mlp lr=.01"), s("mlp lr=0.0001 c"),
                        s("mlp lr=0.0005"), s("mlp lr=1e-4 a"), s("mlp lr=1e-3")}));
        QCOMPARE(proxy.groupCount(), 4);
        QCOMPARE(proxy.groupRows(4), (std::pair<int, int>{2, 4}));

        // A run changing state moves to its new group.
        RunRecord done = model.rowData(m_ids.at(4))->run;
        done.state = RunState::Failed;
        model.updateRun(done);
        QCOMPARE(namesShown(proxy).last(), s("mlp lr=5e-4 b"));
        QCOMPARE(proxy.groupCount(), 3);
        QCOMPARE(proxy.groupLabel(6), s("failed"));
        QCOMPARE(proxy.groupRows(6), (std::pair<int, int>{5, 2}));

        proxy.setGroupBy(RunGroupBy{RunGroupBy::Kind::Tag, {}});
        QCOMPARE(namesShown(proxy),
                (QStringList{s("mlp lr=1e-3"), s("mlp lr=1e-4 a"), s("notebook"), s("mlp lr=0.0005"), s("mlp lr=.01"),
                        s("mlp lr=5e-4 b"), s("mlp lr=0.0001 c")}));
        QCOMPARE(proxy.groupLabel(0), s("tags: baseline"));
        QCOMPARE(proxy.groupLabel(3), s("tags: baseline, sweep"));
        QCOMPARE(proxy.groupLabel(6), s("no tags"));

        proxy.setGroupBy(RunGroupBy{RunGroupBy::Kind::Node, {}});
        QCOMPARE(proxy.groupCount(), 3);
        QCOMPARE(proxy.groupLabel(0), s("node gpu1"));
        QCOMPARE(proxy.groupRows(0), (std::pair<int, int>{0, 3}));

        proxy.setGroupBy(RunGroupBy{RunGroupBy::Kind::Queue, {}});
        QCOMPARE(proxy.groupCount(), 2);
        QCOMPARE(namesShown(proxy).last(), s("mlp lr=.01"));
        QCOMPARE(proxy.groupLabel(6), s("queue long"));
    }

    // The bar: typing applies, a bad query turns red with its column and
    // leaves the table alone, saved queries and the grouping persist.
    void filterBarAppliesSavesAndRestores()
    {
        RunsModel model;
        RunsFilterProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(load(model));
        {
            RunsFilterBar bar(&proxy);
            bar.show();
            QVERIFY(QTest::qWaitForWindowExposed(&bar));
            auto* edit = bar.findChild<QLineEdit*>(QStringLiteral("runsFilterEdit"));
            auto* status = bar.findChild<QLabel*>(QStringLiteral("runsFilterStatus"));
            QVERIFY(edit && status);
            QTest::keyClicks(edit, QStringLiteral("lr < 1e-3 and tag:baseline"));
            QCOMPARE(sorted(namesShown(proxy)), (QStringList{s("mlp lr=0.0005"), s("mlp lr=1e-4 a")}));
            QVERIFY(!edit->property("invalid").toBool());
            QCOMPARE(status->text(), s("2 of 7 runs"));

            // Deleting the value leaves "lr < and ..." style errors while typing.
            edit->setText(QStringLiteral("lr < 1e-3 and (tag:baseline"));
            QVERIFY(edit->property("invalid").toBool());
            QCOMPARE(bar.error(), s("column 28: missing ')' for the '(' at column 15"));
            QCOMPARE(status->text(), bar.error());
            QCOMPARE(edit->toolTip(), bar.error());
            QVERIFY(edit->palette().color(QPalette::Base) != bar.palette().color(QPalette::Base));
            QCOMPARE(sorted(namesShown(proxy)), (QStringList{s("mlp lr=0.0005"), s("mlp lr=1e-4 a")}));
            QTest::keyClick(edit, Qt::Key_ParenRight);
            QVERIFY(!edit->property("invalid").toBool());
            QCOMPARE(edit->palette().color(QPalette::Base), bar.palette().color(QPalette::Base));
            QCOMPARE(status->text(), s("2 of 7 runs"));

            // Saved queries: save, switch, pick, delete.
            QVERIFY(!bar.saveQuery(QStringLiteral("  ")));
            QVERIFY(bar.saveQuery(QStringLiteral("small lr baselines")));
            auto* saved = bar.findChild<QComboBox*>(QStringLiteral("savedQueriesCombo"));
            QCOMPARE(saved->currentText(), s("small lr baselines"));
            QVERIFY(bar.setQueryText(QStringLiteral("node:gpu2")));
            QCOMPARE(saved->currentIndex(), 0); // the text is no longer the saved one
            QVERIFY(bar.saveQuery(QStringLiteral("gpu2")));
            QVERIFY(bar.setQueryText(QStringLiteral("state:failed")));
            QCOMPARE(namesShown(proxy), QStringList{s("mlp lr=1e-3")});
            QVERIFY(bar.selectSavedQuery(QStringLiteral("small lr baselines")));
            QCOMPARE(edit->text(), s("lr < 1e-3 and (tag:baseline)"));
            QCOMPARE(proxy.rowCount(), 2);
            QVERIFY(!bar.selectSavedQuery(QStringLiteral("nope")));
            // Picking from the dropdown the way a user does.
            saved->setCurrentIndex(saved->findText(QStringLiteral("gpu2")));
            Q_EMIT saved->activated(saved->currentIndex());
            QCOMPARE(edit->text(), s("node:gpu2"));
            QCOMPARE(proxy.rowCount(), 3);
            QVERIFY(bar.findChild<QToolButton*>(QStringLiteral("deleteQueryButton"))->isEnabled());
            bar.findChild<QToolButton*>(QStringLiteral("deleteQueryButton"))->click();
            QCOMPARE(bar.savedQueries().keys(), QStringList{s("small lr baselines")});
            QCOMPARE(saved->count(), 2);

            // Group by from the combo; param entries come from the runs.
            auto* group = bar.findChild<QComboBox*>(QStringLiteral("groupByCombo"));
            bar.refreshGroupChoices();
            const int lrIndex = group->findData(QStringLiteral("param:lr"));
            QVERIFY(lrIndex > 0);
            QVERIFY(group->findData(QStringLiteral("param:bs")) > 0);
            group->setCurrentIndex(lrIndex);
            Q_EMIT group->activated(lrIndex);
            QCOMPARE(proxy.groupBy().id(), s("param:lr"));
            QCOMPARE(status->text(), s("3 of 7 runs · 3 groups"));
            QVERIFY(!bar.setGroupById(QStringLiteral("colour")));
            QVERIFY(bar.setQueryText(QStringLiteral("node:gpu1")));
        }
        // A new bar (the next start) restores the query, saved queries and grouping.
        RunsModel model2;
        RunsFilterProxy proxy2;
        proxy2.setSourceModel(&model2);
        QVERIFY(load(model2));
        RunsFilterBar restored(&proxy2);
        QCOMPARE(restored.queryEdit()->text(), s("node:gpu1"));
        QCOMPARE(proxy2.rowCount(), 3);
        QCOMPARE(
                restored.savedQueries().value(QStringLiteral("small lr baselines")), s("lr < 1e-3 and (tag:baseline)"));
        QCOMPARE(proxy2.groupBy().id(), s("param:lr"));
        QCOMPARE(restored.groupByCombo()->currentData().toString(), s("param:lr"));
        // An invalid query saved as typed is restored red, the table unfiltered.
        QVERIFY(!restored.setQueryText(QStringLiteral("lr <")));
        RunsFilterBar again(&proxy2);
        QVERIFY(again.queryEdit()->property("invalid").toBool());
        QCOMPARE(again.error(), s("column 5: expected a value after '<'"));
    }

    // In the main window: the bar sits above the table, grouping shows the
    // vertical header, a click on a group's label selects the group for Compare.
    void mainWindowFiltersGroupsAndSelectsAGroup()
    {
        MainWindow window(m_store.get(), nullptr);
        QSignalSpy reloaded(&window, &MainWindow::runsReloaded);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.runsModel()->rowCount() == 7);
        auto* table = window.findChild<QTableView*>(QStringLiteral("runsTable"));
        RunsFilterBar* bar = window.runsFilterBar();
        QVERIFY(bar && table);
        QVERIFY(qobject_cast<RunsFilterProxy*>(window.runsProxy()));
        QVERIFY(!table->verticalHeader()->isVisible());

        QTest::keyClicks(bar->queryEdit(), QStringLiteral("lr < 1e-3 and tag:baseline"));
        QCOMPARE(sorted(namesShown(*window.runsProxy())), (QStringList{s("mlp lr=0.0005"), s("mlp lr=1e-4 a")}));

        QVERIFY(bar->setQueryText(QStringLiteral("tag:sweep or tag:baseline")));
        QVERIFY(bar->setGroupById(QStringLiteral("node")));
        QVERIFY(table->verticalHeader()->isVisible());
        QVERIFY(!table->alternatingRowColors());
        auto* proxy = static_cast<RunsFilterProxy*>(window.runsProxy());
        // Groups: gpu1 (2 tagged runs), gpu2 (3), local (1).
        QCOMPARE(proxy->groupCount(), 3);
        const auto [first, count] = proxy->groupRows(3);
        QCOMPARE(count, 3);
        QCOMPARE(proxy->groupLabel(first), s("node gpu2"));
        Q_EMIT table->verticalHeader()->sectionClicked(first);
        QList<RunId> expected{m_ids.at(2), m_ids.at(3), m_ids.at(4)};
        QList<RunId> selected = window.selectedRuns();
        std::sort(selected.begin(), selected.end());
        QCOMPARE(selected, expected);
        QVERIFY(window.compareAction()->isEnabled());

        QVERIFY(bar->setGroupById(QStringLiteral("none")));
        QVERIFY(!table->verticalHeader()->isVisible());
        QVERIFY(table->alternatingRowColors());
    }
};

QTEST_MAIN(TestRunsFilter)
#include "TestRunsFilter.moc"
