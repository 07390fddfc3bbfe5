#include "RecordWriter.h"

#include "SqlCodec.h"
#include "SqliteFileAccess.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSqlError>

namespace ty {

Q_DECLARE_LOGGING_CATEGORY(lcStoreWriter) // SqliteWriter.cpp: "trainyard.store.writer"

namespace {

// Binds the run fields updateRun() may change -- the first 17 placeholders of
// both the run INSERT and the run UPDATE -- and returns the next index.
int bindMutableRunFields(QSqlQuery& q, const RunRecord& r)
{
    using namespace sqlcodec;
    int i = 0;
    q.bindValue(i++, runStateName(r.state));
    q.bindValue(i++, textToSql(r.node));
    q.bindValue(i++, intListToJson(r.gpus));
    q.bindValue(i++, stringListToJson(r.argv));
    q.bindValue(i++, textToSql(r.workdir));
    q.bindValue(i++, stringMapToJson(r.env));
    q.bindValue(i++, r.priority);
    q.bindValue(i++, timeToSql(r.startedAt));
    q.bindValue(i++, timeToSql(r.finishedAt));
    q.bindValue(i++, optionalIntToSql(r.exitCode));
    q.bindValue(i++, optionalIntToSql(r.exitSignal));
    q.bindValue(i++, textToSql(r.failureReason));
    q.bindValue(i++, textToSql(r.agentRunId));
    q.bindValue(i++, textToSql(r.consolePath));
    q.bindValue(i++, textToSql(failureKindName(r.failureKind)));
    q.bindValue(i++, textToSql(r.pendingReason));
    q.bindValue(i++, r.notBefore.isValid() ? timeToSql(r.notBefore) : QVariant());
    q.bindValue(i++, textToSql(r.slurmJob));
    return i;
}

std::optional<RunId> changedIf(bool changed, RunId run)
{
    return changed ? std::optional<RunId>(run) : std::nullopt;
}

} // namespace

RecordWriter::RecordWriter(QString path)
    : m_path(std::move(path))
{ }

std::unexpected<Error> RecordWriter::runFailure(RunId run, const QString& what, const QSqlQuery& failed) const
{
    return fail(QStringLiteral("%1: run %2: %3: %4").arg(m_path).arg(run).arg(what, failed.lastError().text()));
}

Result<void> RecordWriter::prepare(const QSqlDatabase& db)
{
    m_db = db;
    const std::pair<std::optional<QSqlQuery>*, const char*> statements[] = {
            // Both start with the mutable columns, in bindMutableRunFields() order.
            {&m_insertRun,
                    "INSERT INTO runs (state, node, gpus, argv, workdir, env, priority, started_at, finished_at,"
                    " exit_code, exit_signal, failure_reason, agent_run_id, console_path, failure_kind, pending_reason,"
                    " not_before, slurm_job, name, spec_yaml, spec_path, created_at, console_offset)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
            {&m_updateRun,
                    "UPDATE runs SET state = ?, node = ?, gpus = ?, argv = ?, workdir = ?, env = ?, priority = ?,"
                    " started_at = ?, finished_at = ?, exit_code = ?, exit_signal = ?, failure_reason = ?,"
                    " agent_run_id = ?, console_path = ?, failure_kind = ?, pending_reason = ?, not_before = ?,"
                    " slurm_job = ? WHERE id = ?"},
            {&m_deleteTags, "DELETE FROM tags WHERE run_id = ?"},
            {&m_insertTag, "INSERT INTO tags (run_id, tag, position) VALUES (?,?,?)"},
            {&m_insertParam,
                    "INSERT INTO params (run_id, key, value) VALUES (?,?,?)"
                    " ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value"},
            {&m_setOffset, "UPDATE runs SET console_offset = ? WHERE id = ?"},
            {&m_markChange,
                    "INSERT INTO run_changes (run_id, seq) VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq"},
            {&m_maxChangeSeq, "SELECT COALESCE(MAX(seq), 0) FROM run_changes"},
            {&m_deleteRun, "DELETE FROM runs WHERE id = ?"},
            {&m_upsertArtifact,
                    "INSERT INTO artifacts (run_id, path, size, sha256, created_at) VALUES (?,?,?,?,?)"
                    " ON CONFLICT (run_id, path) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256,"
                    " created_at = excluded.created_at"},
            // A notice the run already has (same text) is not repeated: whoever
            // notices something again (a re-attached run's metric file, a second
            // download) adds nothing new, and the first time stays.
            {&m_insertNotice,
                    "INSERT INTO run_notices (run_id, at, text) SELECT ?, ?, ?"
                    " WHERE NOT EXISTS (SELECT 1 FROM run_notices WHERE run_id = ? AND text = ?)"},
            {&m_putNode,
                    "INSERT OR REPLACE INTO nodes (name, host, user, port, identity_file, agent_path, added_at, labels,"
                    " kind, facts, node_lost_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"},
            {&m_removeNode, "DELETE FROM nodes WHERE name = ?"},
            {&m_setNodeFacts, "UPDATE nodes SET facts = ? WHERE name = ?"},
            {&m_putPipeline,
                    "INSERT INTO pipelines (id, name, state, created_at, ended_at, document) VALUES (?,?,?,?,?,?)"
                    " ON CONFLICT (id) DO UPDATE SET name = excluded.name, state = excluded.state,"
                    " created_at = excluded.created_at, ended_at = excluded.ended_at, document = excluded.document"},
            // A pipeline's group has the pipeline's id; it is never turned
            // into a pipeline's when it is a group of another kind.
            {&m_putPipelineGroup,
                    "INSERT INTO run_groups (id, kind, name, created_at) VALUES (?, 'pipeline', ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET name = excluded.name WHERE run_groups.kind = 'pipeline'"},
            {&m_insertGroup, "INSERT INTO run_groups (kind, name, created_at, parent) VALUES (?,?,?,?)"},
            {&m_insertMember,
                    "INSERT INTO run_group_members (group_id, run_id, position, role) VALUES (?,?,?,?)"
                    " ON CONFLICT (group_id, run_id) DO UPDATE SET position = excluded.position, role = excluded.role"},
            {&m_groupsOfRun, "SELECT group_id FROM run_group_members WHERE run_id = ?"},
            // A sweep, gang or attempts group goes with its last run; a
            // pipeline's stays with the pipeline.
            {&m_dropEmptyGroup,
                    "DELETE FROM run_groups WHERE id = ? AND kind <> 'pipeline'"
                    " AND NOT EXISTS (SELECT 1 FROM run_group_members WHERE group_id = ?)"
                    " AND NOT EXISTS (SELECT 1 FROM run_groups c WHERE c.parent = ?)"},
    };
    for (const auto& [q, sql] : statements) {
        q->emplace(m_db);
        if (!(*q)->prepare(QString::fromLatin1(sql)))
            return fail(QStringLiteral("%1: cannot prepare \"%2\": %3")
                                .arg(m_path, QString::fromLatin1(sql), (*q)->lastError().text()));
    }
    return {};
}

void RecordWriter::release()
{
    for (auto* q : {&m_markChange, &m_maxChangeSeq, &m_insertRun, &m_updateRun, &m_deleteTags, &m_insertTag,
                 &m_insertParam, &m_setOffset, &m_deleteRun, &m_upsertArtifact, &m_insertNotice, &m_putNode,
                 &m_removeNode, &m_setNodeFacts, &m_putPipeline, &m_putPipelineGroup, &m_insertGroup, &m_insertMember,
                 &m_groupsOfRun, &m_dropEmptyGroup})
        q->reset();
    m_db = QSqlDatabase();
}

Result<void> RecordWriter::recordChanges(const QList<RunId>& runs)
{
    if (runs.isEmpty())
        return {};
    if (!m_maxChangeSeq->exec() || !m_maxChangeSeq->next())
        return fail(QStringLiteral("%1: cannot read the change sequence: %2")
                            .arg(m_path, m_maxChangeSeq->lastError().text()));
    const qint64 seq = m_maxChangeSeq->value(0).toLongLong() + 1;
    m_maxChangeSeq->finish();
    for (RunId id : runs) {
        m_markChange->bindValue(0, id);
        m_markChange->bindValue(1, seq);
        if (!m_markChange->exec())
            return runFailure(id, QStringLiteral("cannot record its change"), *m_markChange);
    }
    return {};
}

Result<RunId> RecordWriter::apply(const storeop::CreateRun& op)
{
    using namespace sqlcodec;
    const RunRecord& r = op.run;
    QSqlQuery& q = *m_insertRun;
    int i = bindMutableRunFields(q, r);
    q.bindValue(i++, textToSql(r.name));
    q.bindValue(i++, textToSql(r.specYaml));
    q.bindValue(i++, textToSql(r.specPath));
    q.bindValue(i++, timeToSql(r.createdAt.isValid() ? r.createdAt : QDateTime::currentDateTimeUtc()));
    q.bindValue(i++, QVariant::fromValue<qint64>(r.consoleOffset));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot create run \"%2\": %3").arg(m_path, r.name, q.lastError().text()));
    const RunId id = q.lastInsertId().toLongLong();
    q.finish();
    if (id <= 0)
        return fail(QStringLiteral("%1: cannot create run \"%2\": no id assigned").arg(m_path, r.name));

