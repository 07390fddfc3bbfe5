// RunEngine's submissions to Slurm login nodes (issue #26): a scheduling
// pass hands the queued runs for them here; Slurm, not core/sched, places
// them. A sweep's runs go as one job array (app/agent/PROTOCOL.md "Job
// arrays"), every other run as one batch job (RunEngine::startRun).

#include "RunEngine.h"
#include "RunLifecycle.h"
#include "core/nodes/AgentClient.h"
#include "core/nodes/NodePool.h"
#include "core/slurm/SlurmArrays.h"
#include "core/slurm/SlurmBatch.h"

#include <QLoggingCategory>

#include <algorithm>

Q_DECLARE_LOGGING_CATEGORY(lcRuns)

namespace ty {
namespace {
constexpr int kFirstArrayRevision = 5;
} // namespace

void RunEngine::submitToSlurm(const QList<RunRecord>& runs)
{
    QList<slurm::ArrayCandidate> candidates;
    candidates.reserve(runs.size());
    for (const RunRecord& r : runs) {
        slurm::ArrayCandidate c;
        c.node = r.node;
        c.sweep = groupIdOf(r, RunGroupKind::Sweep);
        const NodePool::NodeState* node = m_pool->node(r.node);
        const Result<JobSpec>& spec = cachedSpec(r);
        QStringList producers;
        QMap<QString, QString> stageEnv;
        QString stageError;
        c.eligible = c.sweep > 0 && !m_slurmAfterOk.contains(r.id) && spec && !spec->sync && node
                && node->hello.revision >= kFirstArrayRevision
                && stageFor(r, r.node, false, &producers, &stageEnv, &stageError).isEmpty() && stageEnv.isEmpty()
                && stageError.isEmpty();
        if (c.eligible)
            c.sbatch = slurm::submissionFor(*spec, r).sbatch;
        candidates.append(c);
    }
    const slurm::SubmissionPlan plan = slurm::planSubmissions(candidates);
    for (qsizetype i : plan.single)
        startRun(runs[i], runs[i].node);
    for (const QList<qsizetype>& array : plan.arrays) {
        QList<RunRecord> tasks;
        tasks.reserve(array.size());
        for (qsizetype i : array)
            tasks.append(runs[i]);
        // Task i is the sweep's i-th combination where the whole sweep goes
        // at once (a pass lists runs in no particular order).
        const auto position = [](const RunRecord& r) {
            for (const RunGroupMembership& m : r.groups)
                if (m.kind == RunGroupKind::Sweep)
                    return std::pair{m.position, r.id};
            return std::pair{0, r.id};
        };
        std::sort(tasks.begin(), tasks.end(),
                [&position](const RunRecord& a, const RunRecord& b) { return position(a) < position(b); });
        startArray(tasks, tasks.first().node);
    }
}

void RunEngine::startArray(QList<RunRecord> runs, const QString& nodeName)
{
    AgentArrayRequest req;
    req.client = m_clientId;
    for (RunRecord& run : runs) {
        transition(run, RunState::Starting, TransitionCause::Placed);
        run.node = nodeName;
        run.agentRunId = agentRunIdFor(run);
        commit(run);
        m_starting.insert(run.id, run);
        ++m_startRequests; // settled by onStartReply, one per task
        const Result<JobSpec>& spec = cachedSpec(run);
        const slurm::Submission job = slurm::submissionFor(*spec, run); // eligible: its spec reads
        AgentStartRequest task;
        task.run = run.agentRunId;
        task.workdir = run.workdir;
        task.env = run.env;
        task.slurm = true;
        task.slurmScript = job.script;
        req.runs.append(task);
        req.sbatch = job.sbatch; // the same for every task (SlurmArrays.h)
        req.maxConcurrent = spec->maxConcurrent;
    }
    const QString first = QString::number(runs.first().id);
    qCInfo(lcRuns).noquote() << QStringLiteral("runs %1..%2: one Slurm job array of %3 on %4")
                                        .arg(first)
                                        .arg(runs.last().id)
                                        .arg(runs.size())
                                        .arg(nodeName);
    m_pool->client(nodeName)->startArray(
            req, [this, runs, nodeName, maxConcurrent = req.maxConcurrent](const Result<AgentArrayReply>& reply) {
                for (qsizetype i = 0; i < runs.size(); ++i) {
                    if (!reply) {
                        onStartReply(runs[i], nodeName, std::unexpected(reply.error()));
                        continue;
                    }
                    if (i >= reply->runs.size()) {
                        onStartReply(runs[i], nodeName,
                                fail(QStringLiteral("the agent's reply to a job array of %1 runs lists %2")
                                                .arg(runs.size())
                                                .arg(reply->runs.size()),
                                        ErrorKind::Refused));
                        continue;
                    }
                    addNotice(runs[i].id,
                            QStringLiteral("task %1 of Slurm job array %2 (an array of %3 runs of its sweep, %4)")
                                    .arg(i)
                                    .arg(reply->slurmJob)
                                    .arg(runs.size())
                                    .arg(maxConcurrent > 0 ? QStringLiteral("at most %1 at once").arg(maxConcurrent)
                                                           : QStringLiteral("no limit at once")));
                    onStartReply(runs[i], nodeName, reply->runs[i]);
                }
            });
}

} // namespace ty
