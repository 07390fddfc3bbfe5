#pragma once

// The checkpoint convention of a run's attempts (issue #25), the engine's
// side of it (resources/trainyard.py is the script's side):
//
//   TRAINYARD_CHECKPOINT_DIR  where the run keeps its checkpoints, the same
//                             for every attempt: `.trainyard/checkpoints/<lineage>`
//                             relative to the run's workdir (kept there between
//                             attempts on a node: a workdir sync removes only
//                             files it synced), unless the spec's `env` sets it
//   TRAINYARD_ATTEMPT         1, 2, ...
//   TRAINYARD_RESTART_COUNT   attempt - 1
//   TRAINYARD_RESUME_FROM     the newest complete checkpoint (absolute, on the
//                             node), empty on the first attempt and when there
//                             is none
//
// A checkpoint is a file or folder directly in that folder; it is complete
// when `<name>.trainyard-done` sits beside it (trainyard.checkpoint_done()
// writes it, atomically, after the framework's save returned). The newest
// complete one is the one whose marker is newest (mtime; ties: the greater
// name). A checkpoint without a marker that is newer than it was being
// written when the attempt ended (transformers#35782): skipped, and said.
//
// Pure: no I/O (the listing comes from the node's agent). Any thread.

#include "core/nodes/AgentFiles.h"

#include <QMap>
#include <QString>
#include <QStringList>

namespace ty {

// "TRAINYARD_CHECKPOINT_DIR" and the others above.
extern const QString kCheckpointDirVar;
extern const QString kAttemptVar;
extern const QString kRestartCountVar;
extern const QString kResumeFromVar;
// The marker's suffix, ".trainyard-done".
extern const QString kCheckpointDoneSuffix;

// `.trainyard/checkpoints/<lineage>`: the checkpoint folder of the attempts
// of one run (lineage: a token unique to its first attempt).
QString checkpointDirFor(const QString& lineage);

// Sets the four variables for `attempt` (>= 1) in `env`; an explicit
// TRAINYARD_CHECKPOINT_DIR already in `env` (the spec's own) is kept, else
// `checkpointDir` is set.
void setAttemptEnvironment(
        QMap<QString, QString>& env, int attempt, const QString& checkpointDir, const QString& resumeFrom);

// The globs that list a checkpoint folder (relative to the workdir, or
// absolute as the agent refuses: then nothing can be listed and the result
// is empty): its entries and what is inside its folders.
QStringList checkpointGlobs(const QString& checkpointDir);

struct CheckpointChoice {
    QString path;        // the newest complete checkpoint, absolute on the node; empty: none
    QString name;        // its name in the folder
    QStringList skipped; // names of checkpoints newer than it without a marker
};

// The newest complete checkpoint of `checkpointDir` in `list` (the agent's
// answer to checkpointGlobs): markers whose checkpoint is not listed are
// ignored.
CheckpointChoice newestCompleteCheckpoint(const AgentFileList& list, const QString& checkpointDir);

} // namespace ty
