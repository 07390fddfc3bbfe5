// The `trainyard` command line: --version/--help without a display (the real
// binary, no DISPLAY, no QT_QPA_PLATFORM), and files given as arguments
// opened like a drop (the real Application, its trainyardd and local agent).
#include "trainyard/Version.h"
#include "ui/dialogs/SubmitDialog.h"
#include "ui/mainwindow/Application.h"
#include "ui/mainwindow/GuiCommandLine.h"
#include "ui/mainwindow/MainWindow.h"
#include "ui/runs/RunsModel.h"
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace ty;

class TestGuiCommandLine final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    struct Outcome {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };

    // The real trainyard as a desktop session without a display would run it.
    static Outcome gui(const QStringList& args)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QString());
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(TRAINYARD_GUI_PATH), args);
        if (!p.waitForFinished(20000)) {
            p.kill();
            p.waitForFinished();
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                p.readAllStandardError()};
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        // The window's engine is a trainyardd it starts, with this build's agent.
        qputenv("TRAINYARD_DAEMON", TRAINYARDD_PATH);
        qputenv("TRAINYARD_AGENT", test::agentPath().toUtf8());
        qputenv("TRAINYARD_AGENT_STATE", m_dir.filePath(QStringLiteral("agent-state")).toUtf8());
        QVERIFY(m_dir.isValid());
    }

    void versionAndHelpNeedNoDisplay()
    {
        const Outcome v = gui({QStringLiteral("--version")});
        QVERIFY2(v.exitCode == 0, v.err.constData());
        QCOMPARE(v.out, QByteArray("trainyard " TRAINYARD_VERSION "\n"));
        const Outcome h = gui({QStringLiteral("--help")});
        QVERIFY2(h.exitCode == 0, h.err.constData());
        QVERIFY2(h.out.startsWith("Usage: trainyard [options] [FILE...]\n"), h.out.constData());
        QVERIFY(h.out.contains("--db <PATH>"));
        QVERIFY(h.out.contains("Job specs, scripts or folders to open"));
        const Outcome bad = gui({QStringLiteral("--frobnicate")});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("trainyard: Unknown option 'frobnicate'."), bad.err.constData());
    }

    void filesArePositional()
    {
        const GuiCommandLine c
                = GuiCommandLine::parse({QStringLiteral("trainyard"), QStringLiteral("--db"), QStringLiteral("x.db"),
                                                QStringLiteral("a.trainyard.yaml"), QStringLiteral("train.py")},
                        QStringLiteral("1.0"), QStringLiteral("/d.db"));
        QCOMPARE(c.action, GuiCommandLine::Action::Run);
        QCOMPARE(c.databasePath, QStringLiteral("x.db"));
        QCOMPARE(c.files, (QStringList{QStringLiteral("a.trainyard.yaml"), QStringLiteral("train.py")}));
    }

    void specGivenAsArgumentIsShownThenSubmitted()
    {
        // As the .desktop file's `trainyard %F` passes it.
        const QString spec = m_dir.filePath(QStringLiteral("hello.trainyard.yaml"));
        {
            QFile f(spec);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("name: from-argv\ncommand: 'echo from argv'\n");
        }
        auto app = Application::create(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(app, app ? "" : qPrintable(app.error().message));
        MainWindow* window = (*app)->window();
        window->show();
        QSignalSpy submitted(window, &MainWindow::runSubmitted);
        (*app)->openFiles({spec});
        SubmitDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = window->findChild<SubmitDialog*>(QStringLiteral("submitDialog"))) && dialog->isVisible());
        QVERIFY(dialog->mode() == SubmitDialog::Mode::Yaml); // shown, as a drop shows it
        dialog->accept();
        QTRY_COMPARE_WITH_TIMEOUT(submitted.count(), 1, 10000);
        const RunId id = submitted.at(0).at(0).value<RunId>();
        auto run = (*app)->store()->run(id);
        QVERIFY(run);
        QCOMPARE(run->name, QStringLiteral("from-argv"));
        QCOMPARE(run->argv,
                (QStringList{QStringLiteral("/bin/sh"), QStringLiteral("-c"), QStringLiteral("echo from argv")}));
    }

    void readOnlyDatabaseOpensReadOnly()
    {
        // `trainyard --db` on a colleague's results on a read-only share
        // (a read-only mount: root is refused too) opens, read-only.
        if (::geteuid() != 0)
            QSKIP("needs root to mount a tmpfs");
        const QString share = m_dir.filePath(QStringLiteral("share"));
        QVERIFY(QDir().mkpath(share));
        if (QProcess::execute(QStringLiteral("mount"),
                    {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"), QStringLiteral("size=16m"),
                            QStringLiteral("tmpfs"), share})
                != 0)
            QSKIP("cannot mount a tmpfs");
        const auto unmount = qScopeGuard([&share] {
            if (QProcess::execute(QStringLiteral("umount"), {share}) != 0)
                QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), share});
        });
        const QString db = share + QStringLiteral("/results.db");
        RunId id = 0;
        {
            auto writer = ResultStore::open(db);
            QVERIFY(writer);
            RunRecord r;
            r.name = QStringLiteral("shared");
            r.state = RunState::Succeeded;
            auto created = (*writer)->createRun(r, {});
            QVERIFY(created);
            id = *created;
        }
        QCOMPARE(
                QProcess::execute(QStringLiteral("mount"), {QStringLiteral("-o"), QStringLiteral("remount,ro"), share}),
                0);
        {
            auto app = Application::create(db);
            QVERIFY2(app, app ? "" : qPrintable(app.error().message));
            QVERIFY((*app)->store()->isReadOnly());
            MainWindow* window = (*app)->window();
            window->show();
            QTRY_VERIFY(window->runsModel()->rowOf(id) >= 0);
            const auto* notice = window->findChild<QLabel*>(QStringLiteral("storeNotice"));
            QVERIFY(notice && notice->isVisible());
            QCOMPARE(notice->text(), QStringLiteral("Read-only: results.db"));
            QVERIFY((*app)->control() == nullptr); // no service for what it could not record
        }
        QCOMPARE(QDir(share).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                QStringList{QStringLiteral("results.db")});
    }

    void damagedDatabaseIsRefusedInWords()
    {
        // What main() shows in its error box.
        const QString db = m_dir.filePath(QStringLiteral("damaged/results.db"));
        {
            auto writer = ResultStore::open(db);
            QVERIFY(writer);
            QVERIFY((*writer)->createRun(RunRecord{}, {}));
        }
        QFile f(db);
        QVERIFY(f.resize(f.size() / 2));
        auto app = Application::create(db);
        QVERIFY(!app);
        QVERIFY2(app.error().message.startsWith(
                         db + QStringLiteral(" is damaged (SQLite: database disk image is malformed)")),
                qPrintable(app.error().message));
        QVERIFY(app.error().message.contains(QStringLiteral("\".recover\"")));
    }
};

QTEST_MAIN(TestGuiCommandLine)
#include "TestGuiCommandLine.moc"
