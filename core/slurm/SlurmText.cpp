#include "core/slurm/SlurmText.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <ctime>
#include <limits>
#include <system_error>

namespace ty::slurm {

namespace {

// ---- small text helpers (string_view in, no allocation) ----

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

bool allDigits(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), isDigit);
}

// Non-negative decimal integer that is the whole of `s`.
template <typename Int> std::optional<Int> toInt(std::string_view s)
{
    if (!allDigits(s))
        return std::nullopt;
    Int v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

// Splits `s` at `sep` into exactly `n` fields; false when the count differs.
bool splitExact(std::string_view s, char sep, std::string_view* out, std::size_t n)
{
    std::size_t i = 0;
    for (;;) {
        const std::size_t at = s.find(sep);
        if (i == n)
            return false;
        if (at == std::string_view::npos) {
            out[i++] = s;
            return i == n;
        }
        out[i++] = s.substr(0, at);
        s.remove_prefix(at + 1);
    }
}

std::size_t countFields(std::string_view s, char sep)
{
    return std::count(s.begin(), s.end(), sep) + 1;
}

// Walks the lines of a command's output: 1-based numbers, "\r\n" and a
// missing last newline allowed; blank lines are not data.
template <typename F> void forEachLine(std::string_view text, F&& f)
{
    int number = 0;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        ++number;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (trim(line).empty())
            continue;
        f(number, line);
    }
}

// "line 3: <what>: \"<text>\"", the text cut at 200 bytes; one line per
// error in `*error`.
void addError(std::string* error, int number, std::string_view what, std::string_view line)
{
    if (!error)
        return;
    if (!error->empty())
        error->push_back('\n');
    error->append("line ").append(std::to_string(number)).append(": ").append(what).append(": \"");
    constexpr std::size_t kMax = 200;
    error->append(line.substr(0, kMax));
    if (line.size() > kMax)
        error->append("...");
    error->push_back('"');
}

std::string fieldCountError(std::size_t want, std::string_view line)
{
    return "expected " + std::to_string(want) + " fields separated by '|', got "
            + std::to_string(countFields(line, '|'));
}

// ---- civil dates (proleptic Gregorian, UTC; H. Hinnant's algorithms) ----

std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
    std::int64_t y;
    unsigned m, d;
};

