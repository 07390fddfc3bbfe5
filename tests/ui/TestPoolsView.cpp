// The Pools view (issue #25): two pools of a scheduler file, the local node
// in one by the label `node label` gives it (ResultStore::setNodeLabels), a
// stored SSH node in the other, GPUs as the nodes report them and runs as
// the runs table's snapshots carry them: each pool's row says its nodes,
// GPUs, own use, lent, borrowed and idle, each project's and user's row its
// use against its quota, and a waiting run the scheduler's reason.
#include "ui/queue/PoolsView.h"
#include "core/store/ResultStore.h"

#include "UiTestSupport.h"
#include "tests/support/TestSupport.h"

#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace ty;

namespace {

QStringList rowTexts(const QTreeWidgetItem* item)
{
    return test::rowTexts(item, PoolsView::ColumnCount);
}

QList<AgentGpu> gpus(int n)
{
    QList<AgentGpu> out;
    for (int i = 0; i < n; ++i) {
        AgentGpu g;
        g.index = i;
        out << g;
    }
    return out;
}

RunRow row(RunId id, RunState state, const QString& node, QList<int> gpuIndices, const QString& yaml,
        const QString& reason = {})
{
    RunRow r;
    r.run.id = id;
    r.run.name = QStringLiteral("run-%1").arg(id);
    r.run.state = state;
    r.run.node = node;
    r.run.gpus = std::move(gpuIndices);
    r.run.specYaml = yaml;
    r.run.pendingReason = reason;
    return r;
}

} // namespace

