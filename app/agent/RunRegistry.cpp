#include "RunRegistry.h"

#include "Posix.h"

#include "core/agentproto/Fields.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

namespace ty::agent {

namespace fields = agentproto::fields;

static std::string absolute(std::string path)
{
    if (!path.empty() && path.front() != '/') {
        char cwd[4096];
        if (::getcwd(cwd, sizeof cwd))
            path = std::string(cwd) + "/" + path;
    }
    return path;
}

std::string resolveStateDir(const std::string& flag)
{
    if (!flag.empty())
        return absolute(flag);
    if (const char* s = std::getenv("TRAINYARD_AGENT_STATE"); s && *s)
        return absolute(s);
    if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x)
        return absolute(std::string(x) + "/trainyard-agent");
    std::string home;
    if (const char* h = std::getenv("HOME"); h && *h)
        home = h;
    else if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir)
        home = pw->pw_dir;
    else
        home = "/tmp";
    return home + "/.local/state/trainyard-agent";
}

RunRegistry::RunRegistry(std::string stateDir)
    : m_stateDir(std::move(stateDir))
{
    while (m_stateDir.size() > 1 && m_stateDir.back() == '/')
        m_stateDir.pop_back();
}

std::string RunRegistry::prepare() const
{
    if (auto e = makeDirs(runsDir()); !e.empty())
        return e;
    return makeDirs(m_stateDir + "/gpu-claims");
}

RunPaths RunRegistry::paths(const std::string& run) const
{
    RunPaths p;
    p.dir = runsDir() + "/" + run;
    p.console = p.dir + "/console.log";
    p.stderrRanges = p.dir + "/console.stderr";
    p.runJson = p.dir + "/run.json";
    p.exitJson = p.dir + "/exit.json";
    p.cancelJson = p.dir + "/cancel.json";
    p.jobScript = p.dir + "/job.sbatch";
    p.slurmJson = p.dir + "/slurm.json";
    return p;
}

bool RunRegistry::validRunId(std::string_view run)
{
    if (run.empty() || run.size() > 64 || run == "." || run == "..")
        return false;
    return std::all_of(run.begin(), run.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
                || c == '-';
    });
}

bool RunRegistry::exists(const std::string& run) const
{
    return validRunId(run) && isDirectory(paths(run).dir);
}

static std::optional<Json> readJsonFile(const std::string& path)
{
    auto text = readFile(path);
    if (!text)
        return std::nullopt;
    Json j = Json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return std::nullopt;
    return j;
}

std::optional<Json> RunRegistry::runJson(const std::string& run) const
{
    return readJsonFile(paths(run).runJson);
}

std::optional<Json> RunRegistry::exitJson(const std::string& run) const
{
    return readJsonFile(paths(run).exitJson);
}

bool RunRegistry::supervisorAlive(long pid)
{
    if (pid <= 0)
        return false;
    if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
        return false;
    // Guard against pid reuse: a supervisor names itself "ty-supervisor".
    if (auto comm = readFile("/proc/" + std::to_string(pid) + "/comm"))
        return comm->rfind("ty-supervisor", 0) == 0;
    return true; // no /proc: trust kill()
}

bool RunRegistry::isSlurmRun(const Json& rj)
{
    return rj.contains(fields::kSlurmJob);
}

bool RunRegistry::isLost(const Json& rj, const std::string& run) const
{
    if (isSlurmRun(rj))
        return false; // Slurm says when it ended, or that it forgot the job (SlurmJobs.h)
    const auto sup = rj.value("supervisor_pid", 0L);
    if (sup <= 0)
        return false;
    if (supervisorAlive(sup))
        return false;
    // The supervisor writes exit.json before it exits: look again.
    return !fileExists(paths(run).exitJson);
}

// A Slurm run's fields (PROTOCOL.md "Slurm"): its final record (exit.json)
// once exited, else what the last poll saw (slurm.json; just submitted:
// pending).
static void addSlurmFields(Json& s, const Json& rj, const std::optional<Json>& ej, const std::optional<Json>& sj)
{
    s[fields::kSlurmJob] = rj.value(fields::kSlurmJob, std::string());
    const Json seen = sj.value_or(Json::object());
    const Json& last = ej ? *ej : seen;
    if (!ej) {
        s[fields::kState] = seen.value(fields::kState, std::string(agentproto::kStatePending));
        s[fields::kSlurmState] = seen.value(fields::kSlurmState, std::string("PENDING"));
    } else {
        s[fields::kSlurmState] = ej->value(fields::kSlurmState, seen.value(fields::kSlurmState, std::string()));
    }
    const bool pending = s[fields::kState] == agentproto::kStatePending;
    for (const char* key : {fields::kPartition, fields::kSlurmNodes, fields::kRunningMs})
        if (const auto it = last.find(key); it != last.end() && !it->is_null())
            s[key] = *it;
    if (pending)
        for (const char* key : {fields::kReason, fields::kJobsAhead, fields::kStartEstimateMs})
            if (const auto it = seen.find(key); it != seen.end() && !it->is_null())
                s[key] = *it;
}

