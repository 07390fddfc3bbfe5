#pragma once

// What Slurm's commands print, read; and the words Trainyard says about it.
// Pure functions of text: no I/O, no clock, no Qt (C++ standard library
// only), so the agent on a login node (app/agent/SlurmJobs.*) and the
// core's tests share them. Issue #26; app/agent/PROTOCOL.md "Slurm".
//
// Formats (Slurm 22.05 man pages: squeue(1) "-o <output_format>", sacct(1)
// "--parsable2", scontrol(1) "show job" with "-o" (one line per job)):
//   squeue -h -o kSqueueFormat   -> "%i|%T|%r|%S|%M|%N|%P|%Q" per job line
//   squeue -h -t PD -o "%i|%Q"   -> pending job ids and priorities
//   sacct -n -P -o kSacctFields  -> "JobID|State|ExitCode|Start|End|NodeList"
//   scontrol -o show job ID      -> "JobId=12 JobName=x ... JobState=TIMEOUT Reason=TimeLimit ..."
//   sinfo -h -o kSinfoFormat     -> "%R|%a|%N|%c|%m|%G|%l|%D" per partition line (a partition can
//                                   take several lines, one per node configuration)
//
// Times: the agent runs every command with SLURM_TIME_FORMAT=%s, so times
// come as seconds since the epoch; a Slurm that ignores it prints local
// time without an offset ("2026-03-29T02:30:00"), which is read in the
// cluster's time zone (the login node's TZ, the agent's local zone), so
// daylight-saving changes are handled as mktime() does (tm_isdst = -1).
// "Unknown", "N/A", "None" and "" are no time.
//
// Errors: parsers skip no line silently: a line that does not have the
// expected fields is reported in `error` (its 1-based number and text) and
// left out; the other lines are still returned.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ty::slurm {

inline constexpr const char* kSqueueFormat = "%i|%T|%r|%S|%M|%N|%P|%Q";
inline constexpr const char* kSacctFields = "JobID,State,ExitCode,Start,End,NodeList";
inline constexpr const char* kSinfoFormat = "%R|%a|%N|%c|%m|%G|%l|%D";

// Milliseconds since the epoch UTC of a Slurm time field: digits (epoch
// seconds, SLURM_TIME_FORMAT=%s) or "YYYY-MM-DDTHH:MM:SS" in the process's
// local zone (TZ). nullopt for "Unknown", "N/A", "None", "" and text that is
// neither.
std::optional<std::int64_t> parseTime(std::string_view text);

// One line of `squeue -h -o kSqueueFormat`.
struct QueueRow {
    std::string jobId;     // "1234", "1234_7" (array task), "1234_[8-10]" (array tasks still pending)
    std::string state;     // long form: PENDING, RUNNING, COMPLETING, CONFIGURING, SUSPENDED, ...
    std::string reason;    // "Priority", "Resources", "None", "(Dependency)"'s word without parentheses
    std::optional<std::int64_t> startMs; // actual start (running) or Slurm's estimate (pending); ms UTC
    std::string nodes;     // node list ("n[01-04]"), empty while pending
    std::string partition;
    std::int64_t priority = 0;
};
std::vector<QueueRow> parseSqueue(std::string_view text, std::string* error = nullptr);

// `squeue -h -t PD -o "%i|%Q"`: (job id, priority) of every pending job;
// jobsAhead counts those with a higher priority than `priority` (ties: a
// smaller job id is ahead, as Slurm orders them).
std::vector<std::pair<std::string, std::int64_t>> parsePendingPriorities(std::string_view text, std::string* error = nullptr);
int jobsAhead(const std::vector<std::pair<std::string, std::int64_t>>& pending, std::string_view jobId, std::int64_t priority);

// One line of `sacct -n -P -o kSacctFields`.
struct AcctRow {
    std::string jobId; // "1234", "1234.batch", "1234.extern", "1234.0", "1234_7.0"
    std::string state; // as printed: "CANCELLED by 54321", "OUT_OF_MEMORY", ...
    int exitCode = 0;  // ExitCode "2:0" -> 2
    int signal = 0;    // ExitCode "0:9" -> 9
    std::optional<std::int64_t> startMs, endMs;
    std::string nodes;
};
std::vector<AcctRow> parseSacct(std::string_view text, std::string* error = nullptr);

// The job id a step row belongs to: "1234.batch" -> "1234", "1234_7.0" -> "1234_7".
std::string jobOfStep(std::string_view stepId);

