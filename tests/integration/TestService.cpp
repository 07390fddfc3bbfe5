// trainyardd, the per-user service (issue #22), through real processes: the
// built trainyardctl and trainyardd, the real agent and real runs.
#include "tests/support/TestSupport.h"
#include "core/service/ServiceClient.h"
#include "core/service/ServicePaths.h"
#include "core/service/ServiceProtocol.h"
#include "core/spec/JobSpec.h"
#include "core/nodes/AgentFiles.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>
#include <memory>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

using namespace ty;

using Outcome = test::ProcessOutcome;

class TestService final : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;

    QString dbPath() const { return m_dir->filePath(QStringLiteral("db/trainyard.db")); }
    QString stateDir() const { return m_dir->filePath(QStringLiteral("agent-state")); }
    QString runtimeDir() const { return m_dir->filePath(QStringLiteral("runtime")); }

    QProcessEnvironment env() const { return test::serviceEnvironment(m_dir->path(), QStringLiteral(TRAINYARDD_PATH)); }

    Outcome ctl(const QStringList& args, int timeoutMs = 60000)
    {
        return test::runProcess(QStringLiteral(TRAINYARD_CTL_PATH),
                QStringList{QStringLiteral("--db"), dbPath()} + args, env(), timeoutMs);
    }

    QString writeFile(const QString& name, const QByteArray& content)
    {
        const QString path = m_dir->filePath(name);
        QDir().mkpath(QFileInfo(path).absolutePath());
        test::writeFile(path, content);
        return path;
    }

    // The running service's pid (0: none answers).
    qint64 servicePid()
    {
        const Outcome s = ctl({QStringLiteral("daemon"), QStringLiteral("status"), QStringLiteral("--json")});
        if (s.exitCode != 0)
            return 0;
        return QJsonDocument::fromJson(s.out).object().value(QStringLiteral("pid")).toInteger();
    }

    static bool alive(qint64 pid) { return pid > 0 && ::kill(pid_t(pid), 0) == 0; }

    std::unique_ptr<ResultStore> store()
    {
        auto s = ResultStore::open(dbPath());
        return s ? std::move(*s) : nullptr;
    }

    // Every run ended (read from the database, as a client would).
    bool allEnded(int expected)
    {
        auto s = store();
        if (!s)
            return false;
        const QList<RunRecord> runs = s->runs();
        return runs.size() == expected
                && std::all_of(runs.cbegin(), runs.cend(), [](const RunRecord& r) { return isTerminal(r.state); });
    }

    // A spec that needs every CPU of this machine, so that its runs queue
    // behind each other on the local node.
    static QByteArray allCpus()
    {
        return "resources: {cpus: " + QByteArray::number(QThread::idealThreadCount()) + "}\n";
    }

