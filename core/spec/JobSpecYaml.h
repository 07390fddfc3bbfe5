#pragma once

#include "core/common/Result.h"
#include "core/spec/JobSpec.h"

#include <yaml-cpp/yaml.h>

namespace ty {

// A job spec from a YAML mapping already loaded, keeping its marks: a
// pipeline's step (core/pipeline) is a job spec inside a pipeline file, and
// its errors name that file's line and column.
//   root:       the job spec's mapping (the keys of JobSpec's YAML, nothing else)
//   text:       the document the `command` node's marks point into, to place
//               errors about its {{placeholders}}
//   references: names a {{placeholder}} in `command` may use besides the
//               spec's params ("params.lr", "steps.prep.outputs.rows"),
//               filled exactly as params are (shell-safe, ShellTemplate.h)
//               but neither recorded as params nor exported to the run
// Errors as parseJobSpec's, prefixed with `origin`.
Result<JobSpec> parseJobSpecNode(const YAML::Node& root, const QString& text, const QString& origin,
        const QString& baseDir, const QMap<QString, QString>& references = {});

} // namespace ty