Civil civilFromDays(std::int64_t z)
{
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b)
{
    const std::int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void appendPadded(std::string& out, std::int64_t v, int width)
{
    const std::string digits = std::to_string(v);
    for (int i = static_cast<int>(digits.size()); i < width; ++i)
        out.push_back('0');
    out.append(digits);
}

// ---- local time ("YYYY-MM-DDTHH:MM:SS") ----

// mktime() for one tm_isdst guess, kept only if localtime_r() gives back
// the same wall-clock time with that tm_isdst (so a guess that mktime
// "normalised" into another hour does not count).
std::optional<std::time_t> localCandidate(const std::tm& wall, int isdst)
{
    std::tm t = wall;
    t.tm_isdst = isdst;
    const std::time_t v = std::mktime(&t);
    if (v == static_cast<std::time_t>(-1))
        return std::nullopt; // (also 1969-12-31T23:59:59 UTC: never a Slurm time)
    std::tm back{};
    if (!localtime_r(&v, &back))
        return std::nullopt;
    if (back.tm_year != wall.tm_year || back.tm_mon != wall.tm_mon || back.tm_mday != wall.tm_mday
            || back.tm_hour != wall.tm_hour || back.tm_min != wall.tm_min || back.tm_sec != wall.tm_sec
            || (back.tm_isdst > 0) != (isdst > 0))
        return std::nullopt;
    return v;
}

std::optional<std::int64_t> parseLocalTime(std::string_view s)
{
    // "2026-03-29T02:30:00": fixed positions.
    if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return std::nullopt;
    const auto year = toInt<int>(s.substr(0, 4));
    const auto mon = toInt<int>(s.substr(5, 2));
    const auto day = toInt<int>(s.substr(8, 2));
    const auto hour = toInt<int>(s.substr(11, 2));
    const auto min = toInt<int>(s.substr(14, 2));
    const auto sec = toInt<int>(s.substr(17, 2));
    if (!year || !mon || !day || !hour || !min || !sec)
        return std::nullopt;
    if (*mon < 1 || *mon > 12 || *day < 1 || *day > 31 || *hour > 23 || *min > 59 || *sec > 60)
        return std::nullopt;
    // The day must exist in that month (mktime would roll 02-30 into March).
    if (civilFromDays(daysFromCivil(*year, *mon, *day)).d != static_cast<unsigned>(*day))
        return std::nullopt;
    std::tm wall{};
    wall.tm_year = *year - 1900;
    wall.tm_mon = *mon - 1;
    wall.tm_mday = *day;
    wall.tm_hour = *hour;
    wall.tm_min = *min;
    wall.tm_sec = *sec;
    // In doubt, standard time: a wall-clock time that happens twice (the
    // hour repeated when daylight saving time ends) is the later one, and one
    // that never happens (skipped when it begins) is read with the offset
    // before the change; sbatch --begin read both so (its mktime() with
    // tm_isdst = -1 in a December process). Asking for standard time first,
    // then daylight saving time, keeps it so in any process.
    std::optional<std::time_t> v = localCandidate(wall, 0);
    if (!v)
        v = localCandidate(wall, 1);
    if (!v) {
        std::tm t = wall;
        t.tm_isdst = 0;
        const std::time_t skipped = std::mktime(&t);
        if (skipped == static_cast<std::time_t>(-1))
            return std::nullopt;
        v = skipped;
    }
    return static_cast<std::int64_t>(*v) * 1000;
}

// ---- job ids of pending arrays, for jobsAhead ----

// A job id as Slurm orders pending jobs of equal priority: the (array) job
// id, then the array index. "1234" -> {1234, -1}; "1234_7" -> {1234, 7}.
struct IdKey {
    std::int64_t job = -1;
    std::int64_t task = -1;
    bool operator<(const IdKey& o) const { return job != o.job ? job < o.job : task < o.task; }
    bool operator==(const IdKey& o) const = default;
};

std::optional<IdKey> idKey(std::string_view id)
{
    const std::size_t us = id.find('_');
    IdKey k;
    const auto job = toInt<std::int64_t>(id.substr(0, us));
    if (!job)
        return std::nullopt;
    k.job = *job;
    if (us != std::string_view::npos) {
        const auto task = toInt<std::int64_t>(id.substr(us + 1));
        if (!task)
            return std::nullopt;
        k.task = *task;
    }
    return k;
}

// Pending array tasks "1234_[0-2,5,7-9%2]" (the "%2" is the limit of tasks
// running at once): calls f(firstIndex, lastIndex) for each range. False
// when `id` is not of that form.
template <typename F> bool forEachTaskRange(std::string_view id, F&& f)
{
    const std::size_t open = id.find("_[");
    if (open == std::string_view::npos || id.back() != ']')
        return false;
    std::string_view list = id.substr(open + 2, id.size() - open - 3);
    if (const std::size_t pct = list.find('%'); pct != std::string_view::npos)
        list = list.substr(0, pct);
    while (!list.empty()) {
        const std::size_t comma = list.find(',');
        const std::string_view part = list.substr(0, comma);
        list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
        const std::size_t dash = part.find('-');
        const auto first = toInt<std::int64_t>(part.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : toInt<std::int64_t>(part.substr(dash + 1));
        if (!first || !last || *last < *first)
            return false;
        f(*first, *last);
    }
    return true;
}

// ---- job states ----

bool stateIs(std::string_view word, std::initializer_list<std::string_view> any)
{
    return std::find(any.begin(), any.end(), word) != any.end();
}

// ExitCode "2:0" -> {2, 0}.
bool parseExitCode(std::string_view s, int& code, int& signal)
{
    const std::size_t colon = s.find(':');
    if (colon == std::string_view::npos)
        return false;
    const auto c = toInt<int>(s.substr(0, colon));
    const auto g = toInt<int>(s.substr(colon + 1));
    if (!c || !g)
        return false;
    code = *c;
    signal = *g;
    return true;
}

// ---- scontrol keys ----

// Every key `scontrol -o show job` prints (Slurm 20.11 to 23.11,
// src/api/job_info.c), so that a value holding spaces runs to the next one.
constexpr std::string_view kScontrolKeys[] = {"AccrueTime", "Account", "ActiveFeatures", "AdminComment",
        "AllocNode:Sid", "ArrayJobId", "ArrayTaskId", "ArrayTaskThrottle", "BatchFlag", "BatchHost", "BurstBuffer",
        "BurstBufferState", "ClusterFeatures", "Command", "Comment", "Container", "ContainerID", "Contiguous",
        "CoreSpec", "CPUs/Task", "CpusPerTres", "CpuFreqGov", "CpuFreqMax", "CpuFreqMin", "Deadline", "DelayBoot",
        "Dependency", "DerivedExitCode", "EligibleTime", "EndTime", "ExcNodeList", "ExitCode", "Features", "GroupId",
        "HetJobId", "HetJobIdSet", "HetJobOffset", "JobId", "JobName", "JobState", "KillOInInvalidDependent",
        "LastSchedEval", "Licenses", "LicensesAlloc", "MailType", "MailUser", "MCS_label", "MemPerTres", "MinCPUsNode",
        "MinMemoryCPU", "MinMemoryNode", "MinTmpDiskNode", "Network", "Nice", "NodeList", "NtasksPerN:B:S:C",
        "NtasksPerTRES", "NumCPUs", "NumNodes", "NumTasks", "OverSubscribe", "Partition", "Power",
        "PreemptEligibleTime", "PreemptTime", "Prefer", "Priority", "QOS", "Reason", "Reboot", "ReqB:S:C:T",
        "ReqNodeList", "Requeue", "Reservation", "ResizeTime", "Restarts", "RunTime", "SchedNodeList", "Scheduler",
        "SecsPreSuspend", "Socks/Node", "SpreadJob", "StartTime", "StdErr", "StdIn", "StdOut", "SubmitTime",
        "SuspendTime", "SystemComment", "ThreadSpec", "TimeLimit", "TimeMin", "TRES", "TresBind", "TresFreq",
        "TresPerJob", "TresPerNode", "TresPerSocket", "TresPerTask", "UserId", "WCKey", "WorkDir"};

bool isKnownScontrolKey(std::string_view key)
{
    return std::find(std::begin(kScontrolKeys), std::end(kScontrolKeys), key) != std::end(kScontrolKeys);
}

// Fields whose values are free text (paths, names, comments): inside them
// only a known key starts the next field.
bool isFreeTextKey(std::string_view key)
{
    return stateIs(key,
            {"JobName", "Command", "WorkDir", "StdErr", "StdIn", "StdOut", "Comment", "AdminComment", "SystemComment",
                    "MailUser"});
}

// "Key" of a word "Key=value": a letter, then letters, digits, '_', ':', '/'.
std::string_view keyOf(std::string_view word)
{
    const std::size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0)
        return {};
    const std::string_view key = word.substr(0, eq);
    const auto isKeyChar = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || isDigit(c) || c == '_' || c == ':' || c == '/';
    };
    if (!((key[0] >= 'A' && key[0] <= 'Z') || (key[0] >= 'a' && key[0] <= 'z')))
        return {};
    if (!std::all_of(key.begin(), key.end(), isKeyChar))
        return {};
    return key;
}