    if (auto t = replaceTags(id, r.tags); !t)
        return std::unexpected(t.error());
    for (const RunGroupMembership& m : r.groups)
        if (auto joined = storeMembership(id, m); !joined)
            return std::unexpected(joined.error());
    auto stored = storeParams(id, op.params);
    if (!stored)
        return std::unexpected(stored.error());
    if (!*stored) // cannot happen inside the transaction that created it
        return fail(QStringLiteral("%1: run %2: cannot store its params: the run is gone").arg(m_path).arg(id));
    return id;
}

Result<void> RecordWriter::replaceTags(RunId run, const QStringList& tags)
{
    QSqlQuery& d = *m_deleteTags;
    d.bindValue(0, QVariant::fromValue<qint64>(run));
    if (!d.exec())
        return runFailure(run, QStringLiteral("cannot replace tags"), d);
    QSqlQuery& q = *m_insertTag;
    int position = 0;
    for (const QString& tag : sqlcodec::normalizedTags(tags)) {
        q.bindValue(0, QVariant::fromValue<qint64>(run));
        q.bindValue(1, sqlcodec::textToSql(tag));
        q.bindValue(2, position++);
        if (!q.exec())
            return runFailure(run, QStringLiteral("cannot store tag %1").arg(tag), q);
    }
    return {};
}

