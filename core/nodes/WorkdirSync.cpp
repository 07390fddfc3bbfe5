#include "WorkdirSync.h"

#include "core/agentproto/Fields.h"
#include "core/nodes/NodesLog.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

namespace ty {
namespace {

QString mib(qint64 bytes)
{
    return QStringLiteral("%1 MiB").arg(double(bytes) / (1024.0 * 1024.0), 0, 'f', 1);
}

Result<QByteArray> sha256Of(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1: %2").arg(path, f.errorString()));
    QCryptographicHash h(QCryptographicHash::Sha256);
    if (!h.addData(&f))
        return fail(QStringLiteral("cannot read %1").arg(path));
    return h.result().toHex();
}

} // namespace

Result<SyncScan> scanWorkdir(const QString& rootIn, qint64 limitBytes, const QString& databasePath)
{
    if (!QFileInfo(rootIn).isDir())
        return fail(QStringLiteral("sync: the workdir %1 is not a directory").arg(rootIn));
    auto scanned = scanWorkdirTree(rootIn);
    if (!scanned)
        return fail(QStringLiteral("sync: %1").arg(scanned.error().message));
    if (!databasePath.isEmpty()) {
        const QFileInfo db(databasePath);
        const QString dir = QFileInfo(db.absolutePath()).canonicalFilePath();
        const QString name = db.fileName();
        const auto isDatabase = [&](const QString& rel) {
            const QFileInfo f(scanned->root + u'/' + rel);
            if (QFileInfo(f.absolutePath()).canonicalFilePath() != dir && !rel.contains(name + u'.'))
                return false;
            const QString abs = QFileInfo(f.absolutePath()).canonicalFilePath() + u'/' + f.fileName();
            const QString base = dir + u'/' + name;
            return abs == base || abs.startsWith(base + u'-') || abs.startsWith(base + u'.');
        };
        const auto leave = [&](const QString& rel) {
            scanned->skipped << QStringLiteral("%1 (the result database: never copied)").arg(rel);
        };
        for (qsizetype i = scanned->files.size() - 1; i >= 0; --i)
            if (isDatabase(scanned->files.at(i).rel)) {
                scanned->totalBytes -= scanned->files.at(i).size;
                leave(scanned->files.takeAt(i).rel);
            }
        for (qsizetype i = scanned->links.size() - 1; i >= 0; --i)
            if (isDatabase(scanned->links.at(i).rel))
                leave(scanned->links.takeAt(i).rel);
    }
    const SyncScan& scan = *scanned;
    if (limitBytes > 0 && scan.totalBytes > limitBytes) {
        QList<SyncEntry> biggest = scan.files;
        std::sort(
                biggest.begin(), biggest.end(), [](const SyncEntry& a, const SyncEntry& b) { return a.size > b.size; });
        QStringList names;
        for (qsizetype i = 0; i < std::min<qsizetype>(5, biggest.size()); ++i)
            names << QStringLiteral("%1 (%2)").arg(biggest[i].rel, mib(biggest[i].size));
        return fail(QStringLiteral("sync: %1 holds %2 in %3 files after .gitignore, more than sync_limit %4. "
                                   "Biggest: %5. Add them to .gitignore or raise sync_limit in the job spec.")
                            .arg(scan.root, mib(scan.totalBytes))
                            .arg(scan.files.size())
                            .arg(mib(limitBytes), names.join(QStringLiteral(", "))));
    }
    return scanned;
}

QString syncDirFor(const QString& agentStateDir, const QString& localWorkdir)
{
    const QString clean = QDir::cleanPath(localWorkdir);
    QString name = QFileInfo(clean).fileName();
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
    if (name.isEmpty() || name.startsWith(u'.'))
        name.prepend(u'w');
    const QByteArray hash = QCryptographicHash::hash(clean.toUtf8(), QCryptographicHash::Sha256).toHex().left(12);
    return agentStateDir + QStringLiteral("/sync/") + name.left(40) + u'-' + QString::fromLatin1(hash);
}

namespace {

// The folders of the synced tree on the node, checked right before anything is
// written below them: never through a symlink, never outside `root`.
struct NodeTree {
    NodeFiles& files;
    QString root;           // remoteDir
    QSet<QString> realDirs; // relative folders checked (or made) as real directories in this sync

