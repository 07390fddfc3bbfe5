#pragma once

#include "ConsoleLine.h"
#include "core/agentproto/StderrRanges.h"
#include "core/common/Result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QFile>
#include <QList>
#include <QMetaType>
#include <QString>

namespace ty {

// A byte range [offset, offset + length) of a run's console stream: the
// protocol's own (core/agentproto/StderrRanges.h, shared with the agent).
using ByteRange = agentproto::ByteRange;
using ByteRanges = QList<ByteRange>;

// Which bytes of a console came from the run's stderr: a sorted set of
// disjoint, non-adjacent ranges (adjacent and overlapping ones are merged).
// Source: the agent's `output` events (PROTOCOL.md, revision 2) and the
// sidecar file console.stderr beside a console copy (StderrSidecar).
// agentproto::StderrRangeSet, with the Qt spellings the core uses.
class StderrRanges : public agentproto::StderrRangeSet {
public:
    bool isEmpty() const { return empty(); }
    ByteRanges toList() const { return ByteRanges(begin(), end()); }
};

// The sidecar `console.stderr` of a console file: text, one line per range,
// "<offset> <length>\n" in decimal bytes of the console (the agent's format,
// core/agentproto/StderrRanges.h, which parses and formats it here too). Writers append a range before the bytes it
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
    // lines are skipped (agentproto::StderrSidecarReader parses them).
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
    agentproto::StderrSidecarReader m_reader;
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
