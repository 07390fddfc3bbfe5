#include "Checkpoints.h"

#include <QDir>
#include <QHash>

namespace ty {

const QString kCheckpointDirVar = QStringLiteral("TRAINYARD_CHECKPOINT_DIR");
const QString kAttemptVar = QStringLiteral("TRAINYARD_ATTEMPT");
const QString kRestartCountVar = QStringLiteral("TRAINYARD_RESTART_COUNT");
const QString kResumeFromVar = QStringLiteral("TRAINYARD_RESUME_FROM");
const QString kCheckpointDoneSuffix = QStringLiteral(".trainyard-done");

QString checkpointDirFor(const QString& lineage)
{
    return QStringLiteral(".trainyard/checkpoints/") + lineage;
}

void setAttemptEnvironment(
        QMap<QString, QString>& env, int attempt, const QString& checkpointDir, const QString& resumeFrom)
{
    if (env.value(kCheckpointDirVar).isEmpty())
        env.insert(kCheckpointDirVar, checkpointDir);
    env.insert(kAttemptVar, QString::number(attempt));
    env.insert(kRestartCountVar, QString::number(attempt - 1));
    env.insert(kResumeFromVar, resumeFrom);
}

QStringList checkpointGlobs(const QString& checkpointDir)
{
    const QString dir = QDir::cleanPath(checkpointDir);
    return {dir + QStringLiteral("/*"), dir + QStringLiteral("/*/**")};
}

CheckpointChoice newestCompleteCheckpoint(const AgentFileList& list, const QString& checkpointDir)
{
    const QString prefix = QDir::cleanPath(checkpointDir) + u'/';
    struct Seen {
        qint64 mtimeMs = -1; // the newest file of the checkpoint, or its marker's time
        bool exists = false;
    };
    QHash<QString, Seen> checkpoints; // name -> newest mtime of what it holds
    QHash<QString, qint64> markers;   // checkpoint name -> its marker's mtime
    for (const AgentFileEntry& f : list.files) {
        if (f.root != QStringLiteral("workdir") || !f.path.startsWith(prefix) || f.type != QStringLiteral("file"))
            continue;
        const QString rest = f.path.mid(prefix.size());
        const qsizetype slash = rest.indexOf(u'/');
        const QString name = slash < 0 ? rest : rest.left(slash);
        if (name.isEmpty())
            continue;
        if (slash < 0 && name.endsWith(kCheckpointDoneSuffix)) {
            markers.insert(name.chopped(kCheckpointDoneSuffix.size()), f.mtimeMs);
            continue;
        }
        if (name.contains(QStringLiteral(".tmp"))) // a marker or checkpoint being written (its temporary)
            continue;
        Seen& s = checkpoints[name];
        s.exists = true;
        s.mtimeMs = std::max(s.mtimeMs, f.mtimeMs);
    }
    CheckpointChoice out;
    qint64 bestAt = -1;
    for (auto it = markers.cbegin(); it != markers.cend(); ++it) {
        if (!checkpoints.value(it.key()).exists)
            continue;
        if (it.value() > bestAt || (it.value() == bestAt && it.key() > out.name)) {
            bestAt = it.value();
            out.name = it.key();
        }
    }
    if (!out.name.isEmpty()) {
        const QString root = list.workdir.endsWith(u'/') ? list.workdir : QString(list.workdir + u'/');
        out.path = QDir::isAbsolutePath(prefix) ? QString(prefix + out.name) : QString(root + prefix + out.name);
    }
    for (auto it = checkpoints.cbegin(); it != checkpoints.cend(); ++it)
        if (!markers.contains(it.key()) && it.value().mtimeMs >= bestAt)
            out.skipped.append(it.key());
    out.skipped.sort();
    return out;
}

} // namespace ty
