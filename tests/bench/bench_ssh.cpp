// SSH nodes over loopback (issue 3, "Benchmarks"): start latency and console
// throughput through a REAL OpenSSH sshd (tests/integration/SshdFixture: a
// temporary host key and client key, sshd on 127.0.0.2/.3) and the REAL
// trainyard-agent, deployed over SFTP like a workstation's. Nothing is faked.
//
// 1. Start latency, `command: [true]`:
//    - engine: RunEngine::submit() -> store (queued) -> scheduling pass ->
//      agent `start` over the SSH channel -> its reply -> the run committed
//      as Running (RunEngine::runStateChanged). Timed from the submit() call
//      to that signal, one run at a time (each waited to the end before the
//      next, so the node is quiet), --runs runs. The engine has no periodic
//      scheduler tick in that path (submit() queues a pass for the next
//      event-loop turn), so the engine figure is the user-visible one.
//    - agent: AgentClient::start() on a connection of its own to the same
//      node, request to reply (the reply is sent once the supervisor has
//      forked the run: the agent's "started"), one at a time.
//    - throughput: --runs starts sent at once, through the engine (all
//      submitted in one go, until the last is Running) and through one
//      AgentClient (pipelined requests, until the last reply).
//    Also the agent channel's ping round trip (the transport's floor).
//    Baselines: a fresh `ssh host true` (/usr/bin/ssh, the test key,
//    BatchMode, StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null) and
//    `ssh -s host sftp` (no login shell), requests over an OpenSSH control
//    master (ControlMaster/ControlPersist): `ssh -S path host true` (runs the
//    login shell), `ssh -S path -s host sftp` and `ssh -S path -O check host`
//    (no remote process at all), and posix_spawn(/bin/true) here (the cost
//    of creating a process on this machine, no SSH).
//    The runs work in an empty directory of their own (the engine has the
//    agent list a run's workdir at its start and end: see RESULTS.md).
// 2. Console throughput: a run that cats a generated --mb MiB file (lines of
//    100 bytes, each numbered, so a lost or doubled line changes the hash),
//    received over SSH and stored by the engine (local console copy, terminal
//    rendering, metric extraction, store): submit() to Succeeded. Checked:
//    the local console copy has exactly the file's size and SHA-256, and the
//    stored console offset equals the size. Beside it, the same file through
//    a bare AgentClient tail (SSH + agent only, bytes hashed and counted, not
//    stored), and `ssh host cat FILE`: to /dev/null (whole command) and read
//    here from its first byte to its end (the transfer alone, without the
//    connection and login shell); and, for comparison only, into a new local
//    file (OpenSSH storing what the engine stores). CPU seconds per thread of this process and
//    of the whole machine are printed per phase. All use the cipher forced
//    in the client config (Ciphers chacha20-poly1305@openssh.com, or
//    --cipher NAME, e.g. aes128-gcm@openssh.com; read by libssh and OpenSSH
//    alike); the cipher libssh negotiates with and without that line is
//    printed. MB = 10^6 bytes.
//
// Usage: bench_ssh [--runs N (200)] [--mb N (1024)] [--ssh-true N (20)]
//                  [--mux N (50)] [--no-latency] [--no-console] [--dir DIR]
//                  [--keep] [--cipher NAME] [--content letters|log|random]
//                  [--no-compress]
// v3 (issue #27): --content (generateConsole), the bare tail with and
// without LZ4 console frames (protocol revision 8) in every run, the
// engine's node with them unless --no-compress, and `ssh -C` beside.
// Needs root and /usr/sbin/sshd (as the SSH integration tests).
#include "tests/integration/SshdFixture.h"
#include "tests/support/TestSupport.h"

#include "core/nodes/AgentClient.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/runs/QueuePolicy.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTimer>

#include <libssh/libssh.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ty;