// A count "4", "2K" (GRES counts may carry K, M, G, T: powers of 1024),
// "250+" (sinfo: at least 250, nodes differ); nullopt for other text.
std::optional<std::int64_t> parseCount(std::string_view s, bool allowSuffix, bool allowPlus)
{
    if (allowPlus && !s.empty() && s.back() == '+')
        s.remove_suffix(1);
    std::int64_t mult = 1;
    if (allowSuffix && !s.empty()) {
        switch (s.back()) {
        case 'K':
        case 'k': mult = 1LL << 10; break;
        case 'M':
        case 'm': mult = 1LL << 20; break;
        case 'G':
        case 'g': mult = 1LL << 30; break;
        case 'T':
        case 't': mult = 1LL << 40; break;
        default: break;
        }
        if (mult != 1)
            s.remove_suffix(1);
    }
    const auto v = toInt<std::int64_t>(s);
    if (!v || *v > std::numeric_limits<std::int64_t>::max() / mult)
        return std::nullopt;
    return *v * mult;
}

void mergeGres(std::vector<GresCount>& into, const GresCount& g)
{
    for (GresCount& have : into) {
        if (have.name == g.name && have.type == g.type) {
            have.count = std::max(have.count, g.count);
            return;
        }
    }
    into.push_back(g);
}

} // namespace

// ---- times ----

