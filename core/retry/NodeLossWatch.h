#pragma once

#include "core/common/Clock.h"

#include <QHash>
#include <QObject>
#include <QString>

namespace ty {

class RunEngine;
class ResultStore;

// Node loss is not run failure (issue #25). A node that stops answering
// makes its runs `unknown` (RunEngine: they may well be going, and when the
// node answers its agent's record gives their real endings). Only a node
// silent for `node_lost_after` (its own, NodeRecord::nodeLostAfterSec, as
// `trainyardctl node add --node-lost-after 30m` stored it; else the
// service's, default 10 min) has lost them: each run of
// it still unknown then is failed with FailureKind::NodeLost ("node ws2 has
// not answered for 10m: ..."), which RetryRunner retries elsewhere within
// the run's infrastructure budget. A node that answers before is never
// counted against its runs, however slow its connects (dstack#2346). Since
// when a node is silent is measured from the engine's nodeStatusChanged (or
// from this watch's start, for a node already down then). A node's own
// value is read from the store when it falls silent, so a node added while
// the service runs has its own too.
//
// A run declared lost that is still going on a node that comes back is
// stopped there by the engine (RunEngine::reattachRuns: its agent lists it
// running), with a notice; its recorded ending is kept.
//
// Thread: the engine's; the clock's timers there.
class NodeLossWatch : public QObject {
    Q_OBJECT

public:
    static constexpr qint64 kDefaultLostAfterMs = 10 * 60 * 1000;

    // `lostAfterMs` > 0: the service's value, for the nodes that set none.
    // The nodes the engine knows as unreachable now count from now.
    NodeLossWatch(RunEngine* engine, ResultStore* store, Clock& clock = systemClock(),
            qint64 lostAfterMs = kDefaultLostAfterMs, QObject* parent = nullptr);

    qint64 lostAfterMs() const { return m_lostAfterMs; }
    // What counts for `node` (ms): its stored node_lost_after, else
    // lostAfterMs() (also for "local" and nodes not stored).
    qint64 lostAfterMsFor(const QString& node) const;
    // From TRAINYARD_NODE_LOST_AFTER ("10m", "90s", "2h"; a spec duration),
    // else the default; a bad value is the default, with a warning.
    static qint64 lostAfterFromEnvironment();

Q_SIGNALS:
    // `node` has been silent for lostAfterMs(): its unknown runs were failed.
    void nodeLost(const QString& node, int runs);

private:
    void onNodeStatus(const QString& node, bool ready);
    void check(const QString& node);

    RunEngine* m_engine;
    ResultStore* m_store;
    Clock& m_clock;
    qint64 m_lostAfterMs;
    QHash<QString, qint64> m_silentSince; // node -> ms since the epoch
};

} // namespace ty
