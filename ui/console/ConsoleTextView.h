#pragma once

#include "ConsoleScrollback.h"
#include "core/logs/ConsoleLine.h"

#include <QAbstractScrollArea>
#include <QColor>
#include <QFont>
#include <QPoint>

#include <vector>

class QTimer;

namespace ty {

// The text area of a run's console: a terminal-style view that draws only the
// rows in sight, straight from a ConsoleScrollback (committed rows, packed)
// followed by the renderer's pending rows (progress bars still being
// redrawn). Appending is O(1) per chunk and painting is O(rows in sight), so
// following 100,000 lines/s or scrolling through millions of rows never lays
// out a document (issue 5; QPlainTextEdit spent 30-60 ms bursts inserting
// and trimming blocks, tests/bench/bench_follow).
//
// Rows are numbered 0..rowCount()-1, oldest kept first; columns are UTF-16
// code units of a row's text. The vertical scroll bar counts rows, the
// horizontal one pixels. Colours and bold/italic/underline/strike come from
// the rows' StyleSpans; rows with stderr bytes have a red-tinted background;
// a truncated row ends with an orange "[line truncated …]" marker (shown,
// never selected or copied).
//
// Selection as in a terminal: drag to select (held past the top or bottom
// edge, the view scrolls on by itself, faster the further out), double-click for a word,
// Shift+click to extend, Ctrl+A all, Ctrl+C (or the context menu) copies the
// selected rows' text joined by '\n'. Find: findNext() selects the next match
// (case-insensitive, wrapping) and scrolls to it; setHighlight() marks every
// match in sight. GUI thread only.
class ConsoleTextView final : public QAbstractScrollArea {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ConsoleTextView)

public:
    struct Pos {
        qint64 row = 0;
        int col = 0;
        friend bool operator==(const Pos&, const Pos&) = default;
        friend bool operator<(const Pos& a, const Pos& b) { return a.row < b.row || (a.row == b.row && a.col < b.col); }
    };

    static const QColor kBackground;
    static const QColor kForeground;
    static const QColor kStderrBackground;
    // How a span's colour (TerminalRenderer's ARGB, 0 = the default) is
    // shown on kBackground: bold text in one of the eight basic colours is
    // drawn in its bright twin (xterm's boldColors, on by default there),
    // and the basic blue, xterm's #0000EE, which is barely legible on a dark
    // background, as #3B78FF. Every other colour as it is.
    static QColor displayColour(quint32 argb, bool bold, const QColor& fallback);
    // The least contrast of text against what is behind it: WCAG AA for
    // body text (VS Code's terminal.integrated.minimumContrastRatio default).
    static constexpr double kMinContrast = 4.5;
    // The colour text in span colour `argb` is drawn in over `background`:
    // displayColour(), lightened (on a dark background; darkened on a light
    // one) by the least amount that gives kMinContrast (ui/theme readableOn).
    // xterm's bright blue #5C5CFF, which bold blue becomes, has 3.5:1 on
    // kBackground: drawn #7575FF, 4.5:1. Black on the dark background turns
    // grey instead of vanishing. Colours with enough contrast are kept.
    static QColor textColour(quint32 argb, bool bold, const QColor& fallback, const QColor& background);

    explicit ConsoleTextView(QWidget* parent = nullptr);

    // Drops every row.
    void clear();
    // Shown (greyed) while there is no row.
    void setPlaceholderText(const QString& text);
    QString placeholderText() const { return m_placeholder; }
    // Appends committed rows (takes the chunks), oldest first. Returns the
    // rows dropped at the front to stay within the scrollback budget (the
    // view keeps showing the same rows unless they were the ones dropped).
    qint64 appendChunks(const QList<ScrollbackChunkPtr>& chunks);
    // Lets go of every committed row, counting `alsoDropped` more (rows let
    // go on their way here; see ConsoleScrollback::letGoAll).
    void letGoAll(qint64 alsoDropped);
    // Replaces the pending rows shown after the committed ones.
    void setPending(const QList<ConsoleLine>& pending);
    const ConsoleScrollback& scrollback() const { return m_scrollback; }
    void setScrollbackBudget(qsizetype bytes);

