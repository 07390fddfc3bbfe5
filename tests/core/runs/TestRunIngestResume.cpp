// A resumed run's console through the whole ingest pipeline (terminal
// renderer, metric extraction, a real SQLite result database): the steps go
// back, the new segment replaces the overlap, nothing is dropped.
#include "tests/support/TestSupport.h"
#include "core/runs/RunIngest.h"
#include "core/store/ResultStore.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace ty;

class TestRunIngestResume final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void consoleStepsGoingBackSupersede()
    {
        QTemporaryDir dir;
        auto store = ResultStore::open(dir.filePath(QStringLiteral("t.db")));
        QVERIFY(store);
        RunRecord r;
        r.name = QStringLiteral("resumed");
        auto id = (*store)->createRun(r, {});
        QVERIFY(id);
        r.id = *id;
        RunIngest ingest(r, store->get());
        auto resumeAt = ingest.open(dir.filePath(QStringLiteral("run")));
        QVERIFY(resumeAt);
        QCOMPARE(*resumeAt, qint64(0));

        // Steps 1..10 (inf at 9), the process dies, is resumed from its
        // step-5 checkpoint and logs 5..12 (nan at 7).
        QByteArray console;
        for (int s = 1; s <= 10; ++s)
            console += QByteArray("step=") + QByteArray::number(s)
                    + " loss=" + (s == 9 ? QByteArray("inf") : QByteArray::number(s)) + "\n";
        console += "Resuming from checkpoint\n";
        for (int s = 5; s <= 12; ++s)
            console += QByteArray("step=") + QByteArray::number(s)
                    + " loss=" + (s == 7 ? QByteArray("nan") : QByteArray::number(100 + s)) + "\n";
        // In two pieces split mid-line, as the agent may send it.
        const qsizetype half = console.size() / 2 + 3;
        QVERIFY(ingest.ingest(0, QByteArrayView(console).first(half)));
        QVERIFY(ingest.ingest(half, QByteArrayView(console).sliced(half)));
        ingest.finish();
        QVERIFY((*store)->flush().has_value());

        const QList<MetricPoint> current = (*store)->metrics(*id, QStringLiteral("loss"));
        QCOMPARE(current.size(), 12); // 1..4 of the first segment, 5..12 of the second
        for (int i = 0; i < 12; ++i) {
            const qint64 step = i + 1;
            QCOMPARE(current[i].step, step);
            if (step == 7)
                QVERIFY(std::isnan(current[i].value));
            else
                QCOMPARE(current[i].value, step < 5 ? double(step) : 100.0 + step);
        }
        const QList<MetricPoint> all = (*store)->allMetrics(*id, QStringLiteral("loss"));
        QCOMPARE(all.size(), 18); // 10 + 8: nothing dropped
        int superseded = 0;
        for (const MetricPoint& p : all) {
            if (!p.superseded)
                continue;
            ++superseded;
            QVERIFY(p.step >= 5 && p.step <= 10);
            QCOMPARE(p.source, MetricSource::Console);
            if (p.step == 9)
                QVERIFY(std::isinf(p.value) && p.value > 0);
            else
                QCOMPARE(p.value, double(p.step));
        }
        QCOMPARE(superseded, 6);
        const QList<MetricRestart> restarts = (*store)->metricRestarts(*id);
        QCOMPARE(restarts.size(), 1);
        QCOMPARE(restarts[0].key, QStringLiteral("loss"));
        QCOMPARE(restarts[0].step, qint64(5));
        QCOMPARE(restarts[0].superseded, 6);
    }

    void nodeTruncationKeepsTheCopyAndResumesAtTheNodeOffset()
    {
        // The node's file is truncated after 20 bytes were fetched: the new
        // content (node offsets from 0) goes after them in the copy, stored
        // offsets stay the copy's, and a later session resumes at the node
        // offset of the copy's end, read back from console.node.
        QTemporaryDir dir;
        auto store = ResultStore::open(dir.filePath(QStringLiteral("t.db")));
        QVERIFY(store);
        RunRecord r;
        r.name = QStringLiteral("truncated");
        auto id = (*store)->createRun(r, {});
        QVERIFY(id);
        r.id = *id;
        const QString runDir = dir.filePath(QStringLiteral("run"));
        const QByteArray old("step=1 loss=1\nstep=2"); // 20 bytes, the last line unfinished
        const QByteArray fresh(" loss=2\nerr\nstep=3 loss=3\n");
        {
            RunIngest ingest(r, store->get());
            auto resumeAt = ingest.open(runDir);
            QVERIFY(resumeAt);
            QVERIFY(ingest.ingest(0, old));
            QVERIFY(ingest.nodeConsoleTruncated(1));
            QCOMPARE(ingest.nodeGeneration(), qint64(1));
            QCOMPARE(ingest.fetchedNodeOffset(), qint64(0));
            QCOMPARE(ingest.localOffset(0), qint64(old.size()));
            // Bytes [8, 12) of the new content came from stderr.
            QVERIFY(ingest.ingest(0, QByteArrayView(fresh).first(12), ByteRanges{{8, 4}}));
            QCOMPARE(ingest.fetchedOffset(), qint64(old.size() + 12));
            QCOMPARE(ingest.fetchedNodeOffset(), qint64(12));
            QVERIFY(ingest.ingest(8, QByteArrayView(fresh).sliced(8))); // overlapping: only new bytes taken
            QCOMPARE(ingest.fetchedNodeOffset(), qint64(fresh.size()));
            QVERIFY((*store)->flush().has_value());
            QVERIFY(ingest.run().consoleOffset > old.size()); // stored offsets count the copy's bytes
        }
        QCOMPARE(test::readFile(runDir + QStringLiteral("/console.log")), old + fresh);
        QCOMPARE(test::readFile(runDir + QStringLiteral("/console.node")), QByteArray("20 0 1\n"));
        QCOMPARE(test::readFile(runDir + QStringLiteral("/console.stderr")), QByteArray("28 4\n"));
        r.consolePath = runDir + QStringLiteral("/console.log");
        r.consoleOffset = (*store)->run(*id)->consoleOffset;
        RunIngest again(r, store->get());
        auto resumeAt = again.open(runDir);
        QVERIFY(resumeAt);
        QCOMPARE(*resumeAt, qint64(fresh.size())); // node offset, not the copy's size
        QCOMPARE(again.nodeGeneration(), qint64(1));
        QCOMPARE(again.fetchedOffset(), qint64(old.size() + fresh.size()));
        again.finish();
        QVERIFY((*store)->flush().has_value());
        const QList<MetricPoint> loss = (*store)->metrics(*id, QStringLiteral("loss"));
        QCOMPARE(loss.size(), 3); // "step=2" + " loss=2": the copy is one stream
        for (int i = 0; i < 3; ++i)
            QCOMPARE(loss[i].value, double(i + 1));
    }
};

QTEST_GUILESS_MAIN(TestRunIngestResume)
#include "TestRunIngestResume.moc"
