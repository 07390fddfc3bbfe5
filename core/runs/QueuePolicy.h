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
// Resource pools (core/sched/Pools.h) with GPU quotas and borrowing, shared
// by every queue (set at the top level only; each queue's policy carries
// them in sched::Policy::pools), in name order:
//   {"pools": {"a100": {"labels": ["a100"],
//                       "quota": {"users": {"default": 8, "alice": 16},
//                                 "projects": {"vision": 8}},
//                       "lend": true, "borrow_limit": 4}}}
// `labels`: the nodes (by their labels, trainyardctl node add --label) that
// carry every one; absent or [] = every node not in an earlier pool.
// `quota`: GPU limits per user and per project, whole numbers >= 0, the
// key "default" for everyone without an entry; absent = no limit. `lend`
// (default true): its idle GPUs may be borrowed; `borrow_limit` (default 0):
// GPUs its runs may hold at once on other pools' nodes. A bad value is an
// error naming the file and the key ("pools.a100.quota.users.alice").
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
