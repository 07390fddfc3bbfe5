#pragma once

// Helpers shared by the metric importer tests.

#include "core/logs/importers/ImportedMetric.h"
#include "core/logs/importers/MetricStreamReader.h"

#include <QByteArrayView>
#include <QList>
#include <QMap>
#include <QString>

namespace ty::test {

// Feeds `bytes` to `reader` in pieces of `chunk` bytes, then finish(); every
// sample taken along the way, in order.
inline QList<ImportedMetric> readInChunks(MetricStreamReader& reader, QByteArrayView bytes, qsizetype chunk)
{
    QList<ImportedMetric> out;
    for (qsizetype pos = 0; pos < bytes.size(); pos += chunk) {
        reader.feed(bytes.sliced(pos, qMin(chunk, bytes.size() - pos)));
        out += reader.takeMetrics();
    }
    reader.finish();
    out += reader.takeMetrics();
    return out;
}

// The samples grouped per key, each group in reading order.
inline QMap<QString, QList<ImportedMetric>> byKey(const QList<ImportedMetric>& metrics)
{
    QMap<QString, QList<ImportedMetric>> out;
    for (const ImportedMetric& m : metrics)
        out[m.key].append(m);
    return out;
}

} // namespace ty::test
