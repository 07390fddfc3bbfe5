#pragma once

// An AgentTransport (core/nodes/AgentTransport.h) whose far end the test
// plays instead of a trainyard-agent: what the client writes is decoded into
// requests (the real framing, AgentFrameDecoder), and the test answers with
// frames of the real protocol (app/agent/PROTOCOL.md): the hello, replies,
// `output`, `eof`, `exited` events; or it lets the node go silent, refuses
// connections, or drops the one there is. No process, no socket, no sleep.
//
//   TestClock clock;
//   auto owned = std::make_unique<FakeAgentTransport>(clock, "gpu-1");
//   FakeAgentTransport* node = owned.get();   // the engine owns it
//   engine.addNode("gpu-1", std::move(owned));
//   clock.advance(0);                          // hello, gpus
//   node->replyList(*node->takePending("list"), {});
//   ...
//   auto start = node->takePending("start");  // what the engine asked for
//   node->replyStart(*start, clock.nowMs());
//
// Connections: open() counts, then (queued, as bytes arrive) emits opened()
// and, unless setHelloOnOpen(false), the agent's hello; with an open failure
// set (setOpenFailure) it emits closed(reason, kind) instead, as for an
// unreachable node. drop() ends the connection from the node's side;
// close() from the client's. closed() comes exactly once per connection.
//
// Automatic answers, on by default as a live agent gives them: `ping` (the
// clock's time), `gpus` (setGpus(); none by default), `list_files` (no files)
// and `untail`. setAutoReply() adds or replaces one (`list`, `status`, ...);
// setSilent(true) stops them all: the node is connected and says nothing, as
// a hung host or a dead link behind a live TCP connection. Automatic answers
// are queued (they arrive after write() returned, at the same clock time).
//
// Every frame the test sends is delivered at once (received() emitted before
// the call returns), in one piece; AgentClient's callbacks then run from the
// event loop (TestClock::advance(0) runs them).
//
// Thread affinity: the thread of the object (the engine's). The clock must
// outlive it.

#include "core/common/Clock.h"
#include "core/nodes/AgentFrameDecoder.h"
#include "core/nodes/AgentTransport.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>

#include <functional>
#include <optional>
#include <utility>

namespace ty::test {

// A request as the client wrote it.
struct AgentRequest {
    quint64 id = 0;
    QString op;
    QString run;         // its `run` field (empty when it has none)
    QJsonObject message; // the whole request object
    qint64 atMs = 0;     // the clock's nowMs() when it was written
    int connection = 0;  // which connection (openCount() then) carried it
};

class FakeAgentTransport final : public AgentTransport {
public:
    // Answers an automatic request: the reply's fields (besides type, id, ok).
    using AutoReply = std::function<QJsonObject(const AgentRequest&)>;

    explicit FakeAgentTransport(Clock& clock, QString name = QStringLiteral("fake"), QObject* parent = nullptr);
    ~FakeAgentTransport() override;

    // AgentTransport.
    void open() override;
    void write(const QByteArray& bytes) override;
    void close() override;
    QString describe() const override { return m_name; }
    void probe(std::function<void(std::optional<bool>)> done) override;

    // How the far end behaves.
    // Opens fail with `reason` (empty: they succeed, the default).
    void setOpenFailure(const QString& reason, ErrorKind kind = ErrorKind::Unreachable);
    void setHelloOnOpen(bool on) { m_helloOnOpen = on; }
    // Fields of the hello over the defaults (hostname = name, 8 CPUs, 16 GiB,
    // protocol 1 of this build's revision).
    void setHelloFields(const QJsonObject& fields) { m_helloFields = fields; }
    // What `gpus` is answered with: PROTOCOL.md GPU objects (gpu() makes one).
    void setGpus(const QJsonArray& gpus) { m_gpus = gpus; }
    // An automatic answer for `op` (an empty function removes it).
    void setAutoReply(const QString& op, AutoReply reply);
    void setSilent(bool silent) { m_silent = silent; }
    // What probe() answers (default nullopt: this transport cannot tell).
    void setProbeAnswer(std::optional<bool> answer) { m_probeAnswer = answer; }

