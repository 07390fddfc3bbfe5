#include "PipelineOps.h"

#include "core/pipeline/PipelineRunner.h"

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

PipelineOps::PipelineOps(pipeline::PipelineRunner* runner, std::function<void(const QString&)> connectNode)
    : m_runner(runner)
    , m_connectNode(std::move(connectNode))
{ }

std::optional<PipelineOps::Answer> PipelineOps::handle(const QString& op, const QJsonObject& request)
{
    if (op == u"pipeline_submit")
        return submit(request);
    if (op == u"pipeline_cancel")
        return cancel(request);
    if (op == u"pipelines")
        return list(request);
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
    const qint64 id = m_runner->submit(*spec, node);
    return {{{QStringLiteral("pipeline"), m_runner->describe(id).value_or(QJsonObject{})}}, {}, {}};
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

} // namespace ty::service
