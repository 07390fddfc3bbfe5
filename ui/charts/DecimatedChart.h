#pragma once

#include "M4Decimator.h"
#include "PackedM4.h"
#include "core/common/Result.h"

#include <QColor>
#include <QImage>
#include <QList>
#include <QPen>
#include <QWidget>

#include <functional>

#include <limits>
#include <memory>
#include <span>
#include <vector>

class QAbstractAxis;
class QAbstractSeries;
class QCategoryAxis;
class QChart;
class QGraphicsItem;
class QPainter;
class QLabel;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;

namespace ty {

class ChartView;

// A chart of several series (e.g. one metric key of several runs) that draws
// only the M4 sample of each series for the current x range and plot width
// (decimateM4): at most about 4 points per pixel column per series,
// recomputed whenever the x range or the plot area changes, so a paint costs
// O(width), not O(points). The full data stay here, shared and immutable.
//
// Qt Charts draws the title, axes and grid; the series are not QLineSeries
// (Qt Charts strokes every line series' outline on every range change,
// ~1 us a point) but one QGraphicsItem over QChart::plotArea() that maps
// axis units to pixels itself (the linear map of M4Viewport, y likewise) and
// draws each segment's polyline: when more than 12 series show, the main
// lines are 1 px and opaque and go through SpanRaster straight into a
// buffer of the plot area's device pixels, its pixel columns split over the
// cores (every series drawn in paint order in each; the picture of all points exactly,
// TestM4Decimator; SVG and other non-raster painters get QPainter
// polylines); otherwise QPainter::drawPolyline: a 1 px cosmetic pen without
// antialiasing for the faint raw layer, a 2 px antialiased pen for the main
// line of up to 12. All raw layers are drawn
// before all main lines. One empty QLineSeries stays attached to the axes so
// Qt Charts' rubber band zoom still changes their range.
//
// Each series may be smoothed (smoothEma, TensorBoard's debiased EMA); the
// raw series is then drawn faintly behind the smoothed one. NaN/inf are gaps
// with a marker on the plot's bottom (NaN, -inf) or top (+inf) edge.
//
// X: the caller's units (step, epoch, seconds since start) on a value axis,
// or ms since the Unix epoch (UTC) on a date-time axis shown in local time.
// The y range fits the finite values inside the visible x range (5 %
// padding).
//
// Y: linear or log10 (setYScale). On a log axis the series are decimated and
// drawn in the transformed space (y -> log10 y, fed to a value axis whose
// labels read 10^k, 2x10^k ...): M4 keeps the per-column extremes of log10 y,
// which are those of y since log10 is increasing, so the picture stays equal
// to the picture of every point (TestM4Decimator proves it). Finite values
// <= 0 have no logarithm: they are skipped (the line joins their neighbours)
// and a notice under the chart names how many.
//
// A full pass decimates the series of the chart in parallel (QtConcurrent,
// one task per series, when there are many points) with a per-series
// M4Index, so a zoom or pan frame costs about O(columns x log n) per series.
//
// Live: appendPoints() adds points at the end of a series and re-decimates
// only the last pixel column onward (the M4 columns before it cannot
// change); while the whole series is in view the x range grows with 25 %
// headroom, so a full re-decimation happens O(log n) times, not per append.
// Zoom: horizontal rubber band, wheel, pan (see ChartView), reset by double
// click; xRangeChanged reports every user change so views can synchronise.
//
// Packed series (addPackedSeries): a followed run's points stay in their
// PackedMetricSeries (core/store, ~2-3 bytes a point instead of the 16 of
// the x and y columns plus M4Index) and are decimated from it
// (decimateM4Packed: the same sample as decimateM4 over plain columns),
// incrementally on packedAppended() like appendPoints(). With smoothing or
// the log axis on, such a series is unpacked into plain x and y columns for
// as long as either is on (their memory as before), and packed again when
// both are off.
//
// Thread: GUI thread only. OpenGL is never enabled.
class DecimatedChart final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DecimatedChart)

