#include "TreeHasher.h"

#include "MemoLog.h"
#include "core/workdir/WorkdirScan.h"

#include <QAtomicInt>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ty {
namespace {

constexpr qint64 kNsPerDay = 86'400'000'000'000;
constexpr qint64 kPruneDays = 30; // rows not used for this long are dropped
constexpr int kCacheFormat = 1;   // PRAGMA user_version of the cache file

QAtomicInt g_instances;

qint64 nsOf(const timespec& t)
{
    return qint64(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

QString errnoText()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

} // namespace

TreeHasher::TreeHasher()
    : TreeHasher(Options{})
{ }

TreeHasher::TreeHasher(Options options)
    : m_options(std::move(options))
    , m_connection(QStringLiteral("trainyard-tree-hashes-%1").arg(g_instances.fetchAndAddRelaxed(1)))
{
    if (m_options.cachePath.isEmpty())
        m_options.cachePath = defaultCachePath();
    if (m_options.useCache)
        openCache();
}

TreeHasher::~TreeHasher()
{
    if (m_db.isValid()) {
        m_db.close();
        m_db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connection);
    }
}

QString TreeHasher::defaultCachePath()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation)
            + QStringLiteral("/trainyard/tree-hashes.db");
}

qint64 TreeHasher::now() const
{
    if (m_options.nowNs)
        return m_options.nowNs();
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME, &t);
    return nsOf(t);
}

void TreeHasher::disableCache(const QString& why)
{
    m_cacheError = QStringLiteral("%1: %2; hashing without it").arg(m_options.cachePath, why);
    qCWarning(lcMemo).noquote() << m_cacheError;
    if (m_db.isValid()) {
        m_db.close();
        m_db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connection);
    }
}

void TreeHasher::openCache()
{
    QDir().mkpath(QFileInfo(m_options.cachePath).absolutePath());
    // Opens and sets up the file; the error, or empty.
    auto setUp = [this]() -> QString {
        m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
        m_db.setDatabaseName(m_options.cachePath);
        m_db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
        if (!m_db.open())
            return m_db.lastError().text();
        QSqlQuery q(m_db);
        if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next())
            return q.lastError().text();
        const int format = q.value(0).toInt();
        if (format > kCacheFormat)
            return QStringLiteral("written by a newer Trainyard (cache format %1)").arg(format);
        for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
                     // One row per file ever hashed (absolute path), with what
                     // says it is unchanged; used_day: days since the epoch
                     // (UTC) it was last used, for pruning.
                     "CREATE TABLE IF NOT EXISTS files ("
                     " path TEXT NOT NULL PRIMARY KEY,"
                     " size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,"
                     " inode INTEGER NOT NULL, device INTEGER NOT NULL,"
                     " sha256 TEXT NOT NULL, used_day INTEGER NOT NULL) WITHOUT ROWID",
                     "PRAGMA user_version=1"}) {
            if (!q.exec(QString::fromLatin1(sql)))
                return q.lastError().text();
        }
        return {};
    };
    QString error = setUp();
    if (!error.isEmpty() && !error.contains(QLatin1String("newer Trainyard"))) {
        // A damaged or foreign file: it is only a cache, start a new one.
        qCWarning(lcMemo).noquote() << m_options.cachePath << ":" << error << "; starting a new cache";
        m_db.close();
        m_db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connection);
        for (const char* suffix : {"", "-wal", "-shm"})
            QFile::remove(m_options.cachePath + QLatin1String(suffix));
        error = setUp();
    }
    if (!error.isEmpty())
        disableCache(error);
}

QHash<QString, TreeHasher::Cached> TreeHasher::loadCache(const QString& absRoot)
{
    QHash<QString, Cached> out;
    if (!m_db.isValid())
        return out;
    QSqlQuery q(m_db);
    q.setForwardOnly(true);
    // Every path below absRoot: [root + '/', root + '0') in byte order ('0' follows '/').
    q.prepare(QStringLiteral("SELECT path, size, mtime_ns, ctime_ns, inode, device, sha256, used_day FROM files"
                             " WHERE path >= ? AND path < ?"));
    q.addBindValue(QString(absRoot + u'/'));
    q.addBindValue(QString(absRoot + u'0'));
    if (!q.exec()) {
        qCWarning(lcMemo).noquote() << m_options.cachePath << ": cannot read the cache:" << q.lastError().text();
        return out;
    }
    while (q.next()) {
        Cached c;
        c.stat = Stat{q.value(1).toLongLong(), q.value(2).toLongLong(), q.value(3).toLongLong(),
                quint64(q.value(4).toLongLong()), quint64(q.value(5).toLongLong())};
        c.sha256 = q.value(6).toString();
        c.usedDay = q.value(7).toLongLong();
        out.insert(q.value(0).toString(), c);
    }
    return out;
}

