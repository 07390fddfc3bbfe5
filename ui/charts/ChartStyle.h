#pragma once

// What every Trainyard chart shares: the plain look, and round axis ticks.

#include <QList>

class QAbstractAxis;
class QChart;
class QPalette;
class QValueAxis;

namespace ty {

// A new QChart with the house style: no legend, square corners, `margin`
// pixels around the plot, a bold title. The caller owns it (or a QChartView).
QChart* newPlainChart(int margin);

// The chart's colours from a widget palette, so that charts follow the
// theme (ui/theme): background and plot area the palette's Base, titles and
// labels its Text, axis lines and grid between the two. `axes` are every
// axis the chart may show (attached or not). Call again on a PaletteChange.
void applyChartPalette(QChart* chart, const QList<QAbstractAxis*>& axes, const QPalette& palette);

// 1, 2 or 5 times a power of ten, close to `raw` (> 0); 1 for nonsense input.
double niceStep(double raw);

// Sets the axis to [lo, hi] with ticks on round numbers (0.2, 0.4 ... rather
// than 0.2171, 0.4342 ...), without stretching the range the way
// QValueAxis::applyNiceNumbers() does. Dynamic ticks anchored at 0; range
// and interval change in the order that never lets a 0.2 interval meet a
// 0..3000 range (15,000 tick items, a frozen GUI), and only what changed
// (each change relayouts every label). GUI thread.
void setNiceRange(QValueAxis* axis, double lo, double hi);

} // namespace ty