public:
    using Column = std::shared_ptr<const std::vector<double>>;
    enum class XAxisKind { Value, DateTimeMs };
    enum class YScale { Linear, Log };

    explicit DecimatedChart(const QString& title, QWidget* parent = nullptr);
    ~DecimatedChart() override;

    void setTitle(const QString& title);
    QString title() const { return m_title; }
    // Switches the x axis; series keep their data (the caller re-adds series
    // with x in the new units).
    void setXAxis(XAxisKind kind, const QString& title);
    XAxisKind xAxisKind() const { return m_xKind; }

    // Batches changes: between beginUpdate() and the matching endUpdate()
    // (nestable) nothing is re-decimated or repainted; endUpdate() does it
    // once (opening Compare with 100 runs decimates once, not 100 times).
    void beginUpdate();
    void endUpdate();

    // Adds a series; x sorted ascending, x->size() == y->size(). Returns its
    // index. The x range resets to the extent of all series.
    int addSeries(const QString& name, const QColor& colour, Column x, Column y);
    // Appends points to series `index` (x.size() == y.size()). Points at or
    // after the series' last x are drawn incrementally; earlier ones make the
    // series merge in x order and the chart re-decimate.
    void appendPoints(int index, std::span<const double> x, std::span<const double> y);
    // Adds a series drawn from `data` (x = map(step, wall time), y = value;
    // map.directly(*data) must hold: x non-decreasing). The chart reads
    // `data` and never changes it; the caller appends to it and then calls
    // packedAppended(index). Returns its index, as addSeries.
    int addPackedSeries(
            const QString& name, const QColor& colour, std::shared_ptr<const PackedMetricSeries> data, PackedXMap map);
    // Series `index` (added by addPackedSeries) holds new points at its end,
    // in x order: drawn incrementally, as appendPoints() draws them.
    void packedAppended(int index);
    void clearSeries();
    int seriesCount() const { return int(m_entries.size()); }
    QString seriesName(int index) const;
    void setSeriesVisible(int index, bool visible);
    bool isSeriesVisible(int index) const;

    void setYScale(YScale scale);
    YScale yScale() const { return m_yScale; }
    // Finite values <= 0 of series `index` not drawn on the log axis (0 on linear).
    qsizetype skippedPoints(int index) const;
    // A line of the caller's own under the chart (e.g. runs not drawn on
    // this axis); shown together with the log axis' skipped-values notice.
    void setNotice(const QString& text);
    // The notice as shown (empty: hidden).
    QString noticeText() const;

    // The chart as a file: PNG (the widget grabbed) or SVG (QSvgGenerator;
    // every drawn series a vector path). Errors name the path.
    Result<void> exportPng(const QString& path) const;
    Result<void> exportSvg(const QString& path) const;

    // 0 = off; clamped to [0, 0.999].
    void setSmoothing(double weight);

    // Dashed vertical lines (grey, 1 px cosmetic) at these x values, in the
    // units of the current x axis (e.g. the steps where a resumed run's
    // series went back, ResultStore::metricRestarts). Drawn by paintSeries,
    // under the series and clipped to the plot area, so PNG/SVG exports show
    // them too. Kept across setXAxis(): the caller maps them anew.
    void setMarkers(QList<double> xs);
    const QList<double>& markers() const { return m_markers; }
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
    // The y axis range (log10 of the values on a log axis).
    double yMin() const;
    double yMax() const;
    // The points of the main line as drawn, segment by segment (axis units),
    // for tests.
    QList<QList<QPointF>> drawnSegments(int index) const;
    // Times every series was re-decimated from scratch (tests of live appends).
    int fullRedecimations() const { return m_fullRedecimations; }

    // Recomputes every sample now (normally automatic; deferred to
    // endUpdate() inside beginUpdate()).
    void redecimate();

    // Paints every visible series into `area` (the plot area, in the
    // painter's coordinates) with the current axis ranges: what the chart's
    // series item paints; tests rasterise with it.
    void paintSeries(QPainter& painter, const QRectF& area) const;

    // Hover readout (issue 21): the mouse over the plot area, no button held,
    // sets the cursor x; a dashed vertical line is drawn there (on screen
    // only, not in paintSeries' exports) and a tooltip lists every visible
    // series' name, in its colour, with its value at the nearest x at or
    // before the cursor (indexAtOrBefore; smoothed and raw when smoothing).
    // setHoverX(NaN) (or the mouse leaving) hides both. x in axis units.
    void setHoverX(double x);
    double hoverX() const { return m_hoverX; }
    // The readout as plain text, one line each: "<x axis title> <x>", then
    // "<series name>: <value>" ("<smoothed> (raw <value>)" when smoothing)
    // for every visible series with a point at or before the cursor, in
    // series order. Empty without a hover.
    QString hoverText() const;
    // Paints the cursor line into `area` (the plot area); the series item
    // calls it after paintSeries.
    void paintHover(QPainter& painter, const QRectF& area) const;

Q_SIGNALS:
    // The user zoomed, panned or reset (not emitted by setXRange).
    void xRangeChanged(double lo, double hi);
    void menuRequested(const QPoint& globalPos);
    // After the chart view painted.
    void painted();

protected:
    // A new palette (the theme changed): the chart's colours follow.
    void changeEvent(QEvent* event) override;

