#pragma once

#include "ClusterState.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <optional>
#include <vector>

namespace ty::sched {

// Resource pools (issue #25): named sets of nodes with per-user and
// per-project GPU quotas, which may lend idle GPUs to each other -- the
// borrowing of Kueue's cohorts and of YARN's capacity scheduler. Pure values
// and functions: no I/O, no clock, any thread.
//
// Membership: a node is in the first pool (in list order; the scheduler
// file gives name order) whose `labels` it carries every one of; an empty
// `labels` takes every node not in an earlier pool. A node in no pool is
// free for all, without quota.
//
// A run's pool: PendingRun::pool (the job spec's `pool:`). A run that names
// a pool is placed on that pool's nodes only -- or, borrowing, on idle GPUs
// of lending pools (below). A run that names none is charged to the pool of
// the nodes it lands on, and is never placed on a pool's nodes where that
// would exceed its quota there. When no pool is configured, `pool:` is
// ignored (no quota, no cost); a pool name that is not configured keeps the
// run waiting (PendingKind::NoSuchPool), never blocking others, and so does
// a pool no node of the state is in (none carries its labels, e.g. after
// trainyardctl node label --remove) when its runs cannot borrow
// (PendingKind::EmptyPool): such a run is never failed as unsatisfiable.
//
// Usage, in GPUs: an account's usage in a pool is the sum, over the running
// runs charged to that pool with that user (project), of the GPUs they hold
// on every node -- a gang run of `gpus` x `nodes` counts gpus * nodes,
// borrowed GPUs included. A run that names pool P is charged to P wherever
// it runs; one that names none is charged, per node, to that node's pool.
//
// Quota: a run needing N = gpus * nodes GPUs may start in pool P only when
// usage(user, P) + N <= limit(user, P) and usage(project, P) + N <=
// limit(project, P), limits from GpuQuota::limitOf (none: no limit). One
// that may not is PendingKind::PoolQuota ("waiting: project vision uses 8 of
// its 8 GPUs in pool a100"); like a held run it never blocks the head of the
// queue, and runs behind it may start.
//
// Borrowing: a run of pool P that fits nowhere on P's nodes may be placed,
// whole, on the idle GPUs of nodes of pools that `lend` (not P), when P's
// runs then hold at most P.borrowLimit GPUs on other pools' nodes
// (borrowed(P) + N <= borrowLimit). It is marked RunPlacement::borrowed and
// counts towards P's quotas. Reclaim: a run of the lending pool that waits
// for GPUs, within its own quota, may stop borrowers on its pool's nodes
// that are `preemptible`, whatever their priority, and they are chosen
// before any run of its own pool (planPreemptions, Preemption.h);
// non-preemptible borrowers are waited for.

// GPU limits per account (user name or project).
struct GpuQuota {
    int defaultLimit = -1;     // for an account without an entry; -1: no limit
    QMap<QString, int> limits; // per account, >= 0
    // The limit of `account` (its entry, else the default), -1 = none.
    int limitOf(const QString& account) const
    {
        const auto it = limits.constFind(account);
        return it != limits.cend() ? *it : defaultLimit;
    }
    bool isEmpty() const { return defaultLimit < 0 && limits.isEmpty(); }
    bool operator==(const GpuQuota&) const = default;
};

struct ResourcePool {
    QString name;       // unique, non-empty
    QStringList labels; // node selector: a node carrying all of them; empty: every node
    GpuQuota users;
    GpuQuota projects;
    bool lend = true;    // its idle GPUs may be borrowed by runs of other pools
    int borrowLimit = 0; // GPUs its runs may hold at once on other pools' nodes, 0 = never borrows
    bool operator==(const ResourcePool&) const = default;
};

// At most this many pools (a bitmask in the scheduler's pass).
inline constexpr int kMaxPools = 63;

// The index in `pools` of the pool `node` is in, -1 for none.
int poolOfNode(const QList<ResourcePool>& pools, const NodeState& node);
// The index of the pool named `name`, -1 for none.
int poolIndex(const QList<ResourcePool>& pools, const QString& name);
// Every node of `nodes` that is in a pool, by name -> pool index.
QHash<QString, int> nodeToPool(const QList<ResourcePool>& pools, const QList<NodeState>& nodes);
// Whether some run could ever borrow: a pool that lends and another whose
// borrowLimit > 0. Without that, reclaim has nothing to do.
bool poolsBorrow(const QList<ResourcePool>& pools);

// Which quota stops a run from starting in a pool.
struct QuotaBlock {
    bool project = false; // the project's quota, else the user's
    QString account;      // the user name or project
    QString pool;
    int used = 0;  // GPUs the account holds in the pool now
    int limit = 0; // its limit there
    int need = 0;  // GPUs the run needs (gpus * nodes)
};

// Quota usage and borrowed GPUs of every pool, for one cluster state: what
// the scheduler's pass and planPreemptions count against. Indices are into
// the `pools` given to the constructor; the list must outlive this.
class PoolUsage {
public:
    PoolUsage() = default;
    explicit PoolUsage(const QList<ResourcePool>& pools);
    // Charges the running runs of `state` (see "Usage" above; a run's pool
    // is RunningAllocation::pool). `nodePool`: each node's pool by name
    // (nodeToPool).
    void chargeRunning(const ClusterState& state, const QHash<QString, int>& nodePool);
    // Adds `gpus` of (user, project) to `pool`; `borrowed` also counts them
    // against its borrow limit.
    void charge(int pool, const QString& user, const QString& project, int gpus, bool borrowed);
    // The first quota (the user's, then the project's) that `need` more GPUs
    // of (user, project) would exceed in `pool`.
    std::optional<QuotaBlock> check(int pool, const QString& user, const QString& project, int need) const;
    int borrowed(int pool) const { return m_borrowed[size_t(pool)]; }
    // GPUs `pool` may still borrow.
    int borrowRoom(int pool) const;
    int used(int pool, const QString& account, bool project) const;

private:
    const QList<ResourcePool>* m_pools = nullptr;
    std::vector<QHash<QString, int>> m_users;
    std::vector<QHash<QString, int>> m_projects;
    std::vector<int> m_borrowed;
};

// What each pool holds now, for people (the GUI's Pools view, trainyardctl
// policy): the same counting as PoolUsage::chargeRunning, so what is shown
// is what the scheduler checks. GPUs are whole GPUs (GpuState entries and
// NodeShare::gpuIndices), never memory.
struct AccountUse {
    QString account; // a user name or project
    int used = 0;    // GPUs it holds in the pool now (borrowed ones included)
    int limit = -1;  // GpuQuota::limitOf, -1 = no limit
    bool operator==(const AccountUse&) const = default;
};

struct PoolUse {
    QString name;      // ResourcePool::name
    QStringList nodes; // the nodes of the state in the pool (poolOfNode), in the state's order
    int gpus = 0;      // GPUs on those nodes (reachable or not)
    int used = 0;      // of those, held by runs charged to this pool
    int lent = 0;      // of those, held by runs of other pools (their borrowed GPUs)
    int borrowed = 0;  // GPUs this pool's runs hold on other pools' nodes
    // Not held by a Trainyard run (a GPU busy with another process counts as idle here).
    int idle() const { return std::max(0, gpus - used - lent); }
    // Every account with GPUs in the pool or an entry in its quota, by name.
    // Without a quota of that kind (GpuQuota::isEmpty) the accounts still
    // appear, with limit -1.
    QList<AccountUse> users;
    QList<AccountUse> projects;
    bool operator==(const PoolUse&) const = default;
};

// One PoolUse per pool of `pools`, in that order (empty for no pools).
// A run's charge follows "Usage" above: a run naming pool P counts in P
// wherever it runs, its GPUs on another pool's nodes borrowed by P and lent
// by that pool; a run naming none (or an unknown pool) counts, per node, in
// the pool of each node it holds (not at all on a node in no pool).
QList<PoolUse> poolUsage(const QList<ResourcePool>& pools, const ClusterState& state);

} // namespace ty::sched
