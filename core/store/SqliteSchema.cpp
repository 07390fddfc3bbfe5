#include "SqliteSchema.h"

#include "SqliteFileAccess.h"

#include <QFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

namespace ty {
namespace {

// Version 1. Frozen once released: later versions change it through new steps.
// Column conventions (shared with a future PostgreSQL backend, whose DDL will
// differ only in types such as BIGSERIAL/DOUBLE PRECISION):
// - times: INTEGER milliseconds since the Unix epoch, UTC; NULL = not yet.
// - gpus / argv: JSON arrays; env: JSON object (text).
// - metrics.value is NULL when not finite; metrics.kind says what it is:
//   0 finite (value holds it), 1 NaN, 2 +inf, 3 -inf, 4 negative zero
//   (SQLite stores an integral REAL as an integer and so loses the sign of -0.0).
// - metric keys are interned per run in metric_keys, so the 10^7-row metrics
//   table and its index carry an integer, not the key text. Its ids, like
//   runs', are AUTOINCREMENT, never reused: a writer (in any process) holding
//   a cached id of a deleted key then fails the foreign key instead of
//   attaching points to some other run's new key.
// - metrics.id is insertion order (ties on step are kept in arrival order).
const char* const kVersion1[] = {
        "CREATE TABLE meta ("
        " key TEXT NOT NULL PRIMARY KEY,"
        " value TEXT NOT NULL"
        ") WITHOUT ROWID",

        "CREATE TABLE runs ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " name TEXT NOT NULL DEFAULT '',"
        " state TEXT NOT NULL,"
        " spec_yaml TEXT NOT NULL DEFAULT '',"
        " spec_path TEXT NOT NULL DEFAULT '',"
        " node TEXT NOT NULL DEFAULT '',"
        " gpus TEXT NOT NULL DEFAULT '[]',"
        " argv TEXT NOT NULL DEFAULT '[]',"
        " workdir TEXT NOT NULL DEFAULT '',"
        " env TEXT NOT NULL DEFAULT '{}',"
        " priority INTEGER NOT NULL DEFAULT 0,"
        " created_at INTEGER NOT NULL,"
        " started_at INTEGER,"
        " finished_at INTEGER,"
        " exit_code INTEGER,"
        " exit_signal INTEGER,"
        " failure_reason TEXT NOT NULL DEFAULT '',"
        " agent_run_id TEXT NOT NULL DEFAULT '',"
        " console_path TEXT NOT NULL DEFAULT '',"
        " console_offset INTEGER NOT NULL DEFAULT 0"
        ")",
        "CREATE INDEX runs_created_at ON runs(created_at)",

        "CREATE TABLE tags ("
        " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " tag TEXT NOT NULL,"
        " position INTEGER NOT NULL,"
        " PRIMARY KEY (run_id, tag)"
        ") WITHOUT ROWID",
        "CREATE INDEX tags_tag ON tags(tag)",

        "CREATE TABLE params ("
        " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " key TEXT NOT NULL,"
        " value TEXT NOT NULL,"
        " PRIMARY KEY (run_id, key)"
        ") WITHOUT ROWID",

        "CREATE TABLE metric_keys ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " key TEXT NOT NULL,"
        " UNIQUE (run_id, key)"
        ")",

        "CREATE TABLE metrics ("
        " id INTEGER PRIMARY KEY,"
        " key_id INTEGER NOT NULL REFERENCES metric_keys(id) ON DELETE CASCADE,"
        " step INTEGER NOT NULL,"
        " epoch REAL,"
        " wall_ms INTEGER NOT NULL,"
        " value REAL,"
        " kind INTEGER NOT NULL DEFAULT 0"
        ")",
        "CREATE INDEX metrics_series ON metrics(key_id, step)",

        "CREATE TABLE artifacts ("
        " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " path TEXT NOT NULL,"
        " size INTEGER NOT NULL,"
        " sha256 TEXT NOT NULL DEFAULT '',"
        " created_at INTEGER NOT NULL,"
        " PRIMARY KEY (run_id, path)"
        ") WITHOUT ROWID",
};

// Version 2: SSH nodes. Times as in version 1 (ms since the epoch, UTC);
// user/identity_file/agent_path '' and port 0 mean "not set".
const char* const kVersion2[] = {
        "CREATE TABLE nodes ("
        " name TEXT NOT NULL PRIMARY KEY,"
        " host TEXT NOT NULL,"
        " user TEXT NOT NULL DEFAULT '',"
        " port INTEGER NOT NULL DEFAULT 0,"
        " identity_file TEXT NOT NULL DEFAULT '',"
        " agent_path TEXT NOT NULL DEFAULT '',"
        " added_at INTEGER NOT NULL"
        ") WITHOUT ROWID",
};

// Version 3: node labels (JSON array of strings), matched by a job spec's
// prefer_labels / avoid_labels.
const char* const kVersion3[] = {
        "ALTER TABLE nodes ADD COLUMN labels TEXT NOT NULL DEFAULT '[]'",
};

// Version 4: resumed runs and metric sources. metrics.superseded is 1 for a
// point replaced by a later segment of its series (key_id, source) that went
// back to a step <= its own; readers for charts skip those. metrics.source:
// 0 console, 1 file (MetricSource). metric_restarts records each such
// restart: the step the new segment starts at and how many points it
// superseded. Existing rows stay as they were (current, from the console).
const char* const kVersion4[] = {
        "ALTER TABLE metrics ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE metrics ADD COLUMN source INTEGER NOT NULL DEFAULT 0",
        "CREATE TABLE metric_restarts ("
        " id INTEGER PRIMARY KEY,"
        " key_id INTEGER NOT NULL REFERENCES metric_keys(id) ON DELETE CASCADE,"
        " source INTEGER NOT NULL DEFAULT 0,"
        " step INTEGER NOT NULL,"
        " wall_ms INTEGER NOT NULL,"
        " superseded INTEGER NOT NULL"
        ")",
        "CREATE INDEX metric_restarts_key ON metric_restarts(key_id)",
};

// Version 5: packed metric blocks (format: MetricBlock.h). A series' points
// live either as rows of `metrics` (a live run's recent points, a short
// series) or packed in metric_blocks (bulk writes, and rows packed once a
// series has kMetricBlockPoints current ones). Both share one arrival
// sequence: metrics.id and the ids inside blocks never collide, and readers
// order a key's points by (step, id) over both. first_id/last_id: the
// block's smallest and largest point id. live: its leading points that are
// still current (a restart supersedes a suffix). first_step/last_step: of
// all its points. Superseded rows are never packed.
const char* const kVersion5[] = {
        "CREATE TABLE metric_blocks ("
        " id INTEGER PRIMARY KEY,"
        " key_id INTEGER NOT NULL REFERENCES metric_keys(id) ON DELETE CASCADE,"
        " source INTEGER NOT NULL DEFAULT 0,"
        " first_id INTEGER NOT NULL,"
        " last_id INTEGER NOT NULL,"
        " count INTEGER NOT NULL,"
        " live INTEGER NOT NULL,"
        " first_step INTEGER NOT NULL,"
        " last_step INTEGER NOT NULL,"
        " points BLOB NOT NULL"
        ")",
        "CREATE INDEX metric_blocks_series ON metric_blocks(key_id, source, first_id)",
        "CREATE INDEX metric_blocks_last_id ON metric_blocks(last_id)",
};

// Version 6: what the scheduler reads on every pass, without reading the
// whole runs table: the runs that have not ended (a partial index, used by a
// query whose WHERE repeats its condition word for word, see
// SqliteResultStore::unfinishedRuns) and the runs that ended recently (fair
// share's decayed usage window).
const char* const kVersion6[] = {
        "CREATE INDEX runs_unfinished ON runs(created_at) WHERE state NOT IN ('succeeded', 'failed', 'cancelled')",
        "CREATE INDEX runs_finished_at ON runs(finished_at)",
};

// Version 7: run notices (RunNotice.h): what a run's user should see besides
// its console (a synced link that leads nowhere, refused artifacts). `at` in
// ms since the epoch, UTC, like every time; id keeps the order of notices
// recorded in the same millisecond. Existing runs start with none.
const char* const kVersion7[] = {
        "CREATE TABLE run_notices ("
        " id INTEGER PRIMARY KEY,"
        " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " at INTEGER NOT NULL,"
        " text TEXT NOT NULL"
        ")",
        "CREATE INDEX run_notices_run ON run_notices(run_id, at)",
};

// Version 8: what the user writes about a run (RunRecord::notes, free text)
// and whether it is archived (hidden from the runs table and `ls` unless
// asked for). Existing runs start with no notes, not archived.
const char* const kVersion8[] = {
        "ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE runs ADD COLUMN archived INTEGER NOT NULL DEFAULT 0",
};

// Version 9: why a run ended apart from why it waits. failure_kind is a
// FailureKind name ('' = none or not known: failed runs recorded before v9
// keep '' unless their stored reason was exactly the engine's own
// "exit code N" / "killed by signal N" text for their status); failure_reason
// is now only the ended run's detail, pending_reason a queued or held run's
// reason, moved here from failure_reason where it was kept until v8.
const char* const kVersion9[] = {
        "ALTER TABLE runs ADD COLUMN failure_kind TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE runs ADD COLUMN pending_reason TEXT NOT NULL DEFAULT ''",
        "UPDATE runs SET pending_reason = failure_reason, failure_reason = '' WHERE state IN ('queued', 'held')",
        "UPDATE runs SET failure_kind = 'cancelled' WHERE state = 'cancelled'",
        "UPDATE runs SET failure_kind = 'exit_code'"
        " WHERE state = 'failed' AND exit_code IS NOT NULL AND failure_reason = 'exit code ' || exit_code",
        "UPDATE runs SET failure_kind = 'signal'"
        " WHERE state = 'failed' AND exit_signal IS NOT NULL AND failure_reason = 'killed by signal ' || exit_signal",
};

// Version 10: which runs changed, so a reader in another process (the GUI
// beside the service) reloads those rows instead of every run. seq is the
// write transaction's change number: one more than the largest stored, the
// same for every run the transaction touched (its row, tags, params, notices,
// artifacts, console offset or metrics). A deleted run keeps its row here
// (no foreign key) and is told apart by its absence from `runs`. Existing
// runs start with none: a reader loads everything once, then asks for changes
// after the largest seq it saw (SqliteResultStore::runChangesSince).
const char* const kVersion10[] = {
        "CREATE TABLE run_changes ("
        " run_id INTEGER NOT NULL PRIMARY KEY,"
        " seq INTEGER NOT NULL"
        ")",
        "CREATE INDEX run_changes_seq ON run_changes(seq)",
};

// Version 11: memoized pipeline steps (issue #24; core/memo). One entry per
// cache key: the pipeline and step that produced it, the key's components
// (JSON, core/memo/MemoKey.h), when it was created (max_age counts from it),
// its last hit and hit count, the run that produced it (no foreign key: an
// entry may outlive its run), its outputs (JSON [{path, size, sha256}]), the
// params it output (JSON object) and their total bytes (size-budget
// eviction, oldest first by created_at). A rowid table, not WITHOUT ROWID:
// components hold the code tree's file list (~100 bytes a file). memo_hits:
// each use of an entry instead of running its step, gone with the entry.
const char* const kVersion11[] = {
        "CREATE TABLE memo_entries ("
        " key TEXT NOT NULL UNIQUE,"
        " pipeline TEXT NOT NULL DEFAULT '',"
        " step TEXT NOT NULL,"
        " components TEXT NOT NULL,"
        " created_at INTEGER NOT NULL,"
        " last_hit_at INTEGER,"
        " hit_count INTEGER NOT NULL DEFAULT 0,"
        " run_id INTEGER NOT NULL DEFAULT 0,"
        " outputs TEXT NOT NULL DEFAULT '[]',"
        " output_params TEXT NOT NULL DEFAULT '{}',"
        " output_bytes INTEGER NOT NULL DEFAULT 0"
        ")",
        "CREATE INDEX memo_entries_step ON memo_entries(pipeline, step, created_at)",
        "CREATE INDEX memo_entries_created ON memo_entries(created_at)",
        "CREATE TABLE memo_hits ("
        " id INTEGER PRIMARY KEY,"
        " key TEXT NOT NULL REFERENCES memo_entries(key) ON DELETE CASCADE,"
        " at INTEGER NOT NULL,"
        " run_id INTEGER NOT NULL DEFAULT 0,"
        " pipeline TEXT NOT NULL DEFAULT ''"
        ")",
        "CREATE INDEX memo_hits_key ON memo_hits(key, at)",
};

// Version 12: pipelines (issue #24; core/pipeline/PipelineRunner.h), so a
// restarted service takes up the running ones and the ended ones stay
// listed: the id the runner chose, name and state (queried without opening
// the document), created and ended (UTC ms, ended NULL while running), and
// the runner's JSON document (source, steps' states, runs, outputs, keys).
const char* const kVersion12[] = {
        "CREATE TABLE pipelines ("
        " id INTEGER PRIMARY KEY,"
        " name TEXT NOT NULL,"
        " state TEXT NOT NULL,"
        " created_at INTEGER NOT NULL,"
        " ended_at INTEGER,"
        " document TEXT NOT NULL"
        ")",
        "CREATE INDEX pipelines_state ON pipelines(state)",
};

// Version 13: a run's earliest start (not_before; issue #25's retries) and
// run groups (issue #24; core/common/RunGroup.h): sweeps, gangs,
// pipelines and attempts as one model, where until v12 a sweep and a gang
// were a tag each ("sweep:<ms>", "gang:<rank 0's id>") and a pipeline's runs
// were tagged "pipeline:<id>" and "step:<step>". A group: its kind (a
// RunGroupKind name), what people call it, when it was made, and the group
// it is part of (a pipeline of a sweep over a pipeline). A member: its
// position (sweep: combination index, gang: rank, pipeline: order made,
// attempts: attempt) and role (sweep: "lr=0.1", pipeline: step instance).
// A pipeline's group has the pipeline's id. The migration turns each such
// tag into its group and removes it: pipelines keep their ids; sweeps and
// gangs are numbered after them, oldest first; positions and roles come from
// the runs' names ("digits[lr=0.1]", "digits#rank1", "pipe/train") and
// their order of creation.
const char* const kVersion13[] = {
        // A queued run is not started before this time (UTC ms; NULL: as
        // soon as it fits): a retry waiting out its backoff.
        "ALTER TABLE runs ADD COLUMN not_before INTEGER",
        "CREATE TABLE run_groups ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " kind TEXT NOT NULL,"
        " name TEXT NOT NULL DEFAULT '',"
        " created_at INTEGER NOT NULL,"
        " parent INTEGER REFERENCES run_groups(id) ON DELETE SET NULL"
        ")",
        "CREATE INDEX run_groups_kind ON run_groups(kind, id)",
        "CREATE TABLE run_group_members ("
        " group_id INTEGER NOT NULL REFERENCES run_groups(id) ON DELETE CASCADE,"
        " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " position INTEGER NOT NULL DEFAULT 0,"
        " role TEXT NOT NULL DEFAULT '',"
        " PRIMARY KEY (group_id, run_id)"
        ") WITHOUT ROWID",
        "CREATE INDEX run_group_members_run ON run_group_members(run_id)",
        // Pipelines keep their ids.
        "INSERT INTO run_groups (id, kind, name, created_at) SELECT id, 'pipeline', name, created_at FROM pipelines",
        "INSERT INTO run_group_members (group_id, run_id, position, role)"
        " SELECT p.id, t.run_id, (SELECT COUNT(*) FROM tags o WHERE o.tag = t.tag AND o.run_id < t.run_id),"
        " CASE WHEN substr(r.name, 1, length(p.name) + 1) = p.name || '/' THEN substr(r.name, length(p.name) + 2)"
        " ELSE r.name END"
        " FROM tags t JOIN pipelines p ON t.tag = 'pipeline:' || p.id JOIN runs r ON r.id = t.run_id",
        // Sweeps and gangs: one group per tag, numbered after the pipelines.
        "CREATE TEMP TABLE v13_groups (tag TEXT NOT NULL PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL DEFAULT '',"
        " created_at INTEGER NOT NULL, first_run INTEGER NOT NULL, gid INTEGER NOT NULL DEFAULT 0)",
        "INSERT INTO v13_groups (tag, kind, created_at, first_run)"
        " SELECT t.tag, CASE WHEN substr(t.tag, 1, 6) = 'sweep:' THEN 'sweep' ELSE 'gang' END,"
        " MIN(r.created_at), MIN(r.id) FROM tags t JOIN runs r ON r.id = t.run_id"
        " WHERE (substr(t.tag, 1, 6) = 'sweep:' AND substr(t.tag, 7) <> '' AND substr(t.tag, 7) NOT GLOB '*[^0-9]*')"
        " OR (substr(t.tag, 1, 5) = 'gang:' AND substr(t.tag, 6) <> '' AND substr(t.tag, 6) NOT GLOB '*[^0-9]*')"
        " GROUP BY t.tag",
        "UPDATE v13_groups SET name = (SELECT CASE WHEN v13_groups.kind = 'sweep' AND instr(r.name, '[') > 1"
        " THEN substr(r.name, 1, instr(r.name, '[') - 1) ELSE r.name END FROM runs r WHERE r.id = v13_groups.first_run),"
        " gid = (SELECT COALESCE(MAX(id), 0) FROM run_groups) + (SELECT COUNT(*) FROM v13_groups o"
        " WHERE o.created_at < v13_groups.created_at OR (o.created_at = v13_groups.created_at"
        " AND (o.first_run < v13_groups.first_run OR (o.first_run = v13_groups.first_run AND o.tag <= v13_groups.tag))))",
        "INSERT INTO run_groups (id, kind, name, created_at) SELECT gid, kind, name, created_at FROM v13_groups",
        "INSERT INTO run_group_members (group_id, run_id, position, role)"
        " SELECT g.gid, t.run_id,"
        " CASE WHEN g.kind = 'gang' THEN (CASE WHEN instr(r.name, '#rank') > 0"
        " THEN CAST(substr(r.name, instr(r.name, '#rank') + 5) AS INTEGER) ELSE 0 END)"
        " ELSE (SELECT COUNT(*) FROM tags o WHERE o.tag = t.tag AND o.run_id < t.run_id) END,"
        " CASE WHEN g.kind = 'sweep' AND instr(r.name, '[') > 1 AND substr(r.name, -1) = ']'"
        " THEN substr(r.name, instr(r.name, '[') + 1, length(r.name) - instr(r.name, '[') - 1) ELSE '' END"
        " FROM tags t JOIN v13_groups g ON g.tag = t.tag JOIN runs r ON r.id = t.run_id",
        // The tags the groups replace.
        "DELETE FROM tags WHERE substr(tag, 1, 5) = 'step:' AND run_id IN (SELECT m.run_id FROM run_group_members m"
        " JOIN run_groups g ON g.id = m.group_id WHERE g.kind = 'pipeline')",
        "DELETE FROM tags WHERE tag IN (SELECT tag FROM v13_groups) OR tag IN (SELECT 'pipeline:' || id FROM pipelines)",
        "DROP TABLE v13_groups",
};

// Version 14: Slurm (issue #26). A node's kind ('ssh': a workstation whose
// runs Trainyard's scheduler places; 'slurm': a cluster's login node whose
// runs Slurm places) and its facts as last reported (JSON: the agent's
// slurm_info reply and when it came; '' before the first). A run's Slurm job
// id ('' for a run Slurm did not place).
const char* const kVersion14[] = {
        "ALTER TABLE nodes ADD COLUMN kind TEXT NOT NULL DEFAULT 'ssh'",
        "ALTER TABLE nodes ADD COLUMN facts TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE runs ADD COLUMN slurm_job TEXT NOT NULL DEFAULT ''",
};

// Version 15: node_lost_after per node (issue #25), in seconds; NULL: the
// service's value.
const char* const kVersion15[] = {
        "ALTER TABLE nodes ADD COLUMN node_lost_after INTEGER",
};

QString dbError(const QSqlQuery& q)
{
    return q.lastError().text();
}

// The error of a failed read of `path`: a damaged file is explained (what to
// do, SqliteFileAccess.h), anything else says what could not be read.
Error readError(const QSqlQuery& q, const QString& path, const QString& what)
{
    if (sqlitefile::isDamage(q.lastError()))
        return Error{sqlitefile::damagedMessage(path, q.lastError().databaseText()), ErrorKind::Damaged};
    return Error{QStringLiteral("%1: cannot read %2: %3").arg(path, what, dbError(q))};
}

} // namespace

QStringList SqliteSchema::migrationStep(int fromVersion)
{
    QStringList out;
    switch (fromVersion) {
    case 0:
        for (const char* s : kVersion1)
            out << QString::fromLatin1(s);
        break;
    case 1:
        for (const char* s : kVersion2)
            out << QString::fromLatin1(s);
        break;
    case 2:
        for (const char* s : kVersion3)
            out << QString::fromLatin1(s);
        break;
    case 3:
        for (const char* s : kVersion4)
            out << QString::fromLatin1(s);
        break;
    case 4:
        for (const char* s : kVersion5)
            out << QString::fromLatin1(s);
        break;
    case 5:
        for (const char* s : kVersion6)
            out << QString::fromLatin1(s);
        break;
    case 6:
        for (const char* s : kVersion7)
            out << QString::fromLatin1(s);
        break;
    case 7:
        for (const char* s : kVersion8)
            out << QString::fromLatin1(s);
        break;
    case 8:
        for (const char* s : kVersion9)
            out << QString::fromLatin1(s);
        break;
    case 9:
        for (const char* s : kVersion10)
            out << QString::fromLatin1(s);
        break;
    case 10:
        for (const char* s : kVersion11)
            out << QString::fromLatin1(s);
        break;
    case 11:
        for (const char* s : kVersion12)
            out << QString::fromLatin1(s);
        break;
    case 12:
        for (const char* s : kVersion13)
            out << QString::fromLatin1(s);
        break;
    case 13:
        for (const char* s : kVersion14)
            out << QString::fromLatin1(s);
        break;
    case 14:
        for (const char* s : kVersion15)
            out << QString::fromLatin1(s);
        break;
    default: break;
    }
    return out;
}

Result<void> SqliteSchema::checkFileHeader(const QString& path)
{
    QFile f(path);
    if (!f.exists() || f.size() == 0)
        return {};
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("%1: cannot read the result database: %2").arg(path, f.errorString()));
    static constexpr char kMagic[] = "SQLite format 3"; // + NUL: 16 bytes, sqlite.org/fileformat.html §1.3.1
    const QByteArray head = f.read(16);
    if (head.size() < 16 || !head.startsWith(kMagic) || head.at(15) != '\0')
        return fail(
                QStringLiteral("%1: not a Trainyard result database (the file is not an SQLite 3 database)").arg(path));
    return {};
}

