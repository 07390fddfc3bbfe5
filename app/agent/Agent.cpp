#include "Agent.h"

#include "ListeningPorts.h"
#include "Posix.h"
#include "Supervisor.h"

#include "core/agentproto/CancelSignals.h"
#include "core/agentproto/ConsoleCompression.h"
#include "core/agentproto/Fields.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ty::agent {

namespace fields = agentproto::fields;
namespace messages = agentproto::messages;
namespace ops = agentproto::ops;

namespace {

constexpr std::size_t kChunk = 256 * 1024;          // console bytes per output frame
constexpr std::size_t kHighWater = 2 * 1024 * 1024; // stop reading consoles above this
// After a chunk that LZ4 could not shrink by an eighth, this many go
// uncompressed (sendfile) before the next try.
constexpr int kCompressRetry = 16;
constexpr std::size_t kMaxStderrRanges = 4096; // per output frame: keeps its line far below 1 MiB
constexpr std::int64_t kTickMs = 20;           // console growth / exit checks
// A Slurm run's exit.json is written by a Slurm poll (every --slurm-poll-ms,
// default 5 s; this agent's or another's on the state directory), not by a
// supervisor: looked for twice a second, not every tick (a login node may
// follow a thousand queued jobs).
constexpr std::int64_t kSlurmExitCheckMs = 500;
constexpr std::int64_t kLostCheckMs = 1000;
constexpr std::int64_t kCaptureTimeoutMs = 15000; // nvidia-smi
constexpr std::int64_t kExitFlushMs = 2000;

int g_sigPipe[2] = {-1, -1};

void onSigChld(int)
{
    const int saved = errno;
    const char c = 'c';
    (void)!::write(g_sigPipe[1], &c, 1);
    errno = saved;
}

std::string hostName()
{
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0)
        return {};
    return buf;
}

std::string userName()
{
    if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name)
        return pw->pw_name;
    if (const char* u = std::getenv("USER"))
        return u;
    return std::to_string(::geteuid());
}

std::string str(const Json& j, const char* key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

Agent::Agent(AgentOptions options)
    : m_opt(std::move(options))
    , m_registry(m_opt.stateDir)
    , m_slurm(m_registry, m_commands,
              SlurmHost{[this](const Json& id, Json body) { reply(id, std::move(body)); },
                      [this](const Json& id, const std::string& error, const std::string& code) {
                          replyError(id, error, code);
                      },
                      [this](const Json& event) { m_out.pushMessage(event); },
                      [this](const std::string& run) { m_running.try_emplace(run); },
                      [this](FrameReader::Frame& frame) { handleFrame(frame); }},
              m_opt.slurmPollMs)
{ }

Agent::~Agent() = default;

void Agent::sendHello()
{
    m_out.pushMessage(Json{{fields::kType, messages::kHello}, {fields::kProtocol, kProtocolVersion},
            {fields::kRevision, kProtocolRevision}, {fields::kAgent, "trainyard-agent"},
            {fields::kVersion, kAgentVersion}, {fields::kHostname, hostName()}, {fields::kUser, userName()},
            {fields::kPid, ::getpid()}, {fields::kStateDir, m_registry.stateDir()},
            {fields::kCpus, ::sysconf(_SC_NPROCESSORS_ONLN)},
            {fields::kMemoryMib,
                    static_cast<long long>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE) / (1024 * 1024)}});
}

void Agent::reply(const Json& id, Json body)
{
    body[fields::kType] = messages::kReply;
    body[fields::kId] = id;
    body[fields::kOk] = true;
    m_out.pushMessage(body);
}

void Agent::replyError(const Json& id, const std::string& error, const std::string& code)
{
    Json reply{{fields::kType, messages::kReply}, {fields::kId, id}, {fields::kOk, false}, {fields::kError, error}};
    if (!code.empty())
        reply[fields::kCode] = code; // what a client acts on (PROTOCOL.md); the text is for people
    m_out.pushMessage(reply);
}

