#include "CacheReport.h"

#include "core/memo/FileDigest.h"
#include "core/store/ResultStore.h"
#include "core/store/RunNotice.h"

#include <QLocale>

namespace ty {

namespace {

QString when(const QDateTime& t)
{
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QStringLiteral("-");
}

} // namespace

QStringList describeEntry(const MemoEntry& e)
{
    const MemoComponents& c = e.components;
    QStringList lines;
    lines << QStringLiteral("made by run %1 at %2 (pipeline %3), hit %4 times%5")
                     .arg(e.run)
                     .arg(when(e.created), e.pipeline)
                     .arg(e.hitCount)
                     .arg(e.lastHit.isValid() ? QStringLiteral(", last at ") + when(e.lastHit) : QString());
    lines << QStringLiteral("command   ") + (c.command.isEmpty() ? c.argv.join(u' ') : c.command);
    for (auto it = c.params.cbegin(); it != c.params.cend(); ++it)
        lines << QStringLiteral("param     %1 = %2").arg(it.key(), it.value());
    for (auto it = c.upstream.cbegin(); it != c.upstream.cend(); ++it)
        lines << QStringLiteral("upstream  %1 %2").arg(it.key(), it.value().left(12));
    if (!c.gpuType.isEmpty() || c.gpuCount)
        lines << QStringLiteral("gpus      %1 %2").arg(c.gpuCount).arg(c.gpuType);
    lines << QStringLiteral("code      %1 files, %2").arg(c.codeFiles.size()).arg(treeDigest(c.codeFiles).left(12));
    if (!c.keyExtra.isEmpty())
        lines << QStringLiteral("key_extra ") + c.keyExtra;
    if (!c.ignored.isEmpty())
        lines << QStringLiteral("ignored   ") + c.ignored.join(QStringLiteral(", "));
    for (const MemoOutput& o : e.outputs)
        lines << QStringLiteral("output    %1 %2 %3")
                         .arg(o.path, QLocale::c().formattedDataSize(o.size, 1, QLocale::DataSizeTraditionalFormat),
                                 o.sha256.left(12));
    for (auto it = e.outputParams.cbegin(); it != e.outputParams.cend(); ++it)
        lines << QStringLiteral("value     %1 = %2").arg(it.key(), it.value());
    return lines;
}

StepRunWhy lastRunOf(const ResultStore& store, const QString& step, const std::optional<QString>& pipeline)
{
    StepRunWhy out;
    // The newest pipeline (of that name) that ran the step: its groups
    // newest first, the first one holding a run of the step.
    const QList<RunGroupRecord> pipelines = store.groups(RunGroupKind::Pipeline);
    for (auto g = pipelines.crbegin(); g != pipelines.crend() && !out.run; ++g) {
        if (pipeline && g->name != *pipeline)
            continue;
        for (const auto& [run, m] : store.groupMembers(g->id)) {
            const qsizetype bracket = m.role.indexOf(u'[');
            if ((bracket > 0 ? m.role.left(bracket) : m.role) == step)
                out.run = std::max(out.run, run);
        }
    }
    // The newest one's notices only (read once, not for every run of the step).
    if (out.run)
        for (const RunNotice& n : store.notices(out.run))
            if (n.text.startsWith(QStringLiteral("ran because: ")) || n.text.startsWith(QStringLiteral("memoization:")))
                out.why = n.text;
    return out;
}

} // namespace ty
