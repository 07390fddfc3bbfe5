#include "TerminalRenderer.h"

#include "CharWidth.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ty {

quint32 paletteColour(int index)
{
    static constexpr quint32 kBasic[16] = {
            0x000000,
            0xcd0000,
            0x00cd00,
            0xcdcd00,
            0x0000ee,
            0xcd00cd,
            0x00cdcd,
            0xe5e5e5,
            0x7f7f7f,
            0xff0000,
            0x00ff00,
            0xffff00,
            0x5c5cff,
            0xff00ff,
            0x00ffff,
            0xffffff,
    };
    static constexpr int kLevels[6] = {0, 95, 135, 175, 215, 255};
    quint32 rgb = 0;
    if (index < 0 || index > 255)
        return 0;
    if (index < 16) {
        rgb = kBasic[index];
    } else if (index < 232) {
        const int i = index - 16;
        rgb = quint32(kLevels[i / 36]) << 16 | quint32(kLevels[(i / 6) % 6]) << 8 | quint32(kLevels[i % 6]);
    } else {
        const quint32 g = quint32(8 + 10 * (index - 232));
        rgb = g << 16 | g << 8 | g;
    }
    return 0xFF000000u | rgb;
}

namespace {

constexpr char32_t kReplacement = 0xFFFD;
constexpr qint64 kMaxCol = qint64(1) << 40; // cursor columns never exceed this (W = 0 mode)

// A complete, valid UTF-8 sequence of 2-4 bytes at p (WHATWG / Unicode
// well-formed byte sequences table): its length and code point, else 0.
int decodeUtf8(const unsigned char* p, const unsigned char* end, char32_t& cp)
{
    const unsigned char b = p[0];
    const auto avail = end - p;
    auto cont = [](unsigned char c) { return c >= 0x80 && c <= 0xBF; };
    if (b >= 0xC2 && b <= 0xDF) {
        if (avail < 2 || !cont(p[1]))
            return 0;
        cp = char32_t(b & 0x1F) << 6 | char32_t(p[1] & 0x3F);
        return 2;
    }
    if (b >= 0xE0 && b <= 0xEF) {
        if (avail < 3)
            return 0;
        const unsigned char lo = b == 0xE0 ? 0xA0 : 0x80;
        const unsigned char hi = b == 0xED ? 0x9F : 0xBF;
        if (p[1] < lo || p[1] > hi || !cont(p[2]))
            return 0;
        cp = char32_t(b & 0x0F) << 12 | char32_t(p[1] & 0x3F) << 6 | char32_t(p[2] & 0x3F);
        return 3;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        if (avail < 4)
            return 0;
        const unsigned char lo = b == 0xF0 ? 0x90 : 0x80;
        const unsigned char hi = b == 0xF4 ? 0x8F : 0xBF;
        if (p[1] < lo || p[1] > hi || !cont(p[2]) || !cont(p[3]))
            return 0;
        cp = char32_t(b & 0x07) << 18 | char32_t(p[1] & 0x3F) << 12 | char32_t(p[2] & 0x3F) << 6
                | char32_t(p[3] & 0x3F);
        return 4;
    }
    return 0;
}

quint32 rgbColour(int r, int g, int b)
{
    return 0xFF000000u | quint32(std::clamp(r, 0, 255)) << 16 | quint32(std::clamp(g, 0, 255)) << 8
            | quint32(std::clamp(b, 0, 255));
}

} // namespace

size_t qHash(const TerminalRenderer::Style& s, size_t seed) noexcept
{
    return qHashMulti(seed, s.fg, s.bg, s.flags);
}

void TerminalRenderer::Row::reset(qint64 offset)
{
    // A ring slot keeps its buffers for the next row, up to a usual line's
    // worth: a 16K-column row does not pin 128 KiB in every slot it passed.
    constexpr size_t kKeep = 4096;
    if (cells.capacity() > kKeep)
        std::vector<Cell, DefaultInitAllocator<Cell>>().swap(cells);
    else
        cells.clear();
    if (plain.capacity() > kKeep)
        std::string().swap(plain);
    else
        plain.clear();
    byteOffset = offset;
    fullLength = 0;
    wrapped = false;
    used = false;
    combining.reset();
}

TerminalRenderer::TerminalRenderer(int width, int maxLineChars, int liveRows)
    : m_width(std::max(0, width))
    , m_maxLineChars(std::max(1, maxLineChars))
    , m_liveRows(std::max(1, liveRows))
    , m_storeLimit(m_width > 0 ? std::min(m_width, m_maxLineChars) : m_maxLineChars)
{
    m_styles.push_back(Style{});
    m_styleIds.insert(Style{}, 0);
    m_screen.pushBack().reset(0);
}

TerminalRenderer::~TerminalRenderer() = default;

// ---------------------------------------------------------------- stream

namespace {

// Whether any of the 8 bytes in x is below 0x20 or at least 0x7F (not
// printable ASCII). SWAR ("bit twiddling hacks", Sean Eron Anderson):
// (x - n * ones) & ~x & highs has a high bit set iff some byte is below n
// (n <= 0x80); a byte of 0x7F is a zero byte of x ^ 0x7F..; bytes from 0x80
// have their own high bit. Exact about whether, not where.
bool anyNonPrintable(quint64 x)
{
    constexpr quint64 ones = 0x0101010101010101ULL;
    constexpr quint64 highs = 0x8080808080808080ULL;
    const quint64 below = (x - 0x20 * ones) & ~x & highs;
    const quint64 del = x ^ (0x7F * ones);
    const quint64 isDel = (del - ones) & ~del & highs;
    return (below | isDel | (x & highs)) != 0;
}

// The end of the printable ASCII (0x20..0x7E) run that starts at p: 16
// bytes a step with SSE2 (a signed compare takes the bytes from 0x80 as
// negative, so "below 0x20" catches them too), the exact position from the
// mask; 8 with SWAR elsewhere.
const unsigned char* printableRunEnd(const unsigned char* p, const unsigned char* end)
{
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(0x20);
    const __m128i del = _mm_set1_epi8(0x7F);
    for (; end - p >= 16; p += 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const int stop = _mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(x, space), _mm_cmpeq_epi8(x, del)));
        if (stop != 0)
            return p + __builtin_ctz(unsigned(stop));
    }
#endif
    for (quint64 x; end - p >= 8; p += 8) {
        std::memcpy(&x, p, 8);
        if (anyNonPrintable(x))
            break;
    }
    while (p < end && *p >= 0x20 && *p < 0x7F)
        ++p;
    return p;
}

} // namespace

void TerminalRenderer::feed(QByteArrayView bytes)
{
    const auto* begin = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto* p = begin;
    const auto* end = p + bytes.size();
    FeedLookahead ahead;
    while (p < end) {
        const unsigned char b = *p;
        if (m_state == State::Ground && m_utfNeed == 0) {
            if (b >= 0x20 && b < 0x7F) {
                if (m_settleAfterFeed) {
                    const unsigned char* const next = sinkPlainLines(p, end, m_offset + (p - begin), ahead);
                    if (next != p) {
                        p = next;
                        continue;
                    }
                }
                m_curByte = m_offset + (p - begin);
                const unsigned char* const runEnd = printableRunEnd(p, end);
                if (!(m_plainRows && printPlainLine(p, runEnd, end)))
                    printAsciiRun(p, runEnd);
                p = runEnd; // a plain line's '\n' is taken by the usual path
                continue;
            }
            // A whole, valid multi-byte sequence (progress-bar blocks, box
            // drawing): decoded at once. Anything else (invalid, or split
            // across feed() calls) goes byte by byte through processByte(),
            // which gives the same result.
            char32_t cp = 0;
            const int len = decodeUtf8(p, end, cp);
            if (len > 0) {
                m_curByte = m_offset + (p - begin) + len - 1; // as processByte() leaves it: the last byte
                printCodepoint(cp);
                p += len;
                continue;
            }
        }
        m_curByte = m_offset + (p - begin);
        processByte(b, m_curByte);
        ++p;
    }
    m_offset += bytes.size();
    if (m_settleAfterFeed)
        commitSettledRows();
}