private:
    struct Layer {
        QList<QList<QPointF>> segments; // the M4 sample, axis units
        QPen pen;
        bool visible = false;
        qsizetype drawn = 0;
        int markers = 0;
        QList<SegmentedSeries::Gap> gaps;
    };
    struct Entry {
        QString name;
        QColor colour;
        Column x, y;
        std::shared_ptr<std::vector<double>> ownX, ownY; // set once appended to
        // addPackedSeries: the points, their x map, and how many of them the
        // chart has seen. x and y are then empty unless unpacked (smoothing
        // or log axis: !direct()).
        std::shared_ptr<const PackedMetricSeries> packed;
        PackedXMap packedMap;
        qsizetype packedSeen = 0;
        std::vector<double> smoothed;
        // Log axis: x and log10 y without the finite values <= 0.
        std::vector<double> logX, logY, logSX, logSY;
        qsizetype skipped = 0;
        bool visible = true;
        Layer main, raw;
        // M4Index of columns(e, true) / columns(e, false), built on the
        // first full decimation after the data last changed (dropIndexes).
        std::shared_ptr<const M4Index> mainIndex, rawIndex;
    };
    struct Columns {
        std::span<const double> x, y;
    };

    struct Pass;
    std::unique_ptr<Pass> startDecimation();
    void finishDecimation(std::unique_ptr<Pass> pass);
    void rebuildDerived(Entry& e);
    // Whether `e` is decimated straight from its packed points.
    bool direct(const Entry& e) const { return e.packed && m_smoothing <= 0 && m_yScale == YScale::Linear; }
    // Unpacks a packed entry into x and y (for !direct()), or drops them.
    void unpack(Entry& e);
    // The x extent of the entry's first `count` points; false when none.
    bool entryRange(const Entry& e, qsizetype count, double& lo, double& hi) const;
    bool appendTailPacked(Entry& e, qsizetype oldCount, const M4Viewport& vp, double& y0, double& y1, bool& haveY);
    // The rest of appendPoints()/packedAppended() once the points are in:
    // `last` is the new last x, `tail` redraws from the last pixel column on
    // (appendTail/appendTailPacked; false: a full pass is needed).
    void drawAppended(Entry& e, bool following, double last,
            const std::function<bool(const M4Viewport&, double&, double&, bool&)>& tail);
    static void dropIndexes(Entry& e);
    void appendDerived(Entry& e, std::size_t from);
    Columns columns(const Entry& e, bool mainLayer) const;
    M4Viewport drawViewport() const;
    bool appendTail(Entry& e, Layer& layer, const Columns& c, std::size_t oldCount, const QPen& pen,
            const M4Viewport& vp, double& y0, double& y1, bool& haveY);
    QPen mainPen(const Entry& e) const;
    QPen rawPen(const Entry& e) const;
    void setYAxisRange(double y0, double y1);
    void updateNotice();
    void applyLayer(Entry& e, Layer& layer, const M4Result& r, const QPen& pen, bool visible);
    void placeMarkers(Layer& layer);
    void attach(QAbstractSeries* s);
    void userRange(double lo, double hi);
    void onAxisRangeChanged(double lo, double hi);
    void showHover(double chartX, const QPoint& globalPos);
    struct HoverValue {
        QString name;
        QColor colour;
        QString value;
    };
    QString hoverHeader() const;
    QList<HoverValue> hoverValues() const;
    QString hoverHtml() const;

    QString m_title;
    QGraphicsItem* m_item = nullptr; // the series, a child of m_chart
    QLineSeries* m_anchor = nullptr; // empty: keeps Qt Charts' zoom working
    int m_updateDepth = 0;
    bool m_pendingRedecimate = false;
    mutable std::vector<QPointF> m_mapped; // paint scratch
    // The SpanRaster buffer of the last paint (column-major) and the image
    // its columns go into, reused while the plot area keeps its size: a
    // fresh few-MB buffer per frame meant fresh pages to fault in.
    mutable std::vector<QRgb> m_rasterColumns;
    mutable QImage m_rasterImage;
    XAxisKind m_xKind = XAxisKind::Value;
    QChart* m_chart = nullptr;
    ChartView* m_view = nullptr;
    QValueAxis* m_axisX = nullptr;
    QDateTimeAxis* m_axisTime = nullptr;
    QValueAxis* m_axisY = nullptr; // the one in the chart: m_axisLin or m_axisLog
    QValueAxis* m_axisLin = nullptr;
    QCategoryAxis* m_axisLog = nullptr;
    QLabel* m_notice = nullptr;
    QString m_callerNotice;
    YScale m_yScale = YScale::Linear;
    std::vector<std::unique_ptr<Entry>> m_entries;
    double m_smoothing = 0.0;
    QList<double> m_markers; // setMarkers(), x axis units
    double m_lo = 0.0, m_hi = 1.0;
    double m_yLo = 0.0, m_yHi = 1.0;
    double m_dataYLo = 0.0, m_dataYHi = 0.0; // unpadded extent behind m_yLo/m_yHi
    bool m_haveDataY = false;
    int m_fullRedecimations = 0;
    bool m_settingRange = false;
    bool m_inRedecimate = false;
    double m_lastWidth = -1;
    double m_hoverX = std::numeric_limits<double>::quiet_NaN();
};

} // namespace ty
