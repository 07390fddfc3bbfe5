// Slurm as a node kind (issue #26, "Benchmark"): a REAL Slurm 22.05 cluster
// (tests/support/slurm/slurm-up.sh), its login node reached through a REAL
// OpenSSH sshd (tests/integration/SshdFixture, SLURM_CONF given to every
// session with sshd_config's SetEnv) and the REAL trainyard-agent. Nothing
// is faked.
//
// 1. submit -> running, --jobs N jobs of `sleep 1` each way, interleaved
//    (ABAB, the order swapped every pair, to cancel drift), each job waited
//    to its end before the next (the cluster is idle at every submission):
//    - raw: one libssh session (one SSH connection, one login) for the whole
//      phase; per job one exec channel `sbatch --parsable --wrap 'sleep 1'`,
//      then `squeue -h -j ID -o %T` on a new exec channel of the same
//      session every --poll-ms until it says RUNNING (the first poll right
//      after sbatch answered, as the agent's).
//    - Trainyard: AgentClient over SshAgentTransport (its own SSH
//      connection, the agent run in place), `start` with a `slurm` object
//      (script `sleep 1`; both sides' jobs first write `date +%s%N`, which
//      splits Slurm's start from the client's lag), timed from the request to the `slurm` event whose
//      state is running. The agent runs with TRAINYARD_AGENT_SLURM_POLL_MS =
//      --poll-ms, so both sides look at Slurm equally often.
// 2. Polling cost with --queue pending jobs: one job holding both nodes
//    (-N2 --exclusive, sleep), then --queue minus --tracked `sbatch --wrap
//    true` jobs submitted over the raw session (one exec channel running a
//    shell loop per 100), then --tracked jobs submitted by a second agent
//    (state of its own, TRAINYARD_AGENT_SLURM_POLL_MS = --poll2-ms), all
//    pending for Resources / Priority (what a busy lab's queue has; held
//    jobs would be left out of jobs_ahead's list). That agent's squeue is a
//    wrapper first on its PATH that logs the real squeue's start and end, so
//    each poll's commands are timed as the agent ran them; its CPU time
//    (/proc/PID/stat utime+stime, and cutime+cstime of the commands it
//    waited for, which include the wrapper's sh and date) over --polls polls.
//    Then, with that agent gone, here, interleaved, --reps times each:
//    `squeue -h` (the raw command, all jobs, default format) beside the
//    agent's two commands with their exact arguments; and the parse of the
//    captured output (parseSqueue, parsePendingPriorities, jobsAhead for
//    each tracked job, the agent's job lookup), --parse-iters iterations.
// 3. A sweep of --sweep N runs submitted to the cluster (one job holding
//    both nodes, so none starts): N `start`s, one at a time, against one
//    `start_array` of N (PROTOCOL.md "Job arrays", revision 5), each by the
//    same agent over one SSH connection, interleaved --sweep-reps times;
//    time from the first request to the last reply, and the records Slurm's
//    queue holds for them (`squeue -h` without -r: an array's pending tasks
//    are one record).
// Every job is cancelled at the end (scancel -u root: the cluster is the
// bench's own).
//
// Usage: bench_slurm --slurm DIR/env.sh|slurm.conf [--jobs N (20)]
//        [--poll-ms P (500)] [--queue N (1000)] [--tracked K (100)]
//        [--poll2-ms P (1000)] [--polls N (20)] [--reps N (20)]
//        [--parse-iters N (200)] [--sweep N (100)] [--sweep-reps N (3)]
//        [--no-latency] [--no-queue] [--no-sweep]
// Needs root, /usr/sbin/sshd, and a cluster of its own (slurm-up.sh DIR).
#include "tests/integration/SshdFixture.h"

#include "core/nodes/AgentClient.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/slurm/SlurmText.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <libssh/libssh.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

using namespace ty;

