// Pipelines across nodes (issue #24) against a real sshd on 127.0.0.2 and
// 127.0.0.3 (ws1, ws2; each agent with its own state folder, so each step's
// synced workdir is its node's own): a step's upstream artifacts are copied
// into its workdir on another node (stage-in) and left in place on the node
// that made them; and the digits example as ingest -> a two-node gang of
// DistributedDataParallel ranks -> evaluate, each on its own node. The real
// agent, real runs, the real PipelineRunner and RunEngine. Skipped (QSKIP)
// unless root with /usr/sbin/sshd, as in CI.
#include "SshdFixture.h"
#include "core/common/Paths.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/nodes/WorkdirSync.h"
#include "core/pipeline/PipelineRunner.h"
#include "core/pipeline/PipelineSpec.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"
#include "core/store/RunNotice.h"
#include "tests/support/TestSupport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestPipelineNodes final : public QObject {
    Q_OBJECT

    test::SshdFixture m_sshd;
    QTemporaryDir m_tmp;
    bool m_up = false;

    QString stateDir(const QString& node) const { return m_tmp.filePath(QStringLiteral("state-") + node); }
    QString dbPath() const { return m_tmp.filePath(QStringLiteral("db/trainyard.db")); }

    // A result database, an engine with ws1 and ws2 (both connected), and a pipeline runner.
    struct Rig {
        std::unique_ptr<ResultStore> store;
        std::unique_ptr<RunEngine> engine;
        std::unique_ptr<pipeline::PipelineRunner> runner;
    };

    Rig rig()
    {
        Rig r;
        QDir().mkpath(QFileInfo(dbPath()).absolutePath());
        auto store = ResultStore::open(dbPath());
        if (!store)
            qFatal("%s", qPrintable(store.error().message));
        r.store = std::move(*store);
        r.engine = std::make_unique<RunEngine>(r.store.get(), dbPath());
        r.engine->setReconnectDelays(200, 800);
        for (const QString& node : {QStringLiteral("ws1"), QStringLiteral("ws2")})
            r.engine->addNode(node, std::make_unique<SshAgentTransport>(m_sshd.nodeOptions(node, stateDir(node))));
        r.engine->acquireIngestion();
        r.runner = std::make_unique<pipeline::PipelineRunner>(r.engine.get(), r.store.get(), dbPath());
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 30000
                && !(r.engine->nodePlaceable(QStringLiteral("ws1")) && r.engine->nodePlaceable(QStringLiteral("ws2"))))
            QTest::qWait(20);
        return r;
    }

    // Submits the pipeline and returns it as it ended (describe()).
    static QJsonObject runToEnd(Rig& r, const QString& yaml, const QString& base, int timeoutMs)
    {
        const auto spec = pipeline::parsePipeline(yaml, QStringLiteral("pipe.yaml"), base);
        if (!spec) {
            qWarning("%s", qPrintable(spec.error().message));
            return {};
        }
        const qint64 id = r.runner->submit(*spec).value_or(0);
        QElapsedTimer t;
        t.start();
        QJsonObject p;
        while (t.elapsed() < timeoutMs) {
            p = r.runner->describe(id).value_or(QJsonObject{});
            if (p.value(QStringLiteral("state")).toString() != u"running")
                break;
            QTest::qWait(50);
        }
        r.store->flush();
        return p;
    }

    static QJsonObject step(const QJsonObject& pipeline, const QString& name)
    {
        for (const QJsonValue& v : pipeline.value(QStringLiteral("steps")).toArray())
            if (v.toObject().value(QStringLiteral("name")).toString() == name)
                return v.toObject();
        return {};
    }

    static QString noticesOf(ResultStore& store, RunId run)
    {
        QStringList texts;
        for (const RunNotice& n : store.notices(run))
            texts << n.text;
        return texts.join(u'|');
    }

    // Why a pipeline did not succeed: each step's state and reason, and the
    // end of a failed step's console.
    QByteArray why(const QJsonObject& p) const
    {
        QStringList lines{p.value(QStringLiteral("state")).toString()};
        for (const QJsonValue& v : p.value(QStringLiteral("steps")).toArray()) {
            const QJsonObject s = v.toObject();
            lines << s.value(QStringLiteral("name")).toString() + u' ' + s.value(QStringLiteral("state")).toString()
                            + u' ' + s.value(QStringLiteral("reason")).toString();
            if (s.value(QStringLiteral("state")).toString() == u"failed")
                lines << QString::fromUtf8(
                        test::readFile(runDataDir(dbPath(), s.value(QStringLiteral("run")).toInteger())
                                + QStringLiteral("/console.log"))
                                .right(2000));
        }
        return lines.join(u'\n').toUtf8();
    }

