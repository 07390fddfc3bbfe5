#include "Supervisor.h"

#include "Posix.h"
#include "StderrRanges.h"
#include "core/agentproto/CancelSignals.h"
#include "core/common/WriteBehind.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_map>
#include <vector>

#include <dirent.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

extern char** environ;

namespace ty::agent {

namespace {

constexpr int kKillGiveUpMs = 30000; // a process stuck in D state after SIGKILL

// Every live process below `root` in the process tree (zombies left out),
// except `skip` and what is below it: the processes of a run that left its
// process group (setsid, a daemon's double fork). The supervisor is their
// subreaper, so an orphan among them is its child and never escapes this
// walk. Read from /proc/PID/stat (proc(5): "pid (comm) state ppid ...", comm
// may hold ')' and spaces, so the fields follow the last ')'). Empty where
// there is no /proc.
std::vector<pid_t> descendantsOf(pid_t root, pid_t skip)
{
    std::unordered_multimap<pid_t, pid_t> children;
    DIR* proc = ::opendir("/proc");
    if (!proc)
        return {};
    while (const dirent* e = ::readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || !end || *end != '\0')
            continue;
        const std::string path = std::string("/proc/") + e->d_name + "/stat";
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; // ended meanwhile
        char buf[512];
        const ssize_t n = ::read(fd, buf, sizeof buf - 1);
        ::close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        const char* close = std::strrchr(buf, ')');
        char state = 0;
        long ppid = 0;
        if (!close || std::sscanf(close + 1, " %c %ld", &state, &ppid) != 2 || state == 'Z' || state == 'X')
            continue;
        children.emplace(pid_t(ppid), pid_t(pid));
    }
    ::closedir(proc);
    std::vector<pid_t> out;
    std::vector<pid_t> todo{root};
    while (!todo.empty()) {
        const pid_t p = todo.back();
        todo.pop_back();
        const auto [first, last] = children.equal_range(p);
        for (auto it = first; it != last; ++it) {
            if (it->second == skip)
                continue;
            out.push_back(it->second);
            todo.push_back(it->second);
        }
    }
    return out;
}

// `sig` to the run: its process group and every process below the
// supervisor that left it (but never the keeper).
void signalRun(pid_t pgid, pid_t keeper, int sig)
{
    ::kill(-pgid, sig);
    for (const pid_t p : descendantsOf(::getpid(), keeper))
        ::kill(p, sig);
}

// Whether anything of the run is left: its group, or a process below the
// supervisor that left the group.
bool runAlive(pid_t pgid, pid_t keeper)
{
    if (!(::kill(-pgid, 0) != 0 && errno == ESRCH))
        return true;
    return !descendantsOf(::getpid(), keeper).empty();
}
constexpr std::size_t kReadChunk = 64 * 1024;  // bytes per read() of an output pipe
constexpr std::size_t kSpliceMax = 256 * 1024; // bytes per splice()
constexpr int kPipeSize = 1024 * 1024;         // asked for with F_SETPIPE_SZ (fewer wake-ups)

// The run's stdout and stderr pipes, copied to console.log in the order the
// bytes are read; every stderr chunk is first recorded in the sidecar
// (StderrRanges.h). Used by the supervisor, and by the keeper once the
// supervisor is gone. One process at a time writes the console, so it is
// written at explicit offsets (splice() refuses O_APPEND files).
//
// Truncation: a console cut short by hand (`: > console.log` to free disk,
// logrotate's copytruncate) is written on at its new end, as an O_APPEND
// file would be, not at the old offset (which would leave a hole of zeros
// as long as the old console): every write first compares the file's size
// with `offset`. The sidecar then gets a truncation line "<new size> 0"
// (StderrRanges.h) before any stderr range of the new content, so ranges of
// the old content are not applied to the new. A truncation between that
// check and the write (microseconds) still leaves a hole.
//
// Speed: splice() moves the pipe's pages into the file without a copy
// through user space; where it is refused (EINVAL: a file system without
// splice support) read()/pwrite() of 64 KiB chunks take over.
struct OutputPump {
    int fds[2] = {-1, -1}; // read ends: [0] stdout, [1] stderr
    int consoleFd = -1;
    int sidecarFd = -1;
    std::int64_t offset = 0; // console.log's size
    bool useSplice = true;
    std::vector<char> buf = std::vector<char>(kReadChunk);
    // Written back a window behind the end and dropped from the cache two
    // windows behind (WriteBehind.h): a tail that keeps up finds its bytes
    // cached, one further back (a burst faster than the link, a reconnect)
    // reads them from disk. A burst used to fill the cache ahead of the
    // tail: fresh pages, which cost the most on a VM, and a console that
    // evicts the workstation's datasets. bench_ssh: 166-190 -> 249-251 MB/s.
    // Wait: a window is written back before it is dropped, so a busy disk
    // leaves nothing cached; a disk slower than the run's output paces the
    // run (a cancel, a signal here, waits for that window's writeback).
    WriteBehind trail{WriteBehind::Flush | WriteBehind::Drop | WriteBehind::Wait};

