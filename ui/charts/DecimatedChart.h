#pragma once

#include "M4Decimator.h"

#include <QColor>
#include <QList>
#include <QWidget>

#include <memory>
#include <vector>

class QAbstractAxis;
class QAbstractSeries;
class QChart;
class QDateTimeAxis;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace ty {

class ChartView;

// A chart of several series (e.g. one metric key of several runs) that hands
// Qt Charts only the M4 sample of each series for the current x range and
// plot width (decimateM4): at most about 4 points per pixel column per
// series, recomputed whenever the x range or the plot area changes, so a
// paint costs O(width), not O(points). The full data stay here, shared and
// immutable.
//
// Each series may be smoothed (smoothEma, TensorBoard's debiased EMA); the
// raw series is then drawn faintly behind the smoothed one. NaN/inf are gaps
// with a marker on the plot's bottom (NaN, -inf) or top (+inf) edge.
//
// X: the caller's units (step, seconds since start) on a value axis, or ms
// since the Unix epoch (UTC) on a date-time axis shown in local time. The y
// range fits the finite values inside the visible x range (5 % padding).
// Zoom: horizontal rubber band, wheel, pan (see ChartView), reset by double
// click; xRangeChanged reports every user change so views can synchronise.
//
// Thread: GUI thread only. OpenGL is never enabled.
class DecimatedChart final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DecimatedChart)

public:
    using Column = std::shared_ptr<const std::vector<double>>;
    enum class XAxisKind { Value, DateTimeMs };

    explicit DecimatedChart(const QString& title, QWidget* parent = nullptr);
    ~DecimatedChart() override;

    void setTitle(const QString& title);
    QString title() const { return m_title; }
    // Switches the x axis; series keep their data (the caller re-adds series
    // with x in the new units).
    void setXAxis(XAxisKind kind, const QString& title);
    XAxisKind xAxisKind() const { return m_xKind; }

    // Adds a series; x sorted ascending, x->size() == y->size(). Returns its
    // index. The x range resets to the extent of all series.
    int addSeries(const QString& name, const QColor& colour, Column x, Column y);
    void clearSeries();
    int seriesCount() const { return int(m_entries.size()); }
    QString seriesName(int index) const;
    void setSeriesVisible(int index, bool visible);
    bool isSeriesVisible(int index) const;

    // 0 = off; clamped to [0, 0.999].
    void setSmoothing(double weight);
    double smoothing() const { return m_smoothing; }

    // Visible x range (axis units). setXRange does not emit xRangeChanged.
    void setXRange(double lo, double hi);
    double xMin() const { return m_lo; }
    double xMax() const { return m_hi; }
    // The extent of every series' x (0..1 when empty).
    std::pair<double, double> fullXRange() const;
    void resetZoom();
    // Zoom by `factor` (< 1 in) around x value `anchor`; pan by a fraction of the range.
    void zoomX(double factor, double anchor);
    void panX(double fraction);

    // What is drawn, for tests, benchmarks and the status line.
    M4Viewport viewport() const;
    qsizetype drawnPoints(int index) const;    // the main (smoothed or raw) line
    qsizetype drawnRawPoints(int index) const; // the faint raw line (0 when not smoothing)
    qsizetype totalPoints(int index) const;
    int gapMarkers(int index) const;
    QChart* chart() const { return m_chart; }
    ChartView* chartView() const { return m_view; }
    double yMin() const;
    double yMax() const;

    // Recomputes every sample now (normally automatic).
    void redecimate();

Q_SIGNALS:
    // The user zoomed, panned or reset (not emitted by setXRange).
    void xRangeChanged(double lo, double hi);
    void menuRequested(const QPoint& globalPos);
    // After the chart view painted.
    void painted();

private:
    struct Layer {
        QList<QLineSeries*> lines;
        QScatterSeries* nan = nullptr;
        QScatterSeries* inf = nullptr;
        qsizetype drawn = 0;
        int markers = 0;
        QList<SegmentedSeries::Gap> gaps;
    };
    struct Entry {
        QString name;
        QColor colour;
        Column x, y;
        std::vector<double> smoothed;
        bool visible = true;
        Layer main, raw;
    };

    void applyLayer(Entry& e, Layer& layer, const M4Result& r, const QPen& pen, bool visible);
    void placeMarkers(Layer& layer, double y0, double y1);
    void attach(QAbstractSeries* s);
    void userRange(double lo, double hi);
    void onAxisRangeChanged(double lo, double hi);
    void showHover(double chartX, const QPoint& globalPos);

    QString m_title;
    XAxisKind m_xKind = XAxisKind::Value;
    QChart* m_chart = nullptr;
    ChartView* m_view = nullptr;
    QValueAxis* m_axisX = nullptr;
    QDateTimeAxis* m_axisTime = nullptr;
    QValueAxis* m_axisY = nullptr;
    std::vector<std::unique_ptr<Entry>> m_entries;
    double m_smoothing = 0.0;
    double m_lo = 0.0, m_hi = 1.0;
    double m_yLo = 0.0, m_yHi = 1.0;
    bool m_settingRange = false;
    bool m_inRedecimate = false;
    double m_lastWidth = -1;
};

} // namespace ty
