#include "SlurmJobs.h"

#include "Posix.h"
#include "Supervisor.h"

#include "core/agentproto/Fields.h"
#include "core/slurm/SlurmText.h"
#include "trainyard/Version.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

extern char** environ;

namespace ty::agent {

namespace fields = agentproto::fields;
namespace messages = agentproto::messages;

namespace {

constexpr std::int64_t kDefaultPollMs = 5000;
constexpr std::int64_t kDefaultGraceMs = 300000;
constexpr std::int64_t kQueryTimeoutMs = 60000;  // squeue, sacct, scontrol, sinfo, scancel
constexpr std::int64_t kSubmitTimeoutMs = 60000; // sbatch (Slurm's own MessageTimeout is 10 s, with retries)
constexpr std::size_t kQuoteMax = 2000;          // of a command's output in an error

std::int64_t envMs(const char* name, std::int64_t fallback)
{
    if (const char* v = std::getenv(name); v && *v) {
        char* end = nullptr;
        const long long ms = std::strtoll(v, &end, 10);
        if (end && *end == '\0' && ms > 0)
            return ms;
        std::cerr << "trainyard-agent: ignoring " << name << "=" << v << " (not a positive number)\n";
    }
    return fallback;
}

std::string currentUser()
{
    if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name)
        return pw->pw_name;
    return std::to_string(::geteuid());
}

std::string trimmed(std::string s)
{
    const auto isSpace = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
    while (!s.empty() && isSpace(s.back()))
        s.pop_back();
    std::size_t b = 0;
    while (b < s.size() && isSpace(s[b]))
        ++b;
    s.erase(0, b);
    if (s.size() > kQuoteMax)
        s = s.substr(0, kQuoteMax) + "...";
    return s;
}

// What a failed command said: its stderr, else its stdout.
std::string said(const CommandResult& r)
{
    std::string text = trimmed(r.err);
    if (text.empty())
        text = trimmed(r.out);
    return text;
}

std::string failure(const std::string& what, const CommandResult& r)
{
    const std::string text = said(r);
    return what + " failed (" + r.describe() + ")" + (text.empty() ? std::string() : ": " + text);
}

std::string joined(const std::vector<std::string>& parts, char sep)
{
    std::string s;
    for (const auto& p : parts) {
        if (!s.empty())
            s += sep;
        s += p;
    }
    return s;
}

// Slurm's variables that change what its commands print or which jobs they
// show (squeue(1), sacct(1), sinfo(1), scontrol(1), scancel(1) "INPUT
// ENVIRONMENT VARIABLES"): removed, and times as epoch seconds.
std::vector<std::string> queryEnvironment()
{
    static const char* const prefixes[]
            = {"SQUEUE_", "SACCT_", "SINFO_", "SCONTROL_", "SCANCEL_", "SLURM_TIME_FORMAT="};
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view kv(*e);
        if (std::none_of(std::begin(prefixes), std::end(prefixes), [&](const char* p) { return kv.starts_with(p); }))
            env.emplace_back(kv);
    }
    env.emplace_back("SLURM_TIME_FORMAT=%s");
    return env;
}

// Slurm's states in which a job waits for its (next) start.
bool isPendingState(const std::string& state)
{
    static const char* const pending[]
            = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT"};
    return std::any_of(std::begin(pending), std::end(pending), [&](const char* p) { return state == p; });
}

// sbatch options the agent sets itself (PROTOCOL.md): the run's console,
// workdir and job name, its parsable answer; and one run is one job (no
// --array, no --wait, no --test-only). sbatch takes unambiguous
// abbreviations of long options, so a prefix counts too.
std::string refusedSbatchOption(const std::string& arg)
{
    static const char* const longs[]
            = {"output", "error", "open-mode", "chdir", "job-name", "parsable", "wrap", "array", "wait", "test-only"};
    if (arg.starts_with("--") && arg.size() > 2) {
        const std::string name
                = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
        for (const char* l : longs)
            if (std::string_view(l).starts_with(name))
                return std::string("--") + l;
        return {};
    }
    static const std::string shorts = "oeDJaW";
    if (arg.size() >= 2 && arg[0] == '-' && shorts.find(arg[1]) != std::string::npos)
        return arg.substr(0, 2);
    return {};
}