    // The console starts (or resumes) at `size` bytes.
    void startAt(std::int64_t size)
    {
        offset = size;
        trail.reset(size);
    }

    bool open() const { return fds[0] >= 0 || fds[1] >= 0; }

    // Before a write: the console truncated behind our back (see above) is
    // written on from its new end.
    void followTruncation()
    {
        struct stat st { };
        if (::fstat(consoleFd, &st) != 0 || std::int64_t(st.st_size) >= offset)
            return;
        startAt(std::int64_t(st.st_size));
        writeAll(sidecarFd, formatStderrTruncation(offset));
    }

    void closePipe(int i)
    {
        ::close(fds[i]);
        fds[i] = -1;
    }

    // Appends `n` bytes at `offset`. A failed write (disk full) loses them,
    // as a full disk would have for the run itself: the pipes keep being
    // drained so the run never blocks on its output.
    void append(const char* data, std::size_t n)
    {
        std::size_t done = 0;
        while (done < n) {
            const ssize_t w = ::pwrite(consoleFd, data + done, n - done, off_t(offset + std::int64_t(done)));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            done += std::size_t(w);
        }
        offset += std::int64_t(done);
        trail.advance(consoleFd, offset);
    }

    // Moves up to `max` bytes of pipe `i` to the console. Returns the bytes
    // moved, 0 at EOF, -1 with errno (EAGAIN: nothing there).
    ssize_t move(int i, std::size_t max)
    {
        if (useSplice) {
            loff_t off = offset;
            const ssize_t n = ::splice(fds[i], nullptr, consoleFd, &off, max, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n >= 0) {
                offset = off;
                trail.advance(consoleFd, offset);
                return n;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return -1;
            if (errno == EINVAL || errno == ENOSYS)
                useSplice = false; // and copy below
        }
        const ssize_t n = ::read(fds[i], buf.data(), std::min(max, buf.size()));
        if (n > 0)
            append(buf.data(), std::size_t(n));
        return n;
    }

    // One move of pipe `i` (non-blocking). Returns false when nothing was
    // there (EAGAIN) or at EOF.
    bool pumpOnce(int i)
    {
        if (fds[i] < 0)
            return false;
        followTruncation();
        if (i == 1) {
            // stderr: the range goes to the sidecar before its bytes go to
            // the console, so it must be known first: what the pipe holds.
            int avail = 0;
            if (::ioctl(fds[1], FIONREAD, &avail) == 0 && avail > 0) {
                writeAll(sidecarFd, formatStderrRange(offset, avail));
                std::size_t left = std::size_t(avail);
                while (left > 0) {
                    const ssize_t n = move(1, left);
                    if (n > 0)
                        left -= std::size_t(n);
                    else if (n < 0 && errno == EINTR)
                        continue;
                    else
                        break; // cannot happen: we are the pipe's only reader
                }
                return true;
            }
            // Nothing announced: EOF, or bytes that arrived just now (copied
            // with their range below).
            const ssize_t n = ::read(fds[1], buf.data(), buf.size());
            if (n > 0) {
                writeAll(sidecarFd, formatStderrRange(offset, n));
                append(buf.data(), std::size_t(n));
                return true;
            }
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                closePipe(1);
            return n < 0 && errno == EINTR;
        }
        const ssize_t n = move(0, kSpliceMax);
        if (n > 0)
            return true;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            closePipe(0);
        return n < 0 && errno == EINTR;
    }

    // Copies what the pipes hold now, without waiting.
    void drain()
    {
        for (bool more = true; more;) {
            more = false;
            for (int i = 0; i < 2; ++i)
                more = pumpOnce(i) || more;
        }
    }

    // Pumps until both pipes reach EOF (the keeper's job).
    void untilEof()
    {
        while (open()) {
            pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
            if (::poll(p, 2, -1) < 0 && errno != EINTR)
                return;
            for (int i = 0; i < 2; ++i)
                if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
                    pumpOnce(i);
        }
    }
};

int openAppend(const std::string& path)
{
    return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

// The console: written at explicit offsets from its current size.
int openConsole(const std::string& path, std::int64_t& size)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    struct stat st { };
    size = fd >= 0 && ::fstat(fd, &st) == 0 ? std::int64_t(st.st_size) : 0;
    return fd;
}

#if defined(__linux__)
// The keeper: a second holder of the pipes' read ends, so that the run never
// gets SIGPIPE (or EPIPE) because its supervisor was killed. It sleeps until
// the supervisor ends (PR_SET_PDEATHSIG), then copies the run's output to
// the console and the sidecar until every writer has closed the pipes. The
// supervisor SIGKILLs it when it ends normally with the pipes at EOF.
pid_t startKeeper(const OutputPump& pump, int reportFd)
{
    const pid_t parent = ::getpid();
    const pid_t k = ::fork();
    if (k != 0)
        return k;
    ::close(reportFd); // the agent waits for the supervisor's report, not for EOF: still, hold nothing of it
    ::prctl(PR_SET_NAME, "ty-keeper");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGUSR2);
    if (::getppid() == parent) {
        int sig = 0;
        while (::sigwait(&set, &sig) != 0) { }
        if (sig == SIGTERM)
            ::_exit(0);
    }
    // The supervisor's own descriptors (inherited): the console is written
    // on from its size now, which is where the supervisor stopped.
    OutputPump p;
    p.fds[0] = pump.fds[0];
    p.fds[1] = pump.fds[1];
    p.consoleFd = pump.consoleFd;
    p.sidecarFd = pump.sidecarFd;
    struct stat st { };
    p.startAt(::fstat(p.consoleFd, &st) == 0 ? std::int64_t(st.st_size) : pump.offset);
    for (int fd : p.fds)
        setNonBlocking(fd, true);
    p.untilEof();
    ::_exit(0);
}
#endif

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

mode_t g_runUmask = 022;

// Only async-signal-safe calls between fork() and exec().
// `outFd`/`errFd` (close-on-exec, > 2) become stdout and stderr.
[[noreturn]] void execCommand(int outFd, int errFd, const std::string& workdir, char** argv, char** envp)
{
    ::setpgid(0, 0);
    resetSignalsToDefault();
    ::dup2(outFd, STDOUT_FILENO);
    ::dup2(errFd, STDERR_FILENO);
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
    ::umask(g_runUmask); // the user's own: the run's outputs keep their usual modes
    environ = envp;      // execvp searches the run's own PATH
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

// The signal a cancel sends first: cancel.json's `signal` (revision 6), one
// of agentproto::kCancelSignals (the agent checked it); SIGTERM otherwise.
int readCancelSignal(const std::string& path)
{
    auto text = readFile(path);
    if (!text)
        return SIGTERM;
    Json j = Json::parse(*text, nullptr, false);
    if (j.is_object() && j.contains("signal") && j["signal"].is_string())
        if (const auto sig = agentproto::cancelSignalNumber(j["signal"].get<std::string>()))
            return *sig;
    return SIGTERM;
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

    // stdout and stderr are two pipes that we copy to console.log (see
    // OutputPump), so the console stays one merged stream, byte for byte what
    // was written, while the sidecar says which bytes came from stderr.
    OutputPump pump;
    std::int64_t consoleSize = 0;
    pump.consoleFd = openConsole(plan.console, consoleSize);
    if (pump.consoleFd < 0) {
        report(rfd, "ERR cannot open " + plan.console + ": " + errnoText(errno));
        ::_exit(1);
    }
    pump.startAt(consoleSize);
    pump.sidecarFd = openAppend(plan.stderrRangesPath);
    if (pump.sidecarFd < 0) {
        report(rfd, "ERR cannot open " + plan.stderrRangesPath + ": " + errnoText(errno));
        ::_exit(1);
    }
    int outPipe[2], errPipe[2];
    if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0) {
        report(rfd, "ERR pipe failed: " + errnoText(errno));
        ::_exit(1);
    }
#if defined(F_SETPIPE_SZ)
    ::fcntl(outPipe[1], F_SETPIPE_SZ, kPipeSize); // may exceed pipe-max-size: then the default stays
    ::fcntl(errPipe[1], F_SETPIPE_SZ, kPipeSize);
#endif
    const pid_t child = ::fork();
    if (child < 0) {
        report(rfd, "ERR fork failed: " + errnoText(errno));
        ::_exit(1);
    }
    if (child == 0)
        execCommand(outPipe[1], errPipe[1], plan.workdir, argv, envp);
    ::setpgid(child, child); // both sides call it: no race with signals sent right away
    const pid_t pgid = child;
    const std::int64_t startedMs = nowMs();
    ::close(outPipe[1]);
    ::close(errPipe[1]);
    pump.fds[0] = outPipe[0];
    pump.fds[1] = errPipe[0];
    setNonBlocking(pump.fds[0], true);
    setNonBlocking(pump.fds[1], true);
    // Before the start is reported: from then on the supervisor may be killed.
    pid_t keeper = -1;
#if defined(__linux__)
    keeper = startKeeper(pump, rfd);
#endif
    const int sigFd = ::signalfd(-1, &waitSet, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sigFd < 0) {
        ::kill(-pgid, SIGKILL);
        report(rfd, "ERR signalfd failed: " + errnoText(errno));
        ::_exit(1);
    }

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
    std::int64_t deadline = -1; // monotonic ms when SIGKILL is due
    std::int64_t giveUpAt = -1; // monotonic ms after SIGKILL when we stop waiting

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
        // Only once the main process is gone (or a cancel is under way) is the
        // tree walked: a running run costs nothing.
        const bool anyLeft = !mainDone || runAlive(pgid, keeper);
        if (mainDone && !anyLeft)
            break;
        if (mainDone && anyLeft && !termSent) {
            // Leftovers of a run that ended on its own (in its group or out of
            // it, as a daemon): same treatment as cancel, as Slurm and systemd
            // end what a job left behind.
            signalRun(pgid, keeper, SIGTERM);
            termSent = true;
            deadline = now + plan.leftoverGraceMs;
        }
        if (deadline >= 0 && now >= deadline && !killSent) {
            signalRun(pgid, keeper, SIGKILL);
            killSent = true;
            giveUpAt = now + kKillGiveUpMs;
        }
        if (killSent && !mainDone) // a process that left the group after SIGKILL was sent: again
            signalRun(pgid, keeper, SIGKILL);
        if (killSent && mainDone && now >= giveUpAt)
            break;

        // Copy output until a signal arrives (SIGCHLD, SIGUSR1: cancel) or
        // the next check is due. When the main process is gone we check the
        // group every 20 ms, since leftovers may not be our children (no
        // subreaper outside Linux).
        std::int64_t waitMs = mainDone ? 20 : 1000;
        if (deadline >= 0 && !killSent)
            waitMs = std::min<std::int64_t>(waitMs, std::max<std::int64_t>(0, deadline - now));
        const std::int64_t due = now + waitMs;
        bool cancelRequested = false;
        for (std::int64_t left = waitMs; left > 0; left = due - monotonicMs()) {
            pollfd pfd[3] = {{sigFd, POLLIN, 0}, {pump.fds[0], POLLIN, 0}, {pump.fds[1], POLLIN, 0}};
            const int n = ::poll(pfd, 3, int(left));
            if (n == 0)
                break;
            if (n < 0)
                continue;
            // One move per ready pipe per turn, stdout first: bytes are copied
            // in the order they arrive, as closely as two pipes allow.
            for (int i = 0; i < 2; ++i)
                if (pfd[1 + i].revents & (POLLIN | POLLHUP | POLLERR))
                    pump.pumpOnce(i);
            if (pfd[0].revents & POLLIN) {
                signalfd_siginfo info{};
                while (::read(sigFd, &info, sizeof info) == ssize_t(sizeof info))
                    cancelRequested = cancelRequested || info.ssi_signo == SIGUSR1;
                break;
            }
        }
        if (cancelRequested) {
            cancelled = true;
            const int grace = readCancelGrace(plan.cancelJsonPath, 10000);
            const std::int64_t t = monotonicMs();
            if (!termSent) {
                signalRun(pgid, keeper, readCancelSignal(plan.cancelJsonPath));
                termSent = true;
            }
            if (!killSent && (deadline < 0 || t + grace < deadline))
                deadline = t + grace;
        }
    }

