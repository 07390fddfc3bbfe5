#include "Sweep.h"

#include <QLocale>
#include <QStringList>

namespace ty::sched {

QList<QVariantMap> expandSweep(const QVariantMap& base, const QMap<QString, QVariantList>& sweep)
{
    QList<QVariantMap> out;
    qsizetype total = 1;
    for (auto it = sweep.constBegin(); it != sweep.constEnd(); ++it)
        total *= it.value().size();
    if (total == 0)
        return out;
    out.reserve(total);
    const QList<QString> keys = sweep.keys();
    QList<qsizetype> digit(keys.size(), 0);
    for (qsizetype n = 0; n < total; ++n) {
        QVariantMap params = base;
        for (qsizetype k = 0; k < keys.size(); ++k)
            params.insert(keys[k], sweep[keys[k]][digit[k]]);
        out << params;
        // Odometer: the last key turns fastest.
        for (qsizetype k = keys.size() - 1; k >= 0; --k) {
            if (++digit[k] < sweep[keys[k]].size())
                break;
            digit[k] = 0;
        }
    }
    return out;
}

QString sweepLabel(const QVariantMap& params, const QMap<QString, QVariantList>& sweep)
{
    QStringList parts;
    for (auto it = sweep.constBegin(); it != sweep.constEnd(); ++it) {
        const QVariant v = params.value(it.key());
        // Doubles in their shortest round-trip form ("0.0001", not "1e-04").
        const QString text = v.typeId() == QMetaType::Double
            ? QString::number(v.toDouble(), 'f', QLocale::FloatingPointShortest)
            : v.toString();
        parts << it.key() + QLatin1Char('=') + text;
    }
    return parts.join(QLatin1Char(','));
}

} // namespace ty::sched
