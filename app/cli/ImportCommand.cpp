#include "ImportCommand.h"

#include "Cli.h"

#include "core/service/ServiceClient.h"
#include "core/store/ResultStore.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QTextStream>

namespace ty::cli {

// Metrics a framework wrote to files (Lightning's metrics.csv, TensorBoard
// event files, Hugging Face trainer_state.json, JSON lines) into a run.
int cmdImport(Context& ctx, const QStringList& args)
{
    if (args.size() < 2)
        return usageError(QStringLiteral("import needs RUN and at least one FILE"));
    auto run = findRun(*ctx.store, args.front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    // The service reads each file and writes its points (the database's one writer).
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    int status = Ok;
    for (const QString& file : args.mid(1)) {
        const auto imported = svc->call(QStringLiteral("import_metrics"),
                {{QStringLiteral("run"), run->id}, {QStringLiteral("file"), QFileInfo(file).absoluteFilePath()}});
        if (!imported) {
            err() << imported.error().message << '\n';
            if (imported.error().kind != ErrorKind::InvalidInput)
                return Unavailable;
            status = InvalidSpec;
            continue;
        }
        QStringList keys;
        for (const QJsonValue& k : imported->value(QStringLiteral("keys")).toArray())
            keys << k.toString();
        out() << file << ": " << imported->value(QStringLiteral("points")).toInteger() << " points of " << keys.size()
              << " metric(s) (" << escapedJoin(keys, QStringLiteral(", ")) << ") from "
              << imported->value(QStringLiteral("format")).toString() << " into run " << run->id << '\n';
        if (const QJsonObject params = imported->value(QStringLiteral("params")).toObject(); !params.isEmpty()) {
            QStringList pairs;
            for (auto it = params.begin(); it != params.end(); ++it)
                pairs.append(it.key() + u'=' + it.value().toString());
            out() << file << ": " << params.size() << " param(s) (" << pairs.join(QStringLiteral(", ")) << ") into run "
                  << run->id << '\n';
        }
        for (const QJsonValue& w : imported->value(QStringLiteral("warnings")).toArray())
            err() << escapedName(w.toString()) << '\n'; // each names the file and what was skipped
        if (imported->contains(QStringLiteral("error"))) {
            err() << file << ": stopped at byte " << imported->value(QStringLiteral("error_offset")).toInteger() << ": "
                  << imported->value(QStringLiteral("error")).toString() << " (the points before it were imported)\n";
            status = RunFailed;
        }
    }
    return status;
}

} // namespace ty::cli
