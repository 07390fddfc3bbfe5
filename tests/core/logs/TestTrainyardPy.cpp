// resources/trainyard.py, run by /usr/bin/python3: the JSON lines it writes
// to TRAINYARD_METRICS_FILE come back through JsonLinesReader with every value
// (NaN and +-inf included); without the variable it prints lines the console
// recogniser reads; TRAINYARD_QUIET=1 silences it. Its checkpoint helpers
// (issue #25): the `<name>.trainyard-done` marker written after fsyncs and by
// rename, the newest complete checkpoint, the resume variables, the Hugging
// Face callback and the Lightning wrapper against stand-ins of those
// frameworks; and the digits example checkpointing and resuming for real.
#include "tests/support/TestSupport.h"
#include "core/logs/MetricExtractor.h"
#include "core/logs/importers/MetricFileImporter.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
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

// /usr/bin/python3 with `args`, none of Trainyard's variables but those in
// `env`, trainyard.py on PYTHONPATH unless `env` names PYTHONPATH (an empty
// value: none).
PyResult runPythonArgs(
        const QStringList& args, const QMap<QString, QString>& env, const QString& workdir = {}, int timeoutMs = 30000)
{
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"TRAINYARD_METRICS_FILE", "TRAINYARD_QUIET", "TRAINYARD_CHECKPOINT_DIR",
                 "TRAINYARD_ATTEMPT", "TRAINYARD_RESTART_COUNT", "TRAINYARD_RESUME_FROM"})
        e.remove(QString::fromLatin1(name));
    e.insert(QStringLiteral("PYTHONPATH"), test::sourcePath(QStringLiteral("resources")));
    e.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));
    for (auto it = env.begin(); it != env.end(); ++it) {
        if (it.value().isEmpty())
            e.remove(it.key());
        else
            e.insert(it.key(), it.value());
    }
    p.setProcessEnvironment(e);
    if (!workdir.isEmpty())
        p.setWorkingDirectory(workdir);
    p.start(kPython, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

PyResult runPython(const QString& script, const QMap<QString, QString>& env)
{
    return runPythonArgs({QStringLiteral("-c"), script}, env);
}

// One of the scripts in tests/core/logs/trainyard_py (Python kept out of
// this file, where moc would have to read it).
PyResult runScript(const QString& name, const QMap<QString, QString>& env)
{
    return runPythonArgs({test::sourcePath(QStringLiteral("tests/core/logs/trainyard_py/") + name)}, env);
}

QStringList entries(const QString& dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

QJsonObject jsonLine(const QByteArray& line)
{
    return QJsonDocument::fromJson(line).object();
}

// The digits example's epoch lines ("epoch=3 step=135 ...") in order.
QList<QByteArray> epochLines(const QByteArray& console)
{
    QList<QByteArray> lines;
    for (const QByteArray& line : console.split('\n'))
        if (line.startsWith("epoch="))
            lines << line;
    return lines;
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

    void checkpointDoneSyncsThenRenamesTheMarkerIntoPlace()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath(QStringLiteral("ck"));
        const double before = QDateTime::currentMSecsSinceEpoch() / 1000.0;
        const PyResult r = runScript(QStringLiteral("checkpoint_done.py"), {{QStringLiteral("CK"), dir}});
        const double after = QDateTime::currentMSecsSinceEpoch() / 1000.0;
        QVERIFY2(r.exitCode == 0, r.err.constData());
        // The checkpoint (each file, each directory under it), the directory
        // holding it, the temporary marker beside it; then the rename, and
        // the directory again. Links inside are not followed.
        const QByteArray expected = "epoch-4.pt.trainyard-done\n"
                                    "checkpoint-500.trainyard-done\n"
                                    "fsync epoch-4.pt\n"
                                    "fsync .\n"
                                    "fsync TMP\n"
                                    "rename TMP epoch-4.pt.trainyard-done\n"
                                    "fsync .\n"
                                    "fsync checkpoint-500/model.bin\n"
                                    "fsync checkpoint-500\n"
                                    "fsync checkpoint-500/sub/rng.pth\n"
                                    "fsync checkpoint-500/sub\n"
                                    "fsync .\n"
                                    "fsync TMP\n"
                                    "rename TMP checkpoint-500.trainyard-done\n"
                                    "fsync .\n"
                                    "OSError: No space left on device\n";
        QVERIFY2(r.out.startsWith(expected), r.out.constData());
        const QByteArray missing = r.out.mid(expected.size());
        QVERIFY2(missing.startsWith("FileNotFoundError: [Errno 2] trainyard.checkpoint_done: no such checkpoint")
                        && missing.contains("/ck/missing.pt"),
                missing.constData());
        // No temporary file left, not even by the failed rename; no marker for full.pt.
        QCOMPARE(entries(dir),
                (QStringList{"checkpoint-500", "checkpoint-500.trainyard-done", "epoch-4.pt",
                        "epoch-4.pt.trainyard-done", "full.pt"}));
        struct Want {
            const char* marker;
            const char* name;
            int bytes;
        };
        for (const Want& w : {Want{"epoch-4.pt.trainyard-done", "epoch-4.pt", 1000},
                     Want{"checkpoint-500.trainyard-done", "checkpoint-500", 320}}) {
            const QByteArray text = test::readFile(QDir(dir).filePath(QString::fromLatin1(w.marker)));
            QVERIFY2(text.endsWith('\n') && text.count('\n') == 1, text.constData()); // one JSON line
            const QJsonObject o = jsonLine(text);
            QCOMPARE(o.keys(), (QStringList{"bytes", "checkpoint", "time"}));
            QCOMPARE(o.value(QStringLiteral("checkpoint")).toString(), QString::fromLatin1(w.name));
            QCOMPARE(o.value(QStringLiteral("bytes")).toInteger(), w.bytes);
            const double t = o.value(QStringLiteral("time")).toDouble();
            QVERIFY2(t >= before - 1 && t <= after + 1, qPrintable(QString::number(t, 'f', 3)));
        }
    }

    void newestCheckpointFollowsTheMarkers()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath(QStringLiteral("ck"));
        const PyResult r = runScript(QStringLiteral("newest_checkpoint.py"), {{QStringLiteral("CK"), dir}});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(QString::fromUtf8(r.out),
                QStringLiteral("no directory: None unset: None\n"
                               "empty: None\n"
                               "by time: b.pt\n"
                               "incomplete skipped: b.pt\n"
                               "missing checkpoint ignored: b.pt\n"
                               "unreadable ignored: b.pt\n"
                               "tie, greater name: b2.pt | %1/b2.pt\n"
                               "marked last, newest: late.pt\n"
                               "default directory: True\n"
                               "removed: future.pt False\n")
                        .arg(dir));
        QVERIFY(!QFile::exists(QDir(dir).filePath(QStringLiteral("late.pt.trainyard-done"))));
    }

    void resumeVariables()
    {
        const QString script = QStringLiteral("import trainyard\n"
                                              "print(trainyard.checkpoint_dir(), trainyard.attempt(), "
                                              "trainyard.resume_from())\n");
        const PyResult unset = runPython(script, {});
        QVERIFY2(unset.exitCode == 0, unset.err.constData());
        QCOMPARE(unset.out, QByteArray("None 1 None\n"));

        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString ckpt = tmp.filePath(QStringLiteral("epoch-2.pt"));
        test::writeFile(ckpt, "x");
        const PyResult set = runPython(script,
                {{QStringLiteral("TRAINYARD_CHECKPOINT_DIR"), tmp.path()}, {QStringLiteral("TRAINYARD_ATTEMPT"), "3"},
                        {QStringLiteral("TRAINYARD_RESTART_COUNT"), "2"},
                        {QStringLiteral("TRAINYARD_RESUME_FROM"), ckpt}});
        QVERIFY2(set.exitCode == 0, set.err.constData());
        QCOMPARE(QString::fromUtf8(set.out), QStringLiteral("%1 3 %2\n").arg(tmp.path(), ckpt));

        // Asked for, but gone: loud, naming the path; never a silent fresh start.
        const QString gone = tmp.filePath(QStringLiteral("epoch-3.pt"));
        const PyResult missing = runPython(
                script, {{QStringLiteral("TRAINYARD_ATTEMPT"), "2"}, {QStringLiteral("TRAINYARD_RESUME_FROM"), gone}});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY(missing.out.isEmpty());
        const QByteArray last = missing.err.trimmed().split('\n').last();
        QVERIFY2(
                last.startsWith("FileNotFoundError: [Errno 2] trainyard.resume_from: ") && last.contains(gone.toUtf8()),
                missing.err.constData());

        const PyResult bad = runPython(QStringLiteral("import trainyard\ntrainyard.attempt()\n"),
                {{QStringLiteral("TRAINYARD_ATTEMPT"), "zero"}});
        QVERIFY2(bad.err.contains("ValueError: trainyard.attempt: TRAINYARD_ATTEMPT must be a positive integer"),
                bad.err.constData());
    }

    void huggingFaceCallbackMarksEachSave()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath(QStringLiteral("out"));
        const PyResult r = runScript(QStringLiteral("hf_callback.py"), {{QStringLiteral("CK"), dir}});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QList<QByteArray> lines = r.out.split('\n');
        QCOMPARE(lines.size(), 10);
        const QByteArray marker = lines.takeAt(5);
        QCOMPARE(lines,
                (QList<QByteArray>{"other events: {None}", "500 None checkpoint-500 checkpoint-500.trainyard-done",
                        "1000 None checkpoint-1000 checkpoint-1000.trainyard-done checkpoint-500 "
                        "checkpoint-500.trainyard-done",
                        // checkpoint-500 rotated away by the Trainer: its marker goes too.
                        "1500 None checkpoint-1000 checkpoint-1000.trainyard-done checkpoint-1500 "
                        "checkpoint-1500.trainyard-done",
                        "newest: checkpoint-1500", "crashed save: checkpoint-1500", "other rank: False",
                        "AttributeError", ""}));
        const QJsonObject o = jsonLine(marker);
        QCOMPARE(o.value(QStringLiteral("checkpoint")).toString(), QStringLiteral("checkpoint-1500"));
        QCOMPARE(o.value(QStringLiteral("bytes")).toInteger(), 507);
    }

    void lightningCheckpointMarksAfterTheSave()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath(QStringLiteral("ck"));
        const PyResult r = runScript(QStringLiteral("lightning_checkpoint.py"), {{QStringLiteral("CK"), dir}});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        // While Lightning writes a file, or deletes it, it has no marker;
        // right after the save it has one.
        QCOMPARE(QString::fromUtf8(r.out),
                QStringLiteral("same object: True True\n"
                               "save epoch=0.ckpt marked=False\n"
                               "save last.ckpt marked=False\n"
                               "after: epoch=0.ckpt epoch=0.ckpt.trainyard-done last.ckpt last.ckpt.trainyard-done\n"
                               "save epoch=1.ckpt marked=False\n"
                               "remove epoch=0.ckpt marked=False\n"
                               "save last.ckpt marked=False\n"
                               "after: epoch=1.ckpt epoch=1.ckpt.trainyard-done last.ckpt last.ckpt.trainyard-done\n"
                               "newest: last.ckpt\n"
                               "RuntimeError: killed in the middle of the save\n"
                               "after a crash in last.ckpt's save: epoch=1.ckpt False\n"
                               "pickled copy marks: True\n"
                               "rank 1 marks: False\n"
                               "TypeError: trainyard.lightning_checkpoint: object has no _save_checkpoint(trainer, "
                               "filepath): not a Lightning 2.x ModelCheckpoint\n"));
    }

    // resources/examples/digits/train.py as Trainyard runs its attempts: the
    // first writes epoch-N.pt and its marker after each epoch, the next one
    // resumes from the newest and goes on exactly as an uninterrupted run.
    // trainyard.py is not on PYTHONPATH: train.py finds it two folders up.
    void digitsResumesFromItsNewestCheckpoint()
    {
        const PyResult deps = runPythonArgs({QStringLiteral("-c"), QStringLiteral("import torch, sklearn")}, {});
        if (deps.exitCode != 0)
            QSKIP("/usr/bin/python3 lacks torch or sklearn (python3-torch, python3-sklearn)");
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString work = tmp.filePath(QStringLiteral("work"));
        const QString ck = tmp.filePath(QStringLiteral("ck"));
        QVERIFY(QDir().mkpath(work));
        const QString train = test::sourcePath(QStringLiteral("resources/examples/digits/train.py"));
        const auto digits = [&](int epochs, const QMap<QString, QString>& env) {
            QMap<QString, QString> e = env;
            e.insert(QStringLiteral("PYTHONPATH"), QString());
            return runPythonArgs({train, QStringLiteral("--epochs"), QString::number(epochs),
                                         QStringLiteral("--min-accuracy"), QStringLiteral("0")},
                    e, work, 120000);
        };

        // Without the variables: as ever, nothing written.
        const PyResult straight = digits(4, {});
        QVERIFY2(straight.exitCode == 0, straight.err.constData());
        QVERIFY(!straight.out.contains("resumed"));
        QCOMPARE(entries(work), QStringList());
        const QList<QByteArray> all = epochLines(straight.out);
        QCOMPARE(all.size(), 4);

        const PyResult first = digits(2,
                {{QStringLiteral("TRAINYARD_CHECKPOINT_DIR"), ck},
                        {QStringLiteral("TRAINYARD_ATTEMPT"), QStringLiteral("1")}});
        QVERIFY2(first.exitCode == 0, first.err.constData());
        QCOMPARE(epochLines(first.out), all.mid(0, 2)); // checkpointing changes nothing of the training
        QCOMPARE(entries(ck),
                (QStringList{"epoch-1.pt", "epoch-1.pt.trainyard-done", "epoch-2.pt", "epoch-2.pt.trainyard-done"}));
        for (const QString& name : {QStringLiteral("epoch-1.pt"), QStringLiteral("epoch-2.pt")}) {
            const QJsonObject o = jsonLine(test::readFile(QDir(ck).filePath(name + QStringLiteral(".trainyard-done"))));
            QCOMPARE(o.value(QStringLiteral("checkpoint")).toString(), name);
            QCOMPARE(o.value(QStringLiteral("bytes")).toInteger(), QFileInfo(QDir(ck).filePath(name)).size());
        }
        const PyResult found = runPythonArgs(
                {QStringLiteral("-c"),
                        QStringLiteral("import sys, trainyard; print(trainyard.newest_checkpoint(sys.argv[1]))"), ck},
                {});
        QVERIFY2(found.exitCode == 0, found.err.constData());
        const QString resumeFrom = QString::fromUtf8(found.out.trimmed());
        QCOMPARE(resumeFrom, QDir(ck).filePath(QStringLiteral("epoch-2.pt")));

        const PyResult second = digits(4,
                {{QStringLiteral("TRAINYARD_CHECKPOINT_DIR"), ck},
                        {QStringLiteral("TRAINYARD_ATTEMPT"), QStringLiteral("2")},
                        {QStringLiteral("TRAINYARD_RESTART_COUNT"), QStringLiteral("1")},
                        {QStringLiteral("TRAINYARD_RESUME_FROM"), resumeFrom}});
        QVERIFY2(second.exitCode == 0, second.err.constData());
        const QByteArray resumed = QStringLiteral("\nresumed from %1 at epoch 3\n").arg(resumeFrom).toUtf8();
        const qsizetype at = second.out.indexOf(resumed);
        QVERIFY2(at >= 0, second.out.constData());
        QVERIFY2(at < second.out.indexOf("\nepoch="), second.out.constData()); // before training
        QCOMPARE(second.out.count("resumed from"), 1);
        // Epochs 3 and 4, steps 135 and 180: the same lines as the run that was never interrupted.
        QCOMPARE(epochLines(second.out), all.mid(2));
        QVERIFY2(second.out.contains("done: validation accuracy ")
                        && straight.out.contains(second.out.mid(second.out.indexOf("done: "))),
                second.out.constData());
        // The resumed line is prose to the console recogniser, not a metric.
        QVERIFY(MetricExtractor().extract(QString::fromUtf8(resumed.trimmed())).isEmpty());
        // The newest two are kept; older ones went with their markers.
        QCOMPARE(entries(ck),
                (QStringList{"epoch-3.pt", "epoch-3.pt.trainyard-done", "epoch-4.pt", "epoch-4.pt.trainyard-done"}));
        QCOMPARE(entries(work), QStringList());
    }
};

QTEST_GUILESS_MAIN(TestTrainyardPy)
#include "TestTrainyardPy.moc"
