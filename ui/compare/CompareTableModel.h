#pragma once

#include "CompareData.h"

#include <QAbstractTableModel>

namespace ty {

// The compare view's params and results table: one column per run (in the
// order compared), one row per field: Name, State, then every param (the
// union over the runs; a run without it shows an empty cell), then per metric
// key its last value, its best (lowerIsBetter(): min for loss/error/
// perplexity, max otherwise) and the step of the best.
//
// A row "differs" when its cells are not all equal (exact text for params,
// full double precision for metrics); differing rows are highlighted
// (BackgroundRole on every cell, bold vertical header) and DiffersRole is
// true. setOnlyDifferences(true) hides the rows that do not differ (the
// Name row always shows).
// GUI thread only.
class CompareTableModel final : public QAbstractTableModel {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CompareTableModel)

public:
    enum class RowKind { Name, State, Param, Last, Best, BestStep };
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
        QStringList display; // per run
        bool differs = false;
    };
    void rebuild();

    CompareDataPtr m_data;
    QList<Row> m_all;
    QList<int> m_shown; // indices into m_all
    bool m_onlyDifferences = false;
};

} // namespace ty
