#pragma once

// The content of a step's code (its workdir) and of its declared inputs, for
// memoization keys (MemoKey.h): SHA-256 per file (QCryptographicHash), with a
// cache of per-file results that persists across processes, so that hashing
// a 10,000-file tree again reads only the files that changed
// (tests/bench/RESULTS.md, "Memoization").
//
// Selection: exactly what workdir sync uploads (core/workdir/WorkdirScan.h):
// `.git/` and what .gitignore files exclude are left out; a symlink is hashed
// as its target text (readlink(2)), never followed, so nothing outside the
// tree is ever read. Files are opened with O_NOFOLLOW: a file replaced by a
// link between the scan and the read is an error, not followed.
//
// The cache: one SQLite file (Options::cachePath; default
// <GenericCacheLocation>/trainyard/tree-hashes.db, e.g.
// ~/.cache/trainyard/tree-hashes.db), not the result database: it is
// disposable (deleting it costs one full re-hash), it is written by whatever
// process hashes (GUI, trainyardctl, trainyardd) while the result database
// has one writer (trainyardd), and it holds machine-local facts (inodes).
// WAL and a busy timeout make it safe for several processes at once; rows are
// only ever replaced by equally valid ones, so concurrent writers cannot make
// it wrong. A cache that cannot be opened or written is warned about
// (cacheError()) and hashing goes on uncached.
//
// A cached hash is used when the file's absolute path, size, mtime (ns),
// ctime (ns), inode and device all equal the row's; otherwise the file is read
// again. ctime cannot be set by a user (touch -d, utimensat, tar and rsync
// restore mtime, not ctime), so a file rewritten with the same size and its
// mtime put back is still read again. Limits, as git's index has them:
// - a file system that does not maintain ctime, or rewrites that restore
//   ctime (changing the system clock), are not noticed;
// - "racy" files: a file changed again within its timestamps' granularity
//   (a kernel tick, ~1-10 ms on ext4/xfs/btrfs; 1-2 s on FAT, HFS+ and some
//   network file systems) after it was hashed keeps the same mtime and
//   ctime. So a hash is cached only for a file whose mtime and ctime are at
//   least Options::racyWindowMs older than the hashing; younger files are
//   hashed and used, but read again next time.
// A file whose size, mtime or ctime changed while it was read is not cached.
//
// Thread affinity: one thread; the cache's connection is opened by the
// constructor and used by that thread only. Several hashers (threads or
// processes) may share a cache file. Blocking: reads every file not cached.
//
// Errors name the path: the tree is not a directory, a file or link that
// cannot be read ("cannot read <abs path>: <why>").

#include "FileDigest.h"
#include "core/common/Result.h"

#include <QHash>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <functional>

namespace ty {

struct TreeHash {
    QString root;            // absolute
    QList<FileDigest> files; // sorted by path (sortByPath); kinds File, Executable, Link
    QString digest;          // treeDigest(files)
    qint64 totalBytes = 0;   // of the files (not links)
    QStringList skipped;     // from the scan: FIFOs, sockets, names not valid UTF-8 ("rel (why)")
};

class TreeHasher final {
    Q_DISABLE_COPY_MOVE(TreeHasher)

public:
    struct Options {
        QString cachePath;    // empty: defaultCachePath()
        bool useCache = true; // false: every file is read, nothing is stored
        qint64 racyWindowMs = 3000;
        // Nanoseconds since the epoch, UTC; default the system clock. Tests
        // move it forward instead of sleeping past the racy window.
        std::function<qint64()> nowNs;
    };

    TreeHasher(); // default Options
    explicit TreeHasher(Options options);
    ~TreeHasher();

    static QString defaultCachePath();

    // The files of the tree at `root` as workdir sync selects them (or, with
    // `honourGitIgnore` false, every file but .git/: an input folder).
    // `leaveOut(rel)` true: that file or link is neither opened nor listed
    // (the caller's own files in the tree: an SQLite database this process
    // holds open must never be opened and closed again here, as closing any
    // descriptor of it drops the process's POSIX locks on it; sqlite.org
    // "How To Corrupt An SQLite Database File", 2.2.1).
    Result<TreeHash> hashTree(const QString& root, bool honourGitIgnore = true,
            const std::function<bool(const QString& rel)>& leaveOut = {});
    // One file or folder given as a step's input: a file (or a link, by its
    // text) as hashTree() hashes one, with `path` as given; a folder as
    // Kind::Directory, sha256 = the digest of hashTree(path, false), size its
    // bytes. Errors: missing ("<path>: no such file or folder"), unreadable.
    Result<FileDigest> hashInput(const QString& path);

    // Counters since construction: files actually opened and read (cache
    // misses), their bytes, and files whose hash came from the cache.
    qint64 filesRead() const { return m_filesRead; }
    qint64 bytesRead() const { return m_bytesRead; }
    qint64 cacheHits() const { return m_cacheHits; }
    // Why the cache is not used (could not be opened or written), or empty.
    QString cacheError() const { return m_cacheError; }

private:
    struct Stat {
        qint64 size = 0, mtimeNs = 0, ctimeNs = 0;
        quint64 inode = 0, device = 0;
        bool operator==(const Stat&) const = default;
    };
    struct Cached {
        Stat stat;
        QString sha256;
        qint64 usedDay = 0;
    };
    struct Fresh {
        QString path;
        Stat stat;
        QString sha256;
    };

    void openCache();
    void disableCache(const QString& why);
    QHash<QString, Cached> loadCache(const QString& absRoot);
    void storeCache(const QList<Fresh>& fresh, const QStringList& touched);
    // Reads `abs` (O_NOFOLLOW) and hashes it; `stable` is set when its size,
    // mtime and ctime were the same before and after the read.
    Result<QString> readAndHash(const QString& abs, Stat* statAtOpen, bool* stable);
    qint64 now() const;

    Options m_options;
    QString m_connection;
    QSqlDatabase m_db;
    QString m_cacheError;
    qint64 m_filesRead = 0, m_bytesRead = 0, m_cacheHits = 0;
};

} // namespace ty
