#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl policy [NAME] [--queue Q] [--json]: shows or sets the
// scheduling policy (runs/QueuePolicy.h: fcfs, priority, sjf, backfill,
// fair-share) of the default queue, or of the queue Q named in specs.
// Shown as text: the default's name, then "queue Q: NAME" per queue of its
// own; with --queue Q only Q's (the default's when Q has none); then each
// resource pool, and under it what it holds now (sched::poolUsage over the
// database's nodes, labels and running runs): "  nodes: local; its runs hold
// 2 GPUs there, 0 lent to other pools, 2 borrowed", "  project vision: 4 of
// 4 GPUs", "  user alice: 4 GPUs, no limit".
// --json (showing only): {"default": NAME, "queues": {Q: NAME},
// "policy_file": PATH}, with --queue Q {"queue": Q, "policy": NAME}.
// Returns the exit code (Cli.h): 0; 2 usage (an unknown NAME, --json with
// NAME); 5 the policy file cannot be read or written.
int cmdPolicy(Context& ctx, const QStringList& args);

} // namespace ty::cli
