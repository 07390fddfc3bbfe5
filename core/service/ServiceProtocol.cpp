#include "ServiceProtocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
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
    o.insert(QStringLiteral("console_offset"), run.consoleOffset);
    return o;
}

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
    r.consoleOffset = o.value(QStringLiteral("console_offset")).toInteger();
    return r;
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
    if (kind == u"no_such_run" || kind == u"no_such_node")
        return ErrorKind::NotFound;
    return errorKindFromName(kind); // invalid_input, storage, version
}

} // namespace ty::service