    // The group is empty: what it wrote is in the pipes now. Copy it before
    // exit.json, so a client that sees exit.json has every byte.
    pump.drain();

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
    // Pipes still open: a process that left the run's group (setsid, daemon)
    // holds them. The keeper copies its output from now on.
    if (keeper > 0 && !pump.open()) {
        ::kill(keeper, SIGKILL);
        ::waitpid(keeper, nullptr, 0);
    }
    ::_exit(0);
}

} // namespace

std::vector<std::string> runEnvironment(char** base, const std::vector<std::pair<std::string, std::string>>& extra,
        const std::string& run, const std::string& runDir, const std::vector<int>* gpus)
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

void setRunUmask(mode_t mask)
{
    g_runUmask = mask;
}

std::expected<SupervisorLaunch, std::string> launchSupervised(const StartPlan& plan)
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
    return SupervisorLaunch{sup, fds[0]};
}

std::expected<StartResult, std::string> startReport(
        const std::string& run, pid_t supervisorPid, const std::string& line)
{
    if (line.rfind("OK ", 0) == 0) {
        StartResult r;
        r.supervisorPid = supervisorPid;
        long long pid = 0, pgid = 0, started = 0;
        if (std::sscanf(line.c_str(), "OK %lld %lld %lld", &pid, &pgid, &started) == 3) {
            r.pid = pid_t(pid);
            r.pgid = pid_t(pgid);
            r.startedMs = started;
            return r;
        }
    }
    if (line.rfind("ERR ", 0) == 0)
        return std::unexpected("run " + run + ": " + line.substr(4));
    return std::unexpected("run " + run + ": the supervisor ended before starting the command");
}

} // namespace ty::agent