int Agent::run()
{
    if (::pipe2(g_sigPipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        std::cerr << "trainyard-agent: pipe: " << errnoText(errno) << "\n";
        return 1;
    }
    struct sigaction sa { };
    sa.sa_handler = onSigChld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGCHLD, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);

    const bool stateOk = [&] {
        if (auto e = m_registry.prepare(); !e.empty()) {
            std::cerr << "trainyard-agent: state directory: " << e << "\n";
            return false;
        }
        return true;
    }();

    setNonBlocking(m_opt.inFd, true);
    setNonBlocking(m_opt.outFd, true);
#if defined(F_SETPIPE_SZ)
    // Fewer, larger writes when stdout is a pipe (local node, sshd's channel).
    ::fcntl(m_opt.outFd, F_SETPIPE_SZ, 1024 * 1024);
#endif
    sendHello();
    if (!stateOk) {
        m_out.pushMessage(Json{{fields::kType, messages::kError},
                {fields::kError, "cannot use state directory " + m_registry.stateDir()}});
        m_inputClosed = true;
    }

    // Runs started by an earlier agent: announce their end too.
    for (const auto& run : m_registry.runIds()) {
        const auto p = m_registry.paths(run);
        if (fileExists(p.exitJson))
            continue;
        // A run whose supervisor vanished long ago (reboot) is not announced
        // again by every new agent: list/status report it as lost.
        if (auto rj = m_registry.runJson(run); rj && !m_registry.isLost(*rj, run))
            m_running[run] = Tracked{rj->value("supervisor_pid", 0L), 0};
    }

    std::int64_t exitDeadline = -1;
    std::vector<char> inBuf(256 * 1024);
    for (;;) {
        const std::int64_t now = monotonicMs();
        if (m_inputClosed || m_fatal) {
            if (exitDeadline < 0)
                exitDeadline = now + kExitFlushMs;
            // A submission in flight is waited for (its own timeout ends
            // it): killed, it could leave a job queued that no run records.
            if (((m_out.empty() && m_starts.empty()) || now >= exitDeadline) && !m_slurm.submitting())
                break;
        }

        std::vector<pollfd> fds;
        fds.push_back({g_sigPipe[0], POLLIN, 0});
        const bool reading = !m_inputClosed && !m_fatal;
        if (reading)
            fds.push_back({m_opt.inFd, POLLIN, 0});
        const std::size_t outIdx = fds.size();
        if (!m_out.empty())
            fds.push_back({m_opt.outFd, POLLOUT, 0});
        m_commands.addPollFds(fds);
        const std::size_t startIdx = fds.size();
        for (auto& st : m_starts)
            fds.push_back({st->fd, POLLIN, 0});
        const std::size_t watchIdx = fds.size();
        if (m_consoleWatch.fd() >= 0 && !m_tails.empty())
            fds.push_back({m_consoleWatch.fd(), POLLIN, 0});

        int timeout = -1;
        if (m_tailsHaveData && m_out.bytes() < kHighWater)
            timeout = 0;
        else if (!m_tails.empty() || !m_running.empty() || !m_commands.empty())
            timeout = int(std::max<std::int64_t>(0, m_nextTick - now));
        if (exitDeadline >= 0)
            timeout = timeout < 0 ? int(std::max<std::int64_t>(0, exitDeadline - now))
                                  : std::min<int>(timeout, int(std::max<std::int64_t>(0, exitDeadline - now)));

        const int n = ::poll(fds.data(), fds.size(), timeout);
        if (n < 0 && errno != EINTR) {
            std::cerr << "trainyard-agent: poll: " << errnoText(errno) << "\n";
            return 1;
        }

        if (fds[0].revents & POLLIN) {
            char drain[64];
            while (::read(g_sigPipe[0], drain, sizeof drain) > 0) { }
            reapChildren();
        }
        if (reading && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            for (;;) {
                const ssize_t r = ::read(m_opt.inFd, inBuf.data(), inBuf.size());
                if (r > 0) {
                    m_reader.append(inBuf.data(), std::size_t(r));
                    continue;
                }
                if (r == 0) {
                    m_inputClosed = true;
                    break;
                }
                if (errno == EINTR)
                    continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                    m_inputClosed = true;
                break;
            }
            while (auto frame = m_reader.next())
                handleFrame(*frame);
            if (!m_reader.error().empty() && !m_fatal) {
                std::cerr << "trainyard-agent: " << m_reader.error() << "\n";
                m_out.pushMessage(Json{{fields::kType, messages::kError}, {fields::kError, m_reader.error()}});
                m_fatal = true;
            }
        }
        m_commands.readReady(fds);

        // Start reports, newest first: finishing one removes it from m_starts
        // (and may re-run deferred requests, which never add a start).
        for (std::size_t i = m_starts.size(); i-- > 0;) {
            if (startIdx + i < watchIdx && (fds[startIdx + i].revents & (POLLIN | POLLHUP | POLLERR)))
                readStartReport(i);
        }
        // A followed console grew: pumpTails() below reads it now.
        if (watchIdx < fds.size() && (fds[watchIdx].revents & POLLIN))
            m_consoleWatch.drain();

        const std::int64_t t = monotonicMs();
        m_commands.finish(t);
        const bool tick = t >= m_nextTick;
        if (tick) {
            m_slurm.tick(t);
            checkRuns(t);
            m_nextTick = t + kTickMs;
        }
        pumpTails(tick);

        (void)outIdx; // always try: the queue may have grown since poll()
        if (!m_out.empty()) {
            if (!m_out.flush(m_opt.outFd)) {
                // The client is gone (EPIPE): nobody to talk to; runs go on.
                if (errno == EPIPE)
                    return 0;
                // EIO: a console lost bytes an output event announced
                // (truncated by hand); the stream cannot stay framed.
                std::cerr << "trainyard-agent: writing to the client: "
                          << (errno == EIO ? std::string("a console file was truncated while it was being sent")
                                           : errnoText(errno))
                          << "\n";
                return 1;
            }
        }
    }
    setNonBlocking(m_opt.inFd, false);
    setNonBlocking(m_opt.outFd, false);
    return m_fatal ? 2 : 0;
}