std::optional<std::int64_t> parseTime(std::string_view text)
{
    text = trim(text);
    if (text.empty() || text == "Unknown" || text == "N/A" || text == "None")
        return std::nullopt;
    if (allDigits(text)) {
        const auto s = toInt<std::int64_t>(text);
        if (!s || *s > std::numeric_limits<std::int64_t>::max() / 1000)
            return std::nullopt;
        return *s * 1000;
    }
    return parseLocalTime(text);
}

// ---- squeue ----

std::vector<QueueRow> parseSqueue(std::string_view text, std::string* error)
{
    if (error)
        error->clear();
    std::vector<QueueRow> rows;
    forEachLine(text, [&](int number, std::string_view line) {
        std::string_view f[8];
        if (!splitExact(line, '|', f, 8)) {
            addError(error, number, fieldCountError(8, line), line);
            return;
        }
        const std::string_view id = trim(f[0]), state = trim(f[1]);
        if (id.empty() || state.empty()) {
            addError(error, number, id.empty() ? "no job id" : "no job state", line);
            return;
        }
        const auto priority = toInt<std::int64_t>(trim(f[7]));
        if (!priority) {
            addError(error, number, "priority is not a number", line);
            return;
        }
        std::string_view reason = trim(f[2]);
        if (reason.size() >= 2 && reason.front() == '(' && reason.back() == ')') // %R's "(Resources)"
            reason = reason.substr(1, reason.size() - 2);
        QueueRow& row = rows.emplace_back();
        row.jobId = id;
        row.state = state;
        row.reason = reason;
        row.startMs = parseTime(f[3]);
        row.nodes = trim(f[5]);
        row.partition = trim(f[6]);
        row.priority = *priority;
    });
    return rows;
}

std::vector<std::pair<std::string, std::int64_t>> parsePendingPriorities(std::string_view text, std::string* error)
{
    if (error)
        error->clear();
    std::vector<std::pair<std::string, std::int64_t>> out;
    forEachLine(text, [&](int number, std::string_view line) {
        std::string_view f[3];
        const std::size_t n = countFields(line, '|');
        if ((n != 2 && n != 3) || !splitExact(line, '|', f, n)) {
            addError(error, number, "expected 3 fields (or 2) separated by '|', got " + std::to_string(n), line);
            return;
        }
        const std::string_view id = trim(f[0]);
        const auto priority = toInt<std::int64_t>(trim(f[1]));
        if (id.empty() || !priority) {
            addError(error, number, id.empty() ? "no job id" : "priority is not a number", line);
            return;
        }
        if (n == 3) {
            std::string_view reason = trim(f[2]);
            if (reason.size() >= 2 && reason.front() == '(' && reason.back() == ')')
                reason = reason.substr(1, reason.size() - 2);
            if (!stateIs(reason, {"Priority", "Resources"}))
                return; // not waiting for nodes: ahead of no one
        }
        out.emplace_back(std::string(id), *priority);
    });
    return out;
}

int jobsAhead(
        const std::vector<std::pair<std::string, std::int64_t>>& pending, std::string_view jobId, std::int64_t priority)
{
    return PendingQueue(pending).ahead(jobId, priority);
}

PendingQueue::PendingQueue(const std::vector<std::pair<std::string, std::int64_t>>& pending)
{
    m_entries.reserve(pending.size());
    for (const auto& [id, prio] : pending) {
        Entry e;
        e.priority = prio;
        e.id = id;
        if (const auto base = idKey(std::string_view(id).substr(0, id.find('_'))))
            e.job = base->job;
        const bool isRange = forEachTaskRange(
                id, [&e](std::int64_t first, std::int64_t last) { e.ranges.emplace_back(first, last); });
        if (isRange) {
            e.count = 0;
            for (const auto& [first, last] : e.ranges)
                e.count += last - first + 1;
        } else if (const auto key = idKey(id)) {
            e.task = key->task;
        } else {
            e.job = -1; // unreadable: counted when above, never when tied
        }
        m_entries.push_back(std::move(e));
    }
    std::stable_sort(
            m_entries.begin(), m_entries.end(), [](const Entry& a, const Entry& b) { return a.priority > b.priority; });
    m_above.resize(m_entries.size() + 1, 0);
    m_index.reserve(m_entries.size());
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        m_above[i + 1] = m_above[i] + m_entries[i].count;
        m_index.emplace(m_entries[i].id, i); // views of strings that stay in place (no reallocation after this)
    }
}

