#pragma once

// Checkpoints follow a run to another node (issue #25). While an attempt of
// a run with `retry:` runs, the service copies the newest complete
// checkpoint of its checkpoint folder (Checkpoints.h) to this machine, and
// when the next attempt is placed on a node other than the one that wrote
// it, that copy is staged into the new node's checkpoint folder before the
// attempt starts (RunEngine's stage-in, with its runStaging progress), and
// TRAINYARD_RESUME_FROM names it there. On the node that wrote it nothing is
// copied.
//
// The copy: under the result store's folder of the run's first attempt (its
// lineage; Paths.h runDataDir), `<runs>/<first>/checkpoint/`:
//   copy.json    the manifest of the one complete copy (below), written
//                atomically (QSaveFile) once the copy is whole
//   copy-<n>/    the copied files, at their paths below the run's workdir
//                (`.trainyard/checkpoints/<id>/epoch-5.ckpt` and its
//                `.trainyard-done` marker)
// Only the newest complete checkpoint is kept: the folder of the copy the
// manifest named before is removed once the manifest names the new one, and
// folders the manifest does not name (a copy cut short by a crash) are
// removed at the next copy. A copy is complete only when every file of the
// checkpoint and its marker arrived as a regular file of the size the node
// listed, and a listing of the node right after the copy still shows the
// marker with the same time and size (the checkpoint was not rewritten
// under the copy: trainyard.remove_checkpoint() removes the marker first);
// anything less is removed and never used.
//
// When: a listing of the checkpoint folder of each running attempt every
// `intervalMs` (default 60 s; one listing or copy at a time per run), and
// once when an attempt ends, if its node still answers (not for node_lost).
// A listing costs one `list_files` request; a checkpoint is copied only when
// its marker appeared or changed (name, time or size).
//
// Names come from the node and are not trusted: a checkpoint whose name or
// any file's path is not a plain relative path below the checkpoint folder
// (`..`, absolute, a backslash), or that holds a symlink or anything but
// regular files, is not copied (a warning names it); the copy itself goes
// through downloadArtifacts (WorkdirSync.h), which refuses the same again
// right before copying. The manifest's paths are checked again when read.
//
// Thread: the engine's (its signals, its store); the clock's timer there.

#include "core/common/Clock.h"
#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/nodes/AgentFiles.h"
#include "core/nodes/WorkdirSync.h"
#include "core/runs/RunEngine.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace ty {

class ResultStore;

// A complete copy of one checkpoint on this machine (its manifest).
struct CheckpointCopy {
    QString name;          // the checkpoint's name in its folder: "epoch-5.ckpt", "checkpoint-500"
    QString checkpointDir; // the folder, relative to the run's workdir (TRAINYARD_CHECKPOINT_DIR)
    QString node;          // the node that wrote it
    RunId producer = 0;    // the attempt that wrote it
    QString nodePath;      // the checkpoint's absolute path on `node`
    qint64 markerMtimeMs = 0;
    qint64 markerSize = 0;
    struct File {
        QString path; // below the run's workdir (isSafeRelativePath)
        qint64 size = 0;
    };
    QList<File> files; // the checkpoint's files, then its marker
    qint64 bytes = 0;  // of `files`
    QString localRoot; // absolute: each file is localRoot/path
};

// What a listing says to copy.
struct CheckpointFetch {
    QString name;
    QString nodePath;
    qint64 markerMtimeMs = 0;
    qint64 markerSize = 0;
    AgentFileList files; // the entries to copy (root "workdir"): the checkpoint's files, then its marker
    qint64 bytes = 0;
};

struct CheckpointFetchPlan {
    std::optional<CheckpointFetch> fetch; // nullopt: nothing to copy (none complete, or `have` is it)
    QString refused;                      // non-empty: the newest complete one cannot be copied, and why
};

// The newest complete checkpoint of `checkpointDir` in `list` (the agent's
// answer to checkpointGlobs()), to copy unless `have` already is that one
// (same name, marker time and marker size). `stagedName` names the
// checkpoint staged from `have` into that folder before the run started
// (empty: none): its marker's time there is the staging's, so for it the
// name, the marker's size and the total bytes decide. Pure; any thread.
CheckpointFetchPlan planCheckpointFetch(const AgentFileList& list, const QString& checkpointDir,
        const std::optional<CheckpointCopy>& have, const QString& stagedName = {});

