#include "CliCommon.h"

#include "Cli.h"
#include "CliPassphrase.h"

#include "core/common/RunDuration.h"
#include "core/common/TerminalEscape.h"
#include "core/service/ServiceClient.h"
#include "core/service/ServiceProtocol.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTextStream>

#include <cmath>

namespace ty::cli {

std::unique_ptr<service::ServiceClient> connectService(const Context& ctx, bool answerPrompts)
{
    auto svc = service::ServiceClient::connectTo(ctx.dbPath, service::ServiceClient::Start::IfNeeded);
    if (!svc) {
        err() << "trainyardctl: " << escapedName(svc.error().message) << '\n';
        return nullptr;
    }
    // A node the service connects for this command may need a key's
    // passphrase: asked here, on the terminal or through the askpass program
    // (none in batch mode: the service is told so at once).
    if (auto provider = answerPrompts ? passphraseProvider() : nullptr)
        if (auto asked = (*svc)->answerPromptsWith(std::move(provider)); !asked)
            err() << "trainyardctl: " << escapedName(asked.error().message) << '\n';
    return std::move(*svc);
}

QTextStream& out()
{
    static QTextStream s(stdout);
    return s;
}

QTextStream& err()
{
    static QTextStream s(stderr);
    return s;
}

int usageError(const QString& message)
{
    err() << "trainyardctl: " << message << "\nTry 'trainyardctl --help'.\n";
    err().flush();
    return Usage;
}

QString escapedName(const QString& text)
{
    return escapeForTerminal(text);
}

QString escapedJoin(const QStringList& parts, const QString& sep)
{
    QStringList escaped;
    for (const QString& p : parts)
        escaped.append(escapeForTerminal(p));
    return escaped.join(sep);
}

QString formatValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("nan");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 10);
}

QString localTime(const QDateTime& t)
{
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QStringLiteral("-");
}