int PendingQueue::ahead(std::string_view jobId, std::int64_t priority) const
{
    // Entries of a higher priority: all ahead, but jobId itself.
    const auto firstTied = std::partition_point(
            m_entries.begin(), m_entries.end(), [priority](const Entry& e) { return e.priority > priority; });
    const auto firstBelow = std::partition_point(
            firstTied, m_entries.end(), [priority](const Entry& e) { return e.priority >= priority; });
    std::int64_t ahead = m_above[std::size_t(firstTied - m_entries.begin())];
    const std::optional<IdKey> me = idKey(jobId);
    // jobId's own entry is never ahead of it (squeue lists a job once).
    if (const auto own = m_index.find(jobId);
            own != m_index.end() && own->second < std::size_t(firstTied - m_entries.begin()))
        ahead -= m_entries[own->second].count;
    // Tied: a smaller job id (then array index) is ahead.
    for (auto it = firstTied; it != firstBelow; ++it) {
        if (it->id == jobId || !me || it->job < 0 || it->job > me->job)
            continue;
        if (it->job < me->job) {
            ahead += it->count;
            continue;
        }
        if (it->ranges.empty()) {
            if (it->task < me->task)
                ++ahead;
            continue;
        }
        if (me->task < 0)
            continue;
        for (const auto& [first, last] : it->ranges)
            ahead += std::max<std::int64_t>(0, std::min(last, me->task - 1) - first + 1);
    }
    return static_cast<int>(std::min<std::int64_t>(ahead, INT_MAX));
}

// ---- sacct ----

std::vector<AcctRow> parseSacct(std::string_view text, std::string* error)
{
    if (error)
        error->clear();
    std::vector<AcctRow> rows;
    forEachLine(text, [&](int number, std::string_view line) {
        std::string_view f[6];
        if (!splitExact(line, '|', f, 6)) {
            addError(error, number, fieldCountError(6, line), line);
            return;
        }
        const std::string_view id = trim(f[0]), state = trim(f[1]);
        if (id.empty() || state.empty()) {
            addError(error, number, id.empty() ? "no job id" : "no job state", line);
            return;
        }
        int code = 0, signal = 0;
        if (!parseExitCode(trim(f[2]), code, signal)) {
            addError(error, number, "ExitCode is not <code>:<signal>", line);
            return;
        }
        AcctRow& row = rows.emplace_back();
        row.jobId = id;
        row.state = state;
        row.exitCode = code;
        row.signal = signal;
        row.startMs = parseTime(f[3]);
        row.endMs = parseTime(f[4]);
        if (const std::string_view nodes = trim(f[5]); nodes != "None assigned") // a job that never ran
            row.nodes = nodes;
    });
    return rows;
}

std::string jobOfStep(std::string_view stepId)
{
    return std::string(stepId.substr(0, stepId.find('.')));
}

std::string stateWord(std::string_view state)
{
    state = trim(state);
    std::string_view word = state.substr(0, state.find(' '));
    if (!word.empty() && word.back() == '+') // sacct's "CANCELLED+" (cut to its column width)
        word.remove_suffix(1);
    return std::string(word);
}

bool isFinalState(std::string_view state)
{
    return stateIs(stateWord(state),
            {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                    "DEADLINE"});
}

