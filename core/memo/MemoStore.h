#pragma once

// Memoized steps' entries on the result database (issue #24): a typed layer
// over ResultStore's memo_entries / memo_hits (schema 11, MemoRecord.h),
// which decides what may be stored and writes the JSON columns.
//
// An entry is written when a step succeeded with its outputs recorded with
// their content hashes (the caller's contract; put() refuses an output
// without a valid hash). A step that declares no outputs may be stored with
// none: nothing to verify, the entry stands for its success and output params.
// Entries are listed, explained (MemoExplain), invalidated (remove*) and
// evicted by age (from creation) and by a total output-size budget (oldest
// created first). Evicting or removing an entry never deletes its output
// files: the outputs belong to the runs that made them.
//
// JSON columns: components = componentsToJson() (MemoKey.h); outputs =
// [{"path": p, "size": n, "sha256": h}] in the entry's order; output_params =
// {"name": "value"}.
//
// Threads: as ResultStore (any thread; writes wait until committed on the
// store's writer thread; reads on the calling thread's connection). Errors:
// the store's (read-only, damaged, the write failed) and put()'s checks;
// reads of an entry whose JSON cannot be decoded fail for get()/newest()
// and skip it (with a warning) in list().

#include "MemoKey.h"
#include "MemoLookup.h"
#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/store/MemoRecord.h"

#include <QDateTime>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

namespace ty {

class ResultStore;

struct MemoEntry {
    QString key;      // memoKey(components); put() computes it (a given one must match)
    QString pipeline; // "" for a step outside a pipeline
    QString step;
    MemoComponents components; // components.step is the entry's step
    QDateTime created;         // UTC, ms; invalid on put(): now
    QDateTime lastHit;         // UTC, ms; invalid: never hit
    qint64 hitCount = 0;
    RunId run = 0; // the run that produced the outputs, 0 none
    QList<MemoOutput> outputs;
    QMap<QString, QString> outputParams;

    qint64 outputBytes() const; // sum of the outputs' sizes
    bool operator==(const MemoEntry&) const = default;
};

class MemoStore final {
public:
    explicit MemoStore(ResultStore& store); // not owned; must outlive this

    // Stores `e` (replacing an entry of the same key whole, its hits too) and
    // returns it as stored: key computed, created set, hit count 0 and no last
    // hit (whatever `e` said). Errors: an empty step, components.step naming
    // another step, a given key other than memoKey(components), an output
    // without a path, with a negative size or a sha256 that is not 64
    // lowercase hex digits, two outputs of the same path; the store's.
    Result<MemoEntry> put(MemoEntry e);
    // A use of entry `key` instead of running its step: hit count + 1, last
    // hit = `at` (invalid: now), the hit listed by hits(). created is never
    // changed. Error: no entry of that key; the store's.
    Result<void> recordHit(const QString& key, RunId run, const QString& pipeline, const QDateTime& at = {});

    Result<std::optional<MemoEntry>> get(const QString& key) const;
    // The newest entry (by created) of (pipeline, step): what MemoExplain
    // compares a miss against.
    Result<std::optional<MemoEntry>> newest(const QString& pipeline, const QString& step) const;
    // Newest first. With filter.withComponents false, components are empty.
    QList<MemoEntry> list(const MemoEntryFilter& filter = {}) const;
    QList<MemoHitRecord> hits(const QString& key) const;
    qint64 totalOutputBytes() const;

    // Each returns the keys it removed (with their hits), oldest first.
    Result<QStringList> remove(const QString& key);
    Result<QStringList> removeStep(const QString& pipeline, const QString& step);
    Result<QStringList> removeAll();
    // Entries whose age (now - created) is >= maxAgeMs, as MemoLookup's max_age.
    Result<QStringList> evictOlderThan(qint64 maxAgeMs, const QDateTime& now);
    // The oldest-created entries until the rest's outputs total <= maxTotalBytes.
    Result<QStringList> evictToSize(qint64 maxTotalBytes);

private:
    Result<QStringList> removeKeys(const QList<MemoEntryRecord>& oldestFirst);

    ResultStore& m_store;
};

// The eviction plans, pure: the keys to remove, oldest first.
// `entries` in any order.
QStringList planAgeEviction(const QList<MemoEntryRecord>& entries, qint64 maxAgeMs, qint64 nowMs);
QStringList planSizeEviction(const QList<MemoEntryRecord>& entries, qint64 maxTotalBytes);

// The JSON of the outputs column and back (errors: not that shape).
QString memoOutputsToJson(const QList<MemoOutput>& outputs);
Result<QList<MemoOutput>> memoOutputsFromJson(const QString& json);

} // namespace ty
