// TensorBoardEventReader (TFRecord framing, CRC-32C, Event decoding): whole
// input vs random pieces must give the same samples and the same error; the
// raw input also goes through decodeTfEvent() as one Event.
#include "FuzzCommon.h"
#include "core/logs/importers/TensorBoardEventReader.h"
#include "core/logs/importers/TfEventDecoder.h"

#include <cstdint>

using namespace ty;

TRAINYARD_FUZZ_TARGET(tfevents)
{
    const QByteArrayView data(reinterpret_cast<const char*>(bytes), qsizetype(size));
    (void)decodeTfEvent(data);
    fuzz::checkSplitInvariant<TensorBoardEventReader>(
            data, unsigned(size), "TensorBoardEventReader: split input gave a different result", false);
    return 0;
}
