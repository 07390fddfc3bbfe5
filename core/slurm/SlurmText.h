#pragma once

// What Slurm's commands print, read; and the words Trainyard says about it.
// Pure functions of text: no I/O, no clock, no Qt (C++ standard library
// only), so the agent on a login node (app/agent/SlurmJobs.*) and the
// core's tests share them. Issue #26; app/agent/PROTOCOL.md "Slurm".
//
// Formats (Slurm 22.05 man pages: squeue(1) "-o <output_format>", sacct(1)
// "--parsable2", scontrol(1) "show job" with "-o" (one line per job)):
//   squeue -h -o kSqueueFormat   -> "%i|%T|%r|%S|%M|%N|%P|%Q" per job line
//   squeue -h -t PD -o kPendingFormat -> "%i|%Q|%r": pending job ids, priorities, reasons
//                                   ("%i|%Q", without the reason, is read too)
//   sacct -n -P -o kSacctFields  -> "JobID|State|ExitCode|Start|End|NodeList"
//   scontrol -o show job ID      -> "JobId=12 JobName=x ... JobState=TIMEOUT Reason=TimeLimit ..."
//   sinfo -h -o kSinfoFormat     -> "%P|%a|%N|%c|%m|%G|%l|%D" per partition line (a partition can
//                                   take several lines, one per node configuration; %P marks the
//                                   default partition "debug*", %R would not)
//
// Times: the agent runs every command with SLURM_TIME_FORMAT=%s, so times
// come as seconds since the epoch; a Slurm that ignores it prints local
// time without an offset ("2026-03-29T02:30:00"), which is read in the
// cluster's time zone (the login node's TZ, the agent's local zone); an hour
// that daylight-saving changes make ambiguous is read as parseTime() says.
// "Unknown", "N/A", "None" and "" are no time.
//
// Errors: parsers skip no line silently: a line that does not have the
// expected fields is reported in `error` and left out; the other lines are
// still returned. `error` gets one line per bad line, "line 3: expected 8
// fields separated by '|', got 1: \"slurm_load_jobs error: ...\"" (the text
// cut at 200 bytes), and is empty when every line was read. Blank lines and
// "\r\n" endings are no errors.
//
// Real output: tests/data/slurm/parse/ (Slurm 22.05.8; its README says what
// each file is).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ty::slurm {

inline constexpr const char* kSqueueFormat = "%i|%T|%r|%S|%M|%N|%P|%Q";
inline constexpr const char* kPendingFormat = "%i|%Q|%r";
inline constexpr const char* kSacctFields = "JobID,State,ExitCode,Start,End,NodeList";
inline constexpr const char* kSinfoFormat = "%P|%a|%N|%c|%m|%G|%l|%D";

// Milliseconds since the epoch UTC of a Slurm time field: digits (epoch
// seconds, SLURM_TIME_FORMAT=%s) or "YYYY-MM-DDTHH:MM:SS" in the process's
// local zone (TZ). nullopt for "Unknown", "N/A", "None", "" and text that is
// neither. In doubt, standard time: a local time that happens twice (the
// hour repeated when daylight saving time ends: Europe/Berlin's
// 2026-10-25T02:30:00) is the later one (01:30 UTC), and one that never
// happens (skipped when it begins: 2026-03-29T02:30:00) is read with the
// offset before the change (01:30 UTC). That is what sbatch --begin made of
// both (tests/data/slurm/parse/squeue-begin-*.txt); the C library's mktime()
// with tm_isdst = -1 may pick either, depending on what it converted last.
std::optional<std::int64_t> parseTime(std::string_view text);

// One line of `squeue -h -o kSqueueFormat`.
struct QueueRow {
    std::string jobId;  // "1234", "1234_7" (array task), "1234_[8-10]" (array tasks still pending)
    std::string state;  // long form: PENDING, RUNNING, COMPLETING, CONFIGURING, SUSPENDED, ...
    std::string reason; // "Priority", "Resources", "None" (%r prints no parentheses; %R's "(Resources)" is unwrapped)
    // Actual start (running) or Slurm's estimate (pending), ms UTC; nullopt for
    // "N/A" (no estimate yet) and for text that is no time. Mind that Slurm's
    // backfill estimates "now + 365 days" while a job ahead has no time limit.
    std::optional<std::int64_t> startMs;
    std::string nodes; // node list ("n[01-04]"), empty while pending
    std::string partition;
    std::int64_t priority = 0;
};
std::vector<QueueRow> parseSqueue(std::string_view text, std::string* error = nullptr);

