#include "FailureDetector.h"

#include <QRegularExpression>

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ty {

namespace {

constexpr qsizetype kMaxReason = 200;

QString shorten(QStringView s)
{
    s = s.trimmed();
    if (s.size() <= kMaxReason)
        return s.toString();
    return s.left(kMaxReason - 1).toString() + QChar(0x2026);
}

// "torch.OutOfMemoryError: CUDA out of memory..." -> "torch.OutOfMemoryError"
QString exceptionType(QStringView line)
{
    static const QRegularExpression re(QStringLiteral(
            R"(^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning|Failure|Fault|Timeout|[A-Z]\w*))(?::|$))"));
    const QRegularExpressionMatch m = re.match(line.trimmed());
    return m.hasMatch() ? m.captured(1) : QString();
}

// Whether `line` holds `needle` (at least two units), found through its two
// units at `anchor`, `anchor + 1` (the last two if `anchor` is the last):
// SSE2 compares eight places a step for both units at once, and only a
// place where both match is compared whole. A pair is rare even where
// single characters are not: on lines of random base64 (hashes, encoded
// blobs) the old search for one character, Qt 6.4's indexOf(QChar) through
// findString and qustrchr, ran about 13 times a line at ~130 instructions a
// call (callgrind, bench_ingest) and made the detector 55 % of ingestion.
bool containsVia(QStringView line, QStringView needle, qsizetype anchor)
{
    const qsizetype m = needle.size();
    const qsizetype n = line.size();
    if (m < 2 || n < m)
        return false;
    const qsizetype p = std::min(anchor, m - 2); // the pair: needle[p], needle[p + 1]
    const char16_t* const units = line.utf16();
    const char16_t* const want = needle.utf16();
    const auto matchesAt = [&](qsizetype at) { // the pair found at `at`: the needle starts at at - p
        const qsizetype start = at - p;
        return start >= 0 && start + m <= n && std::equal(want, want + m, units + start);
    };
    // Places where the pair can start: [p, last].
    const qsizetype last = n - m + p;
    qsizetype i = p;
#if defined(__SSE2__)
    const __m128i c0 = _mm_set1_epi16(short(want[p]));
    const __m128i c1 = _mm_set1_epi16(short(want[p + 1]));
    for (; i + 8 <= last + 1; i += 8) { // units [i, i + 9) are in the line: i + 8 <= last + 1 <= n - 1
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(units + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(units + i + 1));
        unsigned hits = unsigned(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi16(a, c0), _mm_cmpeq_epi16(b, c1))));
        while (hits != 0) {
            const int bitIndex = __builtin_ctz(hits);
            if (matchesAt(i + bitIndex / 2))
                return true;
            hits &= ~(3u << bitIndex); // both bytes of that unit
        }
    }
#endif
    for (; i <= last; ++i)
        if (units[i] == want[p] && units[i + 1] == want[p + 1] && matchesAt(i))
            return true;
    return false;
}

// Every line of every run goes through these: each starts with a cheap
// substring test that every pattern needs, so the usual line costs one or
// two memchr-speed scans instead of five searches and two regex matches.
bool isCudaOom(QStringView line)
{
    if (!containsVia(line, u"emory", 4) && !containsVia(line, u"CUBLAS", 2))
        return false; // each pattern below holds one of them
    return line.contains(u"CUDA out of memory") || line.contains(u"OutOfMemoryError")
            || line.contains(u"CUBLAS_STATUS_ALLOC_FAILED") || line.contains(u"cudaErrorMemoryAllocation")
            || line.contains(u"CUDA error: out of memory");
}

bool isNccl(QStringView line)
{
    static const QRegularExpression re(QStringLiteral(
            R"(NCCL error|ncclInternalError|ncclSystemError|ncclUnhandledCudaError|ncclInvalidUsage|ncclRemoteError|NCCL WARN|ProcessGroupNCCL.*(?:[Tt]imeout|[Ee]rror|[Ww]atchdog)|DistBackendError)"));
    if (!containsVia(line, u"NCCL", 0) && !containsVia(line, u"nccl", 3) && !containsVia(line, u"DistBackendError", 4))
        return false; // every alternative holds one of them
    return re.match(line).hasMatch();
}

bool isKilled(QStringView line)
{
    // "Killed", "bash: line 1: 1234 Killed  python train.py", "/bin/sh: 1: Killed"
    static const QRegularExpression re(QStringLiteral(R"(^\s*Killed\s*$|(?::\s|\d\s+)Killed(?:\s|$))"));
    if (!containsVia(line, u"Killed", 0))
        return false;
    return re.match(line).hasMatch();
}

