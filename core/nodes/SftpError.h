#pragma once

#include <QString>

struct ssh_session_struct;
struct sftp_session_struct;

namespace ty {

// The words for the last failed SFTP call on `sftp`: its SSH_FX_* status
// ("no such file", "permission denied", ...; "SFTP error N" past the ones
// SFTP version 3 names), followed by libssh's own message on `session` in
// parentheses where the status alone says little (ok, failure, no
// connection, connection lost: e.g. "connection lost (Socket error: ...)").
// `sftp` may be null (sftp_new() failed): the status is then "ok" and
// libssh's message says why. Read right after the failing call, on the
// thread that uses the session.
QString sftpErrorText(ssh_session_struct* session, sftp_session_struct* sftp);

} // namespace ty
