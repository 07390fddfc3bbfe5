// Console ingestion benchmark: TerminalRenderer (and MetricExtractor on the
// committed lines) over a large tqdm-heavy log built by repeating a real
// fixture. Single thread. Usage:
//   bench_console [--mb N] [--width W] [FILE...]
// Default input: gpu-workstation/logs/plain_torch.log + lightning_tqdm.log +
// nested_tqdm.log repeated to 256 MiB. Prints MB/s for each stage.
#include "core/logs/MetricExtractor.h"
#include "core/logs/TerminalRenderer.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QStringList>

#include <cstdio>

using namespace ty;

namespace {

QByteArray readFile(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "cannot read %s\n", qPrintable(path));
        return {};
    }
    return f.readAll();
}

struct Result {
    double seconds = 0;
    qint64 lines = 0;
    qint64 metrics = 0;
};

Result run(const QByteArray& data, int width, bool extract, qsizetype chunk)
{
    Result res;
    TerminalRenderer renderer(width);
    MetricExtractor extractor;
    QElapsedTimer t;
    t.start();
    auto drain = [&] {
        const QList<ConsoleLine> lines = renderer.takeCommitted();
        res.lines += lines.size();
        if (extract) {
            for (const ConsoleLine& l : lines)
                res.metrics += extractor.extract(l.text).size();
        }
    };
    for (qsizetype pos = 0; pos < data.size(); pos += chunk) {
        renderer.feed(QByteArrayView(data).sliced(pos, std::min(chunk, data.size() - pos)));
        drain();
    }
    renderer.finish();
    drain();
    res.seconds = double(t.nsecsElapsed()) / 1e9;
    return res;
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_console v1\n");
    std::fflush(stdout);
    QCoreApplication app(argc, argv);
    QStringList args = app.arguments().mid(1);
    qint64 targetMb = 256;
    int width = 0;
    QStringList files;
    for (qsizetype i = 0; i < args.size(); ++i) {
        if (args.at(i) == QLatin1String("--mb") && i + 1 < args.size())
            targetMb = args.at(++i).toLongLong();
        else if (args.at(i) == QLatin1String("--width") && i + 1 < args.size())
            width = args.at(++i).toInt();
        else
            files.append(args.at(i));
    }
    if (files.isEmpty()) {
        const QString dir = QStringLiteral(TRAINYARD_FIXTURES_DIR "/gpu-workstation/logs/");
        files = {dir + QStringLiteral("plain_torch.log"), dir + QStringLiteral("lightning_tqdm.log"),
                dir + QStringLiteral("nested_tqdm.log")};
    }
    QByteArray unit;
    for (const QString& f : files)
        unit += readFile(f);
    if (unit.isEmpty())
        return 1;
    QByteArray data;
    data.reserve(targetMb * 1024 * 1024 + unit.size());
    while (data.size() < targetMb * 1024 * 1024)
        data += unit;
    const double mb = double(data.size()) / (1024.0 * 1024.0);
    std::printf("input: %.1f MiB (%lld copies of %lld bytes), width %d, 1 thread\n", mb,
            static_cast<long long>(data.size() / unit.size()), static_cast<long long>(unit.size()), width);

    const bool renderPasses = !qEnvironmentVariableIsSet("BENCH_EXTRACT_ONLY");
    for (int pass = 0; pass < (renderPasses ? 2 : 0); ++pass) {
        const Result r = run(data, width, false, 64 * 1024);
        std::printf("render only            : %7.1f MiB/s  (%.3f s, %lld lines)\n", mb / r.seconds, r.seconds,
                static_cast<long long>(r.lines));
    }
    const Result r2 = run(data, width, true, 64 * 1024);
    std::printf("render + metric extract: %7.1f MiB/s  (%.3f s, %lld lines, %lld metric samples)\n", mb / r2.seconds,
            r2.seconds, static_cast<long long>(r2.lines), static_cast<long long>(r2.metrics));

    // Extraction alone over the committed lines (lines per second).
    {
        TerminalRenderer renderer(width);
        renderer.feed(data);
        renderer.finish();
        const QList<ConsoleLine> lines = renderer.takeCommitted();
        MetricExtractor extractor;
        qint64 samples = 0;
        QElapsedTimer t;
        t.start();
        for (const ConsoleLine& l : lines)
            samples += extractor.extract(l.text).size();
        const double s = double(t.nsecsElapsed()) / 1e9;
        std::printf("metric extract only    : %7.2f M lines/s (%lld lines, %lld samples, %.3f s)\n",
                double(lines.size()) / s / 1e6, static_cast<long long>(lines.size()), static_cast<long long>(samples),
                s);
    }
    return 0;
}
