#include "ConsoleView.h"

#include "ConsoleFeeder.h"
#include "charts/RunColour.h"

#include <QElapsedTimer>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QShortcut>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace ty {

namespace {
const QColor kBackground(0x1e, 0x1f, 0x22);
const QColor kForeground(0xd4, 0xd4, 0xd4);
constexpr int kMaxHighlights = 2000;
} // namespace

ConsoleView::ConsoleView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("consoleView"));

    // Worker: reading and terminal rendering never run on the GUI thread.
    m_feeder = new ConsoleFeeder;
    m_feeder->moveToThread(&m_thread);
    m_thread.setObjectName(QStringLiteral("console-feeder"));
    connect(m_feeder, &ConsoleFeeder::updated, this, &ConsoleView::onUpdate, Qt::QueuedConnection);
    m_thread.start();

    auto* top = new QHBoxLayout;
    top->setContentsMargins(4, 2, 4, 2);
    m_info = new QLabel(this);
    m_info->setObjectName(QStringLiteral("consoleInfo"));
    m_info->setTextFormat(Qt::RichText);
    auto* findButton = new QToolButton(this);
    findButton->setText(tr("Find"));
    findButton->setToolTip(tr("Find in the console (Ctrl+F)"));
    m_followButton = new QToolButton(this);
    m_followButton->setObjectName(QStringLiteral("followButton"));
    m_followButton->setText(tr("Follow"));
    m_followButton->setToolTip(tr("Keep the newest output in view (scroll up to stop)"));
    m_followButton->setCheckable(true);
    m_followButton->setChecked(true);
    top->addWidget(m_info, 1);
    top->addWidget(findButton);
    top->addWidget(m_followButton);

    m_text = new QPlainTextEdit(this);
    m_text->setObjectName(QStringLiteral("consoleText"));
    m_text->setReadOnly(true);
    m_text->setUndoRedoEnabled(false);
    m_text->setAcceptDrops(false); // drops go to the main window
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setMaximumBlockCount(kMaxBlocks);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    QPalette pal = m_text->palette();
    pal.setColor(QPalette::Base, kBackground);
    pal.setColor(QPalette::Text, kForeground);
    m_text->setPalette(pal);

    m_findBar = new QWidget(this);
    m_findBar->setObjectName(QStringLiteral("findBar"));
    auto* findLayout = new QHBoxLayout(m_findBar);
    findLayout->setContentsMargins(4, 2, 4, 2);
    m_findEdit = new QLineEdit(m_findBar);
    m_findEdit->setObjectName(QStringLiteral("findEdit"));
    m_findEdit->setPlaceholderText(tr("Find in console"));
    m_findEdit->setClearButtonEnabled(true);
    auto* prev = new QToolButton(m_findBar);
    prev->setObjectName(QStringLiteral("findPreviousButton"));
    prev->setText(tr("Previous"));
    auto* next = new QToolButton(m_findBar);
    next->setObjectName(QStringLiteral("findNextButton"));
    next->setText(tr("Next"));
    m_findStatus = new QLabel(m_findBar);
    auto* close = new QToolButton(m_findBar);
    close->setText(QStringLiteral("✕"));
    close->setToolTip(tr("Close (Esc)"));
    findLayout->addWidget(new QLabel(tr("Find:"), m_findBar));
    findLayout->addWidget(m_findEdit, 1);
    findLayout->addWidget(prev);
    findLayout->addWidget(next);
    findLayout->addWidget(m_findStatus);
    findLayout->addWidget(close);
    m_findBar->hide();

    m_colourBar = new QWidget(this);
    m_colourBar->setObjectName(QStringLiteral("consoleRunColour"));
    m_colourBar->setFixedHeight(4);
    m_colourBar->setAutoFillBackground(true);
    m_colourBar->setToolTip(tr("The run's colour, as in the runs table and the charts"));
    m_colourBar->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_colourBar);
    layout->addLayout(top);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_findBar);

    auto* findShortcut = new QShortcut(QKeySequence::Find, this);
    findShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(findShortcut, &QShortcut::activated, this, &ConsoleView::showFindBar);
    auto* nextShortcut = new QShortcut(QKeySequence::FindNext, this);
    nextShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(nextShortcut, &QShortcut::activated, this, &ConsoleView::findNext);
    auto* prevShortcut = new QShortcut(QKeySequence::FindPrevious, this);
    prevShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(prevShortcut, &QShortcut::activated, this, &ConsoleView::findPrevious);

    connect(findButton, &QToolButton::clicked, this, &ConsoleView::showFindBar);
    connect(next, &QToolButton::clicked, this, &ConsoleView::findNext);
    connect(prev, &QToolButton::clicked, this, &ConsoleView::findPrevious);
    connect(close, &QToolButton::clicked, this, &ConsoleView::hideFindBar);
    connect(m_findEdit, &QLineEdit::returnPressed, this, [this] {
        if (QGuiApplication::keyboardModifiers() & Qt::ShiftModifier)
            findPrevious();
        else
            findNext();
    });
    connect(m_findEdit, &QLineEdit::textChanged, this, &ConsoleView::highlightMatches);
    connect(m_followButton, &QToolButton::toggled, this, [this](bool on) {
        if (on)
            scrollToEndIfFollowing();
    });
    connect(m_text->verticalScrollBar(), &QScrollBar::valueChanged, this, &ConsoleView::onScrolled);
    connect(m_text->verticalScrollBar(), &QScrollBar::rangeChanged, this, [this] { scrollToEndIfFollowing(); });

    clear(tr("Select a run to see its console."));
}

