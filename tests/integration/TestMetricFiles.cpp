// Metric files a run writes (job spec `metric_files`, $TRAINYARD_METRICS_FILE
// through resources/trainyard.py), followed by the run engine through the
// real local agent while the run is live, imported once more when it ends,
// stored exactly once across an engine restart.
#include "tests/support/TestSupport.h"
#include "core/logs/importers/MetricFileImporter.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace ty;

namespace {

bool copyFile(const QString& from, const QString& to)
{
    QDir().mkpath(QFileInfo(to).absolutePath());
    QFile::remove(to);
    return QFile::copy(from, to);
}

// Per key: the (step, value) pairs of `points`, in order.
QMap<QString, QList<std::pair<qint64, double>>> byKey(const QList<MetricPoint>& points)
{
    QMap<QString, QList<std::pair<qint64, double>>> out;
    for (const MetricPoint& p : points)
        out[p.key].append({p.step, p.value});
    return out;
}

QMap<QString, QList<std::pair<qint64, double>>> byKey(const QList<ImportedMetric>& metrics)
{
    QMap<QString, QList<std::pair<qint64, double>>> out;
    for (const ImportedMetric& m : metrics)
        out[m.key].append({m.step, m.value});
    for (auto& l : out)
        std::stable_sort(l.begin(), l.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

} // namespace

class TestMetricFiles final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString dbPath() const { return m_dir.filePath(QStringLiteral("db/trainyard.db")); }
    QString stateDir() const { return m_dir.filePath(QStringLiteral("state")); }

    std::unique_ptr<RunEngine> makeEngine(ResultStore* store)
    {
        auto engine = std::make_unique<RunEngine>(store, dbPath());
        engine->setMetricFilePollInterval(200);
        engine->addLocalNode(test::agentPath(), stateDir());
        return engine;
    }

    static JobSpec spec(const QString& yaml, const QString& workdir)
    {
        auto s = parseJobSpec(yaml, QStringLiteral("test.yaml"), workdir);
        if (!s)
            qFatal("%s", qPrintable(s.error().message));
        return *s;
    }

private Q_SLOTS:
    void liveFilesStoredOnceAcrossEngineRestart()
    {
        const QString work = m_dir.filePath(QStringLiteral("work-live"));
        QVERIFY(QDir().mkpath(work));
        const QString lightningCsv
                = test::fixturePath(QStringLiteral("gpu-workstation/frameworks/lightning-csv/metrics.csv"));
        QVERIFY(copyFile(lightningCsv, work + QStringLiteral("/lightning_logs/version_0/metrics.csv")));
        // trainyard.py's JSON lines (a NaN among them, the last line left
        // without its '\n') and a CSV appended while the run goes on.
        QFile script(work + QStringLiteral("/train.py"));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(QStringLiteral(
                "import os, sys, time\n"
                "sys.path.insert(0, %1)\n"
                "import trainyard\n"
                "with open('live.csv', 'w') as f: f.write('step,acc\\n')\n"
                "for i in range(1, 41):\n"
                "    trainyard.log({'jloss': i + 0.5, 'jnan': float('nan') if i == 7 else i}, step=i)\n"
                "    with open('live.csv', 'a') as f: f.write('%d,%s\\n' % (i, i / 100))\n"
                "    time.sleep(0.1)\n"
                "with open(os.environ['TRAINYARD_METRICS_FILE'], 'a') as f: f.write('{\"step\": 41, \"jloss\": 41.5}')\n")
                             .arg(QStringLiteral("'%1'").arg(test::sourcePath(QStringLiteral("resources"))))
                             .toUtf8());
        script.close();
        const JobSpec s = spec(QStringLiteral("name: files\n"
                                              "command: [/usr/bin/python3, train.py]\n"
                                              "metric_files: [live.csv, 'lightning_logs/*/metrics.csv']\n"),
                work);

        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        RunId id = 0;
        {
            auto engine = makeEngine(store->get());
            QVERIFY(engine->acquireIngestion());
            QSignalSpy received(engine.get(), &RunEngine::metricsReceived);
            auto submitted = engine->submit(s);
            QVERIFY(submitted);
            id = *submitted;
            // Live: points from the files arrive while the run is going.
            QTRY_VERIFY_WITH_TIMEOUT((*store)->metrics(id, QStringLiteral("jloss")).size() >= 3, 20000);
            QCOMPARE((*store)->run(id)->state, RunState::Running);
            QVERIFY(!received.isEmpty());
        } // the run goes on without an engine
        QTest::qWait(800);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(id)->state, RunState::Succeeded, 30000);
        QVERIFY((*store)->flush().has_value());

        // Exactly once: every step once, nothing superseded, no restart.
        const QList<MetricPoint> jloss = (*store)->allMetrics(id, QStringLiteral("jloss"));
        QCOMPARE(jloss.size(), 41);
        for (int i = 0; i < jloss.size(); ++i) {
            QCOMPARE(jloss[i].step, qint64(i + 1));
            QCOMPARE(jloss[i].value, i + 1.5);
            QCOMPARE(jloss[i].source, MetricSource::File);
            QVERIFY(!jloss[i].superseded);
        }
        const QList<MetricPoint> jnan = (*store)->metrics(id, QStringLiteral("jnan"));
        QCOMPARE(jnan.size(), 40);
        QVERIFY(std::isnan(jnan[6].value));
        QCOMPARE(jnan[7].value, 8.0);
        const QList<MetricPoint> acc = (*store)->allMetrics(id, QStringLiteral("acc"));
        QCOMPARE(acc.size(), 40);
        for (int i = 0; i < acc.size(); ++i)
            QCOMPARE(acc[i].value, (i + 1) / 100.0);
        QVERIFY((*store)->metricRestarts(id).isEmpty());

        // The Lightning CSVLogger file: the same series as importing it.
        auto imported = importMetricFile(lightningCsv);
        QVERIFY(imported);
        const auto want = byKey(imported->metrics);
        const auto got = byKey((*store)->allMetrics(id));
        QVERIFY(want.size() >= 3);
        for (auto it = want.cbegin(); it != want.cend(); ++it)
            QCOMPARE(got.value(it.key()), it.value());
    }

