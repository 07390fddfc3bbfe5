// A result database this process cannot write (a read-only mount: root is
// refused too) is read, never written, and never grows files beside it; a
// damaged one (truncated, garbage in its header, a page gone bad found in the
// middle of a session) is explained once, with what to do, and left as it was.
#include "StoreTestUtil.h"
#include "tests/support/TestSupport.h"

#include "core/store/ResultStore.h"
#include "core/store/SqliteResultStore.h"
#include "core/store/SqliteFileAccess.h"
#include "core/store/SqliteSchema.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QMutex>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>
#include <unistd.h>

using namespace ty;
using ty::test::RawDb;

namespace {

bool runCommand(const QString& program, const QStringList& args, QString* why = nullptr)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        if (why)
            *why = QString::fromLocal8Bit(p.readAllStandardError()).trimmed() + p.errorString();
        return false;
    }
    return true;
}

QByteArray sha256Of(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex();
}

QStringList entriesOf(const QString& dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
}

MetricPoint point(RunId run, const QString& key, qint64 step, double value)
{
    MetricPoint p;
    p.run = run;
    p.key = key;
    p.step = step;
    p.wallTimeMs = 1'700'000'000'000 + step;
    p.value = value;
    return p;
}

// Warnings of the store, collected while a test runs.
QMutex g_messagesMutex;
QStringList g_messages;
QtMessageHandler g_previousHandler = nullptr;
void collectMessage(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    {
        QMutexLocker lock(&g_messagesMutex);
        g_messages << message;
    }
    if (g_previousHandler)
        g_previousHandler(type, context, message);
}
int messagesContaining(const QString& text)
{
    QMutexLocker lock(&g_messagesMutex);
    int n = 0;
    for (const QString& m : std::as_const(g_messages))
        n += m.contains(text) ? 1 : 0;
    return n;
}

} // namespace

