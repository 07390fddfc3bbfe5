#include "Smoothing.h"

#include <algorithm>
#include <cmath>

namespace ty {

std::vector<double> smoothEma(std::span<const double> values, double weight)
{
    std::vector<double> out(values.begin(), values.end());
    const double w = std::clamp(std::isfinite(weight) ? weight : 0.0, 0.0, 0.999);
    if (w == 0.0 || values.empty())
        return out;
    // TensorBoard leaves a constant series alone (its "isConstant" check).
    const double first = values.front();
    const bool constant = std::all_of(values.begin(), values.end(), [first](double v) { return v == first; });
    if (constant)
        return out;
    double last = 0.0;
    int n = 0;
    double wPowN = 1.0; // w^n, kept incrementally
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        if (!std::isfinite(v))
            continue; // passes through
        last = last * w + (1.0 - w) * v;
        ++n;
        wPowN *= w;
        out[i] = last / (1.0 - wPowN);
    }
    return out;
}

} // namespace ty
