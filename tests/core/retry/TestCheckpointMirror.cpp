// core/retry/CheckpointMirror (issue #25): which checkpoint a listing says
// to copy (the newest complete one, once; hostile names refused), and the
// mirror's bookkeeping on a TestClock: a listing every interval, a copy only
// when a new marker appears, a copy cut short never kept, only the newest
// copy kept, one more look when the attempt ends, and what a next attempt
// gets staged where. The "node" is a folder on this machine, listed and
// copied from by the test's own Access (no agent); the database is a real
// SQLite file. No sleeps.
#include "tests/support/TestClock.h"
#include "tests/support/TestSupport.h"

#include "core/common/Paths.h"
#include "core/retry/CheckpointMirror.h"
#include "core/retry/Checkpoints.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;
using ty::test::TestClock;

namespace {

const QString kDir = QStringLiteral(".trainyard/checkpoints/1");

AgentFileEntry entry(const QString& path, qint64 size, qint64 mtimeMs, const QString& type = QStringLiteral("file"))
{
    AgentFileEntry f;
    f.root = QStringLiteral("workdir");
    f.path = path;
    f.absolutePath = QStringLiteral("/node/wd/") + path;
    f.size = size;
    f.type = type;
    f.mtimeMs = mtimeMs;
    return f;
}

// Writes `bytes` to `path` (folders made) with its modification time `mtimeMs`.
void writeAt(const QString& path, const QByteArray& bytes, qint64 mtimeMs)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
    f.setFileTime(QDateTime::fromMSecsSinceEpoch(mtimeMs, Qt::UTC), QFileDevice::FileModificationTime);
}

} // namespace