    // Makes every folder of `rel` (not its last component) a real directory on
    // the node. Each is checked with lstat the first time this sync meets it:
    // missing, it is made; a symlink (synced earlier, or made by a run) is
    // removed, its target left alone, and a directory made in its place; a file
    // there is an error. This sync's own links never sit on a folder's path
    // (the scan does not descend into links), so a folder checked once stays
    // checked for the rest of it.
    Result<void> prepareParents(const QString& rel)
    {
        const QStringList parts = rel.split(u'/');
        QString sub;
        for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
            sub = sub.isEmpty() ? parts[i] : sub + u'/' + parts[i];
            if (realDirs.contains(sub))
                continue;
            const QString path = root + u'/' + sub;
            const auto info = files.lstat(path);
            if (!info)
                return std::unexpected(info.error());
            if (info->type != NodeFileInfo::Type::Directory) {
                if (info->type == NodeFileInfo::Type::Symlink) {
                    qCInfo(lcNodes).noquote() << "sync to" << files.describe() << ": the symbolic link" << path
                                              << "is now a folder in the workdir: replacing the link (not its target)";
                    if (auto r = files.remove(path); !r)
                        return std::unexpected(r.error());
                } else if (info->type != NodeFileInfo::Type::Missing) {
                    return fail(QStringLiteral("sync to %1: %2 is in the way of %3 and is not a directory")
                                        .arg(files.describe(), path, rel));
                }
                if (auto made = files.makeDirs(path); !made)
                    return std::unexpected(made.error());
                const auto again = files.lstat(path);
                if (!again)
                    return std::unexpected(again.error());
                if (again->type != NodeFileInfo::Type::Directory)
                    return fail(
                            QStringLiteral("sync to %1: %2 did not become a directory").arg(files.describe(), path));
            }
            realDirs.insert(sub);
        }
        return {};
    }

    // Whether every folder of `rel` is a real directory on the node right now
    // (nothing missing, no symlink on the way). Changes nothing.
    Result<bool> parentsAreRealDirs(const QString& rel)
    {
        const QStringList parts = rel.split(u'/');
        QString path = root;
        for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
            path += u'/' + parts[i];
            const auto info = files.lstat(path);
            if (!info)
                return std::unexpected(info.error());
            if (info->type != NodeFileInfo::Type::Directory)
                return false;
        }
        return true;
    }
};

QStringList foldersOf(const QString& rel)
{
    QStringList out;
    for (qsizetype i = rel.indexOf(u'/'); i >= 0; i = rel.indexOf(u'/', i + 1))
        out << rel.left(i);
    return out; // outermost first
}

} // namespace

