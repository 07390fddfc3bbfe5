#include "ConsoleTextView.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QFontDatabase>
#include <QFontMetricsF>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QTimer>

#include "core/logs/CharWidth.h"
#include "core/logs/TerminalRenderer.h"
#include "ui/theme/Theme.h"

#include <algorithm>
#include <cmath>

namespace ty {

const QColor ConsoleTextView::kBackground(0x1e, 0x1f, 0x22);
const QColor ConsoleTextView::kForeground(0xd4, 0xd4, 0xd4);
const QColor ConsoleTextView::kStderrBackground(0x45, 0x1f, 0x24);

QColor ConsoleTextView::displayColour(quint32 argb, bool bold, const QColor& fallback)
{
    if (argb == 0)
        return fallback;
    if (bold) {
        for (int i = 0; i < 8; ++i)
            if (argb == paletteColour(i)) {
                argb = paletteColour(i + 8);
                break;
            }
    }
    if (argb == paletteColour(4)) // blue
        return QColor(0x3b, 0x78, 0xff);
    return QColor::fromRgb(argb & 0xFFFFFFu);
}

QColor ConsoleTextView::textColour(quint32 argb, bool bold, const QColor& fallback, const QColor& background)
{
    return readableOn(displayColour(argb, bold, fallback), background, kMinContrast);
}

namespace {
const QColor kSelection(0x26, 0x4f, 0x78);
const QColor kMatch(0x8a, 0x6d, 0x00);
const QColor kTruncatedMark(0xe0, 0x9f, 0x3e);
constexpr int kMargin = 4;
constexpr Qt::CaseSensitivity kFindCase = Qt::CaseInsensitive;

// Terminal cells before each column of `text` (UTF-16 code units):
// cells[i] for i in 0..size, wcwidth() per code point (CharWidth.h), the low
// half of a surrogate pair at the same cell as its high half. Empty when
// every unit is printable ASCII: then cells[i] == i.
void cellMap(QStringView text, std::vector<int>& cells)
{
    cells.clear();
    const char16_t* u = text.utf16();
    const qsizetype n = text.size();
    qsizetype i = 0;
    while (i < n && u[i] >= 0x20 && u[i] < 0x7F)
        ++i;
    if (i == n)
        return;
    cells.resize(std::size_t(n) + 1);
    for (qsizetype k = 0; k <= i; ++k)
        cells[std::size_t(k)] = int(k);
    int cell = int(i);
    while (i < n) {
        char32_t cp = u[i];
        int units = 1;
        if (QChar::isHighSurrogate(u[i]) && i + 1 < n && QChar::isLowSurrogate(u[i + 1])) {
            cp = QChar::surrogateToUcs4(u[i], u[i + 1]);
            units = 2;
        }
        cells[std::size_t(i)] = cell;
        if (units == 2)
            cells[std::size_t(i) + 1] = cell;
        cell += std::max(0, charWidth(cp) < 0 ? 1 : charWidth(cp));
        i += units;
    }
    cells[std::size_t(n)] = cell;
}

int cellAt(const std::vector<int>& cells, qsizetype col)
{
    return cells.empty() ? int(col) : cells[std::size_t(col)];
}

bool isWordChar(QChar c)
{
    return c.isLetterOrNumber() || c == u'_' || c == u'.' || c == u'-' || c == u'/';
}
} // namespace

ConsoleTextView::ConsoleTextView(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setObjectName(QStringLiteral("consoleText"));
    setAccessibleName(tr("Console output"));
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    viewport()->setCursor(Qt::IBeamCursor);
    m_font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    setFont(m_font);
    updateMetrics();
    m_dragScroll = new QTimer(this);
    m_dragScroll->setInterval(50);
    connect(m_dragScroll, &QTimer::timeout, this, &ConsoleTextView::dragScrollStep);
}

void ConsoleTextView::updateMetrics()
{
    m_font = font();
    const QFontMetricsF fm(m_font);
    // Whole pixels above and below the baseline, so a descender never
    // reaches into the next row's pixels.
    m_ascent = int(std::ceil(fm.ascent()));
    m_rowHeight
            = std::max(1, m_ascent + int(std::ceil(fm.descent())) + int(std::max<qreal>(0, std::round(fm.leading()))));
    m_charWidth = fm.horizontalAdvance(QLatin1Char('M')); // one terminal cell
    verticalScrollBar()->setSingleStep(1);
    horizontalScrollBar()->setSingleStep(int(std::ceil(m_charWidth)) * 4);
    updateScrollBars();
}

void ConsoleTextView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange)
        updateMetrics();
    QAbstractScrollArea::changeEvent(event);
}

