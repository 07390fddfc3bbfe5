#include "TestSupport.h"

#include "core/retry/RetryRunner.h"
#include "core/runs/LocalRunControl.h"

#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QFileInfo>
#include <QProcess>
#include <QTest>

#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace ty::test {

QList<std::pair<const char*, QByteArray>> strayStringIntroducers()
{
    return {
            {"DCS", QByteArray("\x1bP")},
            {"DCS-params", QByteArray("\x1bP1;2q#0")},
            {"DCS-data-with-ESC", QByteArray("\x1bPtmux;\x1b\x1b[31m")},
            {"DCS-malformed", QByteArray("\x1bP1:2")},
            {"OSC", QByteArray("\x1b]")},
            {"OSC-hyperlink", QByteArray("\x1b]8;;http://example.com/")},
            {"APC", QByteArray("\x1b_")},
            {"APC-kitty", QByteArray("\x1b_Gf=100,a=T;iVBORw0KGgo")},
            {"SOS", QByteArray("\x1bX")},
            {"PM", QByteArray("\x1b^")},
            {"rename", QByteArray("\x1bk")},
    };
}

QString fixturePath(const QString& relative)
{
    const QString path = QStringLiteral(TRAINYARD_FIXTURES_DIR) + u'/' + relative;
    if (!QFileInfo::exists(path)) {
        std::fprintf(stderr,
                "FAIL!  : missing test input %s (tests/data is part of the repository: is the clone complete?)\n",
                qPrintable(path));
        std::fflush(stderr);
        std::exit(1);
    }
    return path;
}

QByteArray readFixture(const QString& relative)
{
    QFile f(fixturePath(relative));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool torchrunStarts()
{
    QProcess probe;
    probe.start(QStringLiteral("/usr/bin/python3"),
            {QStringLiteral("-m"), QStringLiteral("torch.distributed.run"), QStringLiteral("--help")});
    return probe.waitForFinished(120000) && probe.exitStatus() == QProcess::NormalExit && probe.exitCode() == 0;
}

void writeAllreduceWorker(const QString& path)
{
    writeFile(path,
            "import os\n"
            "import torch\n"
            "import torch.distributed as dist\n"
            "dist.init_process_group('gloo')\n"
            "t = torch.tensor([float(dist.get_rank() + 1)])\n"
            "dist.all_reduce(t)\n"
            "print(f\"rank={dist.get_rank()} world={dist.get_world_size()} sum={t.item():.0f}\", flush=True)\n"
            "dist.barrier()\n"
            "os._exit(0)\n");
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QVERIFY2(QDir().mkpath(QFileInfo(path).absolutePath()), qPrintable(path));
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate),
            qPrintable(path + QStringLiteral(": ") + f.errorString()));
    QVERIFY2(f.write(bytes) == bytes.size(), qPrintable(path + QStringLiteral(": ") + f.errorString()));
}

QString sourcePath(const QString& relative)
{
    return QStringLiteral(TRAINYARD_SOURCE_DIR) + u'/' + relative;
}

QString agentPath()
{
    return QStringLiteral(TRAINYARD_AGENT_PATH);
}

ProcessOutcome runProcess(
        const QString& program, const QStringList& args, const QProcessEnvironment& env, int timeoutMs)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

QProcessEnvironment serviceEnvironment(const QString& dir, const QString& daemonPath)
{
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert(QStringLiteral("TRAINYARD_AGENT"), agentPath());
    e.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), dir + QStringLiteral("/agent-state"));
    e.insert(QStringLiteral("TRAINYARD_DAEMON"), daemonPath);
    e.insert(QStringLiteral("TRAINYARD_DAEMON_IDLE"), QStringLiteral("2"));
    e.insert(QStringLiteral("XDG_RUNTIME_DIR"), dir + QStringLiteral("/runtime"));
    e.insert(QStringLiteral("XDG_CACHE_HOME"), dir + QStringLiteral("/cache")); // memoization's hash cache: the test's
    e.insert(QStringLiteral("XDG_STATE_HOME"), dir + QStringLiteral("/state")); // the service's log, not in $HOME
    e.remove(QStringLiteral("TRAINYARD_DB"));
    return e;
}

QByteArray serviceLogTail(const QString& dir, qint64 bytes)
{
    QByteArray out;
    const QDir logs(dir + QStringLiteral("/state/trainyard"));
    for (const QFileInfo& f : logs.entryInfoList({QStringLiteral("trainyardd-*.log")}, QDir::Files, QDir::Name)) {
        QFile file(f.filePath());
        if (!file.open(QIODevice::ReadOnly))
            continue;
        file.seek(std::max<qint64>(0, file.size() - bytes));
        out += "--- " + QFile::encodeName(f.filePath()) + " (end) ---\n" + file.readAll() + '\n';
    }
    return out.isEmpty() ? QByteArray("(no service log under " + QFile::encodeName(logs.path()) + ")\n") : out;
}

void withoutTerminal(QProcess& process)
{
    process.setStandardInputFile(QProcess::nullDevice());
    process.setChildProcessModifier([] { ::setsid(); });
}

