#include "FailureClassifier.h"

#include <csignal>
#include <cstring>

namespace ty {
namespace {

// "SIGSEGV" for 11; "signal 77" for a number glibc has no name for.
QString signalName(int sig)
{
    if (const char* abbrev = sigabbrev_np(sig))
        return QStringLiteral("SIG") + QString::fromLatin1(abbrev);
    return QStringLiteral("signal %1").arg(sig);
}

// "1h30m", "45s", "2h".
QString durationText(qint64 sec)
{
    const qint64 h = sec / 3600, m = (sec % 3600) / 60, s = sec % 60;
    QString out;
    if (h)
        out += QStringLiteral("%1h").arg(h);
    if (m)
        out += QStringLiteral("%1m").arg(m);
    if (s || out.isEmpty())
        out += QStringLiteral("%1s").arg(s);
    return out;
}

} // namespace

FailureVerdict classifyRunEnd(const RunEnd& end)
{
    using CK = FailureDetector::Kind;
    if (!end.slurmState.isEmpty()) {
        const QString& st = end.slurmState;
        if (st == u"TIMEOUT" || st == u"DEADLINE")
            return {FailureKind::TimeLimit, QStringLiteral("Slurm stopped it at its time limit (%1)").arg(st)};
        if (st == u"OUT_OF_MEMORY")
            return {FailureKind::OomKilled, QStringLiteral("Slurm says it ran out of memory (OUT_OF_MEMORY)")};
        if (st == u"NODE_FAIL" || st == u"BOOT_FAIL")
            return {FailureKind::NodeLost, QStringLiteral("its Slurm node failed (%1)").arg(st)};
        if (st == u"PREEMPTED")
            return {FailureKind::Preempted, QStringLiteral("preempted by Slurm (PREEMPTED)")};
    }
    if (end.timeLimitHit)
        return {FailureKind::TimeLimit,
                !end.stopDetail.isEmpty() ? end.stopDetail
                        : end.timeLimitSec > 0
                        ? QStringLiteral("stopped at its time limit of %1").arg(durationText(end.timeLimitSec))
                        : QStringLiteral("stopped at its time limit")};
    if (end.preempted)
        return {FailureKind::Preempted,
                end.preemptDetail.isEmpty() ? QStringLiteral("preempted by a run of higher priority")
                                            : end.preemptDetail};
    if (end.cancelled)
        return {FailureKind::Cancelled, QStringLiteral("cancelled")};
    if (end.exitCode && *end.exitCode == 0 && !end.signal)
        return {};
    if (end.lost)
        return {FailureKind::NodeLost,
                end.lostError.isEmpty() ? QStringLiteral("lost: its supervisor on the node vanished")
                                        : QStringLiteral("lost: %1").arg(end.lostError)};
    if (end.consoleKind == CK::CudaOutOfMemory)
        return {FailureKind::CudaOutOfMemory, end.consoleReason};
    if (end.consoleKind == CK::Nccl)
        return {FailureKind::NcclError, end.consoleReason};
    if (end.consoleKind == CK::PythonException)
        return {FailureKind::PythonTraceback, end.consoleReason};
    if (end.signal) {
        if (*end.signal == SIGKILL && end.oomKillEvidence)
            return {FailureKind::OomKilled, QStringLiteral("killed by the kernel's out-of-memory killer (SIGKILL)")};
        if (*end.signal == SIGKILL)
            return {FailureKind::Signal, QStringLiteral("killed by SIGKILL (signal 9; the OOM killer?)")};
        return {FailureKind::Signal,
                QStringLiteral("killed by %1 (signal %2)").arg(signalName(*end.signal)).arg(*end.signal)};
    }
    if (end.consoleKind == CK::Killed)
        return {FailureKind::Signal,
                QStringLiteral(
                        "a process of the run was killed by SIGKILL (its console says \"Killed\"; the OOM killer?)")};
    if (end.exitCode) {
        QString detail = QStringLiteral("exit code %1").arg(*end.exitCode);
        // A shell reports a child killed by signal n as 128 + n.
        if (*end.exitCode > 128 && *end.exitCode <= 128 + 64)
            detail += QStringLiteral(" (128 + %1: a shell's child killed by it?)").arg(signalName(*end.exitCode - 128));
        return {FailureKind::ExitCode, detail};
    }
    return {FailureKind::Other, QStringLiteral("ended without an exit status")};
}

} // namespace ty
