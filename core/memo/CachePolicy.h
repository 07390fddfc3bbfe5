#pragma once

// How long memoization's entries live and how much output they may stand
// for, per result database, kept beside it in `<db path>.cache.json` (as the
// queue's policy is in `.scheduler.json`), so the service, the GUI and
// trainyardctl share it:
//
//   {"max_age": "30d", "max_size": "20G"}
//
// `max_age`: entries made at least this long ago are evicted (a step's own
// `memoize: {max_age}` still applies at lookup; this bounds them all).
// `max_size`: the oldest entries are evicted until the rest's outputs total
// at most this (MemoStore::evictToSize). Durations as job specs write them
// (30m, 12h, 7d), sizes too (500M, 20G); "off" disables one. A missing file
// or key means the default (90 days, 50 GiB). A file that is not such an
// object is an error naming the file and the key.
//
// Evicting an entry never deletes its outputs (they belong to the run that
// made them: deleting the run frees them); it forgets that the step's result
// may be reused.
//
// Thread: any (plain file I/O; the eviction writes through the store).

#include "core/common/Result.h"

#include <QDateTime>
#include <QString>
#include <QStringList>

#include <optional>

namespace ty {

class MemoStore;

struct CachePolicy {
    std::optional<qint64> maxAgeSec = qint64(90) * 86400;             // nullopt: no age limit
    std::optional<qint64> maxBytes = qint64(50) * 1024 * 1024 * 1024; // nullopt: no size limit
    bool operator==(const CachePolicy&) const = default;
};

QString cachePolicyPath(const QString& databasePath);
Result<CachePolicy> loadCachePolicy(const QString& databasePath);
Result<void> saveCachePolicy(const QString& databasePath, const CachePolicy& policy);
// "30d" / "20G" / "off", as the file and `trainyardctl cache policy` write them.
QString formatCacheAge(const std::optional<qint64>& seconds);
QString formatCacheSize(const std::optional<qint64>& bytes);

// Evicts by age, then by size. Returns the keys removed, oldest first.
Result<QStringList> applyCachePolicy(MemoStore& memo, const CachePolicy& policy, const QDateTime& now);

} // namespace ty
