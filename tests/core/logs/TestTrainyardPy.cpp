// resources/trainyard.py, run by /usr/bin/python3: the JSON lines it writes
// to TRAINYARD_METRICS_FILE come back through JsonLinesReader with every value
// (NaN and +-inf included); without the variable it prints lines the console
// recogniser reads; TRAINYARD_QUIET=1 silences it.
#include "tests/support/TestSupport.h"
#include "core/logs/MetricExtractor.h"
#include "core/logs/importers/MetricFileImporter.h"

#include <QDateTime>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace ty;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");

struct PyResult {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

PyResult runPython(const QString& script, const QMap<QString, QString>& env)
{
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.remove(QStringLiteral("TRAINYARD_METRICS_FILE"));
    e.remove(QStringLiteral("TRAINYARD_QUIET"));
    e.insert(QStringLiteral("PYTHONPATH"), test::sourcePath(QStringLiteral("resources")));
    e.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));
    for (auto it = env.begin(); it != env.end(); ++it)
        e.insert(it.key(), it.value());
    p.setProcessEnvironment(e);
    p.start(kPython, {QStringLiteral("-c"), script});
    if (!p.waitForFinished(30000))
        return {};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

// A training loop in miniature: steps, no steps, nested dicts, a tensor-like
// object, a diverging loss, and two processes appending to the same file.
const QString kScript = QStringLiteral(R"(
import os, trainyard
class FakeTensor:
    def __init__(self, v): self.v = v
    def item(self): return self.v
for s in range(3):
    trainyard.log({"loss": 1.0 / (s + 1), "acc": FakeTensor(0.5 + s / 10)}, step=s * 10, epoch=s / 2)
trainyard.log({"loss": float("nan"), "grad_norm": float("inf"), "min": float("-inf")}, step=30)
trainyard.log({"lr": 3e-4, "ok": True, "val": {"loss": 0.25}})
trainyard.log({"epoch": 2, "lr": 1e-4})
pid = os.fork()
if pid == 0:
    trainyard.log({"proc": 1}, step=40)  # the child reopens the file (another pid)
    os._exit(0)
os.waitpid(pid, 0)
trainyard.log({"proc": 0}, step=40)
try:
    trainyard.log({"bad": "x"})
except TypeError as e:
    print("TypeError:", e)
try:
    trainyard.log({"wall_time": 1})
except ValueError as e:
    print("ValueError:", e)
)");

} // namespace

class TestTrainyardPy : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (!QFile::exists(kPython))
            QSKIP("/usr/bin/python3 is not installed");
    }

    void metricsFileRoundTrip()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("run/metrics.jsonl")); // the folder is created by trainyard.py
        const qint64 before = QDateTime::currentMSecsSinceEpoch();
        const PyResult r = runPython(kScript, {{QStringLiteral("TRAINYARD_METRICS_FILE"), path}});
        const qint64 after = QDateTime::currentMSecsSinceEpoch();
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.contains("TypeError: trainyard.log: 'bad' must be a number, not str"), r.out.constData());
        QVERIFY(r.out.contains("ValueError: trainyard.log: 'wall_time' is reserved"));

        QFile raw(path);
        QVERIFY(raw.open(QIODevice::ReadOnly));
        const QByteArray text = raw.readAll();
        QVERIFY2(text.contains("\"loss\": NaN") && text.contains("\"grad_norm\": Infinity")
                        && text.contains("\"min\": -Infinity"),
                text.constData());

        const Result<MetricFileImport> imp = importMetricFile(path);
        QVERIFY2(imp.has_value(), imp ? "" : qPrintable(imp.error().message));
        QCOMPARE(imp->format, MetricFileFormat::JsonLines);
        QVERIFY2(imp->error.isEmpty(), qPrintable(imp->error));
        QVERIFY2(imp->warnings.isEmpty(), qPrintable(imp->warnings.join(u'\n')));
        QStringList seen;
        for (const ImportedMetric& m : imp->metrics) {
            seen << QStringLiteral("%1@%2=%3").arg(m.key).arg(m.step).arg(m.value);
            QVERIFY(m.wallTimeMs.has_value());
            QVERIFY(*m.wallTimeMs >= before - 1000 && *m.wallTimeMs <= after + 1000);
        }
        // JSON objects come back in key order within a line.
        QCOMPARE(seen,
                (QStringList{"acc@0=0.5", "loss@0=1", "acc@10=0.6", "loss@10=0.5", "acc@20=0.7", "loss@20=0.333333",
                        "grad_norm@30=inf", "loss@30=nan", "min@30=-inf", "lr@0=0.0003", "ok@0=1", "val.loss@0=0.25",
                        "lr@1=0.0001", "proc@40=1", "proc@40=0"}));
        const ImportedMetric& acc1 = imp->metrics[2];
        QCOMPARE(acc1.value, 0.5 + 1 / 10.0); // exact: repr() round-trips doubles
        QCOMPARE(acc1.epoch, std::optional<double>(0.5));
        QCOMPARE(imp->metrics[12].epoch, std::optional<double>(2.0)); // log({"epoch": 2, "lr": ...})
        QVERIFY(std::isnan(imp->metrics[7].value));
        QCOMPARE(imp->metrics[6].value, std::numeric_limits<double>::infinity());
        QCOMPARE(imp->metrics[8].value, -std::numeric_limits<double>::infinity());
    }

    void stdoutWithoutTrainyard()
    {
        const PyResult r = runPython(QStringLiteral("import trainyard\n"
                                                    "trainyard.log({'loss': 0.5, 'acc': float('nan')}, step=3)\n"
                                                    "print(trainyard.enabled(), trainyard.metrics_file())\n"),
                {});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QList<QByteArray> lines = r.out.split('\n');
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines[0], QByteArray("{\"step\": 3, \"loss\": 0.5, \"acc\": NaN}"));
        QCOMPARE(lines[1], QByteArray("True None"));
        MetricExtractor ex;
        const QList<ExtractedMetric> ms = ex.extract(QString::fromUtf8(lines[0]));
        QCOMPARE(ms.size(), 2);
        for (const ExtractedMetric& m : ms) {
            QCOMPARE(m.step, 3);
            if (m.key == QLatin1String("loss"))
                QCOMPARE(m.value, 0.5);
            else
                QVERIFY(m.key == QLatin1String("acc") && std::isnan(m.value));
        }
    }

    void quiet()
    {
        const PyResult r = runPython(QStringLiteral("import trainyard\n"
                                                    "trainyard.log({'loss': 0.5}, step=3)\n"
                                                    "print(trainyard.enabled())\n"),
                {{QStringLiteral("TRAINYARD_QUIET"), QStringLiteral("1")}});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.out, QByteArray("False\n"));
    }
};

QTEST_GUILESS_MAIN(TestTrainyardPy)
#include "TestTrainyardPy.moc"