Result<SyncReport> syncToNode(const SyncScan& scan, const QString& remoteDir, NodeFiles& files)
{
    SyncReport report;
    if (const auto root = files.lstat(remoteDir); !root) {
        return std::unexpected(root.error());
    } else if (root->type != NodeFileInfo::Type::Missing && root->type != NodeFileInfo::Type::Directory) {
        return fail(QStringLiteral("sync to %1: %2 is not a directory (%3)")
                            .arg(files.describe(), remoteDir,
                                    root->type == NodeFileInfo::Type::Symlink ? QStringLiteral("a symbolic link")
                                                                              : QStringLiteral("a file")));
    }
    if (auto made = files.makeDirs(remoteDir); !made)
        return std::unexpected(made.error());
    const QString manifestPath = remoteDir + u'/' + QLatin1String(kSyncManifestName);
    QJsonObject manifest;
    if (auto info = files.lstat(manifestPath); info && info->type == NodeFileInfo::Type::File) {
        QBuffer buf;
        buf.open(QIODevice::WriteOnly);
        if (files.readFile(manifestPath, buf))
            manifest = QJsonDocument::fromJson(buf.data()).object().value(QStringLiteral("files")).toObject();
    }
    QJsonObject next;
    NodeTree tree{files, remoteDir, {}};
    auto saveManifest = [&]() -> Result<void> {
        QJsonObject doc{
                {QStringLiteral("version"), 1}, {QStringLiteral("source"), scan.root}, {QStringLiteral("files"), next}};
        QBuffer buf;
        buf.setData(QJsonDocument(doc).toJson(QJsonDocument::Compact));
        buf.open(QIODevice::ReadOnly);
        return files.writeFile(manifestPath, buf, 0644);
    };

    // Files and links this sync put there before and that are gone (or ignored)
    // now go first, with the folders they leave empty, so that a folder turned
    // into a link in the workdir can become one on the node.
    QSet<QString> wanted, wantedFolders;
    for (const SyncEntry& e : scan.files)
        wanted.insert(e.rel);
    for (const SyncLink& l : scan.links)
        wanted.insert(l.rel);
    for (const QString& rel : std::as_const(wanted))
        for (const QString& folder : foldersOf(rel))
            wantedFolders.insert(folder);
    for (auto it = manifest.constBegin(); it != manifest.constEnd(); ++it) {
        if (wanted.contains(it.key()) || !isSafeRelativePath(it.key()))
            continue;
        // Through a link (or gone), whatever is there is not what this sync put there.
        const auto real = tree.parentsAreRealDirs(it.key());
        if (!real)
            return std::unexpected(real.error());
        if (!*real)
            continue;
        // Sync put a file or a link there. A folder in its place is not its
        // (a run made it, or an earlier sync failed after making it, and the
        // folder may be wanted now): left.
        const QString stale = remoteDir + u'/' + it.key();
        const auto info = files.lstat(stale);
        if (!info)
            return std::unexpected(info.error());
        if (info->type == NodeFileInfo::Type::Missing)
            continue;
        if (info->type == NodeFileInfo::Type::Directory) {
            qCInfo(lcNodes).noquote() << QStringLiteral("sync to %1: %2 is a folder now, not the file or link sync put "
                                                        "there: left alone")
                                                 .arg(files.describe(), stale);
            continue;
        }
        if (auto r = files.remove(stale); !r)
            return std::unexpected(r.error());
        ++report.removed;
        const QStringList folders = foldersOf(it.key());
        for (auto f = folders.crbegin(); f != folders.crend() && !wantedFolders.contains(*f); ++f)
            if (!files.removeEmptyDir(remoteDir + u'/' + *f))
                break; // not empty: outputs of a run, or other stale files still to go
    }

    for (const SyncEntry& e : scan.files) {
        const QString local = scan.root + u'/' + e.rel;
        const QString remote = remoteDir + u'/' + e.rel;
        const auto sha = sha256Of(local);
        if (!sha)
            return fail(QStringLiteral("sync to %1: %2").arg(files.describe(), sha.error().message));
        if (auto ready = tree.prepareParents(e.rel); !ready)
            return std::unexpected(ready.error());
        const QJsonObject old = manifest.value(e.rel).toObject();
        if (!old.isEmpty() && !old.contains(QStringLiteral("link"))
                && qint64(old.value(QStringLiteral("size")).toDouble()) == e.size
                && old.value(QStringLiteral("sha256")).toString().toLatin1() == *sha
                && old.value(QStringLiteral("mode")).toInt() == e.mode) {
            const auto info = files.lstat(remote);
            if (!info)
                return std::unexpected(info.error());
            if (info->type == NodeFileInfo::Type::File && info->size == e.size
                    && info->mtimeSec == qint64(old.value(QStringLiteral("mtime")).toDouble())) {
                next.insert(e.rel, old);
                ++report.skipped;
                continue;
            }
        }
        QFile in(local);
        if (!in.open(QIODevice::ReadOnly))
            return fail(
                    QStringLiteral("sync to %1: cannot read %2: %3").arg(files.describe(), local, in.errorString()));
        // A temporary name, then a rename over `remote`: a link there is replaced, not written through.
        if (auto w = files.writeFile(remote, in, e.mode); !w)
            return fail(QStringLiteral("sync of %1: %2").arg(scan.root, w.error().message));
        const auto info = files.lstat(remote);
        if (!info)
            return std::unexpected(info.error());
        next.insert(e.rel,
                QJsonObject{{QStringLiteral("size"), double(e.size)},
                        {QStringLiteral("sha256"), QString::fromLatin1(*sha)}, {QStringLiteral("mode"), e.mode},
                        {QStringLiteral("mtime"), double(info->mtimeSec)}});
        ++report.uploaded;
        report.bytesUploaded += e.size;
    }

    for (const SyncLink& l : scan.links) {
        const QString remote = remoteDir + u'/' + l.rel;
        if (auto ready = tree.prepareParents(l.rel); !ready)
            return std::unexpected(ready.error());
        const auto info = files.lstat(remote);
        if (!info)
            return std::unexpected(info.error());
        bool same = false;
        if (info->type == NodeFileInfo::Type::Symlink) {
            const auto text = files.readLink(remote);
            if (!text)
                return std::unexpected(text.error());
            same = *text == l.target;
        } else if (info->type == NodeFileInfo::Type::Directory) {
            // A folder synced before that is a link in the workdir now: its synced
            // files went above; anything still in it was not put there by sync.
            if (!files.removeEmptyDir(remote))
                return fail(QStringLiteral(
                        "sync to %1: cannot make the symbolic link %2 -> %3: %4 is a folder there "
                        "holding files that sync did not put there (outputs of a run?); move it away on the node")
                                    .arg(files.describe(), l.rel, l.target, remote));
        }
        if (same) {
            ++report.skipped;
        } else {
            if (auto made = files.makeLink(remote, l.target); !made)
                return fail(QStringLiteral("sync of %1: %2").arg(scan.root, made.error().message));
            ++report.linked;
        }
        next.insert(l.rel, QJsonObject{{QStringLiteral("link"), l.target}});
        const auto leads = files.existsFollowingLinks(remote);
        if (!leads)
            return std::unexpected(leads.error());
        if (!*leads)
            report.danglingLinks << QStringLiteral("%1 -> %2").arg(l.rel, l.target);
    }

    if (auto saved = saveManifest(); !saved)
        return std::unexpected(saved.error());
    qCInfo(lcNodes).noquote() << "sync" << scan.root << "->" << files.describe() << remoteDir << ":" << report.uploaded
                              << "uploaded," << report.linked << "links made," << report.skipped << "unchanged,"
                              << report.removed << "removed";
    return report;
}

