// A resumed run's console through the whole ingest pipeline (terminal
// renderer, metric extraction, a real SQLite result database): the steps go
// back, the new segment replaces the overlap, nothing is dropped.
#include "runs/RunIngest.h"
#include "store/ResultStore.h"

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
            console += QByteArray("step=") + QByteArray::number(s) + " loss="
                + (s == 9 ? QByteArray("inf") : QByteArray::number(s)) + "\n";
        console += "Resuming from checkpoint\n";
        for (int s = 5; s <= 12; ++s)
            console += QByteArray("step=") + QByteArray::number(s) + " loss="
                + (s == 7 ? QByteArray("nan") : QByteArray::number(100 + s)) + "\n";
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
};

QTEST_GUILESS_MAIN(TestRunIngestResume)
#include "TestRunIngestResume.moc"
