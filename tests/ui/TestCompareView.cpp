// Compare view end to end: a real SQLite result store with two finished runs,
// selected in the main window's runs table, compared with the Compare action.
#include "charts/DecimatedChart.h"
#include "charts/M4Decimator.h"
#include "charts/RunColour.h"
#include "compare/CompareTableModel.h"
#include "compare/CompareView.h"
#include "mainwindow/MainWindow.h"
#include "runs/RunsModel.h"
#include "store/ResultStore.h"

#include <QAbstractItemModelTester>
#include <QChart>
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

RunId addRun(ResultStore& store, const QString& name, const QMap<QString, QString>& params, int accPoints,
             double lossScale)
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
        const double v = i == 150 ? std::numeric_limits<double>::quiet_NaN() : lossScale * 2.0 / (1.0 + i * 0.05) + 0.01 * (i % 7);
        points.append(MetricPoint{*id, QStringLiteral("loss"), i * 10, std::nullopt,
                                  1'700'000'000'000 + i * 1000 + (i % 3), v});
    }
    for (int i = 0; i < accPoints; ++i)
        points.append(MetricPoint{*id, QStringLiteral("val_acc"), i, std::nullopt, 1'700'000'000'000 + i * 100,
                                  0.9 - 0.5 / (1.0 + i * 0.01) + 0.02 * std::sin(i * 0.7)});
    store.appendMetrics(points);
    return *id;
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
                      {QStringLiteral("seed"), QStringLiteral("1")}, {QStringLiteral("warmup"), QStringLiteral("100")}},
                     3000, 1.5);
        QVERIFY(m_store->flush());
    }

    void cleanupTestCase() { m_store.reset(); }

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
                const M4Result expect = decimateM4(x, y, c->viewport());
                QCOMPARE(c->drawnPoints(i), expect.pointCount());
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
        QCOMPARE(params, (QStringList{QStringLiteral("batch"), QStringLiteral("lr"), QStringLiteral("seed"),
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
        QList<MetricPoint> expected = m_store->metrics(m_b, QStringLiteral("loss")) + m_store->metrics(m_a, QStringLiteral("loss"));
        QCOMPARE(lines.size() - 1, expected.size());
        for (int i = 0; i < expected.size(); ++i) {
            const QList<QByteArray> f5 = lines.at(i + 1).split(',');
            QCOMPARE(f5.size(), 5);
            const MetricPoint& p = expected.at(i);
            QCOMPARE(f5.at(0).toLongLong(), p.run);
            QCOMPARE(f5.at(2).toLongLong(), p.step);
            QCOMPARE(QDateTime::fromString(QString::fromUtf8(f5.at(3)), Qt::ISODateWithMs).toMSecsSinceEpoch(), p.wallTimeMs);
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
};

QTEST_MAIN(TestCompareView)
#include "TestCompareView.moc"