Result<int> SqliteSchema::readVersion(QSqlDatabase& db, const QString& path)
{
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table'")))
        return std::unexpected(readError(q, path, QStringLiteral("the result database")));
    bool anyTable = false;
    bool hasMeta = false;
    while (q.next()) {
        const QString name = q.value(0).toString();
        if (name.startsWith(QLatin1String("sqlite_")))
            continue; // sqlite_sequence and friends
        anyTable = true;
        if (name == QLatin1String("meta"))
            hasMeta = true;
    }
    if (q.lastError().isValid()) // a step failed: the list is incomplete
        return std::unexpected(readError(q, path, QStringLiteral("the result database")));
    if (!anyTable)
        return 0;
    if (!hasMeta)
        return fail(QStringLiteral("%1: not a Trainyard result database (an SQLite database without a `meta` table)")
                            .arg(path));
    if (!q.exec(QStringLiteral("SELECT value FROM meta WHERE key = 'schema_version'")))
        return std::unexpected(readError(q, path, QStringLiteral("the schema version")));
    if (!q.next())
        return fail(QStringLiteral("%1: not a Trainyard result database (no schema_version in `meta`)").arg(path));
    bool ok = false;
    const int version = q.value(0).toString().toInt(&ok);
    if (!ok || version < 1)
        return fail(QStringLiteral("%1: invalid schema_version '%2' in `meta`").arg(path, q.value(0).toString()));
    return version;
}

Result<int> SqliteSchema::probeVersion(QSqlDatabase& db, const QString& path)
{
    auto version = readVersion(db, path);
    if (!version)
        return version;
    if (*version > kCurrentVersion)
        return fail(QStringLiteral("%1: the result database has schema version %2, but this Trainyard only knows "
                                   "versions up to %3 (it was written by a newer Trainyard). Refusing to open it; "
                                   "the file was left unchanged. Use a newer Trainyard or another database "
                                   "(--db PATH or TRAINYARD_DB).")
                            .arg(path)
                            .arg(*version)
                            .arg(kCurrentVersion));
    return version;
}

} // namespace ty
