#pragma once

#include "core/common/FailureKind.h"
#include "core/common/RunGroup.h"

#include <QDateTime>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>

namespace ty {

// Lifecycle of a run. Stored in the database by name (runStateName).
enum class RunState {
    Queued,    // accepted, waiting for the scheduler
    Held,      // queued, but held by the user: never started, never blocks others
    Starting,  // placed, start request sent to the node's agent
    Running,   // the agent reported it started
    Succeeded, // exit code 0
    Failed,    // non-zero exit code, killed by a signal, or failed to start
    Cancelled, // cancelled by the user
    Unknown,   // node unreachable: the run may still be going
};

QString runStateName(RunState s);
std::optional<RunState> runStateFromName(QStringView name);
bool isTerminal(RunState s);

using RunId = qint64; // result database primary key, > 0

// One execution of a job spec, as stored in the result database.
// Times are UTC with millisecond precision; invalid QDateTime = not yet.
struct RunRecord {
    RunId id = 0;
    QString name;
    RunState state = RunState::Queued;
    QString specYaml; // the job spec text as submitted (after sweep expansion)
    QString specPath; // where it came from, empty for the submit dialog
    QString node;     // node name, "local" for this machine
    QList<int> gpus;  // GPU indices on the node
    QStringList argv; // the exact argv executed (shell commands: {"/bin/sh","-c",cmd})
    QString workdir;
    QMap<QString, QString> env; // extra environment given to the run
    QStringList tags;
    int priority = 0;
    QDateTime createdAt;
    QDateTime startedAt;
    QDateTime finishedAt;
    std::optional<int> exitCode;
    std::optional<int> exitSignal;
    // Ended without succeeding (failed, cancelled; also unknown: why): what
    // kind of end (FailureKind, None before schema v9 and while going) and
    // its one-line detail ("exit code 3", "ValueError: x", "cancelled").
    FailureKind failureKind = FailureKind::None;
    QString failureReason;
    QString pendingReason; // queued or held: why it waits ("held by user", the scheduler's reason); else empty
    // Queued: not started before this time (a retry waiting out its
    // backoff, core/retry); invalid: as soon as it fits. Changed by
    // updateRun like the fields above.
    QDateTime notBefore;
    QString agentRunId;  // the agent's id for the run (its directory name on the node)
    QString slurmJob;    // Slurm's job id ("1234", "1234_7") of a run on a Slurm node once sbatch took it; else empty
    QString consolePath; // local copy of the console (raw bytes)
    qint64 consoleOffset = 0; // bytes of the node's console already copied and ingested
    // The user's own words about the run, and whether it is archived (hidden
    // from the runs table and `trainyardctl ls` unless asked for). Written
    // only by ResultStore::annotateRun, never by updateRun or createRun, so an
    // engine holding an older record cannot undo an edit.
    QString notes;
    bool archived = false;
    // The groups the run is in (RunGroup.h): its sweep, gang, pipeline,
    // attempts. Set when the run is created (ResultStore::createRun) or
    // joins one (ResultStore::joinGroup); updateRun never changes them.
    // Ordered by group id.
    QList<RunGroupMembership> groups;
};

// The run's place in its group of `kind` (the first, when a run is in two of
// one kind), nullopt when it is in none.
std::optional<RunGroupMembership> membershipOf(const RunRecord& run, RunGroupKind kind);
// That group's id, 0 for none.
RunGroupId groupIdOf(const RunRecord& run, RunGroupKind kind);

// What the user changes about a run besides its execution (ResultStore::
// annotateRun): each field that is set replaces the stored one.
struct RunAnnotation {
    std::optional<QString> name;     // trimmed, not empty
    std::optional<QStringList> tags; // in order, duplicates dropped
    std::optional<QString> notes;    // free text, any length
    std::optional<bool> archived;
};

// Where a metric point came from. Stored as its integer value (0, 1).
enum class MetricSource : quint8 {
    Console = 0, // recognised in the run's console (MetricExtractor)
    File = 1,    // read from a file the run wrote (metric_files, TRAINYARD_METRICS_FILE, trainyardctl import)
};

// One metric sample. `step` is the trainer's step when the line named one,
// otherwise a per-key counter starting at 0. `epoch` is kept when present.
// `value` may be NaN or +/-inf; those are stored and returned as such.
//
// Resumed runs: a point whose step is < the last current step of its series
// (run, key, source) starts a new segment; the store then marks the earlier
// points with step >= the new one `superseded` (kept, but not returned by
// ResultStore::metrics()) and records a MetricRestart. A point at the same
// step as the last one replaces it (the older is marked superseded) without
// a restart: frameworks log some keys twice per step (Lightning's `epoch`).
struct MetricPoint {
    RunId run = 0;
    QString key;
    qint64 step = 0;
    std::optional<double> epoch;
    qint64 wallTimeMs = 0; // ms since the Unix epoch, UTC
    double value = 0.0;
    MetricSource source = MetricSource::Console;
    bool superseded = false; // read back only: replaced by a later segment (ResultStore::allMetrics)
    // Optional, write only, this process only: the producer's interned
    // number for `key` (MetricExtractor's ExtractedMetric::keyHandle), 0 for
    // none. The store's writer keeps the key id of each (run, handle) it has
    // resolved in a flat table, so the points of a series cost no string
    // hashing; `key` stays the truth: a handle that last named another text
    // (another producer's numbering, a new extractor) is resolved again by
    // the text, never used as it is. Not stored, not read back (0), not sent
    // between processes.
    quint32 keyHandle = 0;
};

// A series (run, key, source) went back to `step`: the run was resumed from a
// checkpoint. `superseded` earlier points (step >= `step`) were marked.
struct MetricRestart {
    RunId run = 0;
    QString key;
    qint64 step = 0;
    qint64 wallTimeMs = 0; // arrival of the first point of the new segment, ms since the epoch, UTC
    int superseded = 0;
    MetricSource source = MetricSource::Console;
};

} // namespace ty

Q_DECLARE_METATYPE(ty::RunRecord)
Q_DECLARE_METATYPE(ty::MetricPoint)
