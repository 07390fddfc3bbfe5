#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QList>
#include <QString>

#include <utility>
#include <vector>

namespace ty {

// One metric series as columns: what ResultStore::metrics(run, key) returns,
// without a MetricPoint (~70 bytes and a QString each) per point.
// 24 bytes a point.
struct MetricSeriesColumns {
    std::vector<double> step;   // trainer step, as stored (exact below 2^53)
    std::vector<double> wallMs; // ms since the Unix epoch, UTC
    std::vector<double> value;  // NaN/+-inf/-0.0 as stored
};

// Bulk, read-only, column-wise reads of a result store's metric series, for
// whatever reads millions of points at once (the compare view's loader).
// Got from ResultStore::openColumnReader(); reads exactly what
// ResultStore::metrics(run, key) returns, in its order.
//
// Thread: one thread at a time per object (each has its own connection);
// open one per worker thread. Errors name the file and the run/key.
class MetricColumnReader {
public:
    // How runMetrics() reads a run.
    enum class Plan {
        Fastest,  // what the backend does best (SQLite: a run's rows in insertion order when they lie together)
        KeyByKey, // each key on its own through the backend's (run, key, step) index (a benchmark baseline)
    };

    virtual ~MetricColumnReader() = default;

    // A read transaction: every read between begin and end sees one snapshot
    // of the database (a writer committing meanwhile is not seen).
    virtual Result<void> beginSnapshot() = 0;
    virtual void endSnapshot() = 0;

    // Every current point of every metric of `run`: (key, its series) sorted
    // by key like ResultStore::metricKeys(), each series exactly
    // ResultStore::metrics(run, key). A run without metrics (or unknown) has
    // none. Errors: the read failed, a damaged stored block (naming it).
    virtual Result<QList<std::pair<QString, MetricSeriesColumns>>> runMetrics(RunId run, Plan plan = Plan::Fastest) = 0;

protected:
    MetricColumnReader() = default;
    MetricColumnReader(const MetricColumnReader&) = delete;
    MetricColumnReader& operator=(const MetricColumnReader&) = delete;
};

} // namespace ty