void Agent::handleFrame(FrameReader::Frame& frame)
{
    const Json& req = frame.header;
    const Json id = req.contains(fields::kId) ? req[fields::kId] : Json(nullptr);
    const std::string op = str(req, fields::kOp);
    if (!id.is_number_integer()) {
        replyError(id, "request without an integer \"id\" (op \"" + op + "\")");
        return;
    }
    if (op == ops::kCancel || op == ops::kTail || op == ops::kUntail || op == ops::kStatus) {
        // A request about a run still starting waits for the start's reply.
        const std::string run = str(req, fields::kRun);
        if (m_slurm.defer(run, frame))
            return;
        for (auto& st : m_starts) {
            if (st->run == run) {
                st->deferred.push_back(std::move(frame));
                return;
            }
        }
    }
    try {
        if (op == ops::kPing)
            reply(id, Json{{fields::kTimeMs, nowMs()}});
        else if (op == ops::kStart)
            opStart(id, req);
        else if (op == ops::kTail)
            opTail(id, req);
        else if (op == ops::kUntail)
            opUntail(id, req);
        else if (op == ops::kCancel)
            opCancel(id, req);
        else if (op == ops::kList)
            opList(id);
        else if (op == ops::kStatus)
            opStatus(id, req);
        else if (op == ops::kGpus)
            opGpus(id);
        else if (op == ops::kListFiles)
            opListFiles(id, req);
        else if (op == ops::kReadFile)
            opReadFile(id, req);
        else if (op == ops::kSlurmInfo)
            m_slurm.opInfo(id);
        else if (op == ops::kStartArray)
            m_slurm.opStartArray(id, req); // revision 5: a job array (SlurmJobs.h)
        else if (op == ops::kListeningPorts)
            opListeningPorts(id); // revision 7
        else
            replyError(id, "unknown op \"" + op + "\"");
    } catch (const std::exception& e) {
        replyError(id, "op \"" + op + "\": " + e.what());
    }
}