void ConsoleTextView::clear()
{
    m_scrollback.clear();
    m_pending.clear();
    m_committedMatches = m_pendingMatches = 0;
    m_widestCells = 0;
    m_anchor = m_cursor = Pos{};
    m_selecting = false;
    updateScrollBars();
    viewport()->update();
}

void ConsoleTextView::setPlaceholderText(const QString& text)
{
    m_placeholder = text;
    viewport()->update();
}

void ConsoleTextView::setScrollbackBudget(qsizetype bytes)
{
    m_scrollback = ConsoleScrollback(bytes);
    clear();
}

qint64 ConsoleTextView::appendChunks(const QList<ScrollbackChunkPtr>& chunks)
{
    qint64 dropped = 0;
    for (const ScrollbackChunkPtr& chunk : chunks)
        dropped += addChunk(chunk);
    updateScrollBars();
    viewport()->update();
    return dropped;
}

qint64 ConsoleTextView::addChunk(ScrollbackChunkPtr chunk)
{
    std::function<void(const ScrollbackChunk&)> dropping;
    if (!m_highlight.isEmpty()) {
        if (chunk)
            m_committedMatches += chunk->count(m_highlight, kFindCase);
        dropping = [this](const ScrollbackChunk& c) { m_committedMatches -= c.count(m_highlight, kFindCase); };
    }
    const qint64 dropped = m_scrollback.append(std::move(chunk), dropping);
    if (dropped > 0)
        shiftRows(dropped);
    return dropped;
}

void ConsoleTextView::letGoAll(qint64 alsoDropped)
{
    m_scrollback.letGoAll(alsoDropped);
    m_committedMatches = 0;
    m_anchor = m_cursor = Pos{};
    updateScrollBars();
    viewport()->update();
}

void ConsoleTextView::shiftRows(qint64 dropped)
{
    // Rows renumber from the new oldest: what is selected and what is in
    // sight stay the same text.
    auto shift = [dropped](Pos& p) {
        p.row -= dropped;
        if (p.row < 0)
            p = Pos{0, 0};
    };
    shift(m_anchor);
    shift(m_cursor);
    QScrollBar* bar = verticalScrollBar();
    bar->setValue(int(std::max<qint64>(0, bar->value() - dropped)));
}

void ConsoleTextView::setPending(const QList<ConsoleLine>& pending)
{
    m_pending = pending;
    m_pendingMatches = countPendingMatches();
    const qint64 rows = rowCount();
    if (m_anchor.row >= rows || m_cursor.row >= rows)
        clearSelection();
    updateScrollBars();
    viewport()->update();
}

ConsoleLine ConsoleTextView::row(qint64 index) const
{
    const qint64 committed = m_scrollback.rowCount();
    if (index < committed) {
        const auto [chunk, i] = m_scrollback.locate(index);
        return chunk->line(i);
    }
    return index - committed < m_pending.size() ? m_pending.at(index - committed) : ConsoleLine{};
}

QString ConsoleTextView::rowText(qint64 index) const
{
    const qint64 committed = m_scrollback.rowCount();
    if (index < committed)
        return m_scrollback.text(index);
    return index - committed < m_pending.size() ? m_pending.at(index - committed).text : QString();
}

