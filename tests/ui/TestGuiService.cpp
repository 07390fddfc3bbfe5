// The window as a client of trainyardd (issue #22): the engine runs in the
// service, the window reaches it through the socket (ServiceRunControl) for
// submits, live consoles, metric points and states, and closing the window,
// or the service dying under it, loses nothing. Real processes throughout:
// the built trainyardd, the real agent, real runs.
#include "tests/support/TestSupport.h"
#include "ui/mainwindow/Application.h"
#include "ui/mainwindow/MainWindow.h"
#include "ui/runs/RunsModel.h"
#include "core/service/ServiceClient.h"
#include "core/service/ServiceProtocol.h"
#include "core/service/ServiceRunControl.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QMap>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace ty;

class TestGuiService final : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;
    QString db() const { return m_dir->filePath(QStringLiteral("results/trainyard.db")); }

    qint64 servicePid()
    {
        auto svc = service::ServiceClient::connectTo(db(), service::ServiceClient::Start::Never, 2000);
        return svc ? (*svc)->servicePid() : 0;
    }

    static bool alive(qint64 pid) { return pid > 0 && ::kill(pid_t(pid), 0) == 0; }

    JobSpec spec(const QString& yaml)
    {
        auto s = parseJobSpec(yaml, QStringLiteral("<test>"), m_dir->path());
        return s ? *s : JobSpec{};
    }

    // What a `trainyardctl submit` does, from another client of the service.
    RunId submitFromAnotherClient(const JobSpec& s)
    {
        auto svc = service::ServiceClient::connectTo(db(), service::ServiceClient::Start::IfNeeded);
        if (!svc)
            return 0;
        const auto r = (*svc)->call(QStringLiteral("submit"), {{QStringLiteral("spec"), service::submitSpecToJson(s)}});
        return r ? r->value(QStringLiteral("runs")).toArray().at(0).toInteger() : 0;
    }

