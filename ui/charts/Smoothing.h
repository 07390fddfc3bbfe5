#pragma once

#include <span>
#include <vector>

namespace ty {

// TensorBoard's debiased exponential moving average, as in
// tensorboard/components/vz_line_chart2/line-chart.ts, resmoothDataset()
// (the scalars plugin's "Smoothing" slider):
//
//   last = 0; n = 0
//   for each value v, in step order:
//     if all values are equal or v is not finite: smoothed = v
//     else: last = last * w + (1 - w) * v;  n += 1
//           smoothed = last / (1 - w^n)          (w == 1: no debiasing)
//
// n counts the finite values seen so far, so NaN/inf pass through unchanged
// and do not disturb the average around them. The division by 1 - w^n removes
// the bias towards the initial 0 (Kingma & Ba, Adam, 2015, sec. 3).
// `weight` is clamped to [0, 0.999] (the range of the GUI's slider); 0 returns
// the input. Output has the size of `values`. A plain function: any thread.
std::vector<double> smoothEma(std::span<const double> values, double weight);

} // namespace ty
