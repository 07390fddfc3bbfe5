#include "CompareData.h"

#include <QSet>

#include <algorithm>
#include <cmath>

namespace ty {

QStringList CompareData::keys() const
{
    QSet<QString> set;
    for (const CompareRun& r : runs)
        for (auto it = r.metrics.cbegin(); it != r.metrics.cend(); ++it)
            set.insert(it.key());
    QStringList out(set.cbegin(), set.cend());
    std::sort(out.begin(), out.end());
    return out;
}

bool lowerIsBetter(const QString& key)
{
    return key.contains(QLatin1String("loss"), Qt::CaseInsensitive)
            || key.contains(QLatin1String("error"), Qt::CaseInsensitive)
            || key.contains(QLatin1String("perplexity"), Qt::CaseInsensitive);
}

MetricSummary summarise(const std::vector<double>& step, const std::vector<double>& value, bool lower)
{
    MetricSummary s;
    s.count = qsizetype(value.size());
    if (value.empty())
        return s;
    s.last = value.back();
    s.lastStep = qint64(step.back());
    for (std::size_t i = 0; i < value.size(); ++i) {
        const double v = value[i];
        if (!std::isfinite(v))
            continue;
        if (!s.haveBest || (lower ? v < s.best : v > s.best)) {
            s.best = v;
            s.bestStep = qint64(step[i]);
            s.haveBest = true;
        }
    }
    return s;
}

} // namespace ty
