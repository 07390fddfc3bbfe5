#include "Crc32c.h"

#include <array>

namespace ty {

namespace {

constexpr std::array<quint32, 256> makeTable()
{
    std::array<quint32, 256> t{};
    for (quint32 i = 0; i < 256; ++i) {
        quint32 c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        t[i] = c;
    }
    return t;
}

constexpr std::array<quint32, 256> kTable = makeTable();

} // namespace

quint32 crc32c(QByteArrayView data, quint32 previous)
{
    quint32 c = ~previous;
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    for (qsizetype i = 0, n = data.size(); i < n; ++i)
        c = kTable[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    return ~c;
}

quint32 crc32c(QByteArrayView data)
{
    return crc32c(data, 0);
}

} // namespace ty
