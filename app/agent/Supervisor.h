#pragma once

// Detached runs. launchSupervised() forks a supervisor that calls setsid(),
// forks the command into its own process group (stdin /dev/null, stdout and
// stderr two pipes), writes run.json, and then copies both pipes to
// console.log in the order their bytes arrive, recording each stderr chunk in
// the sidecar console.stderr (StderrRanges.h) first. Meanwhile: on SIGUSR1 it reads cancel.json and sends SIGTERM to the whole group,
// SIGKILL after grace_ms; when the main process ends on its own, processes
// left in its group get SIGTERM, then SIGKILL after the leftover grace. Once
// the group is empty it writes exit.json (tmp + rename) and exits. The
// supervisor does not depend on the agent: it survives the agent, the SSH
// connection and Trainyard ending.
//
// Output. Neither stream is a tty (as before). Order between the two streams
// is the order the supervisor reads them: one read (<= 64 KiB) per ready pipe
// per turn, stdout first, so bytes written to both within one wake-up of the
// supervisor (microseconds) may be swapped; within a stream order is exact.
// If the supervisor is killed, a keeper process (named `ty-keeper`, holding
// the pipes' read ends too) takes over the copying, so the run never gets
// SIGPIPE; only exit.json is then missing (the run is reported lost). If
// both are killed, the run's next write gets SIGPIPE, as with a closed
// terminal.

#include "Framing.h"

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace ty::agent {

struct StartPlan {
    std::string run;
    std::string runDir;
    std::string console;                 // <runDir>/console.log
    std::string stderrRangesPath;        // <runDir>/console.stderr (StderrRanges.h)
    std::string runJsonPath;             // <runDir>/run.json
    std::string exitJsonPath;            // <runDir>/exit.json
    std::string cancelJsonPath;          // <runDir>/cancel.json
    std::string workdir;                 // absolute, checked by the caller
    std::vector<std::string> argv;       // exec'd as is; argv[0] searched in PATH (of `env`)
    std::vector<std::string> env;        // complete environment, "KEY=VALUE", in order
    Json runJson;                        // request fields; pid, pgid, supervisor_pid, started_ms added
    std::vector<std::string> claimFiles; // GPU claim files removed when the run has ended
    int leftoverGraceMs = 10000;         // grace for processes left in the group after the main one ends
};

struct StartResult {
    pid_t supervisorPid = 0;
    pid_t pid = 0;  // the command's pid
    pid_t pgid = 0; // its process group (== pid)
    std::int64_t startedMs = 0;
};

// A supervisor forked and not yet heard from: it writes one line to
// `reportFd` ("OK <pid> <pgid> <started_ms>" once the command runs and
// run.json is written, or "ERR <what>") and closes it.
struct SupervisorLaunch {
    pid_t supervisorPid = 0;
    int reportFd = -1; // read end, close-on-exec; the caller closes it
};

// Forks the supervisor and returns at once (one fork, about a millisecond
// here); the caller reads the report, e.g. in its poll loop, and hands the
// line to startReport(). The supervisor is a child of the caller, who must
// reap it (SIGCHLD). Error: "run <id>: <what failed>".
std::expected<SupervisorLaunch, std::string> launchSupervised(const StartPlan& plan);

// The umask a run's command gets (the agent's own is 077, so its files are
// private): the one the agent was started with. Set once in main().
void setRunUmask(mode_t mask);

// The start's outcome from the supervisor's report line (without '\n'; ""
// when the supervisor closed the pipe without one).
std::expected<StartResult, std::string> startReport(
        const std::string& run, pid_t supervisorPid, const std::string& line);

// The run's environment: `base` (e.g. environ) with `extra` entries replacing
// or added in the given order, then TRAINYARD_RUN_ID, TRAINYARD_RUN_DIR,
// TRAINYARD_METRICS_FILE (<runDir>/metrics.jsonl) and, when `gpus` is given,
// CUDA_DEVICE_ORDER=PCI_BUS_ID then CUDA_VISIBLE_DEVICES=<i,j,...>, last.
std::vector<std::string> runEnvironment(char** base, const std::vector<std::pair<std::string, std::string>>& extra,
        const std::string& run, const std::string& runDir, const std::vector<int>* gpus);

} // namespace ty::agent
