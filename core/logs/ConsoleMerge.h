#pragma once

#include "ConsoleLevel.h"
#include "ConsoleTimes.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QByteArrayView>
#include <QList>
#include <QString>

#include <memory>
#include <vector>

namespace ty {

class TerminalRenderer;

// One run taking part in an aggregated console.
struct ConsoleMergeSource {
    RunId run = 0;
    QString name;        // the run's name, for the tag
    QString consolePath; // local console copy (raw bytes); empty or missing: nothing yet
    QString timesPath;   // its arrival-time index; empty: ConsoleTimeIndex::pathFor(consolePath)
    qint64 startMs = 0;  // run start, ms since the epoch (UTC); 0 = unknown
    qint64 endMs = 0;    // run end; 0 = still going or unknown (the file's mtime is used)
};

// One committed row of one run, as the aggregated console shows it.
struct MergedConsoleLine {
    qint64 timeMs = 0; // arrival time of the row's last byte (see ConsoleMerge)
    RunId run = 0;
    qint64 offset = 0; // raw console offset where the row started
    QString text;      // rendered text (no escapes; at most maxLineChars columns)
    int source = 0;    // index of the ConsoleMergeSource
    ConsoleLevel level = ConsoleLevel::Info;
    bool traceback = false; // part of a Python traceback block
    bool truncated = false;
    bool fromStderr = false; // some of the row's bytes came from stderr (console.stderr sidecar)
};

// Merge order: arrival time, then run id, then offset.
bool mergedBefore(const MergedConsoleLine& a, const MergedConsoleLine& b);

// The consoles of several runs merged into one stream by arrival time, each
// row tagged with its run and classified (ConsoleLevelClassifier).
//
// Each run's console copy is rendered from offset 0 by its own
// TerminalRenderer (unlimited width, like ConsoleView), incrementally: new
// bytes are fed as they appear and only the rows they commit are produced.
// Whenever the reader has caught up with a copy (readSource() reached its
// end), rows further above the cursor than the program ever moved it up are
// committed (TerminalRenderer::commitSettledRows, as RunIngest does), so a
// progress bar being redrawn holds back only its own row. Reading a finished
// copy gives the same rows whatever the chunk size; following a live one may,
// like RunIngest, show a row twice if the program later moves the cursor
// further up than it ever did (rare: nested bars set their reach early).
//
// Arrival time of a row = arrival time (ConsoleTimeIndex::timeAt) of its
// last byte (the byte before the next row's start): when the terminal user
// saw it become final. For runs without `console.times` this is interpolated
// between the run's start and end times by offset (an estimate:
// timesEstimated()). Bytes fetched in one chunk share one time, so a
// backlog fetched after a reconnect shows as one block per run.
//
// takeLines() returns the rows committed since the last call, sorted by
// mergedBefore(); a caller keeping the merged stream inserts each batch into
// it (nearly always an append, since new rows arrive after older ones).
//
// No Qt event loop needed; not thread safe (use from one thread at a time).
class ConsoleMerge final {
public:
    static constexpr int kMaxLineChars = 16384;

    explicit ConsoleMerge(int maxLineChars = kMaxLineChars);
    ~ConsoleMerge();
    ConsoleMerge(const ConsoleMerge&) = delete;
    ConsoleMerge& operator=(const ConsoleMerge&) = delete;

    // Adds a run; returns its source index (0, 1, ...).
    int addSource(ConsoleMergeSource source);
    // Updates a run's paths and times (it started, or finished); what was
    // read so far is kept.
    void updateSource(int index, ConsoleMergeSource source);
    int sourceCount() const { return int(m_sources.size()); }
    const ConsoleMergeSource& source(int index) const;
    // Index of `run`, -1 when absent.
    int indexOf(RunId run) const;

    // Reads up to `maxBytes` new bytes of the run's console copy (from where
    // the last read stopped), reads the new entries of its time index, and
    // renders them. Returns the bytes read: 0 when there is nothing new, the
    // copy does not exist yet or the source is finished. Errors: the copy
    // exists but cannot be read (names the run and the path).
    Result<qint64> readSource(int index, qint64 maxBytes);
    // Feeds bytes that follow what was read/fed so far (the caller keeps the
    // time index current, e.g. times(index).append()). `settle`: commit the
    // settled rows afterwards (the stream is caught up; see above).
    void feed(int index, QByteArrayView bytes, bool settle = true);
    // End of the run's console: commits its last rows; later reads are no-ops.
    void finishSource(int index);
    bool isFinished(int index) const;

    qint64 bytesRead(int index) const;
    ConsoleTimeIndex& times(int index);
    // Whether the run's times are (partly) interpolated: no `console.times` entries.
    bool timesEstimated(int index) const;

    // Rows committed since the last call, sorted by mergedBefore().
    QList<MergedConsoleLine> takeLines();
    qsizetype waitingLines() const { return m_out.size(); }

    // Whole merge of finished consoles (reads every file to its end).
    static Result<QList<MergedConsoleLine>> mergeFiles(
            const QList<ConsoleMergeSource>& sources, int maxLineChars = kMaxLineChars);

private:
    struct Source;
    void collect(Source& s, int index, bool final);

    const int m_maxLineChars;
    std::vector<std::unique_ptr<Source>> m_sources;
    QList<MergedConsoleLine> m_out;
};

} // namespace ty
