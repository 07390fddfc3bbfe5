#pragma once

// Shared by the libFuzzer targets in tests/fuzz (built by run.sh, not by CMake).
// A target aborts (= a crash libFuzzer keeps) when a documented invariant
// breaks, e.g. "any split of the input over feed() calls gives the same result".

#include "core/logs/importers/ImportedMetric.h"
#include "core/logs/importers/MetricStreamReader.h"

#include <QByteArrayView>
#include <QList>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

// Each target is `TRAINYARD_FUZZ_TARGET(name) { ... }`: libFuzzer's entry point
// in run.sh's build, `fuzz_<name>()` in the regression test
// (tests/core/logs/TestFuzzRegressions.cpp), which replays
// tests/data/fuzz-regressions/<name>/* through the same code.
#ifdef TRAINYARD_FUZZ_REGRESSION
#define TRAINYARD_FUZZ_TARGET(name) int fuzz_##name(const uint8_t* bytes, size_t size)
#else
#define TRAINYARD_FUZZ_TARGET(name) extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size)
#endif

namespace fuzz {

// Splits `data` into pieces whose sizes are drawn from `seed` (deterministic).
inline QList<QByteArrayView> pieces(QByteArrayView data, unsigned seed)
{
    QList<QByteArrayView> out;
    qsizetype pos = 0;
    unsigned s = seed * 2654435761u + 1;
    while (pos < data.size()) {
        s = s * 1103515245u + 12345u;
        const qsizetype n = qMin<qsizetype>(data.size() - pos, 1 + qsizetype((s >> 16) % 97));
        out.append(data.sliced(pos, n));
        pos += n;
    }
    return out;
}

// Aborts under libFuzzer (a crash it keeps); throws in the regression test.
[[noreturn]] inline void invariantBroken(const char* what)
{
#ifdef TRAINYARD_FUZZ_REGRESSION
    throw std::runtime_error(what);
#else
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
#endif
}

inline bool sameValue(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

inline bool sameMetrics(const QList<ty::ImportedMetric>& a, const QList<ty::ImportedMetric>& b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
        const auto& x = a[i];
        const auto& y = b[i];
        if (x.key != y.key || x.step != y.step || x.wallTimeMs != y.wallTimeMs || !sameValue(x.value, y.value)
                || x.epoch.has_value() != y.epoch.has_value() || (x.epoch && !sameValue(*x.epoch, *y.epoch)))
            return false;
    }
    return true;
}

// The documented invariant of every MetricStreamReader: feeding `data` whole
// or in pieces (sizes drawn from `seed`) gives the same samples, the same
// error and consumed offset and, when `compareWarnings`, the same warning
// count; and it never consumes more than it was fed. Aborts (invariantBroken)
// naming `what` otherwise.
template <typename Reader>
void checkSplitInvariant(QByteArrayView data, unsigned seed, const char* what, bool compareWarnings = true)
{
    struct Outcome {
        QList<ty::ImportedMetric> metrics;
        QString error;
        qint64 consumed = 0;
        qint64 warnings = 0;
    };
    const auto readAll = [](const QList<QByteArrayView>& parts) {
        Reader r;
        Outcome o;
        for (QByteArrayView p : parts) {
            r.feed(p);
            o.metrics += r.takeMetrics();
        }
        r.finish();
        o.metrics += r.takeMetrics();
        o.error = r.error();
        o.consumed = r.consumedOffset();
        o.warnings = r.warningCount();
        return o;
    };
    const Outcome whole = readAll({data});
    const Outcome split = readAll(pieces(data, seed));
    if (!sameMetrics(whole.metrics, split.metrics) || whole.error != split.error || whole.consumed != split.consumed
            || (compareWarnings && whole.warnings != split.warnings))
        invariantBroken(what);
    if (whole.consumed > data.size())
        invariantBroken("a reader consumed more bytes than it was fed");
}

} // namespace fuzz
