#pragma once

#include <QChartView>

namespace ty {

// The QChartView under DecimatedChart: turns mouse and wheel input into
// requests the chart acts on (it owns the x range, so zooms can be
// synchronised across charts and re-decimated), and reports each paint.
//   left drag       horizontal rubber band zoom (Qt Charts' own)
//   wheel           zoom x around the cursor (wheelZoom, factor < 1 zooms in)
//   middle drag, shift + left drag   pan (panned, in device pixels)
//   double click    reset (resetRequested)
//   right click     menuRequested (never Qt Charts' zoom out)
// OpenGL is never used (it crashes under the offscreen platform).
// GUI thread only.
class ChartView final : public QChartView {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ChartView)

public:
    explicit ChartView(QChart* chart, QWidget* parent = nullptr);

    // The point under `viewPos`, in the chart item's coordinates (those of
    // QChart::plotArea()).
    QPointF toChart(const QPoint& viewPos) const;

Q_SIGNALS:
    void wheelZoom(double factor, double chartX);
    void panned(double dxPixels);
    void resetRequested();
    void menuRequested(const QPoint& globalPos);
    // The mouse moved over the view (no button needed); chartX NaN: it left.
    void hovered(double chartX, const QPoint& globalPos);
    void painted();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    bool viewportEvent(QEvent* event) override;

private:
    bool m_panning = false;
    double m_panLastX = 0;
};

} // namespace ty