// cells[i] = {bytes[i], style} for i < n: the ASCII fast path's inner loop
// (16 bytes widened at a time where SSE2 is there, which x86-64 always has).
void TerminalRenderer::fillAsciiCells(Cell* cells, const unsigned char* bytes, size_t n, quint32 style)
{
    static_assert(sizeof(Cell) == 8 && offsetof(Cell, style) == 4);
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i st = _mm_set1_epi32(int(style));
    for (; i + 16 <= n; i += 16) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i));
        const __m128i lo16 = _mm_unpacklo_epi8(b, zero), hi16 = _mm_unpackhi_epi8(b, zero);
        const __m128i cp[4] = {_mm_unpacklo_epi16(lo16, zero), _mm_unpackhi_epi16(lo16, zero),
                _mm_unpacklo_epi16(hi16, zero), _mm_unpackhi_epi16(hi16, zero)};
        auto* out = reinterpret_cast<__m128i*>(cells + i);
        for (int k = 0; k < 4; ++k) {
            _mm_storeu_si128(out + 2 * k, _mm_unpacklo_epi32(cp[k], st));
            _mm_storeu_si128(out + 2 * k + 1, _mm_unpackhi_epi32(cp[k], st));
        }
    }
#endif
    for (; i < n; ++i)
        cells[i] = Cell{char32_t(bytes[i]), style};
}

namespace {

// out[i] = bytes[i] for i < n (ASCII or Latin-1 to UTF-16).
void widenAscii(const unsigned char* bytes, qsizetype n, char16_t* out)
{
    qsizetype i = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_unpacklo_epi8(b, zero));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 8), _mm_unpackhi_epi8(b, zero));
    }
#endif
    for (; i < n; ++i)
        out[i] = char16_t(bytes[i]);
}

// `text` made `n` UTF-16 units long (contents undefined): its own buffer
// when that is unshared and big enough (the sink's line), else a new one of
// exactly `n` (a line someone keeps: resize() would round it up, up to ~2x);
// an empty length allocates nothing.
void setLength(QString& text, qsizetype n)
{
    if (n == 0)
        text.truncate(0);
    else if (text.isDetached() && n <= text.capacity())
        text.resize(n);
    else
        text = QString(n, Qt::Uninitialized);
}

} // namespace

// out[i] = cells[i].cp for i < n, and whether the cells make a usual row:
// every one written, all in cells[0]'s style, none wide or astral.
// cp | (cp - 1) reaches 0x10000 for a blank (0), a wide tail (0xFFFFFFFF)
// and an astral character alike. What `out` holds is unspecified if not.
bool TerminalRenderer::narrowUsualCells(const Cell* cells, qint64 n, char16_t* out)
{
    static_assert(sizeof(Cell) == 8 && offsetof(Cell, style) == 4);
    const quint32 style0 = cells[0].style;
    char32_t anyBits = 0;
    quint32 styleDiff = 0;
    qint64 i = 0;
#if defined(__SSE2__)
    // Eight cells a step: the code points and styles separated by a shuffle
    // and two unpacks, the code points narrowed to 16 bits with a signed
    // pack of cp - 0x8000 (exact for 0..0xFFFF) and the bias put back.
    const __m128i ones = _mm_set1_epi32(1);
    const __m128i bias32 = _mm_set1_epi32(0x8000);
    const __m128i bias16 = _mm_set1_epi16(short(0x8000));
    const __m128i st0 = _mm_set1_epi32(int(style0));
    __m128i bits = _mm_setzero_si128();
    __m128i diff = _mm_setzero_si128();
    for (; i + 8 <= n; i += 8) {
        const auto* in = reinterpret_cast<const __m128i*>(cells + i);
        // [cp st cp st] -> [cp cp st st]
        const __m128i c0 = _mm_shuffle_epi32(_mm_loadu_si128(in), _MM_SHUFFLE(3, 1, 2, 0));
        const __m128i c1 = _mm_shuffle_epi32(_mm_loadu_si128(in + 1), _MM_SHUFFLE(3, 1, 2, 0));
        const __m128i c2 = _mm_shuffle_epi32(_mm_loadu_si128(in + 2), _MM_SHUFFLE(3, 1, 2, 0));
        const __m128i c3 = _mm_shuffle_epi32(_mm_loadu_si128(in + 3), _MM_SHUFFLE(3, 1, 2, 0));
        const __m128i cpA = _mm_unpacklo_epi64(c0, c1);
        const __m128i cpB = _mm_unpacklo_epi64(c2, c3);
        bits = _mm_or_si128(bits,
                _mm_or_si128(_mm_or_si128(cpA, _mm_sub_epi32(cpA, ones)), _mm_or_si128(cpB, _mm_sub_epi32(cpB, ones))));
        diff = _mm_or_si128(diff,
                _mm_or_si128(_mm_xor_si128(_mm_unpackhi_epi64(c0, c1), st0),
                        _mm_xor_si128(_mm_unpackhi_epi64(c2, c3), st0)));
        const __m128i packed = _mm_packs_epi32(_mm_sub_epi32(cpA, bias32), _mm_sub_epi32(cpB, bias32));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_xor_si128(packed, bias16));
    }
    alignas(16) quint32 lanes[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), bits);
    anyBits = lanes[0] | lanes[1] | lanes[2] | lanes[3];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), diff);
    styleDiff = lanes[0] | lanes[1] | lanes[2] | lanes[3];
#endif
    for (; i < n; ++i) {
        const char32_t cp = cells[i].cp;
        anyBits |= cp | (cp - 1);
        styleDiff |= cells[i].style ^ style0;
        out[i] = char16_t(cp);
    }
    return anyBits < 0x10000 && !styleDiff;
}

// The printable ASCII run [p, q) when it is a whole line (q is a '\n'),
// written at the start of an empty row in the default style and no wider
// than a row keeps (so it neither wraps nor is truncated): the row keeps the
// bytes themselves (a plain row) instead of a cell per character. rowAt()
// turns it into cells if the cursor ever comes back to it; toLine() makes
// its text straight from the bytes. Returns false (nothing done) otherwise.
bool TerminalRenderer::printPlainLine(const unsigned char* p, const unsigned char* q, const unsigned char* end)
{
    if (q == end || *q != '\n' || q - p > m_storeLimit || m_col != 0 || m_styleId != 0)
        return false;
    Row& row = cursorRow();
    // A soft-wrapped row that was erased keeps its wrap mark, and toLine()
    // keeps the written spaces of a wrapped row: not plain.
    if (!row.cells.empty() || !row.plain.empty() || row.fullLength != 0 || row.combining || row.wrapped)
        return false;
    if (p < q)
        m_lastAscii = q[-1];
    row.plain.assign(reinterpret_cast<const char*>(p), size_t(q - p));
    row.fullLength = q - p;
    row.used = true;
    m_col = q - p;
    return true;
}

namespace {

// One past the last ESC or '\b' in [p, end) (what could move the cursor up:
// every escape, and the reverse wrap), or p when there is none. Backwards,
// 16 bytes a step where SSE2 is there.
const unsigned char* afterLastMover(const unsigned char* p, const unsigned char* end)
{
    const unsigned char* q = end;
#if defined(__SSE2__)
    const __m128i esc = _mm_set1_epi8(0x1B);
    const __m128i bs = _mm_set1_epi8('\b');
    for (; q - p >= 16; q -= 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q - 16));
        const int hit = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, esc), _mm_cmpeq_epi8(x, bs)));
        if (hit != 0)
            return q - 16 + (31 - __builtin_clz(unsigned(hit))) + 1;
    }
