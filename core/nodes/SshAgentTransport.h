#pragma once

// AgentTransport over SSH: one libssh session per node, on a thread of its
// own (an SshSession worker), carrying one exec channel that runs
// `trainyard-agent --stdio` (deployed over SFTP first when the options name a
// local agent binary). See SshSession.h for the connection steps, host-key
// policy and authentication.
//
// Thread affinity: the transport lives on (and emits on) its object's thread;
// the SSH session runs on the transport's own QThread. open() may be called
// again after closed() to reconnect (a fresh session each time).
// Errors come as closed(reason); the reason names the node, the host and
// what failed (host key with its SHA256 fingerprint and the known_hosts line,
// authentication, deployment, the agent's exit status).

#include "core/nodes/AgentDeploy.h"
#include "core/nodes/AgentTransport.h"
#include "core/nodes/HostKeyPolicy.h"
#include "core/nodes/SshNodeOptions.h"

#include <memory>
#include <optional>

class QThread;

namespace ty {

class SshPassphraseProvider;
class SshSession;

class SshAgentTransport final : public AgentTransport {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SshAgentTransport)
public:
    explicit SshAgentTransport(
            SshNodeOptions options, std::shared_ptr<SshPassphraseProvider> passphrases = {}, QObject* parent = nullptr);
    // Closes the connection (EOF to the agent; its runs go on) and joins the thread.
    ~SshAgentTransport() override;

    void open() override;
    void write(const QByteArray& bytes) override;
    void close() override;
    QString describe() const override;
    // SFTP on this node's session, on the session's thread (SshSession::runFileJob).
    void runFileJob(NodeFileJob job, std::function<void(const Result<void>&)> done) override;
    // TCP connect to the host and port the last connection attempt resolved
    // (nullopt before one, or through a ProxyCommand/ProxyJump).
    void probe(std::function<void(std::optional<bool>)> done) override;

    const SshNodeOptions& options() const { return m_options; }
    // Takes effect at the next open(): accept (and record) an unknown host key.
    void setAcceptNewHostKey(bool accept) { m_options.acceptNewHostKey = accept; }
    // The last deployment (set before opened() when the options deploy).
    std::optional<AgentDeployResult> lastDeploy() const { return m_lastDeploy; }
    // SHA256 fingerprint of the last host key refused (unknown or changed), else empty.
    QString rejectedFingerprint() const { return m_rejectedFingerprint; }
    // AgentTransport's host-key questions, answered by the two above.
    QString rejectedHostKeyFingerprint() const override { return m_rejectedFingerprint; }
    bool trustNewHostKey() override
    {
        setAcceptNewHostKey(true);
        return true;
    }
    // True (LZ4 console frames) unless TRAINYARD_CONSOLE_COMPRESSION=0 was
    // in the environment when this transport was made (benchmarks compare
    // both in one run; a user may turn it off to look at the raw stream).
    bool compressConsole() const override { return m_compressConsole; }
    // The host key decision of the last open() (None before one was made):
    // the kind of a host-key refusal, without matching message text.
    HostKeyDecision lastHostKeyDecision() const { return m_hostKeyDecision; }

Q_SIGNALS:
    void deployed(const ty::AgentDeployResult& result);
    // An unknown or changed host key was refused; the GUI may ask the user
    // and open() again after setAcceptNewHostKey(true) (unknown keys only).
    // `changed`: the key differs from the recorded one (never offered to
    // accept: it may be an attack); else it is not known yet.
    void hostKeyRejected(const QString& fingerprint, const QString& message, bool changed);

private:
    void destroySession();

    SshNodeOptions m_options;
    std::shared_ptr<SshPassphraseProvider> m_passphrases;
    bool m_compressConsole = qEnvironmentVariable("TRAINYARD_CONSOLE_COMPRESSION") != QLatin1String("0");
    QThread* m_thread = nullptr;
    SshSession* m_session = nullptr; // lives on m_thread
    bool m_open = false;             // between open() and closed()
    std::optional<AgentDeployResult> m_lastDeploy;
    QString m_rejectedFingerprint;
    HostKeyDecision m_hostKeyDecision = HostKeyDecision::None;
    QString m_resolvedHost; // SshSession::resolved, for probe()
    int m_resolvedPort = 0;
    bool m_proxied = false;
};

} // namespace ty
