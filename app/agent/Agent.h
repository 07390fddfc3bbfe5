#pragma once

// The agent's event loop: one poll() over stdin (requests), stdout (a
// non-blocking output queue), a self-pipe for SIGCHLD and the pipes of
// running commands (nvidia-smi, Slurm's: Commands.h). Every request is answered without waiting for
// another; console tails are pumped in fair 256 KiB chunks while the output
// queue is below its high-water mark; followed consoles are read as soon as
// they grow (inotify: ConsoleWatch.h) and, with running runs, checked every
// 20 ms. The loop ends when stdin reaches EOF (runs go on).

#include "Commands.h"
#include "ConsoleWatch.h"
#include "Framing.h"
#include "Gpus.h"
#include "RunRegistry.h"
#include "SlurmJobs.h"
#include "StderrRanges.h"
#include "core/common/WriteBehind.h"
#include "core/agentproto/Protocol.h"
#include "trainyard/Version.h"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ty::agent {

inline constexpr const char* kAgentVersion = TRAINYARD_VERSION;
inline constexpr int kProtocolVersion = agentproto::kProtocolVersion;
inline constexpr int kProtocolRevision = agentproto::kProtocolRevision;

struct AgentOptions {
    std::string stateDir; // resolved already
    int inFd = 0;
    int outFd = 1;
    std::int64_t slurmPollMs = 0; // --slurm-poll-ms; 0: $TRAINYARD_AGENT_SLURM_POLL_MS or 5000
};

class Agent {
public:
    explicit Agent(AgentOptions options);
    ~Agent();
    Agent(const Agent&) = delete;
    Agent& operator=(const Agent&) = delete;

    // Runs until stdin is closed. Returns the process exit status.
    int run();

private:
    struct Tail {
        std::shared_ptr<const SharedFd> console; // also held by queued frames until their bytes are sent
        std::int64_t offset = 0;
        bool follow = false;
        std::string exitPath;
        std::string stderrPath; // the run's console.stderr
        std::shared_ptr<StderrRangeReader> stderrRanges;
        // The client asked for `follow_truncation` (revision 3): a console
        // found shorter than `offset`, or with more truncation lines in
        // console.stderr than `generation`, is announced (`truncated`) and
        // sent on from its new start. Without it such a tail waits, as before.
        bool followTruncation = false;
        // Truncations the tail's offsets account for (PROTOCOL.md `tail`):
        // the sidecar's count, or one more while the supervisor has yet to
        // record a truncation found by size.
        std::int64_t generation = 0;
        WriteBehind sent{WriteBehind::Drop}; // bytes sent leave the page cache a window later
        // The client asked for LZ4 blocks (revision 8, `compress`): chunks
        // are read here and sent compressed where that saves an eighth.
        bool compress = false;
        // Chunks still to go by sendfile() without trying LZ4, after one
        // that did not compress (binary or random output): such a console
        // costs a trial every kCompressRetry chunks, not each one.
        int skipCompression = 0;
    };
    struct Tracked {
        long supervisorPid = 0; // 0: a Slurm run (no supervisor; SlurmJobs writes its exit.json)
        std::int64_t nextLostCheck = 0;
        std::int64_t nextExitCheck = 0; // Slurm runs: when exit.json is looked for next (monotonic ms)
    };
    // A start whose supervisor has not reported yet: the agent goes on with
    // other requests (a cancel, a tail, more starts) meanwhile and replies
    // when the report arrives. Requests naming the run wait in `deferred`.
    struct PendingStart {
        Json id;
        std::string run;
        pid_t supervisorPid = 0;
        int fd = -1;
        std::string line;
        std::vector<std::string> claimFiles;
        std::vector<FrameReader::Frame> deferred;
    };
    struct GpuQuery {
        Json id;
        int pending = 2;
        CommandResult gpu;
        std::string appsCsv;
        bool gpuRan = false;
    };

    void sendHello();
    void handleFrame(FrameReader::Frame& frame);
    void reply(const Json& id, Json body);
    void replyError(const Json& id, const std::string& error, const std::string& code = {});

    void opStart(const Json& id, const Json& req);
    void opTail(const Json& id, const Json& req);
    void opUntail(const Json& id, const Json& req);
    void opCancel(const Json& id, const Json& req);
    void opList(const Json& id);
    void opStatus(const Json& id, const Json& req);
    void opGpus(const Json& id);
    void opListeningPorts(const Json& id);
    void opListFiles(const Json& id, const Json& req); // ListFiles.cpp
    // read_file (AgentFiles.cpp): a run's metric files, from an offset.
    void opReadFile(const Json& id, const Json& req);
    std::string runFileRoot(const std::string& run, const std::string& root, std::string& error) const;

    // Reads a pending start's report; replies once it is complete.
    void readStartReport(std::size_t index);
    void finishStart(std::size_t index);
    // Removes what opStart created for a run that did not start.
    void removeRunFiles(const std::string& run);

    void reapChildren();
    void checkRuns(std::int64_t now);
    void pumpTails(bool tick);
    void closeTail(const std::string& run);
    // Queues console bytes [t.offset, end) as one `output` frame:
    // compressed (LZ4, when asked and worth it) or sent from the file.
    void queueConsoleChunk(Tail& t, Json header, std::int64_t end);
    // The console of a followed tail was truncated: `truncated`, then from 0.
    void restartTail(const std::string& run, Tail& t, std::int64_t size, std::int64_t generation);
    std::map<long, std::string> liveRunsByPgid() const;
    // Adds each GPU's live claims ({"run","client"}) to a `gpus` array.
    Json withClaims(Json gpus) const;

    AgentOptions m_opt;
    RunRegistry m_registry;
    FrameReader m_reader;
    OutputQueue m_out;
    Nvml m_nvml;
    std::map<std::string, Tail> m_tails;
    std::string m_chunkRead;         // a chunk to compress, read from its console (reused)
    std::vector<char> m_chunkPacked; // its LZ4 block (reused)
    ConsoleWatch m_consoleWatch;     // wakes the loop when a tail's console grows
    std::map<std::string, Tracked> m_running;
    Commands m_commands; // nvidia-smi, Slurm's commands
    SlurmJobs m_slurm;   // Slurm runs (revision 4)
    std::vector<std::unique_ptr<PendingStart>> m_starts;
    bool m_tailsHaveData = false;
    bool m_inputClosed = false;
    bool m_fatal = false;
    std::int64_t m_nextTick = 0;
};

} // namespace ty::agent
