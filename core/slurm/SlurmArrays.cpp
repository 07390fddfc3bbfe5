#include "SlurmArrays.h"

#include <QHash>

#include <algorithm>

namespace ty::slurm {

SubmissionPlan planSubmissions(const QList<ArrayCandidate>& runs, qsizetype maxTasks)
{
    SubmissionPlan plan;
    // Groups in order of their first run; a group is (node, sweep, options).
    QList<QList<qsizetype>> groups;
    QHash<QString, qsizetype> groupOf; // key: node, sweep and options, unit-separated
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const ArrayCandidate& c = runs[i];
        if (maxTasks < 2 || c.sweep <= 0 || !c.eligible) {
            groups.append(QList<qsizetype>{i}); // alone
            continue;
        }
        const QString key = c.node + QChar(0x1f) + QString::number(c.sweep) + QChar(0x1f) + c.sbatch.join(QChar(0x1f));
        const auto it = groupOf.constFind(key);
        if (it != groupOf.cend() && groups[*it].size() < maxTasks) {
            groups[*it].append(i);
            continue;
        }
        groupOf.insert(key, groups.size()); // the first, or the next chunk of a full one
        groups.append(QList<qsizetype>{i});
    }
    for (const QList<qsizetype>& g : std::as_const(groups)) {
        if (g.size() >= 2)
            plan.arrays.append(g);
        else
            plan.single.append(g.first());
    }
    std::sort(plan.single.begin(), plan.single.end());
    return plan;
}

} // namespace ty::slurm
