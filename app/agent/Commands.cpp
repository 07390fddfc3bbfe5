#include "Commands.h"

#include "Posix.h"

#include <cerrno>
#include <csignal>
#include <limits>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ty::agent {

namespace {
constexpr std::size_t kNotPolled = std::numeric_limits<std::size_t>::max();
} // namespace

struct Commands::Command {
    pid_t pid = -1;
    int outFd = -1, errFd = -1;
    std::size_t outPoll = kNotPolled, errPoll = kNotPolled;
    bool reaped = false;
    std::int64_t deadline = 0;
    CommandResult result;
    Done done;
};

bool CommandResult::succeeded() const
{
    return started && !timedOut && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string CommandResult::describe() const
{
    if (!started)
        return "not found on PATH";
    if (timedOut)
        return "killed: no answer within " + std::to_string(timeoutMs / 1000) + " s";
    if (WIFEXITED(status))
        return "exit code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "signal " + std::to_string(WTERMSIG(status));
    return "status " + std::to_string(status);
}

Commands::Commands() = default;

Commands::~Commands()
{
    for (auto& c : m_commands) {
        if (c->outFd >= 0)
            ::close(c->outFd);
        if (c->errFd >= 0)
            ::close(c->errFd);
        if (!c->reaped && c->pid > 0)
            ::kill(c->pid, SIGKILL);
    }
}

bool Commands::spawn(const std::vector<std::string>& argv, const Options& options, Done done)
{
    int out[2];
    int err[2] = {-1, -1};
    if (::pipe2(out, O_CLOEXEC) != 0)
        return false;
    if (options.separateStderr && ::pipe2(err, O_CLOEXEC) != 0) {
        ::close(out[0]);
        ::close(out[1]);
        return false;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, options.separateStderr ? err[1] : out[1], STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    if (options.env) {
        for (const auto& e : *options.env)
            envp.push_back(const_cast<char*>(e.c_str()));
        envp.push_back(nullptr);
    }
    // posix_spawnp searches the PATH of the agent (not of `env`), as execvp would.
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), options.env ? envp.data() : environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(out[1]);
    if (err[1] >= 0)
        ::close(err[1]);
    auto c = std::make_unique<Command>();
    c->done = std::move(done);
    c->result.timeoutMs = options.timeoutMs;
    c->deadline = monotonicMs() + options.timeoutMs;
    if (rc != 0) {
        // Not installed: report as exit 127, like a shell would.
        ::close(out[0]);
        if (err[0] >= 0)
            ::close(err[0]);
        c->reaped = true;
        c->result.status = 127 << 8;
    } else {
        c->pid = pid;
        c->result.started = true;
        c->outFd = out[0];
        c->errFd = err[0];
        setNonBlocking(c->outFd, true);
        if (c->errFd >= 0)
            setNonBlocking(c->errFd, true);
    }
    m_commands.push_back(std::move(c));
    return true;
}

void Commands::addPollFds(std::vector<pollfd>& fds)
{
    for (auto& c : m_commands) {
        c->outPoll = c->errPoll = kNotPolled;
        if (c->outFd >= 0) {
            c->outPoll = fds.size();
            fds.push_back({c->outFd, POLLIN, 0});
        }
        if (c->errFd >= 0) {
            c->errPoll = fds.size();
            fds.push_back({c->errFd, POLLIN, 0});
        }
    }
}

static void drain(int& fd, std::string& into)
{
    char buf[65536];
    for (;;) {
        const ssize_t r = ::read(fd, buf, sizeof buf);
        if (r > 0) {
            into.append(buf, std::size_t(r));
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            ::close(fd);
            fd = -1;
        }
        return;
    }
}

void Commands::readReady(const std::vector<pollfd>& fds)
{
    const auto ready = [&](std::size_t i) { return i < fds.size() && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)); };
    for (auto& c : m_commands) {
        if (c->outFd >= 0 && ready(c->outPoll))
            drain(c->outFd, c->result.out);
        if (c->errFd >= 0 && ready(c->errPoll))
            drain(c->errFd, c->result.err);
    }
}

bool Commands::reaped(pid_t pid, int status)
{
    for (auto& c : m_commands) {
        if (c->pid == pid && !c->reaped) {
            c->reaped = true;
            c->result.status = status;
            return true;
        }
    }
    return false;
}

void Commands::finish(std::int64_t now)
{
    for (std::size_t i = 0; i < m_commands.size();) {
        auto& c = *m_commands[i];
        if (now >= c.deadline) {
            if (!c.reaped && !c.result.timedOut) {
                ::kill(c.pid, SIGKILL);
                c.result.timedOut = true;
            }
            // Ended, but a child of it may still hold the pipes: stop reading.
            if (c.reaped)
                for (int* fd : {&c.outFd, &c.errFd})
                    if (*fd >= 0) {
                        ::close(*fd);
                        *fd = -1;
                    }
        }
        if (c.reaped && c.outFd < 0 && c.errFd < 0) {
            auto owned = std::move(m_commands[i]);
            m_commands.erase(m_commands.begin() + std::ptrdiff_t(i));
            owned->done(owned->result);
            continue;
        }
        ++i;
    }
}

} // namespace ty::agent
