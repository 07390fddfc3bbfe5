#include "tests/support/TestClock.h"
#include "tests/support/TestSupport.h"
#include "core/common/Paths.h"
#include "core/logs/StderrRanges.h"
#include "core/logs/TerminalRenderer.h"
#include "core/runs/QueuePolicy.h"
#include "core/sched/Policy.h"
#include "core/runs/RunEngine.h"
#include "core/nodes/AgentTransport.h"
#include "core/nodes/LocalAgentTransport.h"
#include "core/nodes/WorkdirSync.h"

#include <QScopeGuard>
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QElapsedTimer>
#include <QFile>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <unistd.h>

using namespace ty;

namespace {

// argv[1]: ignore-term | obey-term (the daemon's SIGTERM); argv[2]: stay
// (the main process sleeps) | exit (it exits 0 at once). The daemon writes
// its pid to daemon.pid once it has left the group.
const char* const kDaemonScript = "import os, signal, sys, time\n"
                                  "if os.fork() == 0:\n"
                                  "    os.setsid()\n"
                                  "    if os.fork() == 0:\n"
                                  "        if sys.argv[1] == 'ignore-term':\n"
                                  "            signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                  "        with open('daemon.pid.tmp', 'w') as f:\n"
                                  "            f.write(str(os.getpid()))\n"
                                  "        os.rename('daemon.pid.tmp', 'daemon.pid')\n"
                                  "        while True:\n"
                                  "            time.sleep(1)\n"
                                  "    os._exit(0)\n"
                                  "while not os.path.exists('daemon.pid'):\n"
                                  "    time.sleep(0.05)\n"
                                  "print('daemon started', flush=True)\n"
                                  "if sys.argv[2] == 'stay':\n"
                                  "    time.sleep(1000)\n";

// Alive and not a zombie: /proc/PID/stat's state (proc(5)).
bool processRunning(pid_t pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QByteArray stat = f.readAll();
    const qsizetype close = stat.lastIndexOf(')');
    return close > 0 && close + 2 < stat.size() && stat.at(close + 2) != 'Z' && stat.at(close + 2) != 'X';
}

// The local agent's transport, except that the connection is cut right after
// the first start request was written, before the agent's reply can come
// back (as when the process that sent it ends): everything the agent sends
// afterwards is dropped, and closed() follows. Reconnecting works as usual.
class CutAfterStartTransport final : public AgentTransport {
public:
    CutAfterStartTransport(const QString& agentPath, const QString& stateDir)
        : m_inner(new LocalAgentTransport(agentPath, stateDir, this))
    {
        connect(m_inner, &AgentTransport::opened, this, &AgentTransport::opened);
        connect(m_inner, &AgentTransport::received, this, [this](const QByteArray& bytes) {
            if (!m_cut)
                Q_EMIT received(bytes);
        });
        connect(m_inner, &AgentTransport::closed, this, &AgentTransport::closed);
    }
    void open() override
    {
        m_cut = false;
        m_inner->open();
    }
    void write(const QByteArray& bytes) override
    {
        m_inner->write(bytes);
        if (!m_done && bytes.contains("\"op\":\"start\"")) {
            m_done = true;
            m_cut = true;
            m_inner->close(); // the agent still reads the request (closeWriteChannel writes it first)
        }
    }
    void close() override { m_inner->close(); }
    QString describe() const override { return QStringLiteral("cut"); }
    bool cutDone() const { return m_done; }

private:
    LocalAgentTransport* m_inner;
    bool m_cut = false;
    bool m_done = false;
};
} // namespace

// The run engine against the real agent: a run outlives the engine that
// started it, and the next engine resumes its console at the stored offset,
// so the local copy is byte-identical and every metric is stored once.
class TestRunEngine final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString dbPath() const { return m_dir.filePath(QStringLiteral("db/trainyard.db")); }
    QString stateDir() const { return m_dir.filePath(QStringLiteral("state")); }

    std::unique_ptr<RunEngine> makeEngine(ResultStore* store)
    {
        auto engine = std::make_unique<RunEngine>(store, dbPath());
        engine->addLocalNode(test::agentPath(), stateDir());
        return engine;
    }

    // Submits `spec` and waits for the run's end (20 s at most): its record,
    // or an empty one (state Queued, id 0) when it was not submitted.
    static RunRecord runToEnd(RunEngine& engine, ResultStore& store, const JobSpec& spec)
    {
        const auto id = engine.submit(spec);
        if (!id)
            return {};
        test::waitUntil([&] { return isTerminal(store.run(*id)->state); }, 20000);
        return *store.run(*id);
    }

    static JobSpec spec(const QString& yaml)
    {
        auto s = parseJobSpec(yaml, QStringLiteral("test.yaml"), QDir::tempPath());
        if (!s)
            qFatal("%s", qPrintable(s.error().message));
        return *s;
    }

    using StandInGpu = test::StandInGpu; // one recorded GPU, no NVML

    // A run that prints steps 1-5, waits for the file `go`, then prints
    // steps 6-`last` (6-8: fewer bytes than 1-5), and what each part prints.
    static JobSpec twoPartSpec(const QString& go, int last = 8)
    {
        return spec(QStringLiteral("name: two-part\n"
                                   "command: \"for i in 1 2 3 4 5; do echo step=$i loss=$i.5; done; "
                                   "while [ ! -e '%1' ]; do sleep 0.02; done; "
                                   "for i in $(seq 6 %2); do echo step=$i loss=$i.5; sleep 0.05; done\"\n")
                            .arg(go)
                            .arg(last));
    }
    static QByteArray twoPartOutput(int from, int to)
    {
        QByteArray out;
        for (int i = from; i <= to; ++i)
            out += "step=" + QByteArray::number(i) + " loss=" + QByteArray::number(i) + ".5\n";
        return out;
    }
    QString nodeConsole(const RunRecord& run) const
    {
        return stateDir() + QStringLiteral("/runs/") + run.agentRunId + QStringLiteral("/console.log");
    }
    // After a truncation of the node's console while `before` was held: the
    // local copy kept it and has the new content after it, every metric is
    // stored once, and the run has one notice naming the node and sizes.
    void verifyTruncationFollowed(ResultStore& store, RunId id, const QByteArray& before, const QByteArray& after)
    {
        store.flush();
        const RunRecord run = *store.run(id);
        QCOMPARE(run.state, RunState::Succeeded);
        QCOMPARE(test::readFile(nodeConsole(run)), after); // the node has only the new content
        QCOMPARE(test::readFile(run.consolePath), before + after);
        QCOMPARE(run.consoleOffset, qint64(before.size() + after.size()));
        QCOMPARE(test::readFile(QFileInfo(run.consolePath).dir().filePath(QStringLiteral("console.node"))),
                QByteArray::number(before.size()) + " 0 1\n");
        const QList<MetricPoint> loss = store.metrics(id, QStringLiteral("loss"));
        QCOMPARE(loss.size(), 8);
        for (int i = 0; i < 8; ++i) {
            QCOMPARE(loss[i].step, qint64(i + 1));
            QCOMPARE(loss[i].value, i + 1.5);
        }
        const QList<RunNotice> notices = store.notices(id);
        QCOMPARE(notices.size(), qsizetype(1));
        QCOMPARE(notices.front().text,
                QStringLiteral("its console was truncated on node local (at %1 bytes, now 0); it is followed from its "
                               "new start, whose output is recorded after the %1 bytes kept here")
                        .arg(before.size()));
    }

