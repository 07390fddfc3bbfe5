// Compare view end to end: a real SQLite result store with two finished runs,
// selected in the main window's runs table, compared with the Compare action.
#include "ui/charts/DecimatedChart.h"
#include "ui/charts/M4Decimator.h"
#include "ui/charts/RunColour.h"
#include "ui/compare/CompareTableModel.h"
#include "ui/compare/CompareView.h"
#include "ui/console/ConsoleView.h"
#include "ui/mainwindow/MainWindow.h"
#include "ui/runs/RunsModel.h"
#include "core/runs/LocalRunControl.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include <QAbstractItemModelTester>
#include <QCategoryAxis>
#include <QChart>
#include <QHeaderView>
#include <QLabel>
#include <QSettings>
#include <QXmlStreamReader>
#include <QAction>
#include <QFile>
#include <QIcon>
#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>

using namespace ty;

namespace {

constexpr int kLossPoints = 300;

RunId addRun(
        ResultStore& store, const QString& name, const QMap<QString, QString>& params, int accPoints, double lossScale)
{
    RunRecord r;
    r.name = name;
    r.state = RunState::Succeeded;
    r.node = QStringLiteral("local");
    r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
    r.startedAt = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000, Qt::UTC);
    r.finishedAt = r.startedAt.addSecs(600);
    auto id = store.createRun(r, params);
    if (!id)
        qFatal("%s", qPrintable(id.error().message));
    QList<MetricPoint> points;
    for (int i = 0; i < kLossPoints; ++i) {
        const double v = i == 150 ? std::numeric_limits<double>::quiet_NaN()
                                  : lossScale * 2.0 / (1.0 + i * 0.05) + 0.01 * (i % 7);
        points.append(MetricPoint{
                *id, QStringLiteral("loss"), i * 10, std::nullopt, 1'700'000'000'000 + i * 1000 + (i % 3), v});
    }
    for (int i = 0; i < accPoints; ++i)
        points.append(MetricPoint{*id, QStringLiteral("val_acc"), i, std::nullopt, 1'700'000'000'000 + i * 100,
                0.9 - 0.5 / (1.0 + i * 0.01) + 0.02 * std::sin(i * 0.7)});
    store.appendMetrics(points);
    return *id;
}

using Col = std::shared_ptr<const std::vector<double>>;

Col col(std::vector<double> v)
{
    return std::make_shared<const std::vector<double>>(std::move(v));
}

// One run for setData: `loss` over `n` steps (step i, 1 s apart), an epoch
// metric with `stepsPerEpoch` when > 0, params as given.
CompareRun syntheticRun(RunId id, const QString& name, int n, int stepsPerEpoch, double lossScale,
        const QMap<QString, QString>& params, double acc)
{
    CompareRun r;
    r.run.id = id;
    r.run.name = name;
    r.run.state = RunState::Succeeded;
    r.run.startedAt = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000, Qt::UTC);
    r.params = params;
    std::vector<double> step, wall, loss;
    for (int i = 0; i < n; ++i) {
        step.push_back(i);
        wall.push_back(1'700'000'000'000.0 + i * 1000.0);
        // 0, -0.5, -1 at the end: skipped on the log axis.
        loss.push_back(i >= n - 3 ? -0.5 * (i - n + 3) : lossScale / (1.0 + i * 0.05));
    }
    r.metrics.insert(QStringLiteral("loss"), MetricColumns{col(step), col(wall), col(loss)});
    r.summary.insert(QStringLiteral("loss"), summarise(step, loss, true));
    const std::vector<double> accStep{0, double(n - 1)}, accWall{wall.front(), wall.back()}, accV{acc / 2, acc};
    r.metrics.insert(QStringLiteral("val_acc"), MetricColumns{col(accStep), col(accWall), col(accV)});
    r.summary.insert(QStringLiteral("val_acc"), summarise(accStep, accV, false));
    if (stepsPerEpoch > 0) {
        std::vector<double> es, ew, ev;
        for (int i = 0; i < n; ++i) {
            es.push_back(i);
            ew.push_back(wall[std::size_t(i)]);
            ev.push_back(i / stepsPerEpoch);
        }
        r.metrics.insert(QStringLiteral("epoch"), MetricColumns{col(es), col(ew), col(ev)});
        r.summary.insert(QStringLiteral("epoch"), summarise(es, ev, false));
    }
    return r;
}

