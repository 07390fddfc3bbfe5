#include "WorkdirScan.h"

#include "GitIgnore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ty {
namespace {

struct Walker {
    QString root;
    bool honourGitIgnore = true;
    GitIgnore ignore;
    WorkdirScan scan;
    QString error; // the first one; the walk goes on, the scan fails

    void walk(const QString& rel)
    {
        const QString abs = rel.isEmpty() ? root : root + u'/' + rel;
        QFile gi(abs + QStringLiteral("/.gitignore"));
        if (honourGitIgnore && gi.open(QIODevice::ReadOnly))
            ignore.addFile(rel, gi.readAll());
        QDir dir(abs);
        const QFileInfoList entries
                = dir.entryInfoList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
        for (const QFileInfo& fi : entries) {
            const QString childRel = rel.isEmpty() ? fi.fileName() : rel + u'/' + fi.fileName();
            const bool isLink = fi.isSymLink();
            const bool isDir = !isLink && fi.isDir();
            if ((isDir && fi.fileName() == QStringLiteral(".git")) || ignore.ignored(childRel, isDir)) {
                ++scan.ignored;
                continue;
            }
            if (isLink) {
                // The link itself, as git stores it: its text, not what it points to.
                const auto target = readLinkText(abs + u'/' + fi.fileName());
                if (!target) {
                    if (error.isEmpty())
                        error = target.error().message;
                    continue;
                }
                scan.links.append(WorkdirLink{childRel, *target});
                continue;
            }
            if (isDir) {
                walk(childRel);
            } else if (fi.isFile()) {
                WorkdirFile f{childRel, fi.size()};
                struct stat st { };
                if (::stat(QFile::encodeName(fi.absoluteFilePath()).constData(), &st) == 0) {
                    f.mode = int(st.st_mode & 0777);
                    f.size = qint64(st.st_size);
                    f.mtimeNs = qint64(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
                    f.ctimeNs = qint64(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
                    f.inode = quint64(st.st_ino);
                    f.device = quint64(st.st_dev);
                }
                scan.files.append(f);
                scan.totalBytes += f.size;
            } else {
                scan.skipped << childRel + QStringLiteral(" (not a file, folder or link)");
            }
        }
        // QDir leaves out names whose bytes are not valid UTF-8 (they would
        // not name the file again once decoded): read the folder for them.
        if (DIR* d = ::opendir(QFile::encodeName(abs).constData())) {
            while (const dirent* e = ::readdir(d)) {
                const QByteArray raw(e->d_name);
                const QString name = QFile::decodeName(raw);
                if (QFile::encodeName(name) != raw)
                    scan.skipped << (rel.isEmpty() ? name : rel + u'/' + name)
                                    + QStringLiteral(" (name not valid UTF-8)");
            }
            ::closedir(d);
        }
    }
};

} // namespace

Result<QString> readLinkText(const QString& path)
{
    const QByteArray p = QFile::encodeName(path);
    QByteArray buf(256, Qt::Uninitialized);
    for (;;) {
        const ssize_t n = ::readlink(p.constData(), buf.data(), size_t(buf.size()));
        if (n < 0)
            return fail(QStringLiteral("cannot read the symbolic link %1: %2")
                                .arg(path, QString::fromLocal8Bit(std::strerror(errno))));
        if (n < buf.size())
            return QFile::decodeName(buf.left(n));
        buf.resize(buf.size() * 2);
    }
}

Result<WorkdirScan> scanWorkdirTree(const QString& rootIn, bool honourGitIgnore)
{
    const QFileInfo rootInfo(rootIn);
    if (!rootInfo.isDir())
        return fail(QStringLiteral("%1 is not a directory").arg(rootIn));
    Walker w;
    w.root = rootInfo.absoluteFilePath();
    w.honourGitIgnore = honourGitIgnore;
    w.scan.root = w.root;
    w.walk(QString());
    if (!w.error.isEmpty())
        return fail(w.error);
    return w.scan;
}

} // namespace ty
