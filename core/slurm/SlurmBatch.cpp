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
    if (nodes > 1) {
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
    if (nodes <= 1) {
        sh += QStringLiteral("exec %1\n").arg(quotedArgv(run.argv));
        return out;
    }
    const int nprocPerNode = std::max(1, res.gpus);
    sh += QStringLiteral("export MASTER_ADDR=\"$(hostname)\"\n"
                         "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))\n"
                         "export NNODES=\"$SLURM_NNODES\" NPROC_PER_NODE=%1\n"
                         "export WORLD_SIZE=$((SLURM_NNODES * NPROC_PER_NODE))\n"
                         "exec srun --nodes=\"$SLURM_NNODES\" --ntasks-per-node=1 --kill-on-bad-exit=1 \\\n"
                         "    /bin/bash -c 'export NODE_RANK=\"$SLURM_NODEID\"; exec \"$@\"' trainyard-rank %2\n")
                  .arg(nprocPerNode)
                  .arg(quotedArgv(run.argv));
    return out;
}

} // namespace ty::slurm
