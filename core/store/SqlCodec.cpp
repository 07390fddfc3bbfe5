#include "SqlCodec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <cmath>
#include <limits>

namespace ty::sqlcodec {

QVariant timeToSql(const QDateTime& t)
{
    if (!t.isValid())
        return QVariant(QMetaType::fromType<qint64>());
    return QVariant::fromValue<qint64>(t.toMSecsSinceEpoch());
}

QDateTime timeFromSql(const QVariant& v)
{
    if (v.isNull())
        return {};
    return QDateTime::fromMSecsSinceEpoch(v.toLongLong(), Qt::UTC);
}

QVariant optionalIntToSql(const std::optional<int>& v)
{
    if (!v)
        return QVariant(QMetaType::fromType<int>());
    return QVariant(*v);
}

std::optional<int> optionalIntFromSql(const QVariant& v)
{
    if (v.isNull())
        return std::nullopt;
    return v.toInt();
}

QString intListToJson(const QList<int>& v)
{
    QJsonArray a;
    for (int i : v)
        a.append(i);
    return QString::fromUtf8(QJsonDocument(a).toJson(QJsonDocument::Compact));
}

QList<int> intListFromJson(const QString& json)
{
    QList<int> out;
    const QJsonArray a = QJsonDocument::fromJson(json.toUtf8()).array();
    out.reserve(a.size());
    for (const QJsonValue& x : a)
        out.append(x.toInt());
    return out;
}

QString stringListToJson(const QStringList& v)
{
    return QString::fromUtf8(QJsonDocument(QJsonArray::fromStringList(v)).toJson(QJsonDocument::Compact));
}

QStringList stringListFromJson(const QString& json)
{
    QStringList out;
    const QJsonArray a = QJsonDocument::fromJson(json.toUtf8()).array();
    out.reserve(a.size());
    for (const QJsonValue& x : a)
        out.append(x.toString());
    return out;
}

QString stringMapToJson(const QMap<QString, QString>& v)
{
    QJsonObject o;
    for (auto it = v.cbegin(); it != v.cend(); ++it)
        o.insert(it.key(), it.value());
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

QMap<QString, QString> stringMapFromJson(const QString& json)
{
    QMap<QString, QString> out;
    const QJsonObject o = QJsonDocument::fromJson(json.toUtf8()).object();
    for (auto it = o.constBegin(); it != o.constEnd(); ++it)
        out.insert(it.key(), it.value().toString());
    return out;
}

MetricKind metricKind(double value)
{
    if (std::isnan(value))
        return NaN;
    if (std::isinf(value))
        return value > 0 ? PosInf : NegInf;
    if (value == 0.0 && std::signbit(value))
        return NegZero;
    return Finite;
}

double metricFromSql(const QVariant& value, int kind)
{
    switch (kind) {
    case Finite: return value.toDouble();
    case PosInf: return std::numeric_limits<double>::infinity();
    case NegInf: return -std::numeric_limits<double>::infinity();
    case NegZero: return -0.0;
    case NaN:
    default: return std::numeric_limits<double>::quiet_NaN();
    }
}

QStringList normalizedTags(const QStringList& tags)
{
    QStringList out;
    QSet<QString> seen;
    for (const QString& t : tags) {
        if (seen.contains(t))
            continue;
        seen.insert(t);
        out.append(t);
    }
    return out;
}

} // namespace ty::sqlcodec