#endif
    for (; q > p; --q) {
        if (q[-1] == 0x1B || q[-1] == '\b')
            return q;
    }
    return p;
}

} // namespace

// A line at the cursor's row (the bottom one, empty, column 0, default
// style) that ends at q is committed by commitSettledRows() at the end of
// the feed when at least m_maxUpReach line feeds follow it, and nothing
// after it can bring the cursor back up: then it, and every row above it,
// can be committed now. Each line is what commitFront() would hand on for
// its row (fillLine()'s plain branch).
const unsigned char* TerminalRenderer::sinkPlainLines(
        const unsigned char* p, const unsigned char* end, qint64 pOffset, FeedLookahead& ahead)
{
    if (!m_sink || !m_plainRows || m_altScreen || m_col != 0 || m_styleId != 0 || m_row != m_screen.size() - 1)
        return p;
    Row& row = m_screen[m_row]; // the same slot when rows above it are committed
    if (!row.cells.empty() || !row.plain.empty() || row.fullLength != 0 || row.combining || row.wrapped)
        return p;
    if (!ahead.quietFrom)
        ahead.quietFrom = afterLastMover(p, end);
    if (p < ahead.quietFrom)
        return p;
    if (!ahead.holdAt) {
        // m_maxUpReach can no longer grow in this feed: the line feed it
        // takes to settle a line, counted from the end.
        ahead.holdAt = end;
        for (int left = m_maxUpReach; left > 0 && ahead.holdAt != p; --left) {
            const void* nl = memrchr(p, '\n', size_t(ahead.holdAt - p));
            ahead.holdAt = nl ? static_cast<const unsigned char*>(nl) : p; // p: too few, none settles
        }
    }
    const unsigned char* const start = p;
    ConsoleLine& line = m_sinkLine;
    while (p < end) {
        const unsigned char* const q = printableRunEnd(p, end); // p itself for an empty line
        if (q >= ahead.holdAt || *q != '\n' || q - p > m_storeLimit)
            break;
        if (p == start) {
            // Settled by the feed's end too, and before this line.
            while (m_row > 0)
                commitEarly();
        }
        qsizetype n = q - p;
        while (n > 0 && p[n - 1] == ' ')
            --n;
        line.spans.clear();
        // The first line's row began where the cursor's empty row did (a
        // style change or a '\r' may have come first); the others right
        // after the '\n' before them.
        line.byteOffset = p == start ? row.byteOffset : pOffset + (p - start);
        line.wrapped = false;
        line.truncated = false;
        line.fromStderr = false;
        setLength(line.text, n);
        widenAscii(p, n, reinterpret_cast<char16_t*>(line.text.data()));
        line.fullLength = n;
        m_sink(line);
        ++m_plainLinesSunk;
        m_lastCommittedWrapped = false;
        // As the row's line feed and its early commit would have moved them.
        m_screenOffset = std::min(m_screenOffset + 1, m_liveRows - 1);
        p = q + 1;
    }
    if (p != start) {
        m_curByte = pOffset + (p - start);
        row.reset(m_curByte);
    }
    return p;
}

void TerminalRenderer::materialize(Row& row)
{
    const size_t n = row.plain.size();
    row.cells.resize(n); // uninitialised: every cell is written just below
    fillAsciiCells(row.cells.data(), reinterpret_cast<const unsigned char*>(row.plain.data()), n, 0);
    row.plain.clear();
}

void TerminalRenderer::printAsciiRun(const unsigned char* p, const unsigned char* q)
{
    if (p < q)
        m_lastAscii = q[-1];
    const unsigned char* const runStart = p;
    const qint64 base = m_curByte;
    while (p < q) {
        if (m_width > 0 && m_col >= m_width) {
            m_curByte = base + (p - runStart);
            lineFeed(/*wrapped=*/true);
            m_col = 0;
        }
        Row& row = cursorRow();
        const qint64 avail = m_width > 0 ? m_width - m_col : kMaxCol - m_col;
        const qint64 n = std::min<qint64>(avail, q - p);
        const qint64 storeEnd = std::min<qint64>(m_col + n, m_storeLimit);
        if (m_col < storeEnd) {
            const auto from = size_t(m_col);
            const auto to = size_t(storeEnd);
            const size_t had = row.cells.size();
            if (from < had && from > 0 && row.cells[from].cp == kWideTail)
                row.cells[from - 1] = Cell{0, 0};
            if (to < had && row.cells[to].cp == kWideTail)
                row.cells[to] = Cell{0, 0};
            if (had < to) {
                if (had < from)
                    row.cells.resize(from, Cell{0, 0}); // the blank gap before the run
                row.cells.resize(to);                   // uninitialised: every cell is written just below
            }
            fillAsciiCells(row.cells.data() + from, p, to - from, m_styleId);
            if (row.combining) {
                for (size_t i = from; i < to; ++i)
                    row.combining->erase(int(i));
            }
        }
        m_col += n;
        row.fullLength = std::max(row.fullLength, m_col);
        row.used = true;
        p += n;
    }
}

void TerminalRenderer::flushBadUtf8()
{
    m_utfNeed = 0;
    m_utfCp = 0;
    m_utfLower = 0x80;
    m_utfUpper = 0xBF;
    printCodepoint(kReplacement);
}

