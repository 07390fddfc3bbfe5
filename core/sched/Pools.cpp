#include "Pools.h"

#include <QMap>

namespace ty::sched {

int poolOfNode(const QList<ResourcePool>& pools, const NodeState& node)
{
    for (qsizetype i = 0; i < pools.size(); ++i) {
        bool all = true;
        for (const QString& l : pools[i].labels)
            if (!node.labels.contains(l)) {
                all = false;
                break;
            }
        if (all)
            return int(i);
    }
    return -1;
}

int poolIndex(const QList<ResourcePool>& pools, const QString& name)
{
    if (name.isEmpty())
        return -1;
    for (qsizetype i = 0; i < pools.size(); ++i)
        if (pools[i].name == name)
            return int(i);
    return -1;
}

QHash<QString, int> nodeToPool(const QList<ResourcePool>& pools, const QList<NodeState>& nodes)
{
    QHash<QString, int> out;
    if (pools.isEmpty())
        return out;
    for (const NodeState& n : nodes)
        if (const int p = poolOfNode(pools, n); p >= 0)
            out.insert(n.name, p);
    return out;
}

bool poolsBorrow(const QList<ResourcePool>& pools)
{
    int lenders = 0;
    int borrowers = 0;
    for (const ResourcePool& p : pools) {
        lenders += p.lend ? 1 : 0;
        borrowers += p.borrowLimit > 0 ? 1 : 0;
    }
    // One pool that both lends and borrows has nobody to borrow from.
    if (lenders == 0 || borrowers == 0)
        return false;
    for (const ResourcePool& b : pools)
        if (b.borrowLimit > 0)
            for (const ResourcePool& l : pools)
                if (l.lend && &l != &b)
                    return true;
    return false;
}

QList<PoolUse> poolUsage(const QList<ResourcePool>& pools, const ClusterState& state)
{
    QList<PoolUse> out;
    out.reserve(pools.size());
    std::vector<QMap<QString, int>> users(size_t(pools.size()));
    std::vector<QMap<QString, int>> projects(size_t(pools.size()));
    for (const ResourcePool& p : pools)
        out.append(PoolUse{p.name, {}, 0, 0, 0, 0, {}, {}});
    if (pools.isEmpty())
        return out;
    const QHash<QString, int> nodePool = nodeToPool(pools, state.nodes);
    for (const NodeState& n : state.nodes)
        if (const int p = nodePool.value(n.name, -1); p >= 0) {
            out[p].nodes.append(n.name);
            out[p].gpus += int(n.gpus.size());
        }
    const auto charge = [&](int pool, const RunningAllocation& a, int gpus) {
        users[size_t(pool)][a.user] += gpus;
        projects[size_t(pool)][a.project] += gpus;
    };
    for (const RunningAllocation& a : state.running) {
        const int own = poolIndex(pools, a.pool);
        for (const NodeShare& s : a.nodes) {
            const int n = int(s.gpuIndices.size());
            if (n <= 0)
                continue;
            const int at = nodePool.value(s.node, -1);
            const int chargedTo = own >= 0 ? own : at;
            if (chargedTo < 0)
                continue; // no pool named, on a node in no pool
            charge(chargedTo, a, n);
            if (at == chargedTo) {
                out[at].used += n;
            } else if (at >= 0) {
                out[at].lent += n;
                out[chargedTo].borrowed += n;
            }
        }
    }
    const auto accounts = [](const QMap<QString, int>& used, const GpuQuota& quota) {
        QMap<QString, int> all = used;
        for (auto it = quota.limits.cbegin(); it != quota.limits.cend(); ++it)
            all.insert(it.key(), used.value(it.key(), 0));
        QList<AccountUse> list;
        for (auto it = all.cbegin(); it != all.cend(); ++it)
            list.append(AccountUse{it.key(), it.value(), quota.limitOf(it.key())});
        return list;
    };
    for (qsizetype i = 0; i < pools.size(); ++i) {
        out[i].users = accounts(users[size_t(i)], pools[i].users);
        out[i].projects = accounts(projects[size_t(i)], pools[i].projects);
    }
    return out;
}

PoolUsage::PoolUsage(const QList<ResourcePool>& pools)
    : m_pools(&pools)
    , m_users(size_t(pools.size()))
    , m_projects(size_t(pools.size()))
    , m_borrowed(size_t(pools.size()), 0)
{ }

void PoolUsage::chargeRunning(const ClusterState& state, const QHash<QString, int>& nodePool)
{
    for (const RunningAllocation& a : state.running) {
        const int own = poolIndex(*m_pools, a.pool);
        if (own >= 0) {
            int total = 0;
            int borrowed = 0;
            for (const NodeShare& s : a.nodes) {
                const int n = int(s.gpuIndices.size());
                total += n;
                const int at = nodePool.value(s.node, -1);
                if (at >= 0 && at != own)
                    borrowed += n;
            }
            charge(own, a.user, a.project, total, false);
            m_borrowed[size_t(own)] += borrowed;
            continue;
        }
        // Named no pool (or one no longer configured): charged where it runs.
        for (const NodeShare& s : a.nodes)
            if (const int at = nodePool.value(s.node, -1); at >= 0)
                charge(at, a.user, a.project, int(s.gpuIndices.size()), false);
    }
}

void PoolUsage::charge(int pool, const QString& user, const QString& project, int gpus, bool borrowed)
{
    if (pool < 0 || gpus <= 0)
        return;
    const ResourcePool& p = (*m_pools)[pool];
    // Only accounts with a limit are counted: the others are never checked.
    if (!p.users.isEmpty())
        m_users[size_t(pool)][user] += gpus;
    if (!p.projects.isEmpty())
        m_projects[size_t(pool)][project] += gpus;
    if (borrowed)
        m_borrowed[size_t(pool)] += gpus;
}

int PoolUsage::used(int pool, const QString& account, bool project) const
{
    const auto& m = project ? m_projects[size_t(pool)] : m_users[size_t(pool)];
    return m.value(account, 0);
}

std::optional<QuotaBlock> PoolUsage::check(int pool, const QString& user, const QString& project, int need) const
{
    if (pool < 0 || need <= 0)
        return std::nullopt;
    const ResourcePool& p = (*m_pools)[pool];
    const auto over = [&](const GpuQuota& q, const QString& account, bool isProject) -> std::optional<QuotaBlock> {
        const int limit = q.limitOf(account);
        if (limit < 0)
            return std::nullopt;
        const int used = this->used(pool, account, isProject);
        if (qint64(used) + need <= limit)
            return std::nullopt;
        return QuotaBlock{isProject, account, p.name, used, limit, need};
    };
    if (auto u = over(p.users, user, false))
        return u;
    return over(p.projects, project, true);
}

int PoolUsage::borrowRoom(int pool) const
{
    return std::max(0, (*m_pools)[pool].borrowLimit - m_borrowed[size_t(pool)]);
}

} // namespace ty::sched
