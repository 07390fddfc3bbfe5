// RunEngine's logic that depends on time, on a TestClock against nodes the
// test plays (FakeAgentTransport): heartbeat timeouts, reconnection backoff
// and probes, time_limit, a queued run's deadline, FCFS order by submission
// time, a node lost while its run goes on, a node removed under its runs. No
// agent process and no sleep: each test moves the clock to the millisecond
// before and after what it asserts. The result database is a real one, in a
// temporary folder.

#include "tests/support/FakeAgentTransport.h"
#include "tests/support/TestClock.h"
#include "tests/support/TestSupport.h"

#include "core/runs/NodeRemoval.h"
#include "core/retry/NodeLossWatch.h"
#include "core/retry/RetryRunner.h"
#include "core/runs/RunEngine.h"
#include "core/sched/Policy.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace ty;
using ty::test::AgentRequest;
using ty::test::FakeAgentTransport;
using ty::test::TestClock;

namespace {

JobSpec spec(const QString& yaml)
{
    auto s = parseJobSpec(yaml, QStringLiteral("test.yaml"), QDir::tempPath());
    if (!s)
        qFatal("%s", qPrintable(s.error().message));
    return *s;
}

// The run id in an agent run id "ty-<hash>-<run id>-<created, base 36>".
RunId runIdOf(const QString& agentRun)
{
    return agentRun.section(u'-', 2, 2).toLongLong();
}

} // namespace

class TestEngineLogic final : public QObject {
    Q_OBJECT

    // One engine on a test clock with a fresh database; destroyed in reverse
    // order (the engine before the store and the clock).
    struct Harness {
        QTemporaryDir dir;
        TestClock clock;
        std::unique_ptr<ResultStore> store;
        std::unique_ptr<RunEngine> engine;

        QString dbPath() const { return dir.filePath(QStringLiteral("db/trainyard.db")); }
        // The engine, its heartbeats and backoff as `configure` sets them,
        // owning ingestion.
        bool open(const std::function<void(RunEngine&)>& configure = {})
        {
            auto s = ResultStore::open(dbPath());
            if (!s)
                return false;
            store = std::move(*s);
            engine = std::make_unique<RunEngine>(store.get(), dbPath(), clock);
            engine->setPolicy(sched::Policy::fcfs());
            engine->setGpuStatusInterval(0); // GPU reports on request only
            if (configure)
                configure(*engine);
            return engine->acquireIngestion();
        }
        // Adds node `name` served by a fake agent, which answers `list` with
        // `runs` (the runs it has) and whose hello comes at once.
        FakeAgentTransport* addNode(const QString& name, const QJsonArray& gpus = {}, const QJsonArray& runs = {})
        {
            auto owned = std::make_unique<FakeAgentTransport>(clock, name);
            FakeAgentTransport* node = owned.get();
            node->setGpus(gpus);
            node->setAutoReply(QStringLiteral("list"), [runs](const AgentRequest&) {
                return QJsonObject{{QStringLiteral("runs"), runs}};
            });
            engine->addNode(name, std::move(owned));
            clock.advance(0); // opened, hello, gpus, list
            return node;
        }
        RunRecord stored(RunId id) const
        {
            store->flush();
            auto r = store->run(id);
            return r ? *r : RunRecord{};
        }
        // Answers the pending start of run `id` (started now) and its tail
        // (console size `size`); returns the agent run id ("" if none pending).
        QString start(FakeAgentTransport* node, qint64 size = 0)
        {
            const auto start = node->takePending(QStringLiteral("start"));
            if (!start)
                return {};
            node->replyStart(*start, clock.nowMs());
            clock.advance(0); // running, attached: its tail request
            if (const auto tail = node->takePending(QStringLiteral("tail")))
                node->reply(*tail, QJsonObject{{QStringLiteral("size"), size}});
            clock.advance(0);
            return start->run;
        }
        // The run ends on the node (its tail's eof, then its status).
        void end(FakeAgentTransport* node, const QString& agentRun, qint64 consoleSize,
                const FakeAgentTransport::RunEnd& how, qint64 startedMs)
        {
            node->sendEof(agentRun, consoleSize);
            clock.advance(0);
            if (const auto status = node->takePending(QStringLiteral("status")))
                node->reply(*status, FakeAgentTransport::runStatus(agentRun, startedMs, consoleSize, how));
            clock.advance(0);
        }
    };

private Q_SLOTS:
    void testClockFiresTimersInDueOrderEachAtItsTime()
    {
        // The clock the other tests stand on: due order, ties in arming
        // order, each callback seeing its own due time, repeating timers,
        // timers armed by a callback, a destroyed context.
        TestClock clock;
        const qint64 t0 = clock.nowMs();
        QObject context;
        QList<std::pair<QString, qint64>> fired; // what, ms after t0
        const auto note = [&](const QString& what) { fired.append({what, clock.nowMs() - t0}); };
        clock.singleShot(30, &context, [&] { note(QStringLiteral("c30")); });
        clock.singleShot(10, &context, [&] {
            note(QStringLiteral("a10"));
            clock.singleShot(5, &context, [&] { note(QStringLiteral("armed-at-10")); });
        });
        clock.singleShot(10, &context, [&] { note(QStringLiteral("b10")); });
        auto gone = std::make_unique<QObject>();
        clock.singleShot(20, gone.get(), [&] { note(QStringLiteral("gone")); });
        ClockTimer* timer = clock.createTimer(&context, [&] { note(QStringLiteral("tick")); });
        timer->setInterval(15);
        timer->start();
        QCOMPARE(clock.armedTimers(), 5);
        QCOMPARE(clock.nextDueInMs(), std::optional<qint64>(10));
        gone.reset();
        clock.advance(9);
        QVERIFY(fired.isEmpty());
        clock.advance(21);
        QCOMPARE(fired,
                (QList<std::pair<QString, qint64>>{{QStringLiteral("a10"), 10}, {QStringLiteral("b10"), 10},
                        {QStringLiteral("tick"), 15}, {QStringLiteral("armed-at-10"), 15}, {QStringLiteral("c30"), 30},
                        {QStringLiteral("tick"), 30}}));
        QCOMPARE(clock.nowMs() - t0, qint64(30));
        QCOMPARE(clock.monotonicMs(), qint64(30));
        timer->stop();
        QCOMPARE(clock.armedTimers(), 0);
        QCOMPARE(clock.nextDueInMs(), std::nullopt);
        clock.advance(100);
        QCOMPARE(fired.size(), qsizetype(6));
    }

