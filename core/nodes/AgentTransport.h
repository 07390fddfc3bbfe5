#pragma once

// The byte pipe between AgentClient and a trainyard-agent: a local child
// process (LocalAgentTransport) or an SSH exec channel. The protocol, and all
// of AgentClient, is the same over every transport.
//
// Contract: open() starts connecting and emits opened() once bytes can be
// written (or closed(reason) if that fails). write() queues bytes; it does
// not block. received() delivers bytes as they come, in any split. closed()
// is emitted exactly once, when the connection has ended for any reason
// (including after close()). Lives on, and emits on, its object's thread.

#include "core/nodes/NodeFiles.h"

#include <QByteArray>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace ty {

class AgentTransport : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AgentTransport)
public:
    using QObject::QObject;
    ~AgentTransport() override = default;

    virtual void open() = 0;
    virtual void write(const QByteArray& bytes) = 0;
    virtual void close() = 0;
    // Where the agent runs, for messages ("local", an SSH node's name).
    virtual QString describe() const = 0;
    // Runs `job` on the node's files (blocking, on a thread that may use them)
    // and then calls `done` on this object's thread. The default works on this
    // machine's files (LocalNodeFiles, a pool thread); SSH transports use SFTP
    // on their session's thread. Defined in NodeFiles.cpp.
    virtual void runFileJob(NodeFileJob job, std::function<void(const Result<void>&)> done);
    // A cheap check, while disconnected, whether the node answers again (an
    // SSH node: its port accepts a TCP connection within a second), so a
    // reconnection need not wait out its backoff. `done` runs on this
    // object's thread: true (answers), false (does not), nullopt (this
    // transport cannot tell, e.g. behind a ProxyJump; the default).
    virtual void probe(std::function<void(std::optional<bool>)> done);
    // Host keys, for transports that check one (SSH): the SHA256 fingerprint
    // of the unknown key the last open() refused (empty: none refused, or no
    // host key here), and trusting the next unknown key (recorded in
    // known_hosts on the next open(); a changed key is never trusted this
    // way). The default has no host key: empty, and false.
    virtual QString rejectedHostKeyFingerprint() const { return {}; }
    virtual bool trustNewHostKey() { return false; }
    // Whether console tails should ask the agent for LZ4-compressed output
    // (protocol revision 8; core/agentproto/ConsoleCompression.h): true
    // where every byte is encrypted and carried (SSH), false for a pipe to a
    // local child (the default), where compressing would only cost CPU.
    virtual bool compressConsole() const { return false; }

Q_SIGNALS:
    void opened();
    void received(const QByteArray& bytes);
    // `kind`: why, where the transport can tell (ErrorKind: unreachable,
    // host key, authentication); Unspecified otherwise.
    void closed(const QString& reason, ty::ErrorKind kind = ty::ErrorKind::Unspecified);
    // Something the user must see that did not stop the connection (SSH: a
    // changed host key accepted under StrictHostKeyChecking no). Emitted
    // before opened() for that connection.
    void warning(const QString& message);
};

} // namespace ty