// `squeue -h -t PD -o kPendingFormat`: (job id, priority) of every pending
// job that competes for nodes. With the %r field, a job waiting for anything
// but Priority or Resources (BeginTime, Dependency, JobHeldUser, a limit,
// ...) is left out: it is not ahead of anyone, whatever its priority (squeue
// lists them by state and priority, not by who starts first). "%i|%Q" lines
// (two fields) are all kept.
// jobsAhead counts the jobs with a higher priority than `priority` (ties: a
// smaller job id is ahead, as Slurm orders them); `jobId` itself is not
// counted. A pending array "12_[3-5]" (also "12_[1,3-5%2]") is one job per
// task: 3 here; of one's own array "12_[3-5]" for jobId "12_4", task 3 is ahead.
std::vector<std::pair<std::string, std::int64_t>> parsePendingPriorities(
        std::string_view text, std::string* error = nullptr);
int jobsAhead(const std::vector<std::pair<std::string, std::int64_t>>& pending, std::string_view jobId,
        std::int64_t priority);

// jobsAhead for many jobs of one poll: the queue's ids are read and sorted
// by priority once (O(Q log Q)); each ahead() is then a binary search plus
// the jobs tied at its priority, not a walk of the whole queue (a poll
// tracking K runs in a queue of Q costs O((Q + K) log Q), not O(K * Q)).
// Same counts as jobsAhead.
class PendingQueue {
public:
    explicit PendingQueue(const std::vector<std::pair<std::string, std::int64_t>>& pending);
    int ahead(std::string_view jobId, std::int64_t priority) const;

private:
    struct Entry {
        std::int64_t priority = 0;
        std::string id;                                            // as squeue printed it
        std::int64_t job = -1;                                     // the (array) job id, -1 when unreadable
        std::int64_t task = -1;                                    // the array index of "12_7", -1 otherwise
        std::vector<std::pair<std::int64_t, std::int64_t>> ranges; // "12_[3-5]": {3, 5}; empty otherwise
        std::int64_t count = 1;                                    // jobs it stands for (a pending array's tasks)
    };
    std::vector<Entry> m_entries;                              // by priority, highest first
    std::vector<std::int64_t> m_above;                         // m_above[i]: jobs in m_entries[0, i)
    std::unordered_map<std::string_view, std::size_t> m_index; // id -> its entry (the first of that id)
};

// One line of `sacct -n -P -o kSacctFields`.
struct AcctRow {
    std::string jobId;                          // "1234", "1234.batch", "1234.extern", "1234.0", "1234_7.0"
    std::string state;                          // as printed: "CANCELLED by 54321", "OUT_OF_MEMORY", ...
    int exitCode = 0;                           // ExitCode "2:0" -> 2
    int signal = 0;                             // ExitCode "0:9" -> 9
    std::optional<std::int64_t> startMs, endMs; // "Unknown" (not yet) -> nullopt
    std::string nodes;                          // "" for sacct's "None assigned"
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
    std::string state; // the deciding state word (below)
    int exitCode = 0;
    int signal = 0;
    bool cancelled = false; // CANCELLED (by anyone)
    std::optional<std::int64_t> startMs, endMs;
    std::string nodes;
};
// Combines a job's rows (sacct: the allocation, .batch, .extern, .0 ...):
// nullopt while the allocation's state is not final (or there is no
// allocation row). Otherwise the allocation row decides, except that the
// first step (in row order) that ended CANCELLED, OUT_OF_MEMORY, TIMEOUT,
// NODE_FAIL or FAILED wins over an allocation COMPLETED (cluster_utils#87:
// the allocation said COMPLETED while step .0 was CANCELLED), and a step's
// OUT_OF_MEMORY wins over an allocation FAILED (the script failed because
// its step was killed). The exit code and signal are the allocation's, else
// (0:0) the deciding step's, else the first step's that is not 0:0 (a
// TIMEOUT allocation's 0:0 with .batch CANCELLED 0:15 is signal 15). The
// OOM killer's ExitCode "0:125" is signal 125, as printed. .extern steps
// never decide. startMs, endMs and nodes are the allocation's.
std::optional<JobEnd> combineJob(const std::vector<AcctRow>& rowsOfOneJob);

