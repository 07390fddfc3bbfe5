#include "ConsoleCompression.h"

#include <lz4.h>

#include <climits>

namespace ty::agentproto {

std::size_t consoleBlockBound(std::size_t srcSize)
{
    return srcSize > kMaxDecompressedBytes ? 0 : std::size_t(LZ4_compressBound(int(srcSize)));
}

std::size_t compressConsoleBlock(std::string_view src, char* dst)
{
    if (src.empty() || src.size() > kMaxDecompressedBytes)
        return 0;
    const int srcSize = int(src.size());
    // Worth it only below 7/8 of the input: LZ4 gets that much room and
    // gives up (returns 0) as soon as the block would not fit.
    const int n = LZ4_compress_default(src.data(), dst, srcSize, srcSize - srcSize / 8);
    return n > 0 ? std::size_t(n) : 0;
}

bool decompressConsoleBlock(std::string_view src, char* dst, std::size_t rawSize)
{
    if (rawSize == 0 || rawSize > kMaxDecompressedBytes || src.empty() || src.size() > std::size_t(INT_MAX))
        return false;
    const int n = LZ4_decompress_safe(src.data(), dst, int(src.size()), int(rawSize));
    return n >= 0 && std::size_t(n) == rawSize;
}

} // namespace ty::agentproto