namespace {

// The cipher forced for every client unless --cipher names another.
constexpr const char* kDefaultCipher = "chacha20-poly1305@openssh.com";

// SHA-256 through OpenSSL (SHA-NI: ~1.4 GB/s here): QCryptographicHash's
// portable SHA-256 does ~85 MB/s on this machine and would bound the bare
// tail's figure by the check itself.
class Sha256 {
public:
    Sha256() { EVP_DigestInit_ex(m_ctx, EVP_sha256(), nullptr); }
    ~Sha256() { EVP_MD_CTX_free(m_ctx); }
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void addData(QByteArrayView b) { EVP_DigestUpdate(m_ctx, b.data(), size_t(b.size())); }
    QByteArray hexResult()
    {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        EVP_DigestFinal_ex(m_ctx, md, &n);
        return QByteArray(reinterpret_cast<const char*>(md), int(n)).toHex();
    }

private:
    EVP_MD_CTX* m_ctx = EVP_MD_CTX_new();
};

double cpuSeconds(int who)
{
    rusage u{};
    getrusage(who, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double nowMs(const QElapsedTimer& clock)
{
    return double(clock.nsecsElapsed()) / 1e6;
}

// Runs the event loop until pred() holds; false after timeoutMs.
bool waitFor(const std::function<bool()>& pred, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    QTimer tick; // never sleep longer than 50 ms without re-checking
    tick.start(50);
    while (!pred()) {
        if (t.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
    }
    return true;
}

struct Stats {
    double median = 0;
    double p99 = 0;
    double min = 0;
    double max = 0;
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
    s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    // Nearest rank.
    const size_t rank = std::min(v.size() - 1, size_t((0.99 * double(v.size())) + 0.999999) - 1);
    s.p99 = v[rank];
    return s;
}

void printStats(const char* what, const Stats& s)
{
    std::printf("  %-58s median %8.2f ms  p99 %8.2f ms  (min %.2f, max %.2f, n=%d)\n", what, s.median, s.p99, s.min,
            s.max, s.n);
}

QByteArray sha256File(const QString& path, qint64* size)
{
    QFile f(path);
    *size = -1;
    if (!f.open(QIODevice::ReadOnly))
        return {};
    Sha256 h;
    QByteArray buf(4 << 20, Qt::Uninitialized);
    qint64 total = 0;
    for (;;) {
        const qint64 n = f.read(buf.data(), buf.size());
        if (n <= 0)
            break;
        h.addData(QByteArrayView(buf.constData(), n));
        total += n;
    }
    *size = total;
    return h.hexResult();
}

// CPU seconds (user + system) of each thread of this process, by thread name
// (main thread: "bench_ssh"; SSH sessions: "ssh-<node>"; the store's writer).
QMap<QString, double> threadCpu()
{
    QMap<QString, double> out;
    const double tick = double(::sysconf(_SC_CLK_TCK));
    const QStringList tids = QDir(QStringLiteral("/proc/self/task")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString& tid : tids) {
        QFile f(QStringLiteral("/proc/self/task/%1/stat").arg(tid));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QByteArray st = f.readAll();
        const qsizetype open = st.indexOf('('), close = st.lastIndexOf(')');
        const QList<QByteArray> fields = st.mid(close + 2).split(' '); // state ppid ... utime(12) stime(13)
        if (open < 0 || fields.size() < 13)
            continue;
        out[QString::fromUtf8(st.mid(open + 1, close - open - 1))]
                += (fields[11].toDouble() + fields[12].toDouble()) / tick;
    }
    return out;
}

// Busy CPU seconds of the whole machine (every core; /proc/stat).
double machineBusyCpu()
{
    QFile f(QStringLiteral("/proc/stat"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> v
            = f.readLine().simplified().split(' '); // cpu user nice system idle iowait irq softirq steal
    double busy = 0;
    for (int i = 1; i < v.size() && i <= 8; ++i)
        if (i != 4 && i != 5)
            busy += v[i].toDouble();
    return busy / double(::sysconf(_SC_CLK_TCK));
}

// "main 3.1, ssh-ws1 1.2, ..." for the threads that used >= 0.05 CPU-s since `before`.
QString cpuDelta(const QMap<QString, double>& before, const QMap<QString, double>& after)
{
    QStringList parts;
    for (auto it = after.cbegin(); it != after.cend(); ++it) {
        const double d = it.value() - before.value(it.key());
        if (d >= 0.05)
            parts << QStringLiteral("%1 %2").arg(it.key()).arg(d, 0, 'f', 2);
    }
    return parts.join(QStringLiteral(", "));
}

// Line `i` of a training log shaped like the bundled real ones (tests/data:
// plain PyTorch with a tqdm bar, Lightning's epoch lines, logging's INFO
// lines): a tqdm update ending in '\r' per batch, "step N loss X" every
// 10th, an INFO line with the learning rate every 50th, an epoch summary
// every 500th. Steps only grow (a console that restarted its steps every
// few hundred lines would measure the store's restarts instead).
QByteArray trainingLogLine(qint64 i, std::mt19937_64& rng)
{
    const qint64 batchesPerEpoch = 500;
    const qint64 epoch = i / batchesPerEpoch + 1;
    const qint64 batch = i % batchesPerEpoch + 1;
    const double loss = 2.3 * std::exp(-double(i) / 2e6) + double(rng() % 1000) / 1e4;
    char buf[320];
    int n;
    if (batch == batchesPerEpoch)
        n = std::snprintf(buf, sizeof buf,
                "Epoch %lld: 100%%|##########| %lld/%lld [00:41<00:00, 12.%02dit/s, v_num=0, train_loss=%.3f,"
                " val_loss=%.3f, val_acc=%.3f]\n",
                static_cast<long long>(epoch), static_cast<long long>(batch), static_cast<long long>(batchesPerEpoch),
                int(rng() % 100), loss, loss * 1.1, 1.0 - loss / 3);
    else if (i % 50 == 0)
        n = std::snprintf(buf, sizeof buf,
                "2026-11-29 22:%02d:%02d,%03d - INFO - step %lld: lr=%.6f grad_norm=%.3f throughput=%.1f samples/s\n",
                int(i / 60000 % 60), int(i / 1000 % 60), int(i % 1000), static_cast<long long>(i),
                1e-3 * std::exp(-double(i) / 1e7), double(rng() % 5000) / 1000.0, 1000.0 + double(rng() % 500));
    else if (i % 10 == 0)
        n = std::snprintf(buf, sizeof buf, "step %lld loss %.4f\n", static_cast<long long>(i), loss);
    else {
        const qint64 pct = batch * 100 / batchesPerEpoch;
        char bar[11];
        for (int c = 0; c < 10; ++c)
            bar[c] = c < pct / 10 ? '#' : ' ';
        bar[10] = '\0';
        n = std::snprintf(buf, sizeof buf,
                "Epoch %lld/%d: %3d%%|%s| %lld/%lld [00:%02d<00:%02d, %5.2fit/s, loss=%.4f]\r",
                static_cast<long long>(epoch), 100, int(pct), bar, static_cast<long long>(batch),
                static_cast<long long>(batchesPerEpoch), int(batch / 12 % 60), int((batchesPerEpoch - batch) / 12 % 60),
                12.0 + double(rng() % 100) / 100.0, loss);
    }
    return QByteArray(buf, std::min(n, int(sizeof buf) - 1));
}

// `bytes` of numbered lines (the last one cut short), so a lost or doubled
// line changes the hash. `content` (--content):
//   letters: 100-byte lines, "%010lld " + 88 letters of the alphabet in
//            turn + '\n' (bench_ssh v2's only content; LZ4 makes about
//            1/60 of it: the best case for compression)
//   log:     trainingLogLine(i), not numbered (each line holds its step):
//            tqdm bars, step and INFO lines, epoch summaries (LZ4 makes
//            about a third of it: a training log's case)
//   random:  "%010lld " + 88 base64 characters of random bytes (fixed seed)
//            + '\n': text LZ4 cannot shrink (no entropy coder), the worst
//            case, where every chunk is tried and sent as it is
// Returns its SHA-256 (hex), empty when the file cannot be written.
QByteArray generateConsole(const QString& path, qint64 bytes, const QString& content)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return {};
    const bool log = content == QStringLiteral("log");
    const bool random = content == QStringLiteral("random");
    static constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::mt19937_64 rng(27);
    Sha256 h;
    QByteArray block;
    block.reserve(1 << 20);
    qint64 written = 0;
    QByteArray line;
    for (qint64 i = 0; written < bytes; ++i) {
        if (log) {
            line = trainingLogLine(i, rng);
        } else {
            char number[24];
            std::snprintf(number, sizeof number, "%010lld ", static_cast<long long>(i));
            line = number;
            line.resize(100);
            for (int c = 11; c < 99; ++c)
                line[c] = random ? kBase64[rng() & 63] : char('a' + (i + c) % 26);
            line[99] = '\n';
        }
        const qint64 n = std::min<qint64>(line.size(), bytes - written);
        block.append(line.constData(), n);
        written += n;
        if (block.size() >= (1 << 20) || written == bytes) {
            h.addData(block);
            if (f.write(block) != block.size())
                return {};
            block.clear();
        }
    }
    return h.hexResult();
}

// Wall-clock ms of one program run to the end; -1 (and the output) on
// failure. The event loop keeps running meanwhile (the engine's heartbeats).
// `stdoutFile`: where the program's output goes (QProcess::nullDevice(), a
// file); empty: read by QProcess (and dropped).
double timeProcess(const QString& program, const QStringList& args, QString* failure, const QString& stdoutFile = {})
{
    QProcess p;
    p.setStandardInputFile(QProcess::nullDevice());
    if (!stdoutFile.isEmpty())
        p.setStandardOutputFile(stdoutFile);
    bool done = false;
    QObject::connect(&p, &QProcess::finished, [&done] { done = true; });
    QObject::connect(&p, &QProcess::errorOccurred, [&done](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            done = true;
    });
    QElapsedTimer t;
    t.start();
    p.start(program, args);
    const bool finished = waitFor([&done] { return done; }, 600000);
    const double ms = nowMs(t);
    if (!finished || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        if (failure)
            *failure = QStringLiteral("%1 %2: exit %3: %4")
                               .arg(program, args.join(u' '))
                               .arg(p.exitCode())
                               .arg(QString::fromUtf8(p.readAllStandardError() + p.readAllStandardOutput()).trimmed());
        if (!finished)
            p.kill();
        return -1;
    }
    return ms;
}

// The floor of process creation on this machine, no SSH, no agent:
// posix_spawn(/bin/true) + waitpid, `n` times in a row. Per-spawn times (ms).
std::vector<double> spawnTrue(int n)
{
    std::vector<double> v;
    char arg0[] = "true";
    char* argv[] = {arg0, nullptr};
    for (int i = 0; i < n; ++i) {
        QElapsedTimer t;
        t.start();
        pid_t pid = 0;
        if (::posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) != 0)
            break;
        int status = 0;
        ::waitpid(pid, &status, 0);
        v.push_back(nowMs(t));
    }
    return v;
}

// The cipher libssh negotiates with `configFile` for `host` (libssh's own
// defaults, as SshSession sets no cipher option), "in / out".
QString libsshCipher(const QString& configFile, const QString& host)
{
    ssh_session s = ssh_new();
    if (!s)
        return QStringLiteral("(ssh_new failed)");
    const QByteArray h = host.toUtf8();
    const QByteArray c = configFile.toUtf8();
    ssh_options_set(s, SSH_OPTIONS_HOST, h.constData());
    ssh_options_parse_config(s, c.constData());
    QString result;
    if (ssh_connect(s) != SSH_OK)
        result = QStringLiteral("(connect failed: %1)").arg(QString::fromUtf8(ssh_get_error(s)));
    else
        result = QStringLiteral("%1 / %2").arg(
                QString::fromLatin1(ssh_get_cipher_in(s)), QString::fromLatin1(ssh_get_cipher_out(s)));
    ssh_disconnect(s);
    ssh_free(s);
    return result;
}

struct Options {
    int runs = 200;
    qint64 mb = 1024;
    int sshTrue = 20;
    int mux = 50;
    int history = 0; // finished runs in the database before the first start
    QString policy;  // the engine's queue policy by name (queuePolicyNamed); empty: the default
    bool latency = true;
    bool console = true;
    bool keep = false;
    QString dir;
    QString cipher = QString::fromLatin1(kDefaultCipher); // --cipher: every client's, libssh and OpenSSH alike
    QString content = QStringLiteral("letters");          // --content letters|log|random (generateConsole)
    bool compress = true; // --no-compress: the engine's node without LZ4 console frames (revision 8)
};

class Bench {
public:
    explicit Bench(Options o)
        : m_opt(std::move(o))
    { }
    int run();

private:
    SshNodeOptions nodeOptions(bool direct = false) const
    {
        SshNodeOptions o;
        o.name = QStringLiteral("ws1");
        o.host = QStringLiteral("ws1");
        o.configFile = m_config;
        o.connectTimeoutSec = 10;
        o.acceptNewHostKey = true;
        // The engine's agent and the bare AgentClient's keep their runs apart.
        o.agentEnv.insert(QStringLiteral("TRAINYARD_AGENT_STATE"),
                m_work + (direct ? QStringLiteral("/state-direct") : QStringLiteral("/state-ws1")));
        o.agentEnv.insert(QStringLiteral("TRAINYARD_AGENT_NO_NVML"), QStringLiteral("1"));
        o.deployAgentFrom = QStringLiteral(TRAINYARD_AGENT_PATH);
        o.remoteCacheDir = m_work + QStringLiteral("/remote-cache");
        return o;
    }
    QStringList sshArgs() const
    {
        return {QStringLiteral("-F"), m_config, QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
                QStringLiteral("-o"), QStringLiteral("StrictHostKeyChecking=no"), QStringLiteral("-o"),
                QStringLiteral("UserKnownHostsFile=/dev/null"), QStringLiteral("-o"), QStringLiteral("LogLevel=ERROR")};
    }
    bool connectClient();
    JobSpec spec(const QString& yaml) const;
    bool latencyEngine();
    bool latencyAgent();
    bool baselines();
    bool consoleThroughput();
    bool fail(const QString& why)
    {
        std::fprintf(stderr, "bench_ssh: %s\n", qPrintable(why));
        return false;
    }

    Options m_opt;
    test::SshdFixture m_sshd;
    QString m_work;
    // The runs' working directory: an empty one of its own. (The engine's
    // MetricFileFollower has the agent list a run's workdir recursively at
    // its start and end, so a workdir holding the agents' state directories
    // would make every start slower than the one before.)
    QString runWorkdir() const { return m_work + QStringLiteral("/workdir"); }
    QString m_config;
    QString m_consoleFile;   // generated before the engine connects (a blocked
    QByteArray m_consoleSha; // event loop would cost the node its heartbeats)
    std::unique_ptr<ResultStore> m_store;
    std::unique_ptr<RunEngine> m_engine;
    std::unique_ptr<AgentClient> m_client;
    Stats m_engineLat, m_agentLat, m_sshTrue, m_sshSftp, m_muxTrue, m_muxCheck, m_muxSftp, m_ping, m_spawn;
    double m_spawnRate = 0;
    double m_engineRate = 0, m_agentRate = 0;
};

JobSpec Bench::spec(const QString& yaml) const
{
    auto s = parseJobSpec(yaml, QStringLiteral("bench.yaml"), runWorkdir());
    if (!s)
        qFatal("%s", qPrintable(s.error().message));
    return *s;
}

bool Bench::connectClient()
{
    m_client = std::make_unique<AgentClient>(std::make_unique<SshAgentTransport>(nodeOptions(true)));
    QString lost;
    QObject::connect(m_client.get(), &AgentClient::disconnected, [&lost](const QString& r) { lost = r; });
    m_client->connectToAgent();
    if (!waitFor([&] { return m_client->isReady() || !lost.isEmpty(); }, 30000) || !lost.isEmpty())
        return fail(
                QStringLiteral("agent connection failed: %1").arg(lost.isEmpty() ? QStringLiteral("timeout") : lost));
    return true;
}

bool Bench::latencyEngine()
{
    QElapsedTimer clock;
    clock.start();
    QHash<RunId, double> runningAt;
    QHash<RunId, RunState> last;
    const auto conn = QObject::connect(m_engine.get(), &RunEngine::runStateChanged, [&](const RunRecord& r) {
        last.insert(r.id, r.state);
        if (r.state == RunState::Running && !runningAt.contains(r.id))
            runningAt.insert(r.id, nowMs(clock));
    });
    const JobSpec trivial = spec(QStringLiteral("name: trivial\ncommand: [\"true\"]\n"));
    std::vector<double> lat;
    const int warmup = 5;
    for (int i = 0; i < m_opt.runs + warmup; ++i) {
        const double t0 = nowMs(clock);
        const auto id = m_engine->submit(trivial, QStringLiteral("ws1"));
        if (!id)
            return fail(id.error().message);
        if (!waitFor([&] { return runningAt.contains(*id) || isTerminal(last.value(*id, RunState::Queued)); }, 20000))
            return fail(QStringLiteral("run %1 did not start").arg(*id));
        if (!runningAt.contains(*id))
            return fail(QStringLiteral("run %1 ended without running").arg(*id));
        if (i >= warmup)
            lat.push_back(runningAt.value(*id) - t0);
        // Quiet node for the next one: wait until this one is recorded as ended.
        if (!waitFor([&] { return isTerminal(last.value(*id)); }, 20000))
            return fail(QStringLiteral("run %1 did not end").arg(*id));
        if (last.value(*id) != RunState::Succeeded)
            return fail(QStringLiteral("run %1 did not succeed").arg(*id));
    }
    m_engineLat = stats(lat);

    // Throughput: all at once.
    QList<RunId> ids;
    const double t0 = nowMs(clock);
    for (int i = 0; i < m_opt.runs; ++i) {
        const auto id = m_engine->submit(trivial, QStringLiteral("ws1"));
        if (!id)
            return fail(id.error().message);
        ids.append(*id);
    }
    const double submitted = nowMs(clock);
    if (!waitFor(
                [&] { return std::all_of(ids.cbegin(), ids.cend(), [&](RunId id) { return runningAt.contains(id); }); },
                120000))
        return fail(QStringLiteral("not every run of the burst started"));
    double lastRunning = 0;
    for (RunId id : std::as_const(ids))
        lastRunning = std::max(lastRunning, runningAt.value(id));
    m_engineRate = m_opt.runs / ((lastRunning - t0) / 1000.0);
    // The window in CLOCK_MONOTONIC seconds (QElapsedTimer's clock on Linux),
    // to cut `perf record -k CLOCK_MONOTONIC` samples to the burst.
    const double monoStart = (clock.msecsSinceReference() + t0) / 1000.0;
    std::printf("  engine burst: %d submit() calls took %.1f ms; last Running after %.1f ms"
                " (CLOCK_MONOTONIC %.3f-%.3f s)\n",
            m_opt.runs, submitted - t0, lastRunning - t0, monoStart, monoStart + (lastRunning - t0) / 1000.0);
    if (!waitFor(
                [&] {
                    return std::all_of(ids.cbegin(), ids.cend(), [&](RunId id) { return isTerminal(last.value(id)); });
                },
                120000))
        return fail(QStringLiteral("not every run of the burst ended"));
    const int ok = int(
            std::count_if(ids.cbegin(), ids.cend(), [&](RunId id) { return last.value(id) == RunState::Succeeded; }));
    if (ok != m_opt.runs)
        return fail(QStringLiteral("%1 of %2 burst runs succeeded").arg(ok).arg(m_opt.runs));
    QObject::disconnect(conn);
    return true;
}

bool Bench::latencyAgent()
{
    QElapsedTimer clock;
    clock.start();
    AgentStartRequest req;
    req.argv = QStringList{QStringLiteral("true")};
    req.workdir = runWorkdir();
    // The transport's floor: ping round trips (no process started).
    std::vector<double> pings;
    for (int i = 0; i < m_opt.runs; ++i) {
        bool done = false;
        const double t0 = nowMs(clock);
        double t1 = 0;
        m_client->ping([&](const Result<qint64>&) {
            t1 = nowMs(clock);
            done = true;
        });
        if (!waitFor([&] { return done; }, 20000))
            return fail(QStringLiteral("ping timed out"));
        pings.push_back(t1 - t0);
    }
    m_ping = stats(pings);

    QSet<QString> exited;
    const auto conn = QObject::connect(
            m_client.get(), &AgentClient::runExited, [&exited](const AgentRunStatus& st) { exited.insert(st.run); });
    std::vector<double> lat;
    const int warmup = 5;
    for (int i = 0; i < m_opt.runs + warmup; ++i) {
        req.run = QStringLiteral("bench-seq-%1").arg(i);
        bool done = false;
        QString error;
        const double t0 = nowMs(clock);
        double t1 = 0;
        m_client->start(req, [&](const Result<AgentStartReply>& r) {
            t1 = nowMs(clock);
            done = true;
            if (!r)
                error = r.error().message;
        });
        if (!waitFor([&] { return done; }, 20000) || !error.isEmpty())
            return fail(QStringLiteral("agent start %1: %2")
                                .arg(req.run, error.isEmpty() ? QStringLiteral("timeout") : error));
        if (i >= warmup)
            lat.push_back(t1 - t0);
        // A quiet node for the next one, as for the engine.
        if (!waitFor([&] { return exited.contains(req.run); }, 20000))
            return fail(QStringLiteral("agent run %1: no exited event").arg(req.run));
    }
    QObject::disconnect(conn);
    m_agentLat = stats(lat);

    int replies = 0;
    QString error;
    double lastReply = 0;
    const double t0 = nowMs(clock);
    for (int i = 0; i < m_opt.runs; ++i) {
        req.run = QStringLiteral("bench-burst-%1").arg(i);
        m_client->start(req, [&](const Result<AgentStartReply>& r) {
            ++replies;
            lastReply = nowMs(clock);
            if (!r)
                error = r.error().message;
        });
    }
    if (!waitFor([&] { return replies == m_opt.runs; }, 120000) || !error.isEmpty())
        return fail(QStringLiteral("agent burst: %1 of %2 replies; %3").arg(replies).arg(m_opt.runs).arg(error));
    m_agentRate = m_opt.runs / ((lastReply - t0) / 1000.0);
    return true;
}

bool Bench::baselines()
{
    QString failure;
    const QStringList args = sshArgs();
    std::vector<double> fresh;
    for (int i = 0; i < m_opt.sshTrue; ++i) {
        const double ms = timeProcess(QStringLiteral("/usr/bin/ssh"),
                args + QStringList{QStringLiteral("ws1"), QStringLiteral("true")}, &failure);
        if (ms < 0)
            return fail(failure);
        fresh.push_back(ms);
    }
    m_sshTrue = stats(fresh);
    // The same without the login shell (root's ~/.bashrc here runs pyenv
    // init): the sftp subsystem (internal-sftp) ends at stdin's EOF.
    std::vector<double> freshSftp;
    for (int i = 0; i < m_opt.sshTrue; ++i) {
        const double ms = timeProcess(QStringLiteral("/usr/bin/ssh"),
                args + QStringList{QStringLiteral("-s"), QStringLiteral("ws1"), QStringLiteral("sftp")}, &failure);
        if (ms < 0)
            return fail(failure);
        freshSftp.push_back(ms);
    }
    m_sshSftp = stats(freshSftp);

    const std::vector<double> spawns = spawnTrue(m_opt.runs);
    m_spawn = stats(spawns);
    double spawnTotal = 0;
    for (double ms : spawns)
        spawnTotal += ms;
    m_spawnRate = spawnTotal > 0 ? double(spawns.size()) / (spawnTotal / 1000.0) : 0;

    const QString control = m_work + QStringLiteral("/cm");
    const QStringList mux = args
            + QStringList{QStringLiteral("-o"), QStringLiteral("ControlMaster=auto"), QStringLiteral("-o"),
                    QStringLiteral("ControlPath=") + control, QStringLiteral("-o"),
                    QStringLiteral("ControlPersist=120")};
    // The first one starts the master (kept in the background by ControlPersist).
    if (timeProcess(QStringLiteral("/usr/bin/ssh"), mux + QStringList{QStringLiteral("ws1"), QStringLiteral("true")},
                &failure)
            < 0)
        return fail(failure);
    if (!QFileInfo::exists(control))
        return fail(QStringLiteral("no control socket at %1").arg(control));
    std::vector<double> viaMaster, check, sftp;
    for (int i = 0; i < m_opt.mux; ++i) {
        const double ms = timeProcess(QStringLiteral("/usr/bin/ssh"),
                args + QStringList{QStringLiteral("-S"), control, QStringLiteral("ws1"), QStringLiteral("true")},
                &failure);
        if (ms < 0)
            return fail(failure);
        viaMaster.push_back(ms);
        const double c = timeProcess(QStringLiteral("/usr/bin/ssh"),
                args
                        + QStringList{QStringLiteral("-S"), control, QStringLiteral("-O"), QStringLiteral("check"),
                                QStringLiteral("ws1")},
                &failure);
        if (c < 0)
            return fail(failure);
        check.push_back(c);
        const double f = timeProcess(QStringLiteral("/usr/bin/ssh"),
                args
                        + QStringList{QStringLiteral("-S"), control, QStringLiteral("-s"), QStringLiteral("ws1"),
                                QStringLiteral("sftp")},
                &failure);
        if (f < 0)
            return fail(failure);
        sftp.push_back(f);
    }
    m_muxSftp = stats(sftp);
    m_muxTrue = stats(viaMaster);
    m_muxCheck = stats(check);
    timeProcess(QStringLiteral("/usr/bin/ssh"),
            args
                    + QStringList{QStringLiteral("-S"), control, QStringLiteral("-O"), QStringLiteral("exit"),
                            QStringLiteral("ws1")},
            nullptr);
    return true;
}

bool Bench::consoleThroughput()
{
    const qint64 bytes = m_opt.mb * 1024 * 1024;
    const QString file = m_consoleFile;
    const QByteArray sha = m_consoleSha;
    std::printf("\nConsole throughput: %lld bytes (%lld MiB) of numbered lines (--content %s), cat by the run\n",
            static_cast<long long>(bytes), static_cast<long long>(m_opt.mb), qPrintable(m_opt.content));
    std::printf("  source %s sha256 %s\n", qPrintable(file), sha.constData());
    const double mbytes = double(bytes) / 1e6;

    // a) ssh cat (baseline), twice: the first also warms the page cache.
    QString failure;
    std::vector<double> sshCat;
    for (int i = 0; i < 2; ++i) {
        const double ms = timeProcess(QStringLiteral("/usr/bin/ssh"),
                sshArgs() + QStringList{QStringLiteral("ws1"), QStringLiteral("cat"), file}, &failure,
                QProcess::nullDevice());
        if (ms < 0)
            return fail(failure);
        sshCat.push_back(ms);
    }
    const double sshCatMs = *std::min_element(sshCat.begin(), sshCat.end());
    // For comparison only (the goal's baseline is the line above): OpenSSH
    // receiving and *storing* the same bytes, into a new local file, as the
    // engine must. Neither side of it writes a console file on the node.
    double sshCatStoredMs = 0;
    {
        const QString copy = m_work + QStringLiteral("/ssh-cat-copy.txt");
        sshCatStoredMs = timeProcess(QStringLiteral("/usr/bin/ssh"),
                sshArgs() + QStringList{QStringLiteral("ws1"), QStringLiteral("cat"), file}, &failure, copy);
        const qint64 stored = QFileInfo(copy).size();
        QFile::remove(copy);
        if (sshCatStoredMs < 0)
            return fail(failure);
        if (stored != bytes)
            return fail(QStringLiteral("ssh cat > file stored %1 bytes, not %2").arg(stored).arg(bytes));
    }
    // The transfer alone: the same command with its stdout read here, from
    // its first byte to its end (no connection, login or shell start-up).
    double sshStreamMs = 0;
    {
        QProcess p;
        p.setStandardInputFile(QProcess::nullDevice());
        p.setReadChannel(QProcess::StandardOutput);
        QElapsedTimer clock;
        double first = -1;
        qint64 got = 0;
        bool done = false;
        QByteArray buf(1 << 20, Qt::Uninitialized);
        QObject::connect(&p, &QProcess::readyReadStandardOutput, [&] {
            if (first < 0)
                first = nowMs(clock);
            for (qint64 n; (n = p.read(buf.data(), buf.size())) > 0;)
                got += n;
        });
        QObject::connect(&p, &QProcess::finished, [&] { done = true; });
        const double busy0 = machineBusyCpu();
        const double children0 = cpuSeconds(RUSAGE_CHILDREN);
        clock.start();
        p.start(QStringLiteral("/usr/bin/ssh"),
                sshArgs() + QStringList{QStringLiteral("ws1"), QStringLiteral("cat"), file});
        if (!waitFor([&] { return done; }, 600000) || p.exitCode() != 0)
            return fail(
                    QStringLiteral("ssh cat (read here) failed: %1").arg(QString::fromUtf8(p.readAllStandardError())));
        for (qint64 n; (n = p.read(buf.data(), buf.size())) > 0;)
            got += n;
        sshStreamMs = nowMs(clock) - first;
        std::printf(
                "  ssh cat CPU-s: the ssh client %.2f; whole machine busy %.2f of %.2f available (incl. login shell)\n",
                cpuSeconds(RUSAGE_CHILDREN) - children0, machineBusyCpu() - busy0, 2 * nowMs(clock) / 1000.0);
        if (got != bytes)
            return fail(QStringLiteral("ssh cat delivered %1 bytes, not %2").arg(got).arg(bytes));
    }

    // b) A bare AgentClient tail: SSH + agent, nothing stored; with LZ4
    // console frames (revision 8, what every SSH node asks for) and without.
    auto bareTail = [&](bool compress, double* ms) -> bool {
        // The transport reads the switch when it is made.
        const QByteArray before = qgetenv("TRAINYARD_CONSOLE_COMPRESSION");
        qputenv("TRAINYARD_CONSOLE_COMPRESSION", compress ? "1" : "0");
        AgentClient client(std::make_unique<SshAgentTransport>(nodeOptions(true)));
        if (before.isNull())
            qunsetenv("TRAINYARD_CONSOLE_COMPRESSION");
        else
            qputenv("TRAINYARD_CONSOLE_COMPRESSION", before);
        QString lost;
        QObject::connect(&client, &AgentClient::disconnected, [&lost](const QString& r) { lost = r; });
        client.connectToAgent();
        if (!waitFor([&] { return client.isReady() || !lost.isEmpty(); }, 30000) || !lost.isEmpty())
            return fail(QStringLiteral("agent connection failed: %1")
                                .arg(lost.isEmpty() ? QStringLiteral("timeout") : lost));
        QElapsedTimer clock;
        AgentStartRequest req;
        req.run = compress ? QStringLiteral("bench-cat-tail-lz4") : QStringLiteral("bench-cat-tail");
        req.argv = QStringList{QStringLiteral("cat"), file};
        req.workdir = runWorkdir();
        qint64 received = 0;
        qint64 expectNext = 0;
        bool contiguous = true;
        bool ended = false;
        QString error;
        Sha256 h;
        QObject::connect(&client, &AgentClient::output,
                [&](const QString& run, qint64 offset, const QByteArray& b, const ByteRanges&) {
                    if (run != req.run)
                        return;
                    contiguous = contiguous && offset == expectNext;
                    expectNext = offset + b.size();
                    received += b.size();
                    h.addData(b);
                });
        QObject::connect(&client, &AgentClient::tailEnded, [&](const QString& run, qint64) {
            if (run == req.run)
                ended = true;
        });
        const double cpu0 = cpuSeconds(RUSAGE_SELF);
        const auto threads0 = threadCpu();
        const double busy0 = machineBusyCpu();
        clock.start();
        client.start(req, [&](const Result<AgentStartReply>& r) {
            if (!r) {
                error = r.error().message;
                return;
            }
            client.tail(req.run, 0, true, [&](const Result<qint64>& t) {
                if (!t)
                    error = t.error().message;
            });
        });
        if (!waitFor([&] { return ended || !error.isEmpty(); }, 600000) || !error.isEmpty())
            return fail(QStringLiteral("agent tail: %1").arg(error.isEmpty() ? QStringLiteral("timeout") : error));
        *ms = nowMs(clock);
        const double cpu = cpuSeconds(RUSAGE_SELF) - cpu0;
        const double monoStart = clock.msecsSinceReference() / 1000.0; // CLOCK_MONOTONIC, for perf --time
        std::printf("  bare tail (%s) CPU-s: this process's threads: %s; whole machine busy %.2f of %.2f available"
                    " (CLOCK_MONOTONIC %.3f-%.3f s)\n",
                compress ? "lz4" : "as is", qPrintable(cpuDelta(threads0, threadCpu())), machineBusyCpu() - busy0,
                2 * *ms / 1000.0, monoStart, monoStart + *ms / 1000.0);
        const QByteArray got = h.hexResult();
        const AgentFrameDecoder::Compression z = client.consoleCompression();
        std::printf(
                "  bare AgentClient tail (%s): %lld bytes, contiguous %s, sha256 %s (%s); %.1f CPU-s in this process;"
                " %lld LZ4 frames carried %lld bytes as %lld (%.1f%%)\n",
                compress ? "lz4" : "as is", static_cast<long long>(received), contiguous ? "yes" : "NO",
                got.constData(), got == sha && received == bytes ? "matches" : "MISMATCH", cpu,
                static_cast<long long>(z.frames), static_cast<long long>(z.rawBytes),
                static_cast<long long>(z.wireBytes),
                z.rawBytes ? 100.0 * double(z.wireBytes) / double(z.rawBytes) : 0.0);
        if (got != sha || received != bytes || !contiguous)
            return fail(QStringLiteral("the tailed console differs from the file"));
        if (!m_opt.keep)
            QFile::remove(m_work + QStringLiteral("/state-direct/runs/") + req.run + QStringLiteral("/console.log"));
        return true;
    };
    double tailMs = 0, tailLz4Ms = 0;
    if (!bareTail(false, &tailMs) || !bareTail(true, &tailLz4Ms))
        return false;

    // OpenSSH with its own compression (-C: zlib level 6 on every packet),
    // for comparison only: what the stock tool does to send fewer bytes.
    double sshCompressedMs = timeProcess(QStringLiteral("/usr/bin/ssh"),
            sshArgs() + QStringList{QStringLiteral("-C"), QStringLiteral("ws1"), QStringLiteral("cat"), file}, &failure,
            QProcess::nullDevice());
    if (sshCompressedMs < 0)
        return fail(failure);

    // c) The engine: received and stored.
    double engineMs = 0, runningMs = 0, lastByteMs = 0;
    {
        QElapsedTimer clock;
        qint64 received = 0;
        RunState state = RunState::Queued;
        RunId target = 0;
        const auto c1 = QObject::connect(
                m_engine.get(), &RunEngine::consoleReceived, [&](RunId id, qint64, const QByteArray& b) {
                    if (id == target) {
                        received += b.size();
                        if (received >= bytes)
                            lastByteMs = nowMs(clock);
                    }
                });
        const auto c2 = QObject::connect(m_engine.get(), &RunEngine::runStateChanged, [&](const RunRecord& r) {
            if (r.id != target)
                return;
            if (r.state == RunState::Running && runningMs == 0)
                runningMs = nowMs(clock);
            state = r.state;
        });
        const double cpu0 = cpuSeconds(RUSAGE_SELF);
        const auto threads0 = threadCpu();
        const double busy0 = machineBusyCpu();
        clock.start();
        const auto id = m_engine->submit(
                spec(QStringLiteral("name: cat-1g\ncommand: [cat, \"%1\"]\n").arg(file)), QStringLiteral("ws1"));
        if (!id)
            return fail(id.error().message);
        target = *id;
        if (!waitFor([&] { return isTerminal(state); }, 1800000))
            return fail(QStringLiteral("the console run did not end"));
        m_store->flush();
        engineMs = nowMs(clock);
        const double cpu = cpuSeconds(RUSAGE_SELF) - cpu0;
        const double monoStart = clock.msecsSinceReference() / 1000.0; // CLOCK_MONOTONIC, for perf --time
        std::printf("  engine CPU-s: this process's threads: %s; whole machine busy %.2f of %.2f available"
                    " (CLOCK_MONOTONIC %.3f-%.3f s)\n",
                qPrintable(cpuDelta(threads0, threadCpu())), machineBusyCpu() - busy0, 2 * engineMs / 1000.0, monoStart,
                monoStart + engineMs / 1000.0);
        QObject::disconnect(c1);
        QObject::disconnect(c2);
        const auto run = m_store->run(*id);
        if (!run)
            return fail(run.error().message);
        qint64 size = 0;
        const QByteArray local = sha256File(run->consolePath, &size);
        std::printf(
                "  engine: state %s, stored offset %lld, local copy %s: %lld bytes, sha256 %s (%s); %.1f CPU-s in this process\n",
                run->state == RunState::Succeeded ? "succeeded" : "NOT succeeded",
                static_cast<long long>(run->consoleOffset), qPrintable(run->consolePath), static_cast<long long>(size),
                local.constData(),
                local == sha && size == bytes && run->consoleOffset == bytes ? "matches" : "MISMATCH", cpu);
        if (local != sha || size != bytes || run->consoleOffset != bytes || run->state != RunState::Succeeded)
            return fail(QStringLiteral("the stored console differs from the file"));
        if (!m_opt.keep) {
            QFile::remove(run->consolePath); // 1 GiB each: do not wait for the end
            QFile::remove(
                    m_work + QStringLiteral("/state-ws1/runs/") + run->agentRunId + QStringLiteral("/console.log"));
        }
    }

    const double sshRate = mbytes / (sshCatMs / 1000.0);
    const double sshStream = mbytes / (sshStreamMs / 1000.0);
    const double engineRate = mbytes / (engineMs / 1000.0);
    std::printf("\n  %-66s %9s %10s\n", "path", "wall", "MB/s");
    std::printf("  %-66s %7.0f ms %10.1f\n", "ssh host cat FILE > /dev/null (best of 2; incl. connect+auth)", sshCatMs,
            sshRate);
    std::printf("  %-66s %7.0f ms %10.1f\n", "ssh host cat FILE read by the bench: first byte -> end", sshStreamMs,
            sshStream);
    std::printf("  %-66s %7.0f ms %10.1f\n", "ssh host cat FILE > new local file (stored; comparison only)",
            sshCatStoredMs, mbytes / (sshCatStoredMs / 1000.0));
    std::printf("  %-66s %7.0f ms %10.1f\n", "ssh -C host cat FILE > /dev/null (zlib; comparison only)",
            sshCompressedMs, mbytes / (sshCompressedMs / 1000.0));
    std::printf("  %-66s %7.0f ms %10.1f\n", "bare AgentClient start+tail (SSH + agent, not stored), as is", tailMs,
            mbytes / (tailMs / 1000.0));
    std::printf("  %-66s %7.0f ms %10.1f\n", "bare AgentClient start+tail, LZ4 console frames", tailLz4Ms,
            mbytes / (tailLz4Ms / 1000.0));
    std::printf("  %-66s %7.0f ms %10.1f\n",
            m_opt.compress ? "engine: submit() -> Succeeded, received + stored (the goal), LZ4"
                           : "engine: submit() -> Succeeded, received + stored (the goal), as is (--no-compress)",
            engineMs, engineRate);
    std::printf("  %-66s %7.0f ms %10.1f\n", "  engine: Running -> last byte received", lastByteMs - runningMs,
            mbytes / ((lastByteMs - runningMs) / 1000.0));
    // The goal is judged against the faster of the two ssh figures (the
    // whole command pays the connection and login shell; reading its output
    // through QProcess here can be slower than its writing to /dev/null).
    const double sshBest = std::max(sshRate, sshStream);
    std::printf("  engine / ssh cat = %.2fx (whole ssh command), %.2fx (its transfer alone); goal >= 0.8x: %s\n",
            engineRate / sshRate, engineRate / sshStream, engineRate >= 0.8 * sshBest ? "met" : "NOT met");
    std::printf(
            "  engine / ssh cat > local file = %.2fx (not the goal's baseline: both store, neither side's node writes a console)\n",
            engineRate / (mbytes / (sshCatStoredMs / 1000.0)));
    return true;
}

int Bench::run()
{
    const QString why = test::SshdFixture::skipReason();
    if (!why.isEmpty()) {
        std::fprintf(stderr, "bench_ssh: cannot run here: %s\n", qPrintable(why));
        return 2;
    }
    std::unique_ptr<QTemporaryDir> tmp;
    if (m_opt.dir.isEmpty()) {
        tmp = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/bench_ssh-XXXXXX"));
        tmp->setAutoRemove(!m_opt.keep);
        m_work = tmp->path();
    } else {
        m_work = QDir(m_opt.dir).absolutePath();
        QDir().mkpath(m_work);
    }
    QDir().mkpath(runWorkdir());
    QString error;
    if (!m_sshd.start(&error)) {
        fail(error);
        return 1;
    }
    // The fixture's client config (Host ws1/ws2 -> 127.0.0.2/.3, the test key),
    // plus one cipher for every client, libssh and OpenSSH alike.
    {
        QFile in(m_sshd.clientConfig());
        QFile out(m_work + QStringLiteral("/ssh_config"));
        if (!in.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly)) {
            fail(QStringLiteral("cannot write the client config"));
            return 1;
        }
        out.write(in.readAll() + "Host *\n  Ciphers " + m_opt.cipher.toLatin1() + "\n");
        m_config = out.fileName();
    }
    std::printf("bench_ssh: sshd (OpenSSH) on 127.0.0.2:%d, work dir %s\n", m_sshd.port(), qPrintable(m_work));
    std::printf("  cipher libssh negotiates with the fixture's config: %s\n",
            qPrintable(libsshCipher(m_sshd.clientConfig(), QStringLiteral("ws1"))));
    std::printf("  cipher libssh negotiates with the bench's config (all paths below): %s\n",
            qPrintable(libsshCipher(m_config, QStringLiteral("ws1"))));

    if (m_opt.console) {
        m_consoleFile = m_work + QStringLiteral("/console-src.txt");
        m_consoleSha = generateConsole(m_consoleFile, m_opt.mb * 1024 * 1024, m_opt.content);
        if (m_consoleSha.isEmpty()) {
            fail(QStringLiteral("cannot write %1").arg(m_consoleFile));
            return 1;
        }
    }

    auto store = ResultStore::open(m_work + QStringLiteral("/db/trainyard.db"));
    if (!store) {
        fail(store.error().message);
        return 1;
    }
    m_store = std::move(*store);
    if (m_opt.history > 0) {
        // A researcher's database: months of finished runs, each with a job
        // spec and tags, which a scheduling pass must not pay for.
        QElapsedTimer h;
        h.start();
        const QDateTime start = QDateTime::currentDateTimeUtc().addDays(-90);
        for (int i = 0; i < m_opt.history; ++i) {
            RunRecord r;
            r.name = QStringLiteral("past-%1").arg(i);
            r.state = i % 10 == 0 ? RunState::Failed : RunState::Succeeded;
            r.specYaml = QStringLiteral("name: past-%1\ncommand: [\"python3\", \"train.py\", \"--lr\", \"0.0%2\"]\n"
                                        "resources: {gpus: 1}\n")
                                 .arg(i)
                                 .arg(i % 9 + 1);
            r.node = QStringLiteral("ws1");
            r.gpus = {i % 2};
            r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
            r.tags = {QStringLiteral("sweep:past"), QStringLiteral("lr")};
            r.createdAt = start.addSecs(qint64(i) * 60);
            r.startedAt = r.createdAt.addSecs(5);
            r.finishedAt = r.createdAt.addSecs(55);
            r.exitCode = r.state == RunState::Failed ? 1 : 0;
            if (const auto id = m_store->createRun(r, {{QStringLiteral("lr"), QStringLiteral("0.01")}}); !id) {
                fail(id.error().message);
                return 1;
            }
        }
        std::printf("  database holds %d finished runs first (written in %lld ms)\n", m_opt.history,
                static_cast<long long>(h.elapsed()));
    }
    m_engine = std::make_unique<RunEngine>(m_store.get(), m_work + QStringLiteral("/db/trainyard.db"));
    if (!m_opt.policy.isEmpty()) {
        const auto policy = queuePolicyNamed(m_opt.policy);
        if (!policy) {
            fail(policy.error().message);
            return 1;
        }
        m_engine->setPolicy(*policy);
        std::printf("  queue policy %s\n", qPrintable(queuePolicyName(*policy)));
    }
    if (!m_opt.compress)
        qputenv("TRAINYARD_CONSOLE_COMPRESSION", "0"); // read by the transport made here
    m_engine->addNode(QStringLiteral("ws1"), std::make_unique<SshAgentTransport>(nodeOptions()));
    qunsetenv("TRAINYARD_CONSOLE_COMPRESSION");
    m_engine->acquireIngestion();
    QElapsedTimer t;
    t.start();
    if (!waitFor([&] { return m_engine->nodeReady(QStringLiteral("ws1")); }, 30000)) {
        fail(QStringLiteral("node ws1 did not become ready"));
        return 1;
    }
    std::printf(
            "  engine connected to ws1 (agent deployed over SFTP) in %lld ms\n", static_cast<long long>(t.elapsed()));
    if (!connectClient())
        return 1;

    if (m_opt.latency) {
        std::printf("\nStart latency, `true`, %d runs each (after 5 warm-up runs)\n", m_opt.runs);
        if (!baselines() || !latencyEngine() || !latencyAgent())
            return 1;
        printStats("fresh `ssh host true` (/usr/bin/ssh)", m_sshTrue);
        printStats("fresh `ssh -s host sftp` (no login shell)", m_sshSftp);
        printStats("`ssh -S ctl host true` over a control master", m_muxTrue);
        printStats("`ssh -S ctl -s host sftp` over it (no login shell)", m_muxSftp);
        printStats("`ssh -S ctl -O check host` (no remote process)", m_muxCheck);
        printStats("local posix_spawn(/bin/true) + waitpid (no SSH, no agent)", m_spawn);
        printStats("AgentClient ping round trip over SSH", m_ping);
        printStats("AgentClient start -> reply (agent's started)", m_agentLat);
        printStats("engine submit() -> Running (the goal: median <= 20 ms)", m_engineLat);
        std::printf("  throughput, %d starts at once: AgentClient %.0f runs/s; engine %.0f runs/s (goal >= 500/s);\n"
                    "    local posix_spawn(/bin/true) one after another: %.0f/s\n",
                m_opt.runs, m_agentRate, m_engineRate, m_spawnRate);
        std::printf("  goals: median %s, throughput %s\n", m_engineLat.median <= 20 ? "met" : "NOT met",
                m_engineRate >= 500 ? "met" : "NOT met");
    }
    if (m_opt.console && !consoleThroughput())
        return 1;
    m_client.reset();
    m_engine.reset();
    m_store.reset();
    m_sshd.stop();
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_ssh v3\n");
    std::fflush(stdout);
    QCoreApplication app(argc, argv);
    Options o;
    const QStringList args = app.arguments();
    for (int i = 1; i < args.size(); ++i) {
        const QString& a = args[i];
        auto next = [&]() -> QString {
            if (i + 1 >= args.size()) {
                std::fprintf(stderr, "bench_ssh: %s needs a value\n", qPrintable(a));
                std::exit(2);
            }
            return args[++i];
        };
        if (a == QStringLiteral("--runs"))
            o.runs = std::max(1, next().toInt());
        else if (a == QStringLiteral("--mb"))
            o.mb = std::max<qint64>(1, next().toLongLong());
        else if (a == QStringLiteral("--ssh-true"))
            o.sshTrue = std::max(1, next().toInt());
        else if (a == QStringLiteral("--mux"))
            o.mux = std::max(1, next().toInt());
        else if (a == QStringLiteral("--history"))
            o.history = std::max(0, next().toInt());
        else if (a == QStringLiteral("--policy"))
            o.policy = next();
        else if (a == QStringLiteral("--no-latency"))
            o.latency = false;
        else if (a == QStringLiteral("--no-console"))
            o.console = false;
        else if (a == QStringLiteral("--keep"))
            o.keep = true;
        else if (a == QStringLiteral("--dir"))
            o.dir = next();
        else if (a == QStringLiteral("--cipher"))
            o.cipher = next();
        else if (a == QStringLiteral("--content") && i + 1 < args.size()
                && QStringList{QStringLiteral("letters"), QStringLiteral("log"), QStringLiteral("random")}.contains(
                        args[i + 1]))
            o.content = next();
        else if (a == QStringLiteral("--no-compress"))
            o.compress = false;
        else {
            std::fprintf(stderr,
                    "usage: bench_ssh [--runs N (200)] [--mb N (1024)] [--ssh-true N (20)] [--mux N (50)]\n"
                    "                 [--history N (0): finished runs in the database first]\n"
                    "                 [--policy fcfs|priority|sjf|backfill|fair-share (the default's)]\n"
                    "                 [--no-latency] [--no-console] [--dir DIR] [--keep]\n"
                    "                 [--cipher NAME (chacha20-poly1305@openssh.com), e.g. aes128-gcm@openssh.com]\n"
                    "                 [--content letters|log|random (letters)] [--no-compress (the engine's node)]\n");
            return 2;
        }
    }
    Bench bench(o);
    return bench.run();
}
