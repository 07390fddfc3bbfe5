#pragma once

#include <QDateTime>
#include <QString>

namespace ty {

// A pipeline as stored in the result database (schema 12, table
// `pipelines`), so pipelines outlive the service that runs them: a restarted
// trainyardd takes up the ones still running, and `pipeline ls`/`show` list
// the ended ones. The store keeps `document` as text and never reads inside
// it: its shape is core/pipeline's (PipelineRunner.h: the pipeline's source,
// its steps' states, runs, outputs and memo keys).
struct PipelineRecord {
    qint64 id = 0;       // > 0, chosen by the runner (unique in the database)
    QString name;        // the pipeline's `name:`
    QString state;       // "running", "succeeded", "failed", "cancelled" (pipelineStateName)
    QDateTime createdAt; // UTC, ms
    QDateTime endedAt;   // UTC, ms; invalid while running
    QString document;    // JSON object (PipelineRunner's)

    bool operator==(const PipelineRecord&) const = default;
};

} // namespace ty