void TerminalRenderer::processByte(unsigned char b, qint64 offset)
{
    Q_UNUSED(offset);
    switch (m_state) {
    case State::Ground:
        if (m_utfNeed > 0) {
            if (b >= m_utfLower && b <= m_utfUpper) {
                m_utfLower = 0x80;
                m_utfUpper = 0xBF;
                m_utfCp = (m_utfCp << 6) | (b & 0x3F);
                if (--m_utfNeed == 0) {
                    const char32_t cp = m_utfCp;
                    m_utfCp = 0;
                    printCodepoint(cp);
                }
                return;
            }
            flushBadUtf8(); // then handle b afresh
        }
        if (b < 0x20) {
            execControl(b);
        } else if (b < 0x7F) {
            printCodepoint(b);
        } else if (b == 0x7F) {
            // DEL: ignored
        } else if (b >= 0xC2 && b <= 0xDF) {
            m_utfNeed = 1;
            m_utfCp = b & 0x1F;
        } else if (b >= 0xE0 && b <= 0xEF) {
            if (b == 0xE0)
                m_utfLower = 0xA0;
            if (b == 0xED)
                m_utfUpper = 0x9F;
            m_utfNeed = 2;
            m_utfCp = b & 0x0F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            if (b == 0xF0)
                m_utfLower = 0x90;
            if (b == 0xF4)
                m_utfUpper = 0x8F;
            m_utfNeed = 3;
            m_utfCp = b & 0x07;
        } else {
            printCodepoint(kReplacement);
        }
        return;

    case State::Escape:
        if (b == 0x1B)
            return;
        if (b == 0x18 || b == 0x1A) {
            m_state = State::Ground;
        } else if (b < 0x20) {
            execControl(b);
        } else if (b == '[') {
            m_state = State::Csi;
            m_csiStart = m_curByte - 1;
            m_paramCount = 0;
            m_params[0] = -1;
            m_subParam[0] = false;
            m_private = 0;
            m_intermediate = 0;
        } else if (b == ']') {
            m_state = State::Osc;
            m_lastAscii = 0;
        } else if (b == 'P') {
            m_lastAscii = 0;
            m_state = State::DcsEntry;
            m_dcsPhase = DcsPhase::Enter;
        } else if (b == 'X' || b == '^' || b == '_' || b == 'k') {
            m_state = State::String; // SOS, PM, APC, tmux's rename (ESC k title ST)
        } else if (b >= 0x20 && b <= 0x2F) {
            m_intermediate = b;
            m_state = State::EscapeIntermediate;
        } else if (b >= 0x30 && b <= 0x7E) {
            m_state = State::Ground;
            escDispatch(b);
        } else {
            m_state = State::Ground;
        }
        return;

    case State::EscapeIntermediate:
        if (b == 0x1B)
            m_state = State::Escape;
        else if (b == 0x18 || b == 0x1A)
            m_state = State::Ground;
        else if (b < 0x20)
            execControl(b);
        else if (b >= 0x30 && b <= 0x7E)
            m_state = State::Ground; // charset designation, DECALN, ...: ignored
        else if (b > 0x7E)
            m_state = State::Ground;
        return;

    case State::Csi:
        if (b >= '0' && b <= '9') {
            int& v = m_params[m_paramCount];
            v = v < 0 ? (b - '0') : std::min(v * 10 + (b - '0'), 65535);
        } else if (b == ';' || b == ':') {
            if (m_paramCount < kMaxParams - 1) {
                ++m_paramCount;
                m_params[m_paramCount] = -1;
                m_subParam[m_paramCount] = (b == ':');
            }
        } else if (b >= 0x3C && b <= 0x3F) {
            if (m_paramCount == 0 && m_params[0] < 0 && m_private == 0)
                m_private = b;
            else
                m_state = State::CsiIgnore;
        } else if (b >= 0x20 && b <= 0x2F) {
            m_intermediate = b;
        } else if (b >= 0x40 && b <= 0x7E) {
            m_state = State::Ground;
            csiDispatch(b);
        } else if (b == 0x1B) {
            m_state = State::Escape;
        } else if (b == 0x18 || b == 0x1A) {
            m_state = State::Ground;
        } else if (b < 0x20) {
            execControl(b);
        } else {
            m_state = State::CsiIgnore;
        }
        return;

    case State::CsiIgnore:
        if (b >= 0x40 && b <= 0x7E)
            m_state = State::Ground;
        else if (b == 0x1B)
            m_state = State::Escape;
        else if (b == 0x18 || b == 0x1A)
            m_state = State::Ground;
        else if (b < 0x20)
            execControl(b);
        return;

    // Strings, as tmux 3.3a's input.c state tables end them (osc_string,
    // apc_string, consume_st, rename_string, dcs_enter/parameter/
    // intermediate/ignore, dcs_handler, dcs_escape), plus the line feed
    // bound (kStringEndsAtLineFeed in the header): the damage a stray
    // introducer does is the rest of its line.
    case State::Osc:
    case State::String:
        if (b == '\n') {
            m_state = State::Ground;
            execControl(b);
        } else if ((b == 0x07 && m_state == State::Osc) || b == 0x18 || b == 0x1A) {
            m_state = State::Ground; // BEL ends only an OSC; CAN, SUB any of these
        } else if (b == 0x1B) {
            m_state = (m_state == State::Osc) ? State::OscEscape : State::StringEscape;
        }
        return;

    case State::DcsEntry:
        // ESC P, its parameters and intermediates, up to the final byte that
        // starts the passthrough data; a malformed one is ignored to its end.
        if (b == '\n') {
            m_state = State::Ground;
            execControl(b);
        } else if (b == 0x18 || b == 0x1A) {
            m_state = State::Ground;
        } else if (b == 0x1B) {
            m_state = State::StringEscape;
        } else if (b >= 0x40 && b <= 0x7E) {
            m_state = State::DcsPassthrough;
        } else if (b >= 0x20 && b <= 0x2F) {
            m_dcsPhase = DcsPhase::Intermediate;
        } else if (b >= 0x30 && b <= 0x3F) {
            const bool digitOrSemicolon = (b >= '0' && b <= '9') || b == ';';
            if (m_dcsPhase == DcsPhase::Intermediate || b == ':'
                    || (m_dcsPhase == DcsPhase::Parameter && !digitOrSemicolon))
                m_state = State::String; // tmux's dcs_ignore: consumed up to CAN, SUB or ESC
            else
                m_dcsPhase = DcsPhase::Parameter;
        }
        return;

    case State::DcsPassthrough:
        // tmux's dcs_handler: everything is data (CAN and SUB too) up to ESC.
        if (b == '\n') {
            m_state = State::Ground;
            execControl(b);
        } else if (b == 0x1B) {
            m_state = State::DcsEscape;
        }
        return;

    case State::DcsEscape:
        // tmux's dcs_escape: only ESC \ (ST) ends the data; ESC and any
        // other byte are data.
        if (b == '\\') {
            m_state = State::Ground;
        } else if (b == '\n') {
            m_state = State::Ground;
            execControl(b);
        } else {
            m_state = State::DcsPassthrough;
        }
        return;

    case State::OscEscape:
    case State::StringEscape:
        if (b == '\\') {
            m_state = State::Ground;
        } else {
            // An ESC that is not ST ends the string and starts a new sequence.
            m_state = State::Escape;
            processByte(b, offset);
        }
        return;
    }
}

void TerminalRenderer::printCodepoint(char32_t cp)
{
    m_lastAscii = cp >= 0x20 && cp < 0x7F ? char(cp) : 0; // tmux's ictx->last: ASCII only
    const int w = charWidth(cp);
    if (w < 0)
        return; // C0/C1 control that reached here: ignored
    if (w == 0) {
        // Zero-width: joins the cell before the cursor.
        qint64 col = m_col;
        if (m_width > 0 && col >= m_width)
            col = m_width;
        if (col == 0)
            return;
        Row& row = cursorRow();
        qint64 c = col - 1;
        if (c < qint64(row.cells.size()) && row.cells[size_t(c)].cp == kWideTail && c > 0)
            --c;
        if (c >= qint64(row.cells.size()) || row.cells[size_t(c)].cp == 0)
            return;
        if (!row.combining)
            row.combining = std::make_unique<std::unordered_map<int, std::u32string>>();
        (*row.combining)[int(c)].push_back(cp);
        return;
    }
    putCell(cp, w);
}

void TerminalRenderer::putCell(char32_t cp, int w)
{
    if (m_width > 0 && m_col + w > m_width && (m_col > 0 || w <= m_width)) {
        lineFeed(/*wrapped=*/true);
        m_col = 0;
    }
    Row& row = cursorRow();
    if (m_col + w <= m_storeLimit) {
        const auto c = size_t(m_col);
        if (row.cells.size() < c + size_t(w))
            row.cells.resize(c + size_t(w), Cell{0, 0});
        if (row.cells[c].cp == kWideTail && c > 0)
            row.cells[c - 1] = Cell{0, 0};
        if (c + size_t(w) < row.cells.size() && row.cells[c + size_t(w)].cp == kWideTail)
            row.cells[c + size_t(w)] = Cell{0, 0};
        row.cells[c] = Cell{cp, m_styleId};
        if (w == 2)
            row.cells[c + 1] = Cell{kWideTail, m_styleId};
        if (row.combining) {
            row.combining->erase(int(c));
            if (w == 2)
                row.combining->erase(int(c + 1));
        }
    }
    m_col = std::min(m_col + w, kMaxCol);
    row.fullLength = std::max(row.fullLength, m_col);
    row.used = true;
}

