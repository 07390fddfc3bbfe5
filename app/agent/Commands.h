#pragma once

// Short child commands whose output the agent reads without waiting for
// them (nvidia-smi, Slurm's sinfo/sbatch/squeue/sacct/scontrol/scancel): the
// agent's poll loop watches their pipes, its SIGCHLD handler reaps them, and
// each one's callback runs once it has exited and its output is read. A
// command that outlives its timeout gets SIGKILL. Standard library + POSIX.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct pollfd;

namespace ty::agent {

struct CommandResult {
    bool started = false;  // false: it could not be executed (not on PATH); status is then exit 127
    int status = 0;        // waitpid() status
    bool timedOut = false; // killed at its timeout
    std::int64_t timeoutMs = 0;
    std::string out; // stdout, and stderr unless the command asked for it apart
    std::string err; // stderr, with Options::separateStderr

    bool succeeded() const; // exited with 0
    // "exit code 2", "signal 9", "killed: no answer within 60 s", "not found on PATH"
    std::string describe() const;
};

class Commands {
public:
    struct Options {
        const std::vector<std::string>* env = nullptr; // "KEY=VALUE", the whole environment; null: the agent's
        std::int64_t timeoutMs = 15000;
        bool separateStderr = false;
    };
    using Done = std::function<void(CommandResult&)>;

    Commands();
    ~Commands(); // kills those still running
    Commands(const Commands&) = delete;
    Commands& operator=(const Commands&) = delete;

    // Starts argv (argv[0] searched in PATH) with stdin from /dev/null.
    // `done` runs later, from finish(), also for a command that could not be
    // executed. False (and `done` never runs) when no pipe could be made.
    bool spawn(const std::vector<std::string>& argv, const Options& options, Done done);

    // The poll loop: adds the pipes to watch (and remembers where), then
    // reads those that poll() found ready.
    void addPollFds(std::vector<pollfd>& fds);
    void readReady(const std::vector<pollfd>& fds);
    // A child was reaped: true when it was one of these commands.
    bool reaped(pid_t pid, int status);
    // Kills commands past their timeout and calls `done` of those finished
    // (a callback may spawn more).
    void finish(std::int64_t nowMonotonicMs);
    bool empty() const { return m_commands.empty(); }

private:
    struct Command;
    std::vector<std::unique_ptr<Command>> m_commands;
};

} // namespace ty::agent
