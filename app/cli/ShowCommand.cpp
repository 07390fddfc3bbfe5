#include "ShowCommand.h"

#include "Cli.h"
#include "core/common/RunDuration.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QTextStream>

namespace ty::cli {

QJsonObject showJson(const ResultStore& store, const RunRecord& r)
{
    QJsonObject o = runJson(store, r, store.notices(r.id));
    o[QStringLiteral("console_path")] = r.consolePath.isEmpty() ? QJsonValue() : QJsonValue(r.consolePath);
    const RunDuration d = runDuration(r, QDateTime::currentDateTimeUtc());
    o[QStringLiteral("duration_ms")] = d.ms >= 0 ? QJsonValue(d.ms) : QJsonValue();
    QJsonObject steps;
    const QMap<QString, MetricPoint> latest = store.latestMetrics(r.id);
    for (auto it = latest.cbegin(); it != latest.cend(); ++it)
        steps[it.key()] = it.value().step;
    o[QStringLiteral("latest_metric_steps")] = steps;
    return o;
}

int cmdShow(Context& ctx, const QStringList& argsIn)
{
    QStringList args = argsIn;
    const bool json = args.removeAll(QStringLiteral("--json")) > 0;
    if (args.size() != 1 || args.front().startsWith(u'-'))
        return usageError(QStringLiteral("show needs exactly one RUN"));
    catchUp(ctx);
    auto run = findRun(*ctx.store, args.front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    const RunRecord& r = *run;
    if (json) {
        printJson(QJsonDocument(showJson(*ctx.store, r)));
        return Ok;
    }
    QString state = runStateName(r.state);
    if (r.exitCode)
        state += QStringLiteral(" (exit %1)").arg(*r.exitCode);
    if (r.exitSignal)
        state += QStringLiteral(" (signal %1)").arg(*r.exitSignal);
    auto line = [](const char* label, const QString& value) {
        out() << QStringLiteral("%1 %2\n").arg(QLatin1String(label), -10).arg(value);
    };
    line("run", QStringLiteral("%1 %2").arg(r.id).arg(escapedName(r.name)));
    line("state", state);
    if (!r.pendingReason.isEmpty())
        line("pending", escapedName(r.pendingReason));
    if (r.failureKind != FailureKind::None) // "failure    python_traceback: ValueError: x"
        line("failure", QStringLiteral("%1: %2").arg(failureKindName(r.failureKind), escapedName(r.failureReason)));
    else if (!r.failureReason.isEmpty()) // recorded before schema v9, or why it is unknown
        line("reason", escapedName(r.failureReason));
    line("node", r.node.isEmpty() ? QStringLiteral("-") : escapedName(r.node));
    if (!r.slurmJob.isEmpty())
        line("slurm job", escapedName(r.slurmJob));
    line("gpus", gpuList(r.gpus));
    line("command", escapedJoin(r.argv, QStringLiteral(" ")));
    line("workdir", escapedName(r.workdir));
    if (!r.tags.isEmpty())
        line("tags", escapedJoin(r.tags, QStringLiteral(", ")));
    for (const RunGroupMembership& m : r.groups)
        line("group", escapedName(membershipText(m)));
    // A retried run: every attempt, this one marked.
    if (const auto attempts = membershipOf(r, RunGroupKind::Attempts))
        for (const auto& [id, m] : ctx.store->groupMembers(attempts->group)) {
            const auto a = id == r.id ? Result<RunRecord>(r) : ctx.store->run(id);
            if (!a)
                continue;
            QString text = QStringLiteral("%1: run %2 %3").arg(m.position).arg(id).arg(runStateName(a->state));
            if (a->failureKind != FailureKind::None)
                text += QStringLiteral(" (%1)").arg(escapedName(a->failureReason));
            if (!a->node.isEmpty())
                text += QStringLiteral(" on ") + escapedName(a->node);
            if (a->startedAt.isValid())
                text += QStringLiteral(", ") + duration(*a);
            if (id == r.id)
                text += QStringLiteral("  <- this run");
            line("attempt", text);
        }
    if (r.archived)
        line("archived", QStringLiteral("yes (trainyardctl unarchive %1 brings it back to ls)").arg(r.id));
    for (const QString& n : r.notes.split(u'\n', Qt::SkipEmptyParts))
        line("notes", escapedName(n));
    line("created", localTime(r.createdAt));
    line("started", localTime(r.startedAt));
    line("finished", localTime(r.finishedAt));
    line("duration",
            runDuration(r, QDateTime::currentDateTimeUtc()).kind == RunDuration::Kind::EndUnknown
                    ? QStringLiteral("unknown (its node has not answered since; it may have ended there)")
                    : duration(r));
    const QMap<QString, QString> params = ctx.store->params(r.id);
    for (auto it = params.cbegin(); it != params.cend(); ++it)
        line("param", escapedName(it.key()) + u'=' + escapedName(it.value()));
    const QMap<QString, MetricPoint> latest = ctx.store->latestMetrics(r.id);
    for (auto it = latest.cbegin(); it != latest.cend(); ++it)
        line("metric",
                QStringLiteral("%1=%2 (step %3)")
                        .arg(escapedName(it.key()), formatValue(it.value().value))
                        .arg(it.value().step));
    if (!r.consolePath.isEmpty())
        line("console", escapedName(r.consolePath));
    // What the engine noticed and a user should act on (RunNotice.h); the
    // texts may hold names from the node, escaped like artifact names.
    const QList<RunNotice> notices = ctx.store->notices(r.id);
    if (notices.isEmpty()) {
        line("notices", QStringLiteral("none"));
    } else {
        line("notices", QString::number(notices.size()));
        for (const RunNotice& n : notices)
            out() << "  " << localTime(n.at) << "  " << escapedName(n.text) << '\n';
    }
    return Ok;
}

} // namespace ty::cli
