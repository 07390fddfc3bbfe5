#pragma once

#include "StoreWriteOp.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QList>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QStringList>

#include <optional>

namespace ty {

// The record half of SqliteWriter: the SQL of every queued write except
// metric points (MetricSeriesWriter) and ingestion fencing (SqliteWriter):
// runs with their tags and params (create, update, annotate, delete), console
// offsets, artifacts, notices, nodes, pipelines, and the run_changes marks (schema 10)
// the GUI's row updates read. One statement per write, prepared once. It never
// begins or ends a transaction: SqliteWriter opens one per batch and commits
// or rolls it back.
//
// Shapes: each apply() returns the run the write changed (for run_changes and
// BatchOutcome::changedRuns), or nullopt when it changed none: the run does
// not exist (a write for it is skipped with a debug message, not an error),
// an artifact, notice or param set that was already there, or a node.
// Times are stored as SqlCodec writes them (UTC); a record without one gets
// the current time. Console offsets are bytes into the run's console file.
//
// Thread affinity: the writer thread only (SqliteWriter::run()), like the
// connection it is prepared on. Not copyable.
//
// Errors: a returned error (SQLite's words, with the path and the run) means
// the open transaction must be rolled back.
class RecordWriter final {
    Q_DISABLE_COPY_MOVE(RecordWriter)

public:
    explicit RecordWriter(QString path); // `path` names the database in error messages

    // Prepares the statements on the writer connection `db`. Error: a
    // statement SQLite refused (schema mismatch).
    Result<void> prepare(const QSqlDatabase& db);
    // Drops the statements and the connection; before it closes. Idempotent.
    void release();

    // Marks `runs` changed by the open transaction: one new change number
    // (MAX(run_changes.seq) + 1) for all of them. No-op for none.
    Result<void> recordChanges(const QList<RunId>& runs);

    // The new run's id (> 0), its tags and params stored with it.
    Result<RunId> apply(const storeop::CreateRun& op);
    Result<std::optional<RunId>> apply(const storeop::UpdateRun& op);
    Result<std::optional<RunId>> apply(const storeop::AnnotateRun& op);
    Result<std::optional<RunId>> apply(const storeop::SetConsoleOffset& op);
    // The run (and, by foreign key, everything of it) is gone; changed
    // whether or not it existed.
    Result<std::optional<RunId>> apply(const storeop::DeleteRun& op);
    Result<std::optional<RunId>> apply(const storeop::AddArtifact& op);
    Result<std::optional<RunId>> apply(const storeop::AddNotice& op);
    Result<std::optional<RunId>> apply(const storeop::SetParams& op);
    // Nodes belong to no run: nullopt.
    Result<std::optional<RunId>> apply(const storeop::PutNode& op);
    Result<std::optional<RunId>> apply(const storeop::RemoveNode& op);
    Result<std::optional<RunId>> apply(const storeop::SetNodeFacts& op);
    Result<std::optional<RunId>> apply(const storeop::SetNodeLabels& op);
    // Pipelines belong to no run either (their steps' runs are written on their own).
    // Also makes sure the pipeline's run group (of the same id) exists.
    Result<std::optional<RunId>> apply(const storeop::PutPipeline& op);
    // The new group's id (> 0). Errors: an unknown parent, the write failed.
    Result<RunId> apply(const storeop::CreateGroup& op);
    // The run, when it exists; an unknown run is nullopt (dropped), an
    // unknown group an error.
    Result<std::optional<RunId>> apply(const storeop::JoinGroup& op);

private:
    // "<path>: run <run>: <what>: <SQLite's words for `failed`>".
    std::unexpected<Error> runFailure(RunId run, const QString& what, const QSqlQuery& failed) const;
    Result<void> replaceTags(RunId run, const QStringList& tags);
    // Inserts or replaces `params` of `run`; false: the run does not exist.
    Result<bool> storeParams(RunId run, const QMap<QString, QString>& params);
    // Inserts or replaces the run's membership; false: the run does not exist.
    Result<bool> storeMembership(RunId run, const RunGroupMembership& m);

    const QString m_path;
    QSqlDatabase m_db; // the writer connection, between prepare() and release()
    std::optional<QSqlQuery> m_markChange, m_maxChangeSeq, m_insertRun, m_updateRun, m_deleteTags, m_insertTag,
            m_insertParam, m_setOffset, m_deleteRun, m_upsertArtifact, m_insertNotice, m_putNode, m_removeNode,
            m_setNodeFacts, m_putPipeline, m_putPipelineGroup, m_insertGroup, m_insertMember, m_groupsOfRun,
            m_dropEmptyGroup;
};

} // namespace ty
