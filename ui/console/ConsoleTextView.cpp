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

#include <algorithm>
#include <cmath>

namespace ty {

const QColor ConsoleTextView::kBackground(0x1e, 0x1f, 0x22);
const QColor ConsoleTextView::kForeground(0xd4, 0xd4, 0xd4);
const QColor ConsoleTextView::kStderrBackground(0x45, 0x1f, 0x24);

namespace {
const QColor kSelection(0x26, 0x4f, 0x78);
const QColor kMatch(0x8a, 0x6d, 0x00);
const QColor kTruncatedMark(0xe0, 0x9f, 0x3e);
constexpr int kMargin = 4;
constexpr Qt::CaseSensitivity kFindCase = Qt::CaseInsensitive;

bool isWordChar(QChar c)
{
    return c.isLetterOrNumber() || c == u'_' || c == u'.' || c == u'-' || c == u'/';
}
} // namespace

ConsoleTextView::ConsoleTextView(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setObjectName(QStringLiteral("consoleText"));
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    viewport()->setCursor(Qt::IBeamCursor);
    m_font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    setFont(m_font);
    updateMetrics();
}

void ConsoleTextView::updateMetrics()
{
    m_font = font();
    const QFontMetricsF fm(m_font);
    // Whole pixels above and below the baseline, so a descender never
    // reaches into the next row's pixels.
    m_ascent = int(std::ceil(fm.ascent()));
    m_rowHeight = std::max(1, m_ascent + int(std::ceil(fm.descent())) + int(std::max<qreal>(0, std::round(fm.leading()))));
    m_charWidth = fm.horizontalAdvance(QLatin1Char('M'));
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

qint64 ConsoleTextView::appendChunk(ScrollbackChunkPtr chunk)
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
    updateScrollBars();
    viewport()->update();
    return dropped;
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

ConsoleTextView::Row ConsoleTextView::row(qint64 index) const
{
    Row r;
    const qint64 committed = m_scrollback.rowCount();
    if (index < committed) {
        const auto [chunk, i] = m_scrollback.locate(index);
        r.text = chunk->text(i);
        r.spans = chunk->spans(i);
        r.fromStderr = chunk->fromStderr(i);
        r.truncated = chunk->truncated(i);
        r.fullLength = chunk->fullLength(i);
    } else if (index - committed < m_pending.size()) {
        const ConsoleLine& line = m_pending.at(index - committed);
        r.text = line.text;
        r.spans = line.spans;
        r.fromStderr = line.fromStderr;
        r.truncated = line.truncated;
        r.fullLength = line.fullLength;
    }
    return r;
}

QString ConsoleTextView::rowText(qint64 index) const
{
    return row(index).text;
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

QString ConsoleTextView::truncationMarker(qsizetype shown, qint64 fullLength)
{
    return tr("  … [line truncated: %L1 of %L2 characters shown]").arg(shown).arg(fullLength);
}

QString ConsoleTextView::rowMarker(qint64 index) const
{
    const Row r = row(index);
    return r.truncated ? truncationMarker(r.text.size(), r.fullLength) : QString();
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
    int longest = m_scrollback.maxRowLength();
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

qreal ConsoleTextView::xOfColumn(const QString& text, int col) const
{
    if (col <= 0)
        return 0;
    const QFontMetricsF fm(m_font);
    return fm.horizontalAdvance(QStringView(text).left(std::min<qsizetype>(col, text.size())).toString());
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
    for (qint64 i = first; i < last; ++i)
        drawRow(p, row(i), i, qreal((i - first) * m_rowHeight));
}

void ConsoleTextView::drawRow(QPainter& p, const Row& r, qint64 index, qreal y)
{
    const qreal x0 = kMargin - horizontalScrollBar()->value();
    const qreal w = viewport()->width();
    if (r.fromStderr)
        p.fillRect(QRectF(0, y, w, m_rowHeight), kStderrBackground);
    const QString& text = r.text;

    // Backgrounds: style spans, find matches, the selection (on top).
    auto fillColumns = [&](int from, int to, const QColor& colour) {
        const qreal a = x0 + xOfColumn(text, from);
        const qreal b = x0 + xOfColumn(text, to);
        if (b > a)
            p.fillRect(QRectF(a, y, b - a, m_rowHeight), colour);
    };
    for (const StyleSpan& s : r.spans) {
        const bool inverse = s.flags & StyleSpan::Inverse;
        const QColor bg = inverse ? (s.fg ? QColor::fromRgb(s.fg & 0xFFFFFFu) : kForeground)
                                  : (s.bg ? QColor::fromRgb(s.bg & 0xFFFFFFu) : QColor());
        if (bg.isValid())
            fillColumns(s.start, s.start + s.length, bg);
    }
    if (!m_highlight.isEmpty()) {
        qsizetype at = 0;
        while ((at = text.indexOf(m_highlight, at, kFindCase)) >= 0) {
            fillColumns(int(at), int(at + m_highlight.size()), kMatch);
            at += m_highlight.size();
        }
    }
    if (hasSelection()) {
        const Pos a = selectionStart();
        const Pos b = selectionEnd();
        if (index >= a.row && index <= b.row) {
            const int from = index == a.row ? a.col : 0;
            const int to = index == b.row ? b.col : int(text.size());
            fillColumns(from, to, kSelection);
            if (index < b.row) // the row's end (newline) is selected too
                p.fillRect(QRectF(x0 + xOfColumn(text, int(text.size())), y, m_charWidth, m_rowHeight), kSelection);
        }
    }

    // Text, segment by segment.
    const qreal baseline = y + m_ascent;
    qreal x = x0;
    auto drawSegment = [&](QStringView segment, const QColor& colour, const QFont& font) {
        if (segment.isEmpty())
            return;
        const QString s = segment.toString();
        const QFontMetricsF fm(font);
        const qreal advance = fm.horizontalAdvance(s);
        if (x < w && x + advance > 0) {
            p.setFont(font);
            p.setPen(colour);
            p.drawText(QPointF(x, baseline), s);
        }
        x += advance;
    };
    qsizetype pos = 0;
    for (const StyleSpan& s : r.spans) {
        if (s.start < pos || s.length <= 0 || s.start >= text.size())
            continue;
        drawSegment(QStringView(text).mid(pos, s.start - pos), kForeground, m_font);
        QColor fg = s.fg ? QColor::fromRgb(s.fg & 0xFFFFFFu) : kForeground;
        if (s.flags & StyleSpan::Inverse)
            fg = s.bg ? QColor::fromRgb(s.bg & 0xFFFFFFu) : kBackground;
        if (s.flags & StyleSpan::Faint)
            fg.setAlphaF(0.6f);
        drawSegment(QStringView(text).mid(s.start, s.length), fg, fontFor(s.flags));
        pos = s.start + s.length;
    }
    drawSegment(QStringView(text).mid(pos), kForeground, m_font);
    if (r.truncated) {
        QFont italic = m_font;
        italic.setItalic(true);
        drawSegment(truncationMarker(text.size(), r.fullLength), kTruncatedMark, italic);
    }
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
    const QFontMetricsF fm(m_font);
    qreal at = 0;
    for (int col = 0; col < text.size();) {
        // A character outside the BMP is two code units: measured and
        // stepped over whole, so a position never splits it.
        const int units = text.at(col).isHighSurrogate() && col + 1 < text.size() ? 2 : 1;
        const qreal advance = fm.horizontalAdvance(QStringView(text).mid(col, units).toString());
        if (x < at + advance / 2)
            return {index, col};
        at += advance;
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
    const QPoint pos = event->position().toPoint();
    // Dragging past the top or bottom scrolls a row a move.
    QScrollBar* bar = verticalScrollBar();
    if (pos.y() < 0)
        bar->setValue(bar->value() - 1);
    else if (pos.y() > viewport()->height())
        bar->setValue(bar->value() + 1);
    m_cursor = hitTest(pos);
    viewport()->update();
}

void ConsoleTextView::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton && m_selecting) {
        m_selecting = false;
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
    const Pos start = hasSelection() ? (backward ? selectionStart() : selectionEnd()) : (backward ? Pos{rows - 1, -1} : Pos{0, 0});
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
        total += l.text.count(m_highlight, kFindCase);
    return total;
}

} // namespace ty
