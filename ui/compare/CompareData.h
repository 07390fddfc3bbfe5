#pragma once

#include "core/common/Run.h"

#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>

#include <memory>
#include <vector>

namespace ty {

// One metric key of one run, column-wise (24 bytes a point instead of a
// MetricPoint's ~70), in ResultStore::metrics() order (step, then arrival).
// Immutable once loaded; shared between the compare view and its charts.
struct MetricColumns {
    std::shared_ptr<const std::vector<double>> step;   // trainer step (exact below 2^53)
    std::shared_ptr<const std::vector<double>> wallMs; // ms since the Unix epoch, UTC
    std::shared_ptr<const std::vector<double>> value;  // may hold NaN/+-inf
    qsizetype size() const { return value ? qsizetype(value->size()) : 0; }
};

// Last and best value of a metric key (computed on the loader thread).
struct MetricSummary {
    double last = 0.0; // value of the last point (may be NaN/inf)
    qint64 lastStep = 0;
    double best = 0.0;     // min or max over finite values (see lowerIsBetter)
    qint64 bestStep = 0;   // step of the first point holding `best`
    bool haveBest = false; // false when the key has no finite value
    qsizetype count = 0;
};

struct CompareRun {
    RunRecord run;
    QMap<QString, QString> params;
    QMap<QString, MetricColumns> metrics;
    QMap<QString, MetricSummary> summary;
};

// Everything the compare view shows, in the order the runs were asked for.
struct CompareData {
    QList<CompareRun> runs;
    QStringList keys() const; // union of metric keys, sorted
};

using CompareDataPtr = std::shared_ptr<const CompareData>;

// Whether a smaller value of `key` is better: keys containing "loss",
// "error" or "perplexity" (case-insensitive); everything else (accuracy,
// F1, reward...) is better when larger.
bool lowerIsBetter(const QString& key);
// Summary of `value` with `step` (same length); `lowerIsBetter` picks min or max.
MetricSummary summarise(const std::vector<double>& step, const std::vector<double>& value, bool lowerIsBetter);

} // namespace ty

Q_DECLARE_METATYPE(ty::CompareDataPtr)
