#pragma once

// Reading OpenSSH known_hosts files, for messages libssh cannot give: which
// line of which file holds the key of a host (a changed key is reported with
// "file:line", as OpenSSH does). Writing hashed entries, which libssh 0.10
// cannot (ssh_session_update_known_hosts always writes the plain name).
//
// Format (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"): one entry per line,
// `[marker] hostpatterns keytype base64key [comment]`; hostpatterns is a
// comma-separated list of names, `[name]:port` for ports other than 22, or a
// hashed entry `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`. Wildcard
// patterns and negations are not matched here.

#include "core/common/Result.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace ty {

// The name as OpenSSH writes it in known_hosts: `host`, or `[host]:port`
// when port is not 22.
QString knownHostsName(const QString& host, int port);

// 1-based numbers of the lines of `file` whose host patterns name host:port
// (plain or hashed). Empty when the file is missing or has no such line.
QList<int> knownHostsLines(const QString& file, const QString& host, int port);
// The same for a name as it stands in known_hosts (knownHostsName(), or a
// HostKeyAlias, which OpenSSH writes as it is, without a port).
QList<int> knownHostsLines(const QString& file, const QString& name);

// The hashed host pattern OpenSSH writes under HashKnownHosts yes:
// `|1|base64(salt)|base64(HMAC-SHA1(key = salt, message = name))`, `name`
// as knownHostsName() gives it (`host` or `[host]:port`, UTF-8). `salt`
// (20 bytes in OpenSSH) is drawn from the system's random source when empty.
QByteArray hashedKnownHostsName(const QByteArray& name, const QByteArray& salt = {});

// Appends `line` (one entry, no newline) to the known_hosts `file` as libssh
// does: the file and its directory (mode 0700) are created when missing. A
// last line without its newline gets one first, so the entries stay apart.
Result<void> appendKnownHostsLine(const QString& file, const QByteArray& line);

} // namespace ty