QStringList rowValues(CompareTableModel* model, CompareTableModel::RowKind kind, const QString& key)
{
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->headerData(r, Qt::Vertical, CompareTableModel::RowKindRole).toInt() == int(kind)
                && model->headerData(r, Qt::Vertical, CompareTableModel::RowKeyRole).toString() == key) {
            QStringList out;
            for (int c = 0; c < model->columnCount(); ++c)
                out << model->index(r, c).data().toString();
            return out;
        }
    return {};
}

int rowOf(CompareTableModel* model, CompareTableModel::RowKind kind, const QString& key)
{
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->headerData(r, Qt::Vertical, CompareTableModel::RowKindRole).toInt() == int(kind)
                && model->headerData(r, Qt::Vertical, CompareTableModel::RowKeyRole).toString() == key)
            return r;
    return -1;
}

QList<RunId> columnRuns(CompareTableModel* model)
{
    QList<RunId> out;
    for (int c = 0; c < model->columnCount(); ++c)
        out << model->headerData(c, Qt::Horizontal, CompareTableModel::RunIdRole).toLongLong();
    return out;
}

std::shared_ptr<CompareData> threeRuns()
{
    auto data = std::make_shared<CompareData>();
    data->runs << syntheticRun(11, QStringLiteral("lr-1e-3"), 400, 100, 2.0,
            {{QStringLiteral("lr"), QStringLiteral("1e-3")}, {QStringLiteral("opt"), QStringLiteral("run-10")}}, 0.91)
               << syntheticRun(12, QStringLiteral("lr-1e-2"), 300, 0, 1.0,
                          {{QStringLiteral("lr"), QStringLiteral("1e-2")},
                                  {QStringLiteral("opt"), QStringLiteral("run-2")}},
                          0.95)
               << syntheticRun(13, QStringLiteral("lr-1e-4"), 200, 50, 3.0,
                          {{QStringLiteral("lr"), QStringLiteral("1e-4")}}, 0.80);
    return data;
}

} // namespace

