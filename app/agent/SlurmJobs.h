#pragma once

// Slurm runs (PROTOCOL.md "Slurm", revision 4; issue #26): on a login node a
// run is a batch job. The agent submits it with sbatch, follows its state
// with squeue (and sacct, else scontrol, once squeue no longer shows it) and
// cancels it with scancel; Slurm writes its output straight to the run's
// console.log, so tails work as for any run. Every Slurm command runs as an
// asynchronous child (Commands.h): no request waits for Slurm.
//
// Files in the run directory (RunRegistry.h): job.sbatch (the script),
// run.json (with slurm_job), slurm.json (what the last poll saw: state,
// slurm_state, reason, jobs_ahead, ...; written on every change, so another
// agent on the same state directory reports the same), exit.json once Slurm
// gives the final state (tmp + link: the first agent to find it writes it).
// Polls run every pollMs while any Slurm run of the state directory has not
// exited, whichever agent submitted it.
//
// Job arrays (revision 5, PROTOCOL.md "Job arrays"): `start_array` submits
// several runs as one `sbatch --array`; each task is then a Slurm run like
// any other, with the job id "<array>_<task>" (squeue -r shows each task on
// a line of its own). The array's directory <state>/slurm-arrays/<first run>/
// holds array.sbatch (which picks the task's run by $SLURM_ARRAY_TASK_ID)
// and the links <task>.log -> that run's console.log that Slurm writes to;
// a poll removes it once every task has its exit.json (or its run
// directory is gone).
//
// Text of Slurm's commands is read by core/slurm/SlurmText.h (pure functions).

#include "Commands.h"
#include "Framing.h"
#include "RunRegistry.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ty::slurm {
struct JobEnd;
} // namespace ty::slurm

namespace ty::agent {

// What SlurmJobs needs of the agent.
struct SlurmHost {
    std::function<void(const Json& id, Json body)> reply;
    std::function<void(const Json& id, const std::string& error, const std::string& code)> replyError;
    std::function<void(const Json& event)> send;
    // Follow a live run until its exit.json appears, then announce `exited`.
    std::function<void(const std::string& run)> track;
    // Handle a request that waited for a run's submission.
    std::function<void(FrameReader::Frame& frame)> handleFrame;
};

class SlurmJobs {
public:
    // pollMs/graceMs <= 0: $TRAINYARD_AGENT_SLURM_POLL_MS (default 5000) and
    // $TRAINYARD_AGENT_SLURM_GRACE_MS (default 300000).
    SlurmJobs(const RunRegistry& registry, Commands& commands, SlurmHost host, std::int64_t pollMs = 0,
            std::int64_t graceMs = 0);

    // `slurm_info`: sinfo --version and the partitions.
    void opInfo(const Json& id);
    // `start` with a `slurm` object. The agent has checked `run`, `workdir`
    // and `env` (given here as `extraEnv`) already.
    void opStart(const Json& id, const Json& req, const std::string& run, const std::string& workdir,
            const std::vector<std::pair<std::string, std::string>>& extraEnv);
    // `start_array` (revision 5): every run is checked before anything is
    // created; a bad request creates and submits nothing.
    void opStartArray(const Json& id, const Json& req);
    // `cancel` of a Slurm run whose status object is `status`.
    void opCancel(const Json& id, const std::string& run, const Json& status);

    // A request naming a run whose sbatch has not answered yet: kept, and
    // handled after the start's reply. False when no such submission runs.
    bool defer(const std::string& run, FrameReader::Frame& frame);
    // sbatch is running: the agent must not end before it answered (a job
    // whose id nobody recorded would be queued).
    bool submitting() const { return !m_submissions.empty(); }

    // Called every agent tick: starts a poll when one is due.
    void tick(std::int64_t nowMonotonicMs);

private:
    struct Job {
        std::string run, jobId;
        Json seen; // slurm.json's content: what the last poll found
        // Announced to this agent's client: a job this agent did not submit
        // (an earlier or another agent did) gets one `slurm` event after the
        // first poll, changed or not, so a client that reconnects learns
        // what happened while it was away.
        bool announced = true;
    };
    struct Submission {
        std::vector<FrameReader::Frame> deferred;
    };
    struct Poll; // one round of squeue, sacct, scontrol

    void refreshJobs();
    void startPoll();
    void runSqueue(const std::shared_ptr<Poll>& poll, bool byUser);
    void runPendingQuery(const std::shared_ptr<Poll>& poll);
    void runSacct(const std::shared_ptr<Poll>& poll);
    void runScontrol(const std::shared_ptr<Poll>& poll);
    void endPoll(const std::shared_ptr<Poll>& poll);
    // exit.json of a job Slurm says has ended.
    Json ending(const std::string& run, const slurm::JobEnd& end) const;
    // Writes exit.json (unless another agent did) and forgets the job.
    void finish(const std::string& run, const Json& exitJson);
    void submitted(const Json& id, const std::string& run, const Json& runJson, CommandResult& r);
    struct ArraySubmission;
    void arraySubmitted(const std::shared_ptr<ArraySubmission>& a, CommandResult& r);
    // Removes the files of an array that was not submitted (or was cancelled at once).
    void removeArrayFiles(const ArraySubmission& a) const;
    // Removes the directories of arrays whose every task has exited.
    void removeFinishedArrays() const;
    std::string arraysDir() const;
    bool spawnSlurm(const std::vector<std::string>& argv, Commands::Done done, bool separateStderr = true,
            const std::vector<std::string>* env = nullptr);

    const RunRegistry& m_registry;
    Commands& m_commands;
    SlurmHost m_host;
    std::int64_t m_pollMs;
    std::int64_t m_graceMs;
    std::vector<std::string> m_queryEnv; // the agent's, without SQUEUE_* & co, SLURM_TIME_FORMAT=%s
    std::string m_user;
    std::map<std::string, Job> m_jobs;               // live Slurm runs of the state directory, by run
    std::set<std::string> m_settled;                 // runs that are not Slurm runs, or have exited
    std::map<std::string, Submission> m_submissions; // sbatch running, by run
    bool m_polling = false;
    bool m_finishedAny = false; // a run ended in this poll: maybe its array's directory can go
    std::int64_t m_nextPoll = 0;
};

} // namespace ty::agent
