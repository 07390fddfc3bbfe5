// Console ingestion through the real pipeline (issue 5 goal: >= 200 MB/s for
// a 1 GiB log with tqdm bars and metric lines): core/runs/RunIngest, i.e.
// local raw copy -> TerminalRenderer -> MetricExtractor + FailureDetector ->
// SqliteResultStore (a real SQLite file, its writer thread) -- timed until
// finish() and the store's flush() return. Beside it, on the same file:
// `cat FILE > /dev/null` (the page-cache read ceiling) and tmux parsing a
// slice of it into a pane's history (the issue quotes ~47 MB/s).
//
// The log is generated (deterministically) into /tmp, not the repository:
// simulated epochs whose tqdm bar is redrawn with `\r` on every batch, with
// tqdm.write()-style metric lines (logging lines with `key=value` pairs and
// JSON lines) every 20 batches and Keras/logging/JSON summary lines at each
// epoch's end; real fixtures from tests/data/gpu-workstation/logs/
// inserted verbatim: plain_torch.log at the start, then every 8th epoch one of
// nested tqdm bars with ESC[A, Lightning's rich tables and bars, a Lightning
// run. Steps never go back (one run, not resumed). MB = 10^6 bytes.
//
// Usage: bench_ingest [--mb N (1024)] [--file PATH] [--chunk KiB (256, the
//        agent's output frame)] [--tmux-mb N (64; 0: skip)] [--stages]
//        [--keep] [--dir DIR]
//   --stages also times render only and render + extract on the same bytes.
#include "core/logs/MetricExtractor.h"
#include "core/logs/TerminalRenderer.h"
#include "core/runs/RunIngest.h"
#include "core/store/SqliteResultStore.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <string>

#include <sys/resource.h>

using namespace ty;

