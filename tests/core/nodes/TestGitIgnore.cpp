// gitignore(5) semantics of GitIgnore (workdir sync), and the scan built on
// it against a real temporary directory tree.
#include "tests/support/TestSupport.h"
#include "core/workdir/GitIgnore.h"
#include "core/nodes/WorkdirSync.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ty;

class TestGitIgnore final : public QObject {
    Q_OBJECT

    static void put(const QString& path, const QByteArray& bytes)
    {
        QDir().mkpath(path.left(path.lastIndexOf(u'/')));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    }

private Q_SLOTS:
    void patterns()
    {
        GitIgnore g;
        g.addFile(QString(),
                "# comment\n\n*.log\n!keep.log\nbuild/\n/data\n**/cache/**\ndocs/*.md\nfoo/**/bar\n\\#hash\n[ab].txt\n");
        QVERIFY(g.ignored(QStringLiteral("x.log"), false));
        QVERIFY(g.ignored(QStringLiteral("deep/down/x.log"), false));
        QVERIFY(!g.ignored(QStringLiteral("keep.log"), false));
        QVERIFY(!g.ignored(QStringLiteral("sub/keep.log"), false));
        QVERIFY(g.ignored(QStringLiteral("build"), true));
        QVERIFY(!g.ignored(QStringLiteral("build"), false)); // dir/ matches directories only
        QVERIFY(g.ignored(QStringLiteral("sub/build"), true));
        QVERIFY(g.ignored(QStringLiteral("data"), true));
        QVERIFY(!g.ignored(QStringLiteral("sub/data"), true)); // anchored
        QVERIFY(g.ignored(QStringLiteral("a/cache/z"), false));
        QVERIFY(g.ignored(QStringLiteral("cache/z/y"), false));
        QVERIFY(g.ignored(QStringLiteral("docs/a.md"), false));
        QVERIFY(!g.ignored(QStringLiteral("docs/sub/a.md"), false)); // * does not cross '/'
        QVERIFY(!g.ignored(QStringLiteral("x/docs/a.md"), false));   // middle slash anchors
        QVERIFY(g.ignored(QStringLiteral("foo/bar"), false));        // /**/ = zero or more dirs
        QVERIFY(g.ignored(QStringLiteral("foo/a/b/bar"), false));
        QVERIFY(g.ignored(QStringLiteral("#hash"), false));
        QVERIFY(g.ignored(QStringLiteral("a.txt"), false));
        QVERIFY(!g.ignored(QStringLiteral("c.txt"), false));
        QVERIFY(!g.ignored(QStringLiteral("train.py"), false));
    }

    void nestedFileWinsAndIsScoped()
    {
        GitIgnore g;
        g.addFile(QString(), "*.tmp\n");
        g.addFile(QStringLiteral("sub"), "!*.tmp\n/only-here\n");
        QVERIFY(g.ignored(QStringLiteral("a.tmp"), false));
        QVERIFY(!g.ignored(QStringLiteral("sub/a.tmp"), false));
        QVERIFY(g.ignored(QStringLiteral("sub/only-here"), false));
        QVERIFY(!g.ignored(QStringLiteral("only-here"), false));
        QVERIFY(!g.ignored(QStringLiteral("sub/x/only-here"), false));
    }