void TerminalRenderer::execControl(unsigned char b)
{
    if (b != 0x1B)
        m_lastAscii = 0; // as tmux's input_c0_dispatch; an escape's dispatch resets it below
    switch (b) {
    case '\n':
        m_col = 0; // a pty's ONLCR turns the program's LF into CR LF
        lineFeed(false);
        break;
    case 0x0B: // VT
    case 0x0C: // FF
        lineFeed(false);
        break;
    case '\r': m_col = 0; break;
    case '\b':
        if (m_col == 0) {
            // tmux: backspace at column 0 goes back onto a soft-wrapped row
            if (m_width > 0 && m_row > 0 && m_screen[m_row - 1].wrapped) {
                moveToRow(m_row - 1);
                m_col = m_width - 1;
            }
        } else {
            --m_col;
        }
        break;
    case '\t':
        if (m_width > 0) {
            if (m_col < m_width - 1)
                m_col = std::min<qint64>((m_col / 8 + 1) * 8, m_width - 1);
        } else {
            m_col = std::min<qint64>((m_col / 8 + 1) * 8, kMaxCol);
        }
        break;
    case 0x1B:
        m_state = State::Escape;
        m_intermediate = 0;
        break;
    default: break; // BEL, SO, SI, NUL, ...: ignored
    }
}

void TerminalRenderer::escDispatch(unsigned char final)
{
    m_lastAscii = 0;
    switch (final) {
    case '7':
        m_savedRow = m_row + m_screenOffset;
        m_savedCol = m_col;
        m_savedStyle = m_styleId;
        break;
    case '8':
        moveToRow(std::clamp(m_savedRow - m_screenOffset, 0, m_liveRows - 1));
        m_col = m_savedCol;
        m_styleId = m_savedStyle;
        m_style = m_styles[m_styleId];
        clampCol();
        cursorRow();
        break;
    case 'D': lineFeed(false); break;
    case 'E':
        m_col = 0;
        lineFeed(false);
        break;
    case 'M': // RI: at the top row the screen scrolls down (tmux's screen_write_reverseindex)
        if (m_row > 0) {
            moveToRow(m_row - 1);
        } else {
            lineCleared(0);
            lineCleared(1);
            insertRows(0, 1);
        }
        break;
    case 'c':
        m_style = Style{};
        m_styleId = 0;
        eraseRowsBelow(-1);
        moveToRow(0);
        m_col = 0;
        break;
    default: break;
    }
}

int TerminalRenderer::param(int i, int def) const
{
    if (i > m_paramCount)
        return def;
    return m_params[i] < 0 ? def : m_params[i];
}

void TerminalRenderer::moveToRow(int row)
{
    if (row < m_row)
        m_maxUpReach = std::max(m_maxUpReach, m_row - row);
    m_row = row;
}

void TerminalRenderer::clampCol()
{
    if (m_width > 0 && m_col >= m_width)
        m_col = m_width - 1;
}

void TerminalRenderer::csiDispatch(unsigned char final)
{
    // tmux's input_csi_dispatch forgets the last printed character after
    // every CSI (REP included).
    const char last = std::exchange(m_lastAscii, 0);
    if (m_private == '?' && m_intermediate == 0 && (final == 'h' || final == 'l')) {
        for (int i = 0; i <= m_paramCount; ++i) {
            if (m_params[i] >= 0 && !m_subParam[i])
                setPrivateMode(m_params[i], final == 'h');
        }
        return;
    }
    if (m_private != 0 || m_intermediate != 0)
        return; // private modes (?25l, ?2004h, ...) and the like: nothing to show
    const int n = std::max(1, param(0, 1));
    const qint64 maxCol = m_width > 0 ? m_width - 1 : kMaxCol;
    switch (final) {
    case 'A': // CUU
        moveToRow(std::max(0, m_row - n));
        clampCol();
        break;
    case 'B': // CUD
    case 'e': // VPR
        m_row = std::min(m_liveRows - 1, m_row + n);
        clampCol();
        cursorRow();
        break;
    case 'C':                                                          // CUF
    case 'a':                                                          // HPR
        m_col = std::min<qint64>(std::min(m_col, maxCol) + n, maxCol); // from a pending wrap: the last column (tmux)
        break;
    case 'D': // CUB
        m_col = std::max<qint64>(0, m_col - n);
        break;
    case 'E': // CNL
        m_row = std::min(m_liveRows - 1, m_row + n);
        m_col = 0;
        cursorRow();
        break;
    case 'F': // CPL
        moveToRow(std::max(0, m_row - n));
        m_col = 0;
        break;
    case 'G': // CHA
    case '`': // HPA
        m_col = std::min<qint64>(n - 1, maxCol);
        break;
    case 'd': // VPA: the column as it is, a pending wrap too (tmux's cursormove with px -1)
        moveToRow(std::min(m_liveRows - 1, n - 1));
        cursorRow();
        break;
    case 'H': // CUP
    case 'f': // HVP
        moveToRow(std::min(m_liveRows - 1, n - 1));
        m_col = std::min<qint64>(std::max(1, param(1, 1)) - 1, maxCol);
        cursorRow();
        break;
    case 'J': { // ED
        int mode = param(0, 0);
        if (mode == 0 && m_col == 0 && m_row + m_screenOffset == 0)
            mode = 2; // tmux: erasing all of the screen from its top left corner moves it to the history too
        if (mode == 0) {
            eraseCells(cursorRow(), std::min<qint64>(m_col, m_width > 0 ? m_width : kMaxCol), kMaxCol);
            if (m_col == 0)
                lineCleared(m_row, true);
            eraseRowsBelow(m_row);
            if (m_row < m_liveRows - 1)
                lineCleared(m_row + 1);
        } else if (mode == 1) {
            if (m_row > 0)
                lineCleared(0);
            eraseRowsAbove(m_row);
            eraseCells(cursorRow(), 0, m_col + 1);
            if (m_width > 0 && m_col >= m_width - 1)
                lineCleared(m_row, true);
        } else if (mode == 2) {
            // tmux 3.3 (scroll-on-clear): the used part of the screen moves to
            // history, the screen becomes blank, the cursor stays put.
            int last = -1;
            for (int i = 0; i < int(m_screen.size()); ++i) {
                if (m_screen[i].used || !isBlankRow(m_screen[i]))
                    last = i; // tmux: a row ever written to, or moved within, blank or not
            }
            // Then tmux clears the rest (grid_clear_lines): the row above it,
            // the last one moved to the history, is no longer wrapped.
            if (m_altScreen || last < 0)
                lineCleared(0);
            else if (last < m_liveRows - 1)
                m_screen[last].wrapped = false;
            if (!m_altScreen) {
                for (int i = 0; i <= last; ++i)
                    commitFront();
            }
            for (int i = 0; i < m_screen.size(); ++i)
                m_screen[i].reset(m_curByte);
            cursorRow();
        }
        break;
    }
    case 'K': { // EL
        const int mode = param(0, 0);
        Row& row = cursorRow();
        // tmux does nothing to a row with no cells (cellsize 0): no wrap mark goes
        const bool hadCells = !row.cells.empty() || row.used;
        if (mode == 0) {
            if (m_width == 0 || m_col < m_width)
                eraseCells(row, m_col, kMaxCol);
            if (m_col == 0 && hadCells)
                lineCleared(m_row, true);
        } else if (mode == 1) {
            eraseCells(row, 0, m_col + 1);
            if (m_width > 0 && m_col >= m_width - 1)
                lineCleared(m_row, true);
        } else if (mode == 2) {
            eraseCells(row, 0, kMaxCol);
            if (hadCells)
                lineCleared(m_row, true);
        }
        break;
    }
    case 'X': { // ECH
        if (m_width > 0 && m_col >= m_width)
            break; // tmux: nothing at a pending wrap (as DCH and ICH)
        Row& row = cursorRow();
        const qint64 col = std::min(m_col, maxCol);
        eraseCells(row, col, std::min<qint64>(col + n, maxCol + 1));
        if (col == 0 && m_width > 0 && n >= m_width)
            lineCleared(m_row, true);
        break;
    }
    case 'P': { // DCH
        if (m_width > 0 && m_col >= m_width)
            break;
        Row& row = cursorRow();
        const qint64 col = std::min(m_col, maxCol);
        if (col < qint64(row.cells.size())) {
            auto first = row.cells.begin() + col;
            const qint64 count = std::min<qint64>(n, qint64(row.cells.size()) - col);
            row.cells.erase(first, first + count);
            row.combining.reset();
        }
        if (m_width == 0 || col + n < m_width)
            row.used = true; // tmux's grid_move_cells: the row counts as used
        row.fullLength = std::max<qint64>(col, row.fullLength - n);
        if (col == 0 && m_width > 0 && n >= m_width)
            lineCleared(m_row, true);
        break;
    }
    case '@': { // ICH
        if (m_width > 0 && m_col >= m_width)
            break;
        Row& row = cursorRow();
        const qint64 col = std::min(m_col, maxCol);
        if (m_width > 0 && col == m_width - 1) {
            eraseCells(row, col, col + 1); // tmux's grid_view_insert_cells at the last column
            break;
        }
        if (col < qint64(row.cells.size())) {
            row.cells.insert(row.cells.begin() + col, size_t(n), Cell{0, 0});
            if (qint64(row.cells.size()) > m_storeLimit)
                row.cells.resize(size_t(m_storeLimit));
            row.combining.reset();
        }
        if (row.fullLength > col)
            row.fullLength = m_width > 0 ? std::min<qint64>(row.fullLength + n, m_width) : row.fullLength + n;
        if (m_width == 0 || col + n < m_width)
            row.used = true;
        break;
    }
    case 'L': // IL: n blank rows at the cursor's, the rows below pushed down (off the screen's bottom)
        // tmux's grid_move_lines: the row above where the moved rows go (one
        // of them, moved unwrapped) and the row above the cursor's are no
        // longer wrapped.
        if (n < m_liveRows - m_row)
            lineCleared(m_row + n);
        lineCleared(m_row);
        insertRows(m_row, n);
        break;
    case 'M': { // DL: n rows from the cursor's removed, the rows below pulled up
        // tmux (grid_move_lines, then grid_clear_lines of the bottom rows):
        // the rows above the moved ones and above the cleared ones are no
        // longer wrapped, nor the one that lands where the last removed was.
        const int count = std::min(n, m_liveRows - m_row);
        const int kept = m_liveRows - m_row - count;
        deleteRows(m_row, n);
        lineCleared(m_row);
        if (kept > 0) {
            lineCleared(m_row + kept);
            if (count >= kept)
                lineCleared(m_row + count);
        }
        break;
    }
    case 'S': // SU: the screen scrolls up n rows; its top rows go to the history (tmux: grid_scroll_history)
        for (int k = std::min(n, m_liveRows); k > 0; --k) {
            if (m_screen.empty())
                m_screen.pushBack().reset(m_curByte);
            scrollUp();
        }
        cursorRow();
        break;
    case 'T':           // SD: the screen scrolls down n rows: blank rows at its top
        lineCleared(0); // tmux's grid_move_lines: the rows above the moved ones and where they go
        lineCleared(1);
        insertRows(0, n);
        break;
    case 'b': // REP: the last printed character n more times, no further than the row's end (tmux)
        if (last != 0) {
            const qint64 room = m_width > 0 ? std::max<qint64>(0, m_width - m_col) : kMaxCol - m_col;
            for (qint64 k = std::min<qint64>(n, room); k > 0; --k)
                printCodepoint(char32_t(last));
            m_lastAscii = 0;
        }
        break;
    case 'm': sgr(); break;
    case 's':
        m_savedRow = m_row + m_screenOffset;
        m_savedCol = m_col;
        m_savedStyle = m_styleId;
        break;
    case 'u':
        moveToRow(std::clamp(m_savedRow - m_screenOffset, 0, m_liveRows - 1));
        m_col = m_savedCol;
        clampCol();
        cursorRow();
        break;
    default: break;
    }
}

