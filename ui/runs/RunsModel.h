#pragma once

#include "RunRow.h"

#include "ui/runs/RunTableModel.h"
#include <QDateTime>
#include <QHash>
#include <QStringList>

namespace ty {

// The runs table: one row per run, newest first (the order of the snapshot it
// was given), columns State, Name, Node, GPUs, Started, Duration, then one
// column per main metric holding the run's latest value of that key, then
// one column per param key of any run (its value as text; sorted as a number
// when it reads as one). Which param columns a view shows is the view's
// business (RunsColumnChooser: by default those of differingParamKeys()).
//
// Sorting goes through a QSortFilterProxyModel with sortRole = SortRole: that
// role gives numbers (state order, start time in ms since the epoch, duration
// in ms, metric value) so times and values sort numerically, not as text.
// Missing values are an invalid QVariant.
//
// Updates are incremental so a view's selection survives them: setRuns()
// diffs the snapshot by run id (rows removed, inserted, or dataChanged per
// changed row), metric columns are removed/appended, never reset. Times are
// UTC in the data and shown in local time.
//
// GUI thread only.
class RunsModel final : public RunTableModel {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunsModel)

public:
    enum Column { State, Name, Node, Gpus, Started, Duration, FirstMetricColumn };
    // Besides RunTableModel::RunIdRole.
    enum Role {
        SortRole = Qt::UserRole, // numeric/time value for sorting
    };
    static constexpr int kDefaultMaxMetricColumns = 6;

    explicit RunsModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Replaces the content with `rows` (newest first), keeping rows whose run
    // id is in both.
    void setRuns(const RunRows& rows) override;
    // A run changed (RunControl::runStateChanged): updates its row, or inserts
    // it at the top when unknown. Keeps the row's latest metrics.
    void updateRun(const RunRecord& run) override;
    // New points of a run (RunControl::metricsReceived): a key's latest value
    // moves when a point's step is >= the one shown. May add metric columns.
    void updateLatestMetrics(RunId run, const QList<MetricPoint>& points);
    void removeRun(RunId run);
    // Rows that changed in the store (StoreReader::runsUpdated): each of
    // `changed` replaces the row of its run, or is inserted where its
    // creation time puts it (newest first); `removed` rows go. Costs what
    // the changed rows cost, not the size of the table: column choices are
    // kept from per-key row counts.
    bool applyUpdates(const RunRows& changed, const QList<RunId>& removed) override;

    // Emits dataChanged for the Duration of unfinished runs, with `now` as the
    // end of their duration (the main window calls it every second).
    void tick(const QDateTime& nowUtc = QDateTime::currentDateTimeUtc());

    RunId runIdAt(int row) const override;
    int rowOf(RunId run) const override;
    const RunRow* rowData(RunId run) const; // nullptr when absent
    // The row at `row` (0 <= row < rowCount()); valid inside row signals, where rowData() may not be yet.
    const RunRow& rowAt(int row) const { return m_rows.at(row); }
    QStringList metricColumns() const { return m_metricKeys; }
    // Every param key of any run, sorted; column firstParamColumn() + i.
    QStringList paramColumns() const { return m_paramKeys; }
    int firstParamColumn() const { return FirstMetricColumn + int(m_metricKeys.size()); }
    // Every param key of any run, sorted by name.
    static QStringList allParamKeys(const RunRows& rows);
    // The param keys that tell these runs apart (a sweep's swept params):
    // two runs that have the key hold different values. Runs without it
    // (another job's) do not count.
    static QStringList differingParamKeys(const RunRows& rows);
    const RunRows& rows() const { return m_rows; }
    void setMaxMetricColumns(int n);

    // The metric keys worth a column, at most `cap`, sorted by name: the keys
    // that look like a loss or an accuracy (loss, acc, accuracy, val_*,
    // *_loss, *_acc ...), most common first; only when no key does, up to 3
    // of the others. `epoch`, `step` and the like never.
    static QStringList chooseMainMetrics(const RunRows& rows, int cap);
    // The same from the number of rows that hold each key.
    static QStringList chooseMainMetrics(const QHash<QString, int>& rowsWithKey, int cap);

    // Whether `key` looks like a loss or an accuracy (loss, acc, val_* ...).
    static bool isMainMetricKey(const QString& key);
    static QString formatDuration(qint64 ms);
    static QString formatValue(double v);

Q_SIGNALS:
    // The params of some row changed, or rows came or went: which params
    // differ between runs may have changed (RunsColumnChooser).
    void paramsChanged();

private:
    void count(const RunRow& row, int sign);
    void recount();
    void applyColumns();
    void applyMetricColumns(const QStringList& keys);
    void applyParamColumns(const QStringList& keys);
    void rebuildIndex();
    qint64 durationMs(const RunRecord& r) const;

    RunRows m_rows;
    QHash<RunId, int> m_rowOf;
    QStringList m_metricKeys;
    QStringList m_paramKeys;
    QHash<QString, int> m_metricRows; // key -> rows whose latest metrics hold it (bookkeeping keys too)
    QHash<QString, int> m_paramRows;  // key -> rows whose params hold it
    int m_maxMetricColumns = kDefaultMaxMetricColumns;
    QDateTime m_now;
};

} // namespace ty
