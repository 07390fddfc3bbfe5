#include "RetryPolicy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ty {

QList<RetryClass> defaultRetryOn()
{
    return {RetryClass::Failed, RetryClass::Signal, RetryClass::Oom, RetryClass::CudaOom, RetryClass::Nccl,
            RetryClass::Timeout, RetryClass::NodeLost, RetryClass::Preempted};
}

RetryPolicy RetryPolicy::none()
{
    RetryPolicy p;
    p.limit = 0;
    p.infraLimit = 0;
    return p;
}

bool RetryPolicy::covers(RetryClass cls) const
{
    if (isNeverRetried(cls))
        return false;
    if (isInfraRetryClass(cls))
        return true;
    return on.contains(cls) || (cls == RetryClass::CudaOom && on.contains(RetryClass::Oom));
}

qint64 backoffWaitMs(const RetryBackoff& backoff, int n)
{
    const double duration = double(std::max<qint64>(0, backoff.durationMs));
    const double cap = double(std::max<qint64>(0, backoff.maxMs));
    const double factor = std::isfinite(backoff.factor) ? std::max(1.0, backoff.factor) : 1.0;
    // pow() of a large n is inf, never undefined; the cap brings it back.
    const double wait = duration * std::pow(factor, double(std::max(1, n) - 1));
    return qint64(std::llround(std::min(wait, cap)));
}

qint64 jitteredWaitMs(qint64 waitMs, double jitter, double sample)
{
    const double j = std::isnan(jitter) ? 0.0 : std::clamp(jitter, 0.0, 1.0);
    const double s = std::isnan(sample) ? 0.0 : std::clamp(sample, -1.0, 1.0);
    const double wait = double(std::max<qint64>(0, waitMs)) * (1.0 + j * s);
    // Twice the largest cap a spec can write fits a qint64 many times over;
    // this only guards a caller's own absurd value.
    constexpr double kMax = double(std::numeric_limits<qint64>::max() / 2);
    return qint64(std::llround(std::clamp(wait, 0.0, kMax)));
}

QString retryDurationText(qint64 ms)
{
    if (ms < 0)
        return QStringLiteral("-") + retryDurationText(-ms);
    const qint64 sec = ms / 1000, frac = ms % 1000;
    const qint64 d = sec / 86400, h = (sec % 86400) / 3600, m = (sec % 3600) / 60, s = sec % 60;
    QString out;
    if (d)
        out += QStringLiteral("%1d").arg(d);
    if (h)
        out += QStringLiteral("%1h").arg(h);
    if (m)
        out += QStringLiteral("%1m").arg(m);
    if (frac) {
        QString decimals = QStringLiteral("%1").arg(frac, 3, 10, QLatin1Char('0'));
        while (decimals.endsWith(u'0'))
            decimals.chop(1);
        out += QStringLiteral("%1.%2s").arg(s).arg(decimals);
    } else if (s || out.isEmpty()) {
        out += QStringLiteral("%1s").arg(s);
    }
    return out;
}

} // namespace ty
