#include "AttemptMetrics.h"

#include <QHash>

#include <algorithm>
#include <limits>

namespace ty {

namespace {

// One series of a run: its key and source.
struct Series {
    QString key;
    MetricSource source;
    friend bool operator==(const Series& a, const Series& b) { return a.key == b.key && a.source == b.source; }
    friend size_t qHash(const Series& s, size_t seed = 0) { return qHashMulti(seed, s.key, int(s.source)); }
};

} // namespace

StitchedMetrics stitchAttemptMetrics(const QList<QList<MetricPoint>>& attempts)
{
    // Per series (key, source), the first step of each later attempt that
    // logged it: an attempt's points count below the smallest first step of
    // any later attempt.
    const qsizetype n = attempts.size();
    // firstStep[i][series]: attempt i's smallest step of the series.
    std::vector<QHash<Series, qint64>> firstStep(static_cast<size_t>(n));
    for (qsizetype i = 0; i < n; ++i)
        for (const MetricPoint& p : attempts[i]) {
            const Series s{p.key, p.source};
            auto it = firstStep[size_t(i)].find(s);
            if (it == firstStep[size_t(i)].end())
                firstStep[size_t(i)].insert(s, p.step);
            else if (p.step < *it)
                *it = p.step;
        }
    // limit[i][series]: min over later attempts' first steps (exclusive bound).
    std::vector<QHash<Series, qint64>> limit(static_cast<size_t>(n));
    QHash<Series, qint64> later;
    for (qsizetype i = n - 1; i >= 0; --i) {
        limit[size_t(i)] = later;
        for (auto it = firstStep[size_t(i)].cbegin(); it != firstStep[size_t(i)].cend(); ++it) {
            auto l = later.find(it.key());
            if (l == later.end())
                later.insert(it.key(), it.value());
            else
                *l = std::min(*l, it.value());
        }
    }

    // steps[i][series]: attempt i's steps of the series, sorted (to count
    // what a resume supersedes).
    std::vector<QHash<Series, std::vector<qint64>>> steps(static_cast<size_t>(n));
    for (qsizetype i = 0; i < n; ++i)
        for (const MetricPoint& p : attempts[i])
            steps[size_t(i)][Series{p.key, p.source}].push_back(p.step);
    for (auto& perSeries : steps)
        for (auto& v : perSeries)
            std::sort(v.begin(), v.end());

    StitchedMetrics out;
    for (qsizetype i = 0; i < n; ++i) {
        for (const MetricPoint& p : attempts[i])
            if (p.step < limit[size_t(i)].value(Series{p.key, p.source}, std::numeric_limits<qint64>::max()))
                out.points.append(p);
        if (i == 0)
            continue;
        // Its resumes: series an earlier attempt logged too. It supersedes
        // each earlier attempt's points from its first step up to where an
        // attempt between them had taken over already.
        for (auto it = firstStep[size_t(i)].cbegin(); it != firstStep[size_t(i)].cend(); ++it) {
            const qint64 from = it.value();
            int count = 0;
            bool earlier = false;
            qint64 between = std::numeric_limits<qint64>::max(); // min first step of attempts j+1..i-1
            for (qsizetype j = i - 1; j >= 0; --j) {
                const auto v = steps[size_t(j)].constFind(it.key());
                if (v != steps[size_t(j)].cend()) {
                    earlier = true;
                    if (from < between) {
                        const auto lo = std::lower_bound(v->begin(), v->end(), from);
                        const auto hi = std::lower_bound(v->begin(), v->end(), between);
                        count += int(std::max<std::ptrdiff_t>(0, hi - lo));
                    }
                }
                if (const auto f = firstStep[size_t(j)].constFind(it.key()); f != firstStep[size_t(j)].cend())
                    between = std::min(between, f.value());
            }
            if (!earlier)
                continue;
            qint64 wall = 0;
            RunId run = 0;
            for (const MetricPoint& p : attempts[i])
                if (p.key == it.key().key && p.source == it.key().source && p.step == from) {
                    wall = p.wallTimeMs;
                    run = p.run;
                    break;
                }
            out.resumes.append(MetricRestart{run, it.key().key, from, wall, count, it.key().source});
        }
    }
    // Key (binary), then attempt (input order), then step; stable.
    std::stable_sort(out.points.begin(), out.points.end(),
            [](const MetricPoint& a, const MetricPoint& b) { return a.key.compare(b.key) < 0; });
    std::stable_sort(out.resumes.begin(), out.resumes.end(),
            [](const MetricRestart& a, const MetricRestart& b) { return a.key.compare(b.key) < 0; });
    return out;
}

} // namespace ty
