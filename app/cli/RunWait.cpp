#include "RunWait.h"

#include "CliPassphrase.h"

#include "core/common/Paths.h"
#include "core/common/Run.h"
#include "core/nodes/AgentClient.h"
#include "core/nodes/NodeTransports.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/retry/RetryRunner.h"
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
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unistd.h>

namespace ty::cli {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void onSigint(int)
{
    g_interrupted = 1;
}

namespace {
void sayRetry(const ResultStore& store, const RunRecord& run);
} // namespace

int exitStatusOf(const RunRecord& r)
{
    if (r.state == RunState::Succeeded)
        return Ok;
    if (r.exitSignal)
        return 128 + *r.exitSignal;
    if (r.exitCode && *r.exitCode > 0 && *r.exitCode < 256)
        return *r.exitCode;
    return RunFailed;
}

int waitForRun(Context& ctx, service::ServiceClient& svc, RunId id, bool follow)
{
    Follower follower(svc, id, follow, 0);
    constexpr int kQueued = 202;
    // While it waits in the queue, say why (once per change).
    auto lastReason = std::make_shared<QString>();
    // A service this command started may still be connecting its nodes: a
    // reason then is given a moment to go away (the run is placed). So is a
    // run pinned to a node: the node's own report (why it cannot be reached,
    // NodeWatch below) may come just after the pass's reason.
    const auto pinned = ctx.store->run(id);
    const bool pinnedElsewhere = pinned && !pinned->node.isEmpty() && pinned->node != u"local";
    const int queuedGraceMs = svc.startedService() || pinnedElsewhere ? 1500 : 0;
    QObject::connect(&svc, &service::ServiceClient::pendingReasonsChanged, &follower,
            [&follower, id, lastReason, follow, queuedGraceMs](const QHash<RunId, QString>& reasons) {
                const QString reason = reasons.value(id);
                if (reason.isEmpty())
                    return;
                if (reason != *lastReason) {
                    err() << "run " << id << " queued: " << escapedName(reason) << '\n';
                    err().flush();
                }
                *lastReason = reason;
                if (!follow)
                    QTimer::singleShot(queuedGraceMs, &follower, [] { QCoreApplication::exit(kQueued); });
            });
    if (!follow) {
        // Wait until the node took it (or refused it), then leave it running.
        QObject::connect(&svc, &service::ServiceClient::runStateChanged, &follower, [id](const RunRecord& r) {
            if (r.id == id && r.state != RunState::Queued && r.state != RunState::Starting)
                QCoreApplication::exit(0);
        });
    }
    QObject::connect(
            &svc, &service::ServiceClient::disconnected, &follower, [] { QCoreApplication::exit(kServiceGone); });
    // The node it must run on cannot be reached: say why; without --follow
    // leave it queued rather than wait for ever (with it, keep trying).
    NodeWatch nodeWatch(
            svc, pinned && pinned->node != u"local" ? pinned->node : QString(), [&follower, follow](const QString&) {
                if (follow)
                    return;
                if (const auto r = follower.last(); !r || r->state == RunState::Queued)
                    QCoreApplication::exit(kNodeDown);
            });
    if (auto watching
            = svc.call(QStringLiteral("watch"), {{QStringLiteral("run"), id}, {QStringLiteral("console"), follow}});
            !watching) {
        err() << "trainyardctl: " << escapedName(watching.error().message) << '\n';
        return Unavailable;
    }
    std::signal(SIGINT, onSigint);
    const int loop = QCoreApplication::exec();
    std::signal(SIGINT, SIG_DFL);
    // What the service said last is ahead of the database (its writes are
    // batched); the database has what the service did not send.
    Result<RunRecord> r = follower.last() ? Result<RunRecord>(*follower.last()) : ctx.store->run(id);
    if (!r) {
        err() << r.error().message << '\n';
        return Unavailable;
    }
    if (loop == kServiceGone) {
        err() << "trainyardctl: the Trainyard service stopped while run " << id << " was " << runStateName(r->state)
              << "; it keeps going and is recorded once the service runs again (trainyardctl daemon start)\n";
        return Unavailable;
    }
    if (loop == kNodeDown) {
        err() << "trainyardctl: run " << id << " stays queued; the service starts it once node " << escapedName(r->node)
              << " can be reached\n";
        return Unavailable;
    }
    if (loop == 130) {
        if (r->state == RunState::Queued)
            err() << "\ntrainyardctl: detached; run " << id << " stays queued; the service starts it\n";
        else
            err() << "\ntrainyardctl: detached; run " << id
                  << " keeps running. Follow it again with: trainyardctl logs " << id << " --follow\n";
        return 130;
    }
    if (loop == kQueued) {
        out() << "run " << id << " (" << escapedName(r->name) << ") queued: " << escapedName(*lastReason) << '\n';
        return Ok;
    }
    if (!follow) {
        out() << "run " << id << " (" << escapedName(r->name) << ") " << runStateName(r->state);
        if (r->node.isEmpty()) // refused before placement: the reason follows on stderr
            out() << " before it was placed on a node";
        else
            out() << " on " << escapedName(r->node);
        out() << '\n';
        if (r->state == RunState::Failed) {
            err() << "run " << id << " failed: " << escapedName(r->failureReason) << '\n';
            return RunFailed;
        }
        return Ok;
    }
    if (!isTerminal(r->state)) {
        err() << "trainyardctl: run " << id << " is " << runStateName(r->state) << '\n';
        return Unavailable;
    }
    err() << "trainyardctl: run " << id << " (" << escapedName(r->name) << ") " << runStateName(r->state);
    if (r->exitCode)
        err() << ", exit code " << *r->exitCode;
    if (r->exitSignal)
        err() << ", signal " << *r->exitSignal;
    if (!r->failureReason.isEmpty()
            && !(r->exitCode && r->failureReason == QStringLiteral("exit code %1").arg(*r->exitCode)))
        err() << ": " << escapedName(r->failureReason);
    err() << '\n';
    if (r->state == RunState::Failed)
        sayRetry(*ctx.store, *r);
    return exitStatusOf(*r);
}

namespace {
// A failed run with `retry:` followed to its end: what the service decided,
// once its notice is there (5 s at most).
void sayRetry(const ResultStore& store, const RunRecord& run)
{
    const Result<JobSpec> spec = runSpecOf(run);
    if (!spec || !spec->retry)
        return;
    // The service decides right after the end it recorded (core/retry):
    // its notice comes within a moment.
    for (int i = 0; i < 50; ++i) {
        for (const RunNotice& n : store.notices(run.id))
            if (n.text.startsWith(kRetriedNotice) || n.text.startsWith(kNotRetriedNotice)) {
                err() << "trainyardctl: run " << run.id << ' ' << escapedName(n.text);
                // Its next attempt: the one after it in its attempts group.
                const auto stored = store.run(run.id);
                const auto attempts = stored ? membershipOf(*stored, RunGroupKind::Attempts) : std::nullopt;
                if (n.text.startsWith(kRetriedNotice) && attempts)
                    for (const auto& [next, m] : store.groupMembers(attempts->group))
                        if (m.position == attempts->position + 1)
                            err() << "; follow it with: trainyardctl logs " << next << " --follow";
                err() << '\n';
                return;
            }
        QThread::msleep(100);
    }
}
} // namespace

Result<void> addStoredNode(Context& ctx, RunEngine& engine, const QString& name, int connectTimeoutSec)
{
    if (name.isEmpty() || name == u"local")
        return {};
    const auto n = storedNode(ctx, name);
    if (!n)
        return fail(QStringLiteral("no node named '%1' (see trainyardctl node ls)").arg(name));
    NodeConnectOptions options;
    options.connectTimeoutSec = connectTimeoutSec;
    engine.addNode(n->name, transportForNode(*n, localAgentPath(), passphraseProvider(), options));
    return {};
}

void EngineDeleter::operator()(RunEngine* engine) const
{
    engine->stopStarting();
    if (engine->postRunWorkPending() || engine->startsPending()) {
        QEventLoop loop;
        const auto quitWhenIdle = [engine, &loop] {
            if (!engine->postRunWorkPending() && !engine->startsPending())
                loop.quit();
        };
        QObject::connect(engine, &RunEngine::postRunWorkDone, &loop, quitWhenIdle);
        QObject::connect(engine, &RunEngine::startsSettled, &loop, quitWhenIdle);
        QTimer::singleShot(30000, &loop, &QEventLoop::quit);
        loop.exec();
    }
    delete engine;
}

EnginePtr makeEngine(Context& ctx, const QString& node, bool ingest)
{
    EnginePtr engine(new RunEngine(ctx.store.get(), ctx.dbPath));
    engine->addLocalNode(localAgentPath());
    if (auto added = addStoredNode(ctx, *engine, node); !added)
        err() << "trainyardctl: " << added.error().message << '\n';
    if (ingest)
        engine->acquireIngestion();
    return engine;
}

RunAnnotator serviceAnnotator(const Context& ctx)
{
    auto svc = std::make_shared<std::unique_ptr<service::ServiceClient>>();
    return [&ctx, svc](RunId run, const RunAnnotation& a) -> Result<void> {
        if (!*svc) {
            auto c = service::ServiceClient::connectTo(ctx.dbPath, service::ServiceClient::Start::IfNeeded);
            if (!c)
                return std::unexpected(c.error());
            *svc = std::move(*c);
        }
        QJsonObject req = service::annotationToJson(a);
        req.insert(QStringLiteral("run"), run);
        if (auto done = (*svc)->call(QStringLiteral("annotate"), req); !done)
            return std::unexpected(done.error());
        return {};
    };
}

} // namespace ty::cli