ConsoleView::~ConsoleView()
{
    QMetaObject::invokeMethod(m_feeder, &ConsoleFeeder::stop, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
    delete m_feeder;
}

void ConsoleView::setRun(RunId run, const QString& consolePath, bool live)
{
    m_run = run;
    const int ticket = ++m_ticket;
    m_incoming.clear();
    m_pending.clear();
    m_pendingDirty = false;
    m_text->clear();
    m_docEmpty = true;
    m_pendingBlocks = 0;
    m_bytes = 0;
    m_text->setPlaceholderText(live ? tr("Waiting for output…") : tr("No output."));
    setFollowMode(true);
    QMetaObject::invokeMethod(m_feeder, [f = m_feeder, ticket, consolePath, live] { f->open(ticket, consolePath, live); },
                              Qt::QueuedConnection);
    updateInfo();
}

void ConsoleView::setLive(bool live)
{
    const int ticket = m_ticket;
    QMetaObject::invokeMethod(m_feeder, [f = m_feeder, ticket, live] { f->setPolling(ticket, live); },
                              Qt::QueuedConnection);
}

void ConsoleView::clear(const QString& message)
{
    m_run = 0;
    ++m_ticket;
    const int ticket = m_ticket;
    QMetaObject::invokeMethod(m_feeder, [f = m_feeder, ticket] { f->open(ticket, {}, false); }, Qt::QueuedConnection);
    m_incoming.clear();
    m_pending.clear();
    m_text->clear();
    m_docEmpty = true;
    m_pendingBlocks = 0;
    m_bytes = 0;
    m_text->setPlaceholderText(message);
    updateInfo();
}

void ConsoleView::appendBytes(RunId run, qint64 offset, const QByteArray& bytes)
{
    if (run != m_run || run == 0)
        return;
    const int ticket = m_ticket;
    QMetaObject::invokeMethod(m_feeder, [f = m_feeder, ticket, offset, bytes] { f->append(ticket, offset, bytes); },
                              Qt::QueuedConnection);
}

bool ConsoleView::followMode() const
{
    return m_followButton->isChecked();
}

void ConsoleView::setFollowMode(bool on)
{
    m_followButton->setChecked(on);
}

bool ConsoleView::isIdle() const
{
    return m_incoming.isEmpty() && !m_pendingDirty && !m_drainScheduled;
}

void ConsoleView::onUpdate(int ticket, bool reset, const QList<ConsoleLine>& committed,
                           const QList<ConsoleLine>& pending, qint64 bytes)
{
    if (ticket != m_ticket)
        return; // for a run no longer shown
    if (reset) {
        m_incoming.clear();
        m_text->clear();
        m_docEmpty = true;
        m_pendingBlocks = 0;
    }
    m_incoming += committed;
    if (m_incoming.size() > kMaxBlocks)
        m_incoming.remove(0, m_incoming.size() - kMaxBlocks);
    m_pending = pending;
    m_pendingDirty = true;
    m_bytes = bytes;
    if (!m_drainScheduled) {
        m_drainScheduled = true;
        QTimer::singleShot(0, this, &ConsoleView::drain);
    }
}

void ConsoleView::drain()
{
    m_drainScheduled = false;
    m_autoScrolling = true;
    QTextDocument* doc = m_text->document();
    QTextCursor cursor(doc);
    cursor.beginEditBlock();
    removePendingRows(cursor);
    // Rows are appended at the end; insertLine() relies on the cursor being
    // there. setPosition (not movePosition) inside the edit block: movePosition
    // lays out the block it starts from (text shaping), which cost more than
    // the insertion itself at 100k lines/s (issue 5).
    cursor.setPosition(doc->characterCount() - 1);
    // A slice ends after kLinesPerSlice rows or kSliceMs, whichever comes
    // first, so timers, input and paints run between slices even when the
    // document's per-row cost is high (issue 5, tests/bench/bench_follow).
    QElapsedTimer sliceClock;
    sliceClock.start();
    const qsizetype limit = std::min<qsizetype>(m_incoming.size(), kLinesPerSlice);
    qsizetype n = 0;
    while (n < limit) {
        insertLine(cursor, m_incoming.at(n));
        ++n;
        if ((n & 63) == 0 && sliceClock.elapsed() >= kSliceMs)
            break;
    }
    m_incoming.remove(0, n);
    if (m_incoming.isEmpty()) {
        for (const ConsoleLine& line : std::as_const(m_pending))
            insertLine(cursor, line);
        m_pendingBlocks = int(m_pending.size());
        m_pendingDirty = false;
    }
    trimToMaxBlocks(cursor);
    cursor.endEditBlock();
    m_autoScrolling = false;
    scrollToEndIfFollowing();
    updateInfo();
    if (!m_incoming.isEmpty()) {
        m_drainScheduled = true;
        QTimer::singleShot(0, this, &ConsoleView::drain);
    } else {
        if (m_findBar->isVisible())
            highlightMatches();
        Q_EMIT contentUpdated();
    }
}

void ConsoleView::removePendingRows(QTextCursor& cursor)
{
    if (m_pendingBlocks == 0)
        return;
    QTextDocument* doc = m_text->document();
    const int keep = doc->blockCount() - m_pendingBlocks;
    if (keep <= 0) {
        cursor.select(QTextCursor::Document);
        cursor.removeSelectedText();
        m_docEmpty = true;
    } else {
        const QTextBlock last = doc->findBlockByNumber(keep - 1);
        cursor.setPosition(last.position() + last.length() - 1);
        cursor.setPosition(doc->characterCount() - 1, QTextCursor::KeepAnchor);
        cursor.removeSelectedText();
    }
    m_pendingBlocks = 0;
}

QTextCharFormat ConsoleView::formatFor(const StyleSpan& span) const
{
    QTextCharFormat f;
    QColor fg = span.fg ? QColor::fromRgb(span.fg & 0xFFFFFFu) : QColor();
    QColor bg = span.bg ? QColor::fromRgb(span.bg & 0xFFFFFFu) : QColor();
    if (span.flags & StyleSpan::Inverse) {
        const QColor realFg = fg.isValid() ? fg : kForeground;
        const QColor realBg = bg.isValid() ? bg : kBackground;
        fg = realBg;
        bg = realFg;
    }
    if (span.flags & StyleSpan::Faint) {
        if (!fg.isValid())
            fg = kForeground;
        fg.setAlphaF(0.6f);
    }
    if (fg.isValid())
        f.setForeground(fg);
    if (bg.isValid())
        f.setBackground(bg);
    if (span.flags & StyleSpan::Bold)
        f.setFontWeight(QFont::Bold);
    if (span.flags & StyleSpan::Italic)
        f.setFontItalic(true);
    if (span.flags & StyleSpan::Underline)
        f.setFontUnderline(true);
    if (span.flags & StyleSpan::Strike)
        f.setFontStrikeOut(true);
    return f;
}

void ConsoleView::trimToMaxBlocks(QTextCursor& cursor)
{
    // QTextDocument's own maximumBlockCount (kept as a safety net) drops the
    // oldest rows with movePosition(NextBlock) once per row, which lays out
    // (shapes) every row it is about to delete: ~15 % of the GUI thread while
    // following 100k lines/s. Selecting them by position lays out nothing.
    QTextDocument* doc = cursor.document();
    const int excess = doc->blockCount() - kMaxBlocks;
    if (excess <= 0)
        return;
    QTextCursor front(doc);
    front.setPosition(doc->findBlockByNumber(excess).position(), QTextCursor::KeepAnchor);
    // As Qt does: the new first row keeps its character format.
    const QTextCharFormat charFormat = front.blockCharFormat();
    front.removeSelectedText();
    front.setBlockCharFormat(charFormat);
    // `cursor` (at the end) moved back with the text; nothing to adjust.
}

void ConsoleView::insertLine(QTextCursor& cursor, const ConsoleLine& line)
{
    // The cursor is at the end of the document (drain() puts it there and
    // every insertion below leaves it there).
    const QTextCharFormat plain;
    if (m_docEmpty)
        m_docEmpty = false;
    else
        cursor.insertBlock(QTextBlockFormat(), plain);
    if (line.fromStderr) {
        // A row with stderr bytes: tinted red (QPlainTextEdit paints block backgrounds).
        QTextBlockFormat stderrRow;
        stderrRow.setBackground(QColor(0x45, 0x1f, 0x24));
        stderrRow.setProperty(kStderrProperty, true);
        cursor.setBlockFormat(stderrRow);
    } else if (cursor.blockFormat().hasProperty(kStderrProperty)) {
        cursor.setBlockFormat(QTextBlockFormat());
    }
    qsizetype pos = 0;
    for (const StyleSpan& span : line.spans) {
        if (span.start < pos || span.length <= 0 || span.start >= line.text.size())
            continue;
        if (span.start > pos)
            cursor.insertText(line.text.mid(pos, span.start - pos), plain);
        cursor.insertText(line.text.mid(span.start, span.length), formatFor(span));
        pos = span.start + span.length;
    }
    if (pos < line.text.size())
        cursor.insertText(pos == 0 ? line.text : line.text.mid(pos), plain);
    if (line.truncated) {
        QTextCharFormat mark;
        mark.setForeground(QColor(0xe0, 0x9f, 0x3e));
        mark.setFontItalic(true);
        cursor.insertText(tr("  … [line truncated: %L1 of %L2 characters shown]")
                              .arg(line.text.size())
                              .arg(line.fullLength),
                          mark);
    }
}

void ConsoleView::scrollToEndIfFollowing()
{
    if (!followMode())
        return;
    m_autoScrolling = true;
    QScrollBar* bar = m_text->verticalScrollBar();
    bar->setValue(bar->maximum());
    m_text->horizontalScrollBar()->setValue(0);
    m_autoScrolling = false;
}

void ConsoleView::onScrolled(int value)
{
    if (m_autoScrolling)
        return;
    const bool atEnd = value >= m_text->verticalScrollBar()->maximum();
    if (followMode() != atEnd)
        setFollowMode(atEnd);
}

void ConsoleView::keyPressEvent(QKeyEvent* event)
{
    if (event->key() == Qt::Key_Escape && m_findBar->isVisible()) {
        hideFindBar();
        return;
    }
    QWidget::keyPressEvent(event);
}

void ConsoleView::showFindBar()
{
    m_findBar->show();
    m_findEdit->setFocus();
    m_findEdit->selectAll();
    highlightMatches();
}

void ConsoleView::hideFindBar()
{
    m_findBar->hide();
    m_text->setExtraSelections({});
    m_text->setFocus();
}

bool ConsoleView::findNext()
{
    return find(false);
}

bool ConsoleView::findPrevious()
{
    return find(true);
}

bool ConsoleView::find(bool backward)
{
    const QString needle = m_findEdit->text();
    if (needle.isEmpty())
        return false;
    const QTextDocument::FindFlags flags = backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    setFollowMode(false);
    bool found = m_text->find(needle, flags);
    if (!found) { // wrap around
        QTextCursor c = m_text->textCursor();
        c.movePosition(backward ? QTextCursor::End : QTextCursor::Start);
        m_text->setTextCursor(c);
        found = m_text->find(needle, flags);
    }
    m_findStatus->setText(found ? QString() : tr("not found"));
    QPalette pal = m_findEdit->palette();
    pal.setColor(QPalette::Base, found ? palette().color(QPalette::Base) : QColor(0xff, 0xcd, 0xd2));
    m_findEdit->setPalette(pal);
    return found;
}

void ConsoleView::highlightMatches()
{
    QList<QTextEdit::ExtraSelection> selections;
    const QString needle = m_findEdit->text();
    int count = 0;
    if (!needle.isEmpty()) {
        QTextCharFormat f;
        f.setBackground(QColor(0x8a, 0x6d, 0x00));
        f.setForeground(Qt::white);
        QTextDocument* doc = m_text->document();
        QTextCursor c(doc);
        while (true) {
            c = doc->find(needle, c);
            if (c.isNull())
                break;
            ++count;
            if (selections.size() < kMaxHighlights)
                selections.append(QTextEdit::ExtraSelection{c, f});
        }
    }
    m_text->setExtraSelections(selections);
    if (!needle.isEmpty())
        m_findStatus->setText(count == 0 ? tr("not found") : tr("%n match(es)", nullptr, count));
    else
        m_findStatus->clear();
}

void ConsoleView::updateInfo()
{
    if (m_run == 0) {
        m_info->clear();
        m_colourBar->hide();
        return;
    }
    const QColor colour = runColour(m_run);
    if (colour != m_barColour || !m_colourBar->isVisibleTo(this)) {
        m_barColour = colour;
        QPalette pal = m_colourBar->palette();
        pal.setColor(QPalette::Window, colour);
        m_colourBar->setPalette(pal);
        m_colourBar->show();
    }
    const double kib = double(m_bytes) / 1024.0;
    const QString swatch = QStringLiteral("<span style='color:%1'>&#9632;</span> ").arg(colour.name());
    m_info->setText(swatch
                    + (kib < 1024 ? tr("Run #%1 · %2 KiB").arg(m_run).arg(kib, 0, 'f', 1)
                                  : tr("Run #%1 · %2 MiB").arg(m_run).arg(kib / 1024.0, 0, 'f', 1)));
}

} // namespace ty