std::optional<JobEnd> combineJob(const std::vector<AcctRow>& rowsOfOneJob)
{
    const AcctRow* alloc = nullptr;
    for (const AcctRow& r : rowsOfOneJob) {
        if (r.jobId.find('.') == std::string::npos) {
            alloc = &r;
            break;
        }
    }
    if (!alloc || !isFinalState(alloc->state))
        return std::nullopt;

    const auto isStep = [](const AcctRow& r) {
        const std::size_t dot = r.jobId.find('.');
        return dot != std::string::npos && std::string_view(r.jobId).substr(dot + 1) != "extern";
    };
    const std::string allocWord = stateWord(alloc->state);
    const AcctRow* decider = alloc;
    std::string word = allocWord;
    for (const AcctRow& r : rowsOfOneJob) {
        if (!isStep(r))
            continue;
        const std::string w = stateWord(r.state);
        // A step's failure tells more than the allocation's COMPLETED; a
        // step's OUT_OF_MEMORY more than the allocation's FAILED (the script
        // failed because its step was killed).
        if ((allocWord == "COMPLETED" && stateIs(w, {"CANCELLED", "OUT_OF_MEMORY", "TIMEOUT", "NODE_FAIL", "FAILED"}))
                || (allocWord == "FAILED" && w == "OUT_OF_MEMORY")) {
            decider = &r;
            word = w;
            break;
        }
    }

    JobEnd end;
    end.state = word;
    end.cancelled = word == "CANCELLED";
    end.startMs = alloc->startMs;
    end.endMs = alloc->endMs;
    end.nodes = alloc->nodes;
    end.exitCode = alloc->exitCode;
    end.signal = alloc->signal;
    if (end.exitCode == 0 && end.signal == 0) {
        const AcctRow* failed = (decider != alloc && (decider->exitCode || decider->signal)) ? decider : nullptr;
        for (const AcctRow& r : rowsOfOneJob) {
            if (failed)
                break;
            if (isStep(r) && (r.exitCode || r.signal))
                failed = &r;
        }
        if (failed) {
            end.exitCode = failed->exitCode;
            end.signal = failed->signal;
        }
    }
    return end;
}

// ---- scontrol ----

std::map<std::string, std::string> parseScontrolJob(std::string_view line)
{
    std::map<std::string, std::string> fields;
    line = line.substr(0, line.find('\n'));
    line = trim(line);
    if (line.substr(0, 6) != "JobId=")
        return fields;
    std::string* value = nullptr;
    bool freeText = false;
    while (true) {
        const std::size_t sp = line.find(' ');
        const std::string_view word = line.substr(0, sp);
        const std::string_view key = keyOf(word);
        const bool startsField = !key.empty() && (!freeText || isKnownScontrolKey(key));
        if (startsField) {
            value = &fields[std::string(key)];
            value->assign(word.substr(key.size() + 1));
            freeText = isFreeTextKey(key);
        } else if (value) { // a word of a value with spaces
            value->push_back(' ');
            value->append(word);
        }
        if (sp == std::string_view::npos)
            break;
        line.remove_prefix(sp + 1);
    }
    return fields;
}

std::optional<JobEnd> jobEndFromScontrol(const std::map<std::string, std::string>& fields)
{
    const auto get = [&](const char* key) -> std::string_view {
        const auto it = fields.find(key);
        return it == fields.end() ? std::string_view() : std::string_view(it->second);
    };
    const std::string_view state = get("JobState");
    if (!isFinalState(state))
        return std::nullopt;
    JobEnd end;
    end.state = stateWord(state);
    end.cancelled = end.state == "CANCELLED";
    int code = 0, signal = 0;
    if (parseExitCode(get("ExitCode"), code, signal)) {
        end.exitCode = code;
        end.signal = signal;
    }
    end.startMs = parseTime(get("StartTime"));
    end.endMs = parseTime(get("EndTime"));
    const std::string_view nodes = get("NodeList");
    if (nodes != "(null)")
        end.nodes = nodes;
    return end;
}

// ---- sinfo ----

std::vector<GresCount> parseGres(std::string_view text)
{
    std::vector<GresCount> out;
    text = trim(text);
    if (text.empty() || text == "(null)")
        return out;
    // Entries are separated by commas outside parentheses ("gpu:4(S:0,2)").
    int depth = 0;
    std::size_t begin = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        const char c = i < text.size() ? text[i] : ',';
        if (c == '(')
            ++depth;
        else if (c == ')')
            depth = std::max(0, depth - 1);
        if (c != ',' || depth > 0)
            continue;
        std::string_view entry = text.substr(begin, i - begin);
        begin = i + 1;
        entry = entry.substr(0, entry.find('(')); // "(S:0-1)": the sockets
        entry = trim(entry);
        if (entry.empty())
            continue;
        GresCount g;
        const std::size_t first = entry.find(':');
        g.name = entry.substr(0, first);
        g.count = 1; // "gpu" alone is one
        if (first != std::string_view::npos) {
            std::string_view rest = entry.substr(first + 1);
            const std::size_t last = rest.rfind(':');
            const std::string_view tail = last == std::string_view::npos ? rest : rest.substr(last + 1);
            if (const auto n = parseCount(tail, true, false)) {
                g.count = static_cast<int>(std::min<std::int64_t>(*n, INT_MAX));
                rest = last == std::string_view::npos ? std::string_view() : rest.substr(0, last);
            }
            g.type = rest; // "gpu:a100" alone: type a100, one
        }
        mergeGres(out, g);
    }
    return out;
}

