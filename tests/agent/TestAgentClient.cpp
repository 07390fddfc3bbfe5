// AgentClient + LocalAgentTransport driving the real trainyard-agent binary
// (ty::test::agentPath()) with a temporary state directory: starts, console
// bytes and offsets, exit codes and signals, process-group cancel, argument
// quoting, restarts of the agent, environment, GPU claims and readings.

#include "tests/support/TestSupport.h"
#include "core/nodes/AgentClient.h"
#include "core/nodes/LocalAgentTransport.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSet>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <csignal>
#include <functional>
#include <memory>
#include <optional>

#include <sys/types.h>
#include <unistd.h>

using namespace ty;

namespace {

using test::await;
using test::waitUntil;

// One connection to an agent, with everything it emitted recorded.
struct Session {
    LocalAgentTransport* transport = nullptr;
    std::unique_ptr<AgentClient> client;
    QMap<QString, QByteArray> output;       // tailed bytes per run
    QMap<QString, ByteRanges> stderrRanges; // the `stderr` ranges of those bytes
    QMap<QString, qint64> nextOffset;       // where the next output of a run must start
    QStringList offsetErrors;
    QMap<QString, qint64> tailEnds;
    QMap<QString, QList<std::pair<qint64, qint64>>> truncations; // consoleTruncated: (offset, size) per run
    QMap<QString, qint64> generation;                            // the last consoleTruncated's
    QMap<QString, AgentRunStatus> exited;
    QMap<QString, qint64> exitedAtMs; // local wall clock when `exited` arrived
    std::optional<QString> disconnectReason;
    bool ready = false;

    void expectTailFrom(const QString& run, qint64 offset)
    {
        nextOffset[run] = offset;
        output.remove(run);
        stderrRanges.remove(run);
        tailEnds.remove(run);
        truncations.remove(run);
        generation.remove(run);
    }
};

std::unique_ptr<Session> openSession(const QString& stateDir, const QString& agentPath = test::agentPath(),
        std::optional<QProcessEnvironment> env = std::nullopt, bool compressConsole = false)
{
    auto s = std::make_unique<Session>();
    auto transport = std::make_unique<LocalAgentTransport>(agentPath, stateDir);
    if (env)
        transport->setProcessEnvironment(*env);
    transport->setCompressConsole(compressConsole); // as an SSH transport asks
    s->transport = transport.get();
    s->client = std::make_unique<AgentClient>(std::move(transport));
    Session* raw = s.get();
    AgentClient* c = s->client.get();
    QObject::connect(c, &AgentClient::ready, c, [raw](const AgentHello&) { raw->ready = true; });
    QObject::connect(c, &AgentClient::output, c,
            [raw](const QString& run, qint64 offset, const QByteArray& bytes, const ByteRanges& stderrRanges) {
                for (const ByteRange& r : stderrRanges) {
                    ByteRanges& all = raw->stderrRanges[run];
                    if (!all.isEmpty() && all.back().end() == r.offset)
                        all.back().length += r.length; // split over two frames
                    else
                        all.append(r);
                }
                const qint64 expected = raw->nextOffset.value(run, 0);
                if (offset != expected)
                    raw->offsetErrors
                            << QStringLiteral("run %1: output at %2, expected %3").arg(run).arg(offset).arg(expected);
                raw->output[run] += bytes;
                raw->nextOffset[run] = offset + bytes.size();
            });
    QObject::connect(
            c, &AgentClient::tailEnded, c, [raw](const QString& run, qint64 offset) { raw->tailEnds[run] = offset; });
    QObject::connect(c, &AgentClient::consoleTruncated, c,
            [raw](const QString& run, qint64 offset, qint64 size, qint64 generation) {
                raw->truncations[run].append({offset, size});
                raw->generation[run] = generation;
                raw->nextOffset[run] = 0; // the new content, from its start
            });
    QObject::connect(c, &AgentClient::runExited, c, [raw](const AgentRunStatus& st) {
        raw->exited[st.run] = st;
        raw->exitedAtMs[st.run] = QDateTime::currentMSecsSinceEpoch();
    });
    QObject::connect(c, &AgentClient::disconnected, c, [raw](const QString& why) { raw->disconnectReason = why; });
    s->client->connectToAgent();
    waitUntil([raw] { return raw->ready || raw->disconnectReason.has_value(); });
    return s;
}

bool groupGone(qint64 pgid)
{
    return ::kill(pid_t(-pgid), 0) != 0 && errno == ESRCH;
}

} // namespace