std::optional<Json> RunRegistry::status(const std::string& run) const
{
    if (!validRunId(run))
        return std::nullopt;
    auto rj = runJson(run);
    if (!rj)
        return std::nullopt;
    const auto p = paths(run);
    Json s;
    s[fields::kRun] = run;
    s[fields::kPid] = rj->value("pid", 0L);
    s[fields::kPgid] = rj->value("pgid", 0L);
    s[fields::kSupervisorPid] = rj->value("supervisor_pid", 0L);
    s[fields::kArgv] = rj->value("argv", Json::array());
    s[fields::kWorkdir] = rj->value("workdir", std::string());
    if (rj->contains("gpus"))
        s[fields::kGpus] = (*rj)["gpus"];
    s[fields::kStartedMs] = rj->value("started_ms", 0L);
    s[fields::kRunDir] = p.dir;
    s[fields::kConsole] = p.console;
    auto ej = exitJson(run);
    if (ej) {
        s[fields::kState] = agentproto::kStateExited;
        s[fields::kFinishedMs] = ej->value("finished_ms", 0L);
        if (ej->contains("exit_code"))
            s[fields::kExitCode] = (*ej)["exit_code"];
        if (ej->contains("signal"))
            s[fields::kSignal] = (*ej)["signal"];
        s[fields::kCancelled] = ej->value("cancelled", false);
        if (ej->value(fields::kLost, false)) { // a Slurm job that Slurm forgot (SlurmJobs.cpp)
            s[fields::kLost] = true;
            s[fields::kError] = ej->value(fields::kError, std::string());
        }
    } else if (isLost(*rj, run)) {
        s[fields::kState] = agentproto::kStateExited;
        s[fields::kLost] = true;
        s[fields::kCancelled] = fileExists(p.cancelJson);
        s[fields::kError] = "the supervisor of run " + run + " ended without recording an exit status";
    } else {
        s[fields::kState] = agentproto::kStateRunning;
        s[fields::kCancelled] = fileExists(p.cancelJson);
    }
    if (isSlurmRun(*rj))
        addSlurmFields(s, *rj, ej, readJsonFile(p.slurmJson));
    const auto size = fileSize(p.console);
    s[fields::kConsoleSize] = size < 0 ? 0 : size;
    return s;
}

std::vector<std::string> RunRegistry::runIds() const
{
    std::vector<std::string> ids;
    DIR* d = ::opendir(runsDir().c_str());
    if (!d)
        return ids;
    while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (validRunId(name))
            ids.push_back(name);
    }
    ::closedir(d);
    std::sort(ids.begin(), ids.end());
    return ids;
}

bool RunRegistry::isLive(const std::string& run) const
{
    const auto p = paths(run);
    if (!isDirectory(p.dir))
        return false;
    if (fileExists(p.exitJson))
        return false;
    auto rj = runJson(run);
    if (!rj)
        return true; // being started right now (run.json comes before the claims lock is released)
    return !isLost(*rj, run);
}

int RunRegistry::lockClaims() const
{
    const std::string path = m_stateDir + "/gpu-claims/lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    while (::flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            ::close(fd);
            return -1;
        }
    }
    return fd;
}

void RunRegistry::unlockClaims(int fd) const
{
    if (fd >= 0) {
        ::flock(fd, LOCK_UN);
        ::close(fd);
    }
}

std::map<int, std::vector<std::pair<std::string, std::string>>> RunRegistry::liveClaims() const
{
    std::map<int, std::vector<std::pair<std::string, std::string>>> claims;
    const std::string root = m_stateDir + "/gpu-claims";
    DIR* top = ::opendir(root.c_str());
    if (!top)
        return claims;
    while (dirent* g = ::readdir(top)) {
        const std::string index = g->d_name;
        if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos || index.size() > 6)
            continue;
        const std::string dir = root + "/" + index;
        DIR* d = ::opendir(dir.c_str());
        if (!d)
            continue;
        while (dirent* e = ::readdir(d)) {
            const std::string run = e->d_name;
            if (validRunId(run) && isLive(run))
                claims[std::stoi(index)].emplace_back(run, readFile(dir + "/" + run).value_or(""));
        }
        ::closedir(d);
    }
    ::closedir(top);
    for (auto& [index, holders] : claims)
        std::sort(holders.begin(), holders.end());
    return claims;
}

RunRegistry::ClaimResult RunRegistry::claimGpus(
        const std::string& run, const std::string& client, const std::vector<int>& gpus) const
{
    ClaimResult res;
    for (int g : gpus) {
        const std::string dir = m_stateDir + "/gpu-claims/" + std::to_string(g);
        if (auto e = makeDirs(dir); !e.empty()) {
            res.error = e;
            return res;
        }
        DIR* d = ::opendir(dir.c_str());
        if (!d)
            continue;
        std::vector<std::string> holders;
        while (dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (validRunId(name))
                holders.push_back(name);
        }
        ::closedir(d);
        for (const auto& h : holders) {
            const std::string file = dir + "/" + h;
            if (!isLive(h)) {
                ::unlink(file.c_str()); // a claim dies with its run
                continue;
            }
            const std::string holderClient = readFile(file).value_or("");
            if (holderClient != client) {
                res.error = "run " + run + ": GPU " + std::to_string(g) + " is held by run " + h
                        + (holderClient.empty() ? std::string(" of another Trainyard instance")
                                                : " of another Trainyard instance (" + holderClient + ")");
                res.heldByOther = true;
                return res;
            }
        }
    }
    for (int g : gpus) {
        const std::string file = m_stateDir + "/gpu-claims/" + std::to_string(g) + "/" + run;
        if (auto e = writeFileAtomic(file, client); !e.empty()) {
            releaseClaims(res.files);
            res.files.clear();
            res.error = "run " + run + ": cannot claim GPU " + std::to_string(g) + ": " + e;
            return res;
        }
        res.files.push_back(file);
    }
    return res;
}

void RunRegistry::releaseClaims(const std::vector<std::string>& files) const
{
    for (const auto& f : files)
        ::unlink(f.c_str());
}

} // namespace ty::agent
