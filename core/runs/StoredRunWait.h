#pragma once

#include "core/common/Run.h"

#include <QElapsedTimer>
#include <QObject>

#include <functional>
#include <optional>

class QTimer;

namespace ty {

class ResultStore;

// Waits for a run's stored record to reach a condition, re-reading it from
// the store (what any process sharing the database committed), with a
// deadline. For commands whose outcome another process may record: the
// ingestion owner records a run's end, and a signal of this process's own
// engine may never come (it does not own ingestion, or the run had already
// ended before it looked).
//
// Thread affinity: the thread of the object (it polls with a QTimer there,
// so that thread needs an event loop). The store must outlive it.
// Errors: a run that cannot be read (deleted, a database error) counts as
// not done; the wait then ends at its deadline with the last record read.
class StoredRunWait final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StoredRunWait)

public:
    using Condition = std::function<bool(const RunRecord&)>;

    StoredRunWait(ResultStore* store, RunId run, Condition done, QObject* parent = nullptr);

    // Checks at once, then every `pollMs` (> 0) until the condition holds
    // (satisfied()) or `timeoutMs` (>= 0) have passed since this call
    // (timedOut()); exactly one of the two is emitted, once.
    void start(int pollMs, qint64 timeoutMs);
    // Checks now as well (e.g. when the engine says the run changed).
    void check();
    bool finished() const { return m_finished; }

Q_SIGNALS:
    void satisfied(const ty::RunRecord& run);
    // `last`: the run as last read (nullopt when it could not be read).
    void timedOut(const std::optional<ty::RunRecord>& last);

private:
    ResultStore* m_store;
    RunId m_run;
    Condition m_done;
    QTimer* m_timer = nullptr;
    QElapsedTimer m_clock;
    qint64 m_timeoutMs = 0;
    bool m_finished = false;
    std::optional<RunRecord> m_last;
};

} // namespace ty
