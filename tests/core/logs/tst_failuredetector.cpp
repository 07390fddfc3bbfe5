#include "TestSupport.h"
#include "logs/FailureDetector.h"
#include "logs/TerminalRenderer.h"

#include <QTest>

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

class TestFailureDetector : public QObject
{
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
        const FailureDetector d = detectBytes("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n");
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
        for (const QByteArray& line : {QByteArray("Killed\n"), QByteArray("bash: line 1:  4242 Killed                  python3 train.py\n")}) {
            const FailureDetector d = detectBytes("epoch 1 loss=0.5\n" + line);
            QCOMPARE(d.kind(), FailureDetector::Kind::Killed);
            QCOMPARE(d.reason(), QStringLiteral("Killed (SIGKILL, likely the kernel's out-of-memory killer)"));
        }
        // Mentions of the word in prose are not a kill.
        QCOMPARE(detectBytes("Killed processes are restarted by the launcher? no\n").kind(), FailureDetector::Kind::None);
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
#include "tst_failuredetector.moc"
