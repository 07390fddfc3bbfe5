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
    axis->setTickType(QValueAxis::TicksFixed);
    axis->setRange(lo, hi);
    axis->setTickAnchor(0.0);
    axis->setTickInterval(niceStep((hi - lo) / 5.0));
    axis->setTickType(QValueAxis::TicksDynamic);
}

} // namespace ty