// An exit.json written by whichever agent finds the end first: tmp, then
// link() (which, unlike rename(), never replaces one that is there).
std::string writeExitJson(const std::string& path, const Json& ej)
{
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    if (auto e = writeFileAtomic(tmp, dumpJson(ej) + "\n"); !e.empty())
        return e;
    std::string error;
    if (::link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST)
        error = "cannot create " + path + ": " + errnoText(errno);
    ::unlink(tmp.c_str());
    return error;
}

Json withoutNulls(Json o)
{
    for (auto it = o.begin(); it != o.end();)
        it = it->is_null() ? o.erase(it) : std::next(it);
    return o;
}

Json optionalMs(const std::optional<std::int64_t>& ms)
{
    return ms ? Json(*ms) : Json(nullptr);
}

// slurm.json of a job squeue shows.
Json observed(const slurm::QueueRow& row)
{
    const bool pending = isPendingState(row.state);
    Json o{{fields::kState, pending ? agentproto::kStatePending : agentproto::kStateRunning},
            {fields::kSlurmState, row.state}, {fields::kPartition, row.partition}};
    if (pending) {
        o[fields::kReason] = row.reason;
        o[fields::kStartEstimateMs] = optionalMs(row.startMs);
    } else {
        o[fields::kSlurmNodes] = row.nodes;
        o[fields::kRunningMs] = optionalMs(row.startMs);
    }
    return withoutNulls(std::move(o));
}

// slurm.json of a live job from `scontrol -o show job` (squeue missed it).
Json observed(const std::map<std::string, std::string>& f)
{
    const auto get = [&](const char* k) {
        const auto it = f.find(k);
        return it == f.end() ? std::string() : it->second;
    };
    slurm::QueueRow row;
    row.jobId = get("JobId");
    row.state = slurm::stateWord(get("JobState"));
    row.reason = get("Reason");
    row.startMs = slurm::parseTime(get("StartTime"));
    row.nodes = get("NodeList") == "(null)" ? std::string() : get("NodeList");
    row.partition = get("Partition");
    return observed(row);
}

// exit.json of an ended job.
Json exitRecord(const slurm::JobEnd& end, const Json& seen, bool cancelRequested)
{
    Json ej;
    if (end.signal != 0)
        ej["signal"] = end.signal;
    else
        ej["exit_code"] = end.exitCode;
    ej["finished_ms"] = end.endMs.value_or(nowMs());
    ej["cancelled"] = end.cancelled || cancelRequested;
    ej[fields::kSlurmState] = end.state;
    if (!end.nodes.empty() && end.nodes != "None assigned" && end.nodes != "(null)") {
        ej[fields::kSlurmNodes] = end.nodes; // it ran (a job cancelled while pending has no nodes)
        if (end.startMs)
            ej[fields::kRunningMs] = *end.startMs;
    }
    if (seen.contains(fields::kPartition))
        ej[fields::kPartition] = seen[fields::kPartition];
    return ej;
}

bool significantChange(const Json& a, const Json& b)
{
    for (const char* key : {fields::kState, fields::kSlurmState, fields::kReason, fields::kJobsAhead})
        if (a.value(key, Json()) != b.value(key, Json()))
            return true;
    return false;
}

} // namespace

struct SlurmJobs::Poll {
    std::vector<std::string> runs;               // the live jobs when it began
    std::map<std::string, std::string> jobIds;   // run -> Slurm job id
    std::map<std::string, Json> alive;           // run -> slurm.json: Slurm shows it queued or running
    std::map<std::string, Json> ended;           // run -> exit.json: Slurm gave its final state
    std::set<std::string> unknown;               // Slurm said nothing usable: no change
    std::vector<std::string> missing;            // not live in squeue: asked sacct / scontrol
    std::map<std::string, std::int64_t> pending; // run -> priority, for jobs_ahead
    int outstanding = 0;                         // scontrol queries running
};

