#include "RunControlCommands.h"

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

int cmdLogs(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN"), QStringLiteral("run id or name"));
    p.addOption({QStringLiteral("follow"), QStringLiteral("keep printing until the run ends")});
    if (!p.parse(QStringList{QStringLiteral("logs")} + args) || p.positionalArguments().size() != 1)
        return usageError(p.errorText().isEmpty() ? QStringLiteral("logs needs exactly one RUN") : p.errorText());
    auto run = findRun(*ctx.store, p.positionalArguments().front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    const bool follow = p.isSet(QStringLiteral("follow"));
    // Without --follow and no other process ingesting: store what the node
    // has first, then print the stored copy. What is shown is then kept, also
    // if the node's console is emptied before anything else stores it.
    std::optional<QStringList> behind;
    if (!follow && !isTerminal(run->state)) {
        behind = catchUp(ctx);
        if (behind)
            run = ctx.store->run(run->id);
        if (!run) {
            err() << run.error().message << '\n';
            return NoSuchRun;
        }
    }
    qint64 printed = 0;
    if (!run->consolePath.isEmpty()) {
        QFile f(run->consolePath);
        if (f.open(QIODevice::ReadOnly)) {
            while (!f.atEnd()) {
                const QByteArray chunk = f.read(1 << 20);
                ::fwrite(chunk.constData(), 1, size_t(chunk.size()), stdout);
                printed += chunk.size();
            }
            ::fflush(stdout);
        }
    }
    if (isTerminal(run->state) && !follow)
        return Ok;
    if (isTerminal(run->state))
        return exitStatusOf(*run);
    const auto nodeDown = [&] {
        err() << "trainyardctl: printed the console as stored here (" << printed << " bytes); the rest is on node "
              << escapedName(run->node) << ", which cannot be reached\n";
        return Unavailable;
    };
    // Not started yet (the service schedules it): without --follow there
    // is nothing on a node to wait for; the watch would wait until it starts.
    if (!follow
            && (run->agentRunId.isEmpty() || run->state == RunState::Queued || run->state == RunState::Held
                    || run->state == RunState::Starting)) {
        err() << "trainyardctl: run " << run->id << " is " << runStateName(run->state)
              << "; it has printed nothing yet\n";
        return Ok;
    }
    if (!follow) {
        // The service stored and this printed what the node had, unless the
        // node could not be reached or the service not asked.
        if (ctx.store->isReadOnly())
            return Ok; // as last recorded in it (said above)
        if (behind && !behind->contains(run->node.isEmpty() ? QStringLiteral("local") : run->node))
            return Ok;
        return nodeDown();
    }
    // Following: the rest as the service records it, from what was printed.
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    Follower follower(*svc, run->id, true, printed);
    NodeWatch watch(*svc, run->node.isEmpty() ? QStringLiteral("local") : run->node, [](const QString&) {});
    QObject::connect(
            svc.get(), &service::ServiceClient::disconnected, &follower, [] { QCoreApplication::exit(kServiceGone); });
    if (auto w = svc->call(QStringLiteral("watch"),
                {{QStringLiteral("run"), run->id}, {QStringLiteral("console"), true},
                        {QStringLiteral("from"), printed}});
            !w) {
        err() << "trainyardctl: " << escapedName(w.error().message) << '\n';
        return Unavailable;
    }
    std::signal(SIGINT, onSigint);
    const int loop = QCoreApplication::exec();
    std::signal(SIGINT, SIG_DFL);
    if (loop == 130)
        return 130;
    if (loop == kServiceGone) {
        err() << "trainyardctl: the Trainyard service stopped while run " << run->id << " was going\n";
        return Unavailable;
    }
    const auto finished = follower.last() ? Result<RunRecord>(*follower.last()) : ctx.store->run(run->id);
    return finished ? exitStatusOf(*finished) : Unavailable;
}

int cmdCancel(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN"), QStringLiteral("run id or name"));
    p.addOption({QStringLiteral("grace"), QStringLiteral("seconds between SIGTERM and SIGKILL"),
            QStringLiteral("seconds"), QStringLiteral("10")});
    if (!p.parse(QStringList{QStringLiteral("cancel")} + args) || p.positionalArguments().size() != 1)
        return usageError(p.errorText().isEmpty() ? QStringLiteral("cancel needs exactly one RUN") : p.errorText());
    auto run = findRun(*ctx.store, p.positionalArguments().front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    if (isTerminal(run->state)) {
        out() << "run " << run->id << " already " << runStateName(run->state) << '\n';
        return Ok;
    }
    bool ok = false;
    const double grace = p.value(QStringLiteral("grace")).toDouble(&ok);
    if (!ok || grace < 0)
        return usageError(QStringLiteral("--grace needs a number of seconds"));
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    Follower follower(*svc, run->id, false, 0);
    // Ended before the loop runs (another cancel finished the run between the
    // read above and the first poll): the code is kept, not lost to an
    // exit() before exec(), which would leave this command waiting for ever.
    EventWait wait;
    // A waiting run is cancelled in the database; a started one through its
    // node's agent, once the service has it connected (or not at all if it
    // cannot be reached).
    const bool waiting = run->state == RunState::Queued || run->state == RunState::Held;
    const QString node = run->node.isEmpty() ? QStringLiteral("local") : run->node;
    bool sent = false;
    const auto send = [&] {
        if (sent)
            return;
        sent = true;
        if (auto c = svc->call(QStringLiteral("cancel"),
                    {{QStringLiteral("run"), run->id}, {QStringLiteral("grace_ms"), int(grace * 1000)}});
                !c) {
            err() << "trainyardctl: " << escapedName(c.error().message) << '\n';
            wait.done(kNodeDown);
        }
    };
    NodeWatch watch(
            *svc, waiting ? QString() : node,
            [&sent, &wait](const QString&) {
                if (!sent)
                    wait.done(kNodeDown);
            },
            [&] { QTimer::singleShot(0, svc.get(), send); });
    // The end is recorded by the service (for this cancel or another one at
    // the same time): the stored state is read again every 250 ms, for the
    // grace and kCancelWaitMs more at most.
    constexpr qint64 kCancelWaitMs = 30000;
    const qint64 waitMs = qint64(grace * 1000) + kCancelWaitMs;
    StoredRunWait ended(ctx.store.get(), run->id, [](const RunRecord& r) { return isTerminal(r.state); });
    QObject::connect(&ended, &StoredRunWait::satisfied, &watch, [&wait] { wait.done(0); });
    QObject::connect(&ended, &StoredRunWait::timedOut, &watch, [&wait] { wait.done(kStillWaiting); });
    QObject::connect(svc.get(), &service::ServiceClient::cancelFailed, &watch,
            [id = run->id, &ended, &wait](RunId r, const QString& reason) {
                if (r != id)
                    return;
                ended.check(); // ended meanwhile: cancelled, not failed
                if (ended.finished())
                    return;
                err() << "trainyardctl: " << reason << '\n';
                wait.done(kNodeDown);
            });
    QObject::connect(svc.get(), &service::ServiceClient::disconnected, &watch, [&wait] { wait.done(kServiceGone); });
    bool nodeReady = waiting;
    if (!waiting)
        if (const auto status = svc->call(QStringLiteral("status")))
            for (const QJsonValue& n : status->value(QStringLiteral("nodes")).toArray())
                if (n.toObject().value(QStringLiteral("name")).toString() == node)
                    nodeReady = n.toObject().value(QStringLiteral("ready")).toBool();
    if (nodeReady)
        QTimer::singleShot(0, svc.get(), send);
    ended.start(250, waitMs);
    std::signal(SIGINT, onSigint);
    const int loop = wait.exec();
    std::signal(SIGINT, SIG_DFL);
    if (loop == kNodeDown) {
        if (const auto now = ctx.store->run(run->id); now && isTerminal(now->state)) {
            out() << "run " << run->id << " " << runStateName(now->state) << '\n';
            return Ok;
        }
        err() << "trainyardctl: run " << run->id << " was not cancelled: its node " << node
              << " cannot be reached (the run goes on there if it is running)\n";
        return Unavailable;
    }
    if (loop == 130)
        return 130;
    if (loop == kServiceGone) {
        err() << "trainyardctl: the Trainyard service stopped before run " << run->id << " ended\n";
        return Unavailable;
    }
    auto after = ctx.store->run(run->id);
    if (loop == kStillWaiting) {
        err() << "trainyardctl: run " << run->id << " was sent the cancel but is still "
              << (after ? runStateName(after->state) : QStringLiteral("?")) << " after " << waitMs / 1000
              << " s; its end is recorded once its node's agent reports it\n";
        return Unavailable;
    }
    out() << "run " << run->id << " " << (after ? runStateName(after->state) : QStringLiteral("?")) << '\n';
    return Ok;
}

int cmdRm(Context& ctx, const QStringList& args)
{
    if (args.size() != 1)
        return usageError(QStringLiteral("rm needs exactly one RUN"));
    auto run = findRun(*ctx.store, args.front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    if (!isTerminal(run->state)) {
        err() << "run " << run->id << " is " << runStateName(run->state) << ": cancel it first\n";
        return Usage;
    }
    // The service deletes it (the row, then its folder with the console
    // copy and downloaded artifacts), as the GUI's Delete does.
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    if (auto deleted = svc->call(QStringLiteral("delete_run"), {{QStringLiteral("run"), run->id}}); !deleted) {
        err() << "trainyardctl: " << escapedName(deleted.error().message) << '\n';
        // Gone in between (another rm), started again in between, or the service could not.
        switch (deleted.error().kind) {
        case ErrorKind::NotFound: return NoSuchRun;
        case ErrorKind::InvalidInput: return Usage;
        default: return Unavailable;
        }
    }
    out() << "deleted run " << run->id << '\n';
    return Ok;
}

// hold / release / priority / top: change a waiting run, through the
// service (started when not running), whose engine schedules with it.
int cmdQueueOp(Context& ctx, const QString& op, const QStringList& args)
{
    const int want = op == u"priority" ? 2 : 1;
    if (args.size() != want)
        return usageError(op == u"priority" ? QStringLiteral("priority needs RUN and a number")
                                            : QStringLiteral("%1 needs exactly one RUN").arg(op));
    auto run = findRun(*ctx.store, args.front());
    if (!run) {
        err() << run.error().message << '\n';
        return NoSuchRun;
    }
    QJsonObject req{{QStringLiteral("run"), run->id}, {QStringLiteral("action"), op}};
    if (op == u"priority") {
        bool ok = false;
        const int priority = args.at(1).toInt(&ok);
        if (!ok)
            return usageError(QStringLiteral("priority must be an integer, not '%1'").arg(args.at(1)));
        req.insert(QStringLiteral("priority"), priority);
    }
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    const auto done = svc->call(QStringLiteral("queue"), req);
    if (!done) {
        err() << "trainyardctl: " << escapedName(done.error().message) << '\n';
        return done.error().kind == ErrorKind::NotFound ? NoSuchRun : Usage;
    }
    const QJsonObject after = done->value(QStringLiteral("run")).toObject();
    out() << "run " << run->id << " " << after.value(QStringLiteral("state")).toString() << ", priority "
          << after.value(QStringLiteral("priority")).toInt() << '\n';
    return Ok;
}

} // namespace ty::cli
