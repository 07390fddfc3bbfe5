#include "SlurmBatch.h"

#include "core/common/ShellQuote.h"
#include "core/slurm/SlurmText.h"

namespace ty::slurm {
namespace {

QString quotedArgv(const QStringList& argv)
{
    QStringList words;
    words.reserve(argv.size());
    for (const QString& a : argv)
        words << shellQuote(a);
    return words.join(u' ');
}

// The run's name on a comment line: no newline can end the comment early.
QString commentSafe(QString text)
{
    for (QChar& c : text)
        if (c == u'\n' || c == u'\r')
            c = u' ';
    return text;
}

} // namespace

Submission submissionFor(const JobSpec& spec, const RunRecord& run)
{
    Submission out;
    const JobSpec::SlurmOptions& s = spec.slurm;
    const ResourceRequest& res = spec.resources;
    const auto add = [&out](const QString& option, const QString& value) {
        if (!value.isEmpty())
            out.sbatch << option + u'=' + value;
    };
    add(QStringLiteral("--partition"), s.partition);
    add(QStringLiteral("--account"), s.account);
    add(QStringLiteral("--qos"), s.qos);
    add(QStringLiteral("--constraint"), s.constraint);
    if (res.gpus > 0)
        add(QStringLiteral("--gres"),
                s.gpuType.isEmpty() ? QStringLiteral("gpu:%1").arg(res.gpus)
                                    : QStringLiteral("gpu:%1:%2").arg(s.gpuType).arg(res.gpus));
    if (res.cpus > 0)
        add(QStringLiteral("--cpus-per-task"), QString::number(res.cpus));
    if (res.memoryMiB > 0)
        add(QStringLiteral("--mem"), QStringLiteral("%1M").arg(res.memoryMiB));
    if (spec.timeLimitSec && *spec.timeLimitSec > 0)
        add(QStringLiteral("--time"), QString::fromStdString(formatTimeLimit(*spec.timeLimitSec)));
    const int nodes = std::max(1, res.nodes);
    const bool elastic = res.elastic();
    const int nodesMax = elastic ? std::max(nodes, res.nodesMax) : nodes;
    if (elastic) {
        // Slurm gives it as many nodes as are free within the range, at least
        // min (sbatch --nodes=min-max), one task each by default. Not with
        // --ntasks-per-node=1: with it, Slurm 22.05 (cons_tres) allocates the
        // range's minimum even with every node idle (seen on the test
        // cluster: TestSlurmNodes::elasticGangTakesTheNodesSlurmHas). The
        // batch script's srun starts one task per node.
        add(QStringLiteral("--nodes"), QStringLiteral("%1-%2").arg(nodes).arg(nodesMax));
    } else if (nodes > 1) {
        add(QStringLiteral("--nodes"), QString::number(nodes));
        add(QStringLiteral("--ntasks-per-node"), QStringLiteral("1"));
    }
    if (spec.retry)
        out.sbatch << QStringLiteral("--requeue");
    const qint64 grace = s.signalGraceSec > 0 ? s.signalGraceSec : (spec.retry ? 120 : 0);
    if (grace > 0)
        add(QStringLiteral("--signal"), QStringLiteral("B:USR1@%1").arg(grace));
    out.sbatch << s.sbatch;

    QString& sh = out.script;
    sh = QStringLiteral("#!/bin/bash\n"
                        "# Trainyard run %1 \"%2\", submitted by Trainyard: its output is the run's console.\n")
                 .arg(run.id)
                 .arg(commentSafe(run.name));
    if (nodes <= 1 && !elastic) {
        sh += QStringLiteral("exec %1\n").arg(quotedArgv(run.argv));
        return out;
    }
    const int nprocPerNode = std::max(1, res.gpus);
    sh += QStringLiteral("export MASTER_ADDR=\"$(hostname)\"\n"
                         "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))\n"
                         "export NNODES=\"$SLURM_NNODES\" NPROC_PER_NODE=%1\n"
                         "export WORLD_SIZE=$((SLURM_NNODES * NPROC_PER_NODE))\n")
                  .arg(nprocPerNode);
    if (elastic) // torchrun's elastic rendezvous, as on Trainyard's own nodes (core/sched/ElasticRendezvous.h)
        sh += QStringLiteral("export PET_NNODES=%1:%2 TRAINYARD_NNODES=%1:%2 PET_NPROC_PER_NODE=%3\n"
                             "export PET_RDZV_BACKEND=c10d PET_RDZV_ENDPOINT=\"$MASTER_ADDR:$MASTER_PORT\" "
                             "PET_RDZV_ID=\"$SLURM_JOB_ID\"\n")
                      .arg(nodes)
                      .arg(nodesMax)
                      .arg(nprocPerNode);
    const QString rankSetup = elastic
            ? QStringLiteral("export NODE_RANK=\"$SLURM_NODEID\"; "
                             "if [ \"$SLURM_NODEID\" = 0 ]; then export PET_RDZV_CONF=is_host=1; "
                             "else export PET_RDZV_CONF=is_host=0; fi; ")
            : QStringLiteral("export NODE_RANK=\"$SLURM_NODEID\"; ");
    sh += QStringLiteral("exec srun --nodes=\"$SLURM_NNODES\" --ntasks-per-node=1 --kill-on-bad-exit=1 \\\n"
                         "    /bin/bash -c '%1exec \"$@\"' trainyard-rank %2\n")
                  .arg(rankSetup, quotedArgv(run.argv));
    return out;
}

} // namespace ty::slurm
