#include "RunsColumnChooser.h"

#include "RunsModel.h"

#include <QAction>
#include <QHeaderView>
#include <QMenu>
#include <QSettings>
#include <QTableView>

namespace ty {

RunsColumnChooser::RunsColumnChooser(QTableView* view, RunsModel* model, const QString& settingsGroup, QObject* parent)
    : QObject(parent)
    , m_view(view)
    , m_model(model)
    , m_group(settingsGroup)
{
    QSettings s(QStringLiteral("Trainyard"), QStringLiteral("trainyard")); // as MainWindow
    const QStringList shown = s.value(m_group + QStringLiteral("/shownParams")).toStringList();
    const QStringList hidden = s.value(m_group + QStringLiteral("/hiddenParams")).toStringList();
    m_shown = QSet<QString>(shown.cbegin(), shown.cend());
    m_hidden = QSet<QString>(hidden.cbegin(), hidden.cend());

    // Rows coming and going change which params differ; columns coming
    // and going need their hidden state set.
    connect(m_model, &QAbstractItemModel::columnsInserted, this, &RunsColumnChooser::apply);
    connect(m_model, &QAbstractItemModel::columnsRemoved, this, &RunsColumnChooser::apply);
    connect(m_model, &QAbstractItemModel::modelReset, this, &RunsColumnChooser::apply);
    // Not on every changed row: a live run's row changes with each chunk of
    // metrics, and which params differ is a walk over every row.
    connect(m_model, &RunsModel::paramsChanged, this, &RunsColumnChooser::apply);

    QHeaderView* header = m_view->horizontalHeader();
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(header, &QHeaderView::customContextMenuRequested, this, [this, header](const QPoint& pos) {
        QMenu* m = menu(m_view);
        m->setAttribute(Qt::WA_DeleteOnClose);
        m->popup(header->mapToGlobal(pos));
    });
    apply();
}

bool RunsColumnChooser::isParamShown(const QString& key) const
{
    if (m_shown.contains(key))
        return true;
    if (m_hidden.contains(key))
        return false;
    return m_differing.contains(key);
}

void RunsColumnChooser::setParamShown(const QString& key, bool shown)
{
    (shown ? m_shown : m_hidden).insert(key);
    (shown ? m_hidden : m_shown).remove(key);
    save();
    apply();
}

QMenu* RunsColumnChooser::menu(QWidget* parent) const
{
    auto* m = new QMenu(parent);
    m->setObjectName(QStringLiteral("runsColumnMenu"));
    const QStringList keys = m_model->paramColumns();
    if (keys.isEmpty()) {
        m->addAction(tr("No parameters"))->setEnabled(false);
        return m;
    }
    m->addSection(tr("Parameters"));
    for (const QString& key : keys) {
        QAction* a = m->addAction(key);
        a->setObjectName(QStringLiteral("param:") + key);
        a->setCheckable(true);
        a->setChecked(isParamShown(key));
        auto* self = const_cast<RunsColumnChooser*>(this);
        connect(a, &QAction::toggled, self, [self, key](bool on) { self->setParamShown(key, on); });
    }
    return m;
}

void RunsColumnChooser::apply()
{
    const QStringList differing = RunsModel::differingParamKeys(m_model->rows());
    m_differing = QSet<QString>(differing.cbegin(), differing.cend());
    const QStringList keys = m_model->paramColumns();
    const int first = m_model->firstParamColumn();
    for (int i = 0; i < keys.size(); ++i)
        m_view->setColumnHidden(first + i, !isParamShown(keys.at(i)));
}

void RunsColumnChooser::save() const
{
    QSettings s(QStringLiteral("Trainyard"), QStringLiteral("trainyard")); // as MainWindow
    QStringList shown(m_shown.cbegin(), m_shown.cend()), hidden(m_hidden.cbegin(), m_hidden.cend());
    shown.sort();
    hidden.sort();
    s.setValue(m_group + QStringLiteral("/shownParams"), shown);
    s.setValue(m_group + QStringLiteral("/hiddenParams"), hidden);
}

} // namespace ty
