#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QTemporaryDir>
#include <QThread>

#include <functional>
#include <memory>
#include <utility>

class QProcess;
class QProcessEnvironment;
#include <optional>

#include "core/common/Result.h"
#include "core/common/Run.h"

namespace ty {
class Clock;
class ResultStore;
class RetryRunner;
class RunEngine;
struct JobSpec;
class RunControl;
class LocalRunControl;
} // namespace ty

// Small helpers shared by the QtTest executables.
namespace ty::test {

// Absolute path of a file under tests/data (e.g. "gpu-workstation/logs/oom.log").
// A missing input ends the test executable with exit code 1 and a FAIL line
// naming the path (never a crash on empty data further on).
QString fixturePath(const QString& relative);
// Whole contents of a fixture file; QFAIL-worthy empty array if unreadable.
QByteArray readFixture(const QString& relative);
// The whole of the file at `path`; empty when it cannot be read.
QByteArray readFile(const QString& path);
// Makes `bytes` the whole of the file at `path`, creating its folder first;
// a failure fails the calling test function (QVERIFY in here).
void writeFile(const QString& path, const QByteArray& bytes);
// Whether Debian's torchrun starts (`/usr/bin/python3 -m torch.distributed.run
// --help`, up to 2 min: importing torch is slow on a busy machine).
bool torchrunStarts();
// Writes `path`: a torch.distributed worker that joins its group from the
// launcher's environment (env://, gloo), all-reduces rank + 1 and prints
// "rank=R world=W sum=S", then leaves with os._exit after a barrier (not
// destroy_process_group: torch 1.13's ProcessGroupGloo teardown can deadlock
// on the GIL, pytorch#56297; the digits example's leave_process_group).
void writeAllreduceWorker(const QString& path);
// Absolute path of a file in the source tree (e.g. "resources/examples/digits/job.yaml").
QString sourcePath(const QString& relative);
// The built trainyard-agent executable.
QString agentPath();
// Makes `process` start in a session of its own, with stdin from /dev/null:
// no controlling terminal, which is batch mode for trainyardctl, also when
// the tests run from one.
void withoutTerminal(QProcess& process);

// SLURM_CONF as the slurm_cluster fixture's env.sh sets it
// ("export SLURM_CONF=..."; tests/support/slurm/README.md), empty when the
// file is missing (the fixture did not start a cluster) or has no such line.
QString slurmConfOf(const QString& envFile);

// What a finished process printed, and its exit code (-1: it crashed, or
// was killed at its timeout).
struct ProcessOutcome {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};
// Runs `program` with `args` and `env`, `timeoutMs` at most (then kills it).
ProcessOutcome runProcess(
        const QString& program, const QStringList& args, const QProcessEnvironment& env, int timeoutMs = 60000);
// The environment of the built trainyardctl and trainyardd (`daemonPath`)
// in a test's own folder `dir`: this build's agent with its state in
// dir/agent-state, the service's socket under dir/runtime, its log under
// dir/state (serviceLogTail), 2 s idle exit, no $TRAINYARD_DB.
QProcessEnvironment serviceEnvironment(const QString& dir, const QString& daemonPath);
// The last `bytes` of the logs of the services started with
// serviceEnvironment(dir, ...), each headed by its file name; for the
// message of a failed check.
QByteArray serviceLogTail(const QString& dir, qint64 bytes = 6000);

// Unterminated string introducers (DCS, OSC, APC, SOS, PM, tmux's rename)
// with and without their usual first bytes, by name: the stray escapes of
// issue 20 that once silenced a run's metrics (renderer and extractor tests).
QList<std::pair<const char*, QByteArray>> strayStringIntroducers();

// A run recorded as running on `node` since now (started by someone, agent
// run id `agentRunId`), for tests that need one without starting it.
RunRecord runningRecord(const QString& name, const QString& node, const QString& agentRunId = {});

// Runs the event loop until `pred` holds or `timeoutMs` passed; whether it held.
bool waitUntil(const std::function<bool()>& pred, int timeoutMs = 10000);

// Calls `call(callback)` and runs the event loop until the callback gave a
// result (nullopt: none within `timeoutMs`).
template <typename T, typename Call> std::optional<Result<T>> await(Call call, int timeoutMs = 10000)
{
    std::optional<Result<T>> res;
    call([&res](const Result<T>& r) { res = r; });
    waitUntil([&] { return res.has_value(); }, timeoutMs);
    return res;
}

// Bytes of [from, to) of the file open as `fd` (`fileSize` bytes long) that
// are in the page cache, via mincore(2) on a mapping; -1 if that failed.
qint64 residentBytes(int fd, qint64 fileSize, qint64 from, qint64 to);
// Whether `path` is on tmpfs, whose pages posix_fadvise(DONTNEED) cannot drop.
bool onTmpfs(const QString& path);

// A RunEngine on its own thread, as the application runs it (created here,
// moved there, deleted there when this goes out of scope, also when a check
// failed). `clock`: the engine's (null: the system clock); a TestClock is
// then advanced on that thread, through run().
class EngineThread {
public:
    EngineThread(ResultStore* store, const QString& databasePath, Clock* clock = nullptr);
    ~EngineThread();
    EngineThread(const EngineThread&) = delete;
    EngineThread& operator=(const EngineThread&) = delete;
    RunEngine* engine() const { return m_engine; }
    // The engine as the views reach it (LocalRunControl, on the creating
    // thread; new nodes get agentPath()'s agent).
    RunControl* control() const;
    // Runs `fn` on the engine's thread and waits for it.
    void run(const std::function<void()>& fn) const;

private:
    QThread m_thread;
    RunEngine* m_engine = nullptr;
    std::unique_ptr<LocalRunControl> m_control;
};

// A stand-in nvidia-smi first on PATH (for the agents this process starts)
// while it lives: one GPU, the recorded workstation's
// (fixtures gpu-workstation/nvidia-smi), and no processes, so only
// Trainyard's claims say who holds it; NVML is off for those agents. There
// is no GPU on CI. `ok`: the script was written.
class StandInGpu {
public:
    StandInGpu();
    ~StandInGpu();
    StandInGpu(const StandInGpu&) = delete;
    StandInGpu& operator=(const StandInGpu&) = delete;
    bool ok = false;

private:
    std::unique_ptr<QTemporaryDir> m_bin;
    QByteArray m_oldPath;
};

// A job spec parsed from `yaml` as if read from `fileName` in `baseDir`;
// a spec that does not parse ends the test executable (qFatal, with the
// error): the tests that use it write their specs themselves.
JobSpec parsedSpec(const QString& yaml, const QString& fileName, const QString& baseDir);

// The attempts of the run `first` (itself alone before any retry), in
// attempt order, as the store has them now.
QList<RunRecord> attemptsOf(const ResultStore& store, RunId first);

// What the engine-level integration tests start from: a result database,
// the run engine with the local node (this build's agent, its state in a
// folder of the test's) owning ingestion, and, when asked, a RetryRunner.
// Thread: the test's (the engine's). Destroyed in the order they depend on
// each other: retries, engine, store.
struct LocalEngine {
    std::unique_ptr<ResultStore> store;
    std::unique_ptr<RunEngine> engine;
    std::unique_ptr<RetryRunner> retries; // with open(..., withRetries = true): no jitter

    LocalEngine();
    ~LocalEngine();
    LocalEngine(const LocalEngine&) = delete;
    LocalEngine& operator=(const LocalEngine&) = delete;
    // Opens `db` and starts the engine; the error says what failed (empty: ok).
    QString open(const QString& db, const QString& agentState, bool withRetries);
    void close();
    QList<RunRecord> attemptsOf(RunId first) const { return test::attemptsOf(*store, first); }
};

} // namespace ty::test