namespace {

double cpuSeconds(int who)
{
    rusage u{};
    getrusage(who, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

// xorshift64*: deterministic across runs and platforms.
struct Rng {
    quint64 s = 0x9E3779B97F4A7C15ull;
    quint64 next()
    {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 2685821657736338717ull;
    }
    double uniform() { return double(next() >> 11) / double(quint64(1) << 53); }
    int below(int n) { return int(next() % quint64(n)); }
};

struct GenStats {
    qint64 bytes = 0;
    qint64 redraws = 0;
    qint64 metricLines = 0;
    qint64 fixtures = 0;
};

// Writes about `target` bytes of a training console to `path`.
bool generateLog(const QString& path, qint64 target, GenStats& st)
{
    const QString dir = QStringLiteral(TRAINYARD_FIXTURES_DIR "/gpu-workstation/logs/");
    QList<QByteArray> fixtures;
    for (const char* name : {"plain_torch.log", "nested_tqdm.log", "lightning_tqdm.log", "lightning_run.log"}) {
        QByteArray b = readFile(dir + QLatin1String(name));
        if (b.isEmpty()) {
            std::fprintf(stderr, "cannot read fixture %s%s\n", qPrintable(dir), name);
            return false;
        }
        if (!b.endsWith('\n'))
            b += '\n';
        fixtures.append(b);
    }
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
        return false;
    }
    static const char* const kBlocks[] = {" ", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589"};
    Rng rng;
    std::string buf;
    buf.reserve(8 << 20);
    char line[512];
    // One run: plain_torch.log (explicit steps up to 345) is its start, the
    // generated steps continue after it and only fixtures without explicit
    // steps repeat, so no metric's step ever goes back (a resumed run is a
    // different case, with its own cost: superseded points).
    buf.append(fixtures[0].constData(), size_t(fixtures[0].size()));
    ++st.fixtures;
    qint64 step = 1000;
    double loss = 2.5;
    double lr = 3e-4;
    const int epochs = 1000000;
    for (int epoch = 1; epoch <= epochs && st.bytes < target; ++epoch) {
        const int batches = 150 + rng.below(200);
        double rate = 20 + 200 * rng.uniform();
        for (int b = 0; b <= batches; ++b) {
            const int pct = b * 100 / batches;
            const int eighths = b * 80 / batches;
            std::string bar;
            for (int i = 0; i < 10; ++i) {
                const int cell = std::clamp(eighths - i * 8, 0, 8);
                bar += cell == 8 ? "\u2588" : kBlocks[cell];
            }
            const int el = b / 20;
            const int eta = (batches - b) / 20;
            rate *= 0.98 + 0.04 * rng.uniform();
            const int n = std::snprintf(line, sizeof line,
                    "\rEpoch %d/%d: %3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %6.2fit/s, loss=%.4f, lr=%.2e]", epoch % 100,
                    100, pct, bar.c_str(), b, batches, el / 60, el % 60, eta / 60, eta % 60, rate, loss, lr);
            buf.append(line, size_t(n));
            ++st.redraws;
            if (b > 0 && b % 20 == 0) {
                // tqdm.write(): clear the bar, print the line, redraw the bar.
                buf += "\r";
                buf.append(100, ' ');
                buf += "\r";
                int m;
                if ((b / 20) % 2 == 0)
                    m = std::snprintf(line, sizeof line,
                            "2026-11-29 22:%02d:%02d,%03d - INFO - step %lld | loss=%.4f lr=%.3e "
                            "grad_norm=%.3f tokens/s=%.1f\n",
                            int(step / 3600 % 60), int(step / 60 % 60), int(step % 1000), static_cast<long long>(step),
                            loss, lr, 0.5 + rng.uniform(), 10000 + 5000 * rng.uniform());
                else
                    m = std::snprintf(line, sizeof line,
                            "{\"step\": %lld, \"epoch\": %d, \"train/loss\": %.6f, \"train/acc\": %.4f}\n",
                            static_cast<long long>(step), epoch, loss, 1.0 - loss / 3.0);
                buf.append(line, size_t(m));
                ++st.metricLines;
            }
            ++step;
            loss = std::max(0.01, loss * (0.9995 + 0.001 * (rng.uniform() - 0.5)));
            lr *= 0.99999;
        }
        buf += "\n";
        const double val = loss * (1.0 + 0.1 * rng.uniform());
        const double acc = 1.0 - val / 3.0;
        int m = std::snprintf(line, sizeof line,
                "2026-11-29 22:20:40,016 - INFO - Epoch %d: Loss = %.4f, Accuracy = %.4f\n"
                "Epoch %d/100 - loss: %.4f - val_loss: %.4f - val_accuracy: %.4f\n"
                "{\"epoch\": %d, \"step\": %lld, \"train_loss_epoch\": %.6f, \"val_acc\": %.6f}\n",
                epoch, loss, acc, epoch % 100, loss, val, acc, epoch, static_cast<long long>(step), loss, acc);
        buf.append(line, size_t(m));
        st.metricLines += 3;
        if (epoch % 8 == 0) {
            const QByteArray& f = fixtures[1 + (epoch / 8) % (fixtures.size() - 1)];
            buf.append(f.constData(), size_t(f.size()));
            ++st.fixtures;
        }
        if (buf.size() > (4u << 20)) {
            if (out.write(buf.data(), qint64(buf.size())) != qint64(buf.size()))
                return false;
            st.bytes += qint64(buf.size());
            buf.clear();
        }
    }
    if (!buf.empty()) {
        out.write(buf.data(), qint64(buf.size()));
        st.bytes += qint64(buf.size());
    }
    return out.flush();
}

double mbps(qint64 bytes, double seconds)
{
    return double(bytes) / 1e6 / seconds;
}

// `cat FILE > /dev/null`, best of three (the file is in the page cache).
double timeCat(const QString& file)
{
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
        QElapsedTimer t;
        t.start();
        QProcess::execute(
                QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("cat '%1' > /dev/null").arg(file)});
        best = std::min(best, double(t.nsecsElapsed()) / 1e9);
    }
    return best;
}

// tmux 3.x parsing `bytes` bytes of the file into a pane's history: a private
// server, a pane of 200x50, history-limit big enough to keep every line,
// `head -c N FILE` in the pane; timed until the command after it has run.
std::optional<double> timeTmux(const QString& file, qint64 bytes, const QString& workDir)
{
    const QString tmux = QStandardPaths::findExecutable(QStringLiteral("tmux"));
    if (tmux.isEmpty())
        return std::nullopt;
    const QString conf = workDir + QStringLiteral("/tmux.conf");
    const QString done = workDir + QStringLiteral("/tmux.done");
    QFile::remove(done);
    {
        QFile c(conf);
        if (!c.open(QIODevice::WriteOnly))
            return std::nullopt;
        c.write("set -g history-limit 50000000\n");
    }
    const QString socket = QStringLiteral("ty-bench-%1").arg(QCoreApplication::applicationPid());
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("LANG"), QStringLiteral("C.UTF-8"));
    env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C.UTF-8"));
    env.remove(QStringLiteral("TMUX"));
    auto tmuxRun = [&](QStringList args) {
        QProcess p;
        p.setProcessEnvironment(env);
        args = QStringList{QStringLiteral("-u"), QStringLiteral("-L"), socket} + args;
        p.start(tmux, args);
        p.waitForFinished(600000);
        return p.exitCode();
    };
    const QString cmd = QStringLiteral("head -c %1 '%2'; touch '%3'; exec sleep 600").arg(bytes).arg(file, done);
    QElapsedTimer t;
    t.start();
    tmuxRun({QStringLiteral("-f"), conf, QStringLiteral("new-session"), QStringLiteral("-d"), QStringLiteral("-x"),
            QStringLiteral("200"), QStringLiteral("-y"), QStringLiteral("50"), cmd});
    while (!QFileInfo::exists(done) && t.elapsed() < 600000)
        QThread::usleep(2000);
    const double s = double(t.nsecsElapsed()) / 1e9;
    tmuxRun({QStringLiteral("kill-server")});
    return s;
}

