#include "QueueModel.h"
#include "ui/i18n/RunTexts.h"

#include "ui/runs/RunStateStyle.h"

#include <QSet>

#include <algorithm>

namespace ty {

QueueModel::QueueModel(QObject* parent)
    : RunTableModel(parent)
{ }

int QueueModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_runs.size());
}

int QueueModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString QueueModel::reasonText(const RunRecord& run)
{
    if (!run.pendingReason.isEmpty())
        return run.pendingReason;
    if (run.state == RunState::Held)
        return tr("held by user");
    return tr("(not scheduled yet)");
}

QVariant QueueModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RunRecord& r = m_runs.at(index.row());
    if (role == RunIdRole)
        return r.id;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Id: return r.id;
        case Name: return r.name;
        case Priority: return r.priority;
        case State: return runStateText(r.state);
        case Reason: return reasonText(r);
        }
        return {};
    case Qt::ToolTipRole:
        if (index.column() == Reason || index.column() == Name)
            return QStringLiteral("#%1 %2: %3").arg(r.id).arg(r.name, reasonText(r));
        return {};
    case Qt::DecorationRole:
        if (index.column() == State)
            return RunStateStyle::icon(r.state);
        return {};
    case Qt::ForegroundRole:
        if (index.column() == State)
            return RunStateStyle::color(r.state);
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == Id || index.column() == Priority)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    return {};
}

QVariant QueueModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Vertical) {
        if (role == Qt::DisplayRole)
            return section + 1; // position in the queue
        if (role == Qt::ToolTipRole)
            return tr("Position in the queue: the scheduler considers this run in place %1").arg(section + 1);
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Id: return tr("Run");
    case Name: return tr("Name");
    case Priority: return tr("Priority");
    case State: return tr("State");
    case Reason: return tr("Why it waits");
    }
    return {};
}

void QueueModel::setRuns(const RunRows& rows)
{
    QList<RunRecord> runs;
    for (const RunRow& row : rows)
        if (isWaiting(row.run.state))
            runs.append(row.run);
    apply(std::move(runs));
}

void QueueModel::updateRun(const RunRecord& run)
{
    QList<RunRecord> runs = m_runs;
    const int row = rowOf(run.id);
    if (row >= 0)
        runs.removeAt(row);
    if (isWaiting(run.state))
        runs.append(run);
    apply(std::move(runs));
}

bool QueueModel::applyUpdates(const RunRows& changed, const QList<RunId>& removed)
{
    bool touches = false;
    for (RunId id : removed)
        touches = touches || rowOf(id) >= 0;
    for (const RunRow& r : changed)
        touches = touches || rowOf(r.run.id) >= 0 || isWaiting(r.run.state);
    if (!touches)
        return false;
    QSet<RunId> replaced(removed.cbegin(), removed.cend());
    for (const RunRow& r : changed)
        replaced.insert(r.run.id);
    QList<RunRecord> runs;
    for (const RunRecord& r : std::as_const(m_runs))
        if (!replaced.contains(r.id))
            runs.append(r);
    for (const RunRow& r : changed)
        if (isWaiting(r.run.state))
            runs.append(r.run);
    apply(std::move(runs));
    return true;
}

void QueueModel::setOrdering(sched::Ordering ordering)
{
    if (ordering == m_ordering)
        return;
    m_ordering = ordering;
    apply(m_runs);
}

RunId QueueModel::runIdAt(int row) const
{
    return row >= 0 && row < m_runs.size() ? m_runs.at(row).id : 0;
}

int QueueModel::rowOf(RunId run) const
{
    return m_rowOf.value(run, -1);
}

const RunRecord* QueueModel::run(RunId run) const
{
    const int row = rowOf(run);
    return row >= 0 ? &m_runs.at(row) : nullptr;
}

bool QueueModel::lessThan(const RunRecord& a, const RunRecord& b) const
{
    if (m_ordering == sched::Ordering::Priority && a.priority != b.priority)
        return a.priority > b.priority;
    if (a.createdAt != b.createdAt && a.createdAt.isValid() && b.createdAt.isValid())
        return a.createdAt < b.createdAt;
    return a.id < b.id;
}

void QueueModel::rebuildIndex()
{
    m_rowOf.clear();
    for (int i = 0; i < m_runs.size(); ++i)
        m_rowOf.insert(m_runs.at(i).id, i);
}

void QueueModel::apply(QList<RunRecord> runs)
{
    QHash<RunId, RunRecord> wanted;
    for (RunRecord& r : runs)
        wanted.insert(r.id, std::move(r));

    // 1. Rows that left the queue.
    for (int i = int(m_runs.size()) - 1; i >= 0; --i) {
        if (wanted.contains(m_runs.at(i).id))
            continue;
        beginRemoveRows({}, i, i);
        m_runs.removeAt(i);
        endRemoveRows();
    }
    // 2. Rows still there get their new record; new runs are appended.
    QList<RunRecord> added;
    {
        QSet<RunId> present;
        for (RunRecord& r : m_runs) {
            present.insert(r.id);
            r = wanted.value(r.id);
        }
        for (auto it = wanted.cbegin(); it != wanted.cend(); ++it)
            if (!present.contains(it.key()))
                added.append(it.value());
    }
    if (!added.isEmpty()) {
        std::sort(
                added.begin(), added.end(), [this](const RunRecord& a, const RunRecord& b) { return lessThan(a, b); });
        const int first = int(m_runs.size());
        beginInsertRows({}, first, first + int(added.size()) - 1);
        m_runs.append(added);
        endInsertRows();
    }
    // 3. Queue order, moving persistent indexes with their runs.
    QList<RunRecord> sorted = m_runs;
    std::stable_sort(
            sorted.begin(), sorted.end(), [this](const RunRecord& a, const RunRecord& b) { return lessThan(a, b); });
    bool reordered = false;
    for (int i = 0; i < sorted.size() && !reordered; ++i)
        reordered = sorted.at(i).id != m_runs.at(i).id;
    if (reordered) {
        Q_EMIT layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
        QHash<RunId, int> newRow;
        for (int i = 0; i < sorted.size(); ++i)
            newRow.insert(sorted.at(i).id, i);
        const QModelIndexList from = persistentIndexList();
        QModelIndexList to;
        to.reserve(from.size());
        for (const QModelIndex& index : from)
            to.append(index.isValid() ? createIndex(newRow.value(m_runs.at(index.row()).id), index.column())
                                      : QModelIndex());
        m_runs = std::move(sorted);
        changePersistentIndexList(from, to);
        rebuildIndex();
        Q_EMIT layoutChanged({}, QAbstractItemModel::VerticalSortHint);
    } else {
        rebuildIndex();
    }
    if (!m_runs.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_runs.size()) - 1, ColumnCount - 1));
}

} // namespace ty