void TreeHasher::storeCache(const QList<Fresh>& fresh, const QStringList& touched)
{
    if (!m_db.isValid() || (fresh.isEmpty() && touched.isEmpty()))
        return;
    const qint64 today = now() / kNsPerDay;
    auto failed = [this](const QSqlQuery& q) {
        m_cacheError = QStringLiteral("%1: cannot write the cache: %2").arg(m_options.cachePath, q.lastError().text());
        qCWarning(lcMemo).noquote() << m_cacheError;
        QSqlQuery(m_db).exec(QStringLiteral("ROLLBACK"));
    };
    QSqlQuery q(m_db);
    if (!q.exec(QStringLiteral("BEGIN IMMEDIATE")))
        return failed(q);
    q.prepare(QStringLiteral("INSERT OR REPLACE INTO files (path, size, mtime_ns, ctime_ns, inode, device, sha256,"
                             " used_day) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    for (const Fresh& f : fresh) {
        q.bindValue(0, f.path);
        q.bindValue(1, f.stat.size);
        q.bindValue(2, f.stat.mtimeNs);
        q.bindValue(3, f.stat.ctimeNs);
        q.bindValue(4, qint64(f.stat.inode));
        q.bindValue(5, qint64(f.stat.device));
        q.bindValue(6, f.sha256);
        q.bindValue(7, today);
        if (!q.exec())
            return failed(q);
    }
    if (!touched.isEmpty()) {
        q.prepare(QStringLiteral("UPDATE files SET used_day = ? WHERE path = ?"));
        for (const QString& path : touched) {
            q.bindValue(0, today);
            q.bindValue(1, path);
            if (!q.exec())
                return failed(q);
        }
        // Pruned only when something was used on a new day: about once a day.
        q.prepare(QStringLiteral("DELETE FROM files WHERE used_day < ?"));
        q.addBindValue(today - kPruneDays);
        if (!q.exec())
            return failed(q);
    }
    if (!q.exec(QStringLiteral("COMMIT")))
        return failed(q);
}

Result<QString> TreeHasher::readAndHash(const QString& abs, Stat* statAtOpen, bool* stable)
{
    const int fd = ::open(QFile::encodeName(abs).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return fail(QStringLiteral("cannot read %1: %2").arg(abs, errnoText()));
    auto statOf = [fd](Stat* s) {
        struct stat st { };
        if (::fstat(fd, &st) != 0)
            return false;
        *s = Stat{qint64(st.st_size), nsOf(st.st_mtim), nsOf(st.st_ctim), quint64(st.st_ino), quint64(st.st_dev)};
        return S_ISREG(st.st_mode);
    };
    if (!statOf(statAtOpen)) {
        ::close(fd);
        return fail(QStringLiteral("cannot read %1: not a regular file").arg(abs));
    }
    QCryptographicHash h(QCryptographicHash::Sha256);
    QByteArray buf(256 * 1024, Qt::Uninitialized);
    qint64 total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), size_t(buf.size()));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const QString why = errnoText();
            ::close(fd);
            return fail(QStringLiteral("cannot read %1: %2").arg(abs, why));
        }
        if (n == 0)
            break;
        h.addData(QByteArrayView(buf.constData(), n));
        total += n;
    }
    Stat after;
    *stable = statOf(&after) && after == *statAtOpen && total == statAtOpen->size;
    ::close(fd);
    ++m_filesRead;
    m_bytesRead += total;
    statAtOpen->size = total;
    return QString::fromLatin1(h.result().toHex());
}