// `scontrol -o show job`: key=value fields of one job's line (values may
// hold spaces only in JobName=, Command=, WorkDir=, StdErr=, StdIn=, StdOut=
// and the comments, which run to the next " Key=" of a key scontrol prints;
// any other value ends at the next " Word="). Only the first line of `line`
// is read; empty values stay ("NodeList=" -> ""). Empty map for a line that
// does not begin with "JobId=" (an error such as "slurm_load_jobs error:
// Invalid job id specified").
std::map<std::string, std::string> parseScontrolJob(std::string_view line);
// The end of the job in those fields (JobState, ExitCode, StartTime,
// EndTime, NodeList), nullopt while its JobState is not final. scontrol
// knows no steps: a job whose step was cancelled while the script went on
// reads as the script ended. NodeList "(null)" is "".
std::optional<JobEnd> jobEndFromScontrol(const std::map<std::string, std::string>& fields);

// One partition of `sinfo -h -o kSinfoFormat` (lines of the same partition merged).
struct GresCount {
    std::string name; // "gpu"
    std::string type; // "a100", or "" for a count-only GRES
    int count = 0;    // per node
};
struct Partition {
    std::string name;
    bool isDefault = false;               // sinfo marks it with '*'
    std::string state;                    // "up", "down", "drain", "inact"
    std::vector<std::string> nodes;       // node list as sinfo printed it, one entry per line ("n[01-04]")
    int cpus = 0;                         // per node, largest ("32+", nodes that differ: 32)
    std::int64_t memoryMib = 0;           // per node, largest (sinfo's MB, which are MiB)
    std::vector<GresCount> gres;          // per node, largest count per (name, type)
    std::optional<std::int64_t> maxTimeS; // nullopt: infinite
    int nodeCount = 0;
};
std::vector<Partition> parseSinfo(std::string_view text, std::string* error = nullptr);
// "gpu:a100:4(S:0-1),gpu:2" -> [{gpu,a100,4},{gpu,"",2}]; "(null)" -> [].
// "gpu" alone counts 1, "gpu:a100" too; a count may end in K, M, G (x1024).
// Entries of the same (name, type) are merged, the largest count kept.
std::vector<GresCount> parseGres(std::string_view text);
// Slurm's time limits: "UNLIMITED"/"infinite" -> nullopt, "30" (minutes), "1:30:00",
// "2-00:00:00", "1-12", "5:00" (min:sec; sinfo prints 30 minutes as "30:00")
// -> seconds. -1 (and *ok false) for text that is none of them.
std::optional<std::int64_t> parseTimeLimit(std::string_view text, bool* ok = nullptr);
// Seconds -> sbatch's --time text "D-HH:MM:SS": 90 -> "0-00:01:30" (Slurm
// keeps whole minutes, rounding up: it shows TimeLimit=00:02:00 for it).
// Less than a second is "0-00:00:01" (one minute to Slurm): "0" would ask
// for no time limit at all.
std::string formatTimeLimit(std::int64_t seconds);

// Whether a failed squeue/scontrol's text says Slurm does not know the job
// (rather than that it could not ask): "slurm_load_jobs error: Invalid job
// id specified" (a job forgotten MinJobAge after its end, or never known),
// and for an array task whose array Slurm still knows but not the task (a
// pending task cancelled alone, a task ended and purged before the rest)
// scontrol's "Job 1234_1 not found" (Slurm 22.05; on stdout, exit 1).
bool saysUnknownJob(std::string_view text);

// "22.05.8" from `sinfo --version` ("slurm 22.05.8\n"; Debian's package
// prints "slurm-wlm 22.05.8\n"); "" when the text is not that.
std::string parseVersion(std::string_view text);

// Trainyard's words for a pending job (the run's pending reason):
//   "waiting: Slurm says Priority: 14 jobs ahead in partition gpu, start estimated 2026-12-06 14:05 UTC"
//   "waiting: Slurm says Resources: the partition's nodes are busy"
//   "waiting: Slurm says Dependency: an earlier step has not finished"
//   "waiting: Slurm says AssocGrpGRES"
//   "waiting: in Slurm's queue, not scheduled yet" (reason None, "" or WaitingForScheduling)
// Known reasons get a short explanation; any other is quoted as Slurm gave it.
// Priority with jobsAhead < 0 (not known) says "jobs with a higher priority
// go first"; an empty partition is left out. `startMs` (Slurm's estimate),
// with any reason, is printed in UTC ("YYYY-MM-DD HH:MM UTC", minutes cut).
std::string pendingText(
        const std::string& reason, int jobsAhead, const std::string& partition, std::optional<std::int64_t> startMs);

} // namespace ty::slurm
