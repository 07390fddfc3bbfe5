#pragma once

#include <QByteArray>
#include <QIODevice>
#include <QString>

#include <vector>

namespace ty {

// When each part of a run's local console copy arrived: the sidecar index
// `console.times` next to `console.log` (consoleTimesPath()).
//
// Format (ours): ASCII text, append-only, one entry per ingest chunk:
//   "<byte offset> <arrival wall time, ms since the Unix epoch, UTC>\n"
// meaning "the console bytes from this offset on arrived at this time" (until
// the next entry's offset). Written by core/runs/RunIngest *before* the chunk
// is appended to console.log, so a reader that sees console bytes also sees
// their entry. A later entry at a lower or equal offset (the local copy lost
// bytes and was fetched again) replaces every entry at or above it.
//
// Runs without an index (from before it existed) or bytes before its first
// entry get interpolated times: linear in the byte offset between the run's
// start time (offset 0) and the first entry, or the end time (setFallback's
// end offset) when there is none. Such times are estimates (hasEntries()).
//
// Not thread safe; one instance per run.
class ConsoleTimeIndex final {
public:
    struct Entry {
        qint64 offset = 0;
        qint64 timeMs = 0;
    };

    // "<dir>/console.log" -> "<dir>/console.times"; another name gets ".times" appended.
    static QString pathFor(const QString& consolePath);
    // One entry as written to the file.
    static QByteArray formatEntry(qint64 offset, qint64 timeMs);

    // Adds an entry (see the replacement rule above).
    void append(qint64 offset, qint64 timeMs);
    // Reads the entries appended to `path` since the last call (a missing
    // file has none; an unfinished last line waits for the next call).
    // Malformed lines are skipped; the first is kept in error() as
    // "FILE:LINE: ...". Returns the number of entries read.
    int readMore(const QString& path);

    // Interpolation ends for offsets before the first entry (see above).
    // A start time <= 0 means unknown: the end time is used flat.
    void setFallback(qint64 startMs, qint64 endMs, qint64 endOffset);

    // Arrival time (ms since the epoch) of the byte at `offset`.
    qint64 timeAt(qint64 offset) const;

    bool hasEntries() const { return !m_entries.empty(); }
    const std::vector<Entry>& entries() const { return m_entries; }
    QString error() const { return m_error; }

private:
    std::vector<Entry> m_entries; // strictly increasing offsets
    qint64 m_readPos = 0;         // bytes of the file consumed by readMore()
    qint64 m_lineNo = 0;
    qint64 m_startMs = 0;
    qint64 m_endMs = 0;
    qint64 m_endOffset = 0;
    QString m_error;
};

} // namespace ty
