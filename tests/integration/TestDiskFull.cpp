#include "tests/support/TestSupport.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

using namespace ty;

// A run whose result database (and so its console copy) is on a disk that
// fills up while the run prints: a real tmpfs, filled with a ballast file
// until writes fail with ENOSPC, then emptied again. The run goes on on the
// node the whole time; once space is back, ingestion must resume from the
// last byte held, so the local copy ends byte-identical to the node's console
// and every metric point is stored exactly once.
class TestDiskFull final : public QObject {
    Q_OBJECT

    static bool runCommand(const QString& program, const QStringList& args, QString* output = nullptr)
    {
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(program, args);
        if (!p.waitForFinished(20000))
            return false;
        if (output)
            *output = QString::fromLocal8Bit(p.readAll()).trimmed();
        return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    }

    // Writes zeros to `path` until the file system is full; the errno that
    // stopped it (ENOSPC expected).
    static int fillUp(const QString& path)
    {
        const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
            return errno;
        const QByteArray block(64 * 1024, '\0');
        int error = 0;
        for (qint64 size = block.size(); size >= 512 && error == 0; size /= 2) {
            for (;;) {
                const ssize_t n = ::write(fd, block.constData(), std::size_t(size));
                if (n == ssize_t(size))
                    continue;
                if (n < 0 && errno != ENOSPC)
                    error = errno;
                break;
            }
        }
        ::close(fd);
        return error ? error : ENOSPC;
    }

private Q_SLOTS:
    void ingestionResumesWhenSpaceReturns()
    {
        if (::geteuid() != 0)
            QSKIP("needs root to mount a small tmpfs (CI runs the tests as root)");
        QTemporaryDir base;
        QVERIFY(base.isValid());
        const QString mnt = base.filePath(QStringLiteral("full"));
        QVERIFY(QDir().mkpath(mnt));
        QString why;
        if (!runCommand(QStringLiteral("mount"),
                    {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"), QStringLiteral("size=16m"),
                            QStringLiteral("tmpfs"), mnt},
                    &why))
            QSKIP(qPrintable(QStringLiteral("cannot mount a tmpfs on %1: %2").arg(mnt, why)));
        const auto unmount = qScopeGuard([&mnt] {
            if (!runCommand(QStringLiteral("umount"), {mnt}))
                runCommand(QStringLiteral("umount"), {QStringLiteral("-l"), mnt});
        });

        const QString dbPath = mnt + QStringLiteral("/trainyard.db");
        const QString stateDir = base.filePath(QStringLiteral("state")); // the node's side: not on the small disk
        const QString go1 = base.filePath(QStringLiteral("go1"));
        const QString go2 = base.filePath(QStringLiteral("go2"));
        const QString script = base.filePath(QStringLiteral("steps.py"));
        // 2000 steps, the file go1, 38000 steps (0.9 MB, while the disk is
        // full), the file go2, 2000 steps more.
        test::writeFile(script,
                QStringLiteral("import os, sys, time\n"
                               "def part(a, b):\n"
                               "    for i in range(a, b + 1):\n"
                               "        sys.stdout.write('step=%d loss=%.6f\\n' % (i, 1.0 / i))\n"
                               "    sys.stdout.flush()\n"
                               "def wait(p):\n"
                               "    while not os.path.exists(p):\n"
                               "        time.sleep(0.02)\n"
                               "part(1, 2000)\nwait('%1')\npart(2001, 40000)\nwait('%2')\npart(40001, 42000)\n")
                        .arg(go1, go2)
                        .toUtf8());

        const QString ballast = mnt + QStringLiteral("/ballast");
        bool stalled = false;
        RunRecord run;
        {
            auto store = ResultStore::open(dbPath);
            QVERIFY2(store, store ? "" : qPrintable(store.error().message));
            RunEngine engine(store->get(), dbPath);
            engine.addLocalNode(test::agentPath(), stateDir);
            QVERIFY(engine.acquireIngestion());
            QSignalSpy stalls(&engine, &RunEngine::ingestionStalled);
            auto spec = parseJobSpec(QStringLiteral("name: disk-full\ncommand: \"python3 -u '%1'\"\n").arg(script),
                    QStringLiteral("test.yaml"), base.path());
            QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
            const auto id = engine.submit(*spec);
            QVERIFY2(id, id ? "" : qPrintable(id.error().message));
            // Part 1 is stored (its last line may wait for the next one: the
            // terminal could still redraw it).
            QVERIFY2(test::waitUntil(
                             [&] { return (*store)->metrics(*id, QStringLiteral("loss")).size() >= 1999; }, 20000),
                    qPrintable(QStringLiteral("%1 points stored; run %2, %3, %4")
                                       .arg((*store)->metrics(*id, QStringLiteral("loss")).size())
                                       .arg(runStateName((*store)->run(*id)->state), (*store)->run(*id)->failureReason,
                                               QString::fromUtf8(
                                                       test::readFile((*store)->run(*id)->consolePath).left(300)))));

            QCOMPARE(fillUp(ballast), ENOSPC);
            test::writeFile(go1, {});
            const auto nodeRun = [&] { return *(*store)->run(*id); };
            const QString nodeConsole
                    = stateDir + QStringLiteral("/runs/") + nodeRun().agentRunId + QStringLiteral("/console.log");
            // The node has all of part 2 while nothing more can be stored here.
            QVERIFY(test::waitUntil([&] { return test::readFile(nodeConsole).count('\n') == 40000; }, 30000));
            stalled = test::waitUntil([&] { return !stalls.isEmpty(); }, 10000);
            QVERIFY(QFile::remove(ballast));
            test::writeFile(go2, {});
            QVERIFY(test::waitUntil([&] { return isTerminal(nodeRun().state); }, 60000));
            QVERIFY((*store)->flush());
            run = nodeRun();
            const QByteArray expected = test::readFile(nodeConsole);
            QCOMPARE(expected.count('\n'), 42000);
            QVERIFY(expected.endsWith("step=42000 loss=0.000024\n"));

            // The local copy is the node's console, byte for byte.
            const QByteArray copy = test::readFile(run.consolePath);
            QCOMPARE(copy.size(), expected.size());
            QVERIFY(copy == expected);
            QCOMPARE(run.consoleOffset, qint64(expected.size()));
            QCOMPARE(run.state, RunState::Succeeded);
            // Every point once, none superseded (no step went back).
            const QList<MetricPoint> all = (*store)->allMetrics(*id, QStringLiteral("loss"));
            QCOMPARE(all.size(), 42000);
            for (int i = 0; i < all.size(); ++i) {
                QCOMPARE(all[i].step, qint64(i + 1));
                QVERIFY(!all[i].superseded);
            }
            QCOMPARE((*store)->metricRestarts(*id).size(), 0);

            // The user is told, with the system's reason.
            QVERIFY2(stalled, "no ingestionStalled() while the disk was full");
            QVERIFY2(stalls.first().at(1).toString().contains(QStringLiteral("No space left on device")),
                    qPrintable(stalls.first().at(1).toString()));
            QStringList notices;
            for (const RunNotice& n : (*store)->notices(*id))
                notices << n.text;
            QVERIFY2(notices.filter(QStringLiteral("No space left on device")).size() >= 1,
                    qPrintable(notices.join(u'\n')));
        }
    }
};

QTEST_GUILESS_MAIN(TestDiskFull)
#include "TestDiskFull.moc"
