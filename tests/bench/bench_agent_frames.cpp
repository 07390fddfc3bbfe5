// The agent protocol's framing alone, one thread (issue #23: the framer is on
// the console hot path). Two streams, built in memory before the clock starts:
//  - console: `output` frames of 256 KiB payload (the agent's chunk), as the
//    core receives them from a node, fed in 64 KiB reads (QByteArray each, as
//    a transport delivers them) to AgentFrameDecoder, and as bytes to the
//    agent's FrameReader;
//  - lines: header-only `reply`-sized lines (~90 bytes), fed the same way.
// Prints MiB/s (best of --rounds) and frames decoded, so before/after figures
// of a framer change can be compared on the same machine.
//
// Usage: bench_agent_frames [--mb N (256)] [--rounds R (5)]
#include "app/agent/Framing.h"
#include "core/nodes/AgentFrameDecoder.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr qsizetype kRead = 64 * 1024;

QByteArray consoleStream(qint64 bytes)
{
    QByteArray payload(256 * 1024, '\0');
    for (qsizetype i = 0; i < payload.size(); ++i)
        payload[i] = (i % 97 == 96) ? '\n' : char('a' + i % 26);
    QByteArray s;
    s.reserve(bytes + 1024);
    qint64 offset = 0;
    while (s.size() < bytes) {
        s += R"({"type":"output","run":"r1","offset":)" + QByteArray::number(offset) + R"(,"len":)"
                + QByteArray::number(payload.size()) + "}\n";
        s += payload;
        offset += payload.size();
    }
    return s;
}

QByteArray lineStream(qint64 bytes)
{
    QByteArray s;
    s.reserve(bytes + 1024);
    for (qint64 id = 0; s.size() < bytes; ++id)
        s += R"({"type":"reply","id":)" + QByteArray::number(id)
                + R"(,"ok":true,"time_ms":1764763200000,"run":"sweep-lr-0.001-bs-64"})"
                  "\n";
    return s;
}

QList<QByteArray> reads(const QByteArray& s)
{
    QList<QByteArray> out;
    for (qsizetype pos = 0; pos < s.size(); pos += kRead)
        out.append(s.mid(pos, kRead)); // a fresh buffer per read, as QIODevice::readAll gives
    return out;
}

double mibPerS(qint64 bytes, qint64 ns)
{
    return double(bytes) / (1024.0 * 1024.0) / (double(ns) / 1e9);
}

void benchCore(const char* name, const QByteArray& s, int rounds)
{
    double best = 0;
    qint64 frames = 0;
    for (int r = 0; r < rounds; ++r) {
        const QList<QByteArray> in = reads(s); // outside the clock
        QElapsedTimer t;
        t.start();
        ty::AgentFrameDecoder d;
        frames = 0;
        qint64 payloadBytes = 0;
        for (const QByteArray& b : in) {
            d.feed(b);
            while (auto f = d.next()) {
                ++frames;
                payloadBytes += f->payload.size();
            }
        }
        const qint64 ns = t.nsecsElapsed();
        if (d.hasError()) {
            std::fprintf(stderr, "error: %s\n", qPrintable(d.error()));
            return;
        }
        best = std::max(best, mibPerS(s.size(), ns));
        (void)payloadBytes;
    }
    std::printf("core  AgentFrameDecoder %-8s %8.0f MiB/s  (%lld frames, %lld MiB)\n", name, best, (long long)frames,
            (long long)(s.size() >> 20));
}

void benchAgent(const char* name, const QByteArray& s, int rounds)
{
    double best = 0;
    qint64 frames = 0;
    for (int r = 0; r < rounds; ++r) {
        QElapsedTimer t;
        t.start();
        ty::agent::FrameReader reader;
        frames = 0;
        for (qsizetype pos = 0; pos < s.size(); pos += kRead) {
            reader.append(s.constData() + pos, std::size_t(std::min(kRead, s.size() - pos)));
            while (auto f = reader.next())
                ++frames;
        }
        const qint64 ns = t.nsecsElapsed();
        if (!reader.error().empty()) {
            std::fprintf(stderr, "error: %s\n", reader.error().c_str());
            return;
        }
        best = std::max(best, mibPerS(s.size(), ns));
    }
    std::printf("agent FrameReader       %-8s %8.0f MiB/s  (%lld frames, %lld MiB)\n", name, best, (long long)frames,
            (long long)(s.size() >> 20));
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_agent_frames v1\n");
    std::fflush(stdout);
    qint64 mb = 256;
    int rounds = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--mb") == 0)
            mb = std::atoll(argv[i + 1]);
        else if (std::strcmp(argv[i], "--rounds") == 0)
            rounds = std::atoi(argv[i + 1]);
    }
    const QByteArray console = consoleStream(mb << 20);
    benchCore("console", console, rounds);
    benchAgent("console", console, rounds);
    const QByteArray lines = lineStream((mb / 8) << 20);
    benchCore("lines", lines, rounds);
    benchAgent("lines", lines, rounds);
    return 0;
}
