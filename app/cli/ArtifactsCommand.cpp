#include "ArtifactsCommand.h"

#include "Cli.h"
#include "RunWait.h"
#include "EventWait.h"

#include "core/common/Paths.h"
#include "core/common/Run.h"
#include "core/nodes/AgentClient.h"
#include "core/nodes/NodeTransports.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/runs/RunEngine.h"
#include "core/runs/StoredRunWait.h"
#include "core/service/ServiceClient.h"
#include "core/service/ServiceProtocol.h"
#include "core/spec/JobSpec.h"
#include "core/spec/Rerun.h"
#include "core/store/ResultStore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QTextStream>
#include <QTimer>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unistd.h>

namespace ty::cli {

// trainyardctl artifacts RUN [--download DIR]: the files of the run matching
// its spec's `artifacts` globs (asked from its node, recorded in the
// database); --download copies them (default: the run's local results folder,
// <db>.runs/<id>/artifacts). Refused names are listed and make the exit code 5.
int cmdArtifacts(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN"), QStringLiteral("run id or name"));
    p.addOption({QStringLiteral("download"), QStringLiteral("copy them into DIR"), QStringLiteral("DIR")});
    p.addOption({QStringLiteral("to-results"), QStringLiteral("copy them into the run's local results folder")});
    if (!p.parse(QStringList{QStringLiteral("artifacts")} + args) || p.positionalArguments().size() != 1)
        return usageError(p.errorText().isEmpty() ? QStringLiteral("artifacts needs exactly one RUN") : p.errorText());
    auto run = findRun(*ctx.store, p.positionalArguments().front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    QString dest = p.value(QStringLiteral("download"));
    if (dest.isEmpty() && p.isSet(QStringLiteral("to-results")))
        dest = runDataDir(ctx.dbPath, run->id) + QStringLiteral("/artifacts");
    // Nothing to ask a node for: said at once, as the GUI does. Not an error
    // (exit 0, like an empty listing): the run did what its spec asked.
    const Result<JobSpec> spec = parseJobSpec(run->specYaml, QStringLiteral("run %1 spec").arg(run->id),
            run->workdir.isEmpty() ? QDir::rootPath() : run->workdir);
    if (spec && spec->artifacts.isEmpty()) {
        err() << "trainyardctl: run " << run->id << " (" << escapedName(run->name)
              << ") has no artifacts: its job spec declares no `artifacts:` globs\n";
        return Ok;
    }
    auto engine = makeEngine(ctx, run->node, false);
    int code = Ok;
    EventWait wait;
    auto print = [&](const AgentFileList& l) {
        QList<AgentFileEntry> files = l.files; // by path, as ls lists them
        std::sort(files.begin(), files.end(),
                [](const AgentFileEntry& a, const AgentFileEntry& b) { return a.absolutePath < b.absolutePath; });
        for (const AgentFileEntry& f : std::as_const(files))
            out() << escapedName(f.absolutePath) << '\t' << f.size << '\t' << f.type
                  << (f.type == u"symlink" ? QStringLiteral(" -> ") + escapedName(f.linkTarget) : QString()) << '\n';
    };
    if (dest.isEmpty()) {
        engine->listArtifacts(run->id, [&](const Result<AgentFileList>& l) {
            if (!l) {
                err() << "trainyardctl: " << l.error().message << '\n';
                code = Unavailable;
            } else {
                print(*l);
            }
            wait.done(0);
        });
    } else {
        engine->downloadArtifacts(run->id, dest, [&](const Result<ArtifactDownload>& d) {
            if (!d) {
                err() << "trainyardctl: " << d.error().message << '\n';
                code = Unavailable;
            } else {
                for (const QString& f : d->downloaded)
                    out() << "downloaded " << escapedName(QDir(dest).filePath(f)) << '\n';
                for (const QString& r : d->refused)
                    err() << "trainyardctl: run " << run->id << ": artifact " << escapedName(r) << '\n';
                if (!d->refused.isEmpty())
                    code = Unavailable;
            }
            wait.done(0);
        });
    }
    wait.exec(); // the answer may have come already (a run that never started)
    ctx.store->flush();
    return code;
}

} // namespace ty::cli