void Agent::opStart(const Json& id, const Json& req)
{
    const std::string run = str(req, fields::kRun);
    if (!RunRegistry::validRunId(run)) {
        replyError(id, "start: invalid run id \"" + run + "\" (expected [A-Za-z0-9._-]{1,64})");
        return;
    }
    const bool slurm = req.contains(fields::kSlurm); // a batch job (SlurmJobs.h): argv is ignored
    std::vector<std::string> argv;
    auto argvIt = req.find(fields::kArgv);
    if (!slurm) {
        if (argvIt == req.end() || !argvIt->is_array() || argvIt->empty()) {
            replyError(id, "run " + run + ": \"argv\" must be a non-empty array of strings");
            return;
        }
        for (const auto& a : *argvIt) {
            if (!a.is_string()) {
                replyError(id, "run " + run + ": \"argv\" must be a non-empty array of strings");
                return;
            }
            argv.push_back(a.get<std::string>());
        }
        if (argv[0].empty()) {
            replyError(id, "run " + run + ": argv[0] is empty");
            return;
        }
    }
    const std::string workdir = str(req, fields::kWorkdir);
    if (workdir.empty() || workdir.front() != '/') {
        replyError(id, "run " + run + ": workdir \"" + workdir + "\" is not an absolute path");
        return;
    }
    if (!isDirectory(workdir)) {
        replyError(id, "run " + run + ": workdir " + workdir + " does not exist or is not a directory");
        return;
    }
    std::vector<std::pair<std::string, std::string>> extraEnv;
    if (auto envIt = req.find(fields::kEnv); envIt != req.end() && !envIt->is_null()) {
        if (!envIt->is_object()) {
            replyError(id, "run " + run + ": \"env\" must be an object of strings");
            return;
        }
        for (auto it = envIt->begin(); it != envIt->end(); ++it) {
            if (!it.value().is_string() || it.key().empty() || it.key().find('=') != std::string::npos) {
                replyError(id, "run " + run + ": env entry \"" + it.key() + "\" must be NAME (no '=') -> string");
                return;
            }
            extraEnv.emplace_back(it.key(), it.value().get<std::string>());
        }
    }
    if (slurm) {
        m_slurm.opStart(id, req, run, workdir, extraEnv);
        return;
    }
    std::vector<int> gpus;
    const bool hasGpus = req.contains(fields::kGpus) && !req[fields::kGpus].is_null();
    if (hasGpus) {
        if (!req[fields::kGpus].is_array()) {
            replyError(id, "run " + run + ": \"gpus\" must be an array of GPU indices");
            return;
        }
        for (const auto& g : req[fields::kGpus]) {
            if (!g.is_number_integer() || g.get<int>() < 0) {
                replyError(id, "run " + run + ": \"gpus\" must be an array of GPU indices");
                return;
            }
            gpus.push_back(g.get<int>());
        }
    }
    const std::string client = str(req, fields::kClient);

    const auto p = m_registry.paths(run);
    const int lockFd = gpus.empty() ? -1 : m_registry.lockClaims();
    struct Unlock {
        const RunRegistry& r;
        int fd;
        ~Unlock() { r.unlockClaims(fd); }
    } unlock{m_registry, lockFd};

    if (::mkdir(p.dir.c_str(), 0755) != 0) {
        if (errno == EEXIST)
            replyError(id, "run " + run + " already exists on this node (" + p.dir + ")");
        else
            replyError(id, "run " + run + ": cannot create " + p.dir + ": " + errnoText(errno));
        return;
    }
    auto cleanup = [&] { removeRunFiles(run); };
    RunRegistry::ClaimResult claims;
    if (!gpus.empty()) {
        claims = m_registry.claimGpus(run, client, gpus);
        if (!claims.error.empty()) {
            cleanup();
            replyError(id, claims.error, claims.heldByOther ? agentproto::kCodeGpuClaimed : "");
            return;
        }
    }

    StartPlan plan;
    plan.run = run;
    plan.runDir = p.dir;
    plan.console = p.console;
    plan.stderrRangesPath = p.stderrRanges;
    plan.runJsonPath = p.runJson;
    plan.exitJsonPath = p.exitJson;
    plan.cancelJsonPath = p.cancelJson;
    plan.workdir = workdir;
    plan.argv = argv;
    plan.env = runEnvironment(environ, extraEnv, run, p.dir, hasGpus ? &gpus : nullptr);
    plan.claimFiles = claims.files;
    Json rj{{fields::kRun, run}, {fields::kArgv, argv}, {fields::kWorkdir, workdir},
            {fields::kEnv, req.value(fields::kEnv, Json::object())}, {"agent_version", kAgentVersion}};
    if (hasGpus)
        rj[fields::kGpus] = gpus;
    if (!client.empty())
        rj[fields::kClient] = client;
    plan.runJson = std::move(rj);

    auto launched = launchSupervised(plan);
    if (!launched) {
        m_registry.releaseClaims(claims.files);
        cleanup();
        replyError(id, launched.error());
        return;
    }
    auto pending = std::make_unique<PendingStart>();
    pending->id = id;
    pending->run = run;
    pending->supervisorPid = launched->supervisorPid;
    pending->fd = launched->reportFd;
    pending->claimFiles = claims.files;
    setNonBlocking(pending->fd, true);
    m_starts.push_back(std::move(pending));
}

void Agent::removeRunFiles(const std::string& run)
{
    const auto p = m_registry.paths(run);
    ::unlink(p.console.c_str());
    ::unlink(p.stderrRanges.c_str());
    ::unlink(p.runJson.c_str());
    ::rmdir(p.dir.c_str());
}