    void tensorBoardImportedAfterTheRunConfinedToWorkdir()
    {
        const QString work = m_dir.filePath(QStringLiteral("work-tb"));
        const QString tbDir = test::fixturePath(QStringLiteral("gpu-workstation/frameworks/lightning-tensorboard"));
        const QStringList events = QDir(tbDir).entryList({QStringLiteral("events.out.tfevents.*")}, QDir::Files);
        QCOMPARE(events.size(), 1);
        const QString tbFile = tbDir + u'/' + events.front();
        QVERIFY(copyFile(tbFile, work + QStringLiteral("/lightning_logs/version_1/") + events.front()));
        // A link out of the workdir matching the glob: never read.
        QVERIFY(QFile::link(QStringLiteral("/etc/hostname"),
                work + QStringLiteral("/lightning_logs/version_1/events.out.tfevents.escape")));
        const JobSpec s = spec(QStringLiteral("command: \"sleep 0.3\"\n"
                                              "metric_files: ['lightning_logs/**/events.out.tfevents.*']\n"),
                work);
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        auto id = engine->submit(s);
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Succeeded, 30000);
        QVERIFY((*store)->flush().has_value());

        auto imported = importMetricFile(tbFile);
        QVERIFY(imported);
        QVERIFY(imported->error.isEmpty());
        const auto want = byKey(imported->metrics);
        const auto got = byKey((*store)->allMetrics(*id));
        QVERIFY(want.contains(QStringLiteral("train_loss")));
        QCOMPARE(got.keys(), want.keys());
        for (auto it = want.cbegin(); it != want.cend(); ++it)
            QCOMPARE(got.value(it.key()), it.value());
        // Its hparams are the run's params (Lightning's hparams.yaml beside it:
        // `hidden: 128`, `lr: 0.001`), as `trainyardctl import` stores them.
        QCOMPARE(imported->params,
                (QMap<QString, QString>{{QStringLiteral("hidden"), QStringLiteral("128")},
                        {QStringLiteral("lr"), QStringLiteral("0.001")}}));
        QCOMPARE((*store)->params(*id), imported->params);
    }
};

QTEST_GUILESS_MAIN(TestMetricFiles)
#include "TestMetricFiles.moc"