RunRecord runningRecord(const QString& name, const QString& node, const QString& agentRunId)
{
    RunRecord r;
    r.name = name;
    r.state = RunState::Running;
    r.node = node;
    r.agentRunId = agentRunId;
    r.startedAt = QDateTime::currentDateTimeUtc();
    return r;
}

bool waitUntil(const std::function<bool()>& pred, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!pred()) {
        if (deadline.hasExpired())
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        QTest::qSleep(1);
    }
    return true;
}

EngineThread::EngineThread(ResultStore* store, const QString& databasePath, Clock* clock)
    : m_engine(clock ? new RunEngine(store, databasePath, *clock) : new RunEngine(store, databasePath))
{
    m_engine->moveToThread(&m_thread);
    m_thread.start();
    m_control = std::make_unique<LocalRunControl>(m_engine, store, agentPath());
}

EngineThread::~EngineThread()
{
    m_control.reset();
    run([this] { delete m_engine; });
    m_thread.quit();
    m_thread.wait();
}

RunControl* EngineThread::control() const
{
    return m_control.get();
}

void EngineThread::run(const std::function<void()>& fn) const
{
    QMetaObject::invokeMethod(m_engine, fn, Qt::BlockingQueuedConnection);
}

qint64 residentBytes(int fd, qint64 fileSize, qint64 from, qint64 to)
{
    void* map = ::mmap(nullptr, size_t(fileSize), PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return -1;
    const long page = ::sysconf(_SC_PAGESIZE);
    std::vector<unsigned char> vec(size_t((fileSize + page - 1) / page));
    qint64 resident = -1;
    if (::mincore(map, size_t(fileSize), vec.data()) == 0) {
        resident = 0;
        for (qint64 p = from / page; p < (to + page - 1) / page; ++p)
            resident += (vec[size_t(p)] & 1) ? page : 0;
    }
    ::munmap(map, size_t(fileSize));
    return resident;
}

bool onTmpfs(const QString& path)
{
    struct statfs fs { };
    return ::statfs(QFile::encodeName(path).constData(), &fs) == 0 && fs.f_type == 0x01021994; // TMPFS_MAGIC
}

QString slurmConfOf(const QString& envFile)
{
    QFile f(envFile);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QRegularExpression re(QStringLiteral("^(?:export\\s+)?SLURM_CONF=['\"]?([^'\"\\s]+)"));
    for (const QByteArray& line : f.readAll().split('\n'))
        if (const auto m = re.match(QString::fromUtf8(line)); m.hasMatch())
            return m.captured(1);
    return {};
}

StandInGpu::StandInGpu()
    : m_bin(std::make_unique<QTemporaryDir>())
    , m_oldPath(qgetenv("PATH"))
{
    const QString fix = fixturePath(QStringLiteral("gpu-workstation/nvidia-smi"));
    QFile smi(m_bin->path() + QStringLiteral("/nvidia-smi"));
    if (!smi.open(QIODevice::WriteOnly))
        return;
    smi.write(QStringLiteral("#!/bin/sh\ncase \"$1\" in\n"
                             "  --query-gpu=*) cat '%1/query-gpu.csv' ;;\n"
                             "  --query-compute-apps=*) ;;\n"
                             "  *) exit 2 ;;\nesac\n")
                      .arg(fix)
                      .toUtf8());
    smi.close();
    ok = smi.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    qputenv("PATH", m_bin->path().toUtf8() + ':' + m_oldPath);
    qputenv("TRAINYARD_AGENT_NO_NVML", "1");
}

StandInGpu::~StandInGpu()
{
    qputenv("PATH", m_oldPath);
    qunsetenv("TRAINYARD_AGENT_NO_NVML");
}

JobSpec parsedSpec(const QString& yaml, const QString& fileName, const QString& baseDir)
{
    auto s = parseJobSpec(yaml, fileName, baseDir);
    if (!s)
        qFatal("%s", qPrintable(s.error().message));
    return *s;
}

QList<RunRecord> attemptsOf(const ResultStore& store, RunId first)
{
    const auto run = store.run(first);
    if (!run)
        return {};
    const RunGroupId group = groupIdOf(*run, RunGroupKind::Attempts);
    if (group == 0)
        return {*run};
    QList<RunRecord> out;
    for (const auto& [id, m] : store.groupMembers(group))
        if (const auto r = store.run(id))
            out.append(*r);
    return out;
}

LocalEngine::LocalEngine() = default;

LocalEngine::~LocalEngine()
{
    close();
}

QString LocalEngine::open(const QString& db, const QString& agentState, bool withRetries)
{
    close();
    auto opened = ResultStore::open(db);
    if (!opened)
        return opened.error().message;
    store = std::move(*opened);
    engine = std::make_unique<RunEngine>(store.get(), db);
    engine->addLocalNode(agentPath(), agentState);
    if (!engine->acquireIngestion())
        return QStringLiteral("another process ingests the runs of ") + db;
    if (withRetries) {
        retries = std::make_unique<RetryRunner>(engine.get(), store.get());
        retries->setJitterSource([] { return 0.0; });
    }
    return {};
}

void LocalEngine::close()
{
    retries.reset();
    engine.reset();
    store.reset();
}

} // namespace ty::test