class TestAgentClient final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir stateDir_;
    QTemporaryDir workDir_;
    std::unique_ptr<Session> s_;
    int runCounter_ = 0;

    QString newRunId(const char* stem)
    {
        return QStringLiteral("%1-%2").arg(QLatin1StringView(stem)).arg(++runCounter_);
    }

    std::optional<AgentStartReply> startRun(Session& s, const QString& run, const QStringList& argv,
            QMap<QString, QString> env = {}, QList<int> gpus = {}, QString* error = nullptr, const QString& client = {})
    {
        AgentStartRequest req;
        req.run = run;
        req.argv = argv;
        req.workdir = workDir_.path();
        req.env = std::move(env);
        req.gpus = std::move(gpus);
        req.client = client;
        auto r = await<AgentStartReply>([&](auto cb) { s.client->start(req, cb); });
        if (!r || !*r) {
            if (error)
                *error = r ? r->error().message : QStringLiteral("timeout");
            return std::nullopt;
        }
        return **r;
    }

    // Starts, follows the console to its end, waits for `exited`.
    std::optional<AgentRunStatus> runToEnd(
            const QString& run, const QStringList& argv, QMap<QString, QString> env = {}, QList<int> gpus = {})
    {
        auto started = startRun(*s_, run, argv, std::move(env), std::move(gpus));
        if (!started)
            return std::nullopt;
        s_->expectTailFrom(run, 0);
        auto size = await<qint64>([&](auto cb) { s_->client->tail(run, 0, true, cb); });
        if (!size || !*size)
            return std::nullopt;
        if (!waitUntil([&] { return s_->exited.contains(run) && s_->tailEnds.contains(run); }, 15000))
            return std::nullopt;
        return s_->exited.value(run);
    }

    QString consolePath(const QString& run) const
    {
        return stateDir_.path() + QStringLiteral("/runs/") + run + QStringLiteral("/console.log");
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(stateDir_.isValid());
        QVERIFY(workDir_.isValid());
        QVERIFY2(QFileInfo(test::agentPath()).isExecutable(), qPrintable(test::agentPath()));
        s_ = openSession(stateDir_.path());
        QVERIFY2(s_->ready, qPrintable(s_->disconnectReason.value_or(QStringLiteral("no hello"))));
        QCOMPARE(s_->client->hello().protocol, 1);
        QCOMPARE(s_->client->hello().agent, QStringLiteral("trainyard-agent"));
        QCOMPARE(QDir(s_->client->hello().stateDir).canonicalPath(), QDir(stateDir_.path()).canonicalPath());
        QCOMPARE(s_->client->hello().pid, s_->transport->processId());
    }

    void cleanupTestCase() { s_.reset(); }

    void ping()
    {
        const qint64 before = QDateTime::currentMSecsSinceEpoch();
        auto r = await<qint64>([&](auto cb) { s_->client->ping(cb); });
        QVERIFY(r && *r);
        QVERIFY(**r >= before - 5 && **r <= QDateTime::currentMSecsSinceEpoch() + 5);
    }

    void requestsBeforeHelloAreSent()
    {
        auto transport = std::make_unique<LocalAgentTransport>(test::agentPath(), stateDir_.path());
        AgentClient client(std::move(transport));
        client.connectToAgent();
        QCOMPARE(client.state(), AgentClient::State::Connecting);
        std::optional<Result<qint64>> pong;
        std::optional<Result<QList<AgentRunStatus>>> runs;
        client.ping([&](const Result<qint64>& r) { pong = r; });
        client.list([&](const Result<QList<AgentRunStatus>>& r) { runs = r; });
        QVERIFY(waitUntil([&] { return pong && runs; }));
        QVERIFY(*pong && *runs);
        QVERIFY(client.isReady());
    }

    void startAndConsoleBytes()
    {
        const QString run = newRunId("bytes");
        // stdout and stderr interleaved, a NUL, invalid UTF-8, a carriage
        // return, no final newline, written in three bursts.
        const QStringList argv{QStringLiteral("sh"), QStringLiteral("-c"),
                QStringLiteral("printf 'out 1\\n'; printf 'err 1\\n' >&2; sleep 0.2; "
                               "printf '\\000\\377\\376 half\\r full\\n'; sleep 0.2; printf 'tail'")};
        const QByteArray expected
                = QByteArray("out 1\nerr 1\n") + QByteArray("\x00\xff\xfe", 3) + QByteArray(" half\r full\ntail");
        auto st = runToEnd(run, argv);
        QVERIFY(st.has_value());
        QVERIFY2(s_->offsetErrors.isEmpty(), qPrintable(s_->offsetErrors.join(u'\n')));
        QCOMPARE(s_->output.value(run), expected);
        QCOMPARE(test::readFile(consolePath(run)), expected);
        QCOMPARE(s_->tailEnds.value(run), qint64(expected.size()));
        QCOMPARE(st->exitCode, std::optional<int>(0));
        QVERIFY(!st->signal.has_value());
        QCOMPARE(st->consoleSize, qint64(expected.size()));
        QVERIFY(st->finishedMs >= st->startedMs + 400);
        QVERIFY(!st->cancelled);
    }

    void stderrBytesAreMarked()
    {
        QCOMPARE(s_->client->hello().revision, 8);
        const QString run = newRunId("stderr");
        auto st = runToEnd(run,
                {QStringLiteral("sh"), QStringLiteral("-c"),
                        QStringLiteral("echo out1; echo err1 >&2; sleep 0.05; echo out2")});
        QVERIFY(st.has_value());
        QVERIFY2(s_->offsetErrors.isEmpty(), qPrintable(s_->offsetErrors.join(u'\n')));
        // The console stays one merged stream, in the order it was written.
        QCOMPARE(test::readFile(consolePath(run)), QByteArray("out1\nerr1\nout2\n"));
        QCOMPARE(s_->output.value(run), QByteArray("out1\nerr1\nout2\n"));
        QCOMPARE(s_->stderrRanges.value(run), (ByteRanges{ByteRange{5, 5}}));
        QCOMPARE(test::readFile(stateDir_.path() + QStringLiteral("/runs/") + run + QStringLiteral("/console.stderr")),
                QByteArray("5 5\n"));
        QCOMPARE(st->exitCode, std::optional<int>(0));
    }

    void stderrRangesSurviveAgentRestart()
    {
        QTemporaryDir dir;
        auto s1 = openSession(dir.path());
        QVERIFY(s1->ready);
        const QString run = QStringLiteral("restarted");
        QVERIFY(startRun(*s1, run,
                {QStringLiteral("sh"), QStringLiteral("-c"),
                        // bb (stderr) then c (stdout): spaced, since writes to both
                        // within one wake-up of the supervisor may be swapped (Supervisor.h)
                        QStringLiteral("echo a; sleep 0.5; echo bb >&2; sleep 0.2; echo c; echo dd >&2")}));
        QCOMPARE(::kill(pid_t(s1->transport->processId()), SIGKILL), 0);
        QVERIFY(waitUntil([&] { return s1->disconnectReason.has_value(); }));

        // A new agent reattaches: the ranges come from the run's sidecar.
        auto s2 = openSession(dir.path());
        QVERIFY(s2->ready);
        s2->expectTailFrom(run, 0);
        auto size = await<qint64>([&](auto cb) { s2->client->tail(run, 0, true, cb); });
        QVERIFY(size && *size);
        QVERIFY(waitUntil([&] { return s2->tailEnds.contains(run); }, 15000));
        QCOMPARE(s2->output.value(run), QByteArray("a\nbb\nc\ndd\n"));
        QCOMPARE(s2->stderrRanges.value(run), (ByteRanges{ByteRange{2, 3}, ByteRange{7, 3}}));

        // A tail from inside a range gets it clipped to the bytes sent.
        s2->expectTailFrom(run, 3);
        size = await<qint64>([&](auto cb) { s2->client->tail(run, 3, false, cb); });
        QVERIFY(size && *size);
        QVERIFY(waitUntil([&] { return s2->tailEnds.contains(run); }, 15000));
        QCOMPARE(s2->output.value(run), QByteArray("b\nc\ndd\n"));
        QCOMPARE(s2->stderrRanges.value(run), (ByteRanges{ByteRange{3, 2}, ByteRange{7, 3}}));
    }

    void runOutlivesItsSupervisor()
    {
        // kill -9 of the supervisor: its keeper copies the output on, so the
        // run gets no SIGPIPE and its console and stderr ranges stay whole.
        QTemporaryDir dir;
        auto s1 = openSession(dir.path());
        QVERIFY(s1->ready);
        const QString run = QStringLiteral("orphaned");
        auto started = startRun(*s1, run,
                {QStringLiteral("sh"), QStringLiteral("-c"),
                        QStringLiteral("sleep 0.5; echo o; echo x >&2; echo done")});
        QVERIFY(started);
        QCOMPARE(::kill(pid_t(started->supervisorPid), SIGKILL), 0);
        const QString runDir = dir.path() + QStringLiteral("/runs/") + run;
        QVERIFY(waitUntil([&] { return test::readFile(runDir + QStringLiteral("/console.log")).size() == 9; }, 10000));
        // The three writes come microseconds apart on two pipes, and the
        // keeper, woken late on a loaded machine, may find both pipes full:
        // then stdout is copied first (Supervisor.h: order across the streams
        // is the order they are read). So check what is guaranteed: every
        // byte, each stream in order, and a range that marks exactly the
        // stderr bytes, wherever they landed.
        const QByteArray console = test::readFile(runDir + QStringLiteral("/console.log"));
        const QByteArray sidecar = test::readFile(runDir + QStringLiteral("/console.stderr"));
        const qsizetype errAt = console.indexOf("x\n");
        QVERIFY2(errAt >= 0, console.constData());
        QCOMPARE(sidecar, QByteArray::number(errAt) + " 2\n");
        QCOMPARE(QByteArray(console).remove(errAt, 2), QByteArray("o\ndone\n"));
        auto status = await<AgentRunStatus>([&](auto cb) { s1->client->status(run, cb); });
        QVERIFY(status && *status);
        QVERIFY((*status)->lost); // no supervisor, no exit status: as before
    }

    void tailLatency()
    {
        // The run prints its own clock (ms) twice; output must arrive well
        // within the 250 ms the GUI is allowed.
        const QString run = newRunId("latency");
        const QStringList argv{QStringLiteral("/usr/bin/python3"), QStringLiteral("-c"),
                QStringLiteral(
                        "import time,sys\n"
                        "for i in range(5):\n"
                        "    time.sleep(0.15); sys.stdout.write('%d\\n' % int(time.time()*1000)); sys.stdout.flush()\n")};
        QList<qint64> delays;
        auto conn = connect(
                s_->client.get(), &AgentClient::output, this, [&](const QString& r, qint64, const QByteArray& bytes) {
                    if (r != run)
                        return;
                    const qint64 now = QDateTime::currentMSecsSinceEpoch();
                    for (const QByteArray& line : bytes.split('\n'))
                        if (!line.isEmpty())
                            delays << now - line.toLongLong();
                });
        auto st = runToEnd(run, argv);
        disconnect(conn);
        QVERIFY(st.has_value());
        QCOMPARE(delays.size(), 5);
        const qint64 worst = *std::max_element(delays.begin(), delays.end());
        qInfo("tail latency per line (ms): %s", qPrintable([&] {
            QStringList l;
            for (qint64 d : delays)
                l << QString::number(d);
            return l.join(u' ');
        }()));
        QVERIFY2(worst < 150, qPrintable(QStringLiteral("worst latency %1 ms").arg(worst)));
    }

    void exitCode()
    {
        auto st = runToEnd(newRunId("exit3"), {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("exit 3")});
        QVERIFY(st.has_value());
        QCOMPARE(st->exitCode, std::optional<int>(3));
        QVERIFY(!st->signal.has_value());
        QVERIFY(!st->running);

        auto status = await<AgentRunStatus>([&](auto cb) { s_->client->status(st->run, cb); });
        QVERIFY(status && *status);
        QCOMPARE((*status)->exitCode, std::optional<int>(3));
        QVERIFY(!(*status)->running);
    }

    void exitBySignal()
    {
        auto st = runToEnd(
                newRunId("sig9"), {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("kill -9 $$")});
        QVERIFY(st.has_value());
        QCOMPARE(st->signal, std::optional<int>(9));
        QVERIFY(!st->exitCode.has_value());
        QVERIFY(!st->cancelled);
    }

    void execFailureIs127()
    {
        const QString run = newRunId("noexec");
        auto st = runToEnd(run, {QStringLiteral("trainyard-no-such-program-4711"), QStringLiteral("arg")});
        QVERIFY(st.has_value());
        QCOMPARE(st->exitCode, std::optional<int>(127));
        const QByteArray console = test::readFile(consolePath(run));
        QVERIFY2(console.contains("cannot execute 'trainyard-no-such-program-4711'"), console.constData());
        QVERIFY(console.contains("No such file or directory"));
        QCOMPARE(s_->output.value(run), console);
    }

    void argumentQuoting()
    {
        const QString run = newRunId("quoting");
        const QStringList args{QStringLiteral("two words"), QStringLiteral("it's"), QStringLiteral("say \"hi\""),
                QStringLiteral("$HOME"), QStringLiteral("a;b && c"), QStringLiteral("*"), QString(),
                QStringLiteral("tab\there"), QStringLiteral("$(id) `id`"), QStringLiteral("ünïcødé \\n")};
        QStringList argv{QStringLiteral("/usr/bin/printf"), QStringLiteral("[%s]\\n")};
        argv += args;
        QByteArray expected;
        for (const QString& a : args)
            expected += '[' + a.toUtf8() + "]\n";
        auto st = runToEnd(run, argv);
        QVERIFY(st.has_value());
        QCOMPARE(st->exitCode, std::optional<int>(0));
        QCOMPARE(test::readFile(consolePath(run)), expected);
        QCOMPARE(st->argv, argv);
    }

    void environment()
    {
        const QString run = newRunId("env");
        // cat is exec'd directly, so /proc/self/environ is exactly the
        // environment the agent passed, in its order.
        auto st = runToEnd(run, {QStringLiteral("cat"), QStringLiteral("/proc/self/environ")},
                {{QStringLiteral("MY_PARAM"), QStringLiteral("x y $z;")},
                        {QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("7")}},
                {1, 0});
        QVERIFY(st.has_value());
        const QList<QByteArray> vars = test::readFile(consolePath(run)).split('\0');
        auto indexOf = [&](const QByteArray& kv) { return vars.indexOf(kv); };
        const QByteArray runDir = (stateDir_.path() + QStringLiteral("/runs/") + run).toUtf8();
        QVERIFY(indexOf("MY_PARAM=x y $z;") >= 0);
        QVERIFY(indexOf("TRAINYARD_RUN_ID=" + run.toUtf8()) >= 0);
        QVERIFY(indexOf("TRAINYARD_RUN_DIR=" + runDir) >= 0);
        QVERIFY(indexOf("TRAINYARD_METRICS_FILE=" + runDir + "/metrics.jsonl") >= 0);
        const qsizetype order = indexOf("CUDA_DEVICE_ORDER=PCI_BUS_ID");
        const qsizetype visible = indexOf("CUDA_VISIBLE_DEVICES=1,0");
        QVERIFY(order >= 0);
        QVERIFY(visible > order);
        // The GPUs given win over a CUDA_VISIBLE_DEVICES in env, and it appears once.
        int count = 0;
        for (const QByteArray& v : vars)
            count += v.startsWith("CUDA_VISIBLE_DEVICES=") ? 1 : 0;
        QCOMPARE(count, 1);
        QVERIFY(indexOf("PATH=" + qgetenv("PATH")) >= 0); // inherited from the agent
        QCOMPARE(st->gpus, (QList<int>{1, 0}));
    }

    void tailFromOffset()
    {
        const QString run = newRunId("offset");
        QByteArray expected;
        for (int i = 0; i < 2000; ++i)
            expected += "line " + QByteArray::number(i) + '\n';
        auto st = runToEnd(run,
                {QStringLiteral("sh"), QStringLiteral("-c"),
                        QStringLiteral("i=0; while [ $i -lt 2000 ]; do echo \"line $i\"; i=$((i+1)); done")});
        QVERIFY(st.has_value());
        QCOMPARE(test::readFile(consolePath(run)), expected);
        for (qint64 from :
                {qint64(0), qint64(1), qint64(12345), qint64(expected.size() - 1), qint64(expected.size())}) {
            s_->expectTailFrom(run, from);
            auto size = await<qint64>([&](auto cb) { s_->client->tail(run, from, false, cb); });
            QVERIFY(size && *size);
            QCOMPARE(**size, qint64(expected.size()));
            QVERIFY(waitUntil([&] { return s_->tailEnds.contains(run); }));
            QVERIFY2(s_->offsetErrors.isEmpty(), qPrintable(s_->offsetErrors.join(u'\n')));
            QCOMPARE(s_->output.value(run), expected.mid(from));
            QCOMPARE(s_->tailEnds.value(run), qint64(expected.size()));
        }
        // A tail that does not follow truncations: an offset beyond the
        // console is refused, as it always was.
        auto beyond = await<qint64>([&](auto cb) { s_->client->tail(run, expected.size() + 1, false, cb); });
        QVERIFY(beyond && !*beyond);
        QVERIFY2(beyond->error().message.contains(run), qPrintable(beyond->error().message));
        QVERIFY(beyond->error().message.contains(QStringLiteral("beyond")));
    }

    void tailBeyondTheConsoleIsATruncation()
    {
        // What a client resuming at its stored offset meets when the console
        // was truncated on the node meanwhile: the console is shorter than
        // the offset. The tail says so and sends the console from its start.
        const QString run = newRunId("beyond");
        auto st = runToEnd(run, {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo one; echo two")});
        QVERIFY(st.has_value());
        const QByteArray console = test::readFile(consolePath(run));
        QCOMPARE(console, QByteArray("one\ntwo\n"));
        s_->expectTailFrom(run, 1000);
        auto size = await<qint64>([&](auto cb) { s_->client->tail(run, 1000, false, cb, /*followTruncation=*/true); });
        QVERIFY(size && *size);
        QCOMPARE(**size, qint64(console.size()));
        QVERIFY(waitUntil([&] { return s_->tailEnds.contains(run); }));
        QCOMPARE(s_->truncations.value(run), (QList<std::pair<qint64, qint64>>{{1000, console.size()}}));
        QVERIFY2(s_->offsetErrors.isEmpty(), qPrintable(s_->offsetErrors.join(u'\n')));
        QCOMPARE(s_->output.value(run), console);
        QCOMPARE(s_->tailEnds.value(run), qint64(console.size()));
    }

    void truncationIsFoundByItsRecordWhenTheNewContentIsLonger()
    {
        // Truncated while nobody followed, and the run wrote more since than
        // the client has: the file is not shorter than the client's offset,
        // but the supervisor recorded the truncation (console.stderr), and
        // the client's generation (0: none followed) is behind that record.
        const QString run = newRunId("outgrown");
        const QString go = workDir_.filePath(run + QStringLiteral(".go"));
        // The run waits for `go`: let it end also when a check fails.
        const auto release = qScopeGuard([&go] { (void)QFile(go).open(QIODevice::WriteOnly); });
        const QStringList argv{QStringLiteral("sh"), QStringLiteral("-c"),
                QStringLiteral("echo old-1; echo old-2; while [ ! -e '%1' ]; do sleep 0.02; done; "
                               "i=0; while [ $i -lt 20 ]; do echo \"new line $i\"; i=$((i+1)); done")
                        .arg(go)};
        const QByteArray old("old-1\nold-2\n");
        QByteArray fresh;
        for (int i = 0; i < 20; ++i)
            fresh += "new line " + QByteArray::number(i) + '\n';
        QVERIFY(startRun(*s_, run, argv));
        QVERIFY(waitUntil([&] { return test::readFile(consolePath(run)) == old; }));
        QVERIFY(QFile::resize(consolePath(run), 0));
        {
            QFile f(go);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QVERIFY(waitUntil([&] { return s_->exited.contains(run); }, 15000));
        QCOMPARE(test::readFile(consolePath(run)), fresh);
        QVERIFY(fresh.size() > old.size());

        s_->expectTailFrom(run, old.size());
        auto size
                = await<qint64>([&](auto cb) { s_->client->tail(run, old.size(), false, cb, true, /*generation=*/0); });
        QVERIFY(size && *size);
        QCOMPARE(**size, qint64(fresh.size()));
        QVERIFY(waitUntil([&] { return s_->tailEnds.contains(run); }));
        QCOMPARE(s_->truncations.value(run), (QList<std::pair<qint64, qint64>>{{old.size(), fresh.size()}}));
        QCOMPARE(s_->generation.value(run), qint64(1));
        QVERIFY2(s_->offsetErrors.isEmpty(), qPrintable(s_->offsetErrors.join(u'\n')));
        QCOMPARE(s_->output.value(run), fresh);

        // Resuming with that generation: nothing more, no second truncation.
        s_->expectTailFrom(run, fresh.size());
        size = await<qint64>([&](auto cb) { s_->client->tail(run, fresh.size(), false, cb, true, /*generation=*/1); });
        QVERIFY(size && *size);
        QVERIFY(waitUntil([&] { return s_->tailEnds.contains(run); }));
        QCOMPARE(s_->truncations.value(run).size(), 0);
        QCOMPARE(s_->output.value(run), QByteArray());
    }

    void truncatedConsoleIsFollowedFromItsNewStart()
    {
        // `: > console.log` on the node while the run writes it: the run's
        // output goes on at the file's new start (no hole of zeros where the
        // old content was), the tail says so once and follows it from there,
        // and stderr ranges of the new content are those of its own bytes.
        const QString run = newRunId("truncated");
        const QString go = workDir_.filePath(run + QStringLiteral(".go"));
        // The run waits for `go`: let it end also when a check fails.
        const auto release = qScopeGuard([&go] { (void)QFile(go).open(QIODevice::WriteOnly); });
        const QStringList argv{QStringLiteral("sh"), QStringLiteral("-c"),
                QStringLiteral(
                        "i=0; while [ $i -lt 50 ]; do echo \"old line $i\"; i=$((i+1)); done; sleep 0.05; echo old-err >&2; "
                        "while [ ! -e '%1' ]; do sleep 0.02; done; "
                        "echo new-out; sleep 0.05; echo new-err >&2; sleep 0.05; echo new-end")
                        .arg(go)};
        QByteArray old;
        for (int i = 0; i < 50; ++i)
            old += "old line " + QByteArray::number(i) + '\n';
        old += "old-err\n";
        QVERIFY(startRun(*s_, run, argv));
        s_->expectTailFrom(run, 0);
        QVERIFY(await<qint64>([&](auto cb) { s_->client->tail(run, 0, true, cb, /*followTruncation=*/true); }));
        QVERIFY(waitUntil([&] { return s_->output.value(run) == old; }));
        QVERIFY(QFile::resize(consolePath(run), 0));
        QVERIFY(waitUntil([&] { return !s_->truncations.value(run).isEmpty(); }));
        QCOMPARE(s_->truncations.value(run), (QList<std::pair<qint64, qint64>>{{old.size(), 0}}));
        {
            QFile f(go);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QVERIFY(waitUntil([&] { return s_->exited.contains(run) && s_->tailEnds.contains(run); }, 15000));
        const QByteArray fresh("new-out\nnew-err\nnew-end\n");
        QCOMPARE(test::readFile(consolePath(run)), fresh); // written on at the new end: no hole
        QVERIFY2(s_->offsetErrors.isEmpty(), qPrintable(s_->offsetErrors.join(u'\n')));
        QCOMPARE(s_->output.value(run), old + fresh);
        QCOMPARE(s_->tailEnds.value(run), qint64(fresh.size()));
        QCOMPARE(s_->truncations.value(run).size(), 1);
        QCOMPARE(s_->generation.value(run), qint64(1));
        // The old content's stderr line, then the new content's (offsets of the new content).
        QCOMPARE(s_->stderrRanges.value(run), (ByteRanges{{old.size() - 8, 8}, {8, 8}}));
    }

    void cancelKillsStubbornGrandchild()
    {
        const QString run = newRunId("cancel");
        // The grandchild ignores SIGTERM and prints its pid; the main shell waits.
        const QStringList argv{QStringLiteral("sh"), QStringLiteral("-c"),
                QStringLiteral("sh -c 'trap \"\" TERM; echo grandchild=$$; exec sleep 1000' & wait")};
        auto started = startRun(*s_, run, argv);
        QVERIFY(started.has_value());
        QCOMPARE(started->pgid, started->pid);
        s_->expectTailFrom(run, 0);
        QVERIFY(await<qint64>([&](auto cb) { s_->client->tail(run, 0, true, cb); }));
        static const QRegularExpression re(QStringLiteral("grandchild=(\\d+)"));
        QRegularExpressionMatch m;
        QVERIFY(waitUntil([&] {
            m = re.match(QString::fromUtf8(s_->output.value(run)));
            return m.hasMatch();
        }));
        const qint64 grandchild = m.captured(1).toLongLong();
        QVERIFY(grandchild > 0);
        QVERIFY(QFileInfo::exists(QStringLiteral("/proc/%1").arg(grandchild)));
        QVERIFY(!groupGone(started->pgid));
        QTest::qWait(100); // let the grandchild reach `sleep`

        QElapsedTimer t;
        t.start();
        auto ok = await<void>([&](auto cb) { s_->client->cancel(run, 500, cb); });
        QVERIFY(ok && *ok);
        QVERIFY(waitUntil([&] { return s_->exited.contains(run); }));
        const qint64 elapsed = t.elapsed();
        const AgentRunStatus st = s_->exited.value(run);
        QVERIFY(st.cancelled);
        QCOMPARE(st.signal, std::optional<int>(SIGTERM)); // the main shell died of SIGTERM
        // The grandchild ignored SIGTERM: only SIGKILL after the grace ended it.
        QVERIFY2(elapsed >= 450 && elapsed < 5000, qPrintable(QString::number(elapsed)));
        QVERIFY(groupGone(started->pgid));
        QVERIFY(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(grandchild)));
        QVERIFY(waitUntil([&] { return s_->tailEnds.contains(run); }));

        // Cancelling an exited run is an error naming it.
        auto again = await<void>([&](auto cb) { s_->client->cancel(run, 500, cb); });
        QVERIFY(again && !*again);
        QVERIFY(again->error().message.contains(run));
    }

    // Revision 6: `cancel` sends the signal it names first (a preempted
    // run's `preemption.signal`), records it in cancel.json, and refuses one
    // it does not know.
    void cancelSendsTheSignalItNames()
    {
        const QString run = newRunId("cancelsig");
        const QStringList argv{QStringLiteral("sh"), QStringLiteral("-c"),
                QStringLiteral("trap 'echo got-usr1; exit 7' USR1; echo ready; while :; do sleep 0.05; done")};
        auto started = startRun(*s_, run, argv);
        QVERIFY(started.has_value());
        s_->expectTailFrom(run, 0);
        QVERIFY(await<qint64>([&](auto cb) { s_->client->tail(run, 0, true, cb); }));
        QVERIFY(waitUntil([&] { return s_->output.value(run).contains("ready"); }));

        auto bad = await<void>([&](auto cb) { s_->client->cancel(run, 500, cb, QStringLiteral("SIGKILL")); });
        QVERIFY(bad && !*bad);
        QVERIFY2(bad->error().message.contains(QStringLiteral("signal must be one of SIGTERM, SIGINT, SIGUSR1")),
                qPrintable(bad->error().message));
        QVERIFY(!s_->exited.contains(run));

        auto ok = await<void>([&](auto cb) { s_->client->cancel(run, 5000, cb, QStringLiteral("SIGUSR1")); });
        QVERIFY(ok && *ok);
        QVERIFY(waitUntil([&] { return s_->exited.contains(run); }));
        const AgentRunStatus st = s_->exited.value(run);
        QVERIFY(st.cancelled);
        QCOMPARE(st.exitCode, std::optional<int>(7)); // its USR1 trap ran (SIGTERM would have killed the shell)
        QVERIFY(s_->output.value(run).contains("got-usr1"));
        const QJsonObject cancelJson
                = QJsonDocument::fromJson(test::readFile(started->runDir + QStringLiteral("/cancel.json"))).object();
        QCOMPARE(cancelJson.value(QStringLiteral("signal")).toString(), QStringLiteral("SIGUSR1"));
        QCOMPARE(cancelJson.value(QStringLiteral("grace_ms")).toInt(), 5000);
    }

    void leftoversKilledWhenMainExits()
    {
        // The main process exits at once and leaves a background child that
        // ignores SIGTERM: the supervisor must not leave it behind. The run's
        // exit status is the main process's.
        const QString run = newRunId("leftover");
        auto started = startRun(*s_, run,
                {QStringLiteral("sh"), QStringLiteral("-c"),
                        QStringLiteral("sh -c 'trap \"\" TERM; exec sleep 1000' & sleep 0.3; echo bg=$!; exit 5")});
        QVERIFY(started.has_value());
        QElapsedTimer t;
        t.start();
        QVERIFY(waitUntil([&] { return s_->exited.contains(run); }, 20000));
        // SIGTERM was ignored: the leftover lived until SIGKILL, 10 s after the main process ended.
        QVERIFY2(t.elapsed() >= 9500, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(s_->exited.value(run).exitCode, std::optional<int>(5));
        QVERIFY(groupGone(started->pgid));
        static const QRegularExpression re(QStringLiteral("bg=(\\d+)"));
        const auto m = re.match(QString::fromUtf8(test::readFile(consolePath(run))));
        QVERIFY(m.hasMatch());
        QVERIFY(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(m.captured(1))));
    }

    void exitRecordedWhileAgentIsGone()
    {
        QTemporaryDir dir;
        auto s1 = openSession(dir.path());
        QVERIFY(s1->ready);
        const QString early = QStringLiteral("while-dead");
        const QString late = QStringLiteral("after-restart");
        QVERIFY(startRun(
                *s1, early, {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("sleep 0.3; exit 7")}));
        QVERIFY(startRun(*s1, late,
                {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("sleep 1.5; echo done; exit 9")}));
        const qint64 agentPid = s1->transport->processId();
        QVERIFY(agentPid > 0);
        QCOMPARE(::kill(pid_t(agentPid), SIGKILL), 0);
        QVERIFY(waitUntil([&] { return s1->disconnectReason.has_value(); }));
        // A request after the connection dropped fails with a clear error.
        auto dead = await<qint64>([&](auto cb) { s1->client->ping(cb); });
        QVERIFY(dead && !*dead);
        QVERIFY(dead->error().message.contains(QStringLiteral("not connected")));

        // `early` ends while no agent runs at all.
        QVERIFY(waitUntil(
                [&] { return QFileInfo::exists(dir.path() + QStringLiteral("/runs/while-dead/exit.json")); }, 5000));
        auto s2 = openSession(dir.path());
        QVERIFY(s2->ready);
        auto runs = await<QList<AgentRunStatus>>([&](auto cb) { s2->client->list(cb); });
        QVERIFY(runs && *runs);
        QCOMPARE((*runs)->size(), 2);
        QMap<QString, AgentRunStatus> byId;
        for (const auto& r : **runs)
            byId[r.run] = r;
        QCOMPARE(byId.value(early).exitCode, std::optional<int>(7));
        QVERIFY(!byId.value(early).running);
        QVERIFY(byId.value(late).running);
        // `late` was started by the killed agent; the new one still reports its end.
        QVERIFY(waitUntil([&] { return s2->exited.contains(late); }, 5000));
        QCOMPARE(s2->exited.value(late).exitCode, std::optional<int>(9));
        QVERIFY(!s2->exited.contains(early)); // ended before this agent: list/status only
        auto status = await<AgentRunStatus>([&](auto cb) { s2->client->status(late, cb); });
        QVERIFY(status && *status);
        QCOMPARE((*status)->consoleSize, qint64(5));
    }

    void startErrors()
    {
        QString error;
        QVERIFY(!startRun(*s_, QStringLiteral("bad/id"), {QStringLiteral("true")}, {}, {}, &error));
        QVERIFY2(error.contains(QStringLiteral("invalid run id")), qPrintable(error));
        const QString run = newRunId("dup");
        QVERIFY(startRun(*s_, run, {QStringLiteral("true")}));
        QVERIFY(!startRun(*s_, run, {QStringLiteral("true")}, {}, {}, &error));
        QVERIFY2(error.contains(QStringLiteral("already exists")) && error.contains(run), qPrintable(error));

        AgentStartRequest req;
        req.run = newRunId("nowd");
        req.argv = {QStringLiteral("true")};
        req.workdir = QStringLiteral("/nonexistent/trainyard");
        auto r = await<AgentStartReply>([&](auto cb) { s_->client->start(req, cb); });
        QVERIFY(r && !*r);
        QVERIFY2(r->error().message.contains(QStringLiteral("/nonexistent/trainyard")), qPrintable(r->error().message));
        QVERIFY(r->error().message.contains(req.run));

        auto st = await<AgentRunStatus>([&](auto cb) { s_->client->status(QStringLiteral("never-started"), cb); });
        QVERIFY(st && !*st);
        QVERIFY(st->error().message.contains(QStringLiteral("never-started")));
    }

    // Revision 5, start_array (PROTOCOL.md "Job arrays"): what startArray
    // sends, and the agent's refusals naming the run at fault; the job
    // arrays themselves run in test_agent_slurm.
    void startArrayRequestAndRefusals()
    {
        AgentArrayRequest req;
        for (int i = 0; i < 3; ++i) {
            AgentStartRequest run;
            run.run = newRunId("array");
            run.workdir = workDir_.path();
            run.env = {{QStringLiteral("GREETING"), QStringLiteral("hi %1").arg(i)}};
            run.slurmScript = QStringLiteral("#!/bin/bash\necho %1\n").arg(i);
            run.argv = {QStringLiteral("ignored")};
            run.gpus = {0};
            req.runs.append(run);
        }
        req.sbatch = {QStringLiteral("--time=5")};
        req.maxConcurrent = 2;
        req.client = QStringLiteral("laptop-a");
        const QJsonObject sent = agentArrayRequestToJson(req);
        QJsonArray runs;
        for (int i = 0; i < 3; ++i)
            runs.append(QJsonObject{{QStringLiteral("run"), req.runs[i].run},
                    {QStringLiteral("workdir"), workDir_.path()},
                    {QStringLiteral("env"), QJsonObject{{QStringLiteral("GREETING"), QStringLiteral("hi %1").arg(i)}}},
                    {QStringLiteral("script"), req.runs[i].slurmScript}});
        QCOMPARE(sent,
                (QJsonObject{{QStringLiteral("runs"), runs},
                        {QStringLiteral("sbatch"), QJsonArray{QStringLiteral("--time=5")}},
                        {QStringLiteral("max_concurrent"), 2},
                        {QStringLiteral("client"), QStringLiteral("laptop-a")}}));
        const AgentArrayReply reply
                = agentArrayReplyFromJson(QJsonObject{{QStringLiteral("slurm_job"), QStringLiteral("77")},
                        {QStringLiteral("runs"),
                                QJsonArray{QJsonObject{{QStringLiteral("run"), QStringLiteral("a")},
                                        {QStringLiteral("slurm_job"), QStringLiteral("77_0")},
                                        {QStringLiteral("console"), QStringLiteral("/s/runs/a/console.log")},
                                        {QStringLiteral("started_ms"), 5}}}}});
        QCOMPARE(reply.slurmJob, QStringLiteral("77"));
        QCOMPARE(reply.runs.size(), 1);
        QCOMPARE(reply.runs[0].slurmJob, QStringLiteral("77_0"));
        QCOMPARE(reply.runs[0].console, QStringLiteral("/s/runs/a/console.log"));
        QCOMPARE(reply.runs[0].startedMs, 5);

        // The real agent reads what was sent: each refusal names the run.
        const auto refusal = [&](const AgentArrayRequest& r) {
            auto res = await<AgentArrayReply>([&](auto cb) { s_->client->startArray(r, cb); });
            return res && !*res ? res->error().message : QStringLiteral("not refused");
        };
        const QString missing = workDir_.path() + QStringLiteral("/missing");
        AgentArrayRequest bad = req;
        bad.runs[1].workdir = missing;
        QString error = refusal(bad);
        QVERIFY2(error.contains(QStringLiteral("runs[1] (run %1): workdir %2").arg(req.runs[1].run, missing)),
                qPrintable(error));
        bad = req;
        bad.runs[2].env.insert(QStringLiteral("NOT-A-NAME"), QStringLiteral("x"));
        error = refusal(bad);
        QVERIFY2(error.contains(QStringLiteral("runs[2] (run %1)").arg(req.runs[2].run))
                        && error.contains(QStringLiteral("NOT-A-NAME")),
                qPrintable(error));
        bad = req;
        bad.runs[0].slurmScript.clear();
        error = refusal(bad);
        QVERIFY2(error.contains(QStringLiteral("runs[0] (run %1)").arg(req.runs[0].run))
                        && error.contains(QStringLiteral("script")),
                qPrintable(error));
        bad = req;
        bad.sbatch.append(QStringLiteral("--output=/tmp/x"));
        error = refusal(bad);
        QVERIFY2(error.contains(QStringLiteral("--output=/tmp/x")), qPrintable(error));
        bad = req;
        bad.runs[2].run = bad.runs[0].run;
        error = refusal(bad);
        QVERIFY2(error.contains(QStringLiteral("runs[2] (run %1)").arg(req.runs[0].run))
                        && error.contains(QStringLiteral("runs[0]")),
                qPrintable(error));
        for (const AgentStartRequest& run : req.runs)
            QVERIFY(!QFileInfo::exists(stateDir_.path() + QStringLiteral("/runs/") + run.run));
        QVERIFY(!QFileInfo::exists(stateDir_.path() + QStringLiteral("/slurm-arrays")));
    }

    void gpuClaims()
    {
        QString error;
        const QString holder = newRunId("holder");
        auto h = startRun(*s_, holder, {QStringLiteral("sleep"), QStringLiteral("30")}, {}, {0}, &error,
                QStringLiteral("laptop-a"));
        QVERIFY2(h.has_value(), qPrintable(error));
        // Another Trainyard instance may not take GPU 0...
        const QString other = newRunId("other");
        QVERIFY(!startRun(*s_, other, {QStringLiteral("true")}, {}, {1, 0}, &error, QStringLiteral("laptop-b")));
        QVERIFY2(error.contains(QStringLiteral("GPU 0 is held by run ") + holder), qPrintable(error));
        // ...but GPU 1 is free, and the same instance may share its GPU.
        QVERIFY2(startRun(*s_, newRunId("free"), {QStringLiteral("true")}, {}, {1}, &error, QStringLiteral("laptop-b")),
                qPrintable(error));
        const QString same = newRunId("same");
        QVERIFY2(startRun(*s_, same, {QStringLiteral("true")}, {}, {0}, &error, QStringLiteral("laptop-a")),
                qPrintable(error));
        // A claim dies with its run: both of laptop-a's runs on GPU 0 (`same`
        // holds it too until its exit.json is written, however short it is).
        QVERIFY(await<void>([&](auto cb) { s_->client->cancel(holder, 0, cb); }));
        QVERIFY(waitUntil([&] { return s_->exited.contains(holder) && s_->exited.contains(same); }));
        QVERIFY2(startRun(*s_, other, {QStringLiteral("true")}, {}, {1, 0}, &error, QStringLiteral("laptop-b")),
                qPrintable(error));
    }

    // Revision 7: the node's listening TCP ports (IPv4 and IPv6), not the
    // ports of its connections; a closed listener is gone.
    void listeningPortsAreTheNodesListeners()
    {
        QTcpServer v4, v6;
        QVERIFY(v4.listen(QHostAddress::LocalHost));
        const bool hasV6 = v6.listen(QHostAddress::LocalHostIPv6);
        QTcpSocket client;
        client.connectToHost(QHostAddress::LocalHost, v4.serverPort());
        QVERIFY(client.waitForConnected(5000));
        QVERIFY(v4.waitForNewConnection(5000));
        const int connectionPort = client.localPort();
        auto ports = await<QList<int>>([&](auto cb) { s_->client->listeningPorts(cb); });
        QVERIFY(ports && *ports);
        const QList<int> got = **ports;
        QVERIFY2(got.contains(v4.serverPort()), qPrintable(QString::number(v4.serverPort())));
        if (hasV6)
            QVERIFY2(got.contains(v6.serverPort()), qPrintable(QString::number(v6.serverPort())));
        QVERIFY2(!got.contains(connectionPort), qPrintable(QString::number(connectionPort)));
        QVERIFY(std::is_sorted(got.begin(), got.end()));
        QCOMPARE(QSet<int>(got.begin(), got.end()).size(), got.size());
        const int closed = v4.serverPort();
        client.close();
        v4.close();
        ports = await<QList<int>>([&](auto cb) { s_->client->listeningPorts(cb); });
        QVERIFY(ports && *ports);
        QVERIFY(!(**ports).contains(closed));
    }

    void gpusWithoutDriverIsEmpty()
    {
        QTemporaryDir emptyBin;
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), emptyBin.path());
        env.insert(QStringLiteral("TRAINYARD_AGENT_NO_NVML"), QStringLiteral("1"));
        QTemporaryDir dir;
        auto s = openSession(dir.path(), test::agentPath(), env);
        QVERIFY(s->ready);
        auto g = await<QList<AgentGpu>>([&](auto cb) { s->client->gpus(cb); });
        QVERIFY(g && *g);
        QVERIFY((*g)->isEmpty());
    }

    void gpusFromNvidiaSmi()
    {
        // A stand-in nvidia-smi that prints the captured H200 output.
        QTemporaryDir bin;
        const QString fix = test::fixturePath(QStringLiteral("gpu-workstation/nvidia-smi"));
        QFile script(bin.path() + QStringLiteral("/nvidia-smi"));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(QStringLiteral("#!/bin/sh\ncase \"$1\" in\n"
                                    "  --query-gpu=*) cat '%1/query-gpu.csv' ;;\n"
                                    "  --query-compute-apps=*) cat '%1/query-compute-apps.csv' ;;\n"
                                    "  *) exit 2 ;;\nesac\n")
                             .arg(fix)
                             .toUtf8());
        script.close();
        script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), bin.path() + u':' + env.value(QStringLiteral("PATH")));
        env.insert(QStringLiteral("TRAINYARD_AGENT_NO_NVML"), QStringLiteral("1"));
        QTemporaryDir dir;
        auto s = openSession(dir.path(), test::agentPath(), env);
        QVERIFY(s->ready);
        // The query runs asynchronously: a ping sent after it is not held up.
        std::optional<Result<QList<AgentGpu>>> gpus;
        s->client->gpus([&](const Result<QList<AgentGpu>>& r) { gpus = r; });
        auto pong = await<qint64>([&](auto cb) { s->client->ping(cb); });
        QVERIFY(pong && *pong);
        QVERIFY(waitUntil([&] { return gpus.has_value(); }));
        QVERIFY2(*gpus, qPrintable(gpus->error().message));
        QCOMPARE((*gpus)->size(), 1);
        const AgentGpu g = (*gpus)->first();
        QCOMPARE(g.index, 0);
        QCOMPARE(g.name, QStringLiteral("NVIDIA H200"));
        QCOMPARE(g.uuid, QStringLiteral("GPU-6b59c291-17a4-483d-d540-ace2891dfe5f"));
        QCOMPARE(g.pciBusId, QStringLiteral("00000000:00:06.0"));
        QCOMPARE(g.memoryTotalMib, std::optional<double>(143771));
        QCOMPARE(g.temperatureC, std::optional<double>(34));
        QCOMPARE(g.powerW, std::optional<double>(79.5));
        QCOMPARE(g.processes.size(), 1);
        QCOMPARE(g.processes.first().pid, qint64(451));
        QCOMPARE(g.processes.first().name, QStringLiteral("python3"));
        QCOMPARE(g.processes.first().usedMemoryMib, std::optional<double>(1092));
        QVERIFY(g.processes.first().run.isEmpty()); // not a Trainyard run: shown as foreign
    }

    // Revision 8: a tail that asks for LZ4 (as every SSH node's does) gets
    // exactly the bytes, offsets and stderr ranges of the console; a log's
    // text travels compressed, random bytes as they are.
    void compressedTailKeepsEveryByte()
    {
        auto z = openSession(stateDir_.path(), test::agentPath(), std::nullopt, true);
        QVERIFY2(z->ready, qPrintable(z->disconnectReason.value_or(QStringLiteral("no hello"))));
        QVERIFY(z->client->hello().revision >= 8);
        const QString run = newRunId("lz4");
        // About 4.5 MB of a training log's lines, 1 MiB of random bytes, and
        // a last line on stderr (3,893 bytes: `seq 1000`).
        const QString script = QStringLiteral(
                "awk 'BEGIN{for(i=0;i<80000;i++) printf \"epoch %d step %d loss=%.4f lr=0.0010 grad_norm=1.00\\n\", "
                "i/1000, i, 1/(i+1)}'; head -c 1048576 /dev/urandom; seq 1000 >&2");
        QVERIFY(startRun(*z, run, {QStringLiteral("sh"), QStringLiteral("-c"), script}));
        z->expectTailFrom(run, 0);
        QVERIFY(await<qint64>([&](auto cb) { z->client->tail(run, 0, true, cb); }));
        QVERIFY(waitUntil([&] { return z->exited.contains(run) && z->tailEnds.contains(run); }, 30000));
        QVERIFY2(z->offsetErrors.isEmpty(), qPrintable(z->offsetErrors.join(u'\n')));
        QFile console(consolePath(run));
        QVERIFY(console.open(QIODevice::ReadOnly));
        const QByteArray onNode = console.readAll();
        QVERIFY(onNode.size() > 4500000 + 1048576);
        QCOMPARE(z->output.value(run).size(), onNode.size());
        QVERIFY(z->output.value(run) == onNode);
        QCOMPARE(z->tailEnds.value(run), onNode.size());
        // The stderr range survives compression: the last 3,893 bytes.
        const ByteRanges ranges = z->stderrRanges.value(run);
        QCOMPARE(ranges.size(), 1);
        QCOMPARE(ranges.front().offset, onNode.size() - 3893);
        QCOMPARE(ranges.front().length, qint64(3893));

        const AgentFrameDecoder::Compression c = z->client->consoleCompression();
        qInfo("%lld LZ4 frames: %lld bytes on the wire for %lld of %lld console bytes", qlonglong(c.frames),
                qlonglong(c.wireBytes), qlonglong(c.rawBytes), qlonglong(onNode.size()));
        QVERIFY(c.frames > 0);
        // The log's part went compressed, at least 4x (LZ4 makes about 10x of it).
        QVERIFY2(c.rawBytes >= 4000000, qPrintable(QString::number(c.rawBytes)));
        QVERIFY2(c.wireBytes * 4 < c.rawBytes, qPrintable(QString::number(c.wireBytes)));
        // The random MiB did not (at most the two 256 KiB chunks at its
        // edges, which hold some text, may have).
        QVERIFY2(c.rawBytes <= onNode.size() - 1048576 + 2 * 262144, qPrintable(QString::number(c.rawBytes)));
        // The same agent, a client that did not ask: never compressed.
        QCOMPARE(s_->client->consoleCompression().frames, qint64(0));
    }

    void requestsAreNotBlockedByABigTail()
    {
        const QString run = newRunId("big");
        const qint64 total = 200 * 1024 * 1024;
        auto started = startRun(*s_, run,
                {QStringLiteral("head"), QStringLiteral("-c"), QString::number(total), QStringLiteral("/dev/urandom")});
        QVERIFY(started.has_value());
        qint64 received = 0;
        qint64 nextOffset = 0;
        bool contiguous = true;
        auto conn = connect(s_->client.get(), &AgentClient::output, this,
                [&](const QString& r, qint64 offset, const QByteArray& bytes) {
                    if (r != run)
                        return;
                    contiguous = contiguous && offset == nextOffset;
                    nextOffset = offset + bytes.size();
                    received += bytes.size();
                });
        s_->expectTailFrom(run, 0);
        QElapsedTimer t;
        t.start();
        QVERIFY(await<qint64>([&](auto cb) { s_->client->tail(run, 0, true, cb); }));
        // While the console streams, pings are answered promptly.
        QList<qint64> pingMs;
        while (received < total / 2 && t.elapsed() < 20000) {
            QElapsedTimer p;
            p.start();
            auto pong = await<qint64>([&](auto cb) { s_->client->ping(cb); });
            QVERIFY(pong && *pong);
            pingMs << p.elapsed();
        }
        QVERIFY(waitUntil([&] { return s_->tailEnds.contains(run); }, 60000));
        const double secs = t.elapsed() / 1000.0;
        disconnect(conn);
        s_->output.remove(run); // not kept: 200 MiB
        QVERIFY(contiguous);
        QCOMPARE(received, total);
        QCOMPARE(s_->tailEnds.value(run), total);
        QVERIFY(!pingMs.isEmpty());
        const qint64 worstPing = *std::max_element(pingMs.begin(), pingMs.end());
        qInfo("200 MiB console tailed in %.2f s (%.0f MiB/s incl. writing it); %lld pings during it, worst %lld ms",
                secs, 200 / secs, qlonglong(pingMs.size()), qlonglong(worstPing));
        // Not blocked: pings interleave with the stream, each answered in a
        // part of its time. Relative, not a fixed number of ms, so a
        // loaded CI machine (2 cores, tests in parallel: one ping took 1035
        // ms there) slows both alike; an agent that answered only once the
        // tail is sent would give one ping lasting about the whole stream.
        QVERIFY2(pingMs.size() >= 5, qPrintable(QString::number(pingMs.size())));
        QVERIFY2(worstPing * 2 < qint64(secs * 1000),
                qPrintable(QStringLiteral("%1 ms of %2 s").arg(worstPing).arg(secs)));
    }

    // A console written much faster than anyone reads it (nobody tails this
    // one) does not stay in the node's page cache: the supervisor drops what
    // is more than two 32 MiB windows behind its end (WriteBehind), and the
    // file keeps every byte.
    void bigConsoleLeavesThePageCache()
    {
        if (test::onTmpfs(stateDir_.path()))
            QSKIP("the state directory is on tmpfs, whose pages cannot be dropped");
        const QString run = newRunId("cache");
        const qint64 total = 192 * 1024 * 1024;
        QVERIFY(startRun(*s_, run,
                {QStringLiteral("head"), QStringLiteral("-c"), QString::number(total), QStringLiteral("/dev/zero")}));
        QVERIFY(waitUntil(
                [&] {
                    auto st = await<AgentRunStatus>([&](auto cb) { s_->client->status(run, cb); });
                    return st && *st && !(*st)->running;
                },
                60000));
        QFile console(consolePath(run));
        QVERIFY(console.open(QIODevice::ReadOnly));
        QCOMPARE(console.size(), total);
        const qint64 window = 32 * 1024 * 1024;
        const qint64 behind = total - 3 * window; // dropped (after its writeback) by the time the end was written
        const qint64 resident = test::residentBytes(console.handle(), total, 0, behind);
        const qint64 newest = test::residentBytes(console.handle(), total, total - window, total);
        qInfo("resident: %lld of the first %lld MiB, %lld of the last 32 MiB", resident >> 20, behind >> 20,
                newest >> 20);
        // Without the drop all of it is (writeback leaves pages cached). Each
        // window is written back before it is dropped, so a busy disk leaves
        // no dirty page behind; at most a 2 MiB folio at the range's edge stays.
        QVERIFY2(resident >= 0 && resident <= 2 * 1024 * 1024, qPrintable(QString::number(resident)));
        QVERIFY(newest > 0); // the newest bytes, where a follow reads, stay
        // Dropped from the cache, not from the file.
        qint64 nonZero = 0, read = 0;
        while (!console.atEnd()) {
            const QByteArray chunk = console.read(4 << 20);
            QVERIFY(!chunk.isEmpty());
            read += chunk.size();
            nonZero += chunk.size() - chunk.count('\0');
        }
        QCOMPARE(read, total);
        QCOMPARE(nonZero, qint64(0));
    }

    void protocolMismatch()
    {
        QTemporaryDir bin;
        const QString fake = bin.path() + QStringLiteral("/fake-agent");
        QFile f(fake);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/sh\necho '{\"type\":\"hello\",\"protocol\":2,\"agent\":\"trainyard-agent\"}'\nsleep 5\n");
        f.close();
        f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        auto s = openSession(bin.path(), fake);
        QVERIFY(!s->ready);
        QVERIFY(s->disconnectReason.has_value());
        QVERIFY2(s->disconnectReason->contains(QStringLiteral("protocol 2")), qPrintable(*s->disconnectReason));
        QVERIFY2(s->disconnectReason->contains(QStringLiteral("protocol 1")), qPrintable(*s->disconnectReason));
    }

    void malformedLineDropsConnectionAndFailsPending()
    {
        QTemporaryDir bin;
        const QString fake = bin.path() + QStringLiteral("/fake-agent");
        QFile f(fake);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/sh\necho '{\"type\":\"hello\",\"protocol\":1}'\nread line\n"
                "echo 'bash: warning: setlocale: LC_ALL: cannot change locale'\nsleep 5\n");
        f.close();
        f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        auto s = openSession(bin.path(), fake);
        QVERIFY(s->ready);
        auto r = await<qint64>([&](auto cb) { s->client->ping(cb); });
        QVERIFY(r && !*r);
        QVERIFY2(r->error().message.contains(QStringLiteral("ping")), qPrintable(r->error().message));
        QVERIFY(s->disconnectReason.has_value());
        QVERIFY2(s->disconnectReason->contains(QStringLiteral("line 2")), qPrintable(*s->disconnectReason));
        QVERIFY2(s->disconnectReason->contains(QStringLiteral("setlocale")), qPrintable(*s->disconnectReason));
    }

    void startsDoNotBlockOtherRequests()
    {
        // 20 starts, a ping and a cancel of the first run, written at once:
        // the agent answers the ping while the supervisors are still
        // starting (a start's reply waits for its supervisor's report, the
        // agent does not), and the cancel, which names a run still
        // starting, waits for that start and then succeeds.
        QProcess agent;
        agent.start(test::agentPath(), {QStringLiteral("--stdio"), QStringLiteral("--state-dir"), stateDir_.path()});
        QVERIFY(agent.waitForStarted());
        const QString stem = newRunId("burst");
        QByteArray requests;
        constexpr int kStarts = 20;
        for (int i = 0; i < kStarts; ++i) {
            const QJsonObject req{{QStringLiteral("id"), i + 1}, {QStringLiteral("op"), QStringLiteral("start")},
                    {QStringLiteral("run"), QStringLiteral("%1-%2").arg(stem).arg(i)},
                    {QStringLiteral("argv"), QJsonArray{QStringLiteral("sleep"), QStringLiteral("0.5")}},
                    {QStringLiteral("workdir"), workDir_.path()}};
            requests += QJsonDocument(req).toJson(QJsonDocument::Compact) + '\n';
        }
        requests += "{\"id\":100,\"op\":\"ping\"}\n";
        requests += "{\"id\":101,\"op\":\"cancel\",\"run\":\"" + stem.toUtf8() + "-0\",\"grace_ms\":0}\n";
        agent.write(requests);
        agent.closeWriteChannel(); // the agent answers everything, then exits
        QVERIFY(agent.waitForFinished(20000));
        QCOMPARE(agent.exitCode(), 0);
        QMap<int, int> position; // reply id -> its place among the replies
        QMap<int, QJsonObject> replies;
        int place = 0;
        for (const QByteArray& line : agent.readAllStandardOutput().split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.value(QStringLiteral("type")).toString() != QStringLiteral("reply"))
                continue;
            const int id = o.value(QStringLiteral("id")).toInt();
            position.insert(id, place++);
            replies.insert(id, o);
        }
        QCOMPARE(replies.size(), kStarts + 2);
        QSet<qint64> pids;
        int lastStart = -1;
        for (int i = 1; i <= kStarts; ++i) {
            QVERIFY2(replies[i].value(QStringLiteral("ok")).toBool(),
                    qPrintable(replies[i].value(QStringLiteral("error")).toString()));
            pids.insert(replies[i].value(QStringLiteral("pid")).toInteger());
            lastStart = std::max(lastStart, position[i]);
        }
        QCOMPARE(pids.size(), kStarts);
        qInfo("ping answered as reply %d of %d (the last start's reply was %d)", position[100] + 1, place,
                lastStart + 1);
        QVERIFY2(position[100] < lastStart, qPrintable(QString::number(position[100])));
        QVERIFY2(replies[101].value(QStringLiteral("ok")).toBool(),
                qPrintable(replies[101].value(QStringLiteral("error")).toString()));
        QVERIFY(position[101] > position[1]); // after the start it waited for
        // The cancelled run's group is gone soon; the others end by themselves.
        const qint64 pgid = replies[1].value(QStringLiteral("pgid")).toInteger();
        QVERIFY(waitUntil([&] { return groupGone(pgid); }, 5000));
    }

    void agentRejectsMalformedInput()
    {
        // The agent's side of the framing rules: a garbled request line is a
        // protocol error naming the line; the agent says so and exits.
        // Its own state directory: the shared one holds the earlier tests'
        // runs, whose ends the agent may report between these lines (a CI
        // run once saw that).
        QTemporaryDir state;
        QVERIFY(state.isValid());
        QProcess agent;
        agent.start(test::agentPath(), {QStringLiteral("--stdio"), QStringLiteral("--state-dir"), state.path()});
        QVERIFY(agent.waitForStarted());
        agent.write("{\"id\":1,\"op\":\"ping\"}\n{\"id\":2,\"op\"\n");
        agent.closeWriteChannel();
        QVERIFY(agent.waitForFinished(5000));
        QCOMPARE(agent.exitCode(), 2);
        const QByteArray out = agent.readAllStandardOutput();
        const QList<QByteArray> lines = out.split('\n');
        QVERIFY2(lines.size() >= 3, out.constData());
        QVERIFY2(lines[0].contains("\"type\":\"hello\""), out.constData());
        QVERIFY2(lines[1].contains("\"id\":1") && lines[1].contains("\"ok\":true"), out.constData());
        QVERIFY2(lines[2].contains("\"type\":\"error\"") && lines[2].contains("line 2"), out.constData());
        QVERIFY(lines[2].contains("{\\\"id\\\":2,\\\"op\\\""));
    }

    void missingAgentBinary()
    {
        auto s = openSession(stateDir_.path(), QStringLiteral("/nonexistent/trainyard-agent"));
        QVERIFY(!s->ready);
        QVERIFY(s->disconnectReason.has_value());
        QVERIFY2(s->disconnectReason->contains(QStringLiteral("/nonexistent/trainyard-agent")),
                qPrintable(*s->disconnectReason));
    }
};

QTEST_GUILESS_MAIN(TestAgentClient)
#include "TestAgentClient.moc"