struct StageResult {
    double seconds = 0;
    qint64 lines = 0;
    qint64 samples = 0;
};

StageResult renderStage(const uchar* data, qint64 size, qint64 chunk, bool extract)
{
    StageResult r;
    TerminalRenderer renderer(0);
    MetricExtractor extractor;
    QElapsedTimer t;
    t.start();
    auto drain = [&] {
        const QList<ConsoleLine> lines = renderer.takeCommitted();
        r.lines += lines.size();
        if (extract)
            for (const ConsoleLine& l : lines)
                r.samples += extractor.extract(l.text).size();
    };
    for (qint64 pos = 0; pos < size; pos += chunk) {
        renderer.feed(QByteArrayView(reinterpret_cast<const char*>(data) + pos, std::min(chunk, size - pos)));
        renderer.commitSettledRows();
        drain();
    }
    renderer.finish();
    drain();
    r.seconds = double(t.nsecsElapsed()) / 1e9;
    return r;
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_ingest v1\n");
    std::fflush(stdout);
    QCoreApplication app(argc, argv);
    qint64 mb = 1024;
    qint64 chunkKiB = 256;
    qint64 tmuxMb = 64;
    bool stages = false;
    bool keep = false;
    QString file;
    QString dir;
    const QStringList args = app.arguments().mid(1);
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString& a = args.at(i);
        const bool hasValue = i + 1 < args.size();
        if (a == QLatin1String("--mb") && hasValue)
            mb = args.at(++i).toLongLong();
        else if (a == QLatin1String("--file") && hasValue)
            file = args.at(++i);
        else if (a == QLatin1String("--chunk") && hasValue)
            chunkKiB = std::max<qint64>(1, args.at(++i).toLongLong());
        else if (a == QLatin1String("--tmux-mb") && hasValue)
            tmuxMb = args.at(++i).toLongLong();
        else if (a == QLatin1String("--dir") && hasValue)
            dir = args.at(++i);
        else if (a == QLatin1String("--stages"))
            stages = true;
        else if (a == QLatin1String("--keep"))
            keep = true;
        else {
            std::fprintf(stderr,
                    "usage: bench_ingest [--mb N] [--file PATH] [--chunk KiB] [--tmux-mb N] [--stages] "
                    "[--keep] [--dir DIR]\n");
            return 2;
        }
    }
    const qint64 target = mb * 1024 * 1024;
    // A given --file is used as it is; the default one is (re)generated
    // when missing or short.
    const bool generate = file.isEmpty() ? true : !QFileInfo::exists(file);
    if (file.isEmpty())
        file = QStringLiteral("/tmp/trainyard-bench-ingest-%1MiB.log").arg(mb);
    if (generate && QFileInfo(file).size() < target) {
        GenStats st;
        QElapsedTimer t;
        t.start();
        if (!generateLog(file, target, st))
            return 1;
        std::printf("generated %s: %lld bytes, %lld bar redraws, %lld metric lines, %lld fixtures, %.1f s\n",
                qPrintable(file), static_cast<long long>(st.bytes), static_cast<long long>(st.redraws),
                static_cast<long long>(st.metricLines), static_cast<long long>(st.fixtures),
                double(t.nsecsElapsed()) / 1e9);
    }
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "cannot read %s\n", qPrintable(file));
        return 1;
    }
    const qint64 size = in.size();
    const qint64 chunk = chunkKiB * 1024;
    std::printf("bench_ingest: %s, %.1f MB (%.1f MiB), chunks of %lld KiB, %d CPUs online\n", qPrintable(file),
            double(size) / 1e6, double(size) / 1048576.0, static_cast<long long>(chunkKiB),
            QThread::idealThreadCount());

    // Warm the page cache, then the read ceiling.
    timeCat(file);
    const double catS = timeCat(file);
    std::printf("%-44s %8.1f MB/s  (%.3f s)\n", "cat FILE > /dev/null", mbps(size, catS), catS);
    std::fflush(stdout);

    uchar* mapped = in.map(0, size);
    if (stages && mapped) {
        const StageResult r = renderStage(mapped, size, chunk, false);
        std::printf("%-44s %8.1f MB/s  (%.3f s, %lld lines)\n", "render only (TerminalRenderer, width 0)",
                mbps(size, r.seconds), r.seconds, static_cast<long long>(r.lines));
        const StageResult r2 = renderStage(mapped, size, chunk, true);
        std::printf("%-44s %8.1f MB/s  (%.3f s, %lld lines, %lld samples)\n", "render + extract",
                mbps(size, r2.seconds), r2.seconds, static_cast<long long>(r2.lines),
                static_cast<long long>(r2.samples));
        std::fflush(stdout);
    }

    // The real pipeline: RunIngest into a real SQLite result database.
    QTemporaryDir tmp(dir.isEmpty() ? QDir::tempPath() + QStringLiteral("/trainyard-bench-ingest-XXXXXX")
                                    : dir + QStringLiteral("/trainyard-bench-ingest-XXXXXX"));
    if (!tmp.isValid())
        return 1;
    tmp.setAutoRemove(!keep);
    {
        auto store = SqliteResultStore::open(tmp.filePath(QStringLiteral("results.db")));
        if (!store) {
            std::fprintf(stderr, "%s\n", qPrintable(store.error().message));
            return 1;
        }
        RunRecord run;
        run.name = QStringLiteral("bench-ingest");
        run.node = QStringLiteral("local");
        run.state = RunState::Running;
        auto id = (*store)->createRun(run, {});
        if (!id) {
            std::fprintf(stderr, "%s\n", qPrintable(id.error().message));
            return 1;
        }
        run.id = *id;
        RunIngest ingest(run, store->get());
        QElapsedTimer t;
        t.start();
        const double cpu0 = cpuSeconds(RUSAGE_SELF);
        auto opened = ingest.open(tmp.filePath(QStringLiteral("run-%1").arg(*id)));
        if (!opened) {
            std::fprintf(stderr, "%s\n", qPrintable(opened.error().message));
            return 1;
        }
        qint64 points = 0;
        in.seek(0);
        QByteArray buf;
        for (qint64 pos = 0; pos < size;) {
            buf = in.read(chunk);
            if (buf.isEmpty())
                break;
            auto r = ingest.ingest(pos, buf);
            if (!r) {
                std::fprintf(stderr, "%s\n", qPrintable(r.error().message));
                return 1;
            }
            points += r->size();
            pos += buf.size();
        }
        points += ingest.finish().size();
        const double beforeFlush = double(t.nsecsElapsed()) / 1e9;
        if (auto f = (*store)->flush(); !f) {
            std::fprintf(stderr, "%s\n", qPrintable(f.error().message));
            return 1;
        }
        const double s = double(t.nsecsElapsed()) / 1e9;
        const double cpu = cpuSeconds(RUSAGE_SELF) - cpu0;
        std::printf("%-44s %8.1f MB/s  (%.3f s wall, %.3f s of it waiting for flush; %.2f CPU-s = %.1f MB per "
                    "CPU-s; %lld metric points, %.0f points/s)\n",
                "RunIngest: copy + render + extract + store", mbps(size, s), s, s - beforeFlush, cpu, mbps(size, cpu),
                static_cast<long long>(points), double(points) / s);
        std::printf("%-44s %s\n", "  failure reason found", qPrintable(ingest.failureReason().left(60)));
        std::fflush(stdout);
    }
    if (mapped)
        in.unmap(mapped);

    if (tmuxMb > 0) {
        const qint64 slice = std::min(size, tmuxMb * 1024 * 1024);
        const auto s = timeTmux(file, slice, tmp.path());
        if (s)
            std::printf("%-44s %8.1f MB/s  (%.3f s for the first %.1f MB, pane 200x50)\n",
                    "tmux: cat into a pane's history", mbps(slice, *s), *s, double(slice) / 1e6);
        else
            std::printf("tmux not found: no tmux figure\n");
    }
    QFile loadavg(QStringLiteral("/proc/loadavg"));
    if (loadavg.open(QIODevice::ReadOnly))
        std::printf("load average at the end: %s", loadavg.readAll().constData());
    if (!keep && file.startsWith(QLatin1String("/tmp/trainyard-bench-ingest-")))
        std::printf("(the generated log stays at %s for the next run; delete it when done)\n", qPrintable(file));
    return 0;
}
