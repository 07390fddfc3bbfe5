#pragma once

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringView>

#include <optional>

namespace ty {

// Runs that belong together, as one model for every kind (issue #24): a
// sweep's runs, a gang's ranks, a pipeline's step runs and, for a retried
// run, its attempts. Stored in the result database (schema 13, tables
// `run_groups` and `run_group_members`); a run may be in several groups at
// once (rank 1 of a gang that is a pipeline's step is in the gang and the
// pipeline). Plain values; any thread.
enum class RunGroupKind {
    Sweep,    // "sweep":    one run per combination of a job spec's `sweep` (expandSweep)
    Gang,     // "gang":     the ranks of a multi-node run, started together (RunEngine::startGang)
    Pipeline, // "pipeline": the runs of a pipeline's steps; the group's id is the pipeline's id
    Attempts, // "attempts": the attempts of one retried run, oldest first
};

// "sweep", "gang", "pipeline", "attempts": a storage format (never rename,
// only add).
QString runGroupKindName(RunGroupKind kind);
// The kind named `name` as runGroupKindName writes it; nullopt for any other
// text (a newer Trainyard's kind).
std::optional<RunGroupKind> runGroupKindFromName(QStringView name);

using RunGroupId = qint64; // result database primary key, > 0

struct RunGroupMembership;
// One line for a run's place in a group, as `trainyardctl show` and the GUI
// print it: "sweep 12: lr=0.1,bs=32", "gang 14: rank 1", "pipeline 3: step
// train", "attempts 9: attempt 2".
QString membershipText(const RunGroupMembership& m);

// A run's place in one of its groups (RunRecord::groups).
struct RunGroupMembership {
    RunGroupId group = 0;
    RunGroupKind kind = RunGroupKind::Sweep;
    // sweep: the combination's index in expandSweep's order, from 0;
    // gang: the rank (0 = the submitted run); pipeline: the order in which
    // the pipeline made its runs, from 0; attempts: the attempt, from 1.
    int position = 0;
    // sweep: the combination as its run's name ends, "lr=0.1,bs=32";
    // pipeline: the step instance ("train", "eval[ds=a]"); otherwise empty.
    QString role;

    bool operator==(const RunGroupMembership&) const = default;
};

// A group as stored.
struct RunGroupRecord {
    RunGroupId id = 0; // assigned by the database (ResultStore::createGroup), never reused
    RunGroupKind kind = RunGroupKind::Sweep;
    // What people call it: a sweep's job spec name ("digits-mlp"), a gang's
    // rank-0 run name, a pipeline's `name:`.
    QString name;
    QDateTime createdAt; // UTC, ms
    // The group this one is part of, 0 for none: each pipeline of a sweep
    // over a whole pipeline is in that sweep.
    RunGroupId parent = 0;
    int runs = 0; // read back only: how many runs are members now

    bool operator==(const RunGroupRecord&) const = default;
};

} // namespace ty
