#pragma once

// A run on a Slurm node (NodeKind::Slurm) as a batch job: the script sbatch
// runs and the sbatch options that ask Slurm for the run's allocation, from
// its job spec (issue #26). The agent on the login node adds what is its own
// (--parsable, --job-name, --chdir, --output: app/agent/PROTOCOL.md
// "Slurm"). Pure: no I/O, no clock; any thread.
//
// Options (sbatch(1), Slurm 22.05), from the job spec:
//   slurm.partition/account/qos/constraint -> --partition= --account= --qos= --constraint=
//   resources.gpus (per node)              -> --gres=gpu:N, or gpu:<slurm.gpu_type>:N
//   resources.cpus                         -> --cpus-per-task=N (one task per node)
//   resources.memory (MiB, per node)       -> --mem=<N>M
//   time_limit                             -> --time=D-HH:MM:SS (Slurm keeps whole minutes, rounding up)
//   resources.nodes > 1 (a gang)           -> --nodes=N --ntasks-per-node=1
//   resources.nodes {min: M, max: N}       -> --nodes=M-N (elastic: as many as Slurm has free)
//   retry:                                 -> --requeue (Slurm requeues the job after a node failure or a
//                                             preemption; Trainyard's own retries follow failures)
//   slurm.signal_grace, or 120 s with retry: -> --signal=B:USR1@<grace> (the warning a run checkpoints on)
//   slurm.sbatch                           -> as written, last
//
// The script: a comment naming the run, then the command. One node: `exec`
// of the run's argv, so Slurm's signals (USR1, TERM at the time limit,
// scancel) reach the program itself. A gang: MASTER_ADDR (the host the
// batch script runs on: Slurm runs it on the allocation's first node, whose
// Slurm node name need not be a host name), MASTER_PORT (from the job id), NNODES, NPROC_PER_NODE and
// WORLD_SIZE are exported, and one `srun` starts the command once per node
// with NODE_RANK set from that node's SLURM_NODEID (never from its address:
// skypilot#10333), as torchrun expects. An elastic gang also exports
// torchrun's elastic rendezvous (core/sched/ElasticRendezvous.h) with the
// nodes Slurm gave: PET_NNODES / TRAINYARD_NNODES = "M:N", PET_NPROC_PER_NODE,
// PET_RDZV_BACKEND=c10d, PET_RDZV_ENDPOINT=$MASTER_ADDR:$MASTER_PORT,
// PET_RDZV_ID=$SLURM_JOB_ID, and PET_RDZV_CONF=is_host=1 on node 0 only.

#include "core/common/Run.h"
#include "core/spec/JobSpec.h"

#include <QString>
#include <QStringList>

namespace ty::slurm {

struct Submission {
    QString script;     // the batch script's text ("#!/bin/bash\n...")
    QStringList sbatch; // sbatch options, each one argument ("--gres=gpu:a100:2")
};

// The batch job of `run` (its argv, id and name) under `spec`.
Submission submissionFor(const JobSpec& spec, const RunRecord& run);

} // namespace ty::slurm
