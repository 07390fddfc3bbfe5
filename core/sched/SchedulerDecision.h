#pragma once

#include "Policy.h"
#include "core/common/Run.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace ty::sched {

// What one rank of a started run gets on one node.
struct NodeAssignment {
    QString node;
    QList<int> gpuIndices; // GpuState::index, ascending
    QStringList gpuUuids;  // same order as gpuIndices
    int cpus = 0;
    qint64 memoryMiB = 0;
    int port = 0; // this rank's rendezvous port (MASTER_PORT on rank 0, TF worker port), 0 = none
    // Rendezvous environment (torchrun's names), set when the run has nodes > 1
    // or a DistributedKind: MASTER_ADDR, MASTER_PORT, WORLD_SIZE (= NNODES *
    // NPROC_PER_NODE, total processes), NODE_RANK, NNODES, NPROC_PER_NODE
    // (= GPUs per node, at least 1) and, for TensorFlow, TF_CONFIG =
    // {"cluster":{"worker":["host:port",...]},"task":{"type":"worker","index":rank}}.
    // An elastic gang (PendingRun::nodesMax) has these (NNODES: the nodes it
    // got) plus torchrun's elastic rendezvous: see ElasticRendezvous.h.
    QMap<QString, QString> env;
};

struct RunPlacement {
    RunId run = 0;
    QList<NodeAssignment> nodes; // index = NODE_RANK
    qint64 expectedEndMs = 0;    // now + estimated runtime (see Policy::defaultRuntimeMs)
    bool backfilled = false;     // started ahead of the backfill head
    // Pools (Pools.h): the pool it is charged to (the one it named, else
    // its first node's), empty for none; `borrowed` when it runs on idle
    // GPUs of another pool, `lentBy` (its first node's pool).
    QString pool;
    bool borrowed = false;
    QString lentBy;
    bool elastic = false; // an elastic gang (PendingRun::nodesMax): nodes.size() is within [min, max]
};

// Why a run did not start. Structured so callers (and tests) control the
// wording of times; renderPendingReason() turns it into text.
enum class PendingKind {
    Held,                // "held by user"
    SweepCap,            // "sweep S at its cap: 4 of 4 running"
    BlockedByHead,       // strict order: "waiting for FCFS head run 12"
    BackfillHeld,        // would fit now but would delay the head: "held for backfill reservation of run 17 at 14:05"
    WaitingForResources, // "waiting: needs 2 GPUs with >= 40 GiB free; best node ws-02 has 1 (ws-01 unreachable)"
    Unsatisfiable,       // no reachable node could hold it even if every run ended; never blocks others
    Preempting,          // "waiting: preempting run 12 on ws1 (grace 30 s)"; a gang: "waiting: preempting runs
                         // 12, 14 on ws1, ws2 and holding ws3 (grace 30 s)" (Preemption.h)
    PoolQuota,           // "waiting: project vision uses 8 of its 8 GPUs in pool a100" (Pools.h); never blocks others
    NoSuchPool,          // "waiting: no pool named a10 (pools: a100, v100)"; never blocks others
    EmptyPool, // "waiting: pool lab has no nodes (none carries its labels: lab)": no node of the state is in the
               // run's pool and it cannot borrow; never blocks others, never failed as unsatisfiable (a label
               // may come back: trainyardctl node label)
};

struct PendingReason {
    PendingKind kind = PendingKind::WaitingForResources;
    Ordering ordering = Ordering::Fcfs; // names the head in BlockedByHead ("FCFS head", "priority head", ...)
    RunId otherRun = 0;                 // BlockedByHead, BackfillHeld: the head run
    qint64 atMs = 0;                    // BackfillHeld: the head's reserved start

    // The request (WaitingForResources, Unsatisfiable), per node.
    int gpus = 0;
    qint64 gpuMemoryMiB = 0;
    QString gpuType;
    int cpus = 0;
    qint64 memoryMiB = 0;
    int nodes = 1;    // elastic gangs: the minimum
    int nodesMax = 0; // elastic gangs: the maximum (0: a fixed gang of `nodes`)