qsizetype ConsoleTextView::rowLength(qint64 index) const
{
    const qint64 committed = m_scrollback.rowCount();
    if (index < committed) {
        const auto [chunk, i] = m_scrollback.locate(index);
        return chunk->length(i);
    }
    return m_pending.at(index - committed).text.size();
}

QList<StyleSpan> ConsoleTextView::rowSpans(qint64 index) const
{
    return row(index).spans;
}

bool ConsoleTextView::rowFromStderr(qint64 index) const
{
    return row(index).fromStderr;
}

QString ConsoleTextView::truncationMarker(qint64 shownColumns, qint64 fullColumns)
{
    // Both in terminal columns (cells), as ConsoleLine::fullLength counts them.
    return tr("  … [line truncated: %L1 of %L2 columns shown]").arg(shownColumns).arg(fullColumns);
}

QString ConsoleTextView::rowMarker(qint64 index) const
{
    const ConsoleLine r = row(index);
    if (!r.truncated)
        return {};
    std::vector<int> cells;
    cellMap(r.text, cells);
    return truncationMarker(cellAt(cells, r.text.size()), r.fullLength);
}

QString ConsoleTextView::toPlainText() const
{
    QString out;
    const qint64 rows = rowCount();
    for (qint64 i = 0; i < rows; ++i) {
        if (i > 0)
            out += u'\n';
        out += rowText(i);
    }
    return out;
}

int ConsoleTextView::rowsInSight() const
{
    return std::max(1, viewport()->height() / m_rowHeight);
}

qint64 ConsoleTextView::firstVisibleRow() const
{
    return verticalScrollBar()->value();
}

void ConsoleTextView::updateScrollBars()
{
    // The scroll bar's int range holds 2^31 rows: far beyond any budget.
    const qint64 rows = rowCount();
    const int inSight = rowsInSight();
    QScrollBar* v = verticalScrollBar();
    v->setPageStep(inSight);
    v->setRange(0, int(std::max<qint64>(0, rows - inSight)));
    // Cells: at least one per code unit of the longest row; wider rows (wide
    // characters, a truncation marker) raise m_widestCells when painted.
    int longest = std::max(m_scrollback.maxRowLength(), m_widestCells);
    for (const ConsoleLine& l : std::as_const(m_pending))
        longest = std::max(longest, int(l.text.size()));
    const int width = int(std::ceil((longest + 2) * m_charWidth)) + 2 * kMargin;
    QScrollBar* h = horizontalScrollBar();
    h->setPageStep(viewport()->width());
    h->setRange(0, std::max(0, width - viewport()->width()));
}

void ConsoleTextView::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
}

void ConsoleTextView::scrollContentsBy(int, int)
{
    viewport()->update();
}

void ConsoleTextView::scrollToRow(qint64 index)
{
    const qint64 first = firstVisibleRow();
    const int inSight = rowsInSight();
    if (index >= first && index < first + inSight)
        return;
    verticalScrollBar()->setValue(int(std::max<qint64>(0, index - inSight / 2)));
}

void ConsoleTextView::scrollToColumns(qint64 index, qsizetype from, qsizetype to)
{
    const QString text = rowText(index);
    std::vector<int> cells;
    cellMap(text, cells);
    const qreal left = cellAt(cells, std::min(from, text.size())) * m_charWidth;
    const qreal right = cellAt(cells, std::min(to, text.size())) * m_charWidth;
    QScrollBar* bar = horizontalScrollBar();
    const qreal width = viewport()->width() - 2 * kMargin;
    if (left >= bar->value() && right <= bar->value() + width)
        return;
    // The row may be wider than the range known so far (it grows when painted).
    m_widestCells = std::max(m_widestCells, cellAt(cells, text.size()));
    updateScrollBars();
    bar->setValue(int(std::max<qreal>(0, left - width / 3)));
}

