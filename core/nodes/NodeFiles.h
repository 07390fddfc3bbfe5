#pragma once

// Blocking file operations on a node's file system, the one code path that
// workdir sync and artifact downloads (WorkdirSync.h) use on every node:
//   - LocalNodeFiles: this machine (the local node), POSIX/QFile;
//   - SftpNodeFiles: an SSH node, over libssh SFTP on the node's own SSH
//     session (SshSession::runFileJob), chunked in 200,000-byte writes
//     (LIBSSH-NOTES.md) with the agent channel serviced between chunks.
// Thread affinity: an instance is used on one thread only (the SSH session's
// thread for SFTP). Paths are absolute on the node. Errors name the node, the
// path and the cause.

#include "core/common/Result.h"

#include <QByteArray>
#include <QString>

#include <functional>

class QIODevice;
struct ssh_session_struct;
struct sftp_session_struct;

namespace ty {

struct NodeFileInfo {
    enum class Type { Missing, File, Directory, Symlink, Other };
    Type type = Type::Missing;
    qint64 size = 0;     // bytes (of the link itself for a symlink)
    qint64 mtimeSec = 0; // modification time, s since the epoch
    int mode = 0;        // permission bits (07777)
};

class NodeFiles {
public:
    virtual ~NodeFiles() = default;
    // "node ws1" / "the local node", for messages.
    virtual QString describe() const = 0;
    // Does not follow a final symlink. A missing path is Type::Missing, not an error.
    virtual Result<NodeFileInfo> lstat(const QString& path) = 0;
    // mkdir -p (0755).
    virtual Result<void> makeDirs(const QString& path) = 0;
    // Writes everything `source` yields to `path`: a temporary name in the same
    // directory, then chmod `mode`, then rename over `path`, so a half-written
    // file is never seen under its name.
    virtual Result<void> writeFile(const QString& path, QIODevice& source, int mode) = 0;
    // Reads `path` (a regular file; a symlink is refused) into `sink`.
    virtual Result<void> readFile(const QString& path, QIODevice& sink) = 0;
    // Removes a file or a symlink itself (never what it points to; not a
    // directory). A missing file is fine.
    virtual Result<void> remove(const QString& path) = 0;
    // Removes `path` if it is an empty directory; an error otherwise (not
    // empty, not a directory, missing).
    virtual Result<void> removeEmptyDir(const QString& path) = 0;
    // The text of the symlink `path` (not resolved), as readlink(2) gives it.
    virtual Result<QString> readLink(const QString& path) = 0;
    // Makes `path` a symlink whose text is exactly `target` (not resolved, not
    // checked: it may point anywhere or nowhere). Made under a temporary name
    // in the same directory, then renamed over `path`, so an existing file or
    // symlink there is replaced as a whole and never written through; a
    // directory there is an error.
    virtual Result<void> makeLink(const QString& path, const QString& target) = 0;
    // Whether something exists at `path` following symlinks all the way (a
    // dangling link: false). Errors other than "not there" are errors.
    virtual Result<bool> existsFollowingLinks(const QString& path) = 0;
};

class LocalNodeFiles final : public NodeFiles {
public:
    QString describe() const override { return QStringLiteral("the local node"); }
    Result<NodeFileInfo> lstat(const QString& path) override;
    Result<void> makeDirs(const QString& path) override;
    Result<void> writeFile(const QString& path, QIODevice& source, int mode) override;
    Result<void> readFile(const QString& path, QIODevice& sink) override;
    Result<void> remove(const QString& path) override;
    Result<void> removeEmptyDir(const QString& path) override;
    Result<QString> readLink(const QString& path) override;
    Result<void> makeLink(const QString& path, const QString& target) override;
    Result<bool> existsFollowingLinks(const QString& path) override;
};

class SftpNodeFiles final : public NodeFiles {
public:
    // `session` is blocking while this is used. `pump` is called before
    // every call and between chunks, so the session's other channels keep
    // flowing (heartbeats) through thousands of small requests too.
    SftpNodeFiles(ssh_session_struct* session, sftp_session_struct* sftp, QString node, std::function<void()> pump);
    QString describe() const override { return QStringLiteral("node ") + m_node; }
    Result<NodeFileInfo> lstat(const QString& path) override;
    Result<void> makeDirs(const QString& path) override;
    Result<void> writeFile(const QString& path, QIODevice& source, int mode) override;
    Result<void> readFile(const QString& path, QIODevice& sink) override;
    Result<void> remove(const QString& path) override;
    Result<void> removeEmptyDir(const QString& path) override;
    Result<QString> readLink(const QString& path) override;
    Result<void> makeLink(const QString& path, const QString& target) override;
    Result<bool> existsFollowingLinks(const QString& path) override;

private:
    QString error() const;
    void pump()
    {
        if (m_pump)
            m_pump();
    }
    ssh_session_struct* m_session;
    sftp_session_struct* m_sftp;
    QString m_node;
    std::function<void()> m_pump;
};

// A job on a node's files, run by AgentTransport::runFileJob on the thread
// that may use them.
using NodeFileJob = std::function<Result<void>(NodeFiles& files)>;

} // namespace ty