class TestCompareView : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ResultStore> m_store;
    RunId m_a = 0, m_b = 0;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
        m_a = addRun(*m_store, QStringLiteral("lr-0.01"),
                {{QStringLiteral("lr"), QStringLiteral("0.01")}, {QStringLiteral("batch"), QStringLiteral("64")},
                        {QStringLiteral("seed"), QStringLiteral("1")}},
                5000, 1.0);
        m_b = addRun(*m_store, QStringLiteral("lr-0.1"),
                {{QStringLiteral("lr"), QStringLiteral("0.1")}, {QStringLiteral("batch"), QStringLiteral("64")},
                        {QStringLiteral("seed"), QStringLiteral("1")},
                        {QStringLiteral("warmup"), QStringLiteral("100")}},
                3000, 1.5);
        QVERIFY(m_store->flush());
    }

    void cleanupTestCase() { m_store.reset(); }

    void epochAxisAndLogScale()
    {
        CompareView view(nullptr);
        view.resize(1400, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setData(threeRuns());
        DecimatedChart* loss = view.chart(QStringLiteral("loss"));
        QVERIFY(loss);
        QCOMPARE(loss->seriesCount(), 3);
        QVERIFY(view.notice().isEmpty());

        // Epoch: from each run's own epoch metric; run 12 has none.
        view.setXAxis(CompareView::XAxis::Epoch);
        loss = view.chart(QStringLiteral("loss"));
        QCOMPARE(loss->seriesCount(), 2);
        QCOMPARE(view.seriesRun(QStringLiteral("loss"), 0), RunId(11));
        QCOMPARE(view.seriesRun(QStringLiteral("loss"), 1), RunId(13));
        // 400 steps at 100 per epoch, 200 at 50: both end just before epoch 4.
        QCOMPARE(loss->fullXRange().first, 0.0);
        QCOMPARE(loss->fullXRange().second, 3.99);
        QVERIFY2(view.notice().contains(QStringLiteral("#12 lr-1e-2")), qPrintable(view.notice()));
        QVERIFY(!view.notice().contains(QStringLiteral("#11")));
        auto* notice = view.findChild<QLabel*>(QStringLiteral("compareNotice"));
        QVERIFY(notice && notice->isVisible());
        QVERIFY(loss->xAxisKind() == DecimatedChart::XAxisKind::Value);

        // Log y: the 3 values <= 0 at the end of each drawn run are skipped and counted.
        view.setYScale(DecimatedChart::YScale::Log);
        QCOMPARE(loss->skippedPoints(0), 3);
        QCOMPARE(loss->skippedPoints(1), 3);
        QVERIFY2(loss->noticeText().contains(QStringLiteral("6 values <= 0 skipped")), qPrintable(loss->noticeText()));
        QVERIFY(qobject_cast<QCategoryAxis*>(loss->chart()->axes(Qt::Vertical).first()));
        // Drawn in log10 space: every drawn y is log10 of a stored positive value.
        const auto segs = loss->drawnSegments(0);
        QVERIFY(!segs.isEmpty());
        QCOMPARE(segs.first().first().y(), std::log10(2.0));
        // Hiding a run drops its skipped values from the notice.
        view.setRunVisible(13, false);
        QVERIFY2(loss->noticeText().contains(QStringLiteral("3 values <= 0 skipped")), qPrintable(loss->noticeText()));
        view.setRunVisible(13, true);

        // Back to step: every run drawn again, the notice gone; log stays on.
        view.setXAxis(CompareView::XAxis::Step);
        QCOMPARE(view.chart(QStringLiteral("loss"))->seriesCount(), 3);
        QVERIFY(view.notice().isEmpty());
        QVERIFY(!notice->isVisible());
        QVERIFY(view.chart(QStringLiteral("loss"))->yScale() == DecimatedChart::YScale::Log);
        QVERIFY2(view.chart(QStringLiteral("loss"))->noticeText().contains(QStringLiteral("9 values")),
                qPrintable(view.chart(QStringLiteral("loss"))->noticeText()));
        // Wall time: stored UTC, shown in local time.
        view.setXAxis(CompareView::XAxis::WallTime);
        QCOMPARE(view.chart(QStringLiteral("loss"))->fullXRange().first, 1'700'000'000'000.0);

        // SVG export: valid XML, one stroked path per run in its colour.
        QTemporaryDir dir;
        const QString svgPath = dir.filePath(QStringLiteral("loss.svg"));
        view.setYScale(DecimatedChart::YScale::Linear);
        QTest::qWait(50); // the charts' geometry follows the last axis change on the next layout pass
        QVERIFY(view.exportChartSvg(QStringLiteral("loss"), svgPath));
        QFile f(svgPath);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&f);
        QSet<QString> strokes;
        int paths = 0;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement()) {
                if (xml.name() == u"path" || xml.name() == u"polyline")
                    ++paths;
                const QString stroke = xml.attributes().value(QStringLiteral("stroke")).toString().toLower();
                if (!stroke.isEmpty())
                    strokes.insert(stroke);
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(paths >= 3);
        for (RunId id : {RunId(11), RunId(12), RunId(13)})
            QVERIFY2(strokes.contains(runColour(id).name()), qPrintable(runColour(id).name()));
        QVERIFY(!view.exportChartSvg(QStringLiteral("no such key"), svgPath));
    }

    void sortRunsAndBestRule()
    {
        QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard")).remove(QStringLiteral("compare/bestRule"));
        CompareView view(nullptr);
        view.resize(1400, 800);
        view.show();
        CompareTableModel* model = view.tableModel();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.setData(threeRuns());
        QCOMPARE(columnRuns(model), (QList<RunId>{11, 12, 13}));

        // By a numeric param: 1e-4 < 1e-3 < 1e-2.
        view.sortRunsBy(rowOf(model, CompareTableModel::RowKind::Param, QStringLiteral("lr")), Qt::AscendingOrder);
        QCOMPARE(columnRuns(model), (QList<RunId>{13, 11, 12}));
        QCOMPARE(rowValues(model, CompareTableModel::RowKind::Param, QStringLiteral("lr")),
                (QStringList{QStringLiteral("1e-4"), QStringLiteral("1e-3"), QStringLiteral("1e-2")}));
        QCOMPARE(model->runAt(0), RunId(13));
        QVERIFY(model->headerData(model->sortRow(), Qt::Vertical).toString().endsWith(QStringLiteral("▲")));
        // Clicking the row header again: descending.
        auto* table = view.findChild<QTableView*>(QStringLiteral("compareTable"));
        QVERIFY(table);
        Q_EMIT table->verticalHeader()->sectionClicked(model->sortRow());
        QCOMPARE(columnRuns(model), (QList<RunId>{12, 11, 13}));
        QCOMPARE(model->sortOrder(), Qt::DescendingOrder);
        // Text in natural order, the run without the param last either way.
        const int opt = rowOf(model, CompareTableModel::RowKind::Param, QStringLiteral("opt"));
        view.sortRunsBy(opt, Qt::AscendingOrder);
        QCOMPARE(columnRuns(model), (QList<RunId>{12, 11, 13})); // run-2, run-10, (none)
        view.sortRunsBy(opt, Qt::DescendingOrder);
        QCOMPARE(columnRuns(model), (QList<RunId>{11, 12, 13}));
        // By a metric's best, at full precision; kept through "only differences".
        view.sortRunsBy(rowOf(model, CompareTableModel::RowKind::Best, QStringLiteral("val_acc")), Qt::DescendingOrder);
        QCOMPARE(columnRuns(model), (QList<RunId>{12, 11, 13}));
        view.setOnlyDifferences(true);
        QCOMPARE(columnRuns(model), (QList<RunId>{12, 11, 13}));
        view.setOnlyDifferences(false);
        // The table CSV follows the sorted order.
        QVERIFY(model->toCsv().startsWith(QStringLiteral("field,#12 lr-1e-2,#11 lr-1e-3,#13 lr-1e-4\n")));
        model->clearSort();
        QCOMPARE(columnRuns(model), (QList<RunId>{11, 12, 13}));

        // Best-of rule: loss is min by default ...
        QCOMPARE(CompareTableModel::bestRule(QStringLiteral("loss")), CompareTableModel::BestRule::Automatic);
        QStringList best = rowValues(model, CompareTableModel::RowKind::Best, QStringLiteral("loss"));
        QCOMPARE(best, (QStringList{QStringLiteral("-1"), QStringLiteral("-1"), QStringLiteral("-1")}));
        // ... overridden to max for this key: recomputed from the points and remembered.
        model->setBestRule(QStringLiteral("loss"), CompareTableModel::BestRule::Max);
        best = rowValues(model, CompareTableModel::RowKind::Best, QStringLiteral("loss"));
        QCOMPARE(best, (QStringList{QStringLiteral("2"), QStringLiteral("1"), QStringLiteral("3")}));
        QCOMPARE(rowValues(model, CompareTableModel::RowKind::BestStep, QStringLiteral("loss")),
                (QStringList{QStringLiteral("0"), QStringLiteral("0"), QStringLiteral("0")}));
        const int bestRow = rowOf(model, CompareTableModel::RowKind::Best, QStringLiteral("loss"));
        QVERIFY(model->headerData(bestRow, Qt::Vertical).toString().contains(QStringLiteral("max")));
        QCOMPARE(QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard"))
                         .value(QStringLiteral("compare/bestRule/loss"))
                         .toString(),
                QStringLiteral("max"));
        // A new table (another compare, another session) uses the stored rule.
        CompareTableModel other;
        other.setData(threeRuns());
        QCOMPARE(rowValues(&other, CompareTableModel::RowKind::Best, QStringLiteral("loss")), best);
        // Accuracy-like keys can be turned round too; keys with odd characters are stored safely.
        model->setBestRule(QStringLiteral("val_acc"), CompareTableModel::BestRule::Min);
        QCOMPARE(rowValues(model, CompareTableModel::RowKind::Best, QStringLiteral("val_acc")),
                (QStringList{QStringLiteral("0.455"), QStringLiteral("0.475"), QStringLiteral("0.4")}));
        model->setBestRule(QStringLiteral("train/loss x"), CompareTableModel::BestRule::Max);
        QCOMPARE(CompareTableModel::bestRule(QStringLiteral("train/loss x")), CompareTableModel::BestRule::Max);
        // Back to automatic: the override is gone.
        for (const QString& k : {QStringLiteral("loss"), QStringLiteral("val_acc"), QStringLiteral("train/loss x")})
            model->setBestRule(k, CompareTableModel::BestRule::Automatic);
        QVERIFY(!QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard"))
                         .contains(QStringLiteral("compare/bestRule/loss")));
        QCOMPARE(rowValues(model, CompareTableModel::RowKind::Best, QStringLiteral("loss")),
                (QStringList{QStringLiteral("-1"), QStringLiteral("-1"), QStringLiteral("-1")}));
        // Sorting by best uses the rule in force: a sort survives the rule change.
        view.sortRunsBy(rowOf(model, CompareTableModel::RowKind::Best, QStringLiteral("val_acc")), Qt::AscendingOrder);
        QCOMPARE(columnRuns(model), (QList<RunId>{13, 11, 12}));
        model->setBestRule(QStringLiteral("val_acc"), CompareTableModel::BestRule::Min);
        QCOMPARE(columnRuns(model), (QList<RunId>{13, 11, 12})); // 0.4 < 0.455 < 0.475
        model->setBestRule(QStringLiteral("val_acc"), CompareTableModel::BestRule::Automatic);
    }

    void consoleShowsTheRunColour()
    {
        // The console carries the run's colour, as the runs table and the charts do.
        ConsoleView console;
        console.resize(600, 300);
        console.show();
        auto* bar = console.findChild<QWidget*>(QStringLiteral("consoleRunColour"));
        QVERIFY(bar);
        QVERIFY(!bar->isVisible());
        console.setRun(12, QString(), false);
        QCOMPARE(console.runColourShown(), runColour(12));
        QVERIFY(bar->isVisible());
        QImage img(bar->size(), QImage::Format_ARGB32);
        bar->render(&img);
        QCOMPARE(img.pixelColor(bar->width() / 2, 1), runColour(12));
        console.setRun(13, QString(), false);
        QCOMPARE(console.runColourShown(), runColour(13));
        QVERIFY(runColour(12) != runColour(13));
        console.clear(QStringLiteral("nothing"));
        QVERIFY(!console.runColourShown().isValid());
        QVERIFY(!bar->isVisible());
    }

    void compareTwoRunsFromTheRunsTable()
    {
        MainWindow window(m_store.get(), nullptr);
        window.resize(1600, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_COMPARE(window.runsModel()->rowCount(), 2);

        // The run's colour is on its name cell in the runs table.
        const QModelIndex nameA = window.runsModel()->index(window.runsModel()->rowOf(m_a), RunsModel::Name);
        const QIcon icon = nameA.data(Qt::DecorationRole).value<QIcon>();
        QVERIFY(!icon.isNull());
        QCOMPARE(icon.pixmap(12, 12).toImage().pixelColor(5, 5), runColour(m_a));
        QVERIFY(runColour(m_a) != runColour(m_b));

        // Select both rows, then Compare (Ctrl+D).
        auto* table = window.findChild<QTableView*>(QStringLiteral("runsTable"));
        QVERIFY(table);
        table->selectAll();
        QCOMPARE(window.selectedRuns().size(), 2);
        QVERIFY(window.compareAction()->isEnabled());
        QCOMPARE(window.compareAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_D));
        CompareView* view = window.compareView();
        QAbstractItemModelTester tester(view->tableModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy loaded(view, &CompareView::loaded);
        window.compareAction()->trigger();
        QTRY_COMPARE(loaded.count(), 1);
        QVERIFY(view->isVisible());
        QCOMPARE(view->runs().size(), 2);

        // One chart per key, losses and accuracies first; both runs in each.
        QCOMPARE(view->keys(), (QStringList{QStringLiteral("loss"), QStringLiteral("val_acc")}));
        DecimatedChart* loss = view->chart(QStringLiteral("loss"));
        DecimatedChart* acc = view->chart(QStringLiteral("val_acc"));
        QVERIFY(loss && acc);
        QCOMPARE(loss->seriesCount(), 2);
        QCOMPARE(acc->seriesCount(), 2);
        QTRY_VERIFY(acc->viewport().pixelWidth > 100);
        QTest::qWait(50); // queued re-decimation after the last layout
        // Runs in table order (newest first), series in that order too.
        QCOMPARE(view->runs(), (QList<RunId>{m_b, m_a}));
        QCOMPARE(view->seriesRun(QStringLiteral("loss"), 0), m_b);
        const int seriesA = 1;

        // Expected counts, from the database's points, decimated for the chart's own viewport.
        for (DecimatedChart* c : {loss, acc}) {
            for (int i = 0; i < 2; ++i) {
                const RunId run = view->seriesRun(c->title(), i);
                const QList<MetricPoint> stored = m_store->metrics(run, c->title());
                std::vector<double> x, y;
                for (const MetricPoint& p : stored) {
                    x.push_back(double(p.step));
                    y.push_back(p.value);
                }
                QCOMPARE(c->totalPoints(i), qsizetype(stored.size()));
                // Retried: a late layout pass (a loaded machine) re-decimates for the final width.
                QTRY_COMPARE(c->drawnPoints(i), decimateM4(x, y, c->viewport()).pointCount());
                QVERIFY(c->drawnPoints(i) <= 4 * (qsizetype(c->viewport().pixelWidth) + 1) + 2);
            }
        }
        // 300 loss points on a few hundred pixels: every finite point drawn,
        // the NaN is a gap with a marker; the accuracy curves are decimated.
        QCOMPARE(loss->drawnPoints(0), kLossPoints - 1);
        QCOMPARE(loss->gapMarkers(0), 1);
        QVERIFY2(acc->drawnPoints(seriesA) < 5000 / 2, qPrintable(QString::number(acc->drawnPoints(seriesA))));
        // The y range covers both runs' finite values, nothing huge.
        QVERIFY(loss->yMax() >= 3.0 && loss->yMax() < 4.0);

        // Zoom one chart: the other follows, and both re-decimate for the new range.
        loss->zoomX(0.25, 1000);
        Q_EMIT loss->xRangeChanged(loss->xMin(), loss->xMax());
        QCOMPARE(acc->xMin(), loss->xMin());
        QCOMPARE(acc->xMax(), loss->xMax());

        // The table marks exactly the differing params: lr and warmup (missing in one).
        CompareTableModel* model = view->tableModel();
        QCOMPARE(model->columnCount(), 2);
        QStringList differing, params;
        for (int r = 0; r < model->rowCount(); ++r) {
            if (model->headerData(r, Qt::Vertical, CompareTableModel::RowKindRole).toInt()
                    != int(CompareTableModel::RowKind::Param))
                continue;
            const QString key = model->headerData(r, Qt::Vertical, CompareTableModel::RowKeyRole).toString();
            params << key;
            const bool differs = model->index(r, 0).data(CompareTableModel::DiffersRole).toBool();
            QCOMPARE(model->index(r, 1).data(Qt::BackgroundRole).isValid(), differs);
            if (differs)
                differing << key;
        }
        QCOMPARE(params,
                (QStringList{QStringLiteral("batch"), QStringLiteral("lr"), QStringLiteral("seed"),
                        QStringLiteral("warmup")}));
        QCOMPARE(differing, (QStringList{QStringLiteral("lr"), QStringLiteral("warmup")}));
        // Last / best / step of best: loss is lower-is-better.
        bool sawBest = false;
        for (int r = 0; r < model->rowCount(); ++r) {
            if (model->headerData(r, Qt::Vertical, CompareTableModel::RowKindRole).toInt()
                            == int(CompareTableModel::RowKind::BestStep)
                    && model->headerData(r, Qt::Vertical, CompareTableModel::RowKeyRole).toString() == u"loss") {
                // min over finite values: the last step's value is smallest but for the i%7 ripple.
                double best = 1e9;
                qint64 bestStep = -1;
                for (const MetricPoint& p : m_store->metrics(view->runs().at(0), QStringLiteral("loss")))
                    if (std::isfinite(p.value) && p.value < best) {
                        best = p.value;
                        bestStep = p.step;
                    }
                QCOMPARE(model->index(r, 0).data().toString(), QString::number(bestStep));
                sawBest = true;
            }
        }
        QVERIFY(sawBest);
        const int allRows = model->rowCount();
        view->setOnlyDifferences(true);
        QVERIFY(model->rowCount() < allRows);
        for (int r = 1; r < model->rowCount(); ++r)
            QVERIFY(model->index(r, 0).data(CompareTableModel::DiffersRole).toBool());
        view->setOnlyDifferences(false);
        QCOMPARE(model->rowCount(), allRows);

        // CSV of a chart: every stored point, equal to the database.
        const QString csvPath = m_dir.filePath(QStringLiteral("loss.csv"));
        QVERIFY(view->exportChartCsv(QStringLiteral("loss"), csvPath));
        QFile f(csvPath);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
        QCOMPARE(lines.first(), QByteArray("run_id,run_name,step,wall_time_utc,value"));
        QList<MetricPoint> expected
                = m_store->metrics(m_b, QStringLiteral("loss")) + m_store->metrics(m_a, QStringLiteral("loss"));
        QCOMPARE(lines.size() - 1, expected.size());
        for (int i = 0; i < expected.size(); ++i) {
            const QList<QByteArray> f5 = lines.at(i + 1).split(',');
            QCOMPARE(f5.size(), 5);
            const MetricPoint& p = expected.at(i);
            QCOMPARE(f5.at(0).toLongLong(), p.run);
            QCOMPARE(f5.at(2).toLongLong(), p.step);
            QCOMPARE(QDateTime::fromString(QString::fromUtf8(f5.at(3)), Qt::ISODateWithMs).toMSecsSinceEpoch(),
                    p.wallTimeMs);
            if (std::isnan(p.value))
                QCOMPARE(f5.at(4), QByteArray("nan"));
            else
                QCOMPARE(f5.at(4).toDouble(), p.value); // 17 digits: exact
        }
        // CSV of the table.
        const QString tablePath = m_dir.filePath(QStringLiteral("table.csv"));
        QVERIFY(view->exportTableCsv(tablePath));
        QFile t(tablePath);
        QVERIFY(t.open(QIODevice::ReadOnly));
        const QList<QByteArray> rows = t.readAll().trimmed().split('\n');
        QCOMPARE(rows.size(), allRows + 1);
        QVERIFY(rows.contains(QByteArray("lr,0.1,0.01")));
        QVERIFY(rows.contains(QByteArray("warmup,100,")));

        // Legend: hiding a run hides it in every chart and in the CSV.
        view->setRunVisible(m_a, false);
        QVERIFY(!loss->isSeriesVisible(seriesA));
        QVERIFY(acc->isSeriesVisible(1 - seriesA) && !acc->isSeriesVisible(seriesA));
        QCOMPARE(loss->drawnPoints(seriesA), 0);
        QVERIFY(!view->chartCsv(QStringLiteral("loss")).contains(QStringLiteral(",lr-0.01,")));
        view->setRunVisible(m_a, true);
        QVERIFY(loss->drawnPoints(seriesA) > 0);

        // Smoothing: the raw series is drawn behind the smoothed one.
        view->setSmoothing(0.6);
        QVERIFY(loss->drawnRawPoints(0) > 0);
        QCOMPARE(loss->smoothing(), 0.6);
        view->setSmoothing(0);
        QCOMPARE(loss->drawnRawPoints(0), 0);

        // Wall-time axis: same series, x in ms since the epoch.
        view->setXAxis(CompareView::XAxis::WallTime);
        QVERIFY(view->chart(QStringLiteral("loss"))->xAxisKind() == DecimatedChart::XAxisKind::DateTimeMs);
        QCOMPARE(view->chart(QStringLiteral("loss"))->seriesCount(), 2);
        QVERIFY(view->chart(QStringLiteral("loss"))->xMin() >= 1.6e12);
        view->setXAxis(CompareView::XAxis::RelativeTime);
        QCOMPARE(view->chart(QStringLiteral("loss"))->fullXRange().first, 0.0);

        QImage img(window.size(), QImage::Format_ARGB32);
        window.render(&img); // paints without crashing
    }

    // A comparison with a live run follows it: the points the engine sends
    // are read again from the database within a second, and what the user
    // set stays (a hidden run hidden, a zoomed chart's range).
    void liveRunsFollowInTheComparison()
    {
        RunRecord r;
        r.name = QStringLiteral("live");
        r.state = RunState::Running;
        r.node = QStringLiteral("local");
        r.startedAt = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000, Qt::UTC);
        const auto live = m_store->createRun(r, {});
        QVERIFY(live);
        const auto points = [&](int from, int to) {
            QList<MetricPoint> out;
            for (int i = from; i < to; ++i)
                out.append(MetricPoint{*live, QStringLiteral("loss"), i * 10, std::nullopt,
                        1'700'000'000'000 + i * 1000, 1.0 / (1 + i)});
            return out;
        };
        m_store->appendMetrics(points(0, 10));
        QVERIFY(m_store->flush());

        RunEngine engine(m_store.get(), m_store->location()); // no nodes: it only passes signals on
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.resize(1600, 900);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*live) >= 0);
        auto* table = window.findChild<QTableView*>(QStringLiteral("runsTable"));
        table->clearSelection();
        for (RunId id : {*live, m_a})
            table->selectionModel()->select(window.runsModel()->index(window.runsModel()->rowOf(id), 0),
                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
        CompareView* view = window.compareView();
        QSignalSpy loaded(view, &CompareView::loaded);
        window.compareAction()->trigger();
        QTRY_COMPARE(loaded.count(), 1);
        const auto liveLoss = [&] {
            for (const CompareRun& c : view->data()->runs)
                if (c.run.id == *live)
                    return c.metrics.value(QStringLiteral("loss")).size();
            return qsizetype(-1);
        };
        QCOMPARE(liveLoss(), 10);
        view->setRunVisible(m_a, false);
        DecimatedChart* loss = view->chart(QStringLiteral("loss"));
        loss->setXRange(0, 50); // the user zoomed in

        m_store->appendMetrics(points(10, 25));
        QVERIFY(m_store->flush());
        Q_EMIT engine.metricsReceived(*live, points(10, 25));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 2, 5000);
        QCOMPARE(liveLoss(), 25);
        QVERIFY(!view->isRunVisible(m_a));
        QCOMPARE(view->chart(QStringLiteral("loss")), loss); // the same chart, refilled
        QCOMPARE(loss->xMin(), 0.0);
        QCOMPARE(loss->xMax(), 50.0);
        // A run not in the comparison changes nothing.
        Q_EMIT engine.metricsReceived(m_b, {});
        QTest::qWait(1500);
        QCOMPARE(loaded.count(), 2);
        m_store->deleteRun(*live);
        QVERIFY(m_store->flush());
    }
};

QTEST_MAIN(TestCompareView)
#include "TestCompareView.moc"