namespace {

struct Options {
    QString slurm;
    int jobs = 20;
    int pollMs = 500;
    int queue = 1000;
    int tracked = 100;
    int poll2Ms = 1000;
    int polls = 20;
    int reps = 20;
    int parseIters = 200;
    bool latency = true;
    bool queueCost = true;
    int sweep = 100;
    int sweepReps = 3;
    bool sweepCost = true;
};

double msSince(const std::chrono::steady_clock::time_point& t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool waitFor(const std::function<bool()>& pred, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    QTimer tick;
    tick.start(5);
    while (!pred()) {
        if (t.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
    }
    return true;
}

struct Stats {
    double p50 = 0, p95 = 0, min = 0, max = 0, mean = 0;
    int n = 0;
};

Stats stats(std::vector<double> v)
{
    Stats s;
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    s.n = int(v.size());
    s.min = v.front();
    s.max = v.back();
    for (double x : v)
        s.mean += x / double(v.size());
    const auto rank = [&](double q) { return v[std::min(v.size() - 1, size_t(q * double(v.size()) + 0.999999) - 1)]; };
    s.p50 = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    s.p95 = rank(0.95);
    return s;
}

void printStats(const char* what, const Stats& s)
{
    std::printf(
            "  %-58s p50 %8.2f ms  p95 %8.2f ms  (min %.2f, max %.2f, n=%d)\n", what, s.p50, s.p95, s.min, s.max, s.n);
}

// One SSH connection (libssh, blocking), exec channels on it.
class RawSsh {
public:
    ~RawSsh()
    {
        if (m_s) {
            ssh_disconnect(m_s);
            ssh_free(m_s);
        }
    }
    bool connect(const QString& config, const QString& key, QString* error)
    {
        m_s = ssh_new();
        ssh_options_set(m_s, SSH_OPTIONS_HOST, "ws1");
        if (ssh_options_parse_config(m_s, config.toLocal8Bit().constData()) != 0 || ssh_connect(m_s) != SSH_OK) {
            *error = QStringLiteral("raw ssh connect: %1").arg(QString::fromUtf8(ssh_get_error(m_s)));
            return false;
        }
        ssh_key k = nullptr;
        if (ssh_pki_import_privkey_file(key.toLocal8Bit().constData(), nullptr, nullptr, nullptr, &k) != SSH_OK
                || ssh_userauth_publickey(m_s, nullptr, k) != SSH_AUTH_SUCCESS) {
            ssh_key_free(k);
            *error = QStringLiteral("raw ssh login: %1").arg(QString::fromUtf8(ssh_get_error(m_s)));
            return false;
        }
        ssh_key_free(k);
        return true;
    }
    // Runs `cmd` on a new exec channel; its stdout (stderr into *err).
    QByteArray exec(const QByteArray& cmd, int* rc = nullptr, QByteArray* err = nullptr)
    {
        if (rc)
            *rc = -1;
        ssh_channel ch = ssh_channel_new(m_s);
        if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, cmd.constData()) != SSH_OK) {
            if (ch)
                ssh_channel_free(ch);
            if (err)
                *err = ssh_get_error(m_s);
            return {};
        }
        QByteArray out, errText;
        char buf[65536];
        int idle = 0;
        for (;;) {
            const int n = ssh_channel_read_timeout(ch, buf, sizeof buf, 0, 30000);
            if (n == 0 && !ssh_channel_is_eof(ch) && ++idle > 3) // 90 s and nothing: give up
                break;
            if (n > 0) {
                out.append(buf, n);
                continue;
            }
            if (n < 0 || ssh_channel_is_eof(ch))
                break;
        }
        for (int n; (n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1)) > 0;)
            errText.append(buf, n);
        ssh_channel_send_eof(ch);
        const int status = ssh_channel_get_exit_status(ch);
        ssh_channel_close(ch);
        ssh_channel_free(ch);
        if (rc)
            *rc = status;
        if (err)
            *err = errText;
        return out;
    }

private:
    ssh_session m_s = nullptr;
};

// Runs argv here (posix_spawnp) with `env`; stdout, the wall time in *ms.
QByteArray runHere(const std::vector<std::string>& argv, const std::vector<std::string>& env, double* ms)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return {};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    std::vector<char*> a, e;
    for (const auto& s : argv)
        a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    for (const auto& s : env)
        e.push_back(const_cast<char*>(s.c_str()));
    e.push_back(nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, a[0], &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    QByteArray out;
    char buf[65536];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
        out.append(buf, n);
    ::close(fds[0]);
    if (rc == 0)
        ::waitpid(pid, nullptr, 0);
    *ms = msSince(t0);
    return out;
}

qint64 wallNs()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The `date +%s%N` a job script wrote at its start.
qint64 scriptStart(const QByteArray& path)
{
    QFile f(QString::fromUtf8(path));
    return f.open(QIODevice::ReadOnly) ? f.readAll().trimmed().toLongLong() : 0;
}

// utime+stime and cutime+cstime of `pid`, seconds.
bool procCpu(qint64 pid, double* self, double* children)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QByteArray st = f.readAll();
    const QList<QByteArray> v
            = st.mid(st.lastIndexOf(')') + 2).split(' '); // state(0) ... utime(11) stime(12) cutime(13) cstime(14)
    if (v.size() < 15)
        return false;
    const double tick = double(::sysconf(_SC_CLK_TCK));
    *self = (v[11].toDouble() + v[12].toDouble()) / tick;
    *children = (v[13].toDouble() + v[14].toDouble()) / tick;
    return true;
}

class Bench {
public:
    explicit Bench(Options o)
        : m_opt(std::move(o))
    { }
    ~Bench() { cleanup(); }
    int run();

private:
    bool fail(const QString& why)
    {
        std::fprintf(stderr, "bench_slurm: %s\n", qPrintable(why));
        return false;
    }
    SshNodeOptions nodeOptions(const QString& state, int pollMs, const QString& path = {}) const
    {
        SshNodeOptions o = m_sshd.nodeOptions(QStringLiteral("ws1"), state);
        o.agentEnv.insert(QStringLiteral("TRAINYARD_AGENT_SLURM_POLL_MS"), QString::number(pollMs));
        if (!path.isEmpty())
            o.agentEnv.insert(QStringLiteral("PATH"), path);
        return o;
    }
    std::unique_ptr<AgentClient> connectAgent(const SshNodeOptions& o);
    QByteArray slurmCmd(const QByteArray& cmd) { return m_raw.exec(cmd); }
    bool waitQueueEmpty(int timeoutMs);
    bool latency();
    bool queueCost();
    bool sweepCost();
    void cleanup();

