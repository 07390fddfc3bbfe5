#include "XAxisMap.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ty {

QString xAxisTitle(XAxisMode mode)
{
    switch (mode) {
    case XAxisMode::Step: return QCoreApplication::translate("ty::XAxis", "step");
    case XAxisMode::Epoch: return QCoreApplication::translate("ty::XAxis", "epoch");
    case XAxisMode::RelativeTime: return QCoreApplication::translate("ty::XAxis", "seconds since start");
    case XAxisMode::WallTime: return QCoreApplication::translate("ty::XAxis", "wall time (local)");
    }
    return {};
}

bool isEpochKey(const QString& key)
{
    return key.compare(QLatin1String("epoch"), Qt::CaseInsensitive) == 0
            || key.endsWith(QLatin1String("/epoch"), Qt::CaseInsensitive);
}

QString pickEpochKey(const QStringList& keys)
{
    QString found;
    for (const QString& k : keys) {
        if (k.compare(QLatin1String("epoch"), Qt::CaseInsensitive) == 0)
            return k;
        if (found.isEmpty() && isEpochKey(k))
            found = k;
    }
    return found;
}

EpochMap EpochMap::fromSeries(std::span<const double> steps, std::span<const double> epochs)
{
    EpochMap m;
    const std::size_t n = std::min(steps.size(), epochs.size());
    bool haveLast = false;
    double lastEpoch = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double s = steps[i], e = epochs[i];
        if (!std::isfinite(s) || !std::isfinite(e))
            continue;
        if (haveLast && e == lastEpoch)
            continue; // same epoch: its first step is the knot
        haveLast = true;
        lastEpoch = e;
        if (!m.m_steps.empty() && s <= m.m_steps.back())
            continue;
        m.m_steps.push_back(s);
        m.m_epochs.push_back(e);
    }
    if (m.m_steps.size() == 1) {
        if (m.m_steps.front() > 0 && m.m_epochs.front() > 0) {
            m.m_steps.insert(m.m_steps.begin(), 0.0);
            m.m_epochs.insert(m.m_epochs.begin(), 0.0);
        } else {
            m.m_steps.clear();
            m.m_epochs.clear();
        }
    }
    return m;
}

double EpochMap::epochAt(double step) const
{
    const std::size_t n = m_steps.size();
    // The segment [k, k+1] holding step (or the nearest one at either end).
    std::size_t k = std::size_t(std::upper_bound(m_steps.begin(), m_steps.end(), step) - m_steps.begin());
    k = std::clamp<std::size_t>(k, 1, n - 1) - 1;
    const double s0 = m_steps[k], s1 = m_steps[k + 1];
    const double e0 = m_epochs[k], e1 = m_epochs[k + 1];
    if (step == s0)
        return e0;
    return e0 + (step - s0) * (e1 - e0) / (s1 - s0);
}

std::vector<double> mapX(XAxisMode mode, std::span<const double> steps, std::span<const double> wallMs,
        const EpochMap& epochs, double t0Ms)
{
    std::vector<double> out;
    switch (mode) {
    case XAxisMode::Step: out.assign(steps.begin(), steps.end()); break;
    case XAxisMode::WallTime: out.assign(wallMs.begin(), wallMs.end()); break;
    case XAxisMode::RelativeTime:
        out.resize(wallMs.size());
        for (std::size_t i = 0; i < wallMs.size(); ++i)
            out[i] = (wallMs[i] - t0Ms) / 1000.0;
        break;
    case XAxisMode::Epoch:
        out.resize(steps.size());
        for (std::size_t i = 0; i < steps.size(); ++i)
            out[i] = epochs.isValid() ? epochs.epochAt(steps[i]) : std::nan("");
        break;
    }
    return out;
}

bool sortByX(SharedColumn& x, SharedColumn& y)
{
    if (!x || !y || std::is_sorted(x->begin(), x->end()))
        return false;
    const std::vector<double>& xs = *x;
    const std::vector<double>& ys = *y;
    std::vector<std::size_t> perm(xs.size());
    std::iota(perm.begin(), perm.end(), std::size_t(0));
    std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) { return xs[a] < xs[b]; });
    auto sx = std::make_shared<std::vector<double>>(xs.size());
    auto sy = std::make_shared<std::vector<double>>(xs.size());
    for (std::size_t k = 0; k < perm.size(); ++k) {
        (*sx)[k] = xs[perm[k]];
        (*sy)[k] = ys[perm[k]];
    }
    x = std::move(sx);
    y = std::move(sy);
    return true;
}

} // namespace ty