SlurmJobs::SlurmJobs(
        const RunRegistry& registry, Commands& commands, SlurmHost host, std::int64_t pollMs, std::int64_t graceMs)
    : m_registry(registry)
    , m_commands(commands)
    , m_host(std::move(host))
    , m_pollMs(pollMs > 0 ? pollMs : envMs("TRAINYARD_AGENT_SLURM_POLL_MS", kDefaultPollMs))
    , m_graceMs(graceMs > 0 ? graceMs : envMs("TRAINYARD_AGENT_SLURM_GRACE_MS", kDefaultGraceMs))
    , m_queryEnv(queryEnvironment())
    , m_user(currentUser())
{ }

bool SlurmJobs::spawnSlurm(const std::vector<std::string>& argv, Commands::Done done, bool separateStderr,
        const std::vector<std::string>* env)
{
    Commands::Options o;
    o.env = env ? env : &m_queryEnv;
    o.timeoutMs = argv.front() == "sbatch" ? kSubmitTimeoutMs : kQueryTimeoutMs;
    o.separateStderr = separateStderr;
    return m_commands.spawn(argv, o, std::move(done));
}

// ---- slurm_info ------------------------------------------------------------

void SlurmJobs::opInfo(const Json& id)
{
    struct Info {
        Json id;
        int pending = 2;
        CommandResult version, partitions;
    };
    auto q = std::make_shared<Info>();
    q->id = id;
    auto finish = [this, q] {
        if (--q->pending > 0)
            return;
        for (const auto* r : {&q->version, &q->partitions}) {
            if (!r->started) {
                const char* path = std::getenv("PATH");
                m_host.replyError(q->id,
                        std::string("slurm_info: sinfo is not on the agent's PATH (") + (path ? path : "") + ")",
                        agentproto::kCodeNoSlurm);
                return;
            }
            if (!r->succeeded()) {
                const std::string what
                        = r == &q->version ? "sinfo --version" : std::string("sinfo -h -o ") + slurm::kSinfoFormat;
                m_host.replyError(q->id, "slurm_info: " + failure(what, *r), agentproto::kCodeNoSlurm);
                return;
            }
        }
        std::string error;
        const auto parts = slurm::parseSinfo(q->partitions.out, &error);
        if (!error.empty())
            std::cerr << "trainyard-agent: sinfo: " << error << "\n";
        Json list = Json::array();
        for (const auto& p : parts) {
            Json gres = Json::array();
            for (const auto& g : p.gres)
                gres.push_back(Json{{fields::kName, g.name}, {fields::kType, g.type}, {fields::kCount, g.count}});
            list.push_back(Json{{fields::kName, p.name}, {fields::kDefault, p.isDefault}, {fields::kState, p.state},
                    {fields::kNodes, p.nodes}, {fields::kNodeCount, p.nodeCount}, {fields::kCpus, p.cpus},
                    {fields::kMemoryMib, p.memoryMib}, {fields::kGres, std::move(gres)},
                    {fields::kMaxTimeS, optionalMs(p.maxTimeS)}});
        }
        m_host.reply(q->id,
                Json{{fields::kVersion, slurm::parseVersion(q->version.out)}, {fields::kPartitions, std::move(list)}});
    };
    const bool ok1 = spawnSlurm({"sinfo", "--version"}, [q, finish](CommandResult& r) {
        q->version = std::move(r);
        finish();
    });
    const bool ok2 = ok1 && spawnSlurm({"sinfo", "-h", "-o", slurm::kSinfoFormat}, [q, finish](CommandResult& r) {
        q->partitions = std::move(r);
        finish();
    });
    if (!ok1 || !ok2) {
        q->pending = 100; // the one that did start answers nobody
        m_host.replyError(id, "slurm_info: cannot start sinfo: " + errnoText(errno), {});
    }
}

// ---- start -----------------------------------------------------------------