Result<bool> RecordWriter::storeParams(RunId run, const QMap<QString, QString>& params)
{
    QSqlQuery& p = *m_insertParam;
    for (auto it = params.cbegin(); it != params.cend(); ++it) {
        p.bindValue(0, QVariant::fromValue<qint64>(run));
        p.bindValue(1, sqlcodec::textToSql(it.key()));
        p.bindValue(2, sqlcodec::textToSql(it.value()));
        if (!p.exec()) {
            if (sqlitefile::isConstraint(p.lastError())) {
                qCDebug(lcStoreWriter, "params of unknown run %lld dropped", static_cast<long long>(run));
                return false;
            }
            return runFailure(run, QStringLiteral("cannot store param %1").arg(it.key()), p);
        }
    }
    return true;
}

Result<bool> RecordWriter::storeMembership(RunId run, const RunGroupMembership& m)
{
    QSqlQuery& q = *m_insertMember;
    q.bindValue(0, QVariant::fromValue<qint64>(m.group));
    q.bindValue(1, QVariant::fromValue<qint64>(run));
    q.bindValue(2, m.position);
    q.bindValue(3, sqlcodec::textToSql(m.role));
    if (q.exec())
        return true;
    if (sqlitefile::isConstraint(q.lastError())) {
        // Which of the two is missing decides: an unknown run is dropped
        // like its params, an unknown group is the caller's mistake.
        QSqlQuery exists(m_db);
        exists.prepare(QStringLiteral("SELECT (SELECT COUNT(*) FROM runs WHERE id = ?),"
                                      " (SELECT COUNT(*) FROM run_groups WHERE id = ?)"));
        exists.addBindValue(QVariant::fromValue<qint64>(run));
        exists.addBindValue(QVariant::fromValue<qint64>(m.group));
        if (exists.exec() && exists.next()) {
            if (exists.value(1).toInt() == 0)
                return fail(QStringLiteral("%1: run %2: cannot add it to group %3: there is no such group")
                                    .arg(m_path)
                                    .arg(run)
                                    .arg(m.group));
            if (exists.value(0).toInt() == 0)
                return false;
        }
    }
    return runFailure(run, QStringLiteral("cannot add it to group %1").arg(m.group), q);
}