    Options m_opt;
    test::SshdFixture m_sshd;
    QTemporaryDir m_tmp{QStringLiteral("/tmp/bsl-XXXXXX")};
    QString m_slurmConf;
    RawSsh m_raw;
    bool m_up = false;
};

std::unique_ptr<AgentClient> Bench::connectAgent(const SshNodeOptions& o)
{
    auto c = std::make_unique<AgentClient>(std::make_unique<SshAgentTransport>(o));
    QString lost;
    QObject::connect(c.get(), &AgentClient::disconnected, [&lost](const QString& r) { lost = r; });
    c->connectToAgent();
    if (!waitFor([&] { return c->isReady() || !lost.isEmpty(); }, 30000) || !lost.isEmpty()) {
        fail(QStringLiteral("agent connection failed: %1").arg(lost.isEmpty() ? QStringLiteral("timeout") : lost));
        return nullptr;
    }
    QObject::disconnect(c.get(), &AgentClient::disconnected, nullptr, nullptr);
    return c;
}

bool Bench::waitQueueEmpty(int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        if (slurmCmd("squeue -h -o %i").trimmed().isEmpty())
            return true;
        QThread::msleep(200);
    }
    return false;
}

void Bench::cleanup()
{
    if (!m_up)
        return;
    m_up = false;
    slurmCmd("scancel -u root");
    waitQueueEmpty(60000);
}

