#pragma once

#include "ConsoleLine.h"
#include "core/common/Result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QFile>
#include <QList>
#include <QMetaType>
#include <QString>

#include <deque>

namespace ty {

// A byte range [offset, offset + length) of a run's console stream.
struct ByteRange {
    qint64 offset = 0;
    qint64 length = 0;
    qint64 end() const { return offset + length; }
    friend bool operator==(const ByteRange&, const ByteRange&) = default;
};
using ByteRanges = QList<ByteRange>;

// Which bytes of a console came from the run's stderr: a sorted set of
// disjoint, non-adjacent ranges (adjacent and overlapping ones are merged).
// Source: the agent's `output` events (PROTOCOL.md, revision 2) and the
// sidecar file console.stderr beside a console copy (StderrSidecar).
class StderrRanges {
public:
    void add(qint64 offset, qint64 length);
    // Whether any stderr byte lies in [from, to).
    bool intersects(qint64 from, qint64 to) const;
    // Forgets ranges that end at or before `offset` (bounded memory).
    void dropBefore(qint64 offset);
    void clear() { m_ranges.clear(); }
    bool isEmpty() const { return m_ranges.empty(); }
    ByteRanges toList() const { return ByteRanges(m_ranges.begin(), m_ranges.end()); }

private:
    std::deque<ByteRange> m_ranges;
};

// The sidecar `console.stderr` of a console file: text, one line per range,
// "<offset> <length>\n" in decimal bytes of the console (the agent's format,
// app/agent/StderrRanges.h). Writers append a range before the bytes it
// covers, so a reader that reads the console and then refresh()es knows
// every stderr byte it read. Thread affinity: one thread at a time.
class StderrSidecar {
public:
    // `<dir of consolePath>/console.stderr`.
    static QString pathFor(const QString& consolePath);

    explicit StderrSidecar(QString path = {});
    const QString& path() const { return m_path; }

    // Reads the lines appended since the last call (a missing file is
    // empty); ranges ending at or before `keepFrom` are not kept. Malformed
    // lines are skipped.
    void refresh(qint64 keepFrom = 0);
    // Appends ranges to the file (created when needed); ranges() holds what
    // refresh() read (a writer, RunIngest, needs no copy in memory). Errors
    // name the file.
    Result<void> append(const ByteRanges& ranges);

    const StderrRanges& ranges() const { return m_ranges; }
    StderrRanges& ranges() { return m_ranges; }

private:
    QString m_path;
    qint64 m_readPos = 0;
    QByteArray m_partial;
    StderrRanges m_ranges;
};

// Marks ConsoleLine::fromStderr on `lines` (unmarked, as the renderer makes
// them; with no ranges nothing is touched): line i covers the stream bytes
// [base + byteOffset(i), base + byteOffset(i + 1)) and the last one up to
// `end` (a row that a later one does not follow in the stream covers at least
// its first byte); it is marked when any of them came from stderr.
void markStderrLines(QList<ConsoleLine>& lines, qint64 base, qint64 end, const StderrRanges& ranges);

} // namespace ty

Q_DECLARE_METATYPE(ty::ByteRanges)
