#include "PipelineGraph.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

namespace ty {

QColor stepStateColour(const QString& state)
{
    if (state == u"running")
        return QColor(0x1e, 0x88, 0xe5);
    if (state == u"succeeded")
        return QColor(0x2e, 0x7d, 0x32);
    if (state == u"cached")
        return QColor(0x00, 0x89, 0x7b);
    if (state == u"failed")
        return QColor(0xc6, 0x28, 0x28);
    if (state == u"cancelled")
        return QColor(0xef, 0x6c, 0x00);
    return QColor(0x75, 0x75, 0x75); // waiting, skipped
}

PipelineGraph::PipelineGraph(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setAccessibleName(tr("Pipeline graph"));
}

void PipelineGraph::setPipeline(const QJsonObject& pipeline)
{
    m_pipeline = pipeline;
    m_layout = PipelineGraphLayout::of(pipeline);
    updateGeometry();
    update();
}

void PipelineGraph::setDurations(const QHash<RunId, QString>& durations)
{
    m_durations = durations;
    update();
}

QRect PipelineGraph::boxRect(int box) const
{
    const PipelineGraphLayout::Box& b = m_layout.boxes.at(box);
    return {kMargin + b.column * (kBoxWidth + kGapX), kMargin + b.row * (kBoxHeight + kGapY), kBoxWidth, kBoxHeight};
}

int PipelineGraph::boxAt(const QPoint& pos) const
{
    for (int i = 0; i < m_layout.boxes.size(); ++i)
        if (boxRect(i).contains(pos))
            return i;
    return -1;
}

QSize PipelineGraph::sizeHint() const
{
    if (m_layout.boxes.isEmpty())
        return {kBoxWidth + 2 * kMargin, kBoxHeight + 2 * kMargin};
    return {2 * kMargin + m_layout.columns * kBoxWidth + (m_layout.columns - 1) * kGapX,
            2 * kMargin + m_layout.rows * kBoxHeight + (m_layout.rows - 1) * kGapY};
}

QString PipelineGraph::toolTipFor(int box) const
{
    const PipelineGraphLayout::Box& b = m_layout.boxes.at(box);
    QStringList lines{QStringLiteral("<b>%1</b>").arg(b.name.toHtmlEscaped()), tr("state: %1").arg(b.state)};
    if (b.run)
        lines << tr("run: #%1").arg(b.run);
    if (const QString d = m_durations.value(b.run); b.run && !d.isEmpty())
        lines << tr("duration: %1").arg(d);
    if (!b.reason.isEmpty())
        lines << b.reason.toHtmlEscaped();
    return lines.join(QStringLiteral("<br>"));
}

void PipelineGraph::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    // Edges first, from the right edge of the upstream box to the left of the next.
    p.setPen(QPen(palette().color(QPalette::Mid), 1.5));
    for (const auto& [from, to] : m_layout.edges) {
        const QRect a = boxRect(from), b = boxRect(to);
        const QPointF start(a.right() + 1, a.center().y()), end(b.left() - 1, b.center().y());
        QPainterPath path(start);
        const qreal bend = (end.x() - start.x()) / 2;
        path.cubicTo(start + QPointF(bend, 0), end - QPointF(bend, 0), end);
        p.drawPath(path);
        p.drawLine(end, end + QPointF(-6, -4));
        p.drawLine(end, end + QPointF(-6, 4));
    }
    const QFontMetrics fm = fontMetrics();
    for (int i = 0; i < m_layout.boxes.size(); ++i) {
        const PipelineGraphLayout::Box& b = m_layout.boxes.at(i);
        const QRect r = boxRect(i);
        const QColor c = stepStateColour(b.state);
        // A light tint of the state's colour on white under dark text, in
        // both themes: the box carries its own background.
        QColor tint = c;
        tint.setAlphaF(0.18);
        const QRectF outline = QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5);
        p.setPen(QPen(c, b.state == u"running" ? 2.5 : 1.5, b.state == u"skipped" ? Qt::DashLine : Qt::SolidLine));
        p.setBrush(Qt::white);
        p.drawRoundedRect(outline, 6, 6);
        p.setBrush(tint);
        p.drawRoundedRect(outline, 6, 6);
        p.setPen(QColor(0x21, 0x21, 0x21));
        const QRect text = r.adjusted(8, 4, -8, -4);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(text, Qt::AlignLeft | Qt::AlignTop,
                QFontMetrics(bold).elidedText(b.name, Qt::ElideMiddle, text.width()));
        p.setFont(font());
        QString second = b.state;
        if (b.run)
            second += QStringLiteral("  #%1").arg(b.run);
        if (const QString d = m_durations.value(b.run); b.run && !d.isEmpty())
            second += QStringLiteral("  ") + d;
        p.drawText(text, Qt::AlignLeft | Qt::AlignBottom, fm.elidedText(second, Qt::ElideRight, text.width()));
    }
}

bool PipelineGraph::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int box = boxAt(help->pos());
        if (box >= 0)
            QToolTip::showText(help->globalPos(), toolTipFor(box), this, boxRect(box));
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void PipelineGraph::mouseDoubleClickEvent(QMouseEvent* event)
{
    const int box = boxAt(event->position().toPoint());
    if (box >= 0 && m_layout.boxes.at(box).run)
        Q_EMIT runActivated(m_layout.boxes.at(box).run);
}

} // namespace ty
