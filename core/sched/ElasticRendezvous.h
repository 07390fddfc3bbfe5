#pragma once

#include "SchedulerDecision.h"

#include <QList>
#include <QString>

namespace ty::sched {

// Elastic gangs (`nodes: {min: M, max: N}`, issue #25): how many nodes one
// gets and the environment that lets torchrun's elastic launcher rendezvous
// over them. Pure functions, any thread.

// Nodes an elastic gang takes when `fitting` distinct nodes fit it now: as
// many as fit, at most `maxNodes`; 0 when fewer than `minNodes` fit (it
// waits). For a fixed gang (`maxNodes` <= `minNodes`, 0 included) this is
// `minNodes` when that many fit.
int elasticNodeCount(int fitting, int minNodes, int maxNodes);

// Adds torchrun's elastic rendezvous settings to every rank of a placed
// elastic gang (`ranks`: index = NODE_RANK, env already holding the fixed
// gang's MASTER_ADDR, MASTER_PORT, WORLD_SIZE, NODE_RANK, NNODES,
// NPROC_PER_NODE, where NNODES is ranks.size(), the nodes it got). torchrun
// reads `PET_<ARG>` for each of its arguments (torch/distributed/argparse_util.py),
// so `torchrun train.py` needs no flags:
//   PET_NNODES="M:N", TRAINYARD_NNODES="M:N" (for `torchrun --nnodes=$TRAINYARD_NNODES`),
//   PET_NPROC_PER_NODE = NPROC_PER_NODE,
//   PET_RDZV_BACKEND="c10d", PET_RDZV_ENDPOINT="<rank 0 host>:<its port>" (the
//   c10d store rank 0's torchrun hosts on the port chosen as MASTER_PORT),
//   PET_RDZV_CONF="is_host=1" on rank 0, "is_host=0" on the others (where the
//   store lives, rather than torchrun's guess from host names, which takes
//   every loopback address for its own).
// PET_RDZV_ID (one id shared by the ranks of one start) is the gang's run
// group id, known once the engine records the gang (RunEngine::startGang).
// torchrun's own --max_restarts stays 0: a rank's failure ends the gang and
// Trainyard restarts all of it within the spec's `retry:`, counted once per
// gang (RetryRunner), not per node's agent.
void addElasticRendezvous(
        QList<NodeAssignment>& ranks, int minNodes, int maxNodes, const QString& rank0Host, int rank0Port);

} // namespace ty::sched
