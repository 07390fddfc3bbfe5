#pragma once

#include <QColor>
#include <QString>

#include <span>

namespace ty {

// What a chart shows under the cursor, as TensorBoard's and W&B's line
// charts do: for each visible series, its value at the nearest x at or
// before the cursor (never a later point: the value the run had reached
// there). Pure functions; any thread.

// The index of the last element of `xs` (sorted ascending) that is <= `at`;
// -1 when every element is greater (the cursor is before the series starts)
// or `xs` is empty. `at` NaN: -1.
qsizetype indexAtOrBefore(std::span<const double> xs, double at);

// A number as the hover readout shows it: up to 6 significant digits
// ("%g"), "NaN", "inf", "-inf".
QString formatHoverValue(double v);

} // namespace ty
