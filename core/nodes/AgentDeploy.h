#pragma once

// Uploads trainyard-agent to a node over SFTP, once per version and checksum:
//   <cacheDir>/<version>-<first 16 hex digits of its SHA-256>/trainyard-agent
// The file is written to a temporary name in the same directory in
// 200,000-byte chunks (larger single writes make OpenSSH's sftp server drop
// the subsystem, see LIBSSH-NOTES.md), made 0755, then renamed into place, so
// a half-written agent is never run. An existing file of the right size whose
// SHA-256 matches is left alone (not re-uploaded); one that differs is
// replaced. The node computes that SHA-256 (`sha256sum` over an exec
// channel); only a node without it has the file read back over SFTP.
//
// Blocking: runs on the SSH session's thread while the session is still in
// blocking mode (before the agent channel goes non-blocking).

#include "core/common/Result.h"

#include <QByteArray>
#include <QMetaType>
#include <QString>

struct ssh_session_struct;

namespace ty {

struct AgentDeployResult {
    QString remotePath;        // absolute path of the agent on the node
    bool uploaded = false;     // false: an identical file was already there
    bool summedOnNode = false; // that file's SHA-256 came from sha256sum on the node, not read back over SFTP
    qint64 bytes = 0;          // size of the agent
    QString sha256;            // hex, of the local (== remote) file
};

// `cacheDir`: absolute, or relative to the remote user's home directory.
// `what`: node name for messages. Errors name the node, the path and the
// SFTP error.
Result<AgentDeployResult> deployAgent(
        ssh_session_struct* session, const QString& localAgent, const QString& cacheDir, const QString& what);

// The version of the agent built with this Trainyard (names the cache directory).
QString agentVersion();

} // namespace ty

Q_DECLARE_METATYPE(ty::AgentDeployResult)

namespace ty { } // namespace ty