Result<TreeHash> TreeHasher::hashTree(
        const QString& root, bool honourGitIgnore, const std::function<bool(const QString& rel)>& leaveOut)
{
    const auto scan = scanWorkdirTree(root, honourGitIgnore);
    if (!scan)
        return fail(QStringLiteral("cannot hash %1: %2").arg(root, scan.error().message));
    const qint64 start = now();
    const qint64 racyAfter = start - m_options.racyWindowMs * 1'000'000;
    const qint64 today = start / kNsPerDay;
    const QHash<QString, Cached> cache = loadCache(scan->root);

    TreeHash out;
    out.root = scan->root;
    out.skipped = scan->skipped;
    QList<Fresh> fresh;
    QStringList touched;
    for (const WorkdirFile& f : scan->files) {
        if (leaveOut && leaveOut(f.rel))
            continue;
        const QString abs = scan->root + u'/' + f.rel;
        const Stat seen{f.size, f.mtimeNs, f.ctimeNs, f.inode, f.device};
        FileDigest d{f.rel, (f.mode & 0111) ? FileDigest::Kind::Executable : FileDigest::Kind::File, f.size, {}};
        const auto hit = cache.constFind(abs);
        if (hit != cache.cend() && hit->stat == seen && isSha256Hex(hit->sha256)) {
            d.sha256 = hit->sha256;
            ++m_cacheHits;
            if (hit->usedDay < today)
                touched << abs;
        } else {
            Stat read;
            bool stable = false;
            auto sha = readAndHash(abs, &read, &stable);
            if (!sha)
                return std::unexpected(sha.error());
            d.sha256 = *sha;
            d.size = read.size;
            if (stable && read.mtimeNs < racyAfter && read.ctimeNs < racyAfter)
                fresh.append(Fresh{abs, read, *sha});
        }
        out.totalBytes += d.size;
        out.files.append(d);
    }
    for (const WorkdirLink& l : scan->links) {
        if (leaveOut && leaveOut(l.rel))
            continue;
        const QByteArray text = QFile::encodeName(l.target);
        out.files.append(FileDigest{l.rel, FileDigest::Kind::Link, text.size(),
                QString::fromLatin1(QCryptographicHash::hash(text, QCryptographicHash::Sha256).toHex())});
    }
    storeCache(fresh, touched);
    sortByPath(out.files);
    out.digest = treeDigest(out.files);
    return out;
}

Result<FileDigest> TreeHasher::hashInput(const QString& path)
{
    const QFileInfo fi(path);
    if (!fi.exists() && !fi.isSymLink())
        return fail(QStringLiteral("%1: no such file or folder").arg(path));
    if (fi.isSymLink()) {
        const auto text = readLinkText(fi.absoluteFilePath());
        if (!text)
            return std::unexpected(text.error());
        const QByteArray bytes = QFile::encodeName(*text);
        return FileDigest{path, FileDigest::Kind::Link, bytes.size(),
                QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex())};
    }
    if (fi.isDir()) {
        auto tree = hashTree(path, /*honourGitIgnore=*/false);
        if (!tree)
            return std::unexpected(tree.error());
        return FileDigest{path, FileDigest::Kind::Directory, tree->totalBytes, tree->digest};
    }
    // One file: the cache as for a tree's files, keyed by its absolute path.
    const QString abs = fi.absoluteFilePath();
    struct stat st { };
    if (::stat(QFile::encodeName(abs).constData(), &st) != 0)
        return fail(QStringLiteral("cannot read %1: %2").arg(abs, errnoText()));
    const Stat seen{qint64(st.st_size), nsOf(st.st_mtim), nsOf(st.st_ctim), quint64(st.st_ino), quint64(st.st_dev)};
    const FileDigest::Kind kind = (st.st_mode & 0111) ? FileDigest::Kind::Executable : FileDigest::Kind::File;
    if (m_db.isValid()) {
        QSqlQuery q(m_db);
        q.prepare(QStringLiteral("SELECT size, mtime_ns, ctime_ns, inode, device, sha256 FROM files WHERE path = ?"));
        q.addBindValue(abs);
        if (q.exec() && q.next()) {
            const Stat cached{q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toLongLong(),
                    quint64(q.value(3).toLongLong()), quint64(q.value(4).toLongLong())};
            const QString sha = q.value(5).toString();
            if (cached == seen && isSha256Hex(sha)) {
                ++m_cacheHits;
                return FileDigest{path, kind, seen.size, sha};
            }
        }
    }
    Stat read;
    bool stable = false;
    auto sha = readAndHash(abs, &read, &stable);
    if (!sha)
        return std::unexpected(sha.error());
    const qint64 racyAfter = now() - m_options.racyWindowMs * 1'000'000;
    if (stable && read.mtimeNs < racyAfter && read.ctimeNs < racyAfter)
        storeCache({Fresh{abs, read, *sha}}, {});
    return FileDigest{path, kind, read.size, *sha};
}

} // namespace ty
