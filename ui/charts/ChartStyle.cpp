#include "ChartStyle.h"

#include <QAbstractAxis>
#include <QChart>
#include <QPalette>
#include <QPen>
#include <QValueAxis>

#include <cmath>

namespace ty {

QChart* newPlainChart(int margin)
{
    auto* chart = new QChart;
    chart->legend()->hide();
    chart->setMargins(QMargins(margin, margin, margin, margin));
    chart->setBackgroundRoundness(0);
    QFont titleFont = chart->titleFont();
    titleFont.setBold(true);
    chart->setTitleFont(titleFont);
    return chart;
}

void applyChartPalette(QChart* chart, const QList<QAbstractAxis*>& axes, const QPalette& palette)
{
    const QColor base = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    const auto between = [&](double t) {
        return QColor::fromRgbF(float(base.redF() + (text.redF() - base.redF()) * t),
                float(base.greenF() + (text.greenF() - base.greenF()) * t),
                float(base.blueF() + (text.blueF() - base.blueF()) * t));
    };
    chart->setBackgroundBrush(base);
    chart->setPlotAreaBackgroundVisible(false);
    chart->setTitleBrush(text);
    for (QAbstractAxis* axis : axes) {
        axis->setLabelsBrush(text);
        axis->setTitleBrush(text);
        axis->setLinePen(QPen(between(0.45), 1));
        axis->setGridLinePen(QPen(between(0.15), 1));
        axis->setMinorGridLinePen(QPen(between(0.08), 1));
    }
}

double niceStep(double raw)
{
    if (!(raw > 0) || !std::isfinite(raw))
        return 1.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / magnitude;
    const double nice = f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0;
    return nice * magnitude;
}

void setNiceRange(QValueAxis* axis, double lo, double hi)
{
    const double step = niceStep((hi - lo) / 5.0);
    if (axis->tickType() != QValueAxis::TicksDynamic || axis->tickAnchor() != 0.0) {
        // First use: set up with fixed ticks, then dynamic ones from 0.
        axis->setTickType(QValueAxis::TicksFixed);
        axis->setTickAnchor(0.0);
        axis->setTickInterval(step);
        axis->setRange(lo, hi);
        axis->setTickType(QValueAxis::TicksDynamic);
        return;
    }
    // Qt Charts 6.4 lays out every label again (a QTextDocument each) at
    // once on a range change, and later (a posted layout request, before
    // the next paint if posted before it) on an interval change. So: only
    // what changed, the interval first, so the immediate layout sees the
    // new interval with the new range (a 0.2 interval never meets a
    // 0..3000 range: 15,000 tick items, a frozen GUI) and the paint comes
    // after the deferred one (the other order painted every zoom-in twice).
    // Only a shrink so steep that the old range would hold over 1,000 of
    // the new ticks sets the range first (the new, narrow range with the old
    // interval is a few ticks).
    const double oldInterval = axis->tickInterval();
    const bool intervalFirst = step > oldInterval || (axis->max() - axis->min()) / step <= 1000.0;
    if (intervalFirst) {
        axis->setTickInterval(step);
        axis->setRange(lo, hi);
    } else {
        axis->setRange(lo, hi);
        axis->setTickInterval(step);
    }
}

} // namespace ty
