#include "ValidateCommand.h"

#include "Cli.h"
#include "RunWait.h"

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

int cmdValidate(const QStringList& args)
{
    if (args.size() != 1)
        return usageError(QStringLiteral("validate needs exactly one FILE"));
    const auto spec = parseJobSpecFile(args.front());
    if (!spec) {
        err() << spec.error().message << '\n';
        return InvalidSpec;
    }
    out() << args.front() << ": ok: run '" << escapedName(spec->name)
          << "': " << escapedJoin(spec->argv, QStringLiteral(" ")) << "\n  in " << escapedName(spec->workdir);
    if (spec->resources.gpus)
        out() << ", " << spec->resources.gpus << " GPU(s)";
    if (!spec->params.isEmpty())
        out() << ", " << spec->params.size() << " param(s)";
    out() << '\n';
    if (!spec->sweep.isEmpty()) {
        // Every combination is a spec of its own: each must be valid too.
        const auto runs = expandSweep(*spec);
        if (!runs) {
            err() << runs.error().message << '\n';
            return InvalidSpec;
        }
        QStringList axes;
        for (auto it = spec->sweep.cbegin(); it != spec->sweep.cend(); ++it)
            axes << QStringLiteral("%1 x %2").arg(escapedName(it.key())).arg(it.value().size());
        out() << "  sweep of " << runs->size() << " runs (" << axes.join(QStringLiteral(", ")) << ')';
        if (spec->maxConcurrent)
            out() << ", at most " << spec->maxConcurrent << " at once";
        out() << '\n';
    }
    return Ok;
}

} // namespace ty::cli
