#include "NodeFiles.h"

#include "core/nodes/AgentTransport.h"
#include "core/nodes/SftpError.h"

#include <QDir>
#include <QFile>
#include <QPointer>
#include <QRandomGenerator>
#include <QThreadPool>
#include <QTimer>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ty {
namespace {

constexpr qint64 kChunk = 200000; // bytes per sftp_write (LIBSSH-NOTES.md)

QString tmpNameFor(const QString& path)
{
    const qsizetype slash = path.lastIndexOf(u'/');
    return path.left(slash + 1)
            + QStringLiteral(".trainyard-tmp-%1-")
                      .arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'))
            + path.mid(slash + 1).left(64);
}

QString errnoText()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

} // namespace

// ---- the local node ------------------------------------------------------

Result<NodeFileInfo> LocalNodeFiles::lstat(const QString& path)
{
    struct stat st { };
    NodeFileInfo info;
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return info;
        return fail(QStringLiteral("the local node: cannot stat %1: %2").arg(path, errnoText()));
    }
    info.type = S_ISREG(st.st_mode) ? NodeFileInfo::Type::File
            : S_ISDIR(st.st_mode)   ? NodeFileInfo::Type::Directory
            : S_ISLNK(st.st_mode)   ? NodeFileInfo::Type::Symlink
                                    : NodeFileInfo::Type::Other;
    info.size = qint64(st.st_size);
    info.mtimeSec = qint64(st.st_mtim.tv_sec);
    info.mode = int(st.st_mode & 07777);
    return info;
}

Result<void> LocalNodeFiles::makeDirs(const QString& path)
{
    if (!QDir().mkpath(path))
        return fail(QStringLiteral("the local node: cannot create the directory %1").arg(path));
    return {};
}

Result<void> LocalNodeFiles::writeFile(const QString& path, QIODevice& source, int mode)
{
    const QString tmp = tmpNameFor(path);
    QFile out(tmp);
    if (!out.open(QIODevice::WriteOnly | QIODevice::NewOnly))
        return fail(QStringLiteral("the local node: cannot create %1: %2").arg(tmp, out.errorString()));
    QByteArray buf;
    while (!source.atEnd()) {
        buf = source.read(1 << 20);
        if (buf.isEmpty() && !source.atEnd())
            break;
        if (out.write(buf) != buf.size()) {
            const QString why = out.errorString();
            out.remove();
            return fail(QStringLiteral("the local node: writing %1 failed: %2").arg(tmp, why));
        }
    }
    out.close();
    ::chmod(QFile::encodeName(tmp).constData(), mode_t(mode & 07777));
    if (::rename(QFile::encodeName(tmp).constData(), QFile::encodeName(path).constData()) != 0) {
        const QString why = errnoText();
        QFile::remove(tmp);
        return fail(QStringLiteral("the local node: cannot rename %1 to %2: %3").arg(tmp, path, why));
    }
    return {};
}

Result<void> LocalNodeFiles::readFile(const QString& path, QIODevice& sink)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return fail(QStringLiteral("the local node: cannot open %1: %2%3")
                            .arg(path, errnoText(), errno == ELOOP ? QStringLiteral(" (a symbolic link)") : QString()));
    QFile in;
    if (!in.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        return fail(QStringLiteral("the local node: cannot read %1").arg(path));
    }
    while (!in.atEnd()) {
        const QByteArray buf = in.read(1 << 20);
        if (buf.isEmpty())
            break;
        if (sink.write(buf) != buf.size())
            return fail(QStringLiteral("cannot write a copy of %1: %2").arg(path, sink.errorString()));
    }
    return {};
}

Result<void> LocalNodeFiles::remove(const QString& path)
{
    if (::unlink(QFile::encodeName(path).constData()) != 0 && errno != ENOENT)
        return fail(QStringLiteral("the local node: cannot remove %1: %2").arg(path, errnoText()));
    return {};
}

Result<void> LocalNodeFiles::removeEmptyDir(const QString& path)
{
    if (::rmdir(QFile::encodeName(path).constData()) != 0)
        return fail(QStringLiteral("the local node: cannot remove the directory %1: %2").arg(path, errnoText()));
    return {};
}