class TestPoolsView : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ResultStore> m_store;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
    }

    void cleanupTestCase() { m_store.reset(); }

    void poolsWithTheirUseQuotasAndWaitingRuns()
    {
        const QString db = m_store->location();
        test::writeFile(db + QStringLiteral(".scheduler.json"),
                R"({"pools": {"a100": {"labels": ["a100"], "quota": {"projects": {"vision": 4}},
                                       "borrow_limit": 2, "lend": false},
                              "v100": {"labels": ["v100"], "quota": {"users": {"default": 8}}}}})");
        QVERIFY(m_store->setNodeLabels(QStringLiteral("local"), {QStringLiteral("a100")}));
        NodeRecord ws;
        ws.name = QStringLiteral("ws-01");
        ws.host = QStringLiteral("ws-01.example");
        ws.labels = {QStringLiteral("v100")};
        QVERIFY(m_store->addNode(ws));

        PoolsView view(m_store.get(), nullptr, db);
        view.setNodeGpus(QStringLiteral("local"), gpus(4));
        view.setNodeGpus(QStringLiteral("ws-01"), gpus(8));
        const QString vision = QStringLiteral("name: v\ncommand: train\nuser: alice\nproject: vision\npool: a100\n");
        view.setRuns({
                // vision: 2 on a100's local node, 2 borrowed on ws-01 = 4 of 4
                row(1, RunState::Running, QStringLiteral("local"), {0, 1}, vision),
                row(2, RunState::Running, QStringLiteral("ws-01"), {0, 1}, vision),
                // no pool named: charged to v100, where it runs
                row(3, RunState::Running, QStringLiteral("ws-01"), {2, 3, 4},
                        QStringLiteral("name: n\ncommand: x\nuser: bob\nproject: nlp\n")),
                row(4, RunState::Queued, {}, {}, vision,
                        QStringLiteral("waiting: project vision uses 4 of its 4 GPUs in pool a100; this run needs 1")),
                row(5, RunState::Succeeded, QStringLiteral("local"), {2, 3}, vision), // ended: holds nothing
        });
        view.refresh();

        QTreeWidget* tree = view.tree();
        QCOMPARE(tree->topLevelItemCount(), 2);
        const QTreeWidgetItem* a = view.poolItem(QStringLiteral("a100"));
        QVERIFY(a);
        QCOMPARE(rowTexts(a).mid(0, PoolsView::DetailColumn),
                (QStringList{QStringLiteral("a100"), QStringLiteral("4"), QStringLiteral("2"), QStringLiteral("0"),
                        QStringLiteral("2"), QStringLiteral("2")}));
        // Its nodes and lending (a row over the whole width), project
        // vision, user alice, then the waiting run with its reason.
        QCOMPARE(a->childCount(), 4);
        QVERIFY(a->child(0)->isFirstColumnSpanned());
        QCOMPARE(a->child(0)->text(PoolsView::NameColumn),
                QStringLiteral("nodes: local (labels a100); does not lend; borrows up to 2 GPUs"));
        QCOMPARE(a->child(1)->text(PoolsView::NameColumn), QStringLiteral("project vision"));
        QCOMPARE(a->child(1)->text(PoolsView::UsedColumn), QStringLiteral("4"));
        QCOMPARE(a->child(1)->text(PoolsView::DetailColumn), QStringLiteral("4 of 4 GPUs"));
        QCOMPARE(a->child(2)->text(PoolsView::NameColumn), QStringLiteral("user alice"));
        QCOMPARE(a->child(2)->text(PoolsView::DetailColumn), QStringLiteral("4 GPUs, no limit"));
        QVERIFY(a->child(3)->isFirstColumnSpanned());
        QCOMPARE(a->child(3)->text(PoolsView::NameColumn),
                QStringLiteral(
                        "run 4 run-4: waiting: project vision uses 4 of its 4 GPUs in pool a100; this run needs 1"));

        const QTreeWidgetItem* v = view.poolItem(QStringLiteral("v100"));
        QVERIFY(v);
        QCOMPARE(rowTexts(v).mid(0, PoolsView::DetailColumn),
                (QStringList{QStringLiteral("v100"), QStringLiteral("8"), QStringLiteral("3"), QStringLiteral("2"),
                        QStringLiteral("0"), QStringLiteral("3")}));
        QCOMPARE(v->childCount(), 3);
        QCOMPARE(v->child(0)->text(PoolsView::NameColumn),
                QStringLiteral("nodes: ws-01 (labels v100); lends idle GPUs"));
        QCOMPARE(v->child(1)->text(PoolsView::NameColumn), QStringLiteral("project nlp"));
        QCOMPARE(v->child(1)->text(PoolsView::DetailColumn), QStringLiteral("3 GPUs, no limit"));
        QCOMPARE(v->child(2)->text(PoolsView::NameColumn), QStringLiteral("user bob"));
        QCOMPARE(v->child(2)->text(PoolsView::DetailColumn), QStringLiteral("3 of 8 GPUs"));
        QVERIFY(view.summary()->isHidden());
        view.resize(480, 330); // as narrow as the dock beside the runs table
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        test::saveScreenshot(view, QStringLiteral("pools-view"));

        // The label moves off the local node: a100 has no nodes, and local
        // shows as in no pool -- read again without a new view.
        QVERIFY(m_store->setNodeLabels(QStringLiteral("local"), {}));
        view.refresh();
        a = view.poolItem(QStringLiteral("a100"));
        QCOMPARE(a->text(PoolsView::GpusColumn), QStringLiteral("0"));
        QVERIFY(a->child(0)->text(PoolsView::NameColumn).startsWith(QStringLiteral("nodes: no nodes (labels a100)")));
        QVERIFY(!view.summary()->isHidden());
        QCOMPARE(view.summary()->text(), QStringLiteral("In no pool (free for all, no quota): local"));

        // A run ends (runsUpdated): its GPUs are free again.
        RunRow ended = row(3, RunState::Succeeded, QStringLiteral("ws-01"), {2, 3, 4},
                QStringLiteral("name: n\ncommand: x\nuser: bob\nproject: nlp\n"));
        view.updateRuns({ended}, {});
        QTRY_COMPARE(view.poolItem(QStringLiteral("v100"))->text(PoolsView::UsedColumn), QStringLiteral("0"));
        QCOMPARE(view.poolItem(QStringLiteral("v100"))->text(PoolsView::IdleColumn), QStringLiteral("6"));
    }

    // No pools configured: an empty tree and a line saying where they go.
    void withoutPoolsSaysWhereToDefineThem()
    {
        const QString dbPath = m_dir.filePath(QStringLiteral("none.db"));
        auto store = ResultStore::open(dbPath);
        QVERIFY(store);
        PoolsView view(store->get(), nullptr, dbPath);
        QCOMPARE(view.tree()->topLevelItemCount(), 0);
        QVERIFY(view.summary()->text().startsWith(QStringLiteral("No resource pools: define them under \"pools\"")));
    }
};

QTEST_MAIN(TestPoolsView)
#include "TestPoolsView.moc"
