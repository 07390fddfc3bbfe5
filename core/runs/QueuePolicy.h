#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/sched/Policy.h"

#include <QList>
#include <QMap>
#include <QString>

namespace ty {

// The scheduling policy of one result database's queue, kept beside it in
// `<db path>.scheduler.json` so the GUI, trainyardctl and every process that
// shares the database use the same one:
//
//   {"ordering": "priority", "backfill": true, "aging_per_hour": 1.0,
//    "default_runtime_s": 3600, "fair_share_by": "user",
//    "shares": {"alice": 2, "bob": 1}, "usage_half_life_s": 604800,
//    "preemption": true}
//
// `preemption` (default false): a waiting run may stop running runs of its
// queue's nodes that are `preemptible` and of strictly lower priority
// (core/sched/Preemption.h) -- set per queue, it lets that queue's runs do so.
//
// Every key is optional (defaults: EASY backfill over priority order, aging 1
// point per hour). A missing file means the defaults. A file that is not such
// an object is an error naming the file and the key.
//
// Queues (a job spec's `queue:`) get their own policy under "queues", each
// key defaulting to the top level's:
//   {"ordering": "priority", "queues": {"short": {"ordering": "sjf"}}}
// A queue without an entry uses the top-level policy.
struct QueuePolicies {
    sched::Policy defaults;
    QMap<QString, sched::Policy> queues;
    const sched::Policy& forQueue(const QString& queue) const;
};
sched::Policy defaultQueuePolicy();
QString queuePolicyPath(const QString& databasePath);
Result<QueuePolicies> loadQueuePolicies(const QString& databasePath);
Result<void> saveQueuePolicies(const QString& databasePath, const QueuePolicies& policies);
// The top-level policy only (saving keeps the per-queue ones).
Result<sched::Policy> loadQueuePolicy(const QString& databasePath);
Result<void> saveQueuePolicy(const QString& databasePath, const sched::Policy& policy);

// Named presets for the CLI and GUI: "fcfs" (strict order), "priority"
// (priority with aging), "sjf" (shortest job first), "backfill" (EASY
// backfill over priority), "fair-share" (Slurm's classic factor, with
// backfill). Shares, aging and runtimes of `base` are kept.
QStringList queuePolicyNames();
Result<sched::Policy> queuePolicyNamed(const QString& name, const sched::Policy& base = defaultQueuePolicy());
QString queuePolicyName(const sched::Policy& policy);

// Decayed GPU-hours per fair-share account from the runs' history: each run
// that held GPUs is charged gpus x hours held, decayed with the policy's
// half-life from when it ran until `nowMs` (a running run up to now).
// `accountOf` gives the account of a run (its user or project).
sched::FairShareState fairShareUsage(const QList<RunRecord>& runs, const sched::Policy& policy, qint64 nowMs,
        const std::function<QString(const RunRecord&)>& accountOf);

} // namespace ty