    qint64 rowCount() const { return m_scrollback.rowCount() + m_pending.size(); }
    int pendingRowCount() const { return int(m_pending.size()); }
    QString rowText(qint64 row) const;
    qsizetype rowLength(qint64 row) const;
    QList<StyleSpan> rowSpans(qint64 row) const;
    bool rowFromStderr(qint64 row) const;
    // What is drawn after a truncated row's text ("" for a whole row).
    QString rowMarker(qint64 row) const;
    // Every row's text joined by '\n' (tests, small consoles).
    QString toPlainText() const;

    // First row in sight, and how many fit.
    qint64 firstVisibleRow() const;
    int rowsInSight() const;
    int rowHeight() const { return m_rowHeight; }
    void scrollToRow(qint64 row); // puts `row` in sight (centred if it was not)

    bool hasSelection() const { return m_anchor != m_cursor; }
    Pos selectionStart() const { return std::min(m_anchor, m_cursor); }
    Pos selectionEnd() const { return std::max(m_anchor, m_cursor); }
    QString selectedText() const;
    void select(Pos from, Pos to);
    void selectAll();
    void clearSelection();
    void copy() const;
    // The text position under a viewport point (clamped to rows and row ends).
    Pos hitTest(QPoint viewportPos) const;

    // Find `needle` (case-insensitive) after the selection (backward: before
    // it), wrapping once; selects it and scrolls to it. False when absent.
    bool find(const QString& needle, bool backward);
    // Marks every occurrence of `needle` in the rows in sight ("" for none)
    // and counts them in every row: once here (O(all rows)), then kept up to
    // date per appended / dropped chunk and pending rows (O(new rows)).
    void setHighlight(const QString& needle);
    QString highlight() const { return m_highlight; }
    // Occurrences of the highlight (case-insensitive) in every row held.
    qint64 highlightCount() const { return m_committedMatches + m_pendingMatches; }

Q_SIGNALS:
    // After each paint of the viewport: rows [firstRow, firstRow + rows) were
    // drawn (row numbers as rowText() takes them, valid until the next
    // append or trim). For measurement (tests/bench/bench_follow: a line
    // written on the node -> its row painted) and tests; costs nothing
    // unconnected.
    void painted(qint64 firstRow, int rows);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    ConsoleLine row(qint64 index) const;
    qint64 addChunk(ScrollbackChunkPtr chunk); // appendChunks' work for one chunk
    void updateMetrics();
    void updateScrollBars();
    void shiftRows(qint64 dropped);
    // Draws row `index` at y; returns its width in terminal cells.
    int drawRow(QPainter& p, const ConsoleLine& r, qint64 index, qreal y);
    QFont fontFor(quint8 flags) const;
    qint64 countPendingMatches() const;
    static QString truncationMarker(qint64 shownColumns, qint64 fullColumns);
    // Scrolls sideways so columns [from, to) of row `index` are in sight.
    void scrollToColumns(qint64 index, qsizetype from, qsizetype to);

    ConsoleScrollback m_scrollback;
    QList<ConsoleLine> m_pending;
    Pos m_anchor;
    Pos m_cursor;
    bool m_selecting = false;
    // Selecting with the mouse held past an edge: scrolls on its own, faster
    // the further out (dragScrollStep), until the mouse comes back or is let go.
    QTimer* m_dragScroll = nullptr;
    QPoint m_dragPos;
    void dragScrollStep();
    QString m_highlight;
    qint64 m_committedMatches = 0;
    qint64 m_pendingMatches = 0;
    QString m_placeholder;
    QFont m_font;
    int m_rowHeight = 16;
    int m_ascent = 12;
    qreal m_charWidth = 8;    // one terminal cell (the fixed-pitch font's 'M')
    int m_widestCells = 0;    // the widest row painted so far, in cells
    std::vector<int> m_cells; // drawRow's cell map, kept to reuse its memory
};

} // namespace ty
