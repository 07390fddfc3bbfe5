#include "AggregatedConsoleView.h"

#include "AggregatedConsoleFeeder.h"
#include "ui/charts/RunColour.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPainter>
#include <QScrollBar>
#include <QSettings>
#include <QStyledItemDelegate>
#include <QToolButton>
#include <QVBoxLayout>

namespace ty {

namespace {

const QString kFiltersKey = QStringLiteral("aggregatedConsole/filters");
constexpr int kTimeChars = 13; // "hh:mm:ss.zzz "
constexpr int kMaxTagChars = 24;
constexpr int kRowChars = 240; // width of a row (horizontal scroll range)

// Paints one merged line: arrival time (faint), [run name] in the run's
// colour, then the text; error rows tinted red, warnings yellow, rows with
// stderr bytes marked by a red bar on the left.
class LineDelegate final : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    int tagChars = 8;

    void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        const auto* model = static_cast<const AggregatedConsoleModel*>(index.model());
        const MergedConsoleLine& line = model->lineAt(index.row());
        p->save();
        const bool selected = option.state & QStyle::State_Selected;
        if (selected)
            p->fillRect(option.rect, option.palette.highlight());
        else if (line.level == ConsoleLevel::Error)
            p->fillRect(option.rect, QColor(220, 40, 40, 48));
        else if (line.level == ConsoleLevel::Warning)
            p->fillRect(option.rect, QColor(230, 180, 0, 56));
        if (line.fromStderr) // a red bar on the left edge, as the run's console tints stderr rows
            p->fillRect(QRect(option.rect.left(), option.rect.top(), 3, option.rect.height()), QColor(200, 40, 50));
        const QFontMetrics fm(option.font);
        const int cw = fm.horizontalAdvance(u'0');
        QRect r = option.rect.adjusted(4, 0, 0, 0);
        const QColor text = option.palette.color(selected ? QPalette::HighlightedText : QPalette::Text);
        QColor faint = text;
        faint.setAlpha(130);
        p->setFont(option.font);
        p->setPen(faint);
        p->drawText(r, Qt::AlignLeft | Qt::AlignVCenter,
                QDateTime::fromMSecsSinceEpoch(line.timeMs).toLocalTime().toString(QStringLiteral("hh:mm:ss.zzz")));
        r.setLeft(r.left() + kTimeChars * cw);
        QFont bold = option.font;
        bold.setBold(true);
        p->setFont(bold);
        p->setPen(selected ? text : runColour(line.run));
        // The tag is bold: its column is sized in the bold font's digits,
        // with one to spare (elision at an exact fit). Cut in the middle: a
        // sweep's names differ at their end (issue 21).
        const int tagWidth = (tagChars + 1) * QFontMetrics(bold).horizontalAdvance(u'0');
        const QString tag = QFontMetrics(bold).elidedText(model->runName(line.run), Qt::ElideMiddle, tagWidth);
        p->drawText(r, Qt::AlignLeft | Qt::AlignVCenter, tag);
        r.setLeft(r.left() + tagWidth + cw);
        p->setFont(option.font);
        p->setPen(text);
        p->drawText(r, Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(line.text, Qt::ElideRight, r.width()));
        p->restore();
    }

    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex&) const override
    {
        const QFontMetrics fm(option.font);
        return {fm.horizontalAdvance(u'0') * (kTimeChars + tagChars + 3 + kRowChars), fm.height() + 2};
    }
};

QVariantMap toVariant(const AggregatedConsoleView::SavedFilter& f)
{
    return {{QStringLiteral("text"), f.text}, {QStringLiteral("regex"), f.regex},
            {QStringLiteral("level"), int(f.level)}};
}

} // namespace

