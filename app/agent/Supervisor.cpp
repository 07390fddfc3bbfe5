#include "Supervisor.h"

#include "Posix.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <set>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

extern char** environ;

namespace ty::agent {

namespace {

constexpr int kKillGiveUpMs = 30000; // a process stuck in D state after SIGKILL

void resetSignalsToDefault()
{
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        ::signal(sig, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Only async-signal-safe calls between fork() and exec().
[[noreturn]] void execCommand(int consoleFd, const std::string& workdir, char** argv, char** envp)
{
    ::setpgid(0, 0);
    resetSignalsToDefault();
    ::dup2(consoleFd, STDOUT_FILENO);
    ::dup2(consoleFd, STDERR_FILENO);
    if (consoleFd > STDERR_FILENO)
        ::close(consoleFd);
    if (::chdir(workdir.c_str()) != 0) {
        const int e = errno;
        const char* msg = "trainyard-agent: cannot change to working directory ";
        (void)!::write(STDERR_FILENO, msg, std::strlen(msg));
        (void)!::write(STDERR_FILENO, workdir.data(), workdir.size());
        (void)!::write(STDERR_FILENO, ": ", 2);
        const char* es = std::strerror(e);
        (void)!::write(STDERR_FILENO, es, std::strlen(es));
        (void)!::write(STDERR_FILENO, "\n", 1);
        ::_exit(126);
    }
    environ = envp; // execvp searches the run's own PATH
    ::execvp(argv[0], argv);
    const int e = errno;
    const char* msg = "trainyard-agent: cannot execute '";
    (void)!::write(STDERR_FILENO, msg, std::strlen(msg));
    (void)!::write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
    (void)!::write(STDERR_FILENO, "': ", 3);
    const char* es = std::strerror(e);
    (void)!::write(STDERR_FILENO, es, std::strlen(es));
    if (e == ENOENT && std::strchr(argv[0], '/') == nullptr) {
        const char* hint = " (not found in PATH)";
        (void)!::write(STDERR_FILENO, hint, std::strlen(hint));
    }
    (void)!::write(STDERR_FILENO, "\n", 1);
    ::_exit(e == ENOENT ? 127 : 126);
}

void report(int fd, const std::string& line)
{
    writeAll(fd, line + "\n");
}

int readCancelGrace(const std::string& path, int fallback)
{
    auto text = readFile(path);
    if (!text)
        return fallback;
    Json j = Json::parse(*text, nullptr, false);
    if (j.is_object() && j.contains("grace_ms") && j["grace_ms"].is_number_integer())
        return std::max<std::int64_t>(0, j["grace_ms"].get<std::int64_t>());
    return fallback;
}

[[noreturn]] void supervise(const StartPlan& plan, int reportFd, char** argv, char** envp)
{
    ::setsid();
#if defined(__linux__)
    ::prctl(PR_SET_NAME, "ty-supervisor"); // see RunRegistry::supervisorAlive
    // Orphaned grandchildren are reparented to us, so we can reap them and
    // know when the group is really empty.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
    resetSignalsToDefault();
    ::signal(SIGHUP, SIG_IGN);
    ::signal(SIGPIPE, SIG_IGN);
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGQUIT, SIG_IGN);
    sigset_t waitSet;
    sigemptyset(&waitSet);
    sigaddset(&waitSet, SIGCHLD);
    sigaddset(&waitSet, SIGUSR1);
    ::sigprocmask(SIG_BLOCK, &waitSet, nullptr);

    const int devNull = ::open("/dev/null", O_RDWR);
    if (devNull >= 0) {
        ::dup2(devNull, STDIN_FILENO);
        ::dup2(devNull, STDOUT_FILENO);
        ::dup2(devNull, STDERR_FILENO);
    }
    int rfd = reportFd;
    if (rfd <= STDERR_FILENO) { // cannot happen when the agent owns 0..2, but be safe
        rfd = ::fcntl(reportFd, F_DUPFD_CLOEXEC, 3);
    }
    closeFrom(3, rfd);

    const int consoleFd = ::open(plan.console.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (consoleFd < 0) {
        report(rfd, "ERR cannot open " + plan.console + ": " + errnoText(errno));
        ::_exit(1);
    }
    const pid_t child = ::fork();
    if (child < 0) {
        report(rfd, "ERR fork failed: " + errnoText(errno));
        ::_exit(1);
    }
    if (child == 0)
        execCommand(consoleFd, plan.workdir, argv, envp);
    ::setpgid(child, child); // both sides call it: no race with signals sent right away
    const pid_t pgid = child;
    const std::int64_t startedMs = nowMs();
    ::close(consoleFd);

    Json rj = plan.runJson;
    rj["pid"] = child;
    rj["pgid"] = pgid;
    rj["supervisor_pid"] = ::getpid();
    rj["started_ms"] = startedMs;
    if (auto err = writeFileAtomic(plan.runJsonPath, dumpJson(rj) + "\n"); !err.empty()) {
        ::kill(-pgid, SIGKILL);
        report(rfd, "ERR " + err);
        ::_exit(1);
    }
    report(rfd, "OK " + std::to_string(child) + " " + std::to_string(pgid) + " " + std::to_string(startedMs));
    ::close(rfd);

    bool mainDone = false;
    int mainStatus = 0;
    std::int64_t finishedMs = 0;
    bool cancelled = false;
    bool termSent = false;
    bool killSent = false;
    std::int64_t deadline = -1;  // monotonic ms when SIGKILL is due
    std::int64_t giveUpAt = -1;  // monotonic ms after SIGKILL when we stop waiting

    for (;;) {
        // Reap everything that has ended (our child and adopted orphans).
        for (;;) {
            int st = 0;
            const pid_t w = ::waitpid(-1, &st, WNOHANG);
            if (w <= 0)
                break;
            if (w == child && !mainDone) {
                mainDone = true;
                mainStatus = st;
                finishedMs = nowMs();
            }
        }
        const std::int64_t now = monotonicMs();
        const bool groupAlive = !(::kill(-pgid, 0) != 0 && errno == ESRCH);
        if (mainDone && !groupAlive)
            break;
        if (mainDone && groupAlive && !termSent) {
            // Leftovers of a run that ended on its own: same treatment as cancel.
            ::kill(-pgid, SIGTERM);
            termSent = true;
            deadline = now + plan.leftoverGraceMs;
        }
        if (deadline >= 0 && now >= deadline && !killSent) {
            ::kill(-pgid, SIGKILL);
            killSent = true;
            giveUpAt = now + kKillGiveUpMs;
        }
        if (killSent && mainDone && now >= giveUpAt)
            break;

        // Wait for a signal: SIGCHLD, SIGUSR1 (cancel), or the next deadline.
        // When the main process is gone we poll the group every 20 ms, since
        // leftovers may not be our children (no subreaper outside Linux).
        std::int64_t waitMs = mainDone ? 20 : 1000;
        if (deadline >= 0 && !killSent)
            waitMs = std::min<std::int64_t>(waitMs, std::max<std::int64_t>(0, deadline - now));
        timespec ts{time_t(waitMs / 1000), long((waitMs % 1000) * 1000000)};
        siginfo_t info{};
        const int sig = ::sigtimedwait(&waitSet, &info, &ts);
        if (sig == SIGUSR1) {
            cancelled = true;
            const int grace = readCancelGrace(plan.cancelJsonPath, 10000);
            const std::int64_t t = monotonicMs();
            if (!termSent) {
                ::kill(-pgid, SIGTERM);
                termSent = true;
            }
            if (!killSent && (deadline < 0 || t + grace < deadline))
                deadline = t + grace;
        }
    }

    Json ej;
    if (WIFEXITED(mainStatus))
        ej["exit_code"] = WEXITSTATUS(mainStatus);
    else if (WIFSIGNALED(mainStatus))
        ej["signal"] = WTERMSIG(mainStatus);
    ej["finished_ms"] = finishedMs;
    ej["cancelled"] = cancelled;
    if (killSent)
        ej["killed_group"] = true;
    writeFileAtomic(plan.exitJsonPath, dumpJson(ej) + "\n");
    for (const auto& f : plan.claimFiles)
        ::unlink(f.c_str());
    ::_exit(0);
}

} // namespace

std::vector<std::string> runEnvironment(char** base,
                                        const std::vector<std::pair<std::string, std::string>>& extra,
                                        const std::string& run, const std::string& runDir,
                                        const std::vector<int>* gpus)
{
    std::vector<std::pair<std::string, std::string>> added = extra;
    added.emplace_back("TRAINYARD_RUN_ID", run);
    added.emplace_back("TRAINYARD_RUN_DIR", runDir);
    added.emplace_back("TRAINYARD_METRICS_FILE", runDir + "/metrics.jsonl");
    if (gpus) {
        std::string list;
        for (std::size_t i = 0; i < gpus->size(); ++i) {
            if (i)
                list += ',';
            list += std::to_string((*gpus)[i]);
        }
        added.emplace_back("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        added.emplace_back("CUDA_VISIBLE_DEVICES", list);
    }
    std::set<std::string> overridden;
    for (const auto& [k, v] : added)
        overridden.insert(k);

    std::vector<std::string> env;
    for (char** e = base; e && *e; ++e) {
        std::string_view kv(*e);
        const auto eq = kv.find('=');
        const std::string key(kv.substr(0, eq));
        if (!overridden.contains(key))
            env.emplace_back(kv);
    }
    // Later duplicates win: keep only the last occurrence of a key, in the
    // position of that last occurrence, so the order above is preserved.
    std::vector<std::pair<std::string, std::string>> ordered;
    for (std::size_t i = 0; i < added.size(); ++i) {
        bool laterSame = false;
        for (std::size_t j = i + 1; j < added.size(); ++j)
            laterSame = laterSame || added[j].first == added[i].first;
        if (!laterSame)
            ordered.push_back(added[i]);
    }
    for (const auto& [k, v] : ordered)
        env.push_back(k + "=" + v);
    return env;
}

std::expected<StartResult, std::string> startSupervised(const StartPlan& plan)
{
    if (plan.argv.empty())
        return std::unexpected("run " + plan.run + ": empty argv");
    // Everything exec needs is built before fork(): the supervisor is
    // single-threaded anyway, but the command child must only make
    // async-signal-safe calls.
    std::vector<char*> argv;
    for (const auto& a : plan.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : plan.env)
        envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return std::unexpected("run " + plan.run + ": pipe failed: " + errnoText(errno));

    // No signal handler of the agent may run in the supervisor before it resets them.
    sigset_t all, old;
    sigfillset(&all);
    ::sigprocmask(SIG_SETMASK, &all, &old);
    const pid_t sup = ::fork();
    if (sup == 0) {
        ::close(fds[0]);
        supervise(plan, fds[1], argv.data(), envp.data());
    }
    const int forkErr = errno;
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    ::close(fds[1]);
    if (sup < 0) {
        ::close(fds[0]);
        return std::unexpected("run " + plan.run + ": fork failed: " + errnoText(forkErr));
    }

    std::string line;
    char buf[256];
    for (;;) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        line.append(buf, std::size_t(n));
        if (line.find('\n') != std::string::npos)
            break;
    }
    ::close(fds[0]);
    if (const auto nl = line.find('\n'); nl != std::string::npos)
        line.resize(nl);
    if (line.rfind("OK ", 0) == 0) {
        StartResult r;
        r.supervisorPid = sup;
        long long pid = 0, pgid = 0, started = 0;
        if (std::sscanf(line.c_str(), "OK %lld %lld %lld", &pid, &pgid, &started) == 3) {
            r.pid = pid_t(pid);
            r.pgid = pid_t(pgid);
            r.startedMs = started;
            return r;
        }
    }
    if (line.rfind("ERR ", 0) == 0)
        return std::unexpected("run " + plan.run + ": " + line.substr(4));
    return std::unexpected("run " + plan.run + ": the supervisor ended before starting the command");
}

} // namespace ty::agent