std::optional<std::int64_t> parseTimeLimit(std::string_view text, bool* ok)
{
    if (ok)
        *ok = true;
    text = trim(text);
    if (text == "UNLIMITED" || text == "infinite" || text == "INFINITE" || text == "Unlimited")
        return std::nullopt;
    const auto bad = [&]() -> std::optional<std::int64_t> {
        if (ok)
            *ok = false;
        return -1;
    };
    // [days-]a[:b[:c]]
    std::int64_t days = 0;
    bool hasDays = false;
    if (const std::size_t dash = text.find('-'); dash != std::string_view::npos) {
        const auto d = toInt<std::int64_t>(text.substr(0, dash));
        if (!d || *d > 100000)
            return bad();
        days = *d;
        hasDays = true;
        text.remove_prefix(dash + 1);
    }
    std::int64_t part[3] = {0, 0, 0};
    int n = 0;
    while (true) {
        const std::size_t colon = text.find(':');
        if (n == 3)
            return bad();
        const auto v = toInt<std::int64_t>(text.substr(0, colon));
        if (!v || *v > 100000000)
            return bad();
        part[n++] = *v;
        if (colon == std::string_view::npos)
            break;
        text.remove_prefix(colon + 1);
    }
    std::int64_t h = 0, m = 0, s = 0;
    if (hasDays) { // days-hours[:minutes[:seconds]]
        h = part[0];
        m = part[1];
        s = part[2];
    } else if (n == 1) { // minutes
        m = part[0];
    } else if (n == 2) { // minutes:seconds
        m = part[0];
        s = part[1];
    } else { // hours:minutes:seconds
        h = part[0];
        m = part[1];
        s = part[2];
    }
    return ((days * 24 + h) * 60 + m) * 60 + s;
}

std::string formatTimeLimit(std::int64_t seconds)
{
    if (seconds < 1) // "0" would ask Slurm for no limit at all
        seconds = 1;
    std::string out = std::to_string(seconds / 86400);
    out.push_back('-');
    appendPadded(out, seconds / 3600 % 24, 2);
    out.push_back(':');
    appendPadded(out, seconds / 60 % 60, 2);
    out.push_back(':');
    appendPadded(out, seconds % 60, 2);
    return out;
}

std::vector<Partition> parseSinfo(std::string_view text, std::string* error)
{
    if (error)
        error->clear();
    std::vector<Partition> parts;
    forEachLine(text, [&](int number, std::string_view line) {
        std::string_view f[8];
        if (!splitExact(line, '|', f, 8)) {
            addError(error, number, fieldCountError(8, line), line);
            return;
        }
        std::string_view name = trim(f[0]);
        const bool isDefault = !name.empty() && name.back() == '*';
        if (isDefault)
            name.remove_suffix(1);
        const auto cpus = parseCount(trim(f[3]), false, true);
        const auto memory = parseCount(trim(f[4]), false, true);
        const auto nodeCount = parseCount(trim(f[7]), false, false);
        bool limitOk = true;
        const auto maxTime = parseTimeLimit(f[6], &limitOk);
        const char* what = name.empty() ? "no partition name"
                : !cpus                 ? "CPUs per node is not a number"
                : !memory               ? "memory per node is not a number"
                : !limitOk              ? "time limit is not a Slurm time"
                : !nodeCount            ? "node count is not a number"
                                        : nullptr;
        if (what) {
            addError(error, number, what, line);
            return;
        }
        auto it = std::find_if(parts.begin(), parts.end(), [&](const Partition& p) { return p.name == name; });
        if (it == parts.end()) {
            Partition& p = parts.emplace_back();
            p.name = name;
            p.state = trim(f[1]);
            p.maxTimeS = maxTime;
            it = parts.end() - 1;
        }
        Partition& p = *it;
        p.isDefault = p.isDefault || isDefault;
        if (const std::string_view nodes = trim(f[2]); !nodes.empty())
            p.nodes.emplace_back(nodes);
        p.cpus = std::max(p.cpus, static_cast<int>(std::min<std::int64_t>(*cpus, INT_MAX)));
        p.memoryMib = std::max(p.memoryMib, *memory);
        for (const GresCount& g : parseGres(f[5]))
            mergeGres(p.gres, g);
        p.nodeCount += static_cast<int>(std::min<std::int64_t>(*nodeCount, INT_MAX - p.nodeCount));
    });
    return parts;
}

