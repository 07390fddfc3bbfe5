#include "HoverReadout.h"

#include <algorithm>
#include <cmath>

namespace ty {

qsizetype indexAtOrBefore(std::span<const double> xs, double at)
{
    if (xs.empty() || std::isnan(at))
        return -1;
    const auto it = std::upper_bound(xs.begin(), xs.end(), at);
    return qsizetype(it - xs.begin()) - 1;
}

QString formatHoverValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 6);
}

} // namespace ty