class TestCheckpointMirror final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void planCopiesTheNewestCompleteCheckpointOnce()
    {
        AgentFileList list;
        list.workdir = QStringLiteral("/node/wd");
        list.files = {entry(kDir + QStringLiteral("/epoch-1.pt"), 10, 1000),
                entry(kDir + QStringLiteral("/epoch-1.pt.trainyard-done"), 60, 1100),
                entry(kDir + QStringLiteral("/epoch-2/b.bin"), 200, 1500),
                entry(kDir + QStringLiteral("/epoch-2/a.json"), 30, 1550),
                entry(kDir + QStringLiteral("/epoch-2.trainyard-done"), 61, 1600),
                // written after it, no marker: a save cut short
                entry(kDir + QStringLiteral("/epoch-3.pt"), 999, 1700)};
        CheckpointFetchPlan plan = planCheckpointFetch(list, kDir, std::nullopt);
        QCOMPARE(plan.refused, QString());
        QVERIFY(plan.fetch);
        QCOMPARE(plan.fetch->name, QStringLiteral("epoch-2"));
        QCOMPARE(plan.fetch->nodePath, QStringLiteral("/node/wd/") + kDir + QStringLiteral("/epoch-2"));
        QStringList paths;
        for (const AgentFileEntry& e : plan.fetch->files.files)
            paths << e.path;
        QCOMPARE(paths,
                (QStringList{kDir + QStringLiteral("/epoch-2/a.json"), kDir + QStringLiteral("/epoch-2/b.bin"),
                        kDir + QStringLiteral("/epoch-2.trainyard-done")}));
        QCOMPARE(plan.fetch->bytes, qint64(30 + 200 + 61));
        QCOMPARE(plan.fetch->markerMtimeMs, qint64(1600));
        QCOMPARE(plan.fetch->markerSize, qint64(61));

        // Held already (same name, marker time and size): nothing; a marker
        // written again (another time): copied again.
        CheckpointCopy have;
        have.name = QStringLiteral("epoch-2");
        have.markerMtimeMs = 1600;
        have.markerSize = 61;
        QVERIFY(!planCheckpointFetch(list, kDir, have).fetch);
        have.markerMtimeMs = 1599;
        QVERIFY(planCheckpointFetch(list, kDir, have).fetch);
        // The copy staged there from `have` (the marker's time is the
        // staging's): not copied back, as long as its bytes are the same.
        have.bytes = 30 + 200 + 61;
        QVERIFY(!planCheckpointFetch(list, kDir, have, QStringLiteral("epoch-2")).fetch);
        QVERIFY(planCheckpointFetch(list, kDir, have, QStringLiteral("epoch-1")).fetch);
        have.bytes = 30 + 200 + 61 + 1;
        QVERIFY(planCheckpointFetch(list, kDir, have, QStringLiteral("epoch-2")).fetch);
        have.bytes = 30 + 200 + 61;

        // None complete: nothing.
        AgentFileList none;
        none.files = {entry(kDir + QStringLiteral("/epoch-3.pt"), 999, 1700)};
        plan = planCheckpointFetch(none, kDir, std::nullopt);
        QVERIFY(!plan.fetch);
        QCOMPARE(plan.refused, QString());

        // A symlink inside: not copied, said.
        AgentFileList linked = list;
        linked.files.append(entry(kDir + QStringLiteral("/epoch-2/out"), 5, 1560, QStringLiteral("symlink")));
        plan = planCheckpointFetch(linked, kDir, std::nullopt);
        QVERIFY(!plan.fetch);
        QCOMPARE(plan.refused,
                QStringLiteral("checkpoint epoch-2 holds %1/epoch-2/out, a symlink (only regular files are copied): "
                               "not copied")
                        .arg(kDir));
        // A path that climbs out of the folder (a hostile agent's answer).
        AgentFileList climbing = list;
        climbing.files.append(entry(kDir + QStringLiteral("/epoch-2/../../../etc/passwd"), 5, 1560));
        plan = planCheckpointFetch(climbing, kDir, std::nullopt);
        QVERIFY(!plan.fetch);
        QVERIFY2(plan.refused.contains(QStringLiteral("not a plain relative path")), qPrintable(plan.refused));
        // A checkpoint called ".." (its marker "...trainyard-done").
        AgentFileList dots;
        dots.files = {entry(kDir + QStringLiteral("/../x"), 5, 1000),
                entry(kDir + QStringLiteral("/...trainyard-done"), 5, 1100)};
        plan = planCheckpointFetch(dots, kDir, std::nullopt);
        QVERIFY(!plan.fetch);
        QCOMPARE(plan.refused, QStringLiteral("checkpoint name '..' is not a plain name in %1").arg(kDir));
        // A folder outside the workdir; a listing cut short.
        QVERIFY(!planCheckpointFetch(list, QStringLiteral("../elsewhere"), std::nullopt).fetch);
        AgentFileList cut = list;
        cut.truncated = true;
        plan = planCheckpointFetch(cut, kDir, std::nullopt);
        QVERIFY(!plan.fetch);
        QVERIFY2(plan.refused.contains(QStringLiteral("cut short")), qPrintable(plan.refused));

        QCOMPARE(checkpointSizeText(17), QStringLiteral("17 bytes"));
        QCOMPARE(checkpointSizeText(12'345'678), QStringLiteral("12.3 MB"));
    }

    void mirrorCopiesEachNewCompleteCheckpointAtItsIntervalAndKeepsOnlyWholeOnes()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString db = tmp.filePath(QStringLiteral("trainyard.db"));
        const QString node = tmp.filePath(QStringLiteral("node-wd")); // the "node's" workdir
        const QString ck = node + u'/' + kDir;
        TestClock clock;
        auto opened = ResultStore::open(db);
        QVERIFY(opened);
        std::unique_ptr<ResultStore> store = std::move(*opened);
        RunEngine engine(store.get(), db, clock);

        RunRecord run = test::runningRecord(QStringLiteral("m"), QStringLiteral("ws1"), QStringLiteral("ty-m-1"));
        run.specYaml = QStringLiteral("name: m\ncommand: 'true'\nretry: 2\n");
        run.workdir = tmp.path();
        run.env.insert(kCheckpointDirVar, kDir);
        const auto id = store->createRun(run, {});
        QVERIFY(id);
        run.id = *id;

        // The node as the test plays it: its listing of the folder, and copies
        // that can be cut short (the first file arrives with half its bytes).
        int lists = 0;
        int downloads = 0;
        bool cutShort = false;
        CheckpointMirror mirror(&engine, store.get(), db, clock, 60000);
        mirror.setAccess(CheckpointMirror::Access{
                [&](const RunRecord& r, const QStringList& globs,
                        std::function<void(const Result<AgentFileList>&)> cb) {
                    ++lists;
                    QCOMPARE(r.id, run.id);
                    QCOMPARE(globs, checkpointGlobs(kDir));
                    AgentFileList l;
                    l.workdir = node;
                    QDirIterator it(ck, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
                    while (it.hasNext()) {
                        const QFileInfo fi(it.next());
                        l.files.append(entry(QDir(node).relativeFilePath(fi.filePath()), fi.size(),
                                fi.lastModified().toMSecsSinceEpoch()));
                    }
                    cb(l);
                },
                [&](const RunRecord&, const AgentFileList& files, const QString& dest,
                        std::function<void(const Result<ArtifactDownload>&)> cb) {
                    ++downloads;
                    ArtifactDownload d;
                    for (const AgentFileEntry& e : files.files) {
                        QByteArray bytes = test::readFile(node + u'/' + e.path);
                        if (cutShort && d.downloaded.isEmpty())
                            bytes.truncate(bytes.size() / 2);
                        writeAt(dest + u'/' + e.path, bytes, e.mtimeMs);
                        d.downloaded << e.path;
                    }
                    cb(d);
                }});
        mirror.follow(run);

        const qint64 t = clock.nowMs();
        writeAt(ck + QStringLiteral("/epoch-1.pt"), "one", t - 5000);
        writeAt(ck + QStringLiteral("/epoch-1.pt.trainyard-done"), "{\"checkpoint\": \"epoch-1.pt\"}", t - 4900);
        writeAt(ck + QStringLiteral("/epoch-2.pt"), "two-two", t - 4000);
        writeAt(ck + QStringLiteral("/epoch-2.pt.trainyard-done"), "{\"checkpoint\": \"epoch-2.pt\"}", t - 3900);
        writeAt(ck + QStringLiteral("/epoch-3.pt"), "three-half", t - 3000); // no marker

        // Nothing before the interval; at it, one listing and one copy of epoch-2.
        clock.advance(59999);
        QCOMPARE(lists, 0);
        QVERIFY(!mirror.copyOf(run));
        clock.advance(1);
        QCOMPARE(lists, 2); // the listing, and the one confirming the marker after the copy
        QCOMPARE(downloads, 1);
        std::optional<CheckpointCopy> copy = mirror.copyOf(run);
        QVERIFY(copy);
        QCOMPARE(copy->name, QStringLiteral("epoch-2.pt"));
        QCOMPARE(copy->node, QStringLiteral("ws1"));
        QCOMPARE(copy->producer, run.id);
        QCOMPARE(copy->nodePath, ck + QStringLiteral("/epoch-2.pt"));
        QCOMPARE(copy->bytes, qint64(7 + 28));
        const QString base = runDataDir(db, run.id) + QStringLiteral("/checkpoint");
        QCOMPARE(copy->localRoot, base + QStringLiteral("/copy-1"));
        QCOMPARE(test::readFile(copy->localRoot + u'/' + kDir + QStringLiteral("/epoch-2.pt")), QByteArray("two-two"));
        QVERIFY(!QFileInfo::exists(copy->localRoot + u'/' + kDir + QStringLiteral("/epoch-3.pt")));
        QVERIFY(!QFileInfo::exists(copy->localRoot + u'/' + kDir + QStringLiteral("/epoch-1.pt")));

        // Unchanged: listed again, not copied again.
        clock.advance(60000);
        QCOMPARE(lists, 3);
        QCOMPARE(downloads, 1);

        // A new one whose copy arrives cut short: not kept, its folder gone, the old copy stays.
        writeAt(ck + QStringLiteral("/epoch-4.pt"), "four-four-four", t + 100000);
        writeAt(ck + QStringLiteral("/epoch-4.pt.trainyard-done"), "{\"checkpoint\": \"epoch-4.pt\"}", t + 100100);
        cutShort = true;
        clock.advance(60000);
        QCOMPARE(lists, 4);
        QCOMPARE(downloads, 2);
        QCOMPARE(mirror.copyOf(run)->name, QStringLiteral("epoch-2.pt"));
        QCOMPARE(QDir(base).entryList(QDir::Dirs | QDir::NoDotAndDotDot), QStringList{QStringLiteral("copy-1")});

        // The next one is whole: kept, and only it (copy-1 gone).
        cutShort = false;
        clock.advance(60000);
        QCOMPARE(lists, 6);
        QCOMPARE(downloads, 3);
        copy = mirror.copyOf(run);
        QCOMPARE(copy->name, QStringLiteral("epoch-4.pt"));
        QCOMPARE(test::readFile(copy->localRoot + u'/' + kDir + QStringLiteral("/epoch-4.pt")),
                QByteArray("four-four-four"));
        QCOMPARE(QDir(base).entryList(QDir::Dirs | QDir::NoDotAndDotDot), QStringList{QStringLiteral("copy-2")});

        // The attempt ends (failed, its node answers): one more look at once, then no more.
        run.state = RunState::Failed;
        run.failureKind = FailureKind::ExitCode;
        Q_EMIT engine.runStateChanged(run);
        QCOMPARE(lists, 7);
        clock.advance(600000);
        QCOMPARE(lists, 7);

        // Attempt 2, placed on ws2 to resume from that checkpoint: the copy
        // is staged into its workdir's checkpoint folder, and
        // TRAINYARD_RESUME_FROM names it there; placed on ws1, nothing.
        const auto group = store->createGroup(RunGroupKind::Attempts, QStringLiteral("m"), clock.nowUtc());
        QVERIFY(group);
        QVERIFY(store->joinGroup(run.id, RunGroupMembership{*group, RunGroupKind::Attempts, 1, {}}));
        RunRecord next = run;
        next.id = 0;
        next.state = RunState::Starting;
        next.node = QStringLiteral("ws2");
        next.env.insert(kResumeFromVar, copy->nodePath);
        next.groups = {RunGroupMembership{*group, RunGroupKind::Attempts, 2, {}}};
        const auto nextId = store->createRun(next, {});
        QVERIFY(nextId);
        next.id = *nextId;
        QList<RunEngine::StageSource> sources = mirror.stageSources(next);
        QCOMPARE(sources.size(), 1);
        QCOMPARE(sources[0].error, QString());
        QCOMPARE(sources[0].producer, run.id);
        QCOMPARE(sources[0].localRoot, copy->localRoot);
        QCOMPARE(sources[0].files,
                (QStringList{
                        kDir + QStringLiteral("/epoch-4.pt"), kDir + QStringLiteral("/epoch-4.pt.trainyard-done")}));
        QCOMPARE(sources[0].envPaths, (QMap<QString, QString>{{kResumeFromVar, kDir + QStringLiteral("/epoch-4.pt")}}));
        next.node = QStringLiteral("ws1");
        QVERIFY(mirror.stageSources(next).isEmpty());

        // Asked to resume from a checkpoint of which no copy is here, on
        // another node than the one holding it: an error saying so.
        next.node = QStringLiteral("ws3");
        next.env.insert(kResumeFromVar, ck + QStringLiteral("/epoch-9.pt"));
        sources = mirror.stageSources(next);
        QCOMPARE(sources.size(), 1);
        QVERIFY2(sources[0].error.startsWith(QStringLiteral("attempt 2 was to resume from %1/epoch-9.pt on node ws1, "
                                                            "but it was placed on ws3 and no complete copy")
                                                     .arg(ck)),
                qPrintable(sources[0].error));
        // A copy that lost a file here since: an error too, never a half copy staged.
        next.env.insert(kResumeFromVar, copy->nodePath);
        QVERIFY(QFile::remove(copy->localRoot + u'/' + kDir + QStringLiteral("/epoch-4.pt")));
        sources = mirror.stageSources(next);
        QCOMPARE(sources.size(), 1);
        QVERIFY2(sources[0].error.contains(QStringLiteral("its copy on this machine is not whole")),
                qPrintable(sources[0].error));
        QVERIFY(sources[0].files.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCheckpointMirror)
#include "TestCheckpointMirror.moc"
