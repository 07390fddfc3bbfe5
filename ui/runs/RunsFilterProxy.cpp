#include "RunsFilterProxy.h"

#include "RunsModel.h"

#include <QGuiApplication>
#include <QPalette>
#include <QSet>

#include <algorithm>

namespace ty {

namespace {

bool needsLabels(const RunGroupBy& by)
{
    return by.kind == RunGroupBy::Kind::Queue || by.kind == RunGroupBy::Kind::User
            || by.kind == RunGroupBy::Kind::Project;
}

QString labelFor(const RunGroupBy& by, const RunGroupKey& key)
{
    if (key.missing)
        return key.label; // "no lr", "no tags"
    switch (by.kind) {
    case RunGroupBy::Kind::Param: return QStringLiteral("%1 = %2").arg(by.param, key.label);
    case RunGroupBy::Kind::Tag: return QStringLiteral("tags: %1").arg(key.label);
    case RunGroupBy::Kind::State: return key.label;
    case RunGroupBy::Kind::Node: return QStringLiteral("node %1").arg(key.label);
    case RunGroupBy::Kind::Queue: return QStringLiteral("queue %1").arg(key.label);
    case RunGroupBy::Kind::User: return QStringLiteral("user %1").arg(key.label);
    case RunGroupBy::Kind::Project: return QStringLiteral("project %1").arg(key.label);
    case RunGroupBy::Kind::Group: return key.label; // "pipeline 3 digits-pipeline"
    case RunGroupBy::Kind::None: break;
    }
    return {};
}

} // namespace

RunsFilterProxy::RunsFilterProxy(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(RunsModel::SortRole);
    setDynamicSortFilter(true);
    // Any change of the rows shown or of their order moves the groups.
    connect(this, &QAbstractItemModel::rowsInserted, this, &RunsFilterProxy::dropGroups);
    connect(this, &QAbstractItemModel::rowsRemoved, this, &RunsFilterProxy::dropGroups);
    connect(this, &QAbstractItemModel::rowsMoved, this, &RunsFilterProxy::dropGroups);
    connect(this, &QAbstractItemModel::layoutChanged, this, &RunsFilterProxy::dropGroups);
    connect(this, &QAbstractItemModel::modelReset, this, &RunsFilterProxy::dropGroups);
    connect(this, &QAbstractItemModel::dataChanged, this, &RunsFilterProxy::dropGroups);
}

void RunsFilterProxy::setSourceModel(QAbstractItemModel* model)
{
    m_runs = qobject_cast<RunsModel*>(model);
    Q_ASSERT_X(!model || m_runs, "RunsFilterProxy", "the source must be a RunsModel");
    m_labels.clear();
    QSortFilterProxyModel::setSourceModel(m_runs);
    dropGroups();
}

Result<void> RunsFilterProxy::setQueryText(const QString& text)
{
    auto q = RunQuery::parse(text);
    if (!q)
        return fail(q.error().message);
    if (q->text() == m_query.text() && q->isEmpty() == m_query.isEmpty())
        return {};
    m_query = std::move(*q);
    invalidateFilter();
    dropGroups();
    Q_EMIT queryChanged();
    return {};
}

void RunsFilterProxy::setGroupBy(const RunGroupBy& by)
{
    if (by == m_groupBy)
        return;
    m_groupBy = by;
    if (isGrouped() && sortColumn() < 0)
        sort(RunsModel::Started, Qt::DescendingOrder);
    invalidate(); // re-sort by the new key
    dropGroups();
    if (rowCount() > 0)
        Q_EMIT headerDataChanged(Qt::Vertical, 0, rowCount() - 1);
    Q_EMIT groupByChanged();
}

const RunRow* RunsFilterProxy::rowAt(int sourceRow) const
{
    if (!m_runs || sourceRow < 0 || sourceRow >= m_runs->rowCount())
        return nullptr;
    return &m_runs->rowAt(sourceRow);
}

RunQueryInput RunsFilterProxy::inputFor(const RunRow& row) const
{
    RunQueryInput in{&row.run, &row.params, &row.latest, nullptr};
    if (m_query.usesSpecLabels() || needsLabels(m_groupBy)) {
        auto it = m_labels.find(row.run.id);
        if (it == m_labels.end())
            it = m_labels.insert(row.run.id, specLabelsOf(row.run.specYaml));
        in.labels = &it.value();
    }
    return in;
}

RunGroupKey RunsFilterProxy::keyOf(int sourceRow) const
{
    const RunRow* row = rowAt(sourceRow);
    if (!row)
        return RunGroupKey{{}, std::nullopt, true};
    return runGroupKey(m_groupBy, inputFor(*row));
}

void RunsFilterProxy::setShowArchived(bool show)
{
    if (show == m_showArchived)
        return;
    m_showArchived = show;
    dropGroups();
    invalidateFilter();
}

bool RunsFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (sourceParent.isValid())
        return true;
    const RunRow* row = rowAt(sourceRow);
    if (row && row->run.archived && !m_showArchived)
        return false;
    return m_query.isEmpty() || !row || m_query.matches(inputFor(*row));
}