Result<RunId> RecordWriter::apply(const storeop::CreateGroup& op)
{
    const RunGroupRecord& g = op.group;
    QSqlQuery& q = *m_insertGroup;
    q.bindValue(0, runGroupKindName(g.kind));
    q.bindValue(1, sqlcodec::textToSql(g.name));
    q.bindValue(2, sqlcodec::timeToSql(g.createdAt.isValid() ? g.createdAt : QDateTime::currentDateTimeUtc()));
    q.bindValue(3, g.parent > 0 ? QVariant::fromValue<qint64>(g.parent) : QVariant());
    if (!q.exec()) {
        if (sqlitefile::isConstraint(q.lastError()))
            return fail(QStringLiteral("%1: cannot create %2 group \"%3\": there is no group %4 to be part of")
                                .arg(m_path, runGroupKindName(g.kind), g.name)
                                .arg(g.parent));
        return fail(QStringLiteral("%1: cannot create %2 group \"%3\": %4")
                            .arg(m_path, runGroupKindName(g.kind), g.name, q.lastError().text()));
    }
    const RunId id = q.lastInsertId().toLongLong();
    q.finish();
    if (id <= 0)
        return fail(QStringLiteral("%1: cannot create %2 group \"%3\": no id assigned")
                            .arg(m_path, runGroupKindName(g.kind), g.name));
    return id;
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::JoinGroup& op)
{
    auto joined = storeMembership(op.run, op.membership);
    if (!joined)
        return std::unexpected(joined.error());
    return changedIf(*joined, op.run);
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::UpdateRun& op)
{
    const RunRecord& r = op.run;
    QSqlQuery& q = *m_updateRun;
    const int i = bindMutableRunFields(q, r);
    q.bindValue(i, QVariant::fromValue<qint64>(r.id));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot update run %2: %3").arg(m_path).arg(r.id).arg(q.lastError().text()));
    if (q.numRowsAffected() <= 0)
        qCDebug(lcStoreWriter, "update of unknown run %lld ignored", static_cast<long long>(r.id));
    return changedIf(q.numRowsAffected() > 0, r.id);
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::AnnotateRun& op)
{
    using namespace sqlcodec;
    const RunAnnotation& a = op.annotation;
    QStringList sets;
    QVariantList binds;
    if (a.name) {
        sets << QStringLiteral("name = ?");
        binds << textToSql(*a.name);
    }
    if (a.notes) {
        sets << QStringLiteral("notes = ?");
        binds << textToSql(*a.notes);
    }
    if (a.archived) {
        sets << QStringLiteral("archived = ?");
        binds << QVariant(*a.archived ? 1 : 0);
    }
    // A no-op UPDATE when only the tags change: it says whether the run exists.
    if (sets.isEmpty())
        sets << QStringLiteral("id = id");
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("UPDATE runs SET %1 WHERE id = ?").arg(sets.join(QStringLiteral(", "))));
    for (const QVariant& b : std::as_const(binds))
        q.addBindValue(b);
    q.addBindValue(QVariant::fromValue<qint64>(op.run));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot change run %2: %3").arg(m_path).arg(op.run).arg(q.lastError().text()));
    if (q.numRowsAffected() <= 0)
        return std::nullopt;
    if (a.tags)
        if (auto t = replaceTags(op.run, *a.tags); !t)
            return std::unexpected(t.error());
    return op.run;
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::SetConsoleOffset& op)
{
    QSqlQuery& q = *m_setOffset;
    q.bindValue(0, QVariant::fromValue<qint64>(op.offset));
    q.bindValue(1, QVariant::fromValue<qint64>(op.run));
    if (!q.exec())
        return runFailure(op.run, QStringLiteral("cannot store the console offset"), q);
    return changedIf(q.numRowsAffected() > 0, op.run);
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::DeleteRun& op)
{
    QList<qint64> groups;
    QSqlQuery& g = *m_groupsOfRun;
    g.bindValue(0, QVariant::fromValue<qint64>(op.run));
    if (!g.exec())
        return runFailure(op.run, QStringLiteral("cannot read its groups"), g);
    while (g.next())
        groups.append(g.value(0).toLongLong());
    g.finish();
    QSqlQuery& q = *m_deleteRun;
    q.bindValue(0, QVariant::fromValue<qint64>(op.run));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot delete run %2: %3").arg(m_path).arg(op.run).arg(q.lastError().text()));
    for (qint64 group : std::as_const(groups)) {
        QSqlQuery& d = *m_dropEmptyGroup;
        for (int i = 0; i < 3; ++i)
            d.bindValue(i, QVariant::fromValue<qint64>(group));
        if (!d.exec())
            return runFailure(op.run, QStringLiteral("cannot remove its empty group %1").arg(group), d);
    }
    return op.run;
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::AddArtifact& op)
{
    const ArtifactRecord& a = op.artifact;
    QSqlQuery& q = *m_upsertArtifact;
    q.bindValue(0, QVariant::fromValue<qint64>(a.run));
    q.bindValue(1, sqlcodec::textToSql(a.path));
    q.bindValue(2, QVariant::fromValue<qint64>(a.size));
    q.bindValue(3, sqlcodec::textToSql(a.sha256));
    q.bindValue(4, sqlcodec::timeToSql(a.createdAt.isValid() ? a.createdAt : QDateTime::currentDateTimeUtc()));
    if (!q.exec()) {
        if (sqlitefile::isConstraint(q.lastError())) {
            qCDebug(lcStoreWriter, "artifact of unknown run %lld dropped", static_cast<long long>(a.run));
            return std::nullopt;
        }
        return runFailure(a.run, QStringLiteral("cannot record artifact %1").arg(a.path), q);
    }
    return a.run;
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::AddNotice& op)
{
    const RunNotice& n = op.notice;
    QSqlQuery& q = *m_insertNotice;
    q.bindValue(0, QVariant::fromValue<qint64>(n.run));
    q.bindValue(1, sqlcodec::timeToSql(n.at.isValid() ? n.at : QDateTime::currentDateTimeUtc()));
    q.bindValue(2, sqlcodec::textToSql(n.text));
    q.bindValue(3, QVariant::fromValue<qint64>(n.run));
    q.bindValue(4, sqlcodec::textToSql(n.text));
    if (!q.exec()) {
        if (sqlitefile::isConstraint(q.lastError())) {
            qCDebug(lcStoreWriter, "notice of unknown run %lld dropped", static_cast<long long>(n.run));
            return std::nullopt;
        }
        return runFailure(n.run, QStringLiteral("cannot record a notice"), q);
    }
    return changedIf(q.numRowsAffected() > 0, n.run);
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::SetParams& op)
{
    auto stored = storeParams(op.run, op.params);
    if (!stored)
        return std::unexpected(stored.error());
    return changedIf(*stored, op.run);
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::PutNode& op)
{
    const NodeRecord& n = op.node;
    QSqlQuery& q = *m_putNode;
    q.bindValue(0, sqlcodec::textToSql(n.name));
    q.bindValue(1, sqlcodec::textToSql(n.host));
    q.bindValue(2, sqlcodec::textToSql(n.user));
    q.bindValue(3, n.port);
    q.bindValue(4, sqlcodec::textToSql(n.identityFile));
    q.bindValue(5, sqlcodec::textToSql(n.agentPath));
    q.bindValue(6, sqlcodec::timeToSql(n.addedAt.isValid() ? n.addedAt : QDateTime::currentDateTimeUtc()));
    q.bindValue(
            7, QString::fromUtf8(QJsonDocument(QJsonArray::fromStringList(n.labels)).toJson(QJsonDocument::Compact)));
    q.bindValue(8, nodeKindName(n.kind));
    q.bindValue(9, sqlcodec::textToSql(n.facts));
    q.bindValue(10, n.nodeLostAfterSec ? QVariant::fromValue<qint64>(*n.nodeLostAfterSec) : QVariant());
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot store node %2: %3").arg(m_path, n.name, q.lastError().text()));
    return std::nullopt;
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::RemoveNode& op)
{
    QSqlQuery& q = *m_removeNode;
    q.bindValue(0, sqlcodec::textToSql(op.name));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot remove node %2: %3").arg(m_path, op.name, q.lastError().text()));
    return std::nullopt;
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::SetNodeFacts& op)
{
    QSqlQuery& q = *m_setNodeFacts;
    q.bindValue(0, sqlcodec::textToSql(op.facts));
    q.bindValue(1, sqlcodec::textToSql(op.name));
    if (!q.exec())
        return fail(
                QStringLiteral("%1: cannot store the facts of node %2: %3").arg(m_path, op.name, q.lastError().text()));
    return std::nullopt;
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::SetNodeLabels& op)
{
    const QString json
            = QString::fromUtf8(QJsonDocument(QJsonArray::fromStringList(op.labels)).toJson(QJsonDocument::Compact));
    QSqlQuery q(m_db);
    // Rare (trainyardctl node label): prepared when used, not with the others.
    if (op.name == u"local") {
        q.prepare(QStringLiteral("INSERT OR REPLACE INTO meta (key, value) VALUES ('local_node_labels', ?)"));
        q.bindValue(0, json);
    } else {
        q.prepare(QStringLiteral("UPDATE nodes SET labels = ? WHERE name = ?"));
        q.bindValue(0, json);
        q.bindValue(1, sqlcodec::textToSql(op.name));
    }
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot store the labels of node %2: %3")
                            .arg(m_path, op.name, q.lastError().text()));
    return std::nullopt;
}

