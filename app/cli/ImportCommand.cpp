#include "ImportCommand.h"

#include "Cli.h"

#include "core/logs/importers/MetricFileImporter.h"
#include "core/store/ResultStore.h"

#include <QDateTime>
#include <QTextStream>

namespace ty::cli {

// Metrics a framework wrote to files (Lightning's metrics.csv, TensorBoard
// event files, Hugging Face trainer_state.json, JSON lines) into a run.
int cmdImport(Context& ctx, const QStringList& args)
{
    if (args.size() < 2)
        return usageError(QStringLiteral("import needs RUN and at least one FILE"));
    auto run = findRun(*ctx.store, args.front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    int status = Ok;
    for (const QString& file : args.mid(1)) {
        const auto imported = importMetricFile(file);
        if (!imported) {
            err() << imported.error().message << '\n';
            status = InvalidSpec;
            continue;
        }
        const QList<MetricPoint> points
                = toMetricPoints(imported->metrics, run->id, QDateTime::currentMSecsSinceEpoch());
        ctx.store->appendMetrics(points);
        QStringList keys;
        for (const MetricPoint& p : points)
            if (!keys.contains(p.key))
                keys.append(p.key);
        out() << file << ": " << points.size() << " points of " << keys.size() << " metric(s) ("
              << escapedJoin(keys, QStringLiteral(", ")) << ") from " << metricFileFormatName(imported->format)
              << " into run " << run->id << '\n';
        if (!imported->params.isEmpty()) { // TensorBoard hparams: the run's params
            ctx.store->setParams(run->id, imported->params);
            QStringList pairs;
            for (auto it = imported->params.cbegin(); it != imported->params.cend(); ++it)
                pairs.append(it.key() + u'=' + it.value());
            out() << file << ": " << imported->params.size() << " param(s) (" << pairs.join(QStringLiteral(", "))
                  << ") into run " << run->id << '\n';
        }
        for (const QString& w : imported->warnings)
            err() << escapedName(w) << '\n'; // each names the file and what was skipped
        if (!imported->error.isEmpty()) {
            err() << file << ": stopped at byte " << imported->errorOffset << ": " << imported->error
                  << " (the points before it were imported)\n";
            status = RunFailed;
        }
    }
    if (auto flushed = ctx.store->flush(); !flushed) {
        err() << "trainyardctl: " << flushed.error().message << '\n';
        return Unavailable;
    }
    return status;
}

} // namespace ty::cli
