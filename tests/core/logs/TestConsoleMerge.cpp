// The aggregated console's core: arrival-time index (console.times), line
// levels (errors, warnings, traceback blocks) and the merge of several runs'
// consoles, on the real GPU-workstation fixtures and generated consoles.
#include "core/logs/ConsoleLevel.h"
#include "core/logs/ConsoleMerge.h"
#include "core/logs/ConsoleTimes.h"
#include "core/runs/RunIngest.h"
#include "core/store/SqliteResultStore.h"

#include "tests/support/TestSupport.h"

#include <QFile>
#include <QTemporaryDir>

#include "core/logs/StderrRanges.h"
#include <QTest>

using namespace ty;

namespace {

bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

// Offset of the start of `needle` in `hay` (fails loudly when absent).
qint64 offsetOf(const QByteArray& hay, const char* needle)
{
    const qsizetype at = hay.indexOf(needle);
    if (at < 0)
        qFatal("fixture lacks \"%s\"", needle);
    return at;
}

QString levelString(const QList<MergedConsoleLine>& lines)
{
    QString s;
    for (const MergedConsoleLine& l : lines)
        s += l.level == ConsoleLevel::Error        ? (l.traceback ? u'T' : u'E')
                : l.level == ConsoleLevel::Warning ? u'W'
                                                   : u'.';
    return s;
}

QStringList tagged(const QList<MergedConsoleLine>& lines)
{
    QStringList out;
    for (const MergedConsoleLine& l : lines)
        out << QStringLiteral("%1@%2 %3").arg(l.run).arg(l.timeMs).arg(l.text.left(24));
    return out;
}

} // namespace

