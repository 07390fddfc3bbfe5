#include "ServiceProtocol.h"

#include "core/agentproto/Fields.h"
#include "core/spec/JobSpec.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QRegularExpression>
#include <QTimeZone>

namespace ty::service {

bool LineBuffer::next(QByteArray* line)
{
    const qsizetype nl = m_buf.indexOf('\n', m_scanned);
    if (nl < 0) {
        m_scanned = m_buf.size();
        return false;
    }
    *line = m_buf.left(nl);
    m_buf.remove(0, nl + 1);
    m_scanned = 0;
    return true;
}

QByteArray encode(const QJsonObject& message)
{
    return QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
}

Result<QJsonObject> decode(const QByteArray& line)
{
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
    if (error.error != QJsonParseError::NoError)
        return fail(QStringLiteral("not JSON at byte %1: %2").arg(error.offset).arg(error.errorString()));
    if (!doc.isObject())
        return fail(QStringLiteral("not a JSON object"));
    return doc.object();
}

namespace {

constexpr char kConsoleHead[] = "{\"data\":\"";
constexpr char kConsoleMid[] = "\",\"event\":\"console\",\"offset\":";
constexpr char kConsoleRun[] = ",\"run\":";

// A non-negative decimal integer at `at` (advanced past it); nullopt for none.
std::optional<qint64> readCount(const QByteArray& line, qsizetype& at)
{
    qint64 v = 0;
    const qsizetype from = at;
    while (at < line.size() && line[at] >= '0' && line[at] <= '9' && at - from < 18)
        v = v * 10 + (line[at++] - '0');
    if (at == from)
        return std::nullopt;
    return v;
}

} // namespace

QByteArray encodeConsoleEvent(qint64 run, qint64 offset, QByteArrayView bytes)
{
    const QByteArray data = QByteArray::fromRawData(bytes.data(), bytes.size()).toBase64();
    QByteArray line;
    line.reserve(data.size() + 80);
    line += kConsoleHead;
    line += data;
    line += kConsoleMid;
    line += QByteArray::number(offset);
    line += kConsoleRun;
    line += QByteArray::number(run);
    line += "}\n";
    return line;
}

std::optional<ConsoleEvent> decodeConsoleEvent(const QByteArray& line)
{
    if (!line.startsWith(kConsoleHead))
        return std::nullopt;
    const qsizetype dataFrom = qsizetype(sizeof kConsoleHead) - 1;
    const qsizetype quote = line.indexOf('"', dataFrom);
    if (quote < 0 || line.mid(quote, qsizetype(sizeof kConsoleMid) - 1) != kConsoleMid)
        return std::nullopt;
    qsizetype at = quote + qsizetype(sizeof kConsoleMid) - 1;
    const auto offset = readCount(line, at);
    if (!offset || line.mid(at, qsizetype(sizeof kConsoleRun) - 1) != kConsoleRun)
        return std::nullopt;
    at += qsizetype(sizeof kConsoleRun) - 1;
    const auto run = readCount(line, at);
    if (!run || at >= line.size() || line[at] != '}')
        return std::nullopt;
    ++at;
    if (at < line.size() && line[at] == '\n')
        ++at;
    if (at != line.size())
        return std::nullopt;
    auto decoded
            = QByteArray::fromBase64Encoding(QByteArray::fromRawData(line.constData() + dataFrom, quote - dataFrom),
                    QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return std::nullopt;
    return ConsoleEvent{*run, *offset, std::move(decoded.decoded)};
}

namespace {

QString isoUtc(const QDateTime& t)
{
    return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString();
}

QDateTime fromIso(const QJsonValue& v)
{
    if (!v.isString())
        return {};
    QDateTime t = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
    t.setTimeZone(QTimeZone::utc());
    return t;
}

} // namespace

QJsonObject runToJson(const RunRecord& run)
{
    QJsonObject o{{QStringLiteral("id"), run.id}, {QStringLiteral("name"), run.name},
            {QStringLiteral("state"), runStateName(run.state)}, {QStringLiteral("node"), run.node},
            {QStringLiteral("priority"), run.priority}};
    QJsonArray gpus;
    for (int g : run.gpus)
        gpus.append(g);
    o.insert(QStringLiteral("gpus"), gpus);
    if (run.exitCode)
        o.insert(QStringLiteral("exit_code"), *run.exitCode);
    if (run.exitSignal)
        o.insert(QStringLiteral("exit_signal"), *run.exitSignal);
    if (!run.failureReason.isEmpty())
        o.insert(QStringLiteral("failure_reason"), run.failureReason);
    if (run.failureKind != FailureKind::None)
        o.insert(QStringLiteral("failure_kind"), failureKindName(run.failureKind));
    if (!run.pendingReason.isEmpty())
        o.insert(QStringLiteral("pending_reason"), run.pendingReason);
    if (run.createdAt.isValid())
        o.insert(QStringLiteral("created_at"), isoUtc(run.createdAt));
    if (run.startedAt.isValid())
        o.insert(QStringLiteral("started_at"), isoUtc(run.startedAt));
    if (run.finishedAt.isValid())
        o.insert(QStringLiteral("finished_at"), isoUtc(run.finishedAt));
    if (run.notBefore.isValid())
        o.insert(QStringLiteral("not_before"), isoUtc(run.notBefore));
    o.insert(QStringLiteral("console_offset"), run.consoleOffset);
    // The rest of the record, so a client's copy of a run is whole (the GUI
    // replaces its row with it): what ran, where, and the user's words.
    o.insert(QStringLiteral("spec_yaml"), run.specYaml);
    o.insert(QStringLiteral("spec_path"), run.specPath);
    o.insert(QStringLiteral("argv"), QJsonArray::fromStringList(run.argv));
    o.insert(QStringLiteral("workdir"), run.workdir);
    QJsonObject env;
    for (auto it = run.env.cbegin(); it != run.env.cend(); ++it)
        env.insert(it.key(), it.value());
    o.insert(QStringLiteral("env"), env);
    o.insert(QStringLiteral("tags"), QJsonArray::fromStringList(run.tags));
    o.insert(QStringLiteral("agent_run_id"), run.agentRunId);
    o.insert(QStringLiteral("console_path"), run.consolePath);
    o.insert(QStringLiteral("notes"), run.notes);
    o.insert(QStringLiteral("archived"), run.archived);
    o.insert(QStringLiteral("groups"), membershipsToJson(run.groups));
    return o;
}

QJsonArray membershipsToJson(const QList<RunGroupMembership>& groups)
{
    QJsonArray out;
    for (const RunGroupMembership& m : groups)
        out.append(QJsonObject{{QStringLiteral("group"), m.group}, {QStringLiteral("kind"), runGroupKindName(m.kind)},
                {QStringLiteral("position"), m.position}, {QStringLiteral("role"), m.role}});
    return out;
}

QList<RunGroupMembership> membershipsFromJson(const QJsonValue& v)
{
    QList<RunGroupMembership> out;
    for (const QJsonValue& e : v.toArray()) {
        const QJsonObject o = e.toObject();
        const auto kind = runGroupKindFromName(o.value(QStringLiteral("kind")).toString());
        if (!kind)
            continue;
        out.append(RunGroupMembership{o.value(QStringLiteral("group")).toInteger(), *kind,
                o.value(QStringLiteral("position")).toInt(), o.value(QStringLiteral("role")).toString()});
    }
    return out;
}

namespace {

QStringList stringList(const QJsonValue& v)
{
    QStringList out;
    for (const QJsonValue& s : v.toArray())
        out << s.toString();
    return out;
}

} // namespace

RunRecord runFromJson(const QJsonObject& o)
{
    RunRecord r;
    r.id = o.value(QStringLiteral("id")).toInteger();
    r.name = o.value(QStringLiteral("name")).toString();
    r.state = runStateFromName(o.value(QStringLiteral("state")).toString()).value_or(RunState::Unknown);
    r.node = o.value(QStringLiteral("node")).toString();
    r.priority = o.value(QStringLiteral("priority")).toInt();
    for (const QJsonValue& g : o.value(QStringLiteral("gpus")).toArray())
        r.gpus.append(g.toInt());
    if (o.contains(QStringLiteral("exit_code")))
        r.exitCode = o.value(QStringLiteral("exit_code")).toInt();
    if (o.contains(QStringLiteral("exit_signal")))
        r.exitSignal = o.value(QStringLiteral("exit_signal")).toInt();
    r.failureReason = o.value(QStringLiteral("failure_reason")).toString();
    r.failureKind
            = failureKindFromName(o.value(QStringLiteral("failure_kind")).toString()).value_or(FailureKind::Other);
    r.pendingReason = o.value(QStringLiteral("pending_reason")).toString();
    r.createdAt = fromIso(o.value(QStringLiteral("created_at")));
    r.startedAt = fromIso(o.value(QStringLiteral("started_at")));
    r.finishedAt = fromIso(o.value(QStringLiteral("finished_at")));
    r.notBefore = fromIso(o.value(QStringLiteral("not_before")));
    r.consoleOffset = o.value(QStringLiteral("console_offset")).toInteger();
    r.specYaml = o.value(QStringLiteral("spec_yaml")).toString();
    r.specPath = o.value(QStringLiteral("spec_path")).toString();
    r.argv = stringList(o.value(QStringLiteral("argv")));
    r.workdir = o.value(QStringLiteral("workdir")).toString();
    const QJsonObject env = o.value(QStringLiteral("env")).toObject();
    for (auto it = env.begin(); it != env.end(); ++it)
        r.env.insert(it.key(), it.value().toString());
    r.tags = stringList(o.value(QStringLiteral("tags")));
    r.agentRunId = o.value(QStringLiteral("agent_run_id")).toString();
    r.consolePath = o.value(QStringLiteral("console_path")).toString();
    r.notes = o.value(QStringLiteral("notes")).toString();
    r.archived = o.value(QStringLiteral("archived")).toBool();
    r.groups = membershipsFromJson(o.value(QStringLiteral("groups")));
    return r;
}

QJsonObject submitSpecToJson(const JobSpec& spec)
{
    // As expandSweep() parses a spec's text again.
    const bool file = !spec.sourcePath.isEmpty() && QFileInfo(spec.sourcePath).isAbsolute();
    return {{QStringLiteral("yaml"), spec.yaml},
            {QStringLiteral("origin"), file ? spec.sourcePath : QStringLiteral("<job spec>")},
            {QStringLiteral("base_dir"), file ? QFileInfo(spec.sourcePath).absolutePath() : spec.workdir},
            {QStringLiteral("source_path"), spec.sourcePath}, {QStringLiteral("workdir"), spec.workdir}};
}

QJsonArray metricPointsToJson(const QList<MetricPoint>& points)
{
    QJsonArray out;
    for (const MetricPoint& p : points) {
        QJsonArray a{p.key, p.step, p.value, p.wallTimeMs};
        if (p.epoch)
            a.append(*p.epoch);
        out.append(a);
    }
    return out;
}

QList<MetricPoint> metricPointsFromJson(RunId run, const QJsonArray& a)
{
    QList<MetricPoint> out;
    out.reserve(a.size());
    for (const QJsonValue& v : a) {
        const QJsonArray p = v.toArray();
        if (p.size() < 4 || !p.at(0).isString() || !p.at(2).isDouble())
            continue;
        MetricPoint m;
        m.run = run;
        m.key = p.at(0).toString();
        m.step = p.at(1).toInteger();
        m.value = p.at(2).toDouble();
        m.wallTimeMs = p.at(3).toInteger();
        if (p.size() > 4 && p.at(4).isDouble())
            m.epoch = p.at(4).toDouble();
        out.append(m);
    }
    return out;
}

QJsonArray gpusToJson(const QList<AgentGpu>& gpus)
{
    namespace f = agentproto::fields;
    const auto key = [](const char* k) { return QString::fromLatin1(k); };
    const auto put = [](QJsonObject& o, const QString& k, const std::optional<double>& v) {
        if (v)
            o.insert(k, *v);
    };
    QJsonArray out;
    for (const AgentGpu& g : gpus) {
        QJsonObject o{{key(f::kIndex), g.index}, {key(f::kUuid), g.uuid}, {key(f::kName), g.name},
                {key(f::kPciBusId), g.pciBusId}};
        put(o, key(f::kMemoryTotalMib), g.memoryTotalMib);
        put(o, key(f::kMemoryUsedMib), g.memoryUsedMib);
        put(o, key(f::kUtilizationPct), g.utilizationPct);
        put(o, key(f::kTemperatureC), g.temperatureC);
        put(o, key(f::kPowerW), g.powerW);
        QJsonArray procs;
        for (const AgentGpuProcess& p : g.processes) {
            QJsonObject po{{key(f::kPid), p.pid}, {key(f::kName), p.name}, {key(f::kRun), p.run}};
            put(po, key(f::kUsedMemoryMib), p.usedMemoryMib);
            procs.append(po);
        }
        o.insert(key(f::kProcesses), procs);
        QJsonArray claims;
        for (const AgentGpuClaim& c : g.claims)
            claims.append(QJsonObject{{key(f::kRun), c.run}, {key(f::kClient), c.client}});
        o.insert(key(f::kClaims), claims);
        out.append(o);
    }
    return out;
}

QJsonObject loginQuestionsToJson(const SshLoginQuestions& questions)
{
    QJsonArray prompts;
    for (const SshLoginPrompt& p : questions.prompts)
        prompts.append(QJsonObject{{QStringLiteral("text"), p.text}, {QStringLiteral("echo"), p.echo}});
    return {{QStringLiteral("name"), questions.name}, {QStringLiteral("instruction"), questions.instruction},
            {QStringLiteral("prompts"), prompts}};
}

SshLoginQuestions loginQuestionsFromJson(const QJsonObject& o)
{
    SshLoginQuestions questions;
    questions.name = o.value(QStringLiteral("name")).toString();
    questions.instruction = o.value(QStringLiteral("instruction")).toString();
    for (const QJsonValue& v : o.value(QStringLiteral("prompts")).toArray()) {
        const QJsonObject p = v.toObject();
        questions.prompts.append(
                {p.value(QStringLiteral("text")).toString(), p.value(QStringLiteral("echo")).toBool()});
    }
    return questions;
}

QJsonObject fileListToJson(const AgentFileList& list)
{
    namespace f = agentproto::fields;
    const auto key = [](const char* k) { return QString::fromLatin1(k); };
    QJsonArray files;
    for (const AgentFileEntry& e : list.files)
        files.append(QJsonObject{{key(f::kRoot), e.root}, {key(f::kPath), e.path}, {key(f::kSize), e.size},
                {key(f::kType), e.type}, {key(f::kTarget), e.linkTarget}, {key(f::kMtimeMs), e.mtimeMs},
                {key(f::kNameNotUtf8), e.nameNotUtf8}});
    return {{key(f::kWorkdir), list.workdir}, {key(f::kRunDir), list.runDir}, {key(f::kTruncated), list.truncated},
            {key(f::kFiles), files}};
}

QJsonObject nodeToJson(const NodeRecord& n)
{
    return {{QStringLiteral("name"), n.name}, {QStringLiteral("host"), n.host}, {QStringLiteral("user"), n.user},
            {QStringLiteral("port"), n.port}, {QStringLiteral("identity_file"), n.identityFile},
            {QStringLiteral("agent_path"), n.agentPath},
            {QStringLiteral("labels"), QJsonArray::fromStringList(n.labels)},
            {QStringLiteral("kind"), nodeKindName(n.kind)},
            {QStringLiteral("node_lost_after_sec"),
                    n.nodeLostAfterSec ? QJsonValue(*n.nodeLostAfterSec) : QJsonValue()}};
}

Result<NodeRecord> nodeFromJson(const QJsonObject& o)
{
    NodeRecord n;
    for (const char* k : {"name", "host", "user", "identity_file", "agent_path"})
        if (o.contains(QLatin1String(k)) && !o.value(QLatin1String(k)).isString())
            return fail(
                    QStringLiteral("node field '%1' must be a string").arg(QLatin1String(k)), ErrorKind::InvalidInput);
    n.name = o.value(QStringLiteral("name")).toString();
    n.host = o.value(QStringLiteral("host")).toString();
    n.user = o.value(QStringLiteral("user")).toString();
    n.identityFile = o.value(QStringLiteral("identity_file")).toString();
    n.agentPath = o.value(QStringLiteral("agent_path")).toString();
    if (const QJsonValue kind = o.value(QStringLiteral("kind")); !kind.isUndefined()) {
        const auto k = nodeKindFromName(kind.toString());
        if (!k)
            return fail(QStringLiteral("node %1: kind must be 'ssh' or 'slurm', not '%2'")
                                .arg(n.name, kind.toVariant().toString()),
                    ErrorKind::InvalidInput);
        n.kind = *k;
    }
    const QJsonValue port = o.value(QStringLiteral("port"));
    if (!port.isUndefined() && !port.isNull()) {
        const double d = port.toDouble(-1);
        if (!port.isDouble() || d != double(int(d)) || d < 0 || d > 65535)
            return fail(QStringLiteral("node %1: port must be a number from 1 to 65535").arg(n.name),
                    ErrorKind::InvalidInput);
        n.port = int(d);
    }
    for (const QJsonValue& l : o.value(QStringLiteral("labels")).toArray()) {
        if (!l.isString())
            return fail(QStringLiteral("node %1: labels must be strings").arg(n.name), ErrorKind::InvalidInput);
        n.labels << l.toString();
    }
    const QJsonValue lostAfter = o.value(QStringLiteral("node_lost_after_sec"));
    if (!lostAfter.isUndefined() && !lostAfter.isNull()) {
        const double d = lostAfter.toDouble(-1);
        if (!lostAfter.isDouble() || d != double(qint64(d)) || d < 1)
            return fail(
                    QStringLiteral("node %1: node_lost_after_sec must be a whole number of seconds > 0").arg(n.name),
                    ErrorKind::InvalidInput);
        n.nodeLostAfterSec = qint64(d);
    }
    static const QRegularExpression validName(QStringLiteral("^[A-Za-z0-9._-]{1,64}$"));
    if (!validName.match(n.name).hasMatch() || n.name == u"local")
        return fail(QStringLiteral("'%1' is not a valid node name (letters, digits, . _ -; not \"local\")").arg(n.name),
                ErrorKind::InvalidInput);
    if (n.host.isEmpty())
        return fail(QStringLiteral("node %1 needs a host").arg(n.name), ErrorKind::InvalidInput);
    return n;
}

QJsonObject annotationToJson(const RunAnnotation& a)
{
    QJsonObject o;
    if (a.name)
        o.insert(QStringLiteral("name"), *a.name);
    if (a.tags)
        o.insert(QStringLiteral("tags"), QJsonArray::fromStringList(*a.tags));
    if (a.notes)
        o.insert(QStringLiteral("notes"), *a.notes);
    if (a.archived)
        o.insert(QStringLiteral("archived"), *a.archived);
    return o;
}

Result<RunAnnotation> annotationFromJson(const QJsonObject& o)
{
    RunAnnotation a;
    const auto wrong = [](const char* field, const char* type) {
        return fail(QStringLiteral("annotate: '%1' must be %2").arg(QLatin1String(field), QLatin1String(type)),
                ErrorKind::InvalidInput);
    };
    if (o.contains(QStringLiteral("name"))) {
        if (!o.value(QStringLiteral("name")).isString())
            return wrong("name", "a string");
        a.name = o.value(QStringLiteral("name")).toString();
    }
    if (o.contains(QStringLiteral("tags"))) {
        if (!o.value(QStringLiteral("tags")).isArray())
            return wrong("tags", "an array of strings");
        QStringList tags;
        for (const QJsonValue& t : o.value(QStringLiteral("tags")).toArray()) {
            if (!t.isString())
                return wrong("tags", "an array of strings");
            tags << t.toString();
        }
        a.tags = tags;
    }
    if (o.contains(QStringLiteral("notes"))) {
        if (!o.value(QStringLiteral("notes")).isString())
            return wrong("notes", "a string");
        a.notes = o.value(QStringLiteral("notes")).toString();
    }
    if (o.contains(QStringLiteral("archived"))) {
        if (!o.value(QStringLiteral("archived")).isBool())
            return wrong("archived", "true or false");
        a.archived = o.value(QStringLiteral("archived")).toBool();
    }
    return a;
}

QString replyKind(const Error& error, const QString& notFound, const QString& unspecified)
{
    switch (error.kind) {
    case ErrorKind::Unspecified: return unspecified;
    case ErrorKind::NotFound: return notFound;
    case ErrorKind::Storage:
    case ErrorKind::ReadOnly:
    case ErrorKind::Damaged: return QStringLiteral("storage");
    case ErrorKind::Version: return QStringLiteral("version");
    default: return QStringLiteral("invalid_input");
    }
}

ErrorKind errorKindOfReply(const QString& kind)
{
    if (kind == u"no_such_run" || kind == u"no_such_node" || kind == u"no_such_pipeline" || kind == u"no_such_memo")
        return ErrorKind::NotFound;
    return errorKindFromName(kind); // invalid_input, storage, version
}

} // namespace ty::service