void Agent::readStartReport(std::size_t index)
{
    PendingStart& st = *m_starts[index];
    char buf[256];
    for (;;) {
        const ssize_t n = ::read(st.fd, buf, sizeof buf);
        if (n > 0) {
            st.line.append(buf, std::size_t(n));
            if (st.line.find('\n') != std::string::npos)
                break;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return; // more to come
        break;      // EOF or error: the supervisor is gone
    }
    finishStart(index);
}

void Agent::finishStart(std::size_t index)
{
    std::unique_ptr<PendingStart> st = std::move(m_starts[index]);
    m_starts.erase(m_starts.begin() + std::ptrdiff_t(index));
    ::close(st->fd);
    if (const auto nl = st->line.find('\n'); nl != std::string::npos)
        st->line.resize(nl);
    auto started = startReport(st->run, st->supervisorPid, st->line);
    if (!started) {
        m_registry.releaseClaims(st->claimFiles);
        removeRunFiles(st->run);
        replyError(st->id, started.error());
    } else {
        const auto p = m_registry.paths(st->run);
        m_running[st->run] = Tracked{long(started->supervisorPid), 0};
        reply(st->id,
                Json{{fields::kPid, started->pid}, {fields::kPgid, started->pgid},
                        {fields::kSupervisorPid, started->supervisorPid}, {fields::kRunDir, p.dir},
                        {fields::kConsole, p.console}, {fields::kStartedMs, started->startedMs}});
    }
    for (auto& frame : st->deferred)
        handleFrame(frame);
}

void Agent::opTail(const Json& id, const Json& req)
{
    const std::string run = str(req, fields::kRun);
    if (!m_registry.exists(run)) {
        replyError(id, "tail: no run \"" + run + "\" on this node");
        return;
    }
    const auto p = m_registry.paths(run);
    std::int64_t offset = 0;
    if (auto it = req.find(fields::kOffset); it != req.end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
            replyError(id, "run " + run + ": tail offset must be an integer >= 0");
            return;
        }
        offset = it->get<std::int64_t>();
    }
    const bool follow = req.value(fields::kFollow, false);
    const bool followTruncation = req.value(fields::kFollowTruncation, false);
    std::int64_t generation = -1; // the client's, if it says
    if (auto it = req.find(fields::kGeneration); it != req.end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
            replyError(id, "run " + run + ": tail generation must be an integer >= 0");
            return;
        }
        generation = it->get<std::int64_t>();
    }
    int fd = ::open(p.console.c_str(), O_RDONLY | O_CLOEXEC);
    int openError = errno;
    if (fd < 0 && openError == ENOENT && !fileExists(p.exitJson))
        if (const auto rj = m_registry.runJson(run); rj && RunRegistry::isSlurmRun(*rj)) {
            // Slurm creates it when the job starts: until then the tail waits at 0.
            fd = ::open(p.console.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
            openError = errno;
        }
    if (fd < 0) {
        replyError(id, "run " + run + ": cannot open " + p.console + ": " + errnoText(openError));
        return;
    }
    struct stat st { };
    ::fstat(fd, &st);
    // A console shorter than the offset asked for was truncated since the
    // client read it: with follow_truncation, pumpTails() says so and starts
    // from 0.
    if (offset > std::int64_t(st.st_size) && !followTruncation) {
        ::close(fd);
        replyError(id,
                "run " + run + ": tail offset " + std::to_string(offset) + " is beyond the console's size "
                        + std::to_string(st.st_size));
        return;
    }
    closeTail(run); // a new tail of the same run replaces the old one
    Tail& t = m_tails[run] = Tail{std::make_shared<const SharedFd>(fd), offset, follow, p.exitJson, p.stderrRanges,
            std::make_shared<StderrRangeReader>(p.stderrRanges), followTruncation};
    if (const auto it = req.find(fields::kCompress); it != req.end() && it->is_string())
        t.compress = it->get<std::string>() == agentproto::kCompressLz4; // anything else: as it is
    if (follow)
        m_consoleWatch.watch(run, p.console);
    t.sent.reset(std::min(offset, std::int64_t(st.st_size)));
    reply(id, Json{{fields::kSize, std::int64_t(st.st_size)}});
    t.stderrRanges->refresh(offset);
    const std::int64_t recorded = t.stderrRanges->truncations();
    t.generation = generation >= 0 ? generation : recorded;
    if (followTruncation && recorded > t.generation) {
        // Truncated since the client's offset was current, however long
        // the console has grown since.
        restartTail(run, t, std::int64_t(st.st_size), recorded);
    }
    m_tailsHaveData = true;
}