// The final state word: "CANCELLED by 54321" -> "CANCELLED", "COMPLETED" -> "COMPLETED".
std::string stateWord(std::string_view state);

// True for states after which the job will not run again (COMPLETED,
// FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED,
// BOOT_FAIL, DEADLINE); false for PENDING, RUNNING, COMPLETING, REQUEUED,
// SUSPENDED, ... (PREEMPTED with --requeue comes back as PENDING).
bool isFinalState(std::string_view state);

// How a job ended, from every row of it (allocation and steps).
struct JobEnd {
    std::string state;   // the deciding state word (below)
    int exitCode = 0;
    int signal = 0;
    bool cancelled = false; // CANCELLED (by anyone)
    std::optional<std::int64_t> startMs, endMs;
    std::string nodes;
};
// Combines a job's rows (sacct: the allocation, .batch, .extern, .0 ...):
// nullopt while the allocation's state is not final. Otherwise the
// allocation row decides, except that a step that ended CANCELLED,
// OUT_OF_MEMORY, TIMEOUT, NODE_FAIL or FAILED wins over an allocation
// COMPLETED (cluster_utils#87: the allocation said COMPLETED while step .0
// was CANCELLED). The exit code is the allocation's, else the first failed
// step's; .extern steps never decide.
std::optional<JobEnd> combineJob(const std::vector<AcctRow>& rowsOfOneJob);

// `scontrol -o show job`: key=value fields of one job's line (values may
// hold spaces only in the last fields Command=, WorkDir=, StdOut=..., which
// run to the next " Key=" of a known key). Empty map for a line that is not one.
std::map<std::string, std::string> parseScontrolJob(std::string_view line);
// The end of the job in those fields (JobState, ExitCode, StartTime,
// EndTime, NodeList), nullopt while its JobState is not final.
std::optional<JobEnd> jobEndFromScontrol(const std::map<std::string, std::string>& fields);

// One partition of `sinfo -h -o kSinfoFormat` (lines of the same partition merged).
struct GresCount {
    std::string name; // "gpu"
    std::string type; // "a100", or "" for a count-only GRES
    int count = 0;    // per node
};
struct Partition {
    std::string name;
    bool isDefault = false; // sinfo marks it with '*'
    std::string state;      // "up", "down", "drain", "inact"
    std::vector<std::string> nodes; // node list as sinfo printed it, one entry per line ("n[01-04]")
    int cpus = 0;                   // per node, largest
    std::int64_t memoryMib = 0;     // per node, largest
    std::vector<GresCount> gres;    // per node, largest count per (name, type)
    std::optional<std::int64_t> maxTimeS; // nullopt: infinite
    int nodeCount = 0;
};
std::vector<Partition> parseSinfo(std::string_view text, std::string* error = nullptr);
// "gpu:a100:4(S:0-1),gpu:2" -> [{gpu,a100,4},{gpu,"",2}]; "(null)" -> [].
std::vector<GresCount> parseGres(std::string_view text);
// Slurm's time limits: "UNLIMITED"/"infinite" -> nullopt, "30" (minutes), "1:30:00",
// "2-00:00:00", "1-12", "5:00" (min:sec) -> seconds. -1 for text that is none of them.
std::optional<std::int64_t> parseTimeLimit(std::string_view text, bool* ok = nullptr);
// Seconds -> sbatch's --time text "D-HH:MM:SS": 90 -> "0-00:01:30" (Slurm
// keeps whole minutes, rounding up: 2 minutes here).
std::string formatTimeLimit(std::int64_t seconds);

// "22.05.8" from `sinfo --version` ("slurm 22.05.8\n"); "" when the text is not that.
std::string parseVersion(std::string_view text);

// Trainyard's words for a pending job (the run's pending reason):
//   "waiting: Slurm says Priority: 14 jobs ahead in partition gpu, start estimated 2026-12-06 14:05 UTC"
//   "waiting: Slurm says Resources: the partition's nodes are busy"
//   "waiting: Slurm says Dependency: an earlier step has not finished"
// Known reasons get a short explanation; any other is quoted as Slurm gave it.
// `startMs` (Slurm's estimate) is printed in UTC ("YYYY-MM-DD HH:MM UTC").
std::string pendingText(const std::string& reason, int jobsAhead, const std::string& partition,
        std::optional<std::int64_t> startMs);

} // namespace ty::slurm
