#include "FailureDetector.h"

#include <QRegularExpression>

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

// Whether `line` holds `needle`, found through its character at `anchor`:
// a vectorised search for one character (qustrchr), then a compare at each
// hit. Qt 6.4's QStringView::contains(QStringView) costs ~1,400
// instructions on a 100-character line (callgrind); with a rare anchor this
// is a few dozen.
bool containsVia(QStringView line, QStringView needle, qsizetype anchor)
{
    const QChar a = needle[anchor];
    const qsizetype last = line.size() - needle.size() + anchor; // the last place the anchor can be
    for (qsizetype at = line.indexOf(a, anchor); at >= 0 && at <= last; at = line.indexOf(a, at + 1))
        if (line.sliced(at - anchor, needle.size()) == needle)
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

// The ASCII capitals a line holds, one bit each (A = bit 0): one pass that
// rules out most patterns before any substring search. Every pattern above
// holds a capital: each CUDA OOM one C, O or E; each NCCL one N, E, U or D
// (ncclInternalError, ncclInvalidUsage, DistBackendError, ...); Killed a K.
constexpr quint32 bit(char c)
{
    return 1u << unsigned(c - 'A');
}
constexpr quint32 kCudaOomCapitals = bit('C') | bit('O') | bit('E');
constexpr quint32 kNcclCapitals = bit('N') | bit('E') | bit('U') | bit('D');
constexpr quint32 kKilledCapitals = bit('K');

quint32 capitals(QStringView line)
{
    quint32 mask = 0;
    const char16_t* const units = line.utf16();
    const qsizetype n = line.size();
    const auto scalar = [&mask, units](qsizetype from, qsizetype to) {
        for (qsizetype i = from; i < to; ++i) {
            const unsigned u = unsigned(units[i]) - unsigned(u'A');
            if (u < 26u)
                mask |= 1u << u;
        }
    };
    qsizetype i = 0;
#if defined(__SSE2__)
    // Eight units at a time (two per step): most of a log line's blocks hold
    // no capital (x - 'A', as unsigned 16-bit, is below 26 only for one),
    // and only blocks that do are looked at one unit at a time. The last
    // eight units are read again, overlapping, instead of a unit-by-unit
    // tail (the mask is an OR: a capital seen twice counts once).
    if (n >= 8) {
        const __m128i a = _mm_set1_epi16(short(u'A'));
        const __m128i top = _mm_set1_epi16(25);
        const __m128i zero = _mm_setzero_si128();
        const auto capitalsIn = [&](qsizetype at) { // 0xffff where a unit is a capital
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(units + at));
            return _mm_cmpeq_epi16(_mm_subs_epu16(_mm_sub_epi16(x, a), top), zero);
        };
        for (; i + 16 <= n; i += 16) {
            const __m128i lo = capitalsIn(i);
            const __m128i hi = capitalsIn(i + 8);
            if (_mm_movemask_epi8(_mm_or_si128(lo, hi)) == 0)
                continue;
            if (_mm_movemask_epi8(lo) != 0)
                scalar(i, i + 8);
            if (_mm_movemask_epi8(hi) != 0)
                scalar(i + 8, i + 16);
        }
        if (i + 8 <= n) {
            if (_mm_movemask_epi8(capitalsIn(i)) != 0)
                scalar(i, i + 8);
            i += 8;
        }
        if (i < n && _mm_movemask_epi8(capitalsIn(n - 8)) != 0)
            scalar(n - 8, n);
        return mask;
    }
#endif
    scalar(i, n);
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
    const quint32 caps = capitals(line);
    if ((caps & kCudaOomCapitals) && isCudaOom(line)) {
        if (m_kind < Kind::CudaOutOfMemory)
            raise(Kind::CudaOutOfMemory, QStringLiteral("CUDA out of memory"));
        return;
    }
    if ((caps & kNcclCapitals) && isNccl(line)) {
        if (m_kind < Kind::Nccl)
            raise(Kind::Nccl, shorten(QString(QStringLiteral("NCCL error: ") + line.trimmed().toString())));
        return;
    }
    if ((caps & kKilledCapitals) && isKilled(line))
        raise(Kind::Killed, QStringLiteral("Killed (SIGKILL, likely the kernel's out-of-memory killer)"));
}

} // namespace ty