bool Bench::latency()
{
    std::printf("\n1. submit -> running, %d jobs each way (sleep 1), poll every %d ms on both sides, ABAB\n",
            m_opt.jobs, m_opt.pollMs);
    auto client = connectAgent(nodeOptions(m_tmp.filePath(QStringLiteral("state1")), m_opt.pollMs));
    if (!client)
        return false;
    // The jobs' working directory: raw jobs write their slurm-<id>.out there,
    // and every job its script's start time (`date +%s%N`, this machine's clock).
    const QByteArray work = m_tmp.filePath(QStringLiteral("work")).toUtf8();
    QDir().mkpath(QString::fromUtf8(work));
    QString runningRun, exitedRun;
    QObject::connect(client.get(), &AgentClient::slurmChanged, [&](const AgentRunStatus& s) {
        if (s.running)
            runningRun = s.run;
    });
    QObject::connect(client.get(), &AgentClient::runExited, [&](const AgentRunStatus& s) { exitedRun = s.run; });

    std::vector<double> raw, rawSbatch, agent, agentReply, rawSlurm, rawLag, agentSlurm, agentLag;
    int rawPolls = 0;
    int seq = 0;
    const auto doRaw = [&]() -> bool {
        const QByteArray stamp = work + "/raw-" + QByteArray::number(seq++) + ".start";
        const qint64 wall0 = wallNs();
        const auto t0 = std::chrono::steady_clock::now();
        int rc = 0;
        QByteArray err;
        const QByteArray cmd = "sbatch --parsable --chdir=" + work + " --wrap 'date +%s%N > " + stamp + "; sleep 1'";
        const QByteArray id = m_raw.exec(cmd, &rc, &err).trimmed();
        rawSbatch.push_back(msSince(t0));
        if (rc != 0 || id.isEmpty())
            return fail(QStringLiteral("raw sbatch failed: %1").arg(QString::fromUtf8(err)));
        for (;;) {
            ++rawPolls;
            const QByteArray st = m_raw.exec("squeue -h -j " + id + " -o %T").trimmed();
            if (st == "RUNNING" || st == "COMPLETING" || st.isEmpty())
                break;
            if (msSince(t0) > 60000)
                return fail(QStringLiteral("raw job %1 not running after 60 s").arg(QString::fromUtf8(id)));
            QThread::msleep(m_opt.pollMs);
        }
        raw.push_back(msSince(t0));
        const qint64 wall1 = wallNs();
        if (!waitQueueEmpty(60000))
            return fail(QStringLiteral("raw job did not end"));
        const qint64 began = scriptStart(stamp);
        rawSlurm.push_back(double(began - wall0) / 1e6);
        rawLag.push_back(double(wall1 - began) / 1e6);
        return true;
    };
    const auto doAgent = [&]() -> bool {
        AgentStartRequest req;
        req.run = QStringLiteral("lat-%1").arg(seq++);
        req.workdir = QString::fromUtf8(work);
        req.slurm = true;
        const QByteArray stamp = work + "/" + req.run.toUtf8() + ".start";
        req.slurmScript = QStringLiteral("#!/bin/bash\ndate +%s%N > %1\nsleep 1\n").arg(QString::fromUtf8(stamp));
        QString error;
        const qint64 wall0 = wallNs();
        const auto t0 = std::chrono::steady_clock::now();
        client->start(req, [&](const Result<AgentStartReply>& r) {
            agentReply.push_back(msSince(t0));
            if (!r)
                error = r.error().message;
        });
        if (!waitFor([&] { return runningRun == req.run || exitedRun == req.run || !error.isEmpty(); }, 60000))
            return fail(QStringLiteral("agent run %1 not running after 60 s").arg(req.run));
        if (!error.isEmpty())
            return fail(QStringLiteral("agent start: %1").arg(error));
        if (runningRun != req.run)
            std::printf("  (run %s: exited before a poll saw it running)\n", qPrintable(req.run));
        agent.push_back(msSince(t0));
        const qint64 wall1 = wallNs();
        if (!waitFor([&] { return exitedRun == req.run; }, 60000) || !waitQueueEmpty(60000))
            return fail(QStringLiteral("agent run did not end"));
        const qint64 began = scriptStart(stamp);
        agentSlurm.push_back(double(began - wall0) / 1e6);
        agentLag.push_back(double(wall1 - began) / 1e6);
        return true;
    };
    // Warm-up: one each (sbatch's first start, the agent's first poll).
    if (!doRaw() || !doAgent())
        return false;
    for (auto* v : {&raw, &rawSbatch, &agent, &agentReply, &rawSlurm, &rawLag, &agentSlurm, &agentLag})
        v->clear();
    rawPolls = 0;
    for (int i = 0; i < m_opt.jobs; ++i) {
        const bool rawFirst = (i % 2) == 0;
        if (!(rawFirst ? doRaw() : doAgent()) || !(rawFirst ? doAgent() : doRaw()))
            return false;
    }
    client->disconnectFromAgent();
    const Stats r = stats(raw), a = stats(agent), rs = stats(rawSbatch), ar = stats(agentReply);
    printStats("raw: sbatch over the session (its answer)", rs);
    printStats("raw: sbatch, then squeue -j ID -o %T until RUNNING", r);
    std::printf("    (%.2f squeue polls per job)\n", double(rawPolls) / double(std::max(1, r.n)));
    printStats("Trainyard: start -> reply (sbatch answered)", ar);
    printStats("Trainyard: start -> `slurm` event, running", a);
    std::printf(
            "  ratio Trainyard / raw: p50 %.3f, p95 %.3f, mean %.3f\n", a.p50 / r.p50, a.p95 / r.p95, a.mean / r.mean);
    std::printf("  ratio of the sbatch answers (Trainyard reply / raw sbatch): p50 %.3f\n", ar.p50 / rs.p50);
    std::printf("  split at the job script's first line (`date +%%s%%N` in the job, same clock):\n");
    const Stats rl = stats(rawLag), al = stats(agentLag);
    printStats("raw: submit -> the script runs (Slurm)", stats(rawSlurm));
    printStats("raw: the script runs -> squeue said RUNNING here", rl);
    printStats("Trainyard: submit -> the script runs (Slurm)", stats(agentSlurm));
    printStats("Trainyard: the script runs -> `slurm` event here", al);
    std::printf("  ratio of the lags (Trainyard / raw): p50 %.3f, mean %.3f\n", al.p50 / rl.p50, al.mean / rl.mean);
    return true;
}

