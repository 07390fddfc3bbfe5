#include "MemoWriter.h"

#include "SqlCodec.h"

#include <QDateTime>
#include <QSqlError>

namespace ty {

MemoWriter::MemoWriter(QString path)
    : m_path(std::move(path))
{ }

Result<void> MemoWriter::prepare(const QSqlDatabase& db)
{
    const std::pair<std::optional<QSqlQuery>*, const char*> statements[] = {
            {&m_deleteHits, "DELETE FROM memo_hits WHERE key = ?"},
            // An upsert, not INSERT OR REPLACE: REPLACE deletes the old row,
            // which a foreign key's cascade may or may not follow.
            {&m_upsertEntry,
                    "INSERT INTO memo_entries (key, pipeline, step, components, created_at, last_hit_at, hit_count,"
                    " run_id, outputs, output_params, output_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
                    " ON CONFLICT (key) DO UPDATE SET pipeline = excluded.pipeline, step = excluded.step,"
                    " components = excluded.components, created_at = excluded.created_at,"
                    " last_hit_at = excluded.last_hit_at, hit_count = excluded.hit_count, run_id = excluded.run_id,"
                    " outputs = excluded.outputs, output_params = excluded.output_params,"
                    " output_bytes = excluded.output_bytes"},
            {&m_countHit, "UPDATE memo_entries SET hit_count = hit_count + 1, last_hit_at = ? WHERE key = ?"},
            // Only for an entry still there (no foreign key failure, which
            // would roll back the whole batch).
            {&m_insertHit,
                    "INSERT INTO memo_hits (key, at, run_id, pipeline)"
                    " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memo_entries WHERE key = ?)"},
            {&m_deleteEntry, "DELETE FROM memo_entries WHERE key = ?"},
    };
    for (const auto& [query, sql] : statements) {
        query->emplace(db);
        if (!(*query)->prepare(QString::fromLatin1(sql)))
            return fail(QStringLiteral("%1: cannot prepare %2: %3")
                                .arg(m_path, QLatin1String(sql), (*query)->lastError().text()));
    }
    return {};
}

void MemoWriter::release()
{
    for (auto* q : {&m_deleteHits, &m_upsertEntry, &m_countHit, &m_insertHit, &m_deleteEntry})
        q->reset();
}

Result<void> MemoWriter::apply(const storeop::PutMemoEntry& op)
{
    const MemoEntryRecord& e = op.entry;
    auto failed = [&](const QSqlQuery& q) {
        return fail(QStringLiteral("%1: cannot store memo entry %2 (step %3): %4")
                            .arg(m_path, e.key, e.step, q.lastError().text()));
    };
    m_deleteHits->bindValue(0, e.key);
    if (!m_deleteHits->exec())
        return failed(*m_deleteHits);
    QSqlQuery& q = *m_upsertEntry;
    q.bindValue(0, e.key);
    q.bindValue(1, sqlcodec::textToSql(e.pipeline));
    q.bindValue(2, sqlcodec::textToSql(e.step));
    q.bindValue(3, sqlcodec::textToSql(e.components));
    q.bindValue(4, sqlcodec::timeToSql(e.createdAt.isValid() ? e.createdAt : QDateTime::currentDateTimeUtc()));
    q.bindValue(5, sqlcodec::timeToSql(e.lastHitAt));
    q.bindValue(6, e.hitCount);
    q.bindValue(7, qint64(e.run));
    q.bindValue(8, e.outputs.isEmpty() ? QStringLiteral("[]") : e.outputs);
    q.bindValue(9, e.outputParams.isEmpty() ? QStringLiteral("{}") : e.outputParams);
    q.bindValue(10, e.outputBytes);
    if (!q.exec())
        return failed(q);
    return {};
}

Result<void> MemoWriter::apply(const storeop::RecordMemoHit& op)
{
    const MemoHitRecord& h = op.hit;
    const QVariant at = sqlcodec::timeToSql(h.at.isValid() ? h.at : QDateTime::currentDateTimeUtc());
    auto failed = [&](const QSqlQuery& q) {
        return fail(QStringLiteral("%1: cannot record a hit of memo entry %2: %3")
                            .arg(m_path, h.key, q.lastError().text()));
    };
    m_countHit->bindValue(0, at);
    m_countHit->bindValue(1, h.key);
    if (!m_countHit->exec())
        return failed(*m_countHit);
    QSqlQuery& q = *m_insertHit;
    q.bindValue(0, h.key);
    q.bindValue(1, at);
    q.bindValue(2, qint64(h.run));
    q.bindValue(3, sqlcodec::textToSql(h.pipeline));
    q.bindValue(4, h.key);
    if (!q.exec())
        return failed(q);
    return {};
}

Result<void> MemoWriter::apply(const storeop::RemoveMemoEntries& op)
{
    for (const QString& key : op.keys) {
        // Hits go by the foreign key's cascade (memo_hits.key).
        m_deleteEntry->bindValue(0, key);
        if (!m_deleteEntry->exec())
            return fail(QStringLiteral("%1: cannot remove memo entry %2: %3")
                                .arg(m_path, key, m_deleteEntry->lastError().text()));
    }
    return {};
}

} // namespace ty