void SlurmJobs::opStart(const Json& id, const Json& req, const std::string& run, const std::string& workdir,
        const std::vector<std::pair<std::string, std::string>>& extraEnv)
{
    const Json& slurmReq = req[fields::kSlurm];
    if (!slurmReq.is_object()) {
        m_host.replyError(id, "run " + run + ": \"slurm\" must be an object {\"script\", \"sbatch\"}", {});
        return;
    }
    if (req.contains(fields::kGpus) && !req[fields::kGpus].is_null()) {
        m_host.replyError(id,
                "run " + run + ": \"gpus\" is not for a Slurm run: Slurm places it (ask with --gres in \"sbatch\")",
                {});
        return;
    }
    const auto scriptIt = slurmReq.find(fields::kScript);
    if (scriptIt == slurmReq.end() || !scriptIt->is_string() || scriptIt->get<std::string>().empty()) {
        m_host.replyError(id, "run " + run + ": \"slurm\" needs a \"script\" (the batch script's text)", {});
        return;
    }
    std::vector<std::string> options;
    if (auto it = slurmReq.find(fields::kSbatch); it != slurmReq.end() && !it->is_null()) {
        if (!it->is_array()) {
            m_host.replyError(id, "run " + run + ": \"sbatch\" must be an array of strings", {});
            return;
        }
        for (const auto& a : *it) {
            if (!a.is_string()) {
                m_host.replyError(id, "run " + run + ": \"sbatch\" must be an array of strings", {});
                return;
            }
            options.push_back(a.get<std::string>());
            if (const auto refused = refusedSbatchOption(options.back()); !refused.empty()) {
                m_host.replyError(id,
                        "run " + run + ": sbatch option \"" + options.back() + "\" (" + refused
                                + ") is the agent's: it sets the run's console, workdir and job name, and one run "
                                  "is one job",
                        {});
                return;
            }
        }
    }
    const auto p = m_registry.paths(run);
    if (p.console.find('%') != std::string::npos) {
        // sbatch would expand %j & co in --output.
        m_host.replyError(id,
                "run " + run + ": the state directory's path has a '%' (" + p.dir + "): sbatch would expand it", {});
        return;
    }
    if (::mkdir(p.dir.c_str(), 0755) != 0) {
        if (errno == EEXIST)
            m_host.replyError(id, "run " + run + " already exists on this node (" + p.dir + ")", {});
        else
            m_host.replyError(id, "run " + run + ": cannot create " + p.dir + ": " + errnoText(errno), {});
        return;
    }
    const auto removeFiles = [p] {
        ::unlink(p.jobScript.c_str());
        ::unlink(p.console.c_str());
        ::rmdir(p.dir.c_str());
    };
    // The console exists from the start (Slurm appends to it once the job
    // runs), so a tail of a pending job waits at size 0.
    std::string error = writeFileAtomic(p.jobScript, scriptIt->get<std::string>());
    if (error.empty() && ::chmod(p.jobScript.c_str(), 0700) != 0)
        error = "cannot chmod " + p.jobScript + ": " + errnoText(errno);
    if (error.empty()) {
        const int fd = ::open(p.console.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
            error = "cannot create " + p.console + ": " + errnoText(errno);
        else
            ::close(fd);
    }
    if (!error.empty()) {
        removeFiles();
        m_host.replyError(id, "run " + run + ": " + error, {});
        return;
    }

    std::vector<std::string> argv{"sbatch", "--parsable", "--job-name=" + run, "--chdir=" + workdir,
            "--output=" + p.console, "--error=" + p.console, "--open-mode=append", "--export=ALL"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back(p.jobScript);
    // sbatch exports its environment to the job (--export=ALL, before the
    // request's options: they may narrow it).
    const auto env = runEnvironment(environ, extraEnv, run, p.dir, nullptr);
    Json rj{{fields::kRun, run}, {fields::kArgv, Json::array()}, {fields::kWorkdir, workdir},
            {fields::kEnv, req.value(fields::kEnv, Json::object())}, {"agent_version", TRAINYARD_VERSION},
            {fields::kSlurm, Json{{fields::kSbatch, options}}}, {fields::kStartedMs, nowMs()}, {fields::kPid, 0},
            {fields::kPgid, 0}, {fields::kSupervisorPid, 0}};
    if (const auto client = req.value(fields::kClient, Json()); client.is_string())
        rj[fields::kClient] = client;
    m_submissions[run];
    const bool spawned = spawnSlurm(
            argv, [this, id, run, rj](CommandResult& r) { submitted(id, run, rj, r); }, true, &env);
    if (!spawned) {
        m_submissions.erase(run);
        removeFiles();
        m_host.replyError(id, "run " + run + ": cannot start sbatch: " + errnoText(errno), {});
    }
}

void SlurmJobs::submitted(const Json& id, const std::string& run, const Json& runJson, CommandResult& r)
{
    const auto p = m_registry.paths(run);
    std::string error;
    std::string jobId;
    if (!r.succeeded()) {
        error = "run " + run + ": " + failure("sbatch", r);
        if (r.timedOut) {
            // It may have queued the job before it was killed: nothing must stay queued.
            spawnSlurm({"scancel", "--name=" + run, "--user=" + m_user}, [](CommandResult&) {});
            error += " (cancelled any job named " + run + ")";
        }
    } else {
        // "1234" or "1234;cluster"
        jobId = trimmed(r.out.substr(0, r.out.find_first_of(";\n")));
        if (jobId.empty() || jobId.find_first_not_of("0123456789_") != std::string::npos)
            error = "run " + run + ": sbatch printed no job id: \"" + trimmed(r.out) + "\"";
    }
    Json rj = runJson;
    if (error.empty()) {
        rj[fields::kSlurmJob] = jobId;
        Json seen{{fields::kState, agentproto::kStatePending}, {fields::kSlurmState, "PENDING"}};
        error = writeFileAtomic(p.slurmJson, dumpJson(seen) + "\n");
        if (error.empty())
            error = writeFileAtomic(p.runJson, dumpJson(rj) + "\n");
        if (error.empty()) {
            m_jobs[run] = Job{run, jobId, seen};
            m_nextPoll = 0; // look at it at once
        } else {
            spawnSlurm({"scancel", jobId}, [](CommandResult&) {});
            error = "run " + run + ": " + error + " (job " + jobId + " cancelled)";
            ::unlink(p.slurmJson.c_str());
        }
    }
    auto deferred = std::move(m_submissions[run].deferred);
    m_submissions.erase(run);
    if (!error.empty()) {
        ::unlink(p.jobScript.c_str());
        ::unlink(p.console.c_str());
        ::rmdir(p.dir.c_str());
        m_host.replyError(id, error, {});
    } else {
        m_host.track(run);
        m_host.reply(id,
                Json{{fields::kSlurmJob, jobId}, {fields::kPid, 0}, {fields::kPgid, 0}, {fields::kSupervisorPid, 0},
                        {fields::kRunDir, p.dir}, {fields::kConsole, p.console},
                        {fields::kStartedMs, rj[fields::kStartedMs]}});
    }
    for (auto& frame : deferred)
        m_host.handleFrame(frame);
}

bool SlurmJobs::defer(const std::string& run, FrameReader::Frame& frame)
{
    const auto it = m_submissions.find(run);
    if (it == m_submissions.end())
        return false;
    it->second.deferred.push_back(std::move(frame));
    return true;
}

// ---- cancel ----------------------------------------------------------------

void SlurmJobs::opCancel(const Json& id, const std::string& run, const Json& status)
{
    if (status.value(fields::kState, std::string()) == agentproto::kStateExited) {
        m_host.replyError(id, "cancel: run " + run + " has already exited", {});
        return;
    }
    const std::string jobId = status.value(fields::kSlurmJob, std::string());
    const auto p = m_registry.paths(run);
    if (auto e = writeFileAtomic(p.cancelJson, dumpJson(Json{{"requested_ms", nowMs()}}) + "\n"); !e.empty()) {
        m_host.replyError(id, "run " + run + ": " + e, {});
        return;
    }
    const bool spawned = spawnSlurm({"scancel", jobId}, [this, id, run, jobId, p](CommandResult& r) {
        if (!r.succeeded()) {
            ::unlink(p.cancelJson.c_str()); // not cancelled after all
            m_host.replyError(id, "cancel: run " + run + ": " + failure("scancel " + jobId, r), {});
            return;
        }
        m_nextPoll = 0; // the `exited` event follows once Slurm says the job ended
        m_host.reply(id, Json::object());
    });
    if (!spawned) {
        ::unlink(p.cancelJson.c_str());
        m_host.replyError(id, "cancel: run " + run + ": cannot start scancel: " + errnoText(errno), {});
    }
}

// ---- polling ---------------------------------------------------------------

void SlurmJobs::tick(std::int64_t now)
{
    if (m_polling || now < m_nextPoll)
        return;
    m_nextPoll = now + m_pollMs;
    startPoll();
}

void SlurmJobs::refreshJobs()
{
    // Runs submitted by another agent on this state directory, or before
    // this agent started, are followed too; runs that ended are dropped.
    const auto ids = m_registry.runIds();
    for (auto it = m_jobs.begin(); it != m_jobs.end();) {
        const auto p = m_registry.paths(it->first);
        if (fileExists(p.exitJson) || !isDirectory(p.dir)) {
            m_settled.insert(it->first);
            it = m_jobs.erase(it);
        } else {
            ++it;
        }
    }
    for (const auto& run : ids) {
        if (m_jobs.contains(run) || m_settled.contains(run) || m_submissions.contains(run))
            continue;
        const auto rj = m_registry.runJson(run);
        if (!rj)
            continue; // being started: look again next time
        const auto p = m_registry.paths(run);
        if (!RunRegistry::isSlurmRun(*rj) || fileExists(p.exitJson)) {
            m_settled.insert(run);
            continue;
        }
        Json seen = Json::parse(readFile(p.slurmJson).value_or("{}"), nullptr, false);
        if (!seen.is_object())
            seen = Json::object();
        m_jobs[run] = Job{run, rj->value(fields::kSlurmJob, std::string()), std::move(seen), false};
        m_host.track(run);
    }
}

void SlurmJobs::startPoll()
{
    refreshJobs();
    if (m_jobs.empty())
        return;
    auto poll = std::make_shared<Poll>();
    for (const auto& [run, job] : m_jobs) {
        poll->runs.push_back(run);
        poll->jobIds[run] = job.jobId;
    }
    m_polling = true;
    runSqueue(poll, false);
}

void SlurmJobs::runSqueue(const std::shared_ptr<Poll>& poll, bool byUser)
{
    std::vector<std::string> ids;
    for (const auto& run : poll->runs)
        ids.push_back(poll->jobIds[run]);
    // `squeue -j <one id Slurm forgot>` fails ("Invalid job id specified",
    // exit 1) where a list of ids just leaves it out: then all of the
    // user's jobs are asked for instead.
    std::vector<std::string> argv{"squeue", "-h", "-o", slurm::kSqueueFormat};
    if (byUser) {
        argv.insert(argv.end(), {"-u", m_user});
    } else {
        argv.insert(argv.end(), {"-j", joined(ids, ',')});
    }
    const bool spawned = spawnSlurm(argv, [this, poll, byUser](CommandResult& r) {
        if (!r.succeeded()) {
            if (!byUser && r.err.find("Invalid job id") != std::string::npos) {
                runSqueue(poll, true);
                return;
            }
            std::cerr << "trainyard-agent: " << failure("squeue", r) << "\n";
            poll->unknown.insert(poll->runs.begin(), poll->runs.end());
            endPoll(poll);
            return;
        }
        std::string error;
        const auto rows = slurm::parseSqueue(r.out, &error);
        if (!error.empty())
            std::cerr << "trainyard-agent: squeue: " << error << "\n";
        for (const auto& run : poll->runs) {
            const std::string& jobId = poll->jobIds[run];
            const auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& q) { return q.jobId == jobId; });
            if (row == rows.end() || slurm::isFinalState(row->state)) {
                poll->missing.push_back(run);
                continue;
            }
            poll->alive[run] = observed(*row);
            if (isPendingState(row->state))
                poll->pending[run] = row->priority;
        }
        runPendingQuery(poll);
    });
    if (!spawned) {
        poll->unknown.insert(poll->runs.begin(), poll->runs.end());
        endPoll(poll);
    }
}

