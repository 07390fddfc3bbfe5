#pragma once

// Value types of the trainyard-agent protocol (app/agent/PROTOCOL.md) and
// their conversion from/to the wire JSON. Times are ms since the Unix epoch
// (UTC); sizes and offsets are bytes of the run's console file.

#include "core/common/Result.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include "core/agentproto/Protocol.h"

#include <optional>

namespace ty {

inline constexpr int kAgentProtocolVersion = agentproto::kProtocolVersion;

// The agent's first message.
struct AgentHello {
    int protocol = 0;
    int revision = 1; // additions within the protocol; 2: `output` carries `stderr` ranges; 3: `truncated` events;
                      // 4: Slurm runs; 5: Slurm job arrays (`start_array`)
    QString agent;    // "trainyard-agent"
    QString version;  // "0.1.0"
    QString hostname;
    QString user;
    qint64 pid = 0;
    QString stateDir;     // absolute, on the node
    int cpus = 0;         // online CPUs of the node (0: not reported)
    qint64 memoryMiB = 0; // physical memory of the node, MiB (0: not reported)
};

struct AgentStartRequest {
    QString run;                // [A-Za-z0-9._-]{1,64}, unique on the node
    QStringList argv;           // exec'd as is (no shell); argv[0] searched in PATH
    QString workdir;            // absolute, must exist on the node
    QMap<QString, QString> env; // added to the agent's environment
    QList<int> gpus;            // empty: no CUDA_* variables set, no claim
    QString client;             // optional id of this Trainyard instance (GPU claims)
    // Revision 4, a Slurm login node's agent: submit this batch job instead
    // of starting `argv` (PROTOCOL.md "Slurm"; core/slurm/SlurmBatch.h).
    bool slurm = false;
    QString slurmScript;     // the batch script's text
    QStringList slurmSbatch; // sbatch options, each one argument
};

struct AgentStartReply {
    qint64 pid = 0;
    qint64 pgid = 0;
    qint64 supervisorPid = 0;
    QString runDir;
    QString console;
    qint64 startedMs = 0;
    QString slurmJob; // revision 4: the Slurm job id sbatch gave a batch job; else empty
};

// Revision 5 (PROTOCOL.md "Job arrays"): a sweep's Slurm runs as one job array.
struct AgentArrayRequest {
    // Task i = runs[i]: its run, workdir, env and slurmScript (argv, gpus, slurmSbatch, client unused).
    QList<AgentStartRequest> runs;
    QStringList sbatch;    // options every task shares
    int maxConcurrent = 0; // > 0: --array=0-<n-1>%maxConcurrent
    QString client;
};
struct AgentArrayReply {
    QString slurmJob;            // the array's job id, "1234"
    QList<AgentStartReply> runs; // in the request's order; each slurmJob is "1234_<i>"
};

// PROTOCOL.md's run status object (also the payload of `exited` events).
struct AgentRunStatus {
    QString run;
    bool running = false;
    qint64 pid = 0;
    qint64 pgid = 0;
    qint64 startedMs = 0;
    qint64 finishedMs = 0;       // 0 while running
    std::optional<int> exitCode; // exited normally
    std::optional<int> signal;   // killed by this signal
    bool cancelled = false;
    qint64 consoleSize = 0;
    QStringList argv;
    QString workdir;
    QList<int> gpus;
    bool lost = false; // supervisor gone without an exit status (node rebooted...)
    QString error;     // why, when lost
    // Revision 4, a Slurm batch job (PROTOCOL.md "Slurm"); empty slurmJob otherwise.
    QString slurmJob;
    QString slurmState;         // Slurm's word: PENDING, RUNNING, COMPLETED, TIMEOUT, ... (final: without "by N")
    bool pending = false;       // in Slurm's queue, not started yet (`running` is false then)
    bool ending = false;        // gone from squeue, no final record yet (`running` is false then)
    QString reason;             // pending: Slurm's Reason ("Priority", "Resources")
    int jobsAhead = 0;          // pending: jobs of a higher priority in its partition
    QString partition;          // pending: its partition
    qint64 startEstimateMs = 0; // pending: Slurm's estimated start (0: none given)
    QString slurmNodes;         // running: Slurm's node list
    qint64 runningMs = 0;       // when Slurm started it (0: not yet)
};

struct AgentGpuProcess {
    qint64 pid = 0;
    QString name;
    std::optional<double> usedMemoryMib;
    QString run; // the agent's run id when Trainyard started it, else empty
};

// A GPU claim recorded by the agent: `run` (agent run id) of the Trainyard
// instance `client` holds the GPU until the run ends.
struct AgentGpuClaim {
    QString run;
    QString client;
};

struct AgentGpu {
    int index = -1;
    QString uuid;
    QString name;
    QString pciBusId;
    std::optional<double> memoryTotalMib;
    std::optional<double> memoryUsedMib;
    std::optional<double> utilizationPct;
    std::optional<double> temperatureC;
    std::optional<double> powerW;
    QList<AgentGpuProcess> processes;
    QList<AgentGpuClaim> claims; // live claims (agents before claims reporting: empty)
};

// Errors name the field and the received value.
Result<AgentHello> agentHelloFromJson(const QJsonObject& o);
QJsonObject agentStartRequestToJson(const AgentStartRequest& r);
AgentStartReply agentStartReplyFromJson(const QJsonObject& o);
// `start_array`'s request: {"runs": [{"run","workdir","env","script"}], "sbatch",
// "max_concurrent" (when > 0), "client" (when set)}; and its reply.
QJsonObject agentArrayRequestToJson(const AgentArrayRequest& r);
AgentArrayReply agentArrayReplyFromJson(const QJsonObject& o);
AgentRunStatus agentRunStatusFromJson(const QJsonObject& o);
QList<AgentGpu> agentGpusFromJson(const QJsonArray& a);

} // namespace ty

Q_DECLARE_METATYPE(ty::AgentHello)
Q_DECLARE_METATYPE(ty::AgentRunStatus)
