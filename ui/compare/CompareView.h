#pragma once

#include "CompareData.h"
#include "ui/charts/DecimatedChart.h"
#include "ui/charts/XAxisMap.h"
#include "core/common/Result.h"

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

class SmoothingControl;

class CompareLoader;
class CompareTableModel;

// Runs side by side: one DecimatedChart per metric key (small multiples, two
// per row, losses and accuracies first), every run overlaid in its
// runColour(); a legend whose check boxes hide and show runs in every chart;
// the x axis (step, epoch, time since the run started, wall time in local
// time), linear or log y (values <= 0 skipped, counted in a notice under each
// chart) and the smoothing weight (TensorBoard's debiased EMA, raw drawn
// faintly behind) for all charts; zoom and pan synchronised across the
// charts. Beside them the params and results table (CompareTableModel) with
// an "only differences" toggle; click a row's header to sort the runs by it
// (again: the other way), right click it for ascending / descending and, on a
// "best" row, whether the lowest or highest value is best.
// Right click on a chart: reset zoom, export its data as CSV (every stored
// point, not the drawn sample) or the chart as PNG or SVG. "Export table…"
// writes the table as CSV.
//
// Epoch axis: each run's epoch comes from its own "epoch" metric (EpochMap:
// linear between logged epochs); a run without one is not drawn on that axis
// and the notice above the charts ("compareNotice") names it.
//
// Data come from a CompareLoader on a worker thread (setRuns) or directly
// (setData). GUI thread only; `loader` (may be null) must outlive the view.
class CompareView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CompareView)

public:
    enum class XAxis { Step, Epoch, RelativeTime, WallTime };

    explicit CompareView(CompareLoader* loader, QWidget* parent = nullptr);
    ~CompareView() override;

    // Asks the loader for these runs; loaded() follows.
    void setRuns(const QList<RunId>& runs);
    // Loads the same runs again (their live points and ends since), keeping
    // what the user set: hidden runs, each chart's zoom (a chart that shows
    // everything grows with the data) and hand-set column widths. New keys
    // get charts. loaded() follows.
    void refresh();
    QList<RunId> runs() const { return m_runs; }
    void setData(const CompareDataPtr& data);
    CompareDataPtr data() const { return m_data; }

    void setXAxis(XAxis axis);
    XAxis xAxis() const { return m_xAxis; }
    void setYScale(DecimatedChart::YScale scale);
    DecimatedChart::YScale yScale() const { return m_yScale; }
    // The view's notice (runs not drawn on the epoch axis); empty when none.
    QString notice() const;
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
    Result<void> exportChartSvg(const QString& key, const QString& path) const;
    // Sorts the table's runs by its shown row `row` (CompareTableModel::sortRunsBy).
    void sortRunsBy(int row, Qt::SortOrder order);
    Result<void> exportTableCsv(const QString& path) const;

    // The width of a run column of the table whose cells and header want
    // `contentWidth` pixels, in a viewport `viewportWidth` wide showing
    // `columns` runs: what they want, but at most half the viewport (all of
    // it for one run) so that two runs are always side by side with their
    // values in view; never under kMinColumnWidth.
    static constexpr int kMinColumnWidth = 64;
    static int fittedColumnWidth(int contentWidth, int viewportWidth, int columns);

Q_SIGNALS:
    // Data applied and charts built (after setRuns or setData).
    void loaded();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // Applies fittedColumnWidth() to every run column, unless the user
    // resized one by hand since the last data (kept then).
    void fitColumns();
    void onLoaded(int ticket, const CompareDataPtr& data);
    // setData() for refresh(): the same runs, the user's settings kept.
    void applyRefresh(const CompareDataPtr& data);
    // The epoch map of every run that has a usable epoch metric.
    void rebuildEpochs();
    // "N runs · K keys · P points" under the charts.
    void updateStatus();
    void rebuildCharts();
    void fillChart(DecimatedChart* chart, const QString& key);
    void syncRange(DecimatedChart* from, double lo, double hi);
    void showChartMenu(const QString& key, const QPoint& globalPos);
    void rebuildLegend();
    void updateNotice();
    void showRowMenu(const QPoint& pos);

    CompareLoader* m_loader;
    CompareDataPtr m_data;
    QList<RunId> m_runs;
    int m_ticket = 0;
    int m_refreshTicket = -1; // the request refresh() made
    XAxis m_xAxis = XAxis::Step;
    DecimatedChart::YScale m_yScale = DecimatedChart::YScale::Linear;
    QMap<RunId, EpochMap> m_epochs; // runs with a usable epoch metric
    double m_smoothing = 0.0;
    QSet<RunId> m_hidden;

    QComboBox* m_axisCombo = nullptr;
    SmoothingControl* m_smoothingControl = nullptr;
    QCheckBox* m_onlyDiff = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_notice = nullptr;
    QCheckBox* m_logY = nullptr;
    QWidget* m_chartsContent = nullptr;
    QGridLayout* m_grid = nullptr;
    QListWidget* m_legend = nullptr;
    QTableView* m_table = nullptr;
    CompareTableModel* m_model = nullptr;
    QStringList m_keys;
    QMap<QString, DecimatedChart*> m_charts;
    QMap<QString, QList<RunId>> m_seriesRuns;
    bool m_syncing = false;
    bool m_fitting = false;          // fitColumns() is resizing: not the user
    bool m_userColumnWidths = false; // a run column was resized by hand
};

} // namespace ty
