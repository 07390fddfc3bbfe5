#include "PipelineOps.h"

#include "core/memo/MemoStore.h"
#include "core/pipeline/PipelineRunner.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>

namespace ty::service {

namespace {
QString str(const QJsonObject& o, const char* key)
{
    return o.value(QLatin1String(key)).toString();
}
} // namespace

PipelineOps::PipelineOps(
        pipeline::PipelineRunner* runner, ResultStore* store, std::function<void(const QString&)> connectNode)
    : m_runner(runner)
    , m_store(store)
    , m_connectNode(std::move(connectNode))
{ }

std::optional<PipelineOps::Answer> PipelineOps::handle(const QString& op, const QJsonObject& request)
{
    if (op == u"pipeline_submit")
        return submit(request);
    if (op == u"pipeline_cancel")
        return cancel(request);
    if (op == u"pipeline_resume")
        return resume(request);
    if (op == u"pipelines")
        return list(request);
    if (op == u"memo_rm")
        return removeMemo(request);
    return std::nullopt;
}

PipelineOps::Answer PipelineOps::submit(const QJsonObject& request)
{
    const QJsonObject s = request.value(QStringLiteral("spec")).toObject();
    const QString baseDir = str(s, "base_dir");
    if (!QFileInfo(baseDir).isAbsolute() || QDir::cleanPath(baseDir) != baseDir)
        return {{}, QStringLiteral("invalid_input"),
                QStringLiteral("pipeline_submit: `base_dir` must be an absolute, clean path (got '%1')").arg(baseDir)};
    QMap<QString, QString> params;
    const QJsonObject p = s.value(QStringLiteral("params")).toObject();
    for (auto it = p.begin(); it != p.end(); ++it)
        params.insert(it.key(), it.value().toString());
    // Parsed again here, as nothing from a socket is taken on trust; `uses:`
    // files are read by the service, as the user who runs it.
    auto spec = pipeline::parsePipeline(str(s, "yaml"), str(s, "origin"), baseDir, params);
    if (!spec)
        return {{}, QStringLiteral("invalid_input"), spec.error().message};
    spec->sourcePath = str(s, "source_path");
    const QString node = str(request, "node");
    if (!node.isEmpty() && m_connectNode)
        m_connectNode(node);
    if (const auto expanded = pipeline::expandPipelineSweep(*spec); !expanded)
        return {{}, QStringLiteral("invalid_input"), expanded.error().message};
    const auto ids = m_runner->submitAll(*spec, node);
    if (!ids)
        return {{}, QStringLiteral("storage"), ids.error().message};
    QJsonArray submitted;
    for (qint64 id : *ids)
        submitted.append(m_runner->describe(id).value_or(QJsonObject{}));
    return {{{QStringLiteral("pipeline"), submitted.first()}, {QStringLiteral("pipelines"), submitted}}, {}, {}};
}

PipelineOps::Answer PipelineOps::cancel(const QJsonObject& request)
{
    const qint64 id = request.value(QStringLiteral("pipeline")).toInteger();
    if (auto r = m_runner->cancel(id); !r)
        return {{},
                r.error().kind == ErrorKind::NotFound ? QStringLiteral("no_such_pipeline")
                                                      : QStringLiteral("invalid_input"),
                r.error().message};
    return {{{QStringLiteral("pipeline"), m_runner->describe(id).value_or(QJsonObject{})}}, {}, {}};
}

PipelineOps::Answer PipelineOps::resume(const QJsonObject& request)
{
    const qint64 id = request.value(QStringLiteral("pipeline")).toInteger();
    const auto resumed = m_runner->resume(id);
    if (!resumed)
        return {{},
                resumed.error().kind == ErrorKind::NotFound ? QStringLiteral("no_such_pipeline")
                                                            : QStringLiteral("invalid_input"),
                resumed.error().message};
    return {{{QStringLiteral("pipeline"), m_runner->describe(*resumed).value_or(QJsonObject{})}}, {}, {}};
}

PipelineOps::Answer PipelineOps::list(const QJsonObject& request)
{
    const QJsonValue one = request.value(QStringLiteral("pipeline"));
    QJsonArray out;
    for (qint64 id : m_runner->ids())
        if (one.isUndefined() || one.toInteger() == id)
            out.append(*m_runner->describe(id));
    if (!one.isUndefined() && out.isEmpty())
        return {{}, QStringLiteral("no_such_pipeline"), QStringLiteral("no pipeline %1").arg(one.toInteger())};
    return {{{QStringLiteral("pipelines"), out}}, {}, {}};
}

PipelineOps::Answer PipelineOps::removeMemo(const QJsonObject& request)
{
    MemoStore memo(*m_store);
    Result<QStringList> removed;
    if (request.contains(QStringLiteral("key"))) {
        const QString key = str(request, "key");
        // A prefix of at least 8 hex digits names one entry, as git's short ids do.
        QStringList matches;
        if (key.size() >= 8)
            for (const MemoEntry& e : memo.list({std::nullopt, std::nullopt, -1, false}))
                if (e.key.startsWith(key))
                    matches << e.key;
        if (matches.size() > 1)
            return {{}, QStringLiteral("invalid_input"),
                    QStringLiteral("'%1' names %2 cache entries: give more of the key").arg(key).arg(matches.size())};
        if (matches.isEmpty())
            return {{}, QStringLiteral("no_such_memo"), QStringLiteral("no cache entry with key '%1'").arg(key)};
        removed = memo.remove(matches.front());
    } else if (request.contains(QStringLiteral("step"))) {
        removed = memo.removeStep(str(request, "pipeline"), str(request, "step"));
    } else if (request.value(QStringLiteral("all")).toBool()) {
        removed = memo.removeAll();
    } else if (request.contains(QStringLiteral("older_than_s"))) {
        const qint64 s = request.value(QStringLiteral("older_than_s")).toInteger();
        if (s <= 0)
            return {{}, QStringLiteral("invalid_input"), QStringLiteral("older_than_s must be more than 0")};
        removed = memo.evictOlderThan(s * 1000, QDateTime::currentDateTimeUtc());
    } else if (request.contains(QStringLiteral("max_bytes"))) {
        const qint64 bytes = request.value(QStringLiteral("max_bytes")).toInteger();
        if (bytes < 0)
            return {{}, QStringLiteral("invalid_input"), QStringLiteral("max_bytes must be 0 or more")};
        removed = memo.evictToSize(bytes);
    } else {
        return {{}, QStringLiteral("invalid_input"),
                QStringLiteral("memo_rm needs key, step, all, older_than_s or max_bytes")};
    }
    if (!removed)
        return {{}, QStringLiteral("storage"), removed.error().message};
    return {{{QStringLiteral("removed"), QJsonArray::fromStringList(*removed)}}, {}, {}};
}

} // namespace ty::service
