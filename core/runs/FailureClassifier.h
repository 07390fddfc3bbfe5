#pragma once

#include "core/common/FailureKind.h"
#include "core/logs/FailureDetector.h"

#include <QString>

#include <optional>

namespace ty {

// What the run engine knows when a run has ended (RunEngine::finishRun).
// Plain values, no I/O; any thread.
struct RunEnd {
    std::optional<int> exitCode; // exited normally with this code
    std::optional<int> signal;   // killed by this signal (Linux numbering)
    bool cancelled = false;      // the agent says it was cancelled, or this engine asked it to be
    bool timeLimitHit = false;   // this engine stopped it because its time_limit passed
    bool preempted = false;      // this engine stopped it for another run (core/sched/Preemption.h)
    QString preemptDetail;       // the words for that: "preempted by run 15 (priority 10) on ws1"
    qint64 timeLimitSec = 0;     // the spec's time_limit, for the detail (0: not given)
    QString stopDetail;          // stopped at another bound (its deadline, max_run_time): the detail instead
    bool lost = false;           // the agent's supervisor vanished without an exit status (node rebooted...)
    QString lostError;           // the agent's words for that
    // A Slurm batch job's final state word (COMPLETED, TIMEOUT,
    // OUT_OF_MEMORY, ...; core/slurm/SlurmText.h); empty for other runs.
    QString slurmState;
    // Evidence that the kernel's OOM killer sent the SIGKILL (the agent
    // reading the run's cgroup memory.events `oom_kill`, or the kernel log).
    // No agent reports it yet: false, and a SIGKILL is then only *guessed*
    // to be the OOM killer, said so with a question mark, never asserted.
    bool oomKillEvidence = false;
    // What FailureDetector found in the committed console lines.
    FailureDetector::Kind consoleKind = FailureDetector::Kind::None;
    QString consoleReason;
};

struct FailureVerdict {
    FailureKind kind = FailureKind::None; // None: the run succeeded
    QString detail;                       // one line, empty for None
    bool operator==(const FailureVerdict&) const = default;
};

// Decides why a run ended. Pure. The first rule that applies wins:
//  0. Slurm's final state, for a batch job, where it says more than an exit status:
//     TIMEOUT, DEADLINE -> TimeLimit "Slurm stopped it at its time limit (TIMEOUT)"
//     OUT_OF_MEMORY     -> OomKilled "Slurm says it ran out of memory (OUT_OF_MEMORY)"
//     NODE_FAIL, BOOT_FAIL -> NodeLost "its Slurm node failed (NODE_FAIL)"
//     PREEMPTED         -> Preempted "preempted by Slurm (PREEMPTED)"
//     (CANCELLED comes as `cancelled` from the agent: rule 2)
//  1. timeLimitHit                     -> TimeLimit  "stopped at its time limit of 1h30m"
//     (checked before cancelled: the engine stops it through a cancel)
//  1b. preempted                       -> Preempted  preemptDetail, else "preempted by a run of higher
//                                                     priority" (before cancelled, as above, and before a
//                                                     clean exit: a run that traps the signal and exits 0
//                                                     did not finish its work)
//  2. cancelled                        -> Cancelled  "cancelled"
//  3. exit code 0 (and no signal)      -> None       (succeeded)
//  4. lost                             -> NodeLost   "lost: <agent's error>"
//  5. console: CUDA out of memory      -> CudaOutOfMemory, FailureDetector's reason
//     (PyTorch's "CUDA out of memory" / torch.OutOfMemoryError text,
//     cuBLAS's CUBLAS_STATUS_ALLOC_FAILED, the CUDA runtime's
//     cudaErrorMemoryAllocation / "CUDA error: out of memory")
//  6. console: NCCL error              -> NcclError, "NCCL error: <the line>"
//     (NCCL's "NCCL error" / ncclUnhandledCudaError... result names,
//     "NCCL WARN", PyTorch's ProcessGroupNCCL watchdog and DistBackendError)
//  7. console: Python traceback        -> PythonTraceback, the exception line
//     ("ValueError: x"; CPython's "Traceback (most recent call last):" block)
//  8. SIGKILL with oomKillEvidence     -> OomKilled  "killed by the kernel's out-of-memory killer (SIGKILL)"
//  9. another signal, or SIGKILL       -> Signal     "killed by SIGSEGV (signal 11)",
//     without evidence                               "killed by SIGKILL (signal 9; the OOM killer?)"
// 10. console: a shell's "Killed" line -> Signal     "a process of the run was killed by SIGKILL
//                                                     (its console says \"Killed\"; the OOM killer?)"
// 11. a non-zero exit code             -> ExitCode   "exit code 3"; codes 129..192 add
//                                                     "(128 + SIGKILL: a shell's child killed by it?)"
// 12. nothing known                    -> Other      "ended without an exit status"
FailureVerdict classifyRunEnd(const RunEnd& end);

} // namespace ty
