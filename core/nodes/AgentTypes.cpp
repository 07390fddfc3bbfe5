#include "AgentTypes.h"

namespace ty {

namespace {

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
    if (o.value(QLatin1StringView("type")).toString() != QLatin1StringView("hello"))
        return fail(QStringLiteral("expected the agent's hello, got type \"%1\"")
                            .arg(o.value(QLatin1StringView("type")).toString()));
    if (!o.value(QLatin1StringView("protocol")).isDouble())
        return fail(QStringLiteral("the agent's hello has no protocol version"));
    AgentHello h;
    h.protocol = o.value(QLatin1StringView("protocol")).toInt();
    h.revision = o.value(QLatin1StringView("revision")).toInt(1);
    h.agent = o.value(QLatin1StringView("agent")).toString();
    h.version = o.value(QLatin1StringView("version")).toString();
    h.hostname = o.value(QLatin1StringView("hostname")).toString();
    h.user = o.value(QLatin1StringView("user")).toString();
    h.pid = o.value(QLatin1StringView("pid")).toInteger();
    h.stateDir = o.value(QLatin1StringView("state_dir")).toString();
    h.cpus = o.value(QLatin1StringView("cpus")).toInt();
    h.memoryMiB = o.value(QLatin1StringView("memory_mib")).toInteger();
    return h;
}

QJsonObject agentStartRequestToJson(const AgentStartRequest& r)
{
    QJsonObject o;
    o.insert(QLatin1StringView("run"), r.run);
    o.insert(QLatin1StringView("argv"), QJsonArray::fromStringList(r.argv));
    o.insert(QLatin1StringView("workdir"), r.workdir);
    QJsonObject env;
    for (auto it = r.env.cbegin(); it != r.env.cend(); ++it)
        env.insert(it.key(), it.value());
    o.insert(QLatin1StringView("env"), env);
    if (!r.gpus.isEmpty()) {
        QJsonArray g;
        for (int i : r.gpus)
            g.append(i);
        o.insert(QLatin1StringView("gpus"), g);
    }
    if (!r.client.isEmpty())
        o.insert(QLatin1StringView("client"), r.client);
    return o;
}

AgentStartReply agentStartReplyFromJson(const QJsonObject& o)
{
    AgentStartReply r;
    r.pid = o.value(QLatin1StringView("pid")).toInteger();
    r.pgid = o.value(QLatin1StringView("pgid")).toInteger();
    r.supervisorPid = o.value(QLatin1StringView("supervisor_pid")).toInteger();
    r.runDir = o.value(QLatin1StringView("run_dir")).toString();
    r.console = o.value(QLatin1StringView("console")).toString();
    r.startedMs = o.value(QLatin1StringView("started_ms")).toInteger();
    return r;
}

AgentRunStatus agentRunStatusFromJson(const QJsonObject& o)
{
    AgentRunStatus s;
    s.run = o.value(QLatin1StringView("run")).toString();
    const QString state = o.value(QLatin1StringView("state")).toString();
    // An `exited` event may come without "state".
    s.running = state == QLatin1StringView("running");
    s.pid = o.value(QLatin1StringView("pid")).toInteger();
    s.pgid = o.value(QLatin1StringView("pgid")).toInteger();
    s.startedMs = o.value(QLatin1StringView("started_ms")).toInteger();
    s.finishedMs = o.value(QLatin1StringView("finished_ms")).toInteger();
    s.exitCode = optInt(o, QLatin1StringView("exit_code"));
    s.signal = optInt(o, QLatin1StringView("signal"));
    s.cancelled = o.value(QLatin1StringView("cancelled")).toBool();
    s.consoleSize = o.value(QLatin1StringView("console_size")).toInteger();
    const QJsonArray argv = o.value(QLatin1StringView("argv")).toArray();
    for (const QJsonValue& a : argv)
        s.argv.append(a.toString());
    s.workdir = o.value(QLatin1StringView("workdir")).toString();
    s.gpus = intList(o.value(QLatin1StringView("gpus")));
    s.lost = o.value(QLatin1StringView("lost")).toBool();
    s.error = o.value(QLatin1StringView("error")).toString();
    return s;
}

QList<AgentGpu> agentGpusFromJson(const QJsonArray& a)
{
    QList<AgentGpu> out;
    for (const QJsonValue& v : a) {
        const QJsonObject o = v.toObject();
        AgentGpu g;
        g.index = o.value(QLatin1StringView("index")).toInt(-1);
        g.uuid = o.value(QLatin1StringView("uuid")).toString();
        g.name = o.value(QLatin1StringView("name")).toString();
        g.pciBusId = o.value(QLatin1StringView("pci_bus_id")).toString();
        g.memoryTotalMib = optDouble(o.value(QLatin1StringView("memory_total_mib")));
        g.memoryUsedMib = optDouble(o.value(QLatin1StringView("memory_used_mib")));
        g.utilizationPct = optDouble(o.value(QLatin1StringView("utilization_pct")));
        g.temperatureC = optDouble(o.value(QLatin1StringView("temperature_c")));
        g.powerW = optDouble(o.value(QLatin1StringView("power_w")));
        const QJsonArray procs = o.value(QLatin1StringView("processes")).toArray();
        for (const QJsonValue& pv : procs) {
            const QJsonObject po = pv.toObject();
            AgentGpuProcess p;
            p.pid = po.value(QLatin1StringView("pid")).toInteger();
            p.name = po.value(QLatin1StringView("name")).toString();
            p.usedMemoryMib = optDouble(po.value(QLatin1StringView("used_memory_mib")));
            p.run = po.value(QLatin1StringView("run")).toString();
            g.processes.append(p);
        }
        for (const QJsonValue& cv : o.value(QLatin1StringView("claims")).toArray()) {
            const QJsonObject co = cv.toObject();
            g.claims.append(
                    {co.value(QLatin1StringView("run")).toString(), co.value(QLatin1StringView("client")).toString()});
        }
        out.append(g);
    }
    return out;
}

} // namespace ty
