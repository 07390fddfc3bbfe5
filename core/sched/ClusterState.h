#pragma once

#include "core/common/Run.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace ty::sched {

// Snapshot of the cluster the scheduler decides against: plain values, no
// behaviour, cheap to copy (Qt implicit sharing). Built by the node manager
// from agent reports; the scheduler never reads anything else.
//
// Units: memory in MiB, times in ms since the Unix epoch (UTC), durations in ms.

// One GPU as the node's agent reports it (nvidia-smi / NVML).
struct GpuState {
    int index = 0; // CUDA/NVML index on the node
    QString uuid;  // "GPU-..."
    QString name;  // product name, e.g. "NVIDIA A100-SXM4-80GB"; matched by gpuTypeRegex
    qint64 memoryTotalMiB = 0;
    qint64 memoryFreeMiB = 0; // as last reported; compared with PendingRun::gpuMemoryMiB
    bool foreignBusy
            = false; // used by a process Trainyard did not start, or claimed by another instance: not allocated while so, but a run waits for it rather than failing
    QString pciRoot; // PCI root complex / switch id (e.g. "0000:00"); empty = topology unknown
};

struct NodeState {
    QString name;            // unique; the key used everywhere else
    QString address;         // host name for MASTER_ADDR / TF_CONFIG; empty = use name
    int cpus = 0;            // allocatable CPUs (whole cores)
    qint64 memoryMiB = 0;    // allocatable host memory
    QStringList labels;      // free-form, matched by PendingRun prefer/avoid labels
    bool reachable = true;   // false: excluded from placement and named in pending reasons
    bool connecting = false; // with reachable false: its connection is still being made, or its GPUs are
                             // not reported yet (named as connecting; a run it could hold is not unsatisfiable)
    QList<GpuState> gpus;    // at most 64 per node (a bitmask in the hot path); more are ignored
    QList<int> portsInUse;   // TCP ports known busy on the node (never chosen as MASTER_PORT): its agent's
                             // listening_ports (NodePool::NodeState::listeningPorts)
};

// What a running run holds on one node.
struct NodeShare {
    QString node;
    QList<int> gpuIndices; // GpuState::index values
    int cpus = 0;
    qint64 memoryMiB = 0;
    int port = 0; // port given to this rank (MASTER_PORT / TF worker port), 0 = none
};

// A run already started by Trainyard. It holds its resources until it ends.
struct RunningAllocation {
    RunId run = 0;
    QList<NodeShare> nodes; // one entry per node (gang runs have several)
    qint64 startMs = 0;
    qint64 timeLimitMs = 0;    // 0 = none
    qint64 estimatedEndMs = 0; // 0 = unknown: start + time limit, else start + Policy::defaultRuntimeMs
    QString user;
    QString project;
    QString pool;    // the pool the run named (Pools.h), empty = none: charged to its nodes' pools
    QString sweepId; // counts towards PendingRun::sweepMaxConcurrent of the same sweep
};

struct ClusterState {
    QList<NodeState> nodes;
    QList<RunningAllocation> running;
};

} // namespace ty::sched