bool Bench::queueCost()
{
    const int others = m_opt.queue - m_opt.tracked;
    std::printf("\n2. polling with %d pending jobs in the queue (%d submitted raw, %d by the agent), one job holding "
                "both nodes; agent polls every %d ms\n",
            m_opt.queue, others, m_opt.tracked, m_opt.poll2Ms);
    int rc = 0;
    QByteArray err;
    const QByteArray work = m_tmp.filePath(QStringLiteral("work")).toUtf8();
    const QByteArray blocker
            = m_raw.exec("sbatch --parsable -N2 --exclusive --chdir=" + work + " --wrap 'sleep 3600'", &rc, &err)
                      .trimmed();
    if (rc != 0)
        return fail(QStringLiteral("blocker: %1").arg(QString::fromUtf8(err)));
    {
        QElapsedTimer t;
        t.start();
        while (m_raw.exec("squeue -h -j " + blocker + " -o %T").trimmed() != "RUNNING") {
            if (t.elapsed() > 60000)
                return fail(QStringLiteral("the blocking job does not run"));
            QThread::msleep(200);
        }
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int done = 0; done < others;) {
        const int n = std::min(100, others - done);
        m_raw.exec(QByteArray("for i in $(seq ") + QByteArray::number(n) + "); do sbatch --parsable --chdir=" + work
                        + " --wrap true >/dev/null || exit 1; done",
                &rc, &err);
        if (rc != 0)
            return fail(QStringLiteral("sbatch loop: %1").arg(QString::fromUtf8(err)));
        done += n;
    }
    std::printf("  %d raw sbatch over one session (a shell loop per 100): %.1f s, %.1f ms each\n", others,
            msSince(t0) / 1000, msSince(t0) / double(std::max(1, others)));

    // The agent, with a squeue that logs the real one's start and end.
    const QString real = QStandardPaths::findExecutable(QStringLiteral("squeue"));
    const QString bin = m_tmp.filePath(QStringLiteral("bin"));
    const QString log = m_tmp.filePath(QStringLiteral("squeue.log"));
    QDir().mkpath(bin);
    {
        QFile w(bin + QStringLiteral("/squeue"));
        if (!w.open(QIODevice::WriteOnly))
            return fail(QStringLiteral("cannot write the squeue wrapper"));
        w.write(QStringLiteral("#!/bin/sh\ns=$(date +%s%N)\n'%1' \"$@\"\nrc=$?\ne=$(date +%s%N)\n"
                               "echo \"$s $e $*\" >> '%2'\nexit $rc\n")
                        .arg(real, log)
                        .toUtf8());
        w.close();
        w.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    auto client = connectAgent(nodeOptions(
            m_tmp.filePath(QStringLiteral("state2")), m_opt.poll2Ms, bin + u':' + qEnvironmentVariable("PATH")));
    if (!client)
        return false;
    const qint64 agentPid = client->hello().pid;
    std::vector<std::string> ids;
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < m_opt.tracked; ++i) {
        AgentStartRequest req;
        req.run = QStringLiteral("q-%1").arg(i);
        req.workdir = m_tmp.filePath(QStringLiteral("work"));
        req.slurm = true;
        req.slurmScript = QStringLiteral("#!/bin/bash\ntrue\n");
        QString error;
        bool done = false;
        client->start(req, [&](const Result<AgentStartReply>& r) {
            done = true;
            if (!r)
                error = r.error().message;
            else
                ids.push_back(r->slurmJob.toStdString());
        });
        if (!waitFor([&] { return done; }, 60000) || !error.isEmpty())
            return fail(QStringLiteral("agent start %1: %2").arg(req.run, error));
    }
    std::printf("  %d agent starts (one at a time): %.1f s, %.1f ms each\n", m_opt.tracked, msSince(t1) / 1000,
            msSince(t1) / double(std::max(1, m_opt.tracked)));
    const int queued = int(slurmCmd("squeue -h -t PD -o %i").count('\n'));
    std::printf("  squeue: %d pending\n", queued);

    // Polls: count the agent's `squeue ... -j` lines.
    const auto readLog = [&] {
        QFile f(log);
        f.open(QIODevice::ReadOnly);
        return f.readAll().split('\n');
    };
    const auto pollsStarted = [&] {
        int n = 0;
        for (const auto& l : readLog())
            n += l.contains(" -j ") ? 1 : 0;
        return n;
    };
    // Let the first polls (the submissions' own) pass, then a window of --polls polls.
    QThread::msleep(2 * m_opt.poll2Ms);
    QCoreApplication::processEvents();
    const int firstLine = int(readLog().size()) - 1;
    const int p0 = pollsStarted();
    double self0 = 0, child0 = 0, self1 = 0, child1 = 0;
    procCpu(agentPid, &self0, &child0);
    const auto w0 = std::chrono::steady_clock::now();
    if (!waitFor([&] { return pollsStarted() >= p0 + m_opt.polls; }, (m_opt.polls + 10) * (m_opt.poll2Ms + 2000)))
        return fail(QStringLiteral("the agent did not poll %1 times").arg(m_opt.polls));
    procCpu(agentPid, &self1, &child1);
    const double windowMs = msSince(w0);
    const int polls = pollsStarted() - p0;
    client->disconnectFromAgent();

    std::vector<double> agentSq, agentPd, agentCycle;
    {
        const auto lines = readLog();
        double cycleStart = -1, cycleMs = 0;
        for (int i = firstLine; i < lines.size(); ++i) {
            const QList<QByteArray> f = lines[i].split(' ');
            if (f.size() < 3)
                continue;
            const double s = f[0].toDouble() / 1e6, e = f[1].toDouble() / 1e6;
            if (lines[i].contains(" -j ")) {
                if (cycleStart >= 0)
                    agentCycle.push_back(cycleMs);
                cycleStart = s;
                cycleMs = e - s;
                agentSq.push_back(e - s);
            } else if (lines[i].contains(" -t PD ")) {
                agentPd.push_back(e - s);
                cycleMs = e - cycleStart;
            }
        }
        if (cycleStart >= 0 && !agentPd.empty())
            agentCycle.push_back(cycleMs);
    }
    std::printf("  the agent's commands, timed by the wrapper (the real squeue's start to its end):\n");
    printStats("agent: squeue -h -o <fmt> -j <K ids>", stats(agentSq));
    printStats("agent: squeue -h -t PD -p debug -o %i|%Q|%r", stats(agentPd));
    printStats("agent: poll cycle (first command's start to last's end)", stats(agentCycle));
    std::printf("  agent CPU over %d polls in %.1f s: itself %.1f ms/poll (%.2f %% of a core), its commands %.1f "
                "ms/poll (squeue + the wrapper's sh and date)\n",
            polls, windowMs / 1000, (self1 - self0) * 1000 / polls, (self1 - self0) * 100000 / windowMs,
            (child1 - child0) * 1000 / polls);

    // The commands here, interleaved, with the agent gone.
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        env.emplace_back(*e);
    env.push_back("SLURM_CONF=" + m_slurmConf.toStdString());
    std::vector<std::string> queryEnv = env;
    queryEnv.push_back("SLURM_TIME_FORMAT=%s");
    std::string idList;
    for (const auto& id : ids)
        idList += (idList.empty() ? "" : ",") + id;
    const std::vector<std::string> rawArgv{"squeue", "-h"};
    const std::vector<std::string> sqArgv{"squeue", "-h", "-o", slurm::kSqueueFormat, "-j", idList};
    const std::vector<std::string> pdArgv{"squeue", "-h", "-t", "PD", "-p", "debug", "-o", slurm::kPendingFormat};
    const std::vector<std::string> allArgv{"squeue", "-h", "-o", slurm::kSqueueFormat, "-u", "root"};
    std::vector<double> tRaw, tSq, tPd, tAll, tRawSsh;
    QByteArray outRaw, outSq, outPd, outAll;
    for (int i = 0; i < m_opt.reps; ++i) {
        double ms = 0;
        outRaw = runHere(rawArgv, env, &ms);
        tRaw.push_back(ms);
        outSq = runHere(sqArgv, queryEnv, &ms);
        tSq.push_back(ms);
        outPd = runHere(pdArgv, queryEnv, &ms);
        tPd.push_back(ms);
        outAll = runHere(allArgv, queryEnv, &ms);
        tAll.push_back(ms);
        const auto t = std::chrono::steady_clock::now();
        m_raw.exec("squeue -h");
        tRawSsh.push_back(msSince(t));
    }
    std::printf("  here (posix_spawnp, output read through a pipe), %d times each, interleaved:\n", m_opt.reps);
    const Stats sRaw = stats(tRaw), sSq = stats(tSq), sPd = stats(tPd);
    printStats(qPrintable(QStringLiteral("raw: squeue -h (%1 lines)").arg(outRaw.count('\n'))), sRaw);
    printStats(qPrintable(QStringLiteral("agent's: squeue -j <K ids> (%1 lines)").arg(outSq.count('\n'))), sSq);
    printStats(qPrintable(QStringLiteral("agent's: squeue -t PD -p debug (%1 lines)").arg(outPd.count('\n'))), sPd);
    printStats(qPrintable(QStringLiteral("agent's fallback: squeue -u root (%1 lines)").arg(outAll.count('\n'))),
            stats(tAll));
    printStats("raw: squeue -h over the SSH session (exec channel)", stats(tRawSsh));
    std::printf("  ratio (agent's two commands) / raw squeue -h: p50 %.2f\n", (sSq.p50 + sPd.p50) / sRaw.p50);

    // Parsing the captured output, as the agent does per poll.
    const std::string sq = outSq.toStdString(), pd = outPd.toStdString(), all = outAll.toStdString();
    std::vector<std::int64_t> prio;
    std::size_t sink = 0;
    const auto timeIt = [&](const std::function<void()>& f) {
        const auto t = std::chrono::steady_clock::now();
        for (int i = 0; i < m_opt.parseIters; ++i)
            f();
        return msSince(t) / m_opt.parseIters;
    };
    const double msSqParse = timeIt([&] {
        const auto rows = slurm::parseSqueue(sq);
        // The agent's lookup: each tracked job found among the rows.
        for (const auto& id : ids)
            sink += std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.jobId == id; }) - rows.begin();
    });
    const double msAllParse = timeIt([&] { sink += slurm::parseSqueue(all).size(); });
    const auto rows = slurm::parseSqueue(sq);
    const double msPdParse = timeIt([&] { sink += slurm::parsePendingPriorities(pd).size(); });
    const auto queue = slurm::parsePendingPriorities(pd);
    // As the agent does it: the queue read and sorted once per poll.
    const double msAhead = timeIt([&] {
        const slurm::PendingQueue ordered(queue);
        for (const auto& r : rows)
            sink += std::size_t(ordered.ahead(r.jobId, r.priority));
    });
    // The baseline: the queue read again for each job (jobsAhead alone).
    const double msAheadEach = timeIt([&] {
        for (const auto& r : rows)
            sink += std::size_t(slurm::jobsAhead(queue, r.jobId, r.priority));
    });
    int maxAhead = 0;
    for (const auto& r : rows)
        maxAhead = std::max(maxAhead, slurm::jobsAhead(queue, r.jobId, r.priority));
    std::printf("  parse, %d iterations (ms per poll):\n", m_opt.parseIters);
    std::printf("    parseSqueue(%zu rows) + lookup of %zu jobs    %8.3f ms\n", rows.size(), ids.size(), msSqParse);
    std::printf("    parsePendingPriorities(%lld lines -> %zu)     %8.3f ms\n", (long long)outPd.count('\n'),
            queue.size(), msPdParse);
    std::printf("    PendingQueue once + ahead() for %zu jobs (max %d) %8.3f ms\n", rows.size(), maxAhead, msAhead);
    std::printf("    jobsAhead for each (the queue read per job)   %8.3f ms  (ratio %.3f)\n", msAheadEach,
            msAheadEach > 0 ? msAhead / msAheadEach : 0.0);
    std::printf(
            "    parseSqueue(%lld rows, the -u fallback)       %8.3f ms\n", (long long)outAll.count('\n'), msAllParse);
    const double parseTotal = msSqParse + msPdParse + msAhead;
    std::printf("  per poll: commands %.1f ms (p50, here) + parse %.3f ms; parse / raw squeue -h: %.4f\n",
            sSq.p50 + sPd.p50, parseTotal, parseTotal / sRaw.p50);
    if (sink == 42)
        std::printf(" \n");
    return true;
}

