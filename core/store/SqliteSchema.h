#pragma once

#include "core/common/Result.h"

#include <QString>
#include <QStringList>

class QSqlDatabase;

namespace ty {

// The result database's schema on SQLite: its current version, the DDL that
// builds each version from the one before, and the checks run before a file
// is opened for writing.
//
// Versioning: table `meta(key TEXT PRIMARY KEY, value TEXT)` holds
// `schema_version` (decimal). Version 0 means "no Trainyard tables yet" (a new
// or empty file). migrationStep(v) turns a version-v database into a
// version-(v+1) one; SqliteResultStore runs the steps fromVersion -> current
// inside one write transaction. A file whose version is newer than
// kCurrentVersion is refused, never altered.
//
// Adding version N+1: bump kCurrentVersion, add migrationStep(N) (ALTER/CREATE
// statements; a step that rebuilds a table must do so with foreign keys off,
// which SQLite only allows outside a transaction: give it its own hook then),
// and add the frozen version-N DDL as a snapshot to tests/core/store so the
// N -> N+1 path is tested.
class SqliteSchema final {
public:
    static constexpr int kCurrentVersion
            = 15; // 2: `nodes` table, 3: node labels, 4: superseded points, sources, 5: metric blocks,
                  // 6: indexes of unfinished and recently ended runs, 7: run notices,
                  // 8: a run's notes and archived flag,
                  // 9: failure kind, pending reason apart from failure reason,
                  // 10: the change sequence of each run (run_changes),
                  // 11: memoized steps' entries and hits (memo_entries, memo_hits),
                  // 12: pipelines (so they outlive the service),
                  // 13: run groups (sweeps, gangs, pipelines, attempts; run_groups, run_group_members),
                  //     a queued run's earliest start (runs.not_before),
                  // 14: node kinds and facts (nodes.kind, nodes.facts), a run's Slurm job (runs.slurm_job),
                  // 15: node_lost_after per node (nodes.node_lost_after, seconds)

    // Statements taking a database from `fromVersion` to `fromVersion + 1`
    // (0 <= fromVersion < kCurrentVersion). Empty list for an unknown version.
    static QStringList migrationStep(int fromVersion);

    // Inspects an already-open connection without writing anything.
    // Returns the file's schema version (0 when it has no tables at all),
    // or an error naming `path` when the file is not an SQLite database, is an
    // SQLite database of some other program (tables but no `meta`), has an
    // unreadable version, or a version newer than kCurrentVersion (the error
    // then names both versions).
    static Result<int> probeVersion(QSqlDatabase& db, const QString& path);

    // Reads the version inside the current transaction (0 without `meta`).
    static Result<int> readVersion(QSqlDatabase& db, const QString& path);

    // Checks the first bytes of `path` without SQLite: a non-empty file that
    // does not start with the SQLite 3 magic string is refused with a message
    // naming the file. A missing or empty file is fine (it becomes a new database).
    static Result<void> checkFileHeader(const QString& path);

private:
    SqliteSchema() = delete;
};

} // namespace ty