void SlurmJobs::runPendingQuery(const std::shared_ptr<Poll>& poll)
{
    std::set<std::string> partitions;
    for (const auto& [run, priority] : poll->pending) {
        const std::string list = poll->alive[run].value(fields::kPartition, std::string());
        for (std::size_t b = 0; b < list.size();) {
            const auto e = std::min(list.find(',', b), list.size());
            partitions.insert(list.substr(b, e - b));
            b = e + 1;
        }
    }
    if (partitions.empty()) {
        runSacct(poll);
        return;
    }
    const bool spawned = spawnSlurm({"squeue", "-h", "-t", "PD", "-p",
                                            joined(std::vector<std::string>(partitions.begin(), partitions.end()), ','),
                                            "-o", slurm::kPendingFormat},
            [this, poll](CommandResult& r) {
                if (r.succeeded()) {
                    std::string error;
                    const auto queue = slurm::parsePendingPriorities(r.out, &error);
                    if (!error.empty())
                        std::cerr << "trainyard-agent: squeue -t PD: " << error << "\n";
                    const slurm::PendingQueue ordered(queue); // read and sorted once per poll
                    for (const auto& [run, priority] : poll->pending)
                        poll->alive[run][fields::kJobsAhead] = ordered.ahead(poll->jobIds[run], priority);
                } else {
                    std::cerr << "trainyard-agent: " << failure("squeue -t PD", r) << "\n";
                    for (const auto& [run, priority] : poll->pending)
                        if (const auto j = m_jobs.find(run);
                                j != m_jobs.end() && j->second.seen.contains(fields::kJobsAhead))
                            poll->alive[run][fields::kJobsAhead] = j->second.seen[fields::kJobsAhead];
                }
                runSacct(poll);
            });
    if (!spawned)
        runSacct(poll);
}

