#pragma once

#include "core/logs/ConsoleLine.h"

#include <QHash>
#include <QLatin1StringView>
#include <QList>
#include <QString>

#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace ty {

// Occurrences of `needle` in `text`, not overlapping ("aa" twice in
// "aaaa"), as find highlights them. `Text`: QStringView or QLatin1StringView.
template <typename Text> qsizetype countMatches(Text text, QStringView needle, Qt::CaseSensitivity cs)
{
    if (needle.isEmpty())
        return 0;
    qsizetype total = 0;
    for (qsizetype at = 0; (at = text.indexOf(needle, at, cs)) >= 0; at += needle.size())
        ++total;
    return total;
}

// Committed console rows packed for memory: up to kMaxRows rows' text back to
// back in one buffer (Latin-1, 1 byte a character, while every character is
// below U+0100; UTF-16 from the first row that is not), each row's end offset,
// its flags, and style spans only for rows that have any. A row costs its
// characters plus ~5 bytes, against ~150 bytes of ConsoleLine or QTextDocument
// block overhead, so a console of millions of rows fits in tens of MiB.
//
// Built on the ConsoleFeeder's thread, handed to the GUI thread whole (the
// builder lets go of it), read and merged there only. Not thread-safe.
class ScrollbackChunk final {
public:
    static constexpr int kMaxRows = 4096;

    // Appends a committed row (its text, spans, stderr and truncation marks;
    // wrapped / byteOffset are not kept).
    void append(const ConsoleLine& line);
    // Appends every row of `other` (rowCount() + other.rowCount() <= kMaxRows).
    void append(const ScrollbackChunk& other);

    // Gives back spare capacity (a chunk that is complete).
    void squeeze();

    int rowCount() const { return int(m_ends.size()); }
    bool isFull() const { return rowCount() >= kMaxRows; }
    // Bytes this chunk holds on the heap (text, offsets, flags, spans).
    qsizetype memoryBytes() const;
    // Characters (UTF-16 code units) of the longest row.
    int maxRowLength() const { return m_maxLength; }

    // Row `row` (0 <= row < rowCount()).
    QString text(int row) const;
    // The row as the renderer gave it (byteOffset and wrapped are not kept: 0, false).
    ConsoleLine line(int row) const;
    int length(int row) const { return int(m_ends[size_t(row)] - begin(row)); }
    QList<StyleSpan> spans(int row) const;
    bool fromStderr(int row) const { return m_flags[size_t(row)] & FromStderr; }
    bool truncated(int row) const { return m_flags[size_t(row)] & Truncated; }
    // Columns the row really had (== length() unless truncated()).
    qint64 fullLength(int row) const;
    // First index >= from (backward: last index <= from, from -1 = the end)
    // of `needle` in row `row`, or -1.
    qsizetype indexOf(int row, QStringView needle, qsizetype from, Qt::CaseSensitivity cs, bool backward) const;
    // Occurrences of `needle` (not overlapping) in every row.
    qsizetype count(QStringView needle, Qt::CaseSensitivity cs) const;

private:
    enum Flag : quint8 { FromStderr = 0x01, Truncated = 0x02 };
    quint32 begin(int row) const { return row == 0 ? 0 : m_ends[size_t(row) - 1]; }
    void toUtf16();
    void appendText(QStringView text);

    bool m_latin1 = true;
    QByteArray m_latin1Text;     // while m_latin1
    QString m_utf16Text;         // once a row needed it
    std::vector<quint32> m_ends; // end of row i in the text (code units)
    std::vector<quint8> m_flags;
    // Spans of row i are m_spans[m_spanEnds[i - 1] .. m_spanEnds[i]) (empty
    // while no row has a span: then every row is plain).
    std::vector<quint32> m_spanEnds;
    std::vector<StyleSpan> m_spans;
    QHash<int, qint64> m_fullLength; // truncated rows only
    int m_maxLength = 0;
};

using ScrollbackChunkPtr = std::shared_ptr<ScrollbackChunk>;

// A console view's scrollback: committed rows in chunks, oldest dropped a
// chunk at a time once the chunks hold more than budgetBytes() (the newest
// chunk always stays). Rows are numbered 0..rowCount()-1 from the oldest
// kept; droppedRows() counts those let go. Appending is O(1) per chunk (a
// small chunk is merged into the last one: O(its rows)); finding a row is a
// binary search over the chunks. GUI thread only.
class ConsoleScrollback final {
public:
    static constexpr qsizetype kDefaultBudgetBytes = 64ll * 1024 * 1024;

    explicit ConsoleScrollback(qsizetype budgetBytes = kDefaultBudgetBytes)
        : m_budget(budgetBytes)
    { }

    void clear();
    // Takes `chunk` (the caller lets go of it). Returns the rows dropped from
    // the front to stay within the budget; `dropping` (if set) sees each
    // dropped chunk first.
    qint64 append(ScrollbackChunkPtr chunk, const std::function<void(const ScrollbackChunk&)>& dropping = {});

    // Lets go of every row held and counts `alsoDropped` more: rows that
    // were let go on their way here, between those held and what comes next
    // (which would otherwise follow the held rows with a gap between).
    void letGoAll(qint64 alsoDropped);

    qint64 rowCount() const { return m_rows; }
    qint64 droppedRows() const { return m_dropped; }
    qsizetype memoryBytes() const { return m_bytes; }
    qsizetype budgetBytes() const { return m_budget; }
    int maxRowLength() const { return m_maxLength; }

    // The chunk holding row `row` (0 <= row < rowCount()) and the row's index in it.
    std::pair<const ScrollbackChunk*, int> locate(qint64 row) const;
    QString text(qint64 row) const;

private:
    struct Entry {
        ScrollbackChunkPtr chunk;
        qint64 first = 0; // absolute row number (counting dropped rows) of its first row
    };
    std::deque<Entry> m_chunks;
    qsizetype m_budget;
    qsizetype m_bytes = 0;
    qint64 m_rows = 0;
    qint64 m_dropped = 0;
    int m_maxLength = 0;
};

} // namespace ty
