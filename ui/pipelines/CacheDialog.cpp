#include "CacheDialog.h"

#include "core/memo/CacheReport.h"
#include "core/memo/MemoStore.h"
#include "core/store/ResultStore.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace ty {

namespace {
enum Column {
    PipelineColumn,
    StepColumn,
    KeyColumn,
    MadeColumn,
    HitsColumn,
    LastHitColumn,
    RunColumn,
    OutputsColumn,
    ColumnCount
};
constexpr int kKeyRole = Qt::UserRole + 1;

QString when(const QDateTime& t)
{
    return t.isValid() ? QLocale().toString(t.toLocalTime(), QLocale::ShortFormat) : QStringLiteral("-");
}
} // namespace

CacheDialog::CacheDialog(ResultStore* store, Remover remover, QWidget* parent)
    : QDialog(parent)
    , m_store(store)
    , m_remover(std::move(remover))
{
    setWindowTitle(tr("Memoization cache"));
    m_list = new QTreeWidget(this);
    m_list->setObjectName(QStringLiteral("cacheEntries"));
    m_list->setAccessibleName(tr("Cache entries"));
    m_list->setColumnCount(ColumnCount);
    m_list->setHeaderLabels(
            {tr("Pipeline"), tr("Step"), tr("Key"), tr("Made"), tr("Hits"), tr("Last hit"), tr("Run"), tr("Outputs")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->header()->setSectionResizeMode(QHeaderView::ResizeToContents);

    m_details = new QPlainTextEdit(this);
    m_details->setObjectName(QStringLiteral("cacheDetails"));
    m_details->setAccessibleName(tr("Cache entry details"));
    m_details->setReadOnly(true);
    m_details->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("cacheStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_removeEntry = new QPushButton(tr("Invalidate entry"), this);
    m_removeEntry->setObjectName(QStringLiteral("invalidateEntry"));
    m_removeEntry->setToolTip(tr("Forget this result: the step runs again the next time"));
    m_removeStep = new QPushButton(tr("Invalidate step"), this);
    m_removeStep->setObjectName(QStringLiteral("invalidateStep"));
    m_removeStep->setToolTip(tr("Forget every result of this step of this pipeline"));
    auto* refresh = new QPushButton(tr("Refresh"), this);
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_list);
    split->addWidget(m_details);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 1);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_removeEntry);
    buttons->addWidget(m_removeStep);
    buttons->addWidget(refresh);
    buttons->addStretch(1);
    buttons->addWidget(close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split, 1);
    layout->addWidget(m_status);
    layout->addLayout(buttons);
    resize(900, 560);

    connect(m_list, &QTreeWidget::itemSelectionChanged, this, &CacheDialog::showSelected);
    connect(refresh, &QPushButton::clicked, this, &CacheDialog::reload);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_removeEntry, &QPushButton::clicked, this, [this] {
        const QString key = selectedKey();
        if (!key.isEmpty())
            invalidate({{QStringLiteral("key"), key}}, tr("entry %1").arg(key.left(12)));
    });
    connect(m_removeStep, &QPushButton::clicked, this, [this] {
        const auto* item = m_list->currentItem();
        if (!item)
            return;
        const QString pipeline = item->text(PipelineColumn);
        const QString step = item->text(StepColumn);
        invalidate({{QStringLiteral("step"), step}, {QStringLiteral("pipeline"), pipeline}},
                tr("every entry of step %1 of %2").arg(step, pipeline));
    });
    reload();
}

QString CacheDialog::selectedKey() const
{
    const auto* item = m_list->currentItem();
    return item && item->isSelected() ? item->data(KeyColumn, kKeyRole).toString() : QString();
}

void CacheDialog::reload()
{
    const QString keep = selectedKey();
    const QList<MemoEntry> entries = MemoStore(*m_store).list(MemoEntryFilter{{}, {}, -1, false});
    m_list->clear();
    qint64 total = 0;
    QTreeWidgetItem* again = nullptr;
    for (const MemoEntry& e : entries) {
        auto* item = new QTreeWidgetItem(m_list);
        item->setText(PipelineColumn, e.pipeline);
        item->setText(StepColumn, e.step);
        item->setText(KeyColumn, e.key.left(12));
        item->setData(KeyColumn, kKeyRole, e.key);
        item->setToolTip(KeyColumn, e.key);
        item->setText(MadeColumn, when(e.created));
        item->setText(HitsColumn, QString::number(e.hitCount));
        item->setText(LastHitColumn, when(e.lastHit));
        item->setText(RunColumn, QString::number(e.run));
        item->setText(OutputsColumn,
                tr("%n file(s), %1", nullptr, int(e.outputs.size()))
                        .arg(QLocale().formattedDataSize(e.outputBytes(), 1, QLocale::DataSizeTraditionalFormat)));
        total += e.outputBytes();
        if (e.key == keep)
            again = item;
    }
    m_status->setText(tr("%n entr(ies), their outputs %1 in all", nullptr, int(entries.size()))
                              .arg(QLocale().formattedDataSize(total, 1, QLocale::DataSizeTraditionalFormat)));
    if (again)
        m_list->setCurrentItem(again);
    showSelected();
}

void CacheDialog::showSelected()
{
    const QString key = selectedKey();
    m_removeEntry->setEnabled(!key.isEmpty());
    m_removeStep->setEnabled(!key.isEmpty());
    if (key.isEmpty()) {
        m_details->setPlainText(tr("Select an entry to see what its key is made of."));
        return;
    }
    const auto entry = MemoStore(*m_store).get(key);
    if (!entry || !*entry) {
        m_details->setPlainText(entry ? tr("The entry %1 is gone.").arg(key)
                                      : tr("Cannot read the entry %1: %2").arg(key, entry.error().message));
        return;
    }
    const MemoEntry& e = **entry;
    QStringList lines{tr("Key %1").arg(e.key)};
    for (const QString& line : describeEntry(e))
        lines << QStringLiteral("  ") + line;
    const StepRunWhy last = lastRunOf(*m_store, e.step, e.pipeline);
    if (last.run)
        lines << QString() << tr("Latest run of step %1: run %2").arg(e.step).arg(last.run)
              << QStringLiteral("  ")
                        + (last.why.isEmpty() ? tr("(not memoized, or run before memoization)") : last.why);
    m_details->setPlainText(lines.join(u'\n'));
}

void CacheDialog::invalidate(const QJsonObject& selector, const QString& what)
{
    if (!m_remover)
        return;
    m_status->setText(tr("Invalidating %1…").arg(what));
    m_removeEntry->setEnabled(false);
    m_removeStep->setEnabled(false);
    m_remover(selector, [self = QPointer(this), what](const Result<QStringList>& removed) {
        if (!self)
            return;
        self->reload();
        if (removed)
            self->m_status->setText(tr("Invalidated %1: %n entr(ies) removed; the step runs again the next time.",
                    nullptr, int(removed->size()))
                                            .arg(what));
        else
            self->m_status->setText(tr("Could not invalidate %1: %2").arg(what, removed.error().message));
    });
}

} // namespace ty
