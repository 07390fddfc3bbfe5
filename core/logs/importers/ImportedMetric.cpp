#include "ImportedMetric.h"

namespace ty {

QList<MetricPoint> toMetricPoints(const QList<ImportedMetric>& metrics, RunId run, qint64 fallbackWallTimeMs)
{
    QList<MetricPoint> out;
    out.reserve(metrics.size());
    for (const ImportedMetric& m : metrics) {
        MetricPoint p;
        p.run = run;
        p.key = m.key;
        p.step = m.step;
        p.epoch = m.epoch;
        p.wallTimeMs = m.wallTimeMs.value_or(fallbackWallTimeMs);
        p.value = m.value;
        p.source = MetricSource::File;
        out.append(std::move(p));
    }
    return out;
}

} // namespace ty
