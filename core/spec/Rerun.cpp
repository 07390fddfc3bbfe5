#include "Rerun.h"

#include <QDir>
#include <QFileInfo>

#include <yaml-cpp/yaml.h>

#include <string>

namespace ty {

Result<RerunSpec> specForRerun(const RunRecord& run, const QMap<QString, QString>& params)
{
    const QString origin = QStringLiteral("run %1 spec").arg(run.id);
    RerunSpec out;
    out.baseDir = !run.specPath.isEmpty() ? QFileInfo(run.specPath).absolutePath()
            : !run.workdir.isEmpty()      ? run.workdir
                                          : QDir::rootPath();
    // Which params the spec knows (declared or swept), as it validates.
    auto declared = parseJobSpec(run.specYaml, origin, out.baseDir);
    if (!declared)
        return std::unexpected(declared.error());
    try {
        YAML::Node root = YAML::Load(run.specYaml.toStdString());
        if (!root.IsMap())
            return fail(QStringLiteral("%1: not a mapping").arg(origin));
        root.remove("sweep");
        root.remove("max_concurrent");
        YAML::Node p = root["params"];
        if (!p || !p.IsMap())
            p = YAML::Node(YAML::NodeType::Map);
        for (auto it = declared->params.cbegin(); it != declared->params.cend(); ++it)
            p[it.key().toStdString()] = params.value(it.key(), it.value()).toStdString();
        if (p.size() > 0)
            root["params"] = p;
        root["name"] = run.name.toStdString();
        // Where it ran, resolved at its submission (a relative workdir of a
        // spec read from stdin has no folder to resolve against again).
        if (!run.workdir.isEmpty())
            root["workdir"] = run.workdir.toStdString();
        YAML::Node tags(YAML::NodeType::Sequence);
        for (const QString& t : run.tags)
            tags.push_back(t.toStdString());
        if (tags.size() > 0)
            root["tags"] = tags;
        else
            root.remove("tags");
        YAML::Emitter emitter;
        emitter << root;
        out.yaml = QString::fromStdString(std::string(emitter.c_str())) + u'\n';
    } catch (const YAML::Exception& e) {
        return fail(QStringLiteral("%1: %2").arg(origin, QString::fromStdString(e.what())));
    }
    auto spec = parseJobSpec(out.yaml, origin, out.baseDir);
    if (!spec)
        return std::unexpected(spec.error());
    spec->sourcePath = run.specPath;
    out.spec = *spec;
    return out;
}

} // namespace ty
