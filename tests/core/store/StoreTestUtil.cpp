#include "StoreTestUtil.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>

#include <atomic>

namespace ty::test {

namespace {
std::atomic<int> g_serial{0};
}

RawDb::RawDb(const QString& path, bool readOnly)
    : m_name(QStringLiteral("test-raw-%1").arg(++g_serial))
{
    m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
    m_db.setDatabaseName(path);
    if (readOnly)
        m_db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
    if (!m_db.open())
        m_lastError = m_db.lastError().text();
    m_db.setNumericalPrecisionPolicy(QSql::LowPrecisionDouble);
}

RawDb::~RawDb()
{
    m_db.close();
    m_db = QSqlDatabase();
    QSqlDatabase::removeDatabase(m_name);
}

QString RawDb::error() const
{
    return m_lastError;
}

bool RawDb::exec(const QString& sql)
{
    QSqlQuery q(m_db);
    if (!q.exec(sql)) {
        m_lastError = q.lastError().text() + QStringLiteral(" in: ") + sql;
        return false;
    }
    return true;
}

QVariant RawDb::scalar(const QString& sql)
{
    QSqlQuery q(m_db);
    if (!q.exec(sql)) {
        m_lastError = q.lastError().text() + QStringLiteral(" in: ") + sql;
        return {};
    }
    if (!q.next())
        return {};
    return q.value(0);
}

QStringList RawDb::rows(const QString& sql)
{
    QStringList out;
    QSqlQuery q(m_db);
    if (!q.exec(sql)) {
        m_lastError = q.lastError().text() + QStringLiteral(" in: ") + sql;
        return out;
    }
    while (q.next()) {
        QStringList cols;
        for (int i = 0; i < q.record().count(); ++i)
            cols << (q.value(i).isNull() ? QStringLiteral("NULL") : q.value(i).toString());
        out << cols.join(QLatin1Char('|'));
    }
    return out;
}

QStringList schemaFingerprint(const QString& path)
{
    RawDb raw(path, /*readOnly=*/true);
    QStringList out;
    const QStringList tables
            = raw.rows(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"));
    for (const QString& t : tables) {
        const QString sql
                = raw.scalar(QStringLiteral("SELECT sql FROM sqlite_master WHERE name = '%1'").arg(t)).toString();
        out << QStringLiteral("table %1%2")
                        .arg(t,
                                sql.contains(QLatin1String("WITHOUT ROWID")) ? QStringLiteral(" without-rowid")
                                                                             : QString());
        for (const QString& c :
                raw.rows(QStringLiteral("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('%1')")
                                 .arg(t)))
            out << QStringLiteral("column %1 %2").arg(t, c);
        for (const QString& f : raw.rows(QStringLiteral(
                     "SELECT \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list('%1')")
                                                 .arg(t)))
            out << QStringLiteral("fk %1 %2").arg(t, f);
        for (const QString& i : raw.rows(
                     QStringLiteral("SELECT name, \"unique\", origin, partial FROM pragma_index_list('%1')").arg(t))) {
            const QString name = i.section(QLatin1Char('|'), 0, 0);
            const QString cols
                    = raw.rows(QStringLiteral("SELECT name FROM pragma_index_info('%1') ORDER BY seqno").arg(name))
                              .join(QLatin1Char(','));
            // Auto-index names (sqlite_autoindex_t_N) depend on creation order only.
            out << QStringLiteral("index %1 %2 (%3)").arg(t, i, cols);
        }
    }
    out.sort();
    return out;
}

} // namespace ty::test
