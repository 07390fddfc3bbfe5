#pragma once

#include "common/Result.h"
#include "common/Run.h"
#include "sched/Policy.h"

#include <QList>
#include <QString>

namespace ty {

// The scheduling policy of one result database's queue, kept beside it in
// `<db path>.scheduler.json` so the GUI, trainyardctl and every process that
// shares the database use the same one:
//
//   {"ordering": "priority", "backfill": true, "aging_per_hour": 1.0,
//    "default_runtime_s": 3600, "fair_share_by": "user",
//    "shares": {"alice": 2, "bob": 1}, "usage_half_life_s": 604800}
//
// Every key is optional (defaults: EASY backfill over priority order, aging 1
// point per hour). A missing file means the defaults. A file that is not such
// an object is an error naming the file and the key.
sched::Policy defaultQueuePolicy();
QString queuePolicyPath(const QString& databasePath);
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