    // What the client did.
    bool isOpen() const { return m_open; }
    int openCount() const { return m_opens; }
    // The clock's nowMs() at each open(), in order.
    const QList<qint64>& openTimesMs() const { return m_openTimesMs; }
    int probeCount() const { return m_probes; }
    // Every request of every connection, in the order written.
    const QList<AgentRequest>& requests() const { return m_requests; }
    // Requests of `op` (empty: any) of the current connection not answered yet.
    QList<AgentRequest> pending(const QString& op = {}) const;
    // The first of pending(op), now no longer pending; nullopt when none.
    std::optional<AgentRequest> takePending(const QString& op);
    // How many `op` requests were written (every connection).
    int count(const QString& op) const;
    // Bytes the client wrote that are not the protocol (empty: none).
    const QString& protocolError() const { return m_protocolError; }

    // Frames from the agent, delivered at once; all need an open connection
    // (otherwise they are dropped with a warning, as bytes to a closed pipe).
    // `header` plus `payload` (its "len" set to the payload's size when non-empty).
    void sendFrame(QJsonObject header, const QByteArray& payload = {});
    void sendRaw(const QByteArray& bytes);
    void sendHello();
    // {"type":"reply","id":...,"ok":true, fields...}; the request is no longer pending.
    void reply(const AgentRequest& request, const QJsonObject& fields = {});
    // ... "ok":false,"error":error (and "code", e.g. "gpu_claimed").
    void replyError(const AgentRequest& request, const QString& error, const QString& code = {});
    // A start's reply: pid, pgid, supervisor_pid, run_dir, console, started_ms.
    void replyStart(const AgentRequest& start, qint64 startedMs, qint64 pid = 4242);
    // A list's reply with these run status objects (runStatus()).
    void replyList(const AgentRequest& list, const QJsonArray& runs);
    // `output` of [offset, offset + bytes.size()) with stderr ranges (absolute offsets, length).
    void sendOutput(const QString& run, qint64 offset, const QByteArray& bytes,
            const QList<std::pair<qint64, qint64>>& stderrRanges = {});
    void sendEof(const QString& run, qint64 offset);
    // An `exited` event: the run's status object (runStatus() with an end).
    void sendExited(const QJsonObject& status);
    // The connection ends from the node's side (agent killed, link reset).
    void drop(const QString& reason = QStringLiteral("connection reset by the fake node"));

    // PROTOCOL.md run status objects: running (no end), or exited with an
    // exit code or a signal (`finishedMs` > 0).
    struct RunEnd {
        qint64 finishedMs = 0;
        std::optional<int> exitCode;
        std::optional<int> signal;
        bool cancelled = false;
    };
    static QJsonObject runStatus(const QString& run, qint64 startedMs, qint64 consoleSize = 0,
            const std::optional<RunEnd>& end = std::nullopt);
    // A GPU object of the `gpus` reply (no processes, no claims).
    static QJsonObject gpu(int index, const QString& name, double memoryTotalMib, double memoryUsedMib = 0);

private:
    void emitQueued(std::function<void()> fn); // on this connection only, from the event loop
    void handleRequest(const AgentRequest& request);

    Clock& m_clock;
    QString m_name;
    AgentFrameDecoder m_decoder;
    bool m_open = false;
    int m_opens = 0;
    QList<qint64> m_openTimesMs;
    int m_probes = 0;
    int m_connection = 0; // generation: queued work of an ended connection is dropped
    QString m_openFailure;
    ErrorKind m_openFailureKind = ErrorKind::Unreachable;
    bool m_helloOnOpen = true;
    bool m_silent = false;
    QJsonObject m_helloFields;
    QJsonArray m_gpus;
    QHash<QString, AutoReply> m_autoReplies;
    std::optional<bool> m_probeAnswer;
    QList<AgentRequest> m_requests;
    QList<AgentRequest> m_pending;
    QString m_protocolError;
};

} // namespace ty::test
