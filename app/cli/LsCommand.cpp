#include "LsCommand.h"

#include "Cli.h"

#include "core/common/FailureKind.h"
#include "core/common/Run.h"
#include "core/store/ResultStore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTextStream>

#include <algorithm>

namespace ty::cli {

int cmdLs(Context& ctx, const QStringList& args)
{
    const bool json = args.contains(QStringLiteral("--json"));
    const bool withArchived = args.contains(QStringLiteral("--archived"));
    for (const QString& a : args)
        if (a != u"--json" && a != u"--archived")
            return usageError(QStringLiteral("ls: unknown argument '%1'").arg(a));
    catchUp(ctx);
    QList<RunRecord> runs = ctx.store->runs();
    if (!withArchived) // archived runs (trainyardctl archive, the GUI) are left out, as in the GUI's table
        runs.removeIf([](const RunRecord& r) { return r.archived; });
    const QMap<RunId, QList<RunNotice>> notices = ctx.store->allNotices();
    if (json) {
        QJsonArray arr;
        for (const RunRecord& r : runs)
            arr.append(runJson(*ctx.store, r, notices.value(r.id)));
        printJson(QJsonDocument(arr));
        return Ok;
    }
    // Names are never cut: sweep runs differ at their end
    // (digits[lr=0.001], digits[lr=0.0003]).
    qsizetype nameWidth = 20;
    for (const RunRecord& r : runs)
        nameWidth = std::max(nameWidth, escapedName(r.name).size());
    // "failed (CUDA OOM)": a failed run's state with its kind's short label.
    const auto stateText = [](const RunRecord& r) {
        return r.state == RunState::Failed && r.failureKind != FailureKind::None
                ? QStringLiteral("%1 (%2)").arg(runStateName(r.state), failureKindLabel(r.failureKind))
                : runStateName(r.state);
    };
    qsizetype stateWidth = 10;
    for (const RunRecord& r : runs)
        stateWidth = std::max(stateWidth, stateText(r).size());
    out() << QStringLiteral("%1  %2 %3 %4 %5 %6 %7  %8\n")
                     .arg(QStringLiteral("ID"), 5)
                     .arg(QStringLiteral("NAME"), -int(nameWidth))
                     .arg(QStringLiteral("STATE"), -int(stateWidth))
                     .arg(QStringLiteral("NODE"), -8)
                     .arg(QStringLiteral("GPUS"), -5)
                     .arg(QStringLiteral("STARTED"), -19)
                     .arg(QStringLiteral("DURATION"), -8)
                     .arg(QStringLiteral("METRICS"));
    for (const RunRecord& r : runs) {
        QStringList shown;
        const auto latest = ctx.store->latestMetrics(r.id);
        for (auto it = latest.cbegin(); it != latest.cend(); ++it)
            if (it.key().contains(QStringLiteral("acc")) || it.key().contains(QStringLiteral("loss")))
                shown.append(escapedName(it.key()) + u'=' + formatValue(it.value().value));
        if (const QString& why = r.pendingReason.isEmpty() ? r.failureReason : r.pendingReason;
                r.state != RunState::Succeeded && !why.isEmpty())
            shown.append(QStringLiteral("(%1)").arg(escapedName(why)));
        if (const qsizetype n = notices.value(r.id).size())
            shown.append(n == 1 ? QStringLiteral("[1 notice]") : QStringLiteral("[%1 notices]").arg(n));
        if (r.archived)
            shown.append(QStringLiteral("[archived]"));
        out() << QStringLiteral("%1  %2 %3 %4 %5 %6 %7  %8\n")
                         .arg(r.id, 5)
                         .arg(escapedName(r.name), -int(nameWidth))
                         .arg(stateText(r), -int(stateWidth))
                         .arg(r.node.isEmpty() ? QStringLiteral("-") : escapedName(r.node), -8)
                         .arg(gpuList(r.gpus), -5)
                         .arg(localTime(r.startedAt), -19)
                         .arg(duration(r), -8)
                         .arg(shown.join(u' '));
    }
    return Ok;
}

} // namespace ty::cli
