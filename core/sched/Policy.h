#pragma once

#include "Pools.h"

#include <QList>
#include <QMap>
#include <QString>

namespace ty::sched {

// The order in which pending runs are considered.
enum class Ordering {
    Fcfs,             // submit time, then run id
    Priority,         // effective priority = priority + agingPerHour * hours waited, higher first
    ShortestJobFirst, // estimated runtime (unknown: time limit, then defaultRuntimeMs), shorter first
    FairShare,        // Slurm classic fair-share factor of the run's account, higher first (see below)
};

// How to pick nodes for a run once it may start.
enum class PlacementRule {
    BestFit,  // the fullest node that fits (fewest free GPUs, then CPUs, then memory, then name)
    FirstFit, // the first node by name that fits (the baseline the benchmarks compare against)
};

enum class FairShareBy { User, Project };

// A scheduling policy. Value type; applies to one schedule() call (one queue).
//
// Without backfill the order is strict: the first run (in policy order) that
// does not fit blocks every later one ("waiting for FCFS head run 12") -- the
// head waits rather than being overtaken. Held runs, runs at their sweep's
// cap and runs no reachable node could ever hold do not block.
// With backfill (EASY, Lifka 1995 / Slurm sched/backfill) the first blocked
// run gets a reservation at the earliest time it fits given the running runs'
// estimated ends; a later run may start now only if it ends by then or uses
// none of the resources reserved for the head. Only the head gets a reservation.
struct Policy {
    Ordering ordering = Ordering::Fcfs;
    bool backfill = false;
    PlacementRule placement = PlacementRule::BestFit;

    double agingPerHour = 1.0;         // Ordering::Priority: priority points gained per hour waited
    qint64 defaultRuntimeMs = 3600000; // runtime assumed when a run has neither estimate nor limit

    // Fair share (Ordering::FairShare). Accounts are users or projects.
    FairShareBy fairShareBy = FairShareBy::User;
    QMap<QString, double> shares; // raw shares per account; absent accounts get defaultShare
    double defaultShare = 1.0;
    qint64 usageHalfLifeMs
            = 7LL * 24 * 3600 * 1000; // for FairShareState::decay (Slurm PriorityDecayHalfLife default 7 days)

    // Preemption (Preemption.h): a waiting run may take GPUs from running
    // preemptible runs of strictly lower priority. Off by default.
    bool preemption = false;

    // Resource pools with GPU quotas and borrowing (Pools.h), shared by every
    // queue. Empty: no pool, no quota, and a pass pays nothing for them.
    QList<ResourcePool> pools;

    // MASTER_PORT / TF worker ports are chosen in [portMin, portMax].
    int portMin = 29500;
    int portMax = 29999;

    static Policy fcfs() { return {}; }
    static Policy priorityAging(double agingPerHour)
    {
        Policy p;
        p.ordering = Ordering::Priority;
        p.agingPerHour = agingPerHour;
        return p;
    }
    static Policy shortestJobFirst(qint64 defaultRuntimeMs)
    {
        Policy p;
        p.ordering = Ordering::ShortestJobFirst;
        p.defaultRuntimeMs = defaultRuntimeMs;
        return p;
    }
    static Policy easyBackfill(Ordering on = Ordering::Fcfs)
    {
        Policy p;
        p.ordering = on;
        p.backfill = true;
        return p;
    }
    static Policy fairShare(QMap<QString, double> shares, FairShareBy by = FairShareBy::User)
    {
        Policy p;
        p.ordering = Ordering::FairShare;
        p.shares = std::move(shares);
        p.fairShareBy = by;
        return p;
    }
};

// Decayed usage per account, in GPU-hours. Input to schedule(); the scheduler
// never reads a clock, so whoever owns time (the app, the simulator) ages it
// with decay() and adds consumption with charge().
//
// Slurm's classic fair share ("Classic Fairshare Algorithm",
// https://slurm.schedmd.com/classic_fair_share.html, and priority/multifactor,
// https://slurm.schedmd.com/priority_multifactor.html): usage decays with a
// half-life (PriorityDecayHalfLife), U = usage of the account / usage of all
// accounts, S = shares of the account / shares of all accounts, and the
// fair-share factor is F = 2^(-U/S), in (0, 1]; F = 1 for no usage, 0.5 when
// an account used exactly its share. Here the sum of shares runs over the
// accounts that appear in the queue, the running runs or this state, so a
// user alone on the cluster has S = 1 -- and since fair share only orders the
// queue (it never caps), a lone user may use the whole cluster.
struct FairShareState {
    QMap<QString, double> usageGpuHours;

    // Multiplies every usage by 2^(-elapsedMs / halfLifeMs).
    void decay(qint64 elapsedMs, qint64 halfLifeMs);
    void charge(const QString& account, double gpuHours) { usageGpuHours[account] += gpuHours; }
};

// F = 2^(-(usage/totalUsage) / (share/totalShares)); 1 when totalUsage <= 0;
// 0 when share <= 0 and the account has usage.
double fairShareFactor(double usage, double totalUsage, double share, double totalShares);

} // namespace ty::sched
