#pragma once

// Console bytes compressed on the wire (app/agent/PROTOCOL.md, revision 8):
// a `tail` request with `"compress":"lz4"` lets the agent send an `output`
// frame's payload as one LZ4 block (the block format of lz4 1.9,
// lz4/doc/lz4_Block_format.md; liblz4 from Debian), the header's `lz4` field
// then giving the bytes it decompresses to. Each block stands alone (no
// dictionary from earlier frames), so a frame decodes on its own and a
// reconnecting client loses nothing. Written once for both sides: the agent
// compresses (its liblz4 linked statically), the core's AgentFrameDecoder
// decompresses.
//
// Why: over SSH every console byte is encrypted by sshd, decrypted and
// copied twice by libssh 0.10 (4 KiB per recv(), no API to change it); a
// training log compresses 5-10x with LZ4 at about 2.7 GB/s, so sending fewer
// bytes costs far less CPU than carrying them (tests/bench/RESULTS.md,
// bench_ssh v3). A local agent (a pipe) is never asked to compress.
//
// Standard C++ and liblz4 only (no Qt); no state; any thread.

#include <cstddef>
#include <string_view>

namespace ty::agentproto {

// The value of `tail`'s `compress` that asks for LZ4 blocks.
inline constexpr char kCompressLz4[] = "lz4";
// Chunks shorter than this go as they are: too little to gain.
inline constexpr std::size_t kMinCompressBytes = 512;
// The largest `lz4` (uncompressed bytes of one frame) a client accepts; the
// agent sends at most 256 KiB per frame. Larger is a protocol error, so a
// hostile header cannot make the client allocate more.
inline constexpr std::size_t kMaxDecompressedBytes = 16 * 1024 * 1024;

// Room compressConsoleBlock() needs for `srcSize` bytes (LZ4_compressBound).
std::size_t consoleBlockBound(std::size_t srcSize);

// Compresses `src` (1 to kMaxDecompressedBytes bytes) into `dst` and returns
// the block's size when that saves at least an eighth of `src`; 0 otherwise
// (then the bytes are better sent as they are, and `dst` holds nothing of
// use). `dst` has room for at least consoleBlockBound(src.size()) bytes.
std::size_t compressConsoleBlock(std::string_view src, char* dst);

// Decompresses the LZ4 block `src` into `dst`, which has room for exactly
// `rawSize` bytes. False when `src` is not a well-formed block that
// decompresses to exactly `rawSize` bytes (LZ4_decompress_safe: never writes
// past `dst + rawSize`, never reads past `src`).
bool decompressConsoleBlock(std::string_view src, char* dst, std::size_t rawSize);

} // namespace ty::agentproto
