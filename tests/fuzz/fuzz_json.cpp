// JSON importers: parseLenientJson, importTrainerState, and JsonLinesReader
// (whole input vs random pieces, same samples/warnings/error).
#include "FuzzCommon.h"
#include "core/logs/importers/JsonLinesReader.h"
#include "core/logs/importers/LenientJson.h"
#include "core/logs/importers/TrainerStateImporter.h"

#include <cstdint>

using namespace ty;

TRAINYARD_FUZZ_TARGET(json)
{
    const QByteArrayView data(reinterpret_cast<const char*>(bytes), qsizetype(size));
    (void)parseLenientJson(data);
    (void)importTrainerState(data, qsizetype(size % 3));
    (void)parseMetricNumber(data);
    fuzz::checkSplitInvariant<JsonLinesReader>(
            data, unsigned(size) * 13u, "JsonLinesReader: split input gave a different result");
    return 0;
}
