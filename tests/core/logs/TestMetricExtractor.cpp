// MetricExtractor: every recogniser, every noise rule, and the real fixture
// logs fed through TerminalRenderer first (only committed lines count).
#include "tests/support/TestSupport.h"
#include "core/logs/MetricExtractor.h"
#include "core/logs/TerminalRenderer.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QHash>
#include <QMap>
#include <QRandomGenerator>
#include <QSet>
#include <QTest>

#include <cmath>

using namespace ty;

namespace {

struct Run {
    QList<ExtractedMetric> all;
    QStringList sourceLines; // the committed line each sample of `all` came from
    QMap<QString, QList<ExtractedMetric>> byKey;
};

Run extractFixture(const QString& name, int width = 0, bool gpuWorkstationLog = true)
{
    const QByteArray bytes
            = test::readFixture(gpuWorkstationLog ? QStringLiteral("gpu-workstation/logs/%1").arg(name) : name);
    TerminalRenderer renderer(width);
    MetricExtractor extractor;
    Run run;
    auto drain = [&] {
        for (const ConsoleLine& l : renderer.takeCommitted()) {
            const QList<ExtractedMetric> ms = extractor.extract(l.text);
            for (const ExtractedMetric& m : ms) {
                run.all.append(m);
                run.sourceLines.append(l.text);
                run.byKey[m.key].append(m);
            }
        }
    };
    // Feed in 4 KiB pieces like a live follower would.
    for (qsizetype pos = 0; pos < bytes.size(); pos += 4096) {
        renderer.feed(QByteArrayView(bytes).sliced(pos, std::min<qsizetype>(4096, bytes.size() - pos)));
        drain();
    }
    renderer.finish();
    drain();
    return run;
}

QList<double> values(const QList<ExtractedMetric>& ms)
{
    QList<double> out;
    for (const ExtractedMetric& m : ms)
        out.append(m.value);
    return out;
}

QList<qint64> steps(const QList<ExtractedMetric>& ms)
{
    QList<qint64> out;
    for (const ExtractedMetric& m : ms)
        out.append(m.step);
    return out;
}

// key -> value for one line, via a fresh extractor
QMap<QString, double> one(QStringView line)
{
    MetricExtractor x;
    QMap<QString, double> out;
    for (const ExtractedMetric& m : x.extract(line))
        out.insert(m.key, m.value);
    return out;
}

// 200 metric lines "step=N loss=0.00N", N = 1..200.
QByteArray metricLines()
{
    QByteArray b;
    for (int n = 1; n <= 200; ++n)
        b += "step=" + QByteArray::number(n) + " loss=" + QByteArray::number(n / 1000.0, 'f', 3) + "\n";
    return b;
}

// The steps of the loss samples the renderer + extractor find in `bytes`
// (fed in 4 KiB pieces, like extractFixture()), in order.
QList<qint64> lossSteps(const QByteArray& bytes, QStringList* rows = nullptr)
{
    TerminalRenderer renderer; // 64 live rows
    MetricExtractor extractor;
    QList<qint64> out;
    auto drain = [&] {
        for (const ConsoleLine& l : renderer.takeCommitted()) {
            if (rows)
                rows->append(l.text);
            for (const ExtractedMetric& m : extractor.extract(l.text)) {
                if (m.key == u"loss" && m.stepFromLine && qAbs(m.value - m.step / 1000.0) < 1e-9)
                    out.append(m.step);
            }
        }
    };
    for (qsizetype pos = 0; pos < bytes.size(); pos += 4096) {
        renderer.feed(QByteArrayView(bytes).sliced(pos, std::min<qsizetype>(4096, bytes.size() - pos)));
        drain();
    }
    renderer.finish();
    drain();
    return out;
}

QList<qint64> stepRange(qint64 from, qint64 to)
{
    QList<qint64> out;
    for (qint64 n = from; n <= to; ++n)
        out.append(n);
    return out;
}

} // namespace