void TerminalRenderer::sgr()
{
    Style s = m_style;
    const int count = m_paramCount + 1;
    for (int i = 0; i < count; ++i) {
        const int p = m_params[i] < 0 ? 0 : m_params[i];
        // Sub-parameters belonging to this parameter (colon form).
        int subEnd = i + 1;
        while (subEnd < count && m_subParam[subEnd])
            ++subEnd;
        auto subs = [&](int k) { return (i + 1 + k < subEnd && m_params[i + 1 + k] >= 0) ? m_params[i + 1 + k] : 0; };
        if (p == 38 || p == 48 || p == 58) {
            quint32 colour = 0;
            bool ok = false;
            if (subEnd > i + 1) { // 38:5:n  38:2:r:g:b  38:2:cs:r:g:b
                const int kind = subs(0);
                const int subCount = subEnd - i - 1;
                if (kind == 5 && subCount >= 2) {
                    colour = paletteColour(subs(1));
                    ok = true;
                } else if (kind == 2 && subCount >= 5) {
                    colour = rgbColour(subs(2), subs(3), subs(4));
                    ok = true;
                } else if (kind == 2 && subCount == 4) {
                    colour = rgbColour(subs(1), subs(2), subs(3));
                    ok = true;
                }
                i = subEnd - 1;
            } else if (i + 1 < count) { // 38;5;n  38;2;r;g;b
                const int kind = m_params[i + 1];
                auto at = [&](int k) { return (k < count && m_params[k] >= 0) ? m_params[k] : 0; };
                if (kind == 5 && i + 2 < count) {
                    colour = paletteColour(at(i + 2));
                    ok = true;
                    i += 2;
                } else if (kind == 2 && i + 4 < count) {
                    colour = rgbColour(at(i + 2), at(i + 3), at(i + 4));
                    ok = true;
                    i += 4;
                } else {
                    i = count; // malformed: ignore the rest, like xterm
                }
            }
            if (ok && p == 38)
                s.fg = colour;
            else if (ok && p == 48)
                s.bg = colour;
            continue;
        }
        if (subEnd > i + 1) {
            // e.g. 4:3 (curly underline): 4:0 switches underline off
            if (p == 4)
                s.flags = subs(0) == 0 ? (s.flags & ~StyleSpan::Underline) : (s.flags | StyleSpan::Underline);
            i = subEnd - 1;
            continue;
        }
        switch (p) {
        case 0: s = Style{}; break;
        case 1: s.flags |= StyleSpan::Bold; break;
        case 2: s.flags |= StyleSpan::Faint; break;
        case 3: s.flags |= StyleSpan::Italic; break;
        case 4:
        case 21: s.flags |= StyleSpan::Underline; break;
        case 7: s.flags |= StyleSpan::Inverse; break;
        case 9: s.flags |= StyleSpan::Strike; break;
        case 22: s.flags &= ~(StyleSpan::Bold | StyleSpan::Faint); break;
        case 23: s.flags &= ~StyleSpan::Italic; break;
        case 24: s.flags &= ~StyleSpan::Underline; break;
        case 27: s.flags &= ~StyleSpan::Inverse; break;
        case 29: s.flags &= ~StyleSpan::Strike; break;
        case 39: s.fg = 0; break;
        case 49: s.bg = 0; break;
        default:
            if (p >= 30 && p <= 37)
                s.fg = paletteColour(p - 30);
            else if (p >= 40 && p <= 47)
                s.bg = paletteColour(p - 40);
            else if (p >= 90 && p <= 97)
                s.fg = paletteColour(p - 90 + 8);
            else if (p >= 100 && p <= 107)
                s.bg = paletteColour(p - 100 + 8);
            break; // blink, conceal, fonts, ...: ignored
        }
    }
    m_style = s;
    m_styleId = styleId(s);
}

quint32 TerminalRenderer::styleId(const Style& s)
{
    const auto it = m_styleIds.constFind(s);
    if (it != m_styleIds.constEnd())
        return it.value();
    const auto id = quint32(m_styles.size());
    m_styles.push_back(s);
    m_styleIds.insert(s, id);
    return id;
}

// ---------------------------------------------------------------- screen