Result<QString> LocalNodeFiles::readLink(const QString& path)
{
    const QByteArray p = QFile::encodeName(path);
    QByteArray buf(256, Qt::Uninitialized);
    for (;;) {
        const ssize_t n = ::readlink(p.constData(), buf.data(), size_t(buf.size()));
        if (n < 0)
            return fail(QStringLiteral("the local node: cannot read the symbolic link %1: %2").arg(path, errnoText()));
        if (n < buf.size())
            return QFile::decodeName(buf.left(n));
        buf.resize(buf.size() * 2);
    }
}

Result<void> LocalNodeFiles::makeLink(const QString& path, const QString& target)
{
    const QString tmp = tmpNameFor(path);
    const QByteArray t = QFile::encodeName(tmp);
    if (::symlink(QFile::encodeName(target).constData(), t.constData()) != 0)
        return fail(QStringLiteral("the local node: cannot make the symbolic link %1: %2").arg(tmp, errnoText()));
    // rename(2) replaces a file or link at `path` itself; over a directory it fails.
    if (::rename(t.constData(), QFile::encodeName(path).constData()) != 0) {
        const QString why = errnoText();
        ::unlink(t.constData());
        return fail(QStringLiteral("the local node: cannot rename %1 to %2: %3").arg(tmp, path, why));
    }
    return {};
}

Result<bool> LocalNodeFiles::existsFollowingLinks(const QString& path)
{
    struct stat st { };
    if (::stat(QFile::encodeName(path).constData(), &st) == 0)
        return true;
    if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
        return false;
    return fail(QStringLiteral("the local node: cannot stat %1: %2").arg(path, errnoText()));
}

// ---- SFTP ----------------------------------------------------------------

SftpNodeFiles::SftpNodeFiles(
        ssh_session_struct* session, sftp_session_struct* sftp, QString node, std::function<void()> pump)
    : m_session(session)
    , m_sftp(sftp)
    , m_node(std::move(node))
    , m_pump(std::move(pump))
{ }

QString SftpNodeFiles::error() const
{
    return sftpErrorText(m_session, m_sftp);
}

Result<NodeFileInfo> SftpNodeFiles::lstat(const QString& path)
{
    pump();
    const QByteArray p = path.toUtf8();
    NodeFileInfo info;
    sftp_attributes a = sftp_lstat(m_sftp, p.constData());
    if (!a) {
        const int code = sftp_get_error(m_sftp);
        if (code == SSH_FX_NO_SUCH_FILE || code == SSH_FX_NO_SUCH_PATH)
            return info;
        return fail(QStringLiteral("node %1: cannot stat %2: %3").arg(m_node, path, error()));
    }
    switch (a->type) {
    case SSH_FILEXFER_TYPE_REGULAR: info.type = NodeFileInfo::Type::File; break;
    case SSH_FILEXFER_TYPE_DIRECTORY: info.type = NodeFileInfo::Type::Directory; break;
    case SSH_FILEXFER_TYPE_SYMLINK: info.type = NodeFileInfo::Type::Symlink; break;
    default: info.type = NodeFileInfo::Type::Other; break;
    }
    info.size = qint64(a->size);
    info.mtimeSec = qint64(a->mtime);
    info.mode = int(a->permissions & 07777);
    sftp_attributes_free(a);
    return info;
}

Result<void> SftpNodeFiles::makeDirs(const QString& dir)
{
    pump();
    QString path;
    for (const QString& part : dir.split(u'/', Qt::SkipEmptyParts)) {
        path += u'/' + part;
        const QByteArray p = path.toUtf8();
        sftp_attributes a = sftp_stat(m_sftp, p.constData());
        if (a) {
            const bool isDir = a->type == SSH_FILEXFER_TYPE_DIRECTORY;
            sftp_attributes_free(a);
            if (!isDir)
                return fail(QStringLiteral("node %1: %2 exists and is not a directory").arg(m_node, path));
            continue;
        }
        if (sftp_mkdir(m_sftp, p.constData(), 0755) != 0 && sftp_get_error(m_sftp) != SSH_FX_FILE_ALREADY_EXISTS)
            return fail(QStringLiteral("node %1: cannot create the directory %2: %3").arg(m_node, path, error()));
    }
    return {};
}