class TestStoreAccess final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_mount; // a tmpfs of the test's own, remounted read-only by the tests

    bool remount(bool readOnly)
    {
        QString why;
        const bool ok = runCommand(QStringLiteral("mount"),
                {QStringLiteral("-o"), readOnly ? QStringLiteral("remount,ro") : QStringLiteral("remount,rw"), m_mount},
                &why);
        if (!ok)
            qWarning("remount of %s failed: %s", qPrintable(m_mount), qPrintable(why));
        return ok;
    }

    // A run "colleague" with tags, params and 10 points of "loss", written
    // to `path` by a store that is then closed (the WAL checkpointed and gone).
    static RunId writeSample(const QString& path)
    {
        auto store = SqliteResultStore::open(path);
        if (!store) {
            qWarning("%s", qPrintable(store.error().message));
            return 0;
        }
        RunRecord r;
        r.name = QStringLiteral("colleague");
        r.state = RunState::Succeeded;
        r.tags = {QStringLiteral("baseline")};
        auto id = (*store)->createRun(r, {{QStringLiteral("lr"), QStringLiteral("0.1")}});
        if (!id)
            return 0;
        QList<MetricPoint> points;
        for (int i = 1; i <= 10; ++i)
            points << point(*id, QStringLiteral("loss"), i, 1.0 / i);
        (*store)->appendMetrics(points);
        if (!(*store)->flush())
            return 0;
        return *id;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        g_previousHandler = qInstallMessageHandler(&collectMessage);
    }

    void init()
    {
        {
            QMutexLocker lock(&g_messagesMutex);
            g_messages.clear();
        }
        if (QByteArray(QTest::currentTestFunction()).startsWith("readOnly")) {
            if (::geteuid() != 0)
                QSKIP("needs root to mount a tmpfs (CI runs the tests as root)");
            m_mount = m_dir.filePath(QStringLiteral("mnt-%1").arg(QString::fromLatin1(QTest::currentTestFunction())));
            QVERIFY(QDir().mkpath(m_mount));
            QString why;
            if (!runCommand(QStringLiteral("mount"),
                        {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                                QStringLiteral("size=16m"), QStringLiteral("tmpfs"), m_mount},
                        &why))
                QSKIP(qPrintable(QStringLiteral("cannot mount a tmpfs on %1: %2").arg(m_mount, why)));
        }
    }

    void cleanup()
    {
        if (!m_mount.isEmpty()) {
            if (!runCommand(QStringLiteral("umount"), {m_mount}))
                runCommand(QStringLiteral("umount"), {QStringLiteral("-l"), m_mount});
            m_mount.clear();
        }
    }

    void cleanupTestCase() { qInstallMessageHandler(g_previousHandler); }

    // The writer calls libsqlite3 on the QSQLITE driver's sqlite3*: only
    // one library on both sides may do that.
    void driverRunningAnotherSqliteIsRefused()
    {
        const QString file = QStringLiteral("/data/trainyard.db");
        const QString a = QStringLiteral(
                "2022-12-28 14:03:47 df5c253c0b3dd24916e4ec7cf77d3db5294cc9fd45ae7b9c5e82ad8197f38a24");
        const QString b = QStringLiteral(
                "2024-05-23 13:25:27 96c92aba00c8375bc32fafcdf12429c58bd8aabfcadab6683e35bbb9cdebf19e");
        QCOMPARE(
                sqlitefile::libraryMismatch(file, QStringLiteral("3.40.1"), a, QStringLiteral("3.40.1"), a), QString());
        const QString versions
                = sqlitefile::libraryMismatch(file, QStringLiteral("3.46.0"), b, QStringLiteral("3.40.1"), a);
        QVERIFY2(versions.startsWith(file
                         + QStringLiteral(": not opened: Qt's SQLite driver (QSQLITE plugin) runs SQLite "
                                          "3.46.0 (source ")
                         + b
                         + QStringLiteral(") but Trainyard is "
                                          "linked against SQLite 3.40.1 (source ")
                         + a + u')'),
                qPrintable(versions));
        QVERIFY2(versions.contains(QStringLiteral("libqt6sql6-sqlite")), qPrintable(versions));
        // One version, two builds of it: still two libraries.
        QVERIFY(!sqlitefile::libraryMismatch(file, QStringLiteral("3.40.1"), b, QStringLiteral("3.40.1"), a).isEmpty());
        QVERIFY(!sqlitefile::libraryMismatch(file, QString(), QString(), QStringLiteral("3.40.1"), a).isEmpty());

        // This build: the plugin in use runs the linked library (else no store opens).
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("version-probe"));
            db.setDatabaseName(QStringLiteral(":memory:"));
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("SELECT sqlite_version(), sqlite_source_id()")) && q.next());
            QCOMPARE(sqlitefile::libraryMismatch(file, q.value(0).toString(), q.value(1).toString(),
                             QString::fromUtf8(sqlite3_libversion()), QString::fromUtf8(sqlite3_sourceid())),
                    QString());
        }
        QSqlDatabase::removeDatabase(QStringLiteral("version-probe"));
    }

    void readOnlyFolderIsReadAndNeverWritten()
    {
        const QString path = m_mount + QStringLiteral("/trainyard.db");
        const RunId id = writeSample(path);
        QVERIFY(id > 0);
        QVERIFY(remount(true));
        const QStringList before = entriesOf(m_mount);
        QCOMPARE(before, QStringList{QStringLiteral("trainyard.db")});
        const QByteArray hash = sha256Of(path);

        // A write-mode open is refused, naming the file and why.
        auto refused = ResultStore::open(path);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(path), qPrintable(refused.error().message));
        QVERIFY2(refused.error().message.contains(QStringLiteral("not writable (Read-only file system)")),
                qPrintable(refused.error().message));

        auto opened = ResultStore::open(path, StoreAccess::ReadOnlyIfNeeded);
        QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
        ResultStore& store = **opened;
        QVERIFY(store.isReadOnly());
        QVERIFY2(store.readOnlyReason().contains(QStringLiteral("Read-only file system")),
                qPrintable(store.readOnlyReason()));
        QCOMPARE(store.schemaVersion(), SqliteSchema::kCurrentVersion);
        const QList<RunRecord> runs = store.runs();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs.front().name, QStringLiteral("colleague"));
        QCOMPARE(runs.front().tags, QStringList{QStringLiteral("baseline")});
        QCOMPARE(store.params(id).value(QStringLiteral("lr")), QStringLiteral("0.1"));
        const QList<MetricPoint> loss = store.metrics(id, QStringLiteral("loss"));
        QCOMPARE(loss.size(), 10);
        QCOMPARE(loss.back().step, 10);
        QCOMPARE(loss.back().value, 0.1);
        QCOMPARE(store.latestMetrics(id).value(QStringLiteral("loss")).step, 10);

        // Writes are refused with the reason; async ones once, not per call.
        QSignalSpy failed(&store, &ResultStore::writeFailed);
        auto created = store.createRun(RunRecord{}, {});
        QVERIFY(!created);
        QVERIFY2(
                created.error().message.contains(path) && created.error().message.contains(QStringLiteral("read-only")),
                qPrintable(created.error().message));
        RunAnnotation rename;
        rename.name = QStringLiteral("mine");
        auto annotated = store.annotateRun(id, rename);
        QVERIFY(!annotated);
        QVERIFY2(annotated.error().message.contains(QStringLiteral("Read-only file system")),
                qPrintable(annotated.error().message));
        QVERIFY(!store.addNode(NodeRecord{QStringLiteral("gpu1"), QStringLiteral("gpu1.lan")}));
        store.appendMetrics({point(id, QStringLiteral("loss"), 11, 0.05)});
        store.updateRun(runs.front());
        store.deleteRun(id);
        QCoreApplication::processEvents();
        QCOMPARE(failed.size(), 1);
        QVERIFY(failed.front().front().toString().contains(QStringLiteral("Read-only file system")));
        auto flushed = store.flush();
        QVERIFY(!flushed);
        QVERIFY2(flushed.error().message.contains(QStringLiteral("read-only")), qPrintable(flushed.error().message));
        QVERIFY(store.flush()); // each refusal is returned once
        QCOMPARE(store.run(id)->name, QStringLiteral("colleague"));
        opened->reset();

        QCOMPARE(entriesOf(m_mount), before); // no -wal, -shm or journal left, or even tried
        QCOMPARE(sha256Of(path), hash);
    }

    void readOnlyWithItsWalShowsTheLatestCommits()
    {
        // The colleague's store is still open: its last run is only in the
        // -wal. A copy of the three files on the share, made read-only.
        const QString live = m_dir.filePath(QStringLiteral("live/trainyard.db"));
        QVERIFY(writeSample(live) > 0);
        auto writer = SqliteResultStore::open(live);
        QVERIFY(writer);
        RunRecord r;
        r.name = QStringLiteral("only-in-the-wal");
        QVERIFY((*writer)->createRun(r, {}));
        QVERIFY(QFileInfo(live + QStringLiteral("-wal")).size() > 0);
        const QString path = m_mount + QStringLiteral("/trainyard.db");
        for (const QString& suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
            QVERIFY(QFile::copy(live + suffix, path + suffix));
        writer->reset();
        QVERIFY(remount(true));

        auto opened = ResultStore::open(path, StoreAccess::ReadOnlyIfNeeded);
        QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
        QVERIFY((*opened)->isReadOnly());
        const QList<RunRecord> runs = (*opened)->runs();
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs.front().name, QStringLiteral("only-in-the-wal"));
    }

    void readOnlyOlderSchemaIsRefusedUntouched()
    {
        const QString path = m_mount + QStringLiteral("/trainyard.db");
        QVERIFY(writeSample(path) > 0);
        {
            RawDb raw(path);
            QVERIFY(raw.exec(QStringLiteral("UPDATE meta SET value = '%1' WHERE key = 'schema_version'")
                                     .arg(SqliteSchema::kCurrentVersion - 1)));
            QVERIFY(raw.exec(QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)")));
        }
        QVERIFY(QFile::remove(path + QStringLiteral("-wal")) || !QFile::exists(path + QStringLiteral("-wal")));
        QFile::remove(path + QStringLiteral("-shm"));
        QVERIFY(remount(true));
        const QByteArray hash = sha256Of(path);
        auto opened = ResultStore::open(path, StoreAccess::ReadOnlyIfNeeded);
        QVERIFY(!opened);
        const QString message = opened.error().message;
        QVERIFY2(message.contains(path), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("schema version %1, older than this Trainyard's %2")
                                          .arg(SqliteSchema::kCurrentVersion - 1)
                                          .arg(SqliteSchema::kCurrentVersion)),
                qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("read-only (its folder")), qPrintable(message));
        QCOMPARE(sha256Of(path), hash);
    }

    void truncatedFileIsExplainedAndLeftAlone()
    {
        const QString path = m_dir.filePath(QStringLiteral("truncated/trainyard.db"));
        {
            SqliteStoreOptions rows;
            rows.packBlocks = false; // many pages of rows
            auto store = SqliteResultStore::open(path, rows);
            QVERIFY(store);
            auto id = (*store)->createRun(RunRecord{}, {});
            QVERIFY(id);
            QList<MetricPoint> points;
            for (int i = 0; i < 20000; ++i)
                points << point(*id, QStringLiteral("loss"), i, i * 0.5);
            (*store)->appendMetrics(points);
            QVERIFY((*store)->flush());
        }
        QFile f(path);
        QVERIFY(f.size() > 200'000);
        QVERIFY(f.resize(f.size() / 2));
        const QByteArray hash = sha256Of(path);
        for (const StoreAccess access : {StoreAccess::ReadWrite, StoreAccess::ReadOnlyIfNeeded}) {
            auto opened = ResultStore::open(path, access);
            QVERIFY(!opened);
            const QString message = opened.error().message;
            QVERIFY2(
                    message.startsWith(path + QStringLiteral(" is damaged (SQLite: database disk image is malformed)")),
                    qPrintable(message));
            QVERIFY2(message.contains(QStringLiteral("keeps no backup copy")), qPrintable(message));
            QVERIFY2(message.contains(
                             QStringLiteral("sqlite3 '%1' \".recover\" | sqlite3 '%2'")
                                     .arg(path, m_dir.filePath(QStringLiteral("truncated/trainyard-recovered.db")))),
                    qPrintable(message));
        }
        QCOMPARE(sha256Of(path), hash);
    }

    void garbageHeaderAndOtherFilesAreExplained()
    {
        const QString path = m_dir.filePath(QStringLiteral("garbage/trainyard.db"));
        QVERIFY(writeSample(path) > 0);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.seek(16)); // after the magic string: page size, versions, counters
        f.write(QByteArray(32, '\xAB'));
        f.close();
        auto opened = ResultStore::open(path);
        QVERIFY(!opened);
        QVERIFY2(opened.error().message.startsWith(
                         path + QStringLiteral(" is damaged (SQLite: file is not a database)")),
                qPrintable(opened.error().message));
        QVERIFY(opened.error().message.contains(QStringLiteral(".recover")));

        const QString text = m_dir.filePath(QStringLiteral("garbage/notes.txt"));
        test::writeFile(text, "these are not results\n");
        auto notDb = ResultStore::open(text);
        QVERIFY(!notDb);
        QVERIFY2(notDb.error().message.contains(text + QStringLiteral(": not a Trainyard result database")),
                qPrintable(notDb.error().message));
    }

    void damageFoundMidSessionIsReportedOnce()
    {
        const QString path = m_dir.filePath(QStringLiteral("midway/trainyard.db"));
        RunId id = 0;
        {
            SqliteStoreOptions rows;
            rows.packBlocks = false;
            auto store = SqliteResultStore::open(path, rows);
            QVERIFY(store);
            RunRecord r;
            r.name = QStringLiteral("damaged-later");
            auto created = (*store)->createRun(r, {});
            QVERIFY(created);
            id = *created;
            QList<MetricPoint> points;
            for (int i = 0; i < 40000; ++i)
                points << point(id, QStringLiteral("loss"), i, i * 0.25);
            (*store)->appendMetrics(points);
            QVERIFY((*store)->flush());
        }
        // The schema, meta and runs pages come first; spoil pages of the metric rows.
        QFile f(path);
        const qint64 size = f.size();
        QVERIFY(size > 1'000'000);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.seek(size / 2));
        f.write(QByteArray(int(size / 4), '\xFF'));
        f.close();
        const QByteArray hash = sha256Of(path);

        auto opened = ResultStore::open(path);
        QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
        ResultStore& store = **opened;
        QSignalSpy damaged(&store, &ResultStore::damaged);
        QCOMPARE(store.damage(), QString());
        QCOMPARE(store.runs().size(), 1);
        for (int i = 0; i < 3; ++i) {
            QVERIFY(store.metrics(id).size() < 40000);
            (void)store.latestMetrics(id);
            (void)store.allMetrics(id, QStringLiteral("loss"));
        }
        QCoreApplication::processEvents();
        QCOMPARE(damaged.size(), 1);
        const QString explanation = store.damage();
        QVERIFY2(
                explanation.startsWith(path + QStringLiteral(" is damaged (SQLite: database disk image is malformed)")),
                qPrintable(explanation));
        QCOMPARE(damaged.front().front().toString(), explanation);
        QCOMPARE(messagesContaining(QStringLiteral("is damaged")), 1);
        QCOMPARE(messagesContaining(QStringLiteral("malformed")), 1); // no per-read warnings besides it

        // Nothing more is written to it.
        auto created = store.createRun(RunRecord{}, {});
        QVERIFY(!created);
        QVERIFY2(created.error().message.contains(explanation), qPrintable(created.error().message));
        store.appendMetrics({point(id, QStringLiteral("loss"), 50000, 1.0)});
        QVERIFY(!store.flush());
        opened->reset();
        QCOMPARE(messagesContaining(QStringLiteral("is damaged")), 1);
        QCOMPARE(sha256Of(path), hash);
    }

    void damageFoundByAWriteStopsWrites()
    {
        const QString path = m_dir.filePath(QStringLiteral("write/trainyard.db"));
        SqliteStoreOptions rows;
        rows.packBlocks = false;
        RunId id = 0;
        {
            auto store = SqliteResultStore::open(path, rows);
            QVERIFY(store);
            auto created = (*store)->createRun(RunRecord{}, {});
            QVERIFY(created);
            id = *created;
            QList<MetricPoint> points;
            for (int i = 0; i < 40000; ++i)
                points << point(id, QStringLiteral("loss"), i, i * 0.25);
            (*store)->appendMetrics(points);
            QVERIFY((*store)->flush());
        }
        QFile f(path);
        const qint64 size = f.size();
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.seek(size * 2 / 5)); // to the end: the series' last rows too
        f.write(QByteArray(int(size - size * 2 / 5), '\xFF'));
        f.close();

        auto opened = SqliteResultStore::open(path, rows);
        QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
        ResultStore& store = **opened;
        QSignalSpy damaged(&store, &ResultStore::damaged);
        store.appendMetrics({point(id, QStringLiteral("loss"), 40000, 1.0)});
        QVERIFY(!store.flush());
        QCoreApplication::processEvents();
        QCOMPARE(damaged.size(), 1);
        QVERIFY2(store.damage().startsWith(
                         path + QStringLiteral(" is damaged (SQLite: database disk image is malformed)")),
                qPrintable(store.damage()));
        // From then on nothing is sent to the writer.
        const qint64 committed = store.transactionsCommitted();
        RunRecord r;
        r.name = QStringLiteral("after");
        QVERIFY(!store.createRun(r, {}));
        store.appendMetrics({point(id, QStringLiteral("loss"), 40001, 1.0)});
        QVERIFY(!store.flush());
        QCOMPARE(store.transactionsCommitted(), committed);
        QCOMPARE(messagesContaining(QStringLiteral("is damaged")), 1);
    }
};

QTEST_GUILESS_MAIN(TestStoreAccess)
#include "TestStoreAccess.moc"