class TestConsoleMerge : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void timeIndexFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("console.times"));
        QCOMPARE(ConsoleTimeIndex::pathFor(dir.filePath(QStringLiteral("console.log"))), path);
        QCOMPARE(ConsoleTimeIndex::pathFor(QStringLiteral("/x/out.txt")), QStringLiteral("/x/out.txt.times"));
        QCOMPARE(ConsoleTimeIndex::formatEntry(4096, 1700000000123), QByteArray("4096 1700000000123\n"));

        ConsoleTimeIndex idx;
        QCOMPARE(idx.readMore(path), 0); // missing file: no entries, no error
        QVERIFY(idx.error().isEmpty());
        QVERIFY(writeFile(path, "0 1000\n100 2000\nbogus\n250 3000\n300 40"));
        QCOMPARE(idx.readMore(path), 3);
        QVERIFY2(idx.error().startsWith(path + QStringLiteral(":3: ")), qPrintable(idx.error()));
        QCOMPARE(idx.timeAt(0), 1000);
        QCOMPARE(idx.timeAt(99), 1000);
        QCOMPARE(idx.timeAt(100), 2000);
        QCOMPARE(idx.timeAt(249), 2000);
        QCOMPARE(idx.timeAt(100000), 3000);
        // The unfinished last line is read once complete.
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::Append));
            f.write("00\n");
        }
        QCOMPARE(idx.readMore(path), 1);
        QCOMPARE(idx.timeAt(300), 4000);
        // A later entry at a lower offset (copy fetched again) replaces those at or above it.
        idx.append(200, 5000);
        QCOMPARE(idx.entries().size(), size_t(3));
        QCOMPARE(idx.timeAt(249), 5000);
        QCOMPARE(idx.timeAt(350), 5000);
        QCOMPARE(idx.timeAt(150), 2000);
    }

    void timeIndexFallback()
    {
        ConsoleTimeIndex idx;
        idx.setFallback(10000, 20000, 1000);
        QCOMPARE(idx.timeAt(0), 10000);
        QCOMPARE(idx.timeAt(500), 15000);
        QCOMPARE(idx.timeAt(999), 19990);
        QCOMPARE(idx.timeAt(5000), 20000); // clamped
        // Bytes before the first entry: between the start and that entry.
        idx.append(400, 30000);
        QCOMPARE(idx.timeAt(200), 20000);
        QCOMPARE(idx.timeAt(400), 30000);
        // Unknown start: the end time, flat.
        ConsoleTimeIndex noStart;
        noStart.setFallback(0, 7000, 100);
        QCOMPARE(noStart.timeAt(50), 7000);
        ConsoleTimeIndex noEnd;
        noEnd.setFallback(7000, 0, 100);
        QCOMPARE(noEnd.timeAt(50), 7000);
    }

    void lineLevels_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<int>("level");
        const int I = int(ConsoleLevel::Info), W = int(ConsoleLevel::Warning), E = int(ConsoleLevel::Error);
        QTest::newRow("metric") << "epoch 3 val_error: 0.31 loss=0.2" << I;
        QTest::newRow("gcc") << "train.c:3:5: error: expected ';'" << E;
        QTest::newRow("error: at start") << "error: no GPU" << E;
        QTest::newRow("ValueError") << "ValueError: bad shape" << E;
        QTest::newRow("ERROR") << "2024-05-01 12:00:00 ERROR root: failed" << E;
        QTest::newRow("TERROR") << "TERRORS of the deep" << I;
        QTest::newRow("cuda oom") << "RuntimeError: CUDA error: out of memory" << E;
        QTest::newRow("cuda oom plain") << "CUDA out of memory. Tried to allocate 2.00 GiB" << E;
        QTest::newRow("nccl") << "NCCL WARN Call to connect returned Connection refused" << E;
        QTest::newRow("nccl error") << "torch.distributed: NCCL error in: ProcessGroupNCCL.cpp:1275" << E;
        QTest::newRow("killed") << "Killed" << E;
        QTest::newRow("sh killed") << "bash: line 1: 4242 Killed  python train.py" << E;
        QTest::newRow("killed prose") << "Killedrick" << I;
        QTest::newRow("UserWarning") << "/x/y.py:12: UserWarning: TypedStorage is deprecated" << W;
        QTest::newRow("WARNING") << "WARNING:root:low disk" << W;
        QTest::newRow("WARN") << "[WARN] slow dataloader" << W;
        QTest::newRow("warning:") << "x.cpp:1: warning: unused" << W;
        QTest::newRow("py location")
                << "/opt/venv/lib/python3.12/site-packages/lightning/pytorch/utilities/_pytree.py:21: `isinstance` is deprecated"
                << W;
        QTest::newRow("prewarning") << "prewarning: none" << I;
        QTest::newRow("plain") << "step 17 allocated_gib=136.0 loss=0.0588" << I;
    }

    void lineLevels()
    {
        QFETCH(QString, line);
        QFETCH(int, level);
        QCOMPARE(int(ConsoleLevelClassifier::lineLevel(line)), level);
    }

    void tracebackBlocks()
    {
        // Chained exceptions: one block from the first header to the last exception line.
        const QStringList lines = {
                QStringLiteral("starting"),
                QStringLiteral("Traceback (most recent call last):"),
                QStringLiteral("  File \"a.py\", line 1, in <module>"),
                QStringLiteral("KeyError: 'x'"),
                QString(),
                QStringLiteral("During handling of the above exception, another exception occurred:"),
                QString(),
                QStringLiteral("Traceback (most recent call last):"),
                QStringLiteral("  File \"a.py\", line 3, in <module>"),
                QStringLiteral("\traise RuntimeError('y')"),
                QStringLiteral("RuntimeError: y"),
                QString(),
                QStringLiteral("after"),
        };
        ConsoleLevelClassifier c;
        QString got;
        for (const QString& l : lines) {
            const ConsoleLevel level = c.classify(l);
            got += level == ConsoleLevel::Error ? (c.lastWasTraceback() ? u'T' : u'E') : u'.';
        }
        // The blank line after "KeyError" is not in a block (the block ended);
        // the one after "During handling" is.
        QCOMPARE(got, QStringLiteral(".TTT.TTTTTT.."));
    }

    void oomFixtureLevels()
    {
        ConsoleMergeSource s;
        s.run = 1;
        s.name = QStringLiteral("oom");
        s.consolePath = test::fixturePath(QStringLiteral("gpu-workstation/logs/oom.log"));
        s.timesPath = QStringLiteral("/nonexistent/console.times");
        const auto lines = ConsoleMerge::mergeFiles({s});
        QVERIFY2(lines, qPrintable(lines ? QString() : lines.error().message));
        QCOMPARE(lines->size(), 6);
        QCOMPARE(levelString(*lines), QStringLiteral(".TTTTT"));
        QVERIFY(lines->at(5).text.startsWith(u"torch.OutOfMemoryError: CUDA out of memory."));

        s.consolePath = test::fixturePath(QStringLiteral("gpu-workstation/logs/oom_midrun.log"));
        const auto mid = ConsoleMerge::mergeFiles({s});
        QVERIFY(mid);
        QCOMPARE(levelString(*mid), QString(17, u'.') + QStringLiteral("TTTTT"));
    }

    void lightningFixtureLevels()
    {
        ConsoleMergeSource s;
        s.run = 1;
        s.consolePath = test::fixturePath(QStringLiteral("gpu-workstation/logs/lightning_run.log"));
        s.timesPath = QStringLiteral("/nonexistent/console.times");
        const auto lines = ConsoleMerge::mergeFiles({s});
        QVERIFY(lines);
        QStringList warnings;
        for (const MergedConsoleLine& l : *lines) {
            QVERIFY2(l.level != ConsoleLevel::Error, qPrintable(l.text));
            if (l.level == ConsoleLevel::Warning)
                warnings << l.text.section(u':', 0, 1).section(u'/', -1);
        }
        QCOMPARE(warnings,
                (QStringList{QStringLiteral("_pytree.py:21"), QStringLiteral("data_connector.py:434"),
                        QStringLiteral("data_connector.py:434")}));
    }

    // Two real consoles with time indexes: exact merged order, ties by run id.
    void mergeFixturesByArrival()
    {
        QTemporaryDir dir;
        const QByteArray oom = test::readFixture(QStringLiteral("gpu-workstation/logs/oom.log"));
        const QByteArray mid = test::readFixture(QStringLiteral("gpu-workstation/logs/oom_midrun.log"));
        QVERIFY(!oom.isEmpty() && !mid.isEmpty());
        const QString oomLog = dir.filePath(QStringLiteral("1/console.log"));
        const QString midLog = dir.filePath(QStringLiteral("2/console.log"));
        QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("1"))) && QDir().mkpath(dir.filePath(QStringLiteral("2"))));
        QVERIFY(writeFile(oomLog, oom));
        QVERIFY(writeFile(midLog, mid));
        // Run 1 printed "allocating..." at t=1000 and its traceback at 3000;
        // run 2 printed steps 1-8 at 1500, steps 9-17 at 2000, its traceback at 3000 too.
        QVERIFY(writeFile(ConsoleTimeIndex::pathFor(oomLog),
                "0 1000\n" + QByteArray::number(offsetOf(oom, "Traceback")) + " 3000\n"));
        QVERIFY(writeFile(ConsoleTimeIndex::pathFor(midLog),
                "0 1500\n" + QByteArray::number(offsetOf(mid, "step 9 ")) + " 2000\n"
                        + QByteArray::number(offsetOf(mid, "Traceback")) + " 3000\n"));
        ConsoleMergeSource a{1, QStringLiteral("oom"), oomLog, {}, 0, 0};
        ConsoleMergeSource b{2, QStringLiteral("midrun"), midLog, {}, 0, 0};
        // The order the sources are given in does not matter.
        const auto merged = ConsoleMerge::mergeFiles({b, a});
        QVERIFY(merged);
        QCOMPARE(merged->size(), 6 + 22);
        QStringList expected;
        expected << QStringLiteral("1@1000 allocating...");
        for (int step = 1; step <= 17; ++step) {
            const QString line = QString::fromUtf8(mid.split('\n').at(step - 1));
            expected << QStringLiteral("2@%1 %2").arg(step <= 8 ? 1500 : 2000).arg(line.left(24));
        }
        const QList<QByteArray> oomLines = oom.split('\n');
        const QList<QByteArray> midLines = mid.split('\n');
        for (int i = 1; i <= 5; ++i)
            expected << QStringLiteral("1@3000 ") + QString::fromUtf8(oomLines.at(i)).left(24);
        for (int i = 17; i <= 21; ++i)
            expected << QStringLiteral("2@3000 ") + QString::fromUtf8(midLines.at(i)).left(24);
        QCOMPARE(tagged(*merged), expected);
        QCOMPARE(levelString(*merged), QStringLiteral(".") + QString(17, u'.') + QStringLiteral("TTTTTTTTTT"));
        QCOMPARE(merged->at(0).source, 1);
        QCOMPARE(merged->at(1).source, 0);
    }

    // A progress bar redrawn with \r is one row, timed when it became final.
    void redrawnRowTakesCompletionTime()
    {
        QTemporaryDir dir;
        const QString aLog = dir.filePath(QStringLiteral("a.log"));
        const QString bLog = dir.filePath(QStringLiteral("b.log"));
        const QByteArray a = "a1\nbar 1/3\rbar 2/3\rbar 3/3\na2\n";
        QVERIFY(writeFile(aLog, a));
        QVERIFY(writeFile(ConsoleTimeIndex::pathFor(aLog),
                "0 100\n3 200\n" + QByteArray::number(a.indexOf("\rbar 3")) + " 300\n"
                        + QByteArray::number(a.indexOf("a2")) + " 400\n"));
        QVERIFY(writeFile(bLog, "b1\nb2\n"));
        QVERIFY(writeFile(ConsoleTimeIndex::pathFor(bLog), "0 250\n3 400\n"));
        const auto merged = ConsoleMerge::mergeFiles(
                {{7, QStringLiteral("a"), aLog, {}, 0, 0}, {5, QStringLiteral("b"), bLog, {}, 0, 0}});
        QVERIFY(merged);
        QCOMPARE(tagged(*merged),
                (QStringList{QStringLiteral("7@100 a1"), QStringLiteral("5@250 b1"), QStringLiteral("7@300 bar 3/3"),
                        QStringLiteral("5@400 b2"), QStringLiteral("7@400 a2")}));
    }

    // Incremental reading in any split gives the rows of a whole read, and
    // each row once; the live path appends rows in order.
    void incrementalSplitsAgree()
    {
        QTemporaryDir dir;
        const QByteArray bytes = test::readFixture(QStringLiteral("gpu-workstation/logs/nested_tqdm.log"))
                + test::readFixture(QStringLiteral("gpu-workstation/logs/plain_torch.log"));
        const QString log = dir.filePath(QStringLiteral("console.log"));
        QVERIFY(writeFile(log, bytes));
        QVERIFY(writeFile(ConsoleTimeIndex::pathFor(log), "0 5000\n"));
        ConsoleMergeSource s{3, QStringLiteral("tqdm"), log, {}, 0, 0};
        const auto whole = ConsoleMerge::mergeFiles({s});
        QVERIFY(whole);
        QVERIFY(whole->size() > 100);
        for (const int chunk : {1, 7, 4096}) {
            ConsoleMerge merge;
            merge.addSource(s);
            QList<MergedConsoleLine> got;
            for (;;) {
                const auto n = merge.readSource(0, chunk);
                QVERIFY(n);
                if (*n == 0)
                    break;
                got += merge.takeLines();
            }
            merge.finishSource(0);
            got += merge.takeLines();
            QCOMPARE(merge.bytesRead(0), bytes.size());
            QVERIFY(!merge.timesEstimated(0));
            QCOMPARE(got.size(), whole->size());
            for (qsizetype i = 0; i < got.size(); ++i) {
                QCOMPARE(got.at(i).text, whole->at(i).text);
                QCOMPARE(got.at(i).offset, whole->at(i).offset);
                QCOMPARE(got.at(i).level, whole->at(i).level);
            }
        }
    }

    // A live run: a file that grows; new rows come out as its bytes arrive.
    void liveFileGrows()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("console.log"));
        QVERIFY(writeFile(log, {}));
        ConsoleMerge merge;
        merge.addSource({4, QStringLiteral("live"), QString(), {}, 0, 0}); // not started: no path yet
        QCOMPARE(*merge.readSource(0, 1 << 20), 0);
        merge.updateSource(0, {4, QStringLiteral("live"), log, {}, 0, 0});
        QCOMPARE(*merge.readSource(0, 1 << 20), 0);
        {
            QFile f(log);
            QVERIFY(f.open(QIODevice::Append));
            QFile t(ConsoleTimeIndex::pathFor(log));
            QVERIFY(t.open(QIODevice::Append));
            t.write(ConsoleTimeIndex::formatEntry(0, 111));
            t.flush();
            f.write("one\ntw");
        }
        QCOMPARE(*merge.readSource(0, 1 << 20), 6);
        QCOMPARE(tagged(merge.takeLines()), QStringList{QStringLiteral("4@111 one")});
        {
            QFile f(log);
            QVERIFY(f.open(QIODevice::Append));
            QFile t(ConsoleTimeIndex::pathFor(log));
            QVERIFY(t.open(QIODevice::Append));
            t.write(ConsoleTimeIndex::formatEntry(6, 222));
            t.flush();
            f.write("o\nthree");
        }
        QCOMPARE(*merge.readSource(0, 1 << 20), 7);
        QCOMPARE(tagged(merge.takeLines()), QStringList{QStringLiteral("4@222 two")});
        merge.finishSource(0);
        QCOMPARE(tagged(merge.takeLines()), QStringList{QStringLiteral("4@222 three")});
        QVERIFY(merge.isFinished(0));
    }

    // console.stderr beside the copy: rows holding any stderr byte are marked,
    // also when the sidecar grows with the live copy.
    void stderrRowsMarked()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("console.log"));
        // "ok 1\n" [0,5) stdout, "Traceback\n" [5,15) stderr, "ok 2\n" [15,20),
        // "mix " stdout + "ERR\n" stderr [20,28).
        QVERIFY(writeFile(log, "ok 1\nTraceback\nok 2\nmix ERR\n"));
        QVERIFY(writeFile(StderrSidecar::pathFor(log), "5 10\n24 4\n"));
        ConsoleMerge merge;
        merge.addSource({3, QStringLiteral("err"), log, {}, 1000, 2000});
        QVERIFY(*merge.readSource(0, 1 << 20) > 0);
        merge.finishSource(0);
        const QList<MergedConsoleLine> lines = merge.takeLines();
        QStringList marked;
        for (const MergedConsoleLine& l : lines)
            marked << (l.fromStderr ? QStringLiteral("E ") : QStringLiteral("O ")) + l.text;
        QCOMPARE(marked,
                (QStringList{QStringLiteral("O ok 1"), QStringLiteral("E Traceback"), QStringLiteral("O ok 2"),
                        QStringLiteral("E mix ERR")}));

        // Live: the range is appended before its bytes.
        const QString live = dir.filePath(QStringLiteral("live/console.log"));
        QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("live"))));
        QVERIFY(writeFile(live, "a\n"));
        ConsoleMerge m2;
        m2.addSource({4, QStringLiteral("live"), live, {}, 1000, 0});
        QVERIFY(*m2.readSource(0, 1 << 20) > 0);
        {
            QFile side(StderrSidecar::pathFor(live));
            QVERIFY(side.open(QIODevice::Append));
            side.write("2 4\n");
            side.close();
            QFile f(live);
            QVERIFY(f.open(QIODevice::Append));
            f.write("bad\nc\n");
        }
        QVERIFY(*m2.readSource(0, 1 << 20) > 0);
        m2.finishSource(0);
        QStringList got;
        for (const MergedConsoleLine& l : m2.takeLines())
            got << (l.fromStderr ? QStringLiteral("E ") : QStringLiteral("O ")) + l.text;
        QCOMPARE(got, (QStringList{QStringLiteral("O a"), QStringLiteral("E bad"), QStringLiteral("O c")}));
    }

    // The sidecar's writer (RunIngest) keeps no copy of what it appends;
    // a reader's refresh() reads every line, its own appends included, and
    // then only the lines added since.
    void sidecarAppendWritesTheFileOnly()
    {
        QTemporaryDir dir;
        const QString path = StderrSidecar::pathFor(dir.filePath(QStringLiteral("console.log")));
        StderrSidecar side(path);
        QVERIFY(side.append(ByteRanges{{5, 5}, {20, 0}, {30, 2}}));
        QVERIFY(side.ranges().isEmpty());
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("5 5\n30 2\n")); // the empty range is not written
        f.close();
        side.refresh();
        QVERIFY(side.ranges().intersects(9, 10));
        QVERIFY(!side.ranges().intersects(10, 30));
        QVERIFY(side.ranges().intersects(31, 40));
        QVERIFY(side.append(ByteRanges{{50, 1}}));
        QVERIFY(!side.ranges().intersects(50, 51));
        side.refresh(40); // ranges ending by 40 are dropped; the new line is read once
        QVERIFY(!side.ranges().intersects(0, 40));
        QVERIFY(side.ranges().intersects(50, 51));
        QCOMPARE(side.ranges().toList(), (ByteRanges{{50, 1}}));
    }

    // Runs from before console.times: times interpolated from start/end.
    void fallbackWithoutIndex()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("console.log"));
        const QByteArray bytes = test::readFixture(QStringLiteral("gpu-workstation/logs/oom_midrun.log"));
        QVERIFY(writeFile(log, bytes));
        ConsoleMerge merge;
        merge.addSource({9, QStringLiteral("old"), log, {}, 1'000'000, 1'010'000});
        QVERIFY(*merge.readSource(0, 1 << 20) > 0);
        merge.finishSource(0);
        QVERIFY(merge.timesEstimated(0));
        const QList<MergedConsoleLine> lines = merge.takeLines();
        QCOMPARE(lines.size(), 22);
        const qint64 size = bytes.size();
        const qint64 firstNl = bytes.indexOf('\n');
        QCOMPARE(lines.first().timeMs, 1'000'000 + qint64(double(firstNl) / double(size) * 10'000));
        QCOMPARE(lines.last().timeMs, 1'000'000 + qint64(double(size - 1) / double(size) * 10'000));
        for (qsizetype i = 1; i < lines.size(); ++i)
            QVERIFY(lines.at(i - 1).timeMs <= lines.at(i).timeMs);
    }

    void unreadableCopyIsAnError()
    {
        QTemporaryDir dir;
        // A directory where the copy should be: exists, cannot be read as a file.
        const QString bogus = dir.filePath(QStringLiteral("console.log"));
        QVERIFY(QDir().mkpath(bogus));
        ConsoleMerge merge;
        merge.addSource({12, QStringLiteral("broken"), bogus, {}, 0, 0});
        const auto n = merge.readSource(0, 100);
        QVERIFY(!n || *n == 0);
        if (!n)
            QVERIFY2(n.error().message.contains(u"run 12") && n.error().message.contains(bogus),
                    qPrintable(n.error().message));
    }

    // RunIngest writes console.times: one entry per fresh chunk, before the bytes.
    void runIngestWritesTimes()
    {
        QTemporaryDir dir;
        auto store = SqliteResultStore::open(dir.filePath(QStringLiteral("results.db")));
        QVERIFY(store);
        RunRecord run;
        run.name = QStringLiteral("times");
        run.node = QStringLiteral("local");
        run.state = RunState::Running;
        const auto id = (*store)->createRun(run, {});
        QVERIFY(id);
        run.id = *id;
        RunIngest ingest(run, store->get());
        const QString runDir = dir.filePath(QStringLiteral("run"));
        QVERIFY(ingest.open(runDir));
        const qint64 before = QDateTime::currentMSecsSinceEpoch();
        QVERIFY(ingest.ingest(0, "epoch 1\n"));
        QVERIFY(ingest.ingest(0, "epoch 1\n")); // already held: no entry
        QVERIFY(ingest.ingest(8, "epoch 2\nepo"));
        QVERIFY(ingest.ingest(16, "ch 3\n"));
        ingest.finish();
        const qint64 after = QDateTime::currentMSecsSinceEpoch();
        ConsoleTimeIndex idx;
        QCOMPARE(idx.readMore(runDir + QStringLiteral("/console.times")), 3);
        QVERIFY(idx.error().isEmpty());
        QCOMPARE(idx.entries().at(0).offset, 0);
        QCOMPARE(idx.entries().at(1).offset, 8);
        QCOMPARE(idx.entries().at(2).offset, 19);
        for (const auto& e : idx.entries())
            QVERIFY(e.timeMs >= before && e.timeMs <= after);
        QVERIFY((*store)->flush());
    }
};

QTEST_GUILESS_MAIN(TestConsoleMerge)
#include "TestConsoleMerge.moc"
