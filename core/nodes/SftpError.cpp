#include "SftpError.h"

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <iterator>

namespace ty {

QString sftpErrorText(ssh_session_struct* session, sftp_session_struct* sftp)
{
    const int code = sftp ? sftp_get_error(sftp) : 0;
    // SSH_FX_OK .. SSH_FX_NO_MEDIA, in order (libssh/sftp.h).
    static const char* const names[] = {"ok", "end of file", "no such file", "permission denied", "failure",
            "bad message", "no connection", "connection lost", "operation unsupported", "invalid handle",
            "no such path", "file already exists", "write protected", "no media"};
    QString text = code >= 0 && code < int(std::size(names)) ? QString::fromLatin1(names[code])
                                                             : QStringLiteral("SFTP error %1").arg(code);
    const char* ssh = ssh_get_error(session);
    if (ssh && *ssh
            && (code == SSH_FX_OK || code == SSH_FX_FAILURE || code == SSH_FX_CONNECTION_LOST
                    || code == SSH_FX_NO_CONNECTION))
        text += QStringLiteral(" (%1)").arg(QString::fromUtf8(ssh));
    return text;
}

} // namespace ty
