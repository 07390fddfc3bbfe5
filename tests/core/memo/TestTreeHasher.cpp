// TreeHasher (core/memo/TreeHasher.h) on real files: the selection workdir
// sync makes, links hashed by their text and never followed, the per-file
// cache shared by hashers of the same cache file (what two processes do),
// counted by the files actually read, and the limits of that cache.
#include "MemoTestUtil.h"

#include "core/memo/TreeHasher.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <ctime>

#include <fcntl.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace ty;

namespace {

void write(const QString& path, const QByteArray& content)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    f.write(content);
}

qint64 realNowNs()
{
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME, &t);
    return qint64(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Options with the clock an hour ahead: every file is past the racy window.
TreeHasher::Options settled(const QString& cache)
{
    TreeHasher::Options o;
    o.cachePath = cache;
    o.nowNs = [] { return realNowNs() + 3600LL * 1'000'000'000; };
    return o;
}

} // namespace

class TestTreeHasher final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void hashesFilesAsSha256AndSelectsLikeSync();
    void linksAreHashedByTheirTextNeverFollowed();
    void cacheIsSharedAndOnlyChangedFilesAreRead();
    void sameSizeAndRestoredMtimeIsStillNoticed();
    void racyFilesAreNotCached();
    void unreadableFileIsNamed();
    void damagedCacheIsReplaced();
    void inputsFilesAndFolders();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_tree, m_cache;
};

void TestTreeHasher::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    m_tree = m_tmp->filePath(QStringLiteral("tree"));
    m_cache = m_tmp->filePath(QStringLiteral("cache/tree-hashes.db"));
    write(m_tree + QStringLiteral("/train.py"), "print('train')\n");
    write(m_tree + QStringLiteral("/lib/util.py"), "def f(): pass\n");
    write(m_tree + QStringLiteral("/run.sh"), "#!/bin/sh\n");
    QFile::setPermissions(m_tree + QStringLiteral("/run.sh"), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    write(m_tree + QStringLiteral("/.gitignore"), "*.log\nout/\n");
    write(m_tree + QStringLiteral("/train.log"), "ignored\n");
    write(m_tree + QStringLiteral("/out/model.pt"), "ignored too\n");
    write(m_tree + QStringLiteral("/.git/HEAD"), "ref: refs/heads/main\n");
}

void TestTreeHasher::hashesFilesAsSha256AndSelectsLikeSync()
{
    TreeHasher h(settled(m_cache));
    const auto t = h.hashTree(m_tree);
    QVERIFY2(t.has_value(), t ? "" : qPrintable(t.error().message));
    using K = FileDigest::Kind;
    const QList<FileDigest> expected{
            ty::test::file(QStringLiteral(".gitignore"), "*.log\nout/\n"),
            ty::test::file(QStringLiteral("lib/util.py"), "def f(): pass\n"),
            ty::test::file(QStringLiteral("run.sh"), "#!/bin/sh\n", K::Executable),
            ty::test::file(QStringLiteral("train.py"), "print('train')\n"),
    };
    QCOMPARE(t->files, expected);
    // sha256sum of "print('train')\n", independently of QCryptographicHash.
    QCOMPARE(t->files[3].sha256, QStringLiteral("c7d9b938f2689ecd5aa95521611eaa67d8ea599095dac2d55c9e29b37d4def34"));
    QCOMPARE(t->digest, treeDigest(expected));
    QCOMPARE(h.filesRead(), 4); // .git/, train.log and out/ were never opened
    QCOMPARE(t->root, QDir(m_tree).absolutePath());
    // Without .gitignore (an input folder): everything but .git/.
    const auto all = h.hashTree(m_tree, false);
    QVERIFY(all.has_value());
    QCOMPARE(all->files.size(), 6);
}

