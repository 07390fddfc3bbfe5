// core/slurm/SlurmBatch.h: a run as an sbatch job, exact options and script.
// core/slurm/SlurmArrays.h: which runs of a pass go together as job arrays.
// The script is also run by a real bash (without Slurm: srun and scontrol
// are stand-ins on PATH) to check what the command receives.
#include "core/slurm/SlurmArrays.h"
#include "core/slurm/SlurmBatch.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

namespace {
JobSpec parsed(const QString& yaml)
{
    auto s = parseJobSpec(yaml, QStringLiteral("job.yaml"), QStringLiteral("/tmp"));
    if (!s)
        qFatal("%s", qPrintable(s.error().message));
    return *s;
}

RunRecord runOf(const JobSpec& spec, RunId id)
{
    RunRecord r;
    r.id = id;
    r.name = spec.name;
    r.argv = spec.argv;
    return r;
}
} // namespace

class TestSlurmBatch final : public QObject {
    Q_OBJECT

    // The batch script run as Slurm would on node `nodeId` of `nnodes` (job
    // 123456), with a stand-in for srun that runs its command once, as that
    // node would; its output (the command is `env`) split in lines.
    static QStringList runAsSlurmWould(const slurm::Submission& s, int nnodes, int nodeId)
    {
        QTemporaryDir dir;
        const auto write = [&dir](const QString& name, const QByteArray& text) {
            QFile f(dir.filePath(name));
            if (!f.open(QIODevice::WriteOnly))
                return;
            f.write(text);
            f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        };
        write(QStringLiteral("srun"),
                QStringLiteral("#!/bin/bash\nwhile [[ $1 == -* ]]; do shift; done\nSLURM_NODEID=%1 exec \"$@\"\n")
                        .arg(nodeId)
                        .toUtf8());
        write(QStringLiteral("job.sbatch"), s.script.toUtf8());
        QProcess bash;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), dir.path() + u':' + env.value(QStringLiteral("PATH")));
        env.insert(QStringLiteral("SLURM_JOB_ID"), QStringLiteral("123456"));
        env.insert(QStringLiteral("SLURM_NNODES"), QString::number(nnodes));
        env.insert(QStringLiteral("SLURM_JOB_NODELIST"), QStringLiteral("n[17-18]"));
        bash.setProcessEnvironment(env);
        bash.start(QStringLiteral("/bin/bash"), {dir.filePath(QStringLiteral("job.sbatch"))});
        bash.waitForFinished();
        return QString::fromUtf8(bash.readAllStandardOutput()).split(u'\n');
    }

