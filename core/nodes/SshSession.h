#pragma once

// One SSH connection to a node carrying one exec channel that runs
// `trainyard-agent --stdio`. Used by SshAgentTransport, which moves it to a
// thread of its own: libssh is not thread-safe per session, so every call on
// the session, its channel and its SFTP happens on that thread.
//
// start() (blocking, on the session thread; connect timeout from the options):
//   1. ssh_new; SSH_OPTIONS_HOST = alias; ssh_options_parse_config(configFile
//      or NULL = ~/.ssh/config + /etc/ssh/ssh_config); THEN the explicit user,
//      port, identity file and known_hosts file (they win over the config);
//      SSH_OPTIONS_NODELAY; ssh_connect.
//   2. Host key (ssh_session_is_known_server), decided as OpenSSH does for
//      the host's StrictHostKeyChecking (HostKeyPolicy.h; `ssh -G`): known
//      goes on; unknown (also a missing known_hosts file) fails naming the
//      SHA256 fingerprint unless acceptNewHostKey or accept-new/no, which
//      append it to known_hosts, hashed when OpenSSH's HashKnownHosts says so
//      for the host (OpenSshConfig.h); changed is refused naming the host and
//      the known_hosts file:line(s), with OpenSSH's "WARNING: REMOTE HOST
//      IDENTIFICATION HAS CHANGED!", except under `no`: then the same warning
//      is logged (qCWarning) and emitted, known_hosts is left alone, and the
//      connection goes on (public-key login only, as always here).
//      With a HostKeyAlias for the host (OpenSSH's view) the key is looked up
//      and added under the alias instead, as it is, without a port, as ssh
//      does; entries under the host's own name then do not count.
//   3. ssh_userauth_none, then OpenSSH's order: ssh-agent, then the identity
//      files (the node's, then the config's IdentityFile entries, else the
//      defaults, as `ssh -G` lists them; OpenSshConfig.h). A file is offered
//      by its public key first; only a key the server accepts is decrypted,
//      and an encrypted one asks the SshPassphraseProvider (none: batch mode)
//      with a prompt naming the file, as OpenSSH:
//      "Enter passphrase for key '/home/u/.ssh/id_ed25519':".
//      With IdentitiesOnly yes (OpenSSH's view, as for the identity files)
//      ssh-agent is asked through a relay that lists only the keys of those
//      files (SshAgentFilter.h), so other agent keys do not use up the
//      server's MaxAuthTries. A failure names the keys the server refused
//      and, when it closed the connection first, those never offered.
//      Then keyboard-interactive (RFC 4256: one-time codes, Duo prompts, a
//      PAM password), when the server offers it: after a key it accepted
//      but that is not enough (SSH_AUTH_PARTIAL: AuthenticationMethods
//      publickey,keyboard-interactive), or when it accepted none. Each round
//      with prompts goes to SshPassphraseProvider::answers() (name,
//      instruction, each prompt with its echo flag); rounds without prompts
//      are answered with nothing and ask nobody; a reply to answers is
//      waited for up to 120 s (a Duo push waits for the phone). One attempt
//      per login: refused or declined answers end the login with an
//      Authentication error naming the node and the prompts (never the
//      answers); answers are wiped once libssh has them. Batch mode (no
//      provider) never starts it: the error says the login asks questions
//      and to run trainyardctl in a terminal or use the GUI. Nor does a
//      connection whose changed host key was let through under
//      StrictHostKeyChecking no (as OpenSSH: no answers to a possible
//      man in the middle); its error says so.
//   4. Optional agent deployment over SFTP (AgentDeploy), still blocking.
//   5. Opens a session channel with callbacks (data on stdout and stderr, eof,
//      close, exit status, exit signal) registered for its whole life, execs
//      the agent, then switches to non-blocking: a QSocketNotifier on
//      ssh_get_fd() wakes the thread and ssh_event_dopoll() processes every
//      packet, so exit statuses and closes are never missed; writes are
//      queued and flushed as the window and the socket allow.
// started() then follows; stdout bytes come as data(), in order: batched per
// service() round (at most 256 KiB a call) and at once when they arrive inside
// a blocking call (a file job); no frame boundary is implied; stderr lines are logged
// (category trainyard.nodes) as "agent on <node>: ...". finished(reason) is
// emitted exactly once when the connection ends for any reason (including
// stop()), after which the object holds no libssh resources.
//
// One login serves every request of the connection: the agent channel, the
// deployment and every file job (SFTP, opened on this session on first use)
// share the session authenticated in start(), so nothing asks the user again
// while it is up. A reconnection (SshAgentTransport::open() after closed(),
// e.g. NodePool's after a lost link) is a new SshSession and a new login:
// a passphrase or keyboard-interactive question is asked again then (a
// one-time code cannot be reused anyway).
//
// TCP keepalive is enabled on a direct socket; dead links behind a
// ProxyCommand are found by NodeHealth's application-level pings.

#include "core/nodes/AgentDeploy.h"
#include "core/nodes/HostKeyPolicy.h"
#include "core/nodes/NodeFiles.h"
#include "core/nodes/OpenSshConfig.h"
#include "core/nodes/SshNodeOptions.h"

#include <QByteArray>
#include <QObject>
#include <QString>

#include <QMutex>

#include <memory>
#include <optional>

class QSocketNotifier;
class QTimer;
struct ssh_session_struct;
struct ssh_channel_struct;
struct ssh_event_struct;
struct ssh_channel_callbacks_struct;
struct sftp_session_struct;

