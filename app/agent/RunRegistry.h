#pragma once

// The state directory on the node (PROTOCOL.md "On the node"):
//   <state>/runs/<run>/console.log  merged stdout+stderr, raw bytes
//   <state>/runs/<run>/console.stderr  "offset length" lines: the stderr bytes of console.log
//   <state>/runs/<run>/run.json     start request + pid, pgid, supervisor_pid, started_ms
//   <state>/runs/<run>/exit.json    exit_code | signal, finished_ms, cancelled (supervisor)
//   <state>/runs/<run>/cancel.json  grace_ms, requested_ms (agent -> supervisor)
//   <state>/runs/<run>/job.sbatch   a Slurm run's batch script (SlurmJobs.h)
//   <state>/runs/<run>/slurm.json   a Slurm run's last observed state (SlurmJobs.h)
//   <state>/slurm-arrays/<run>/     a Slurm job array's array.sbatch and <task>.log links
//                                    (SlurmJobs.h), <run> its first run's id
//   <state>/gpu-claims/<index>/<run> one file per GPU held by a live run; its
//                                    content is the claiming client's id
//   <state>/gpu-claims/lock          flock()ed while claims are checked and made
// Everything here is derived from the files, so a restarted agent (or a second
// agent on the same state directory) sees the same runs.

#include "Framing.h"

#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ty::agent {

struct RunPaths {
    std::string dir, console, runJson, exitJson, cancelJson;
    std::string stderrRanges;         // console.stderr (StderrRanges.h)
    std::string jobScript, slurmJson; // Slurm runs: job.sbatch, slurm.json
};

// --state-dir, else $TRAINYARD_AGENT_STATE, else $XDG_STATE_HOME/trainyard-agent,
// else ~/.local/state/trainyard-agent.
// The result is absolute (relative paths are taken from the working directory).
std::string resolveStateDir(const std::string& flag);

class RunRegistry {
public:
    explicit RunRegistry(std::string stateDir);

    // Creates <state>/runs and <state>/gpu-claims. Empty string on success.
    std::string prepare() const;

    const std::string& stateDir() const { return m_stateDir; }
    std::string runsDir() const { return m_stateDir + "/runs"; }
    RunPaths paths(const std::string& run) const;

    // [A-Za-z0-9._-]{1,64}, and not "." or "..".
    static bool validRunId(std::string_view run);

    bool exists(const std::string& run) const;
    std::optional<Json> runJson(const std::string& run) const;
    std::optional<Json> exitJson(const std::string& run) const;
    // True when the supervisor is gone without writing exit.json (killed,
    // reboot). Never for a Slurm run (it has no supervisor: SlurmJobs.h).
    bool isLost(const Json& runJson, const std::string& run) const;
    // A run submitted to Slurm (run.json has slurm_job).
    static bool isSlurmRun(const Json& runJson);

    // The supervisor with this pid still exists (and is ours, not a reused pid).
    static bool supervisorAlive(long pid);

    // PROTOCOL.md's run status object; nullopt when the run has no run.json.
    // A Slurm run's state comes from its exit.json, else its slurm.json.
    std::optional<Json> status(const std::string& run) const;
    // Ids of all run directories, sorted.
    std::vector<std::string> runIds() const;

    // Claims `gpus` for `run` under the claims lock. Refuses (error text)
    // when a live run of another client holds one of them; claims of ended
    // runs are removed on the way. `fn` runs while the lock is held (it
    // starts the run); on its failure the new claims are dropped.
    // Returns the claim files created (for the supervisor to remove).
    struct ClaimResult {
        std::string error;
        bool heldByOther = false; // refused: another instance's run holds a GPU (reply code "gpu_claimed")
        std::vector<std::string> files;
    };
    ClaimResult claimGpus(const std::string& run, const std::string& client, const std::vector<int>& gpus) const;
    void releaseClaims(const std::vector<std::string>& files) const;
    // Live claims by GPU index: (run, client) pairs, for the `gpus` reply.
    // Read without the lock (claim files are written atomically).
    std::map<int, std::vector<std::pair<std::string, std::string>>> liveClaims() const;
    // fd of the claims lock (flock LOCK_EX), -1 on failure; unlock with unlockClaims.
    int lockClaims() const;
    void unlockClaims(int fd) const;

private:
    bool isLive(const std::string& run) const;
    std::string m_stateDir;
};

} // namespace ty::agent
