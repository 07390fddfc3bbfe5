// core/slurm/SlurmText: what squeue, sacct, scontrol and sinfo print, read.
// Real Slurm 22.05.8 output under tests/data/slurm/parse (its README says
// which command printed each file and what the jobs did; the sacct files and
// sinfo-several-lines.txt are written from the man pages, that cluster has
// no accounting and one node). Every value asserted exactly.

#include "core/slurm/SlurmText.h"
#include "tests/support/TestSupport.h"

#include <QTest>

#include <ctime>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace ty::slurm;

namespace {

constexpr qint64 kNone = std::numeric_limits<qint64>::min(); // a nullopt time, printable by QCOMPARE

qint64 ms(std::optional<std::int64_t> t)
{
    return t ? qint64(*t) : kNone;
}
QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

std::string fixture(const char* name)
{
    return ty::test::readFixture(QStringLiteral("slurm/parse/") + QLatin1String(name)).toStdString();
}

// TZ for the scope of one test, restored (with tzset) after.
class TimeZone {
public:
    explicit TimeZone(const char* tz)
        : had_(qEnvironmentVariableIsSet("TZ"))
        , old_(qgetenv("TZ"))
    {
        qputenv("TZ", tz);
        tzset();
    }
    ~TimeZone()
    {
        if (had_)
            qputenv("TZ", old_);
        else
            qunsetenv("TZ");
        tzset();
    }
    TimeZone(const TimeZone&) = delete;
    TimeZone& operator=(const TimeZone&) = delete;

private:
    bool had_;
    QByteArray old_;
};

// sacct rows grouped by job (jobOfStep), in the order of the text.
std::vector<std::pair<std::string, std::vector<AcctRow>>> byJob(const std::vector<AcctRow>& rows)
{
    std::vector<std::pair<std::string, std::vector<AcctRow>>> jobs;
    for (const AcctRow& r : rows) {
        const std::string job = jobOfStep(r.jobId);
        if (jobs.empty() || jobs.back().first != job)
            jobs.emplace_back(job, std::vector<AcctRow>());
        jobs.back().second.push_back(r);
    }
    return jobs;
}

std::vector<AcctRow> rowsOf(const std::vector<AcctRow>& rows, const std::string& job)
{
    for (const auto& [id, its] : byJob(rows))
        if (id == job)
            return its;
    return {};
}

// The lines of a text, without their newlines.
std::vector<std::string> lines(const std::string& text)
{
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t nl = text.find('\n', at);
        out.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
        at = nl == std::string::npos ? text.size() : nl + 1;
    }
    return out;
}

// The `scontrol -o show job` line of job `id` in a fixture's text.
std::map<std::string, std::string> scontrolJob(const std::string& text, const std::string& id)
{
    for (const std::string& l : lines(text))
        if (l.starts_with("JobId=" + id + " "))
            return parseScontrolJob(l);
    return {};
}

} // namespace