// Whether the copy in `localRoot` is whole: every file of `fetch` there as a
// regular file (not a link) of its listed size. The error names the first
// that is not, and what it found.
Result<void> verifyCheckpointCopy(const CheckpointFetch& fetch, const QString& localRoot);

// The manifest in `dir` (`<runs>/<first>/checkpoint`): nullopt when there is
// none; an error for one that cannot be read or names an unsafe path.
Result<std::optional<CheckpointCopy>> readCheckpointCopy(const QString& dir);

// "12.3 MB", "4.0 kB", "17 bytes" (SI units, 1 MB = 10^6 bytes).
QString checkpointSizeText(qint64 bytes);

class CheckpointMirror : public QObject {
    Q_OBJECT

public:
    static constexpr qint64 kDefaultIntervalMs = 60 * 1000;

    // How the mirror reaches a run's node; by default the engine's
    // listRunFiles() and downloadRunFiles(). Tests give their own.
    struct Access {
        std::function<void(
                const RunRecord&, const QStringList& globs, std::function<void(const Result<AgentFileList>&)>)>
                list;
        std::function<void(const RunRecord&, const AgentFileList&, const QString& destDir,
                std::function<void(const Result<ArtifactDownload>&)>)>
                download;
    };

    // Follows the engine's runs (its runStateChanged; the runs running now
    // from the store) and sets its stage provider (owner: this). `databasePath`
    // locates the copies (runDataDir). `intervalMs` > 0.
    CheckpointMirror(RunEngine* engine, ResultStore* store, QString databasePath, Clock& clock = systemClock(),
            qint64 intervalMs = kDefaultIntervalMs, QObject* parent = nullptr);
    ~CheckpointMirror() override;

    void setAccess(Access access) { m_access = std::move(access); }
    qint64 intervalMs() const { return m_intervalMs; }
    // From TRAINYARD_CHECKPOINT_COPY_INTERVAL ("60s", "5m"; a spec duration),
    // else the default; a bad value is the default, with a warning.
    static qint64 intervalFromEnvironment();

    // Follows `run` (running, its spec has `retry:`, its environment a
    // checkpoint folder; anything else: nothing). The engine's runStateChanged
    // calls it; tests may too.
    void follow(const RunRecord& run);
    // The complete copy of the checkpoints of `run`'s attempts (its lineage),
    // nullopt for none.
    std::optional<CheckpointCopy> copyOf(const RunRecord& run) const;
    // The first attempt of `run`'s attempts (the run itself before its first retry).
    RunId lineageOf(const RunRecord& run) const;
    // Listings or copies under way.
    bool busy() const { return m_busy > 0; }

    // The stage provider's part: for `run` placed on run.node, the copy to
    // stage and TRAINYARD_RESUME_FROM there, nothing on the node that wrote
    // it, or an error (a resume asked for that cannot be staged).
    QList<RunEngine::StageSource> stageSources(const RunRecord& run);

Q_SIGNALS:
    // A new complete copy of a checkpoint of `run` (the attempt that wrote it).
    void copied(ty::RunId run, const QString& name, qint64 bytes);
    // A listing or copy of `run` ended (copied or not): tests wait on it.
    void checked(ty::RunId run);

private:
    struct Followed {
        RunRecord run;
        QString stagedName; // the checkpoint staged for it before it started (planCheckpointFetch)
        bool inFlight = false;
        bool again = false; // an ending came while a check was under way: check once more
    };
    void onRunState(const RunRecord& run);
    void tick();
    void check(RunId id);
    void done(RunId id);
    void fetch(RunId id, const RunRecord& run, const QString& dir, const CheckpointFetch& plan);
    Result<void> commit(const RunRecord& run, const QString& dir, const CheckpointFetch& plan, const QString& copyDir);
    QString copiesDir(RunId lineage) const;

    RunEngine* m_engine;
    ResultStore* m_store;
    QString m_databasePath;
    Clock& m_clock;
    qint64 m_intervalMs;
    Access m_access;
    ClockTimer* m_timer = nullptr;
    QHash<RunId, Followed> m_followed;
    QHash<RunId, CheckpointCopy> m_staged; // started runs a copy was staged for: the notice once they run
    int m_busy = 0;
};

} // namespace ty