private Q_SLOTS:
    // Every state change of every run in these tests stays inside the
    // lifecycle's table (core/runs/RunLifecycle.h).
    void init() { QTest::failOnWarning(QRegularExpression(QStringLiteral("unexpected transition"))); }

    void consoleTruncatedOnTheNodeIsFollowed()
    {
        // `: > console.log` on the node (to free disk) while the run goes on:
        // the output written after it still arrives live and is stored after
        // what the local copy had (tail -F), with a notice and a warning.
        const QString go = m_dir.filePath(QStringLiteral("truncated-live.go"));
        // The run waits for `go`: let it end also when a check fails.
        const auto release = qScopeGuard([&go] { (void)QFile(go).open(QIODevice::WriteOnly); });
        const QByteArray before = twoPartOutput(1, 5);
        const QByteArray after = twoPartOutput(6, 8);
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        QSignalSpy console(engine.get(), &RunEngine::consoleReceived);
        const auto id = engine->submit(twoPartSpec(go));
        QVERIFY(id);
        QTRY_VERIFY_WITH_TIMEOUT(
                !(*store)->run(*id)->consolePath.isEmpty() && test::readFile((*store)->run(*id)->consolePath) == before,
                10000);
        QTest::ignoreMessage(QtWarningMsg,
                qPrintable(QStringLiteral("console of run %1 on node local was truncated on the "
                                          "node (at %2 bytes, now 0); following it from its new start")
                                   .arg(*id)
                                   .arg(before.size())));
        QVERIFY(QFile::resize(nodeConsole(*(*store)->run(*id)), 0));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->notices(*id).size(), qsizetype(1), 5000);
        {
            QFile f(go);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        // Live: the new output arrives while the run is still going.
        QTRY_VERIFY_WITH_TIMEOUT(test::readFile((*store)->run(*id)->consolePath).size() > before.size(), 5000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Succeeded, 10000);
        verifyTruncationFollowed(**store, *id, before, after);
        // What the engine showed: local offsets, one stream without a gap.
        QByteArray shown;
        for (const QList<QVariant>& a : console) {
            QCOMPARE(a[1].toLongLong(), qint64(shown.size()));
            shown += a[2].toByteArray();
        }
        QCOMPARE(shown, before + after);
    }

    void consoleTruncatedWhileNobodyWatched()
    {
        // The node's console truncated while no engine followed it, and the
        // run wrote more after that than the copy holds: the next engine
        // asks to resume at the copy's offset, the supervisor's record of
        // the truncation tells the agent that the bytes there are new ones
        // (the file's size alone would not), and the engine fetches the new
        // content from its start after what it has.
        const QString go = m_dir.filePath(QStringLiteral("truncated-resume.go"));
        // The run waits for `go`: let it end also when a check fails.
        const auto release = qScopeGuard([&go] { (void)QFile(go).open(QIODevice::WriteOnly); });
        const QByteArray before = twoPartOutput(1, 5);
        const QByteArray after = twoPartOutput(6, 20);
        QVERIFY(after.size() > before.size());
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        RunId id = 0;
        {
            auto engine = makeEngine(store->get());
            QVERIFY(engine->acquireIngestion());
            const auto submitted = engine->submit(twoPartSpec(go, 20));
            QVERIFY(submitted);
            id = *submitted;
            QTRY_VERIFY_WITH_TIMEOUT(!(*store)->run(id)->consolePath.isEmpty()
                            && test::readFile((*store)->run(id)->consolePath) == before,
                    10000);
        } // engine gone: the run waits for `go`
        (*store)->flush();
        const RunRecord run = *(*store)->run(id);
        QVERIFY(QFile::resize(nodeConsole(run), 0));
        {
            QFile f(go);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QTRY_COMPARE_WITH_TIMEOUT(test::readFile(nodeConsole(run)), after, 5000);
        QTest::ignoreMessage(QtWarningMsg,
                qPrintable(QStringLiteral("console of run %1 on node local was truncated on the "
                                          "node (at %2 bytes, now %3); following it from its new start")
                                   .arg(id)
                                   .arg(before.size())
                                   .arg(after.size())));
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(id)->state, RunState::Succeeded, 10000);
        (*store)->flush();
        const QList<RunNotice> notices = (*store)->notices(id);
        QCOMPARE(notices.size(), qsizetype(1));
        QCOMPARE(notices.front().text,
                QStringLiteral("its console was truncated on node local (at %1 bytes, now %2); it is followed from its "
                               "new start, whose output is recorded after the %1 bytes kept here")
                        .arg(before.size())
                        .arg(after.size()));
        QCOMPARE(test::readFile(nodeConsole(run)), after);
        QCOMPARE(test::readFile(run.consolePath), before + after);
        QCOMPARE((*store)->run(id)->consoleOffset, qint64(before.size() + after.size()));
        QCOMPARE((*store)->metrics(id, QStringLiteral("loss")).size(), 20);
        QCOMPARE(test::readFile(QFileInfo(run.consolePath).dir().filePath(QStringLiteral("console.node"))),
                QByteArray::number(before.size()) + " 0 1\n");
    }

    void displayOnlyWatchAfterATruncation()
    {
        // trainyardctl logs while another process ingests: it printed the
        // local copy and asks for the rest from the copy's offset where it
        // stopped. After a truncation that is not the node's offset: the
        // watch maps it (console.node), so it shows what follows, once.
        const QString go = m_dir.filePath(QStringLiteral("truncated-watch.go"));
        // The run waits for `go`: let it end also when a check fails.
        const auto release = qScopeGuard([&go] { (void)QFile(go).open(QIODevice::WriteOnly); });
        const QByteArray before = twoPartOutput(1, 5);
        const QByteArray after = twoPartOutput(6, 8);
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto owner = makeEngine(store->get());
        QVERIFY(owner->acquireIngestion());
        const auto id = owner->submit(twoPartSpec(go));
        QVERIFY(id);
        QTRY_VERIFY_WITH_TIMEOUT(
                !(*store)->run(*id)->consolePath.isEmpty() && test::readFile((*store)->run(*id)->consolePath) == before,
                10000);
        QTest::ignoreMessage(QtWarningMsg,
                QRegularExpression(QStringLiteral("^console of run %1 on node local was truncated").arg(*id)));
        QVERIFY(QFile::resize(nodeConsole(*(*store)->run(*id)), 0));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->notices(*id).size(), qsizetype(1), 5000);
        {
            QFile f(go);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Succeeded, 10000);

        auto watcher = makeEngine(store->get());
        QVERIFY(!watcher->acquireIngestion());
        QTRY_VERIFY_WITH_TIMEOUT(watcher->nodeReady(QStringLiteral("local")), 5000);
        // From inside the new content, and from the copy's end.
        for (const qint64 printed : {qint64(before.size() + 20), qint64(before.size() + after.size())}) {
            QSignalSpy shown(watcher.get(), &RunEngine::consoleReceived);
            QSignalSpy ended(watcher.get(), &RunEngine::watchEnded);
            watcher->watch(*id, printed, false);
            QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 5000);
            QByteArray bytes;
            qint64 next = printed;
            for (const QList<QVariant>& a : shown) {
                QCOMPARE(a[1].toLongLong(), next);
                bytes += a[2].toByteArray();
                next += a[2].toByteArray().size();
            }
            QCOMPARE(bytes, QByteArray(before + after).mid(printed));
        }
        QCOMPARE((*store)->notices(*id).size(), qsizetype(1)); // the owner's; a watch records none
    }

    void runSurvivesEngineAndResumes()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        // 60 metric lines over ~3 s, with a \r progress bar between them.
        const JobSpec s = spec(QStringLiteral(
                "name: slow\n"
                "command: \"for i in $(seq 1 60); do printf 'bar %d%%\\r' $i; sleep 0.05; printf 'step=%d loss=%d.5\\n' $i $i; printf 'acc: %d\\n' $i; done\"\n"));
        RunId id = 0;
        {
            auto engine = makeEngine(store->get());
            QVERIFY(engine->acquireIngestion());
            QSignalSpy metrics(engine.get(), &RunEngine::metricsReceived);
            const auto submitted = engine->submit(s);
            QVERIFY(submitted);
            id = *submitted;
            // Live: metrics arrive while the run is going, not only at its end.
            QTRY_VERIFY_WITH_TIMEOUT(metrics.size() >= 5, 10000);
            auto run = (*store)->run(id);
            QVERIFY(run);
            QCOMPARE(run->state, RunState::Running);
        } // engine gone, agent stdin closed: the run goes on
        (*store)->flush();
        const qint64 offsetAtClose = (*store)->run(id)->consoleOffset;
        QVERIFY(offsetAtClose > 0);
        QTest::qWait(700); // output the next engine must catch up on

        auto engine = makeEngine(store->get());
        QSignalSpy states(engine.get(), &RunEngine::runStateChanged);
        QVERIFY(engine->acquireIngestion());
        QTRY_VERIFY_WITH_TIMEOUT((*store)->run(id)->state == RunState::Succeeded, 20000);
        (*store)->flush();

        const RunRecord run = *(*store)->run(id);
        const QList<MetricPoint> loss = (*store)->metrics(id, QStringLiteral("loss"));
        QCOMPARE(loss.size(), 60);
        for (int i = 0; i < 60; ++i) {
            QCOMPARE(loss[i].step, qint64(i + 1));
            QCOMPARE(loss[i].value, i + 1.5);
        }
        // A key without a step on its line sits at the console's current
        // step (the last one a line named: issue 21), also across the two
        // sessions: one step axis for both keys.
        const QList<MetricPoint> acc = (*store)->metrics(id, QStringLiteral("acc"));
        QCOMPARE(acc.size(), 60);
        for (int i = 0; i < 60; ++i) {
            QCOMPARE(acc[i].step, qint64(i + 1));
            QCOMPARE(acc[i].value, double(i + 1));
        }
        QFile copy(run.consolePath);
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QFile node(stateDir() + QStringLiteral("/runs/") + run.agentRunId + QStringLiteral("/console.log"));
        QVERIFY(node.open(QIODevice::ReadOnly));
        const QByteArray nodeBytes = node.readAll();
        QCOMPARE(copy.readAll(), nodeBytes);
        QCOMPARE(run.consoleOffset, qint64(nodeBytes.size()));
    }

    void twoInstancesNeverDoubleBookAGpu()
    {
        // Two researchers' Trainyards (two databases) share one node's agent
        // (one state dir). The node has one GPU (the recorded H200, through a
        // stand-in nvidia-smi: there is no GPU here). While A's run holds it,
        // B's GPU run waits in the queue; it starts once A's run has ended.
        StandInGpu gpu;
        QVERIFY(gpu.ok);

        const QString dbA = m_dir.filePath(QStringLiteral("a/trainyard.db"));
        const QString dbB = m_dir.filePath(QStringLiteral("b/trainyard.db"));
        const QString shared = m_dir.filePath(QStringLiteral("shared-state"));
        auto storeA = ResultStore::open(dbA);
        auto storeB = ResultStore::open(dbB);
        QVERIFY(storeA && storeB);
        RunEngine a(storeA->get(), dbA);
        RunEngine b(storeB->get(), dbB);
        a.addLocalNode(test::agentPath(), shared);
        b.addLocalNode(test::agentPath(), shared);
        QVERIFY(a.acquireIngestion());
        QVERIFY(b.acquireIngestion());

        auto holder = a.submit(spec(QStringLiteral("name: holder\ncommand: sleep 4\nresources: {gpus: 1}\n")));
        QVERIFY(holder);
        QTRY_VERIFY_WITH_TIMEOUT((*storeA)->run(*holder)->state == RunState::Running, 15000);
        QCOMPARE((*storeA)->run(*holder)->gpus, QList<int>{0});

        auto waiter = b.submit(spec(
                QStringLiteral("name: waiter\ncommand: echo \"got $CUDA_VISIBLE_DEVICES\"\nresources: {gpus: 1}\n")));
        QVERIFY(waiter);
        // Long enough for B's GPU report (with A's claim) and several passes.
        QTest::qWait(2500);
        QVERIFY2(
                (*storeB)->run(*waiter)->state == RunState::Queued, qPrintable((*storeB)->run(*waiter)->failureReason));
        QVERIFY((*storeA)->run(*holder)->state == RunState::Running);

        QTRY_VERIFY_WITH_TIMEOUT((*storeA)->run(*holder)->state == RunState::Succeeded, 15000);
        QTRY_VERIFY_WITH_TIMEOUT((*storeB)->run(*waiter)->state == RunState::Succeeded, 20000);
        const RunRecord w = *(*storeB)->run(*waiter);
        QCOMPARE(w.gpus, QList<int>{0});
        const RunRecord h = *(*storeA)->run(*holder);
        QVERIFY2(w.startedAt >= h.finishedAt.addMSecs(-50),
                qPrintable(QStringLiteral("waiter started %1, holder finished %2")
                                   .arg(w.startedAt.toString(Qt::ISODateWithMs),
                                           h.finishedAt.toString(Qt::ISODateWithMs))));
        // Each instance gave the agent its own id, kept beside its database.
        QFile idA(dbA + QStringLiteral(".instance")), idB(dbB + QStringLiteral(".instance"));
        QVERIFY(idA.open(QIODevice::ReadOnly) && idB.open(QIODevice::ReadOnly));
        QVERIFY(idA.readAll() != idB.readAll());
    }

    void fairShareCountsRecentlyEndedRuns()
    {
        // Fair share orders the queue by decayed GPU usage, which lives in
        // runs that have ended: a scheduling pass reads those that ended
        // within the usage window besides the unfinished ones. Alice used 10
        // GPU-hours ending one half-life ago (she counts 5); Bob used none.
        // Alice queues first, yet Bob gets the GPU first.
        StandInGpu gpu;
        QVERIFY(gpu.ok);
        const QString db = m_dir.filePath(QStringLiteral("fair/trainyard.db"));
        auto store = ResultStore::open(db);
        QVERIFY(store);
        const QDateTime now = QDateTime::currentDateTimeUtc();
        RunRecord past;
        past.name = QStringLiteral("alice-past");
        past.state = RunState::Succeeded;
        past.specYaml = QStringLiteral("name: alice-past\ncommand: [\"true\"]\nuser: alice\nresources: {gpus: 1}\n");
        past.gpus = {0};
        past.createdAt = now.addSecs(-11 * 3600);
        past.startedAt = past.createdAt;
        past.finishedAt = now.addSecs(-3600);
        past.exitCode = 0;
        QVERIFY((*store)->createRun(past, {}).has_value());

        // The engine's time is a test clock from now on, so that Bob's
        // submission is exactly 20 ms after Alice's without sleeping; the
        // run takes a few seconds of real time meanwhile, which the clock
        // does not see (no heartbeat or time limit matters here).
        test::TestClock clock(now.toMSecsSinceEpoch());
        RunEngine engine(store->get(), db, clock);
        engine.addLocalNode(test::agentPath(), m_dir.filePath(QStringLiteral("fair-state")));
        sched::Policy policy;
        policy.ordering = sched::Ordering::FairShare;
        policy.usageHalfLifeMs = 3600 * 1000;
        engine.setPolicy(policy);
        QVERIFY(engine.acquireIngestion());
        auto holder = engine.submit(
                spec(QStringLiteral("name: holder\ncommand: sleep 1.5\nuser: carol\nresources: {gpus: 1}\n")));
        QVERIFY(holder);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*holder)->state, RunState::Running, 15000);
        auto alice = engine.submit(
                spec(QStringLiteral("name: alice\ncommand: sleep 0.2\nuser: alice\nresources: {gpus: 1}\n")));
        clock.advance(20); // a later submission time for Bob: FCFS would start Alice first
        auto bob = engine.submit(
                spec(QStringLiteral("name: bob\ncommand: sleep 0.2\nuser: bob\nresources: {gpus: 1}\n")));
        QVERIFY(alice && bob);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*alice)->state, RunState::Succeeded, 20000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*bob)->state, RunState::Succeeded, 20000);
        const RunRecord a = *(*store)->run(*alice);
        const RunRecord b = *(*store)->run(*bob);
        QVERIFY2(b.startedAt < a.startedAt && a.startedAt >= b.finishedAt.addMSecs(-50),
                qPrintable(
                        QStringLiteral("bob %1-%2, alice %3-%4")
                                .arg(b.startedAt.toString(Qt::ISODateWithMs), b.finishedAt.toString(Qt::ISODateWithMs),
                                        a.startedAt.toString(Qt::ISODateWithMs),
                                        a.finishedAt.toString(Qt::ISODateWithMs))));
    }

    void fairShareLearnsOfRunsEndedBetweenPasses()
    {
        // A pass reads the ended runs' usage from the engine's ledger, which
        // learns what changed since the last pass: here two runs another
        // process recorded while this engine ran. Dave's was running at the
        // first pass and ended since; Alice's was created already ended.
        // Each used 10 GPU-hours ending one half-life ago. Alice and Dave
        // queue before Bob, yet Bob, who used none, gets the GPU first.
        StandInGpu gpu;
        QVERIFY(gpu.ok);
        const QString db = m_dir.filePath(QStringLiteral("fair2/trainyard.db"));
        auto store = ResultStore::open(db);
        QVERIFY(store);
        auto other = ResultStore::open(db); // another process's handle
        QVERIFY(other);
        const QDateTime now = QDateTime::currentDateTimeUtc();
        const auto pastRun = [&](const QString& user, RunState state) {
            RunRecord r;
            r.name = user + QStringLiteral("-past");
            r.state = state;
            r.specYaml
                    = QStringLiteral("name: %1-past\ncommand: [\"true\"]\nuser: %1\nresources: {gpus: 1}\n").arg(user);
            r.node = QStringLiteral("elsewhere");
            r.gpus = {0};
            r.createdAt = now.addSecs(-11 * 3600);
            r.startedAt = r.createdAt;
            if (isTerminal(state)) {
                r.finishedAt = now.addSecs(-3600);
                r.exitCode = 0;
            }
            return r;
        };
        RunRecord dave = pastRun(QStringLiteral("dave"), RunState::Running);
        const auto daveId = (*other)->createRun(dave, {});
        QVERIFY(daveId);
        QVERIFY((*other)->flush().has_value());

        test::TestClock clock(now.toMSecsSinceEpoch()); // as in fairShareCountsRecentlyEndedRuns
        RunEngine engine(store->get(), db, clock);
        engine.addLocalNode(test::agentPath(), m_dir.filePath(QStringLiteral("fair2-state")));
        sched::Policy policy;
        policy.ordering = sched::Ordering::FairShare;
        policy.usageHalfLifeMs = 3600 * 1000;
        engine.setPolicy(policy);
        QVERIFY(engine.acquireIngestion());
        auto holder = engine.submit(
                spec(QStringLiteral("name: holder\ncommand: sleep 2\nuser: carol\nresources: {gpus: 1}\n")));
        QVERIFY(holder);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*holder)->state, RunState::Running, 15000);

        dave.id = *daveId;
        dave.state = RunState::Succeeded;
        dave.finishedAt = now.addSecs(-3600);
        dave.exitCode = 0;
        (*other)->updateRun(dave);
        QVERIFY((*other)->createRun(pastRun(QStringLiteral("alice"), RunState::Succeeded), {}).has_value());
        QVERIFY((*other)->flush().has_value());

        auto alice = engine.submit(
                spec(QStringLiteral("name: alice\ncommand: sleep 0.2\nuser: alice\nresources: {gpus: 1}\n")));
        clock.advance(20); // later submission times: FCFS would start Alice, then Dave, then Bob
        auto dave2 = engine.submit(
                spec(QStringLiteral("name: dave\ncommand: sleep 0.2\nuser: dave\nresources: {gpus: 1}\n")));
        clock.advance(20);
        auto bob = engine.submit(
                spec(QStringLiteral("name: bob\ncommand: sleep 0.2\nuser: bob\nresources: {gpus: 1}\n")));
        QVERIFY(alice && dave2 && bob);
        for (const RunId id : {*alice, *dave2, *bob})
            QTRY_COMPARE_WITH_TIMEOUT((*store)->run(id)->state, RunState::Succeeded, 20000);
        const RunRecord a = *(*store)->run(*alice);
        const RunRecord d = *(*store)->run(*dave2);
        const RunRecord b = *(*store)->run(*bob);
        QVERIFY2(b.startedAt < a.startedAt && b.startedAt < d.startedAt,
                qPrintable(
                        QStringLiteral("bob %1, alice %2, dave %3")
                                .arg(b.startedAt.toString(Qt::ISODateWithMs), a.startedAt.toString(Qt::ISODateWithMs),
                                        d.startedAt.toString(Qt::ISODateWithMs))));
    }

    void ingestionIsTakenOverWhenItsOwnerEnds()
    {
        // Three trainyardctl submits at once: the first owns ingestion and
        // ends once its run started; the others' runs wait in the queue. One
        // of them must take ingestion over and start them, not wait forever.
        const QString db = m_dir.filePath(QStringLiteral("takeover/trainyard.db"));
        auto store = ResultStore::open(db);
        QVERIFY(store);
        auto owner = std::make_unique<RunEngine>(store->get(), db);
        QVERIFY(owner->acquireIngestion());
        RunEngine waiting(store->get(), db);
        waiting.addLocalNode(test::agentPath(), m_dir.filePath(QStringLiteral("takeover-state")));
        QVERIFY(!waiting.acquireIngestion());
        const auto id = waiting.submit(spec(QStringLiteral("name: queued-behind\ncommand: \"true\"\n")));
        QVERIFY(id);
        QTest::qWait(1500); // nobody schedules while the owner lives (it has no node)
        QCOMPARE((*store)->run(*id)->state, RunState::Queued);
        owner.reset();
        QTRY_VERIFY_WITH_TIMEOUT(waiting.ownsIngestion(), 5000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Succeeded, 15000);
    }

    void startWhoseReplyWasLostIsResolvedFromTheAgentsList()
    {
        // Issue 20: the connection ends after the start request went out and
        // before its reply came. The agent ran it, so the run is unknown (not
        // failed) until the agent's list says what happened; then it is
        // ingested like any other: start time, console, exit status.
        const QString db = m_dir.filePath(QStringLiteral("cut/trainyard.db"));
        const QString state = m_dir.filePath(QStringLiteral("cut-state"));
        auto store = ResultStore::open(db);
        QVERIFY(store);
        RunEngine engine(store->get(), db);
        engine.setReconnectDelays(1500, 1500); // long enough to see it unknown first
        auto transport = std::make_unique<CutAfterStartTransport>(test::agentPath(), state);
        const CutAfterStartTransport* cut = transport.get();
        engine.addNode(QStringLiteral("local"), std::move(transport));
        QVERIFY(engine.acquireIngestion());
        QList<RunState> seen;
        connect(&engine, &RunEngine::runStateChanged, this, [&seen](const RunRecord& r) { seen.append(r.state); });
        const auto id = engine.submit(
                spec(QStringLiteral("name: cut\ncommand: \"echo before; sleep 0.3; echo loss=0.25\"\n")));
        QVERIFY(id);
        QTRY_VERIFY_WITH_TIMEOUT(cut->cutDone(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Unknown, 5000);
        QVERIFY2(
                (*store)->run(*id)->failureReason.contains(QStringLiteral("reply to its start on node local was lost")),
                qPrintable((*store)->run(*id)->failureReason));
        QVERIFY(!engine.startsPending());
        // The node answers again: its list has the run, which is ingested.
        QTRY_VERIFY_WITH_TIMEOUT(isTerminal((*store)->run(*id)->state), 15000);
        (*store)->flush();
        const RunRecord run = *(*store)->run(*id);
        QCOMPARE(runStateName(run.state), QStringLiteral("succeeded"));
        QCOMPARE(run.exitCode, std::optional<int>(0));
        QCOMPARE(run.failureReason, QString());
        QVERIFY(run.startedAt.isValid() && run.finishedAt.isValid() && run.startedAt <= run.finishedAt);
        QFile copy(run.consolePath);
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QCOMPARE(copy.readAll(), QByteArray("before\nloss=0.25\n"));
        QCOMPARE((*store)->metrics(*id, QStringLiteral("loss")).size(), qsizetype(1));
        QVERIFY(!seen.contains(RunState::Failed));
    }

    void settledStartsAreForgotten()
    {
        // The engine remembers each start until a scheduling pass sees its
        // outcome in the database. Passes read only unfinished runs, so runs
        // that ended before the next pass (short ones, failed starts) must be
        // let go too, or the engine holds one record per run it ever started.
        const QString db = m_dir.filePath(QStringLiteral("settle/trainyard.db"));
        auto store = ResultStore::open(db);
        QVERIFY(store);
        RunEngine engine(store->get(), db);
        engine.addLocalNode(test::agentPath(), m_dir.filePath(QStringLiteral("settle-state")));
        QVERIFY(engine.acquireIngestion());
        QList<RunId> ids;
        for (int i = 0; i < 4; ++i) {
            auto id = engine.submit(spec(QStringLiteral("command: [\"true\"]\n")));
            QVERIFY(id);
            ids << *id;
        }
        JobSpec missing = spec(QStringLiteral("command: [\"true\"]\n"));
        missing.workdir = m_dir.filePath(QStringLiteral("no/such/dir"));
        auto failing = engine.submit(missing);
        QVERIFY(failing);
        ids << *failing;
        for (RunId id : std::as_const(ids))
            QTRY_VERIFY_WITH_TIMEOUT(isTerminal((*store)->run(id)->state), 15000);
        QCOMPARE((*store)->run(*failing)->state, RunState::Failed);
        engine.setPolicy(sched::Policy{}); // one more pass, after every run ended
        QTRY_COMPARE_WITH_TIMEOUT(engine.startsInFlight(), qsizetype(0), 5000);
    }

    void stderrLinesAreMarkedInTheLocalCopy()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        RunId id = 0;
        {
            auto engine = makeEngine(store->get());
            QVERIFY(engine->acquireIngestion());
            auto submitted = engine->submit(
                    spec(QStringLiteral("command: \"echo out1; echo err1 >&2; sleep 0.05; echo out2\"\n")));
            QVERIFY(submitted);
            id = *submitted;
            QTRY_COMPARE_WITH_TIMEOUT((*store)->run(id)->state, RunState::Succeeded, 20000);
        }
        const RunRecord run = *(*store)->run(id);
        QFile copy(run.consolePath);
        QVERIFY(copy.open(QIODevice::ReadOnly));
        const QByteArray bytes = copy.readAll();
        QCOMPARE(bytes, QByteArray("out1\nerr1\nout2\n"));
        // The local copy keeps the node's stderr ranges beside it...
        QFile sidecarFile(StderrSidecar::pathFor(run.consolePath));
        QVERIFY(sidecarFile.open(QIODevice::ReadOnly));
        QCOMPARE(sidecarFile.readAll(), QByteArray("5 5\n"));
        // ...so a reopened run still knows which of its lines came from stderr.
        StderrSidecar sidecar(StderrSidecar::pathFor(run.consolePath));
        sidecar.refresh();
        TerminalRenderer renderer;
        renderer.feed(bytes);
        renderer.finish();
        QList<ConsoleLine> lines = renderer.takeCommitted();
        markStderrLines(lines, 0, bytes.size(), sidecar.ranges());
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines[1].text, QStringLiteral("err1"));
        QCOMPARE((QList<bool>{lines[0].fromStderr, lines[1].fromStderr, lines[2].fromStderr}),
                (QList<bool>{false, true, false}));
    }

    void runEndedWhileNobodyWatched()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        RunId id = 0;
        {
            auto engine = makeEngine(store->get());
            QVERIFY(engine->acquireIngestion());
            auto submitted = engine->submit(spec(QStringLiteral("command: \"sleep 0.5; echo acc=0.25; exit 4\"\n")));
            QVERIFY(submitted);
            id = *submitted;
            QTRY_COMPARE_WITH_TIMEOUT((*store)->run(id)->state, RunState::Running, 10000);
        }
        QTest::qWait(1200); // it ends while no engine exists
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(id)->state, RunState::Failed, 10000);
        const RunRecord run = *(*store)->run(id);
        QCOMPARE(run.exitCode, std::optional<int>(4));
        QCOMPARE(run.failureReason, QStringLiteral("exit code 4"));
        QCOMPARE((*store)->metrics(id, QStringLiteral("acc")).size(), 1);
    }

    void secondProcessDoesNotIngest()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto owner = makeEngine(store->get());
        QVERIFY(owner->acquireIngestion());
        auto other = makeEngine(store->get());
        QVERIFY(!other->acquireIngestion());
        // A run submitted through the non-owner is started by the owner.
        auto id = other->submit(spec(QStringLiteral("command: \"echo x=1; echo x=2\"\n")));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Succeeded, 10000);
        QCOMPARE((*store)->metrics(*id, QStringLiteral("x")).size(), 2);
    }

    void cancelQueuedAndRunning()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        auto id = engine->submit(spec(QStringLiteral("command: [sleep, '60']\n")));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Running, 10000);
        engine->cancel(*id, 1000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Cancelled, 10000);
        QCOMPARE((*store)->run(*id)->exitSignal, std::optional<int>(15));
    }

    // A run's child that calls setsid() and forks again (a daemon) is no
    // longer in the run's process group: cancel must end it too (the
    // supervisor is its subreaper), even when it ignores SIGTERM.
    void cancelEndsWhatLeftTheProcessGroup()
    {
        const QString w = m_dir.filePath(QStringLiteral("daemonproj"));
        test::writeFile(w + QStringLiteral("/daemon.py"), kDaemonScript);
        auto parsed = parseJobSpec(QStringLiteral("command: [/usr/bin/python3, daemon.py, ignore-term, stay]\n"),
                QStringLiteral("t.yaml"), w);
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().message));
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        const auto id = engine->submit(*parsed);
        QVERIFY(id);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(w + QStringLiteral("/daemon.pid")), 15000);
        const pid_t daemon = pid_t(test::readFile(w + QStringLiteral("/daemon.pid")).trimmed().toLong());
        QVERIFY(daemon > 1);
        QVERIFY(processRunning(daemon));
        const RunRecord running = *(*store)->run(*id);
        QCOMPARE(running.state, RunState::Running);
        QVERIFY(::getpgid(daemon) == ::getsid(daemon)); // its own session and group: out of the run's
        engine->cancel(*id, 1000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Cancelled, 20000);
        // Ended before the run counts as over: nothing of it is left.
        QVERIFY2(!processRunning(daemon), qPrintable(QStringLiteral("pid %1 survived the cancel").arg(daemon)));
    }

    // A run whose main process exits 0 but left a daemon: the daemon is ended
    // (as Slurm and systemd end what a job left) and the run still succeeded.
    void daemonLeftByASucceededRunIsEnded()
    {
        const QString w = m_dir.filePath(QStringLiteral("daemonproj2"));
        test::writeFile(w + QStringLiteral("/daemon.py"), kDaemonScript);
        auto parsed = parseJobSpec(QStringLiteral("command: [/usr/bin/python3, daemon.py, obey-term, exit]\n"),
                QStringLiteral("t.yaml"), w);
        QVERIFY(parsed);
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        const RunRecord run = runToEnd(*engine, **store, *parsed);
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        QCOMPARE(run.exitCode, std::optional<int>(0));
        const pid_t daemon = pid_t(test::readFile(w + QStringLiteral("/daemon.pid")).trimmed().toLong());
        QVERIFY(daemon > 1);
        QVERIFY2(!processRunning(daemon), qPrintable(QStringLiteral("pid %1 outlived its run").arg(daemon)));
    }

    void tooManyGpusFailsClearly()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        auto id = engine->submit(spec(QStringLiteral("command: [true]\nresources: {gpus: 64}\n")));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Failed, 10000);
        QCOMPARE((*store)->run(*id)->failureReason,
                QStringLiteral(
                        "cannot start: needs 64 GPUs; no reachable node could ever hold it (best node local has 0 usable GPUs)"));
        QCOMPARE((*store)->run(*id)->failureKind, FailureKind::Unschedulable);
    }

    // Issue #22: every real way a run ends is recorded with its kind and a
    // one-line detail, through the real agent and the store.
    void failureKindsOfRealEnds()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        const auto ended = [&](const char* yaml) { return runToEnd(*engine, **store, spec(QString::fromUtf8(yaml))); };

        RunRecord r = ended("command: [/bin/sh, -c, 'echo loss=0.5; exit 3']\n");
        QCOMPARE(r.state, RunState::Failed);
        QCOMPARE(r.failureKind, FailureKind::ExitCode);
        QCOMPARE(r.failureReason, QStringLiteral("exit code 3"));

        r = ended("command: [/bin/sh, -c, 'kill -USR1 $$']\n");
        QCOMPARE(r.state, RunState::Failed);
        QCOMPARE(r.exitSignal, std::optional<int>(10));
        QCOMPARE(r.failureKind, FailureKind::Signal);
        QCOMPARE(r.failureReason, QStringLiteral("killed by SIGUSR1 (signal 10)"));

        r = ended("command: [/usr/bin/python3, -c, \"raise ValueError('x')\"]\n");
        QCOMPARE(r.state, RunState::Failed);
        QCOMPARE(r.exitCode, std::optional<int>(1));
        QCOMPARE(r.failureKind, FailureKind::PythonTraceback);
        QCOMPARE(r.failureReason, QStringLiteral("ValueError: x"));

        // The engine stops it at its time limit (SIGTERM, like a cancel).
        QElapsedTimer clock;
        clock.start();
        r = ended("command: [sleep, '60']\ntime_limit: 1s\n");
        QCOMPARE(r.state, RunState::Failed);
        QCOMPARE(r.failureKind, FailureKind::TimeLimit);
        QCOMPARE(r.failureReason, QStringLiteral("stopped at its time limit of 1s"));
        QCOMPARE(r.exitSignal, std::optional<int>(15));
        QVERIFY2(clock.elapsed() < 15000, qPrintable(QString::number(clock.elapsed())));

        const auto id = engine->submit(spec(QStringLiteral("command: [sleep, '60']\n")));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Running, 10000);
        engine->cancel(*id, 1000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Cancelled, 10000);
        QCOMPARE((*store)->run(*id)->failureKind, FailureKind::Cancelled);
        QCOMPARE((*store)->run(*id)->failureReason, QStringLiteral("cancelled"));

        // Held in the queue: why it waits is its pending reason, not a failure; cancelled there, it has both apart.
        const auto held = engine->submit(spec(QStringLiteral("command: [true]\nresources: {gpus: 64}\n")));
        QVERIFY(held);
        QVERIFY(engine->hold(*held));
        QCOMPARE((*store)->run(*held)->pendingReason, QStringLiteral("held by user"));
        QCOMPARE((*store)->run(*held)->failureKind, FailureKind::None);
        QCOMPARE((*store)->run(*held)->failureReason, QString());
        engine->cancel(*held);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*held)->state, RunState::Cancelled, 10000);
        QCOMPARE((*store)->run(*held)->failureKind, FailureKind::Cancelled);
        QCOMPARE((*store)->run(*held)->failureReason, QStringLiteral("cancelled before it started"));
        QCOMPARE((*store)->run(*held)->pendingReason, QString());
    }

    void sweepRunsOneAtATime()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        const auto ids = engine->submitAll(spec(QStringLiteral(
                "name: sw\ncommand: \"sleep 0.4; echo v={{x}}\"\nsweep: {x: [1, 2, 3]}\nmax_concurrent: 1\n")));
        QVERIFY(ids);
        QCOMPARE(ids->size(), 3);
        for (RunId id : *ids)
            QTRY_COMPARE_WITH_TIMEOUT((*store)->run(id)->state, RunState::Succeeded, 20000);
        QList<RunRecord> runs;
        for (RunId id : *ids)
            runs.append(*(*store)->run(id));
        QCOMPARE(runs[0].name, QStringLiteral("sw[x=1]"));
        QCOMPARE(runs[2].name, QStringLiteral("sw[x=3]"));
        // One sweep group, its runs at their combination's position.
        const RunGroupId sweep = groupIdOf(runs[0], RunGroupKind::Sweep);
        QVERIFY(sweep > 0);
        QCOMPARE((*store)->group(sweep)->name, QStringLiteral("sw"));
        QCOMPARE((*store)->group(sweep)->runs, 3);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(runs[i].tags, QStringList());
            QCOMPARE(runs[i].groups,
                    (QList<RunGroupMembership>{{sweep, RunGroupKind::Sweep, i, QStringLiteral("x=%1").arg(i + 1)}}));
            QCOMPARE((*store)->params(runs[i].id).value(QStringLiteral("x")), QString::number(i + 1));
            const auto v = (*store)->metrics(runs[i].id, QStringLiteral("v"));
            QCOMPARE(v.size(), 1);
            QCOMPARE(v.front().value, double(i + 1));
        }
        // max_concurrent: 1 -- no two of them ever ran at the same time.
        std::sort(runs.begin(), runs.end(),
                [](const RunRecord& a, const RunRecord& b) { return a.startedAt < b.startedAt; });
        for (int i = 1; i < 3; ++i)
            QVERIFY2(runs[i].startedAt >= runs[i - 1].finishedAt.addMSecs(-20),
                    qPrintable(runs[i].startedAt.toString(Qt::ISODateWithMs) + u' '
                            + runs[i - 1].finishedAt.toString(Qt::ISODateWithMs)));
    }

    void avoidedNodeIsNeverUsed()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        auto id = engine->submit(spec(QStringLiteral("command: [true]\navoid_nodes: [local]\n")));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Failed, 10000);
        QVERIFY2((*store)->run(*id)->failureReason.startsWith(QStringLiteral("cannot start")),
                qPrintable((*store)->run(*id)->failureReason));
        QVERIFY(!(*store)->run(*id)->startedAt.isValid());
    }

    void queueOperations()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        const int cpus = QThread::idealThreadCount();
        const auto busy = [&](const char* seconds) {
            return spec(QStringLiteral("command: [sleep, '%1']\nresources: {cpus: %2}\n")
                                .arg(QLatin1String(seconds))
                                .arg(cpus));
        };
        auto a = engine->submit(busy("1.2"));
        QVERIFY(a);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*a)->state, RunState::Running, 10000);
        auto b = engine->submit(busy("0.2"));
        auto c = engine->submit(busy("0.2"));
        QVERIFY(b && c);

        QVERIFY(engine->hold(*b));
        QCOMPARE((*store)->run(*b)->state, RunState::Held);
        const auto heldRunning = engine->hold(*a);
        QVERIFY(!heldRunning);
        QCOMPARE(heldRunning.error().message, QStringLiteral("run %1 is running, not waiting in the queue").arg(*a));
        QTRY_COMPARE_WITH_TIMEOUT(engine->pendingReasons().value(*b), QStringLiteral("held by user"), 5000);

        // Released, b is ahead of c again by submission; moving c to the top
        // puts it first.
        QVERIFY(engine->release(*b));
        QVERIFY(engine->moveToTop(*c));
        QVERIFY((*store)->run(*c)->priority > (*store)->run(*b)->priority);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*b)->state, RunState::Succeeded, 15000);
        QCOMPARE((*store)->run(*c)->state, RunState::Succeeded);
        QVERIFY((*store)->run(*c)->startedAt < (*store)->run(*b)->startedAt);

        // A held run is never started; cancelling it ends it. (This thread is
        // the engine's, so no pass can run between submit and hold.)
        auto d = engine->submit(spec(QStringLiteral("command: [true]\n")));
        QVERIFY(d);
        QVERIFY(engine->hold(*d));
        QTest::qWait(800);
        QCOMPARE((*store)->run(*d)->state, RunState::Held);
        engine->cancel(*d);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*d)->state, RunState::Cancelled, 5000);
    }

    void policyFileIsFollowed()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        QTRY_VERIFY_WITH_TIMEOUT(engine->nodeReady(QStringLiteral("local")), 5000);
        engine->submit(spec(QStringLiteral("command: [true]\n")));
        QTRY_COMPARE_WITH_TIMEOUT(engine->policy().ordering, sched::Ordering::Priority, 3000); // the default
        QVERIFY(engine->policy().backfill);
        QTest::qWait(1100); // file times have 1 s resolution on some file systems
        // Another process (trainyardctl policy fcfs) switches it.
        QVERIFY(saveQueuePolicy(dbPath(), *queuePolicyNamed(QStringLiteral("fcfs"))));
        QTRY_COMPARE_WITH_TIMEOUT(engine->policy().ordering, sched::Ordering::Fcfs, 3000);
        QVERIFY(!engine->policy().backfill);
        QFile::remove(queuePolicyPath(dbPath()));
    }

    void perQueuePolicies()
    {
        // The default queue backfills; queue "strict" is plain FCFS, so there
        // a run that would fit waits behind its head.
        QueuePolicies policies{defaultQueuePolicy(), {}};
        policies.queues.insert(QStringLiteral("strict"), *queuePolicyNamed(QStringLiteral("fcfs")));
        QVERIFY(saveQueuePolicies(dbPath(), policies));
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        const int cpus = QThread::idealThreadCount();
        auto a = engine->submit(spec(QStringLiteral("command: [sleep, '1.5']\nresources: {cpus: %1}\n").arg(cpus)));
        QVERIFY(a);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*a)->state, RunState::Running, 10000);
        auto b = engine->submit(
                spec(QStringLiteral("command: [true]\nqueue: strict\nresources: {cpus: %1}\n").arg(cpus)));
        auto c = engine->submit(spec(QStringLiteral("command: [true]\nqueue: strict\n")));
        auto d = engine->submit(spec(QStringLiteral("command: [true]\n"))); // default queue: starts at once
        QVERIFY(b && c && d);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*d)->state, RunState::Succeeded, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(engine->pendingReasons().contains(*c), 5000);
        QCOMPARE(engine->pendingReasons().value(*c), QStringLiteral("waiting for FCFS head run %1").arg(*b));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*c)->state, RunState::Succeeded, 15000);
        // c did not jump the queue: it started with its head (c needs no
        // CPUs, so the pass that places b places c too) or after it, never
        // while a (1.5 s) still held b back. Starts of one pass overlap on
        // the node (the agent does not wait for one supervisor before the
        // next), so their started_ms may differ by a few ms either way.
        const qint64 bStart = (*store)->run(*b)->startedAt.toMSecsSinceEpoch();
        const qint64 cStart = (*store)->run(*c)->startedAt.toMSecsSinceEpoch();
        QVERIFY2(cStart >= bStart - 100, qPrintable(QStringLiteral("c started %1 ms before b").arg(bStart - cStart)));
        QFile::remove(queuePolicyPath(dbPath()));
    }

    void queuedRunWaitsWithReason()
    {
        // Two runs that each need every CPU of this machine: the second waits,
        // says why, and starts when the first ends.
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        QSignalSpy reasons(engine.get(), &RunEngine::pendingReasonsChanged);
        const int cpus = QThread::idealThreadCount();
        const QString yaml = QStringLiteral("command: [sleep, '1.5']\nresources: {cpus: %1}\n").arg(cpus);
        // The first says it takes 90 minutes (it does not): the second's
        // estimated start is the first's start plus that.
        auto first = engine->submit(spec(yaml + QStringLiteral("estimated_runtime: 90m\n")));
        QVERIFY(first);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*first)->state, RunState::Running, 10000);
        auto second = engine->submit(spec(yaml));
        QVERIFY(second);
        QTRY_VERIFY_WITH_TIMEOUT(engine->pendingReasons().contains(*second), 5000);
        const QString eta = (*store)->run(*first)->startedAt.addSecs(90 * 60).toLocalTime().toString(
                QStringLiteral("yyyy-MM-dd HH:mm"));
        QCOMPARE(engine->pendingReasons().value(*second),
                QStringLiteral("waiting: needs %1 CPUs; best node local has 0 of %1 CPUs free; estimated start ~%2")
                        .arg(cpus)
                        .arg(eta));
        QCOMPARE((*store)->run(*second)->state, RunState::Queued);
        (*store)->flush();
        QCOMPARE((*store)->run(*second)->pendingReason, engine->pendingReasons().value(*second));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*second)->state, RunState::Succeeded, 15000);
        QVERIFY((*store)->run(*second)->startedAt >= (*store)->run(*first)->finishedAt.addMSecs(-50));
        QVERIFY(!engine->pendingReasons().contains(*second));
        QCOMPARE((*store)->run(*second)->pendingReason, QString());
    }
    void syncMakesSymlinksOnTheLocalNode()
    {
        // `sync: true` on the local node copies the workdir into the agent's
        // state dir: links go there as links with their own text (LocalNodeFiles),
        // and a link the run made is never written through by the next sync.
        const QString w = m_dir.filePath(QStringLiteral("linkproj"));
        const QString remote = syncDirFor(stateDir(), w);
        const QString shared = QFileInfo(remote).absolutePath() + QStringLiteral("/shared_data");
        const QString victim = m_dir.filePath(QStringLiteral("victim"));
        auto linkText = [](const QString& path) {
            char buf[4096];
            const ssize_t n = ::readlink(QFile::encodeName(path).constData(), buf, sizeof buf);
            return n > 0 ? QFile::decodeName(QByteArray(buf, int(n))) : QString();
        };
        QVERIFY(QDir().mkpath(victim));
        test::writeFile(shared + QStringLiteral("/hello.txt"), "shared-hello\n");
        test::writeFile(w + QStringLiteral("/checkpoints/best.pt"), "weights-v1\n");
        test::writeFile(w + QStringLiteral("/checkpoints/other.pt"), "weights-v2\n");
        QVERIFY(QFile::link(QStringLiteral("checkpoints/best.pt"), w + QStringLiteral("/model.pt")));
        QVERIFY(QFile::link(QStringLiteral("../shared_data"), w + QStringLiteral("/data")));
        auto parsed = parseJobSpec(QStringLiteral("name: links\nsync: true\ncommand: \"cat model.pt data/hello.txt; "
                                                  "[ -e made ] || ln -s '%1' made\"\n")
                                           .arg(victim),
                QStringLiteral("test.yaml"), w);
        QVERIFY2(parsed, parsed ? "" : qPrintable(parsed.error().message));

        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        RunRecord run = runToEnd(*engine, **store, *parsed);
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        QTRY_COMPARE_WITH_TIMEOUT(test::readFile(run.consolePath), QByteArray("weights-v1\nshared-hello\n"), 5000);
        QCOMPARE(linkText(remote + QStringLiteral("/model.pt")), QStringLiteral("checkpoints/best.pt"));
        QCOMPARE(linkText(remote + QStringLiteral("/data")), QStringLiteral("../shared_data"));
        QCOMPARE(linkText(remote + QStringLiteral("/made")), victim);

        // Re-sync: another target replaces the link; `made` is a folder here
        // now, so it becomes a real folder there and the victim stays empty.
        QVERIFY(QFile::remove(w + QStringLiteral("/model.pt")));
        QVERIFY(QFile::link(QStringLiteral("checkpoints/other.pt"), w + QStringLiteral("/model.pt")));
        test::writeFile(w + QStringLiteral("/made/x.txt"), "mine\n");
        run = runToEnd(*engine, **store, *parsed);
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        QTRY_COMPARE_WITH_TIMEOUT(test::readFile(run.consolePath), QByteArray("weights-v2\nshared-hello\n"), 5000);
        QCOMPARE(linkText(remote + QStringLiteral("/model.pt")), QStringLiteral("checkpoints/other.pt"));
        QVERIFY(QFileInfo(remote + QStringLiteral("/made")).isDir()
                && !QFileInfo(remote + QStringLiteral("/made")).isSymLink());
        QCOMPARE(test::readFile(remote + QStringLiteral("/made/x.txt")), QByteArray("mine\n"));
        QCOMPARE(QDir(victim).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList{});
        QCOMPARE(QDir(shared).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
                QStringList{QStringLiteral("hello.txt")});
    }

    void syncWithARelativeWorkdir()
    {
        // `workdir: wd` with `sync: true`, read from a spec file as
        // `trainyardctl submit job.yaml` does: the workdir is resolved once,
        // against the spec's folder (it was resolved again against itself:
        // "the workdir .../wd/wd is not a directory").
        const QString project = m_dir.filePath(QStringLiteral("relproj"));
        test::writeFile(project + QStringLiteral("/wd/hello.txt"), "synced-hello\n");
        test::writeFile(project + QStringLiteral("/job.yaml"),
                "name: relsync\nworkdir: wd\nsync: true\ncommand: \"cat hello.txt; pwd\"\n");
        auto parsed = parseJobSpecFile(project + QStringLiteral("/job.yaml"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().message));
        QCOMPARE(parsed->workdir, project + QStringLiteral("/wd"));

        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        const RunRecord run = runToEnd(*engine, **store, *parsed);
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        QCOMPARE(run.workdir, project + QStringLiteral("/wd"));
        const QString copy = syncDirFor(stateDir(), project + QStringLiteral("/wd"));
        QTRY_COMPARE_WITH_TIMEOUT(
                test::readFile(run.consolePath), QByteArray("synced-hello\n" + copy.toUtf8() + "\n"), 5000);
    }

    void syncRecordsDanglingLinksAsRunNotice()
    {
        // A synced symlink whose target is not on the node: the run goes on
        // (it may never use the link), the log says so as before, and the
        // run carries a notice naming the link, which a GUI user sees.
        const QString w = m_dir.filePath(QStringLiteral("danglingproj"));
        QVERIFY(QDir().mkpath(w));
        {
            QFile f(w + QStringLiteral("/train.txt"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("ok\n");
        }
        QVERIFY(QFile::link(QStringLiteral("../no_such_data"), w + QStringLiteral("/data")));
        QVERIFY(QFile::link(QStringLiteral("train.txt"), w + QStringLiteral("/fine"))); // leads somewhere: no notice
        auto parsed = parseJobSpec(
                QStringLiteral("name: dangling\nsync: true\ncommand: [cat, fine]\n"), QStringLiteral("test.yaml"), w);
        QVERIFY2(parsed, parsed ? "" : qPrintable(parsed.error().message));

        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get());
        QVERIFY(engine->acquireIngestion());
        QTest::ignoreMessage(QtWarningMsg,
                QRegularExpression(QStringLiteral(
                        "^run \\d+: sync of .*danglingproj to node local made 1 symlink\\(s\\) that lead nowhere there .*: "
                        "data -> \\.\\./no_such_data$")));
        const RunRecord run = runToEnd(*engine, **store, *parsed);
        const RunId id = run.id;
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->notices(id).size(), qsizetype(1), 5000);
        const RunNotice n = (*store)->notices(id).front();
        QCOMPARE(n.run, id);
        QVERIFY2(n.text.contains(QStringLiteral("lead nowhere")), qPrintable(n.text));
        QVERIFY2(n.text.contains(QStringLiteral("data -> ../no_such_data")), qPrintable(n.text));
        QVERIFY2(n.text.contains(QStringLiteral("node local")), qPrintable(n.text));
        QVERIFY2(!n.text.contains(QStringLiteral("fine")), qPrintable(n.text));
        QVERIFY(qAbs(n.at.secsTo(QDateTime::currentDateTimeUtc())) < 60);
        QCOMPARE(n.at.timeSpec(), Qt::UTC);
    }
};

QTEST_GUILESS_MAIN(TestRunEngine)
#include "TestRunEngine.moc"