void SlurmJobs::runSacct(const std::shared_ptr<Poll>& poll)
{
    if (poll->missing.empty()) {
        endPoll(poll);
        return;
    }
    std::vector<std::string> ids;
    for (const auto& run : poll->missing)
        ids.push_back(poll->jobIds[run]);
    const bool spawned = spawnSlurm(
            {"sacct", "-n", "-P", "-j", joined(ids, ','), "-o", slurm::kSacctFields}, [this, poll](CommandResult& r) {
                // Accounting off ("Slurm accounting storage is disabled"),
                // or not recorded yet: scontrol still knows a job for
                // MinJobAge after its end.
                if (r.succeeded()) {
                    std::string error;
                    const auto rows = slurm::parseSacct(r.out, &error);
                    if (!error.empty())
                        std::cerr << "trainyard-agent: sacct: " << error << "\n";
                    std::vector<std::string> still;
                    for (const auto& run : poll->missing) {
                        std::vector<slurm::AcctRow> mine;
                        for (const auto& row : rows)
                            if (slurm::jobOfStep(row.jobId) == poll->jobIds[run])
                                mine.push_back(row);
                        if (auto end = slurm::combineJob(mine))
                            poll->ended[run] = ending(run, *end);
                        else
                            still.push_back(run);
                    }
                    poll->missing = std::move(still);
                }
                runScontrol(poll);
            });
    if (!spawned)
        runScontrol(poll);
}

