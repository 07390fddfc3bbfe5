#pragma once

#include "ServicePaths.h"
#include "ServiceProtocol.h"
#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/nodes/AgentTypes.h"
#include "core/nodes/SshPassphraseProvider.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QProcessEnvironment>

#include <functional>
#include <memory>
#include <optional>

class QLocalSocket;

namespace ty::service {

class LineBuffer;

// The environment a client starts trainyardd with: its own, and the umask it
// was started with (TRAINYARD_USER_UMASK, octal), which the service gives
// to the runs it starts, as a client that ran them itself would have.
QProcessEnvironment serviceEnvironment();

// A client of trainyardd (the GUI, trainyardctl): connects to the service of
// one result database over its socket (ServicePaths.h), starting the service
// when it is not running, sends requests and turns the service's events into
// signals shaped like RunEngine's, so code that watched an engine in the same
// process watches the service the same way.
//
// Thread affinity: the thread that connected; call() runs a nested event loop
// on it, in which events keep being emitted.
class ServiceClient final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ServiceClient)

public:
    enum class Start { IfNeeded, Never };

    ~ServiceClient() override;

    // Connects to the service of `databasePath`; with Start::IfNeeded, starts
    // it first when nobody listens, and replaces a service of an older
    // version (it stops once its pending starts are answered) (trainyardd --detach, found by
    // serviceExecutablePath()) and waits for its socket, `timeoutMs` in all.
    // Errors: the service folder is unsafe, the service could not be started
    // (its own message: another process holds its lock, the database cannot
    // be opened), it refused this user, it speaks a newer protocol, or
    // nothing answered in time (with Start::Never: "not running").
    static Result<std::unique_ptr<ServiceClient>> connectTo(
            const QString& databasePath, Start start, int timeoutMs = 20000);

    // Sends one request and waits for its reply, `timeoutMs` at most.
    // Returns the reply's object. Errors: the service's (`error`, with the
    // kind in brackets where it is not generic), the connection closed, or
    // no reply in time.
    Result<QJsonObject> call(const QString& op, QJsonObject args = {}, int timeoutMs = 30000);
    // Sends one request and returns at once; `done` gets its reply (or the
    // error, as call()'s) later from the event loop, in order with the
    // events, never from inside this call. A connection that closes first
    // fails it (ErrorKind::Unreachable). No timeout: artifacts wait for nodes.
    void request(const QString& op, QJsonObject args, std::function<void(const Result<QJsonObject>&)> done);

    // The questions of the service's SSH sessions (PROTOCOL.md `prompt`: a
    // node's encrypted key, a keyboard-interactive login's round) are
    // answered with `provider` (passphrase(), answers()), called on this
    // thread as each arrives, inside call()'s wait too (trainyardctl: its
    // terminal or askpass program). Subscribes to them (blocking, as
    // call()). Without one, questions come as promptReceived and
    // loginPromptReceived.
    Result<void> answerPromptsWith(std::shared_ptr<SshPassphraseProvider> provider);
    // The answer to question `prompt` (nullopt: declined); returns at once.
    void answerPrompt(qint64 prompt, const std::optional<QByteArray>& passphrase);
    // The answers to keyboard-interactive question `prompt`, one per prompt
    // (nullopt: declined); returns at once.
    void answerLoginPrompt(qint64 prompt, const std::optional<QList<QByteArray>>& answers);

    // The service's process id and protocol revision, from its hello.
    qint64 servicePid() const { return m_pid; }
    int protocol() const { return m_protocol; }
    const ServicePaths& paths() const { return m_paths; }
    bool connected() const;
    // The service's version (its hello), and whether it is older than this
    // client's (QCoreApplication::applicationVersion()).
    QString serviceVersion() const { return m_serviceVersion; }
    bool olderThanThisClient() const;
    // Whether connectTo() started the service (its nodes may still be connecting).
    bool startedService() const { return m_startedService; }

Q_SIGNALS:
    // Console bytes of a watched run, [offset, offset + bytes.size()) of its local copy.
    void consoleReceived(ty::RunId run, qint64 offset, const QByteArray& bytes);
    // A watched run's state (sent once when the watch starts, then on each change).
    void runStateChanged(const ty::RunRecord& run);
    // Why watched runs wait in the queue.
    void pendingReasonsChanged(const QHash<ty::RunId, QString>& reasons);
    void nodeStatusChanged(
            const QString& node, bool ready, const QString& reason, ty::ErrorKind kind = ty::ErrorKind::Unspecified);
    void cancelFailed(ty::RunId run, const QString& reason);
    // A notice recorded for a watched run (RunEngine::noticeAdded).
    void noticeAdded(ty::RunId run, const QString& text);
    // Metric points of any run, with `subscribe {metrics: true}`.
    void metricsReceived(ty::RunId run, const QList<ty::MetricPoint>& points);
    // A node's GPUs, with `subscribe {gpus: true}`.
    void nodeGpusUpdated(const QString& node, const QList<ty::AgentGpu>& gpus);
    void nodeWarning(const QString& node, const QString& message);
    // The service asks for the passphrase of a node's key (`text` names the
    // key file, as OpenSSH's prompt does); answer with answerPrompt().
    void promptReceived(qint64 prompt, const QString& node, const QString& text);
    // The service's SSH session for `node` asks keyboard-interactive
    // questions (a one-time code); answer with answerLoginPrompt().
    void loginPromptReceived(qint64 prompt, const QString& node, const ty::SshLoginQuestions& questions);
    // A pipeline changed (PROTOCOL.md `pipeline`), with `subscribe {pipelines: true}`.
    void pipelineChanged(const QJsonObject& pipeline);
    // A watched run ended and everything of its console was delivered.
    void watchEnded(ty::RunId run);
    // The service closed the connection (it stopped or was killed).
    void disconnected();

private:
    explicit ServiceClient(ServicePaths paths);
    Result<void> attach(int timeoutMs);
    void onReadyRead();
    void dispatch(const QJsonObject& message);
    void emitEvent(const QJsonObject& message);
    void emitDeferred();
    // An event received during a call(): a message, or a console event read
    // without a QJsonObject (decodeConsoleEvent).
    struct Deferred {
        QJsonObject message;
        std::optional<ConsoleEvent> console;
    };
    void defer(Deferred event);

    ServicePaths m_paths;
    QLocalSocket* m_socket = nullptr;
    std::unique_ptr<LineBuffer> m_lines;
    qint64 m_nextId = 1;
    QHash<qint64, QJsonObject> m_replies;
    QHash<qint64, std::function<void(const Result<QJsonObject>&)>> m_callbacks; // request()s waiting
    qint64 m_pid = 0;
    int m_protocol = 0;
    QString m_refused;
    bool m_helloSeen = false;
    bool m_startedService = false;
    QString m_serviceVersion;
    int m_inCall = 0;           // call()s waiting for their reply
    QList<Deferred> m_deferred; // events received meanwhile, in order
    std::shared_ptr<SshPassphraseProvider> m_promptProvider;
};

} // namespace ty::service