// Which of the pairs of units that containsVia() looks for a line holds, one
// bit each, in one pass: every pattern above holds one (each CUDA OOM one
// "ry" or "BL", each NCCL one "NC", "cl" or "Ba", Killed "Ki"), so a line
// without its pairs is ruled out before any search, and the searches run
// only on the rare line with one. SSE2, eight places a step for all six
// pairs; on lines of random base64, where the capitals a line holds (the
// filter this replaces) ruled out nothing, about 5x fewer instructions.
enum PatternPair : quint32 {
    kRy = 1u << 0, // "emory"
    kBL = 1u << 1, // "CUBLAS"
    kNC = 1u << 2, // "NCCL"
    kCl = 1u << 3, // "nccl"
    kBa = 1u << 4, // "DistBackendError"
    kKi = 1u << 5, // "Killed"
};
constexpr char16_t kPairs[6][2] = {{u'r', u'y'}, {u'B', u'L'}, {u'N', u'C'}, {u'c', u'l'}, {u'B', u'a'}, {u'K', u'i'}};
constexpr quint32 kCudaOomPairs = kRy | kBL;
constexpr quint32 kNcclPairs = kNC | kCl | kBa;
constexpr quint32 kKilledPairs = kKi;

quint32 patternPairs(QStringView line)
{
    const char16_t* const units = line.utf16();
    const qsizetype n = line.size();
    quint32 mask = 0;
    qsizetype i = 0;
#if defined(__SSE2__)
    if (n >= 9) {
        __m128i first[6], second[6], seen[6];
        for (int k = 0; k < 6; ++k) {
            first[k] = _mm_set1_epi16(short(kPairs[k][0]));
            second[k] = _mm_set1_epi16(short(kPairs[k][1]));
            seen[k] = _mm_setzero_si128();
        }
        // Places [i, i + 8) start a pair whose second unit is in the line.
        const auto scan = [&](qsizetype at) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(units + at));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(units + at + 1));
            for (int k = 0; k < 6; ++k)
                seen[k] = _mm_or_si128(
                        seen[k], _mm_and_si128(_mm_cmpeq_epi16(a, first[k]), _mm_cmpeq_epi16(b, second[k])));
        };
        for (; i + 9 <= n; i += 8)
            scan(i);
        if (i < n - 1)
            scan(n - 9); // the last places, read again (an OR: seen twice counts once)
        for (int k = 0; k < 6; ++k)
            if (_mm_movemask_epi8(seen[k]) != 0)
                mask |= 1u << k;
        return mask;
    }
#endif
    for (; i + 1 < n; ++i)
        for (int k = 0; k < 6; ++k)
            if (units[i] == kPairs[k][0] && units[i + 1] == kPairs[k][1])
                mask |= 1u << k;
    return mask;
}

} // namespace

bool FailureDetector::isCudaOutOfMemoryLine(QStringView line)
{
    return isCudaOom(line);
}

bool FailureDetector::isNcclErrorLine(QStringView line)
{
    return isNccl(line);
}

bool FailureDetector::isKilledLine(QStringView line)
{
    return isKilled(line);
}

void FailureDetector::reset()
{
    *this = FailureDetector();
}

void FailureDetector::raise(Kind kind, QString reason)
{
    if (int(kind) < int(m_kind))
        return;
    m_kind = kind;
    m_reason = std::move(reason);
}

void FailureDetector::feed(QStringView line)
{
    if (!line.isEmpty() && line.front() == u'T' && line.startsWith(u"Traceback (most recent call last):")) {
        m_inTraceback = true;
        m_sawFrame = false;
        if (m_kind < Kind::PythonException)
            raise(Kind::PythonException, QStringLiteral("Python traceback"));
        return;
    }
    if (m_inTraceback) {
        const bool indented = !line.isEmpty() && (line.front() == u' ' || line.front() == u'\t');
        if (indented || line.trimmed().isEmpty()) {
            m_sawFrame = m_sawFrame || line.trimmed().startsWith(u"File ");
        } else {
            // The first unindented line after the frames is the exception.
            m_inTraceback = false;
            m_lastExceptionType = exceptionType(line);
            if (isCudaOom(line)) {
                raise(Kind::CudaOutOfMemory,
                        QStringLiteral("CUDA out of memory (%1)")
                                .arg(m_lastExceptionType.isEmpty() ? QStringLiteral("traceback")
                                                                   : m_lastExceptionType));
                return;
            }
            if (isNccl(line)) {
                raise(Kind::Nccl, shorten(QString(QStringLiteral("NCCL error: ") + line.trimmed().toString())));
                return;
            }
            raise(Kind::PythonException, shorten(line));
            return;
        }
    }
    // Outside a traceback: only when nothing as specific is known yet.
    const quint32 pairs = patternPairs(line);
    if ((pairs & kCudaOomPairs) && isCudaOom(line)) {
        if (m_kind < Kind::CudaOutOfMemory)
            raise(Kind::CudaOutOfMemory, QStringLiteral("CUDA out of memory"));
        return;
    }
    if ((pairs & kNcclPairs) && isNccl(line)) {
        if (m_kind < Kind::Nccl)
            raise(Kind::Nccl, shorten(QString(QStringLiteral("NCCL error: ") + line.trimmed().toString())));
        return;
    }
    if ((pairs & kKilledPairs) && isKilled(line))
        raise(Kind::Killed, QStringLiteral("Killed (SIGKILL, likely the kernel's out-of-memory killer)"));
}

} // namespace ty