AggregatedConsoleView::AggregatedConsoleView(QWidget* parent)
    : QWidget(parent)
    , m_model(new AggregatedConsoleModel(this))
{
    m_filterEdit = new QLineEdit;
    m_filterEdit->setObjectName(QStringLiteral("filterEdit"));
    m_filterEdit->setAccessibleName(tr("Filter lines"));
    m_filterEdit->setPlaceholderText(tr("Filter lines (text, or a regex)"));
    m_filterEdit->setClearButtonEnabled(true);
    m_filterEdit->setToolTip(
            tr("Plain text matches case-insensitively; a regex as typed (start it with (?i) to ignore case)"));
    m_regexCheck = new QCheckBox(tr("Regex"));
    m_regexCheck->setObjectName(QStringLiteral("regexCheck"));
    m_levelCombo = new QComboBox;
    m_levelCombo->setObjectName(QStringLiteral("levelCombo"));
    m_levelCombo->setAccessibleName(tr("Level"));
    m_levelCombo->addItem(tr("All levels"), int(AggregatedConsoleModel::LevelFilter::All));
    m_levelCombo->addItem(tr("Warnings and errors"), int(AggregatedConsoleModel::LevelFilter::WarningsAndErrors));
    m_levelCombo->addItem(tr("Errors and tracebacks"), int(AggregatedConsoleModel::LevelFilter::Errors));
    m_levelCombo->addItem(tr("Written to stderr"), int(AggregatedConsoleModel::LevelFilter::Stderr));
    m_filterError = new QLabel;
    m_filterError->setObjectName(QStringLiteral("filterError"));
    m_filterError->setStyleSheet(QStringLiteral("color: #c0392b"));
    m_filterError->hide();
    m_savedCombo = new QComboBox;
    m_savedCombo->setObjectName(QStringLiteral("savedFilterCombo"));
    m_savedCombo->setAccessibleName(tr("Saved filters"));
    m_savedCombo->setMinimumContentsLength(14);
    m_saveButton = new QToolButton;
    m_saveButton->setObjectName(QStringLiteral("saveFilterButton"));
    m_saveButton->setText(tr("Save…"));
    m_saveButton->setToolTip(tr("Save the current filter under a name"));
    m_deleteButton = new QToolButton;
    m_deleteButton->setObjectName(QStringLiteral("deleteFilterButton"));
    m_deleteButton->setText(tr("Delete"));
    m_deleteButton->setToolTip(tr("Delete the saved filter picked on the left"));
    m_followButton = new QToolButton;
    m_followButton->setObjectName(QStringLiteral("followButton"));
    m_followButton->setText(tr("Follow"));
    m_followButton->setCheckable(true);
    m_followButton->setChecked(true);
    m_followButton->setToolTip(tr("Keep the newest line in view"));

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(m_filterEdit, 1);
    bar->addWidget(m_regexCheck);
    bar->addWidget(m_levelCombo);
    bar->addSpacing(8);
    bar->addWidget(m_savedCombo);
    bar->addWidget(m_saveButton);
    bar->addWidget(m_deleteButton);
    bar->addSpacing(8);
    bar->addWidget(m_followButton);

    m_list = new QListView;
    m_list->setObjectName(QStringLiteral("lineView"));
    m_list->setAccessibleName(tr("Merged console lines"));
    m_list->setUniformItemSizes(true);
    m_list->setLayoutMode(QListView::Batched);
    m_list->setBatchSize(5000);
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_list->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_list->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* delegate = new LineDelegate(m_list);
    m_list->setItemDelegate(delegate);
    m_list->setModel(m_model);

    auto* copy = new QAction(tr("Copy lines"), m_list);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    m_list->addAction(copy);
    connect(copy, &QAction::triggered, this, [this] {
        QModelIndexList rows = m_list->selectionModel()->selectedRows();
        std::sort(
                rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
        QStringList text;
        for (const QModelIndex& i : std::as_const(rows))
            text << i.data().toString();
        QApplication::clipboard()->setText(text.join(u'\n'));
    });

    m_info = new QLabel;
    m_info->setObjectName(QStringLiteral("infoLabel"));
    m_info->setTextFormat(Qt::PlainText);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_filterError);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_info);

    connect(m_filterEdit, &QLineEdit::textChanged, this, &AggregatedConsoleView::applyControls);
    connect(m_regexCheck, &QCheckBox::toggled, this, &AggregatedConsoleView::applyControls);
    connect(m_levelCombo, &QComboBox::currentIndexChanged, this, &AggregatedConsoleView::applyControls);
    connect(m_savedCombo, &QComboBox::activated, this, [this](int index) {
        if (index > 0)
            applySavedFilter(m_savedCombo->itemText(index));
    });
    connect(m_saveButton, &QToolButton::clicked, this, &AggregatedConsoleView::askAndSave);
    connect(m_deleteButton, &QToolButton::clicked, this, [this] {
        if (m_savedCombo->currentIndex() > 0)
            deleteSavedFilter(m_savedCombo->currentText());
    });
    connect(m_followButton, &QToolButton::toggled, this, [this](bool on) {
        if (on)
            scrollToEndIfFollowing();
    });
    connect(m_list->verticalScrollBar(), &QScrollBar::rangeChanged, this, [this] { scrollToEndIfFollowing(); });
    connect(m_list->verticalScrollBar(), &QScrollBar::valueChanged, this, &AggregatedConsoleView::onScrolled);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        updateInfo();
        scrollToEndIfFollowing();
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, &AggregatedConsoleView::updateInfo);
    connect(m_model, &AggregatedConsoleModel::filterFinished, this, &AggregatedConsoleView::updateInfo);
    refreshSavedCombo();

    m_feeder = new AggregatedConsoleFeeder;
    m_feeder->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_feeder, &QObject::deleteLater);
    connect(m_feeder, &AggregatedConsoleFeeder::linesReady, this, &AggregatedConsoleView::onLines);
    connect(m_feeder, &AggregatedConsoleFeeder::progress, this, &AggregatedConsoleView::onProgress);
    connect(m_feeder, &AggregatedConsoleFeeder::sourcesChecked, this, &AggregatedConsoleView::onChecked);
    m_thread.setObjectName(QStringLiteral("aggregatedConsoleFeeder"));
    m_thread.start();
    updateInfo();
}

