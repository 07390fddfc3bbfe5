#pragma once

// Builders, random generators and invariant checks shared by the scheduler tests.

#include "core/sched/Scheduler.h"

#include <QSet>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <random>

namespace ty::sched::test {

inline constexpr qint64 kMin = 60 * 1000;
inline constexpr qint64 kHour = 60 * kMin;
inline constexpr qint64 kGiB = 1024; // MiB

inline NodeState makeNode(const QString& name, int gpus, qint64 gpuMemMiB = 80 * kGiB,
        const QString& gpuName = QStringLiteral("NVIDIA A100-SXM4-80GB"), int cpus = 64, qint64 memMiB = 512 * kGiB)
{
    NodeState n;
    n.name = name;
    n.cpus = cpus;
    n.memoryMiB = memMiB;
    for (int g = 0; g < gpus; ++g) {
        GpuState gs;
        gs.index = g;
        gs.uuid = QStringLiteral("GPU-%1-%2").arg(name).arg(g);
        gs.name = gpuName;
        gs.memoryTotalMiB = gpuMemMiB;
        gs.memoryFreeMiB = gpuMemMiB;
        n.gpus << gs;
    }
    return n;
}

inline PendingRun makeRun(RunId id, qint64 submitMs, int gpus, qint64 estMs = kHour, int nodes = 1)
{
    PendingRun r;
    r.id = id;
    r.submitMs = submitMs;
    r.gpus = gpus;
    r.cpus = 1;
    r.memoryMiB = kGiB;
    r.nodes = nodes;
    r.estimatedRuntimeMs = estMs;
    r.user = QStringLiteral("alice");
    r.project = QStringLiteral("p");
    return r;
}

inline RunningAllocation makeRunning(RunId id, const QString& node, QList<int> gpus, qint64 startMs, qint64 endMs,
        int cpus = 1, qint64 memMiB = kGiB)
{
    RunningAllocation a;
    a.run = id;
    a.startMs = startMs;
    a.estimatedEndMs = endMs;
    a.user = QStringLiteral("alice");
    a.nodes << NodeShare{node, std::move(gpus), cpus, memMiB, 0};
    return a;
}

// Canonical text of a decision, for equality checks (determinism tests).
inline QString dump(const SchedulerDecision& d)
{
    QStringList out;
    for (const RunPlacement& p : d.placements) {
        QString s = QStringLiteral("P%1 end=%2 bf=%3:").arg(p.run).arg(p.expectedEndMs).arg(p.backfilled);
        for (const NodeAssignment& a : p.nodes) {
            QStringList g;
            for (int i : a.gpuIndices)
                g << QString::number(i);
            s += QStringLiteral(" %1[%2] c%3 m%4 port%5")
                         .arg(a.node, g.join(QLatin1Char(',')))
                         .arg(a.cpus)
                         .arg(a.memoryMiB)
                         .arg(a.port);
            for (auto it = a.env.constBegin(); it != a.env.constEnd(); ++it)
                s += QStringLiteral(" ") + it.key() + QStringLiteral("=") + it.value();
        }
        out << s;
    }
    for (const PendingInfo& p : d.pending) {
        out << QStringLiteral("W%1 #%2 est=%3 %4")
                        .arg(p.run)
                        .arg(p.position)
                        .arg(p.estimatedStartMs ? QString::number(*p.estimatedStartMs) : u"-"_qs,
                                renderPendingReason(p.reason, [](qint64 ms) { return QString::number(ms); }));
    }
    if (d.reservation)
        out << QStringLiteral("R%1 at %2").arg(d.reservation->run).arg(d.reservation->startMs);
    return out.join(QLatin1Char('\n'));
}

// A random but self-consistent cluster: running allocations never over-commit
// and only use GPUs that exist, are not foreign-busy and are free.
struct RandomCase {
    ClusterState state;
    QList<PendingRun> queue;
    Policy policy;
    qint64 now = 0;
    FairShareState fairShare;
};

struct GenOptions {
    int maxNodes = 6;
    int maxQueue = 30;
    bool allowSweeps = true;
    bool allowUnreachable = true;
    bool allowForeign = true;
    bool allowPrefs = true;
    // Idle GPUs with little free memory but no foreign process. The scheduler
    // assumes a GPU is fully free once Trainyard's runs on it end, which such
    // a GPU contradicts; the backfill forward check leaves them out.
    bool allowLowFreeMemory = true;
    // Elastic gangs (PendingRun::nodesMax): off by default, so the other
    // properties keep the cases their seeds always gave.
    bool allowElastic = false;
};

inline RandomCase randomCase(std::mt19937_64& rng, const GenOptions& o = {})
{
    auto uni = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto chance = [&rng](double p) { return std::bernoulli_distribution(p)(rng); };
    static const QStringList gpuNames{
            u"NVIDIA A100-SXM4-80GB"_qs, u"NVIDIA H100 80GB HBM3"_qs, u"Tesla V100-SXM2-32GB"_qs};
    static const QList<qint64> gpuMem{80 * kGiB, 80 * kGiB, 32 * kGiB};

    RandomCase c;
    c.now = 1'700'000'000'000LL + qint64(uni(0, 1000)) * kMin;
    const int nNodes = uni(1, o.maxNodes);
    RunId nextId = 1;
    for (int n = 0; n < nNodes; ++n) {
        const int type = uni(0, 2);
        NodeState node = makeNode(QStringLiteral("n%1").arg(n, 2, 10, QLatin1Char('0')), uni(0, 8), gpuMem[type],
                gpuNames[type], uni(4, 64), qint64(uni(16, 512)) * kGiB);
        node.address = node.name + u".lab"_qs;
        node.reachable = !o.allowUnreachable || !chance(0.1);
        if (chance(0.5))
            node.labels << u"fast"_qs;
        const bool topo = chance(0.5);
        for (GpuState& g : node.gpus) {
            if (o.allowForeign && chance(0.08))
                g.foreignBusy = true;
            if (chance(0.1) && o.allowLowFreeMemory)
                g.memoryFreeMiB = g.memoryTotalMiB / 4;
            if (topo)
                g.pciRoot = g.index < 4 ? u"0000:00"_qs : u"0000:80"_qs;
        }
        for (int k = 0; k < uni(0, 2); ++k)
            node.portsInUse << 29500 + uni(0, 20);
        c.state.nodes << node;
    }
    // Running allocations on free, usable GPUs without over-commit.
    for (NodeState& node : c.state.nodes) {
        int cpusLeft = node.cpus;
        qint64 memLeft = node.memoryMiB;
        QList<int> freeGpus;
        for (const GpuState& g : node.gpus)
            if (!g.foreignBusy)
                freeGpus << g.index;
        for (int k = uni(0, 3); k > 0; --k) {
            const int ng = uni(0, int(freeGpus.size()));
            const int cpus = uni(0, std::max(0, cpusLeft / 2));
            const qint64 mem = qint64(uni(0, int(memLeft / kGiB / 2))) * kGiB;
            QList<int> take = freeGpus.mid(0, ng);
            freeGpus = freeGpus.mid(ng);
            cpusLeft -= cpus;
            memLeft -= mem;
            RunningAllocation a = makeRunning(nextId++, node.name, take, c.now - uni(1, 100) * kMin,
                    c.now + qint64(uni(1, 600)) * kMin, cpus, mem);
            a.user = chance(0.5) ? u"alice"_qs : u"bob"_qs;
            a.nodes[0].port = chance(0.3) ? 29500 + uni(0, 20) : 0;
            for (GpuState& g : node.gpus)
                if (take.contains(g.index))
                    g.memoryFreeMiB = g.memoryTotalMiB / 10;
            c.state.running << a;
        }
    }
    const int q = uni(0, o.maxQueue);
    static const QStringList users{u"alice"_qs, u"bob"_qs, u"carol"_qs};
    for (int i = 0; i < q; ++i) {
        PendingRun r;
        r.id = 1000 + i;
        r.submitMs = c.now - qint64(uni(0, 300)) * kMin;
        r.priority = uni(0, 3);
        r.user = users[uni(0, 2)];
        r.project = r.user == u"carol"_qs ? u"vision"_qs : u"nlp"_qs;
        r.gpus = std::vector<int>{0, 1, 1, 1, 2, 2, 4, 8}[size_t(uni(0, 7))];
        r.nodes = chance(0.15) ? uni(2, 3) : 1;
        if (o.allowElastic && chance(0.3)) {
            r.nodes = uni(1, 2);
            r.nodesMax = r.nodes + uni(0, 3);
        }
        r.cpus = uni(0, 16);
        r.memoryMiB = qint64(uni(0, 64)) * kGiB;
        if (chance(0.2))
            r.gpuMemoryMiB = 40 * kGiB;
        if (chance(0.15))
            r.gpuTypeRegex = chance(0.5) ? u"A100|H100"_qs : u"V100"_qs;
        r.estimatedRuntimeMs = qint64(uni(1, 300)) * kMin;
        r.held = chance(0.05);
        if (o.allowPrefs && chance(0.1))
            r.avoidNodes << c.state.nodes[uni(0, nNodes - 1)].name;
        if (o.allowPrefs && chance(0.1))
            r.preferLabels << u"fast"_qs;
        if (o.allowSweeps && chance(0.2)) {
            const int sweep = uni(0, 1);
            r.sweepId = QStringLiteral("sweep%1").arg(sweep);
            r.sweepMaxConcurrent = sweep + 1; // one cap per sweep
        }
        if (chance(0.2))
            r.distributed = chance(0.5) ? DistributedKind::Torch : DistributedKind::TensorFlow;
        c.queue << r;
    }
    const Ordering orderings[] = {Ordering::Fcfs, Ordering::Priority, Ordering::ShortestJobFirst, Ordering::FairShare};
    c.policy.ordering = orderings[uni(0, 3)];
    c.policy.backfill = chance(0.5);
    c.policy.placement = chance(0.8) ? PlacementRule::BestFit : PlacementRule::FirstFit;
    c.policy.agingPerHour = 0.5;
    c.policy.shares.insert(u"alice"_qs, 2.0);
    c.fairShare.usageGpuHours.insert(u"alice"_qs, uni(0, 50));
    c.fairShare.usageGpuHours.insert(u"bob"_qs, uni(0, 50));
    return c;
}

} // namespace ty::sched::test
