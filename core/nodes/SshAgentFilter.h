#pragma once

// A filtering relay in front of ssh-agent, for OpenSSH's `IdentitiesOnly
// yes`, which libssh 0.10 ignores: it offers every key the agent holds, and
// with several unrelated keys there the server's MaxAuthTries (sshd: 6 by
// default) runs out before the key the configuration names is offered.
//
// libssh talks to the agent over one file descriptor (ssh_set_agent_socket,
// libssh.h; libssh closes it in ssh_free). This object hands out one end of
// a Unix socket pair for that and serves the other end on a thread of its
// own, relaying every request to the real agent unchanged and every answer
// back unchanged, except one: the answer to SSH2_AGENTC_REQUEST_IDENTITIES
// (11), SSH2_AGENT_IDENTITIES_ANSWER (12), keeps only the identities whose
// public key blob is one of `allowed` (order kept). Sign requests pass as
// they are: the filter decides what libssh offers to the server, not what the
// agent may do.
//
// Protocol: draft-miller-ssh-agent (IETF), "SSH Agent Protocol",
// https://datatracker.ietf.org/doc/draft-miller-ssh-agent/ : every message
// is `uint32 length, byte type, contents`; the identities answer is
//   byte 12, uint32 nkeys, nkeys x (string key blob, string comment)
// (string: uint32 length, bytes). Messages over 256 KiB (libssh's and
// OpenSSH's limit) end the relay.
//
// Lifetime and threads: start(), takeClientFd() and the destructor on one
// thread (SshSession's); the relay thread owns nothing but its loop and
// touches only its own descriptors and the atomic counters. libssh's calls
// block on the socket pair until the relay answers, so the relay must run
// while libssh uses the agent (ssh_userauth_agent). The destructor stops the
// relay, also in the middle of a request the agent has not answered, and
// joins it; libssh's end then reads end-of-file (an agent that went away),
// but a write there would raise SIGPIPE: destroy it only once libssh is done
// with the agent (after ssh_userauth_agent returns).
// If the agent closes or sends something malformed, the relay ends the same
// way, with a log line (category trainyard.nodes); a malformed identities
// answer becomes SSH_AGENT_FAILURE (5), never the unfiltered list.

#include "core/common/Result.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

namespace ty {

// The filtering of one SSH2_AGENT_IDENTITIES_ANSWER payload (type byte
// included, length prefix excluded): the identities whose key blob is in
// `allowed`. nullopt when `answer` is not a well-formed identities answer.
// `listed` and `kept` (if given) receive the counts. Pure; any thread.
std::optional<QByteArray> filterAgentIdentities(
        const QByteArray& answer, const QList<QByteArray>& allowed, int* listed = nullptr, int* kept = nullptr);

class SshAgentFilter final {
public:
    SshAgentFilter(const SshAgentFilter&) = delete;
    SshAgentFilter& operator=(const SshAgentFilter&) = delete;

    // Connects to the agent listening on the Unix socket `agentSocket` and
    // starts the relay. Fails (naming the socket) when the agent cannot be
    // reached, or when no socket pair or thread can be had.
    static Result<std::unique_ptr<SshAgentFilter>> start(const QString& agentSocket, QList<QByteArray> allowed);
    ~SshAgentFilter(); // stops and joins the relay, closes its descriptors

    // The descriptor for libssh (ssh_set_agent_socket): from this call on the
    // caller owns it. -1 after the first call.
    int takeClientFd();

    // From the last identities answer: how many the agent listed, how many
    // were kept. -1 while none came. Any thread.
    int listed() const { return m_listed.load(); }
    int kept() const { return m_kept.load(); }

private:
    SshAgentFilter(QList<QByteArray> allowed, int own, int client, int upstream, int stopRead, int stopWrite);
    void relay();

    const QList<QByteArray> m_allowed;
    int m_own = -1;      // our end of the pair (the relay's)
    int m_client = -1;   // libssh's end until takeClientFd()
    int m_upstream = -1; // the real agent
    int m_stopRead = -1; // a byte here ends the relay
    int m_stopWrite = -1;
    std::atomic<int> m_listed{-1};
    std::atomic<int> m_kept{-1};
    std::thread m_thread;
};

} // namespace ty
