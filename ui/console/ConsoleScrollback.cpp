#include "ConsoleScrollback.h"

#include <algorithm>

namespace ty {

namespace {

bool isLatin1(QStringView text)
{
    // OR of every code unit (the compiler vectorises the loop).
    const char16_t* p = text.utf16();
    const qsizetype n = text.size();
    char16_t acc = 0;
    for (qsizetype i = 0; i < n; ++i)
        acc |= p[i];
    return acc < 0x100;
}

} // namespace

void ScrollbackChunk::toUtf16()
{
    m_utf16Text = QString::fromLatin1(m_latin1Text);
    m_latin1Text = QByteArray();
    m_latin1 = false;
}

void ScrollbackChunk::appendText(QStringView text)
{
    if (m_latin1 && !isLatin1(text))
        toUtf16();
    if (m_latin1) {
        const qsizetype at = m_latin1Text.size();
        m_latin1Text.resize(at + text.size());
        char* out = m_latin1Text.data() + at;
        const char16_t* in = text.utf16();
        for (qsizetype i = 0; i < text.size(); ++i)
            out[i] = char(in[i]);
    } else {
        m_utf16Text.append(text);
    }
}

void ScrollbackChunk::append(const ConsoleLine& line)
{
    const int row = rowCount();
    appendText(line.text);
    m_ends.push_back(quint32(m_latin1 ? m_latin1Text.size() : m_utf16Text.size()));
    quint8 flags = 0;
    if (line.fromStderr)
        flags |= FromStderr;
    if (line.truncated) {
        flags |= Truncated;
        m_fullLength.insert(row, line.fullLength);
    }
    m_flags.push_back(flags);
    // Only spans that lie inside the text, as the view draws them.
    qsizetype kept = 0;
    for (const StyleSpan& s : line.spans) {
        if (s.length <= 0 || s.start < 0 || s.start >= line.text.size())
            continue;
        if (m_spanEnds.empty() && m_spans.empty())
            m_spanEnds.assign(size_t(row), 0); // rows before this one had none
        StyleSpan clipped = s;
        clipped.length = int(std::min<qsizetype>(s.length, line.text.size() - s.start));
        m_spans.push_back(clipped);
        ++kept;
    }
    if (!m_spanEnds.empty() || kept > 0)
        m_spanEnds.push_back(quint32(m_spans.size()));
    m_maxLength = std::max(m_maxLength, int(line.text.size()));
}

void ScrollbackChunk::append(const ScrollbackChunk& other)
{
    const int rows = rowCount();
    const quint32 base = rows == 0 ? 0 : m_ends.back();
    if (m_latin1 && !other.m_latin1)
        toUtf16();
    if (m_latin1)
        m_latin1Text.append(other.m_latin1Text);
    else if (other.m_latin1)
        m_utf16Text.append(QString::fromLatin1(other.m_latin1Text));
    else
        m_utf16Text.append(other.m_utf16Text);
    for (quint32 e : other.m_ends)
        m_ends.push_back(base + e);
    m_flags.insert(m_flags.end(), other.m_flags.begin(), other.m_flags.end());
    if (!other.m_spanEnds.empty()) {
        if (m_spanEnds.empty())
            m_spanEnds.assign(size_t(rows), 0);
        const quint32 spanBase = quint32(m_spans.size());
        for (quint32 e : other.m_spanEnds)
            m_spanEnds.push_back(spanBase + e);
        m_spans.insert(m_spans.end(), other.m_spans.begin(), other.m_spans.end());
    } else if (!m_spanEnds.empty()) {
        m_spanEnds.insert(m_spanEnds.end(), size_t(other.rowCount()), quint32(m_spans.size()));
    }
    for (auto it = other.m_fullLength.cbegin(); it != other.m_fullLength.cend(); ++it)
        m_fullLength.insert(rows + it.key(), it.value());
    m_maxLength = std::max(m_maxLength, other.m_maxLength);
}

void ScrollbackChunk::squeeze()
{
    m_latin1Text.squeeze();
    m_utf16Text.squeeze();
    m_ends.shrink_to_fit();
    m_flags.shrink_to_fit();
    m_spanEnds.shrink_to_fit();
    m_spans.shrink_to_fit();
}

qsizetype ScrollbackChunk::memoryBytes() const
{
    return m_latin1Text.capacity() + m_utf16Text.capacity() * 2 + qsizetype(m_ends.capacity() * sizeof(quint32))
            + qsizetype(m_flags.capacity()) + qsizetype(m_spanEnds.capacity() * sizeof(quint32))
            + qsizetype(m_spans.capacity() * sizeof(StyleSpan)) + m_fullLength.size() * 32 + qsizetype(sizeof(*this));
}

QString ScrollbackChunk::text(int row) const
{
    const quint32 b = begin(row);
    const qsizetype n = qsizetype(m_ends[size_t(row)] - b);
    if (m_latin1)
        return QString::fromLatin1(m_latin1Text.constData() + b, n);
    return QString(m_utf16Text.constData() + b, n);
}

ConsoleLine ScrollbackChunk::line(int row) const
{
    ConsoleLine l;
    l.text = text(row);
    l.spans = spans(row);
    l.fromStderr = fromStderr(row);
    l.truncated = truncated(row);
    l.fullLength = fullLength(row);
    return l;
}

QList<StyleSpan> ScrollbackChunk::spans(int row) const
{
    if (m_spanEnds.empty())
        return {};
    const quint32 b = row == 0 ? 0 : m_spanEnds[size_t(row) - 1];
    const quint32 e = m_spanEnds[size_t(row)];
    return QList<StyleSpan>(m_spans.begin() + b, m_spans.begin() + e);
}

qint64 ScrollbackChunk::fullLength(int row) const
{
    return truncated(row) ? m_fullLength.value(row) : qint64(length(row));
}

qsizetype ScrollbackChunk::indexOf(
        int row, QStringView needle, qsizetype from, Qt::CaseSensitivity cs, bool backward) const
{
    const quint32 b = begin(row);
    const qsizetype n = qsizetype(m_ends[size_t(row)] - b);
    if (m_latin1) {
        const QLatin1StringView hay(m_latin1Text.constData() + b, n);
        return backward ? hay.lastIndexOf(needle, from, cs) : hay.indexOf(needle, from, cs);
    }
    const QStringView hay(m_utf16Text.constData() + b, n);
    return backward ? hay.lastIndexOf(needle, from, cs) : hay.indexOf(needle, from, cs);
}

qsizetype ScrollbackChunk::count(QStringView needle, Qt::CaseSensitivity cs) const
{
    if (needle.isEmpty())
        return 0;
    qsizetype total = 0;
    for (int row = 0; row < rowCount(); ++row) {
        const quint32 b = begin(row);
        const qsizetype n = qsizetype(m_ends[size_t(row)] - b);
        total += m_latin1 ? countMatches(QLatin1StringView(m_latin1Text.constData() + b, n), needle, cs)
                          : countMatches(QStringView(m_utf16Text.constData() + b, n), needle, cs);
    }
    return total;
}

void ConsoleScrollback::clear()
{
    m_chunks.clear();
    m_bytes = 0;
    m_rows = 0;
    m_dropped = 0;
    m_maxLength = 0;
}

qint64 ConsoleScrollback::append(ScrollbackChunkPtr chunk, const std::function<void(const ScrollbackChunk&)>& dropping)
{
    if (!chunk || chunk->rowCount() == 0)
        return 0;
    const int added = chunk->rowCount();
    m_maxLength = std::max(m_maxLength, chunk->maxRowLength());
    if (!m_chunks.empty() && m_chunks.back().chunk->rowCount() + added <= ScrollbackChunk::kMaxRows) {
        // A small update (a slow run's few rows): into the last chunk, so a
        // week of one row a second is ~150 chunks, not 600,000.
        ScrollbackChunk& last = *m_chunks.back().chunk;
        m_bytes -= last.memoryBytes();
        last.append(*chunk);
        if (last.isFull())
            last.squeeze();
        m_bytes += last.memoryBytes();
    } else {
        const qint64 first = m_chunks.empty() ? m_dropped : m_chunks.back().first + m_chunks.back().chunk->rowCount();
        m_bytes += chunk->memoryBytes();
        m_chunks.push_back(Entry{std::move(chunk), first});
    }
    m_rows += added;
    qint64 dropped = 0;
    while (m_chunks.size() > 1 && m_bytes > m_budget) {
        const ScrollbackChunk& front = *m_chunks.front().chunk;
        if (dropping)
            dropping(front);
        dropped += front.rowCount();
        m_bytes -= front.memoryBytes();
        m_chunks.pop_front();
    }
    if (dropped > 0) {
        m_rows -= dropped;
        m_dropped += dropped;
        m_maxLength = 0;
        for (const Entry& e : m_chunks)
            m_maxLength = std::max(m_maxLength, e.chunk->maxRowLength());
    }
    return dropped;
}

void ConsoleScrollback::letGoAll(qint64 alsoDropped)
{
    m_dropped += m_rows + alsoDropped;
    m_chunks.clear();
    m_rows = 0;
    m_bytes = 0;
    m_maxLength = 0;
}

std::pair<const ScrollbackChunk*, int> ConsoleScrollback::locate(qint64 row) const
{
    const qint64 absolute = row + m_dropped;
    // The last chunk whose first row is <= absolute.
    auto it = std::upper_bound(
            m_chunks.begin(), m_chunks.end(), absolute, [](qint64 r, const Entry& e) { return r < e.first; });
    Q_ASSERT(it != m_chunks.begin());
    --it;
    return {it->chunk.get(), int(absolute - it->first)};
}

QString ConsoleScrollback::text(qint64 row) const
{
    const auto [chunk, index] = locate(row);
    return chunk->text(index);
}

} // namespace ty
