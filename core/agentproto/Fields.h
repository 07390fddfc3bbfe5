#pragma once

// The names of the trainyard-agent protocol's messages, written once for both
// sides (app/agent/PROTOCOL.md is their meaning): the agent builds and reads
// them with nlohmann::json, the core's AgentClient and AgentTypes with
// QJsonObject. Plain NUL-terminated character arrays, so either JSON library
// takes them as it takes a string literal (`j[fields::kRun]`,
// `QLatin1StringView(fields::kRun)`). Header-only constants: no state, no
// errors, usable from any thread.

namespace ty::agentproto {

// Values of "type": what a message is.
namespace messages {
inline constexpr char kHello[] = "hello";
inline constexpr char kReply[] = "reply";
inline constexpr char kOutput[] = "output";
inline constexpr char kEof[] = "eof";
inline constexpr char kTruncated[] = "truncated";
inline constexpr char kExited[] = "exited";
inline constexpr char kError[] = "error";
inline constexpr char kSlurm[] = "slurm"; // revision 4: a Slurm run's state changed
} // namespace messages

// Values of "op": what a request asks.
namespace ops {
inline constexpr char kPing[] = "ping";
inline constexpr char kStart[] = "start";
inline constexpr char kTail[] = "tail";
inline constexpr char kUntail[] = "untail";
inline constexpr char kCancel[] = "cancel";
inline constexpr char kList[] = "list";
inline constexpr char kStatus[] = "status";
inline constexpr char kReadFile[] = "read_file";
inline constexpr char kGpus[] = "gpus";
inline constexpr char kListFiles[] = "list_files";
inline constexpr char kSlurmInfo[] = "slurm_info";           // revision 4
inline constexpr char kStartArray[] = "start_array";         // revision 5: several Slurm runs as one job array
inline constexpr char kListeningPorts[] = "listening_ports"; // revision 7: TCP ports in LISTEN on the node
} // namespace ops

// Field names.
namespace fields {
// Framing: every message.
inline constexpr char kType[] = "type";
inline constexpr char kLen[] = "len"; // payload bytes after the line
// hello
inline constexpr char kProtocol[] = "protocol";
inline constexpr char kRevision[] = "revision";
inline constexpr char kAgent[] = "agent";
inline constexpr char kVersion[] = "version";
inline constexpr char kHostname[] = "hostname";
inline constexpr char kUser[] = "user";
inline constexpr char kPid[] = "pid";
inline constexpr char kStateDir[] = "state_dir";
inline constexpr char kCpus[] = "cpus";
inline constexpr char kMemoryMib[] = "memory_mib";
// Requests and replies
inline constexpr char kId[] = "id";
inline constexpr char kOp[] = "op";
inline constexpr char kOk[] = "ok";
inline constexpr char kError[] = "error";
inline constexpr char kCode[] = "code"; // with kError: what a client acts on
inline constexpr char kTimeMs[] = "time_ms";
inline constexpr char kPorts[] = "ports"; // listening_ports (revision 7): ascending TCP ports
// start
inline constexpr char kRun[] = "run";
inline constexpr char kArgv[] = "argv";
inline constexpr char kWorkdir[] = "workdir";
inline constexpr char kEnv[] = "env";
inline constexpr char kGpus[] = "gpus";
inline constexpr char kClient[] = "client";
inline constexpr char kPgid[] = "pgid";
inline constexpr char kSupervisorPid[] = "supervisor_pid";
inline constexpr char kRunDir[] = "run_dir";
inline constexpr char kConsole[] = "console";
inline constexpr char kStartedMs[] = "started_ms";
// tail, output, eof, truncated
inline constexpr char kOffset[] = "offset";
inline constexpr char kFollow[] = "follow";
inline constexpr char kFollowTruncation[] = "follow_truncation";
inline constexpr char kGeneration[] = "generation";
inline constexpr char kSize[] = "size";
inline constexpr char kStderr[] = "stderr";
inline constexpr char kCompress[] = "compress"; // tail (revision 8): "lz4" (ConsoleCompression.h)
inline constexpr char kLz4[] = "lz4";           // output (revision 8): the payload is an LZ4 block of this many bytes
// cancel
inline constexpr char kGraceMs[] = "grace_ms";
// list, status, exited: a run status object
inline constexpr char kRuns[] = "runs";
inline constexpr char kState[] = "state";
inline constexpr char kFinishedMs[] = "finished_ms";
inline constexpr char kExitCode[] = "exit_code";
inline constexpr char kSignal[] = "signal";
inline constexpr char kCancelled[] = "cancelled";
inline constexpr char kConsoleSize[] = "console_size";
inline constexpr char kLost[] = "lost";
// read_file, list_files
inline constexpr char kRoot[] = "root";
inline constexpr char kPath[] = "path";
inline constexpr char kMax[] = "max";
inline constexpr char kMtimeMs[] = "mtime_ms";
inline constexpr char kBytes[] = "bytes";
inline constexpr char kData[] = "data";
inline constexpr char kGlobs[] = "globs";
inline constexpr char kFiles[] = "files";
inline constexpr char kTruncated[] = "truncated";
inline constexpr char kTarget[] = "target";
inline constexpr char kNameNotUtf8[] = "name_not_utf8";
// gpus
inline constexpr char kSource[] = "source";
inline constexpr char kWarning[] = "warning";
inline constexpr char kIndex[] = "index";
inline constexpr char kUuid[] = "uuid";
inline constexpr char kName[] = "name";
inline constexpr char kPciBusId[] = "pci_bus_id";
inline constexpr char kMemoryTotalMib[] = "memory_total_mib";
inline constexpr char kMemoryUsedMib[] = "memory_used_mib";
inline constexpr char kUtilizationPct[] = "utilization_pct";
inline constexpr char kTemperatureC[] = "temperature_c";
inline constexpr char kPowerW[] = "power_w";
inline constexpr char kProcesses[] = "processes";
inline constexpr char kUsedMemoryMib[] = "used_memory_mib";
inline constexpr char kClaims[] = "claims";
// Slurm (revision 4): start's `slurm` object, slurm_info, a Slurm run's status
inline constexpr char kSlurm[] = "slurm";
inline constexpr char kScript[] = "script";
inline constexpr char kSbatch[] = "sbatch";
inline constexpr char kSlurmJob[] = "slurm_job";
inline constexpr char kSlurmState[] = "slurm_state";
inline constexpr char kReason[] = "reason";
inline constexpr char kJobsAhead[] = "jobs_ahead";
inline constexpr char kPartition[] = "partition";
inline constexpr char kStartEstimateMs[] = "start_estimate_ms";
inline constexpr char kSlurmNodes[] = "slurm_nodes";
inline constexpr char kRunningMs[] = "running_ms";
inline constexpr char kPartitions[] = "partitions";
inline constexpr char kDefault[] = "default";
inline constexpr char kNodes[] = "nodes";
inline constexpr char kNodeCount[] = "node_count";
inline constexpr char kGres[] = "gres";
inline constexpr char kCount[] = "count";
inline constexpr char kMaxTimeS[] = "max_time_s";
// Job arrays (revision 5): start_array's request, run.json of a task
inline constexpr char kMaxConcurrent[] = "max_concurrent";
inline constexpr char kArrayJob[] = "array_job";   // the array's job id, "1234"
inline constexpr char kArrayTask[] = "array_task"; // the task's index, 7 (its slurm_job is "1234_7")
} // namespace fields

// Values of fields.
inline constexpr char kStateRunning[] = "running";
inline constexpr char kStateExited[] = "exited";
inline constexpr char kStatePending[] = "pending"; // Slurm runs (revision 4): in Slurm's queue
inline constexpr char kStateEnding[] = "ending";   // Slurm runs: gone from squeue, no final record yet
inline constexpr char kCodeGpuClaimed[] = "gpu_claimed";
inline constexpr char kCodeNoSlurm[] = "no_slurm"; // slurm_info: sinfo missing or failing
inline constexpr char kRootWorkdir[] = "workdir";
inline constexpr char kRootRunDir[] = "run_dir";

} // namespace ty::agentproto