void TestTreeHasher::linksAreHashedByTheirTextNeverFollowed()
{
    const QString outside = m_tmp->filePath(QStringLiteral("outside"));
    write(outside + QStringLiteral("/secret.txt"), "never read\n");
    QVERIFY(QFile::link(outside, m_tree + QStringLiteral("/data")));                              // a folder outside
    QVERIFY(QFile::link(outside + QStringLiteral("/secret.txt"), m_tree + QStringLiteral("/s"))); // a file outside
    QVERIFY(QFile::link(QStringLiteral("nowhere"), m_tree + QStringLiteral("/dangling")));
    TreeHasher h(settled(m_cache));
    const auto t = h.hashTree(m_tree);
    QVERIFY2(t.has_value(), t ? "" : qPrintable(t.error().message));
    QCOMPARE(h.filesRead(), 4); // the 4 real files; nothing through a link
    QCOMPARE(h.bytesRead(), qint64(QByteArray("*.log\nout/\ndef f(): pass\n#!/bin/sh\nprint('train')\n").size()));
    QList<FileDigest> links;
    for (const FileDigest& f : t->files)
        if (f.kind == FileDigest::Kind::Link)
            links << f;
    const QByteArray outsideBytes = QFile::encodeName(outside);
    QCOMPARE(links,
            (QList<FileDigest>{ty::test::file(QStringLiteral("dangling"), "nowhere", FileDigest::Kind::Link),
                    ty::test::file(QStringLiteral("data"), outsideBytes, FileDigest::Kind::Link),
                    ty::test::file(QStringLiteral("s"), outsideBytes + "/secret.txt", FileDigest::Kind::Link)}));
    // A link retargeted changes the digest; what it points to does not.
    const QString before = t->digest;
    write(outside + QStringLiteral("/secret.txt"), "changed\n");
    QCOMPARE(h.hashTree(m_tree)->digest, before);
    QFile::remove(m_tree + QStringLiteral("/dangling"));
    QVERIFY(QFile::link(QStringLiteral("elsewhere"), m_tree + QStringLiteral("/dangling")));
    QVERIFY(h.hashTree(m_tree)->digest != before);
}

void TestTreeHasher::cacheIsSharedAndOnlyChangedFilesAreRead()
{
    QString first;
    {
        TreeHasher h(settled(m_cache));
        const auto t = h.hashTree(m_tree);
        QVERIFY(t.has_value());
        QCOMPARE(h.filesRead(), 4);
        QCOMPARE(h.cacheHits(), 0);
        QCOMPARE(h.cacheError(), QString());
        first = t->digest;
    }
    {
        // Another hasher on the same cache file (a new connection, as another process has).
        TreeHasher h(settled(m_cache));
        const auto t = h.hashTree(m_tree);
        QVERIFY(t.has_value());
        QCOMPARE(h.filesRead(), 0);
        QCOMPARE(h.cacheHits(), 4);
        QCOMPARE(t->digest, first);
    }
    // One file changes (size and mtime): it alone is read again.
    QThread::msleep(20); // past the file system's timestamp tick
    write(m_tree + QStringLiteral("/train.py"), "print('train v2')\n");
    {
        TreeHasher h(settled(m_cache));
        const auto t = h.hashTree(m_tree);
        QVERIFY(t.has_value());
        QCOMPARE(h.filesRead(), 1);
        QCOMPARE(h.cacheHits(), 3);
        QVERIFY(t->digest != first);
        QCOMPARE(t->files[3], ty::test::file(QStringLiteral("train.py"), "print('train v2')\n"));
    }
    // A file added is read, a file removed is just gone.
    write(m_tree + QStringLiteral("/lib/new.py"), "x = 1\n");
    QVERIFY(QFile::remove(m_tree + QStringLiteral("/lib/util.py")));
    {
        TreeHasher h(settled(m_cache));
        const auto t = h.hashTree(m_tree);
        QVERIFY(t.has_value());
        QCOMPARE(h.filesRead(), 1);
        QCOMPARE(t->files[1].path, QStringLiteral("lib/new.py"));
    }
    // Without the cache every file is read.
    TreeHasher::Options uncached = settled(m_cache);
    uncached.useCache = false;
    TreeHasher h(uncached);
    QVERIFY(h.hashTree(m_tree).has_value());
    QCOMPARE(h.filesRead(), 4);
}

