#pragma once

// Whether a stored memo entry may stand in for running its step (issue #24):
// the decision alone, pure (no clock, no files, no database); any thread. The
// caller reads the entry (MemoStore), says what its recorded outputs are now
// (a callback, e.g. TreeHasher::hashInput on each path), acts on the outcome
// (skip the step and MemoStore::recordHit, or run it; evict the entry), and
// adds explainMiss() for the key's own differences.
//
// Checks, in order; the first that fails decides:
//   1. always_run: miss, reason "always_run is set"; the entry is kept.
//   2. max_age: counted from the entry's creation (hits never extend it);
//      age >= max_age is a miss, reason "entry expired: created <ISO time>
//      UTC, <age> old, max_age <max>", and the entry is evicted.
//   3. outputs: each recorded output must exist now with the recorded sha256
//      and size. Missing: "output PATH missing"; different: "output PATH
//      changed"; both evict. An output that cannot be checked (the callback's
//      error, e.g. permission denied): "output PATH cannot be checked: why",
//      a miss that keeps the entry (it may be fine once readable again).
//      Every output is checked, so every reason is given.
// Otherwise a hit.

#include "FileDigest.h"
#include "core/common/Result.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace ty {

// An output as its entry recorded it (MemoStore).
struct MemoOutput {
    QString path;    // as the step declared it (absolute, or relative to what the caller resolves)
    qint64 size = 0; // bytes
    QString sha256;  // 64 lowercase hex digits

    bool operator==(const MemoOutput&) const = default;
};

struct MemoLookupRequest {
    qint64 createdMs = 0;           // the entry's creation, ms since the epoch (UTC)
    QList<MemoOutput> outputs;      // as recorded
    qint64 nowMs = 0;               // ms since the epoch (UTC)
    std::optional<qint64> maxAgeMs; // nullopt: no limit
    bool alwaysRun = false;
    // What is at `path` now: its digest, nullopt when nothing is there, or an
    // error when it cannot be checked. Called once per output, in order; not
    // called at all when an earlier check already decided.
    std::function<Result<std::optional<FileDigest>>(const MemoOutput&)> currentOutput;
};

struct MemoDecision {
    bool hit = false;
    QStringList reasons; // a miss's, in the order above; empty for a hit
    bool evict = false;  // the entry should be removed (expired, outputs gone or changed)
};

MemoDecision decideMemo(const MemoLookupRequest& request);

// "3 d 4 h", "12 min", "40 s": a duration as the reasons show it.
QString memoDurationText(qint64 ms);

} // namespace ty
