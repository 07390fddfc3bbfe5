// importMetricFile / detectMetricFileFormat, and the issue's cross-check: the
// Lightning CSVLogger and TensorBoardLogger files of the same run give the same
// train_loss, val_loss and val_acc series.
#include "ImporterTestUtil.h"
#include "tests/support/TestSupport.h"
#include "core/logs/importers/MetricFileImporter.h"

#include <QDir>
#include <QFile>
#include <QMap>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace ty;

namespace {

using test::byKey;

QString tfeventsPath()
{
    const QDir dir(test::fixturePath(QStringLiteral("gpu-workstation/frameworks/lightning-tensorboard")));
    const QStringList files = dir.entryList({QStringLiteral("events.out.tfevents.*")}, QDir::Files);
    return files.size() == 1 ? dir.filePath(files.first()) : QString();
}

} // namespace

class TestMetricFileImporter : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void csvAndTensorBoardAgree()
    {
        const QString csvPath
                = test::fixturePath(QStringLiteral("gpu-workstation/frameworks/lightning-csv/metrics.csv"));
        const QString tbPath = tfeventsPath();
        QVERIFY(!tbPath.isEmpty());
        const Result<MetricFileImport> csv = importMetricFile(csvPath);
        const Result<MetricFileImport> tb = importMetricFile(tbPath);
        QVERIFY2(csv.has_value(), csv ? "" : qPrintable(csv.error().message));
        QVERIFY2(tb.has_value(), tb ? "" : qPrintable(tb.error().message));
        QCOMPARE(csv->format, MetricFileFormat::Csv);
        QCOMPARE(tb->format, MetricFileFormat::TensorBoard);
        QVERIFY(csv->error.isEmpty() && tb->error.isEmpty());
        QVERIFY(csv->warnings.isEmpty() && tb->warnings.isEmpty());
        QCOMPARE(tb->bytesRead, QFileInfo(tbPath).size());
        // Lightning's log_hyperparams, as in its hparams.yaml (`hidden: 128`, `lr: 0.001`).
        QCOMPARE(tb->params, (QMap<QString, QString>{{"hidden", "128"}, {"lr", "0.001"}}));
        QVERIFY(csv->params.isEmpty());

        const auto c = byKey(csv->metrics);
        const auto t = byKey(tb->metrics);
        const QMap<QString, int> expectedCounts{{"train_loss", 27}, {"val_loss", 6}, {"val_acc", 6}};
        for (auto it = expectedCounts.begin(); it != expectedCounts.end(); ++it) {
            const QList<ImportedMetric>& cs = c[it.key()];
            const QList<ImportedMetric>& ts = t[it.key()];
            QCOMPARE(cs.size(), it.value());
            QCOMPARE(ts.size(), it.value());
            for (qsizetype i = 0; i < cs.size(); ++i) {
                QCOMPARE(ts[i].step, cs[i].step);
                // TensorBoard stores float32; the CSV prints the same float32 widened to double.
                QVERIFY2(std::abs(ts[i].value - cs[i].value) <= 1e-7 * std::abs(cs[i].value),
                        qPrintable(QStringLiteral("%1[%2]: %3 vs %4")
                                           .arg(it.key())
                                           .arg(i)
                                           .arg(ts[i].value, 0, 'g', 17)
                                           .arg(cs[i].value, 0, 'g', 17)));
                QCOMPARE(ts[i].epoch, cs[i].epoch);
                QVERIFY(ts[i].wallTimeMs.has_value());
                QVERIFY(!cs[i].wallTimeMs.has_value());
            }
        }
        // Values the float32 round-trip makes exactly equal here.
        QCOMPARE(t["val_loss"].last().value, c["val_loss"].last().value);
        QCOMPARE(c["val_loss"].last().value, 0.5566069483757019);
        QCOMPARE(c["train_loss"].last().step, 134);
        // The TensorBoard file has Lightning's hp_metric placeholder in addition; the CSV does not.
        QCOMPARE(t.keys(), (QStringList{"hp_metric", "train_loss", "val_acc", "val_loss"}));
        QCOMPARE(c.keys(), (QStringList{"train_loss", "val_acc", "val_loss"}));
    }

    void detection()
    {
        QCOMPARE(detectMetricFileFormat(QStringLiteral("/r/events.out.tfevents.1795990854.vm.564.0")),
                MetricFileFormat::TensorBoard);
        QCOMPARE(detectMetricFileFormat(QStringLiteral("out/checkpoint-20/trainer_state.json")),
                MetricFileFormat::TrainerState);
        QCOMPARE(detectMetricFileFormat(QStringLiteral("metrics.jsonl")), MetricFileFormat::JsonLines);
        QCOMPARE(detectMetricFileFormat(QStringLiteral("lightning_logs/version_0/metrics.csv")), MetricFileFormat::Csv);
        QCOMPARE(detectMetricFileFormat(QStringLiteral("log.txt"), "  {\"a\": 1}"), MetricFileFormat::JsonLines);
        QCOMPARE(detectMetricFileFormat(QStringLiteral("log.txt"), "hello"), MetricFileFormat::Unknown);
    }

    void filesOnDisk()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString missing = dir.filePath(QStringLiteral("nope.csv"));
        const Result<MetricFileImport> m = importMetricFile(missing);
        QVERIFY(!m);
        QVERIFY(m.error().message.startsWith(missing + QStringLiteral(": cannot open")));

        const QString unknown = dir.filePath(QStringLiteral("x.bin"));
        QFile f(unknown);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("\x01\x02");
        f.close();
        QVERIFY(!importMetricFile(unknown));

        // A cut event file: the valid prefix, plus where it stopped.
        const QByteArray tb = test::readFixture(QStringLiteral("gpu-workstation/frameworks/lightning-tensorboard/")
                + QFileInfo(tfeventsPath()).fileName());
        const QString cut = dir.filePath(QStringLiteral("events.out.tfevents.cut"));
        QFile cf(cut);
        QVERIFY(cf.open(QIODevice::WriteOnly));
        cf.write(tb.first(3000));
        cf.close();
        const Result<MetricFileImport> r = importMetricFile(cut);
        QVERIFY(r.has_value());
        QVERIFY(!r->metrics.isEmpty());
        QVERIFY(r->errorOffset > 2900 && r->errorOffset < 3000);
        QVERIFY2(r->error.startsWith(cut + QStringLiteral(": record ")), qPrintable(r->error));
        QVERIFY(r->error.contains(QStringLiteral("at byte offset %1: truncated").arg(r->errorOffset)));

        const QString hf = dir.filePath(QStringLiteral("trainer_state.json"));
        QFile hff(hf);
        QVERIFY(hff.open(QIODevice::WriteOnly));
        hff.write(R"({"log_history": [{"loss": 1.5, "step": 3, "epoch": 0.1}]})");
        hff.close();
        const Result<MetricFileImport> h = importMetricFile(hf);
        QVERIFY(h.has_value());
        QCOMPARE(h->format, MetricFileFormat::TrainerState);
        QCOMPARE(h->metrics, (QList<ImportedMetric>{{"loss", 3, 0.1, 1.5, std::nullopt}}));

        const QList<MetricPoint> pts = toMetricPoints(h->metrics, 7, 1000);
        QCOMPARE(pts.size(), 1);
        QCOMPARE(pts[0].run, 7);
        QCOMPARE(pts[0].wallTimeMs, 1000);
        QCOMPARE(pts[0].epoch, std::optional<double>(0.1));
    }
};

QTEST_GUILESS_MAIN(TestMetricFileImporter)
#include "TestMetricFileImporter.moc"