Result<void> SftpNodeFiles::writeFile(const QString& path, QIODevice& source, int mode)
{
    const QString tmpName = tmpNameFor(path);
    const QByteArray tmp = tmpName.toUtf8();
    const QByteArray target = path.toUtf8();
    sftp_file f = sftp_open(m_sftp, tmp.constData(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (!f)
        return fail(QStringLiteral("node %1: cannot create %2: %3").arg(m_node, tmpName, error()));
    while (!source.atEnd()) {
        const QByteArray chunk = source.read(kChunk);
        if (chunk.isEmpty())
            break;
        qsizetype done = 0;
        while (done < chunk.size()) {
            const ssize_t n = sftp_write(f, chunk.constData() + done, size_t(chunk.size() - done));
            if (n <= 0) {
                const QString why = error();
                sftp_close(f);
                sftp_unlink(m_sftp, tmp.constData());
                return fail(QStringLiteral("node %1: writing %2 failed: %3").arg(m_node, tmpName, why));
            }
            done += n;
        }
        pump();
    }
    if (sftp_close(f) != SSH_OK) {
        const QString why = error();
        sftp_unlink(m_sftp, tmp.constData());
        return fail(QStringLiteral("node %1: closing %2 failed: %3").arg(m_node, tmpName, why));
    }
    if (sftp_chmod(m_sftp, tmp.constData(), mode_t(mode & 07777)) != 0) {
        const QString why = error();
        sftp_unlink(m_sftp, tmp.constData());
        return fail(QStringLiteral("node %1: cannot chmod %2: %3").arg(m_node, tmpName, why));
    }
    if (sftp_rename(m_sftp, tmp.constData(), target.constData()) != 0) {
        // Servers without posix-rename refuse to replace: remove the old file first.
        sftp_unlink(m_sftp, target.constData());
        if (sftp_rename(m_sftp, tmp.constData(), target.constData()) != 0) {
            const QString why = error();
            sftp_unlink(m_sftp, tmp.constData());
            return fail(QStringLiteral("node %1: cannot rename %2 to %3: %4").arg(m_node, tmpName, path, why));
        }
    }
    return {};
}

Result<void> SftpNodeFiles::readFile(const QString& path, QIODevice& sink)
{
    const auto info = lstat(path);
    if (!info)
        return std::unexpected(info.error());
    if (info->type != NodeFileInfo::Type::File)
        return fail(QStringLiteral("node %1: %2 is not a regular file").arg(m_node, path));
    const QByteArray p = path.toUtf8();
    sftp_file f = sftp_open(m_sftp, p.constData(), O_RDONLY, 0);
    if (!f)
        return fail(QStringLiteral("node %1: cannot open %2: %3").arg(m_node, path, error()));
    QByteArray buf(64 * 1024, Qt::Uninitialized);
    for (;;) {
        const ssize_t n = sftp_read(f, buf.data(), size_t(buf.size()));
        if (n < 0) {
            const QString why = error();
            sftp_close(f);
            return fail(QStringLiteral("node %1: reading %2 failed: %3").arg(m_node, path, why));
        }
        if (n == 0)
            break;
        if (sink.write(buf.constData(), n) != n) {
            sftp_close(f);
            return fail(QStringLiteral("cannot write a copy of %1: %2").arg(path, sink.errorString()));
        }
        pump();
    }
    sftp_close(f);
    return {};
}

Result<void> SftpNodeFiles::remove(const QString& path)
{
    pump();
    const QByteArray p = path.toUtf8();
    if (sftp_unlink(m_sftp, p.constData()) != 0) {
        const int code = sftp_get_error(m_sftp);
        if (code != SSH_FX_NO_SUCH_FILE && code != SSH_FX_NO_SUCH_PATH)
            return fail(QStringLiteral("node %1: cannot remove %2: %3").arg(m_node, path, error()));
    }
    return {};
}

Result<void> SftpNodeFiles::removeEmptyDir(const QString& path)
{
    pump();
    const QByteArray p = path.toUtf8();
    if (sftp_rmdir(m_sftp, p.constData()) != 0)
        return fail(QStringLiteral("node %1: cannot remove the directory %2: %3").arg(m_node, path, error()));
    return {};
}

Result<QString> SftpNodeFiles::readLink(const QString& path)
{
    pump();
    const QByteArray p = path.toUtf8();
    char* text = sftp_readlink(m_sftp, p.constData());
    if (!text)
        return fail(QStringLiteral("node %1: cannot read the symbolic link %2: %3").arg(m_node, path, error()));
    const QString target = QString::fromUtf8(text);
    ssh_string_free_char(text);
    return target;
}

Result<void> SftpNodeFiles::makeLink(const QString& path, const QString& target)
{
    pump();
    const QString tmpName = tmpNameFor(path);
    const QByteArray tmp = tmpName.toUtf8();
    const QByteArray link = path.toUtf8();
    const QByteArray text = target.toUtf8();
    // SSH_FXP_SYMLINK is (linkpath, targetpath) in the draft RFC, but OpenSSH's
    // sftp-server reads (targetpath, linkpath). libssh 0.10's
    // sftp_symlink(sftp, target, dest) sends the OpenSSH order when the
    // server's banner says OpenSSH and the RFC order otherwise; so the call is
    // (target, link) here and the result is checked below.
    if (sftp_symlink(m_sftp, text.constData(), tmp.constData()) != 0)
        return fail(QStringLiteral("node %1: cannot make the symbolic link %2: %3").arg(m_node, tmpName, error()));
    const auto made = lstat(tmpName);
    if (!made || made->type != NodeFileInfo::Type::Symlink) {
        // A server that swaps the arguments without saying so made a link named
        // after the target text instead (relative to its own directory): undo
        // exactly that one, and never go on.
        char* swapped = sftp_readlink(m_sftp, text.constData());
        if (swapped && QByteArray(swapped) == tmp)
            sftp_unlink(m_sftp, text.constData());
        if (swapped)
            ssh_string_free_char(swapped);
        return fail(QStringLiteral("node %1: the SFTP server did not make the symbolic link %2 "
                                   "(it may take SSH_FXP_SYMLINK's arguments in the other order)")
                            .arg(m_node, tmpName));
    }
    if (const auto got = readLink(tmpName); !got || *got != target) {
        sftp_unlink(m_sftp, tmp.constData());
        return fail(
                QStringLiteral("node %1: the symbolic link %2 does not read back as %3").arg(m_node, tmpName, target));
    }
    if (sftp_rename(m_sftp, tmp.constData(), link.constData()) != 0) {
        // Servers without posix-rename refuse to replace: remove the old file or link
        // first (unlink never removes a directory, nor follows a link).
        sftp_unlink(m_sftp, link.constData());
        if (sftp_rename(m_sftp, tmp.constData(), link.constData()) != 0) {
            const QString why = error();
            sftp_unlink(m_sftp, tmp.constData());
            return fail(QStringLiteral("node %1: cannot rename %2 to %3: %4").arg(m_node, tmpName, path, why));
        }
    }
    return {};
}

Result<bool> SftpNodeFiles::existsFollowingLinks(const QString& path)
{
    pump();
    const QByteArray p = path.toUtf8();
    sftp_attributes a = sftp_stat(m_sftp, p.constData());
    if (a) {
        sftp_attributes_free(a);
        return true;
    }
    const int code = sftp_get_error(m_sftp);
    // OpenSSH reports a loop or a dangling link as "no such file" or a failure.
    if (code == SSH_FX_NO_SUCH_FILE || code == SSH_FX_NO_SUCH_PATH || code == SSH_FX_FAILURE)
        return false;
    return fail(QStringLiteral("node %1: cannot stat %2: %3").arg(m_node, path, error()));
}

// ---- the default runner: this machine's files, on a pool thread -------------

void AgentTransport::runFileJob(NodeFileJob job, std::function<void(const Result<void>&)> done)
{
    QPointer<AgentTransport> self(this);
    QThreadPool::globalInstance()->start([self, job = std::move(job), done = std::move(done)]() mutable {
        LocalNodeFiles files;
        Result<void> r = job(files);
        if (!self)
            return;
        QMetaObject::invokeMethod(
                self.data(),
                [done = std::move(done), r] {
                    if (done)
                        done(r);
                },
                Qt::QueuedConnection);
    });
}

void AgentTransport::probe(std::function<void(std::optional<bool>)> done)
{
    QTimer::singleShot(0, this, [done = std::move(done)] { done(std::nullopt); });
}

} // namespace ty
