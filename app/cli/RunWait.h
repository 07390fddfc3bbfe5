#pragma once

// What the commands that start, follow and cancel runs share: waiting for a
// run through the service (printing its console), watching the node it
// needs, a Ctrl+C that detaches, and an engine of this process for the
// commands that read nodes directly (artifacts). Main thread only.

#include "Cli.h"
#include "CliCommon.h"
#include "RunLabelCommands.h"

#include "core/common/Run.h"
#include "core/runs/RunEngine.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QObject>
#include <QString>
#include <QTimer>

#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>

namespace ty::service {
class ServiceClient;
}

namespace ty::cli {

// The exit code for a run that ended: 0 succeeded, its own exit status
// (1..255), 128+N for signal N, else 1.
int exitStatusOf(const RunRecord& r);

// Ctrl+C while following detaches: the run keeps going on its node.
extern volatile std::sig_atomic_t g_interrupted;
// Event-loop exit code: a node the command needs cannot be reached.
constexpr int kNodeDown = 200;
// Event-loop exit code: a bounded wait for the stored state ended first.
constexpr int kStillWaiting = 201;
// Event-loop exit code: the service's connection closed.
constexpr int kServiceGone = 203;
extern "C" void onSigint(int);

// Prints a run's console as it comes and ends the event loop when the run
// has ended and all of it was shown; from the engine of this process, or
// from the service (service::ServiceClient, whose signals have the same
// shapes; it sends a run's end only after its console).
template <class Source> class Follower final : public QObject {
public:
    Follower(Source& engine, RunId id, bool printConsole, qint64 printFrom)
        : m_id(id)
        , m_print(printConsole)
        , m_printedUpTo(printFrom)
    {
        QObject::connect(
                &engine, &Source::consoleReceived, this, [this](RunId run, qint64 offset, const QByteArray& bytes) {
                    if (run != m_id || !m_print)
                        return;
                    const qint64 end = offset + bytes.size();
                    if (end <= m_printedUpTo)
                        return;
                    const qint64 skip = std::max<qint64>(0, m_printedUpTo - offset);
                    ::fwrite(bytes.constData() + skip, 1, size_t(bytes.size() - skip), stdout);
                    ::fflush(stdout);
                    m_printedUpTo = end;
                });
        // Printing from a display-only watch (another process ingests): the
        // end is known from the database before the last bytes are shown, so
        // wait for the watch too.
        bool displayOnly = false;
        if constexpr (std::is_same_v<Source, RunEngine>)
            displayOnly = printConsole && !engine.ownsIngestion();
        QObject::connect(&engine, &Source::runStateChanged, this, [this, displayOnly](const RunRecord& r) {
            if (r.id != m_id)
                return;
            m_last = r;
            m_ended = isTerminal(r.state);
            if (m_ended && (!displayOnly || m_watchEnded))
                QCoreApplication::exit(0);
        });
        // What the run's user should act on (a synced link leading nowhere),
        // as the engine records it.
        QObject::connect(&engine, &Source::noticeAdded, this, [this](RunId run, const QString& text) {
            if (run == m_id)
                err() << "trainyardctl: run " << run << ": " << escapedName(text) << '\n';
            err().flush();
        });
        QObject::connect(&engine, &Source::watchEnded, this, [this](RunId run) {
            if (run != m_id)
                return;
            m_watchEnded = true;
            if (m_ended)
                QCoreApplication::exit(0);
        });
        auto* timer = new QTimer(this);
        QObject::connect(timer, &QTimer::timeout, this, [] {
            if (g_interrupted)
                QCoreApplication::exit(130);
        });
        timer->start(100);
    }
    std::optional<RunRecord> last() const { return m_last; }

private:
    RunId m_id;
    bool m_print;
    qint64 m_printedUpTo;
    std::optional<RunRecord> m_last;
    bool m_ended = false;
    bool m_watchEnded = false;
};

// Tells why a node the command needs cannot be reached (host key refused,
// authentication, network), once per distinct reason, and calls `onDown`
// with it (the first failure of each attempt) and `onUp` when it answers.
template <class Source> class NodeWatch final : public QObject {
public:
    NodeWatch(Source& engine, const QString& node, std::function<void(const QString&)> onDown,
            std::function<void()> onUp = {})
    {
        if (node.isEmpty())
            return;
        QObject::connect(&engine, &Source::nodeStatusChanged, this,
                [this, node, onDown = std::move(onDown), onUp = std::move(onUp)](
                        const QString& n, bool ready, const QString& reason) {
                    if (n != node)
                        return;
                    if (ready) {
                        m_said.clear();
                        if (onUp)
                            onUp();
                        return;
                    }
                    if (reason != m_said) {
                        err() << "trainyardctl: node " << escapedName(node)
                              << " cannot be reached: " << escapedName(reason) << '\n';
                        err().flush();
                        m_said = reason;
                    }
                    if (onDown)
                        onDown(reason);
                });
    }

private:
    QString m_said;
};

// Waits for a submitted run through the service. Without `follow`: until its
// node took it (or refused it), or it is known to wait in the queue (then it
// says why and leaves it there: the service starts it). With it: until it
// ended, printing its console. Returns the exit code.
int waitForRun(Context& ctx, service::ServiceClient& svc, RunId id, bool follow);

// Adds the stored SSH node `name` to the engine (nothing for "local" or "").
// `connectTimeoutSec` > 0: instead of the default (the SSH config's
// ConnectTimeout still wins).
Result<void> addStoredNode(Context& ctx, RunEngine& engine, const QString& name, int connectTimeoutSec = 0);

// Destroys an engine once the work under way for runs is done, 30 s at
// most: the start requests it sent (a run started for another trainyardctl's
// submit is recorded as its node's agent answers, not left unknown by this
// process ending) and the artifact listing of runs that ended under it. It
// starts no more queued runs meanwhile; the next ingestion owner does.
struct EngineDeleter {
    void operator()(RunEngine* engine) const;
};
using EnginePtr = std::unique_ptr<RunEngine, EngineDeleter>;

// `ingest`: try to become the database's ingestion owner (records consoles,
// metrics and run ends); a display-only engine just reads nodes.
EnginePtr makeEngine(Context& ctx, const QString& node = {}, bool ingest = true);

// rename / tag / note / archive and the like, through the service's
// `annotate` op (only the service writes the database).
RunAnnotator serviceAnnotator(const Context& ctx);

} // namespace ty::cli