AggregatedConsoleView::~AggregatedConsoleView()
{
    m_feeder->requestAbort();
    QMetaObject::invokeMethod(m_feeder, &AggregatedConsoleFeeder::stop, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

ConsoleMergeSource AggregatedConsoleView::sourceFor(const RunRecord& run)
{
    ConsoleMergeSource s;
    s.run = run.id;
    // "#12 digits-mlp": runs of a sweep or repeats often share a name.
    s.name = run.name.isEmpty() ? QStringLiteral("#%1").arg(run.id)
                                : QStringLiteral("#%1 %2").arg(run.id).arg(run.name);
    s.consolePath = run.consolePath;
    s.startMs = run.startedAt.isValid() ? run.startedAt.toMSecsSinceEpoch() : 0;
    s.endMs = run.finishedAt.isValid() ? run.finishedAt.toMSecsSinceEpoch() : 0;
    return s;
}

void AggregatedConsoleView::setRuns(const QList<RunRecord>& runs)
{
    QList<ConsoleMergeSource> sources;
    QList<bool> live;
    QHash<RunId, QString> names;
    m_runIds.clear();
    for (const RunRecord& r : runs) {
        sources << sourceFor(r);
        live << !isTerminal(r.state);
        names.insert(r.id, sources.back().name);
        m_runIds << r.id;
    }
    ++m_ticket;
    m_loading = true;
    m_loadDone = m_loadTotal = 0;
    m_estimated.clear();
    m_errors.clear();
    m_model->clear();
    m_model->setRunNames(names);
    updateTagWidth();
    updateInfo();
    QMetaObject::invokeMethod(m_feeder, [f = m_feeder, t = m_ticket, sources, live] { f->open(t, sources, live); });
}

void AggregatedConsoleView::updateRun(const RunRecord& run)
{
    if (!m_runIds.contains(run.id))
        return;
    const ConsoleMergeSource s = sourceFor(run);
    const bool live = !isTerminal(run.state);
    if (m_model->runName(run.id) != s.name) {
        QHash<RunId, QString> names;
        for (const RunId id : std::as_const(m_runIds))
            names.insert(id, m_model->runName(id));
        names.insert(run.id, s.name);
        m_model->setRunNames(names);
        updateTagWidth();
    }
    QMetaObject::invokeMethod(m_feeder, [f = m_feeder, t = m_ticket, s, live] { f->updateSource(t, s, live); });
}

void AggregatedConsoleView::updateTagWidth()
{
    int chars = 4;
    for (const RunId id : std::as_const(m_runIds))
        chars = std::max<int>(chars, int(m_model->runName(id).size()));
    static_cast<LineDelegate*>(m_list->itemDelegate())->tagChars = std::min(chars, kMaxTagChars);
    m_list->doItemsLayout();
}

void AggregatedConsoleView::onLines(int ticket, bool reset, const QList<MergedConsoleLine>& lines)
{
    if (ticket != m_ticket)
        return;
    if (reset)
        m_model->clear();
    m_model->appendLines(lines);
    updateInfo();
}

void AggregatedConsoleView::onProgress(int ticket, qint64 done, qint64 total, bool loading)
{
    if (ticket != m_ticket)
        return;
    m_loadDone = done;
    m_loadTotal = total;
    const bool finished = m_loading && !loading;
    m_loading = loading;
    updateInfo();
    if (finished)
        Q_EMIT loaded();
}

void AggregatedConsoleView::onChecked(int ticket, const QList<qint64>& estimated, const QStringList& errors)
{
    if (ticket != m_ticket)
        return;
    m_estimated = estimated;
    m_errors = errors;
    updateInfo();
}

void AggregatedConsoleView::updateInfo()
{
    QStringList parts;
    parts << tr("%1 of %2 lines · %3 runs").arg(m_model->rowCount()).arg(m_model->totalLines()).arg(m_runIds.size());
    if (m_loading)
        parts << tr("loading %1 of %2 MB…")
                         .arg(double(m_loadDone) / 1e6, 0, 'f', 1)
                         .arg(double(m_loadTotal) / 1e6, 0, 'f', 1);
    else if (m_model->isFiltering())
        parts << tr("filtering…");
    if (!m_estimated.isEmpty()) {
        QStringList names;
        for (const qint64 id : std::as_const(m_estimated))
            names << m_model->runName(id);
        parts << tr("times estimated from start/end for: %1").arg(names.join(QStringLiteral(", ")));
    }
    parts += m_errors;
    m_info->setText(parts.join(QStringLiteral(" · ")));
}

void AggregatedConsoleView::applyControls()
{
    const auto level = AggregatedConsoleModel::LevelFilter(m_levelCombo->currentData().toInt());
    const QString error = m_model->setFilter(m_filterEdit->text(), m_regexCheck->isChecked(), level);
    m_filterError->setText(error.isEmpty() ? QString() : tr("Invalid regex: %1").arg(error));
    m_filterError->setVisible(!error.isEmpty());
    if (!m_applyingSaved)
        m_savedCombo->setCurrentIndex(0);
    updateInfo();
}

void AggregatedConsoleView::setFilter(const QString& text, bool regex, AggregatedConsoleModel::LevelFilter level)
{
    const QSignalBlocker b1(m_filterEdit);
    const QSignalBlocker b2(m_regexCheck);
    const QSignalBlocker b3(m_levelCombo);
    m_filterEdit->setText(text);
    m_regexCheck->setChecked(regex);
    m_levelCombo->setCurrentIndex(m_levelCombo->findData(int(level)));
    applyControls();
}

QString AggregatedConsoleView::filterError() const
{
    return m_filterError->isVisible() || !m_filterError->text().isEmpty() ? m_filterError->text() : QString();
}

QMap<QString, AggregatedConsoleView::SavedFilter> AggregatedConsoleView::savedFilters() const
{
    QMap<QString, SavedFilter> out;
    const QVariantMap stored = QSettings().value(kFiltersKey).toMap();
    for (auto it = stored.cbegin(); it != stored.cend(); ++it) {
        const QVariantMap m = it.value().toMap();
        SavedFilter f;
        f.text = m.value(QStringLiteral("text")).toString();
        f.regex = m.value(QStringLiteral("regex")).toBool();
        f.level = AggregatedConsoleModel::LevelFilter(std::clamp(m.value(QStringLiteral("level")).toInt(), 0, 3));
        out.insert(it.key(), f);
    }
    return out;
}

void AggregatedConsoleView::writeSavedFilters(const QMap<QString, SavedFilter>& filters)
{
    QVariantMap stored;
    for (auto it = filters.cbegin(); it != filters.cend(); ++it)
        stored.insert(it.key(), toVariant(it.value()));
    QSettings s;
    if (stored.isEmpty())
        s.remove(kFiltersKey);
    else
        s.setValue(kFiltersKey, stored);
}

void AggregatedConsoleView::saveFilter(const QString& name)
{
    const QString n = name.trimmed();
    if (n.isEmpty())
        return;
    QMap<QString, SavedFilter> filters = savedFilters();
    filters.insert(n, {m_model->filterText(), m_model->filterIsRegex(), m_model->levelFilter()});
    writeSavedFilters(filters);
    refreshSavedCombo(n);
}

void AggregatedConsoleView::applySavedFilter(const QString& name)
{
    const QMap<QString, SavedFilter> filters = savedFilters();
    const auto it = filters.constFind(name);
    if (it == filters.cend())
        return;
    m_applyingSaved = true;
    setFilter(it->text, it->regex, it->level);
    m_applyingSaved = false;
    m_savedCombo->setCurrentIndex(std::max(0, m_savedCombo->findText(name)));
}

void AggregatedConsoleView::deleteSavedFilter(const QString& name)
{
    QMap<QString, SavedFilter> filters = savedFilters();
    if (filters.remove(name) == 0)
        return;
    writeSavedFilters(filters);
    refreshSavedCombo();
}

void AggregatedConsoleView::refreshSavedCombo(const QString& select)
{
    const QSignalBlocker block(m_savedCombo);
    m_savedCombo->clear();
    m_savedCombo->addItem(tr("Saved filters…"));
    const QMap<QString, SavedFilter> filters = savedFilters();
    for (auto it = filters.cbegin(); it != filters.cend(); ++it) {
        const QString level = it->level == AggregatedConsoleModel::LevelFilter::Errors ? tr("errors")
                : it->level == AggregatedConsoleModel::LevelFilter::WarningsAndErrors  ? tr("warnings and errors")
                : it->level == AggregatedConsoleModel::LevelFilter::Stderr             ? tr("stderr")
                                                                                       : tr("all levels");
        m_savedCombo->addItem(it.key());
        m_savedCombo->setItemData(m_savedCombo->count() - 1,
                tr("%1 “%2”, %3").arg(it->regex ? tr("regex") : tr("text"), it->text, level), Qt::ToolTipRole);
    }
    m_savedCombo->setCurrentIndex(select.isEmpty() ? 0 : std::max(0, m_savedCombo->findText(select)));
    m_deleteButton->setEnabled(m_savedCombo->count() > 1);
}

void AggregatedConsoleView::askAndSave()
{
    bool ok = false;
    const QString current = m_savedCombo->currentIndex() > 0 ? m_savedCombo->currentText() : QString();
    const QString name = QInputDialog::getText(this, tr("Save filter"), tr("Name:"), QLineEdit::Normal, current, &ok);
    if (ok)
        saveFilter(name);
}

bool AggregatedConsoleView::followMode() const
{
    return m_followButton->isChecked();
}

void AggregatedConsoleView::setFollowMode(bool on)
{
    m_followButton->setChecked(on);
}

bool AggregatedConsoleView::isIdle() const
{
    return !m_loading && !m_model->isFiltering();
}

void AggregatedConsoleView::scrollToEndIfFollowing()
{
    if (!followMode())
        return;
    m_autoScrolling = true;
    QScrollBar* sb = m_list->verticalScrollBar();
    sb->setValue(sb->maximum());
    m_autoScrolling = false;
}

void AggregatedConsoleView::onScrolled(int value)
{
    if (m_autoScrolling)
        return;
    const bool atBottom = value >= m_list->verticalScrollBar()->maximum();
    if (atBottom != followMode()) {
        const QSignalBlocker block(m_followButton);
        m_followButton->setChecked(atBottom);
    }
}

} // namespace ty
