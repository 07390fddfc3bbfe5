// Following a very chatty run in the GUI (issue 5: memory stays bounded while
// following a run that prints 100,000 lines per second for a minute; the GUI
// stays responsive, event-loop latency under 50 ms).
//
// Builds what `trainyard` builds (ui/mainwindow/Application.cpp): a real
// result store (SQLite file), the engine, and the MainWindow, shown. With
// --engine service (the default, as the GUI runs) the engine is a real
// trainyardd started for the database and the window reaches it over its
// socket (ServiceRunControl); with --engine local it is a RunEngine on a
// thread of this process with the local node and the ingestion lock (how the
// GUI ran before the service), through LocalRunControl. Submits a run whose command (python3) prints
// --rate lines per second for --seconds seconds, every 10th a metric line
// (`step=N loss=X lr=Y`), selects it, and shows its Console tab (with
// --flip, flips the bottom tabs between Console and Metrics every 2 s so both
// are painted while they follow it, as v1 and v2 always did).
// Measured on the GUI thread:
//  - event-loop lateness: a 10 ms Qt::PreciseTimer; lateness = time between
//    two timeouts minus 10 ms (max, p99, p50);
//  - memory: VmRSS sampled every 100 ms from /proc/self/status, and VmHWM
//    (peak RSS) at the end (the agent and python are separate processes);
//  - lines ingested per second: the console bytes the window's RunControl
//    delivers (newlines counted), and the run's metric points stored;
//  - line latency: every non-metric line carries the CLOCK_MONOTONIC time it
//    was written at (Python's time.monotonic()).
//     * written -> painted (v3): after each paint of the console's viewport
//       (ConsoleTextView::painted), now minus the stamp of every row newly in
//       sight (a stamp newer than any measured before); rows that scrolled
//       past between two paints were never in sight and are not counted.
//     * `tail -F -n 0` of the run's console file on the node (the agent's
//       <state>/runs/<id>/console.log), started once the run has its agent
//       id, read on a thread of its own: now minus the stamp of each line it
//       prints. The anchor, in the same run.
//     * written -> on the GUI thread: for each console delivery from the
//       RunControl, now minus the stamp of its last whole line (v2's figure;
//       before the console view's feeder and paint).
//    Only lines stamped after the tail started (+ 0.3 s) count, for all three.
//
// Usage: bench_follow [--seconds N (60)] [--rate LINES_PER_S (100000)]
//                     [--engine service|local (service)] [--flip]
//                     [--stalls MS (0: none): list every lateness >= MS, with
//                      its CLOCK_MONOTONIC time for `perf record -k CLOCK_MONOTONIC`]
//   Runs offscreen unless QT_QPA_PLATFORM is set (e.g. under xvfb-run with
//   QT_QPA_PLATFORM=xcb).
#include "ui/console/ConsoleTextView.h"
#include "ui/console/ConsoleView.h"
#include "ui/mainwindow/MainWindow.h"
#include "core/runs/LocalRunControl.h"
#include "core/runs/RunEngine.h"
#include "core/service/ServiceRunControl.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEvent>
#include <QFile>
#include <QPlainTextEdit>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

extern char** environ;

using namespace ty;

