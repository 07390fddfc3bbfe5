// The Artifacts dialog (ui/dialogs/ArtifactsDialog.h) against a real engine
// on its own thread with the local node (a real trainyard-agent child): a run
// writes files matching its `artifacts:` globs plus a symlink; the dialog
// lists what the node reports, downloads the regular files with their bytes,
// and refuses the link without writing it.
#include "ui/dialogs/ArtifactsDialog.h"
#include "ui/mainwindow/MainWindow.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace ty;

class TestArtifactsDialog : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void listsAndDownloadsFromTheNode()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString dbPath = dir.filePath(QStringLiteral("results.db"));
        auto opened = ResultStore::open(dbPath);
        QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
        std::unique_ptr<ResultStore> store = std::move(*opened);
        const test::EngineThread thread(store.get(), dbPath);
        RunEngine* engine = thread.engine();
        bool owner = false;
        thread.run([&] {
            owner = engine->acquireIngestion();
            engine->addLocalNode(test::agentPath(), dir.filePath(QStringLiteral("agent-state")));
        });
        QVERIFY(owner);

        const QString work = dir.filePath(QStringLiteral("work"));
        QVERIFY(QDir().mkpath(work));
        const QString yaml = QStringLiteral(
                "name: produce\n"
                "command: [sh, -c, 'mkdir -p out && printf weights > out/model.pt && printf 1234567 > out/metrics.json "
                "&& ln -s /etc/hostname out/link && printf no > other.txt']\n"
                "artifacts: ['out/*']\n");
        auto spec = parseJobSpec(yaml, QStringLiteral("produce.yaml"), work);
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));

        MainWindow window(store.get(), thread.control());
        window.show();
        QSignalSpy submitted(&window, &MainWindow::runSubmitted);
        window.submit(*spec);
        QTRY_COMPARE(submitted.count(), 1);
        const RunId id = submitted.at(0).at(0).value<RunId>();
        QTRY_VERIFY_WITH_TIMEOUT(store->run(id) && store->run(id)->state == RunState::Succeeded, 20000);
        window.selectRun(id);
        QTRY_COMPARE(window.selectedRun(), id);

        // Run > Artifacts… opens the dialog for the selected run.
        auto* action = window.findChild<QAction*>(QStringLiteral("artifactsAction"));
        QVERIFY(action);
        QTRY_VERIFY(action->isEnabled());
        action->trigger();
        ArtifactsDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = window.findChild<ArtifactsDialog*>(QStringLiteral("artifactsDialog"))) != nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->busy(), 15000);
        const AgentFileList& list = dialog->listing();
        QStringList names;
        for (const AgentFileEntry& f : list.files)
            names << f.path + u':' + f.type + u':' + QString::number(f.size);
        names.sort();
        QCOMPARE(names,
                (QStringList{QStringLiteral("out/link:symlink:13"), QStringLiteral("out/metrics.json:file:7"),
                        QStringLiteral("out/model.pt:file:7")}));
        auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("artifactsTable"));
        QCOMPARE(table->rowCount(), 3);
        QVERIFY2(dialog->statusText().contains(QStringLiteral("3 file(s)")), qPrintable(dialog->statusText()));

        // Download to the run's results folder (the default button).
        const QString results = QFileInfo(dbPath).absoluteFilePath() + QStringLiteral(".runs/%1/artifacts").arg(id);
        QSignalSpy done(dialog, &ArtifactsDialog::downloadFinished);
        dialog->findChild<QPushButton*>(QStringLiteral("downloadToResults"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 15000);
        QCOMPARE(done.at(0).at(0).toBool(), false); // the link was refused
        QStringList got = dialog->downloaded();
        got.sort();
        QCOMPARE(got, (QStringList{QStringLiteral("out/metrics.json"), QStringLiteral("out/model.pt")}));
        QCOMPARE(dialog->refused().size(), 1);
        QVERIFY2(dialog->refused().at(0).startsWith(QStringLiteral("out/link")), qPrintable(dialog->refused().at(0)));
        QVERIFY2(dialog->statusText().contains(QStringLiteral("Refused")), qPrintable(dialog->statusText()));
        QFile model(results + QStringLiteral("/out/model.pt"));
        QVERIFY2(model.open(QIODevice::ReadOnly), qPrintable(model.fileName()));
        QCOMPARE(model.readAll(), QByteArray("weights"));
        QFile metrics(results + QStringLiteral("/out/metrics.json"));
        QVERIFY(metrics.open(QIODevice::ReadOnly));
        QCOMPARE(metrics.readAll(), QByteArray("1234567"));
        QVERIFY(!QFileInfo::exists(results + QStringLiteral("/out/link")));
        QVERIFY(!QFileInfo::exists(results + QStringLiteral("/other.txt")));
        dialog->close();
    }
};

QTEST_MAIN(TestArtifactsDialog)
#include "TestArtifactsDialog.moc"