// The limitation the cache must not have: same size, content changed, mtime
// put back (touch -r, rsync -t, a tar extraction). ctime gives it away.
void TestTreeHasher::sameSizeAndRestoredMtimeIsStillNoticed()
{
    const QString path = m_tree + QStringLiteral("/train.py");
    struct stat before { };
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &before), 0);
    QString first;
    {
        TreeHasher h(settled(m_cache));
        first = h.hashTree(m_tree)->digest;
    }
    QThread::msleep(20);             // past the file system's timestamp tick, so ctime moves
    write(path, "print('TRAIN')\n"); // same size
    const timespec times[2] = {before.st_atim, before.st_mtim};
    QCOMPARE(::utimensat(AT_FDCWD, QFile::encodeName(path).constData(), times, 0), 0);
    struct stat after { };
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &after), 0);
    QCOMPARE(after.st_size, before.st_size);
    QCOMPARE(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    QCOMPARE(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    TreeHasher h(settled(m_cache));
    const auto t = h.hashTree(m_tree);
    QCOMPARE(h.filesRead(), 1);
    QVERIFY(t->digest != first);
    QCOMPARE(t->files[3], ty::test::file(QStringLiteral("train.py"), "print('TRAIN')\n"));
}

void TestTreeHasher::racyFilesAreNotCached()
{
    // The real clock: the files were just written, inside the racy window.
    TreeHasher::Options o;
    o.cachePath = m_cache;
    o.racyWindowMs = 60'000;
    {
        TreeHasher h(o);
        QVERIFY(h.hashTree(m_tree).has_value());
        QCOMPARE(h.filesRead(), 4);
    }
    TreeHasher h(o);
    QVERIFY(h.hashTree(m_tree).has_value());
    QCOMPARE(h.filesRead(), 4); // nothing was cached: all read again
    QCOMPARE(h.cacheHits(), 0);
}

void TestTreeHasher::unreadableFileIsNamed()
{
    {
        // A regular file whose read fails, even for root: EIO at offset 0.
        TreeHasher h(settled(m_cache));
        const auto mem = h.hashInput(QStringLiteral("/proc/self/mem"));
        QVERIFY(!mem.has_value());
        QVERIFY2(mem.error().message.startsWith(QStringLiteral("cannot read /proc/self/mem: ")),
                qPrintable(mem.error().message));
        const auto missing = h.hashTree(m_tmp->filePath(QStringLiteral("no-such-tree")));
        QVERIFY(!missing.has_value());
        QVERIFY2(missing.error().message.contains(QStringLiteral("no-such-tree")), qPrintable(missing.error().message));
    }
    if (::geteuid() == 0)
        QSKIP("root reads files whatever their mode (the /proc/self/mem case above ran)");
    const QString path = m_tree + QStringLiteral("/lib/util.py");
    QVERIFY(QFile::setPermissions(path, QFileDevice::Permissions()));
    TreeHasher h(settled(m_cache));
    const auto t = h.hashTree(m_tree);
    QVERIFY(!t.has_value());
    QVERIFY2(t.error().message.contains(QDir(path).absolutePath()), qPrintable(t.error().message));
    QVERIFY2(t.error().message.contains(QStringLiteral("Permission denied")), qPrintable(t.error().message));
}

void TestTreeHasher::damagedCacheIsReplaced()
{
    write(m_cache, QByteArray(4096, 'x'));
    TreeHasher h(settled(m_cache));
    QCOMPARE(h.cacheError(), QString());
    QVERIFY(h.hashTree(m_tree).has_value());
    TreeHasher again(settled(m_cache));
    QVERIFY(again.hashTree(m_tree).has_value());
    QCOMPARE(again.filesRead(), 0);
}

void TestTreeHasher::inputsFilesAndFolders()
{
    const QString data = m_tmp->filePath(QStringLiteral("data"));
    write(data + QStringLiteral("/a.csv"), "1,2\n");
    write(data + QStringLiteral("/.gitignore"), "*\n"); // a data folder's own .gitignore: not honoured for inputs
    TreeHasher h(settled(m_cache));
    const auto file = h.hashInput(data + QStringLiteral("/a.csv"));
    QVERIFY(file.has_value());
    QCOMPARE(*file, ty::test::file(data + QStringLiteral("/a.csv"), "1,2\n"));
    const auto folder = h.hashInput(data);
    QVERIFY(folder.has_value());
    QCOMPARE(folder->kind, FileDigest::Kind::Directory);
    QCOMPARE(folder->sha256,
            treeDigest({ty::test::file(QStringLiteral(".gitignore"), "*\n"),
                    ty::test::file(QStringLiteral("a.csv"), "1,2\n")}));
    QCOMPARE(folder->size, 6);
    const qint64 read = h.filesRead();
    QCOMPARE(h.hashInput(data + QStringLiteral("/a.csv"))->sha256, file->sha256);
    QCOMPARE(h.filesRead(), read); // from the cache
    const auto missing = h.hashInput(data + QStringLiteral("/b.csv"));
    QVERIFY(!missing.has_value());
    QCOMPARE(missing.error().message, data + QStringLiteral("/b.csv: no such file or folder"));
}

QTEST_GUILESS_MAIN(TestTreeHasher)
#include "TestTreeHasher.moc"