private Q_SLOTS:
    void initTestCase()
    {
        qputenv("TRAINYARD_DAEMON", TRAINYARDD_PATH);
        qputenv("TRAINYARD_AGENT", test::agentPath().toUtf8());
        qputenv("TRAINYARD_DAEMON_IDLE", "2");
    }

    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        qputenv("TRAINYARD_AGENT_STATE", m_dir->filePath(QStringLiteral("agent-state")).toUtf8());
    }

    void cleanup()
    {
        if (const qint64 pid = servicePid()) {
            ::kill(pid_t(pid), SIGTERM);
            QTRY_VERIFY_WITH_TIMEOUT(!alive(pid), 20000);
        }
        m_dir.reset();
    }

    void closingTheWindowStopsNothing()
    {
        // A service already runs for the database: the window becomes its
        // client; nothing is handed over.
        QProcess start;
        start.start(QStringLiteral(TRAINYARDD_PATH), {QStringLiteral("--db"), db(), QStringLiteral("--detach")});
        QVERIFY(start.waitForFinished(20000));
        QCOMPARE(start.exitCode(), 0);
        const qint64 pid = servicePid();
        QVERIFY(pid > 0);

        auto app = Application::create(db());
        QVERIFY2(app, app ? "" : qPrintable(app.error().message));
        QVERIFY((*app)->control());
        QCOMPARE((*app)->control()->servicePid(), pid);
        MainWindow* window = (*app)->window();
        QSignalSpy submitted(window, &MainWindow::runSubmitted);
        window->submit(spec(QStringLiteral("name: outlives\ncommand: \"sleep 2; echo done; exit 4\"\n")));
        QTRY_COMPARE_WITH_TIMEOUT(submitted.size(), 1, 10000);
        const RunId id = submitted.front().at(0).value<RunId>();
        ResultStore* store = (*app)->store();
        QTRY_VERIFY_WITH_TIMEOUT(store->run(id) && store->run(id)->state == RunState::Running, 10000);
        QTRY_VERIFY(window->runsModel()->rowOf(id) >= 0);
        app->reset(); // the window closes while the run goes on

        // The service records its end with no window open, then stops by itself.
        auto reader = ResultStore::open(db());
        QVERIFY(reader);
        QTRY_VERIFY_WITH_TIMEOUT((*reader)->run(id) && isTerminal((*reader)->run(id)->state), 20000);
        const RunRecord ended = *(*reader)->run(id);
        QCOMPARE(ended.state, RunState::Failed);
        QCOMPARE(ended.exitCode, std::optional<int>(4));
        QCOMPARE(test::readFile(ended.consolePath), QByteArray("done\n"));
        QCOMPARE(servicePid(), pid);
        QTRY_VERIFY_WITH_TIMEOUT(!alive(pid), 15000);
    }

    void windowFollowsARunLiveThroughTheService()
    {
        // The window starts the service; a run submitted by another client
        // shows up, and its console, metric points and end reach the window
        // over the socket while it is selected.
        auto app = Application::create(db());
        QVERIFY2(app, app ? "" : qPrintable(app.error().message));
        service::ServiceRunControl* control = (*app)->control();
        QVERIFY(control);
        QVERIFY(alive(control->servicePid()));
        MainWindow* window = (*app)->window();
        window->show();
        QSignalSpy console(control, &RunControl::consoleReceived);
        QSignalSpy metrics(control, &RunControl::metricsReceived);
        QSignalSpy states(control, &RunControl::runStateChanged);
        QSignalSpy nodes(control, &RunControl::nodeStatusChanged);
        // The local node's status, though it connected before the window did.
        QTRY_VERIFY_WITH_TIMEOUT(
                std::any_of(nodes.cbegin(), nodes.cend(),
                        [](const QList<QVariant>& a) { return a.at(0).toString() == u"local" && a.at(1).toBool(); }),
                10000);

        const QString go = m_dir->filePath(QStringLiteral("go"));
        const RunId id = submitFromAnotherClient(
                spec(QStringLiteral("name: live\ncommand: \"while [ ! -e %1 ]; do sleep 0.05; done; "
                                    "for i in 1 2 3 4 5; do echo step=$i loss=0.$i; sleep 0.2; done\"\n")
                                .arg(go)));
        QVERIFY(id > 0);
        QTRY_VERIFY_WITH_TIMEOUT(
                window->runsModel()->rowData(id) && window->runsModel()->rowData(id)->run.state == RunState::Running,
                10000);
        window->selectRun(id);
        QTRY_COMPARE(window->selectedRun(), id);
        test::writeFile(go, "");

        QTRY_VERIFY_WITH_TIMEOUT(window->runsModel()->rowData(id)->run.state == RunState::Succeeded, 20000);
        // Every console byte came through the socket, in order, as the file holds them.
        QMap<qint64, QByteArray> chunks;
        for (const QList<QVariant>& a : std::as_const(console))
            if (a.at(0).value<RunId>() == id)
                chunks.insert(a.at(1).toLongLong(), a.at(2).toByteArray());
        QByteArray joined;
        for (auto it = chunks.cbegin(); it != chunks.cend(); ++it) {
            QCOMPARE(it.key(), qint64(joined.size())); // no gap, no overlap
            joined += it.value();
        }
        const QByteArray expected("step=1 loss=0.1\nstep=2 loss=0.2\nstep=3 loss=0.3\nstep=4 loss=0.4\n"
                                  "step=5 loss=0.5\n");
        QCOMPARE(joined, expected);
        QCOMPARE(test::readFile(window->runsModel()->rowData(id)->run.consolePath), expected);
        // The points, as extracted by the service's engine, each once.
        QList<double> losses;
        for (const QList<QVariant>& a : std::as_const(metrics))
            if (a.at(0).value<RunId>() == id)
                for (const MetricPoint& p : a.at(1).value<QList<MetricPoint>>())
                    if (p.key == u"loss")
                        losses << p.value;
        QCOMPARE(losses, (QList<double>{0.1, 0.2, 0.3, 0.4, 0.5}));
        QCOMPARE(window->runsModel()->rowData(id)->latest.value(QStringLiteral("loss")).value, 0.5);
        // Its whole record came with the state (the row keeps its command line).
        const auto last = std::find_if(states.crbegin(), states.crend(),
                [id](const QList<QVariant>& a) { return a.at(0).value<RunRecord>().id == id; });
        QVERIFY(last != states.crend());
        const RunRecord r = last->at(0).value<RunRecord>();
        QCOMPARE(r.state, RunState::Succeeded);
        QCOMPARE(r.argv.value(0), QStringLiteral("/bin/sh"));
        QVERIFY(!r.consolePath.isEmpty());
        QCOMPARE(r.specYaml, (*app)->store()->run(id)->specYaml);

        // The window's edits and deletes are the service's writes too.
        RunAnnotation rename;
        rename.name = QStringLiteral("renamed");
        std::optional<Result<void>> renamed, deleted;
        control->annotate(id, rename, [&](const Result<void>& r) { renamed = r; });
        QTRY_VERIFY(renamed);
        QVERIFY2(*renamed, renamed->has_value() ? "" : qPrintable(renamed->error().message));
        QCOMPARE((*app)->store()->run(id)->name, QStringLiteral("renamed"));
        const QString folder = QFileInfo(r.consolePath).absolutePath();
        QVERIFY(QFileInfo::exists(folder));
        control->deleteRun(id, [&](const Result<void>& r) { deleted = r; });
        QTRY_VERIFY(deleted);
        QVERIFY(deleted->has_value());
        QVERIFY(!(*app)->store()->run(id));
        QVERIFY(!QFileInfo::exists(folder));
        QTRY_VERIFY(window->runsModel()->rowOf(id) < 0);
    }

    void serviceKilledUnderTheWindowIsStartedAgain()
    {
        auto app = Application::create(db());
        QVERIFY2(app, app ? "" : qPrintable(app.error().message));
        service::ServiceRunControl* control = (*app)->control();
        QVERIFY(control);
        const qint64 first = control->servicePid();
        QSignalSpy reconnected(control, &RunControl::reconnected);
        QVERIFY(::kill(pid_t(first), SIGKILL) == 0);
        QTRY_COMPARE_WITH_TIMEOUT(reconnected.size(), 1, 15000);
        QVERIFY(control->connectedToService());
        const qint64 second = control->servicePid();
        QVERIFY(second != first && alive(second));
        // And it serves the window as before.
        MainWindow* window = (*app)->window();
        QSignalSpy submitted(window, &MainWindow::runSubmitted);
        window->submit(spec(QStringLiteral("name: after\ncommand: \"echo after\"\n")));
        QTRY_COMPARE_WITH_TIMEOUT(submitted.size(), 1, 10000);
        const RunId id = submitted.front().at(0).value<RunId>();
        QTRY_VERIFY_WITH_TIMEOUT(
                window->runsModel()->rowData(id) && window->runsModel()->rowData(id)->run.state == RunState::Succeeded,
                20000);
    }
};

QTEST_MAIN(TestGuiService)
#include "TestGuiService.moc"