    void scanSkipsIgnoredAndGitKeepsLinksAndEnforcesTheLimit()
    {
        QTemporaryDir d;
        const QString r = d.path();
        put(r + QStringLiteral("/.gitignore"), "*.log\n!keep.log\nbuild/\n/data\n");
        put(r + QStringLiteral("/sub/.gitignore"), "*.tmp\n");
        put(r + QStringLiteral("/train.py"), "print(1)\n");
        put(r + QStringLiteral("/x.log"), "x");
        put(r + QStringLiteral("/keep.log"), "k");
        put(r + QStringLiteral("/build/o.bin"), "o");
        put(r + QStringLiteral("/data/d.bin"), "d");
        put(r + QStringLiteral("/sub/data/k.txt"), "k");
        put(r + QStringLiteral("/sub/t.tmp"), "t");
        put(r + QStringLiteral("/.git/HEAD"), "ref");
        put(r + QStringLiteral("/big.bin"), QByteArray(3 * 1024 * 1024, 'b'));
        QFile::link(QStringLiteral("/etc/passwd"), r + QStringLiteral("/link"));
        QFile::link(QStringLiteral("/etc"), r + QStringLiteral("/sub/x.log")); // ignored by *.log: not reported
        const auto scan = scanWorkdir(r, 0);
        QVERIFY2(scan, scan ? "" : qPrintable(scan.error().message));
        QStringList names;
        for (const SyncEntry& e : scan->files)
            names << e.rel;
        names.sort();
        QCOMPARE(names,
                (QStringList{QStringLiteral(".gitignore"), QStringLiteral("big.bin"), QStringLiteral("keep.log"),
                        QStringLiteral("sub/.gitignore"), QStringLiteral("sub/data/k.txt"),
                        QStringLiteral("train.py")}));
        // Links are kept as links with their exact text, never followed (not /etc/passwd's content).
        QCOMPARE(scan->links.size(), 1);
        QCOMPARE(scan->links.front().rel, QStringLiteral("link"));
        QCOMPARE(scan->links.front().target, QStringLiteral("/etc/passwd"));
        QCOMPARE(scan->totalBytes, qint64(3 * 1024 * 1024 + 29 + 1 + 6 + 1 + 9)); // files only, not what links point to
        const auto limited = scanWorkdir(r, 1024 * 1024);
        QVERIFY(!limited);
        QVERIFY2(limited.error().message.contains(QStringLiteral("big.bin (3.0 MiB)")),
                qPrintable(limited.error().message));
        QVERIFY2(limited.error().message.contains(QStringLiteral("sync_limit 1.0 MiB")),
                qPrintable(limited.error().message));
    }

    void safeRelativePaths()
    {
        QVERIFY(isSafeRelativePath(QStringLiteral("out/model.pt")));
        QVERIFY(isSafeRelativePath(QStringLiteral("a..b")));
        QVERIFY(isSafeRelativePath(QStringLiteral("out/a\\b.txt"))); // an ordinary character on POSIX
        QVERIFY(!isSafeRelativePath(QStringLiteral("../x")));
        QVERIFY(!isSafeRelativePath(QStringLiteral("a/../../x")));
        QVERIFY(!isSafeRelativePath(QStringLiteral("/etc/passwd")));
        QVERIFY(!isSafeRelativePath(QStringLiteral("a//b")));
        QVERIFY(!isSafeRelativePath(QString()));
    }

    // A result database kept in the workdir is never read by sync (the
    // service that holds it would lose its locks), nor its companions; a
    // file that only starts with its name is synced.
    void resultDatabaseInTheWorkdirIsLeftOut()
    {
        QTemporaryDir src;
        const QString db = src.path() + QStringLiteral("/trainyard.db");
        for (const char* name : {"trainyard.db", "trainyard.db-wal", "trainyard.db-shm",
                     "trainyard.db.runs/7/console.log", "trainyard.db.scheduler.json", "trainyard.dbx", "train.py"})
            test::writeFile(src.path() + u'/' + QLatin1StringView(name), "12345");
        QVERIFY(QFile::link(QStringLiteral("trainyard.db"), src.path() + QStringLiteral("/trainyard.db.link")));
        const auto scan = scanWorkdir(src.path(), 0, db);
        QVERIFY2(scan, qPrintable(scan ? QString() : scan.error().message));
        QStringList files;
        for (const SyncEntry& f : scan->files)
            files << f.rel;
        files.sort();
        QCOMPARE(files, (QStringList{QStringLiteral("train.py"), QStringLiteral("trainyard.dbx")}));
        QCOMPARE(scan->links.size(), 0);
        QCOMPARE(scan->totalBytes, 10);
        QCOMPARE(scan->skipped.size(), 6);
        QVERIFY2(scan->skipped.contains(QStringLiteral("trainyard.db-wal (the result database: never copied)")),
                qPrintable(scan->skipped.join(u'|')));
        // Without a database named, everything is synced as before.
        QCOMPARE(scanWorkdir(src.path(), 0)->files.size(), 7);
    }

