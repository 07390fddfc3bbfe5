#pragma once

#include "core/common/Run.h"

#include <QList>
#include <QString>

#include <optional>

namespace ty {

// One metric sample read from a file a training framework wrote (Lightning
// CSVLogger, TensorBoard event file, Hugging Face trainer_state.json, JSON
// lines such as resources/trainyard.py writes). The file-side counterpart of
// ExtractedMetric (console).
//  - step: the trainer's step as the file names it; when the source has none,
//    a per-key counter (previous step of the key + 1, starting at 0), or the
//    row number for CSV files without a `step` column (see each reader).
//  - epoch: the source's epoch for that sample, when it names one.
//  - value: NaN and +-inf are kept as such.
//  - wallTimeMs: ms since the Unix epoch (UTC), when the source records it.
struct ImportedMetric {
    QString key;
    qint64 step = 0;
    std::optional<double> epoch;
    double value = 0.0;
    std::optional<qint64> wallTimeMs;

    friend bool operator==(const ImportedMetric&, const ImportedMetric&) = default;
};

// The samples as result-database points of `run`; a sample without a wall time
// gets `fallbackWallTimeMs` (e.g. the file's modification time or now).
QList<MetricPoint> toMetricPoints(const QList<ImportedMetric>& metrics, RunId run, qint64 fallbackWallTimeMs);

} // namespace ty