class TestMetricExtractor : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // ------------------------------------------------------------ fixtures
    void plainTorch()
    {
        const Run run = extractFixture(QStringLiteral("plain_torch.log"));
        // Exactly the keys the file prints, with these counts.
        QCOMPARE(run.byKey.keys(),
                (QStringList{QStringLiteral("Accuracy"), QStringLiteral("Loss"), QStringLiteral("loss"),
                        QStringLiteral("val_acc"), QStringLiteral("val_accuracy"), QStringLiteral("val_loss")}));
        QCOMPARE(run.byKey.value(QStringLiteral("val_accuracy")).size(), 15);
        QCOMPARE(run.byKey.value(QStringLiteral("val_loss")).size(), 15);
        QCOMPARE(run.byKey.value(QStringLiteral("val_acc")).size(), 15);
        QCOMPARE(run.byKey.value(QStringLiteral("Loss")).size(), 15);
        QCOMPARE(run.byKey.value(QStringLiteral("Accuracy")).size(), 15);
        // loss: 34 committed bar rows ending in "step N loss X" (N = 10..340),
        // 15 final bar rows, 15 Keras lines, 15 JSON records.
        QCOMPARE(run.byKey.value(QStringLiteral("loss")).size(), 34 + 15 + 15 + 15);

        const QList<ExtractedMetric> va = run.byKey.value(QStringLiteral("val_accuracy"));
        QCOMPARE(va.first().value, 0.7639);
        QCOMPARE(va.last().value, 0.9528);
        QCOMPARE(values(va),
                (QList<double>{0.7639, 0.8639, 0.8583, 0.8972, 0.9000, 0.9167, 0.9167, 0.9306, 0.9306, 0.9361, 0.9444,
                        0.9444, 0.9472, 0.9500, 0.9528}));
        // The Keras lines name no step: each sits at the console's step, the
        // last `step N` a bar row named before it.
        const QList<qint64> consoleSteps{20, 40, 60, 90, 110, 130, 160, 180, 200, 230, 250, 270, 290, 320, 340};
        QCOMPARE(steps(va), consoleSteps);
        for (int i = 0; i < va.size(); ++i) {
            QVERIFY(!va.at(i).stepFromLine);
            QCOMPARE(va.at(i).epoch, std::optional<double>(i + 1)); // from "Epoch i/15 - ..."
        }
        QCOMPARE(run.byKey.value(QStringLiteral("val_loss")).first().value, 2.0085);
        QCOMPARE(run.byKey.value(QStringLiteral("val_loss")).last().value, 0.1962);

        // The 15 JSON records, recovered value for value: parse the raw file's
        // JSON lines independently and compare.
        QList<QJsonObject> records;
        for (const QByteArray& raw :
                test::readFixture(QStringLiteral("gpu-workstation/logs/plain_torch.log")).split('\n')) {
            if (raw.startsWith('{'))
                records.append(QJsonDocument::fromJson(raw).object());
        }
        QCOMPARE(records.size(), 15);
        const QList<ExtractedMetric> jsonAcc = run.byKey.value(QStringLiteral("val_acc"));
        QList<ExtractedMetric> jsonLoss;
        for (qsizetype i = 0; i < run.all.size(); ++i) {
            if (run.all.at(i).key == QLatin1String("loss") && run.sourceLines.at(i).startsWith(u'{'))
                jsonLoss.append(run.all.at(i));
        }
        QCOMPARE(jsonLoss.size(), 15);
        for (int i = 0; i < 15; ++i) {
            const QJsonObject& r = records.at(i);
            QCOMPARE(jsonAcc.at(i).step, r.value(u"step").toInteger());
            QVERIFY(jsonAcc.at(i).stepFromLine);
            QCOMPARE(jsonAcc.at(i).value, r.value(u"val_acc").toDouble());
            QCOMPARE(jsonAcc.at(i).epoch, std::optional<double>(r.value(u"epoch").toDouble()));
            QCOMPARE(jsonLoss.at(i).step, r.value(u"step").toInteger());
            QCOMPARE(jsonLoss.at(i).value, r.value(u"loss").toDouble());
        }
        QCOMPARE(jsonAcc.last().value, 0.952778);
        QCOMPARE(jsonAcc.last().step, 345);

        // Bar rows that tqdm.write() left behind carry "step N": the postfix
        // loss is recorded at that step, once per committed row.
        QList<qint64> barSteps;
        for (qsizetype i = 0; i < run.all.size(); ++i) {
            if (run.sourceLines.at(i).contains(u"it/s, loss=") && run.sourceLines.at(i).contains(u"]step ")) {
                QVERIFY(run.all.at(i).stepFromLine);
                barSteps.append(run.all.at(i).step);
            }
        }
        QCOMPARE(barSteps.size(), 34);
        QCOMPARE(barSteps.first(), 10);
        QCOMPARE(barSteps.last(), 340);
        QCOMPARE(run.byKey.value(QStringLiteral("loss")).first().value, 2.2119);

        // No key from timing noise, and every key looks like an identifier.
        for (const QString& key : run.byKey.keys()) {
            QVERIFY2(!key.contains(u"it/s") && !key.contains(u"s/it") && !key.contains(u'%') && !key.contains(u' '),
                    qPrintable(key));
        }
        // Keys never given a step on their lines take the console's step, as
        // val_accuracy (`loss` mixes the bar's "step N" and JSON steps: the
        // JSON record's step 23 follows the bar's step 20).
        for (const QString& key : {QStringLiteral("Loss"), QStringLiteral("Accuracy"), QStringLiteral("val_loss")})
            QCOMPARE(steps(run.byKey.value(key)), consoleSteps);
    }

    void digitsExampleSharesOneStepAxis()
    {
        // resources/examples/digits/train.py run for real (debian-cpu/README.md):
        // per epoch a tqdm bar with a `loss=` postfix (its last redraw is the
        // committed row), then `epoch=E step=S train_loss=...`. The bar's loss
        // has no step of its own: it takes the console's step (the previous
        // epoch line's), so both keys lie on the one step axis.
        const QByteArray raw = test::readFixture(QStringLiteral("debian-cpu/logs/digits_example.log"));
        QCOMPARE(raw.count("step="), 15);
        const Run run = extractFixture(QStringLiteral("debian-cpu/logs/digits_example.log"), 0, false);
        QCOMPARE(run.byKey.keys(),
                (QStringList{QStringLiteral("loss"), QStringLiteral("train_loss"), QStringLiteral("val_accuracy"),
                        QStringLiteral("val_loss")}));
        QList<qint64> epochSteps;
        for (qint64 e = 1; e <= 15; ++e)
            epochSteps.append(45 * e);
        for (const QString& key :
                {QStringLiteral("train_loss"), QStringLiteral("val_loss"), QStringLiteral("val_accuracy")})
            QCOMPARE(steps(run.byKey.value(key)), epochSteps);
        const QList<ExtractedMetric> loss = run.byKey.value(QStringLiteral("loss"));
        QCOMPARE(loss.size(), 15);
        QList<qint64> barSteps{0}; // epoch 1's bar comes before any step
        barSteps.append(epochSteps.mid(0, 14));
        QCOMPARE(steps(loss), barSteps);
        for (int i = 0; i < loss.size(); ++i) {
            QVERIFY(!loss.at(i).stepFromLine);
            QCOMPARE(loss.at(i).epoch, std::optional<double>(i + 1)); // "epoch 3/15: 100%|..."
        }
        QCOMPARE(loss.last().value, 0.056);
        QCOMPARE(run.byKey.value(QStringLiteral("val_accuracy")).last().value, 0.9667);
    }

    void whitespacePairs()
    {
        // `word number` pairs on a line that names a step or epoch in words;
        // two words make one key joined with `_`.
        QCOMPARE(one(u"step 10 loss 0.1160"), (QMap<QString, double>{{QStringLiteral("loss"), 0.1160}}));
        QCOMPARE(one(u"Epoch 3 | train loss 0.52 | val acc 0.81"),
                (QMap<QString, double>{{QStringLiteral("train_loss"), 0.52}, {QStringLiteral("val_acc"), 0.81}}));
        QCOMPARE(one(u"Epoch 3: train loss 0.52, val acc 81.5%"),
                (QMap<QString, double>{{QStringLiteral("train_loss"), 0.52}, {QStringLiteral("val_acc"), 81.5}}));
        QCOMPARE(one(u"step 20 loss 1.5e-3 lr 0.001"),
                (QMap<QString, double>{{QStringLiteral("loss"), 0.0015}, {QStringLiteral("lr"), 0.001}}));
        MetricExtractor x;
        const QList<ExtractedMetric> ms = x.extract(u"step 10 loss 0.1160");
        QCOMPARE(ms.size(), 1);
        QCOMPARE(ms.at(0).step, 10);
        QVERIFY(ms.at(0).stepFromLine);
        // A key after leading words, written as an identifier.
        QCOMPARE(one(u"final val_accuracy: 0.95"), (QMap<QString, double>{{QStringLiteral("val_accuracy"), 0.95}}));
        QCOMPARE(one(u"best model: val/loss: 0.31"), (QMap<QString, double>{{QStringLiteral("val/loss"), 0.31}}));
    }

    void proseIsNotAMetric_data()
    {
        QTest::addColumn<QString>("line");
        QTest::newRow("epoch of") << QStringLiteral("epoch 3 of 10");
        QTest::newRow("ckpt") << QStringLiteral("Saving model to ckpt 3");
        QTest::newRow("rank of") << QStringLiteral("rank 0 of 2 ready, epoch 1 of 2");
        QTest::newRow("took seconds") << QStringLiteral("Epoch 3 took 12.5 seconds");
        QTest::newRow("three words") << QStringLiteral("Epoch 3 the average loss was 0.52");
        QTest::newRow("no step word") << QStringLiteral("loss 0.52");
        QTest::newRow("phrase colon") << QStringLiteral("Modules in train mode: 4");
        QTest::newRow("phrase colon float") << QStringLiteral("Total estimated model params size: 0.5");
        QTest::newRow("units") << QStringLiteral("step 10 took 0.5s");
        QTest::newRow("fraction") << QStringLiteral("step 10 batch 0.5/3");
        QTest::newRow("version") << QStringLiteral("Epoch 1 torch 2.1 python 3.11");
    }
    void proseIsNotAMetric()
    {
        QFETCH(QString, line);
        QCOMPARE(one(line), (QMap<QString, double>{}));
    }

    void rankPrefixes()
    {
        MetricExtractor x;
        auto keyed = [&](QStringView line) {
            QMap<QString, QPair<qint64, double>> out;
            for (const ExtractedMetric& m : x.extract(line))
                out.insert(m.key, {m.step, m.value});
            return out;
        };
        using KV = QMap<QString, QPair<qint64, double>>;
        QCOMPARE(keyed(u"[rank 1] step 5 loss 0.888"), (KV{{QStringLiteral("loss[rank1]"), {5, 0.888}}}));
        QCOMPARE(keyed(u"[rank1]:step 6 loss 0.777"), (KV{{QStringLiteral("loss[rank1]"), {6, 0.777}}})); // torch 2.x
        QCOMPARE(keyed(u"[default0]:step=6 loss=0.5"), (KV{{QStringLiteral("loss[rank0]"), {6, 0.5}}}));  // torchrun
        // Each rank keeps its own step axis.
        QCOMPARE(keyed(u"[rank 0] acc=0.5"), (KV{{QStringLiteral("acc[rank0]"), {6, 0.5}}}));
        QCOMPARE(keyed(u"[rank 1]: acc=0.6"), (KV{{QStringLiteral("acc[rank1]"), {6, 0.6}}}));
        // Two ranks' writes on one line: each part is its rank's.
        QCOMPARE(keyed(u"[rank 0] step 9 loss 0.1808[rank 1] step 9 loss 0.1744"),
                (KV{{QStringLiteral("loss[rank0]"), {9, 0.1808}}, {QStringLiteral("loss[rank1]"), {9, 0.1744}}}));
        QCOMPARE(keyed(u"[default1]:[default0]:loss=0.25"),
                (KV{{QStringLiteral("loss[rank0]"), {9, 0.25}}})); // rank 0 is at step 9 now
        // Not markers: a bar's times, a list, torchrun's role without ':'.
        QCOMPARE(keyed(u"[default0] loss=0.5"), (KV{{QStringLiteral("loss"), {0, 0.5}}}));
        QCOMPARE(MetricExtractor::splitRankKey(QStringLiteral("loss[rank12]")),
                (std::optional<std::pair<QString, int>>{{QStringLiteral("loss"), 12}}));
        QCOMPARE(MetricExtractor::splitRankKey(QStringLiteral("loss")), (std::optional<std::pair<QString, int>>{}));
        QCOMPARE(MetricExtractor::splitRankKey(QStringLiteral("[rank1]")), (std::optional<std::pair<QString, int>>{}));
    }

    void torchrunGloo()
    {
        // Real torchrun (torch 1.13, gloo on the CPU, two processes,
        // `--redirects 1 --tee 1`): every line prefixed `[default<R>]:`.
        const Run run = extractFixture(QStringLiteral("debian-cpu/logs/torchrun_gloo.log"), 0, false);
        QCOMPARE(run.byKey.keys(),
                (QStringList{QStringLiteral("loss[rank0]"), QStringLiteral("loss[rank1]"),
                        QStringLiteral("train_loss[rank0]"), QStringLiteral("train_loss[rank1]"),
                        QStringLiteral("val_acc[rank0]"), QStringLiteral("val_acc[rank1]"),
                        QStringLiteral("val_accuracy[rank0]"), QStringLiteral("val_accuracy[rank1]")}));
        const QList<qint64> tenSteps{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        QCOMPARE(steps(run.byKey.value(QStringLiteral("loss[rank0]"))), tenSteps);
        QCOMPARE(steps(run.byKey.value(QStringLiteral("loss[rank1]"))), tenSteps);
        QCOMPARE(values(run.byKey.value(QStringLiteral("loss[rank0]"))).first(), 9.4586);
        QCOMPARE(values(run.byKey.value(QStringLiteral("loss[rank1]"))).first(), 8.1686);
        QCOMPARE(values(run.byKey.value(QStringLiteral("val_acc[rank1]"))), (QList<double>{0.61, 0.71}));
        QCOMPARE(steps(run.byKey.value(QStringLiteral("val_acc[rank1]"))),
                (QList<qint64>{5, 10})); // "Epoch 1 | ..." after step 5
        QCOMPARE(values(run.byKey.value(QStringLiteral("val_accuracy[rank0]"))), (QList<double>{0.70}));
    }

    void ranksSharingOneStdout()
    {
        // Two DDP processes writing to one file without a launcher: print()'s
        // text and newline are separate writes, so one rank's line often
        // continues with the other's (`...loss 0.1808[rank 1] step 99 ...`).
        const QByteArray raw = test::readFixture(QStringLiteral("debian-cpu/logs/ddp_rank_prefix_shared_stdout.log"));
        QVERIFY(raw.contains("[rank 0] step 99 loss 0.1808[rank 1] step 99 loss 0.1744\n"));
        const Run run = extractFixture(QStringLiteral("debian-cpu/logs/ddp_rank_prefix_shared_stdout.log"), 0, false);
        QCOMPARE(run.byKey.keys(),
                (QStringList{QStringLiteral("loss[rank0]"), QStringLiteral("loss[rank1]"),
                        QStringLiteral("train_loss[rank0]"), QStringLiteral("train_loss[rank1]"),
                        QStringLiteral("val_acc[rank0]"), QStringLiteral("val_acc[rank1]"),
                        QStringLiteral("val_accuracy[rank0]"), QStringLiteral("val_accuracy[rank1]")}));
        for (const QString& key : {QStringLiteral("loss[rank0]"), QStringLiteral("loss[rank1]")}) {
            const QList<ExtractedMetric> loss = run.byKey.value(key);
            QCOMPARE(loss.size(), 300);
            for (int i = 0; i < 300; ++i)
                QCOMPARE(loss.at(i).step, i + 1);
        }
        const QList<ExtractedMetric> r0 = run.byKey.value(QStringLiteral("loss[rank0]"));
        const QList<ExtractedMetric> r1 = run.byKey.value(QStringLiteral("loss[rank1]"));
        QCOMPARE(r0.at(98).value, 0.1808);
        QCOMPARE(r1.at(98).value, 0.1744);
        QCOMPARE(values(run.byKey.value(QStringLiteral("val_acc[rank0]"))), (QList<double>{0.60, 0.70}));
        QCOMPARE(values(run.byKey.value(QStringLiteral("val_acc[rank1]"))), (QList<double>{0.61, 0.71}));
    }

    void plainTorchWrappedAt80()
    {
        // At width 80 the long rows wrap; the metric lines are shorter than 80
        // columns, so the Keras and JSON series are identical.
        const Run run = extractFixture(QStringLiteral("plain_torch.log"), 80);
        QCOMPARE(run.byKey.value(QStringLiteral("val_accuracy")).size(), 15);
        QCOMPARE(run.byKey.value(QStringLiteral("val_accuracy")).last().value, 0.9528);
        QCOMPARE(run.byKey.value(QStringLiteral("val_acc")).size(), 15);
    }

    void lightningRich()
    {
        // Rich's progress bar: the file holds only its final state; the
        // metrics are the rows below "Epoch 5/5 ... v_num: 0".
        const Run run = extractFixture(QStringLiteral("lightning_run.log"));
        QCOMPARE(run.byKey.keys(),
                (QStringList{QStringLiteral("train_loss"), QStringLiteral("val_acc"), QStringLiteral("val_loss")}));
        QCOMPARE(values(run.byKey.value(QStringLiteral("train_loss"))), QList<double>{0.630});
        QCOMPARE(values(run.byKey.value(QStringLiteral("val_loss"))), QList<double>{0.557});
        QCOMPARE(values(run.byKey.value(QStringLiteral("val_acc"))), QList<double>{0.906});
        // The model summary (params, FLOPs, modules in train mode) and
        // LOCAL_RANK / v_num are not metrics.
        QCOMPARE(run.all.size(), 3);
    }

    void lightningTqdm()
    {
        // The raw file redraws the bar ~200 times with a train_loss postfix
        // (values 2.300 ... 0.865) and val_acc from epoch 0 on; every epoch's
        // bar reuses the same row, so a terminal ends up showing that row
        // twice (tqdm's final refresh after "`Trainer.fit` stopped").
        const QByteArray raw = test::readFixture(QStringLiteral("gpu-workstation/logs/lightning_tqdm.log"));
        QVERIFY(raw.count("train_loss=") > 100);
        QCOMPARE(raw.count("val_loss"), 0); // this run does not show val_loss in its bar
        const Run run = extractFixture(QStringLiteral("lightning_tqdm.log"));
        QCOMPARE(run.byKey.keys(), (QStringList{QStringLiteral("train_loss"), QStringLiteral("val_acc")}));
        QCOMPARE(values(run.byKey.value(QStringLiteral("train_loss"))), (QList<double>{0.865, 0.865}));
        QCOMPARE(values(run.byKey.value(QStringLiteral("val_acc"))), (QList<double>{0.883, 0.883}));
        QCOMPARE(steps(run.byKey.value(QStringLiteral("train_loss"))), (QList<qint64>{0, 1}));
        QCOMPARE(run.byKey.value(QStringLiteral("train_loss")).first().epoch, std::optional<double>(3));
    }

    void nestedTqdm()
    {
        const Run run = extractFixture(QStringLiteral("nested_tqdm.log"));
        QCOMPARE(run.byKey.keys(), (QStringList{QStringLiteral("acc"), QStringLiteral("loss")}));
        QCOMPARE(values(run.byKey.value(QStringLiteral("loss"))), (QList<double>{1.0, 0.5, 0.3333}));
        QCOMPARE(values(run.byKey.value(QStringLiteral("acc"))), (QList<double>{0.5, 0.6, 0.7}));
        const QList<ExtractedMetric> loss = run.byKey.value(QStringLiteral("loss"));
        for (int i = 0; i < 3; ++i)
            QCOMPARE(loss.at(i).epoch, std::optional<double>(i));
    }

    void oomMidrun()
    {
        const Run run = extractFixture(QStringLiteral("oom_midrun.log"));
        QCOMPARE(run.byKey.keys(), (QStringList{QStringLiteral("allocated_gib"), QStringLiteral("loss")}));
        const QList<ExtractedMetric> loss = run.byKey.value(QStringLiteral("loss"));
        const QList<ExtractedMetric> gib = run.byKey.value(QStringLiteral("allocated_gib"));
        QCOMPARE(loss.size(), 17);
        QCOMPARE(gib.size(), 17);
        for (int i = 0; i < 17; ++i) {
            QCOMPARE(loss.at(i).step, i + 1); // "step N" on the line
            QVERIFY(loss.at(i).stepFromLine);
            QCOMPARE(gib.at(i).value, 8.0 * (i + 1));
        }
        QCOMPARE(loss.first().value, 1.0);
        QCOMPARE(loss.last().value, 0.0588);
        // The traceback and the OOM message add nothing (GiB sizes, line numbers).
        QCOMPARE(run.all.size(), 34);
        QCOMPARE(extractFixture(QStringLiteral("oom.log")).all.size(), 0);
    }

    // ------------------------------------------------------------ recognisers
    void keyEqualsValue()
    {
        QCOMPARE(one(u"loss=0.5 acc=0.91 lr=1e-3"),
                (QMap<QString, double>{
                        {QStringLiteral("loss"), 0.5}, {QStringLiteral("acc"), 0.91}, {QStringLiteral("lr"), 1e-3}}));
        QCOMPARE(one(u"Epoch 1: Loss = 2.0545, Accuracy = 0.7639"),
                (QMap<QString, double>{{QStringLiteral("Loss"), 2.0545}, {QStringLiteral("Accuracy"), 0.7639}}));
        QCOMPARE(one(u"train/loss=0.25, val.top-1=0.75; grad_norm=-.5"),
                (QMap<QString, double>{{QStringLiteral("train/loss"), 0.25}, {QStringLiteral("val.top-1"), 0.75},
                        {QStringLiteral("grad_norm"), -0.5}}));
    }

    // A remark in parentheses after `key=value` does not make the value part
    // of something else; after `key: value` it still does (`device: 0 (GPU)`).
    void remarkAfterAPair()
    {
        QCOMPARE(one(u"step=4 loss=0.6 (12.3 it/s)"), (QMap<QString, double>{{QStringLiteral("loss"), 0.6}}));
        QCOMPARE(one(u"val_acc=0.75 (best) lr=0.01"),
                (QMap<QString, double>{{QStringLiteral("val_acc"), 0.75}, {QStringLiteral("lr"), 0.01}}));
        QVERIFY(one(u"Using device: 0 (NVIDIA H200)").isEmpty());
        QVERIFY(one(u"loss=0.6(12.3)").isEmpty()); // glued: not a remark
    }

    // The separator check reads eight characters at a time: a pair is found
    // with its '=' or ':' at every position of the blocks and of the tail.
    void separatorAtEveryPosition()
    {
        for (int pad = 0; pad < 40; ++pad) {
            const QString lead(pad, u'x');
            QCOMPARE(one(QString(lead + QStringLiteral(" loss=0.5"))),
                    (QMap<QString, double>{{QStringLiteral("loss"), 0.5}}));
            QCOMPARE(one(QString(lead + QStringLiteral(" - loss: 0.5 - acc: 0.25"))),
                    (QMap<QString, double>{{QStringLiteral("loss"), 0.5}, {QStringLiteral("acc"), 0.25}}));
            QVERIFY(one(QString(lead + QStringLiteral(" loss 0.5 ") + lead)).isEmpty());
        }
    }

    void keyColonValue()
    {
        QCOMPARE(one(u"loss: 0.31 acc: 0.91"),
                (QMap<QString, double>{{QStringLiteral("loss"), 0.31}, {QStringLiteral("acc"), 0.91}}));
        QCOMPARE(one(u"32/32 [==============================] - 1s 10ms/step - loss: 0.31 - acc: 0.91"),
                (QMap<QString, double>{{QStringLiteral("loss"), 0.31}, {QStringLiteral("acc"), 0.91}}));
        MetricExtractor x;
        const QList<ExtractedMetric> ms = x.extract(u"Epoch 3/15 - loss: 0.31 - val_loss: 0.40");
        QCOMPARE(ms.size(), 2);
        QCOMPARE(ms.at(0).key, QStringLiteral("loss"));
        QCOMPARE(ms.at(0).epoch, std::optional<double>(3));
        QCOMPARE(ms.at(1).epoch, std::optional<double>(3));
    }

    void jsonLines()
    {
        MetricExtractor x;
        const QList<ExtractedMetric> ms = x.extract(
                u"{\"epoch\": 2, \"step\": 46, \"loss\": 1.64591, \"val\": {\"acc\": 0.86}, \"name\": \"mlp\", \"ok\": true}");
        QCOMPARE(ms.size(), 2);
        QCOMPARE(ms.at(0).key, QStringLiteral("loss"));
        QCOMPARE(ms.at(0).step, 46);
        QVERIFY(ms.at(0).stepFromLine);
        QCOMPARE(ms.at(0).epoch, std::optional<double>(2));
        QCOMPARE(ms.at(1).key, QStringLiteral("val.acc"));
        QCOMPARE(ms.at(1).value, 0.86);
        // Python's json.dumps writes NaN / Infinity
        const QList<ExtractedMetric> nanInf = x.extract(u"{\"loss\": NaN, \"grad\": -Infinity, \"global_step\": 7}");
        QCOMPARE(nanInf.size(), 2);
        QVERIFY(std::isnan(nanInf.at(0).value));
        QCOMPARE(nanInf.at(1).value, -std::numeric_limits<double>::infinity());
        QCOMPARE(nanInf.at(1).step, 7);
        // Hyperparameters printed as JSON are not metrics.
        const QList<ExtractedMetric> cfg = x.extract(
                u"{\"params\": {\"lr\": 0.001, \"batch_size\": 32}, \"hparams\": {\"d\": 1}, \"score\": 3}");
        QCOMPARE(cfg.size(), 1);
        QCOMPARE(cfg.at(0).key, QStringLiteral("score"));
    }

    void pythonDictLines()
    {
        MetricExtractor x;
        const QList<ExtractedMetric> ms
                = x.extract(u"{'loss': '0.6926', 'grad_norm': 1.25, 'learning_rate': 4.9e-05, 'epoch': '0.16'}");
        QCOMPARE(ms.size(), 3);
        QCOMPARE(ms.at(0).key, QStringLiteral("loss"));
        QCOMPARE(ms.at(0).value, 0.6926);
        QCOMPARE(ms.at(1).value, 1.25);
        QCOMPARE(ms.at(2).key, QStringLiteral("learning_rate"));
        QCOMPARE(ms.at(2).value, 4.9e-05);
        for (const ExtractedMetric& m : ms)
            QCOMPARE(m.epoch, std::optional<double>(0.16));
        // after a tqdm bar on the same row (HF Trainer under a pty)
        const QList<ExtractedMetric> ms2
                = x.extract(u" 10%|\u2588         | 50/500 [00:05<00:45, 9.9it/s]{'loss': 0.5, 'epoch': 0.3}");
        QCOMPARE(ms2.size(), 1);
        QCOMPARE(ms2.at(0).value, 0.5);
        QCOMPARE(ms2.at(0).step, 1); // per-key counter continues
    }

    void valueFormats_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("expected");
        QTest::newRow("exp") << QStringLiteral("1e-3") << 1e-3;
        QTest::newRow("EXP+") << QStringLiteral("2.5E+2") << 250.0;
        QTest::newRow("leading-dot") << QStringLiteral("-.5") << -0.5;
        QTest::newRow("underscore") << QStringLiteral("1_000") << 1000.0;
        QTest::newRow("trailing-dot") << QStringLiteral("3.") << 3.0;
        QTest::newRow("plus") << QStringLiteral("+0.25") << 0.25;
        QTest::newRow("inf") << QStringLiteral("inf") << std::numeric_limits<double>::infinity();
        QTest::newRow("-inf") << QStringLiteral("-inf") << -std::numeric_limits<double>::infinity();
        QTest::newRow("Infinity") << QStringLiteral("Infinity") << std::numeric_limits<double>::infinity();
        QTest::newRow("tensor") << QStringLiteral("tensor(0.53)") << 0.53;
        QTest::newRow("tensor-device") << QStringLiteral("tensor(0.5300, device='cuda:0', grad_fn=<NllLossBackward0>)")
                                       << 0.53;
        QTest::newRow("np.float32") << QStringLiteral("np.float32(0.1)") << 0.1;
        QTest::newRow("np.float64") << QStringLiteral("np.float64(-2.5e-4)") << -2.5e-4;
        QTest::newRow("percent") << QStringLiteral("95.3%") << 95.3;
        QTest::newRow("overflow") << QStringLiteral("1e999") << std::numeric_limits<double>::infinity();
    }

    void valueFormats()
    {
        QFETCH(QString, text);
        QFETCH(double, expected);
        QCOMPARE(MetricExtractor::parseValue(text), std::optional<double>(expected));
        // and inside a line
        MetricExtractor x;
        const QList<ExtractedMetric> ms
                = x.extract(QString(QStringLiteral("metric=") + text + QStringLiteral(" other=1")));
        QCOMPARE(ms.size(), 2);
        QCOMPARE(ms.at(0).value, expected);
    }

    void nanIsKept()
    {
        MetricExtractor x;
        const QList<ExtractedMetric> ms = x.extract(u"loss: nan - acc: NaN");
        QCOMPARE(ms.size(), 2);
        QVERIFY(std::isnan(ms.at(0).value));
        QVERIFY(std::isnan(ms.at(1).value));
        QVERIFY(!MetricExtractor::parseValue(u"banana"));
        QVERIFY(!MetricExtractor::parseValue(u"1.2.3"));
    }

    void percentages()
    {
        MetricExtractor x;
        const QList<ExtractedMetric> ms = x.extract(u"val_acc: 95.3% - top5: 99%");
        QCOMPARE(ms.size(), 2);
        QCOMPARE(ms.at(0).value, 95.3);
        QVERIFY(ms.at(0).percent);
        QCOMPARE(ms.at(1).value, 99.0);
    }

    void stepsAndEpochs()
    {
        MetricExtractor x;
        QList<ExtractedMetric> ms = x.extract(u"step=100 loss=0.5");
        QCOMPARE(ms.size(), 1);
        QCOMPARE(ms.at(0).step, 100);
        ms = x.extract(u"global_step: 200 - loss: 0.4");
        QCOMPARE(ms.at(0).step, 200);
        ms = x.extract(u"Iter [300/1000] loss=0.3");
        QCOMPARE(ms.at(0).step, 300);
        ms = x.extract(u"iteration 400: loss=0.2");
        QCOMPARE(ms.at(0).step, 400);
        ms = x.extract(u"loss=0.1"); // no step: the console's step, the last one named
        QCOMPARE(ms.at(0).step, 400);
        QVERIFY(!ms.at(0).stepFromLine);
        ms = x.extract(u"acc=0.9"); // a new key too
        QCOMPARE(ms.at(0).step, 400);
        // Until a line names a step, each key counts its own samples.
        MetricExtractor counting;
        QCOMPARE(counting.extract(u"acc=0.9").at(0).step, 0);
        QCOMPARE(counting.extract(u"acc=0.95").at(0).step, 1);
        QCOMPARE(counting.extract(u"loss=0.95").at(0).step, 0);
        QCOMPARE(counting.extract(u"{\"step\": 7}").size(), 0); // a step alone moves the axis
        QCOMPARE(counting.extract(u"acc=0.96").at(0).step, 7);
        // epoch alone is not a metric
        QVERIFY(x.extract(u"epoch=3").isEmpty());
        QVERIFY(x.extract(u"Epoch 3/15").isEmpty());
        QVERIFY(x.extract(u"step: 12").isEmpty());
    }

    // Every step/epoch word, in every case, at every position of lines short
    // and long (the words' SSE2 pre-check reads sixteen units a step and ends
    // on the line's last eighteen; lines under 18 units are checked one unit
    // at a time: a word in any lane, in that tail or on a short line counts).
    void stepAndEpochWordsAtEveryPosition()
    {
        const struct {
            QString word;
            bool epoch;
        } words[] = {{QStringLiteral("step"), false}, {QStringLiteral("STEP"), false},
                {QStringLiteral("Global_Step:"), false}, {QStringLiteral("iter"), false},
                {QStringLiteral("ITERATION"), false}, {QStringLiteral("Epoch"), true}, {QStringLiteral("ePOCH"), true}};
        for (const auto& w : words) {
            for (int pad = 0; pad < 24; ++pad) {
                const QString lead(pad, u'x');
                const QStringList lines{QString(lead + u' ' + w.word + u" 42 loss=0.5"), // the word after `pad` units
                        QString(QStringLiteral("loss=0.5 (") + lead + u' ' + w.word
                                + u" 42)"),                                 // the word ending the line
                        QString(w.word + u" 42 loss=0.5 (" + lead + u')')}; // the word first
                for (const QString& line : lines) {
                    MetricExtractor x;
                    const QList<ExtractedMetric> ms = x.extract(line);
                    QString got;
                    for (const ExtractedMetric& m : ms)
                        got += QStringLiteral(" %1=%2@%3/%4").arg(m.key).arg(m.value).arg(m.step).arg(m.stepFromLine);
                    QVERIFY2(ms.size() == 1, qPrintable(line + u" ->" + got));
                    QCOMPARE(ms.at(0).key, QStringLiteral("loss"));
                    if (w.epoch) {
                        QVERIFY2(ms.at(0).epoch == std::optional<double>(42), qPrintable(line));
                        QVERIFY2(!ms.at(0).stepFromLine, qPrintable(line));
                    } else {
                        QVERIFY2(ms.at(0).stepFromLine && ms.at(0).step == 42, qPrintable(line));
                    }
                }
            }
        }
        for (const QString& line : {QStringLiteral("step 4 loss=5"), QStringLiteral("Iter 4: loss=5"),
                     QStringLiteral("loss=5 (STEP 4)")}) {
            MetricExtractor x;
            const QList<ExtractedMetric> ms = x.extract(line);
            QVERIFY2(ms.size() == 1 && ms.at(0).stepFromLine && ms.at(0).step == 4, qPrintable(line));
        }
        MetricExtractor e;
        QVERIFY(e.extract(u"epoch 4 loss=5").value(0).epoch == std::optional<double>(4));
        // The words' letters apart or in other words name nothing.
        MetricExtractor x;
        const QStringList none{QStringLiteral("ste p 42 loss=0.5"), QStringLiteral("steps 42 loss=0.5"),
                QStringLiteral("interstep 42 loss=0.5"), QStringLiteral("epo ch 42 loss=0.5")};
        for (const QString& line : none)
            QVERIFY2(!x.extract(line).value(0).stepFromLine && !x.extract(line).value(0).epoch, qPrintable(line));
    }

    void customRules()
    {
        MetricExtractor x({MetricRule{QStringLiteral("throughput"),
                                   QRegularExpression(QStringLiteral(R"(processed (?<value>[\d.]+) samples)"))},
                MetricRule{QString(),
                        QRegularExpression(QStringLiteral(R"(\[(?<step>\d+)\] (?<key>\w+) is (?<value>\S+))"))}});
        QList<ExtractedMetric> ms = x.extract(u"processed 1234.5 samples");
        QCOMPARE(ms.size(), 1);
        QCOMPARE(ms.at(0).key, QStringLiteral("throughput"));
        QCOMPARE(ms.at(0).value, 1234.5);
        ms = x.extract(u"[42] perplexity is 12.5");
        QCOMPARE(ms.size(), 1);
        QCOMPARE(ms.at(0).key, QStringLiteral("perplexity"));
        QCOMPARE(ms.at(0).step, 42);
        QVERIFY(ms.at(0).stepFromLine);
    }

    // ------------------------------------------------------------ noise
    void noise_data()
    {
        QTest::addColumn<QString>("line");
        QTest::newRow("tqdm") << QStringLiteral("Epoch 1/15:   4%|\u258d         | 1/23 [00:00<00:07,  2.82it/s]");
        QTest::newRow("tqdm-s/it") << QStringLiteral(
                "train: 45%|\u2588\u2588\u2588\u2588      | 45/100 [01:02<01:10,  1.28s/it]");
        QTest::newRow("rate-key") << QStringLiteral("speed: 2.82it/s eta: 3s");
        QTest::newRow("timestamp") << QStringLiteral("2026-01-02 10:11:12,345 - INFO - starting");
        QTest::newRow("time=") << QStringLiteral("time=10:11:12 date=2026-01-02");
        QTest::newRow("file:line") << QStringLiteral(
                "/opt/x/lib/python3.12/site-packages/torch/utils.py:21: UserWarning: foo");
        QTest::newRow("file.py:line") << QStringLiteral("warn at utils.py:21 in module");
        QTest::newRow("version") << QStringLiteral("version: 2.11.0 torch==2.11.0 python=3.11 cuda_version: 13");
        QTest::newRow("log-level") << QStringLiteral("INFO:root:starting epoch");
        QTest::newRow("fraction") << QStringLiteral("step: 12/100 batch: 3/40");
        QTest::newRow("phrase") << QStringLiteral("Modules in train mode: 4");
        QTest::newRow("unit-word") << QStringLiteral("TPU available: False, using: 0 TPU cores");
        QTest::newRow("params-K") << QStringLiteral("Trainable params: 9.6 K");
        QTest::newRow("v_num") << QStringLiteral(
                "Epoch 5/5 \u2501\u2501\u2501 23/23 0:00:00 \u2022 0:00:00 335.05it/s v_num: 0");
        QTest::newRow("local-rank") << QStringLiteral("LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]");
        QTest::newRow("url") << QStringLiteral("see https://example.com:8080/path?x=1.5.6");
        QTest::newRow("memory") << QStringLiteral(
                "Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 139.80 GiB");
        QTest::newRow("long-key") << QString(QString(80, u'k') + QStringLiteral("=1"));
        QTest::newRow("digit-key") << QStringLiteral("3d=0.5 9:30");
        QTest::newRow("backquoted") << QStringLiteral("to `num_workers=15` in the `DataLoader`");
        QTest::newRow("eta") << QStringLiteral("32/100 [=====>........] - ETA: 3s");
    }

    void noise()
    {
        QFETCH(QString, line);
        MetricExtractor x;
        const QList<ExtractedMetric> ms = x.extract(line);
        QString got;
        for (const ExtractedMetric& m : ms)
            got += m.key + u'=' + QString::number(m.value) + u' ';
        QVERIFY2(ms.isEmpty(), qPrintable(got));
    }

    // ------------------------------------------------------------ stray escapes
    void strayIntroducerCostsOnlyItsLine_data()
    {
        QTest::addColumn<QByteArray>("introducer");
        for (const auto& [name, bytes] : test::strayStringIntroducers())
            QTest::newRow(name) << bytes;
    }

    void strayIntroducerCostsOnlyItsLine()
    {
        // An unterminated string introducer in the middle of a line: the rest
        // of that line is the string (tmux would keep swallowing until ST, or
        // for 5 s); every one of the 200 metric lines after it is extracted.
        QFETCH(QByteArray, introducer);
        const QByteArray bytes = "epoch 0 starting " + introducer + "garbage=1 loss=9\n" + metricLines();
        QCOMPARE(lossSteps(bytes), stepRange(1, 200));
        // The same with the introducer as the line's last bytes.
        QCOMPARE(lossSteps("epoch 0 starting " + introducer + "\n" + metricLines()), stepRange(1, 200));
    }

    void randomBytesCostAtMostTheNextLine()
    {
        // Seeded random bytes leave the parser in any state: inside a string
        // (ended by the next line feed), an escape or a CSI (ended by the
        // next final byte: at worst the first character of the next line),
        // half a UTF-8 sequence; and the cursor anywhere on the 64-row live
        // screen, with garbage rows below it. So only the first line after
        // them can lose text, and the next lines are written from column 0
        // over the garbage rows left under the cursor, as a terminal writes
        // them (what is left of a longer garbage row can spoil a value): at
        // most 1 + 63 lines, so from the 65th on every one is extracted.
        // After CAN, LF and ESC[J (parser in the ground state, nothing below
        // the cursor) every line is.
        int damaged = 0;
        int minFound = 200;
        for (quint32 seed = 0; seed <= 150; ++seed) {
            QRandomGenerator rng(seed);
            QByteArray noise(seed == 0 ? 20 * 1000 * 1000 : 16 * 1024, Qt::Uninitialized);
            rng.fillRange(reinterpret_cast<quint32*>(noise.data()), noise.size() / 4);
            QStringList rows;
            const QList<qint64> got = lossSteps(noise + metricLines(), &rows);
            const QString where
                    = QStringLiteral("seed %1: %2 found, first %3").arg(seed).arg(got.size()).arg(got.value(0));
            QVERIFY2(got.size() >= 136 && got.mid(got.size() - 136) == stepRange(65, 200), qPrintable(where));
            for (qsizetype i = 1; i < got.size(); ++i)
                QVERIFY2(got.at(i) > got.at(i - 1), qPrintable(where));
            // Lines 2..200 each start their own row, in order.
            const QStringList metricRows = rows.mid(rows.size() - 199);
            for (int n = 2; n <= 200; ++n) {
                const QString text = QStringLiteral("step=%1 loss=%2").arg(n).arg(n / 1000.0, 0, 'f', 3);
                QVERIFY2(metricRows.at(n - 2).startsWith(text), qPrintable(where + u' ' + metricRows.at(n - 2)));
            }
            damaged += got.size() < 200;
            minFound = std::min(minFound, int(got.size()));
            QCOMPARE(lossSteps(noise + "\x18\n\x1b[J" + metricLines()), stepRange(1, 200));
        }
        qInfo("%d of 151 random streams cost some of the 200 lines after them; the fewest found: %d", damaged,
                minFound);
    }

    // One handle per key: the same for every sample of the key, whatever
    // recogniser found it or which rank; never another key's, also after
    // reset(); keys set by setLastStep() are numbered too.
    void keyHandles()
    {
        MetricExtractor x;
        x.setLastStep(QStringLiteral("val_loss"), 41);
        QHash<QString, quint32> handleOf;
        QSet<quint32> handles;
        const auto check = [&](QStringView line) {
            for (const ExtractedMetric& m : x.extract(line)) {
                QVERIFY2(m.keyHandle != 0, qPrintable(m.key));
                const auto it = handleOf.constFind(m.key);
                if (it != handleOf.cend()) {
                    QCOMPARE(m.keyHandle, *it);
                } else {
                    QVERIFY2(!handles.contains(m.keyHandle), qPrintable(m.key)); // another key's
                    handleOf.insert(m.key, m.keyHandle);
                    handles.insert(m.keyHandle);
                }
            }
        };
        check(u"loss=0.5 acc=0.9");
        check(u"{\"loss\": 0.4, \"lr\": 0.001, \"step\": 3}");
        check(u"[rank1]: loss=0.3");
        check(u"Epoch 2 - loss: 0.31 - val_loss: 0.35");
        check(u"step 10 loss 0.1160");
        check(u"[rank1]: loss=0.2 grad_norm=1.5");
        QCOMPARE(handleOf.size(), 6); // loss, acc, lr, loss[rank1], val_loss, grad_norm
        QVERIFY(handleOf.contains(QStringLiteral("loss[rank1]")));
        QVERIFY(handleOf.value(QStringLiteral("val_loss")) < handleOf.value(QStringLiteral("loss")));
        // A new run: counters start again, handles do not come back.
        x.reset();
        handleOf.clear();
        check(u"acc=0.7 loss=0.6");
        QCOMPARE(handleOf.size(), 2);
        // Equal samples compare equal, whatever their handles.
        MetricExtractor y;
        (void)y.extract(u"acc=0.1");
        const QList<ExtractedMetric> fromX = x.extract(u"loss=0.5");
        const QList<ExtractedMetric> fromY = y.extract(u"loss=0.5");
        QCOMPARE(fromX.size(), 1);
        QCOMPARE(fromY.size(), 1);
        QVERIFY(fromX.first().keyHandle != fromY.first().keyHandle);
        ExtractedMetric sameAsX = fromY.first();
        sameAsX.step = fromX.first().step;
        QVERIFY(sameAsX == fromX.first());
    }

    void barPostfixOncePerCommittedLine()
    {
        // 50 redraws of a bar whose postfix changes, then one newline: one sample.
        QByteArray bytes;
        for (int i = 0; i < 50; ++i)
            bytes += "\rEpoch 0:  " + QByteArray::number(i * 2) + "%|   | " + QByteArray::number(i)
                    + "/50 [00:01<00:02, 9.5it/s, loss=" + QByteArray::number(2.0 - i * 0.01, 'f', 3) + "]";
        bytes += "\n";
        TerminalRenderer r;
        r.feed(bytes);
        r.finish();
        MetricExtractor x;
        QList<ExtractedMetric> ms;
        for (const ConsoleLine& l : r.takeCommitted())
            ms += x.extract(l.text);
        QCOMPARE(ms.size(), 1);
        QCOMPARE(ms.at(0).key, QStringLiteral("loss"));
        QCOMPARE(ms.at(0).value, 1.51);
        QCOMPARE(ms.at(0).epoch, std::optional<double>(0));
    }
};

QTEST_GUILESS_MAIN(TestMetricExtractor)
#include "TestMetricExtractor.moc"
