#pragma once

#include "core/common/Result.h"
#include "core/query/RunQuery.h"

#include <QHash>
#include <QList>
#include <QSortFilterProxyModel>
#include <QStringList>

namespace ty {

class RunsModel;
struct RunRow;

// The runs table's proxy: sorts like a plain QSortFilterProxyModel on
// RunsModel::SortRole, keeps only the runs a RunQuery matches, and can group
// the runs.
//
// Grouping is a sort, not a tree: rows stay one run each (so selection,
// Compare and every caller that maps rows to runs work unchanged), ordered by
// the group key first (groups ascending whatever the column's sort order,
// runs without the key last, see compareGroupKeys) and by the sorted column
// within a group. The first row of each group carries the group's label
// ("lr = 0.001 · 3 runs") as its vertical header, and rows of every other
// group a light background band; groupRows() gives a group's rows.
//
// The source must be a RunsModel (setSourceModel asserts it); each row's
// params and latest metrics come from its RunRow. Queue, user and project
// are read from the run's spec text once per run and cached.
//
// GUI thread only.
class RunsFilterProxy final : public QSortFilterProxyModel {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunsFilterProxy)

public:
    explicit RunsFilterProxy(QObject* parent = nullptr);

    void setSourceModel(QAbstractItemModel* model) override;
    RunsModel* runsModel() const { return m_runs; }

    // Parses and applies `text`. An error (with its column) leaves the
    // current filter, and so the rows shown, as they were.
    Result<void> setQueryText(const QString& text);
    const RunQuery& query() const { return m_query; }

    void setGroupBy(const RunGroupBy& by);
    RunGroupBy groupBy() const { return m_groupBy; }
    bool isGrouped() const { return m_groupBy.kind != RunGroupBy::Kind::None; }

    // For a proxy row: its group's first proxy row and row count; {row, 1}
    // when not grouped; {-1, 0} for a row out of range.
    std::pair<int, int> groupRows(int proxyRow) const;
    // The group's label for a proxy row ("lr = 0.001"), empty when not grouped.
    QString groupLabel(int proxyRow) const;
    // Number of groups among the rows shown (0 when not grouped).
    int groupCount() const;

    // Archived runs (RunRecord::archived) are left out unless shown (View >
    // Show archived runs); off at first.
    void setShowArchived(bool show);
    bool showsArchived() const { return m_showArchived; }

    // Every param name of the source's runs, sorted (for "Group by: param").
    QStringList paramNames() const;

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void queryChanged();
    void groupByChanged();

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    const RunRow* rowAt(int sourceRow) const;
    RunQueryInput inputFor(const RunRow& row) const;
    RunGroupKey keyOf(int sourceRow) const;
    void ensureGroups() const;
    void dropGroups() { m_groupsValid = false; }

    RunsModel* m_runs = nullptr;
    RunQuery m_query;
    RunGroupBy m_groupBy;
    mutable QHash<qint64, RunSpecLabels> m_labels; // by run id; spec text never changes

    // Per proxy row: the index of its group in m_groupStart/m_groupLabel.
    mutable bool m_groupsValid = false;
    mutable QList<int> m_groupOfRow;
    mutable QList<int> m_groupStart;
    mutable QList<QString> m_groupLabel;
    bool m_showArchived = false;
};

} // namespace ty