void SlurmJobs::runScontrol(const std::shared_ptr<Poll>& poll)
{
    if (poll->missing.empty()) {
        endPoll(poll);
        return;
    }
    for (const auto& run : poll->missing) {
        ++poll->outstanding;
        const bool spawned
                = spawnSlurm({"scontrol", "-o", "show", "job", poll->jobIds[run]}, [this, poll, run](CommandResult& r) {
                      const auto fields = r.succeeded()
                              ? slurm::parseScontrolJob(trimmed(r.out.substr(0, r.out.find('\n'))))
                              : std::map<std::string, std::string>{};
                      if (!fields.empty()) {
                          if (auto end = slurm::jobEndFromScontrol(fields))
                              poll->ended[run] = ending(run, *end);
                          else
                              poll->alive[run] = observed(fields); // squeue missed it
                      } else if (r.err.find("Invalid job id") == std::string::npos) {
                          // scontrol could not ask (controller down, ...): no news.
                          std::cerr << "trainyard-agent: " << failure("scontrol show job", r) << "\n";
                          poll->unknown.insert(run);
                      }
                      if (--poll->outstanding == 0)
                          endPoll(poll);
                  });
        if (!spawned) {
            poll->unknown.insert(run);
            --poll->outstanding;
        }
    }
    if (poll->outstanding == 0)
        endPoll(poll);
}

