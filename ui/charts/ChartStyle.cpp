#include "ChartStyle.h"

#include <QChart>
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
    // Each change of range or interval lays out every label again (Qt Charts
    // 6.4 measures each with a QTextDocument): at most these two, in the
    // order that never has more ticks than before or after. A growing
    // interval goes first (the old range with it: fewer ticks), a shrinking
    // one after the range (the new, smaller range with the old interval).
    if (step > axis->tickInterval()) {
        axis->setTickInterval(step);
        axis->setRange(lo, hi);
    } else {
        axis->setRange(lo, hi);
        axis->setTickInterval(step);
    }
}

} // namespace ty