class TestSlurmText : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // ---- times ----

    void timeEpochDigits()
    {
        QCOMPARE(ms(parseTime("1796559736")), qint64(1796559736000)); // job 1's StartTime
        QCOMPARE(ms(parseTime("0")), qint64(0));
        QCOMPARE(ms(parseTime(" 1828095736\n")), qint64(1828095736000));
        // Whatever TZ says: epoch seconds are UTC.
        const TimeZone berlin("Europe/Berlin");
        QCOMPARE(ms(parseTime("1796559736")), qint64(1796559736000));
    }

    void timeNone()
    {
        for (const char* none : {"Unknown", "N/A", "None", "", "  "})
            QCOMPARE(ms(parseTime(none)), kNone);
        // Not times: SLURM_TIME_FORMAT=relative's words, other layouts,
        // days that do not exist, squeue's "INVALID", digits too many.
        for (const char* bad : {"12:30:00", "Tomorr 12:30", "6 Jun 2012", "2026-12-06 12:22:16", "2026-12-06T12:22",
                     "2026-13-01T00:00:00", "2026-02-30T00:00:00", "2026-12-06T24:00:00", "INVALID", "-5",
                     "99999999999999999999"})
            QCOMPARE(ms(parseTime(bad)), kNone);
    }

    void timeLocalUtc()
    {
        const TimeZone utc("UTC");
        QCOMPARE(ms(parseTime("2026-12-06T12:22:16")), qint64(1796559736000));
        QCOMPARE(ms(parseTime("2028-02-29T00:00:00")), qint64(1835395200000)); // a leap day
    }

    void timeLocalBerlinSpringForward()
    {
        // 2026-03-29: 02:00 CET becomes 03:00 CEST.
        const TimeZone berlin("Europe/Berlin");
        QCOMPARE(ms(parseTime("2026-03-29T01:59:59")), qint64(1774745999000)); // 00:59:59 UTC
        QCOMPARE(ms(parseTime("2026-03-29T03:00:00")), qint64(1774746000000)); // 01:00:00 UTC, one second on
        // Never on a Berlin clock: read with the offset before (CET), as sbatch did.
        QCOMPARE(ms(parseTime("2026-03-29T02:30:00")), qint64(1774747800000)); // 01:30 UTC
        QCOMPARE(ms(parseTime("2026-12-06T13:22:16")), qint64(1796559736000)); // winter: UTC+1
        QCOMPARE(ms(parseTime("2026-07-01T12:00:00")), qint64(1782900000000)); // summer: UTC+2
    }

    void timeLocalBerlinFallBack()
    {
        // 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:00-02:59 happen twice.
        const TimeZone berlin("Europe/Berlin");
        QCOMPARE(ms(parseTime("2026-10-25T01:59:59")), qint64(1792886399000)); // 2026-10-24T23:59:59 UTC
        QCOMPARE(ms(parseTime("2026-10-25T02:30:00")), qint64(1792891800000)); // the second one: 01:30 UTC
        QCOMPARE(ms(parseTime("2026-10-25T03:00:00")), qint64(1792893600000)); // 02:00 UTC
    }

    void timeCapturedInThreeZones()
    {
        // The same squeue at the same moment, printed in epoch seconds, in UTC
        // and in Berlin time: every start reads the same.
        std::string error;
        const std::vector<QueueRow> epoch = parseSqueue(fixture("squeue-queue-epoch.txt"), &error);
        QCOMPARE(qs(error), QString());
        for (const auto& [file, tz] :
                {std::pair{"squeue-queue-utc.txt", "UTC"}, {"squeue-queue-berlin.txt", "Europe/Berlin"},
                        {"squeue-begin-utc.txt", "UTC"}, {"squeue-begin-berlin.txt", "Europe/Berlin"}}) {
            const TimeZone zone(tz);
            const bool begin = std::string_view(file).starts_with("squeue-begin");
            const std::vector<QueueRow> want = begin ? parseSqueue(fixture("squeue-begin-epoch.txt")) : epoch;
            const std::vector<QueueRow> local = parseSqueue(fixture(file), &error);
            QCOMPARE(qs(error), QString());
            QCOMPARE(local.size(), want.size());
            for (std::size_t i = 0; i < local.size(); ++i) {
                QCOMPARE(qs(local[i].jobId), qs(want[i].jobId));
                QVERIFY(want[i].startMs.has_value());
                QCOMPARE(ms(local[i].startMs), ms(want[i].startMs));
            }
        }
        // sbatch --begin in Berlin around the 2027 changes (jobs 17-20):
        // 02:30 that does not exist is 01:30 UTC (printed back as 03:30), the
        // 02:30 that happens twice is the second one (01:30 UTC).
        const TimeZone berlin("Europe/Berlin");
        const std::vector<QueueRow> begin = parseSqueue(fixture("squeue-begin-berlin.txt"));
        QCOMPARE(begin.size(), std::size_t(4));
        QCOMPARE(qs(begin[0].jobId), QStringLiteral("17"));
        QCOMPARE(ms(begin[0].startMs), qint64(1806197400000));
        QCOMPARE(qs(begin[1].jobId), QStringLiteral("18"));
        QCOMPARE(ms(begin[1].startMs), qint64(1824946200000));
        QCOMPARE(ms(begin[2].startMs), qint64(1806195599000));
        QCOMPARE(ms(begin[3].startMs), qint64(1824948000000));
    }

    // ---- squeue ----

    void squeueQueue()
    {
        std::string error = "stale";
        const std::vector<QueueRow> rows = parseSqueue(fixture("squeue-queue-epoch.txt"), &error);
        QCOMPARE(qs(error), QString());
        QCOMPARE(rows.size(), std::size_t(9));
        const QueueRow& later = rows[0]; // --begin=now+1hour
        QCOMPARE(qs(later.jobId), QStringLiteral("6"));
        QCOMPARE(qs(later.state), QStringLiteral("PENDING"));
        QCOMPARE(qs(later.reason), QStringLiteral("BeginTime"));
        QCOMPARE(ms(later.startMs), qint64(1796563338000));
        QCOMPARE(qs(later.nodes), QString());
        QCOMPARE(qs(later.partition), QStringLiteral("debug"));
        QCOMPARE(later.priority, std::int64_t(4294901755));
        const QueueRow& resources = rows[5];
        QCOMPARE(qs(resources.jobId), QStringLiteral("22"));
        QCOMPARE(qs(resources.reason), QStringLiteral("Resources"));
        QCOMPARE(ms(resources.startMs), qint64(1796560283000));
        const QueueRow& priority = rows[6];
        QCOMPARE(qs(priority.jobId), QStringLiteral("23"));
        QCOMPARE(qs(priority.reason), QStringLiteral("Priority")); // %r: no parentheses
        QCOMPARE(ms(priority.startMs), qint64(1796560380000));
        QCOMPARE(priority.priority, std::int64_t(4294901742));
        const QueueRow& array = rows[7];
        QCOMPARE(qs(array.jobId), QStringLiteral("24_[3-5]"));
        QCOMPARE(qs(array.reason), QStringLiteral("Priority"));
        QCOMPARE(ms(array.startMs), qint64(1796560740000));
        QCOMPARE(qs(array.nodes), QString());
        const QueueRow& running = rows[8];
        QCOMPARE(qs(running.jobId), QStringLiteral("21"));
        QCOMPARE(qs(running.state), QStringLiteral("RUNNING"));
        QCOMPARE(qs(running.reason), QStringLiteral("None"));
        QCOMPARE(ms(running.startMs), qint64(1796560103000));
        QCOMPARE(qs(running.nodes), QStringLiteral("vm"));
        QCOMPARE(running.priority, std::int64_t(4294901744));
    }

    void squeueFirstMoments()
    {
        // Seconds after submitting: no estimate (N/A) for the dependent job,
        // "now + 365 days" for those behind a job without a time limit, and
        // priority 0 for the held job.
        const std::vector<QueueRow> rows = parseSqueue(fixture("squeue-first-epoch.txt"));
        QCOMPARE(rows.size(), std::size_t(6));
        QCOMPARE(qs(rows[0].jobId), QStringLiteral("2"));
        QCOMPARE(ms(rows[0].startMs), qint64(1828095736000)); // 2027-12-06T12:22:16Z
        QCOMPARE(qs(rows[1].reason), QStringLiteral("Dependency"));
        QCOMPARE(ms(rows[1].startMs), kNone);
        QCOMPARE(qs(rows[2].jobId), QStringLiteral("4_[0-2]"));
        QCOMPARE(qs(rows[4].reason), QStringLiteral("JobHeldUser"));
        QCOMPARE(rows[4].priority, std::int64_t(0));
        const TimeZone utc("UTC");
        const std::vector<QueueRow> local = parseSqueue(fixture("squeue-first-utc.txt"));
        QCOMPARE(local.size(), std::size_t(6));
        QCOMPARE(ms(local[0].startMs), qint64(1828095736000));
        QCOMPARE(ms(local[5].startMs), qint64(1796559736000));
    }

    void squeueArrays()
    {
        const std::vector<QueueRow> throttled = parseSqueue(fixture("squeue-reasons-epoch.txt"));
        QCOMPARE(throttled.size(), std::size_t(7));
        QCOMPARE(qs(throttled[4].jobId), QStringLiteral("32_[0-3%2]"));
        QCOMPARE(ms(throttled[4].startMs), qint64(1796560620000));
        const std::vector<QueueRow> tasks = parseSqueue(fixture("squeue-queue-r-epoch.txt"));
        QCOMPARE(tasks.size(), std::size_t(11));
        QCOMPARE(qs(tasks[7].jobId), QStringLiteral("24_3"));
        QCOMPARE(qs(tasks[9].jobId), QStringLiteral("24_5"));
        QCOMPARE(ms(tasks[9].startMs), qint64(1796560740000));
    }

    void squeueReasonInParentheses()
    {
        // %R prints "(Priority)" (squeue-reason-R.txt); read from such a
        // line, the word is unwrapped.
        const std::string r = fixture("squeue-reason-R.txt");
        QVERIFY(r.find("23|PENDING|(Priority)\n") != std::string::npos);
        const std::vector<QueueRow> rows = parseSqueue("23|PENDING|(Priority)|1796560380|0:00||debug|4294901742\n");
        QCOMPARE(rows.size(), std::size_t(1));
        QCOMPARE(qs(rows[0].reason), QStringLiteral("Priority"));
    }

    void squeueMalformedLines()
    {
        // squeue's error where its output was expected, a line cut short, a
        // priority that is no number, blank lines and "\r\n": the good lines
        // stay, each bad one is named with its number and text.
        const std::vector<std::string> real = lines(fixture("squeue-queue-epoch.txt"));
        const std::string text = real[0] + "\n" + "slurm_load_jobs error: Invalid job id specified\n" + real[1]
                + "\r\n\n" + "22|PENDING|Resources|1796560283|0:00||debug\n"
                + "23|PENDING|Priority|N/A|0:00||debug|high\n" + real[8]; // no newline at the end
        std::string error;
        const std::vector<QueueRow> rows = parseSqueue(text, &error);
        QCOMPARE(rows.size(), std::size_t(3));
        QCOMPARE(qs(rows[0].jobId), QStringLiteral("6"));
        QCOMPARE(qs(rows[1].jobId), QStringLiteral("17"));
        QCOMPARE(rows[1].priority, std::int64_t(4294901748)); // "\r" not in the last field
        QCOMPARE(qs(rows[2].jobId), QStringLiteral("21"));
        QCOMPARE(qs(error),
                QStringLiteral(
                        "line 2: expected 8 fields separated by '|', got 1: \"slurm_load_jobs error: Invalid job id specified\"\n"
                        "line 5: expected 8 fields separated by '|', got 7: \"22|PENDING|Resources|1796560283|0:00||debug\"\n"
                        "line 6: priority is not a number: \"23|PENDING|Priority|N/A|0:00||debug|high\""));
        // No error pointer: the same rows.
        QCOMPARE(parseSqueue(text).size(), std::size_t(3));
        // A long line is quoted cut at 200 bytes.
        parseSqueue(std::string(300, 'x'), &error);
        QCOMPARE(qs(error),
                QStringLiteral("line 1: expected 8 fields separated by '|', got 1: \"") + QString(200, 'x')
                        + QStringLiteral("...\""));
    }

    // ---- pending priorities, jobs ahead ----

    void pendingPrioritiesWithoutReasons()
    {
        std::string error = "stale";
        const auto pending = parsePendingPriorities(fixture("squeue-pending-priorities.txt"), &error);
        QCOMPARE(qs(error), QString());
        QCOMPARE(pending.size(), std::size_t(8));
        QCOMPARE(qs(pending[7].first), QStringLiteral("24_[3-5]"));
        QCOMPARE(pending[7].second, std::int64_t(4294901741));
        // Without %r every pending job counts: 6, 17-20 (BeginTime) and 22.
        QCOMPARE(jobsAhead(pending, "23", 4294901742), 6);
        // 6 higher jobs, 23, and the array's three tasks (same priority, smaller id).
        QCOMPARE(jobsAhead(pending, "25", 4294901741), 10);
        QCOMPARE(jobsAhead(pending, "6", 4294901755), 0);
        // With -r, tasks one per line: 24_3 is ahead of 24_4, 24_5 is not.
        const auto tasks = parsePendingPriorities(fixture("squeue-pending-priorities-r.txt"), &error);
        QCOMPARE(qs(error), QString());
        QCOMPARE(tasks.size(), std::size_t(10));
        QCOMPARE(jobsAhead(tasks, "24_4", 4294901741), 8);
    }

    void pendingPrioritiesWithReasons()
    {
        // squeue -h -t PD -o '%i|%Q|%r' of jobs 28-33: BeginTime (29),
        // Dependency (30) and JobHeldUser (33) are ahead of no one.
        std::string error;
        const auto pending = parsePendingPriorities(fixture("squeue-pending-reasons.txt"), &error);
        QCOMPARE(qs(error), QString());
        QCOMPARE(pending.size(), std::size_t(3));
        QCOMPARE(qs(pending[0].first), QStringLiteral("28"));
        QCOMPARE(qs(pending[1].first), QStringLiteral("31"));
        QCOMPARE(qs(pending[2].first), QStringLiteral("32_[0-3%2]"));
        QCOMPARE(pending[2].second, std::int64_t(4294901735));
        QCOMPARE(jobsAhead(pending, "31", 4294901736), 1);
        // Task 2 of the throttled array: 28, 31 and its own tasks 0 and 1.
        QCOMPARE(jobsAhead(pending, "32_2", 4294901735), 4);
        // A later job of the same priority: all four tasks too.
        QCOMPARE(jobsAhead(pending, "40", 4294901735), 6);
        // A job with a higher priority than all: none.
        QCOMPARE(jobsAhead(pending, "41", 4294901800), 0);
    }

    void pendingPrioritiesMalformed()
    {
        std::string error;
        const auto pending
                = parsePendingPriorities("28|4294901739|Resources\n29\n31|x|Priority\n31|4294901736|Priority|extra\n"
                                         "31|4294901736|(Priority)\n",
                        &error);
        QCOMPARE(pending.size(), std::size_t(2));
        QCOMPARE(qs(pending[1].first), QStringLiteral("31"));
        QCOMPARE(qs(error),
                QStringLiteral(
                        "line 2: expected 3 fields (or 2) separated by '|', got 1: \"29\"\n"
                        "line 3: priority is not a number: \"31|x|Priority\"\n"
                        "line 4: expected 3 fields (or 2) separated by '|', got 4: \"31|4294901736|Priority|extra\""));
    }

    // ---- sacct ----

    void sacctRows()
    {
        std::string error = "stale";
        const std::vector<AcctRow> rows = parseSacct(fixture("sacct-jobs.txt"), &error);
        QCOMPARE(qs(error), QString());
        QCOMPARE(rows.size(), std::size_t(43));
        const AcctRow& by = rows[4];
        QCOMPARE(qs(by.jobId), QStringLiteral("1235"));
        QCOMPARE(qs(by.state), QStringLiteral("CANCELLED by 54321"));
        QCOMPARE(by.exitCode, 0);
        QCOMPARE(by.signal, 15);
        QCOMPARE(ms(by.startMs), qint64(1796560030000));
        QCOMPARE(ms(by.endMs), qint64(1796560051000));
        QCOMPARE(qs(by.nodes), QStringLiteral("n02"));
        const AcctRow& exit2 = rows[21];
        QCOMPARE(qs(exit2.jobId), QStringLiteral("1240.batch"));
        QCOMPARE(exit2.exitCode, 2);
        QCOMPARE(exit2.signal, 0);
        const AcctRow& pending = rows[33];
        QCOMPARE(qs(pending.jobId), QStringLiteral("1244"));
        QCOMPARE(ms(pending.startMs), kNone);
        QCOMPARE(ms(pending.endMs), kNone);
        QCOMPARE(qs(pending.nodes), QString()); // "None assigned"
        QCOMPARE(qs(rows[42].jobId), QStringLiteral("1246_[2-3]"));
    }

    void sacctAccountingDisabled()
    {
        // Where accounting is off, sacct says so on stderr with exit code 1
        // (errors-transcript.txt); read as output, it is an error, no row.
        const std::string transcript = fixture("errors-transcript.txt");
        const std::size_t at = transcript.find("$ sacct");
        QVERIFY(at != std::string::npos);
        const std::string said = lines(transcript.substr(at))[1];
        QCOMPARE(qs(said), QStringLiteral("Slurm accounting storage is disabled"));
        std::string error;
        QCOMPARE(parseSacct(said + "\n", &error).size(), std::size_t(0));
        QCOMPARE(qs(error),
                QStringLiteral(
                        "line 1: expected 6 fields separated by '|', got 1: \"Slurm accounting storage is disabled\""));
        parseSacct("1240|FAILED|2|1796560024|1796560024|n01\n", &error);
        QCOMPARE(qs(error),
                QStringLiteral("line 1: ExitCode is not <code>:<signal>: \"1240|FAILED|2|1796560024|1796560024|n01\""));
    }

    void sacctLocalTimes()
    {
        const TimeZone berlin("Europe/Berlin");
        const std::vector<AcctRow> rows = parseSacct(fixture("sacct-local.txt"));
        QCOMPARE(rows.size(), std::size_t(3));
        QCOMPARE(ms(rows[0].startMs), qint64(1774745940000)); // 01:59 CET = 00:59 UTC
        QCOMPARE(ms(rows[0].endMs), qint64(1774746060000));   // 03:01 CEST = 01:01 UTC
        QCOMPARE(*rows[0].endMs - *rows[0].startMs, std::int64_t(120000));
    }

    void jobOfStepAndStateWords()
    {
        QCOMPARE(qs(jobOfStep("1234.batch")), QStringLiteral("1234"));
        QCOMPARE(qs(jobOfStep("1234.extern")), QStringLiteral("1234"));
        QCOMPARE(qs(jobOfStep("1234.0")), QStringLiteral("1234"));
        QCOMPARE(qs(jobOfStep("1234_7.0")), QStringLiteral("1234_7"));
        QCOMPARE(qs(jobOfStep("1234_7")), QStringLiteral("1234_7"));
        QCOMPARE(qs(jobOfStep("1234")), QStringLiteral("1234"));
        QCOMPARE(qs(jobOfStep("1246_[2-3]")), QStringLiteral("1246_[2-3]"));
        QCOMPARE(qs(stateWord("CANCELLED by 54321")), QStringLiteral("CANCELLED"));
        QCOMPARE(qs(stateWord("CANCELLED by 0")), QStringLiteral("CANCELLED"));
        QCOMPARE(qs(stateWord("CANCELLED+")), QStringLiteral("CANCELLED")); // sacct without -P, column cut
        QCOMPARE(qs(stateWord("COMPLETED")), QStringLiteral("COMPLETED"));
        QCOMPARE(qs(stateWord("")), QString());
        for (const char* final : {"COMPLETED", "FAILED", "CANCELLED", "CANCELLED by 54321", "TIMEOUT", "OUT_OF_MEMORY",
                     "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE"})
            QVERIFY2(isFinalState(final), final);
        for (const char* going : {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "REQUEUED", "SUSPENDED",
                     "RESIZING", "", "completed", "COMPLETEDX"})
            QVERIFY2(!isFinalState(going), going);
    }

    void combineStepDecides()
    {
        const std::vector<AcctRow> rows = parseSacct(fixture("sacct-jobs.txt"));
        // cluster_utils#87: the allocation COMPLETED, its step .0 CANCELLED.
        const std::optional<JobEnd> end = combineJob(rowsOf(rows, "1234"));
        QVERIFY(end);
        QCOMPARE(qs(end->state), QStringLiteral("CANCELLED"));
        QVERIFY(end->cancelled);
        QCOMPARE(end->exitCode, 0);
        QCOMPARE(end->signal, 15); // the step's: the allocation said 0:0
        QCOMPARE(ms(end->startMs), qint64(1796559736000));
        QCOMPARE(ms(end->endMs), qint64(1796559983000));
        QCOMPARE(qs(end->nodes), QStringLiteral("n01"));
        // The allocation FAILED 1:0 because its step ran out of memory.
        const std::optional<JobEnd> oomStep = combineJob(rowsOf(rows, "1237"));
        QVERIFY(oomStep);
        QCOMPARE(qs(oomStep->state), QStringLiteral("OUT_OF_MEMORY"));
        QVERIFY(!oomStep->cancelled);
        QCOMPARE(oomStep->exitCode, 1); // the allocation's
        QCOMPARE(oomStep->signal, 0);
        QCOMPARE(qs(oomStep->nodes), QStringLiteral("n[01-02]"));
        // The array's task 1: the allocation FAILED, so does its step.
        const std::optional<JobEnd> task = combineJob(rowsOf(rows, "1246_1"));
        QVERIFY(task);
        QCOMPARE(qs(task->state), QStringLiteral("FAILED"));
        QCOMPARE(task->exitCode, 1);
    }

    // PendingQueue (the agent's, once per poll) counts as jobsAhead does,
    // also where a job's own entry stands at another priority than it is
    // asked with (the two squeue calls of a poll are moments apart).
    void pendingQueueCountsAsJobsAhead()
    {
        const std::vector<std::pair<std::string, std::int64_t>> q{
                {"10", 100}, {"11", 50}, {"12", 50}, {"13_[0-3]", 50}, {"9", 50}, {"14", 10}};
        const PendingQueue ordered(q);
        QCOMPARE(ordered.ahead("12", 50), 3);   // 10 (higher), then 9 and 11 (tied, smaller ids)
        QCOMPARE(ordered.ahead("13_2", 50), 6); // 10; 9, 11, 12; tasks 0 and 1 of its own array
        QCOMPARE(ordered.ahead("10", 50), 1);   // its own entry at 100 is not ahead of it; 9 is
        QCOMPARE(ordered.ahead("14", 10), 8);   // everything else: 10, 11, 12, 9 and the four tasks of 13
        QCOMPARE(ordered.ahead("12", 200), 0);
        QCOMPARE(ordered.ahead("99", 50), 8); // not in the queue: tied with all, every id smaller
        for (const auto& [id, prio] : q)
            QCOMPARE(ordered.ahead(id, prio), jobsAhead(q, id, prio));
    }

    void combineAllocationDecides()
    {
        const std::vector<AcctRow> rows = parseSacct(fixture("sacct-jobs.txt"));
        struct Want {
            const char* job;
            const char* state;
            bool cancelled;
            int exitCode, signal;
            qint64 startMs, endMs;
            const char* nodes;
        };
        const Want wants[] = {
                {"1235", "CANCELLED", true, 0, 15, 1796560030000, 1796560051000, "n02"},       // "CANCELLED by 54321"
                {"1236", "OUT_OF_MEMORY", false, 0, 125, 1796560100000, 1796560160000, "n03"}, // the OOM killer's 0:125
                {"1238", "TIMEOUT", false, 0, 15, 1796560034000, 1796560103000,
                        "n01"}, // .batch CANCELLED 0:15 does not decide
                {"1239", "NODE_FAIL", false, 0, 15, 1796560300000, 1796560400000, "n[03-04]"},
                {"1240", "FAILED", false, 2, 0, 1796560024000, 1796560024000, "n01"}, // exit 2
                {"1241", "FAILED", false, 0, 9, 1796560027000, 1796560028000, "n01"}, // kill -9
                {"1242", "COMPLETED", false, 0, 0, 1796560500000, 1796560600000,
                        "n05"}, // .extern OUT_OF_MEMORY never decides
                {"1245", "CANCELLED", true, 0, 0, 1796560800000, 1796560800000, ""}, // "CANCELLED by 0" while pending
                {"1246_0", "COMPLETED", false, 0, 0, 1796559983000, 1796560003000, "n01"},
        };
        for (const Want& w : wants) {
            const std::optional<JobEnd> end = combineJob(rowsOf(rows, w.job));
            QVERIFY2(end, w.job);
            QCOMPARE(qs(end->state), QLatin1String(w.state));
            QCOMPARE(end->cancelled, w.cancelled);
            QCOMPARE(end->exitCode, w.exitCode);
            QCOMPARE(end->signal, w.signal);
            QCOMPARE(ms(end->startMs), w.startMs);
            QCOMPARE(ms(end->endMs), w.endMs);
            QCOMPARE(qs(end->nodes), QLatin1String(w.nodes));
        }
    }

    void combineNotFinal()
    {
        const std::vector<AcctRow> rows = parseSacct(fixture("sacct-jobs.txt"));
        QCOMPARE(byJob(rows).size(), std::size_t(15));
        // Running (a step already CANCELLED), pending, the array's pending tasks.
        for (const char* job : {"1243", "1244", "1246_[2-3]"})
            QVERIFY2(!combineJob(rowsOf(rows, job)), job);
        // No allocation row: nothing decides; no rows at all neither.
        std::vector<AcctRow> steps = rowsOf(rows, "1234");
        steps.erase(steps.begin());
        QVERIFY(!combineJob(steps));
        QVERIFY(!combineJob({}));
    }

    // ---- scontrol ----

    void scontrolEndedJobs()
    {
        const std::string text = fixture("scontrol-ended-epoch.txt");
        QCOMPARE(lines(text).size(), std::size_t(13));
        struct Want {
            const char* job;
            const char* state;
            bool cancelled;
            int exitCode, signal;
            qint64 startMs, endMs;
        };
        const Want wants[] = {
                {"1", "TIMEOUT", false, 0, 15, 1796559736000, 1796559983000}, // TimeLimit=4, 7 s past it
                {"2", "COMPLETED", false, 0, 0, 1796559983000, 1796560013000},
                {"7", "FAILED", false, 3, 0, 1796560024000, 1796560024000},     // exit 3
                {"8", "FAILED", false, 0, 9, 1796560027000, 1796560028000},     // kill -9 (Reason=JobLaunchFailure)
                {"10", "TIMEOUT", false, 0, 15, 1796560034000, 1796560103000},  // --time=1
                {"21", "CANCELLED", true, 0, 15, 1796560103000, 1796560136000}, // scancel while running
                {"15", "COMPLETED", false, 0, 0, 1796559983000, 1796560003000}, // array task 4_0
        };
        for (const Want& w : wants) {
            const auto fields = scontrolJob(text, w.job);
            QVERIFY2(!fields.empty(), w.job);
            const std::optional<JobEnd> end = jobEndFromScontrol(fields);
            QVERIFY2(end, w.job);
            QCOMPARE(qs(end->state), QLatin1String(w.state));
            QCOMPARE(end->cancelled, w.cancelled);
            QCOMPARE(end->exitCode, w.exitCode);
            QCOMPARE(end->signal, w.signal);
            QCOMPARE(ms(end->startMs), w.startMs);
            QCOMPARE(ms(end->endMs), w.endMs);
            QCOMPARE(qs(end->nodes), QStringLiteral("vm"));
        }
        const auto task = scontrolJob(text, "15");
        QCOMPARE(qs(task.at("ArrayJobId")), QStringLiteral("4"));
        QCOMPARE(qs(task.at("ArrayTaskId")), QStringLiteral("0"));
        QCOMPARE(qs(scontrolJob(text, "8").at("Reason")), QStringLiteral("JobLaunchFailure"));
        QCOMPARE(qs(scontrolJob(text, "1").at("TimeLimit")), QStringLiteral("00:04:00"));
        QCOMPARE(ms(parseTimeLimit(scontrolJob(text, "1").at("TimeLimit"))), qint64(240));
    }

    void scontrolLocalTimes()
    {
        // The same jobs printed in local time (UTC) read the same.
        const TimeZone utc("UTC");
        const std::string epoch = fixture("scontrol-ended-epoch.txt"), local = fixture("scontrol-ended-utc.txt");
        for (const char* job : {"1", "4", "5", "8", "23"}) {
            const std::optional<JobEnd> a = jobEndFromScontrol(scontrolJob(epoch, job));
            const std::optional<JobEnd> b = jobEndFromScontrol(scontrolJob(local, job));
            QVERIFY2(a && b, job);
            QVERIFY(a->startMs && a->endMs);
            QCOMPARE(ms(b->startMs), ms(a->startMs));
            QCOMPARE(ms(b->endMs), ms(a->endMs));
            QCOMPARE(qs(b->state), qs(a->state));
        }
        const TimeZone berlin("Europe/Berlin");
        const auto begin = parseScontrolJob(fixture("scontrol-begin-berlin.txt"));
        QCOMPARE(qs(begin.at("EligibleTime")), QStringLiteral("2027-10-31T02:30:00"));
        QCOMPARE(ms(parseTime(begin.at("StartTime"))), qint64(1824946200000)); // job 18, as squeue's %s said
    }

    void scontrolValuesWithSpaces()
    {
        const auto running = parseScontrolJob(fixture("scontrol-spaces-running-epoch.txt"));
        QCOMPARE(qs(running.at("JobId")), QStringLiteral("9"));
        QCOMPARE(qs(running.at("JobName")), QStringLiteral("spaced"));
        QCOMPARE(qs(running.at("Command")), QStringLiteral("/tmp/sp/dir with space/job.sh"));
        QCOMPARE(qs(running.at("WorkDir")), QStringLiteral("/tmp/sp/dir with space"));
        QCOMPARE(qs(running.at("StdErr")), QStringLiteral("/tmp/sp/dir with space/slurm-9.out"));
        QCOMPARE(qs(running.at("StdIn")), QStringLiteral("/dev/null"));
        QCOMPARE(qs(running.at("StdOut")), QStringLiteral("/tmp/sp/dir with space/slurm-9.out"));
        QCOMPARE(qs(running.at("Power")), QString()); // "Power= " ends the line
        QCOMPARE(qs(running.at("AllocNode:Sid")), QStringLiteral("localhost:7389"));
        QCOMPARE(qs(running.at("TRES")), QStringLiteral("cpu=1,node=1,billing=1"));
        QCOMPARE(qs(running.at("JobState")), QStringLiteral("RUNNING"));
        QCOMPARE(running.size(), std::size_t(60)); // every "Key=" of the line
        QVERIFY(!jobEndFromScontrol(running));

        const auto cancelled = parseScontrolJob(fixture("scontrol-spaces-cancelled-epoch.txt"));
        QCOMPARE(qs(cancelled.at("WorkDir")), QStringLiteral("/tmp/sp/dir with space"));
        const std::optional<JobEnd> end = jobEndFromScontrol(cancelled);
        QVERIFY(end);
        QCOMPARE(qs(end->state), QStringLiteral("CANCELLED"));
        QVERIFY(end->cancelled);
        QCOMPARE(end->signal, 15);
        QCOMPARE(ms(end->startMs), qint64(1796560030000));
        QCOMPARE(ms(end->endMs), qint64(1796560051000));
        QCOMPARE(qs(end->nodes), QStringLiteral("vm"));

        // A job name with spaces, and a path whose words look like fields:
        // inside free text only scontrol's own keys start a field.
        std::string line = fixture("scontrol-spaces-running-epoch.txt");
        line.replace(line.find("JobName=spaced"), 14, "JobName=lr sweep  #2");
        line.replace(line.find("Command=/tmp/sp/dir with space/job.sh"), 37, "Command=/home/u/a b=c/run it.sh");
        const auto odd = parseScontrolJob(line);
        QCOMPARE(qs(odd.at("JobName")), QStringLiteral("lr sweep  #2"));
        QCOMPARE(qs(odd.at("Command")), QStringLiteral("/home/u/a b=c/run it.sh"));
        QCOMPARE(qs(odd.at("WorkDir")), QStringLiteral("/tmp/sp/dir with space"));
        QCOMPARE(qs(odd.at("UserId")), QStringLiteral("root(0)"));
        QVERIFY(odd.find("b") == odd.end());
    }

    void scontrolPendingAndQueued()
    {
        // Cancelled while held: no nodes, StartTime = EndTime = the cancel.
        const auto fields = parseScontrolJob(fixture("scontrol-cancelled-pending-epoch.txt"));
        QCOMPARE(qs(fields.at("NodeList")), QString());
        QCOMPARE(qs(fields.at("Reason")), QStringLiteral("JobHeldUser"));
        const std::optional<JobEnd> end = jobEndFromScontrol(fields);
        QVERIFY(end);
        QCOMPARE(qs(end->state), QStringLiteral("CANCELLED"));
        QVERIFY(end->cancelled);
        QCOMPARE(end->exitCode, 0);
        QCOMPARE(end->signal, 0);
        QCOMPARE(ms(end->startMs), qint64(1796559897000));
        QCOMPARE(ms(end->endMs), qint64(1796559897000));
        QCOMPARE(qs(end->nodes), QString());

        // Running and pending jobs have no end.
        const std::string queue = fixture("scontrol-queue-epoch.txt");
        for (const char* job : {"1", "2", "3", "4", "5", "6"}) {
            const auto f = scontrolJob(queue, job);
            QVERIFY2(!f.empty(), job);
            QVERIFY2(!jobEndFromScontrol(f), job);
        }
        QCOMPARE(qs(scontrolJob(queue, "3").at("Dependency")), QStringLiteral("afterok:2(unfulfilled)"));
        QCOMPARE(qs(scontrolJob(queue, "4").at("ArrayTaskId")), QStringLiteral("0-2"));
        QCOMPARE(qs(scontrolJob(queue, "2").at("Command")), QStringLiteral("(null)")); // --wrap
        QCOMPARE(qs(scontrolJob(queue, "2").at("StartTime")), QStringLiteral("1828095736"));
    }

    void scontrolNotAJob()
    {
        // scontrol's answer for a job that has left (errors-transcript.txt).
        QVERIFY(parseScontrolJob("slurm_load_jobs error: Invalid job id specified\n").empty());
        QVERIFY(parseScontrolJob("").empty());
        QVERIFY(parseScontrolJob("No jobs in the system").empty());
        QVERIFY(!jobEndFromScontrol({}));
        QVERIFY(!jobEndFromScontrol({{"JobState", "PENDING"}}));
        // Only the first line of a text is read.
        const auto two = parseScontrolJob("JobId=1 JobState=COMPLETED ExitCode=0:0\nJobId=2 JobState=FAILED\n");
        QCOMPARE(qs(two.at("JobId")), QStringLiteral("1"));
        QCOMPARE(qs(two.at("JobState")), QStringLiteral("COMPLETED"));
        QCOMPARE(qs(two.at("ExitCode")), QStringLiteral("0:0"));
        QCOMPARE(two.size(), std::size_t(3));
        // scontrol's "(null)" for no nodes is none.
        const std::optional<JobEnd> noNodes = jobEndFromScontrol({{"JobState", "CANCELLED"}, {"NodeList", "(null)"}});
        QVERIFY(noNodes);
        QCOMPARE(qs(noNodes->nodes), QString());
        QCOMPARE(ms(noNodes->startMs), kNone);
    }

    // ---- sinfo ----

    void sinfoReal()
    {
        std::string error = "stale";
        const std::vector<Partition> parts = parseSinfo(fixture("sinfo-P.txt"), &error);
        QCOMPARE(qs(error), QString());
        QCOMPARE(parts.size(), std::size_t(1));
        const Partition& p = parts[0];
        QCOMPARE(qs(p.name), QStringLiteral("debug"));
        QVERIFY(p.isDefault);
        QCOMPARE(qs(p.state), QStringLiteral("up"));
        QCOMPARE(p.nodes.size(), std::size_t(1));
        QCOMPARE(qs(p.nodes[0]), QStringLiteral("vm"));
        QCOMPARE(p.cpus, 2);
        QCOMPARE(p.memoryMib, std::int64_t(23081));
        QVERIFY(p.gres.empty());         // "(null)"
        QCOMPARE(ms(p.maxTimeS), kNone); // "infinite"
        QCOMPARE(p.nodeCount, 1);
        // %R (the header's first format) prints no '*': the default is lost.
        const std::vector<Partition> r = parseSinfo(fixture("sinfo-R.txt"));
        QCOMPARE(r.size(), std::size_t(1));
        QCOMPARE(qs(r[0].name), QStringLiteral("debug"));
        QVERIFY(!r[0].isDefault);
        QCOMPARE(QLatin1String(kSinfoFormat), QLatin1String("%P|%a|%N|%c|%m|%G|%l|%D"));
    }

    void sinfoSeveralLinesPerPartition()
    {
        std::string error;
        const std::vector<Partition> parts = parseSinfo(fixture("sinfo-several-lines.txt"), &error);
        QCOMPARE(qs(error), QString());
        QCOMPARE(parts.size(), std::size_t(5));
        const Partition& gpu = parts[0];
        QCOMPARE(qs(gpu.name), QStringLiteral("gpu"));
        QVERIFY(gpu.isDefault);
        QCOMPARE(gpu.nodes.size(), std::size_t(3));
        QCOMPARE(qs(gpu.nodes[0]), QStringLiteral("g[01-04]"));
        QCOMPARE(qs(gpu.nodes[1]), QStringLiteral("g[05-06]"));
        QCOMPARE(qs(gpu.nodes[2]), QStringLiteral("g07"));
        QCOMPARE(gpu.cpus, 128);
        QCOMPARE(gpu.memoryMib, std::int64_t(1024000));
        QCOMPARE(gpu.gres.size(), std::size_t(3));
        QCOMPARE(qs(gpu.gres[0].name), QStringLiteral("gpu"));
        QCOMPARE(qs(gpu.gres[0].type), QStringLiteral("a100"));
        QCOMPARE(gpu.gres[0].count, 8); // 4 on g[01-04], 8 on g[05-06]: the largest
        QCOMPARE(qs(gpu.gres[1].type), QStringLiteral("h100"));
        QCOMPARE(gpu.gres[1].count, 2);
        QCOMPARE(qs(gpu.gres[2].name), QStringLiteral("gpu"));
        QCOMPARE(qs(gpu.gres[2].type), QString());
        QCOMPARE(gpu.gres[2].count, 2);
        QCOMPARE(ms(gpu.maxTimeS), qint64(86400));
        QCOMPARE(gpu.nodeCount, 7);
        const Partition& cpu = parts[1];
        QCOMPARE(qs(cpu.name), QStringLiteral("cpu"));
        QVERIFY(!cpu.isDefault);
        QCOMPARE(cpu.cpus, 32);                        // "32+"
        QCOMPARE(cpu.memoryMib, std::int64_t(192000)); // "192000+"
        QVERIFY(cpu.gres.empty());
        QCOMPARE(ms(cpu.maxTimeS), kNone);
        QCOMPARE(cpu.nodeCount, 100);
        QCOMPARE(ms(parts[2].maxTimeS), qint64(1800)); // "30:00"
        QCOMPARE(qs(parts[3].state), QStringLiteral("drain"));
        QCOMPARE(ms(parts[3].maxTimeS), qint64(604800)); // "7-00:00:00"
        QCOMPARE(qs(parts[4].name), QStringLiteral("debug"));
        QCOMPARE(qs(parts[4].state), QStringLiteral("down"));
        QCOMPARE(ms(parts[4].maxTimeS), qint64(5400)); // "1:30:00"
    }

    void sinfoMalformed()
    {
        std::string error;
        const std::vector<Partition> parts = parseSinfo("gpu*|up|g01|many|512000|(null)|infinite|1\n"
                                                        "gpu*|up|g02|64|512000|(null)|soon|1\n"
                                                        "gpu*|up|g03|64|512000|(null)|infinite\n"
                                                        "gpu*|up|g04|64|512000|(null)|infinite|1\n",
                &error);
        QCOMPARE(parts.size(), std::size_t(1));
        QCOMPARE(parts[0].nodeCount, 1);
        QCOMPARE(qs(parts[0].nodes[0]), QStringLiteral("g04"));
        QCOMPARE(qs(error),
                QStringLiteral(
                        "line 1: CPUs per node is not a number: \"gpu*|up|g01|many|512000|(null)|infinite|1\"\n"
                        "line 2: time limit is not a Slurm time: \"gpu*|up|g02|64|512000|(null)|soon|1\"\n"
                        "line 3: expected 8 fields separated by '|', got 7: \"gpu*|up|g03|64|512000|(null)|infinite\""));
    }

    void gres()
    {
        const std::vector<GresCount> typed = parseGres("gpu:a100:4(S:0-1)");
        QCOMPARE(typed.size(), std::size_t(1));
        QCOMPARE(qs(typed[0].name), QStringLiteral("gpu"));
        QCOMPARE(qs(typed[0].type), QStringLiteral("a100"));
        QCOMPARE(typed[0].count, 4);
        const std::vector<GresCount> two = parseGres("gpu:a100:4(S:0-1),gpu:2");
        QCOMPARE(two.size(), std::size_t(2));
        QCOMPARE(qs(two[1].type), QString());
        QCOMPARE(two[1].count, 2);
        QVERIFY(parseGres("(null)").empty());
        QVERIFY(parseGres("").empty());
        // A socket list with a comma stays inside its entry.
        const std::vector<GresCount> sockets = parseGres("gpu:4(S:0,2),shard:8");
        QCOMPARE(sockets.size(), std::size_t(2));
        QCOMPARE(sockets[0].count, 4);
        QCOMPARE(qs(sockets[1].name), QStringLiteral("shard"));
        QCOMPARE(sockets[1].count, 8);
        QCOMPARE(parseGres("gpu")[0].count, 1);
        QCOMPARE(qs(parseGres("gpu:a100")[0].type), QStringLiteral("a100"));
        QCOMPARE(parseGres("gpu:a100")[0].count, 1);
        QCOMPARE(parseGres("mps:1K")[0].count, 1024);
        const std::vector<GresCount> merged = parseGres("gpu:a100:2,gpu:a100:4");
        QCOMPARE(merged.size(), std::size_t(1));
        QCOMPARE(merged[0].count, 4);
    }

    void timeLimits()
    {
        struct Case {
            const char* text;
            qint64 seconds; // kNone: infinite
        };
        const Case cases[] = {{"infinite", kNone}, {"UNLIMITED", kNone}, {"1-00:00:00", 86400}, {"2-00:00:00", 172800},
                {"30", 1800}, {"30:00", 1800}, {"1:30:00", 5400}, {"5:00", 300}, {"1-12", 129600}, {"1-12:30", 131400},
                {"00:02:00", 120}, {"0", 0}};
        for (const Case& c : cases) {
            bool ok = false;
            QCOMPARE(ms(parseTimeLimit(c.text, &ok)), c.seconds);
            QVERIFY2(ok, c.text);
        }
        for (const char* bad : {"", "abc", "N/A", "1:2:3:4", "1-", "-5", "1:xx", "1-2:3:4:5"}) {
            bool ok = true;
            QCOMPARE(ms(parseTimeLimit(bad, &ok)), qint64(-1));
            QVERIFY2(!ok, bad);
        }
    }

    void formatTimeLimits()
    {
        QCOMPARE(qs(formatTimeLimit(90)), QStringLiteral("0-00:01:30"));
        QCOMPARE(qs(formatTimeLimit(86400)), QStringLiteral("1-00:00:00"));
        QCOMPARE(qs(formatTimeLimit(129659)), QStringLiteral("1-12:00:59"));
        QCOMPARE(qs(formatTimeLimit(7 * 86400 + 3 * 3600 + 4 * 60 + 5)), QStringLiteral("7-03:04:05"));
        // "0" would be no limit to sbatch: the least is a second (a minute to Slurm).
        QCOMPARE(qs(formatTimeLimit(0)), QStringLiteral("0-00:00:01"));
        QCOMPARE(qs(formatTimeLimit(-5)), QStringLiteral("0-00:00:01"));
        for (std::int64_t s : {1, 59, 60, 3599, 3600, 86399, 86400, 1000000})
            QCOMPARE(ms(parseTimeLimit(formatTimeLimit(s))), qint64(s));
    }

    void version()
    {
        QCOMPARE(qs(parseVersion(fixture("sinfo-version.txt"))), QStringLiteral("22.05.8")); // "slurm-wlm 22.05.8"
        QCOMPARE(qs(parseVersion("slurm 22.05.8\n")), QStringLiteral("22.05.8"));
        QCOMPARE(qs(parseVersion("slurm 23.11.10")), QStringLiteral("23.11.10"));
        for (const char* bad : {"", "\n", "slurm", "slurm ", "slurm abc", "sinfo: command not found",
                     "bash: sinfo: command not found\n", "slurm 22", "PARTITION AVAIL TIMELIMIT"})
            QCOMPARE(qs(parseVersion(bad)), QString());
    }

    // ---- Trainyard's words ----

    void unknownJobs()
    {
        // squeue and scontrol of a job Slurm forgot (tests/data/slurm), and
        // scontrol of an array task whose array it still knows (Slurm 22.05:
        // a pending task cancelled alone).
        const auto captured = [](const char* name) {
            return ty::test::readFixture(QStringLiteral("slurm/") + QLatin1String(name)).toStdString();
        };
        QVERIFY(saysUnknownJob(captured("squeue-forgotten-job.txt.stderr")));
        QVERIFY(saysUnknownJob(captured("scontrol-unknown-job.txt.stderr")));
        QVERIFY(saysUnknownJob("scontrol: error: Job 4_1 not found\n"));
        QVERIFY(saysUnknownJob("Job 12 not found"));
        QVERIFY(!saysUnknownJob(captured("squeue-controller-down.txt.stderr")));
        QVERIFY(!saysUnknownJob("scontrol: command not found"));
        QVERIFY(!saysUnknownJob("Job not found"));
        QVERIFY(!saysUnknownJob(""));
    }

    void pendingTexts()
    {
        QCOMPARE(qs(pendingText("Priority", 14, "gpu", 1796565959000)), // 14:05:59 UTC
                QStringLiteral(
                        "waiting: Slurm says Priority: 14 jobs ahead in partition gpu, start estimated 2026-12-06 14:05 UTC"));
        QCOMPARE(qs(pendingText("Priority", 1, "debug", std::nullopt)),
                QStringLiteral("waiting: Slurm says Priority: 1 job ahead in partition debug"));
        QCOMPARE(qs(pendingText("Priority", 0, "", std::nullopt)),
                QStringLiteral("waiting: Slurm says Priority: 0 jobs ahead"));
        QCOMPARE(qs(pendingText("Priority", -1, "gpu", std::nullopt)),
                QStringLiteral("waiting: Slurm says Priority: jobs with a higher priority go first"));
        QCOMPARE(qs(pendingText("Resources", 0, "gpu", std::nullopt)),
                QStringLiteral("waiting: Slurm says Resources: the partition's nodes are busy"));
        // Job 22's estimate, as squeue printed it.
        const std::vector<QueueRow> rows = parseSqueue(fixture("squeue-queue-epoch.txt"));
        QCOMPARE(qs(pendingText(rows[5].reason, 0, rows[5].partition, rows[5].startMs)),
                QStringLiteral(
                        "waiting: Slurm says Resources: the partition's nodes are busy, start estimated 2026-12-06 12:31 UTC"));
        QCOMPARE(qs(pendingText("Dependency", 3, "gpu", std::nullopt)),
                QStringLiteral("waiting: Slurm says Dependency: an earlier step has not finished"));
        QCOMPARE(qs(pendingText("AssocGrpGRES", 3, "gpu", std::nullopt)),
                QStringLiteral("waiting: Slurm says AssocGrpGRES"));
        QCOMPARE(qs(pendingText("JobHeldUser", 0, "gpu", std::nullopt)),
                QStringLiteral("waiting: Slurm says JobHeldUser: held by its user (scontrol release)"));
        QCOMPARE(qs(pendingText("BeginTime", 0, "debug", 1796563338000)),
                QStringLiteral(
                        "waiting: Slurm says BeginTime: its start time has not come, start estimated 2026-12-06 13:22 UTC"));
        QCOMPARE(qs(pendingText("ReqNodeNotAvail,_UnavailableNodes:n1", 0, "gpu", std::nullopt)),
                QStringLiteral(
                        "waiting: Slurm says ReqNodeNotAvail,_UnavailableNodes:n1: a node it needs is not available"));
        QCOMPARE(qs(pendingText("None", 0, "gpu", std::nullopt)),
                QStringLiteral("waiting: in Slurm's queue, not scheduled yet"));
        QCOMPARE(qs(pendingText("", 0, "gpu", std::nullopt)),
                QStringLiteral("waiting: in Slurm's queue, not scheduled yet"));
    }
};

QTEST_GUILESS_MAIN(TestSlurmText)
#include "TestSlurmText.moc"
