#include "ConsoleView.h"

#include "ConsoleFeeder.h"
#include "ConsoleTextView.h"
#include "ui/charts/RunColour.h"

#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScopedValueRollback>
#include <QScrollBar>
#include <QShortcut>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace ty {

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

    m_text = new ConsoleTextView(this);
    m_text->setAcceptDrops(false); // drops go to the main window

    m_findBar = new QWidget(this);
    m_findBar->setObjectName(QStringLiteral("findBar"));
    auto* findLayout = new QHBoxLayout(m_findBar);
    findLayout->setContentsMargins(4, 2, 4, 2);
    m_findEdit = new QLineEdit(m_findBar);
    m_findEdit->setObjectName(QStringLiteral("findEdit"));
    m_findEdit->setAccessibleName(tr("Find in console"));
    m_findEdit->setPlaceholderText(tr("Find in console"));
    m_findEdit->setClearButtonEnabled(true);
    auto* prev = new QToolButton(m_findBar);
    prev->setObjectName(QStringLiteral("findPreviousButton"));
    prev->setText(tr("Previous"));
    auto* next = new QToolButton(m_findBar);
    next->setObjectName(QStringLiteral("findNextButton"));
    next->setText(tr("Next"));
    m_findStatus = new QLabel(m_findBar);
    m_findStatus->setObjectName(QStringLiteral("findStatus"));
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
    findShortcut->setWhatsThis(tr("Find in the console")); // Help > Keyboard shortcuts lists it
    connect(findShortcut, &QShortcut::activated, this, &ConsoleView::showFindBar);
    auto* nextShortcut = new QShortcut(QKeySequence::FindNext, this);
    nextShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    nextShortcut->setWhatsThis(tr("Find the next match in the console"));
    connect(nextShortcut, &QShortcut::activated, this, &ConsoleView::findNext);
    auto* prevShortcut = new QShortcut(QKeySequence::FindPrevious, this);
    prevShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    prevShortcut->setWhatsThis(tr("Find the previous match in the console"));
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
    // Counting matches reads every row held (~80 ms for a million rows): on
    // a big console, typing restarts a short timer instead of counting per
    // keystroke. matchCount() and find() count at once if it is pending.
    m_findTimer = new QTimer(this);
    m_findTimer->setSingleShot(true);
    m_findTimer->setInterval(kFindDelayMs);
    connect(m_findTimer, &QTimer::timeout, this, &ConsoleView::highlightMatches);
    connect(m_findEdit, &QLineEdit::textChanged, this, [this] {
        if (m_text->rowCount() > kFindDelayRows)
            m_findTimer->start();
        else
            highlightMatches();
    });
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
    m_text->clear();
    m_bytes = 0;
    m_skippedBytes = 0;
    m_emptyText = live ? tr("Waiting for output…") : tr("No output.");
    // A console file with bytes in it is being read, not waiting for output
    // (a long run's tail takes a moment).
    const qint64 onDisk = consolePath.isEmpty() ? 0 : QFileInfo(consolePath).size();
    m_text->setPlaceholderText(
            onDisk > 0 ? tr("Reading %1 of output…").arg(QLocale().formattedDataSize(onDisk)) : m_emptyText);
    setFollowMode(true);
    QMetaObject::invokeMethod(
            m_feeder, [f = m_feeder, ticket, consolePath, live] { f->open(ticket, consolePath, live); },
            Qt::QueuedConnection);
    updateInfo();
}

void ConsoleView::setLive(bool live)
{
    const int ticket = m_ticket;
    QMetaObject::invokeMethod(
            m_feeder, [f = m_feeder, ticket, live] { f->setPolling(ticket, live); }, Qt::QueuedConnection);
}

void ConsoleView::clear(const QString& message)
{
    m_run = 0;
    ++m_ticket;
    const int ticket = m_ticket;
    QMetaObject::invokeMethod(
            m_feeder, [f = m_feeder, ticket] { f->open(ticket, {}, false); }, Qt::QueuedConnection);
    m_text->clear();
    m_bytes = 0;
    m_skippedBytes = 0;
    m_emptyText = message;
    m_text->setPlaceholderText(message);
    updateInfo();
}

