#pragma once

#include <QDateTime>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <optional>

// How Trainyard values map to portable SQL column values (shared by every
// backend; see the column conventions in SqliteSchema.cpp).
namespace ty::sqlcodec {

// Text: never NULL (QtSql binds a null QString as NULL); "" instead.
inline QVariant textToSql(const QString& s)
{
    return s.isNull() ? QVariant(QString::fromLatin1("")) : QVariant(s);
}

// Time: INTEGER ms since the Unix epoch, UTC; NULL for an invalid QDateTime.
QVariant timeToSql(const QDateTime& t);
// Back to a QDateTime with timeSpec() == Qt::UTC; invalid for NULL.
QDateTime timeFromSql(const QVariant& v);

QVariant optionalIntToSql(const std::optional<int>& v);
std::optional<int> optionalIntFromSql(const QVariant& v);

// JSON texts: gpus "[0,1]", argv "[\"python3\",\"x.py\"]", env {"K":"V"}.
QString intListToJson(const QList<int>& v);
QList<int> intListFromJson(const QString& json);
QString stringListToJson(const QStringList& v);
QStringList stringListFromJson(const QString& json);
QString stringMapToJson(const QMap<QString, QString>& v);
QMap<QString, QString> stringMapFromJson(const QString& json);

// Metric values: (value, kind) columns. kind 0 = finite, value holds it;
// 1 = NaN, 2 = +inf, 3 = -inf, 4 = -0.0 (value NULL for 1-3, 0.0 for 4).
// SQLite turns NaN into NULL and stores integral REALs as integers (losing the
// sign of -0.0), hence the explicit kind.
enum MetricKind : int { Finite = 0, NaN = 1, PosInf = 2, NegInf = 3, NegZero = 4 };
MetricKind metricKind(double value);
// The value to store in the REAL column; meaningful only when hasSqlValue(kind).
inline bool metricHasSqlValue(MetricKind kind)
{
    return kind == Finite || kind == NegZero;
}
inline double metricSqlValue(double value, MetricKind kind)
{
    return kind == NegZero ? 0.0 : value;
}
// Decodes the stored pair; an unknown kind reads as NaN.
double metricFromSql(const QVariant& value, int kind);

// Tags as stored: duplicates removed (first occurrence kept), order preserved.
QStringList normalizedTags(const QStringList& tags);

} // namespace ty::sqlcodec
