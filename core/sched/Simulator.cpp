#include "Simulator.h"

#include "Scheduler.h"

#include <QElapsedTimer>
#include <QHash>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace ty::sched {

SimReport simulate(const QList<NodeState>& nodes, const QList<SimJob>& jobs, const SimOptions& opt)
{
    SimReport rep;
    const Policy& policy = opt.policy;
    constexpr qint64 kNever = std::numeric_limits<qint64>::max();

    ClusterState state;
    state.nodes = nodes;
    int totalGpus = 0;
    for (const NodeState& n : nodes)
        totalGpus += int(n.gpus.size());

    QHash<RunId, int> jobIndex;
    jobIndex.reserve(jobs.size());
    std::vector<int> arrivals(size_t(jobs.size()));
    for (int i = 0; i < int(jobs.size()); ++i) {
        arrivals[size_t(i)] = i;
        jobIndex.insert(jobs[i].run.id, i);
        SimJobOutcome o;
        o.id = jobs[i].run.id;
        o.submitMs = jobs[i].run.submitMs;
        o.gpus = std::max(0, jobs[i].run.gpus) * std::max(1, jobs[i].run.nodes);
        o.account = fairShareAccount(jobs[i].run, policy);
        rep.jobs << o;
    }
    std::sort(arrivals.begin(), arrivals.end(), [&jobs](int a, int b) {
        const PendingRun& x = jobs[a].run;
        const PendingRun& y = jobs[b].run;
        return x.submitMs != y.submitMs ? x.submitMs < y.submitMs : x.id < y.id;
    });

    using End = std::pair<qint64, RunId>;
    std::priority_queue<End, std::vector<End>, std::greater<>> ends;
    QHash<RunId, qsizetype> runningPos;
    std::vector<std::pair<QString, int>> runningUsage; // account, GPUs; parallel to state.running
    QList<PendingRun> queue;
    FairShareState fs;

    size_t nextArrival = 0;
    qint64 last = arrivals.empty() ? 0 : jobs[arrivals.front()].run.submitMs;
    qint64 nextTick = kNever;
    qint64 simEnd = last;
    QElapsedTimer timer;
    Scheduler scheduler; // the nodes never change during a replay: one layout for all passes

    while (true) {
        qint64 t = kNever;
        if (nextArrival < arrivals.size())
            t = std::min(t, jobs[arrivals[nextArrival]].run.submitMs);
        if (!ends.empty())
            t = std::min(t, ends.top().first);
        if (!queue.isEmpty() && opt.tickMs > 0)
            t = std::min(t, nextTick);
        if (t == kNever || (opt.horizonMs > 0 && t > opt.horizonMs))
            break;
        simEnd = t;

        // Usage accrued since the previous event, then decay.
        if (t > last) {
            fs.decay(t - last, policy.usageHalfLifeMs);
            const double hours = double(t - last) / 3.6e6;
            for (const auto& [account, gpus] : runningUsage)
                if (gpus > 0)
                    fs.charge(account, gpus * hours);
            last = t;
        }
        while (!ends.empty() && ends.top().first == t) {
            const RunId id = ends.top().second;
            ends.pop();
            const qsizetype pos = runningPos.take(id);
            const qsizetype lastPos = state.running.size() - 1;
            if (pos != lastPos) {
                state.running[pos] = state.running[lastPos];
                runningUsage[size_t(pos)] = runningUsage[size_t(lastPos)];
                runningPos[state.running[pos].run] = pos;
            }
            state.running.removeLast();
            runningUsage.pop_back();
        }
        while (nextArrival < arrivals.size() && jobs[arrivals[nextArrival]].run.submitMs == t)
            queue << jobs[arrivals[nextArrival++]].run;
        if (queue.isEmpty())
            continue;

        if (opt.measurePasses)
            timer.start();
        const SchedulerDecision d = scheduler.schedule(state, queue, policy, t, fs);
        if (opt.measurePasses) {
            rep.passMicros.push_back(double(timer.nsecsElapsed()) / 1000.0);
            rep.passQueue.push_back(int(queue.size()));
        }
        ++rep.passes;
        rep.peakQueue = std::max(rep.peakQueue, int(queue.size()));
        nextTick = opt.tickMs > 0 ? t + opt.tickMs : kNever;
        if (d.placements.isEmpty())
            continue;

        QSet<RunId> startedIds;
        for (const RunPlacement& pl : d.placements) {
            const int ji = jobIndex.value(pl.run, -1);
            if (ji < 0)
                continue;
            const SimJob& job = jobs[ji];
            startedIds.insert(pl.run);
            rep.jobs[ji].startMs = t;
            rep.jobs[ji].endMs = t + std::max<qint64>(1, job.runtimeMs);
            RunningAllocation a;
            a.run = pl.run;
            a.startMs = t;
            a.estimatedEndMs = pl.expectedEndMs;
            a.timeLimitMs = job.run.timeLimitMs;
            a.user = job.run.user;
            a.project = job.run.project;
            a.sweepId = job.run.sweepId;
            for (const NodeAssignment& na : pl.nodes)
                a.nodes << NodeShare{na.node, na.gpuIndices, na.cpus, na.memoryMiB, na.port};
            runningPos.insert(a.run, state.running.size());
            state.running << a;
            runningUsage.emplace_back(rep.jobs[ji].account, rep.jobs[ji].gpus);
            ends.emplace(rep.jobs[ji].endMs, pl.run);
        }
        queue.removeIf([&startedIds](const PendingRun& r) { return startedIds.contains(r.id); });
    }

    // Statistics.
    std::vector<qint64> waits;
    qint64 first = kNever;
    qint64 lastEnd = simEnd;
    double gpuMs = 0;
    for (const SimJobOutcome& o : rep.jobs) {
        first = std::min(first, o.submitMs);
        if (o.startMs < 0) {
            ++rep.neverStarted;
            if (simEnd - o.submitMs > opt.starvationBoundMs)
                ++rep.starved;
            continue;
        }
        ++rep.started;
        const qint64 wait = o.startMs - o.submitMs;
        waits.push_back(wait);
        if (wait > opt.starvationBoundMs)
            ++rep.starved;
        const qint64 end = opt.horizonMs > 0 ? std::min(o.endMs, opt.horizonMs) : o.endMs;
        if (opt.horizonMs <= 0)
            lastEnd = std::max(lastEnd, o.endMs);
        const double used = double(o.gpus) * double(std::max<qint64>(0, end - o.startMs));
        gpuMs += used;
        rep.gpuHoursByAccount[o.account] += used / 3.6e6;
    }
    if (opt.horizonMs > 0)
        lastEnd = opt.horizonMs;
    if (first != kNever)
        rep.makespanMs = std::max<qint64>(0, lastEnd - first);
    if (!waits.empty()) {
        std::sort(waits.begin(), waits.end());
        double sum = 0;
        for (qint64 w : waits)
            sum += double(w);
        rep.meanWaitMs = sum / double(waits.size());
        const size_t rank = size_t(std::ceil(0.95 * double(waits.size())));
        rep.p95WaitMs = double(waits[std::max<size_t>(1, rank) - 1]);
    }
    if (rep.makespanMs > 0 && totalGpus > 0)
        rep.gpuUtilisation = gpuMs / (double(totalGpus) * double(rep.makespanMs));
    return rep;
}

} // namespace ty::sched
