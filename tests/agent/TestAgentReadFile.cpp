// The agent's `read_file` request through AgentClient and the real
// trainyard-agent: a run's metric files read from offsets while they grow,
// and every way out of the run's directories refused.

#include "tests/support/TestSupport.h"
#include "core/nodes/AgentClient.h"
#include "core/nodes/LocalAgentTransport.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <optional>

using namespace ty;

namespace {

using test::await;
using test::waitUntil;

bool writeFile(const QString& path, const QByteArray& bytes, QIODevice::OpenMode mode = QIODevice::WriteOnly)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(mode) && f.write(bytes) == bytes.size();
}

} // namespace

class TestAgentReadFile final : public QObject {
    Q_OBJECT

    QTemporaryDir m_state, m_work, m_outside;
    std::unique_ptr<AgentClient> m_client;
    QString m_run = QStringLiteral("readfile-%1").arg(QCoreApplication::applicationPid());
    QString m_runDir;

    Result<AgentFileChunk> read(const QString& root, const QString& path, qint64 offset, qint64 max = 262144)
    {
        auto r = await<AgentFileChunk>([&](auto cb) { m_client->readFile(m_run, root, path, offset, max, cb); });
        if (!r)
            return fail(QStringLiteral("timeout"));
        return *r;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_client = std::make_unique<AgentClient>(
                std::make_unique<LocalAgentTransport>(test::agentPath(), m_state.path()));
        m_client->connectToAgent();
        QVERIFY(waitUntil([&] { return m_client->isReady(); }));
        AgentStartRequest req;
        req.run = m_run;
        req.argv = {QStringLiteral("sh"), QStringLiteral("-c"),
                QStringLiteral("printf '{\"step\": 1, \"loss\": 0.5}\\n' >> \"$TRAINYARD_METRICS_FILE\"")};
        req.workdir = m_work.path();
        auto started = await<AgentStartReply>([&](auto cb) { m_client->start(req, cb); });
        QVERIFY(started && *started);
        m_runDir = (*started)->runDir;
        QVERIFY(waitUntil([&] { return QFile::exists(m_runDir + QStringLiteral("/exit.json")); }));
    }

    void readsFromOffsetsAsTheFileGrows()
    {
        const QString csv = m_work.filePath(QStringLiteral("logs/version_0/metrics.csv"));
        QVERIFY(writeFile(csv, "step,acc\n1,0.5\n"));
        auto whole = read(QStringLiteral("workdir"), QStringLiteral("logs/version_0/metrics.csv"), 0);
        QVERIFY2(whole, qPrintable(whole ? QString() : whole.error().message));
        QCOMPARE(whole->data, QByteArray("step,acc\n1,0.5\n"));
        QCOMPARE(whole->size, qint64(15));
        QCOMPARE(whole->offset, qint64(0));
        QVERIFY(whole->mtimeMs > 0);
        QVERIFY(writeFile(csv, "2,0.75\n", QIODevice::Append));
        auto more = read(QStringLiteral("workdir"), QStringLiteral("logs/version_0/metrics.csv"), 15);
        QVERIFY(more);
        QCOMPARE(more->data, QByteArray("2,0.75\n"));
        QCOMPARE(more->size, qint64(22));
        // At the end: nothing, and the size tells a rewrite from a pause.
        auto end = read(QStringLiteral("workdir"), QStringLiteral("logs/version_0/metrics.csv"), 22);
        QVERIFY(end);
        QVERIFY(end->data.isEmpty());
        auto past = read(QStringLiteral("workdir"), QStringLiteral("logs/version_0/metrics.csv"), 100);
        QVERIFY(past);
        QCOMPARE(past->size, qint64(22));
        QVERIFY(past->data.isEmpty());
        // `max` caps a read; binary bytes come through unchanged.
        QByteArray binary;
        for (int i = 0; i < 1000; ++i)
            binary.append(char(i % 256));
        QVERIFY(writeFile(m_work.filePath(QStringLiteral("events.out.tfevents.1")), binary));
        auto part = read(QStringLiteral("workdir"), QStringLiteral("events.out.tfevents.1"), 10, 100);
        QVERIFY(part);
        QCOMPARE(part->data, binary.mid(10, 100));
    }

