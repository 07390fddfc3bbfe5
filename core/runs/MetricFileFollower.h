#pragma once

#include "core/common/Run.h"

#include <QHash>
#include <QSet>
#include <QObject>
#include <QPointer>
#include <QStringList>

#include <functional>
#include <memory>

class QTimer;

namespace ty {

class AgentClient;
class MetricStreamReader;
class ResultStore;

// Follows the metric files of one run on its node, on the ingestion owner:
// the job spec's `metric_files` globs (relative to the run's workdir) and
// `$TRAINYARD_METRICS_FILE` (`<run_dir>/metrics.jsonl`, written by
// resources/trainyard.py). While the run is live it polls every few seconds
// (agent `list_files` now and then, `read_file` from each file's offset every
// poll) and feeds the new bytes to the file's reader (core/logs/importers):
// JSON lines, CSV (Lightning's CSVLogger) and TensorBoard event files are read
// incrementally; trainer_state.json, which the Trainer rewrites whole, is
// re-read when its size or modification time changes and only its new
// `log_history` entries are stored. Points are stored with
// MetricSource::File. A TensorBoard file's hparams become the run's params
// (ResultStore::setParams) as soon as the reader has them; setting them again
// in a later session writes the same values.
//
// Exactly once: per file, the number of points stored so far is persisted in
// `<run data dir>/metric-files.json` (written after the points are committed).
// A reader is deterministic over an append-only file, so a new session reads
// the file again from its start and stores only the points past that count;
// a file rewritten from its start (smaller than the offset read, or a CSV
// whose header line changed) is read again the same way. A crash between the
// commit and the JSON write re-stores the last poll's points: the store then
// supersedes the earlier copies (same steps), so charts show them once.
//
// Thread affinity: the engine's thread. The client may go away (node lost):
// polls then stop and the follower waits to be destroyed.
class MetricFileFollower final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MetricFileFollower)

public:
    // `agentRun`: the agent's id of the run; `dataDir`: the run's local data
    // directory (runDataDir()); `globs`: the spec's metric_files.
    MetricFileFollower(RunId run, QString agentRun, QStringList globs, QString dataDir, ResultStore* store,
            AgentClient* client, QObject* parent = nullptr);
    ~MetricFileFollower() override;

    // Polls every `intervalMs` (default 2000; files are listed again every
    // fifth poll) until finish().
    void start(int intervalMs = 2000);
    // The run has ended: stop polling, list and read every file one last
    // time (a trailing line without '\n' included), then call `done`.
    void finish(std::function<void()> done);

Q_SIGNALS:
    // Points just stored (already queued for the database).
    void pointsStored(ty::RunId run, const QList<ty::MetricPoint>& points);

private:
    struct File;
    void poll();
    void afterList();
    void processNext();
    void readMore(const std::shared_ptr<File>& f);
    void readWhole(const std::shared_ptr<File>& f, QByteArray soFar);
    void checkHeader(const std::shared_ptr<File>& f);
    void consume(const std::shared_ptr<File>& f, const QByteArray& bytes, qint64 size, qint64 mtimeMs);
    void restartFile(File& f);
    void fileDone();
    void endPoll();
    void store(File& f, QList<MetricPoint> points);
    void loadState();
    void saveState();
    QString statePath() const;

    RunId m_run;
    QString m_agentRun;
    QStringList m_globs;
    QString m_dataDir;
    ResultStore* m_store;
    QPointer<AgentClient> m_client;
    QTimer* m_timer = nullptr;
    QHash<QString, std::shared_ptr<File>> m_files; // by "root:path"
    QSet<QString> m_unknownFormat;                 // "root:path" of files skipped for their name (warned once)
    QHash<QString, qint64> m_storedCounts;         // persisted: points stored per file
    QHash<QString, qint64> m_trainerEntries;       // persisted: log_history entries stored per trainer_state.json
    QList<std::shared_ptr<File>> m_queue;          // files left in this poll
    QList<MetricPoint> m_pollPoints;
    int m_pollCount = 0;
    bool m_busy = false;
    bool m_final = false;
    bool m_finalPollStarted = false;
    bool m_dirty = false;
    std::function<void()> m_done;
};

} // namespace ty
