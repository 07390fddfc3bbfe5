#pragma once

#include "ImportedMetric.h"
#include "core/common/Result.h"

#include <QByteArrayView>
#include <QList>
#include <QString>

namespace ty {

struct TrainerStateImport {
    QList<ImportedMetric> metrics;
    qsizetype entries = 0; // log_history entries in the file (pass as skipEntries next time)
    QStringList warnings;  // entries skipped (not an object, bad step)
};

// Metrics from a Hugging Face Trainer `trainer_state.json`
// (transformers/trainer_callback.py, TrainerState.save_to_json: json.dumps,
// so NaN/Infinity may appear). Every entry of `log_history` (a list of
// objects like {"loss": 2.3, "grad_norm": 1.2, "learning_rate": 5e-05,
// "epoch": 0.16, "step": 10} or {"eval_loss": ..., "eval_runtime": ..., ...})
// gives one sample per number other than `step` and `epoch`, at the entry's
// `step` (its index in log_history when it has none) with its `epoch`; nested
// objects give dotted keys. No wall time (the file has none).
//
// The Trainer rewrites the whole file at each checkpoint: to follow it, parse
// the new text with skipEntries = the previous import's `entries`, which
// returns only the entries appended since.
// Errors (nothing imported): not JSON (with byte offset), no `log_history` list.
Result<TrainerStateImport> importTrainerState(
        QByteArrayView json, qsizetype skipEntries = 0, const QString& origin = {});

} // namespace ty