    void listingSkipsDirectoriesNoGlobReaches()
    {
        // A data folder with more entries than the agent ever visits
        // (kMaxListEntries = 100,000) beside the run's outputs: globs that
        // cannot reach it list everything else completely; `**` still walks it.
        const QString data = m_work.filePath(QStringLiteral("data"));
        QVERIFY(QDir().mkpath(data));
        for (int i = 0; i < 100005; ++i) {
            QFile f(data + QStringLiteral("/s%1.bin").arg(i));
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QVERIFY(writeFile(m_work.filePath(QStringLiteral("out/model.pt")), "w"));
        QVERIFY(writeFile(m_work.filePath(QStringLiteral("out/deep/x/state.json")), "{}"));
        const auto list = [&](const QStringList& globs) {
            return await<AgentFileList>([&](auto cb) { m_client->listFiles(m_run, globs, cb); }, 60000);
        };
        const auto names = [](const AgentFileList& l) {
            QStringList n;
            for (const AgentFileEntry& e : l.files)
                n << e.root + u':' + e.path;
            n.sort();
            return n;
        };
        auto outs = list({QStringLiteral("out/*"), QStringLiteral("out/**/*.json"), QStringLiteral("metrics.jsonl")});
        QVERIFY(outs && *outs);
        QVERIFY(!(*outs)->truncated);
        QCOMPARE(names(**outs),
                (QStringList{QStringLiteral("run_dir:metrics.jsonl"), QStringLiteral("workdir:out/deep/x/state.json"),
                        QStringLiteral("workdir:out/model.pt")}));
        auto all = list({QStringLiteral("**/*.json")});
        QVERIFY(all && *all);
        QVERIFY((*all)->truncated); // it had to walk data/: the limit still holds
        QVERIFY(QDir(data).removeRecursively());
    }

    void runDirHoldsTheMetricsFile()
    {
        auto r = read(QStringLiteral("run_dir"), QStringLiteral("metrics.jsonl"), 0);
        QVERIFY2(r, qPrintable(r ? QString() : r.error().message));
        QCOMPARE(r->data, QByteArray("{\"step\": 1, \"loss\": 0.5}\n"));
    }

    void pathsOutsideTheRunAreRefused_data()
    {
        QTest::addColumn<QString>("root");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("message");
        QTest::newRow("dotdot") << QStringLiteral("workdir") << QStringLiteral("logs/../../x")
                                << QStringLiteral("'..' component");
        QTest::newRow("absolute") << QStringLiteral("workdir") << QStringLiteral("/etc/passwd")
                                  << QStringLiteral("absolute");
        QTest::newRow("symlink out") << QStringLiteral("workdir") << QStringLiteral("escape.csv")
                                     << QStringLiteral("leads outside");
        QTest::newRow("symlinked dir out")
                << QStringLiteral("workdir") << QStringLiteral("outdir/secret.csv") << QStringLiteral("leads outside");
        QTest::newRow("missing") << QStringLiteral("workdir") << QStringLiteral("nope.csv")
                                 << QStringLiteral("no file 'nope.csv'");
        QTest::newRow("directory") << QStringLiteral("workdir") << QStringLiteral("logs")
                                   << QStringLiteral("not a regular file");
        QTest::newRow("bad root") << QStringLiteral("home") << QStringLiteral("x") << QStringLiteral("unknown root");
        QTest::newRow("empty") << QStringLiteral("workdir") << QString() << QStringLiteral("empty path");
    }

    void pathsOutsideTheRunAreRefused()
    {
        QFETCH(QString, root);
        QFETCH(QString, path);
        QFETCH(QString, message);
        QVERIFY(writeFile(m_outside.filePath(QStringLiteral("secret.csv")), "step,x\n1,2\n"));
        QFile::link(m_outside.filePath(QStringLiteral("secret.csv")), m_work.filePath(QStringLiteral("escape.csv")));
        QFile::link(m_outside.path(), m_work.filePath(QStringLiteral("outdir")));
        QDir().mkpath(m_work.filePath(QStringLiteral("logs")));
        auto r = read(root, path, 0);
        QVERIFY(!r);
        QVERIFY2(r.error().message.contains(message), qPrintable(r.error().message));
        QVERIFY2(r.error().message.contains(m_run), qPrintable(r.error().message));
    }

    void linkInsideTheWorkdirIsRead()
    {
        QVERIFY(writeFile(m_work.filePath(QStringLiteral("real/m.jsonl")), "{\"a\": 1}\n"));
        QFile::link(m_work.filePath(QStringLiteral("real/m.jsonl")), m_work.filePath(QStringLiteral("latest.jsonl")));
        auto r = read(QStringLiteral("workdir"), QStringLiteral("latest.jsonl"), 0);
        QVERIFY2(r, qPrintable(r ? QString() : r.error().message));
        QCOMPARE(r->data, QByteArray("{\"a\": 1}\n"));
    }

    void unknownRun()
    {
        auto r = await<AgentFileChunk>([&](auto cb) {
            m_client->readFile(
                    QStringLiteral("no-such-run"), QStringLiteral("workdir"), QStringLiteral("a"), 0, 10, cb);
        });
        QVERIFY(r && !*r);
        QVERIFY2(r->error().message.contains(QStringLiteral("no run \"no-such-run\"")), qPrintable(r->error().message));
    }
};

QTEST_GUILESS_MAIN(TestAgentReadFile)
#include "TestAgentReadFile.moc"