    // The node that came closest (WaitingForResources, Unsatisfiable), as of
    // the end of the pass; empty when no node is eligible at all. For gang
    // runs, the best node among those that do not fit.
    QString bestNode;
    int bestNodeGpus = 0;     // GPUs on bestNode meeting type/memory that are free (Unsatisfiable: that exist)
    int bestNodeCpus = 0;     // free (WaitingForResources) or existing (Unsatisfiable)
    int bestNodeCpuTotal = 0; // bestNode's CPUs in all ("0 of 2 CPUs free")
    qint64 bestNodeMemoryTotalMiB = 0;
    qint64 bestNodeMemoryMiB = 0;
    int fittingNodes = 0;         // gang runs: nodes that would fit (fewer than `nodes`)
    QStringList unreachableNodes; // sorted by name
    QStringList connectingNodes;  // not reachable yet, first connection under way; sorted by name

    // SweepCap
    QString sweepId;
    QString sweepName; // PendingRun::sweepName; empty: sweepId is shown
    int sweepRunning = 0;
    int sweepCap = 0;
    // BackfillHeld and a head's estimated start: the estimate rests on
    // Policy::defaultRuntimeMs (`defaultRuntimeMs`) for some run without
    // estimated_runtime or time limit; the text says so.
    bool assumesDefaultRuntime = false;
    qint64 defaultRuntimeMs = 0;

    // Preempting: the runs it takes GPUs from (every rank of a gang),
    // ascending; the nodes where they run, by name (a waiting gang: one per
    // rank it needs freed); a waiting gang's free nodes it holds meanwhile,
    // by name; and the longest of the victims' grace periods (ms).
    QList<RunId> victims;
    QStringList preemptNodes;
    QStringList heldNodes;
    qint64 graceMs = 0;
    QString reclaimPool; // the victims borrowed this pool's GPUs: "reclaiming pool a100: preempting ..."

    // PoolQuota: whose quota (the project's or the user's), in which pool,
    // what it holds there, its limit and what the run needs (GPUs).
    // NoSuchPool: `pool` is the name the run gave, `pools` those configured.
    // EmptyPool: `pool` is the run's pool, `pools` its labels.
    bool quotaProject = false;
    QString quotaAccount;
    QString pool;
    int quotaUsed = 0;
    int quotaLimit = 0;
    int quotaNeed = 0;
    QStringList pools;
};

struct PendingInfo {
    RunId run = 0;
    int position = 0; // 1-based position among pending runs in policy order
    PendingReason reason;
    std::optional<qint64> estimatedStartMs; // the head's reservation (backfill profile), when computable
};

// The head's reservation (EASY backfill); also computed without backfill to
// give the head an estimated start.
struct Reservation {
    RunId run = 0;
    qint64 startMs = 0;
    QList<NodeAssignment> nodes; // no env
};

// A running run to be stopped so that a waiting one gets its GPUs
// (Preemption.h): the waiting run, the node, the runs to signal and what the
// waiting run will take there once they have ended. A waiting gang gets one
// per node it needs, all with the same preemptor: the nodes it frees, and
// the free nodes it holds meanwhile (no victims).
struct Preemption {
    RunId preemptor = 0;
    QString node;
    QList<RunId> victims;  // ascending; every rank of a chosen gang, wherever it runs, and (a waiting
                           // gang) the victims chosen for its other nodes that hold something here
    QList<int> gpuIndices; // GpuState::index values on `node` it will get, ascending
    int cpus = 0;
    qint64 memoryMiB = 0;
    qint64 graceMs = 0;  // the longest grace of the victims (a held free node: of the gang's victims)
    QString reclaimPool; // set when every victim borrowed GPUs of this pool, which takes them back
};

struct SchedulerDecision {
    QList<RunPlacement> placements; // in the order they were decided
    QList<PendingInfo> pending;     // every run not started, in policy order
    std::optional<Reservation> reservation;
    QList<Preemption> preemptions; // planPreemptions (Preemption.h); empty where the policy allows none
};

// Formats a time (ms since the Unix epoch, UTC) for reason texts.
using TimeFormatter = std::function<QString(qint64 msSinceEpochUtc)>;

// Human-readable reason. `formatTime` defaults to local "HH:mm".
// Memory is shown in GiB (MiB / 1024, at most one decimal).
QString renderPendingReason(const PendingReason& reason, const TimeFormatter& formatTime = {});
// The head's estimated start, as appended to its reason: "estimated start
// ~14:05", plus "(assumes 1 h per run without estimated_runtime)" when the
// estimate rests on the policy's default runtime. `formatTime` as above.
QString renderEstimatedStart(qint64 startMs, const PendingReason& reason, const TimeFormatter& formatTime = {});

QString orderingName(Ordering ordering); // "FCFS", "priority", "SJF", "fair-share"

} // namespace ty::sched
