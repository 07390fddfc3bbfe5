#pragma once

// What to do with a server's host key, given what known_hosts says about it
// and the host's StrictHostKeyChecking, as OpenSSH's client does in batch
// mode (OpenSSH 9.2, sshconnect.c check_host_key; ssh_config(5)):
//
//   setting      known    unknown            changed (same type, other key)
//   yes          accept   refuse             refuse, warning
//   accept-new   accept   add, accept        refuse, warning
//   no           accept   add, accept        accept, warning; known_hosts kept
//   ask/default  accept   refuse (batch)     refuse, warning
//
// A changed key under `no` is accepted for this connection only, as by ssh:
// the stale entry stays, and ssh then disables password and
// keyboard-interactive logins and agent/X11 forwarding (Trainyard uses none
// of them: it logs in by public key only and forwards nothing). A key of
// another type than the known ones counts as unknown for OpenSSH (its
// HOST_NEW): added under accept-new/no, refused otherwise.
// `userAcceptsNew`: the user confirmed this unknown key in Trainyard (node
// add --accept-new-host-key, node trust, the dialog), like answering "yes"
// to ssh's question; it never accepts a changed key.
//
// Pure; any thread.

#include <QString>

namespace ty {

enum class StrictHostKeyChecking { Yes, AcceptNew, No, Ask };

// The value as `ssh -G` prints it ("true", "false", "ask", "accept-new") or
// as written in ssh_config ("yes", "no", "off"); anything else (empty: no
// line) is OpenSSH's default, ask.
StrictHostKeyChecking parseStrictHostKeyChecking(const QString& value);
QString strictHostKeyCheckingName(StrictHostKeyChecking s); // "yes", "accept-new", "no", "ask"

enum class HostKeyState { Known, Unknown, Changed, OtherType };

// The host key decision, also the kind of a refusal (SshAgentTransport::
// lastHostKeyDecision()).
enum class HostKeyDecision {
    None,             // no decision yet (not connected)
    Accepted,         // known
    Added,            // unknown, added to known_hosts and accepted
    AcceptedChanged,  // changed, accepted for this connection under StrictHostKeyChecking no, with the warning
    RefusedUnknown,   // unknown, not added
    RefusedChanged,   // changed: refused, with the warning
    RefusedOtherType, // only keys of other types are known, and none is added
};

HostKeyDecision decideHostKey(HostKeyState state, StrictHostKeyChecking strict, bool userAcceptsNew);

inline bool hostKeyAccepted(HostKeyDecision d)
{
    return d == HostKeyDecision::Accepted || d == HostKeyDecision::Added || d == HostKeyDecision::AcceptedChanged;
}

} // namespace ty
