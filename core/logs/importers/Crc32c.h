#pragma once

#include <QByteArrayView>
#include <QtGlobal>

namespace ty {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, init and final XOR
// 0xFFFFFFFF; RFC 3720 appendix B.4), table-driven, byte at a time.
// crc32c("123456789") == 0xE3069283.
quint32 crc32c(QByteArrayView data);
// Continues a CRC: crc32c(a+b) == crc32c(b, crc32c(a)).
quint32 crc32c(QByteArrayView data, quint32 previous);

// TFRecord's masked CRC (tensorflow/core/lib/hash/crc32c.h, Mask()):
// rotate right by 15 bits, then add 0xA282EAD8 (mod 2^32).
constexpr quint32 maskCrc32c(quint32 crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

} // namespace ty
