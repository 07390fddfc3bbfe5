#pragma once

#include "core/common/Run.h"

#include <QDateTime>
#include <QString>

#include <optional>

namespace ty {

// A memoized step's entry as stored in the result database (schema 11,
// tables memo_entries and memo_hits). The store keeps the JSON columns as
// text and never reads inside them: their shapes are core/memo's
// (MemoStore.h), which also decides what may be stored.
struct MemoEntryRecord {
    QString key;         // the cache key (core/memo/MemoKey.h), unique (primary key)
    QString pipeline;    // the pipeline's name; "" for a step outside one
    QString step;        // the step's name
    QString components;  // JSON: the key's components (MemoKey.h componentsToJson)
    QDateTime createdAt; // UTC, ms; invalid on input means "now"
    QDateTime lastHitAt; // UTC, ms; invalid: never hit
    qint64 hitCount = 0;
    RunId run = 0;          // the run that produced the outputs; 0: none recorded (no foreign key:
                            // an entry outlives its run, whose outputs may live elsewhere)
    QString outputs;        // JSON array [{path, size, sha256}]
    QString outputParams;   // JSON object {name: value}
    qint64 outputBytes = 0; // sum of the outputs' sizes (size-budget eviction)

    bool operator==(const MemoEntryRecord&) const = default;
};

// One use of an entry instead of running its step.
struct MemoHitRecord {
    QString key;
    QDateTime at;     // UTC, ms; invalid on input means "now"
    RunId run = 0;    // the run (if any) the hit stood in for; 0 none
    QString pipeline; // the pipeline that used it

    bool operator==(const MemoHitRecord&) const = default;
};

// ResultStore::memoEntries(): which entries, newest first (created, then key).
struct MemoEntryFilter {
    std::optional<QString> pipeline; // nullopt: every pipeline
    std::optional<QString> step;     // nullopt: every step
    int limit = -1;                  // < 0: all
    bool withComponents = true;      // false: `components` left empty (a cheap listing for eviction)
};

} // namespace ty