void Agent::queueConsoleChunk(Tail& t, Json header, std::int64_t end)
{
    const std::size_t length = std::size_t(end - t.offset);
    bool tryLz4 = t.compress && length >= agentproto::kMinCompressBytes;
    if (tryLz4 && t.skipCompression > 0) {
        --t.skipCompression;
        tryLz4 = false;
    }
    if (tryLz4)
        m_chunkRead.resize(length);
    // Not asked, too short, backing off after a chunk that did not shrink,
    // or shorter than its size said a moment ago (truncated meanwhile: the
    // file frame's flush finds it and ends the stream as before): the bytes
    // go from the file, as they are.
    if (!tryLz4 || ::pread(t.console->get(), m_chunkRead.data(), length, off_t(t.offset)) != ssize_t(length)) {
        m_out.pushFileFrame(std::move(header), t.console, t.offset, length);
        return;
    }
    const std::size_t bound = agentproto::consoleBlockBound(length);
    if (m_chunkPacked.size() < bound)
        m_chunkPacked.resize(bound);
    const std::size_t packed = agentproto::compressConsoleBlock(m_chunkRead, m_chunkPacked.data());
    if (packed == 0) {
        t.skipCompression = kCompressRetry;
        m_out.pushFrame(std::move(header), m_chunkRead); // read already: as it is
        return;
    }
    header[fields::kLz4] = length;
    m_out.pushFrame(std::move(header), std::string(m_chunkPacked.data(), packed));
}

void Agent::restartTail(const std::string& run, Tail& t, std::int64_t size, std::int64_t generation)
{
    m_out.pushMessage(Json{{fields::kType, messages::kTruncated}, {fields::kRun, run}, {fields::kOffset, t.offset},
            {fields::kSize, size}, {fields::kGeneration, generation}});
    t.offset = 0;
    t.generation = generation;
    // The ranges read so far described the old content: read them again.
    t.stderrRanges = std::make_shared<StderrRangeReader>(t.stderrPath);
    t.sent.reset(0);
}

void Agent::closeTail(const std::string& run)
{
    m_tails.erase(run); // the console's fd closes once no queued frame needs it
    m_consoleWatch.unwatch(run);
}

void Agent::opUntail(const Json& id, const Json& req)
{
    closeTail(str(req, fields::kRun));
    reply(id, Json::object());
}

void Agent::opCancel(const Json& id, const Json& req)
{
    const std::string run = str(req, fields::kRun);
    auto st = m_registry.status(run);
    if (!st) {
        replyError(id, "cancel: no run \"" + run + "\" on this node");
        return;
    }
    if (st->contains(fields::kSlurmJob)) {
        m_slurm.opCancel(id, run, *st); // scancel
        return;
    }
    if ((*st)[fields::kState] != agentproto::kStateRunning) {
        replyError(id, "cancel: run " + run + " has already exited");
        return;
    }
    std::int64_t grace = 10000;
    if (auto it = req.find(fields::kGraceMs); it != req.end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
            replyError(id, "run " + run + ": grace_ms must be an integer >= 0");
            return;
        }
        grace = it->get<std::int64_t>();
    }
    // Revision 6: the signal sent first (a run that checkpoints on SIGUSR1).
    std::string signal(agentproto::kDefaultCancelSignal);
    if (auto it = req.find(fields::kSignal); it != req.end() && !it->is_null()) {
        if (!it->is_string() || !agentproto::cancelSignalNumber(it->get<std::string>())) {
            std::string names;
            for (const auto& s : agentproto::kCancelSignals)
                names += (names.empty() ? "" : ", ") + std::string(s.name);
            replyError(id, "run " + run + ": signal must be one of " + names);
            return;
        }
        signal = it->get<std::string>();
    }
    const auto p = m_registry.paths(run);
    if (auto e = writeFileAtomic(p.cancelJson,
                dumpJson(Json{{"grace_ms", grace}, {"requested_ms", nowMs()}, {"signal", signal}}) + "\n");
            !e.empty()) {
        replyError(id, "run " + run + ": " + e);
        return;
    }
    const long sup = (*st)[fields::kSupervisorPid].get<long>();
    if (!RunRegistry::supervisorAlive(sup) || ::kill(pid_t(sup), SIGUSR1) != 0) {
        replyError(id, "cancel: the supervisor of run " + run + " (pid " + std::to_string(sup) + ") is gone");
        return;
    }
    reply(id, Json::object());
}

