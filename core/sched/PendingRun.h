#pragma once

#include "core/common/Run.h"

#include <QString>
#include <QStringList>

namespace ty::sched {

// How a multi-process run wants its rendezvous environment.
enum class DistributedKind {
    None,       // no env unless nodes > 1 (then torchrun's names are set)
    Torch,      // MASTER_ADDR, MASTER_PORT, WORLD_SIZE, NODE_RANK, NNODES, NPROC_PER_NODE
    TensorFlow, // the torch names plus TF_CONFIG (JSON, one worker per node)
};

// A queued run as the scheduler sees it: the resource part of the job spec
// plus queue metadata. Value type.
//
// Units: memory MiB, times ms since the Unix epoch (UTC), durations ms.
// Resource requests are per node; a gang run (nodes > 1) gets `gpus`, `cpus`
// and `memoryMiB` on each of `nodes` distinct nodes, all at once or not at all;
// an elastic one on each of between `nodes` and `nodesMax` nodes.
struct PendingRun {
    RunId id = 0; // unique; the final tie-break of every ordering
    qint64 submitMs = 0;
    int priority = 0; // higher first (Ordering::Priority)
    QString user;
    QString project;
    QString queue; // carried through; one schedule() call is one ordering domain
    QString pool;  // the resource pool it runs in and is charged to (Pools.h), empty = none named

    int gpus = 0;            // per node
    qint64 gpuMemoryMiB = 0; // minimum free memory on each chosen GPU, 0 = any
    QString gpuTypeRegex;    // QRegularExpression searched in GpuState::name, empty = any
    int cpus = 0;            // per node
    qint64 memoryMiB = 0;    // per node
    int nodes = 1;           // gang size; for an elastic gang (nodesMax > 0) the fewest nodes it starts on
    // Elastic gang (spec `nodes: {min, max}`): started on as many distinct
    // fitting nodes as are free in the pass, at least `nodes` and at most
    // nodesMax (values below `nodes` count as `nodes`), with torchrun's
    // elastic rendezvous env (ElasticRendezvous.h). 0 = fixed gang of `nodes`.
    int nodesMax = 0;

    qint64 estimatedRuntimeMs = 0; // 0 = unknown (then time limit, then Policy::defaultRuntimeMs)
    qint64 timeLimitMs = 0;        // 0 = none

    QStringList preferNodes; // soft: fitting preferred nodes are chosen before others
    QStringList preferLabels;
    QStringList avoidNodes; // hard: never placed there
    QStringList avoidLabels;

    bool held = false; // held by the user: never started, never blocks others

    QString sweepId;            // sweep / job array this run belongs to, empty = none
    QString sweepName;          // its name for people (the spec's name), shown in reasons; empty: sweepId
    int sweepMaxConcurrent = 0; // at most this many runs of sweepId at once, 0 = no cap

    DistributedKind distributed = DistributedKind::None;
};

} // namespace ty::sched