Result<std::optional<RunId>> RecordWriter::apply(const storeop::PutPipeline& op)
{
    const PipelineRecord& p = op.pipeline;
    QSqlQuery& q = *m_putPipeline;
    q.bindValue(0, p.id);
    q.bindValue(1, sqlcodec::textToSql(p.name));
    q.bindValue(2, sqlcodec::textToSql(p.state));
    q.bindValue(3, sqlcodec::timeToSql(p.createdAt.isValid() ? p.createdAt : QDateTime::currentDateTimeUtc()));
    q.bindValue(4, p.endedAt.isValid() ? sqlcodec::timeToSql(p.endedAt) : QVariant());
    q.bindValue(5, sqlcodec::textToSql(p.document));
    if (!q.exec())
        return fail(QStringLiteral("%1: cannot store pipeline %2: %3").arg(m_path).arg(p.id).arg(q.lastError().text()));
    QSqlQuery& g = *m_putPipelineGroup;
    g.bindValue(0, p.id);
    g.bindValue(1, sqlcodec::textToSql(p.name));
    g.bindValue(2, sqlcodec::timeToSql(p.createdAt.isValid() ? p.createdAt : QDateTime::currentDateTimeUtc()));
    if (!g.exec())
        return fail(QStringLiteral("%1: cannot store the group of pipeline %2: %3")
                            .arg(m_path)
                            .arg(p.id)
                            .arg(g.lastError().text()));
    return std::nullopt;
}

} // namespace ty