namespace {

// A file read through, counting what was read (stage-in's progress).
class CountingReader final : public QIODevice {
public:
    CountingReader(QFile& file, std::function<void(qint64)> onRead)
        : m_file(file)
        , m_onRead(std::move(onRead))
    { }
    // Not sequential, with the file's size: readers that stop at atEnd() see its end, not an empty buffer.
    qint64 size() const override { return m_file.size(); }

protected:
    qint64 readData(char* data, qint64 maxSize) override
    {
        const qint64 n = m_file.read(data, std::min<qint64>(maxSize, 64 * 1024));
        if (n > 0 && m_onRead)
            m_onRead(n);
        return n;
    }
    qint64 writeData(const char*, qint64) override { return -1; }

private:
    QFile& m_file;
    std::function<void(qint64)> m_onRead;
};

} // namespace

Result<StageReport> stageToNode(const QList<StageFile>& stage, const QString& remoteDir, NodeFiles& files,
        const std::function<void(qint64 done, qint64 total)>& progress)
{
    StageReport report;
    const QString where = QStringLiteral("stage-in to %1").arg(files.describe());
    if (const auto root = files.lstat(remoteDir); !root) {
        return std::unexpected(root.error());
    } else if (root->type != NodeFileInfo::Type::Missing && root->type != NodeFileInfo::Type::Directory) {
        return fail(QStringLiteral("%1: the workdir %2 is not a directory").arg(where, remoteDir));
    }
    if (auto made = files.makeDirs(remoteDir); !made)
        return std::unexpected(made.error());
    NodeTree tree{files, remoteDir, {}};
    // What is in place already is decided first, so the total is what gets copied.
    QList<const StageFile*> toCopy;
    qint64 total = 0;
    for (const StageFile& f : stage) {
        if (!isSafeRelativePath(f.rel))
            return fail(QStringLiteral("%1: refused the name '%2' (absolute, empty or with a '..' component)")
                                .arg(where, f.rel));
        if (f.inPlaceIfSameSize) {
            const auto real = tree.parentsAreRealDirs(f.rel);
            if (!real)
                return std::unexpected(real.error());
            if (*real) {
                const auto info = files.lstat(remoteDir + u'/' + f.rel);
                if (!info)
                    return std::unexpected(info.error());
                if (info->type == NodeFileInfo::Type::File && info->size == f.size) {
                    ++report.inPlace;
                    continue;
                }
            }
        }
        toCopy << &f;
        total += f.size;
    }
    qint64 done = 0;
    if (progress && total > 0)
        progress(0, total);
    for (const StageFile* f : std::as_const(toCopy)) {
        if (auto ready = tree.prepareParents(f->rel); !ready)
            return std::unexpected(ready.error());
        QFile in(f->local);
        if (!in.open(QIODevice::ReadOnly))
            return fail(QStringLiteral("%1: cannot read %2: %3").arg(where, f->local, in.errorString()));
        CountingReader counted(in, [&](qint64 n) {
            done += n;
            if (progress)
                progress(done, total);
        });
        counted.open(QIODevice::ReadOnly);
        const int mode = int(in.permissions() & (QFileDevice::ExeOwner | QFileDevice::ExeGroup | QFileDevice::ExeOther))
                ? 0755
                : 0644;
        const qint64 before = done;
        const QString target = remoteDir + u'/' + f->rel;
        if (auto w = files.writeFile(target, counted, mode); !w)
            return fail(QStringLiteral("%1: %2").arg(where, w.error().message));
        // What arrived is what was read (a file that shrank or grew meanwhile is no copy).
        const auto written = files.lstat(target);
        if (!written)
            return std::unexpected(written.error());
        if (written->size != done - before || done - before != f->size)
            return fail(QStringLiteral("%1: %2 has %3 bytes there, %4 read of %5 expected (%6 changed meanwhile?)")
                                .arg(where, target)
                                .arg(written->size)
                                .arg(done - before)
                                .arg(f->size)
                                .arg(f->local));
        ++report.copied;
        report.bytesCopied += written->size;
    }
    qCInfo(lcNodes).noquote() << where << remoteDir << ":" << report.copied << "copied (" << report.bytesCopied
                              << "bytes)," << report.inPlace << "in place";
    return report;
}

