// JSON importers: parseLenientJson, importTrainerState, and JsonLinesReader
// (whole input vs random pieces, same samples/warnings/error).
#include "FuzzCommon.h"
#include "logs/importers/JsonLinesReader.h"
#include "logs/importers/LenientJson.h"
#include "logs/importers/TrainerStateImporter.h"

#include <cstdint>

using namespace ty;

namespace {

QList<ImportedMetric> readAll(const QList<QByteArrayView>& parts, QString& error, qint64& consumed, qint64& warnings)
{
    JsonLinesReader r;
    QList<ImportedMetric> out;
    for (QByteArrayView p : parts) {
        r.feed(p);
        out += r.takeMetrics();
    }
    r.finish();
    out += r.takeMetrics();
    error = r.error();
    consumed = r.consumedOffset();
    warnings = r.warningCount();
    return out;
}

} // namespace

TRAINYARD_FUZZ_TARGET(json)
{
    const QByteArrayView data(reinterpret_cast<const char*>(bytes), qsizetype(size));
    (void)parseLenientJson(data);
    (void)importTrainerState(data, qsizetype(size % 3));
    (void)parseMetricNumber(data);
    QString e1, e2;
    qint64 c1 = 0, c2 = 0, w1 = 0, w2 = 0;
    const QList<ImportedMetric> whole = readAll({data}, e1, c1, w1);
    const QList<ImportedMetric> split = readAll(fuzz::pieces(data, unsigned(size) * 13u), e2, c2, w2);
    if (!fuzz::sameMetrics(whole, split) || e1 != e2 || c1 != c2 || w1 != w2)
        fuzz::invariantBroken("JsonLinesReader: split input gave a different result");
    return 0;
}
