// The window and trainyardd (issue #22): the window takes the engine over
// from a running service while it is open, and a service takes it back when
// the window closes, so closing it stops nothing.
#include "tests/support/TestSupport.h"
#include "ui/mainwindow/Application.h"
#include "core/runs/RunEngine.h"
#include "core/service/ServiceClient.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace ty;

class TestGuiService final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("results/trainyard.db")); }

    qint64 servicePid()
    {
        auto svc = service::ServiceClient::connectTo(db(), service::ServiceClient::Start::Never, 2000);
        return svc ? (*svc)->servicePid() : 0;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        qputenv("TRAINYARD_DAEMON", TRAINYARDD_PATH);
        qputenv("TRAINYARD_AGENT", test::agentPath().toUtf8());
        qputenv("TRAINYARD_AGENT_STATE", m_dir.filePath(QStringLiteral("agent-state")).toUtf8());
        qputenv("TRAINYARD_DAEMON_IDLE", "2");
    }

    void closingTheWindowStopsNothing()
    {
        // A service already runs for the database.
        QProcess start;
        start.start(QStringLiteral(TRAINYARDD_PATH), {QStringLiteral("--db"), db(), QStringLiteral("--detach")});
        QVERIFY(start.waitForFinished(20000));
        QCOMPARE(start.exitCode(), 0);
        const qint64 first = servicePid();
        QVERIFY(first > 0);

        auto app = Application::create(db(), test::agentPath());
        QVERIFY2(app, app ? "" : qPrintable(app.error().message));
        // It handed over: the window's engine ingests, the first service is
        // gone, and a new one waits to take over.
        QVERIFY(::kill(pid_t(first), 0) != 0);
        RunEngine* engine = (*app)->engine();
        QTRY_VERIFY_WITH_TIMEOUT(
                [engine] {
                    bool owns = false;
                    QMetaObject::invokeMethod(
                            engine, [&] { owns = engine->ownsIngestion(); }, Qt::BlockingQueuedConnection);
                    return owns;
                }(),
                10000);
        QTRY_VERIFY_WITH_TIMEOUT(servicePid() > 0, 10000);
        const qint64 second = servicePid();
        QVERIFY(second != first);

        auto spec = parseJobSpec(QStringLiteral("name: outlives\ncommand: \"sleep 2; echo done; exit 4\"\n"),
                QStringLiteral("<test>"), m_dir.path());
        QVERIFY(spec);
        const auto id = engine->submit(*spec);
        QVERIFY(id);
        ResultStore* store = (*app)->store();
        QTRY_VERIFY_WITH_TIMEOUT(store->run(*id) && store->run(*id)->state == RunState::Running, 10000);
        app->reset(); // the window closes while the run goes on

        // The service records its end with no window open.
        auto reader = ResultStore::open(db());
        QVERIFY(reader);
        QTRY_VERIFY_WITH_TIMEOUT((*reader)->run(*id) && isTerminal((*reader)->run(*id)->state), 20000);
        const RunRecord ended = *(*reader)->run(*id);
        QCOMPARE(ended.state, RunState::Failed);
        QCOMPARE(ended.exitCode, std::optional<int>(4));
        QCOMPARE(test::readFile(ended.consolePath), QByteArray("done\n"));
        QCOMPARE(servicePid(), second);
        // With nothing left, it stops by itself.
        QTRY_VERIFY_WITH_TIMEOUT(::kill(pid_t(second), 0) != 0, 15000);
    }
};

QTEST_MAIN(TestGuiService)
#include "TestGuiService.moc"