namespace {

// kB values of VmRSS and VmHWM from /proc/self/status.
std::pair<qint64, qint64> rssKiB()
{
    QFile f(QStringLiteral("/proc/self/status"));
    qint64 rss = 0;
    qint64 hwm = 0;
    if (!f.open(QIODevice::ReadOnly))
        return {0, 0};
    const QList<QByteArray> lines = f.readAll().split('\n');
    for (const QByteArray& l : lines) {
        if (l.startsWith("VmRSS:"))
            rss = l.mid(6).trimmed().split(' ').front().toLongLong();
        else if (l.startsWith("VmHWM:"))
            hwm = l.mid(6).trimmed().split(' ').front().toLongLong();
    }
    return {rss, hwm};
}

// Bytes the C heap (glibc malloc, every arena) has handed out and not got
// back, and bytes it holds from the kernel (sbrk arenas + mmapped chunks):
// RSS minus the first is libraries, fonts, stacks and the allocator's free
// space (fragmentation).
std::pair<double, double> heapMiB()
{
    const struct mallinfo2 mi = mallinfo2();
    return {double(mi.uordblks + mi.hblkhd) / (1024.0 * 1024.0), double(mi.arena + mi.hblkhd) / (1024.0 * 1024.0)};
}

const char kGenerator[] = R"PY(
import os, sys, time
rate = int(sys.argv[1]); secs = float(sys.argv[2])
tick = 0.01
t0 = time.monotonic()
n = 0
step = 0
while True:
    now = time.monotonic() - t0
    if now >= secs:
        break
    due = int(min(now + tick, secs) * rate)
    out = []
    while n < due:
        if n % 10 == 0:
            out.append("step=%d loss=%.5f lr=%.3e\n" % (step, 2.0 / (1.0 + step * 1e-4), 3e-4 * 0.99999 ** step))
            step += 1
        else:
            out.append("[%.6f] INFO worker %d: processed batch %d of shard %d (ok)\n" % (time.monotonic(), n % 8, n, n // 1000))
        n += 1
    if out:
        os.write(1, "".join(out).encode())
    wake = t0 + (int(now / tick) + 1) * tick
    d = wake - time.monotonic()
    if d > 0:
        time.sleep(d)
os.write(1, ("generator done: %d lines in %.2f s\n" % (n, time.monotonic() - t0)).encode())
)PY";

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

double monotonicS()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

char asciiOf(char c)
{
    return c;
}
char asciiOf(QChar c)
{
    return c.toLatin1();
}

// The stamp of a generator line "[<monotonic s>] INFO ...", or -1.
template <typename Text> double stampOf(const Text& line)
{
    if (qsizetype(line.size()) < 3 || asciiOf(line[0]) != '[')
        return -1;
    char buf[32];
    qsizetype n = 0;
    for (qsizetype i = 1; i < qsizetype(line.size()) && n < qsizetype(sizeof buf) - 1; ++i) {
        const char c = asciiOf(line[i]);
        if (c == ']') {
            buf[n] = 0;
            char* end = nullptr;
            const double v = std::strtod(buf, &end);
            return end == buf ? -1 : v;
        }
        buf[n++] = c;
    }
    return -1;
}

// `tail -F -n 0 FILE` on a thread of its own: the latency of every stamped
// line it prints (stamped at or after `from`, CLOCK_MONOTONIC seconds).
class TailAnchor {
public:
    bool start(const QString& path, double from)
    {
        m_from = from;
        int fds[2];
        if (::pipe(fds) != 0)
            return false;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
        posix_spawn_file_actions_addclose(&fa, fds[0]);
        posix_spawn_file_actions_addclose(&fa, fds[1]);
        const QByteArray file = path.toLocal8Bit();
        char arg0[] = "tail", arg1[] = "-F", arg2[] = "-n", arg3[] = "0";
        char* argv[] = {arg0, arg1, arg2, arg3, const_cast<char*>(file.constData()), nullptr};
        const int rc = posix_spawnp(&m_pid, "tail", &fa, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(fds[1]);
        if (rc != 0) {
            ::close(fds[0]);
            return false;
        }
        m_fd = fds[0];
        m_thread = std::thread([this] { read(); });
        return true;
    }
    // Stops tail and returns the latencies (ms).
    std::vector<double> stop()
    {
        if (m_pid > 0) {
            ::kill(m_pid, SIGTERM);
            ::waitpid(m_pid, nullptr, 0);
            m_pid = -1;
        }
        if (m_thread.joinable())
            m_thread.join();
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
        return std::move(m_latencyMs);
    }
    ~TailAnchor() { stop(); }

private:
    void read()
    {
        std::vector<char> buf(1 << 20);
        std::string line;
        for (;;) {
            const ssize_t n = ::read(m_fd, buf.data(), buf.size());
            if (n <= 0)
                return;
            const double now = monotonicS();
            for (ssize_t i = 0; i < n; ++i) {
                if (buf[size_t(i)] != '\n') {
                    if (line.size() < 64)
                        line.push_back(buf[size_t(i)]);
                    continue;
                }
                const double stamp = stampOf(line);
                if (stamp >= m_from)
                    m_latencyMs.push_back((now - stamp) * 1000.0);
                line.clear();
            }
        }
    }
    pid_t m_pid = -1;
    int m_fd = -1;
    double m_from = 0;
    std::thread m_thread;
    std::vector<double> m_latencyMs;
};

void printLatency(const char* what, const std::vector<double>& ms, const char* unit)
{
    std::printf("%s (%zu %s): p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", what, ms.size(), unit, percentile(ms, 0.5),
            percentile(ms, 0.99), ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()));
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_follow v3\n");
    std::fflush(stdout);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("trainyard-bench-follow"));
    QStandardPaths::setTestModeEnabled(true); // settings away from the user's
    double seconds = 60;
    int rate = 100000;
    double stallMs = 0;
    bool viaService = true;
    bool flip = false;
    const QStringList args = app.arguments().mid(1);
    for (qsizetype i = 0; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--seconds") && i + 1 < args.size())
            seconds = args[++i].toDouble();
        else if (args[i] == QLatin1String("--engine") && i + 1 < args.size())
            viaService = args[++i] != QLatin1String("local");
        else if (args[i] == QLatin1String("--stalls") && i + 1 < args.size())
            stallMs = args[++i].toDouble();
        else if (args[i] == QLatin1String("--rate") && i + 1 < args.size())
            rate = args[++i].toInt();
        else if (args[i] == QLatin1String("--flip"))
            flip = true;
        else {
            std::fprintf(stderr,
                    "usage: bench_follow [--seconds N] [--rate LINES_PER_S] [--engine service|local] [--stalls MS] "
                    "[--flip]\n");
            return 2;
        }
    }
    const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
    if (python.isEmpty()) {
        std::fprintf(stderr, "python3 not found\n");
        return 1;
    }
    QTemporaryDir dir(QDir::tempPath() + QStringLiteral("/trainyard-bench-follow-XXXXXX"));
    const QString dbPath = dir.filePath(QStringLiteral("trainyard.db"));
    // The trainyardd this benchmark starts (--engine service) stops 5 s after
    // the window leaves, not after the default 300 s, long after this
    // benchmark and its database are gone.
    if (!qEnvironmentVariableIsSet("TRAINYARD_DAEMON_IDLE"))
        qputenv("TRAINYARD_DAEMON_IDLE", "5");
    const QString genPath = dir.filePath(QStringLiteral("chatty.py"));
    {
        QFile g(genPath);
        if (!g.open(QIODevice::WriteOnly))
            return 1;
        g.write(kGenerator);
    }
    const auto rss0 = rssKiB();

    auto store = ResultStore::open(dbPath);
    if (!store) {
        std::fprintf(stderr, "%s\n", qPrintable(store.error().message));
        return 1;
    }
    const QString stateDir = dir.filePath(QStringLiteral("state"));
    QThread engineThread;
    RunEngine* engine = nullptr;
    std::unique_ptr<RunControl> control;
    if (viaService) {
        // This build's service and agent, whatever is on PATH.
        if (qEnvironmentVariableIsEmpty("TRAINYARD_DAEMON"))
            qputenv("TRAINYARD_DAEMON", TRAINYARDD_PATH);
        qputenv("TRAINYARD_AGENT", TRAINYARD_AGENT_PATH);
        qputenv("TRAINYARD_AGENT_STATE", stateDir.toUtf8());
        auto service = service::ServiceRunControl::connectTo(dbPath);
        if (!service) {
            std::fprintf(stderr, "%s\n", qPrintable(service.error().message));
            return 1;
        }
        control = std::move(*service);
    } else {
        engine = new RunEngine(store->get(), dbPath);
        engine->moveToThread(&engineThread);
        engineThread.start();
        control = std::make_unique<LocalRunControl>(engine, store->get());
        QMetaObject::invokeMethod(
                engine,
                [engine, stateDir] {
                    engine->acquireIngestion();
                    engine->addLocalNode(QStringLiteral(TRAINYARD_AGENT_PATH), stateDir);
                },
                Qt::QueuedConnection);
    }
    auto window = std::make_unique<MainWindow>(store->get(), control.get());
    window->resize(1400, 900);
    window->show();

    // Counters fed by the window's RunControl (on the GUI thread).
    RunId runId = 0;
    qint64 bytesIn = 0;
    qint64 linesIn = 0;
    qint64 pointsIn = 0;
    qint64 consoleSignals = 0;
    std::vector<double> lineLatencyMs;
    std::vector<double> paintedLatencyMs;
    double measureFrom = 1e300; // CLOCK_MONOTONIC s: lines stamped before it are not measured
    double newestPainted = 0;
    QObject::connect(
            control.get(), &RunControl::consoleReceived, window.get(), [&](RunId run, qint64, const QByteArray& bytes) {
                if (run != runId)
                    return;
                ++consoleSignals;
                bytesIn += bytes.size();
                linesIn += bytes.count('\n');
                // The last whole stamped line of the delivery: "[<monotonic s>] INFO ...".
                const qsizetype end = bytes.lastIndexOf('\n');
                qsizetype from = end;
                while (from > 0) {
                    const qsizetype start = bytes.lastIndexOf('\n', from - 1) + 1;
                    if (bytes.mid(start, 1) == "[") {
                        const qsizetype close = bytes.indexOf(']', start);
                        bool ok = false;
                        const double stamp = bytes.mid(start + 1, close - start - 1).toDouble(&ok);
                        if (ok && stamp >= measureFrom)
                            lineLatencyMs.push_back((monotonicS() - stamp) * 1000.0);
                        break;
                    }
                    from = start - 1;
                }
            });
    QObject::connect(control.get(), &RunControl::metricsReceived, window.get(),
            [&](RunId run, const QList<MetricPoint>& points) {
                if (run == runId)
                    pointsIn += points.size();
            });

    const QString yaml = QStringLiteral("name: chatty\ncommand: [\"%1\", \"-u\", \"%2\", \"%3\", \"%4\"]\n")
                                 .arg(python, genPath)
                                 .arg(rate)
                                 .arg(seconds);
    auto spec = parseJobSpec(yaml, QStringLiteral("bench_follow.yaml"), dir.path());
    if (!spec) {
        std::fprintf(stderr, "%s\n", qPrintable(spec.error().message));
        return 1;
    }
    QObject::connect(window.get(), &MainWindow::runSubmitted, window.get(), [&](RunId id) {
        runId = id;
        window->selectRun(id);
    });
    QObject::connect(window.get(), &MainWindow::submitFailed, &app, [&](const QString& m) {
        std::fprintf(stderr, "submit failed: %s\n", qPrintable(m));
        app.exit(1);
    });
    window->submit(*spec);

    // Event-loop lateness.
    std::vector<double> lateMs;
    lateMs.reserve(size_t(seconds * 150) + 1000);
    QElapsedTimer clock;
    clock.start();
    qint64 lastTick = -1;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    tick.setInterval(10);
    bool measuring = false;
    // Stalls over --stalls MS: when (bench seconds and CLOCK_MONOTONIC, to
    // match `perf record -k CLOCK_MONOTONIC` samples) and how long.
    struct Stall {
        double benchS;
        double monotonicS;
        double lateMs;
    };
    QList<Stall> stalls;
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (measuring && lastTick >= 0) {
            const double late = std::max(0.0, double(now - lastTick) / 1e6 - 10.0);
            lateMs.push_back(late);
            if (stallMs > 0 && late >= stallMs) {
                timespec ts{};
                clock_gettime(CLOCK_MONOTONIC, &ts);
                const double mono = double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
                stalls.append({double(lastTick) / 1e9, mono - double(now - lastTick) / 1e9, late});
            }
        }
        lastTick = now;
    });
    tick.start();

    // Memory samples and progress, every 100 ms / 5 s.
    qint64 peakRss = 0;
    QList<std::pair<double, qint64>> rssTrace;
    QTimer sampler;
    sampler.setInterval(100);
    QObject::connect(&sampler, &QTimer::timeout, [&] {
        const auto [rss, hwm] = rssKiB();
        Q_UNUSED(hwm);
        peakRss = std::max(peakRss, rss);
        rssTrace.append({double(clock.nsecsElapsed()) / 1e9, rss});
    });
    sampler.start();

    auto* tabs = window->findChild<QTabWidget*>(QStringLiteral("runTabs"));
    auto* console = window->findChild<ConsoleView*>();
    if (console)
        QObject::connect(console->textView(), &ConsoleTextView::painted, window.get(), [&](qint64 first, int rows) {
            const double now = monotonicS();
            for (qint64 r = first; r < first + rows; ++r) {
                const double stamp = stampOf(console->textView()->rowText(r));
                if (stamp > newestPainted) {
                    newestPainted = stamp;
                    if (stamp >= measureFrom)
                        paintedLatencyMs.push_back((now - stamp) * 1000.0);
                }
            }
        });
    // Each paint of the console's viewport: its start (a Paint event about
    // to be delivered) to ConsoleTextView::painted.
    struct PaintClock final : QObject {
        QElapsedTimer since;
        bool bench = false;
        std::vector<double> ms;
        bool eventFilter(QObject*, QEvent* e) override
        {
            if (e->type() == QEvent::Paint && bench)
                since.start();
            return false;
        }
    } paintClock;
    if (console) {
        console->textView()->viewport()->installEventFilter(&paintClock);
        QObject::connect(console->textView(), &ConsoleTextView::painted, window.get(), [&](qint64, int) {
            if (paintClock.bench && paintClock.since.isValid())
                paintClock.ms.push_back(double(paintClock.since.nsecsElapsed()) / 1e6);
        });
    }
    TailAnchor tail;
    bool tailStarted = false;
    QTimer flipper;
    flipper.setInterval(2000);
    QObject::connect(&flipper, &QTimer::timeout, [&] {
        if (tabs)
            tabs->setCurrentIndex(tabs->currentIndex() == 0 ? 1 : 0);
    });

    // Phases: wait for the run to start, measure while it runs, then wait
    // until it has been ingested to the end.
    double runStart = 0;
    double runEnd = 0;
    qint64 lastReportLines = 0;
    double lastReport = 0;
    QTimer watch;
    watch.setInterval(50);
    QObject::connect(&watch, &QTimer::timeout, [&] {
        const double now = double(clock.nsecsElapsed()) / 1e9;
        if (!measuring && runId != 0 && bytesIn > 0) {
            measuring = true;
            runStart = now;
            lastReport = now;
            if (flip)
                flipper.start();
            else if (tabs)
                tabs->setCurrentIndex(0); // Console
            std::printf("run %lld started: measuring\n", static_cast<long long>(runId));
        }
        if (measuring && !tailStarted) {
            auto r = (*store)->run(runId);
            if (r && !r->agentRunId.isEmpty()) {
                tailStarted = true;
                const QString path
                        = stateDir + QStringLiteral("/runs/") + r->agentRunId + QStringLiteral("/console.log");
                const double from = monotonicS() + 0.3;
                if (!tail.start(path, from))
                    std::fprintf(stderr, "could not start tail -F %s\n", qPrintable(path));
                measureFrom = from;
                paintClock.bench = true;
            }
        }
        if (measuring && now - lastReport >= 5) {
            const auto [rss, hwm] = rssKiB();
            const auto [heapUsed, heapHeld] = heapMiB();
            std::printf("  t=%5.1f s  ingested %9lld lines (%7.0f lines/s last 5 s)  RSS %7.1f MiB  (HWM %7.1f MiB)  "
                        "heap in use %6.1f of %6.1f MiB  max lateness so far %.1f ms\n",
                    now - runStart, static_cast<long long>(linesIn),
                    double(linesIn - lastReportLines) / (now - lastReport), double(rss) / 1024.0, double(hwm) / 1024.0,
                    heapUsed, heapHeld, lateMs.empty() ? 0.0 : *std::max_element(lateMs.begin(), lateMs.end()));
            std::fflush(stdout);
            lastReportLines = linesIn;
            lastReport = now;
        }
        if (measuring && runEnd == 0) {
            auto r = (*store)->run(runId);
            if (r && isTerminal(r->state)) {
                runEnd = now;
                QTimer::singleShot(1000, &app, [&] { app.quit(); }); // let the view catch up
            }
        }
        if (now > seconds * 3 + 60) {
            std::fprintf(stderr, "timed out waiting for the run to end\n");
            app.exit(1);
        }
    });
    watch.start();
    const int rc = app.exec();
    tick.stop();
    const std::vector<double> tailLatencyMs = tail.stop();
    const auto [rssEnd, hwm] = rssKiB();

    const double wall = runEnd - runStart;
    const qint64 expected = qint64(double(rate) * seconds) + 1;
    auto run = (*store)->run(runId);
    (void)(*store)->flush();
    const qint64 stored = run ? qint64((*store)->metrics(runId, QStringLiteral("loss")).size()) : 0;
    std::printf("\nbench_follow: %d lines/s for %.0f s requested (%lld lines, every 10th a metric line), platform %s\n",
            rate, seconds, static_cast<long long>(expected), qPrintable(QApplication::platformName()));
    std::printf("run state %s, %.1f s from first byte to the run's end in the store\n",
            run ? qPrintable(runStateName(run->state)) : "?", wall);
    std::printf("lines ingested: %lld (%.0f lines/s over that time), %lld console signals, %.1f MB\n",
            static_cast<long long>(linesIn), double(linesIn) / wall, static_cast<long long>(consoleSignals),
            double(bytesIn) / 1e6);
    std::printf("metric points received live: %lld; `loss` points in the store: %lld (expected %lld)\n",
            static_cast<long long>(pointsIn), static_cast<long long>(stored), static_cast<long long>(expected / 10));
    std::printf("line latency, %s engine, %s:\n", viaService ? "service" : "in-process",
            flip ? "tabs flipped every 2 s (rows not in sight while Metrics is shown)" : "Console tab shown");
    printLatency("  written -> painted row", paintedLatencyMs, "rows newly in sight");
    printLatency("  tail -F of the node's console file", tailLatencyMs, "lines");
    printLatency("  written -> on the GUI thread", lineLatencyMs, "deliveries");
    printLatency("  console paint (Paint event -> painted)", paintClock.ms, "paints");
    std::printf("  console paints per second: %.1f\n", double(paintClock.ms.size()) / std::max(1e-3, wall));
    if (!tailLatencyMs.empty() && !paintedLatencyMs.empty())
        std::printf("  painted / tail -F: p50 %.1fx, p99 %.1fx\n",
                percentile(paintedLatencyMs, 0.5) / std::max(1e-3, percentile(tailLatencyMs, 0.5)),
                percentile(paintedLatencyMs, 0.99) / std::max(1e-3, percentile(tailLatencyMs, 0.99)));
    std::printf("event-loop lateness (10 ms timer, %zu ticks): p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", lateMs.size(),
            percentile(lateMs, 0.5), percentile(lateMs, 0.99),
            lateMs.empty() ? 0.0 : *std::max_element(lateMs.begin(), lateMs.end()));
    std::printf("RSS: %.1f MiB before the window, peak sampled %.1f MiB, VmHWM %.1f MiB, at the end %.1f MiB\n",
            double(rss0.first) / 1024.0, double(peakRss) / 1024.0, double(hwm) / 1024.0, double(rssEnd) / 1024.0);
    if (!rssTrace.isEmpty()) {
        std::printf("RSS over time (MiB):");
        const qsizetype step = std::max<qsizetype>(1, rssTrace.size() / 12);
        for (qsizetype i = 0; i < rssTrace.size(); i += step)
            std::printf(" %.0fs:%.0f", rssTrace[i].first, double(rssTrace[i].second) / 1024.0);
        std::printf("\n");
    }
    for (const Stall& st : std::as_const(stalls))
        std::printf("stall: %.1f ms late from bench t=%.3f s (CLOCK_MONOTONIC %.3f s)\n", st.lateMs, st.benchS,
                st.monotonicS);
    if (console)
        std::printf("console view: %lld rows held (%.1f MiB of scrollback, budget %.0f MiB), %lld older rows let go\n",
                static_cast<long long>(console->textView()->rowCount()),
                double(console->textView()->scrollback().memoryBytes()) / (1024.0 * 1024.0),
                double(console->textView()->scrollback().budgetBytes()) / (1024.0 * 1024.0),
                static_cast<long long>(console->textView()->scrollback().droppedRows()));
    if (console)
        std::printf("console follow mode at the end: %s, newest row in sight: %s\n",
                console->followMode() ? "on" : "OFF",
                console->textView()->firstVisibleRow() + console->textView()->rowsInSight()
                                >= console->textView()->rowCount()
                        ? "yes"
                        : "NO");
    QFile loadavg(QStringLiteral("/proc/loadavg"));
    if (loadavg.open(QIODevice::ReadOnly))
        std::printf("load average at the end: %s", loadavg.readAll().constData());

    window.reset();
    control.reset(); // a service stops by itself once idle
    if (engine) {
        QMetaObject::invokeMethod(
                engine, [engine] { delete engine; }, Qt::BlockingQueuedConnection);
        engineThread.quit();
        engineThread.wait();
    }
    return rc;
}
