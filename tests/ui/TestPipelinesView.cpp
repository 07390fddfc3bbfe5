// The Pipelines view (#24): stored pipelines listed newest first, the
// selected one drawn as its graph of steps, live changes, a run opened from
// its box.
#include "tests/support/TestSupport.h"
#include "tests/ui/UiTestSupport.h"
#include "core/store/ResultStore.h"
#include "ui/pipelines/PipelineGraph.h"
#include "ui/pipelines/PipelineGraphLayout.h"
#include "ui/pipelines/PipelinesView.h"

#include <QAction>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace ty;

namespace {
QJsonObject step(const QString& name, const QString& state, qint64 run, const QStringList& upstream,
        const QString& reason = {}, const QString& stepName = {})
{
    return QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("step"), stepName.isEmpty() ? name : stepName},
            {QStringLiteral("state"), state}, {QStringLiteral("run"), run}, {QStringLiteral("reason"), reason},
            {QStringLiteral("outputs"), QJsonObject{}},
            {QStringLiteral("upstream"), QJsonArray::fromStringList(upstream)}};
}

QJsonObject pipeline(qint64 id, const QString& name, const QString& state, const QJsonArray& steps)
{
    return QJsonObject{{QStringLiteral("id"), id}, {QStringLiteral("name"), name}, {QStringLiteral("state"), state},
            {QStringLiteral("created_ms"), qint64(1764800000000) + id * 60000}, {QStringLiteral("ended_ms"), 0},
            {QStringLiteral("params"), QJsonObject{}}, {QStringLiteral("steps"), steps}};
}

PipelineRecord record(const QJsonObject& view)
{
    return PipelineRecord{view.value(QStringLiteral("id")).toInteger(), view.value(QStringLiteral("name")).toString(),
            view.value(QStringLiteral("state")).toString(),
            QDateTime::fromMSecsSinceEpoch(view.value(QStringLiteral("created_ms")).toInteger(), Qt::UTC), {},
            QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("view"), view}}).toJson())};
}
} // namespace

