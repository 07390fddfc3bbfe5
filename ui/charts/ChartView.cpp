#include "ChartView.h"

#include <QChart>
#include <QContextMenuEvent>
#include <QMouseEvent>
#include <QWheelEvent>

#include <cmath>
#include <limits>

namespace ty {

ChartView::ChartView(QChart* chart, QWidget* parent)
    : QChartView(chart, parent)
{
    setRubberBand(QChartView::HorizontalRubberBand);
    // QGraphicsView turns the viewport's mouse tracking on only while an
    // item accepts hover events (today DecimatedChart's axis anchor, a
    // QLineSeries, happens to); without tracking the hover readout only
    // follows a held button (issue 21), so it is asked for here, not left
    // to what the scene holds. TestMetricChart::hoverWithoutButtonListsEverySeries
    // fails when it is off.
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
}

QPointF ChartView::toChart(const QPoint& viewPos) const
{
    return chart()->mapFromScene(mapToScene(viewPos));
}

void ChartView::wheelEvent(QWheelEvent* event)
{
    const int delta = event->angleDelta().y();
    if (delta == 0) {
        event->ignore();
        return;
    }
    const double factor = std::pow(0.8, delta / 120.0);
    Q_EMIT wheelZoom(factor, toChart(event->position().toPoint()).x());
    event->accept();
}

void ChartView::mousePressEvent(QMouseEvent* event)
{
    const bool pan = event->button() == Qt::MiddleButton
            || (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier));
    if (pan) {
        m_panning = true;
        m_panLastX = event->position().x();
        setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    if (event->button() == Qt::RightButton) {
        event->accept(); // never Qt Charts' zoom-out on right click
        return;
    }
    QChartView::mousePressEvent(event);
}

void ChartView::mouseMoveEvent(QMouseEvent* event)
{
    if (m_panning) {
        const double x = event->position().x();
        Q_EMIT panned(x - m_panLastX);
        m_panLastX = x;
        event->accept();
        return;
    }
    Q_EMIT hovered(toChart(event->position().toPoint()).x(), event->globalPosition().toPoint());
    QChartView::mouseMoveEvent(event);
}

void ChartView::mouseReleaseEvent(QMouseEvent* event)
{
    if (m_panning) {
        m_panning = false;
        unsetCursor();
        event->accept();
        return;
    }
    if (event->button() == Qt::RightButton) {
        event->accept();
        return;
    }
    QChartView::mouseReleaseEvent(event);
}

void ChartView::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        Q_EMIT resetRequested();
        event->accept();
        return;
    }
    QChartView::mouseDoubleClickEvent(event);
}

void ChartView::contextMenuEvent(QContextMenuEvent* event)
{
    Q_EMIT menuRequested(event->globalPos());
    event->accept();
}

bool ChartView::viewportEvent(QEvent* event)
{
    if (event->type() == QEvent::Leave)
        Q_EMIT hovered(std::numeric_limits<double>::quiet_NaN(), QPoint());
    return QChartView::viewportEvent(event);
}

void ChartView::paintEvent(QPaintEvent* event)
{
    QChartView::paintEvent(event);
    Q_EMIT painted();
}

} // namespace ty
