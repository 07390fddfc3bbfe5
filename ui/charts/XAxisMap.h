#pragma once

#include <QString>

#include <memory>
#include <span>
#include <vector>

namespace ty {

// What a chart's x axis shows. Every metric point has a step and a wall
// time (ms since the Unix epoch, UTC); the epoch comes from the run's own
// "epoch" metric (EpochMap). Wall time is drawn in the local time zone.
enum class XAxisMode { Step, Epoch, RelativeTime, WallTime };

// "step", "epoch", "seconds since start", "wall time (local)".
QString xAxisTitle(XAxisMode mode);

// Step -> epoch, from the (step, epoch) points of a run's "epoch" metric.
//
// Knots: the first step of each run of equal epoch values (a trainer that
// logs the epoch index every step gives one knot per epoch, at the epoch's
// first step; one that logs a fractional epoch gives a knot per point).
// Between knots the epoch is interpolated linearly; before the first and
// after the last knot it is extrapolated with the nearest segment's slope,
// i.e. step / steps-per-epoch. A single knot (s, e) with s > 0 and e > 0 is
// read as "epoch e ended at step s" from (0, 0). Non-finite values are
// ignored; a knot at a step not above the previous knot's is dropped.
// Invalid (isValid() false) when fewer than two usable knots remain: the
// run is then not drawn on the epoch axis.
// Value type, any thread.
class EpochMap {
public:
    EpochMap() = default;
    static EpochMap fromSeries(std::span<const double> steps, std::span<const double> epochs);

    bool isValid() const { return m_steps.size() >= 2; }
    // Requires isValid().
    double epochAt(double step) const;
    qsizetype knotCount() const { return qsizetype(m_steps.size()); }
    bool operator==(const EpochMap& other) const = default;

private:
    std::vector<double> m_steps, m_epochs;
};

// Whether metric `key` holds the epoch: "epoch" (any case) or a key ending
// in "/epoch" ("train/epoch").
bool isEpochKey(const QString& key);
// Of several keys, the one to take the epoch from: "epoch" itself when
// present, else the first isEpochKey() one; empty when none.
QString pickEpochKey(const QStringList& keys);

// The x value of each point for `mode`: steps as they are, epochAt(step),
// (wallMs - t0Ms) / 1000 seconds, or wallMs (ms since the epoch, UTC).
// steps and wallMs have the points' count; `epochs` must be valid for Epoch.
std::vector<double> mapX(XAxisMode mode, std::span<const double> steps, std::span<const double> wallMs,
        const EpochMap& epochs, double t0Ms);

// Sorts (x, y) by x (stable: ties keep step order) when x is not sorted
// already; decimation needs x ascending. Returns whether it reordered.
using SharedColumn = std::shared_ptr<const std::vector<double>>;
bool sortByX(SharedColumn& x, SharedColumn& y);

} // namespace ty
