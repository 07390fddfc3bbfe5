#include "RunsFilterBar.h"

#include "RunsFilterProxy.h"
#include "RunsModel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPalette>
#include <QSettings>
#include <QToolButton>

#include <algorithm>

namespace ty {

namespace {

// The main window's settings file (MainWindow uses the same names).
QSettings settings()
{
    return QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard"));
}

const QString kQueryKey = QStringLiteral("runsFilter/query");
const QString kSavedKey = QStringLiteral("runsFilter/saved");
const QString kGroupKey = QStringLiteral("runsFilter/groupBy");

// Group by: refreshes its param entries when opened, so params of runs that
// arrived since are offered.
class GroupByCombo final : public QComboBox {
public:
    GroupByCombo(RunsFilterBar* bar, QWidget* parent)
        : QComboBox(parent)
        , m_bar(bar)
    { }

    void showPopup() override
    {
        m_bar->refreshGroupChoices();
        QComboBox::showPopup();
    }

private:
    RunsFilterBar* m_bar;
};

QString syntaxHelp()
{
    return RunsFilterBar::tr("Params: lr < 1e-3, optimizer = adam, optimizer ~ regex; metric.loss < 0.5\n"
                             "tag:NAME  state:running|finished|active  node:NAME  queue:Q  user:U  project:P\n"
                             "name~regex; a bare word matches run names; and, or, not, ( )");
}

QString groupText(const RunGroupBy& by)
{
    switch (by.kind) {
    case RunGroupBy::Kind::None: return RunsFilterBar::tr("none");
    case RunGroupBy::Kind::Param: return RunsFilterBar::tr("param %1").arg(by.param);
    case RunGroupBy::Kind::Tag: return RunsFilterBar::tr("tag");
    case RunGroupBy::Kind::State: return RunsFilterBar::tr("state");
    case RunGroupBy::Kind::Node: return RunsFilterBar::tr("node");
    case RunGroupBy::Kind::Queue: return RunsFilterBar::tr("queue");
    case RunGroupBy::Kind::User: return RunsFilterBar::tr("user");
    case RunGroupBy::Kind::Project: return RunsFilterBar::tr("project");
    case RunGroupBy::Kind::Group: return RunsFilterBar::tr("pipeline, sweep or gang");
    }
    return {};
}

} // namespace

RunsFilterBar::RunsFilterBar(RunsFilterProxy* proxy, QWidget* parent)
    : QWidget(parent)
    , m_proxy(proxy)
{
    setObjectName(QStringLiteral("runsFilterBar"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setSpacing(4);

    m_edit = new QLineEdit(this);
    m_edit->setObjectName(QStringLiteral("runsFilterEdit"));
    m_edit->setAccessibleName(tr("Filter runs"));
    m_edit->setClearButtonEnabled(true);
    m_edit->setPlaceholderText(tr("Filter runs, e.g. lr < 1e-3 and tag:baseline"));
    m_edit->setToolTip(syntaxHelp());

    m_savedCombo = new QComboBox(this);
    m_savedCombo->setObjectName(QStringLiteral("savedQueriesCombo"));
    m_savedCombo->setAccessibleName(tr("Saved queries"));
    m_savedCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_savedCombo->setToolTip(tr("Saved queries"));
    m_saveButton = new QToolButton(this);
    m_saveButton->setObjectName(QStringLiteral("saveQueryButton"));
    m_saveButton->setText(tr("Save…"));
    m_saveButton->setToolTip(tr("Save this query under a name"));
    m_deleteButton = new QToolButton(this);
    m_deleteButton->setObjectName(QStringLiteral("deleteQueryButton"));
    m_deleteButton->setText(tr("Delete"));
    m_deleteButton->setToolTip(tr("Delete the selected saved query"));

    auto* groupLabel = new QLabel(tr("Group by:"), this);
    m_groupCombo = new GroupByCombo(this, this);
    m_groupCombo->setObjectName(QStringLiteral("groupByCombo"));
    m_groupCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    groupLabel->setBuddy(m_groupCombo);
    for (RunGroupBy::Kind k : {RunGroupBy::Kind::None, RunGroupBy::Kind::State, RunGroupBy::Kind::Node,
                 RunGroupBy::Kind::Group, RunGroupBy::Kind::Tag, RunGroupBy::Kind::Queue, RunGroupBy::Kind::User,
                 RunGroupBy::Kind::Project}) {
        const RunGroupBy by{k, {}};
        m_groupCombo->addItem(groupText(by), by.id());
    }

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("runsFilterStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    layout->addWidget(m_edit, 3);
    layout->addWidget(m_savedCombo);
    layout->addWidget(m_saveButton);
    layout->addWidget(m_deleteButton);
    layout->addSpacing(8);
    layout->addWidget(groupLabel);
    layout->addWidget(m_groupCombo);
    layout->addWidget(m_status, 2);

    connect(m_edit, &QLineEdit::textChanged, this, &RunsFilterBar::apply);
    connect(m_savedCombo, &QComboBox::activated, this, [this](int index) {
        if (index > 0)
            selectSavedQuery(m_savedCombo->itemText(index));
        m_deleteButton->setEnabled(index > 0);
    });
    connect(m_saveButton, &QToolButton::clicked, this, &RunsFilterBar::askAndSave);
    connect(m_deleteButton, &QToolButton::clicked, this, [this] {
        if (m_savedCombo->currentIndex() > 0)
            deleteSavedQuery(m_savedCombo->currentText());
    });
    connect(m_groupCombo, &QComboBox::activated, this,
            [this](int index) { setGroupById(m_groupCombo->itemData(index).toString()); });

    for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(m_proxy, signal, this, &RunsFilterBar::updateStatus);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &RunsFilterBar::updateStatus);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &RunsFilterBar::updateStatus);

    restore();
}

void RunsFilterBar::restore()
{
    QSettings s = settings();
    const QVariantMap saved = s.value(kSavedKey).toMap();
    for (auto it = saved.cbegin(); it != saved.cend(); ++it)
        m_saved.insert(it.key(), it.value().toString());
    fillSavedCombo({});
    const QString query = s.value(kQueryKey).toString();
    const QString group = s.value(kGroupKey, QStringLiteral("none")).toString();
    if (!query.isEmpty())
        m_edit->setText(query); // applies it
    setGroupById(group);
    updateStatus();
}

bool RunsFilterBar::setQueryText(const QString& text)
{
    if (m_edit->text() != text)
        m_edit->setText(text); // textChanged applies it
    else
        apply(text);
    return m_error.isEmpty();
}

void RunsFilterBar::apply(const QString& text)
{
    settings().setValue(kQueryKey, text);
    const auto applied = m_proxy->setQueryText(text);
    showError(applied ? QString() : applied.error().message);
    // The saved query shown stays selected only while the text is its text.
    if (m_savedCombo->currentIndex() > 0 && m_saved.value(m_savedCombo->currentText()) != text) {
        m_savedCombo->setCurrentIndex(0);
        m_deleteButton->setEnabled(false);
    }
}

void RunsFilterBar::showError(const QString& message)
{
    m_error = message;
    const bool invalid = !message.isEmpty();
    m_edit->setProperty("invalid", invalid);
    QPalette pal = palette();
    if (invalid) {
        pal.setColor(QPalette::Base, QColor(255, 214, 214));
        pal.setColor(QPalette::Text, QColor(Qt::black));
    }
    m_edit->setPalette(pal);
    if (invalid) {
        m_edit->setToolTip(message);
        m_status->setStyleSheet(QStringLiteral("color: #c62828;"));
        m_status->setText(message);
    } else {
        m_edit->setToolTip(syntaxHelp());
        m_status->setStyleSheet({});
        updateStatus();
    }
}

void RunsFilterBar::updateStatus()
{
    if (!m_error.isEmpty())
        return;
    const int total = m_proxy->runsModel() ? m_proxy->runsModel()->rowCount() : 0;
    const int shown = m_proxy->rowCount();
    QString text;
    if (!m_proxy->query().isEmpty())
        text = total == 1 ? tr("%1 of 1 run").arg(shown) : tr("%1 of %2 runs").arg(shown).arg(total);
    if (m_proxy->isGrouped()) {
        const int n = m_proxy->groupCount();
        const QString groups = n == 1 ? tr("1 group") : tr("%1 groups").arg(n);
        text = text.isEmpty() ? groups : text + QStringLiteral(" · ") + groups;
    }
    m_status->setText(text);
}

void RunsFilterBar::fillSavedCombo(const QString& current)
{
    m_savedCombo->clear();
    m_savedCombo->addItem(m_saved.isEmpty() ? tr("No saved queries") : tr("Saved queries…"));
    for (auto it = m_saved.cbegin(); it != m_saved.cend(); ++it) {
        m_savedCombo->addItem(it.key());
        m_savedCombo->setItemData(m_savedCombo->count() - 1, it.value(), Qt::ToolTipRole);
    }
    const int index = current.isEmpty() ? 0 : std::max(0, m_savedCombo->findText(current));
    m_savedCombo->setCurrentIndex(index);
    m_deleteButton->setEnabled(index > 0);
}

void RunsFilterBar::storeSaved()
{
    QVariantMap map;
    for (auto it = m_saved.cbegin(); it != m_saved.cend(); ++it)
        map.insert(it.key(), it.value());
    settings().setValue(kSavedKey, map);
}

bool RunsFilterBar::saveQuery(const QString& name)
{
    const QString n = name.trimmed();
    if (n.isEmpty() || !m_error.isEmpty())
        return false;
    m_saved.insert(n, m_edit->text());
    storeSaved();
    fillSavedCombo(n);
    return true;
}

void RunsFilterBar::askAndSave()
{
    if (!m_error.isEmpty())
        return; // the field says what is wrong
    const QString current = m_savedCombo->currentIndex() > 0 ? m_savedCombo->currentText() : QString();
    bool ok = false;
    const QString name = QInputDialog::getText(
            this, tr("Save query"), tr("Name for “%1”:").arg(m_edit->text()), QLineEdit::Normal, current, &ok);
    if (ok)
        saveQuery(name);
}

bool RunsFilterBar::selectSavedQuery(const QString& name)
{
    auto it = m_saved.constFind(name);
    if (it == m_saved.cend())
        return false;
    const QString text = *it;
    const int index = m_savedCombo->findText(name);
    m_savedCombo->setCurrentIndex(index);
    m_deleteButton->setEnabled(index > 0);
    setQueryText(text);
    return true;
}

bool RunsFilterBar::deleteSavedQuery(const QString& name)
{
    if (!m_saved.remove(name))
        return false;
    storeSaved();
    fillSavedCombo({});
    return true;
}

void RunsFilterBar::refreshGroupChoices()
{
    const QString current = m_groupCombo->currentData().toString();
    QStringList wanted = m_proxy->paramNames();
    if (auto by = RunGroupBy::fromId(current); by && by->kind == RunGroupBy::Kind::Param && !wanted.contains(by->param))
        wanted << by->param; // keep the chosen one even when no run has it now
    // Remove param entries that went, then add the new ones in order.
    for (int i = m_groupCombo->count() - 1; i >= 0; --i) {
        const auto by = RunGroupBy::fromId(m_groupCombo->itemData(i).toString());
        if (by && by->kind == RunGroupBy::Kind::Param && !wanted.contains(by->param))
            m_groupCombo->removeItem(i);
    }
    for (const QString& name : std::as_const(wanted)) {
        const RunGroupBy by{RunGroupBy::Kind::Param, name};
        if (m_groupCombo->findData(by.id()) < 0)
            m_groupCombo->addItem(groupText(by), by.id());
    }
    const int index = m_groupCombo->findData(current);
    m_groupCombo->setCurrentIndex(std::max(0, index));
}

bool RunsFilterBar::setGroupById(const QString& id)
{
    const auto by = RunGroupBy::fromId(id);
    if (!by)
        return false;
    if (m_groupCombo->findData(by->id()) < 0)
        m_groupCombo->addItem(groupText(*by), by->id());
    m_groupCombo->setCurrentIndex(m_groupCombo->findData(by->id()));
    m_proxy->setGroupBy(*by);
    settings().setValue(kGroupKey, by->id());
    updateStatus();
    return true;
}

} // namespace ty
