#include "AgentTypes.h"

#include "core/agentproto/Fields.h"

namespace ty {

namespace {

namespace fields = agentproto::fields;
namespace messages = agentproto::messages;

std::optional<double> optDouble(const QJsonValue& v)
{
    if (v.isDouble())
        return v.toDouble();
    return std::nullopt;
}

std::optional<int> optInt(const QJsonObject& o, QLatin1StringView key)
{
    const QJsonValue v = o.value(key);
    if (v.isDouble())
        return v.toInt();
    return std::nullopt;
}

QList<int> intList(const QJsonValue& v)
{
    QList<int> out;
    const QJsonArray a = v.toArray();
    for (const QJsonValue& x : a)
        out.append(x.toInt());
    return out;
}

} // namespace

Result<AgentHello> agentHelloFromJson(const QJsonObject& o)
{
    if (o.value(QLatin1StringView(fields::kType)).toString() != QLatin1StringView(messages::kHello))
        return fail(QStringLiteral("expected the agent's hello, got type \"%1\"")
                            .arg(o.value(QLatin1StringView(fields::kType)).toString()));
    if (!o.value(QLatin1StringView(fields::kProtocol)).isDouble())
        return fail(QStringLiteral("the agent's hello has no protocol version"));
    AgentHello h;
    h.protocol = o.value(QLatin1StringView(fields::kProtocol)).toInt();
    h.revision = o.value(QLatin1StringView(fields::kRevision)).toInt(1);
    h.agent = o.value(QLatin1StringView(fields::kAgent)).toString();
    h.version = o.value(QLatin1StringView(fields::kVersion)).toString();
    h.hostname = o.value(QLatin1StringView(fields::kHostname)).toString();
    h.user = o.value(QLatin1StringView(fields::kUser)).toString();
    h.pid = o.value(QLatin1StringView(fields::kPid)).toInteger();
    h.stateDir = o.value(QLatin1StringView(fields::kStateDir)).toString();
    h.cpus = o.value(QLatin1StringView(fields::kCpus)).toInt();
    h.memoryMiB = o.value(QLatin1StringView(fields::kMemoryMib)).toInteger();
    return h;
}

QJsonObject agentStartRequestToJson(const AgentStartRequest& r)
{
    QJsonObject o;
    o.insert(QLatin1StringView(fields::kRun), r.run);
    o.insert(QLatin1StringView(fields::kArgv), QJsonArray::fromStringList(r.argv));
    o.insert(QLatin1StringView(fields::kWorkdir), r.workdir);
    QJsonObject env;
    for (auto it = r.env.cbegin(); it != r.env.cend(); ++it)
        env.insert(it.key(), it.value());
    o.insert(QLatin1StringView(fields::kEnv), env);
    if (!r.gpus.isEmpty()) {
        QJsonArray g;
        for (int i : r.gpus)
            g.append(i);
        o.insert(QLatin1StringView(fields::kGpus), g);
    }
    if (!r.client.isEmpty())
        o.insert(QLatin1StringView(fields::kClient), r.client);
    if (r.slurm)
        o.insert(QStringLiteral("slurm"),
                QJsonObject{{QStringLiteral("script"), r.slurmScript},
                        {QStringLiteral("sbatch"), QJsonArray::fromStringList(r.slurmSbatch)}});
    return o;
}

AgentStartReply agentStartReplyFromJson(const QJsonObject& o)
{
    AgentStartReply r;
    r.pid = o.value(QLatin1StringView(fields::kPid)).toInteger();
    r.pgid = o.value(QLatin1StringView(fields::kPgid)).toInteger();
    r.supervisorPid = o.value(QLatin1StringView(fields::kSupervisorPid)).toInteger();
    r.runDir = o.value(QLatin1StringView(fields::kRunDir)).toString();
    r.console = o.value(QLatin1StringView(fields::kConsole)).toString();
    r.startedMs = o.value(QLatin1StringView(fields::kStartedMs)).toInteger();
    r.slurmJob = o.value(QStringLiteral("slurm_job")).toString();
    return r;
}

QJsonObject agentArrayRequestToJson(const AgentArrayRequest& r)
{
    QJsonArray runs;
    for (const AgentStartRequest& run : r.runs) {
        QJsonObject env;
        for (auto it = run.env.cbegin(); it != run.env.cend(); ++it)
            env.insert(it.key(), it.value());
        runs.append(QJsonObject{{QLatin1StringView(fields::kRun), run.run},
                {QLatin1StringView(fields::kWorkdir), run.workdir}, {QLatin1StringView(fields::kEnv), env},
                {QLatin1StringView(fields::kScript), run.slurmScript}});
    }
    QJsonObject o{{QLatin1StringView(fields::kRuns), runs},
            {QLatin1StringView(fields::kSbatch), QJsonArray::fromStringList(r.sbatch)}};
    if (r.maxConcurrent > 0)
        o.insert(QLatin1StringView(fields::kMaxConcurrent), r.maxConcurrent);
    if (!r.client.isEmpty())
        o.insert(QLatin1StringView(fields::kClient), r.client);
    return o;
}

AgentArrayReply agentArrayReplyFromJson(const QJsonObject& o)
{
    AgentArrayReply r;
    r.slurmJob = o.value(QLatin1StringView(fields::kSlurmJob)).toString();
    for (const QJsonValue& v : o.value(QLatin1StringView(fields::kRuns)).toArray())
        r.runs.append(agentStartReplyFromJson(v.toObject()));
    return r;
}

AgentRunStatus agentRunStatusFromJson(const QJsonObject& o)
{
    AgentRunStatus s;
    s.run = o.value(QLatin1StringView(fields::kRun)).toString();
    const QString state = o.value(QLatin1StringView(fields::kState)).toString();
    // An `exited` event may come without "state".
    s.running = state == QLatin1StringView(agentproto::kStateRunning);
    s.pid = o.value(QLatin1StringView(fields::kPid)).toInteger();
    s.pgid = o.value(QLatin1StringView(fields::kPgid)).toInteger();
    s.startedMs = o.value(QLatin1StringView(fields::kStartedMs)).toInteger();
    s.finishedMs = o.value(QLatin1StringView(fields::kFinishedMs)).toInteger();
    s.exitCode = optInt(o, QLatin1StringView(fields::kExitCode));
    s.signal = optInt(o, QLatin1StringView(fields::kSignal));
    s.cancelled = o.value(QLatin1StringView(fields::kCancelled)).toBool();
    s.consoleSize = o.value(QLatin1StringView(fields::kConsoleSize)).toInteger();
    const QJsonArray argv = o.value(QLatin1StringView(fields::kArgv)).toArray();
    for (const QJsonValue& a : argv)
        s.argv.append(a.toString());
    s.workdir = o.value(QLatin1StringView(fields::kWorkdir)).toString();
    s.gpus = intList(o.value(QLatin1StringView(fields::kGpus)));
    s.lost = o.value(QLatin1StringView(fields::kLost)).toBool();
    s.error = o.value(QLatin1StringView(fields::kError)).toString();
    s.slurmJob = o.value(QStringLiteral("slurm_job")).toString();
    if (!s.slurmJob.isEmpty()) {
        s.slurmState = o.value(QStringLiteral("slurm_state")).toString();
        s.pending = state == u"pending";
        s.ending = state == u"ending";
        s.reason = o.value(QStringLiteral("reason")).toString();
        s.jobsAhead = o.value(QStringLiteral("jobs_ahead")).toInt();
        s.partition = o.value(QStringLiteral("partition")).toString();
        s.startEstimateMs = o.value(QStringLiteral("start_estimate_ms")).toInteger();
        s.slurmNodes = o.value(QStringLiteral("slurm_nodes")).toString();
        s.runningMs = o.value(QStringLiteral("running_ms")).toInteger();
    }
    return s;
}

QList<AgentGpu> agentGpusFromJson(const QJsonArray& a)
{
    QList<AgentGpu> out;
    for (const QJsonValue& v : a) {
        const QJsonObject o = v.toObject();
        AgentGpu g;
        g.index = o.value(QLatin1StringView(fields::kIndex)).toInt(-1);
        g.uuid = o.value(QLatin1StringView(fields::kUuid)).toString();
        g.name = o.value(QLatin1StringView(fields::kName)).toString();
        g.pciBusId = o.value(QLatin1StringView(fields::kPciBusId)).toString();
        g.memoryTotalMib = optDouble(o.value(QLatin1StringView(fields::kMemoryTotalMib)));
        g.memoryUsedMib = optDouble(o.value(QLatin1StringView(fields::kMemoryUsedMib)));
        g.utilizationPct = optDouble(o.value(QLatin1StringView(fields::kUtilizationPct)));
        g.temperatureC = optDouble(o.value(QLatin1StringView(fields::kTemperatureC)));
        g.powerW = optDouble(o.value(QLatin1StringView(fields::kPowerW)));
        const QJsonArray procs = o.value(QLatin1StringView(fields::kProcesses)).toArray();
        for (const QJsonValue& pv : procs) {
            const QJsonObject po = pv.toObject();
            AgentGpuProcess p;
            p.pid = po.value(QLatin1StringView(fields::kPid)).toInteger();
            p.name = po.value(QLatin1StringView(fields::kName)).toString();
            p.usedMemoryMib = optDouble(po.value(QLatin1StringView(fields::kUsedMemoryMib)));
            p.run = po.value(QLatin1StringView(fields::kRun)).toString();
            g.processes.append(p);
        }
        for (const QJsonValue& cv : o.value(QLatin1StringView(fields::kClaims)).toArray()) {
            const QJsonObject co = cv.toObject();
            g.claims.append({co.value(QLatin1StringView(fields::kRun)).toString(),
                    co.value(QLatin1StringView(fields::kClient)).toString()});
        }
        out.append(g);
    }
    return out;
}

} // namespace ty