private Q_SLOTS:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        // A runtime folder of the test's own: the socket's folder is never
        // shared with other tests' services (one test opens its mode).
        QVERIFY(QDir().mkpath(runtimeDir()));
        qputenv("XDG_RUNTIME_DIR", QFile::encodeName(runtimeDir()));
    }

    void cleanup()
    {
        ctl({QStringLiteral("daemon"), QStringLiteral("stop")});
        m_dir.reset();
        qunsetenv("XDG_RUNTIME_DIR");
    }

    // hold / release / priority / top go to the service, whose engine
    // schedules with them: the ctl starts a stopped service for them, the
    // runs start in the order they set, a held run waits until released,
    // and the `queue` op's errors come back with their kind.
    void queueOpsGoThroughTheService()
    {
        const QString stop = m_dir->filePath(QStringLiteral("blocker.stop"));
        const QString blocker = writeFile(QStringLiteral("blocker.yaml"),
                QStringLiteral(
                        "name: blocker\ncommand: \"for i in $(seq 600); do [ -e %1 ] && break; sleep 0.1; done\"\n")
                                .arg(stop)
                                .toUtf8()
                        + allCpus());
        QVERIFY(ctl({QStringLiteral("submit"), blocker}).out.contains("running"));
        const QString queued = writeFile(QStringLiteral("queued.yaml"), "name: q\ncommand: \"true\"\n" + allCpus());
        QList<RunId> ids; // a, b, c, d in submit order
        for (int i = 0; i < 4; ++i)
            QCOMPARE(ctl({QStringLiteral("submit"), queued}).exitCode, 0);
        {
            auto s = store();
            QVERIFY(s);
            for (const RunRecord& r : s->runs())
                if (r.state == RunState::Queued)
                    ids.append(r.id);
        }
        std::sort(ids.begin(), ids.end());
        QCOMPARE(ids.size(), 4);
        // No service now: `hold` starts one (the old code wrote the database itself).
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("stop")}).exitCode, 0);
        QCOMPARE(servicePid(), 0);
        const Outcome held = ctl({QStringLiteral("hold"), QString::number(ids[0])});
        QVERIFY2(held.exitCode == 0, held.err.constData());
        QCOMPARE(held.out.trimmed(), QByteArray("run " + QByteArray::number(ids[0]) + " held, priority 0"));
        const qint64 pid = servicePid();
        QVERIFY(pid > 0);
        QCOMPARE(ctl({QStringLiteral("priority"), QString::number(ids[2]), QStringLiteral("5")}).out.trimmed(),
                QByteArray("run " + QByteArray::number(ids[2]) + " queued, priority 5"));
        QCOMPARE(ctl({QStringLiteral("top"), QString::number(ids[3])}).exitCode, 0);
        QCOMPARE(servicePid(), pid); // the same service answered them all
        // Errors, with their kind, through the op and through the ctl.
        {
            auto svc = service::ServiceClient::connectTo(dbPath(), service::ServiceClient::Start::Never);
            QVERIFY(svc);
            const auto noRun = (*svc)->call(QStringLiteral("queue"),
                    {{QStringLiteral("run"), 999999}, {QStringLiteral("action"), QStringLiteral("hold")}});
            QVERIFY(!noRun);
            QCOMPARE(noRun.error().kind, ErrorKind::NotFound);
            QCOMPARE(noRun.error().message, QStringLiteral("no run 999999"));
            const auto badPriority = (*svc)->call(QStringLiteral("queue"),
                    {{QStringLiteral("run"), ids[1]}, {QStringLiteral("action"), QStringLiteral("priority")},
                            {QStringLiteral("priority"), 1.5}});
            QVERIFY(!badPriority);
            QCOMPARE(badPriority.error().kind, ErrorKind::InvalidInput);
            QCOMPARE(badPriority.error().message, QStringLiteral("priority must be an integer"));
            const auto badAction = (*svc)->call(QStringLiteral("queue"),
                    {{QStringLiteral("run"), ids[1]}, {QStringLiteral("action"), QStringLiteral("sink")}});
            QVERIFY(!badAction);
            QCOMPARE(badAction.error().kind, ErrorKind::InvalidInput);
        }
        const Outcome notWaiting = ctl({QStringLiteral("hold"), QStringLiteral("blocker")}); // running, not waiting
        QCOMPARE(notWaiting.exitCode, 2);
        QVERIFY2(notWaiting.err.contains("is running, not waiting in the queue"), notWaiting.err.constData());
        QVERIFY(ctl({QStringLiteral("priority"), QString::number(ids[1]), QStringLiteral("x")}).exitCode != 0);
        // Free the node: d (top), c (priority 5), b run, one after another; a waits.
        test::writeFile(stop, "");
        const auto ended = [&](RunId id) {
            auto s = store();
            if (!s)
                return false;
            const auto r = s->run(id);
            return r && isTerminal(r->state);
        };
        QTRY_VERIFY_WITH_TIMEOUT(ended(ids[1]) && ended(ids[2]) && ended(ids[3]), 60000);
        {
            auto s = store();
            QVERIFY(s);
            const auto a = s->run(ids[0]), b = s->run(ids[1]), c = s->run(ids[2]), d = s->run(ids[3]);
            QCOMPARE(a->state, RunState::Held);
            QCOMPARE(b->state, RunState::Succeeded);
            QVERIFY2(d->startedAt < c->startedAt && c->startedAt < b->startedAt,
                    qPrintable(QStringLiteral("d %1 c %2 b %3")
                                       .arg(d->startedAt.toString(Qt::ISODateWithMs),
                                               c->startedAt.toString(Qt::ISODateWithMs),
                                               b->startedAt.toString(Qt::ISODateWithMs))));
        }
        QCOMPARE(ctl({QStringLiteral("release"), QString::number(ids[0])}).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(ended(ids[0]), 30000);
    }

    // rename / tag / note / archive are written by the service (started for
    // them when not running) and read back by `show --json`; its `annotate`
    // op's errors come with their kind.
    void annotateGoesThroughTheService()
    {
        const QString spec = writeFile(QStringLiteral("done.yaml"), "name: done\ncommand: \"true\"\n");
        QCOMPARE(ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")}).exitCode, 0);
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("stop")}).exitCode, 0);
        QCOMPARE(servicePid(), 0);
        const Outcome rn = ctl({QStringLiteral("rename"), QStringLiteral("done"), QStringLiteral("  best  ")});
        QVERIFY2(rn.exitCode == 0, rn.err.constData());
        const qint64 pid = servicePid();
        QVERIFY(pid > 0); // the old ctl wrote the database itself and started none
        QCOMPARE(ctl({QStringLiteral("tag"), QStringLiteral("best"), QStringLiteral("+keep"), QStringLiteral("lr")})
                         .out.trimmed(),
                QByteArray("run 1 tags: keep lr"));
        QCOMPARE(ctl({QStringLiteral("note"), QStringLiteral("best"), QStringLiteral("lower lr wins")}).exitCode, 0);
        QCOMPARE(ctl({QStringLiteral("archive"), QStringLiteral("best")}).exitCode, 0);
        QCOMPARE(servicePid(), pid);
        const Outcome show = ctl({QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--json")});
        QCOMPARE(show.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(show.out).object();
        QCOMPARE(o.value(QStringLiteral("name")).toString(), QStringLiteral("best"));
        QCOMPARE(o.value(QStringLiteral("tags")).toArray(), QJsonArray({QStringLiteral("keep"), QStringLiteral("lr")}));
        QCOMPARE(o.value(QStringLiteral("notes")).toString(), QStringLiteral("lower lr wins"));
        QCOMPARE(o.value(QStringLiteral("archived")).toBool(), true);

        auto svc = service::ServiceClient::connectTo(dbPath(), service::ServiceClient::Start::Never);
        QVERIFY(svc);
        const auto noRun = (*svc)->call(QStringLiteral("annotate"),
                {{QStringLiteral("run"), 4242}, {QStringLiteral("notes"), QStringLiteral("x")}});
        QVERIFY(!noRun);
        QCOMPARE(noRun.error().kind, ErrorKind::NotFound);
        QCOMPARE(noRun.error().message, QStringLiteral("no run 4242"));
        // delete_run names the kind too: a run that is not there (another
        // client's rm got there first) is NotFound, not invalid input.
        const auto noRunToDelete = (*svc)->call(QStringLiteral("delete_run"), {{QStringLiteral("run"), 4242}});
        QVERIFY(!noRunToDelete);
        QCOMPARE(noRunToDelete.error().kind, ErrorKind::NotFound);
        QCOMPARE(noRunToDelete.error().message, QStringLiteral("no run 4242"));
        const auto empty = (*svc)->call(QStringLiteral("annotate"),
                {{QStringLiteral("run"), 1}, {QStringLiteral("name"), QStringLiteral("  ")}});
        QVERIFY(!empty);
        QCOMPARE(empty.error().kind, ErrorKind::InvalidInput);
        QCOMPARE(empty.error().message, QStringLiteral("run 1: a run's name cannot be empty"));
        const auto badTags = (*svc)->call(QStringLiteral("annotate"),
                {{QStringLiteral("run"), 1}, {QStringLiteral("tags"), QStringLiteral("a b")}});
        QVERIFY(!badTags);
        QCOMPARE(badTags.error().kind, ErrorKind::InvalidInput);
        QCOMPARE(badTags.error().message, QStringLiteral("annotate: 'tags' must be an array of strings"));
        QCOMPARE(ctl({QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--json")}).out,
                show.out); // the refused changes changed nothing
    }

    // node rm while the service runs: the service removes it and its engine
    // drops it (the old ctl removed the record only, and the service kept
    // connecting to the node and counting it as behind); runs after it go
    // elsewhere; runs on a node refuse its removal unless forced.
    void nodeRemovedWhileTheServiceRuns()
    {
        {
            auto s = store();
            QVERIFY(s);
            // Nothing listens on port 1: the node stays unreachable.
            QVERIFY(s->addNode({QStringLiteral("gone"), QStringLiteral("127.0.0.1"), {}, 1, {},
                                       QStringLiteral("/nonexistent/trainyard-agent"), QDateTime::currentDateTimeUtc()})
                            .has_value());
        }
        const QString spec = writeFile(QStringLiteral("one.yaml"), "name: one\ncommand: \"true\"\n");
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("start")}).exitCode, 0);
        auto svc = service::ServiceClient::connectTo(dbPath(), service::ServiceClient::Start::Never);
        QVERIFY(svc);
        const auto behindNodes = [&] {
            QStringList names;
            if (const auto b = (*svc)->call(QStringLiteral("behind")))
                for (const QJsonValue& v : b->value(QStringLiteral("behind")).toArray())
                    names << v.toObject().value(QStringLiteral("node")).toString();
            return names;
        };
        QTRY_VERIFY_WITH_TIMEOUT(behindNodes().contains(QStringLiteral("gone")), 30000);
        const qint64 pid = servicePid();
        const Outcome rm = ctl({QStringLiteral("node"), QStringLiteral("rm"), QStringLiteral("gone")});
        QVERIFY2(rm.exitCode == 0, rm.err.constData());
        QCOMPARE(rm.out, QByteArray("removed node gone\n"));
        QCOMPARE(servicePid(), pid);
        QCOMPARE(behindNodes(), QStringList()); // the engine forgot it
        QTest::qWait(1500);                     // a reconnection would have been scheduled within a second
        QCOMPARE(behindNodes(), QStringList());
        const Outcome after = ctl({QStringLiteral("submit"), spec, QStringLiteral("--follow")});
        QVERIFY2(after.exitCode == 0, after.err.constData());
        {
            auto s = store();
            QVERIFY(s);
            for (const RunRecord& r : s->runs()) {
                QVERIFY(r.node != u"gone");
                QCOMPARE(r.state, RunState::Succeeded);
            }
            QVERIFY(s->nodes().isEmpty());
        }
        // Errors: gone already (the ctl and the op), "local", runs on it.
        QCOMPARE(ctl({QStringLiteral("node"), QStringLiteral("rm"), QStringLiteral("gone")}).exitCode, 4);
        const auto noNode = (*svc)->call(QStringLiteral("node_rm"), {{QStringLiteral("node"), QStringLiteral("gone")}});
        QVERIFY(!noNode);
        QCOMPARE(noNode.error().kind, ErrorKind::NotFound);
        QCOMPARE(noNode.error().message, QStringLiteral("no node named 'gone' (see trainyardctl node ls)"));
        const auto local = (*svc)->call(QStringLiteral("node_rm"), {{QStringLiteral("node"), QStringLiteral("local")}});
        QVERIFY(!local);
        QCOMPARE(local.error().kind, ErrorKind::InvalidInput);
        RunId busyRun = 0;
        {
            auto s = store();
            QVERIFY(s);
            QVERIFY(s->addNode({QStringLiteral("busy"), QStringLiteral("127.0.0.1"), {}, 1, {},
                                       QStringLiteral("/nonexistent/trainyard-agent"), QDateTime::currentDateTimeUtc()})
                            .has_value());
            const auto id = s->createRun(
                    test::runningRecord(QStringLiteral("on-busy"), QStringLiteral("busy"), QStringLiteral("ty-busy-1")),
                    {});
            QVERIFY(id);
            busyRun = *id;
        }
        const Outcome refused = ctl({QStringLiteral("node"), QStringLiteral("rm"), QStringLiteral("busy")});
        QCOMPARE(refused.exitCode, 5);
        QVERIFY2(refused.err.contains(QByteArray(
                         "node busy still has runs that have not ended: " + QByteArray::number(busyRun) + " (")),
                refused.err.constData());
        const Outcome forced = ctl(
                {QStringLiteral("node"), QStringLiteral("rm"), QStringLiteral("busy"), QStringLiteral("--force")});
        QVERIFY2(forced.exitCode == 0, forced.err.constData());
        QCOMPARE(forced.out, QByteArray("removed node busy; 1 run(s) on it recorded as failed\n"));
        auto s = store();
        QVERIFY(s);
        const auto r = s->run(busyRun);
        QVERIFY(r);
        QCOMPARE(r->state, RunState::Failed);
        QCOMPARE(r->failureKind, FailureKind::NodeLost);
        QVERIFY(!behindNodes().contains(QStringLiteral("busy")));
    }

    // What the GUI asks of the service (protocol revision 2): metric points
    // and node status by subscription, artifacts listed and copied by the
    // run's node, a node added and connected, its host key asked about, and
    // a run's whole record in its state events.
    void guiOpsGoThroughTheService()
    {
        qputenv("TRAINYARD_AGENT", test::agentPath().toUtf8());
        qputenv("TRAINYARD_AGENT_STATE", QFile::encodeName(stateDir()));
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("start")}).exitCode, 0);
        auto svc = service::ServiceClient::connectTo(dbPath(), service::ServiceClient::Start::Never);
        QVERIFY(svc);
        service::ServiceClient* c = svc->get();
        QSignalSpy nodes(c, &service::ServiceClient::nodeStatusChanged);
        QSignalSpy metrics(c, &service::ServiceClient::metricsReceived);
        QSignalSpy states(c, &service::ServiceClient::runStateChanged);
        QVERIFY((*svc)->call(QStringLiteral("subscribe"),
                {{QStringLiteral("runs"), true}, {QStringLiteral("metrics"), true}, {QStringLiteral("gpus"), true}}));
        // The local node connected before this client came: its status is told at once.
        QTRY_VERIFY_WITH_TIMEOUT(
                std::any_of(nodes.cbegin(), nodes.cend(),
                        [](const QList<QVariant>& a) { return a.at(0).toString() == u"local" && a.at(1).toBool(); }),
                10000);

        const QString workdir = m_dir->filePath(QStringLiteral("work"));
        QVERIFY(QDir().mkpath(workdir));
        auto spec = parseJobSpec(QStringLiteral("name: arts\nartifacts: ['out/*.txt']\n"
                                                "command: \"mkdir -p out; echo kept > out/a.txt; "
                                                "echo acc=0.25; echo acc=0.75\"\n"),
                QStringLiteral("<test>"), workdir);
        QVERIFY(spec);
        const auto submitted
                = (*svc)->call(QStringLiteral("submit"), {{QStringLiteral("spec"), service::submitSpecToJson(*spec)}});
        QVERIFY2(submitted, submitted ? "" : qPrintable(submitted.error().message));
        const RunId id = submitted->value(QStringLiteral("runs")).toArray().at(0).toInteger();
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(states.cbegin(), states.cend(),
                                         [id](const QList<QVariant>& a) {
                                             const auto r = a.at(0).value<RunRecord>();
                                             return r.id == id && r.state == RunState::Succeeded;
                                         }),
                20000);
        const RunRecord ended = std::find_if(states.cbegin(), states.cend(),
                [id](const QList<QVariant>& a) {
                    const auto r = a.at(0).value<RunRecord>();
                    return r.id == id && r.state == RunState::Succeeded;
                })
                                        ->at(0)
                                        .value<RunRecord>();
        QCOMPARE(ended.workdir, workdir);
        QCOMPARE(ended.specYaml, spec->yaml);
        QCOMPARE(test::readFile(ended.consolePath), QByteArray("acc=0.25\nacc=0.75\n"));
        QList<double> acc;
        for (const QList<QVariant>& a : std::as_const(metrics))
            for (const MetricPoint& p : a.at(1).value<QList<MetricPoint>>())
                if (a.at(0).value<RunId>() == id && p.key == u"acc")
                    acc << p.value;
        QCOMPARE(acc, (QList<double>{0.25, 0.75}));

        // Artifacts: listed by the node, copied into a folder of the client's.
        const auto listed = (*svc)->call(QStringLiteral("artifacts"), {{QStringLiteral("run"), id}});
        QVERIFY2(listed, listed ? "" : qPrintable(listed.error().message));
        const AgentFileList list = agentFileListFromJson(listed->value(QStringLiteral("list")).toObject());
        QCOMPARE(list.files.size(), 1);
        QCOMPARE(list.files.front().path, QStringLiteral("out/a.txt"));
        QCOMPARE(list.files.front().absolutePath, workdir + QStringLiteral("/out/a.txt"));
        const QString dest = m_dir->filePath(QStringLiteral("downloads"));
        const auto copied = (*svc)->call(
                QStringLiteral("download_artifacts"), {{QStringLiteral("run"), id}, {QStringLiteral("dest"), dest}});
        QVERIFY2(copied, copied ? "" : qPrintable(copied.error().message));
        QCOMPARE(copied->value(QStringLiteral("downloaded")).toArray().size(), 1);
        QCOMPARE(test::readFile(dest + QStringLiteral("/out/a.txt")), QByteArray("kept\n"));
        const auto relative = (*svc)->call(QStringLiteral("download_artifacts"),
                {{QStringLiteral("run"), id}, {QStringLiteral("dest"), QStringLiteral("here")}});
        QVERIFY(!relative);
        QCOMPARE(relative.error().kind, ErrorKind::InvalidInput);
        const auto noRun = (*svc)->call(QStringLiteral("artifacts"), {{QStringLiteral("run"), 9999}});
        QVERIFY(!noRun);
        QCOMPARE(noRun.error().kind, ErrorKind::NotFound);

        // A node added through the service: stored, connected (nothing
        // listens on port 1), and refused twice or with a bad name.
        const QJsonObject far{{QStringLiteral("name"), QStringLiteral("far")},
                {QStringLiteral("host"), QStringLiteral("127.0.0.1")}, {QStringLiteral("port"), 1},
                {QStringLiteral("agent_path"), QStringLiteral("/nonexistent/trainyard-agent")}};
        const auto added = (*svc)->call(QStringLiteral("node_add"), {{QStringLiteral("node"), far}});
        QVERIFY2(added, added ? "" : qPrintable(added.error().message));
        {
            auto s = store();
            QVERIFY(s);
            QCOMPARE(s->nodes().size(), 1);
            QCOMPARE(s->nodes().front().port, 1);
        }
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(nodes.cbegin(), nodes.cend(),
                                         [](const QList<QVariant>& a) {
                                             return a.at(0).toString() == u"far" && !a.at(1).toBool()
                                                     && a.at(3).value<ErrorKind>() == ErrorKind::Unreachable;
                                         }),
                20000);
        const auto twice = (*svc)->call(QStringLiteral("node_add"), {{QStringLiteral("node"), far}});
        QVERIFY(!twice);
        QCOMPARE(twice.error().message, QStringLiteral("a node named 'far' exists already (remove it first)"));
        QJsonObject bad = far;
        bad.insert(QStringLiteral("name"), QStringLiteral("../x"));
        const auto badName = (*svc)->call(QStringLiteral("node_add"), {{QStringLiteral("node"), bad}});
        QVERIFY(!badName);
        QCOMPARE(badName.error().kind, ErrorKind::InvalidInput);
        const auto key = (*svc)->call(QStringLiteral("host_key"), {{QStringLiteral("node"), QStringLiteral("far")}});
        QVERIFY(key);
        QCOMPARE(key->value(QStringLiteral("fingerprint")).toString(), QString()); // refused before any key
    }

    // The first scene: runs that must queue, every client gone; the
    // service starts and records them all, exit codes included.
    void queuedRunsFinishWithNoClient()
    {
        QList<qint64> ids;
        for (int code : {0, 3, 7}) {
            const QString spec = writeFile(QStringLiteral("q%1.yaml").arg(code),
                    "name: q" + QByteArray::number(code) + "\ncommand: \"sleep 2; exit " + QByteArray::number(code)
                            + "\"\n" + allCpus());
            const Outcome o = ctl({QStringLiteral("submit"), spec});
            QVERIFY2(o.exitCode == 0, o.err.constData());
            // Returns at once: started, or queued with the reason said.
            QVERIFY2(o.out.contains(code == 0 ? "running on local" : "queued: "), o.out.constData());
        }
        // A follower killed with SIGKILL: a client that vanishes stops nothing.
        QProcess follower;
        follower.setProcessEnvironment(env());
        follower.start(QStringLiteral(TRAINYARD_CTL_PATH),
                {QStringLiteral("--db"), dbPath(), QStringLiteral("logs"), QStringLiteral("q0"),
                        QStringLiteral("--follow")});
        QVERIFY(follower.waitForStarted());
        QThread::msleep(200);
        follower.kill();
        QVERIFY(follower.waitForFinished());
        QVERIFY(test::waitUntil([&] { return allEnded(3); }, 40000));
        auto s = store();
        QVERIFY(s);
        for (const RunRecord& r : s->runs()) {
            const int want = r.name.mid(1).toInt();
            QCOMPARE(r.state, want == 0 ? RunState::Succeeded : RunState::Failed);
            QCOMPARE(r.exitCode, std::optional<int>(want));
        }
        // They ran one after another: each needed every CPU.
        QList<RunRecord> runs = s->runs();
        std::sort(runs.begin(), runs.end(),
                [](const RunRecord& a, const RunRecord& b) { return a.startedAt < b.startedAt; });
        for (qsizetype i = 1; i < runs.size(); ++i)
            QVERIFY2(runs[i].startedAt >= runs[i - 1].finishedAt, qPrintable(runs[i].name));
        // With nothing left to do and no client, it stops by itself (2 s idle here).
        const qint64 pid = servicePid();
        QVERIFY(pid > 0);
        QTRY_VERIFY_WITH_TIMEOUT(!alive(pid), 15000);
    }

    // SIGKILL at any moment loses no console byte and no metric point, and
    // doubles none: each new service re-attaches the run at its stored offsets.
    void serviceKilledTenTimesDuringARun()
    {
        const QString spec = writeFile(QStringLiteral("numbered.yaml"),
                "name: numbered\ncommand: \"for i in $(seq 1 150); do echo step $i loss $i.5; sleep 0.04; done\"\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QRandomGenerator rng(22);
        int kills = 0;
        for (; kills < 10; ++kills) {
            QCOMPARE(
                    ctl({QStringLiteral("daemon"), QStringLiteral("start")}).exitCode, 0); // again, after the last kill
            const qint64 pid = servicePid();
            QVERIFY(pid > 0);
            QThread::msleep(100 + rng.bounded(300));
            QVERIFY(::kill(pid_t(pid), SIGKILL) == 0);
            QTRY_VERIFY_WITH_TIMEOUT(!alive(pid), 5000);
        }
        QCOMPARE(kills, 10);
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("start")}).exitCode, 0); // a last one, to record the end
        QVERIFY(test::waitUntil([&] { return allEnded(1); }, 60000));
        auto s = store();
        QVERIFY(s);
        const RunRecord run = s->runs().front();
        QCOMPARE(run.state, RunState::Succeeded);
        const QByteArray node = test::readFile(
                stateDir() + QStringLiteral("/runs/") + run.agentRunId + QStringLiteral("/console.log"));
        QVERIFY(node.endsWith("step 150 loss 150.5\n"));
        QCOMPARE(test::readFile(run.consolePath), node);
        QCOMPARE(run.consoleOffset, qint64(node.size()));
        const QList<MetricPoint> loss = s->metrics(run.id, QStringLiteral("loss"));
        QCOMPARE(loss.size(), 150);
        for (int i = 0; i < loss.size(); ++i) {
            QCOMPARE(loss[i].step, qint64(i + 1));
            QCOMPARE(loss[i].value, i + 1.5);
        }
    }

    // Another uid is refused at the socket, by its peer credentials (the
    // folder's and socket's modes are opened here to get that far).
    void anotherUserIsRefused()
    {
        const passwd* other = ::getpwnam("trainyard-other");
        if (::geteuid() != 0 || !other || QStandardPaths::findExecutable(QStringLiteral("setpriv")).isEmpty())
            QSKIP("needs root, setpriv and the user trainyard-other (scripts/install-deps.sh makes it)");
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("start")}).exitCode, 0);
        auto paths = servicePathsFor(dbPath());
        QVERIFY(paths);
        struct stat st { };
        QVERIFY(::stat(QFile::encodeName(paths->runtimeDir).constData(), &st) == 0);
        QCOMPARE(st.st_mode & 0777, mode_t(0700)); // closed to others as made
        QVERIFY(::stat(QFile::encodeName(paths->socket).constData(), &st) == 0);
        QCOMPARE(st.st_mode & 077, mode_t(0));
        // The other user must get as far as the socket: open the folders above it too.
        for (const QString& dir : {m_dir->path(), runtimeDir(), paths->runtimeDir})
            QVERIFY(::chmod(QFile::encodeName(dir).constData(), 0711) == 0);
        QVERIFY(::chmod(QFile::encodeName(paths->socket).constData(), 0666) == 0);
        QProcess p;
        p.start(QStringLiteral("setpriv"),
                {QStringLiteral("--reuid=%1").arg(other->pw_uid), QStringLiteral("--regid=%1").arg(other->pw_gid),
                        QStringLiteral("--clear-groups"), QStringLiteral("/usr/bin/python3"), QStringLiteral("-c"),
                        QStringLiteral(
                                "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\nf=s.makefile()\n"
                                "print(f.readline().strip())\n"
                                "try:\n  s.sendall(b'{\"id\":1,\"op\":\"status\"}\\n')\nexcept OSError:\n  pass\n"
                                "try:\n  print(f.read().strip())\nexcept OSError:\n  pass\n"),
                        paths->socket});
        QVERIFY(p.waitForFinished(10000));
        const QByteArray said = p.readAllStandardOutput();
        ::chmod(QFile::encodeName(paths->runtimeDir).constData(), 0700);
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        // One line, the refusal naming both uids, then the end: no status.
        const QList<QByteArray> lines = said.trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        const QJsonObject refusal = QJsonDocument::fromJson(lines.front()).object();
        QCOMPARE(refusal.value(QStringLiteral("event")).toString(), QStringLiteral("refused"));
        QVERIFY2(refusal.value(QStringLiteral("error"))
                         .toString()
                         .contains(QStringLiteral("belongs to uid 0; you are uid %1").arg(other->pw_uid)),
                lines.front().constData());
        // The folder's own check: the service's user finds it closed again;
        // a client of another user would refuse a folder that is not its own.
        QVERIFY(::stat(QFile::encodeName(paths->runtimeDir).constData(), &st) == 0);
        QCOMPARE(st.st_mode & 0777, mode_t(0700));
    }

    // A socket file left by a killed service (nobody listens) is replaced;
    // a second service for the same database says who holds it and exits.
    void staleSocketReplacedAndOneServicePerDatabase()
    {
        auto paths = servicePathsFor(dbPath());
        QVERIFY(paths);
        {
            const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un addr{};
            addr.sun_family = AF_UNIX;
            const QByteArray path = QFile::encodeName(paths->socket);
            std::memcpy(addr.sun_path, path.constData(), size_t(path.size()));
            QVERIFY(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
            ::close(fd); // the file stays, nobody behind it
        }
        QLocalSocket probe;
        probe.connectToServer(paths->socket);
        QVERIFY(!probe.waitForConnected(1000));
        const Outcome status = ctl({QStringLiteral("daemon"), QStringLiteral("status")});
        QCOMPARE(status.exitCode, 5);
        QVERIFY2(status.err.contains("is left from a service that ended"), status.err.constData());

        const Outcome started = ctl({QStringLiteral("daemon"), QStringLiteral("start")});
        QVERIFY2(started.exitCode == 0, started.err.constData());
        const qint64 pid = servicePid();
        QVERIFY(pid > 0);

        QProcess second;
        second.setProcessEnvironment(env());
        second.start(QStringLiteral(TRAINYARDD_PATH), {QStringLiteral("--db"), dbPath()});
        QVERIFY(second.waitForFinished(10000));
        QCOMPARE(second.exitCode(), 3);
        const QByteArray why = second.readAllStandardError();
        QVERIFY2(why.contains(QByteArray(QByteArray("another Trainyard service (pid ") + QByteArray::number(pid))),
                why.constData());
        QCOMPARE(servicePid(), pid); // the first one goes on
    }

    // A client that finds an older service (the package was upgraded) has it
    // hand over and starts its own; the run the old one started goes on and
    // the new one records its end.
    void olderServiceHandsOver()
    {
        QProcess old;
        QProcessEnvironment e = env();
        e.insert(QStringLiteral("TRAINYARD_TEST"), QStringLiteral("1"));
        e.insert(QStringLiteral("TRAINYARD_TEST_SERVICE_VERSION"), QStringLiteral("0.0.1"));
        old.setProcessEnvironment(e);
        old.start(QStringLiteral(TRAINYARDD_PATH), {QStringLiteral("--db"), dbPath(), QStringLiteral("--detach")});
        QVERIFY(old.waitForFinished(20000));
        QCOMPARE(old.exitCode(), 0);
        const Outcome status = ctl({QStringLiteral("daemon"), QStringLiteral("status"), QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(status.out).object().value(QStringLiteral("version")).toString(),
                QStringLiteral("0.0.1"));
        const qint64 oldPid = QJsonDocument::fromJson(status.out).object().value(QStringLiteral("pid")).toInteger();
        // The old one starts a run (a raw client: trainyardctl would replace it)...
        const QString spec
                = writeFile(QStringLiteral("across.yaml"), "name: across\ncommand: \"sleep 1.5; echo across\"\n");
        auto paths = servicePathsFor(dbPath());
        QVERIFY(paths);
        {
            QLocalSocket raw;
            raw.connectToServer(paths->socket);
            QVERIFY(raw.waitForConnected(5000));
            QTRY_VERIFY(raw.canReadLine() || (raw.waitForReadyRead(100) && raw.canReadLine()));
            QVERIFY(raw.readLine().contains("\"version\":\"0.0.1\""));
            const QJsonObject submit{{QStringLiteral("id"), 1}, {QStringLiteral("op"), QStringLiteral("submit")},
                    {QStringLiteral("spec"),
                            QJsonObject{{QStringLiteral("yaml"), QString::fromUtf8(test::readFile(spec))},
                                    {QStringLiteral("origin"), spec}, {QStringLiteral("base_dir"), m_dir->path()}}}};
            raw.write(QJsonDocument(submit).toJson(QJsonDocument::Compact) + '\n');
            QVERIFY(raw.waitForBytesWritten(5000));
            QTRY_VERIFY(raw.canReadLine() || (raw.waitForReadyRead(100) && raw.canReadLine()));
            const QJsonObject reply = QJsonDocument::fromJson(raw.readLine()).object();
            QVERIFY2(reply.value(QStringLiteral("ok")).toBool(),
                    qPrintable(reply.value(QStringLiteral("error")).toString()));
        }
        QTRY_VERIFY_WITH_TIMEOUT(
                [&] {
                    auto s = store();
                    return s && !s->runs().isEmpty() && s->runs().front().state == RunState::Running;
                }(),
                10000);
        // ...and this client (the new version) replaces it, and follows the
        // run to its end through the new service.
        const Outcome o = ctl({QStringLiteral("logs"), QStringLiteral("across"), QStringLiteral("--follow")});
        QVERIFY2(o.exitCode == 0, o.err.constData());
        QCOMPARE(o.out, QByteArray("across\n"));
        QVERIFY2(o.err.contains("is version 0.0.1"), o.err.constData());
        QVERIFY(!alive(oldPid));
        const Outcome now = ctl({QStringLiteral("daemon"), QStringLiteral("status"), QStringLiteral("--json")});
        const QJsonObject s = QJsonDocument::fromJson(now.out).object();
        QVERIFY(s.value(QStringLiteral("pid")).toInteger() != oldPid);
        QVERIFY(s.value(QStringLiteral("version")).toString() != u"0.0.1");
    }

    // The service holding 200 queued runs restarts with their order, holds
    // and priorities intact; 200 submits from 20 concurrent clients are all
    // recorded once, in order per client.
    void twoHundredQueuedRunsSurviveARestart()
    {
        const QString stop = m_dir->filePath(QStringLiteral("blocker.stop"));
        const QString blocker = writeFile(QStringLiteral("blocker.yaml"),
                QStringLiteral(
                        "name: blocker\ncommand: \"for i in $(seq 600); do [ -e %1 ] && break; sleep 0.1; done\"\n")
                                .arg(stop)
                                .toUtf8()
                        + allCpus());
        QVERIFY(ctl({QStringLiteral("submit"), blocker}).out.contains("running"));
        const QString queued = writeFile(QStringLiteral("queued.yaml"),
                "name: queued\nparams: {client: '0', seq: '0'}\ncommand: \"true\"\n" + allCpus());
        // 20 clients at once, 10 submits each, one after another.
        std::vector<std::unique_ptr<QProcess>> clients;
        QElapsedTimer t;
        t.start();
        for (int c = 0; c < 20; ++c) {
            auto p = std::make_unique<QProcess>();
            QProcessEnvironment e = env();
            e.insert(QStringLiteral("CTL"), QStringLiteral(TRAINYARD_CTL_PATH));
            e.insert(QStringLiteral("DB"), dbPath());
            p->setProcessEnvironment(e);
            p->start(QStringLiteral("/bin/sh"),
                    {QStringLiteral("-c"),
                            QStringLiteral(
                                    "for j in 0 1 2 3 4 5 6 7 8 9; do \"$CTL\" --db \"$DB\" submit %1 --param client=%2 --param seq=$j >/dev/null 2>>\"$DB.client%2.err\" || exit 1; "
                                    "echo $j; done")
                                    .arg(queued)
                                    .arg(c)});
            clients.push_back(std::move(p));
        }
        for (auto& p : clients) {
            QVERIFY(p->waitForFinished(120000));
            QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
        }
        qInfo("200 submits from 20 clients: %lld ms", t.elapsed());
        auto s = store();
        QVERIFY(s);
        QList<RunRecord> runs = s->runs();
        QCOMPARE(runs.size(), 201);
        int waiting = 0;
        for (const RunRecord& r : runs)
            waiting += r.state == RunState::Queued;
        QCOMPARE(waiting, 200);
        // Each (client, seq) once, and each client's in the order it sent them.
        QMap<int, QMap<int, RunId>> byClient;
        for (const RunRecord& r : runs) {
            if (r.name != u"queued")
                continue;
            const auto params = s->params(r.id);
            const int c = params.value(QStringLiteral("client")).toInt(),
                      seq = params.value(QStringLiteral("seq")).toInt();
            QVERIFY2(!byClient[c].contains(seq), qPrintable(QStringLiteral("client %1 seq %2 twice").arg(c).arg(seq)));
            byClient[c][seq] = r.id;
        }
        QCOMPARE(byClient.size(), 20);
        for (const auto& seqs : std::as_const(byClient)) {
            QCOMPARE(seqs.size(), 10);
            const QList<RunId> order = seqs.values();
            QVERIFY(std::is_sorted(order.cbegin(), order.cend()));
        }
        // Holds and priorities, then the queue's order as trainyardctl says it.
        QList<RunId> queuedIds;
        for (const RunRecord& r : runs)
            if (r.state == RunState::Queued)
                queuedIds.append(r.id);
        std::sort(queuedIds.begin(), queuedIds.end());
        for (int i = 0; i < 200; i += 17)
            QCOMPARE(ctl({QStringLiteral("hold"), QString::number(queuedIds[i])}).exitCode, 0);
        for (int i = 5; i < 200; i += 23)
            QCOMPARE(ctl({QStringLiteral("priority"), QString::number(queuedIds[i]), QString::number(i)}).exitCode, 0);
        const Outcome before = ctl({QStringLiteral("queue")});
        QCOMPARE(before.exitCode, 0);
        QCOMPARE(before.out.count('\n') >= 200, true);

        const qint64 pid = servicePid();
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("stop")}).exitCode, 0);
        QVERIFY(!alive(pid));
        QVERIFY(ctl({QStringLiteral("daemon"), QStringLiteral("start")}).exitCode == 0);
        QVERIFY(servicePid() != pid);
        const Outcome after = ctl({QStringLiteral("queue")});
        QCOMPARE(after.exitCode, 0);
        // The order, states and priorities; the reasons' estimates may move.
        const auto columns = [](const QByteArray& queue) {
            QList<QByteArray> lines = queue.split('\n');
            const qsizetype reason = lines.value(1).indexOf("REASON");
            for (QByteArray& line : lines)
                line = line.left(reason);
            return lines;
        };
        QCOMPARE(columns(after.out).size(), 203);
        QCOMPARE(columns(after.out), columns(before.out));
        auto again = store();
        QVERIFY(again);
        int held = 0, prioritised = 0;
        for (const RunRecord& r : again->runs()) {
            held += r.state == RunState::Held;
            prioritised += r.priority != 0;
        }
        QCOMPARE(held, 12);
        QCOMPARE(prioritised, 9);
        // The blocker was re-attached, not lost.
        std::optional<RunRecord> b;
        for (const RunRecord& r : again->runs())
            if (r.name == u"blocker")
                b = r;
        QVERIFY(b);
        QCOMPARE(b->name, QStringLiteral("blocker"));
        QCOMPARE(b->state, RunState::Running);
        // Leave nothing to run: stop the service, then the blocker.
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("stop")}).exitCode, 0);
        test::writeFile(stop, "");
    }
};

QTEST_GUILESS_MAIN(TestService)
#include "TestService.moc"
