#include "TestSupport.h"
#include "store/ResultStore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace ty;

namespace {
struct Outcome {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};
} // namespace

// Drives the built trainyardctl exactly as a user would, with a private
// database and a private agent state directory.
class TestCliEndToEnd final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString dbPath() const { return m_dir.filePath(QStringLiteral("results/trainyard.db")); }
    QString stateDir() const { return m_dir.filePath(QStringLiteral("agent-state")); }

    Outcome ctl(const QStringList& args, int timeoutMs = 240000)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), stateDir());
        env.remove(QStringLiteral("TRAINYARD_DB"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(TRAINYARD_CTL_PATH), QStringList{QStringLiteral("--db"), dbPath()} + args);
        if (!p.waitForFinished(timeoutMs)) {
            p.kill();
            p.waitForFinished();
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
    }

    // `name` under the test's folder (its own folder made first); its path.
    QString writeFile(const QString& name, const QByteArray& content)
    {
        QDir().mkpath(QFileInfo(m_dir.filePath(name)).absolutePath());
        QFile f(m_dir.filePath(name));
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(content);
        return f.fileName();
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void digitsExampleFollow()
    {
        if (!QFile::exists(QStringLiteral("/usr/bin/python3")))
            QSKIP("Debian's python3 is not installed");
        const Outcome o = ctl({QStringLiteral("submit"), test::sourcePath(QStringLiteral("resources/examples/digits/job.yaml")),
                               QStringLiteral("--follow")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        // The console is printed as the run wrote it, progress bars included.
        QVERIFY(o.out.contains("epoch=15 step=675"));
        QVERIFY(o.out.contains("\r"));
        QVERIFY(o.err.contains("succeeded"));

        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        const QList<RunRecord> runs = (*store)->runs();
        QCOMPARE(runs.size(), 1);
        const RunRecord& run = runs.front();
        QCOMPARE(run.state, RunState::Succeeded);
        QCOMPARE(run.exitCode, std::optional<int>(0));
        QCOMPARE(run.node, QStringLiteral("local"));
        QVERIFY(run.startedAt.isValid() && run.finishedAt.isValid() && run.startedAt <= run.finishedAt);
        QCOMPARE((*store)->params(run.id).value(QStringLiteral("lr")), QStringLiteral("0.001"));

        const QList<MetricPoint> acc = (*store)->metrics(run.id, QStringLiteral("val_accuracy"));
        QCOMPARE(acc.size(), 15);
        QCOMPARE(acc.front().step, 45);   // the step key on the line, not a counter
        QCOMPARE(acc.back().step, 675);
        QCOMPARE(acc.back().epoch, std::optional<double>(15));
        QVERIFY2(acc.back().value >= 0.9, qPrintable(QString::number(acc.back().value)));
        QCOMPARE((*store)->metrics(run.id, QStringLiteral("train_loss")).size(), 15);
        QCOMPARE((*store)->metrics(run.id, QStringLiteral("val_loss")).size(), 15);
        // Nothing from the bars' timing.
        for (const QString& key : (*store)->metricKeys(run.id))
            QVERIFY2(!key.contains(QStringLiteral("it/s")) && !key.contains(QStringLiteral("s/it")), qPrintable(key));

        // The local console copy is byte-identical to the node's file, and fully ingested.
        QFile copy(run.consolePath);
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QFile node(stateDir() + QStringLiteral("/runs/") + run.agentRunId + QStringLiteral("/console.log"));
        QVERIFY2(node.open(QIODevice::ReadOnly), qPrintable(node.fileName()));
        const QByteArray nodeBytes = node.readAll();
        QCOMPARE(copy.readAll(), nodeBytes);
        QCOMPARE(run.consoleOffset, qint64(nodeBytes.size()));

        // metrics --csv gives every stored point.
        const Outcome csv = ctl({QStringLiteral("metrics"), QString::number(run.id), QStringLiteral("--csv"),
                                 QStringLiteral("--key"), QStringLiteral("val_accuracy")});
        QCOMPARE(csv.exitCode, 0);
        const QList<QByteArray> lines = csv.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 16);
        QCOMPARE(lines.front(), QByteArray("run,key,step,epoch,wall_time,value"));
        QVERIFY(lines.back().startsWith(QByteArray(QByteArray::number(run.id) + ",val_accuracy,675,15,")));
        QCOMPARE(lines.back().split(',').last().toDouble(), acc.back().value);

        // ls --json shows it, with its latest metrics.
        const Outcome ls = ctl({QStringLiteral("ls"), QStringLiteral("--json")});
        QCOMPARE(ls.exitCode, 0);
        const QJsonArray arr = QJsonDocument::fromJson(ls.out).array();
        QCOMPARE(arr.size(), 1);
        QCOMPARE(arr[0][QStringLiteral("state")].toString(), QStringLiteral("succeeded"));
        QCOMPARE(arr[0][QStringLiteral("latest_metrics")][QStringLiteral("val_accuracy")].toDouble(), acc.back().value);

        // logs prints the stored console.
        const Outcome logs = ctl({QStringLiteral("logs"), QStringLiteral("digits-mlp")});
        QCOMPARE(logs.exitCode, 0);
        QCOMPARE(logs.out, nodeBytes);
    }

    void failingRunPassesExitCode()
    {
        const QString spec = writeFile(QStringLiteral("fail.yaml"),
                                       "name: failing\ncommand: \"echo 'loss: 0.5'; echo boom >&2; exit 7\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QCOMPARE(o.exitCode, 7);
        QVERIFY(o.out.contains("boom"));
        QVERIFY(o.err.contains("failed, exit code 7"));
    }

    // The artifacts of a run that ends under `submit --follow` are listed
    // before trainyardctl exits (it used to exit first: "connection to the
    // agent lost before the reply to the list_files request ...").
    void artifactsListedBeforeFollowExits()
    {
        const QString spec = writeFile(QStringLiteral("arts/job.yaml"),
                                       "name: with-artifacts\nworkdir: .\nartifacts: ['out/*.txt']\n"
                                       "command: \"mkdir -p out && echo a > out/a.txt && echo bb > out/b.txt && echo c > out/c.log\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QCOMPARE(o.exitCode, 0);
        QVERIFY2(!o.err.contains("artifacts of run"), o.err.constData());
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        const QList<RunRecord> runs = (*store)->runs();
        auto run = std::find_if(runs.cbegin(), runs.cend(), [](const RunRecord& r) { return r.name == u"with-artifacts"; });
        QVERIFY(run != runs.cend());
        QStringList names;
        for (const ArtifactRecord& a : (*store)->artifacts(run->id))
            names << QFileInfo(a.path).fileName() + u':' + QString::number(a.size);
        names.sort();
        QCOMPARE(names, (QStringList{QStringLiteral("a.txt:2"), QStringLiteral("b.txt:3")}));
    }

    // Artifact names come from the node: one with a newline or an escape
    // sequence in it is still one line of the listing (C-style escapes).
    void artifactNamesEscapedOnePerLine()
    {
        const QString spec = writeFile(QStringLiteral("oddnames/job.yaml"),
                                       "name: odd-names\nworkdir: .\nartifacts: ['out/*']\n"
                                       "command: \"mkdir -p out && printf x > \\\"out/two$(printf '\\\\nlines').txt\\\" && "
                                       "printf y > \\\"out/esc$(printf '\\\\033[31m')red\\\" && printf z > out/plain.txt && printf w > \\\"out/zw$(printf '\\\\342\\\\200\\\\213')sp\\\"\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        const Outcome ls = ctl({QStringLiteral("artifacts"), QStringLiteral("odd-names")});
        QVERIFY2(ls.exitCode == 0, ls.err.constData());
        QCOMPARE(ls.out.trimmed().split('\n').size(), 4);
        QVERIFY2(!ls.out.contains('\x1b'), ls.out.constData());
        QVERIFY2(ls.out.contains("/out/two\\nlines.txt\t1\tfile\n"), ls.out.constData());
        QVERIFY2(ls.out.contains("/out/esc\\e[31mred\t1\tfile\n"), ls.out.constData());
        QVERIFY2(ls.out.contains("/out/plain.txt\t1\tfile\n"), ls.out.constData());
        QVERIFY2(ls.out.contains("/out/zw\\u200bsp\t1\tfile\n"), ls.out.constData()); // invisible, so shown
        QList<QByteArray> listed = ls.out.trimmed().split('\n'), sorted = listed;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(listed, sorted); // by path, whatever order the node's folder has

        // Downloaded and refused names are escaped too: one line each.
        const QString dest = m_dir.filePath(QStringLiteral("odd-dest"));
        const Outcome dl = ctl({QStringLiteral("artifacts"), QStringLiteral("odd-names"), QStringLiteral("--download"), dest});
        QVERIFY2(dl.exitCode == 0, dl.err.constData());
        QCOMPARE(dl.out.trimmed().split('\n').size(), 4);
        QVERIFY2(dl.out.contains(QByteArray("downloaded " + QFile::encodeName(dest) + "/out/two\\nlines.txt\n")), dl.out.constData());
        QCOMPARE(QFile(dest + QStringLiteral("/out/two\nlines.txt")).size(), 1);
    }

    // `logs RUN` while nothing else ingests stores what it prints first: the
    // lines shown are kept even if the node's console is emptied before any
    // other command stores them (it used to print them display-only).
    void logsStoresWhatItShows()
    {
        const QString spec = writeFile(QStringLiteral("logsstore/job.yaml"),
                                       "name: logs-store\nworkdir: .\n"
                                       "command: \"for i in $(seq 1 60); do echo line $i; sleep 0.1; done\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec}); // returns once it runs
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QTest::qWait(1500);
        const Outcome logs = ctl({QStringLiteral("logs"), QStringLiteral("logs-store")});
        QVERIFY2(logs.exitCode == 0, logs.err.constData());
        QVERIFY2(logs.out.startsWith("line 1\n") && logs.out.count('\n') >= 5, logs.out.constData());
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        RunRecord run;
        for (const RunRecord& r : (*store)->runs())
            if (r.name == u"logs-store")
                run = r;
        QVERIFY(run.id > 0);
        const QByteArray stored = test::readFile(run.consolePath);
        QVERIFY2(stored.startsWith(logs.out), qPrintable(QStringLiteral("printed %1 bytes, stored %2").arg(logs.out.size()).arg(stored.size())));
        QVERIFY(run.consoleOffset >= logs.out.size());
        QCOMPARE(ctl({QStringLiteral("logs"), QStringLiteral("logs-store"), QStringLiteral("--follow")}).exitCode, 0); // let it end
    }

    // A backslash is an ordinary character of a POSIX name: downloaded. A
    // name that is not UTF-8 cannot be named back over SFTP: refused, and
    // the reason says so (it used to read "not a regular file").
    void artifactNamesWithBackslashOrBadBytes()
    {
        const QString spec = writeFile(QStringLiteral("bsnames/job.yaml"),
                                       "name: bs-names\nworkdir: .\nartifacts: ['out/*']\n"
                                       "command: \"mkdir -p out && printf b > 'out/back\\\\slash.txt' && "
                                       "printf x > \\\"out/bad$(printf '\\\\377')name\\\"\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        const QString dest = m_dir.filePath(QStringLiteral("bs-dest"));
        const Outcome dl = ctl({QStringLiteral("artifacts"), QStringLiteral("bs-names"), QStringLiteral("--download"), dest});
        QCOMPARE(dl.exitCode, 5); // one refused
        QCOMPARE(test::readFile(dest + QStringLiteral("/out/back\\slash.txt")), QByteArray("b"));
        QVERIFY2(dl.err.contains("is not valid UTF-8"), dl.err.constData());
        QVERIFY2(!dl.err.contains("not a regular file"), dl.err.constData());
        QCOMPARE(QDir(dest + QStringLiteral("/out")).entryList(QDir::Files), QStringList{QStringLiteral("back\\slash.txt")});
    }

    // What the node's code logs about an artifact (a refused FIFO here) names
    // it too: on stderr as trainyardctl's own line, escaped, one line each.
    void logLinesAreEscapedOnePerLine()
    {
        const QString spec = writeFile(QStringLiteral("fifoname/job.yaml"),
                                       "name: fifo-name\nworkdir: .\nartifacts: ['out/*']\n"
                                       "command: \"mkdir -p out && mkfifo \\\"out/f$(printf '\\\\033]0;t\\\\007\\\\nFAKE line')\\\"\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        const Outcome dl = ctl({QStringLiteral("artifacts"), QStringLiteral("fifo-name"), QStringLiteral("--download"),
                                m_dir.filePath(QStringLiteral("fifo-dest"))});
        QCOMPARE(dl.exitCode, 5);
        QVERIFY2(!dl.err.contains('\x1b') && !dl.err.contains('\x07'), dl.err.constData());
        int named = 0;
        for (const QByteArray& line : dl.err.trimmed().split('\n')) {
            QVERIFY2(line.startsWith("trainyardctl: "), line.constData());
            named += line.contains("out/f\\e]0;t\\x07\\nFAKE line") ? 1 : 0;
        }
        QVERIFY2(named >= 2, dl.err.constData()); // the log's line and the command's own
    }

    // A local folder on the download's way that is a symlink (to a folder) is
    // refused, not followed, and the message says it is a link and which one.
    void downloadThroughLinkedFolderNamesTheLink()
    {
        const QString spec = writeFile(QStringLiteral("linkdest/job.yaml"),
                                       "name: linked-dest\nworkdir: .\nartifacts: ['out/*']\n"
                                       "command: \"mkdir -p out && printf a > out/a.txt && printf b > out/b.txt\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        const QString dest = m_dir.filePath(QStringLiteral("linked-dest"));
        const QString elsewhere = m_dir.filePath(QStringLiteral("linked-elsewhere"));
        QVERIFY(QDir().mkpath(dest) && QDir().mkpath(elsewhere));
        QVERIFY(QFile::link(elsewhere, dest + QStringLiteral("/out")));
        const Outcome dl = ctl({QStringLiteral("artifacts"), QStringLiteral("linked-dest"), QStringLiteral("--download"), dest});
        QCOMPARE(dl.exitCode, 5);
        int refusedLines = 0; // one line per refused artifact (the node's log lines aside)
        for (const QByteArray& line : dl.err.split('\n')) {
            if (!line.startsWith("trainyardctl: run "))
                continue;
            ++refusedLines;
            QVERIFY2(line.contains(QByteArray("refused: " + QFile::encodeName(dest) + "/out is a symbolic link here (to "
                                              + QFile::encodeName(elsewhere) + ")")),
                     line.constData());
            QVERIFY2(!line.contains("not a folder"), line.constData());
        }
        QCOMPARE(refusedLines, 2);
        QVERIFY(QDir(elsewhere).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden));
        // The refusal stays with the run as a notice (the GUI shows it too).
        const Outcome show = ctl({QStringLiteral("show"), QStringLiteral("linked-dest")});
        QVERIFY2(show.exitCode == 0, show.err.constData());
        QVERIFY2(show.out.contains(QByteArray("artifact download to " + QFile::encodeName(dest) + " refused 2 file(s): ")),
                 show.out.constData());
    }

    // A synced symlink that leads nowhere on the node: trainyardctl says so on
    // stderr as it happens (the log line), and the run keeps it as a notice
    // that `show` lists and `ls` counts, for whoever looks later.
    void showListsTheRunsNotices()
    {
        const QString spec = writeFile(QStringLiteral("dangling/job.yaml"),
                                       "name: dangling-link\nworkdir: .\nsync: true\ncommand: [cat, job.yaml]\n");
        QVERIFY(QFile::link(QStringLiteral("../no_such_data"), m_dir.filePath(QStringLiteral("dangling/data"))));
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QVERIFY2(o.err.contains("lead nowhere"), o.err.constData());

        const Outcome show = ctl({QStringLiteral("show"), QStringLiteral("dangling-link")});
        QVERIFY2(show.exitCode == 0, show.err.constData());
        QVERIFY2(show.out.contains("state      succeeded (exit 0)\n"), show.out.constData());
        QVERIFY2(show.out.contains("notices    1\n"), show.out.constData());
        QVERIFY2(show.out.contains("symlink(s) that lead nowhere there"), show.out.constData());
        QVERIFY2(show.out.contains(": data -> ../no_such_data\n"), show.out.constData());

        const Outcome ls = ctl({QStringLiteral("ls")});
        QCOMPARE(ls.exitCode, 0);
        bool counted = false;
        for (const QByteArray& line : ls.out.split('\n'))
            if (line.contains("dangling-link"))
                counted = line.endsWith("[1 notice]");
        QVERIFY2(counted, ls.out.constData());

        const Outcome json = ctl({QStringLiteral("ls"), QStringLiteral("--json")});
        QCOMPARE(json.exitCode, 0);
        bool listed = false;
        for (const QJsonValue& v : QJsonDocument::fromJson(json.out).array()) {
            const QJsonArray notices = v[QStringLiteral("notices")].toArray();
            if (v[QStringLiteral("name")].toString() != u"dangling-link") {
                continue;
            }
            QCOMPARE(notices.size(), 1);
            QVERIFY(notices[0][QStringLiteral("text")].toString().endsWith(QStringLiteral(": data -> ../no_such_data")));
            QVERIFY(QDateTime::fromString(notices[0][QStringLiteral("at")].toString(), Qt::ISODateWithMs).isValid());
            listed = true;
        }
        QVERIFY2(listed, json.out.constData());

        // A run without notices says so; an unknown one exits 4.
        const Outcome none = ctl({QStringLiteral("show"), QStringLiteral("linked-dest-nope")});
        QCOMPARE(none.exitCode, 4);
        QCOMPARE(ctl({QStringLiteral("show")}).exitCode, 2);
    }

    void signalledRun()
    {
        const QString spec = writeFile(QStringLiteral("sig.yaml"), "name: killed\ncommand: 'kill -9 $$'\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QCOMPARE(o.exitCode, 128 + 9);
        QVERIFY(o.err.contains("signal 9"));
    }

    void invalidSpec()
    {
        const QString spec = writeFile(QStringLiteral("bad.yaml"), "name: x\ncomand: [ls]\n");
        const Outcome v = ctl({QStringLiteral("validate"), spec});
        QCOMPARE(v.exitCode, 3);
        QCOMPARE(QString::fromUtf8(v.err.trimmed()), spec + QStringLiteral(":2:1: unknown key 'comand' (did you mean 'command'?)"));
        const Outcome s = ctl({QStringLiteral("submit"), spec});
        QCOMPARE(s.exitCode, 3);
        const Outcome ok = ctl({QStringLiteral("validate"), test::sourcePath(QStringLiteral("resources/examples/digits/job.yaml"))});
        QCOMPARE(ok.exitCode, 0);
        QVERIFY(ok.out.contains(": ok: run 'digits-mlp'"));
    }

    void sweepFollow()
    {
        const QString spec = writeFile(QStringLiteral("sweep.yaml"),
            "name: sw\ncommand: \"echo acc={{x}}; test {{x}} != 2\"\nsweep: {x: [1, 2, 3]}\nmax_concurrent: 2\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QCOMPARE(o.exitCode, 1); // x=2 fails
        QVERIFY2(o.err.contains("submitted sweep sw: 3 runs"), o.err.constData());
        QVERIFY(o.err.contains("(sw[x=1]) succeeded"));
        QVERIFY(o.err.contains("(sw[x=2]) failed: exit code 1"));
        QVERIFY(o.err.contains("(sw[x=3]) succeeded"));
        const Outcome m = ctl({QStringLiteral("metrics"), QStringLiteral("sw[x=3]"), QStringLiteral("--csv")});
        QCOMPARE(m.exitCode, 0);
        QVERIFY(m.out.contains(",acc,0,,"));
        QVERIFY(m.out.trimmed().endsWith(",3"));
    }

    void importFrameworkFiles()
    {
        // The fixtures' Lightning CSV and TensorBoard files of one run, into a run of ours.
        const QString csv = test::fixturePath(QStringLiteral("gpu-workstation/frameworks/lightning-csv/metrics.csv"));
        const QDir tbDir(test::fixturePath(QStringLiteral("gpu-workstation/frameworks/lightning-tensorboard")));
        const QString tb = tbDir.filePath(tbDir.entryList({QStringLiteral("events.out.tfevents.*")}).value(0));
        Outcome o = ctl({QStringLiteral("import"), QStringLiteral("sw[x=1]"), csv});
        QCOMPARE(o.exitCode, 0);
        QVERIFY2(o.out.contains("39 points of 3 metric(s) (train_loss, val_acc, val_loss) from CSV"), o.out.constData());
        const Outcome m = ctl({QStringLiteral("metrics"), QStringLiteral("sw[x=1]"), QStringLiteral("--csv"), QStringLiteral("--key"), QStringLiteral("val_acc")});
        QCOMPARE(m.out.trimmed().split('\n').size(), 1 + 6);
        // The TensorBoard file's hparams become the run's params, beside the sweep's own.
        o = ctl({QStringLiteral("import"), QStringLiteral("sw[x=1]"), tb});
        QCOMPARE(o.exitCode, 0);
        QVERIFY2(o.out.contains("40 points of 4 metric(s) (hp_metric, train_loss, val_loss, val_acc) from TensorBoard event file"), o.out.constData());
        QVERIFY2(o.out.contains(": 2 param(s) (hidden=128, lr=0.001) into run "), o.out.constData());
        {
            auto store = ResultStore::open(dbPath());
            QVERIFY(store);
            RunId id = 0;
            for (const RunRecord& r : (*store)->runs())
                if (r.name == QLatin1String("sw[x=1]"))
                    id = r.id;
            const QMap<QString, QString> params = (*store)->params(id);
            QCOMPARE(params.value(QStringLiteral("hidden")), QStringLiteral("128"));
            QCOMPARE(params.value(QStringLiteral("lr")), QStringLiteral("0.001"));
            QCOMPARE(params.value(QStringLiteral("x")), QStringLiteral("1"));
        }
        // A truncated event file imports its valid prefix and says where it stopped.
        QFile in(tb);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QString cut = writeFile(QStringLiteral("cut.tfevents"), in.read(3000));
        o = ctl({QStringLiteral("import"), QStringLiteral("sw[x=1]"), cut});
        QCOMPARE(o.exitCode, 1);
        QVERIFY2(o.err.contains("stopped at byte 2964"), o.err.constData());
        QVERIFY(o.err.contains("(the points before it were imported)"));
        QCOMPARE(ctl({QStringLiteral("import"), QStringLiteral("sw[x=1]"), QStringLiteral("/etc/hostname")}).exitCode, 3);
    }

    void queueAndPolicy()
    {
        Outcome o = ctl({QStringLiteral("policy")});
        QCOMPARE(o.exitCode, 0);
        QCOMPARE(o.out.trimmed(), QByteArray("backfill"));
        o = ctl({QStringLiteral("policy"), QStringLiteral("sjf")});
        QCOMPARE(o.exitCode, 0);
        QCOMPARE(ctl({QStringLiteral("policy")}).out.trimmed(), QByteArray("sjf"));
        QCOMPARE(ctl({QStringLiteral("policy"), QStringLiteral("lottery")}).exitCode, 2);
        QCOMPARE(ctl({QStringLiteral("policy"), QStringLiteral("backfill")}).exitCode, 0);
        o = ctl({QStringLiteral("policy"), QStringLiteral("fcfs"), QStringLiteral("--queue"), QStringLiteral("strict")});
        QCOMPARE(o.out.trimmed(), QByteArray("queue strict: fcfs"));
        QCOMPARE(ctl({QStringLiteral("policy")}).out, QByteArray("backfill\nqueue strict: fcfs\n"));
        o = ctl({QStringLiteral("queue")});
        QCOMPARE(o.exitCode, 0);
        QVERIFY(o.out.contains("policy: backfill"));
        QVERIFY(o.out.contains("no runs waiting"));
        // Queue operations refuse runs that are not waiting.
        o = ctl({QStringLiteral("hold"), QStringLiteral("sw[x=1]")});
        QCOMPARE(o.exitCode, 2);
        QVERIFY2(o.err.contains("is succeeded, not waiting in the queue"), o.err.constData());
        QCOMPARE(ctl({QStringLiteral("priority"), QStringLiteral("sw[x=1]"), QStringLiteral("high")}).exitCode, 2);
    }

    void followWhileAnotherProcessIngests()
    {
        // The first trainyardctl owns ingestion for its whole run (as the GUI
        // would); the second must still print its run's console and exit
        // with its status, and logs without --follow must not wait.
        const QString longSpec = writeFile(QStringLiteral("long.yaml"),
            "name: long\ncommand: \"for i in 1 2 3 4 5 6; do echo tick=$i; sleep 0.4; done\"\n");
        const QString shortSpec = writeFile(QStringLiteral("short.yaml"),
            "name: short\ncommand: \"echo hello from short; echo acc=0.5; exit 3\"\n");
        QProcess owner;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), stateDir());
        owner.setProcessEnvironment(env);
        owner.start(QStringLiteral(TRAINYARD_CTL_PATH), {QStringLiteral("--db"), dbPath(), QStringLiteral("submit"), longSpec, QStringLiteral("--follow")});
        QVERIFY(owner.waitForStarted());
        QByteArray ownerOut;
        QTRY_VERIFY_WITH_TIMEOUT((ownerOut += owner.readAllStandardOutput()).contains("tick=1"), 10000);
        const Outcome o = ctl({QStringLiteral("submit"), shortSpec, QStringLiteral("--follow")}, 20000);
        QCOMPARE(o.exitCode, 3);
        QCOMPARE(o.out, QByteArray("hello from short\nacc=0.5\n"));
        const Outcome logs = ctl({QStringLiteral("logs"), QStringLiteral("long")}, 5000);
        QCOMPARE(logs.exitCode, 0);
        QVERIFY(logs.out.startsWith("tick=1\n"));
        QVERIFY(owner.waitForFinished(15000));
        QCOMPARE(owner.exitCode(), 0);
    }

    void lsRecordsRunsThatEndedUnwatched()
    {
        // submit without --follow returns once the run started; nothing
        // watches it after that. The next ls brings the database up to date.
        const QString spec = writeFile(QStringLiteral("unwatched.yaml"), "name: unwatched\ncommand: \"sleep 0.3; echo acc=0.7; exit 3\"\n");
        const Outcome s = ctl({QStringLiteral("submit"), spec});
        QCOMPARE(s.exitCode, 0);
        QVERIFY2(s.out.contains("running on local"), s.out.constData());
        QTest::qWait(1200);
        const Outcome ls = ctl({QStringLiteral("ls"), QStringLiteral("--json"), QStringLiteral("--db"), dbPath()});
        QCOMPARE(ls.exitCode, 0);
        const QJsonArray arr = QJsonDocument::fromJson(ls.out).array();
        QJsonObject run;
        for (const QJsonValue& v : arr)
            if (v[QStringLiteral("name")].toString() == u"unwatched")
                run = v.toObject();
        QCOMPARE(run[QStringLiteral("state")].toString(), QStringLiteral("failed"));
        QCOMPARE(run[QStringLiteral("exit_code")].toInt(), 3);
        QCOMPARE(run[QStringLiteral("latest_metrics")][QStringLiteral("acc")].toDouble(), 0.7);
    }

    void noSuchRunAndUsage()
    {
        QCOMPARE(ctl({QStringLiteral("logs"), QStringLiteral("999999")}).exitCode, 4);
        QCOMPARE(ctl({QStringLiteral("metrics"), QStringLiteral("no-such-name")}).exitCode, 4);
        QCOMPARE(ctl({QStringLiteral("frobnicate")}).exitCode, 2);
        QCOMPARE(ctl({}).exitCode, 2);
    }

    void cancelLeavesNothingBehind()
    {
        // A script whose grandchild ignores SIGTERM: cancel must still leave no process.
        const QString marker = m_dir.filePath(QStringLiteral("grandchild.pid"));
        const QString spec = writeFile(QStringLiteral("stubborn.yaml"),
            QStringLiteral("name: stubborn\ncommand: \"sh -c 'trap \\\"\\\" TERM; echo $$ > %1; exec sleep 300' & wait\"\n").arg(marker).toUtf8());
        const Outcome submitted = ctl({QStringLiteral("submit"), spec});
        QCOMPARE(submitted.exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(marker) && QFileInfo(marker).size() > 0, 10000);
        QFile f(marker);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const qint64 pid = f.readAll().trimmed().toLongLong();
        QVERIFY(pid > 0);
        QVERIFY(QFile::exists(QStringLiteral("/proc/%1").arg(pid)));
        const Outcome c = ctl({QStringLiteral("cancel"), QStringLiteral("stubborn"), QStringLiteral("--grace"), QStringLiteral("0.5")});
        QCOMPARE(c.exitCode, 0);
        QVERIFY2(c.out.contains("cancelled"), c.out.constData());
        QTRY_VERIFY_WITH_TIMEOUT(!QFile::exists(QStringLiteral("/proc/%1").arg(pid)), 5000);
    }
};

QTEST_GUILESS_MAIN(TestCliEndToEnd)
#include "TestCliEndToEnd.moc"