private Q_SLOTS:
    void initTestCase()
    {
        TY_START_SSHD_OR_SKIP(&m_sshd);
        m_up = true;
    }

    void artifactsFollowTheirConsumerToItsNode()
    {
        const QString work = m_tmp.filePath(QStringLiteral("across"));
        test::writeFile(work + QStringLiteral("/README"), "a workdir for the pipeline's steps\n");
        Rig r = rig();
        // make on ws1; use on ws2 checks make's 3 MB blob against its checksum;
        // again on ws1 finds make's files where make left them and gets use's.
        const QJsonObject p = runToEnd(r,
                QStringLiteral(
                        "name: across\n"
                        "steps:\n"
                        "  - name: make\n"
                        "    command: [/bin/sh, -c, 'mkdir -p out && head -c 3000000 /dev/urandom > out/blob.bin && "
                        "sha256sum out/blob.bin | cut -c1-64 > out/sum.txt']\n"
                        "    workdir: across\n"
                        "    sync: true\n"
                        "    avoid_nodes: [ws2]\n"
                        "    artifacts: [out/blob.bin, out/sum.txt]\n"
                        "  - name: use\n"
                        "    depends: [make]\n"
                        "    command: [/bin/sh, -c, 'test -s out/blob.bin && test \"$(sha256sum out/blob.bin | cut -c1-64)\" = \"$(cat "
                        "out/sum.txt)\" && echo checked > used.txt']\n"
                        "    workdir: across\n"
                        "    sync: true\n"
                        "    avoid_nodes: [ws1]\n"
                        "    outputs: {params: {checked: used.txt}}\n"
                        "  - name: again\n"
                        "    depends: [use]\n"
                        "    command: [/bin/sh, -c, 'test -s out/blob.bin && grep -q checked used.txt']\n"
                        "    workdir: across\n"
                        "    sync: true\n"
                        "    avoid_nodes: [ws2]\n"),
                m_tmp.path(), 90000);
        QVERIFY2(p.value(QStringLiteral("state")).toString() == u"succeeded", why(p).constData());
        QCOMPARE(step(p, QStringLiteral("use"))
                         .value(QStringLiteral("outputs"))
                         .toObject()
                         .value(QStringLiteral("outputs.checked")),
                QJsonValue(QStringLiteral("checked")));

        const RunId make = step(p, QStringLiteral("make")).value(QStringLiteral("run")).toInteger();
        const RunId use = step(p, QStringLiteral("use")).value(QStringLiteral("run")).toInteger();
        const RunId again = step(p, QStringLiteral("again")).value(QStringLiteral("run")).toInteger();
        QCOMPARE(r.store->run(make)->node, QStringLiteral("ws1"));
        QCOMPARE(r.store->run(use)->node, QStringLiteral("ws2"));
        QCOMPARE(r.store->run(again)->node, QStringLiteral("ws1"));
        // The blob on ws2 is ws1's, byte for byte.
        const QString on1 = syncDirFor(stateDir(QStringLiteral("ws1")), work) + QStringLiteral("/out/blob.bin");
        const QString on2 = syncDirFor(stateDir(QStringLiteral("ws2")), work) + QStringLiteral("/out/blob.bin");
        QCOMPARE(QFileInfo(on2).size(), qint64(3000000));
        QVERIFY(test::readFile(on1) == test::readFile(on2));
        // Said in the runs' notices: copied to ws2; on ws1 make's files were in place, use's copied.
        const QString toUse = noticesOf(*r.store, use);
        QVERIFY2(toUse.contains(QStringLiteral("inputs made by run %1: 2 file(s), 2.9 MiB, copied into its workdir "
                                               "on node ws2")
                                        .arg(make)),
                qPrintable(toUse));
        const QString toAgain = noticesOf(*r.store, again);
        QVERIFY2(toAgain.contains(QStringLiteral("inputs made by run %1, %2: 1 file(s)").arg(use).arg(make))
                        && toAgain.contains(QStringLiteral("2 file(s) already there (made there)")),
                qPrintable(toAgain));
    }

    void digitsTrainsAsATwoNodeGangBetweenIngestAndEvaluate()
    {
        if (!QFile::exists(QStringLiteral("/usr/bin/python3")))
            QSKIP("needs Debian's python3 with python3-torch and python3-sklearn");
        // The example's scripts, in a workdir of this test's.
        const QString work = m_tmp.filePath(QStringLiteral("digits"));
        for (const QString& f :
                {QStringLiteral("prepare.py"), QStringLiteral("train.py"), QStringLiteral("evaluate.py")})
            test::writeFile(work + u'/' + f,
                    test::readFile(test::sourcePath(QStringLiteral("resources/examples/digits/") + f)));
        Rig r = rig();
        const QJsonObject p = runToEnd(r,
                QStringLiteral("name: digits-two-nodes\n"
                               "steps:\n"
                               "  - name: prepare\n"
                               "    command: [/usr/bin/python3, prepare.py, --seed, '0']\n"
                               "    workdir: digits\n"
                               "    sync: true\n"
                               "    avoid_nodes: [ws2]\n"
                               "    env: {PYTHONUNBUFFERED: '1'}\n"
                               "    artifacts: [data/train.pt, data/val.pt]\n"
                               "  - name: train\n"
                               "    depends: [prepare]\n"
                               "    command: [/usr/bin/python3, train.py, --data, data, --save, out/model.pt, "
                               "--epochs, '3', --min-accuracy, '0']\n"
                               "    workdir: digits\n"
                               "    sync: true\n"
                               "    resources: {nodes: 2}\n"
                               "    env: {PYTHONUNBUFFERED: '1'}\n"
                               "    artifacts: [out/model.pt]\n"
                               "    outputs: {params: {accuracy: {metric: val_accuracy, aggregate: max}}}\n"
                               "  - name: evaluate\n"
                               "    depends: [train]\n"
                               "    command: [/usr/bin/python3, evaluate.py, --min-accuracy, '0']\n"
                               "    workdir: digits\n"
                               "    sync: true\n"
                               "    avoid_nodes: [ws1]\n"
                               "    env: {PYTHONUNBUFFERED: '1'}\n"
                               "    outputs: {params: {accuracy: {metric: test_accuracy, aggregate: last}}}\n"),
                m_tmp.path(), 240000);
        QVERIFY2(p.value(QStringLiteral("state")).toString() == u"succeeded", why(p).constData());

        // Two ranks, one per node, in one group of two (gloo over the hosts' addresses).
        const RunId train = step(p, QStringLiteral("train")).value(QStringLiteral("run")).toInteger();
        QList<RunRecord> ranks;
        const RunGroupId gang = RunEngine::gangOf(*r.store->run(train));
        QVERIFY(gang > 0);
        for (const auto& [run, m] : r.store->groupMembers(gang)) {
            QCOMPARE(m.position, int(ranks.size()));
            ranks << *r.store->run(run);
            // Each rank is in the pipeline's group too, as the train step.
            const auto step = membershipOf(ranks.back(), RunGroupKind::Pipeline);
            QVERIFY(step);
            QCOMPARE(step->group, p.value(QStringLiteral("id")).toInteger());
            QCOMPARE(step->role, QStringLiteral("train"));
        }
        QCOMPARE(ranks.size(), 2);
        QCOMPARE(ranks[0].id, train);
        QCOMPARE(QSet<QString>({ranks[0].node, ranks[1].node}),
                QSet<QString>({QStringLiteral("ws1"), QStringLiteral("ws2")}));
        for (const RunRecord& rank : std::as_const(ranks))
            QCOMPARE(rank.state, RunState::Succeeded);
        // On the rank that did not run prepare, prepare's data were copied in; rank 0's console says 2 ranks.
        for (const RunRecord& rank : std::as_const(ranks)) {
            const QString notices = noticesOf(*r.store, rank.id);
            if (rank.node == u"ws2")
                QVERIFY2(notices.contains(QStringLiteral("copied into its workdir on node ws2")), qPrintable(notices));
            else
                QVERIFY2(notices.contains(QStringLiteral("already in its workdir on node ws1")), qPrintable(notices));
        }
        const double val = step(p, QStringLiteral("train"))
                                   .value(QStringLiteral("outputs"))
                                   .toObject()
                                   .value(QStringLiteral("outputs.accuracy"))
                                   .toString()
                                   .toDouble();
        const double test = step(p, QStringLiteral("evaluate"))
                                    .value(QStringLiteral("outputs"))
                                    .toObject()
                                    .value(QStringLiteral("outputs.accuracy"))
                                    .toString()
                                    .toDouble();
        QVERIFY2(val > 0.8 && test > 0.8, qPrintable(QStringLiteral("val %1, test %2").arg(val).arg(test)));
        // As the console printed them (4 decimals), not a double's 17 digits.
        for (const char* s : {"train", "evaluate"}) {
            const QString text = step(p, QLatin1String(s))
                                         .value(QStringLiteral("outputs"))
                                         .toObject()
                                         .value(QStringLiteral("outputs.accuracy"))
                                         .toString();
            QVERIFY2(QRegularExpression(QStringLiteral("^(0\\.\\d{1,4}|1)$")).match(text).hasMatch(), qPrintable(text));
        }
        // evaluate ran on ws2 with the model trained by the gang (made on ws1).
        const RunId evaluate = step(p, QStringLiteral("evaluate")).value(QStringLiteral("run")).toInteger();
        QCOMPARE(r.store->run(evaluate)->node, QStringLiteral("ws2"));
        const QString n = noticesOf(*r.store, evaluate);
        QVERIFY2(n.contains(QStringLiteral("inputs made by run %1").arg(train)), qPrintable(n));
    }

    void cleanupTestCase()
    {
        if (m_up)
            m_sshd.stop();
    }
};

QTEST_GUILESS_MAIN(TestPipelineNodes)
#include "TestPipelineNodes.moc"
