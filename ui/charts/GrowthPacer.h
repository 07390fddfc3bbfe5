#pragma once

#include <QElapsedTimer>

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace ty {

// Spreads the charts' ahead-of-need column reallocations over time. A chart
// column that is 3/4 full doubles before it must (MetricChartWidget and
// DecimatedChart keep every point of a followed run in std::vectors); every
// column of every chart of a run reaches 3/4 at about the same moment (same
// point counts), and each doubling at a few hundred thousand points is a
// copy plus fresh pages to fault in, ~5-10 ms on the GUI thread of this
// project's 2-core VM. Several in one event were bench_follow's 60-85 ms
// event-loop stalls (issue 5). With this, at most one column in the whole
// GUI grows ahead of need per kSpacingMs; the window from 3/4 full to full
// is thousands of appends at any rate a chart can follow, so a column still
// nearly always grows ahead, one at a time. A column too small for an append
// grows at once, paced or not.
// Thread: GUI thread only (one shared clock).
class GrowthPacer {
public:
    static constexpr int kSpacingMs = 100;

    // True (and the clock restarted) when no column grew ahead in the last
    // kSpacingMs: the caller may grow one now.
    static bool mayGrowAhead()
    {
        static QElapsedTimer last;
        if (last.isValid() && last.elapsed() < kSpacingMs)
            return false;
        last.start();
        return true;
    }

    // Makes room for `need` elements in each of a chart's parallel columns
    // (same size): a column too small grows now (x2, or to `need`); else at
    // most one column, the first that is 3/4 full, doubles ahead of need,
    // when mayGrowAhead() allows (and only past 4,096 elements). The columns
    // so double on different appends, one at a time across the whole GUI.
    // Capacity stays at most 8/3 of the elements held.
    static void reserve(std::initializer_list<std::vector<double>*> columns, std::size_t need)
    {
        bool grewAhead = false;
        for (std::vector<double>* c : columns) {
            if (c->capacity() < need)
                c->reserve(std::max(need, 2 * c->capacity()));
            else if (!grewAhead && need > 4096 && need > c->capacity() / 4 * 3 && mayGrowAhead()) {
                c->reserve(2 * c->capacity());
                grewAhead = true;
            }
        }
    }
};

} // namespace ty
