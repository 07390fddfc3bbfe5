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
#include <iterator>

#include <dirent.h>
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

// A request's `sbatch` options (null: none), checked: "" or what is wrong.
std::string readSbatchOptions(const Json& sbatch, std::vector<std::string>& options)
{
    if (sbatch.is_null())
        return {};
    if (!sbatch.is_array())
        return "\"sbatch\" must be an array of strings";
    for (const auto& a : sbatch) {
        if (!a.is_string())
            return "\"sbatch\" must be an array of strings";
        options.push_back(a.get<std::string>());
        if (const auto refused = refusedSbatchOption(options.back()); !refused.empty())
            return "sbatch option \"" + options.back() + "\" (" + refused
                    + ") is the agent's: it sets the run's console, workdir and job name, and one run is one job";
    }
    return {};
}

// A word for bash, single-quoted: nothing in it is expanded.
std::string shellQuoted(const std::string& s)
{
    std::string q = "'";
    for (const char c : s) {
        if (c == '\'')
            q += "'\\''";
        else
            q += c;
    }
    return q + "'";
}

// A name the shell can export: [A-Za-z_][A-Za-z0-9_]*.
bool isShellName(const std::string& name)
{
    const auto word = [](char c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
    return !name.empty() && word(name[0])
            && std::all_of(name.begin(), name.end(), [&](char c) { return word(c) || (c >= '0' && c <= '9'); });
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

// A Slurm run's job.sbatch (0700) and its empty console.log, in its run
// directory (made already): "" or what failed. The console exists from the
// start (Slurm appends to it once the job runs), so a tail of a pending job
// waits at size 0.
std::string writeJobFiles(const RunPaths& p, const std::string& script)
{
    std::string error = writeFileAtomic(p.jobScript, script);
    if (error.empty() && ::chmod(p.jobScript.c_str(), 0700) != 0)
        error = "cannot chmod " + p.jobScript + ": " + errnoText(errno);
    if (error.empty()) {
        const int fd = ::open(p.console.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
            error = "cannot create " + p.console + ": " + errnoText(errno);
        else
            ::close(fd);
    }
    return error;
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
    if (auto e = readSbatchOptions(slurmReq.value(fields::kSbatch, Json()), options); !e.empty()) {
        m_host.replyError(id, "run " + run + ": " + e, {});
        return;
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
    if (const std::string error = writeJobFiles(p, scriptIt->get<std::string>()); !error.empty()) {
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

// ---- start_array (revision 5) -------------------------------------------------

struct SlurmJobs::ArraySubmission {
    struct Task {
        std::string run, workdir, script;
        Json env;                                              // as requested
        std::vector<std::pair<std::string, std::string>> vars; // env, then TRAINYARD_*
    };
    Json id;
    std::string name; // runs[0].run: the job name and the array directory's
    std::string dir;  // <state>/slurm-arrays/<name>
    std::vector<Task> tasks;
    std::vector<std::string> options; // the request's sbatch options
    int maxConcurrent = 0;
    Json client;
    std::int64_t startedMs = 0;
    std::size_t created = 0; // run directories created (the first ones of tasks)
    bool dirCreated = false;
};

std::string SlurmJobs::arraysDir() const
{
    return m_registry.stateDir() + "/slurm-arrays";
}

namespace {

constexpr std::size_t kMaxArrayTasks = 1000;

// array.sbatch: the task's run by $SLURM_ARRAY_TASK_ID (sbatch's --chdir
// and --export are the whole array's): its workdir, its env and
// TRAINYARD_*, then its own script. Every name and value single-quoted.
std::string arrayScript(const std::string& name, const std::vector<std::string>& workdirs,
        const std::vector<std::vector<std::pair<std::string, std::string>>>& vars,
        const std::vector<std::string>& scripts)
{
    std::string s = "#!/bin/bash\n"
                    "# trainyard-agent: job array "
            + name + " of " + std::to_string(workdirs.size())
            + " runs (PROTOCOL.md \"Job arrays\"): task i runs runs[i]'s job.sbatch in its workdir\n"
              "case \"${SLURM_ARRAY_TASK_ID-}\" in\n";
    for (std::size_t i = 0; i < workdirs.size(); ++i) {
        s += std::to_string(i) + ")\n";
        s += "    cd -- " + shellQuoted(workdirs[i]) + " || exit 1\n";
        for (const auto& [k, v] : vars[i])
            s += "    export " + shellQuoted(k) + "=" + shellQuoted(v) + "\n";
        s += "    exec /bin/bash " + shellQuoted(scripts[i]) + "\n    ;;\n";
    }
    s += "*)\n"
         "    echo \"trainyard-agent: array.sbatch: no run for array task '${SLURM_ARRAY_TASK_ID-}' (tasks are 0-"
            + std::to_string(workdirs.size() - 1)
            + ")\" >&2\n"
              "    exit 2\n"
              "    ;;\n"
              "esac\n";
    return s;
}

std::vector<std::string> agentEnvironment()
{
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e)
        env.emplace_back(*e);
    return env;
}

} // namespace

void SlurmJobs::opStartArray(const Json& id, const Json& req)
{
    const auto refuse = [&](const std::string& e) { m_host.replyError(id, e, {}); };
    const auto runsIt = req.find(fields::kRuns);
    if (runsIt == req.end() || !runsIt->is_array() || runsIt->empty() || runsIt->size() > kMaxArrayTasks) {
        refuse("start_array: \"runs\" must be an array of 1 to " + std::to_string(kMaxArrayTasks)
                + " objects {\"run\", \"workdir\", \"env\", \"script\"}");
        return;
    }
    auto a = std::make_shared<ArraySubmission>();
    a->id = id;
    if (auto e = readSbatchOptions(req.value(fields::kSbatch, Json()), a->options); !e.empty()) {
        refuse("start_array: " + e);
        return;
    }
    if (auto it = req.find(fields::kMaxConcurrent); it != req.end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() <= 0 || it->get<std::int64_t>() > 1000000) {
            refuse("start_array: \"max_concurrent\" must be an integer > 0");
            return;
        }
        a->maxConcurrent = it->get<int>();
    }
    if (auto it = req.find(fields::kClient); it != req.end() && !it->is_null()) {
        if (!it->is_string()) {
            refuse("start_array: \"client\" must be a string");
            return;
        }
        a->client = *it;
    }
    if (m_registry.stateDir().find('%') != std::string::npos) {
        // sbatch would expand %a & co in --output.
        refuse("start_array: the state directory's path has a '%' (" + m_registry.stateDir()
                + "): sbatch would expand it");
        return;
    }
    std::map<std::string, std::size_t> index; // run -> its place in `runs`
    for (std::size_t i = 0; i < runsIt->size(); ++i) {
        const Json& r = (*runsIt)[i];
        const std::string at = "runs[" + std::to_string(i) + "]";
        if (!r.is_object()) {
            refuse(at + ": must be an object {\"run\", \"workdir\", \"env\", \"script\"}");
            return;
        }
        const std::string run = r.value(fields::kRun, Json()).is_string() ? r[fields::kRun].get<std::string>() : "";
        if (!RunRegistry::validRunId(run)) {
            refuse(at + ": invalid run id \"" + run + "\" (expected [A-Za-z0-9._-]{1,64})");
            return;
        }
        const std::string who = at + " (run " + run + ")";
        if (const auto [it, added] = index.emplace(run, i); !added) {
            refuse(who + ": the run is runs[" + std::to_string(it->second) + "] too: each run once");
            return;
        }
        ArraySubmission::Task t;
        t.run = run;
        t.workdir = r.value(fields::kWorkdir, Json()).is_string() ? r[fields::kWorkdir].get<std::string>() : "";
        if (t.workdir.empty() || t.workdir.front() != '/') {
            refuse(who + ": workdir \"" + t.workdir + "\" is not an absolute path");
            return;
        }
        if (!isDirectory(t.workdir)) {
            refuse(who + ": workdir " + t.workdir + " does not exist or is not a directory");
            return;
        }
        t.env = r.value(fields::kEnv, Json());
        if (t.env.is_null())
            t.env = Json::object();
        if (!t.env.is_object()) {
            refuse(who + ": \"env\" must be an object of strings");
            return;
        }
        for (auto it = t.env.begin(); it != t.env.end(); ++it) {
            if (!isShellName(it.key())) {
                refuse(who + ": env name \"" + it.key() + "\" is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)");
                return;
            }
            if (!it.value().is_string()) {
                refuse(who + ": env entry \"" + it.key() + "\" must be a string");
                return;
            }
            t.vars.emplace_back(it.key(), it.value().get<std::string>());
        }
        const auto p = m_registry.paths(run);
        t.vars.emplace_back("TRAINYARD_RUN_ID", run);
        t.vars.emplace_back("TRAINYARD_RUN_DIR", p.dir);
        t.vars.emplace_back("TRAINYARD_METRICS_FILE", p.dir + "/metrics.jsonl");
        const auto scriptIt = r.find(fields::kScript);
        if (scriptIt == r.end() || !scriptIt->is_string() || scriptIt->get<std::string>().empty()) {
            refuse(who + ": \"script\" is missing (the batch script's text)");
            return;
        }
        t.script = scriptIt->get<std::string>();
        if (m_submissions.contains(run) || isDirectory(p.dir)) {
            refuse(who + ": run " + run + " already exists on this node (" + p.dir + ")");
            return;
        }
        a->tasks.push_back(std::move(t));
    }
    a->name = a->tasks.front().run;
    a->dir = arraysDir() + "/" + a->name;
    if (fileExists(a->dir)) {
        refuse("runs[0] (run " + a->name + "): the array directory " + a->dir
                + " exists: an earlier array of that name has tasks that have not ended");
        return;
    }

    // Every run's directory, job.sbatch and empty console, as for `start`;
    // then the array's directory. Any failure removes all of it.
    std::string error;
    for (std::size_t i = 0; i < a->tasks.size() && error.empty(); ++i) {
        const auto& t = a->tasks[i];
        const auto p = m_registry.paths(t.run);
        const std::string who = "runs[" + std::to_string(i) + "] (run " + t.run + "): ";
        if (::mkdir(p.dir.c_str(), 0755) != 0) {
            error = who
                    + (errno == EEXIST ? "run " + t.run + " already exists on this node (" + p.dir + ")"
                                       : "cannot create " + p.dir + ": " + errnoText(errno));
            break;
        }
        ++a->created;
        error = writeJobFiles(p, t.script);
        if (!error.empty())
            error = who + error;
    }
    const std::string arrayWho = "array " + a->name + ": ";
    if (error.empty())
        if (auto e = makeDirs(arraysDir(), 0755); !e.empty())
            error = arrayWho + e;
    if (error.empty()) {
        if (::mkdir(a->dir.c_str(), 0755) != 0)
            error = arrayWho + "cannot create " + a->dir + ": " + errnoText(errno);
        else
            a->dirCreated = true;
    }
    std::vector<std::string> workdirs, scripts;
    std::vector<std::vector<std::pair<std::string, std::string>>> vars;
    for (std::size_t i = 0; i < a->tasks.size() && error.empty(); ++i) {
        const auto p = m_registry.paths(a->tasks[i].run);
        const std::string link = a->dir + "/" + std::to_string(i) + ".log";
        if (::symlink(p.console.c_str(), link.c_str()) != 0)
            error = arrayWho + "cannot create " + link + ": " + errnoText(errno);
        workdirs.push_back(a->tasks[i].workdir);
        scripts.push_back(p.jobScript);
        vars.push_back(a->tasks[i].vars);
    }
    const std::string script = a->dir + "/array.sbatch";
    if (error.empty()) {
        if (auto e = writeFileAtomic(script, arrayScript(a->name, workdirs, vars, scripts)); !e.empty())
            error = arrayWho + e;
        else if (::chmod(script.c_str(), 0700) != 0)
            error = arrayWho + "cannot chmod " + script + ": " + errnoText(errno);
    }
    if (!error.empty()) {
        removeArrayFiles(*a);
        refuse(error);
        return;
    }

    const std::string range = "0-" + std::to_string(a->tasks.size() - 1)
            + (a->maxConcurrent > 0 ? "%" + std::to_string(a->maxConcurrent) : std::string());
    std::vector<std::string> argv{"sbatch", "--parsable", "--array=" + range, "--job-name=" + a->name,
            "--output=" + a->dir + "/%a.log", "--error=" + a->dir + "/%a.log", "--open-mode=append", "--export=ALL"};
    argv.insert(argv.end(), a->options.begin(), a->options.end());
    argv.push_back(script);
    // The agent's environment: each task's own is set by array.sbatch.
    const auto env = agentEnvironment();
    a->startedMs = nowMs();
    for (const auto& t : a->tasks)
        m_submissions[t.run];
    const bool spawned = spawnSlurm(
            argv, [this, a](CommandResult& r) { arraySubmitted(a, r); }, true, &env);
    if (!spawned) {
        for (const auto& t : a->tasks)
            m_submissions.erase(t.run);
        removeArrayFiles(*a);
        refuse(arrayWho + "cannot start sbatch: " + errnoText(errno));
    }
}

void SlurmJobs::arraySubmitted(const std::shared_ptr<ArraySubmission>& a, CommandResult& r)
{
    const std::string arrayWho = "array " + a->name + " (" + std::to_string(a->tasks.size()) + " runs): ";
    std::string error;
    std::string jobId;
    if (!r.succeeded()) {
        error = arrayWho + failure("sbatch", r);
        if (r.timedOut) {
            // It may have queued the array before it was killed: nothing must stay queued.
            spawnSlurm({"scancel", "--name=" + a->name, "--user=" + m_user}, [](CommandResult&) {});
            error += " (cancelled any job named " + a->name + ")";
        }
    } else {
        // "1234" or "1234;cluster"
        jobId = trimmed(r.out.substr(0, r.out.find_first_of(";\n")));
        if (jobId.empty() || jobId.find_first_not_of("0123456789") != std::string::npos)
            error = arrayWho + "sbatch printed no job id: \"" + trimmed(r.out) + "\"";
    }
    const Json seen{{fields::kState, agentproto::kStatePending}, {fields::kSlurmState, "PENDING"}};
    Json replyRuns = Json::array();
    for (std::size_t i = 0; i < a->tasks.size() && error.empty(); ++i) {
        const auto& t = a->tasks[i];
        const auto p = m_registry.paths(t.run);
        const std::string task = jobId + "_" + std::to_string(i);
        Json rj{{fields::kRun, t.run}, {fields::kArgv, Json::array()}, {fields::kWorkdir, t.workdir},
                {fields::kEnv, t.env}, {"agent_version", TRAINYARD_VERSION},
                {fields::kSlurm, Json{{fields::kSbatch, a->options}}}, {fields::kStartedMs, a->startedMs},
                {fields::kPid, 0}, {fields::kPgid, 0}, {fields::kSupervisorPid, 0}, {fields::kSlurmJob, task},
                {fields::kArrayJob, jobId}, {fields::kArrayTask, i}};
        if (a->maxConcurrent > 0)
            rj[fields::kSlurm][fields::kMaxConcurrent] = a->maxConcurrent;
        if (a->client.is_string())
            rj[fields::kClient] = a->client;
        error = writeFileAtomic(p.slurmJson, dumpJson(seen) + "\n");
        if (error.empty())
            error = writeFileAtomic(p.runJson, dumpJson(rj) + "\n");
        if (!error.empty()) {
            spawnSlurm({"scancel", jobId}, [](CommandResult&) {});
            error = "runs[" + std::to_string(i) + "] (run " + t.run + "): " + error + " (array job " + jobId
                    + " cancelled)";
            break;
        }
        replyRuns.push_back(Json{{fields::kRun, t.run}, {fields::kSlurmJob, task}, {fields::kRunDir, p.dir},
                {fields::kConsole, p.console}, {fields::kStartedMs, a->startedMs}, {fields::kPid, 0},
                {fields::kPgid, 0}, {fields::kSupervisorPid, 0}});
    }
    std::vector<FrameReader::Frame> deferred;
    for (const auto& t : a->tasks) {
        auto& d = m_submissions[t.run].deferred;
        std::move(d.begin(), d.end(), std::back_inserter(deferred));
        m_submissions.erase(t.run);
    }
    if (!error.empty()) {
        removeArrayFiles(*a);
        m_host.replyError(a->id, error, {});
    } else {
        for (std::size_t i = 0; i < a->tasks.size(); ++i) {
            const std::string& run = a->tasks[i].run;
            m_jobs[run] = Job{run, jobId + "_" + std::to_string(i), seen};
            m_host.track(run);
        }
        m_nextPoll = 0; // look at them at once
        m_host.reply(a->id, Json{{fields::kSlurmJob, jobId}, {fields::kRuns, std::move(replyRuns)}});
    }
    for (auto& frame : deferred)
        m_host.handleFrame(frame);
}

void SlurmJobs::removeArrayFiles(const ArraySubmission& a) const
{
    for (std::size_t i = 0; i < a.created; ++i) {
        const auto p = m_registry.paths(a.tasks[i].run);
        for (const auto* f : {&p.jobScript, &p.console, &p.slurmJson, &p.runJson})
            ::unlink(f->c_str());
        ::rmdir(p.dir.c_str());
    }
    if (a.dirCreated) {
        for (std::size_t i = 0; i < a.tasks.size(); ++i)
            ::unlink((a.dir + "/" + std::to_string(i) + ".log").c_str());
        ::unlink((a.dir + "/array.sbatch").c_str());
        ::rmdir(a.dir.c_str());
    }
}

void SlurmJobs::removeFinishedArrays() const
{
    // An array's directory is needed while a task may still write through
    // its <i>.log link: until every task has exit.json (or its run
    // directory is gone). One without array.sbatch is still being made.
    const std::string root = arraysDir();
    DIR* top = ::opendir(root.c_str());
    if (!top)
        return;
    std::vector<std::string> names;
    while (dirent* e = ::readdir(top))
        if (RunRegistry::validRunId(e->d_name))
            names.emplace_back(e->d_name);
    ::closedir(top);
    for (const auto& name : names) {
        const std::string dir = root + "/" + name;
        if (!fileExists(dir + "/array.sbatch"))
            continue;
        DIR* d = ::opendir(dir.c_str());
        if (!d)
            continue;
        std::vector<std::string> entries;
        bool done = true;
        while (dirent* e = ::readdir(d)) {
            const std::string entry = e->d_name;
            if (entry == "." || entry == "..")
                continue;
            entries.push_back(entry);
            if (!entry.ends_with(".log"))
                continue;
            char target[4096];
            const ssize_t n = ::readlink((dir + "/" + entry).c_str(), target, sizeof target - 1);
            if (n <= 0)
                continue;
            std::string runDir(target, std::size_t(n));
            runDir = runDir.substr(0, runDir.rfind('/'));
            if (isDirectory(runDir) && !fileExists(runDir + "/exit.json"))
                done = false;
        }
        ::closedir(d);
        if (!done)
            continue;
        for (const auto& entry : entries)
            ::unlink((dir + "/" + entry).c_str());
        ::rmdir(dir.c_str());
    }
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
    removeFinishedArrays();
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
    // -r: one line per array task, also for the pending tasks Slurm keeps
    // as one record ("1234_[2-5%2]" without it): each task is a run.
    std::vector<std::string> argv{"squeue", "-h", "-r", "-o", slurm::kSqueueFormat};
    if (byUser) {
        argv.insert(argv.end(), {"-u", m_user});
    } else {
        argv.insert(argv.end(), {"-j", joined(ids, ',')});
    }
    const bool spawned = spawnSlurm(argv, [this, poll, byUser](CommandResult& r) {
        if (!r.succeeded()) {
            if (!byUser && slurm::saysUnknownJob(said(r))) {
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
                      } else if (!slurm::saysUnknownJob(said(r))) {
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
        } else if (job.jobId.find('_') != std::string::npos
                && job.seen.value(fields::kState, std::string()) == agentproto::kStatePending
                && fileExists(p.cancelJson)) {
            // An array task cancelled (by this run's `cancel`) while it was
            // pending: Slurm keeps no record of it at all (Slurm 22.05: not
            // in sacct, and scontrol forgets it at once), so this is its end.
            Json ej{{"exit_code", 0}, {"finished_ms", now}, {"cancelled", true}, {fields::kSlurmState, "CANCELLED"}};
            if (job.seen.contains(fields::kPartition))
                ej[fields::kPartition] = job.seen[fields::kPartition];
            finish(run, ej);
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
    // The last task of an array may have ended just now, and an idle agent
    // polls no more: its array's directory goes at once.
    if (std::exchange(m_finishedAny, false))
        removeFinishedArrays();
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
    m_finishedAny = true;
    m_jobs.erase(run);
    m_settled.insert(run);
}

} // namespace ty::agent
