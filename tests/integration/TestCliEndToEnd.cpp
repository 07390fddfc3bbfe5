#include "tests/support/TestSupport.h"
#include "core/store/ResultStore.h"
#include "core/store/SqliteResultStore.h"

#include <QDir>
#include <QDirIterator>
#include <QStandardPaths>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ty;

namespace {
using Outcome = test::ProcessOutcome;
std::optional<RunRecord> findRunByName(ResultStore& store, const QString& name)
{
    for (const RunRecord& r : store.runs())
        if (r.name == name)
            return r;
    return std::nullopt;
}
} // namespace

// Drives the built trainyardctl exactly as a user would, with a private
// database and a private agent state directory.
class TestCliEndToEnd final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString dbPath() const { return m_dir.filePath(QStringLiteral("results/trainyard.db")); }
    QString stateDir() const { return m_dir.filePath(QStringLiteral("agent-state")); }

    Outcome ctl(const QStringList& args, int timeoutMs = 240000) { return ctlAt(dbPath(), args, timeoutMs); }

    // trainyardctl --db `db` ARGS...
    Outcome ctlAt(const QString& db, const QStringList& args, int timeoutMs = 240000)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), stateDir());
        env.remove(QStringLiteral("TRAINYARD_DB"));
        return test::runProcess(
                QStringLiteral(TRAINYARD_CTL_PATH), QStringList{QStringLiteral("--db"), db} + args, env, timeoutMs);
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
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // The service every command starts (trainyardd) stops soon after the
        // last run and client, rather than outliving the test by minutes.
        qputenv("TRAINYARD_DAEMON_IDLE", "3");
    }
    void cleanupTestCase()
    {
        ctl({QStringLiteral("daemon"), QStringLiteral("stop")});
        // A file whose name is not UTF-8 (artifactNamesWithBackslashOrBadBytes)
        // cannot be named back through QDir: rm removes it by its bytes.
        QProcess::execute(QStringLiteral("rm"), {QStringLiteral("-rf"), m_dir.filePath(QStringLiteral("bsnames"))});
    }

    void digitsExampleFollow()
    {
        if (!QFile::exists(QStringLiteral("/usr/bin/python3")))
            QSKIP("Debian's python3 is not installed");
        const Outcome o = ctl({QStringLiteral("submit"),
                test::sourcePath(QStringLiteral("resources/examples/digits/job.yaml")), QStringLiteral("--follow")});
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
        QCOMPARE(acc.front().step, 45); // the step key on the line, not a counter
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

    // Issue #20: another local user read a console and a token. Made by a
    // real run under umask 022, the database, its side files, the console
    // copies, runs.env and the agent's run files are 0600 and their folders
    // 0700; a reader running as a second uid is refused.
    void filesArePrivateWhateverTheUmask()
    {
        QByteArray tmpl = QDir::temp().filePath(QStringLiteral("ty-private-XXXXXX")).toUtf8();
        QVERIFY(::mkdtemp(tmpl.data()));
        const QString root = QString::fromUtf8(tmpl);
        QVERIFY(::chmod(tmpl.constData(), 0755) == 0); // traversable: the files' own modes are what is tested
        const QString db = root + QStringLiteral("/db/trainyard.db");
        const QString state = root + QStringLiteral("/agent-state");
        QDir().mkpath(root + QStringLiteral("/job"));
        QFile spec(root + QStringLiteral("/job/job.yaml"));
        QVERIFY(spec.open(QIODevice::WriteOnly));
        spec.write("name: secret\nenv: {API_KEY: sekrit-token}\ncommand: \"echo the-console; touch out.txt\"\n");
        spec.close();
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), state);
        env.remove(QStringLiteral("TRAINYARD_DB"));
        p.setProcessEnvironment(env);
        p.setChildProcessModifier([] { ::umask(022); });
        p.start(QStringLiteral(TRAINYARD_CTL_PATH),
                {QStringLiteral("--db"), db, QStringLiteral("submit"), spec.fileName(), QStringLiteral("--follow")});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(p.readAllStandardOutput().contains("the-console"));

        QStringList files, dirs;
        for (const QString& top : QStringList{root + QStringLiteral("/db"), state}) {
            dirs << top;
            QDirIterator it(top, QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot | QDir::System,
                    QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QString path = it.next();
                (QFileInfo(path).isDir() ? dirs : files) << path;
            }
        }
        QVERIFY(files.contains(db));
        bool sawConsole = false, sawEnv = false;
        for (const QString& f : std::as_const(files)) {
            struct stat st { };
            QVERIFY(::lstat(QFile::encodeName(f).constData(), &st) == 0);
            QVERIFY2((st.st_mode & 07777) == 0600,
                    qPrintable(QStringLiteral("%1 is %2").arg(f).arg(st.st_mode & 07777, 4, 8, QLatin1Char('0'))));
            sawConsole |= f.endsWith(QStringLiteral("/console.log"));
            sawEnv |= test::readFile(f).contains("sekrit-token") && !f.endsWith(QStringLiteral(".db"));
        }
        for (const QString& d : std::as_const(dirs)) {
            struct stat st { };
            QVERIFY(::lstat(QFile::encodeName(d).constData(), &st) == 0);
            QVERIFY2((st.st_mode & 07777) == 0700,
                    qPrintable(QStringLiteral("%1 is %2").arg(d).arg(st.st_mode & 07777, 4, 8, QLatin1Char('0'))));
        }
        QVERIFY(sawConsole);
        // The run's own output keeps the user's umask.
        QCOMPARE(QFileInfo(root + QStringLiteral("/job/out.txt")).permissions() & QFileDevice::ReadOther,
                QFileDevice::ReadOther);
        Q_UNUSED(sawEnv);

        const passwd* other = ::getpwnam("trainyard-other");
        if (::geteuid() != 0 || !other || QStandardPaths::findExecutable(QStringLiteral("setpriv")).isEmpty()) {
            QDir(root).removeRecursively();
            QSKIP("the second-uid read needs root, setpriv and the user trainyard-other (scripts/install-deps.sh makes it)");
        }
        for (const QString& f : QStringList{db, db + QStringLiteral(".runs/1/console.log")}) {
            QProcess reader;
            reader.start(QStringLiteral("setpriv"),
                    {QStringLiteral("--reuid=%1").arg(other->pw_uid), QStringLiteral("--regid=%1").arg(other->pw_gid),
                            QStringLiteral("--clear-groups"), QStringLiteral("cat"), f});
            QVERIFY(reader.waitForFinished(10000));
            QVERIFY2(reader.exitCode() != 0, qPrintable(f));
            QVERIFY2(reader.readAllStandardError().contains("Permission denied"), qPrintable(f));
            QVERIFY(reader.readAllStandardOutput().isEmpty());
        }
        QDir(root).removeRecursively();
    }

    void failingRunPassesExitCode()
    {
        const QString spec = writeFile(
                QStringLiteral("fail.yaml"), "name: failing\ncommand: \"echo 'loss: 0.5'; echo boom >&2; exit 7\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QCOMPARE(o.exitCode, 7);
        QVERIFY(o.out.contains("boom"));
        QVERIFY(o.err.contains("failed, exit code 7"));
    }

    // Issue #25 through the service: it retries a run with `retry:` after
    // `submit --follow` has returned, and `show` lists the attempts.
    void retriedByTheService()
    {
        const QString spec = writeFile(QStringLiteral("again.yaml"),
                "name: again\ncommand: \"echo attempt=$TRAINYARD_ATTEMPT; exit 4\"\n"
                "retry: {limit: 1, backoff: {duration: 1s}}\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QCOMPARE(o.exitCode, 4);
        QVERIFY2(o.out.contains("attempt=1"), o.out.constData());
        // It says what comes next.
        QVERIFY2(QRegularExpression(
                         QStringLiteral("run (\\d+) retried as run (\\d+) \\(attempt 2\\), not before [^\\n]*; "
                                        "follow it with: trainyardctl logs \\2 --follow\\n"))
                         .match(QString::fromUtf8(o.err))
                         .hasMatch(),
                o.err.constData());
        QString shown;
        const QRegularExpression both(
                QStringLiteral("attempt    1: run (\\d+) failed \\(exit code 4\\) on local, [^\\n]*\\n"
                               "attempt    2: run (\\d+) failed \\(exit code 4\\) on local, "
                               "[^\\n]*  <- this run\\n"));
        QVERIFY2(test::waitUntil(
                         [&] {
                             shown = QString::fromUtf8(ctl({QStringLiteral("show"), QStringLiteral("again")}).out);
                             return both.match(shown).hasMatch();
                         },
                         30000),
                qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("not retried: ")) && shown.contains(QStringLiteral("retry limit is 1")),
                qPrintable(shown));
        const Outcome logs = ctl({QStringLiteral("logs"), QStringLiteral("again")});
        QCOMPARE(logs.out.trimmed(), QByteArray("attempt=2"));
    }

    // Issue #25: a retried run that resumed from its checkpoint reads as one
    // series with `metrics --attempts`: attempt 1 logged steps 0-5 and
    // checkpointed at 3; attempt 2 resumed at 4; 0-3 are attempt 1's, 4-7
    // attempt 2's.
    void metricsOfAttemptsReadAsOneSeries()
    {
        const QString spec = writeFile(QStringLiteral("resume/job.yaml"),
                "name: resumer\nworkdir: .\n"
                "retry: {limit: 1, backoff: {duration: 1s}}\n"
                "command: |\n"
                "  start=0\n"
                "  if [ -n \"$TRAINYARD_RESUME_FROM\" ]; then start=$(( $(cat \"$TRAINYARD_RESUME_FROM\") + 1 )); fi\n"
                "  mkdir -p \"$TRAINYARD_CHECKPOINT_DIR\"\n"
                "  for s in $(seq $start 7); do\n"
                "    echo \"step=$s loss=$s.5\"\n"
                "    if [ $s = 3 ]; then echo 3 > \"$TRAINYARD_CHECKPOINT_DIR/ck3\"; "
                "touch \"$TRAINYARD_CHECKPOINT_DIR/ck3.trainyard-done\"; fi\n"
                "    if [ $TRAINYARD_ATTEMPT = 1 ] && [ $s = 5 ]; then exit 1; fi\n"
                "  done\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QCOMPARE(o.exitCode, 1);
        const QRegularExpressionMatch ids = QRegularExpression(QStringLiteral("run (\\d+) retried as run (\\d+)"))
                                                    .match(QString::fromUtf8(o.err));
        QVERIFY2(ids.hasMatch(), o.err.constData());
        const QString first = ids.captured(1);
        const QString second = ids.captured(2);
        QVERIFY(test::waitUntil(
                [&] {
                    return ctl({QStringLiteral("show"), second})
                            .out.contains(
                                    QByteArray(QByteArray("attempt    2: run ") + second.toUtf8() + " succeeded"));
                },
                30000));
        const Outcome csv = ctl({QStringLiteral("metrics"), first, QStringLiteral("--attempts"),
                QStringLiteral("--key"), QStringLiteral("loss"), QStringLiteral("--csv")});
        QCOMPARE(csv.exitCode, 0);
        QStringList got;
        for (const QByteArray& line : csv.out.trimmed().split('\n').mid(1)) {
            const QList<QByteArray> f = line.split(',');
            got << QString::fromUtf8(f[0] + ':' + f[2] + '=' + f[5]);
        }
        QStringList want;
        for (int s = 0; s <= 7; ++s)
            want << QStringLiteral("%1:%2=%3.5").arg(s <= 3 ? first : second).arg(s).arg(s);
        QCOMPARE(got, want);
        // Without --attempts, the first attempt alone, steps 0-5.
        const Outcome alone = ctl({QStringLiteral("metrics"), first, QStringLiteral("--key"), QStringLiteral("loss"),
                QStringLiteral("--csv")});
        QCOMPARE(alone.out.trimmed().split('\n').size(), 1 + 6);
        // Text marks where attempt 2 takes over.
        const Outcome text = ctl({QStringLiteral("metrics"), second, QStringLiteral("--attempts")});
        QVERIFY2(text.out.contains(QByteArray(QByteArray("  -- run ") + second.toUtf8()
                         + " from step 4 (replaces 2 point(s) of the attempts before it)\n")),
                text.out.constData());
        const QJsonObject json = QJsonDocument::fromJson(
                ctl({QStringLiteral("metrics"), first, QStringLiteral("--attempts"), QStringLiteral("--json")}).out)
                                         .object();
        QCOMPARE(json.value(QStringLiteral("loss")).toArray().size(), 8);
        QCOMPARE(json.value(QStringLiteral("loss")).toArray().at(4).toObject().value(QStringLiteral("run")).toInteger(),
                second.toLongLong());
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
        auto run = std::find_if(
                runs.cbegin(), runs.cend(), [](const RunRecord& r) { return r.name == u"with-artifacts"; });
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
        const Outcome dl
                = ctl({QStringLiteral("artifacts"), QStringLiteral("odd-names"), QStringLiteral("--download"), dest});
        QVERIFY2(dl.exitCode == 0, dl.err.constData());
        QCOMPARE(dl.out.trimmed().split('\n').size(), 4);
        QVERIFY2(dl.out.contains(QByteArray("downloaded " + QFile::encodeName(dest) + "/out/two\\nlines.txt\n")),
                dl.out.constData());
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
        QVERIFY2(stored.startsWith(logs.out),
                qPrintable(QStringLiteral("printed %1 bytes, stored %2").arg(logs.out.size()).arg(stored.size())));
        QVERIFY(run.consoleOffset >= logs.out.size());
        QCOMPARE(ctl({QStringLiteral("logs"), QStringLiteral("logs-store"), QStringLiteral("--follow")}).exitCode,
                0); // let it end
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
        const Outcome dl
                = ctl({QStringLiteral("artifacts"), QStringLiteral("bs-names"), QStringLiteral("--download"), dest});
        QCOMPARE(dl.exitCode, 5); // one refused
        QCOMPARE(test::readFile(dest + QStringLiteral("/out/back\\slash.txt")), QByteArray("b"));
        QVERIFY2(dl.err.contains("is not valid UTF-8"), dl.err.constData());
        QVERIFY2(!dl.err.contains("not a regular file"), dl.err.constData());
        QCOMPARE(QDir(dest + QStringLiteral("/out")).entryList(QDir::Files),
                QStringList{QStringLiteral("back\\slash.txt")});
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
        const Outcome dl
                = ctl({QStringLiteral("artifacts"), QStringLiteral("linked-dest"), QStringLiteral("--download"), dest});
        QCOMPARE(dl.exitCode, 5);
        int refusedLines = 0; // one line per refused artifact (the node's log lines aside)
        for (const QByteArray& line : dl.err.split('\n')) {
            if (!line.startsWith("trainyardctl: run "))
                continue;
            ++refusedLines;
            QVERIFY2(line.contains(QByteArray("refused: " + QFile::encodeName(dest)
                             + "/out is a symbolic link here (to " + QFile::encodeName(elsewhere) + ")")),
                    line.constData());
            QVERIFY2(!line.contains("not a folder"), line.constData());
        }
        QCOMPARE(refusedLines, 2);
        QVERIFY(QDir(elsewhere).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden));
        // The refusal stays with the run as a notice (the GUI shows it too).
        const Outcome show = ctl({QStringLiteral("show"), QStringLiteral("linked-dest")});
        QVERIFY2(show.exitCode == 0, show.err.constData());
        QVERIFY2(show.out.contains(
                         QByteArray("artifact download to " + QFile::encodeName(dest) + " refused 2 file(s): ")),
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
            QVERIFY(notices[0][QStringLiteral("text")].toString().endsWith(
                    QStringLiteral(": data -> ../no_such_data")));
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
        QCOMPARE(QString::fromUtf8(v.err.trimmed()),
                spec + QStringLiteral(":2:1: unknown key 'comand' (did you mean 'command'?)"));
        const Outcome s = ctl({QStringLiteral("submit"), spec});
        QCOMPARE(s.exitCode, 3);
        const Outcome ok = ctl(
                {QStringLiteral("validate"), test::sourcePath(QStringLiteral("resources/examples/digits/job.yaml"))});
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

    void readCommandsCreateNoDatabase()
    {
        // `ls --db` on a path that does not exist used to create its folders
        // and an empty database: a typo made a new, empty history.
        const QString missing = m_dir.filePath(QStringLiteral("typo/sub/results.db"));
        for (const QStringList& args :
                {QStringList{QStringLiteral("ls")}, QStringList{QStringLiteral("show"), QStringLiteral("1")},
                        QStringList{QStringLiteral("queue")}, QStringList{QStringLiteral("node"), QStringLiteral("ls")},
                        QStringList{QStringLiteral("metrics"), QStringLiteral("1")}}) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
            env.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), stateDir());
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(TRAINYARD_CTL_PATH), QStringList{QStringLiteral("--db"), missing} + args);
            QVERIFY(p.waitForFinished(60000));
            const QByteArray err = p.readAllStandardError();
            QCOMPARE(p.exitCode(), 5);
            QVERIFY2(
                    err.contains(QByteArray(QByteArray("no result database at ") + missing.toUtf8())), err.constData());
            QVERIFY2(!QFileInfo::exists(m_dir.filePath(QStringLiteral("typo"))), qPrintable(args.join(u' ')));
        }
    }

    void readOnlyDatabaseIsListedAndNeverChanged()
    {
        // A colleague's results on a read-only share: a read-only mount,
        // which refuses root too (the tests run as root).
        if (::geteuid() != 0)
            QSKIP("needs root to mount a tmpfs");
        const QString share = m_dir.filePath(QStringLiteral("share"));
        QVERIFY(QDir().mkpath(share));
        const auto mount = [&share](const QStringList& options) {
            QProcess p;
            p.start(QStringLiteral("mount"), options + QStringList{share});
            return p.waitForFinished(30000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
        };
        if (!mount({QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"), QStringLiteral("size=16m"),
                    QStringLiteral("tmpfs")}))
            QSKIP("cannot mount a tmpfs");
        const auto unmount = qScopeGuard([&share] {
            if (QProcess::execute(QStringLiteral("umount"), {share}) != 0)
                QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), share});
        });
        const QString db = share + QStringLiteral("/trainyard.db");
        const QString spec
                = writeFile(QStringLiteral("ro/job.yaml"), "name: shared-run\ncommand: \"echo loss=0.25 step=3\"\n");
        const Outcome submitted = ctlAt(db, {QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(submitted.exitCode == 0, submitted.err.constData());
        // The service that recorded it lets go of the file first (as it does
        // when idle), or the share cannot be made read-only under it.
        QCOMPARE(ctlAt(db, {QStringLiteral("daemon"), QStringLiteral("stop")}).exitCode, 0);
        QVERIFY(mount({QStringLiteral("-o"), QStringLiteral("remount,ro")}));
        const auto entries = [&share] {
            QStringList all;
            QDirIterator it(share, QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot | QDir::System,
                    QDirIterator::Subdirectories);
            while (it.hasNext())
                all << it.next();
            all.sort();
            return all;
        };
        const QStringList before = entries();

        const Outcome ls = ctlAt(db, {QStringLiteral("ls")});
        QVERIFY2(ls.exitCode == 0, ls.err.constData());
        QVERIFY2(ls.out.contains("shared-run") && ls.out.contains("succeeded") && ls.out.contains("loss=0.25"),
                ls.out.constData());
        QVERIFY2(ls.err.isEmpty(), ls.err.constData());
        const Outcome show = ctlAt(db, {QStringLiteral("show"), QStringLiteral("shared-run")});
        QVERIFY2(show.exitCode == 0 && show.out.contains("shared-run"), show.err.constData());
        const Outcome metrics = ctlAt(db, {QStringLiteral("metrics"), QStringLiteral("1")});
        QVERIFY2(metrics.exitCode == 0 && metrics.out.contains("step 3  0.25"),
                QByteArray(metrics.out + metrics.err).constData());
        const Outcome logs = ctlAt(db, {QStringLiteral("logs"), QStringLiteral("1")});
        QVERIFY2(logs.exitCode == 0 && logs.out.contains("loss=0.25 step=3"),
                QByteArray(logs.out + logs.err).constData());
        const Outcome queue = ctlAt(db, {QStringLiteral("queue")});
        QVERIFY2(queue.exitCode == 0, queue.err.constData());

        // What changes it is refused: exit Unavailable, the path and why.
        for (const QStringList& args :
                {QStringList{QStringLiteral("rename"), QStringLiteral("1"), QStringLiteral("mine")},
                        QStringList{QStringLiteral("rm"), QStringLiteral("1")},
                        QStringList{QStringLiteral("submit"), spec}}) {
            const Outcome o = ctlAt(db, args);
            QVERIFY2(o.exitCode == 5, qPrintable(args.join(u' ')));
            QVERIFY2(o.err.contains(QByteArray(db.toUtf8() + ": cannot write the result database: its folder "
                             + share.toUtf8() + " is not writable (Read-only file system)")),
                    o.err.constData());
            QVERIFY2(o.err.contains(QByteArray("'" + args.front().toUtf8() + "' changes it, so it did not run")),
                    o.err.constData());
        }
        QCOMPARE(entries(), before);
        QVERIFY(ctlAt(db, {QStringLiteral("ls")}).out.contains("shared-run"));
    }

    void colleaguesFolderIsReadNotWritten()
    {
        // chmod 555 on the folder, 644 on the file: another user (root
        // ignores permissions) lists it, and cannot change it.
        const passwd* other = ::getpwnam("trainyard-other");
        if (::geteuid() != 0 || !other || QStandardPaths::findExecutable(QStringLiteral("setpriv")).isEmpty())
            QSKIP("needs root, setpriv and the user trainyard-other (scripts/install-deps.sh makes it)");
        QByteArray tmpl = QDir::temp().filePath(QStringLiteral("ty-colleague-XXXXXX")).toUtf8();
        QVERIFY(::mkdtemp(tmpl.data()));
        const QString root = QString::fromUtf8(tmpl);
        const auto removeRoot = qScopeGuard([&root] {
            ::chmod(QFile::encodeName(root + QStringLiteral("/share")).constData(), 0755);
            QDir(root).removeRecursively();
        });
        QVERIFY(::chmod(tmpl.constData(), 0755) == 0);
        const QString db = root + QStringLiteral("/share/trainyard.db");
        const QString spec = writeFile(
                QStringLiteral("colleague/job.yaml"), "name: their-run\ncommand: \"echo loss=0.75 step=2\"\n");
        const Outcome submitted = ctlAt(db, {QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(submitted.exitCode == 0, submitted.err.constData());
        // The service closes the file (its last connection checkpoints the WAL).
        QCOMPARE(ctlAt(db, {QStringLiteral("daemon"), QStringLiteral("stop")}).exitCode, 0);
        QVERIFY(::chmod(QFile::encodeName(db).constData(), 0644) == 0);
        QVERIFY(::chmod(QFile::encodeName(root + QStringLiteral("/share")).constData(), 0555) == 0);
        const QStringList before = QDir(root + QStringLiteral("/share"))
                                           .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);

        const auto asOther = [&](const QStringList& args) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("HOME"), QStringLiteral("/nonexistent"));
            env.remove(QStringLiteral("TRAINYARD_DB"));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral("setpriv"),
                    QStringList{QStringLiteral("--reuid=%1").arg(other->pw_uid),
                            QStringLiteral("--regid=%1").arg(other->pw_gid), QStringLiteral("--clear-groups"),
                            QStringLiteral(TRAINYARD_CTL_PATH), QStringLiteral("--db"), db}
                            + args);
            p.waitForFinished(60000);
            return Outcome{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                    p.readAllStandardError()};
        };
        const Outcome ls = asOther({QStringLiteral("ls")});
        QVERIFY2(ls.exitCode == 0, ls.err.constData());
        QVERIFY2(ls.out.contains("their-run") && ls.out.contains("loss=0.75"), ls.out.constData());
        const Outcome metrics = asOther({QStringLiteral("metrics"), QStringLiteral("their-run")});
        QVERIFY2(metrics.exitCode == 0 && metrics.out.contains("step 2  0.75"),
                QByteArray(metrics.out + metrics.err).constData());
        const Outcome rename = asOther({QStringLiteral("rename"), QStringLiteral("their-run"), QStringLiteral("mine")});
        QCOMPARE(rename.exitCode, 5);
        QVERIFY2(rename.err.contains(QByteArray(db.toUtf8() + ": cannot write the result database: its folder "
                         + root.toUtf8() + "/share is not writable (Permission denied)")),
                rename.err.constData());
        QCOMPARE(
                QDir(root + QStringLiteral("/share")).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                before);
        QVERIFY(ctlAt(db, {QStringLiteral("show"), QStringLiteral("their-run")}).out.contains("their-run"));
    }

    void damagedDatabaseIsExplained()
    {
        // Truncated to half its size: refused at once, in words, untouched.
        const QString cut = m_dir.filePath(QStringLiteral("damaged/cut.db"));
        {
            SqliteStoreOptions rows;
            rows.packBlocks = false; // rows: many pages
            auto store = SqliteResultStore::open(cut, rows);
            QVERIFY(store);
            RunRecord r;
            r.name = QStringLiteral("long-run");
            auto id = (*store)->createRun(r, {});
            QVERIFY(id);
            QList<MetricPoint> points;
            for (int i = 0; i < 40000; ++i)
                points << MetricPoint{*id, QStringLiteral("loss"), i, std::nullopt, 1'700'000'000'000 + i, i * 0.25};
            (*store)->appendMetrics(points);
            QVERIFY((*store)->flush());
        }
        const QString midway = m_dir.filePath(QStringLiteral("damaged/midway.db"));
        QVERIFY(QFile::copy(cut, midway));
        {
            QFile f(cut);
            QVERIFY(f.resize(f.size() / 2));
        }
        const auto readAll = [](const QString& path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray cutBytes = readAll(cut);
        for (const QString& command : {QStringLiteral("ls"), QStringLiteral("rename")}) {
            const Outcome o = ctlAt(cut,
                    command == u"ls" ? QStringList{command}
                                     : QStringList{command, QStringLiteral("1"), QStringLiteral("x")});
            QCOMPARE(o.exitCode, 5);
            QVERIFY2(o.err.startsWith(QByteArray("trainyardctl: " + cut.toUtf8()
                             + " is damaged (SQLite: database disk image is malformed)")),
                    o.err.constData());
            QVERIFY2(o.err.contains(QByteArray("sqlite3 '" + cut.toUtf8() + "' \".recover\" | sqlite3 '")),
                    o.err.constData());
            QVERIFY2(o.err.contains("keeps no backup copy"), o.err.constData());
        }
        QCOMPARE(readAll(cut), cutBytes);

        // Garbage in the header; a file that is no database at all.
        const QString garbage = m_dir.filePath(QStringLiteral("damaged/garbage.db"));
        QByteArray bytes = readAll(midway);
        bytes.replace(16, 32, QByteArray(32, '\xAB'));
        QVERIFY(!writeFile(QStringLiteral("damaged/garbage.db"), bytes).isEmpty());
        const Outcome g = ctlAt(garbage, {QStringLiteral("ls")});
        QCOMPARE(g.exitCode, 5);
        QVERIFY2(g.err.contains(QByteArray(garbage.toUtf8() + " is damaged (SQLite: file is not a database)")),
                g.err.constData());
        const QString notes = writeFile(QStringLiteral("damaged/notes.txt"), "not results\n");
        const Outcome n = ctlAt(notes, {QStringLiteral("ls")});
        QCOMPARE(n.exitCode, 5);
        QVERIFY2(n.err.contains(QByteArray(notes.toUtf8() + ": not a Trainyard result database")), n.err.constData());

        // Pages of the metric rows spoilt: found by the read, explained once.
        {
            QFile f(midway);
            const qint64 size = f.size();
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.seek(size / 2));
            f.write(QByteArray(int(size / 4), '\xFF'));
        }
        const Outcome m = ctlAt(midway, {QStringLiteral("metrics"), QStringLiteral("long-run")});
        QCOMPARE(m.exitCode, 5);
        QCOMPARE(m.err.count("is damaged"), 1);
        QCOMPARE(m.err.count("malformed"), 1);
        QVERIFY2(!m.err.contains("has no metrics"), m.err.constData()); // the explanation, not a misleading "empty"
        QVERIFY2(m.err.contains(QByteArray(midway.toUtf8() + " is damaged (SQLite: database disk image is malformed)")),
                m.err.constData());
    }

    void renameTagNoteArchiveAndRerun()
    {
        // What the GUI's Run menu does, from the shell: the run of a sweep is
        // renamed, tagged, noted, archived (gone from ls, kept in the
        // database) and run again alone with one param changed.
        const QString spec = writeFile(QStringLiteral("labels.yaml"),
                "name: lab\ncommand: \"echo lr={{lr}} bs={{bs}}\"\nparams: {bs: 8}\nsweep: {lr: [0.1, 0.01]}\n");
        QCOMPARE(ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")}).exitCode, 0);
        const Outcome rn = ctl({QStringLiteral("rename"), QStringLiteral("lab[lr=0.01]"), QStringLiteral("lab-best")});
        QVERIFY2(rn.exitCode == 0, rn.err.constData());
        QVERIFY2(rn.out.contains("to lab-best"), rn.out.constData());
        QCOMPARE(ctl({QStringLiteral("tag"), QStringLiteral("lab-best"), QStringLiteral("+best"),
                             QStringLiteral("keep")})
                         .exitCode,
                0);
        const Outcome untag = ctl({QStringLiteral("tag"), QStringLiteral("lab-best"), QStringLiteral("-keep")});
        QCOMPARE(untag.exitCode, 0);
        QVERIFY2(untag.out.contains(" best") && !untag.out.contains("keep"), untag.out.constData());
        QCOMPARE(ctl({QStringLiteral("note"), QStringLiteral("lab-best"), QStringLiteral("lower lr wins\nsee epoch 3")})
                         .exitCode,
                0);
        const Outcome show = ctl({QStringLiteral("show"), QStringLiteral("lab-best")});
        QVERIFY2(show.out.contains("notes      lower lr wins\nnotes      see epoch 3\n"), show.out.constData());
        QVERIFY(show.out.contains("best"));

        // Archive: a finished run only; out of ls, back with --archived.
        QCOMPARE(ctl({QStringLiteral("archive"), QStringLiteral("lab[lr=0.1]")}).exitCode, 0);
        const Outcome ls = ctl({QStringLiteral("ls")});
        QVERIFY2(!ls.out.contains("lab[lr=0.1]") && ls.out.contains("lab-best"), ls.out.constData());
        const Outcome all = ctl({QStringLiteral("ls"), QStringLiteral("--archived")});
        QVERIFY2(all.out.contains("lab[lr=0.1]") && all.out.contains("[archived]"), all.out.constData());
        const Outcome json = ctl({QStringLiteral("ls"), QStringLiteral("--json"), QStringLiteral("--archived")});
        QVERIFY(json.out.contains("\"archived\": true")
                && json.out.contains("\"notes\": \"lower lr wins\\nsee epoch 3\""));
        QCOMPARE(ctl({QStringLiteral("unarchive"), QStringLiteral("lab[lr=0.1]")}).exitCode, 0);
        QVERIFY(ctl({QStringLiteral("ls")}).out.contains("lab[lr=0.1]"));

        // Re-run the renamed sweep run alone, bs changed: one run, lr kept.
        const Outcome again = ctl({QStringLiteral("rerun"), QStringLiteral("lab-best"), QStringLiteral("--param"),
                QStringLiteral("bs=16"), QStringLiteral("--follow")});
        QVERIFY2(again.exitCode == 0, again.err.constData());
        QVERIFY2(again.out.contains("lr=0.01 bs=16"), again.out.constData());
        QVERIFY2(again.err.contains("submitted run ") && !again.err.contains("sweep"), again.err.constData());

        // Mistakes say what and where.
        const Outcome empty = ctl({QStringLiteral("rename"), QStringLiteral("lab-best"), QStringLiteral("  ")});
        QCOMPARE(empty.exitCode, 2);
        QVERIFY2(empty.err.contains("name cannot be empty"), empty.err.constData());
        QCOMPARE(ctl({QStringLiteral("archive"), QStringLiteral("no-such-run")}).exitCode, 4);
        QCOMPARE(ctl({QStringLiteral("rerun"), QStringLiteral("lab-best"), QStringLiteral("--param"),
                             QStringLiteral("nope=1")})
                         .exitCode,
                3);
    }

    void importFrameworkFiles()
    {
        // The fixtures' Lightning CSV and TensorBoard files of one run, into a run of ours.
        const QString csv = test::fixturePath(QStringLiteral("gpu-workstation/frameworks/lightning-csv/metrics.csv"));
        const QDir tbDir(test::fixturePath(QStringLiteral("gpu-workstation/frameworks/lightning-tensorboard")));
        const QString tb = tbDir.filePath(tbDir.entryList({QStringLiteral("events.out.tfevents.*")}).value(0));
        Outcome o = ctl({QStringLiteral("import"), QStringLiteral("sw[x=1]"), csv});
        QCOMPARE(o.exitCode, 0);
        QVERIFY2(
                o.out.contains("39 points of 3 metric(s) (train_loss, val_acc, val_loss) from CSV"), o.out.constData());
        const Outcome m = ctl({QStringLiteral("metrics"), QStringLiteral("sw[x=1]"), QStringLiteral("--csv"),
                QStringLiteral("--key"), QStringLiteral("val_acc")});
        QCOMPARE(m.out.trimmed().split('\n').size(), 1 + 6);
        // The TensorBoard file's hparams become the run's params, beside the sweep's own.
        o = ctl({QStringLiteral("import"), QStringLiteral("sw[x=1]"), tb});
        QCOMPARE(o.exitCode, 0);
        QVERIFY2(
                o.out.contains(
                        "40 points of 4 metric(s) (hp_metric, train_loss, val_loss, val_acc) from TensorBoard event file"),
                o.out.constData());
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
        QCOMPARE(ctl({QStringLiteral("import"), QStringLiteral("sw[x=1]"), QStringLiteral("/etc/hostname")}).exitCode,
                3);
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
        o = ctl({QStringLiteral("policy"), QStringLiteral("fcfs"), QStringLiteral("--queue"),
                QStringLiteral("strict")});
        QCOMPARE(o.out.trimmed(), QByteArray("queue strict: fcfs"));
        QCOMPARE(ctl({QStringLiteral("policy")}).out, QByteArray("backfill\nqueue strict: fcfs\n"));
        // Preemption (issue #25): off by default, on per queue, kept when the policy changes.
        o = ctl({QStringLiteral("policy"), QStringLiteral("--queue"), QStringLiteral("strict"),
                QStringLiteral("--preemption"), QStringLiteral("on")});
        QCOMPARE(o.exitCode, 0);
        QCOMPARE(o.out.trimmed(), QByteArray("queue strict: fcfs, preemption on"));
        QCOMPARE(ctl({QStringLiteral("policy"), QStringLiteral("priority"), QStringLiteral("--queue"),
                             QStringLiteral("strict")})
                         .out.trimmed(),
                QByteArray("queue strict: priority, preemption on"));
        QCOMPARE(ctl({QStringLiteral("policy"), QStringLiteral("--preemption"), QStringLiteral("maybe")}).exitCode, 2);
        QCOMPARE(ctl({QStringLiteral("policy"), QStringLiteral("fcfs"), QStringLiteral("--queue"),
                             QStringLiteral("strict"), QStringLiteral("--preemption"), QStringLiteral("off")})
                         .exitCode,
                0);
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

    // Labels on any node, the local one included (issue #25): `node label`
    // stores them through the service, `node ls` shows them, and the
    // service's scheduler places by them at its next pass, without a restart:
    // a run of a pool selecting the label runs on local; with the label
    // removed the next one waits, naming the pool, and starts once the label
    // is back. Bad labels and unknown nodes are refused, naming them.
    void nodeLabelsPlaceRunsOfAPool()
    {
        const QString db = m_dir.filePath(QStringLiteral("labels/trainyard.db"));
        QVERIFY(!writeFile(
                QStringLiteral("labels/trainyard.db.scheduler.json"), R"({"pools": {"lab": {"labels": ["lab"]}}})")
                         .isEmpty());
        const auto stop = qScopeGuard([&] { ctlAt(db, {QStringLiteral("daemon"), QStringLiteral("stop")}); });
        Outcome o = ctlAt(db, {QStringLiteral("node"), QStringLiteral("label"), QStringLiteral("local")});
        QCOMPARE(o.exitCode, 0);
        QCOMPARE(o.out, QByteArray("local: no labels\n"));
        o = ctlAt(db,
                {QStringLiteral("node"), QStringLiteral("label"), QStringLiteral("local"), QStringLiteral("--add"),
                        QStringLiteral("lab"), QStringLiteral("--add"), QStringLiteral("big-mem")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QCOMPARE(o.out, QByteArray("local: labels: lab,big-mem\n"));
        o = ctlAt(db, {QStringLiteral("node"), QStringLiteral("ls")});
        QVERIFY2(o.out.contains("labels: lab,big-mem"), o.out.constData());
        o = ctlAt(db, {QStringLiteral("node"), QStringLiteral("ls"), QStringLiteral("--json")});
        const QJsonArray nodes = QJsonDocument::fromJson(o.out).array();
        QCOMPARE(nodes.first().toObject().value(QStringLiteral("labels")).toArray(),
                (QJsonArray{QStringLiteral("lab"), QStringLiteral("big-mem")}));

        // policy lists the pool with what it holds now (no GPUs here).
        o = ctlAt(db, {QStringLiteral("policy")});
        QVERIFY2(o.out.contains("pool lab: nodes labelled lab; users: no GPU limit; projects: no GPU limit; lends "
                                "idle GPUs; does not borrow\n  nodes: local; its runs hold 0 GPUs there, 0 lent to "
                                "other pools, 0 borrowed\n"),
                o.out.constData());

        const QString spec = writeFile(
                QStringLiteral("labels/job.yaml"), "name: in-lab\nworkdir: .\npool: lab\ncommand: \"echo in lab\"\n");
        o = ctlAt(db, {QStringLiteral("submit"), spec, QStringLiteral("--follow")}, 60000);
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QCOMPARE(o.out, QByteArray("in lab\n"));

        o = ctlAt(db,
                {QStringLiteral("node"), QStringLiteral("label"), QStringLiteral("local"), QStringLiteral("--remove"),
                        QStringLiteral("lab")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QCOMPARE(o.out, QByteArray("local: labels: big-mem\n"));
        QVERIFY(ctlAt(db, {QStringLiteral("policy")}).out.contains("\n  nodes: none;"));
        o = ctlAt(db, {QStringLiteral("submit"), spec}, 60000);
        QVERIFY2(o.exitCode == 0, o.err.constData());
        const QByteArray reason = "waiting: pool lab has no nodes (none carries its labels: lab)";
        QVERIFY2(o.out.contains(reason), o.out.constData());
        auto store = ResultStore::open(db);
        QVERIFY(store);
        const QList<RunRecord> runs = (*store)->runs();
        QCOMPARE(runs.size(), 2);
        const RunId second = std::max(runs[0].id, runs[1].id);
        QCOMPARE((*store)->run(second)->state, RunState::Queued);
        // The service's reply carries the reason at once; the database gets
        // it through the store's writer, a moment later.
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(second)->pendingReason, QString::fromUtf8(reason), 10000);
        // The label back: the waiting run starts, the service still the same.
        o = ctlAt(db,
                {QStringLiteral("node"), QStringLiteral("label"), QStringLiteral("local"), QStringLiteral("--add"),
                        QStringLiteral("lab")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(second)->state, RunState::Succeeded, 30000);
        QCOMPARE((*store)->run(second)->node, QStringLiteral("local"));

        // Refused, naming what and where; nothing changed.
        o = ctlAt(db,
                {QStringLiteral("node"), QStringLiteral("label"), QStringLiteral("local"), QStringLiteral("--add"),
                        QStringLiteral("gpu;rm -rf\x1b[2J")});
        QCOMPARE(o.exitCode, 2);
        QVERIFY2(o.err.contains("node label local: --add: label 'gpu;rm -rf\\u001b[2J' has ';' at position 4"),
                o.err.constData());
        QVERIFY(!o.err.contains('\x1b'));
        o = ctlAt(db,
                {QStringLiteral("node"), QStringLiteral("label"), QStringLiteral("nosuch"), QStringLiteral("--add"),
                        QStringLiteral("x")});
        QCOMPARE(o.exitCode, 4);
        QVERIFY2(o.err.contains("no node named 'nosuch'"), o.err.constData());
        QCOMPARE(ctlAt(db, {QStringLiteral("node"), QStringLiteral("label"), QStringLiteral("local")}).out,
                QByteArray("local: labels: big-mem,lab\n"));
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
        owner.start(QStringLiteral(TRAINYARD_CTL_PATH),
                {QStringLiteral("--db"), dbPath(), QStringLiteral("submit"), longSpec, QStringLiteral("--follow")});
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

    void sweepWhileAnotherProcessIngests()
    {
        // A second trainyardctl owns ingestion all along (as the GUI would):
        // it starts the sweep's runs; submit learns their progress from the
        // database and must exit once they started (without --follow) or
        // ended (with it, printing each run's console).
        const QString stop = m_dir.filePath(QStringLiteral("holder.stop"));
        const QString holderSpec = writeFile(QStringLiteral("holder.yaml"),
                QStringLiteral(
                        "name: holder\ncommand: \"echo holding; for i in $(seq 1200); do [ -e %1 ] && break; sleep 0.1; done\"\n")
                        .arg(stop)
                        .toUtf8());
        QProcess holder;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), stateDir());
        holder.setProcessEnvironment(env);
        holder.start(QStringLiteral(TRAINYARD_CTL_PATH),
                {QStringLiteral("--db"), dbPath(), QStringLiteral("submit"), holderSpec, QStringLiteral("--follow")});
        QVERIFY(holder.waitForStarted());
        QByteArray holderOut;
        QTRY_VERIFY_WITH_TIMEOUT((holderOut += holder.readAllStandardOutput()).contains("holding"), 10000);

        const QString started = writeFile(QStringLiteral("sweep-started.yaml"),
                "name: ss\ncommand: \"sleep 0.5; echo acc={{x}}\"\nsweep: {x: [1, 2, 3]}\nmax_concurrent: 2\n");
        const Outcome s = ctl({QStringLiteral("submit"), started}, 30000);
        QVERIFY2(s.exitCode == 0, s.err.constData());
        QVERIFY2(s.err.contains("submitted sweep ss: 3 runs"), s.err.constData());
        {
            auto store = ResultStore::open(dbPath());
            QVERIFY(store);
            // Started, or known to wait at the sweep's cap (submit says so
            // and leaves it to the service, issue #22). The service tells a
            // start before its write-behind commits it: read until the
            // database has caught up with what submit was told.
            int startedRuns = 0, waiting = 0;
            const auto count = [&] {
                startedRuns = waiting = 0;
                for (const RunRecord& r : (*store)->runs()) {
                    if (!r.name.startsWith(u"ss["))
                        continue;
                    if (r.state != RunState::Queued && r.state != RunState::Starting)
                        ++startedRuns;
                    else if (s.out.contains(QByteArray(QByteArray("run ") + QByteArray::number(r.id) + " queued: ")))
                        ++waiting;
                }
                return startedRuns + waiting;
            };
            QTRY_COMPARE_WITH_TIMEOUT(count(), 3, 5000);
            QVERIFY2(startedRuns >= 2, s.out.constData());
        }

        const QString followed = writeFile(QStringLiteral("sweep-followed.yaml"),
                "name: sf\ncommand: \"echo hello {{x}}; sleep 0.3; printf 'acc={{x}}'\"\nsweep: {x: [1, 2, 3]}\nmax_concurrent: 2\n");
        const Outcome f = ctl({QStringLiteral("submit"), followed, QStringLiteral("--follow")}, 30000);
        QVERIFY2(f.exitCode == 0, f.err.constData());
        for (const char* x : {"1", "2", "3"}) {
            // Each run's lines whole, behind its name; a last line without a
            // newline is ended when the run ends.
            QVERIFY2(f.out.contains(QByteArray(QByteArray("sf[x=") + x + "] | hello " + x + "\n")), f.out.constData());
            QVERIFY2(f.out.contains(QByteArray(QByteArray("sf[x=") + x + "] | acc=" + x + "\n")), f.out.constData());
            QVERIFY2(f.err.contains(QByteArray(QByteArray("(sf[x=") + x + "]) succeeded")), f.err.constData());
        }
        QCOMPARE(f.out.count('\n'), 6);
        // The holder owned ingestion throughout.
        QCOMPARE(holder.state(), QProcess::Running);

        // artifacts of a run whose spec declares none: said at once.
        const Outcome a = ctl({QStringLiteral("artifacts"), QStringLiteral("sf[x=1]")}, 10000);
        QCOMPARE(a.exitCode, 0);
        QCOMPARE(a.out, QByteArray());
        QVERIFY2(a.err.contains("has no artifacts: its job spec declares no `artifacts:` globs"), a.err.constData());
        // logs of a run that waits (held, so the holder leaves it queued):
        // nothing is on a node yet, so nothing to wait for.
        {
            auto store = ResultStore::open(dbPath());
            QVERIFY(store);
            RunRecord held;
            held.name = QStringLiteral("waiting-held");
            held.state = RunState::Held;
            held.argv = {QStringLiteral("true")};
            held.createdAt = QDateTime::currentDateTimeUtc();
            QVERIFY((*store)->createRun(held, {}));
        }
        const Outcome l = ctl({QStringLiteral("logs"), QStringLiteral("waiting-held")}, 10000);
        QCOMPARE(l.exitCode, 0);
        QCOMPARE(l.out, QByteArray());
        QVERIFY2(l.err.contains("is held; it has printed nothing yet"), l.err.constData());
        QFile(stop).open(QIODevice::WriteOnly);
        QVERIFY(holder.waitForFinished(15000));
        QCOMPARE(holder.exitCode(), 0);
    }

    void artifactsOfARunThatNeverStarted()
    {
        // The engine answers at once (before the event loop runs): trainyardctl
        // must not wait for an answer that already came.
        const QString spec = writeFile(QStringLiteral("unplaceable.yaml"),
                "name: unplaceable\ncommand: 'true'\nresources: {gpus: 64}\nartifacts: ['*.pt']\n");
        const Outcome s = ctl({QStringLiteral("submit"), spec}, 20000);
        QVERIFY2(s.exitCode == 1, s.err.constData());
        const Outcome a = ctl({QStringLiteral("artifacts"), QStringLiteral("unplaceable")}, 10000);
        QCOMPARE(a.exitCode, 5);
        QVERIFY2(a.err.contains("has no artifacts: it never started"), a.err.constData());
    }

    void controlCharactersInStoredStringsAreEscaped()
    {
        // An OSC title sequence (ESC ] 0;pwned BEL), a C1 CSI (U+009B) and a
        // C0 control in the run's name, a tag and a param: submit, ls, show
        // and queue print them escaped, never raw.
        const QString spec = writeFile(QStringLiteral("evil.yaml"),
                "name: \"evil\\e]0;pwned\\a\\x9b2J\\x01\"\n"
                "command: 'true'\n"
                "tags: [\"tag\\e[31m\"]\n"
                "params: {p: \"v\\e]0;x\\a\"}\n");
        const QByteArray escapedName = "evil\\e]0;pwned\\x07\\u009b2J\\x01";
        {
            // A waiting run with the same name, for the queue listing.
            auto store = ResultStore::open(dbPath());
            QVERIFY(store);
            RunRecord held;
            held.name = QString::fromUtf8("evil\x1b]0;pwned\x07\xc2\x9b"
                                          "2J\x01");
            held.state = RunState::Held;
            held.argv = {QStringLiteral("true")};
            held.createdAt = QDateTime::currentDateTimeUtc();
            QVERIFY((*store)->createRun(held, {}));
        }
        const QList<QByteArray> raw = {"\x1b", "\x07", "\xc2\x9b", "\x01"};
        const auto check = [&](const Outcome& o, const char* what) {
            for (const QByteArray& bytes : raw) {
                QVERIFY2(!o.out.contains(bytes),
                        qPrintable(
                                QStringLiteral("%1 stdout: %2")
                                        .arg(QLatin1String(what), QString::fromUtf8(o.out.toPercentEncoding(" \n")))));
                QVERIFY2(!o.err.contains(bytes),
                        qPrintable(
                                QStringLiteral("%1 stderr: %2")
                                        .arg(QLatin1String(what), QString::fromUtf8(o.err.toPercentEncoding(" \n")))));
            }
        };
        const Outcome s = ctl({QStringLiteral("submit"), spec}, 20000);
        QVERIFY2(s.exitCode == 0, s.err.constData());
        check(s, "submit");
        QVERIFY2(s.err.contains(escapedName) && s.out.contains(escapedName), QByteArray(s.out + s.err).constData());
        const Outcome ls = ctl({QStringLiteral("ls")});
        QCOMPARE(ls.exitCode, 0);
        check(ls, "ls");
        QVERIFY2(ls.out.contains(escapedName.left(20)), ls.out.constData());
        // The newest run of that name: the submitted one (the held one is older).
        const Outcome show = ctl({QStringLiteral("show"), s.out.split(' ').value(1)});
        QCOMPARE(show.exitCode, 0);
        check(show, "show");
        QVERIFY2(show.out.contains(escapedName), show.out.constData());
        QVERIFY2(show.out.contains("tag\\e[31m"), show.out.constData());
        QVERIFY2(show.out.contains("p=v\\e]0;x\\x07"), show.out.constData());
        const Outcome queue = ctl({QStringLiteral("queue")});
        QCOMPARE(queue.exitCode, 0);
        check(queue, "queue");
        QVERIFY2(queue.out.contains(escapedName.left(24)), queue.out.constData());
    }

    void firstHourMessages()
    {
        // validate says how many runs a sweep makes.
        const QString sweep = writeFile(QStringLiteral("digits-sweep.yaml"),
                "name: digits-sweep\ncommand: \"echo acc=0.5 {{lr}} {{batch}}\"\n"
                "sweep: {lr: [0.001, 0.0003, 0.01], batch: [32, 64]}\nmax_concurrent: 2\n");
        const Outcome v = ctl({QStringLiteral("validate"), sweep});
        QCOMPARE(v.exitCode, 0);
        QVERIFY2(v.out.contains("  sweep of 6 runs (batch x 2, lr x 3), at most 2 at once\n"), v.out.constData());

        // ls never cuts names where sweep runs differ; --json carries params and tags.
        const QString two = writeFile(QStringLiteral("digits-two.yaml"),
                "name: digits-sweep\ncommand: \"echo acc=0.5\"\ntags: [first-hour]\nsweep: {lr: [0.001, 0.0003]}\n");
        QCOMPARE(ctl({QStringLiteral("submit"), two, QStringLiteral("--follow")}, 30000).exitCode, 0);
        const Outcome ls = ctl({QStringLiteral("ls")});
        QCOMPARE(ls.exitCode, 0);
        QVERIFY2(ls.out.contains(" digits-sweep[lr=0.001] "), ls.out.constData());
        QVERIFY2(ls.out.contains(" digits-sweep[lr=0.0003] "), ls.out.constData());
        const QJsonArray arr
                = QJsonDocument::fromJson(ctl({QStringLiteral("ls"), QStringLiteral("--json")}).out).array();
        QJsonObject run;
        for (const QJsonValue& r : arr)
            if (r[QStringLiteral("name")].toString() == u"digits-sweep[lr=0.0003]")
                run = r.toObject();
        QCOMPARE(run[QStringLiteral("params")][QStringLiteral("lr")].toString(), QStringLiteral("0.0003"));
        QVERIFY(run[QStringLiteral("tags")].toArray().contains(QStringLiteral("first-hour")));

        // metrics --key with a key the run lacks: which it has, exit 4.
        const Outcome m = ctl({QStringLiteral("metrics"), QStringLiteral("digits-sweep[lr=0.001]"),
                QStringLiteral("--key"), QStringLiteral("nosuchkey")});
        QCOMPARE(m.exitCode, 4);
        QVERIFY2(m.err.contains("has no metric 'nosuchkey'; its metrics: acc\n"), m.err.constData());

        // A run that cannot be placed: why, and no blank node.
        const QString unplaceable
                = writeFile(QStringLiteral("too-big.yaml"), "name: too-big\ncommand: 'true'\nresources: {gpus: 64}\n");
        const Outcome u = ctl({QStringLiteral("submit"), unplaceable}, 20000);
        QCOMPARE(u.exitCode, 1);
        QVERIFY2(!u.out.contains("failed on ") && u.out.contains("run ")
                        && u.out.contains("(too-big) failed before it was placed on a node\n"),
                u.out.constData());
        QVERIFY2(u.err.contains("failed: cannot start: needs 64 GPUs"), u.err.constData());

        // Import warnings say "skipped" once.
        const QString jsonl = writeFile(QStringLiteral("m.jsonl"), "[1, 2]\n{\"loss\": 0.5, \"step\": 1}\n");
        const Outcome imp = ctl({QStringLiteral("import"), QStringLiteral("too-big"), jsonl});
        QCOMPARE(imp.exitCode, 0);
        QCOMPARE(QString::fromUtf8(imp.err),
                jsonl + QStringLiteral(": line 1 at byte offset 0 skipped: not a JSON object\n"));
    }

    void lsRecordsRunsThatEndedUnwatched()
    {
        // submit without --follow returns once the run started; nothing
        // watches it after that. The next ls brings the database up to date.
        const QString spec = writeFile(
                QStringLiteral("unwatched.yaml"), "name: unwatched\ncommand: \"sleep 0.3; echo acc=0.7; exit 3\"\n");
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

    void concurrentSubmitsAreRecordedAsTheyRan()
    {
        // Issue 20: trainyardctl submits at once on one database. The one
        // that owns ingestion starts the others' runs as well; it used to end
        // once its own run started, cutting its agent connection under a start
        // still unanswered, and that run was recorded failed although it ran.
        // Every run must end succeeded, with its start time and console.
        const QString spec = writeFile(
                QStringLiteral("together.yaml"), "name: together\ncommand: \"echo hello; sleep 0.2; echo done\"\n");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), stateDir());
        env.remove(QStringLiteral("TRAINYARD_DB"));
        constexpr int kRounds = 4;
        constexpr int kAtOnce = 3;
        for (int round = 0; round < kRounds; ++round) {
            std::vector<std::unique_ptr<QProcess>> submits;
            for (int i = 0; i < kAtOnce; ++i) {
                auto p = std::make_unique<QProcess>();
                p->setProcessEnvironment(env);
                p->start(QStringLiteral(TRAINYARD_CTL_PATH),
                        {QStringLiteral("--db"), dbPath(), QStringLiteral("submit"), spec});
                submits.push_back(std::move(p));
            }
            for (auto& p : submits)
                p->waitForFinished(60000);
            for (auto& p : submits) {
                QCOMPARE(p->state(), QProcess::NotRunning);
                const QByteArray out = p->readAllStandardOutput();
                const QByteArray said = out + p->readAllStandardError();
                QVERIFY2(p->exitCode() == 0, said.constData());
                QVERIFY2(out.contains("running on local"), said.constData());
            }
        }
        // Nothing watches them now; ls brings the database up to date.
        const auto togetherRuns = [this] {
            QList<RunRecord> runs;
            auto store = ResultStore::open(dbPath());
            if (store)
                for (const RunRecord& r : (*store)->runs())
                    if (r.name == u"together")
                        runs.append(r);
            return runs;
        };
        QTRY_VERIFY_WITH_TIMEOUT(ctl({QStringLiteral("ls")}, 30000).exitCode == 0
                        && std::ranges::all_of(togetherRuns(), [](const RunRecord& r) { return isTerminal(r.state); }),
                30000);
        const QList<RunRecord> runs = togetherRuns();
        QCOMPARE(runs.size(), qsizetype(kRounds * kAtOnce));
        for (const RunRecord& r : runs) {
            const QString which
                    = QStringLiteral("run %1: %2 (%3)").arg(r.id).arg(runStateName(r.state), r.failureReason);
            QVERIFY2(r.state == RunState::Succeeded, qPrintable(which));
            QCOMPARE(r.exitCode, std::optional<int>(0));
            QVERIFY2(r.startedAt.isValid() && r.finishedAt.isValid() && r.startedAt <= r.finishedAt, qPrintable(which));
            QFile copy(r.consolePath);
            QVERIFY2(copy.open(QIODevice::ReadOnly), qPrintable(which));
            QCOMPARE(copy.readAll(), QByteArray("hello\ndone\n"));
        }
    }

    void twoCancelsAtOnceBothEnd()
    {
        // Issue 20: a second trainyardctl cancel at the same time used to say
        // "its node cannot be reached" (the agent refused to cancel a run that
        // had just exited) or wait for ever (for a state change that only the
        // ingestion owner emits). Both end in time, say cancelled, exit 0.
        const QString spec
                = writeFile(QStringLiteral("cancel-twice.yaml"), "name: cancel-twice\ncommand: [sleep, '60']\n");
        const Outcome s = ctl({QStringLiteral("submit"), spec});
        QVERIFY2(s.exitCode == 0 && s.out.contains("running on local"), QByteArray(s.out + s.err).constData());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), stateDir());
        env.remove(QStringLiteral("TRAINYARD_DB"));
        std::vector<std::unique_ptr<QProcess>> cancels;
        for (int i = 0; i < 2; ++i) {
            auto p = std::make_unique<QProcess>();
            p->setProcessEnvironment(env);
            p->start(QStringLiteral(TRAINYARD_CTL_PATH),
                    {QStringLiteral("--db"), dbPath(), QStringLiteral("cancel"), QStringLiteral("cancel-twice"),
                            QStringLiteral("--grace"), QStringLiteral("0.5")});
            cancels.push_back(std::move(p));
        }
        for (auto& p : cancels)
            p->waitForFinished(45000);
        for (auto& p : cancels) {
            const bool ended = p->state() == QProcess::NotRunning;
            if (!ended) {
                p->kill();
                p->waitForFinished();
            }
            const QByteArray out = p->readAllStandardOutput();
            const QByteArray said = out + p->readAllStandardError();
            QVERIFY2(ended, QByteArray("still waiting after 45 s: " + said).constData());
            QVERIFY2(p->exitCode() == 0, said.constData());
            QVERIFY2(out.contains("cancelled"), said.constData());
        }
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        const auto run = findRunByName(**store, QStringLiteral("cancel-twice"));
        QVERIFY(run);
        QCOMPARE(runStateName(run->state), QStringLiteral("cancelled"));
    }

    void durationOfARunWhoseNodeIsAway()
    {
        // Issue 20: a run started an hour ago whose node has not answered
        // since (unknown, no end recorded) does not show an hour that keeps
        // growing; one whose end was recorded shows end - start.
        RunId away = 0;
        RunId ended = 0;
        {
            auto store = ResultStore::open(dbPath());
            QVERIFY(store);
            RunRecord r = test::runningRecord(
                    QStringLiteral("node-away"), QStringLiteral("away-node"), QStringLiteral("ty-away-1"));
            r.state = RunState::Unknown;
            r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-3600);
            auto id = (*store)->createRun(r, {});
            QVERIFY(id);
            away = *id;
            r.name = QStringLiteral("ended-then-away");
            r.agentRunId = QStringLiteral("ty-away-2");
            r.finishedAt = r.startedAt.addSecs(75);
            id = (*store)->createRun(r, {});
            QVERIFY(id);
            ended = *id;
        }
        Outcome o = ctl({QStringLiteral("show"), QString::number(away)});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QVERIFY2(o.out.contains(QByteArray("duration   unknown (its node has not answered since")), o.out.constData());
        QVERIFY2(!o.out.contains("1h00m"), o.out.constData());
        o = ctl({QStringLiteral("show"), QString::number(ended)});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QVERIFY2(o.out.contains("1m15s"), o.out.constData());
        o = ctl({QStringLiteral("ls")});
        QCOMPARE(o.exitCode, 0);
        bool seen = false;
        for (const QByteArray& line : o.out.split('\n')) {
            if (line.contains("node-away")) {
                seen = true;
                QVERIFY2(line.contains(" unknown ") && !line.contains("1h00m"), line.constData());
            }
        }
        QVERIFY2(seen, o.out.constData());
    }

    // Issue #22: show, queue, node ls, metrics and policy take --json: one
    // JSON document on stdout with the facts the text shows, strings raw
    // (JSON escapes them), times ISO 8601 UTC with ms; errors stay on stderr.
    // A database of its own, so that the queue and the nodes are known.
    void jsonOutputOfShowQueueNodesMetricsPolicy()
    {
        const QString db = m_dir.filePath(QStringLiteral("json/trainyard.db"));
        const auto run = [&](QStringList args) { return ctl(args << QStringLiteral("--db") << db, 60000); };
        const auto parse = [](const Outcome& o, QJsonParseError* e) { return QJsonDocument::fromJson(o.out, e); };
        QJsonParseError pe;
        const QRegularExpression isoMs(QStringLiteral("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$"));
        const QString spec = writeFile(QStringLiteral("json/job.yaml"),
                "name: \"json\\tprobe\"\n"
                "command: \"echo loss=0.5 step=1; echo loss=0.25 step=2; echo acc=0.75 step=2; exit 3\"\n"
                "params: {lr: \"0.01\"}\n"
                "tags: [probe]\n");
        const Outcome submitted = run({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(submitted.exitCode == 3, submitted.err.constData());

        RunId runId = 0;
        RunId heldId = 0;
        {
            // A held run for the queue, a node for node ls: as a second
            // client of the database would add them.
            auto store = ResultStore::open(db);
            QVERIFY(store);
            const auto r = findRunByName(**store, QStringLiteral("json\tprobe"));
            QVERIFY(r);
            runId = r->id;
            RunRecord held;
            held.name = QStringLiteral("held\x1b[31m");
            held.state = RunState::Held;
            held.priority = 5;
            held.argv = {QStringLiteral("true")};
            held.createdAt = QDateTime::currentDateTimeUtc();
            const auto created = (*store)->createRun(held, {});
            QVERIFY(created);
            heldId = *created;
            NodeRecord node;
            node.name = QStringLiteral("gpu-01");
            node.host = QStringLiteral("gpu-01.example");
            node.user = QStringLiteral("ada");
            node.port = 2222;
            node.labels = {QStringLiteral("a100"), QStringLiteral("big-memory")};
            node.addedAt = QDateTime::currentDateTimeUtc();
            QVERIFY((*store)->addNode(node));
        }

        // show --json: the run's record, exit code, params, metrics, tags.
        const Outcome show = run({QStringLiteral("show"), QString::number(runId), QStringLiteral("--json")});
        QVERIFY2(show.exitCode == 0, show.err.constData());
        const QJsonObject s = parse(show, &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, show.out.constData());
        QCOMPARE(s.value(QStringLiteral("id")).toInteger(), runId);
        QCOMPARE(s.value(QStringLiteral("name")).toString(), QStringLiteral("json\tprobe")); // raw, not "json\\tprobe"
        QCOMPARE(s.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(s.value(QStringLiteral("exit_code")).toInt(-1), 3);
        QVERIFY(s.value(QStringLiteral("exit_signal")).isNull());
        QCOMPARE(s.value(QStringLiteral("failure_reason")).toString(), QStringLiteral("exit code 3"));
        QCOMPARE(s.value(QStringLiteral("node")).toString(), QStringLiteral("local"));
        QCOMPARE(s.value(QStringLiteral("argv")).toArray().size(), 3);
        QCOMPARE(s.value(QStringLiteral("workdir")).toString(), QFileInfo(spec).absolutePath());
        QCOMPARE(s.value(QStringLiteral("params")).toObject().value(QStringLiteral("lr")).toString(),
                QStringLiteral("0.01"));
        QCOMPARE(s.value(QStringLiteral("latest_metrics")).toObject().value(QStringLiteral("loss")).toDouble(), 0.25);
        QCOMPARE(s.value(QStringLiteral("latest_metric_steps")).toObject().value(QStringLiteral("loss")).toInt(), 2);
        QCOMPARE(s.value(QStringLiteral("tags")).toArray(), QJsonArray{QStringLiteral("probe")});
        QVERIFY2(s.value(QStringLiteral("started_at")).toString().contains(isoMs), show.out.constData());
        QVERIFY2(s.value(QStringLiteral("finished_at")).toString().contains(isoMs), show.out.constData());
        QVERIFY(s.value(QStringLiteral("duration_ms")).toInteger(-1) >= 0);
        QVERIFY(QFile::exists(s.value(QStringLiteral("console_path")).toString()));
        QCOMPARE(s.value(QStringLiteral("notices")).toArray().size(), 0);
        // The same record as ls --json lists.
        const QJsonArray ls = parse(run({QStringLiteral("ls"), QStringLiteral("--json")}), &pe).array();
        QVERIFY(pe.error == QJsonParseError::NoError);
        bool listed = false;
        for (const QJsonValue& v : ls)
            if (v[QStringLiteral("id")].toInteger() == runId) {
                listed = true;
                for (const QString& key : v.toObject().keys())
                    QVERIFY2(v[key] == s.value(key), qPrintable(key));
            }
        QVERIFY(listed);
        // Errors: on stderr, nothing on stdout, the text commands' exit codes.
        const Outcome noRun = run({QStringLiteral("show"), QStringLiteral("999999"), QStringLiteral("--json")});
        QCOMPARE(noRun.exitCode, 4);
        QVERIFY(noRun.out.isEmpty() && noRun.err.contains("no run with id 999999"));

        // metrics --json: {key: [points]}, with --key only that one.
        const Outcome loss = run({QStringLiteral("metrics"), QString::number(runId), QStringLiteral("--json"),
                QStringLiteral("--key"), QStringLiteral("loss")});
        QVERIFY2(loss.exitCode == 0, loss.err.constData());
        const QJsonObject m = parse(loss, &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, loss.out.constData());
        QCOMPARE(m.keys(), QStringList{QStringLiteral("loss")});
        const QJsonArray points = m.value(QStringLiteral("loss")).toArray();
        QCOMPARE(points.size(), 2);
        QCOMPARE(points[0][QStringLiteral("step")].toInt(), 1);
        QCOMPARE(points[0][QStringLiteral("value")].toDouble(), 0.5);
        QCOMPARE(points[1][QStringLiteral("step")].toInt(), 2);
        QCOMPARE(points[1][QStringLiteral("value")].toDouble(), 0.25);
        QVERIFY(points[1][QStringLiteral("epoch")].isNull());
        QVERIFY2(points[1][QStringLiteral("wall_time")].toString().contains(isoMs), loss.out.constData());
        const QJsonObject all
                = parse(run({QStringLiteral("metrics"), QString::number(runId), QStringLiteral("--json")}), &pe)
                          .object();
        QVERIFY(pe.error == QJsonParseError::NoError);
        QCOMPARE(all.keys(), (QStringList{QStringLiteral("acc"), QStringLiteral("loss")}));
        QCOMPARE(all.value(QStringLiteral("acc")).toArray().at(0)[QStringLiteral("value")].toDouble(), 0.75);
        const Outcome noKey = run({QStringLiteral("metrics"), QString::number(runId), QStringLiteral("--json"),
                QStringLiteral("--key"), QStringLiteral("los")});
        QCOMPARE(noKey.exitCode, 4);
        QVERIFY2(noKey.out.isEmpty() && noKey.err.contains("its metrics: acc, loss"), noKey.err.constData());
        QCOMPARE(run({QStringLiteral("metrics"), QString::number(runId), QStringLiteral("--json"),
                             QStringLiteral("--csv")})
                         .exitCode,
                2);

        // queue --json: the held run at position 1, its priority, its raw name.
        const Outcome queue = run({QStringLiteral("queue"), QStringLiteral("--json")});
        QVERIFY2(queue.exitCode == 0, queue.err.constData());
        const QJsonObject q = parse(queue, &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, queue.out.constData());
        QCOMPARE(q.value(QStringLiteral("policy")).toString(), QStringLiteral("backfill"));
        QCOMPARE(q.value(QStringLiteral("policy_file")).toString(), db + QStringLiteral(".scheduler.json"));
        const QJsonArray waiting = q.value(QStringLiteral("runs")).toArray();
        QCOMPARE(waiting.size(), 1);
        QCOMPARE(waiting[0][QStringLiteral("position")].toInt(), 1);
        QCOMPARE(waiting[0][QStringLiteral("id")].toInteger(), heldId);
        QCOMPARE(waiting[0][QStringLiteral("name")].toString(), QStringLiteral("held\x1b[31m"));
        QCOMPARE(waiting[0][QStringLiteral("state")].toString(), QStringLiteral("held"));
        QCOMPARE(waiting[0][QStringLiteral("priority")].toInt(), 5);
        QVERIFY(waiting[0][QStringLiteral("reason")].isNull() || waiting[0][QStringLiteral("reason")].isString());

        // node ls --json: local first, then the stored node as stored.
        const Outcome nodes = run({QStringLiteral("node"), QStringLiteral("ls"), QStringLiteral("--json")});
        QVERIFY2(nodes.exitCode == 0, nodes.err.constData());
        const QJsonArray n = parse(nodes, &pe).array();
        QVERIFY2(pe.error == QJsonParseError::NoError, nodes.out.constData());
        QCOMPARE(n.size(), 2);
        QCOMPARE(n[0][QStringLiteral("name")].toString(), QStringLiteral("local"));
        QVERIFY(n[0][QStringLiteral("local")].toBool());
        QCOMPARE(n[1][QStringLiteral("name")].toString(), QStringLiteral("gpu-01"));
        QVERIFY(!n[1][QStringLiteral("local")].toBool(true));
        QCOMPARE(n[1][QStringLiteral("host")].toString(), QStringLiteral("gpu-01.example"));
        QCOMPARE(n[1][QStringLiteral("user")].toString(), QStringLiteral("ada"));
        QCOMPARE(n[1][QStringLiteral("port")].toInt(), 2222);
        QCOMPARE(n[1][QStringLiteral("labels")].toArray(),
                (QJsonArray{QStringLiteral("a100"), QStringLiteral("big-memory")}));
        QVERIFY(n[1][QStringLiteral("agent_deployed")].toBool());
        QVERIFY(n[1][QStringLiteral("identity_file")].isNull());
        QVERIFY2(n[1][QStringLiteral("added_at")].toString().contains(isoMs), nodes.out.constData());

        // policy --json: the default and each queue's own.
        QCOMPARE(run({QStringLiteral("policy"), QStringLiteral("sjf"), QStringLiteral("--queue"),
                             QStringLiteral("short")})
                         .exitCode,
                0);
        const Outcome policy = run({QStringLiteral("policy"), QStringLiteral("--json")});
        QVERIFY2(policy.exitCode == 0, policy.err.constData());
        const QJsonObject p = parse(policy, &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, policy.out.constData());
        QCOMPARE(p.value(QStringLiteral("default")).toString(), QStringLiteral("backfill"));
        QCOMPARE(p.value(QStringLiteral("queues")).toObject(),
                (QJsonObject{{QStringLiteral("short"), QStringLiteral("sjf")}}));
        const QJsonObject one = parse(run({QStringLiteral("policy"), QStringLiteral("--queue"), QStringLiteral("short"),
                                              QStringLiteral("--json")}),
                &pe)
                                        .object();
        QVERIFY(pe.error == QJsonParseError::NoError);
        QCOMPARE(one,
                (QJsonObject{{QStringLiteral("queue"), QStringLiteral("short")},
                        {QStringLiteral("policy"), QStringLiteral("sjf")}}));
        const Outcome setting = run({QStringLiteral("policy"), QStringLiteral("fcfs"), QStringLiteral("--json")});
        QCOMPARE(setting.exitCode, 2);
        QVERIFY(setting.out.isEmpty());
        QCOMPARE(parse(run({QStringLiteral("policy"), QStringLiteral("--json")}), &pe)
                         .object()
                         .value(QStringLiteral("default"))
                         .toString(),
                QStringLiteral("backfill"));

        run({QStringLiteral("daemon"), QStringLiteral("stop")});
    }

    // Issue #25: node_lost_after per node. node add checks the duration
    // before it connects; node ls shows a node's own value (and --json its
    // seconds), nothing for a node that keeps the service's.
    void nodeLostAfterPerNode()
    {
        const QString db = m_dir.filePath(QStringLiteral("lostafter/trainyard.db"));
        const Outcome bad = ctlAt(db,
                {QStringLiteral("node"), QStringLiteral("add"), QStringLiteral("ws1"), QStringLiteral("--host"),
                        QStringLiteral("ws1.example"), QStringLiteral("--node-lost-after"), QStringLiteral("soon")});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("--node-lost-after must be a duration (90s, 30m, 2h), not 'soon'"),
                bad.err.constData());
        {
            auto store = ResultStore::open(db);
            QVERIFY(store);
            QVERIFY((*store)->nodes().isEmpty());
            QVERIFY((*store)->addNode(NodeRecord{.name = QStringLiteral("ws1"),
                    .host = QStringLiteral("ws1.example"),
                    .addedAt = QDateTime::currentDateTimeUtc(),
                    .nodeLostAfterSec = 1800}));
            QVERIFY((*store)->addNode(NodeRecord{.name = QStringLiteral("ws2"),
                    .host = QStringLiteral("ws2.example"),
                    .addedAt = QDateTime::currentDateTimeUtc()}));
        }
        const Outcome ls = ctlAt(db, {QStringLiteral("node"), QStringLiteral("ls")});
        QVERIFY2(ls.exitCode == 0, ls.err.constData());
        const QList<QByteArray> lines = ls.out.split('\n');
        QCOMPARE(lines.size(), 5); // header, local, ws1, ws2, ""
        QVERIFY2(lines[2].startsWith("ws1 ") && lines[2].endsWith("  node_lost_after: 30m"), ls.out.constData());
        QVERIFY2(lines[3].startsWith("ws2 ") && !lines[3].contains("node_lost_after"), ls.out.constData());
        const Outcome json = ctlAt(db, {QStringLiteral("node"), QStringLiteral("ls"), QStringLiteral("--json")});
        QVERIFY2(json.exitCode == 0, json.err.constData());
        const QJsonArray n = QJsonDocument::fromJson(json.out).array();
        QCOMPARE(n.size(), 3);
        QCOMPARE(n[1][QStringLiteral("node_lost_after_sec")].toInteger(), qint64(1800));
        QVERIFY(n[2][QStringLiteral("node_lost_after_sec")].isNull());
        QVERIFY(n[0][QStringLiteral("node_lost_after_sec")].isNull());
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
                QStringLiteral(
                        "name: stubborn\ncommand: \"sh -c 'trap \\\"\\\" TERM; echo $$ > %1; exec sleep 300' & wait\"\n")
                        .arg(marker)
                        .toUtf8());
        const Outcome submitted = ctl({QStringLiteral("submit"), spec});
        QCOMPARE(submitted.exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(marker) && QFileInfo(marker).size() > 0, 10000);
        QFile f(marker);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const qint64 pid = f.readAll().trimmed().toLongLong();
        QVERIFY(pid > 0);
        QVERIFY(QFile::exists(QStringLiteral("/proc/%1").arg(pid)));
        const Outcome c = ctl({QStringLiteral("cancel"), QStringLiteral("stubborn"), QStringLiteral("--grace"),
                QStringLiteral("0.5")});
        QCOMPARE(c.exitCode, 0);
        QVERIFY2(c.out.contains("cancelled"), c.out.constData());
        QTRY_VERIFY_WITH_TIMEOUT(!QFile::exists(QStringLiteral("/proc/%1").arg(pid)), 5000);
    }

    // rm deletes the run and its whole local folder (console copy, its node
    // offsets, downloaded artifacts), as the GUI's Delete does; it used to
    // remove console.log alone and leave the rest. A run not ended is refused.
    void rmDeletesTheRunsFolder()
    {
        const QString spec = writeFile(QStringLiteral("rmme/job.yaml"),
                "name: rm-me\nworkdir: .\nartifacts: [out.txt]\ncommand: \"echo x > out.txt; echo acc=0.5\"\n");
        QCOMPARE(ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")}).exitCode, 0);
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        const auto run = findRunByName(**store, QStringLiteral("rm-me"));
        QVERIFY(run);
        const QString folder = QFileInfo(run->consolePath).absolutePath();
        const Outcome a = ctl({QStringLiteral("artifacts"), QString::number(run->id), QStringLiteral("--download"),
                folder + QStringLiteral("/artifacts")});
        QVERIFY2(a.exitCode == 0, a.err.constData());
        QVERIFY(QFile::exists(folder + QStringLiteral("/artifacts/out.txt")));
        const Outcome rm = ctl({QStringLiteral("rm"), QString::number(run->id)});
        QVERIFY2(rm.exitCode == 0, rm.err.constData());
        QCOMPARE(rm.out, QByteArray("deleted run ") + QByteArray::number(run->id) + '\n');
        QVERIFY2(!QFileInfo::exists(folder), qPrintable(folder));
        QVERIFY(!(*store)->run(run->id));
        QCOMPARE((*store)->metrics(run->id).size(), 0);
        const Outcome again = ctl({QStringLiteral("rm"), QString::number(run->id)});
        QCOMPARE(again.exitCode, 4);
    }

    // Issue #22: ls and show say what kind of failure ended a run, and --json
    // carries the kind, its detail and a queued run's pending reason apart.
    // Last: the service its submit starts stays a few seconds, and
    // sweepWhileAnotherProcessIngests counts on starting its own (as it does
    // after failingRunPassesExitCode, run just before it, it fails).
    void failureKindInLsAndShow()
    {
        const QString spec = writeFile(QStringLiteral("traceback.yaml"),
                "name: raises\ncommand: [/usr/bin/python3, -c, \"raise ValueError('x')\"]\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QCOMPARE(o.exitCode, 1);
        QVERIFY2(o.err.contains("ValueError: x"), o.err.constData());
        const Outcome show = ctl({QStringLiteral("show"), QStringLiteral("raises")});
        QCOMPARE(show.exitCode, 0);
        QVERIFY2(show.out.contains("\nfailure    python_traceback: ValueError: x\n"), show.out.constData());
        const Outcome ls = ctl({QStringLiteral("ls")});
        QCOMPARE(ls.exitCode, 0);
        bool seen = false;
        for (const QByteArray& line : ls.out.split('\n'))
            if (line.contains(" raises "))
                seen = line.contains(" failed (traceback) ") && line.endsWith("(ValueError: x)");
        QVERIFY2(seen, ls.out.constData());
        const Outcome json = ctl({QStringLiteral("ls"), QStringLiteral("--json")});
        QCOMPARE(json.exitCode, 0);
        seen = false;
        for (const QJsonValue& v : QJsonDocument::fromJson(json.out).array()) {
            if (v[QStringLiteral("name")].toString() != u"raises")
                continue;
            seen = true;
            QCOMPARE(v[QStringLiteral("failure_kind")].toString(), QStringLiteral("python_traceback"));
            QCOMPARE(v[QStringLiteral("failure_reason")].toString(), QStringLiteral("ValueError: x"));
            QCOMPARE(v[QStringLiteral("pending_reason")].toString(), QString());
        }
        QVERIFY2(seen, json.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliEndToEnd)
#include "TestCliEndToEnd.moc"