class TestPipelinesView final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ResultStore> m_store;
    RunId m_prepRun = 0;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        test::keepSettingsIn(m_dir.filePath(QStringLiteral("settings")));
        auto s = ResultStore::open(m_dir.filePath(QStringLiteral("t.db")));
        QVERIFY(s);
        m_store = std::move(*s);
        // prep's run took 75 s.
        RunRecord r;
        r.name = QStringLiteral("fan/prep");
        r.state = RunState::Succeeded;
        r.specYaml = QStringLiteral("command: true\n");
        r.argv = {QStringLiteral("true")};
        r.workdir = m_dir.path();
        r.createdAt = QDateTime::fromMSecsSinceEpoch(1764800000000, Qt::UTC);
        r.startedAt = r.createdAt;
        r.finishedAt = r.createdAt.addSecs(75);
        const auto id = m_store->createRun(r, {});
        QVERIFY(id);
        m_prepRun = *id;

        m_store->putPipeline(record(pipeline(1, QStringLiteral("digits"), QStringLiteral("failed"),
                {step(QStringLiteral("prepare"), QStringLiteral("succeeded"), 90, {}),
                        step(QStringLiteral("train"), QStringLiteral("failed"), 91, {QStringLiteral("prepare")},
                                QStringLiteral("run 91: exit code 3")),
                        step(QStringLiteral("evaluate"), QStringLiteral("skipped"), 0, {QStringLiteral("train")},
                                QStringLiteral("not run: step 'train' failed"))})));
        m_store->putPipeline(record(pipeline(2, QStringLiteral("fan"), QStringLiteral("running"),
                {step(QStringLiteral("prep"), QStringLiteral("succeeded"), m_prepRun, {}),
                        step(QStringLiteral("shard[shard=1]"), QStringLiteral("running"), 0, {QStringLiteral("prep")},
                                {}, QStringLiteral("shard")),
                        step(QStringLiteral("shard[shard=2]"), QStringLiteral("cached"), 0, {QStringLiteral("prep")},
                                QStringLiteral("reused run 7 (key 0123456789ab, made 2026-12-01 10:00)"),
                                QStringLiteral("shard")),
                        step(QStringLiteral("gather"), QStringLiteral("waiting"), 0, {QStringLiteral("shard")})})));
        QVERIFY(m_store->flush());
    }

    void layoutPutsEachStepRightOfWhatItWaitsFor()
    {
        const auto l = PipelineGraphLayout::of(pipeline(2, QStringLiteral("fan"), QStringLiteral("running"),
                {step(QStringLiteral("prep"), QStringLiteral("succeeded"), 1, {}),
                        step(QStringLiteral("shard[shard=1]"), QStringLiteral("running"), 0, {QStringLiteral("prep")},
                                {}, QStringLiteral("shard")),
                        step(QStringLiteral("shard[shard=2]"), QStringLiteral("running"), 0, {QStringLiteral("prep")},
                                {}, QStringLiteral("shard")),
                        step(QStringLiteral("lint"), QStringLiteral("succeeded"), 0, {}),
                        step(QStringLiteral("gather"), QStringLiteral("waiting"), 0,
                                {QStringLiteral("shard"), QStringLiteral("lint"), QStringLiteral("gone")})}));
        QCOMPARE(l.boxes.size(), 5);
        const auto at = [&](int i) { return std::pair{l.boxes[i].column, l.boxes[i].row}; };
        QCOMPARE(at(0), std::pair(0, 0)); // prep
        QCOMPARE(at(1), std::pair(1, 0)); // the fan-out's instances, one above the other
        QCOMPARE(at(2), std::pair(1, 1));
        QCOMPARE(at(3), std::pair(0, 1)); // lint waits for nothing: column 0, under prep
        QCOMPARE(at(4), std::pair(2, 0)); // gather: after the longest chain
        QCOMPARE(l.columns, 3);
        QCOMPARE(l.rows, 2);
        // prep -> each shard, each shard -> gather, lint -> gather; "gone" is not a step.
        const QList<std::pair<int, int>> edges{{0, 1}, {0, 2}, {1, 4}, {2, 4}, {3, 4}};
        QCOMPARE(l.edges, edges);
    }

    void storedPipelinesAreListedAndDrawn()
    {
        PipelinesView view(m_store.get(), nullptr);
        view.resize(1000, 420);
        QTreeWidget* list = view.list();
        QCOMPARE(list->topLevelItemCount(), 2);
        QCOMPARE(list->topLevelItem(0)->text(0), QStringLiteral("2")); // newest first
        QCOMPARE(list->topLevelItem(0)->text(1), QStringLiteral("fan"));
        QCOMPARE(list->topLevelItem(1)->text(2), QStringLiteral("failed"));
        QCOMPARE(view.selectedPipeline(), 2); // the newest, at first
        QCOMPARE(view.graph()->graphLayout().boxes.size(), 4);

        view.selectPipeline(1);
        QCOMPARE(view.selectedPipeline(), 1);
        PipelineGraph* g = view.graph();
        QCOMPARE(g->graphLayout().boxes.size(), 3);
        QCOMPARE(g->graphLayout().columns, 3);
        QVERIFY2(g->toolTipFor(1).contains(QStringLiteral("run 91: exit code 3")), qPrintable(g->toolTipFor(1)));
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("pipelineHeader"))->text().contains(QStringLiteral("failed")));
        // Without a service, nothing can be asked of it.
        QVERIFY(!view.resumeAction()->isEnabled());
        QVERIFY(!view.cancelAction()->isEnabled());

        view.selectPipeline(2);
        QCOMPARE(g->graphLayout().boxes.size(), 4);
        QCOMPARE(g->graphLayout().boxes.at(3).column, 2);
        // A step's run: its duration from the run record, in the box and its tooltip.
        QVERIFY2(g->toolTipFor(0).contains(QStringLiteral("duration: 1m 15s")), qPrintable(g->toolTipFor(0)));
        QVERIFY(g->toolTipFor(2).contains(QStringLiteral("reused run 7")));
        // Every box fits in the graph's size, the graph grows with the pipeline.
        for (int i = 0; i < g->graphLayout().boxes.size(); ++i)
            QVERIFY(QRect(QPoint(0, 0), g->sizeHint()).contains(g->boxRect(i)));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        test::saveScreenshot(view, QStringLiteral("pipelines-view"));

        // With the runs table's lookup (the main window's), durations come from it.
        RunRecord looked;
        looked.id = m_prepRun;
        looked.startedAt = QDateTime::fromMSecsSinceEpoch(1764800000000, Qt::UTC);
        looked.finishedAt = looked.startedAt.addSecs(3 * 3600 + 120);
        view.setRunLookup([&](RunId id) { return id == m_prepRun ? &looked : nullptr; });
        view.selectPipeline(1);
        view.selectPipeline(2);
        QVERIFY2(g->toolTipFor(0).contains(QStringLiteral("duration: 3h 02m")), qPrintable(g->toolTipFor(0)));
        view.setRunLookup({});

        // Double-clicking a box with a run opens that run.
        QSignalSpy opened(&view, &PipelinesView::runActivated);
        QTest::mouseDClick(g, Qt::LeftButton, {}, g->boxRect(0).center());
        QCOMPARE(opened.size(), 1);
        QCOMPARE(opened.at(0).at(0).value<RunId>(), m_prepRun);
        QTest::mouseDClick(g, Qt::LeftButton, {}, g->boxRect(3).center()); // gather: no run yet
        QCOMPARE(opened.size(), 1);
    }

    void liveChangesMoveTheGraphAndTheList()
    {
        PipelinesView view(m_store.get(), nullptr);
        view.selectPipeline(2);
        // gather started; the pipeline as the service sends it.
        view.updatePipeline(pipeline(2, QStringLiteral("fan"), QStringLiteral("running"),
                {step(QStringLiteral("prep"), QStringLiteral("succeeded"), m_prepRun, {}),
                        step(QStringLiteral("shard[shard=1]"), QStringLiteral("succeeded"), 0, {QStringLiteral("prep")},
                                {}, QStringLiteral("shard")),
                        step(QStringLiteral("shard[shard=2]"), QStringLiteral("cached"), 0, {QStringLiteral("prep")},
                                {}, QStringLiteral("shard")),
                        step(QStringLiteral("gather"), QStringLiteral("running"), 12, {QStringLiteral("shard")})}));
        QCOMPARE(view.graph()->graphLayout().boxes.at(3).state, QStringLiteral("running"));
        QCOMPARE(view.graph()->graphLayout().boxes.at(3).run, RunId(12));
        // A new pipeline goes on top; the selection stays.
        view.updatePipeline(pipeline(3, QStringLiteral("again"), QStringLiteral("running"),
                {step(QStringLiteral("a"), QStringLiteral("running"), 13, {})}));
        QCOMPARE(view.list()->topLevelItem(0)->text(0), QStringLiteral("3"));
        QCOMPARE(view.list()->topLevelItemCount(), 3);
        QCOMPARE(view.selectedPipeline(), 2);
        // One asked for before the service's event about it is selected when it comes.
        view.selectPipeline(4);
        QCOMPARE(view.selectedPipeline(), 2);
        view.updatePipeline(pipeline(4, QStringLiteral("later"), QStringLiteral("running"), {}));
        QCOMPARE(view.selectedPipeline(), 4);
    }

    void aBadPipelineFileIsRefusedSayingWhere()
    {
        PipelinesView view(m_store.get(), nullptr);
        const QString path = m_dir.filePath(QStringLiteral("bad.yaml"));
        test::writeFile(path, "steps:\n  - {name: a, command: x, depends: [b]}\n");
        const auto r = view.submitFile(path);
        QVERIFY(!r);
        QVERIFY2(r.error().message.contains(QStringLiteral("bad.yaml:2:")), qPrintable(r.error().message));
        QVERIFY2(r.error().message.contains(QStringLiteral("'b', which is not a step")), qPrintable(r.error().message));
    }
};

QTEST_MAIN(TestPipelinesView)
#include "TestPipelinesView.moc"
