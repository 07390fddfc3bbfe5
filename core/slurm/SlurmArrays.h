#pragma once

// Which of the runs going to Slurm login nodes in one scheduling pass are
// submitted together as one job array (issue #26; app/agent/PROTOCOL.md "Job
// arrays", revision 5): the runs of one sweep for one login node that ask
// Slurm for the same allocation (identical sbatch options: every task of an
// array gets the same one), two or more of them, at most `maxTasks` per
// array (Slurm's MaxArraySize is 1001 by default: indices 0-1000). Every
// other run is submitted alone. Pure; any thread.

#include "core/common/RunGroup.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace ty::slurm {

struct ArrayCandidate {
    QString node;         // the Slurm login node it goes to
    RunGroupId sweep = 0; // its sweep group, 0 for none
    QStringList sbatch;   // its submission's sbatch options (SlurmBatch.h)
    bool eligible = true; // false: it needs what a task cannot have (a workdir sync, staged inputs)
};

struct SubmissionPlan {
    // Indices into the candidates: each inner list one array, in the
    // candidates' order (task i is the i-th index); each has 2..maxTasks.
    QList<QList<qsizetype>> arrays;
    QList<qsizetype> single; // submitted one by one, in the candidates' order
};

// maxTasks < 2 plans no array.
SubmissionPlan planSubmissions(const QList<ArrayCandidate>& runs, qsizetype maxTasks = 1000);

} // namespace ty::slurm