TerminalRenderer::Row& TerminalRenderer::RowRing::pushBack()
{
    if (m_size == m_mask + 1) {
        // Full: the rows in order into twice the slots (the old slots' buffers move along).
        std::vector<Row> grown(m_slots.size() * 2);
        for (int i = 0; i < m_size; ++i)
            grown[size_t(i)] = std::move((*this)[i]);
        m_slots = std::move(grown);
        m_mask = int(m_slots.size()) - 1;
        m_head = 0;
    }
    ++m_size;
    return (*this)[m_size - 1];
}

TerminalRenderer::Row& TerminalRenderer::rowAt(int index)
{
    while (m_screen.size() <= index)
        m_screen.pushBack().reset(m_curByte);
    Row& row = m_screen[index];
    if (!row.plain.empty())
        materialize(row);
    return row;
}

TerminalRenderer::Row& TerminalRenderer::cursorRow()
{
    m_screenOffset = std::min(m_screenOffset, m_liveRows - 1 - m_row);
    return rowAt(m_row);
}

void TerminalRenderer::lineFeed(bool wrapped)
{
    // Like tmux, a line feed only ever sets the soft-wrap mark; it is cleared
    // when the row is recycled.
    if (wrapped)
        cursorRow().wrapped = true;
    // A row started by a line feed begins after it; a soft-wrapped one at the
    // character that wrapped.
    const qint64 byte = m_curByte;
    if (!wrapped)
        ++m_curByte;
    if (m_row >= m_liveRows - 1) {
        scrollUp();
        rowAt(m_row);
    } else {
        ++m_row;
        m_screenOffset = std::min(m_screenOffset, m_liveRows - 1 - m_row);
        rowAt(m_row);
    }
    m_curByte = byte;
}

void TerminalRenderer::commitFront()
{
    if (m_screen.empty())
        return;
    if (m_sink) {
        fillLine(m_screen.front(), m_sinkLine);
        m_sink(m_sinkLine);
    } else {
        m_committed.append(toLine(m_screen.front()));
    }
    m_lastCommittedWrapped = m_screen.front().wrapped;
    m_screen.popFront();
}

void TerminalRenderer::scrollUp()
{
    // A saved cursor stays where it was on the screen (tmux keeps screen
    // coordinates), so nothing else moves.
    if (m_altScreen) {
        if (m_liveRows >= 2)
            lineCleared(0); // tmux's grid_move_lines, with no history to scroll into
        m_screen.popFront();
        if (m_liveRows == 2)
            lineCleared(1);
    } else {
        commitFront();
    }
}

void TerminalRenderer::lineCleared(int rowIndex, bool whole)
{
    if (whole && rowIndex < m_screen.size()) {
        m_screen[rowIndex].used = false; // and grid_empty_line: the row itself is no longer wrapped
        m_screen[rowIndex].wrapped = false;
    }
    // The row above is a committed one for rowIndex 0: it stays as it was.
    if (rowIndex > 0 && rowIndex - 1 < m_screen.size()) {
        m_screen[rowIndex - 1].wrapped = false;
    } else if (rowIndex == 0 && m_lastCommittedWrapped) {
        ++m_committedWrapsKept;
        m_lastCommittedWrapped = false;
    }
}

void TerminalRenderer::commitEarly()
{
    commitFront();
    --m_row;
    ++m_screenOffset;
}

void TerminalRenderer::setPrivateMode(int mode, bool on)
{
    switch (mode) {
    case 47:
    case 1047: on ? enterAltScreen(false) : leaveAltScreen(false); break;
    case 1049: on ? enterAltScreen(true) : leaveAltScreen(true); break;
    case 1048: // xterm: save / restore the cursor as DECSC / DECRC do
        escDispatch(on ? '7' : '8');
        break;
    default: break; // ?25 (cursor shown), ?2004 (bracketed paste), ...: nothing to show
    }
}

void TerminalRenderer::enterAltScreen(bool saveCursor)
{
    if (m_altScreen)
        return; // tmux: nothing at all, not even the cursor saved
    if (saveCursor) {
        m_altCursorSaved = true;
        m_altSavedRow = m_row + m_screenOffset;
        m_altSavedCol = m_col;
        m_altSavedStyle = m_styleId;
    }
    lineCleared(0); // tmux clears its screen (grid_clear_lines): the history's last row is no longer wrapped
    m_altScreen = true;
    m_altEnteredAt = m_csiStart;
    m_mainRow = m_row;
    m_mainUpReach = m_maxUpReach;
    m_mainOffset = m_screenOffset;
    m_row += m_screenOffset; // the alternate screen is all there: rows are screen rows
    m_screenOffset = 0;
    std::swap(m_screen, m_mainScreen);
    m_screen.clear(); // a blank screen; the cursor stays where it was
    cursorRow();
}

void TerminalRenderer::leaveAltScreen(bool restoreCursor)
{
    int row = m_row + m_screenOffset; // a screen row
    if (restoreCursor && m_altCursorSaved) {
        row = m_altSavedRow;
        m_col = m_altSavedCol;
        m_styleId = m_altSavedStyle;
        m_style = m_styles[m_styleId];
    }
    if (m_altScreen) {
        m_altScreen = false;
        std::swap(m_screen, m_mainScreen);
        m_mainScreen.clear();
        m_row = m_mainRow;
        m_maxUpReach = m_mainUpReach;
        m_screenOffset = m_mainOffset;
    }
    moveToRow(std::clamp(row - m_screenOffset, 0, m_liveRows - 1));
    clampCol();
    cursorRow();
}

void TerminalRenderer::eraseCells(Row& row, qint64 from, qint64 to)
{
    from = std::max<qint64>(from, 0);
    const qint64 size = qint64(row.cells.size());
    if (to >= size && from < size) {
        // Erasing to the end: just drop the cells (fixing a wide char cut in half).
        if (from > 0 && row.cells[size_t(from)].cp == kWideTail)
            row.cells[size_t(from - 1)] = Cell{0, 0};
        row.cells.resize(size_t(from));
    } else if (from < size) {
        if (from > 0 && row.cells[size_t(from)].cp == kWideTail)
            row.cells[size_t(from - 1)] = Cell{0, 0};
        if (to < size && row.cells[size_t(to)].cp == kWideTail)
            row.cells[size_t(to)] = Cell{0, 0};
        std::fill(row.cells.begin() + from, row.cells.begin() + to, Cell{0, 0});
    }
    if (row.combining) {
        for (auto it = row.combining->begin(); it != row.combining->end();) {
            if (it->first >= from && it->first < to)
                it = row.combining->erase(it);
            else
                ++it;
        }
    }
    if (to >= row.fullLength)
        row.fullLength = std::min(row.fullLength, from);
}

void TerminalRenderer::eraseRowsBelow(int rowIndex)
{
    for (int i = rowIndex + 1; i < int(m_screen.size()); ++i) {
        Row& row = m_screen[i];
        const qint64 offset = row.byteOffset;
        row.reset(offset);
    }
}

void TerminalRenderer::eraseRowsAbove(int rowIndex)
{
    for (int i = 0; i < rowIndex && i < int(m_screen.size()); ++i) {
        Row& row = m_screen[i];
        const qint64 offset = row.byteOffset;
        row.reset(offset);
    }
}

void TerminalRenderer::insertRows(int at, int n)
{
    n = std::min(n, m_liveRows - at);
    if (n <= 0 || at >= m_screen.size()) {
        rowAt(m_row);
        return;
    }
    const int size = std::min(m_screen.size() + n, m_liveRows);
    while (m_screen.size() < size)
        m_screen.pushBack().reset(m_curByte);
    for (int i = size - 1; i >= at + n; --i)
        std::swap(m_screen[i], m_screen[i - n]);
    for (int i = at; i < at + n && i < size; ++i)
        m_screen[i].reset(m_curByte);
    rowAt(m_row);
}