void Agent::opList(const Json& id)
{
    Json runs = Json::array();
    for (const auto& run : m_registry.runIds())
        if (auto s = m_registry.status(run))
            runs.push_back(std::move(*s));
    reply(id, Json{{fields::kRuns, std::move(runs)}});
}

void Agent::opStatus(const Json& id, const Json& req)
{
    const std::string run = str(req, fields::kRun);
    auto s = m_registry.status(run);
    if (!s) {
        replyError(id, "status: no run \"" + run + "\" on this node");
        return;
    }
    reply(id, std::move(*s));
}

std::map<long, std::string> Agent::liveRunsByPgid() const
{
    std::map<long, std::string> m;
    for (const auto& [run, t] : m_running)
        if (auto rj = m_registry.runJson(run); rj && rj->value("pgid", 0L) > 0) // a Slurm run has none here
            m[rj->value("pgid", 0L)] = run;
    return m;
}

Json Agent::withClaims(Json gpus) const
{
    const auto claims = m_registry.liveClaims();
    for (Json& g : gpus) {
        Json list = Json::array();
        if (const auto it = claims.find(g.value("index", -1)); it != claims.end())
            for (const auto& [run, client] : it->second)
                list.push_back(Json{{fields::kRun, run}, {fields::kClient, client}});
        g[fields::kClaims] = std::move(list);
    }
    return gpus;
}

void Agent::opListeningPorts(const Json& id)
{
    std::string error;
    const std::vector<int> ports = listeningPorts(&error);
    if (!error.empty()) {
        replyError(id, "listening_ports: " + error);
        return;
    }
    reply(id, Json{{fields::kPorts, ports}});
}

void Agent::opGpus(const Json& id)
{
    if (m_nvml.available()) {
        auto gpus = m_nvml.read();
        if (gpus) {
            reply(id,
                    Json{{fields::kGpus, withClaims(gpusToJson(*gpus, liveRunsByPgid()))}, {fields::kSource, "nvml"}});
            return;
        }
        std::cerr << "trainyard-agent: NVML: " << gpus.error() << "; trying nvidia-smi\n";
    }
    auto q = std::make_shared<GpuQuery>();
    q->id = id;
    auto finish = [this, q] {
        if (--q->pending > 0)
            return;
        if (!q->gpuRan || !q->gpu.started || (WIFEXITED(q->gpu.status) && WEXITSTATUS(q->gpu.status) == 127)) {
            reply(q->id, Json{{fields::kGpus, Json::array()}, {fields::kSource, "none"}});
            return;
        }
        if (!q->gpu.succeeded()) {
            // Driver not loaded, no devices: a CPU node.
            std::string msg = q->gpu.out.substr(0, 300);
            while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r'))
                msg.pop_back();
            reply(q->id,
                    Json{{fields::kGpus, Json::array()}, {fields::kSource, "nvidia-smi"},
                            {fields::kWarning, "nvidia-smi failed (" + q->gpu.describe() + "): " + msg}});
            return;
        }
        auto gpus = parseQueryGpuCsv(q->gpu.out);
        if (!gpus) {
            replyError(q->id, "gpus: " + gpus.error());
            return;
        }
        if (auto procs = parseComputeAppsCsv(q->appsCsv))
            attachProcesses(*gpus, *procs);
        reply(q->id,
                Json{{fields::kGpus, withClaims(gpusToJson(*gpus, liveRunsByPgid()))},
                        {fields::kSource, "nvidia-smi"}});
    };
    Commands::Options options;
    options.timeoutMs = kCaptureTimeoutMs;
    const bool ok1 = m_commands.spawn(nvidiaSmiGpuArgv(), options, [q, finish](CommandResult& c) {
        q->gpu = std::move(c);
        q->gpuRan = true;
        finish();
    });
    if (!ok1) {
        reply(id, Json{{fields::kGpus, Json::array()}, {fields::kSource, "none"}});
        return;
    }
    const bool ok2 = m_commands.spawn(nvidiaSmiAppsArgv(), options, [q, finish](CommandResult& c) {
        q->appsCsv = std::move(c.out);
        finish();
    });
    if (!ok2) {
        --q->pending;
    }
}

void Agent::reapChildren()
{
    for (;;) {
        int st = 0;
        const pid_t pid = ::waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            break;
        if (!m_commands.reaped(pid, st)) {
            // A supervisor of ours ended: its run has exited. Check at once.
            m_nextTick = 0;
        }
    }
}