private Q_SLOTS:
    void optionsFromTheSpec()
    {
        const JobSpec spec = parsed(QStringLiteral("name: big\ncommand: [python3, train.py]\n"
                                                   "resources: {gpus: 2, cpus: 8, memory: 64G}\n"
                                                   "time_limit: 1h30m\n"
                                                   "slurm: {partition: gpu, account: lab, qos: high, constraint: ib,"
                                                   " gpu_type: a100, sbatch: [--exclusive]}\n"));
        const slurm::Submission s = slurm::submissionFor(spec, runOf(spec, 7));
        QCOMPARE(s.sbatch,
                (QStringList{QStringLiteral("--partition=gpu"), QStringLiteral("--account=lab"),
                        QStringLiteral("--qos=high"), QStringLiteral("--constraint=ib"),
                        QStringLiteral("--gres=gpu:a100:2"), QStringLiteral("--cpus-per-task=8"),
                        QStringLiteral("--mem=65536M"), QStringLiteral("--time=0-01:30:00"),
                        QStringLiteral("--exclusive")}));
        QCOMPARE(s.script,
                QStringLiteral("#!/bin/bash\n"
                               "# Trainyard run 7 \"big\", submitted by Trainyard: its output is the "
                               "run's console.\n"
                               "exec python3 train.py\n"));
    }

    void retriesAskForRequeueAndAWarning()
    {
        const JobSpec spec = parsed(QStringLiteral("command: [ls]\nretry: 2\nresources: {gpus: 1}\n"));
        QCOMPARE(slurm::submissionFor(spec, runOf(spec, 1)).sbatch,
                (QStringList{QStringLiteral("--gres=gpu:1"), QStringLiteral("--requeue"),
                        QStringLiteral("--signal=B:USR1@120")}));
        const JobSpec own = parsed(QStringLiteral("command: [ls]\nslurm: {signal_grace: 5m}\n"));
        QCOMPARE(slurm::submissionFor(own, runOf(own, 1)).sbatch, QStringList{QStringLiteral("--signal=B:USR1@300")});
        const JobSpec none = parsed(QStringLiteral("command: [ls]\n"));
        QCOMPARE(slurm::submissionFor(none, runOf(none, 1)).sbatch, QStringList());
    }

    // Hostile names and arguments stay words: nothing in them runs.
    void argumentsAreQuoted()
    {
        const JobSpec spec
                = parsed(QStringLiteral("name: \"x\\ny; rm -rf /\"\ncommand: [echo, \"$(id)\", \"a'b\", \"\"]\n"));
        const slurm::Submission s = slurm::submissionFor(spec, runOf(spec, 3));
        QCOMPARE(s.script,
                QStringLiteral("#!/bin/bash\n"
                               "# Trainyard run 3 \"x y; rm -rf /\", submitted by Trainyard: its output is "
                               "the run's console.\n"
                               "exec echo '$(id)' 'a'\\''b' ''\n"));
        QTemporaryDir dir;
        const QString script = dir.filePath(QStringLiteral("job.sbatch"));
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(s.script.toUtf8());
        f.close();
        QProcess bash;
        bash.start(QStringLiteral("/bin/bash"), {script});
        QVERIFY(bash.waitForFinished());
        QCOMPARE(bash.readAllStandardOutput(), QByteArray("$(id) a'b \n"));
    }

    // A gang: one srun, NODE_RANK from SLURM_NODEID, the rendezvous from the allocation.
    void gangLaunchesOneTaskPerNode()
    {
        const JobSpec spec = parsed(QStringLiteral("command: [env]\nresources: {nodes: 2, gpus: 4}\n"));
        const slurm::Submission s = slurm::submissionFor(spec, runOf(spec, 9));
        QCOMPARE(s.sbatch,
                (QStringList{QStringLiteral("--gres=gpu:4"), QStringLiteral("--nodes=2"),
                        QStringLiteral("--ntasks-per-node=1")}));
        const QStringList vars = runAsSlurmWould(s, 2, 1);
        for (const QString& expected : {QString(QStringLiteral("MASTER_ADDR=") + QSysInfo::machineHostName()),
                     QStringLiteral("MASTER_PORT=23456"), QStringLiteral("NNODES=2"),
                     QStringLiteral("NPROC_PER_NODE=4"), QStringLiteral("WORLD_SIZE=8"), QStringLiteral("NODE_RANK=1")})
            QVERIFY2(vars.contains(expected), qPrintable(expected + QStringLiteral(" in:\n") + vars.join(u'\n')));
        QVERIFY(!vars.join(u'\n').contains(u"PET_"_qs));
    }

    // An elastic gang: Slurm's node range, and torchrun's elastic rendezvous
    // with the nodes Slurm gave (here 3 of 2..4), rank 0 holding the store.
    void elasticGangAsksForARange()
    {
        const JobSpec spec = parsed(QStringLiteral("command: [env]\nresources: {nodes: {min: 2, max: 4}, gpus: 2}\n"));
        const slurm::Submission s = slurm::submissionFor(spec, runOf(spec, 9));
        QCOMPARE(s.sbatch, (QStringList{QStringLiteral("--gres=gpu:2"), QStringLiteral("--nodes=2-4")}));
        const QString endpoint = QSysInfo::machineHostName() + u":23456"_qs;
        for (int nodeId : {0, 2}) {
            const QStringList vars = runAsSlurmWould(s, 3, nodeId);
            for (const QString& expected : {QStringLiteral("NNODES=3"), QStringLiteral("WORLD_SIZE=6"),
                         QStringLiteral("NODE_RANK=%1").arg(nodeId), QStringLiteral("PET_NNODES=2:4"),
                         QStringLiteral("TRAINYARD_NNODES=2:4"), QStringLiteral("PET_NPROC_PER_NODE=2"),
                         QStringLiteral("PET_RDZV_BACKEND=c10d"), QString(u"PET_RDZV_ENDPOINT="_qs + endpoint),
                         QStringLiteral("PET_RDZV_ID=123456"),
                         QStringLiteral("PET_RDZV_CONF=is_host=%1").arg(nodeId == 0 ? 1 : 0)})
                QVERIFY2(vars.contains(expected), qPrintable(expected + QStringLiteral(" in:\n") + vars.join(u'\n')));
        }
    }

    // A sweep's runs for one login node with the same options are one array,
    // in their order; another node, another sweep, other options, a run that
    // cannot be a task, or no sweep: apart. Full arrays continue in a new one.
    void sweepsForOneNodeBecomeArrays()
    {
        const QStringList gpu1{QStringLiteral("--gres=gpu:1")};
        const QStringList gpu2{QStringLiteral("--gres=gpu:2")};
        const auto c = [](const char* node, RunGroupId sweep, const QStringList& sbatch, bool eligible = true) {
            return slurm::ArrayCandidate{QString::fromLatin1(node), sweep, sbatch, eligible};
        };
        const QList<slurm::ArrayCandidate> runs{
                c("hpc", 4, gpu1),        // 0: array A
                c("hpc", 0, gpu1),        // 1: no sweep
                c("hpc", 4, gpu1),        // 2: array A
                c("other", 4, gpu1),      // 3: another node, alone in its group
                c("hpc", 4, gpu2),        // 4: other options: array B
                c("hpc", 5, gpu1),        // 5: another sweep, alone
                c("hpc", 4, gpu1, false), // 6: needs a sync
                c("hpc", 4, gpu2),        // 7: array B
                c("hpc", 4, gpu1),        // 8: array A
        };
        const slurm::SubmissionPlan plan = slurm::planSubmissions(runs);
        QCOMPARE(plan.arrays, (QList<QList<qsizetype>>{{0, 2, 8}, {4, 7}}));
        QCOMPARE(plan.single, (QList<qsizetype>{1, 3, 5, 6}));

        const slurm::SubmissionPlan chunked = slurm::planSubmissions(runs, 2);
        QCOMPARE(chunked.arrays, (QList<QList<qsizetype>>{{0, 2}, {4, 7}}));
        QCOMPARE(chunked.single, (QList<qsizetype>{1, 3, 5, 6, 8}));

        const slurm::SubmissionPlan none = slurm::planSubmissions(runs, 1);
        QVERIFY(none.arrays.isEmpty());
        QCOMPARE(none.single.size(), runs.size());
    }
};

QTEST_GUILESS_MAIN(TestSlurmBatch)
#include "TestSlurmBatch.moc"
