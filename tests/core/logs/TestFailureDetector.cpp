#include "tests/support/TestSupport.h"
#include "core/logs/FailureDetector.h"
#include "core/logs/TerminalRenderer.h"

#include <QTest>

#include <random>
#include <tuple>

using namespace ty;

namespace {

FailureDetector detectBytes(const QByteArray& bytes)
{
    TerminalRenderer r;
    r.feed(bytes);
    r.finish();
    FailureDetector d;
    for (const ConsoleLine& l : r.takeCommitted())
        d.feed(l.text);
    return d;
}

FailureDetector detectFixture(const QString& name)
{
    return detectBytes(test::readFixture(QStringLiteral("gpu-workstation/logs/") + name));
}

} // namespace

class TestFailureDetector : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void oomFixtures()
    {
        for (const char* name : {"oom.log", "oom_midrun.log"}) {
            const FailureDetector d = detectFixture(QLatin1String(name));
            QCOMPARE(d.kind(), FailureDetector::Kind::CudaOutOfMemory);
            QCOMPARE(d.reason(), QStringLiteral("CUDA out of memory (torch.OutOfMemoryError)"));
            QVERIFY(!d.inTraceback());
        }
    }

    void healthyRunsHaveNoReason()
    {
        for (const char* name : {"plain_torch.log", "lightning_run.log", "lightning_tqdm.log", "nested_tqdm.log"}) {
            const FailureDetector d = detectFixture(QLatin1String(name));
            QCOMPARE(d.kind(), FailureDetector::Kind::None);
            QVERIFY2(d.reason().isEmpty(), qPrintable(d.reason()));
        }
    }

    void pythonException()
    {
        const FailureDetector d = detectBytes("epoch 1 loss=0.5\n"
                                              "Traceback (most recent call last):\n"
                                              "  File \"train.py\", line 10, in <module>\n"
                                              "    main()\n"
                                              "    ^^^^^^\n"
                                              "ValueError: shapes (3,) and (4,) not aligned\n");
        QCOMPARE(d.kind(), FailureDetector::Kind::PythonException);
        QCOMPARE(d.reason(), QStringLiteral("ValueError: shapes (3,) and (4,) not aligned"));
    }

    void chainedExceptionLastWins()
    {
        const FailureDetector d = detectBytes("Traceback (most recent call last):\n"
                                              "  File \"a.py\", line 1, in <module>\n"
                                              "KeyError: 'x'\n"
                                              "\n"
                                              "During handling of the above exception, another exception occurred:\n"
                                              "\n"
                                              "Traceback (most recent call last):\n"
                                              "  File \"a.py\", line 3, in <module>\n"
                                              "RuntimeError: could not recover\n");
        QCOMPARE(d.reason(), QStringLiteral("RuntimeError: could not recover"));
    }

    void unfinishedTraceback()
    {
        const FailureDetector d
                = detectBytes("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n");
        QCOMPARE(d.kind(), FailureDetector::Kind::PythonException);
        QCOMPARE(d.reason(), QStringLiteral("Python traceback"));
        QVERIFY(d.inTraceback());
    }

    void nccl()
    {
        const FailureDetector d = detectBytes(
                "step 5 loss=0.1\n"
                "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error, NCCL version 2.21.5\n");
        QCOMPARE(d.kind(), FailureDetector::Kind::Nccl);
        QVERIFY(d.reason().startsWith(QStringLiteral("NCCL error: torch.distributed.DistBackendError")));
    }

    void killed()
    {
        for (const QByteArray& line : {QByteArray("Killed\n"),
                     QByteArray("bash: line 1:  4242 Killed                  python3 train.py\n")}) {
            const FailureDetector d = detectBytes("epoch 1 loss=0.5\n" + line);
            QCOMPARE(d.kind(), FailureDetector::Kind::Killed);
            QCOMPARE(d.reason(), QStringLiteral("Killed (SIGKILL, likely the kernel's out-of-memory killer)"));
        }
        // Mentions of the word in prose are not a kill.
        QCOMPARE(detectBytes("Killed processes are restarted by the launcher? no\n").kind(),
                FailureDetector::Kind::None);
    }

    void everyPatternOutsideATraceback_data()
    {
        // One line per pattern, as short as it can be: the detector rules
        // lines out by the pairs of units they hold before it searches.
        QTest::addColumn<QString>("line");
        QTest::addColumn<int>("kind");
        const int oom = int(FailureDetector::Kind::CudaOutOfMemory), nccl = int(FailureDetector::Kind::Nccl),
                  killed = int(FailureDetector::Kind::Killed), none = int(FailureDetector::Kind::None);
        QTest::newRow("CUDA out of memory") << QStringLiteral("error: CUDA out of memory. tried 2 gib") << oom;
        QTest::newRow("OutOfMemoryError") << QStringLiteral("torch.OutOfMemoryError: x") << oom;
        QTest::newRow("CUBLAS") << QStringLiteral("CUBLAS_STATUS_ALLOC_FAILED when calling cublas") << oom;
        QTest::newRow("cudaErrorMemoryAllocation") << QStringLiteral("cudaErrorMemoryAllocation") << oom;
        QTest::newRow("CUDA error: out of memory") << QStringLiteral("CUDA error: out of memory") << oom;
        QTest::newRow("NCCL error") << QStringLiteral("NCCL error in: x.cpp:1") << nccl;
        QTest::newRow("ncclInternalError") << QStringLiteral("ncclInternalError: internal check failed") << nccl;
        QTest::newRow("ncclSystemError") << QStringLiteral("ncclSystemError: system call failed") << nccl;
        QTest::newRow("ncclUnhandledCudaError") << QStringLiteral("ncclUnhandledCudaError: call failed") << nccl;
        QTest::newRow("ncclInvalidUsage") << QStringLiteral("ncclInvalidUsage: bad rank") << nccl;
        QTest::newRow("ncclRemoteError") << QStringLiteral("ncclRemoteError: peer gone") << nccl;
        QTest::newRow("NCCL WARN") << QStringLiteral("host:1:2 NCCL WARN net/ib : got completion") << nccl;
        QTest::newRow("ProcessGroupNCCL watchdog")
                << QStringLiteral("ProcessGroupNCCL's watchdog caught collective operation timeout") << nccl;
        QTest::newRow("DistBackendError") << QStringLiteral("torch.distributed.DistBackendError: x") << nccl;
        QTest::newRow("Killed") << QStringLiteral("Killed") << killed;
        QTest::newRow("pattern at the very end") << QStringLiteral("raise torch.distributed.DistBackendError") << nccl;
        QTest::newRow("anchor too near the start") << QStringLiteral("rError ncc oom") << none;
        QTest::newRow("no capitals") << QStringLiteral("out of memory? nccl is fine, killed nothing") << none;
        QTest::newRow("capitals, no pattern")
                << QStringLiteral("Epoch 3: Memory 40 GB, NCCL_DEBUG=INFO, Kernel ok") << none;
    }

    void everyPatternOutsideATraceback()
    {
        QFETCH(QString, line);
        QFETCH(int, kind);
        // Shifted by 0..17 leading blanks: the pairs are looked for eight
        // UTF-16 units at a time, so each lands in every position of a block
        // and in the tail.
        for (int pad = 0; pad <= 17; ++pad) {
            FailureDetector d;
            d.feed(u"step 1 loss=0.5");
            d.feed(QString(QString(pad, u' ') + line));
            QVERIFY2(int(d.kind()) == kind,
                    qPrintable(QStringLiteral("%1 blanks first: kind %2").arg(pad).arg(int(d.kind()))));
        }
    }

    // Each pattern inside random base64 (lines of hashes and encoded blobs,
    // where every capital and most single characters occur), at every
    // offset of an SSE2 block and cut short: found exactly when whole.
    void patternsInRandomText()
    {
        static constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        std::mt19937 rng(27);
        const auto noise = [&](int n) {
            QString t;
            for (int i = 0; i < n; ++i)
                t += QChar(kBase64[rng() % 64]);
            return t;
        };
        const int oom = int(FailureDetector::Kind::CudaOutOfMemory), nccl = int(FailureDetector::Kind::Nccl),
                  killed = int(FailureDetector::Kind::Killed);
        // Each with the pair of units its search is anchored on.
        const QList<std::tuple<QString, int, QString>> patterns{
                {QStringLiteral(" CUDA out of memory "), oom, QStringLiteral("ry")},
                {QStringLiteral(" OutOfMemoryError "), oom, QStringLiteral("ry")},
                {QStringLiteral(" CUBLAS_STATUS_ALLOC_FAILED "), oom, QStringLiteral("BL")},
                {QStringLiteral(" ncclRemoteError "), nccl, QStringLiteral("cl")},
                {QStringLiteral(" NCCL WARN "), nccl, QStringLiteral("NC")},
                {QStringLiteral(" DistBackendError "), nccl, QStringLiteral("Ba")},
                {QStringLiteral(": 1234 Killed "), killed, QStringLiteral("Ki")}};
        int found = 0;
        for (const auto& [pattern, kind, pair] : patterns) {
            // The pair alone just before the pattern, often in the same
            // eight-unit step: a first hit that is no match must not hide
            // the one that is.
            for (int gap = 0; gap <= 8; ++gap) {
                const QString line = noise(int(rng() % 9)) + pair + noise(gap) + pattern;
                FailureDetector d;
                d.feed(line);
                QVERIFY2(int(d.kind()) == kind, qPrintable(line));
            }
            for (int before = 0; before <= 24; ++before) {
                const QString line = noise(before) + pattern + noise(int(rng() % 40));
                FailureDetector d;
                d.feed(line);
                QVERIFY2(int(d.kind()) == kind, qPrintable(line));
                ++found;
                // One unit short of the pattern: nothing (the noise holds none).
                const QString cut = noise(before) + pattern.left(pattern.size() - 2);
                FailureDetector e;
                e.feed(cut);
                QVERIFY2(e.kind() == FailureDetector::Kind::None, qPrintable(cut));
            }
        }
        QCOMPARE(found, 7 * 25);
        // Lines of noise alone, and the patterns' pairs repeated with the
        // rest wrong: none.
        for (int i = 0; i < 2000; ++i) {
            FailureDetector d;
            d.feed(QString(noise(10) + QLatin1Char(' ') + noise(int(rng() % 120))));
            QVERIFY(d.kind() == FailureDetector::Kind::None);
        }
        FailureDetector d;
        d.feed(u"ryryryry BLBLBL NCNCNC clclcl BaBaBa KiKiKi NCCX ncclRemoteErro DistBackendErro CUBLA emor");
        QCOMPARE(d.kind(), FailureDetector::Kind::None);
    }

    void mostSpecificWins()
    {
        FailureDetector d;
        d.feed(u"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB");
        d.feed(u"Killed");
        QCOMPARE(d.kind(), FailureDetector::Kind::CudaOutOfMemory);
        QCOMPARE(d.reason(), QStringLiteral("CUDA out of memory"));
        d.reset();
        QCOMPARE(d.kind(), FailureDetector::Kind::None);
    }
};

QTEST_GUILESS_MAIN(TestFailureDetector)
#include "TestFailureDetector.moc"
