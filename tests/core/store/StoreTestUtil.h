#pragma once

#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QVariant>

namespace ty::test {

// A plain QSQLITE connection of the test's own, for looking at (or preparing)
// a database file behind the store's back. Closed and removed on destruction.
class RawDb final {
public:
    explicit RawDb(const QString& path, bool readOnly = false);
    ~RawDb();
    Q_DISABLE_COPY_MOVE(RawDb)

    bool isOpen() const { return m_db.isOpen(); }
    QString error() const;
    // Executes one statement; QFAIL-style: returns false and records lastError().
    bool exec(const QString& sql);
    // First column of the first row of `sql` (invalid QVariant on error / no row).
    QVariant scalar(const QString& sql);
    // Every row of `sql`, columns joined with '|'.
    QStringList rows(const QString& sql);
    QSqlDatabase& db() { return m_db; }

private:
    QString m_name;
    QSqlDatabase m_db;
    QString m_lastError;
};

// Structure of a database (tables, columns with types, NOT NULL, defaults and
// primary key positions, foreign keys with their actions, indexes with their
// columns, WITHOUT ROWID), one line per fact, sorted; independent of how the
// CREATE statements were formatted.
QStringList schemaFingerprint(const QString& path);

} // namespace ty::test
