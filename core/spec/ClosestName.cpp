#include "ClosestName.h"

#include <algorithm>
#include <vector>

namespace ty {

namespace {
int editDistance(QStringView a, QStringView b)
{
    std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
    for (qsizetype j = 0; j <= b.size(); ++j)
        prev[j] = int(j);
    for (qsizetype i = 1; i <= a.size(); ++i) {
        cur[0] = int(i);
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}
} // namespace

QString closestName(QStringView word, const QStringList& candidates, int maxDistance)
{
    QString best;
    int bestDistance = maxDistance + 1;
    for (const QString& candidate : candidates) {
        const int d = editDistance(word, candidate);
        if (d < bestDistance) {
            bestDistance = d;
            best = candidate;
        }
    }
    return best;
}

} // namespace ty