bool RunsFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const
{
    if (isGrouped()) {
        const int c = compareGroupKeys(keyOf(left.row()), keyOf(right.row()));
        // Groups ascend whatever the column's order: in descending order the
        // proxy asks lessThan(right, left).
        if (c != 0)
            return sortOrder() == Qt::AscendingOrder ? c < 0 : c > 0;
    }
    return QSortFilterProxyModel::lessThan(left, right);
}

void RunsFilterProxy::ensureGroups() const
{
    if (m_groupsValid)
        return;
    m_groupsValid = true;
    m_groupOfRow.clear();
    m_groupStart.clear();
    m_groupLabel.clear();
    if (!isGrouped())
        return;
    const int n = rowCount();
    m_groupOfRow.reserve(n);
    RunGroupKey previous;
    for (int r = 0; r < n; ++r) {
        RunGroupKey key = keyOf(mapToSource(index(r, 0)).row());
        if (r == 0 || compareGroupKeys(key, previous) != 0) {
            m_groupStart << r;
            m_groupLabel << labelFor(m_groupBy, key);
            previous = std::move(key);
        }
        m_groupOfRow << int(m_groupStart.size()) - 1;
    }
}

std::pair<int, int> RunsFilterProxy::groupRows(int proxyRow) const
{
    if (proxyRow < 0 || proxyRow >= rowCount())
        return {-1, 0};
    if (!isGrouped())
        return {proxyRow, 1};
    ensureGroups();
    const int g = m_groupOfRow.at(proxyRow);
    const int first = m_groupStart.at(g);
    const int end = g + 1 < m_groupStart.size() ? m_groupStart.at(g + 1) : rowCount();
    return {first, end - first};
}

QString RunsFilterProxy::groupLabel(int proxyRow) const
{
    if (!isGrouped() || proxyRow < 0 || proxyRow >= rowCount())
        return {};
    ensureGroups();
    return m_groupLabel.at(m_groupOfRow.at(proxyRow));
}

int RunsFilterProxy::groupCount() const
{
    ensureGroups();
    return int(m_groupStart.size());
}

QStringList RunsFilterProxy::paramNames() const
{
    QSet<QString> names;
    const int n = m_runs ? m_runs->rowCount() : 0;
    for (int r = 0; r < n; ++r)
        for (auto it = m_runs->rowAt(r).params.cbegin(); it != m_runs->rowAt(r).params.cend(); ++it)
            names.insert(it.key());
    QStringList out(names.cbegin(), names.cend());
    std::sort(out.begin(), out.end());
    return out;
}

QVariant RunsFilterProxy::data(const QModelIndex& index, int role) const
{
    if (role == Qt::BackgroundRole && isGrouped() && index.isValid() && index.model() == this) {
        ensureGroups();
        if (index.row() < m_groupOfRow.size() && m_groupOfRow.at(index.row()) % 2 == 1)
            return QGuiApplication::palette().alternateBase();
    }
    return QSortFilterProxyModel::data(index, role);
}

QVariant RunsFilterProxy::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Vertical && isGrouped() && section >= 0 && section < rowCount()
            && (role == Qt::DisplayRole || role == Qt::ToolTipRole)) {
        const auto [first, count] = groupRows(section);
        const QString runs = count == 1 ? tr("1 run") : tr("%1 runs").arg(count);
        if (role == Qt::ToolTipRole)
            return tr("%1: %2; click to select the group").arg(groupLabel(section), runs);
        if (section != first)
            return QString();
        return tr("%1 · %2").arg(groupLabel(section), runs);
    }
    return QSortFilterProxyModel::headerData(section, orientation, role);
}

} // namespace ty
