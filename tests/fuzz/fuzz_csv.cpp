// CsvMetricsReader: whole input vs random pieces, same samples/warnings/error.
#include "FuzzCommon.h"
#include "core/logs/importers/CsvMetricsReader.h"

#include <cstdint>

using namespace ty;

TRAINYARD_FUZZ_TARGET(csv)
{
    const QByteArrayView data(reinterpret_cast<const char*>(bytes), qsizetype(size));
    fuzz::checkSplitInvariant<CsvMetricsReader>(
            data, unsigned(size) * 7u, "CsvMetricsReader: split input gave a different result");
    return 0;
}
