#pragma once

#include "ClusterState.h"
#include "PendingRun.h"
#include "Policy.h"

#include <QList>
#include <QMap>
#include <QString>

#include <vector>

namespace ty::sched {

// One job of a workload: the run as submitted (run.submitMs = arrival) and
// how long it really runs once started (ms). The scheduler only sees the run's
// estimate/limit; the simulator ends it after runtimeMs.
struct SimJob {
    PendingRun run;
    qint64 runtimeMs = 0;
};

// A node out of service from downMs to upMs (a crash, a reboot, a failed
// GPU): nothing is placed on it meanwhile, and every run on it at downMs is
// lost there and requeued at once (Trainyard's node_lost retry: issue #25),
// keeping its place by submit time. Outages of one node may overlap.
struct SimNodeOutage {
    QString node;
    qint64 downMs = 0;
    qint64 upMs = 0;
};

struct SimOptions {
    Policy policy;
    QList<SimNodeOutage> outages;
    // How a run lost to an outage goes on: 0 (no checkpoints) starts it over;
    // > 0: it checkpoints every checkpointIntervalMs of its own progress and
    // resumes from the newest (Checkpoints.h's TRAINYARD_RESUME_FROM), so at
    // most that much work is lost. A checkpoint costs nothing to write; each
    // resumed attempt first spends restartOverheadMs (loading it, warming
    // up) before it progresses again. The scheduler sees the remaining work
    // (estimate minus the progress kept).
    qint64 checkpointIntervalMs = 0;
    qint64 restartOverheadMs = 0;
    qint64 starvationBoundMs = 24LL * 3600 * 1000; // a run waiting longer than this counts as starved
    qint64 tickMs = 0;          // also schedule every tickMs while runs wait (0: only on arrivals/ends)
    qint64 horizonMs = 0;       // stop at this simulated time (0: when every startable run has ended)
    bool measurePasses = false; // record each schedule() call's wall time (uses a clock; not the scheduler)
};

struct SimJobOutcome {
    RunId id = 0;
    qint64 submitMs = 0;
    qint64 startMs = -1; // -1: never started
    qint64 endMs = -1;
    int gpus = 0;    // total over all nodes
    QString account; // fair-share account (user or project per the policy)
    // Outages: startMs is the first attempt's start and endMs the last one's
    // end; attempts > 1 when outages interrupted it.
    int attempts = 0;
    qint64 usedMs = 0; // time its attempts held their GPUs (== endMs - startMs for one attempt)
};

struct SimReport {
    QList<SimJobOutcome> jobs; // in input order
    double meanWaitMs = 0;     // over started runs
    double p95WaitMs = 0;      // nearest-rank 95th percentile over started runs
    double gpuUtilisation = 0; // GPU-time used / (GPUs * makespan)
    qint64 makespanMs = 0;     // last end - first submit
    int started = 0;
    int neverStarted = 0;                    // still waiting at the end (e.g. unsatisfiable)
    int starved = 0;                         // waited (or still waits) longer than starvationBoundMs
    int passes = 0;                          // schedule() calls
    int peakQueue = 0;                       // most runs pending at one pass
    std::vector<double> passMicros;          // measurePasses: one entry per pass
    std::vector<int> passQueue;              // measurePasses: pending runs at each pass
    QMap<QString, double> gpuHoursByAccount; // GPU-hours used, per account
    // Outages (SimOptions::outages):
    int interruptions = 0;   // attempts an outage ended
    double lostGpuHours = 0; // GPU-time whose work was lost: run since the newest checkpoint kept (all of
                             // an attempt without checkpoints), resume overheads included
    double usedGpuHours = 0; // GPU-time held by every attempt (useful work + lost)
};

// Discrete-event replay of `jobs` on `nodes` (all reachable, nothing running
// at start). At each distinct event time: runs that end are released first,
// arrivals join the queue, fair-share usage is decayed (policy.usageHalfLifeMs)
// and charged with the GPU-time used since the previous event, then schedule()
// runs once (if anything waits) and its placements start at that time.
// Outages (SimOptions::outages) come after the ends and before the
// arrivals of their time: a node coming back is usable in that pass, one
// going down takes its runs with it. GPU utilisation counts every attempt's
// GPU-time, lost work included. Deterministic. Single-threaded; call from any thread.
SimReport simulate(const QList<NodeState>& nodes, const QList<SimJob>& jobs, const SimOptions& options);

} // namespace ty::sched