void Agent::checkRuns(std::int64_t now)
{
    for (auto it = m_running.begin(); it != m_running.end();) {
        const std::string& run = it->first;
        if (it->second.supervisorPid == 0) { // a Slurm run (SlurmJobs.h)
            if (now < it->second.nextExitCheck) {
                ++it;
                continue;
            }
            it->second.nextExitCheck = now + kSlurmExitCheckMs;
        }
        const auto p = m_registry.paths(run);
        bool ended = fileExists(p.exitJson);
        if (!ended && now >= it->second.nextLostCheck) {
            it->second.nextLostCheck = now + kLostCheckMs;
            if (auto rj = m_registry.runJson(run); rj && m_registry.isLost(*rj, run))
                ended = true;
        }
        if (!ended) {
            ++it;
            continue;
        }
        if (auto s = m_registry.status(run)) {
            Json ev = std::move(*s);
            ev[fields::kType] = messages::kExited;
            m_out.pushMessage(ev);
        }
        it = m_running.erase(it);
    }
}

void Agent::pumpTails(bool tick)
{
    m_tailsHaveData = false;
    std::vector<std::string> finished;
    for (auto& [run, t] : m_tails) {
        if (m_out.bytes() >= kHighWater) {
            m_tailsHaveData = true;
            break;
        }
        struct stat st { };
        const int fd = t.console->get();
        if (::fstat(fd, &st) != 0)
            continue;
        const std::int64_t size = std::int64_t(st.st_size);
        if (size < t.offset && t.followTruncation) {
            // Truncated on the node (by hand, logrotate's copytruncate): the
            // supervisor writes on at the new end, so the new content starts
            // at 0. Like `tail -F`: say so, and send it from there. Its
            // truncation line counts this one if the supervisor has written
            // since; otherwise it will, and is expected.
            auto reader = std::make_shared<StderrRangeReader>(t.stderrPath);
            reader->refresh(0);
            const std::int64_t recorded = reader->truncations();
            restartTail(run, t, size, recorded > t.generation ? recorded : t.generation + 1);
        }
        if (t.offset < size) {
            // The bytes stay in the file until the queue sends them
            // (sendfile: no copy here). The sidecar is written before the
            // console bytes: read after the size, it covers every stderr
            // byte of this chunk.
            long long end = t.offset
                    + std::min<std::int64_t>(size - t.offset, std::int64_t(kChunk)); // take() may end it sooner
            t.stderrRanges->refresh(t.offset);
            if (t.followTruncation && t.stderrRanges->truncations() > t.generation) {
                // Truncated, and written on past our offset before we looked:
                // the supervisor's truncation line says so.
                restartTail(run, t, size, t.stderrRanges->truncations());
                m_tailsHaveData = true;
                continue;
            }
            const auto ranges = t.stderrRanges->take(t.offset, end, kMaxStderrRanges);
            Json header{{fields::kType, messages::kOutput}, {fields::kRun, run}, {fields::kOffset, t.offset}};
            if (!ranges.empty()) {
                Json a = Json::array();
                for (const ByteRange& br : ranges)
                    a.push_back(Json::array({br.offset, br.length}));
                header[fields::kStderr] = std::move(a);
            }
            queueConsoleChunk(t, std::move(header), end);
            t.offset = end;
            // Queued file frames are at most kHighWater past what was sent,
            // far less than the window: the drop never reaches them (a
            // compressed chunk was read already).
            t.sent.advance(fd, end);
            if (t.offset < size)
                m_tailsHaveData = true;
            continue;
        }
        if (!t.follow) {
            finished.push_back(run);
            continue;
        }
        // Caught up with a followed console: done once the run has exited
        // and nothing more was written meanwhile.
        if (fileExists(t.exitPath)) {
            struct stat st2 { };
            ::fstat(fd, &st2);
            if (std::int64_t(st2.st_size) <= t.offset)
                finished.push_back(run);
            else
                m_tailsHaveData = true;
        } else if (tick && !m_running.contains(run)) {
            // Not tracked as running: either lost (supervisor gone) or started
            // by another agent on this state directory.
            if (auto rj = m_registry.runJson(run); rj && m_registry.isLost(*rj, run))
                finished.push_back(run);
        }
    }
    for (const auto& run : finished) {
        m_out.pushMessage(
                Json{{fields::kType, messages::kEof}, {fields::kRun, run}, {fields::kOffset, m_tails[run].offset}});
        closeTail(run);
    }
}

} // namespace ty::agent