QFont ConsoleTextView::fontFor(quint8 flags) const
{
    QFont f = m_font;
    if (flags & StyleSpan::Bold)
        f.setWeight(QFont::Bold);
    if (flags & StyleSpan::Italic)
        f.setItalic(true);
    if (flags & StyleSpan::Underline)
        f.setUnderline(true);
    if (flags & StyleSpan::Strike)
        f.setStrikeOut(true);
    return f;
}

void ConsoleTextView::paintEvent(QPaintEvent*)
{
    QPainter p(viewport());
    p.fillRect(viewport()->rect(), kBackground);
    const qint64 rows = rowCount();
    if (rows == 0 && !m_placeholder.isEmpty()) {
        p.setPen(QColor(0x80, 0x80, 0x80));
        p.setFont(m_font);
        p.drawText(QPointF(kMargin, m_ascent), m_placeholder);
        return;
    }
    const qint64 first = firstVisibleRow();
    const qint64 last = std::min(rows, first + rowsInSight() + 1);
    int widest = 0;
    for (qint64 i = first; i < last; ++i)
        widest = std::max(widest, drawRow(p, row(i), i, qreal((i - first) * m_rowHeight)));
    if (widest > m_widestCells) {
        // A row in sight is wider than the scroll range: widen it (not in
        // the middle of a paint).
        m_widestCells = widest;
        QTimer::singleShot(0, this, &ConsoleTextView::updateScrollBars);
    }
    Q_EMIT painted(first, int(last - first));
}

