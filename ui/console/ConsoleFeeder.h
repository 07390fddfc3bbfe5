#pragma once

#include "ConsoleScrollback.h"
#include "core/logs/ConsoleLine.h"
#include "core/logs/StderrRanges.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QString>

#include <memory>

class QTimer;

namespace ty {

class TerminalRenderer;

// The console's worker half: lives on ConsoleView's worker thread, reads a
// run's local console copy, feeds the bytes through a TerminalRenderer and
// sends the rendered rows to the GUI in batches (at most one update every
// kFlushMs; a line that comes after a quiet kFlushMs is sent at once, with
// whatever the same event-loop pass brought), committed rows already packed
// into ScrollbackChunks, so neither a big file nor a 10 MB line without
// newline ever runs on the GUI thread and the GUI only links chunks in.
// Why 8 ms (#27, bench_follow v3): a stream's line waits up to kFlushMs
// here, and the goal is a p99 under 20 ms from the node's write to the
// painted row; at 60 ms, lines 50 ms apart (20 lines/s) waited for the
// timer every time (30 ms of a 42 ms median). A paint of the view takes
// about 1 ms (p50; 4 ms p99 under load), so even 125 updates a second
// leave the GUI thread most of its time.
//
// Byte offsets are those of the raw console stream (== offsets in the local
// copy). Bytes that were already fed (offset < next expected offset) are
// dropped, so the file read and the live RunControl::consoleReceived bytes can
// overlap without showing anything twice; a gap is filled from the file when
// the file has it.
//
// Every open() carries a ticket; updates carry it back so the GUI ignores
// those of a run it no longer shows. All public methods are to be called on
// the feeder's thread (ConsoleView posts them with QMetaObject::invokeMethod).
class ConsoleFeeder final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ConsoleFeeder)

public:
    static constexpr int kFlushMs = 8;
    static constexpr int kPollMs = 400;
    // Bytes read at most from the end of a huge console file on open (and
    // no more than the budget: about what the view's scrollback holds, 1.5
    // million rows of 40 characters by default).
    static constexpr qint64 kMaxInitialBytes = 64ll * 1024 * 1024;
    // Columns kept of one row; the rest is counted (ConsoleLine::fullLength).
    static constexpr int kMaxLineChars = 16384;

    explicit ConsoleFeeder(QObject* parent = nullptr);
    ~ConsoleFeeder() override;

    // Starts over with the console at `path` (may be empty or not exist yet).
    // `pollFile`: keep reading the file as it grows (a run that is still going).
    void open(int ticket, const QString& path, bool pollFile);
    // Live bytes [offset, offset + bytes.size()) for the run opened with `ticket`.
    void append(int ticket, qint64 offset, const QByteArray& bytes);
    void setPolling(int ticket, bool pollFile);
    // Rows held back between updates are kept within `bytes` (the view's
    // scrollback budget; ConsoleScrollback::kDefaultBudgetBytes until set).
    void setBudget(qsizetype bytes) { m_budget = bytes; }
    // Stops timers (before the thread ends).
    void stop();

Q_SIGNALS:
    // `reset`: drop everything shown and start with `committed`.
    // `committed`: rows that are final, to append, oldest first (the
    // receiver takes the chunks; chunks beyond ConsoleScrollback's default
    // budget were let go here already). `pending`: the rows still
    // being redrawn (progress bars), to show after them, replacing the
    // previous pending rows. `bytes`: stream bytes consumed so far.
    // `skippedBytes`: bytes at the start of the console file that were not
    // read (a file bigger than the budget). `droppedBefore`: committed rows
    // before `committed` that were let go here (more rows than the budget).
    void updated(int ticket, bool reset, qint64 skippedBytes, qint64 droppedBefore,
            const QList<ty::ScrollbackChunkPtr>& committed, const QList<ty::ConsoleLine>& pending, qint64 bytes);

private:
    void feed(const QByteArray& bytes);
    // Sets fromStderr on `lines` (committed ones end where the pending rows start).
    void markStderr(QList<ConsoleLine>& lines, bool committed);
    void readFileFrom(qint64 offset, qint64 maxBytes);
    void poll();
    void flush();
    void scheduleFlush();

    std::unique_ptr<TerminalRenderer> m_renderer;
    // console.stderr beside the file: marks rows with stderr bytes
    // (ConsoleLine::fromStderr). RunIngest writes it before the copy's
    // bytes, so it is re-read whenever rows are marked.
    StderrSidecar m_stderr;
    qint64 m_base = 0;    // stream offset of the renderer's first byte
    qint64 m_skipped = 0; // file bytes not read at open (before m_base)
    QTimer* m_flushTimer = nullptr;
    QElapsedTimer m_sinceFlush; // since the last update (invalid: none yet)
    QTimer* m_pollTimer = nullptr;
    void commit(const ConsoleLine& line);
    ScrollbackChunkPtr m_building;     // committed rows being packed
    QList<ScrollbackChunkPtr> m_ready; // full chunks, not sent yet
    qsizetype m_readyBytes = 0;
    qint64 m_readyDropped = 0;
    qsizetype m_budget = ConsoleScrollback::kDefaultBudgetBytes; // rows let go from m_ready since the last update
    QString m_path;
    int m_ticket = 0;
    qint64 m_next = 0; // next stream offset expected
    bool m_reset = false;
    bool m_dirty = false;
};

} // namespace ty