    // A folder on the node where sync had put a link, left by a sync that
    // failed half-way (its manifest still says link) or made by a run, must
    // not stop later syncs: the wanted folder is used, the run's left alone.
    void syncGoesOnOverFoldersWhereItsLinksWere()
    {
        QTemporaryDir src, dst;
        test::writeFile(src.path() + QStringLiteral("/checkpoints/best.pt"), "w1");
        QVERIFY(QFile::link(QStringLiteral("checkpoints"), src.path() + QStringLiteral("/sub")));
        QVERIFY(QFile::link(QStringLiteral("checkpoints/best.pt"), src.path() + QStringLiteral("/l2")));
        LocalNodeFiles files;
        auto scan = scanWorkdir(src.path(), 0);
        QVERIFY(scan);
        const QString remote = dst.path() + QStringLiteral("/sync");
        auto first = syncToNode(*scan, remote, files);
        QVERIFY2(first, qPrintable(first ? QString() : first.error().message));
        QCOMPARE(first->linked, 2);
        // On the node: `sub` became a folder (a failed sync), `l2` a folder of the run's.
        QVERIFY(QFile::remove(remote + QStringLiteral("/sub")));
        QVERIFY(QDir().mkdir(remote + QStringLiteral("/sub")));
        QVERIFY(QFile::remove(remote + QStringLiteral("/l2")));
        test::writeFile(remote + QStringLiteral("/l2/out.txt"), "run output");
        // Locally: `sub` is a folder now, `l2` is gone.
        QVERIFY(QFile::remove(src.path() + QStringLiteral("/sub")));
        test::writeFile(src.path() + QStringLiteral("/sub/file.txt"), "back");
        QVERIFY(QFile::remove(src.path() + QStringLiteral("/l2")));
        scan = scanWorkdir(src.path(), 0);
        QVERIFY(scan);
        auto second = syncToNode(*scan, remote, files);
        QVERIFY2(second, qPrintable(second ? QString() : second.error().message));
        QCOMPARE(test::readFile(remote + QStringLiteral("/sub/file.txt")), QByteArray("back"));
        QCOMPARE(test::readFile(remote + QStringLiteral("/l2/out.txt")), QByteArray("run output"));
        QCOMPARE(second->removed, 0);
        // And once more, with nothing changed: nothing to do.
        auto third = syncToNode(*scan, remote, files);
        QVERIFY2(third, qPrintable(third ? QString() : third.error().message));
        QCOMPARE(third->uploaded, 0);
    }

    // What sync cannot copy is named, not dropped silently: a FIFO, and a
    // name whose bytes are not UTF-8 (it cannot be opened by its decoded name).
    void scanNamesWhatItCannotCopy()
    {
        QTemporaryDir src;
        test::writeFile(src.path() + QStringLiteral("/ok.txt"), "fine");
        QVERIFY(::mkfifo(QFile::encodeName(src.path() + QStringLiteral("/pipe")).constData(), 0644) == 0);
        const QByteArray bad = QFile::encodeName(src.path()) + "/bad\xffname";
        const int fd = ::open(bad.constData(), O_WRONLY | O_CREAT, 0644);
        QVERIFY(fd >= 0);
        ::close(fd);
        const auto scan = scanWorkdir(src.path(), 0);
        QVERIFY(scan);
        QCOMPARE(scan->files.size(), qsizetype(1));
        QCOMPARE(scan->skipped.size(), qsizetype(2));
        QVERIFY2(scan->skipped.contains(QStringLiteral("pipe (not a file, folder or link)")),
                qPrintable(scan->skipped.join(u'|')));
        QVERIFY2(scan->skipped.filter(QStringLiteral("(name not valid UTF-8)")).size() == 1,
                qPrintable(scan->skipped.join(u'|')));
    }

    void downloadRefusesEscapingNames()
    {
        QTemporaryDir src, dst;
        put(src.path() + QStringLiteral("/ok.txt"), "fine");
        AgentFileList list;
        list.workdir = src.path();
        for (const QString& p :
                {QStringLiteral("ok.txt"), QStringLiteral("../escape"), QStringLiteral("/etc/passwd")}) {
            AgentFileEntry e;
            e.root = QStringLiteral("workdir");
            e.path = p;
            e.type = QStringLiteral("file");
            list.files << e;
        }
        LocalNodeFiles files;
        const auto d = downloadArtifacts(list, dst.path(), files);
        QVERIFY(d);
        QCOMPARE(d->downloaded, QStringList{QStringLiteral("ok.txt")});
        QCOMPARE(d->refused.size(), 2);
        QVERIFY(d->refused[0].contains(QStringLiteral("outside")));
        QFile f(dst.path() + QStringLiteral("/ok.txt"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("fine"));
        QVERIFY(!QFile::exists(QDir(dst.path()).filePath(QStringLiteral("../escape"))));
    }
};

QTEST_GUILESS_MAIN(TestGitIgnore)
#include "TestGitIgnore.moc"