int ConsoleTextView::drawRow(QPainter& p, const ConsoleLine& r, qint64 index, qreal y)
{
    // Every character sits in its terminal cells (x = cell * m_charWidth),
    // whatever its glyph's advance: columns line up as in a terminal (CJK
    // and emoji take two cells, combining marks none).
    const qreal x0 = kMargin - horizontalScrollBar()->value();
    const qreal w = viewport()->width();
    const QColor rowBackground = r.fromStderr ? kStderrBackground : kBackground;
    if (r.fromStderr)
        p.fillRect(QRectF(0, y, w, m_rowHeight), kStderrBackground);
    const QString& text = r.text;
    std::vector<int>& cells = m_cells;
    cellMap(text, cells);
    const auto xOf = [&](qsizetype col) { return x0 + cellAt(cells, std::min(col, text.size())) * m_charWidth; };

    // Backgrounds: style spans, find matches, the selection (on top).
    auto fillColumns = [&](qsizetype from, qsizetype to, const QColor& colour) {
        const qreal a = xOf(from);
        const qreal b = xOf(to);
        if (b > a && b > 0 && a < w)
            p.fillRect(QRectF(a, y, b - a, m_rowHeight), colour);
    };
    for (const StyleSpan& s : r.spans) {
        const bool inverse = s.flags & StyleSpan::Inverse;
        const QColor bg = inverse ? displayColour(s.fg, s.flags & StyleSpan::Bold, kForeground)
                                  : displayColour(s.bg, false, QColor());
        if (bg.isValid())
            fillColumns(s.start, s.start + s.length, bg);
    }
    if (!m_highlight.isEmpty()) {
        qsizetype at = 0;
        while ((at = text.indexOf(m_highlight, at, kFindCase)) >= 0) {
            fillColumns(at, at + m_highlight.size(), kMatch);
            at += m_highlight.size();
        }
    }
    if (hasSelection()) {
        const Pos a = selectionStart();
        const Pos b = selectionEnd();
        if (index >= a.row && index <= b.row) {
            const qsizetype from = index == a.row ? a.col : 0;
            const qsizetype to = index == b.row ? b.col : text.size();
            fillColumns(from, to, kSelection);
            if (index < b.row) // the row's end (newline) is selected too
                p.fillRect(QRectF(xOf(text.size()), y, m_charWidth, m_rowHeight), kSelection);
        }
    }

    // Text, segment by segment: runs of printable ASCII in one drawText
    // (their advance is the cell width in a fixed-pitch font), any other
    // character alone at its cell.
    const qreal baseline = y + m_ascent;
    auto drawSegment
            = [&](QStringView segment, qsizetype startCol, int startCell, const QColor& colour, const QFont& font) {
                  if (segment.isEmpty())
                      return;
                  p.setFont(font);
                  p.setPen(colour);
                  const auto cellOf = [&](qsizetype k) {
                      return startCol < 0 ? startCell + int(k) : cellAt(cells, startCol + k);
                  };
                  qsizetype k = 0;
                  const qsizetype n = segment.size();
                  while (k < n) {
                      const qreal x = x0 + cellOf(k) * m_charWidth;
                      qsizetype e = k;
                      const char16_t* u = segment.utf16();
                      if (u[k] >= 0x20 && u[k] < 0x7F) {
                          while (e < n && u[e] >= 0x20 && u[e] < 0x7F)
                              ++e;
                      } else {
                          e = k + ((QChar::isHighSurrogate(u[k]) && k + 1 < n) ? 2 : 1);
                          // Combining marks (no cell of their own) go with their base.
                          while (e < n && cellOf(e) == cellOf(k) && !(u[e] >= 0x20 && u[e] < 0x7F))
                              ++e;
                      }
                      const qreal right = x0 + cellOf(e) * m_charWidth;
                      if (right > 0 && x < w)
                          p.drawText(QPointF(x, baseline), segment.mid(k, e - k).toString());
                      k = e;
                  }
              };
    qsizetype pos = 0;
    for (const StyleSpan& s : r.spans) {
        if (s.start < pos || s.length <= 0 || s.start >= text.size())
            continue;
        drawSegment(QStringView(text).mid(pos, s.start - pos), pos, 0, kForeground, m_font);
        // Readable on what is behind it: the span's own background, else the row's.
        const bool bold = s.flags & StyleSpan::Bold;
        QColor fg;
        if (s.flags & StyleSpan::Inverse) {
            fg = textColour(s.bg, false, kBackground, displayColour(s.fg, bold, kForeground));
        } else {
            const QColor behind = s.bg != 0 ? displayColour(s.bg, false, rowBackground) : rowBackground;
            fg = textColour(s.fg, bold, kForeground, behind);
        }
        if (s.flags & StyleSpan::Faint)
            fg.setAlphaF(0.6f);
        drawSegment(QStringView(text).mid(s.start, s.length), s.start, 0, fg, fontFor(s.flags));
        pos = s.start + s.length;
    }
    drawSegment(QStringView(text).mid(pos), pos, 0, kForeground, m_font);
    int rowCells = cellAt(cells, text.size());
    if (r.truncated) {
        QFont italic = m_font;
        italic.setItalic(true);
        const QString mark = truncationMarker(rowCells, r.fullLength);
        drawSegment(mark, -1, rowCells, kTruncatedMark, italic); // the marker is ASCII and '…' (one cell each)
        rowCells += int(mark.size());
    }
    return rowCells;
}

ConsoleTextView::Pos ConsoleTextView::hitTest(QPoint viewportPos) const
{
    const qint64 rows = rowCount();
    if (rows == 0)
        return {};
    qint64 index = firstVisibleRow() + (viewportPos.y() < 0 ? -1 : viewportPos.y() / m_rowHeight);
    if (index < 0)
        return {0, 0};
    if (index >= rows) {
        const qint64 lastRow = rows - 1;
        return {lastRow, int(rowText(lastRow).size())};
    }
    const QString text = rowText(index);
    const qreal x = viewportPos.x() - kMargin + horizontalScrollBar()->value();
    // The nearest boundary between characters, in cells (as drawRow lays
    // them out); never between the two halves of a surrogate pair.
    std::vector<int> cells;
    cellMap(text, cells);
    const qreal cell = x / m_charWidth;
    for (int col = 0; col < text.size();) {
        const int units = text.at(col).isHighSurrogate() && col + 1 < text.size() ? 2 : 1;
        const int left = cellAt(cells, col);
        const int right = cellAt(cells, col + units);
        if (right > left && cell < (left + right) / 2.0)
            return {index, col};
        col += units;
    }
    return {index, int(text.size())};
}

