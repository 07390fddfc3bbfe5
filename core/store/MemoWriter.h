#pragma once

#include "StoreWriteOp.h"
#include "core/common/Result.h"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>

#include <optional>

namespace ty {

// The memo half of SqliteWriter's SQL: memoized steps' entries and hits
// (schema 11: memo_entries, memo_hits; MemoRecord.h). Like RecordWriter:
// statements prepared once on the writer connection, never a transaction of
// its own (SqliteWriter's batch holds it), no run changed (memo rows are not
// runs: no run_changes mark, no runsChanged).
//
// Shapes: times as SqlCodec writes them (UTC ms); a record without a time gets
// the current one. A hit on an unknown key and the removal of an unknown key
// change nothing and are not errors (a batch must not fail, rolling back other
// writes, because an entry was evicted meanwhile).
//
// Thread affinity: the writer thread only. Errors: SQLite's words with the
// path and the key; the batch is then rolled back.
class MemoWriter final {
    Q_DISABLE_COPY_MOVE(MemoWriter)

public:
    explicit MemoWriter(QString path);

    Result<void> prepare(const QSqlDatabase& db);
    void release();

    Result<void> apply(const storeop::PutMemoEntry& op);
    Result<void> apply(const storeop::RecordMemoHit& op);
    Result<void> apply(const storeop::RemoveMemoEntries& op);

private:
    const QString m_path;
    std::optional<QSqlQuery> m_deleteHits, m_upsertEntry, m_countHit, m_insertHit, m_deleteEntry;
};

} // namespace ty
