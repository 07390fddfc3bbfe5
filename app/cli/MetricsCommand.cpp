#include "MetricsCommand.h"

#include "Cli.h"
#include "core/retry/AttemptMetrics.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTextStream>

namespace ty::cli {

QJsonObject metricsJson(const QList<MetricPoint>& points, bool withRun)
{
    QMap<QString, QJsonArray> byKey;
    for (const MetricPoint& m : points) {
        QJsonObject point{
                {QStringLiteral("step"), m.step},
                {QStringLiteral("epoch"), m.epoch ? jsonNumber(*m.epoch) : QJsonValue()},
                {QStringLiteral("wall_time"), jsonTime(QDateTime::fromMSecsSinceEpoch(m.wallTimeMs, Qt::UTC))},
                {QStringLiteral("value"), jsonNumber(m.value)},
        };
        if (withRun)
            point.insert(QStringLiteral("run"), m.run);
        byKey[m.key].append(point);
    }
    QJsonObject o;
    for (auto it = byKey.cbegin(); it != byKey.cend(); ++it)
        o[it.key()] = it.value();
    return o;
}

int cmdMetrics(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN"), QStringLiteral("run id or name"));
    p.addOption({QStringLiteral("csv"), QStringLiteral("CSV: run,key,step,epoch,wall_time,value (every point)")});
    p.addOption({QStringLiteral("key"), QStringLiteral("only this metric"), QStringLiteral("key")});
    p.addOption({QStringLiteral("json"), QStringLiteral("JSON: {key: [{step, epoch, wall_time, value}]}")});
    p.addOption({QStringLiteral("attempts"),
            QStringLiteral("every attempt of a retried run as one series: a resumed attempt takes over from its first "
                           "step")});
    if (!p.parse(QStringList{QStringLiteral("metrics")} + args) || p.positionalArguments().size() != 1)
        return usageError(p.errorText().isEmpty() ? QStringLiteral("metrics needs exactly one RUN") : p.errorText());
    const bool json = p.isSet(QStringLiteral("json"));
    if (json && p.isSet(QStringLiteral("csv")))
        return usageError(QStringLiteral("metrics: --csv and --json cannot be combined"));
    catchUp(ctx);
    auto run = findRun(*ctx.store, p.positionalArguments().front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    const bool attempts = p.isSet(QStringLiteral("attempts"));
    QList<MetricPoint> points;
    QList<MetricRestart> resumes;
    const auto group = attempts ? membershipOf(*run, RunGroupKind::Attempts) : std::nullopt;
    if (group) {
        QList<QList<MetricPoint>> perAttempt;
        for (const auto& [id, m] : ctx.store->groupMembers(group->group))
            perAttempt.append(ctx.store->metrics(id, p.value(QStringLiteral("key"))));
        StitchedMetrics stitched = stitchAttemptMetrics(perAttempt);
        points = std::move(stitched.points);
        resumes = std::move(stitched.resumes);
    } else {
        points = ctx.store->metrics(run->id, p.value(QStringLiteral("key")));
    }
    if (p.isSet(QStringLiteral("csv"))) {
        out() << "run,key,step,epoch,wall_time,value\n";
        for (const MetricPoint& m : points) {
            QString key = m.key;
            if (key.contains(u',') || key.contains(u'"'))
                key = u'"' + key.replace(QStringLiteral("\""), QStringLiteral("\"\"")) + u'"';
            out() << m.run << ',' << key << ',' << m.step << ',' << (m.epoch ? formatValue(*m.epoch) : QString()) << ','
                  << QDateTime::fromMSecsSinceEpoch(m.wallTimeMs, Qt::UTC).toString(Qt::ISODateWithMs) << ','
                  << formatValue(m.value) << '\n';
        }
        return Ok;
    }
    if (points.isEmpty() && p.isSet(QStringLiteral("key")) && ctx.store->damage().isEmpty()) {
        // A typo must not look like an empty metric: say what there is.
        const QStringList keys = ctx.store->metricKeys(run->id);
        err() << "trainyardctl: run " << run->id << " (" << escapedName(run->name) << ") has no metric '"
              << escapedName(p.value(QStringLiteral("key"))) << "'; "
              << (keys.isEmpty() ? QStringLiteral("it has no metrics")
                                 : QStringLiteral("its metrics: ") + escapedJoin(keys, QStringLiteral(", ")))
              << '\n';
        return NoSuchRun;
    }
    if (json) {
        printJson(QJsonDocument(metricsJson(points, attempts)));
        if (points.isEmpty() && ctx.store->damage().isEmpty())
            err() << "run " << run->id << " has no metrics\n";
        return Ok;
    }
    QString lastKey;
    RunId lastRun = 0;
    for (const MetricPoint& m : points) {
        if (m.key != lastKey) {
            out() << escapedName(m.key) << ":\n";
            lastKey = m.key;
            lastRun = m.run;
        }
        if (m.run != lastRun) {
            // Where an attempt takes over (its resume, when it is one).
            QString what = QStringLiteral("  -- run %1 from step %2").arg(m.run).arg(m.step);
            for (const MetricRestart& r : std::as_const(resumes))
                if (r.run == m.run && r.key == m.key && r.step == m.step && r.superseded > 0)
                    what += QStringLiteral(" (replaces %1 point(s) of the attempts before it)").arg(r.superseded);
            out() << what << '\n';
            lastRun = m.run;
        }
        out() << "  step " << m.step;
        if (m.epoch)
            out() << " epoch " << formatValue(*m.epoch);
        out() << "  " << formatValue(m.value) << '\n';
    }
    if (points.isEmpty() && ctx.store->damage().isEmpty()) // a damaged file was explained instead
        err() << "run " << run->id << " has no metrics\n";
    return Ok;
}

} // namespace ty::cli