QString ConsoleTextView::selectedText() const
{
    if (!hasSelection())
        return {};
    const Pos a = selectionStart();
    const Pos b = selectionEnd();
    QString out;
    for (qint64 i = a.row; i <= b.row; ++i) {
        const QString text = rowText(i);
        const int from = i == a.row ? a.col : 0;
        const int to = i == b.row ? std::min(b.col, int(text.size())) : int(text.size());
        if (i > a.row)
            out += u'\n';
        if (to > from)
            out += QStringView(text).mid(from, to - from);
    }
    return out;
}

void ConsoleTextView::select(Pos from, Pos to)
{
    m_anchor = from;
    m_cursor = to;
    viewport()->update();
}

void ConsoleTextView::selectAll()
{
    const qint64 rows = rowCount();
    if (rows == 0)
        return;
    select(Pos{0, 0}, Pos{rows - 1, int(rowText(rows - 1).size())});
}

void ConsoleTextView::clearSelection()
{
    m_anchor = m_cursor = Pos{};
    viewport()->update();
}

void ConsoleTextView::copy() const
{
    if (hasSelection())
        QApplication::clipboard()->setText(selectedText());
}

void ConsoleTextView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton) {
        QAbstractScrollArea::mousePressEvent(event);
        return;
    }
    const Pos at = hitTest(event->position().toPoint());
    if (event->modifiers() & Qt::ShiftModifier)
        m_cursor = at;
    else
        m_anchor = m_cursor = at;
    m_selecting = true;
    viewport()->update();
}

void ConsoleTextView::mouseMoveEvent(QMouseEvent* event)
{
    if (!m_selecting)
        return;
    m_dragPos = event->position().toPoint();
    const bool outside = m_dragPos.y() < 0 || m_dragPos.y() > viewport()->height();
    if (outside && !m_dragScroll->isActive()) {
        dragScrollStep(); // at once, then every 50 ms while the mouse stays out
        m_dragScroll->start();
    } else if (!outside) {
        m_dragScroll->stop();
    }
    m_cursor = hitTest(m_dragPos);
    viewport()->update();
}

void ConsoleTextView::dragScrollStep()
{
    if (!m_selecting) {
        m_dragScroll->stop();
        return;
    }
    // One row a step at the edge, one more per row height further out (at
    // most 40): a short reach crawls, a long one races through the scrollback.
    const int h = std::max(1, int(m_rowHeight));
    const int beyond = m_dragPos.y() < 0 ? -m_dragPos.y() : m_dragPos.y() - viewport()->height();
    if (beyond <= 0) {
        m_dragScroll->stop();
        return;
    }
    const int rows = std::min(40, 1 + beyond / h);
    QScrollBar* bar = verticalScrollBar();
    bar->setValue(bar->value() + (m_dragPos.y() < 0 ? -rows : rows));
    m_cursor = hitTest(m_dragPos);
    viewport()->update();
}

void ConsoleTextView::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton && m_selecting) {
        m_selecting = false;
        m_dragScroll->stop();
        if (hasSelection() && QApplication::clipboard()->supportsSelection())
            QApplication::clipboard()->setText(selectedText(), QClipboard::Selection);
    }
}

void ConsoleTextView::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return;
    const Pos at = hitTest(event->position().toPoint());
    const QString text = rowText(at.row);
    int from = std::min(at.col, int(text.size()));
    int to = from;
    while (from > 0 && isWordChar(text.at(from - 1)))
        --from;
    while (to < text.size() && isWordChar(text.at(to)))
        ++to;
    select(Pos{at.row, from}, Pos{at.row, to});
    m_selecting = false;
    if (hasSelection() && QApplication::clipboard()->supportsSelection())
        QApplication::clipboard()->setText(selectedText(), QClipboard::Selection);
}

