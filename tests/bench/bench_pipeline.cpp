// A 100-step fan-out where every step is a memo hit (issue #24's target:
// under 100 ms), beside the bookkeeping of the same number of plain runs
// (each created queued, then recorded succeeded, committed) measured in the
// same run. The pipeline: one step, `for_each: {i: [0 .. N-1]}`, memoized,
// each instance `echo i` in one workdir. Steps:
//   1. the pipeline once for real (N runs on the local node through the
//      agent), so every instance has an entry;
//   2. the baseline: N runs' records written and committed, three times;
//   3. the same pipeline submitted again, three times: from submit() to the
//      pipeline's end, every instance cached (key computed from the resolved
//      command and the workdir's hashes, the entry read, its outputs checked,
//      the hit recorded).
// Prints the medians and their ratio. tests/bench/RESULTS.md keeps them.
//
//   bench_pipeline [--steps N (default 100)]
#include "core/pipeline/PipelineRunner.h"
#include "core/pipeline/PipelineSpec.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>

using namespace ty;

namespace {

double median(QList<double> v)
{
    std::sort(v.begin(), v.end());
    return v.at(v.size() / 2);
}

QString stateOf(pipeline::PipelineRunner& runner, qint64 id)
{
    return runner.describe(id).value_or(QJsonObject{}).value(QStringLiteral("state")).toString();
}

bool waitEnded(pipeline::PipelineRunner& runner, qint64 id, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (stateOf(runner, id) == u"running" && t.elapsed() < timeoutMs) {
        QEventLoop loop;
        QTimer::singleShot(20, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return stateOf(runner, id) != u"running";
}

int countState(pipeline::PipelineRunner& runner, qint64 id, const QString& state)
{
    int n = 0;
    for (const QJsonValue& v : runner.describe(id)->value(QStringLiteral("steps")).toArray())
        n += v.toObject().value(QStringLiteral("state")).toString() == state;
    return n;
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_pipeline v1\n");
    std::fflush(stdout);
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(QStringLiteral("trainyard.*.info=false")); // a line per step otherwise
    int steps = 100;
    const QStringList args = app.arguments();
    if (const qsizetype i = args.indexOf(QStringLiteral("--steps")); i > 0 && i + 1 < args.size())
        steps = args.at(i + 1).toInt();
    QTemporaryDir dir;
    qputenv("XDG_CACHE_HOME", dir.filePath(QStringLiteral("cache")).toUtf8()); // the hasher's cache: ours alone
    QDir().mkpath(dir.filePath(QStringLiteral("db")));
    QDir().mkpath(dir.filePath(QStringLiteral("w")));
    QFile code(dir.filePath(QStringLiteral("w/step.sh")));
    if (!code.open(QIODevice::WriteOnly) || code.write("echo step\n") < 0)
        return 1;
    code.close();
    const QString db = dir.filePath(QStringLiteral("db/t.db"));
    auto store = ResultStore::open(db);
    if (!store) {
        std::fprintf(stderr, "%s\n", qPrintable(store.error().message));
        return 1;
    }
    RunEngine engine(store->get(), db);
    engine.addLocalNode(QStringLiteral(TRAINYARD_AGENT_PATH), dir.filePath(QStringLiteral("state")));
    if (!engine.acquireIngestion())
        return 1;
    pipeline::PipelineRunner runner(&engine, store->get(), db);
    QStringList items;
    for (int i = 0; i < steps; ++i)
        items << QString::number(i);
    const QString yaml = QStringLiteral("name: fan\nmemoize: {max_age: 1h}\nsteps:\n"
                                        "  - name: s\n    for_each: {i: [%1]}\n    command: 'echo {{item.i}}'\n"
                                        "    workdir: w\n")
                                 .arg(items.join(QStringLiteral(", ")));
    const auto spec = pipeline::parsePipeline(yaml, QStringLiteral("fan.yaml"), dir.path());
    if (!spec) {
        std::fprintf(stderr, "%s\n", qPrintable(spec.error().message));
        return 1;
    }

    // 1. For real, so every instance has an entry.
    QElapsedTimer real;
    real.start();
    const qint64 first = runner.submit(*spec).value_or(0);
    if (!waitEnded(runner, first, 600000) || stateOf(runner, first) != u"succeeded") {
        std::fprintf(stderr, "the first pipeline ended %s\n", qPrintable(stateOf(runner, first)));
        return 1;
    }
    std::printf("%d steps run for real: %.1f s (%d runs through the agent)\n", steps, real.elapsed() / 1000.0,
            countState(runner, first, QStringLiteral("succeeded")));

    // 2. Baseline: N plain runs' records.
    QList<double> baseline;
    for (int rep = 0; rep < 3; ++rep) {
        QElapsedTimer t;
        t.start();
        for (int i = 0; i < steps; ++i) {
            RunRecord r;
            r.name = QStringLiteral("plain-%1").arg(i);
            r.state = RunState::Queued;
            r.specYaml = QStringLiteral("command: echo %1\n").arg(i);
            r.argv = {QStringLiteral("echo"), QString::number(i)};
            r.workdir = dir.filePath(QStringLiteral("w"));
            const auto id = (*store)->createRun(r, {});
            if (!id)
                return 1;
            r.id = *id;
            r.state = RunState::Succeeded;
            r.startedAt = r.finishedAt = QDateTime::currentDateTimeUtc();
            (*store)->updateRun(r);
        }
        if (!(*store)->flush())
            return 1;
        baseline << t.nsecsElapsed() / 1e6;
    }

    // 3. All hits.
    QList<double> hits;
    for (int rep = 0; rep < 3; ++rep) {
        QElapsedTimer t;
        t.start();
        const qint64 id = runner.submit(*spec).value_or(0);
        if (!waitEnded(runner, id, 60000))
            return 1;
        (void)(*store)->flush();
        hits << t.nsecsElapsed() / 1e6;
        if (countState(runner, id, QStringLiteral("cached")) != steps) {
            std::fprintf(stderr, "pipeline %lld: only %d of %d steps cached\n", qlonglong(id),
                    countState(runner, id, QStringLiteral("cached")), steps);
            return 1;
        }
    }
    const double b = median(baseline), h = median(hits);
    std::printf("%d plain runs' records (created, ended, committed): %.1f ms (median of 3)\n", steps, b);
    std::printf("%d-step fan-out, every step cached: %.1f ms (median of 3; target < 100 ms)\n", steps, h);
    std::printf("ratio cached fan-out / plain runs' records: %.2fx\n", h / b);
    return 0;
}
