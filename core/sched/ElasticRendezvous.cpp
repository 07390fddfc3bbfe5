#include "ElasticRendezvous.h"

#include <algorithm>

namespace ty::sched {

int elasticNodeCount(int fitting, int minNodes, int maxNodes)
{
    const int lo = std::max(1, minNodes);
    if (fitting < lo)
        return 0;
    return maxNodes > lo ? std::min(fitting, maxNodes) : lo;
}

void addElasticRendezvous(
        QList<NodeAssignment>& ranks, int minNodes, int maxNodes, const QString& rank0Host, int rank0Port)
{
    const QString range = QString::number(minNodes) + QLatin1Char(':') + QString::number(maxNodes);
    const QString endpoint = rank0Host + QLatin1Char(':') + QString::number(rank0Port);
    for (qsizetype i = 0; i < ranks.size(); ++i) {
        auto& env = ranks[i].env;
        env.insert(u"PET_NNODES"_qs, range);
        env.insert(u"TRAINYARD_NNODES"_qs, range);
        env.insert(u"PET_NPROC_PER_NODE"_qs, env.value(u"NPROC_PER_NODE"_qs, u"1"_qs));
        env.insert(u"PET_RDZV_BACKEND"_qs, u"c10d"_qs);
        env.insert(u"PET_RDZV_ENDPOINT"_qs, endpoint);
        env.insert(u"PET_RDZV_CONF"_qs, i == 0 ? u"is_host=1"_qs : u"is_host=0"_qs);
    }
}

} // namespace ty::sched