bool saysUnknownJob(std::string_view text)
{
    if (text.find("Invalid job id") != std::string_view::npos)
        return true;
    // "Job 1234_1 not found"
    for (std::size_t at = text.find("Job "); at != std::string_view::npos; at = text.find("Job ", at + 1)) {
        std::size_t e = at + 4;
        while (e < text.size() && (isDigit(text[e]) || text[e] == '_'))
            ++e;
        if (e > at + 4 && text.substr(e).starts_with(" not found"))
            return true;
    }
    return false;
}

std::string parseVersion(std::string_view text)
{
    text = trim(text.substr(0, text.find('\n')));
    const std::size_t sp = text.find(' ');
    if (sp == std::string_view::npos)
        return {};
    const std::string_view program = text.substr(0, sp), version = text.substr(sp + 1);
    // "slurm 22.05.8", Debian's "slurm-wlm 22.05.8"
    if (program.substr(0, 5) != "slurm" || version.empty() || !isDigit(version[0]))
        return {};
    const auto ok = [](char c) { return isDigit(c) || c == '.' || c == '-' || (c >= 'a' && c <= 'z'); };
    if (!std::all_of(version.begin(), version.end(), ok) || version.find('.') == std::string_view::npos)
        return {};
    return std::string(version);
}

// ---- Trainyard's words ----

std::string pendingText(
        const std::string& reason, int jobsAhead, const std::string& partition, std::optional<std::int64_t> startMs)
{
    // The reason's word: "ReqNodeNotAvail, UnavailableNodes:n1" -> "ReqNodeNotAvail".
    const std::string_view word = std::string_view(reason).substr(0, reason.find_first_of(", "));
    std::string out = "waiting: ";
    if (word.empty() || word == "None" || word == "WaitingForScheduling") {
        out += "in Slurm's queue, not scheduled yet";
    } else {
        out += "Slurm says ";
        out += reason;
        std::string why;
        if (word == "Priority") {
            if (jobsAhead >= 0) {
                why = std::to_string(jobsAhead) + (jobsAhead == 1 ? " job ahead" : " jobs ahead");
                if (!partition.empty())
                    why += " in partition " + partition;
            } else {
                why = "jobs with a higher priority go first";
            }
        } else if (word == "Resources") {
            why = "the partition's nodes are busy";
        } else if (word == "Dependency") {
            why = "an earlier step has not finished";
        } else if (word == "DependencyNeverSatisfied") {
            why = "an earlier step failed, so this one will never start";
        } else if (word == "BeginTime") {
            why = "its start time has not come";
        } else if (word == "JobHeldUser") {
            why = "held by its user (scontrol release)";
        } else if (word == "JobHeldAdmin") {
            why = "held by an administrator";
        } else if (word == "ReqNodeNotAvail") {
            why = "a node it needs is not available";
        } else if (word == "PartitionDown" || word == "PartitionInactive") {
            why = "the partition is not taking jobs";
        } else if (word == "PartitionTimeLimit") {
            why = "its time limit is above the partition's";
        } else if (word == "PartitionNodeLimit") {
            why = "it asks for more nodes than the partition allows";
        }
        if (!why.empty())
            out += ": " + why;
    }
    if (startMs) {
        const std::int64_t minutes = floorDiv(*startMs, 60000);
        const Civil c = civilFromDays(floorDiv(minutes, 1440));
        const std::int64_t minuteOfDay = minutes - floorDiv(minutes, 1440) * 1440;
        out += ", start estimated ";
        appendPadded(out, c.y, 4);
        out.push_back('-');
        appendPadded(out, c.m, 2);
        out.push_back('-');
        appendPadded(out, c.d, 2);
        out.push_back(' ');
        appendPadded(out, minuteOfDay / 60, 2);
        out.push_back(':');
        appendPadded(out, minuteOfDay % 60, 2);
        out += " UTC";
    }
    return out;
}

} // namespace ty::slurm
