#pragma once

#include "core/common/Run.h"
#include "ConsoleScrollback.h"
#include "core/logs/ConsoleLine.h"

#include <QColor>
#include <QPointer>
#include <QThread>
#include <QWidget>

class QLabel;
class QLineEdit;
class QTimer;
class QToolButton;

namespace ty {

class ConsoleFeeder;
class ConsoleTextView;

// The selected run's console, as a terminal would show it: colours from the
// TerminalRenderer's style spans (never a raw escape sequence), a progress
// bar redrawn with \r as one updating row, a truncated row marked as such.
//
// Data path: setRun() makes the worker-thread ConsoleFeeder read the local
// console copy; appendBytes() passes live RunControl::consoleReceived bytes
// (offsets de-duplicate the two). The feeder renders and packs rows into
// ScrollbackChunks and sends them (~every 60 ms); the view links them into
// its ConsoleTextView, which draws only the rows in sight. So an update costs
// the GUI thread O(chunks), not O(rows), whatever the run's rate, and the
// scrollback holds millions of rows: it is bounded by bytes
// (ConsoleScrollback::kDefaultBudgetBytes, oldest rows let go a chunk at a
// time; the info line says how many), the feeder by the same budget
// (tests/bench/bench_follow, issue 5).
//
// Follow mode (objectName "followButton") keeps the newest row in view;
// scrolling up turns it off, scrolling to the bottom turns it back on.
// A bar in the run's colour (runColour(), the same as in the runs table and
// every chart; objectName "consoleRunColour") sits above the text, with a
// swatch before "Run #id" in the info line.
// Ctrl+F opens the find bar ("findBar", "findEdit", "findStatus"): Enter / F3 next,
// Shift+Enter / Shift+F3 previous, every match highlighted, Esc closes.
// GUI thread only.
class ConsoleView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ConsoleView)

public:
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
    ConsoleTextView* textView() const { return m_text; }
    // The scrollback's byte budget (ConsoleScrollback::kDefaultBudgetBytes);
    // drops what is shown.
    void setScrollbackBudget(qsizetype bytes);
    bool followMode() const;
    void setFollowMode(bool on);
    // Rows at the end that are still being redrawn (progress bars).
    int pendingRowCount() const;
    qint64 bytesShown() const { return m_bytes; }
    // Bytes at the start of the console file that were not read (a file
    // bigger than the scrollback budget; the info line says so).
    qint64 skippedBytes() const { return m_skippedBytes; }
    // Occurrences of the find bar's text in the whole console (0 while closed).
    qint64 matchCount();

    void showFindBar();
    bool findNext();
    bool findPrevious();

Q_SIGNALS:
    // An update from the feeder is shown.
    void contentUpdated();

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void onUpdate(int ticket, bool reset, qint64 skippedBytes, qint64 droppedBefore,
            const QList<ScrollbackChunkPtr>& committed, const QList<ConsoleLine>& pending, qint64 bytes);
    void scrollToEndIfFollowing();
    void onScrolled(int value);
    bool find(bool backward);
    void highlightMatches();
    void hideFindBar();
    void updateInfo();

    QThread m_thread;
    ConsoleFeeder* m_feeder = nullptr;
    ConsoleTextView* m_text = nullptr;
    QToolButton* m_followButton = nullptr;
    QLabel* m_info = nullptr;
    QWidget* m_colourBar = nullptr;
    QColor m_barColour;
    QWidget* m_findBar = nullptr;
    QLineEdit* m_findEdit = nullptr;
    QLabel* m_findStatus = nullptr;
    static constexpr int kFindDelayMs = 150;
    static constexpr qint64 kFindDelayRows = 200000; // above this, counting waits for a pause in typing
    QTimer* m_findTimer = nullptr;

    RunId m_run = 0;
    int m_ticket = 0;
    qint64 m_bytes = 0;
    qint64 m_skippedBytes = 0; // console file bytes the feeder did not read
    QString m_emptyText;       // the placeholder once the file has been read: nothing yet / no output
    bool m_autoScrolling = false;
};

} // namespace ty
