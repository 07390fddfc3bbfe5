// The Nodes view: GPU rows from a fed QList<AgentGpu> (run names of ours,
// other processes), the local node through a real RunEngine on its own thread
// (reachable; this machine's GPUs or the CPU-node text), adding an SSH node
// (stored, handed to the engine) and the unknown-host-key question, the add
// dialog's validation, and the passphrase provider asked from another thread.
#include "ui/dialogs/AddNodeDialog.h"
#include "ui/dialogs/PassphraseDialog.h"
#include "ui/nodes/NodesView.h"
#include "UiTestSupport.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QTreeWidget>

#include <thread>

using namespace ty;

namespace {

QStringList rowTexts(const QTreeWidgetItem* item)
{
    return test::rowTexts(item, NodesView::ColumnCount);
}

} // namespace

class TestNodesView : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ResultStore> m_store;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
        // Never read the user's ~/.ssh/config.
        const QString config = m_dir.filePath(QStringLiteral("ssh_config"));
        QFile f(config);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("UserKnownHostsFile " + m_dir.filePath(QStringLiteral("known_hosts")).toUtf8() + "\n");
        f.close();
        qputenv("TRAINYARD_SSH_CONFIG", config.toUtf8());
    }

    void cleanupTestCase() { m_store.reset(); }

    void gpuRowsFromFedList()
    {
        NodesView view(m_store.get(), nullptr);
        RunRow ours;
        ours.run.id = 7;
        ours.run.name = QStringLiteral("resnet50 lr=0.1");
        ours.run.agentRunId = QStringLiteral("ty-1a2b3c4d-7-m0abc");
        view.setRuns({ours});
        view.setNodeStatus(QStringLiteral("ws-01"), true, {});

        AgentGpu busy;
        busy.index = 0;
        busy.uuid = QStringLiteral("GPU-6f3c1c4e");
        busy.name = QStringLiteral("NVIDIA H200");
        busy.memoryTotalMib = 143771;
        busy.memoryUsedMib = 1092;
        busy.utilizationPct = 100;
        busy.temperatureC = 47;
        busy.powerW = 312.4;
        busy.processes.append(AgentGpuProcess{4242, QStringLiteral("python3"), 1092.0, ours.run.agentRunId});
        AgentGpu foreign = busy;
        foreign.index = 1;
        foreign.memoryUsedMib = 20480;
        foreign.utilizationPct = 35;
        foreign.processes = {AgentGpuProcess{999, QStringLiteral("jupyter"), 20480.0, {}}};
        AgentGpu idle = busy;
        idle.index = 2;
        idle.memoryUsedMib = 0;
        idle.utilizationPct = 0;
        idle.processes.clear();
        view.setNodeGpus(QStringLiteral("ws-01"), {busy, foreign, idle});

        QTreeWidgetItem* node = view.nodeItem(QStringLiteral("ws-01"));
        QVERIFY(node);
        QCOMPARE(node->text(NodesView::StatusColumn), QStringLiteral("reachable"));
        QCOMPARE(node->childCount(), 3);
        const QStringList gpu0 = rowTexts(node->child(0));
        QCOMPARE(gpu0.at(NodesView::NameColumn), QStringLiteral("GPU 0  NVIDIA H200"));
        QCOMPARE(gpu0.at(NodesView::MemoryColumn), QStringLiteral("1092 / 143771 MiB"));
        QCOMPARE(gpu0.at(NodesView::UtilizationColumn), QStringLiteral("100 %"));
        QCOMPARE(gpu0.at(NodesView::TemperatureColumn), QStringLiteral("47 °C"));
        QCOMPARE(gpu0.at(NodesView::PowerColumn), QStringLiteral("312 W"));
        QCOMPARE(gpu0.at(NodesView::HeldByColumn), QStringLiteral("resnet50 lr=0.1 (#7)"));
        QCOMPARE(gpu0.at(NodesView::StatusColumn), QStringLiteral("busy"));
        const QStringList gpu1 = rowTexts(node->child(1));
        QVERIFY2(gpu1.at(NodesView::HeldByColumn).startsWith(QStringLiteral("other process")),
                qPrintable(gpu1.join(u'|')));
        QVERIFY(gpu1.at(NodesView::HeldByColumn).contains(QStringLiteral("jupyter")));
        QCOMPARE(gpu1.at(NodesView::MemoryColumn), QStringLiteral("20480 / 143771 MiB"));
        const QStringList gpu2 = rowTexts(node->child(2));
        QCOMPARE(gpu2.at(NodesView::StatusColumn), QStringLiteral("free"));
        QCOMPARE(gpu2.at(NodesView::HeldByColumn), QStringLiteral("–"));

        // A run id of another database is not ours.
        busy.processes.front().run = QStringLiteral("ty-ffffffff-7-m0abc");
        view.setNodeGpus(QStringLiteral("ws-01"), {busy});
        QCOMPARE(node->childCount(), 1);
        QVERIFY(node->child(0)->text(NodesView::HeldByColumn).startsWith(QStringLiteral("other process")));

        // Lost: the node says so; a node without GPUs says it is a CPU node.
        view.setNodeStatus(QStringLiteral("ws-01"), false, QStringLiteral("no heartbeat for 15 s"));
        QCOMPARE(node->text(NodesView::StatusColumn), QStringLiteral("unreachable"));
        QCOMPARE(node->text(NodesView::HeldByColumn), QStringLiteral("no heartbeat for 15 s"));
        view.setNodeStatus(QStringLiteral("cpu-box"), true, {});
        view.setNodeGpus(QStringLiteral("cpu-box"), {});
        QCOMPARE(view.nodeItem(QStringLiteral("cpu-box"))->child(0)->text(0), NodesView::cpuNodeText());
    }

    // A Slurm login node lists its partitions, each on one line over the
    // whole row (the GPU columns are too narrow for it), every fact in it.
    void slurmPartitionsOneLineEach()
    {
        NodesView view(m_store.get(), nullptr);
        NodeRecord hpc;
        hpc.name = QStringLiteral("hpc");
        hpc.host = QStringLiteral("login1");
        hpc.kind = NodeKind::Slurm;
        hpc.facts = QStringLiteral(
                R"({"version":"22.05.8","partitions":[)"
                R"({"name":"debug","default":true,"state":"up","nodes":["n1","n2"],"node_count":2,"cpus":2,)"
                R"("memory_mib":7000,"gres":[{"name":"gpu","type":"","count":2}],"max_time_s":null},)"
                R"({"name":"a100","default":false,"state":"drain","nodes":["g1"],"node_count":1,"cpus":64,)"
                R"("memory_mib":524288,"gres":[{"name":"gpu","type":"a100","count":8}],"max_time_s":86400}]})");
        view.setStoredNodes({hpc});
        QTreeWidgetItem* node = view.nodeItem(QStringLiteral("hpc"));
        QVERIFY(node);
        QCOMPARE(node->text(NodesView::MemoryColumn), QStringLiteral("Slurm 22.05.8"));
        QCOMPARE(node->childCount(), 2);
        QCOMPARE(node->child(0)->text(NodesView::NameColumn),
                QStringLiteral("debug* up · 2 node(s) n1,n2 · 2 CPUs, 7 GiB, gpu:2 per node · no time limit"));
        QCOMPARE(node->child(1)->text(NodesView::NameColumn),
                QStringLiteral(
                        "a100 drain · 1 node(s) g1 · 64 CPUs, 512 GiB, gpu:a100:8 per node · time limit 1440 min"));
        for (int i = 0; i < 2; ++i) {
            QVERIFY(node->child(i)->isFirstColumnSpanned());
            for (int c = 1; c < NodesView::ColumnCount; ++c)
                QCOMPARE(node->child(i)->text(c), QString());
        }
        QVERIFY(node->child(0)
                        ->toolTip(NodesView::NameColumn)
                        .startsWith(QStringLiteral("partition debug (default)\n")));
    }

    void aggregatedConsoleOfANode()
    {
        NodesView view(m_store.get(), nullptr);
        QSignalSpy requested(&view, &NodesView::aggregatedConsoleRequested);
        RunRows rows;
        const auto add = [&](RunId id, const QString& node, bool started) {
            RunRow r;
            r.run.id = id;
            r.run.name = QStringLiteral("run %1").arg(id);
            r.run.node = node;
            if (started)
                r.run.startedAt = QDateTime::currentDateTimeUtc();
            rows.append(r);
        };
        add(3, QStringLiteral("ws-01"), true);
        add(9, QStringLiteral("ws-01"), true);
        add(5, QStringLiteral("ws-02"), true);
        add(12, QStringLiteral("ws-01"), false); // queued there: no console yet
        for (RunId id = 100; id < 100 + NodesView::kConsoleRuns + 5; ++id)
            add(id, QStringLiteral("ws-03"), true);
        view.setNodeStatus(QStringLiteral("ws-01"), true, {});
        view.setNodeStatus(QStringLiteral("ws-03"), true, {});
        view.setRuns(rows);
        QCOMPARE(view.consoleRuns(QStringLiteral("ws-01")), (QList<RunId>{9, 3}));
        QCOMPARE(view.consoleRuns(QStringLiteral("ws-02")), QList<RunId>{5});
        const QList<RunId> many = view.consoleRuns(QStringLiteral("ws-03"));
        QCOMPARE(many.size(), NodesView::kConsoleRuns);
        QCOMPARE(many.first(), RunId(100 + NodesView::kConsoleRuns + 4)); // the newest
        QVERIFY(!view.aggregatedConsoleAction()->isEnabled());            // nothing selected

        // A GPU row selected counts as its node.
        view.setNodeGpus(QStringLiteral("ws-01"), {AgentGpu{}});
        QTreeWidgetItem* node = view.nodeItem(QStringLiteral("ws-01"));
        QVERIFY(node && node->childCount() == 1);
        view.tree()->setCurrentItem(node->child(0));
        QCOMPARE(view.selectedNode(), QStringLiteral("ws-01"));
        QVERIFY(view.aggregatedConsoleAction()->isEnabled());
        view.aggregatedConsoleAction()->trigger();
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.at(0).at(0).toString(), QStringLiteral("ws-01"));
        QCOMPARE(requested.at(0).at(1).value<QList<RunId>>(), (QList<RunId>{9, 3}));
    }

    void localNodeAndAddedNodeThroughEngine()
    {
        const test::EngineThread thread(m_store.get(), m_store->location());
        RunEngine* engine = thread.engine();
        const auto onEngine = [&thread](const std::function<void()>& fn) { thread.run(fn); };
        NodesView view(m_store.get(), thread.control());
        view.show();
        QVERIFY(view.nodeItem(QStringLiteral("local")));
        QCOMPARE(view.nodeItem(QStringLiteral("local"))->text(NodesView::StatusColumn), QStringLiteral("connecting…"));
        const QString stateDir = m_dir.filePath(QStringLiteral("agent-state"));
        onEngine([&] { engine->addLocalNode(test::agentPath(), stateDir); });

        QTreeWidgetItem* local = view.nodeItem(QStringLiteral("local"));
        QTRY_COMPARE_WITH_TIMEOUT(local->text(NodesView::StatusColumn), QStringLiteral("reachable"), 15000);
        // The GPU status arrives (at ready, then every 2 s).
        QTRY_VERIFY_WITH_TIMEOUT(
                local->childCount() > 0 && local->child(0)->text(0) != QStringLiteral("reading GPUs…"), 10000);
        const bool hasNvidia = QFile::exists(QStringLiteral("/dev/nvidiactl"));
        if (hasNvidia) {
            QVERIFY2(
                    local->child(0)->text(0).startsWith(QStringLiteral("GPU 0")), qPrintable(local->child(0)->text(0)));
        } else {
            QCOMPARE(local->childCount(), 1);
            QCOMPARE(local->child(0)->text(0), QStringLiteral("no NVIDIA GPU (CPU node)"));
        }
        // Periodic: another update within a few seconds.
        QSignalSpy gpus(engine, &RunEngine::nodeGpusUpdated);
        QVERIFY(gpus.wait(5000));
        QCOMPARE(gpus.at(0).at(0).toString(), QStringLiteral("local"));

        // Add an SSH node nothing listens for: stored, handed to the engine, shown unreachable.
        QSignalSpy added(&view, &NodesView::nodeAdded);
        NodeRecord n;
        n.name = QStringLiteral("ws-test");
        n.host = QStringLiteral("127.0.0.1");
        n.port = 1;
        view.addNode(n, false);
        QTRY_COMPARE(added.count(), 1);
        QCOMPARE(added.at(0).at(1).toString(), QString());
        const QList<NodeRecord> stored = m_store->nodes();
        QCOMPARE(stored.size(), 1);
        QCOMPARE(stored.front().name, QStringLiteral("ws-test"));
        QCOMPARE(stored.front().port, 1);
        QTRY_COMPARE_WITH_TIMEOUT(view.nodeItem(QStringLiteral("ws-test"))->text(NodesView::StatusColumn),
                QStringLiteral("unreachable"), 30000);
        auto acceptsNewKeys = [&] {
            bool accept = false;
            onEngine([&] {
                for (SshAgentTransport* t : engine->findChildren<SshAgentTransport*>())
                    if (t->options().name == u"ws-test")
                        accept = t->options().acceptNewHostKey;
            });
            return accept;
        };
        QVERIFY(!acceptsNewKeys());

        // An unknown host key: the fingerprint is shown and Yes makes the transport accept it.
        QSignalSpy accepted(&view, &NodesView::hostKeyAccepted);
        const QString fp = QStringLiteral("SHA256:q0Zb3lUuJ0ZC2T3n7bIzq1h0bM2mO0f6mR5m0n3n9Xs");
        view.askHostKey(QStringLiteral("ws-test"), fp, QStringLiteral("the host key of ws-test is not known"), false);
        auto* box = view.findChild<QMessageBox*>(QStringLiteral("hostKeyBox"));
        QVERIFY(box);
        QVERIFY(box->text().contains(fp));
        view.askHostKey(QStringLiteral("ws-test"), fp, QStringLiteral("again"), false); // one question at a time
        QCOMPARE(view.findChildren<QMessageBox*>(QStringLiteral("hostKeyBox")).size(), 1);
        box->button(QMessageBox::Yes)->click();
        QTRY_COMPARE(accepted.count(), 1);
        QVERIFY(acceptsNewKeys());

        // A changed key is reported, never offered: by its kind, whatever
        // the message's words.
        view.askHostKey(
                QStringLiteral("ws-test"), fp, QStringLiteral("the host key of ws-test is different now"), true);
        QTRY_VERIFY(view.findChild<QMessageBox*>(QStringLiteral("nodesErrorBox")));
        QVERIFY(!view.findChild<QMessageBox*>(QStringLiteral("hostKeyBox")));
        QVERIFY(m_store->removeNode(QStringLiteral("ws-test")));
    }

    void addNodeDialogValidates()
    {
        AddNodeDialog d;
        d.setExistingNames({QStringLiteral("ws-01")});
        QVERIFY(!d.validationError().isEmpty()); // empty
        d.findChild<QLineEdit*>(QStringLiteral("nodeHostEdit"))->setText(QStringLiteral("gpu-box"));
        d.findChild<QLineEdit*>(QStringLiteral("nodeNameEdit"))->setText(QStringLiteral("ws-01"));
        QVERIFY(d.validationError().contains(QStringLiteral("already")));
        d.findChild<QLineEdit*>(QStringLiteral("nodeNameEdit"))->setText(QStringLiteral("local"));
        QVERIFY(d.validationError().contains(QStringLiteral("already")));
        d.findChild<QLineEdit*>(QStringLiteral("nodeNameEdit"))->setText(QStringLiteral("a b"));
        QVERIFY(d.validationError().contains(QStringLiteral("letters")));
        NodeRecord n;
        n.name = QStringLiteral("ws-02");
        n.host = QStringLiteral("gpu-box");
        n.user = QStringLiteral("alice");
        n.port = 2222;
        n.identityFile = QStringLiteral("/home/alice/.ssh/id_ed25519");
        d.setNode(n, true);
        QCOMPARE(d.validationError(), QString());
        QCOMPARE(d.node(), n);
        QVERIFY(d.acceptNewHostKey());
        // Its own node_lost_after (issue #25): a duration, or empty for the service's.
        n.nodeLostAfterSec = 1800;
        d.setNode(n);
        QCOMPARE(d.findChild<QLineEdit*>(QStringLiteral("nodeLostAfterEdit"))->text(), QStringLiteral("30m"));
        QCOMPARE(d.node(), n);
        d.findChild<QLineEdit*>(QStringLiteral("nodeLostAfterEdit"))->setText(QStringLiteral("soon"));
        QVERIFY2(d.validationError().contains(QStringLiteral("not a duration")), qPrintable(d.validationError()));
        d.findChild<QLineEdit*>(QStringLiteral("nodeLostAfterEdit"))->setText(QStringLiteral("90s"));
        QCOMPARE(d.node().nodeLostAfterSec, std::optional<qint64>(90));
    }

    void passphraseAskedOnGuiThreadFromSshThread()
    {
        auto provider = std::make_shared<GuiPassphraseProvider>(nullptr);
        auto answerWith = [](const QString& text) {
            // Answer the dialog once it shows, from the GUI thread's event loop.
            auto* timer = new QTimer;
            timer->setInterval(20);
            QObject::connect(timer, &QTimer::timeout, timer, [timer, text] {
                for (QWidget* w : QApplication::topLevelWidgets()) {
                    auto* d = qobject_cast<PassphraseDialog*>(w);
                    if (!d || !d->isVisible())
                        continue;
                    QVERIFY(d->findChild<QLabel*>(QStringLiteral("passphrasePrompt"))
                                    ->text()
                                    .contains(QStringLiteral("id_ed25519")));
                    if (text.isNull()) {
                        d->reject();
                    } else {
                        d->findChild<QLineEdit*>(QStringLiteral("passphraseEdit"))->setText(text);
                        d->accept();
                    }
                    timer->deleteLater();
                    return;
                }
            });
            timer->start();
        };
        for (const QString& text : {QStringLiteral("correct horse ✓"), QString()}) {
            answerWith(text);
            std::optional<QByteArray> answer;
            bool done = false;
            std::thread ssh([&] {
                answer = provider->passphrase(
                        QStringLiteral("ws-01"), QStringLiteral("Passphrase for /home/a/.ssh/id_ed25519: "));
                done = true;
            });
            QTRY_VERIFY_WITH_TIMEOUT(done, 10000);
            ssh.join();
            if (text.isNull())
                QVERIFY(!answer);
            else
                QCOMPARE(answer, std::optional<QByteArray>(text.toUtf8()));
        }
    }

    // A node's labels (node label, "local" included) in its row while it is
    // reachable and in its tooltip; a change is read again with the GPU
    // reports, without a new view.
    void labelsShownAndReadAgain()
    {
        QVERIFY(m_store->setNodeLabels(QStringLiteral("local"), {QStringLiteral("a100"), QStringLiteral("ib")}));
        const auto reset = qScopeGuard([this] { (void)m_store->setNodeLabels(QStringLiteral("local"), {}); });
        NodesView view(m_store.get(), nullptr);
        view.setNodeStatus(QStringLiteral("local"), true, {});
        view.setNodeGpus(QStringLiteral("local"), {});
        const QTreeWidgetItem* local = view.nodeItem(QStringLiteral("local"));
        QVERIFY(local);
        QCOMPARE(local->text(NodesView::HeldByColumn), QStringLiteral("labels: a100, ib"));
        QVERIFY(local->toolTip(NodesView::NameColumn).endsWith(QStringLiteral("\nlabels: a100, ib")));
        QVERIFY(m_store->setNodeLabels(QStringLiteral("local"), {QStringLiteral("v100")}));
        QTRY_COMPARE_WITH_TIMEOUT((view.setNodeGpus(QStringLiteral("local"), {}),
                                          view.nodeItem(QStringLiteral("local"))->text(NodesView::HeldByColumn)),
                QStringLiteral("labels: v100"), 5000);
        // Unreachable: the reason, not the labels.
        view.setNodeStatus(QStringLiteral("local"), false, QStringLiteral("agent exited"));
        QCOMPARE(view.nodeItem(QStringLiteral("local"))->text(NodesView::HeldByColumn), QStringLiteral("agent exited"));
    }
};

QTEST_MAIN(TestNodesView)
#include "TestNodesView.moc"
