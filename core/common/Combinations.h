#pragma once

#include <QList>

namespace ty {

// Every combination of one item from each of several lists, as a sweep
// (job specs and pipelines) or a step's `for_each` expands: in odometer
// order, the last list varying fastest, each list's items in their order.
// `sizes`: how many items each list has (each >= 1; a list of 0 items gives
// no combination). `visit(index)` gets, for each list, the item's index;
// no lists give one empty combination. Returns false as soon as `visit`
// does (it stops there), else true.
template <class Visit> bool forEachCombination(const QList<qsizetype>& sizes, Visit&& visit)
{
    for (qsizetype n : sizes)
        if (n <= 0)
            return true;
    QList<qsizetype> index(sizes.size(), 0);
    for (;;) {
        if (!visit(std::as_const(index)))
            return false;
        qsizetype k = sizes.size() - 1;
        while (k >= 0 && ++index[k] == sizes.at(k))
            index[k--] = 0;
        if (k < 0)
            return true;
    }
}

} // namespace ty
