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
    // Outages: (time, +1 up / -1 down, node index), in time order, ups first.
    struct NodeEvent {
        qint64 t;
        int delta;
        int node;
    };
    std::vector<NodeEvent> nodeEvents;
    {
        QHash<QString, int> nodeIndex;
        for (int i = 0; i < int(nodes.size()); ++i)
            nodeIndex.insert(nodes[i].name, i);
        for (const SimNodeOutage& o : opt.outages) {
            const int n = nodeIndex.value(o.node, -1);
            if (n < 0 || o.upMs <= o.downMs)
                continue;
            nodeEvents.push_back({o.downMs, -1, n});
            nodeEvents.push_back({o.upMs, +1, n});
        }
        std::sort(nodeEvents.begin(), nodeEvents.end(),
                [](const NodeEvent& a, const NodeEvent& b) { return a.t != b.t ? a.t < b.t : a.delta > b.delta; });
    }
    size_t nextNodeEvent = 0;
    std::vector<int> downCount(size_t(nodes.size()), 0);
    // Per job: progress kept (ms of its runtime), the current attempt's start
    // and the overhead it spends before progressing.
    std::vector<qint64> kept(size_t(jobs.size()), 0);
    std::vector<qint64> attemptStart(size_t(jobs.size()), -1);
    std::vector<qint64> attemptOverhead(size_t(jobs.size()), 0);
    double lostGpuMs = 0;
    // Removes running allocation `pos` (swap with the last).
    std::vector<std::pair<QString, int>> runningUsage; // account, GPUs; parallel to state.running
    const auto release = [&](RunId id) {
        const qsizetype pos = runningPos.take(id);
        const qsizetype lastPos = state.running.size() - 1;
        if (pos != lastPos) {
            state.running[pos] = state.running[lastPos];
            runningUsage[size_t(pos)] = runningUsage[size_t(lastPos)];
            runningPos[state.running[pos].run] = pos;
        }
        state.running.removeLast();
        runningUsage.pop_back();
    };
    QList<PendingRun> queue;
    FairShareState fs;

    size_t nextArrival = 0;
    qint64 last = arrivals.empty() ? 0 : jobs[arrivals.front()].run.submitMs;
    qint64 nextTick = kNever;
    qint64 simEnd = last;
    QElapsedTimer timer;
    Scheduler scheduler; // the nodes never change during a replay: one layout for all passes

    // An end of an attempt an outage ended earlier.
    const auto stale = [&](const End& e) {
        const int ji = jobIndex.value(e.second, -1);
        return ji < 0 || !runningPos.contains(e.second) || rep.jobs[ji].endMs != e.first;
    };
    while (true) {
        while (!ends.empty() && stale(ends.top()))
            ends.pop();
        qint64 t = kNever;
        if (nextArrival < arrivals.size())
            t = std::min(t, jobs[arrivals[nextArrival]].run.submitMs);
        if (!ends.empty())
            t = std::min(t, ends.top().first);
        if (!queue.isEmpty() && opt.tickMs > 0)
            t = std::min(t, nextTick);
        // Outages matter while anything is running, waiting or still to come.
        if (nextNodeEvent < nodeEvents.size() && t != kNever)
            t = std::min(t, nodeEvents[nextNodeEvent].t);
        else if (nextNodeEvent < nodeEvents.size() && !queue.isEmpty())
            t = nodeEvents[nextNodeEvent].t; // a node coming back may be what they wait for
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
            if (stale({t, id}))
                continue;
            const int ji = jobIndex.value(id);
            rep.jobs[ji].usedMs += t - attemptStart[size_t(ji)];
            attemptStart[size_t(ji)] = -1;
            release(id);
        }
        bool requeued = false;
        while (nextNodeEvent < nodeEvents.size() && nodeEvents[nextNodeEvent].t == t) {
            const NodeEvent& e = nodeEvents[nextNodeEvent++];
            int& down = downCount[size_t(e.node)];
            down -= e.delta;
            state.nodes[e.node].reachable = down == 0;
            if (e.delta > 0 || down != 1)
                continue;
            // Down now: its runs are lost there.
            const QString& name = state.nodes[e.node].name;
            QList<RunId> lost;
            for (const RunningAllocation& a : std::as_const(state.running))
                for (const NodeShare& ns : a.nodes)
                    if (ns.node == name) {
                        lost << a.run;
                        break;
                    }
            for (const RunId id : std::as_const(lost)) {
                const int ji = jobIndex.value(id, -1);
                SimJobOutcome& o = rep.jobs[ji];
                const qint64 ran = t - attemptStart[size_t(ji)];
                const qint64 progress = kept[size_t(ji)] + std::max<qint64>(0, ran - attemptOverhead[size_t(ji)]);
                // Checkpoints at every whole interval of progress; never fewer than it had.
                const qint64 keep = opt.checkpointIntervalMs > 0
                        ? std::max(kept[size_t(ji)], progress / opt.checkpointIntervalMs * opt.checkpointIntervalMs)
                        : 0;
                lostGpuMs += double(o.gpus) * double(ran - (keep - kept[size_t(ji)]));
                kept[size_t(ji)] = keep;
                o.usedMs += ran;
                o.endMs = -1;
                attemptStart[size_t(ji)] = -1;
                ++rep.interruptions;
                release(id);
                PendingRun again = jobs[ji].run;
                if (again.estimatedRuntimeMs > 0)
                    again.estimatedRuntimeMs = std::max<qint64>(1, again.estimatedRuntimeMs - kept[size_t(ji)]);
                queue << again;
                requeued = true;
            }
        }
        if (requeued) // by submit time, as their first submit placed them
            std::stable_sort(queue.begin(), queue.end(),
                    [](const PendingRun& a, const PendingRun& b) { return a.submitMs < b.submitMs; });
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
            SimJobOutcome& o = rep.jobs[ji];
            if (o.startMs < 0)
                o.startMs = t;
            ++o.attempts;
            attemptStart[size_t(ji)] = t;
            attemptOverhead[size_t(ji)] = o.attempts > 1 && kept[size_t(ji)] > 0 ? opt.restartOverheadMs : 0;
            o.endMs = t + attemptOverhead[size_t(ji)] + std::max<qint64>(1, job.runtimeMs - kept[size_t(ji)]);
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
    for (qsizetype i = 0; i < rep.jobs.size(); ++i) {
        const SimJobOutcome& o = rep.jobs.at(i);
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
        const qint64 running = attemptStart[size_t(i)]; // the attempt still running at the end, if any
        const qint64 end = opt.horizonMs > 0 ? std::min(o.endMs, opt.horizonMs) : o.endMs;
        if (opt.horizonMs <= 0)
            lastEnd = std::max(lastEnd, o.endMs);
        const qint64 usedMs = o.usedMs + (running >= 0 && end > running ? end - running : 0);
        const double used = double(o.gpus) * double(usedMs);
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
    rep.usedGpuHours = gpuMs / 3.6e6;
    rep.lostGpuHours = lostGpuMs / 3.6e6;
    return rep;
}

} // namespace ty::sched
