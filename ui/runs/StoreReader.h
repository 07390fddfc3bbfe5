#pragma once

#include "RunRow.h"

#include <QMap>
#include <QObject>

namespace ty {

class ResultStore;

// Reads the result database off the GUI thread. Lives on its own worker
// thread (MainWindow moves it there); every request is posted to that thread
// and answered with an immutable snapshot through a signal, which the GUI
// receives queued. The GUI thread thus never runs SQL for anything that can
// grow (the runs list, metrics).
//
// Requests are coalesced: several requestRuns() posted while one load is
// running produce one more load, not one each; likewise requestRunUpdates().
//
// Updates (issue #22): after one full load (runsLoaded), requestRunUpdates()
// reads only the runs that changed since (ResultStore::runChangesSince, by
// whichever process wrote them) and answers with runsUpdated. A database
// that records no changes (an older schema opened read-only) is answered
// with a full load instead, every time.
class StoreReader final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StoreReader)

public:
    // `store` must outlive the reader.
    explicit StoreReader(ResultStore* store, QObject* parent = nullptr);

    // Thread-safe: post a load of every run with its latest metrics, params
    // and notices.
    void requestRuns();
    // Thread-safe: post a load of the runs that changed since the previous
    // load or update (a full load when there was none yet).
    void requestRunUpdates();
    // Thread-safe: post a load of all metric points of `run`, answered with
    // `ticket` so the receiver can drop answers to older requests. A later
    // attempt of a retried run answers with its attempts up to it as one
    // series (core/retry/AttemptMetrics.h: each resumed attempt from its
    // first step on), each attempt's first step a restart.
    void requestMetrics(RunId run, int ticket);
    // Thread-safe: post a check of the database's data version (another
    // process wrote?); emits externalChange when it moved.
    void requestVersionCheck();

Q_SIGNALS:
    void runsLoaded(const ty::RunRows& rows);
    // `changed`: the rows of runs created or changed since the last answer,
    // ascending by id; `removed`: the ids of runs deleted since. Never both
    // empty.
    void runsUpdated(const ty::RunRows& changed, const QList<ty::RunId>& removed);
    // Points per key, each list ordered by step (ResultStore::metrics order).
    void metricsLoaded(ty::RunId run, int ticket, const QMap<QString, QList<ty::MetricPoint>>& series);
    // Right after metricsLoaded (same run and ticket): the steps where each
    // key's series went back (resumed run; ResultStore::metricRestarts), in
    // arrival order. Keys without a restart are absent.
    void restartsLoaded(ty::RunId run, int ticket, const QMap<QString, QList<qint64>>& stepsByKey);
    void externalChange();

private:
    void loadRuns();
    void loadUpdates();
    RunRow loadRow(const RunRecord& r) const;
    void loadMetrics(RunId run, int ticket);
    void checkVersion();

    ResultStore* m_store;
    // Touched on the reader thread only:
    bool m_runsQueued = false;
    bool m_updatesQueued = false;
    bool m_loaded = false;      // a full load happened
    bool m_incremental = false; // the store records changes; m_seq is valid
    qint64 m_seq = 0;           // the change number the rows shown are at
    qint64 m_lastVersion = -1;
};

} // namespace ty