void ConsoleView::appendBytes(RunId run, qint64 offset, const QByteArray& bytes)
{
    if (run != m_run || run == 0)
        return;
    const int ticket = m_ticket;
    QMetaObject::invokeMethod(
            m_feeder, [f = m_feeder, ticket, offset, bytes] { f->append(ticket, offset, bytes); },
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

void ConsoleView::setScrollbackBudget(qsizetype bytes)
{
    m_text->setScrollbackBudget(bytes);
    QMetaObject::invokeMethod(
            m_feeder, [f = m_feeder, bytes] { f->setBudget(bytes); }, Qt::QueuedConnection);
}

qint64 ConsoleView::matchCount()
{
    if (m_findTimer->isActive())
        highlightMatches();
    return m_findBar->isVisible() ? m_text->highlightCount() : 0;
}

int ConsoleView::pendingRowCount() const
{
    return m_text->pendingRowCount();
}

void ConsoleView::onUpdate(int ticket, bool reset, qint64 skippedBytes, qint64 droppedBefore,
        const QList<ScrollbackChunkPtr>& committed, const QList<ConsoleLine>& pending, qint64 bytes)
{
    if (ticket != m_ticket)
        return; // for a run no longer shown
    {
        // Rows dropped at the front move the scroll bar (and each append
        // may scroll to the end): not the user scrolling.
        const QScopedValueRollback<bool> automatic(m_autoScrolling, true);
        if (reset)
            m_text->clear();
        if (droppedBefore > 0)
            m_text->letGoAll(droppedBefore); // the rows held and the new ones are not adjacent
        m_text->appendChunks(committed);
        m_text->setPending(pending);
    }
    m_bytes = bytes;
    m_skippedBytes = skippedBytes;
    if (m_text->placeholderText() != m_emptyText)
        m_text->setPlaceholderText(m_emptyText); // read: what shows if the file rendered to no rows
    scrollToEndIfFollowing();
    updateInfo();
    if (m_findBar->isVisible())
        highlightMatches();
    Q_EMIT contentUpdated();
}

void ConsoleView::scrollToEndIfFollowing()
{
    if (!followMode())
        return;
    const QScopedValueRollback<bool> automatic(m_autoScrolling, true);
    QScrollBar* bar = m_text->verticalScrollBar();
    bar->setValue(bar->maximum());
    m_text->horizontalScrollBar()->setValue(0);
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
    m_text->setHighlight({});
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
    setFollowMode(false);
    bool found = false;
    {
        // Scrolling to a match on the last page is not the user asking to follow.
        const QScopedValueRollback<bool> automatic(m_autoScrolling, true);
        found = m_text->find(needle, backward);
    }
    highlightMatches(); // the count stays in the status
    if (!found)
        m_findStatus->setText(tr("not found"));
    QPalette pal = m_findEdit->palette();
    pal.setColor(QPalette::Base, found ? palette().color(QPalette::Base) : QColor(0xff, 0xcd, 0xd2));
    m_findEdit->setPalette(pal);
    return found;
}

void ConsoleView::highlightMatches()
{
    m_findTimer->stop();
    const QString needle = m_findEdit->text();
    m_text->setHighlight(needle);
    const qint64 matches = m_text->highlightCount();
    if (!needle.isEmpty())
        m_findStatus->setText(matches == 0 ? tr("not found") : tr("%L1 match(es)").arg(matches));
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
    QString text = swatch
            + (kib < 1024 ? tr("Run #%1 · %2 KiB").arg(m_run).arg(kib, 0, 'f', 1)
                          : tr("Run #%1 · %2 MiB").arg(m_run).arg(kib / 1024.0, 0, 'f', 1));
    // What is not held: bytes never read (a file bigger than the budget),
    // then rows let go; the console file keeps everything.
    QStringList notHeld;
    if (m_skippedBytes > 0)
        notHeld << tr("the first %1 MB").arg(double(m_skippedBytes) / (1024.0 * 1024.0), 0, 'f', 1);
    if (const qint64 dropped = m_text->scrollback().droppedRows(); dropped > 0)
        notHeld << tr("%L1 rows").arg(dropped);
    if (!notHeld.isEmpty())
        text += tr(" · not held here: %1 (the console file has everything)").arg(notHeld.join(tr(" and then ")));
    m_info->setText(text);
}

} // namespace ty