bool isSafeRelativePath(const QString& rel)
{
    // A backslash is an ordinary character in a POSIX name (node and client).
    if (rel.isEmpty() || rel.startsWith(u'/') || rel.contains(QChar(0)))
        return false;
    for (const QString& part : rel.split(u'/'))
        if (part.isEmpty() || part == u"." || part == u"..")
            return false;
    return true;
}

Result<ArtifactDownload> downloadArtifacts(const AgentFileList& list, const QString& destDirIn, NodeFiles& files)
{
    ArtifactDownload out;
    const QString destDir = QFileInfo(destDirIn).absoluteFilePath();
    if (!QDir().mkpath(destDir))
        return fail(QStringLiteral("cannot create the folder %1").arg(destDir));
    QSet<QString> seen;
    for (const AgentFileEntry& e : list.files) {
        auto refuse = [&](const QString& why) {
            out.refused << QStringLiteral("%1: %2").arg(e.path, why);
            qCWarning(lcNodes).noquote() << "artifact" << e.absolutePath << "on" << files.describe()
                                         << why; // why: "refused: ..." or "skipped: ..."
        };
        if (e.nameNotUtf8) {
            // Its bytes cannot be named over SFTP from here: what arrived is U+FFFD.
            refuse(QStringLiteral("refused: its name on the node is not valid UTF-8 (shown with U+FFFD); "
                                  "rename it there to download it"));
            continue;
        }
        if (!isSafeRelativePath(e.path)) {
            refuse(QStringLiteral("refused: the name would land outside %1 (absolute, empty or `..` component)")
                            .arg(destDir));
            continue;
        }
        if (e.type == u"symlink") {
            refuse(QStringLiteral("refused: a symbolic link on the node (to %1)").arg(e.linkTarget));
            continue;
        }
        if (e.type != u"file") {
            refuse(QStringLiteral("refused: not a regular file"));
            continue;
        }
        if (seen.contains(e.path)) {
            refuse(QStringLiteral("skipped: a file of that name was copied already"));
            continue;
        }
        // Checked again right before the copy: it may have become a link since the listing.
        const QString remote
                = (e.root == QLatin1StringView(agentproto::kRootRunDir) ? list.runDir : list.workdir) + u'/' + e.path;
        bool linked = false;
        QString walk = e.root == QLatin1StringView(agentproto::kRootRunDir) ? list.runDir : list.workdir;
        for (const QString& part : e.path.split(u'/')) {
            walk += u'/' + part;
            const auto info = files.lstat(walk);
            if (!info) {
                refuse(info.error().message);
                linked = true;
                break;
            }
            if (info->type == NodeFileInfo::Type::Symlink) {
                refuse(QStringLiteral("refused: %1 is a symbolic link on the node").arg(walk));
                linked = true;
                break;
            }
        }
        if (linked)
            continue;
        // Locally: no component under destDir may be a symlink either.
        QString local = destDir;
        bool bad = false;
        const QStringList parts = e.path.split(u'/');
        for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
            local += u'/' + parts[i];
            const QFileInfo fi(local);
            if (fi.isSymLink()) {
                // Even to a folder: following it could put the copy anywhere.
                const auto to = readLinkText(local);
                refuse(QStringLiteral("refused: %1 is a symbolic link here (to %2); the download does not follow links")
                                .arg(local, to ? *to : QStringLiteral("?")));
                bad = true;
                break;
            }
            if (fi.exists() && !fi.isDir()) {
                refuse(QStringLiteral("refused: %1 exists locally and is not a folder").arg(local));
                bad = true;
                break;
            }
            if (!fi.exists() && !QDir().mkdir(local)) {
                refuse(QStringLiteral("cannot create the folder %1").arg(local));
                bad = true;
                break;
            }
        }
        if (bad)
            continue;
        const QString target = destDir + u'/' + e.path;
        const QString tmp = target + QStringLiteral(".trainyard-part");
        QFile::remove(tmp);
        QFile sink(tmp);
        if (!sink.open(QIODevice::WriteOnly | QIODevice::NewOnly)) {
            refuse(QStringLiteral("cannot create %1: %2").arg(tmp, sink.errorString()));
            continue;
        }
        if (auto r = files.readFile(remote, sink); !r) {
            sink.remove();
            refuse(r.error().message);
            continue;
        }
        sink.close();
        if (::rename(QFile::encodeName(tmp).constData(), QFile::encodeName(target).constData()) != 0) {
            QFile::remove(tmp);
            refuse(QStringLiteral("cannot rename %1 to %2").arg(tmp, target));
            continue;
        }
        seen.insert(e.path);
        out.downloaded << e.path;
    }
    return out;
}

} // namespace ty