bool Bench::sweepCost()
{
    std::printf(
            "\n3. a sweep of %d runs submitted while a job holds both nodes: %d starts vs one start_array, %d times each, "
            "interleaved\n",
            m_opt.sweep, m_opt.sweep, m_opt.sweepReps);
    slurmCmd("scancel -u root"); // what phase 2 left queued
    if (!waitQueueEmpty(120000))
        return fail(QStringLiteral("the queue did not empty"));
    const QByteArray holder = slurmCmd("sbatch --parsable -N2 --exclusive --wrap 'sleep 3600'").trimmed();
    if (holder.isEmpty())
        return fail(QStringLiteral("could not submit the job holding the nodes"));
    if (!waitFor([&] { return slurmCmd("squeue -h -o %T -j " + holder).trimmed() == "RUNNING"; }, 60000))
        return fail(QStringLiteral("the job holding the nodes did not start"));
    auto client = connectAgent(nodeOptions(m_tmp.filePath(QStringLiteral("state3")), 5000));
    if (!client)
        return false;
    if (client->hello().revision < 5)
        return fail(QStringLiteral("the agent has revision %1: no start_array").arg(client->hello().revision));
    const QString work = m_tmp.filePath(QStringLiteral("work"));
    std::vector<double> singles, arrays;
    int singleRecords = 0, arrayRecords = 0;
    for (int rep = 0; rep < m_opt.sweepReps; ++rep) {
        for (int kind = 0; kind < 2; ++kind) {
            const bool array = (kind + rep) % 2 == 1; // ABBA...
            QList<AgentStartRequest> runs;
            for (int i = 0; i < m_opt.sweep; ++i) {
                AgentStartRequest req;
                req.run = QStringLiteral("sw%1-%2-%3").arg(rep).arg(array ? u'a' : u's').arg(i);
                req.workdir = work;
                req.slurm = true;
                req.slurmScript = QStringLiteral("#!/bin/bash\necho %1\n").arg(i);
                runs.append(req);
            }
            QString error;
            int replies = 0;
            const auto t0 = std::chrono::steady_clock::now();
            if (array) {
                AgentArrayRequest a;
                a.runs = runs;
                a.sbatch = {QStringLiteral("--time=1")};
                client->startArray(a, [&](const Result<AgentArrayReply>& r) {
                    replies = m_opt.sweep;
                    if (!r)
                        error = r.error().message;
                });
            } else {
                for (AgentStartRequest& req : runs) {
                    req.slurmSbatch = {QStringLiteral("--time=1")};
                    bool done = false;
                    client->start(req, [&](const Result<AgentStartReply>& r) {
                        done = true;
                        ++replies;
                        if (!r)
                            error = r.error().message;
                    });
                    if (!waitFor([&] { return done; }, 60000))
                        break;
                }
            }
            if (!waitFor([&] { return replies == m_opt.sweep || !error.isEmpty(); }, 300000) || !error.isEmpty())
                return fail(QStringLiteral("sweep submission: %1")
                                    .arg(error.isEmpty() ? QStringLiteral("timeout") : error));
            (array ? arrays : singles).push_back(msSince(t0));
            const int records = int(slurmCmd("squeue -h -t PD -o %i").count('\n'));
            (array ? arrayRecords : singleRecords) = records;
            slurmCmd("scancel -u root -t PD");
            if (!waitFor([&] { return slurmCmd("squeue -h -t PD -o %i").trimmed().isEmpty(); }, 60000))
                return fail(QStringLiteral("the sweep's jobs did not leave the queue"));
        }
    }
    const Stats s = stats(singles), a = stats(arrays);
    std::printf("  %d starts, one at a time: median %.0f ms (%.1f ms a run); Slurm's queue: %d records\n", m_opt.sweep,
            s.p50, s.p50 / m_opt.sweep, singleRecords);
    std::printf("  one start_array of %d:    median %.0f ms (%.1f ms a run); Slurm's queue: %d record(s)\n",
            m_opt.sweep, a.p50, a.p50 / m_opt.sweep, arrayRecords);
    std::printf("  ratio (array / starts): %.3f\n", a.p50 / s.p50);
    slurmCmd("scancel " + holder);
    return true;
}