namespace ty {

class SshPassphraseProvider;

class SshSession final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SshSession)
public:
    // `passphrases` (key passphrases and keyboard-interactive questions) may
    // be null (batch mode). It must be thread-safe.
    SshSession(SshNodeOptions options, std::shared_ptr<SshPassphraseProvider> passphrases, QObject* parent = nullptr);
    ~SshSession() override; // frees every libssh resource (call on the session thread)

    // Session thread. See the header comment. A second call while connected is ignored.
    void start();
    // Queues bytes for the agent's stdin. Session thread.
    void write(const QByteArray& bytes);
    // Sends EOF to the agent (it exits; its runs go on), closes the channel and
    // the connection; finished(reason) follows. Session thread.
    void stop(const QString& reason);

    // Thread-safe: queues bytes for the agent's stdin from any thread; they are
    // sent from the session thread (also between the chunks of a file job).
    void post(const QByteArray& bytes);
    // Runs `job` on the node's files over SFTP on this session (session thread,
    // after started()). The session is blocking while the job runs; between
    // chunks the agent channel is serviced (posted writes flushed), so
    // heartbeats keep flowing during long transfers; replies and output that
    // libssh reads inside the job's SFTP calls are handed on as they arrive.
    // The SFTP subsystem is opened on first use and kept.
    Result<void> runFileJob(const NodeFileJob& job);

    // The remote command line run for the agent (valid after started()).
    QString remoteCommand() const { return m_command; }

Q_SIGNALS:
    void started(const QString& remoteCommand);
    void deployed(const ty::AgentDeployResult& result);
    // The SHA256 fingerprint of a host key that was not accepted (unknown or changed).
    void hostKeyRejected(const QString& fingerprint, const QString& message);
    // Every host key decision, once per start(); `message` is empty for a
    // silent acceptance, else the refusal or the warning the user must see.
    void hostKeyDecided(ty::HostKeyDecision decision, const QString& fingerprint, const QString& message);
    void data(const QByteArray& bytes);
    void finished(const QString& reason, ty::ErrorKind kind = ty::ErrorKind::Unspecified);
    // Where the configuration sends the connection (before it is made):
    // host and port, and whether a ProxyCommand/ProxyJump carries it.
    void resolved(const QString& host, int port, bool proxied);

private:
    Result<void> connectAndLogin();
    Result<void> verifyHostKey();
    Result<void> addHostKey(const QString& file);
    Result<void> authenticate();
    // Keyboard-interactive login (after the keys): libssh's result (SSH_AUTH_*)
    // and, unless it is SSH_AUTH_SUCCESS, what went wrong as a clause that
    // follows "then" in the failure (the prompts' texts, never an answer).
    // Needs m_passphrases.
    struct KbdintOutcome {
        int rc = 0;
        QString problem;
    };
    KbdintOutcome keyboardInteractive();
    // `ssh -G` for this host, asked once per session; null without it (m_openSshProblem says why).
    const OpenSshHostConfig* openSshConfig();
    QStringList identityFiles(); // in the order they are tried
    Result<void> openAgentChannel();
    void service(); // non-blocking dopoll rounds while each handles an event, flush, checks
    void flushWrites();
    void updateWriteNotifier();
    void finish(const QString& reason, ErrorKind kind = ErrorKind::Unspecified);
    void freeAll(bool graceful);
    QString where() const; // "node ws1 (root@127.0.0.2:2222)"
    void logStderr(bool flushAll);
    void drainPosted();
    void pumpDuringFileJob();
    void emitReceived(); // data(m_received), if it holds anything

    // libssh callbacks (called from inside libssh calls on this thread: they
    // only record and emit, never free anything).
    static int onChannelData(
            ssh_session_struct*, ssh_channel_struct*, void* data, uint32_t len, int isStderr, void* userdata);
    static void onChannelEof(ssh_session_struct*, ssh_channel_struct*, void* userdata);
    static void onChannelClose(ssh_session_struct*, ssh_channel_struct*, void* userdata);
    static void onExitStatus(ssh_session_struct*, ssh_channel_struct*, int status, void* userdata);
    static void onExitSignal(ssh_session_struct*, ssh_channel_struct*, const char* signal, int core, const char* errmsg,
            const char* lang, void* userdata);

    SshNodeOptions m_options;
    std::shared_ptr<SshPassphraseProvider> m_passphrases;
    ssh_session_struct* m_session = nullptr;
    ssh_channel_struct* m_channel = nullptr;
    ssh_event_struct* m_event = nullptr;
    std::unique_ptr<ssh_channel_callbacks_struct> m_channelCallbacks;
    QSocketNotifier* m_readNotifier = nullptr;
    QSocketNotifier* m_writeNotifier = nullptr;
    QTimer* m_tick = nullptr;
    QString m_command;
    QString m_resolvedHost;
    QString m_resolvedUser;
    int m_resolvedPort = 0;
    QByteArray m_out;      // bytes for the agent not yet taken by the channel
    QByteArray m_received; // the agent's stdout not yet handed on by data()
    QByteArray m_stderrBuf;
    bool m_running = false; // started() emitted
    bool m_finished = false;
    bool m_inService = false;
    bool m_remoteEof = false;
    bool m_channelClosed = false;
    QString m_configIdentity;              // libssh's first identity after the config, before the explicit one
    QString m_hostKeyAlias;                // OpenSSH's HostKeyAlias for the host (verifyHostKey()); empty: none
    bool m_hostKeyChangedAccepted = false; // a changed host key let through (StrictHostKeyChecking no)
    std::optional<OpenSshHostConfig> m_openSsh;
    bool m_openSshQueried = false;
    QString m_openSshProblem;
    std::optional<int> m_exitStatus;
    QString m_exitSignal;
    sftp_session_struct* m_sftp = nullptr; // file jobs (runFileJob)
    bool m_inFileJob = false;
    QMutex m_postedMutex;
    QByteArray m_posted; // post(): guarded by m_postedMutex
};

} // namespace ty
