#pragma once

#include <utility>
#include <vector>

// The zoom/pan script bench_compare and bench_decimate time, over [lo, hi]:
// 10 zoom-ins (x0.7 around 40 % of the range), 10 pans right and 10 left
// (5 % of the range), 10 zoom-outs (back to [lo, hi]). Each frame is the
// visible x range after that step.
struct ZoomPanFrame {
    double lo = 0, hi = 1;
    bool zoom = false; // false: a pan
};

inline std::vector<ZoomPanFrame> zoomPanScript(double lo, double hi)
{
    std::vector<ZoomPanFrame> frames;
    double a = lo, b = hi;
    const auto zoom = [&](double factor) {
        const double anchor = a + 0.4 * (b - a);
        a = anchor - (anchor - a) * factor;
        b = anchor + (b - anchor) * factor;
        frames.push_back({a, b, true});
    };
    const auto pan = [&](double fraction) {
        const double d = (b - a) * fraction;
        a += d;
        b += d;
        frames.push_back({a, b, false});
    };
    for (int i = 0; i < 10; ++i)
        zoom(0.7);
    for (int i = 0; i < 10; ++i)
        pan(0.05);
    for (int i = 0; i < 10; ++i)
        pan(-0.05);
    for (int i = 0; i < 10; ++i)
        zoom(1 / 0.7);
    return frames;
}