void ConsoleTextView::keyPressEvent(QKeyEvent* event)
{
    if (event == QKeySequence::Copy) {
        copy();
        return;
    }
    if (event == QKeySequence::SelectAll) {
        selectAll();
        return;
    }
    QScrollBar* bar = verticalScrollBar();
    if (event == QKeySequence::MoveToStartOfDocument) {
        bar->setValue(0);
        return;
    }
    if (event == QKeySequence::MoveToEndOfDocument) {
        bar->setValue(bar->maximum());
        return;
    }
    QAbstractScrollArea::keyPressEvent(event);
}

void ConsoleTextView::contextMenuEvent(QContextMenuEvent* event)
{
    QMenu menu(this);
    QAction* copyAction = menu.addAction(tr("&Copy"), this, &ConsoleTextView::copy);
    copyAction->setShortcut(QKeySequence::Copy);
    copyAction->setEnabled(hasSelection());
    QAction* all = menu.addAction(tr("Select &All"), this, &ConsoleTextView::selectAll);
    all->setShortcut(QKeySequence::SelectAll);
    menu.exec(event->globalPos());
}

bool ConsoleTextView::find(const QString& needle, bool backward)
{
    const qint64 rows = rowCount();
    if (needle.isEmpty() || rows == 0)
        return false;
    const qint64 committed = m_scrollback.rowCount();
    // Index of the match in row `i` at or after `from` (backward: starting at or before it).
    auto search = [&](qint64 i, qsizetype from) -> qsizetype {
        if (i < committed) {
            const auto [chunk, k] = m_scrollback.locate(i);
            if (backward && from < 0)
                return -1;
            return chunk->indexOf(k, needle, from, kFindCase, backward);
        }
        const QString& text = m_pending.at(i - committed).text;
        if (backward)
            return from < 0 ? -1 : text.lastIndexOf(needle, from, kFindCase);
        return text.indexOf(needle, from, kFindCase);
    };
    // Start after the selection (forward) or before it (backward).
    const Pos start = hasSelection() ? (backward ? selectionStart() : selectionEnd())
                                     : (backward ? Pos{rows - 1, -1} : Pos{0, 0});
    for (qint64 step = 0; step <= rows; ++step) {
        const qint64 i = backward ? ((start.row - step) % rows + rows) % rows : (start.row + step) % rows;
        // The whole row, except in the first one: only after (before) the
        // start. The loop ends back in the first row to search all of it.
        qsizetype from = backward ? rowLength(i) : 0;
        if (step == 0 && !(backward && start.col < 0))
            from = backward ? qsizetype(start.col) - 1 : start.col;
        const qsizetype at = search(i, from);
        if (at >= 0) {
            select(Pos{i, int(at)}, Pos{i, int(at + needle.size())});
            scrollToRow(i);
            scrollToColumns(i, at, at + needle.size());
            return true;
        }
    }
    return false;
}

void ConsoleTextView::setHighlight(const QString& needle)
{
    if (needle == m_highlight)
        return;
    m_highlight = needle;
    m_committedMatches = 0;
    if (!needle.isEmpty()) {
        // Chunk by chunk (each once).
        const qint64 committed = m_scrollback.rowCount();
        for (qint64 i = 0; i < committed;) {
            const auto [chunk, k] = m_scrollback.locate(i);
            m_committedMatches += chunk->count(needle, kFindCase);
            i += chunk->rowCount() - k;
        }
    }
    m_pendingMatches = countPendingMatches();
    viewport()->update();
}

qint64 ConsoleTextView::countPendingMatches() const
{
    if (m_highlight.isEmpty())
        return 0;
    qint64 total = 0;
    for (const ConsoleLine& l : m_pending)
        total += countMatches(QStringView(l.text), m_highlight, kFindCase);
    return total;
}

} // namespace ty
