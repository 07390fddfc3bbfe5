// classifyRunEnd (core/runs/FailureClassifier.h): real consoles from
// tests/data through the same renderer and detector the engine uses, with the
// exit status the capture had, and each rule's precedence.
#include "tests/support/TestSupport.h"
#include "core/logs/FailureDetector.h"
#include "core/logs/TerminalRenderer.h"
#include "core/runs/FailureClassifier.h"

#include <QTest>

#include <csignal>

using namespace ty;

namespace {

// A run's end with the console fixture `relative` (under tests/data) fed as
// the engine feeds it (TerminalRenderer's committed lines, in order).
RunEnd endWithConsole(const QString& relative)
{
    TerminalRenderer r;
    r.feed(test::readFixture(relative));
    r.finish();
    FailureDetector d;
    for (const ConsoleLine& l : r.takeCommitted())
        d.feed(l.text);
    RunEnd end;
    end.consoleKind = d.kind();
    end.consoleReason = d.reason();
    return end;
}

} // namespace

class TestFailureClassifier : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void namesRoundTrip()
    {
        for (int k = int(FailureKind::None); k <= int(FailureKind::Other); ++k) {
            const auto kind = FailureKind(k);
            QCOMPARE(failureKindFromName(failureKindName(kind)), std::optional<FailureKind>(kind));
            QCOMPARE(failureKindLabel(kind).isEmpty(), kind == FailureKind::None);
        }
        // The stored names are a format: these never change.
        QCOMPARE(failureKindName(FailureKind::CudaOutOfMemory), QStringLiteral("cuda_oom"));
        QCOMPARE(failureKindName(FailureKind::PythonTraceback), QStringLiteral("python_traceback"));
        QCOMPARE(failureKindName(FailureKind::TimeLimit), QStringLiteral("time_limit"));
        QCOMPARE(failureKindName(FailureKind::None), QString());
        QCOMPARE(failureKindFromName(u"from_the_future"), std::nullopt);
    }

    void cudaOutOfMemoryFixtures()
    {
        // Captured on the H200 workstation: both exited with code 1.
        for (const char* name : {"gpu-workstation/logs/oom.log", "gpu-workstation/logs/oom_midrun.log"}) {
            RunEnd end = endWithConsole(QLatin1String(name));
            end.exitCode = 1;
            QCOMPARE(classifyRunEnd(end),
                    (FailureVerdict{FailureKind::CudaOutOfMemory,
                            QStringLiteral("CUDA out of memory (torch.OutOfMemoryError)")}));
        }
    }

    void pythonTracebackFixture()
    {
        RunEnd end = endWithConsole(QStringLiteral("debian-cpu/logs/python_traceback.log"));
        end.exitCode = 1;
        QCOMPARE(classifyRunEnd(end),
                (FailureVerdict{
                        FailureKind::PythonTraceback, QStringLiteral("ValueError: shapes (3,) and (4,) not aligned")}));
    }

    void shellKilledFixtureIsOnlyAGuessOfTheOomKiller()
    {
        RunEnd end = endWithConsole(QStringLiteral("debian-cpu/logs/sigkill_shell.log"));
        end.exitCode = 137;
        const FailureVerdict v = classifyRunEnd(end);
        QCOMPARE(v.kind, FailureKind::Signal);
        QCOMPARE(v.detail,
                QStringLiteral(
                        "a process of the run was killed by SIGKILL (its console says \"Killed\"; the OOM killer?)"));
    }

    void healthyConsolesFollowTheExitStatus()
    {
        for (const char* name : {"gpu-workstation/logs/plain_torch.log", "debian-cpu/logs/digits_example.log"}) {
            RunEnd end = endWithConsole(QLatin1String(name));
            end.exitCode = 0;
            QCOMPARE(classifyRunEnd(end), FailureVerdict{});
            end.exitCode = 3;
            QCOMPARE(classifyRunEnd(end), (FailureVerdict{FailureKind::ExitCode, QStringLiteral("exit code 3")}));
            end.exitCode = 130; // a shell's child interrupted
            QCOMPARE(classifyRunEnd(end),
                    (FailureVerdict{FailureKind::ExitCode,
                            QStringLiteral("exit code 130 (128 + SIGINT: a shell's child killed by it?)")}));
        }
    }

    void ncclLine()
    {
        // No NCCL capture is in tests/data (the workstation has one GPU):
        // PyTorch 2.x's DistBackendError line as ProcessGroupNCCL words it.
        TerminalRenderer r;
        r.feed("step 5 loss=0.1\ntorch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
               "unhandled cuda error, NCCL version 2.21.5\n");
        r.finish();
        FailureDetector d;
        for (const ConsoleLine& l : r.takeCommitted())
            d.feed(l.text);
        RunEnd end;
        end.consoleKind = d.kind();
        end.consoleReason = d.reason();
        end.exitCode = 1;
        const FailureVerdict v = classifyRunEnd(end);
        QCOMPARE(v.kind, FailureKind::NcclError);
        QVERIFY2(v.detail.startsWith(QStringLiteral("NCCL error: torch.distributed.DistBackendError: NCCL error in:")),
                qPrintable(v.detail));
    }

    void killedBySignals()
    {
        RunEnd end;
        end.signal = SIGSEGV;
        QCOMPARE(classifyRunEnd(end),
                (FailureVerdict{FailureKind::Signal, QStringLiteral("killed by SIGSEGV (signal 11)")}));
        end.signal = SIGKILL;
        QCOMPARE(classifyRunEnd(end),
                (FailureVerdict{FailureKind::Signal, QStringLiteral("killed by SIGKILL (signal 9; the OOM killer?)")}));
        end.oomKillEvidence = true;
        QCOMPARE(classifyRunEnd(end),
                (FailureVerdict{FailureKind::OomKilled,
                        QStringLiteral("killed by the kernel's out-of-memory killer (SIGKILL)")}));
        // What the console says explains a kill better than the signal alone.
        RunEnd oom = endWithConsole(QStringLiteral("gpu-workstation/logs/oom.log"));
        oom.signal = SIGABRT;
        QCOMPARE(classifyRunEnd(oom).kind, FailureKind::CudaOutOfMemory);
    }

    void engineDecisionsComeFirst()
    {
        RunEnd end = endWithConsole(QStringLiteral("debian-cpu/logs/python_traceback.log"));
        end.signal = SIGTERM;
        end.cancelled = true;
        QCOMPARE(classifyRunEnd(end), (FailureVerdict{FailureKind::Cancelled, QStringLiteral("cancelled")}));
        end.timeLimitHit = true; // the engine stops a run at its limit through a cancel
        end.timeLimitSec = 5400;
        QCOMPARE(classifyRunEnd(end),
                (FailureVerdict{FailureKind::TimeLimit, QStringLiteral("stopped at its time limit of 1h30m")}));
        RunEnd lost;
        lost.lost = true;
        lost.lostError = QStringLiteral("supervisor gone (node rebooted?)");
        QCOMPARE(classifyRunEnd(lost),
                (FailureVerdict{FailureKind::NodeLost, QStringLiteral("lost: supervisor gone (node rebooted?)")}));
        QCOMPARE(classifyRunEnd(RunEnd{}),
                (FailureVerdict{FailureKind::Other, QStringLiteral("ended without an exit status")}));
    }

    // A run the engine stopped for another (issue #25) is preempted, not
    // cancelled, and not succeeded when it trapped the signal and exited 0.
    void preemptedIsNeitherCancelledNorSucceeded()
    {
        RunEnd end;
        end.exitCode = 0;
        end.cancelled = true;
        end.preempted = true;
        end.preemptDetail = QStringLiteral("preempted by run 15 (priority 10) on ws1");
        QCOMPARE(classifyRunEnd(end),
                (FailureVerdict{FailureKind::Preempted, QStringLiteral("preempted by run 15 (priority 10) on ws1")}));
        end.exitCode.reset();
        end.signal = SIGKILL; // killed after its grace
        end.preemptDetail.clear();
        QCOMPARE(classifyRunEnd(end),
                (FailureVerdict{FailureKind::Preempted, QStringLiteral("preempted by a run of higher priority")}));
    }
};

QTEST_GUILESS_MAIN(TestFailureClassifier)
#include "TestFailureClassifier.moc"