int Bench::run()
{
    QString conf = m_opt.slurm;
    if (conf.endsWith(QStringLiteral(".sh"))) {
        QFile f(conf);
        if (!f.open(QIODevice::ReadOnly))
            return fail(QStringLiteral("cannot read %1").arg(conf)), 1;
        const auto m
                = QRegularExpression(QStringLiteral("export SLURM_CONF=(\\S+)")).match(QString::fromUtf8(f.readAll()));
        conf = m.hasMatch() ? m.captured(1) : QString();
    }
    if (conf.isEmpty() || !QFile::exists(conf))
        return fail(QStringLiteral("no slurm.conf from --slurm %1").arg(m_opt.slurm)), 1;
    m_slurmConf = conf;
    qputenv("SLURM_CONF", conf.toLocal8Bit());
    if (const QString why = test::SshdFixture::skipReason(); !why.isEmpty())
        return fail(why), 77;
    m_sshd.setExtraConfig("SetEnv SLURM_CONF=" + conf.toUtf8() + "\n");
    QString error;
    if (!m_sshd.start(&error))
        return fail(error), 1;
    if (!m_raw.connect(m_sshd.clientConfig(), m_sshd.dir() + QStringLiteral("/id_ed25519"), &error))
        return fail(error), 1;
    const QByteArray version = slurmCmd("sinfo --version").trimmed();
    const QByteArray jobs = slurmCmd("squeue -h -o %i");
    std::printf("bench_slurm: %s, SLURM_CONF=%s, sshd on port %d, agent %s\n", version.constData(), qPrintable(conf),
            m_sshd.port(), TRAINYARD_AGENT_PATH);
    if (version.isEmpty())
        return fail(QStringLiteral("sinfo over SSH printed nothing: is the cluster up?")), 1;
    if (!jobs.trimmed().isEmpty())
        return fail(QStringLiteral("the cluster's queue is not empty: the bench needs a cluster of its own")), 1;
    m_up = true;
    QDir().mkpath(m_tmp.filePath(QStringLiteral("work"))); // the jobs' --chdir
    bool ok = true;
    if (m_opt.latency)
        ok = latency();
    if (ok && m_opt.queueCost)
        ok = queueCost();
    if (ok && m_opt.sweepCost)
        ok = sweepCost();
    cleanup();
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_slurm v4\n");
    std::fflush(stdout);
    QCoreApplication app(argc, argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // progress shows when piped to a file
    Options o;
    const QStringList args = app.arguments();
    for (int i = 1; i < args.size(); ++i) {
        const QString& a = args[i];
        const auto next = [&]() -> QString { return i + 1 < args.size() ? args[++i] : QString(); };
        if (a == QLatin1String("--slurm"))
            o.slurm = next();
        else if (a == QLatin1String("--jobs"))
            o.jobs = next().toInt();
        else if (a == QLatin1String("--poll-ms"))
            o.pollMs = next().toInt();
        else if (a == QLatin1String("--queue"))
            o.queue = next().toInt();
        else if (a == QLatin1String("--tracked"))
            o.tracked = next().toInt();
        else if (a == QLatin1String("--poll2-ms"))
            o.poll2Ms = next().toInt();
        else if (a == QLatin1String("--polls"))
            o.polls = next().toInt();
        else if (a == QLatin1String("--reps"))
            o.reps = next().toInt();
        else if (a == QLatin1String("--parse-iters"))
            o.parseIters = next().toInt();
        else if (a == QLatin1String("--no-latency"))
            o.latency = false;
        else if (a == QLatin1String("--no-queue"))
            o.queueCost = false;
        else if (a == QLatin1String("--sweep"))
            o.sweep = next().toInt();
        else if (a == QLatin1String("--sweep-reps"))
            o.sweepReps = next().toInt();
        else if (a == QLatin1String("--no-sweep"))
            o.sweepCost = false;
        else {
            std::fprintf(
                    stderr, "bench_slurm: unknown argument %s (see the header of bench_slurm.cpp)\n", qPrintable(a));
            return 2;
        }
    }
    if (o.slurm.isEmpty() || o.jobs < 1 || o.pollMs < 1 || o.tracked < 1 || o.queue < o.tracked || o.polls < 1) {
        std::fprintf(stderr,
                "usage: bench_slurm --slurm DIR/env.sh [--jobs N] [--poll-ms P] [--queue N] "
                "[--tracked K] [--poll2-ms P] [--polls N] [--reps N] [--parse-iters N] [--sweep N] [--sweep-reps N] "
                "[--no-latency] [--no-queue] [--no-sweep]\n");
        return 2;
    }
    Bench b(o);
    return b.run();
}