    void silentNodeIsUnreachableAfterTheHeartbeatTimeoutAndNotBefore()
    {
        // NodeHealth pings every 500 ms; 3000 ms without a sign of life is a
        // lost node. Its timer ticks at the ping interval, so the silence is
        // found at the first tick after more than 3000 ms: 3500 ms after the
        // last answer.
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setHeartbeat(500, 3000);
            e.setReconnectDelays(600000, 600000); // no reconnection within the test
            e.setReconnectProbeInterval(0);
        }));
        QList<std::pair<bool, QString>> status; // nodeStatusChanged: ready, reason
        connect(h.engine.get(), &RunEngine::nodeStatusChanged, this,
                [&status](const QString&, bool ready, const QString& reason) {
                    status.append({ready, reason});
                });
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
        QCOMPARE(status.size(), 1);

        // Answering: never unreachable, however long (ten timeouts).
        h.clock.advance(30000);
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
        QCOMPARE(node->count(QStringLiteral("ping")), 60); // one per 500 ms
        QVERIFY(node->pending(QStringLiteral("ping")).isEmpty());
        QCOMPARE(status.size(), 1);

        // Silent from now on (the ping of this instant was answered).
        node->setSilent(true);
        h.clock.advance(2999);
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
        h.clock.advance(1); // exactly the timeout: not longer than it
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
        h.clock.advance(499);
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
        QVERIFY(node->isOpen());
        QCOMPARE(status.size(), 1);
        // The tick at 3500 ms of silence: NodeHealth says why, and the
        // node's status carries that reason.
        QTest::ignoreMessage(QtWarningMsg, "node ws1: no heartbeat for 3.5 s (timeout 3.0 s)");
        h.clock.advance(1);
        QVERIFY(!h.engine->nodeReady(QStringLiteral("ws1")));
        QVERIFY(h.engine->nodeUnreachable(QStringLiteral("ws1")));
        QVERIFY(!node->isOpen()); // disconnected, to be reconnected with backoff
        QCOMPARE(status.size(), 2);
        QCOMPARE(status.at(1).first, false);
        QCOMPARE(status.at(1).second, QStringLiteral("no heartbeat for 3.5 s (timeout 3.0 s)"));
        QCOMPARE(node->count(QStringLiteral("ping")), 60 + 6); // 500 .. 3000 ms of silence, unanswered
        QCOMPARE(node->openCount(), 1);
    }

    void reconnectionDelaysDoubleUpToTheMaximum()
    {
        // A lost node is reconnected after 1 s, then after doubling delays up
        // to the maximum (8 s here) while it stays unreachable; once it
        // answers, the next loss starts at 1 s again.
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setReconnectDelays(1000, 8000);
            e.setReconnectProbeInterval(0);
        }));
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
        const qint64 t0 = h.clock.nowMs();
        node->setOpenFailure(QStringLiteral("connection refused"));
        node->drop();
        QVERIFY(!h.engine->nodeReady(QStringLiteral("ws1")));

        h.clock.advance(999);
        QCOMPARE(node->openCount(), 1); // not before the first delay
        h.clock.advance(1);
        QCOMPARE(node->openCount(), 2);
        h.clock.advance(30000 - 1000);
        QList<qint64> attempts;
        for (qsizetype i = 1; i < node->openTimesMs().size(); ++i)
            attempts.append(node->openTimesMs().at(i) - t0);
        // Delays 1, 2, 4, 8, 8 s: attempts at 1, 3, 7, 15, 23 s after the loss.
        QCOMPARE(attempts, (QList<qint64>{1000, 3000, 7000, 15000, 23000}));
        QVERIFY(h.engine->nodeUnreachable(QStringLiteral("ws1")));

        // It answers again at the next attempt (31 s), and is lost once more.
        node->setOpenFailure({});
        h.clock.advance(1000);
        QCOMPARE(node->openTimesMs().last() - t0, qint64(31000));
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
        const qint64 t1 = h.clock.nowMs();
        node->drop();
        h.clock.advance(999);
        QCOMPARE(node->openCount(), 7);
        h.clock.advance(1);
        QCOMPARE(node->openCount(), 8);
        QCOMPARE(node->openTimesMs().last() - t1, qint64(1000)); // the backoff was reset
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
    }

    void probeThatFindsTheNodeBackReconnectsAtOnce()
    {
        // Between attempts (20 s apart here) a lost node is probed every
        // second. Once a probe that found it silent is followed by one that
        // finds it answering, it is reconnected at once, not at 20 s.
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setReconnectDelays(20000, 20000);
            e.setReconnectProbeInterval(1000);
        }));
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        const qint64 t0 = h.clock.nowMs();
        node->setProbeAnswer(false);
        node->drop();
        h.clock.advance(999);
        QCOMPARE(node->probeCount(), 0);
        h.clock.advance(1);
        QCOMPARE(node->probeCount(), 1);
        h.clock.advance(2000);
        QCOMPARE(node->probeCount(), 3);
        QCOMPARE(node->openCount(), 1); // still waiting out the delay
        node->setProbeAnswer(true);
        h.clock.advance(999);
        QCOMPARE(node->openCount(), 1);
        h.clock.advance(1); // the probe at 4 s answers: reconnected now
        QCOMPARE(node->probeCount(), 4);
        QCOMPARE(node->openCount(), 2);
        QCOMPARE(node->openTimesMs().last() - t0, qint64(4000));
        QVERIFY(h.engine->nodeReady(QStringLiteral("ws1")));
        // The reconnection planned for 20 s is void: no third connection.
        h.clock.advance(30000);
        QCOMPARE(node->openCount(), 2);
    }

    void runPastItsTimeLimitIsCancelledExactlyThen()
    {
        Harness h;
        QVERIFY(h.open());
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        const auto id = h.engine->submit(spec(QStringLiteral("name: limited\ncommand: train\ntime_limit: 90s\n")));
        QVERIFY(id);
        h.clock.advance(0);
        const qint64 startedMs = h.clock.nowMs();
        const QString agentRun = h.start(node);
        QVERIFY(!agentRun.isEmpty());
        QCOMPARE(h.stored(*id).state, RunState::Running);

        h.clock.advance(90000 - 1);
        QCOMPARE(node->count(QStringLiteral("cancel")), 0);
        h.clock.advance(1);
        QCOMPARE(node->count(QStringLiteral("cancel")), 1);
        const AgentRequest cancel = *node->takePending(QStringLiteral("cancel"));
        QCOMPARE(cancel.run, agentRun);
        QCOMPARE(cancel.atMs - startedMs, qint64(90000));
        QCOMPARE(cancel.message.value(QStringLiteral("grace_ms")).toInt(), 10000);
        node->reply(cancel);
        // SIGTERM ended it 2 s later.
        h.clock.advance(2000);
        FakeAgentTransport::RunEnd how;
        how.finishedMs = h.clock.nowMs();
        how.signal = SIGTERM;
        how.cancelled = true;
        h.end(node, agentRun, 0, how, startedMs);
        const RunRecord run = h.stored(*id);
        QCOMPARE(run.state, RunState::Failed);
        QCOMPARE(run.failureKind, FailureKind::TimeLimit);
        QCOMPARE(run.failureReason, QStringLiteral("stopped at its time limit of 1m30s"));
        QCOMPARE(run.startedAt.toMSecsSinceEpoch(), startedMs);
        QCOMPARE(run.finishedAt.toMSecsSinceEpoch(), startedMs + 92000);
    }

    void fcfsStartsRunsInOrderOfSubmissionTime()
    {
        // One GPU, three runs that each need it. Alice and Bob are submitted
        // 5 s apart (their submission times are the clock's); a third run,
        // recorded after them by another process, was submitted a minute
        // before them: FCFS starts it first despite its higher id, then
        // Alice, then Bob, each once the one before has ended.
        Harness h;
        QVERIFY(h.open());
        const qint64 t0 = h.clock.nowMs();
        const auto alice
                = h.engine->submit(spec(QStringLiteral("name: alice\ncommand: train\nresources: {gpus: 1}\n")));
        h.clock.advance(5000);
        const auto bob = h.engine->submit(spec(QStringLiteral("name: bob\ncommand: train\nresources: {gpus: 1}\n")));
        QVERIFY(alice && bob);
        RunRecord early;
        early.name = QStringLiteral("early");
        early.state = RunState::Queued;
        early.specYaml = QStringLiteral("name: early\ncommand: train\nresources: {gpus: 1}\n");
        early.argv = {QStringLiteral("train")};
        early.workdir = QDir::tempPath();
        early.createdAt = QDateTime::fromMSecsSinceEpoch(t0 - 60000, Qt::UTC);
        const auto earlyId = h.store->createRun(early, {});
        QVERIFY(earlyId);
        QVERIFY(*earlyId > *bob);
        QCOMPARE(h.stored(*alice).createdAt.toMSecsSinceEpoch(), t0);
        QCOMPARE(h.stored(*bob).createdAt.toMSecsSinceEpoch(), t0 + 5000);

        // The node comes up with its GPU only now: every run is queued.
        FakeAgentTransport* node = h.addNode(
                QStringLiteral("ws1"), QJsonArray{FakeAgentTransport::gpu(0, QStringLiteral("H200"), 143771)});
        QList<RunId> order;
        for (int i = 0; i < 3; ++i) {
            h.clock.advance(0);
            QCOMPARE(node->pending(QStringLiteral("start")).size(), qsizetype(1)); // one GPU: one at a time
            const qint64 startedMs = h.clock.nowMs();
            const QString agentRun = h.start(node);
            order.append(runIdOf(agentRun));
            h.clock.advance(1000);
            FakeAgentTransport::RunEnd how;
            how.finishedMs = h.clock.nowMs();
            how.exitCode = 0;
            h.end(node, agentRun, 0, how, startedMs);
            QCOMPARE(h.stored(order.last()).state, RunState::Succeeded);
        }
        QCOMPARE(order, (QList<RunId>{*earlyId, *alice, *bob}));
    }

    void gpuRunWaitsForTheNodesGpuReportInsteadOfFailing()
    {
        // The agent's hello is in, its reply to `gpus` is not (over SSH, a
        // few ms). A pass in that window once took the node for one with no
        // GPU and failed the run as unschedulable, and a pass before that
        // write was committed could start the failed run all the same.
        Harness h;
        QVERIFY(h.open());
        auto owned = std::make_unique<FakeAgentTransport>(h.clock, QStringLiteral("ws1"));
        FakeAgentTransport* node = owned.get();
        node->setGpus(QJsonArray{FakeAgentTransport::gpu(0, QStringLiteral("H200"), 143771)});
        node->setAutoReply(QStringLiteral("gpus"), {}); // answered by hand below
        node->setAutoReply(QStringLiteral("list"), [](const AgentRequest&) {
            return QJsonObject{{QStringLiteral("runs"), QJsonArray()}};
        });
        h.engine->addNode(QStringLiteral("ws1"), std::move(owned));
        h.clock.advance(0);
        QCOMPARE(node->count(QStringLiteral("gpus")), 1);
        const auto id = h.engine->submit(spec(QStringLiteral("name: a\ncommand: train\nresources: {gpus: 1}\n")));
        QVERIFY(id);
        h.clock.advance(1000); // passes run: the submit's, the poll's
        QCOMPARE(h.stored(*id).state, RunState::Queued);
        QVERIFY2(h.stored(*id).pendingReason.contains(QStringLiteral("ws1 still connecting")),
                qPrintable(h.stored(*id).pendingReason));
        QCOMPARE(node->pending(QStringLiteral("start")).size(), qsizetype(0));
        // The report comes: the run starts on the GPU.
        const auto gpus = node->takePending(QStringLiteral("gpus"));
        QVERIFY(gpus);
        node->reply(*gpus,
                QJsonObject{{QStringLiteral("gpus"),
                                    QJsonArray{FakeAgentTransport::gpu(0, QStringLiteral("H200"), 143771)}},
                        {QStringLiteral("source"), QStringLiteral("nvml")}});
        h.clock.advance(0);
        const QString agentRun = h.start(node);
        QCOMPARE(runIdOf(agentRun), *id);
        QCOMPARE(h.stored(*id).state, RunState::Running);
        QCOMPARE(h.stored(*id).gpus, (QList<int>{0}));
    }

    void unschedulableRunIsNotStartedByAPassBeforeItsFailureIsStored()
    {
        // The only node has no GPU: a GPU run is failed as unschedulable.
        // Another process holds the database's write lock, so that failure
        // is not committed yet when a node with a GPU is added; the pass
        // that follows reads the stale 'queued' row and must not start the
        // failed run there.
        Harness h;
        QVERIFY(h.open());
        h.addNode(QStringLiteral("cpu1"));
        const auto id = h.engine->submit(spec(QStringLiteral("name: a\ncommand: train\nresources: {gpus: 1}\n")));
        QVERIFY(id);
        {
            QSqlDatabase other = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("other-writer"));
            other.setDatabaseName(h.dbPath());
            QVERIFY(other.open());
            QSqlQuery lock(other);
            QVERIFY2(lock.exec(QStringLiteral("BEGIN IMMEDIATE")), qPrintable(lock.lastError().text()));
            h.clock.advance(0); // the pass fails it; the write waits for the lock
            FakeAgentTransport* gpuNode = h.addNode(
                    QStringLiteral("ws1"), QJsonArray{FakeAgentTransport::gpu(0, QStringLiteral("H200"), 143771)});
            h.clock.advance(0);
            QCOMPARE(gpuNode->count(QStringLiteral("start")), 0);
            QVERIFY(lock.exec(QStringLiteral("ROLLBACK")));
            lock.finish();
            other.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("other-writer"));
        const RunRecord run = h.stored(*id);
        QCOMPARE(run.state, RunState::Failed);
        QCOMPARE(run.failureKind, FailureKind::Unschedulable);
        QVERIFY2(run.failureReason.contains(QStringLiteral("GPU")), qPrintable(run.failureReason));
    }

    void nodeLostMidRunLeavesItsRunUnknownUntilItAnswers()
    {
        // The connection to a node drops while its run goes on. The run is
        // not failed: it is unknown (it may well be going) until the node's
        // agent answers again; then its list says it is running, the run is
        // running again and its console is resumed at the byte it stopped at.
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setReconnectDelays(5000, 5000);
            e.setReconnectProbeInterval(0);
        }));
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        const auto id = h.engine->submit(spec(QStringLiteral("name: long\ncommand: train\n")));
        QVERIFY(id);
        h.clock.advance(0);
        const qint64 startedMs = h.clock.nowMs();
        const QString agentRun = h.start(node);
        QVERIFY(!agentRun.isEmpty());
        const QByteArray first("step 1 loss=0.50\n");
        node->sendOutput(agentRun, 0, first);
        h.clock.advance(1000);

        node->drop(QStringLiteral("connection reset by peer"));
        h.clock.advance(0);
        RunRecord run = h.stored(*id);
        QCOMPARE(run.state, RunState::Unknown);
        QCOMPARE(run.failureKind, FailureKind::None);
        QVERIFY(!run.finishedAt.isValid());
        QCOMPARE(run.consoleOffset, qint64(first.size()));
        QVERIFY(h.engine->nodeUnreachable(QStringLiteral("ws1")));
        h.clock.advance(4999);
        QCOMPARE(h.stored(*id).state, RunState::Unknown);
        QCOMPARE(node->openCount(), 1);

        // Back: its agent lists the run as running, with more console.
        const QByteArray second("step 2 loss=0.25\n");
        node->setAutoReply(QStringLiteral("list"), [&](const AgentRequest&) {
            return QJsonObject{{QStringLiteral("runs"),
                    QJsonArray{FakeAgentTransport::runStatus(agentRun, startedMs, first.size() + second.size())}}};
        });
        h.clock.advance(1);
        QCOMPARE(node->openCount(), 2);
        const auto tail = node->takePending(QStringLiteral("tail"));
        QVERIFY(tail);
        QCOMPARE(tail->run, agentRun);
        QCOMPARE(tail->message.value(QStringLiteral("offset")).toInteger(), qint64(first.size()));
        QCOMPARE(h.stored(*id).state, RunState::Running);
        node->reply(*tail, QJsonObject{{QStringLiteral("size"), qint64(first.size() + second.size())}});
        node->sendOutput(agentRun, first.size(), second);
        h.clock.advance(1000);
        FakeAgentTransport::RunEnd how;
        how.finishedMs = h.clock.nowMs();
        how.exitCode = 0;
        h.end(node, agentRun, first.size() + second.size(), how, startedMs);
        run = h.stored(*id);
        QCOMPARE(run.state, RunState::Succeeded);
        QCOMPARE(test::readFile(run.consolePath), first + second);
        QCOMPARE(h.store->metrics(*id, QStringLiteral("loss")).size(), qsizetype(2));
    }

    void runThatEndedWhileItsNodeWasLostIsRecordedWhenItAnswers()
    {
        // The run exits (code 3) while its node is unreachable. When the
        // node answers, its agent lists the run as exited: the console is
        // fetched from where it stopped and the run is recorded failed with
        // its exit code, not as lost.
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setReconnectDelays(2000, 2000);
            e.setReconnectProbeInterval(0);
        }));
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        const auto id = h.engine->submit(spec(QStringLiteral("name: short\ncommand: train\n")));
        QVERIFY(id);
        h.clock.advance(0);
        const qint64 startedMs = h.clock.nowMs();
        const QString agentRun = h.start(node);
        QVERIFY(!agentRun.isEmpty());
        const QByteArray first("acc=0.25\n"), second("acc=0.5\n");
        node->sendOutput(agentRun, 0, first);
        h.clock.advance(0);
        node->setOpenFailure(QStringLiteral("no route to host"));
        node->drop();
        h.clock.advance(2000); // one attempt fails
        QCOMPARE(node->openCount(), 2);
        QCOMPARE(h.stored(*id).state, RunState::Unknown);

        const qint64 size = first.size() + second.size();
        FakeAgentTransport::RunEnd how;
        how.finishedMs = h.clock.nowMs() - 500;
        how.exitCode = 3;
        node->setOpenFailure({});
        node->setAutoReply(QStringLiteral("list"), [&](const AgentRequest&) {
            return QJsonObject{{QStringLiteral("runs"),
                    QJsonArray{FakeAgentTransport::runStatus(agentRun, startedMs, size, how)}}};
        });
        h.clock.advance(2000); // the next attempt: 2 s later (the delay is at its maximum)
        QCOMPARE(node->openCount(), 3);
        QCOMPARE(node->openTimesMs().at(2) - node->openTimesMs().at(1), qint64(2000));
        const auto tail = node->takePending(QStringLiteral("tail"));
        QVERIFY(tail);
        QCOMPARE(tail->message.value(QStringLiteral("offset")).toInteger(), qint64(first.size()));
        node->reply(*tail, QJsonObject{{QStringLiteral("size"), size}});
        node->sendOutput(agentRun, first.size(), second);
        h.end(node, agentRun, size, how, startedMs);
        const RunRecord run = h.stored(*id);
        QCOMPARE(run.state, RunState::Failed);
        QCOMPARE(run.exitCode, std::optional<int>(3));
        QCOMPARE(run.failureKind, FailureKind::ExitCode);
        QCOMPARE(run.failureReason, QStringLiteral("exit code 3"));
        QCOMPARE(run.finishedAt.toMSecsSinceEpoch(), how.finishedMs);
        QCOMPARE(test::readFile(run.consolePath), first + second);
    }

    // Issue #25: node loss is not run failure. A node silent for less than
    // node_lost_after gets its runs back; one silent for it loses them
    // (failed node_lost, to the millisecond), and their retry is queued
    // elsewhere at once, within the infrastructure budget (limit 0 counts
    // only the code's failures).
    void nodeSilentPastNodeLostAfterLosesItsRunsWhichAreRetried()
    {
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setReconnectDelays(5000, 5000);
            e.setReconnectProbeInterval(0);
        }));
        NodeLossWatch watch(h.engine.get(), h.store.get(), h.clock, 60000);
        RetryRunner retries(h.engine.get(), h.store.get(), h.clock);
        retries.setJitterSource([] { return 0.0; });
        QSignalSpy lost(&watch, &NodeLossWatch::nodeLost);
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        const auto id = h.engine->submit(
                spec(QStringLiteral("name: long\ncommand: train\nretry: {limit: 0, backoff: {duration: 2s}}\n")));
        QVERIFY(id);
        h.clock.advance(0);
        const qint64 startedMs = h.clock.nowMs();
        const QString agentRun = h.start(node);
        QVERIFY(!agentRun.isEmpty());

        // Silent for 30 s, then back with the run still going: never lost.
        node->setOpenFailure(QStringLiteral("no route to host"));
        node->drop();
        h.clock.advance(30000);
        QCOMPARE(h.stored(*id).state, RunState::Unknown);
        node->setOpenFailure({});
        node->setAutoReply(QStringLiteral("list"), [&](const AgentRequest&) {
            return QJsonObject{
                    {QStringLiteral("runs"), QJsonArray{FakeAgentTransport::runStatus(agentRun, startedMs, 0)}}};
        });
        h.clock.advance(5000);
        if (const auto tail = node->takePending(QStringLiteral("tail")))
            node->reply(*tail, QJsonObject{{QStringLiteral("size"), 0}});
        h.clock.advance(0);
        QCOMPARE(h.stored(*id).state, RunState::Running);
        h.clock.advance(60000);
        QCOMPARE(h.stored(*id).state, RunState::Running);
        QCOMPARE(lost.size(), 0);

        // Silent for good: unknown until 60 s have passed, then lost.
        node->setOpenFailure(QStringLiteral("no route to host"));
        node->drop();
        const qint64 silentAt = h.clock.nowMs();
        h.clock.advance(59999);
        QCOMPARE(h.stored(*id).state, RunState::Unknown);
        h.clock.advance(1);
        const RunRecord gone = h.stored(*id);
        QCOMPARE(gone.state, RunState::Failed);
        QCOMPARE(gone.failureKind, FailureKind::NodeLost);
        QCOMPARE(gone.failureReason,
                QStringLiteral("node ws1 has not answered for 1m (node_lost_after): its runs there are lost"));
        QCOMPARE(gone.finishedAt.toMSecsSinceEpoch(), silentAt + 60000);
        QCOMPARE(lost.size(), 1);
        // Retried: the next attempt waits its 2 s, placed anew (not pinned to ws1).
        const RunGroupId attempts = groupIdOf(h.stored(*id), RunGroupKind::Attempts);
        QVERIFY(attempts > 0);
        const auto members = h.store->groupMembers(attempts);
        QCOMPARE(members.size(), 2);
        const RunRecord next = h.stored(members[1].first);
        QCOMPARE(next.state, RunState::Queued);
        QCOMPARE(next.node, QString());
        QCOMPARE(next.notBefore.toMSecsSinceEpoch(), silentAt + 60000 + 2000);
        QCOMPARE(next.env.value(QStringLiteral("TRAINYARD_ATTEMPT")), QStringLiteral("2"));
    }

    // Issue #25: `deadline` counts from the first submit, the time in the
    // queue included. A run still queued then is failed time_limit at that
    // millisecond (the engine wakes for it on its clock) and is never
    // started; its retry policy does not retry it.
    void queuedRunIsFailedAtItsDeadlineAndNeverStarted()
    {
        Harness h;
        QVERIFY(h.open());
        RetryRunner retries(h.engine.get(), h.store.get(), h.clock);
        retries.setJitterSource([] { return 0.0; });
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        const qint64 submitMs = h.clock.nowMs();
        // Pinned to a node this engine does not connect to: it waits.
        const auto id = h.engine->submit(
                spec(QStringLiteral("name: late\ncommand: train\ndeadline: 1m\nretry: {limit: 2}\n")),
                QStringLiteral("ws2"));
        QVERIFY(id);
        h.clock.advance(60000 - 1);
        QCOMPARE(h.stored(*id).state, RunState::Queued);
        h.clock.advance(1);
        const RunRecord run = h.stored(*id);
        QCOMPARE(run.state, RunState::Failed);
        QCOMPARE(run.failureKind, FailureKind::TimeLimit);
        QCOMPARE(run.failureReason,
                QStringLiteral("stopped at its deadline of 1m (from its first submit) while still queued"));
        QCOMPARE(run.finishedAt.toMSecsSinceEpoch(), submitMs + 60000);
        QVERIFY(!run.startedAt.isValid());
        QVERIFY(run.pendingReason.isEmpty());
        // Not retried: its deadline has passed.
        const QList<RunNotice> notices = h.store->notices(*id);
        QCOMPARE(notices.size(), qsizetype(1));
        QVERIFY2(notices[0].text.startsWith(QStringLiteral("not retried: its deadline of 1m passed at")),
                qPrintable(notices[0].text));
        QCOMPARE(groupIdOf(run, RunGroupKind::Attempts), RunGroupId(0));
        h.clock.advance(60000);
        QCOMPARE(node->count(QStringLiteral("start")), 0);
        QCOMPARE(h.stored(*id).state, RunState::Failed);
    }

    // A retry waits out its backoff, then for the only GPU, which another
    // run took meanwhile: its deadline (from the first attempt's submit)
    // fails it then, and it is never started. A retry whose backoff would
    // end after the deadline is not queued at all.
    void retryStillQueuedAtTheFirstSubmitsDeadlineIsFailedThen()
    {
        Harness h;
        QVERIFY(h.open());
        RetryRunner retries(h.engine.get(), h.store.get(), h.clock);
        retries.setJitterSource([] { return 0.0; });
        FakeAgentTransport* node = h.addNode(
                QStringLiteral("ws1"), QJsonArray{FakeAgentTransport::gpu(0, QStringLiteral("H200"), 143771)});
        const qint64 submitMs = h.clock.nowMs();
        const auto id = h.engine->submit(
                spec(QStringLiteral("name: a\ncommand: train\nresources: {gpus: 1}\n"
                                    "deadline: 50s\nretry: {limit: 2, backoff: {duration: 30s}}\n")));
        QVERIFY(id);
        h.clock.advance(0);
        const qint64 startedMs = h.clock.nowMs();
        const QString agentRun = h.start(node);
        QCOMPARE(runIdOf(agentRun), *id);
        h.clock.advance(10000);
        FakeAgentTransport::RunEnd how;
        how.finishedMs = h.clock.nowMs();
        how.exitCode = 1;
        h.end(node, agentRun, 0, how, startedMs);
        QCOMPARE(h.stored(*id).state, RunState::Failed);
        // Its retry waits until 40 s; another run takes the GPU now.
        const RunGroupId attempts = groupIdOf(h.stored(*id), RunGroupKind::Attempts);
        QVERIFY(attempts > 0);
        const auto members = h.store->groupMembers(attempts);
        QCOMPARE(members.size(), 2);
        const RunId retry = members[1].first;
        QCOMPARE(h.stored(retry).notBefore.toMSecsSinceEpoch(), submitMs + 40000);
        const auto other = h.engine->submit(spec(QStringLiteral("name: b\ncommand: train\nresources: {gpus: 1}\n")));
        QVERIFY(other);
        h.clock.advance(0);
        QCOMPARE(runIdOf(h.start(node)), *other);

        h.clock.advance(submitMs + 50000 - 1 - h.clock.nowMs());
        QCOMPARE(h.stored(retry).state, RunState::Queued);
        h.clock.advance(1);
        const RunRecord ended = h.stored(retry);
        QCOMPARE(ended.state, RunState::Failed);
        QCOMPARE(ended.failureKind, FailureKind::TimeLimit);
        QCOMPARE(ended.failureReason,
                QStringLiteral("stopped at its deadline of 50s (from its first submit) while still queued"));
        QCOMPARE(ended.finishedAt.toMSecsSinceEpoch(), submitMs + 50000);
        QCOMPARE(h.store->groupMembers(attempts).size(), 2); // no third attempt
        QCOMPARE(node->count(QStringLiteral("start")), 2);   // a's first attempt and b

        // A run whose backoff (30 s) would end after its deadline (20 s):
        // not retried, nothing queued.
        const auto short_ = h.engine->submit(spec(QStringLiteral("name: c\ncommand: train\ndeadline: 20s\n"
                                                                 "retry: {limit: 2, backoff: {duration: 30s}}\n")));
        QVERIFY(short_);
        h.clock.advance(0);
        const qint64 cStartedMs = h.clock.nowMs();
        const QString cRun = h.start(node);
        QCOMPARE(runIdOf(cRun), *short_);
        h.clock.advance(1000);
        how.finishedMs = h.clock.nowMs();
        h.end(node, cRun, 0, how, cStartedMs);
        QCOMPARE(groupIdOf(h.stored(*short_), RunGroupKind::Attempts), RunGroupId(0));
        const QList<RunNotice> notices = h.store->notices(*short_);
        QCOMPARE(notices.size(), qsizetype(1));
        QVERIFY2(notices[0].text.startsWith(QStringLiteral("not retried: its deadline of 20s passes at")),
                qPrintable(notices[0].text));
        QCOMPARE(h.store->unfinishedRuns().size(), qsizetype(1)); // b alone
    }

    // A run declared lost (its node silent past node_lost_after) and
    // retried, whose node comes back with the run still going there: an
    // orphan, as attempt 2 owns its work now. The engine stops it on the
    // node (a cancel), with a notice; its recorded ending stays node_lost.
    void lostRunStillGoingOnANodeThatComesBackIsStopped()
    {
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setReconnectDelays(5000, 5000);
            e.setReconnectProbeInterval(0);
        }));
        NodeLossWatch watch(h.engine.get(), h.store.get(), h.clock, 60000);
        RetryRunner retries(h.engine.get(), h.store.get(), h.clock);
        retries.setJitterSource([] { return 0.0; });
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        const auto id = h.engine->submit(
                spec(QStringLiteral("name: long\ncommand: train\nretry: {limit: 0, backoff: {duration: 2s}}\n")));
        QVERIFY(id);
        h.clock.advance(0);
        const qint64 startedMs = h.clock.nowMs();
        const QString agentRun = h.start(node);
        QVERIFY(!agentRun.isEmpty());
        node->setOpenFailure(QStringLiteral("no route to host"));
        node->drop();
        h.clock.advance(0);
        QCOMPARE(h.stored(*id).state, RunState::Unknown);
        h.clock.advance(60000);
        const RunRecord lost = h.stored(*id);
        QCOMPARE(lost.state, RunState::Failed);
        QCOMPARE(lost.failureKind, FailureKind::NodeLost);
        const RunGroupId attempts = groupIdOf(lost, RunGroupKind::Attempts);
        QVERIFY(attempts > 0);
        const RunId retry = h.store->groupMembers(attempts).at(1).first;
        QCOMPARE(node->count(QStringLiteral("cancel")), 0);

        // Back (the next reconnection, 5 s later), the run still going there.
        node->setOpenFailure({});
        node->setAutoReply(QStringLiteral("list"), [&](const AgentRequest&) {
            return QJsonObject{
                    {QStringLiteral("runs"), QJsonArray{FakeAgentTransport::runStatus(agentRun, startedMs, 0)}}};
        });
        const int opens = node->openCount();
        h.clock.advance(5000);
        QCOMPARE(node->openCount(), opens + 1);
        QCOMPARE(node->count(QStringLiteral("cancel")), 1);
        const AgentRequest cancel = *node->takePending(QStringLiteral("cancel"));
        QCOMPARE(cancel.run, agentRun);
        QCOMPARE(cancel.message.value(QStringLiteral("grace_ms")).toInt(), 10000);
        node->reply(cancel);
        h.clock.advance(0);
        // Its record is as it was; a notice says what happened.
        const RunRecord after = h.stored(*id);
        QCOMPARE(after.state, RunState::Failed);
        QCOMPARE(after.failureKind, FailureKind::NodeLost);
        QCOMPARE(after.failureReason, lost.failureReason);
        QCOMPARE(after.finishedAt, lost.finishedAt);
        QStringList notices;
        for (const RunNotice& n : h.store->notices(*id))
            notices << n.text;
        QVERIFY2(notices.contains(QStringLiteral("still running on ws1 when the node came back after it was declared "
                                                 "lost: stopped there; attempt 2 (run %1) owns its work now")
                                          .arg(retry)),
                qPrintable(notices.join(u'\n')));
        // Nothing of the old run is followed again; the retry starts there as any run.
        for (const AgentRequest& tail : node->pending(QStringLiteral("tail")))
            QVERIFY(tail.run != agentRun);
        QCOMPARE(runIdOf(h.start(node)), retry);
        QCOMPARE(h.stored(retry).state, RunState::Running);
        QCOMPARE(node->count(QStringLiteral("cancel")), 1);
    }

    // node_lost_after per node: ws1 stored with its own 30 s, ws2 with none
    // (the service's 1 m here). Both fall silent at the same moment: ws1's
    // run is lost 30 s later, ws2's only at 1 m.
    void eachNodeIsLostAfterItsOwnNodeLostAfter()
    {
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setReconnectDelays(5000, 5000);
            e.setReconnectProbeInterval(0);
        }));
        QVERIFY(h.store->addNode(
                NodeRecord{.name = QStringLiteral("ws1"), .host = QStringLiteral("ws1"), .nodeLostAfterSec = 30}));
        QVERIFY(h.store->addNode(NodeRecord{.name = QStringLiteral("ws2"), .host = QStringLiteral("ws2")}));
        h.store->flush();
        NodeLossWatch watch(h.engine.get(), h.store.get(), h.clock, 60000);
        QCOMPARE(watch.lostAfterMsFor(QStringLiteral("ws1")), qint64(30000));
        QCOMPARE(watch.lostAfterMsFor(QStringLiteral("ws2")), qint64(60000));
        QSignalSpy lost(&watch, &NodeLossWatch::nodeLost);
        QHash<QString, RunId> runs;
        QList<FakeAgentTransport*> nodes;
        for (const QString& name : {QStringLiteral("ws1"), QStringLiteral("ws2")}) {
            FakeAgentTransport* node = h.addNode(name);
            const auto id = h.engine->submit(spec(QStringLiteral("name: long\ncommand: train\n")), name);
            QVERIFY(id);
            h.clock.advance(0);
            QVERIFY(!h.start(node).isEmpty());
            QCOMPARE(h.stored(*id).node, name);
            runs.insert(name, *id);
            nodes.append(node);
            node->setOpenFailure(QStringLiteral("no route to host"));
        }
        const qint64 silentAt = h.clock.nowMs();
        for (FakeAgentTransport* node : std::as_const(nodes))
            node->drop();
        h.clock.advance(30000 - 1);
        QCOMPARE(h.stored(runs[QStringLiteral("ws1")]).state, RunState::Unknown);
        QCOMPARE(h.stored(runs[QStringLiteral("ws2")]).state, RunState::Unknown);
        h.clock.advance(1);
        RunRecord ws1 = h.stored(runs[QStringLiteral("ws1")]);
        QCOMPARE(ws1.state, RunState::Failed);
        QCOMPARE(ws1.failureKind, FailureKind::NodeLost);
        QCOMPARE(ws1.failureReason,
                QStringLiteral("node ws1 has not answered for 30s (node_lost_after): its runs there are lost"));
        QCOMPARE(ws1.finishedAt.toMSecsSinceEpoch(), silentAt + 30000);
        QCOMPARE(h.stored(runs[QStringLiteral("ws2")]).state, RunState::Unknown);
        QCOMPARE(lost.size(), 1);
        h.clock.advance(30000 - 1);
        QCOMPARE(h.stored(runs[QStringLiteral("ws2")]).state, RunState::Unknown);
        h.clock.advance(1);
        const RunRecord ws2 = h.stored(runs[QStringLiteral("ws2")]);
        QCOMPARE(ws2.state, RunState::Failed);
        QCOMPARE(ws2.failureReason,
                QStringLiteral("node ws2 has not answered for 1m (node_lost_after): its runs there are lost"));
        QCOMPARE(ws2.finishedAt.toMSecsSinceEpoch(), silentAt + 60000);
        QCOMPARE(lost.size(), 2);
    }

    void removedNodesRunsGetNoLaterWritesFromTheEngine()
    {
        // trainyardctl node rm --force: NodeRemoval records the node's runs
        // failed, then the engine drops the node. One run was being
        // followed (its tail's reply still to come), another was starting
        // (its start's reply still to come). The old connection's failed
        // replies must not write anything for them: no notice that the
        // console could not be followed, no "unknown" over the failure, and
        // the engine is not still starting or following them.
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            e.setReconnectDelays(1000, 1000);
            e.setReconnectProbeInterval(0);
        }));
        QVERIFY(h.store->addNode(NodeRecord{.name = QStringLiteral("ws1"), .host = QStringLiteral("ws1")}));
        FakeAgentTransport* node = h.addNode(QStringLiteral("ws1"));
        const auto followed = h.engine->submit(spec(QStringLiteral("name: followed\ncommand: train\n")));
        QVERIFY(followed);
        h.clock.advance(0);
        const auto start = node->takePending(QStringLiteral("start"));
        QVERIFY(start);
        node->replyStart(*start, h.clock.nowMs());
        h.clock.advance(0);
        QVERIFY(!node->pending(QStringLiteral("tail")).isEmpty()); // followed: its tail not answered yet
        const auto starting = h.engine->submit(spec(QStringLiteral("name: starting\ncommand: train\n")));
        QVERIFY(starting);
        h.clock.advance(0);
        QVERIFY(!node->pending(QStringLiteral("start")).isEmpty()); // starting: its start not answered yet
        QVERIFY(h.engine->startsInFlight() > 0);
        QVERIFY(h.engine->startsPending());

        QSignalSpy settled(h.engine.get(), &RunEngine::startsSettled);
        h.store->flush();
        const auto removed = removeNodeRecords(*h.store, QStringLiteral("ws1"), /*force=*/true);
        QVERIFY(removed);
        QCOMPARE(*removed, 2);
        h.store->flush();
        h.engine->removeNode(QStringLiteral("ws1"));
        QVERIFY(!node->isOpen());
        QCOMPARE(h.engine->startsInFlight(), qsizetype(0));
        h.clock.advance(0); // the old connection's pending replies fail now
        h.clock.advance(5000);
        QCOMPARE(node->openCount(), 1); // not reconnected

        for (const RunId id : {*followed, *starting}) {
            const RunRecord run = h.stored(id);
            QCOMPARE(run.state, RunState::Failed);
            QCOMPARE(run.failureKind, FailureKind::NodeLost);
            QVERIFY2(run.failureReason.contains(QStringLiteral("was removed")), qPrintable(run.failureReason));
            QVERIFY2(h.store->notices(id).isEmpty(), qPrintable(h.store->notices(id).value(0).text));
        }
        QCOMPARE(h.engine->startsInFlight(), qsizetype(0));
        QVERIFY(!h.engine->startsPending());
        QCOMPARE(settled.size(), 1);
        QVERIFY(h.engine->nodesBehind().isEmpty());
    }

    // Preemption (issue #25) against a node the test plays, whose agent is
    // of protocol revision 5: the victim's cancel carries the spec's signal
    // and grace, the agent cannot send that signal (SIGTERM goes instead)
    // and the run gets a notice saying so; the waiting run says why it
    // waits, the victim ends `preempted`, and the waiting run starts on its GPU.
    void preemptionSendsTheSpecsSignalAndSaysWhatAnOldAgentSendsInstead()
    {
        Harness h;
        QVERIFY(h.open([](RunEngine& e) {
            sched::Policy p = sched::Policy::fcfs();
            p.preemption = true;
            e.setPolicy(p);
        }));
        auto owned = std::make_unique<FakeAgentTransport>(h.clock, QStringLiteral("ws1"));
        FakeAgentTransport* node = owned.get();
        node->setHelloFields(QJsonObject{{QStringLiteral("revision"), 5}});
        node->setGpus(QJsonArray{FakeAgentTransport::gpu(0, QStringLiteral("H200"), 143771)});
        node->setAutoReply(QStringLiteral("list"), [](const AgentRequest&) {
            return QJsonObject{{QStringLiteral("runs"), QJsonArray()}};
        });
        h.engine->addNode(QStringLiteral("ws1"), std::move(owned));
        h.clock.advance(0);

        const auto victim = h.engine->submit(
                spec(QStringLiteral("name: low\ncommand: train\nresources: {gpus: 1}\npreemptible: true\n"
                                    "preemption: {signal: SIGUSR1, grace: 20s}\n")));
        QVERIFY(victim);
        h.clock.advance(0);
        const qint64 startedMs = h.clock.nowMs();
        const QString victimRun = h.start(node);
        QCOMPARE(runIdOf(victimRun), *victim);

        const auto urgent = h.engine->submit(
                spec(QStringLiteral("name: urgent\ncommand: train\nresources: {gpus: 1}\npriority: 10\n")));
        QVERIFY(urgent);
        h.clock.advance(0);
        const auto cancel = node->takePending(QStringLiteral("cancel"));
        QVERIFY(cancel);
        QCOMPARE(cancel->run, victimRun);
        QCOMPARE(cancel->message.value(QStringLiteral("signal")).toString(), QStringLiteral("SIGUSR1"));
        QCOMPARE(cancel->message.value(QStringLiteral("grace_ms")).toInt(), 20000);
        node->reply(*cancel);
        h.clock.advance(0);
        QCOMPARE(h.engine->pendingReasons().value(*urgent),
                QStringLiteral("waiting: preempting run %1 on ws1 (grace 20 s)").arg(*victim));
        QStringList notices;
        h.store->flush();
        for (const RunNotice& n : h.store->notices(*victim))
            notices << n.text;
        QVERIFY2(notices.contains(QStringLiteral("the agent on node ws1 (protocol revision 5) can only send SIGTERM: "
                                                 "it was sent instead of SIGUSR1")),
                qPrintable(notices.join(u'\n')));
        QCOMPARE(node->pending(QStringLiteral("start")).size(), qsizetype(0)); // nothing starts in the grace

        h.clock.advance(1000); // a second of its grace, then SIGTERM ends it
        FakeAgentTransport::RunEnd how;
        how.finishedMs = h.clock.nowMs();
        how.signal = SIGTERM;
        how.cancelled = true;
        h.end(node, victimRun, 0, how, startedMs);
        const RunRecord ended = h.stored(*victim);
        QCOMPARE(ended.state, RunState::Failed);
        QCOMPARE(ended.failureKind, FailureKind::Preempted);
        QCOMPARE(ended.failureReason, QStringLiteral("preempted by run %1 (priority 10) on ws1").arg(*urgent));
        h.clock.advance(0);
        const QString urgentRun = h.start(node);
        QCOMPARE(runIdOf(urgentRun), *urgent);
        QCOMPARE(h.stored(*urgent).gpus, (QList<int>{0}));
    }
};

QTEST_GUILESS_MAIN(TestEngineLogic)
#include "TestEngineLogic.moc"