QString duration(const RunRecord& r)
{
    const RunDuration d = runDuration(r, QDateTime::currentDateTimeUtc());
    if (d.kind == RunDuration::Kind::NotStarted)
        return QStringLiteral("-");
    if (d.kind == RunDuration::Kind::EndUnknown)
        return QStringLiteral("unknown");
    const qint64 s = d.ms / 1000;
    if (s < 60)
        return QStringLiteral("%1s").arg(s);
    if (s < 3600)
        return QStringLiteral("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1h%2m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
}

QString gpuList(const QList<int>& gpus)
{
    QStringList parts;
    for (int g : gpus)
        parts.append(QString::number(g));
    return parts.isEmpty() ? QStringLiteral("-") : parts.join(u',');
}

Result<RunRecord> findRun(const ResultStore& store, const QString& spec)
{
    bool isNumber = false;
    const RunId id = spec.toLongLong(&isNumber);
    if (isNumber) {
        auto r = store.run(id);
        if (!r)
            return fail(QStringLiteral("no run with id %1").arg(id));
        return r;
    }
    const QList<RunRecord> all = store.runs();
    for (const RunRecord& r : all)
        if (r.name == spec)
            return r;
    return fail(QStringLiteral("no run named '%1'").arg(spec));
}

std::optional<NodeRecord> storedNode(const Context& ctx, const QString& name)
{
    for (const NodeRecord& n : ctx.store->nodes())
        if (n.name == name)
            return n;
    return std::nullopt;
}

std::optional<QStringList> catchUp(Context& ctx)
{
    if (ctx.store->isReadOnly()) {
        // Nothing can be recorded in it; what it holds is what there is.
        if (!ctx.store->unfinishedRuns().isEmpty())
            err() << "trainyardctl: " << escapedName(ctx.dbPath) << " is read-only (" << ctx.store->readOnlyReason()
                  << "): runs are shown as last recorded in it\n";
        return std::nullopt;
    }
    bool unfinished = false;
    for (const RunRecord& r : ctx.store->unfinishedRuns())
        if (r.state != RunState::Held)
            unfinished = true;
    if (!unfinished)
        return QStringList();
    constexpr int kWaitMs = 5000;
    auto svc = service::ServiceClient::connectTo(ctx.dbPath, service::ServiceClient::Start::IfNeeded);
    if (!svc) {
        err() << "trainyardctl: runs are shown as last recorded: " << escapedName(svc.error().message) << '\n';
        return std::nullopt;
    }
    // What the service wrote is committed by the time it answers; this
    // connection reads it from here on. After the wait, it says which nodes
    // are behind and why.
    auto caught = (*svc)->call(QStringLiteral("caught_up"), {}, kWaitMs);
    const bool waitedOut = !caught;
    if (waitedOut)
        caught = (*svc)->call(QStringLiteral("behind"));
    QStringList behind;
    if (!caught) {
        err() << "trainyardctl: runs are shown as last recorded: " << escapedName(caught.error().message) << '\n';
        return behind;
    }
    for (const QJsonValue& v : caught->value(QStringLiteral("behind")).toArray()) {
        const QJsonObject b = v.toObject();
        const QString node = b.value(QStringLiteral("node")).toString();
        behind << node;
        err() << "trainyardctl: runs on node " << escapedName(node) << " are shown as last recorded ("
              << escapedName(b.value(QStringLiteral("why")).toString());
        if (waitedOut && !b.value(QStringLiteral("unreachable")).toBool())
            err() << " after " << kWaitMs / 1000 << " s";
        err() << ")\n";
    }
    return behind;
}

QJsonValue jsonTime(const QDateTime& t)
{
    return t.isValid() ? QJsonValue(t.toUTC().toString(Qt::ISODateWithMs)) : QJsonValue();
}

QJsonValue jsonNumber(double v)
{
    return std::isfinite(v) ? QJsonValue(v) : QJsonValue(formatValue(v));
}

QJsonObject runJson(const ResultStore& store, const RunRecord& r, const QList<RunNotice>& notices)
{
    QJsonObject o;
    o[QStringLiteral("id")] = r.id;
    o[QStringLiteral("name")] = r.name;
    o[QStringLiteral("state")] = runStateName(r.state);
    o[QStringLiteral("node")] = r.node;
    o[QStringLiteral("agent_run_id")] = r.agentRunId;
    o[QStringLiteral("slurm_job")] = r.slurmJob.isEmpty() ? QJsonValue() : QJsonValue(r.slurmJob);
    QJsonArray gpus;
    for (int g : r.gpus)
        gpus.append(g);
    o[QStringLiteral("gpus")] = gpus;
    o[QStringLiteral("argv")] = QJsonArray::fromStringList(r.argv);
    o[QStringLiteral("workdir")] = r.workdir;
    o[QStringLiteral("tags")] = QJsonArray::fromStringList(r.tags);
    o[QStringLiteral("groups")] = service::membershipsToJson(r.groups);
    o[QStringLiteral("notes")] = r.notes;
    o[QStringLiteral("archived")] = r.archived;
    QJsonObject params;
    const QMap<QString, QString> runParams = store.params(r.id);
    for (auto it = runParams.cbegin(); it != runParams.cend(); ++it)
        params[it.key()] = it.value();
    o[QStringLiteral("params")] = params;
    o[QStringLiteral("created_at")] = jsonTime(r.createdAt);
    o[QStringLiteral("started_at")] = jsonTime(r.startedAt);
    o[QStringLiteral("finished_at")] = jsonTime(r.finishedAt);
    o[QStringLiteral("exit_code")] = r.exitCode ? QJsonValue(*r.exitCode) : QJsonValue();
    o[QStringLiteral("exit_signal")] = r.exitSignal ? QJsonValue(*r.exitSignal) : QJsonValue();
    o[QStringLiteral("pending_reason")] = r.pendingReason;
    o[QStringLiteral("failure_kind")] = failureKindName(r.failureKind);
    o[QStringLiteral("failure_reason")] = r.failureReason;
    QJsonObject metrics;
    const auto latest = store.latestMetrics(r.id);
    for (auto it = latest.cbegin(); it != latest.cend(); ++it)
        metrics[it.key()] = jsonNumber(it.value().value);
    o[QStringLiteral("latest_metrics")] = metrics;
    QJsonArray runNotices;
    for (const RunNotice& n : notices)
        runNotices.append(QJsonObject{{QStringLiteral("at"), jsonTime(n.at)}, {QStringLiteral("text"), n.text}});
    o[QStringLiteral("notices")] = runNotices;
    return o;
}

void printJson(const QJsonDocument& doc)
{
    out() << doc.toJson(QJsonDocument::Indented);
}

} // namespace ty::cli
