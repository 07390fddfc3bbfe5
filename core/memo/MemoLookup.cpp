#include "MemoLookup.h"

#include <QDateTime>

namespace ty {

QString memoDurationText(qint64 ms)
{
    const qint64 s = ms / 1000;
    if (s >= 86400)
        return s % 86400 >= 3600 ? QStringLiteral("%1 d %2 h").arg(s / 86400).arg(s % 86400 / 3600)
                                 : QStringLiteral("%1 d").arg(s / 86400);
    if (s >= 3600)
        return s % 3600 >= 60 ? QStringLiteral("%1 h %2 min").arg(s / 3600).arg(s % 3600 / 60)
                              : QStringLiteral("%1 h").arg(s / 3600);
    if (s >= 60)
        return QStringLiteral("%1 min").arg(s / 60);
    return QStringLiteral("%1 s").arg(s);
}

MemoDecision decideMemo(const MemoLookupRequest& r)
{
    MemoDecision d;
    if (r.alwaysRun) {
        d.reasons << QStringLiteral("always_run is set");
        return d;
    }
    if (r.maxAgeMs) {
        const qint64 age = r.nowMs - r.createdMs;
        if (age >= *r.maxAgeMs) {
            d.reasons << QStringLiteral("entry expired: created %1 UTC, %2 old, max_age %3")
                                 .arg(QDateTime::fromMSecsSinceEpoch(r.createdMs, Qt::UTC).toString(Qt::ISODate),
                                         memoDurationText(age), memoDurationText(*r.maxAgeMs));
            d.evict = true;
            return d;
        }
    }
    for (const MemoOutput& o : r.outputs) {
        if (!r.currentOutput) {
            d.reasons << QStringLiteral("output %1 cannot be checked: no way to check outputs was given").arg(o.path);
            continue;
        }
        const auto now = r.currentOutput(o);
        if (!now) {
            d.reasons << QStringLiteral("output %1 cannot be checked: %2").arg(o.path, now.error().message);
        } else if (!*now) {
            d.reasons << QStringLiteral("output %1 missing").arg(o.path);
            d.evict = true;
        } else if ((*now)->sha256 != o.sha256 || (*now)->size != o.size) {
            d.reasons << QStringLiteral("output %1 changed").arg(o.path);
            d.evict = true;
        }
    }
    d.hit = d.reasons.isEmpty();
    return d;
}

} // namespace ty
