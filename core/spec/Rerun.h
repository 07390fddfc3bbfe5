#pragma once

#include "JobSpec.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QMap>
#include <QString>

namespace ty {

// A run submitted again "with these params" (the GUI's Re-run, trainyardctl
// rerun): its stored spec text (RunRecord::specYaml, which for a run of a
// sweep is the whole sweep's spec) with the run's own param values written
// into `params` (only the params the spec declares or sweeps; params that
// came from elsewhere, such as imported TensorBoard hparams, are left out),
// `sweep` and `max_concurrent` removed, and `name` and `tags` set to the
// run's (without the engine's `sweep:` id). {{placeholders}} stay in the
// command, so a param edited before submitting takes effect. Comments of the
// original text are not kept (the text is emitted again by yaml-cpp).
struct RerunSpec {
    QString yaml;    // the spec text to submit (or edit first)
    QString baseDir; // what a relative workdir in it resolves against: the spec file's folder, else the run's workdir
    JobSpec spec;    // `yaml` parsed and validated against baseDir
};

// Errors: the stored spec no longer parses or validates (its message, naming
// "run N spec" and the line and column).
Result<RerunSpec> specForRerun(const RunRecord& run, const QMap<QString, QString>& params);

} // namespace ty
