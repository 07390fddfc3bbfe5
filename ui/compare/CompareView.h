#pragma once

#include "CompareData.h"
#include "common/Result.h"

#include <QMap>
#include <QSet>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QListWidget;
class QSlider;
class QTableView;

namespace ty {

class CompareLoader;
class CompareTableModel;
class DecimatedChart;

// Runs side by side: one DecimatedChart per metric key (small multiples, two
// per row, losses and accuracies first), every run overlaid in its
// runColour(); a legend whose check boxes hide and show runs in every chart;
// the x axis (step, time since the run started, wall time) and the smoothing
// weight (TensorBoard's debiased EMA, raw drawn faintly behind) for all
// charts; zoom and pan synchronised across the charts. Beside them the params
// and results table (CompareTableModel) with an "only differences" toggle.
// Right click on a chart: reset zoom, export its data as CSV (every stored
// point, not the drawn sample) or the chart as PNG. "Export table…" writes
// the table as CSV.
//
// Data come from a CompareLoader on a worker thread (setRuns) or directly
// (setData). GUI thread only; `loader` (may be null) must outlive the view.
class CompareView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CompareView)

public:
    enum class XAxis { Step, RelativeTime, WallTime };

    explicit CompareView(CompareLoader* loader, QWidget* parent = nullptr);
    ~CompareView() override;

    // Asks the loader for these runs; loaded() follows.
    void setRuns(const QList<RunId>& runs);
    QList<RunId> runs() const { return m_runs; }
    void setData(const CompareDataPtr& data);
    CompareDataPtr data() const { return m_data; }

    void setXAxis(XAxis axis);
    XAxis xAxis() const { return m_xAxis; }
    void setSmoothing(double weight);
    void setOnlyDifferences(bool on);
    void setRunVisible(RunId run, bool visible);
    bool isRunVisible(RunId run) const { return !m_hidden.contains(run); }

    // Keys in display order.
    QStringList keys() const { return m_keys; }
    DecimatedChart* chart(const QString& key) const { return m_charts.value(key); }
    // The run drawn as series `index` of the chart of `key` (0 when none).
    RunId seriesRun(const QString& key, int index) const;
    CompareTableModel* tableModel() const { return m_model; }

    // Every stored point of `key` for each visible run, in run order then
    // step order: "run_id,run_name,step,wall_time_utc,value" (values to 17
    // significant digits, nan/inf/-inf as such, times ISO 8601 UTC with ms).
    QString chartCsv(const QString& key) const;
    Result<void> exportChartCsv(const QString& key, const QString& path) const;
    Result<void> exportChartPng(const QString& key, const QString& path) const;
    Result<void> exportTableCsv(const QString& path) const;

Q_SIGNALS:
    // Data applied and charts built (after setRuns or setData).
    void loaded();

private:
    void onLoaded(int ticket, const CompareDataPtr& data);
    void rebuildCharts();
    void fillChart(DecimatedChart* chart, const QString& key);
    void syncRange(DecimatedChart* from, double lo, double hi);
    void showChartMenu(const QString& key, const QPoint& globalPos);
    void rebuildLegend();

    CompareLoader* m_loader;
    CompareDataPtr m_data;
    QList<RunId> m_runs;
    int m_ticket = 0;
    XAxis m_xAxis = XAxis::Step;
    double m_smoothing = 0.0;
    QSet<RunId> m_hidden;

    QComboBox* m_axisCombo = nullptr;
    QSlider* m_smoothingSlider = nullptr;
    QLabel* m_smoothingLabel = nullptr;
    QCheckBox* m_onlyDiff = nullptr;
    QLabel* m_status = nullptr;
    QWidget* m_chartsContent = nullptr;
    QGridLayout* m_grid = nullptr;
    QListWidget* m_legend = nullptr;
    QTableView* m_table = nullptr;
    CompareTableModel* m_model = nullptr;
    QStringList m_keys;
    QMap<QString, DecimatedChart*> m_charts;
    QMap<QString, QList<RunId>> m_seriesRuns;
    bool m_syncing = false;
};

} // namespace ty