void SlurmJobs::endPoll(const std::shared_ptr<Poll>& poll)
{
    m_polling = false;
    const std::int64_t now = nowMs();
    for (const auto& run : poll->runs) {
        const auto jobIt = m_jobs.find(run);
        if (jobIt == m_jobs.end())
            continue;
        Job& job = jobIt->second;
        const auto p = m_registry.paths(run);
        if (fileExists(p.exitJson)) { // another agent recorded the end
            m_settled.insert(run);
            m_jobs.erase(jobIt);
            continue;
        }
        if (const auto e = poll->ended.find(run); e != poll->ended.end()) {
            finish(run, e->second);
            continue;
        }
        Json next;
        if (const auto a = poll->alive.find(run); a != poll->alive.end()) {
            next = a->second;
        } else if (poll->unknown.contains(run)) {
            continue;
        } else {
            // In none of squeue, sacct and scontrol: one such answer is no
            // proof of an end (a controller restarting, a job between states).
            next = job.seen;
            next[fields::kState] = agentproto::kStateEnding;
            const std::int64_t since = job.seen.value("missing_since_ms", now);
            next["missing_since_ms"] = since;
            if (now - since >= m_graceMs) {
                finish(run,
                        Json{{"finished_ms", now}, {"cancelled", fileExists(p.cancelJson)},
                                {fields::kSlurmState, job.seen.value(fields::kSlurmState, std::string())},
                                {fields::kLost, true},
                                {fields::kError,
                                        "Slurm no longer knows job " + job.jobId + " of run " + run
                                                + " (not in squeue, sacct or scontrol for "
                                                + std::to_string((now - since) / 1000) + " s)"}});
                continue;
            }
        }
        const bool announce = !job.announced || significantChange(job.seen, next);
        if (next != job.seen) {
            if (auto e = writeFileAtomic(p.slurmJson, dumpJson(next) + "\n"); !e.empty())
                std::cerr << "trainyard-agent: run " << run << ": " << e << "\n";
            job.seen = std::move(next);
        }
        if (announce) {
            job.announced = true;
            if (auto s = m_registry.status(run)) {
                Json ev = std::move(*s);
                ev[fields::kType] = messages::kSlurm;
                m_host.send(ev);
            }
        }
    }
}

Json SlurmJobs::ending(const std::string& run, const slurm::JobEnd& end) const
{
    const auto it = m_jobs.find(run);
    return exitRecord(
            end, it == m_jobs.end() ? Json::object() : it->second.seen, fileExists(m_registry.paths(run).cancelJson));
}

void SlurmJobs::finish(const std::string& run, const Json& exitJson)
{
    const auto p = m_registry.paths(run);
    if (auto e = writeExitJson(p.exitJson, exitJson); !e.empty())
        std::cerr << "trainyard-agent: run " << run << ": " << e << "\n";
    // The agent's run check announces `exited` once exit.json is there.
    m_jobs.erase(run);
    m_settled.insert(run);
}

} // namespace ty::agent
