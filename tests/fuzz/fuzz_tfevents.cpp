// TensorBoardEventReader (TFRecord framing, CRC-32C, Event decoding): whole
// input vs random pieces must give the same samples and the same error; the
// raw input also goes through decodeTfEvent() as one Event.
#include "FuzzCommon.h"
#include "logs/importers/TensorBoardEventReader.h"
#include "logs/importers/TfEventDecoder.h"

#include <cstdint>

using namespace ty;

namespace {

QList<ImportedMetric> readAll(const QList<QByteArrayView>& parts, QString& error, qint64& consumed)
{
    TensorBoardEventReader r;
    QList<ImportedMetric> out;
    for (QByteArrayView p : parts) {
        r.feed(p);
        out += r.takeMetrics();
    }
    r.finish();
    out += r.takeMetrics();
    error = r.error();
    consumed = r.consumedOffset();
    return out;
}

} // namespace

TRAINYARD_FUZZ_TARGET(tfevents)
{
    const QByteArrayView data(reinterpret_cast<const char*>(bytes), qsizetype(size));
    (void)decodeTfEvent(data);
    QString e1, e2;
    qint64 c1 = 0, c2 = 0;
    const QList<ImportedMetric> whole = readAll({data}, e1, c1);
    const QList<ImportedMetric> split = readAll(fuzz::pieces(data, unsigned(size)), e2, c2);
    if (!fuzz::sameMetrics(whole, split) || e1 != e2 || c1 != c2)
        fuzz::invariantBroken("TensorBoardEventReader: split input gave a different result");
    if (c1 > qint64(size))
        fuzz::invariantBroken("TensorBoardEventReader: consumed more than was fed");
    return 0;
}
