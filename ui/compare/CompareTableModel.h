#pragma once

#include "CompareData.h"

#include <QAbstractTableModel>

namespace ty {

// The compare view's params and results table: one column per run (in the
// order compared), one row per field: Name, State, then every param (the
// union over the runs; a run without it shows an empty cell), then per metric
// key its last value, its best (lowerIsBetter(): min for loss/error/
// perplexity, max otherwise) and the step of the best. The Name row's cells
// carry the run's colour (runColourIcon, DecorationRole); the horizontal
// header is "#id name", also as its tooltip.
//
// A row "differs" when its cells are not all equal (exact text for params,
// full double precision for metrics); differing rows are highlighted
// (BackgroundRole on every cell, bold vertical header) and DiffersRole is
// true. setOnlyDifferences(true) hides the rows that do not differ (the
// Name row always shows).
//
// Runs (columns) can be sorted by any row (sortRunsBy): numbers by value
// when every non-empty cell of the row is a number, else text in natural
// order (QCollator, "run-2" before "run-10"); empty cells last either way;
// ties keep the compared order. The sort is kept across setOnlyDifferences
// and re-applied after setData while the row (kind + key) still exists.
//
// The best-of rule of a metric key (min or max) defaults to lowerIsBetter()
// and may be overridden per key (setBestRule); overrides are kept in
// QSettings ("Trainyard"/"trainyard", group compare/bestRule, the key
// percent-encoded) and apply to every compare table.
// GUI thread only.
class CompareTableModel final : public QAbstractTableModel {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CompareTableModel)

public:
    enum class RowKind { Name, State, Param, Last, Best, BestStep };
    enum class BestRule { Automatic, Min, Max };
    enum Role {
        DiffersRole = Qt::UserRole + 1, // bool, on cells and vertical header
        RowKindRole,                    // int(RowKind), vertical header
        RowKeyRole,                     // param name or metric key, vertical header
        RunIdRole,                      // horizontal header
    };

    explicit CompareTableModel(QObject* parent = nullptr);

    void setData(const CompareDataPtr& data);
    void setOnlyDifferences(bool on);
    bool onlyDifferences() const { return m_onlyDifferences; }

    // Orders the runs by the cells of shown row `row`.
    void sortRunsBy(int row, Qt::SortOrder order);
    // Back to the compared order.
    void clearSort();
    // The shown row the runs are sorted by (-1: none) and the order.
    int sortRow() const;
    Qt::SortOrder sortOrder() const { return m_sortOrder; }
    // The run shown in `column` (0 when out of range).
    RunId runAt(int column) const;

    // The stored rule for `key` (Automatic when none) and what it resolves to.
    static BestRule bestRule(const QString& key);
    static bool lowerIsBetterFor(const QString& key);
    // Stores the rule (Automatic removes the override) and recomputes the table.
    void setBestRule(const QString& key, BestRule rule);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The rows shown, as CSV (RFC 4180; first row: "field", then each run's
    // "#id name"; then one line per row: label, cells).
    QString toCsv() const;
    static QString csvField(const QString& s);

private:
    struct Row {
        RowKind kind;
        QString key;
        QString label;
        QStringList display; // per run (in compared order)
        bool differs = false;
        QStringList exact; // per run: what sorting and "differs" compare
    };
    void rebuild();
    void applyShown();
    void applySort();
    int runIndex(int column) const { return m_order.value(column, column); }

    CompareDataPtr m_data;
    QList<Row> m_all;
    QList<int> m_shown; // indices into m_all
    QList<int> m_order; // column -> index into m_data->runs
    bool m_onlyDifferences = false;
    // The sort, by row identity so it survives filtering and reloads.
    bool m_sorted = false;
    RowKind m_sortKind = RowKind::Name;
    QString m_sortKey;
    Qt::SortOrder m_sortOrder = Qt::AscendingOrder;
};

} // namespace ty
