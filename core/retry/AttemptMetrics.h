#pragma once

// A retried run's metrics as one series (issue #25: "metrics continue
// across attempts as resumed segments"). Each attempt is a run of its own
// with its own points; an attempt that resumed from a checkpoint logs again
// from the checkpoint's step, so its first steps overlap the end of the
// attempt before it (work done after that checkpoint, lost with the node).
// The stitched series keeps, per key and source, each attempt's points up to
// the first step the next attempt logged, then the next attempt's: the same
// rule the store applies inside one run (MetricPoint: a step below the last
// one starts a segment and supersedes what it overlaps), across runs. An
// attempt that started over (no checkpoint) supersedes everything before
// it. Points keep their own `run` (which attempt logged them).
//
// Pure: no I/O. Any thread.

#include "core/common/Run.h"

#include <QList>

namespace ty {

struct StitchedMetrics {
    // The current points, ordered by key (QString::compare: UTF-16 code
    // units, as the store's UTF-8 order but for keys beyond U+FFFF), then
    // attempt, then step
    // and arrival.
    QList<MetricPoint> points;
    // Where an attempt took over a series: one per (key, source, attempt
    // after the first that logged it), `step` its first step, `superseded`
    // the earlier attempts' points it replaced, `run` the attempt.
    QList<MetricRestart> resumes;
};

// `attempts`: each attempt's current points (ResultStore::metrics()), the
// first attempt first. Attempts without points are skipped.
StitchedMetrics stitchAttemptMetrics(const QList<QList<MetricPoint>>& attempts);

} // namespace ty
