#pragma once

#include "common/Run.h"
#include "logs/ConsoleLine.h"

#include <QColor>
#include <QPointer>
#include <QThread>
#include <QWidget>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTextCharFormat;
class QTextCursor;
class QToolButton;

namespace ty {

class ConsoleFeeder;

// The selected run's console, as a terminal would show it: colours from the
// TerminalRenderer's style spans (never a raw escape sequence), a progress
// bar redrawn with \r as one updating row, a truncated row marked as such.
//
// Data path: setRun() makes the worker-thread ConsoleFeeder read the local
// console copy; appendBytes() passes live RunEngine::consoleReceived bytes
// (offsets de-duplicate the two). The feeder batches rows (~60 ms); the view
// appends them in slices of at most kLinesPerSlice rows / kSliceMs per
// event-loop turn so even a big
// console never blocks the GUI; at most kMaxBlocks rows are kept (oldest
// dropped) to bound memory.
// Bounded means: whatever the run's rate or length, the view holds at most
// kMaxBlocks rows in the document plus at most kMaxBlocks rows not inserted
// yet (when the GUI falls behind, the oldest queued rows are dropped: they
// would have been trimmed from the document anyway), and the feeder at most
// ConsoleFeeder::kMaxLines. Rows are appended without laying them out (only
// painted rows are shaped), and the oldest rows are trimmed without laying
// them out either (tests/bench/bench_follow, issue 5).
//
// Follow mode (objectName "followButton") keeps the newest row in view;
// scrolling up turns it off, scrolling to the bottom turns it back on.
// A bar in the run's colour (runColour(), the same as in the runs table and
// every chart; objectName "consoleRunColour") sits above the text, with a
// swatch before "Run #id" in the info line.
// Ctrl+F opens the find bar ("findBar", "findEdit"): Enter / F3 next,
// Shift+Enter / Shift+F3 previous, every match highlighted, Esc closes.
// GUI thread only.
class ConsoleView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ConsoleView)

public:
    static constexpr int kMaxBlocks = 20000;
    static constexpr int kLinesPerSlice = 2000;
    // Time budget of one slice (ms); the slice stops early when it is spent.
    static constexpr int kSliceMs = 8;
    // Block property (bool) of rows holding stderr bytes (ConsoleLine::fromStderr),
    // which are shown on a red-tinted background.
    static constexpr int kStderrProperty = 0x100000 + 1; // QTextFormat::UserProperty + 1

    explicit ConsoleView(QWidget* parent = nullptr);
    ~ConsoleView() override;

    // Shows run `run`, reading `consolePath` (may be empty / missing yet).
    // `live`: the run is not finished; the file is also polled for growth.
    void setRun(RunId run, const QString& consolePath, bool live);
    // The shown run finished (stop polling after a last read).
    void setLive(bool live);
    // Shows nothing but `message`.
    void clear(const QString& message = {});
    // Live bytes of a run; ignored unless `run` is the one shown.
    void appendBytes(RunId run, qint64 offset, const QByteArray& bytes);

    RunId run() const { return m_run; }
    // The colour of the bar above the text (invalid when no run is shown).
    QColor runColourShown() const { return m_run ? m_barColour : QColor(); }
    QPlainTextEdit* textView() const { return m_text; }
    bool followMode() const;
    void setFollowMode(bool on);
    // Rows at the end that are still being redrawn (progress bars).
    int pendingRowCount() const { return m_pendingBlocks; }
    qint64 bytesShown() const { return m_bytes; }
    // Whether every update received so far is in the document.
    bool isIdle() const;

    void showFindBar();
    bool findNext();
    bool findPrevious();

Q_SIGNALS:
    // An update from the feeder was put into the document.
    void contentUpdated();

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void onUpdate(int ticket, bool reset, const QList<ConsoleLine>& committed, const QList<ConsoleLine>& pending,
                  qint64 bytes);
    void drain();
    void removePendingRows(QTextCursor& cursor);
    // Drops the oldest rows beyond kMaxBlocks (without laying them out).
    void trimToMaxBlocks(QTextCursor& cursor);
    void insertLine(QTextCursor& cursor, const ConsoleLine& line);
    QTextCharFormat formatFor(const StyleSpan& span) const;
    void scrollToEndIfFollowing();
    void onScrolled(int value);
    bool find(bool backward);
    void highlightMatches();
    void hideFindBar();
    void updateInfo();

    QThread m_thread;
    ConsoleFeeder* m_feeder = nullptr;
    QPlainTextEdit* m_text = nullptr;
    QToolButton* m_followButton = nullptr;
    QLabel* m_info = nullptr;
    QWidget* m_colourBar = nullptr;
    QColor m_barColour;
    QWidget* m_findBar = nullptr;
    QLineEdit* m_findEdit = nullptr;
    QLabel* m_findStatus = nullptr;

    RunId m_run = 0;
    int m_ticket = 0;
    QList<ConsoleLine> m_incoming;  // committed rows not in the document yet
    QList<ConsoleLine> m_pending;   // latest pending rows
    bool m_pendingDirty = false;
    bool m_drainScheduled = false;
    bool m_docEmpty = true;
    int m_pendingBlocks = 0;        // rows at the end of the document that are pending rows
    qint64 m_bytes = 0;
    bool m_autoScrolling = false;
};

} // namespace ty
