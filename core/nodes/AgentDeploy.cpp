#include "AgentDeploy.h"

#include "core/common/ShellQuote.h"
#include "core/nodes/NodesLog.h"
#include "core/nodes/SftpError.h"
#include "trainyard/Version.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QScopeGuard>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <fcntl.h>
#include <sys/stat.h>

namespace ty {
namespace {

constexpr qint64 kChunk = 200000; // bytes per sftp_write (see the header)

struct SftpCloser {
    void operator()(sftp_session s) const { sftp_free(s); }
};
struct FileCloser {
    void operator()(sftp_file f) const { sftp_close(f); }
};
struct AttrFree {
    void operator()(sftp_attributes a) const { sftp_attributes_free(a); }
};
using Sftp = std::unique_ptr<sftp_session_struct, SftpCloser>;
using SftpFile = std::unique_ptr<sftp_file_struct, FileCloser>;
using Attr = std::unique_ptr<sftp_attributes_struct, AttrFree>;

Result<QByteArray> sha256OfLocal(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read the agent %1: %2").arg(path, f.errorString()));
    QCryptographicHash h(QCryptographicHash::Sha256);
    if (!h.addData(&f))
        return fail(QStringLiteral("cannot read the agent %1").arg(path));
    return h.result().toHex();
}

// SHA-256 (hex) of a remote file read over SFTP, or an empty array if it cannot be read.
QByteArray sha256OfRemote(sftp_session sftp, const QByteArray& path)
{
    SftpFile f(sftp_open(sftp, path.constData(), O_RDONLY, 0));
    if (!f)
        return {};
    QCryptographicHash h(QCryptographicHash::Sha256);
    QByteArray buf(64 * 1024, Qt::Uninitialized);
    for (;;) {
        const ssize_t n = sftp_read(f.get(), buf.data(), size_t(buf.size()));
        if (n < 0)
            return {};
        if (n == 0)
            break;
        h.addData(QByteArrayView(buf.constData(), n));
    }
    return h.result().toHex();
}

// SHA-256 (hex) of a remote file, computed on the node by `sha256sum`
// (coreutils, busybox) through an exec channel of its own: one round trip
// and 64 bytes back, where reading the file back over SFTP moves all of it
// (14.6 MB for a RelWithDebInfo agent: seconds on a link of 20 ms, on every
// connection). Lines before the sum (a shell startup file that prints) are
// skipped. Empty when the node cannot (no sha256sum, exec refused, no such
// file): the caller then reads the file back.
QByteArray sha256OnNode(ssh_session session, const QByteArray& path)
{
    ssh_channel channel = ssh_channel_new(session);
    if (!channel)
        return {};
    const auto release = qScopeGuard([channel] {
        ssh_channel_close(channel);
        ssh_channel_free(channel);
    });
    const QByteArray command = QStringLiteral("sha256sum -- %1").arg(shellQuote(QString::fromUtf8(path))).toUtf8();
    if (ssh_channel_open_session(channel) != SSH_OK || ssh_channel_request_exec(channel, command.constData()) != SSH_OK)
        return {};
    QByteArray out;
    char buf[4096];
    for (;;) {
        const int n = ssh_channel_read_timeout(channel, buf, sizeof buf, 0, 30000);
        if (n < 0)
            return {};
        if (n == 0)
            break; // end of output (or 30 s of silence: what came is parsed)
        out.append(buf, n);
        if (out.size() > 64 * 1024)
            return {}; // not sha256sum's output
    }
    // "<64 hex digits>  <path>"; a '\' first where the name needed escaping.
    static const QRegularExpression sum(
            QStringLiteral("^\\\\?([0-9a-f]{64}) [ *]"), QRegularExpression::MultilineOption);
    QByteArray found;
    for (auto it = sum.globalMatch(QString::fromUtf8(out)); it.hasNext();)
        found = it.next().captured(1).toLatin1(); // the last: a startup file's noise comes first
    return found;
}

// mkdir -p over SFTP; `dir` absolute.
Result<void> makePath(ssh_session session, sftp_session sftp, const QString& dir, const QString& what)
{
    QString path;
    for (const QString& part : dir.split(u'/', Qt::SkipEmptyParts)) {
        path += u'/' + part;
        const QByteArray p = path.toUtf8();
        Attr a(sftp_stat(sftp, p.constData()));
        if (a) {
            if (a->type != SSH_FILEXFER_TYPE_DIRECTORY)
                return fail(QStringLiteral("node %1: %2 exists and is not a directory").arg(what, path));
            continue;
        }
        if (sftp_mkdir(sftp, p.constData(), 0755) != 0 && sftp_get_error(sftp) != SSH_FX_FILE_ALREADY_EXISTS)
            return fail(QStringLiteral("node %1: cannot create the directory %2: %3")
                                .arg(what, path, sftpErrorText(session, sftp)));
    }
    return {};
}

} // namespace

QString agentVersion()
{
    return QStringLiteral(TRAINYARD_VERSION);
}

Result<AgentDeployResult> deployAgent(
        ssh_session_struct* session, const QString& localAgent, const QString& cacheDir, const QString& what)
{
    const auto sha = sha256OfLocal(localAgent);
    if (!sha)
        return std::unexpected(sha.error());
    QFile local(localAgent);
    if (!local.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read the agent %1: %2").arg(localAgent, local.errorString()));
    AgentDeployResult result;
    result.bytes = local.size();
    result.sha256 = QString::fromLatin1(*sha);

    Sftp sftp(sftp_new(session));
    if (!sftp)
        return fail(
                QStringLiteral("node %1: cannot start SFTP: %2").arg(what, QString::fromUtf8(ssh_get_error(session))));
    if (sftp_init(sftp.get()) != SSH_OK)
        return fail(QStringLiteral("node %1: cannot start SFTP (is the sftp subsystem enabled in sshd_config?): %2")
                            .arg(what, sftpErrorText(session, sftp.get())));

    QString base = cacheDir;
    if (!base.startsWith(u'/')) {
        char* home = sftp_canonicalize_path(sftp.get(), ".");
        if (!home)
            return fail(QStringLiteral("node %1: cannot find the home directory over SFTP: %2")
                                .arg(what, sftpErrorText(session, sftp.get())));
        base = QString::fromUtf8(home) + u'/' + base;
        ssh_string_free_char(home);
    }
    const QString dir = base + u'/' + agentVersion() + u'-' + result.sha256.left(16);
    result.remotePath = dir + QStringLiteral("/trainyard-agent");
    const QByteArray target = result.remotePath.toUtf8();

    if (Attr a(sftp_stat(sftp.get(), target.constData())); a) {
        if (qint64(a->size) == result.bytes && (a->permissions & 0111) == 0111) {
            QByteArray remote = sha256OnNode(session, target);
            result.summedOnNode = !remote.isEmpty();
            if (remote.isEmpty()) {
                qCInfo(lcNodes) << "node" << what << ": no sha256sum result for" << result.remotePath
                                << ", reading it back over SFTP";
                remote = sha256OfRemote(sftp.get(), target);
            }
            if (remote == *sha)
                return result; // already deployed
        }
        qCInfo(lcNodes) << "node" << what << ":" << result.remotePath << "differs from" << localAgent
                        << ", re-deploying";
    }
    if (auto made = makePath(session, sftp.get(), dir, what); !made)
        return std::unexpected(made.error());

    const QString tmpName = QStringLiteral("%1/.trainyard-agent.tmp-%2")
                                    .arg(dir)
                                    .arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'));
    const QByteArray tmp = tmpName.toUtf8();
    {
        SftpFile f(sftp_open(sftp.get(), tmp.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0700));
        if (!f)
            return fail(QStringLiteral("node %1: cannot create %2: %3")
                                .arg(what, tmpName, sftpErrorText(session, sftp.get())));
        while (!local.atEnd()) {
            const QByteArray chunk = local.read(kChunk);
            if (chunk.isEmpty())
                return fail(QStringLiteral("cannot read the agent %1: %2").arg(localAgent, local.errorString()));
            qsizetype done = 0;
            while (done < chunk.size()) {
                const ssize_t n = sftp_write(f.get(), chunk.constData() + done, size_t(chunk.size() - done));
                if (n <= 0) {
                    const QString error = sftpErrorText(session, sftp.get());
                    f.reset();
                    sftp_unlink(sftp.get(), tmp.constData());
                    return fail(QStringLiteral("node %1: writing %2 failed: %3").arg(what, tmpName, error));
                }
                done += n;
            }
        }
    }
    if (sftp_chmod(sftp.get(), tmp.constData(), 0755) != 0) {
        const QString error = sftpErrorText(session, sftp.get());
        sftp_unlink(sftp.get(), tmp.constData());
        return fail(QStringLiteral("node %1: cannot chmod %2: %3").arg(what, tmpName, error));
    }
    if (sftp_rename(sftp.get(), tmp.constData(), target.constData()) != 0) {
        // Servers without posix-rename refuse to replace: remove the old file first.
        sftp_unlink(sftp.get(), target.constData());
        if (sftp_rename(sftp.get(), tmp.constData(), target.constData()) != 0) {
            const QString error = sftpErrorText(session, sftp.get());
            sftp_unlink(sftp.get(), tmp.constData());
            return fail(
                    QStringLiteral("node %1: cannot rename %2 to %3: %4").arg(what, tmpName, result.remotePath, error));
        }
    }
    result.uploaded = true;
    result.summedOnNode = false;
    qCInfo(lcNodes) << "node" << what << ": deployed" << localAgent << "to" << result.remotePath;
    return result;
}

} // namespace ty