void TerminalRenderer::deleteRows(int at, int n)
{
    const int size = m_screen.size();
    n = std::min(n, size - at);
    if (n > 0) {
        for (int i = at; i + n < size; ++i)
            std::swap(m_screen[i], m_screen[i + n]);
        for (int i = size - n; i < size; ++i)
            m_screen[i].reset(m_curByte);
    }
    rowAt(m_row);
}

bool TerminalRenderer::isBlankRow(const Row& row)
{
    for (char c : row.plain) {
        if (c != ' ')
            return false;
    }
    for (const Cell& c : row.cells) {
        if (c.cp != 0 && c.cp != ' ')
            return false;
        if (c.cp == ' ' && c.style != 0)
            return false;
    }
    return true;
}

ConsoleLine TerminalRenderer::toLine(const Row& row) const
{
    ConsoleLine line;
    fillLine(row, line);
    return line;
}

void TerminalRenderer::fillLine(const Row& row, ConsoleLine& line) const
{
    // resize() and clear() keep an unshared buffer's capacity (QString::clear() would not).
    line.spans.clear();
    line.byteOffset = row.byteOffset;
    line.wrapped = row.wrapped;
    line.truncated = false;
    line.fromStderr = false;
    if (!row.plain.empty()) {
        // Printable ASCII in the default style, never wider than a row keeps:
        // only the trailing spaces go, as below.
        qsizetype n = qsizetype(row.plain.size());
        while (n > 0 && row.plain[size_t(n - 1)] == ' ')
            --n;
        setLength(line.text, n);
        widenAscii(reinterpret_cast<const unsigned char*>(row.plain.data()), n,
                reinterpret_cast<char16_t*>(line.text.data()));
        line.fullLength = n;
        return;
    }

    // Last visible cell: trailing blanks and plain spaces are not part of the row.
    qint64 last = qint64(row.cells.size()) - 1;
    while (last >= 0) {
        const Cell& c = row.cells[size_t(last)];
        if (c.cp == 0)
            --last;
        else if (c.cp == ' ' && !row.wrapped) { // a wrapped row keeps its written spaces
            const Style& s = m_styles[c.style];
            if (s.bg != 0 || (s.flags & (StyleSpan::Inverse | StyleSpan::Underline | StyleSpan::Strike)))
                break;
            --last;
        } else {
            break;
        }
    }
    const qint64 columns = last + 1;
    line.truncated = row.fullLength > m_storeLimit && m_storeLimit < (m_width > 0 ? m_width : kMaxCol);
    line.fullLength = line.truncated ? row.fullLength : columns;
    if (columns == 0) {
        setLength(line.text, 0);
        return;
    }

    // Locals, not members: closeRun() appends to line.spans, after which the
    // compiler would otherwise load row.cells and row.combining again for
    // every cell (this runs once per committed row of every run).
    const Cell* const cells = row.cells.data();
    const auto* const combining = row.combining.get();
    if (!combining) {
        // The usual row (every cell written, one style, no wide or astral
        // characters): copied and checked in one pass; anything else is
        // written again by the general path below.
        setLength(line.text, columns);
        if (narrowUsualCells(cells, columns, reinterpret_cast<char16_t*>(line.text.data()))) {
            if (const quint32 style0 = cells[0].style; style0 != 0) {
                const Style& st = m_styles[style0];
                line.spans.append(StyleSpan{0, int(columns), st.fg, st.bg, st.flags});
            }
            return;
        }
    }
    qsizetype units = 0;
    for (qint64 i = 0; i < columns; ++i) {
        const char32_t cp = cells[i].cp;
        units += cp == kWideTail ? 0 : cp >= 0x10000 ? 2 : 1;
    }
    if (combining) {
        for (const auto& [col, marks] : *combining) {
            if (col < columns)
                for (char32_t m : marks)
                    units += m >= 0x10000 ? 2 : 1;
        }
    }
    setLength(line.text, units);
    char16_t* const out = reinterpret_cast<char16_t*>(line.text.data());
    qsizetype pos = 0;
    quint32 runStyle = 0;
    qsizetype runStart = 0;
    auto closeRun = [&](qsizetype end) {
        if (runStyle != 0 && end > runStart) {
            const Style& s = m_styles[runStyle];
            line.spans.append(StyleSpan{int(runStart), int(end - runStart), s.fg, s.bg, s.flags});
        }
    };
    const auto put = [&](char32_t cp) {
        if (cp >= 0x10000) {
            out[pos++] = QChar::highSurrogate(cp);
            out[pos++] = QChar::lowSurrogate(cp);
        } else {
            out[pos++] = char16_t(cp);
        }
    };
    for (qint64 i = 0; i < columns; ++i) {
        const Cell c = cells[i];
        if (c.cp == kWideTail)
            continue;
        const quint32 style = c.cp == 0 ? 0 : c.style;
        if (style != runStyle) {
            closeRun(pos);
            runStyle = style;
            runStart = pos;
        }
        put(c.cp == 0 ? U' ' : c.cp);
        if (combining) {
            const auto it = combining->find(int(i));
            if (it != combining->end())
                for (char32_t m : it->second)
                    put(m);
        }
    }
    closeRun(pos);
}

// ---------------------------------------------------------------- output

QList<ConsoleLine> TerminalRenderer::takeCommitted()
{
    // The next batch is usually as long as this one: room for it is made
    // once, not by doubling from nothing a dozen times per feed.
    QList<ConsoleLine> lines;
    lines.reserve(m_committed.size());
    lines.swap(m_committed);
    return lines;
}

QList<ConsoleLine> TerminalRenderer::pendingLines() const
{
    int last = -1;
    for (int i = 0; i < int(m_screen.size()); ++i) {
        if (!isBlankRow(m_screen[i]))
            last = i;
    }
    QList<ConsoleLine> lines;
    lines.reserve(last + 1);
    for (int i = 0; i <= last; ++i)
        lines.append(toLine(m_screen[i]));
    return lines;
}

qint64 TerminalRenderer::pendingStartOffset() const
{
    if (m_altScreen) {
        for (int i = 0; i < m_mainScreen.size(); ++i) {
            if (!isBlankRow(m_mainScreen[i]))
                return m_mainScreen[0].byteOffset;
        }
        return m_altEnteredAt;
    }
    for (int i = 0; i < m_screen.size(); ++i) {
        if (!isBlankRow(m_screen[i]))
            return m_screen[0].byteOffset;
    }
    return -1;
}

void TerminalRenderer::commitSettledRows()
{
    if (m_altScreen)
        return;
    while (m_row > m_maxUpReach && !m_screen.empty())
        commitEarly();
}

void TerminalRenderer::commitAboveCursor()
{
    if (m_altScreen)
        return;
    while (m_row > 0 && !m_screen.empty())
        commitEarly();
}

void TerminalRenderer::finish()
{
    if (m_state == State::Ground && m_utfNeed > 0)
        flushBadUtf8();
    m_utfNeed = 0;
    m_state = State::Ground;
    if (m_altScreen)
        leaveAltScreen(false); // the alternate screen's last frame is dropped (see the header)
    int last = -1;
    for (int i = 0; i < int(m_screen.size()); ++i) {
        if (!isBlankRow(m_screen[i]))
            last = i;
    }
    for (int i = 0; i <= last; ++i)
        commitFront();
    m_screen.clear();
    m_row = 0;
    m_col = 0;
    m_savedRow = 0;
    m_savedCol = 0;
    m_altCursorSaved = false;
    m_altSavedRow = 0;
    m_altSavedCol = 0;
    m_screenOffset = 0;
    m_style = Style{};
    m_styleId = 0;
    m_curByte = m_offset;
    rowAt(0);
}

} // namespace ty
