// The writer's packing of metric points into metric_blocks (schema 5,
// core/store/MetricBlock.h): which points become blocks and which stay rows,
// arrival ids unique across both, restarts cutting packed points, a second
// writer (process) continuing a series, and every point read back exactly.
#include "StoreTestUtil.h"

#include "core/store/MetricBlock.h"
#include "core/store/SqliteResultStore.h"

#include <QSet>
#include <QSignalSpy>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <bit>
#include <cmath>
#include <limits>

using namespace ty;
using ty::test::RawDb;

namespace {

constexpr int kBlock = kMetricBlockPoints;

struct BlockRow {
    qint64 keyId = 0;
    int source = 0;
    qint64 firstId = 0, lastId = 0;
    int count = 0, live = 0;
    qint64 firstStep = 0, lastStep = 0;
    QList<MetricBlockPoint> points;
};

QList<BlockRow> blocks(RawDb& raw)
{
    QList<BlockRow> out;
    QSqlQuery q(raw.db());
    if (!q.exec(QStringLiteral("SELECT key_id, source, first_id, last_id, count, live, first_step, last_step, points"
                               " FROM metric_blocks ORDER BY first_id"))) {
        qWarning("%s", qPrintable(q.lastError().text()));
        return out;
    }
    while (q.next()) {
        BlockRow b;
        b.keyId = q.value(0).toLongLong();
        b.source = q.value(1).toInt();
        b.firstId = q.value(2).toLongLong();
        b.lastId = q.value(3).toLongLong();
        b.count = q.value(4).toInt();
        b.live = q.value(5).toInt();
        b.firstStep = q.value(6).toLongLong();
        b.lastStep = q.value(7).toLongLong();
        const QByteArray blob = q.value(8).toByteArray();
        const auto view = MetricBlockView::parse(blob.constData(), std::size_t(blob.size()));
        if (!view) {
            qWarning("block %lld is malformed", static_cast<long long>(b.firstId));
            continue;
        }
        for (int i = 0; i < view->count(); ++i)
            b.points.append(view->point(i));
        out.append(b);
    }
    return out;
}

qint64 scalar(RawDb& raw, const QString& sql)
{
    return raw.scalar(sql).toLongLong();
}

// Points announced by ResultStore::metricsAppended so far.
int signalled(const QSignalSpy& spy)
{
    int n = 0;
    for (const auto& args : spy)
        n += args.at(1).toInt();
    return n;
}

bool sameBits(double a, double b)
{
    return std::bit_cast<quint64>(a) == std::bit_cast<quint64>(b);
}

// A value that exercises the block's raw doubles: NaN, +-inf, -0.0 among ordinary ones.
double valueAt(qint64 step)
{
    switch (step % 97) {
    case 13: return std::numeric_limits<double>::quiet_NaN();
    case 29: return std::numeric_limits<double>::infinity();
    case 31: return -std::numeric_limits<double>::infinity();
    case 47: return -0.0;
    default: return 1.0 / double(step + 1) + 1e-12 * double(step % 7);
    }
}

MetricPoint point(RunId run, const QString& key, qint64 step, MetricSource source = MetricSource::Console)
{
    MetricPoint p;
    p.run = run;
    p.key = key;
    p.step = step;
    p.wallTimeMs = 1'700'000'000'000 + step * 10;
    p.value = valueAt(step);
    if (step % 5 == 0)
        p.epoch = double(step) / 100.0;
    p.source = source;
    return p;
}

QList<MetricPoint> series(
        RunId run, const QString& key, qint64 from, qint64 to, MetricSource source = MetricSource::Console)
{
    QList<MetricPoint> out;
    for (qint64 s = from; s < to; ++s)
        out.append(point(run, key, s, source));
    return out;
}

// Every point read back equals the expected one, field by field (values bit for bit).
bool samePoints(const QList<MetricPoint>& got, const QList<MetricPoint>& want, QString* why)
{
    if (got.size() != want.size()) {
        *why = QStringLiteral("%1 points, expected %2").arg(got.size()).arg(want.size());
        return false;
    }
    for (qsizetype i = 0; i < got.size(); ++i) {
        const MetricPoint& g = got[i];
        const MetricPoint& w = want[i];
        if (g.key != w.key || g.step != w.step || g.wallTimeMs != w.wallTimeMs || !sameBits(g.value, w.value)
                || g.epoch != w.epoch || g.source != w.source || g.superseded != w.superseded) {
            *why = QStringLiteral(
                    "point %1: got step %2 value %3 superseded %4, expected step %5 value %6 superseded %7")
                           .arg(i)
                           .arg(g.step)
                           .arg(g.value)
                           .arg(g.superseded)
                           .arg(w.step)
                           .arg(w.value)
                           .arg(w.superseded);
            return false;
        }
    }
    return true;
}

} // namespace

class TestMetricPacking : public QObject {
    Q_OBJECT

private slots:
    void init();
    void bulkWriteGoesIntoBlocks();
    void slowSeriesIsPackedOnceItFillsABlock();
    void idsAreUniqueAcrossRowsAndBlocks();
    void tiesKeepArrivalOrderWithinABatch();
    void restartCutsPackedPoints();
    void sameStepCorrectionInABlock();
    void secondWriterContinuesTheSeries();
    void deletingARunDeletesItsBlocks();
    void consoleOffsetsDoNotSplitABatchsSeries();

private:
    QString m_path;
    std::unique_ptr<QTemporaryDir> m_tmp;
};

void TestMetricPacking::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_path = m_tmp->filePath(QStringLiteral("results.db"));
}

void TestMetricPacking::bulkWriteGoesIntoBlocks()
{
    auto store = SqliteResultStore::open(m_path);
    QVERIFY2(store, store ? "" : qPrintable(store.error().message));
    auto run = (*store)->createRun(RunRecord{}, {});
    QVERIFY(run);
    QSignalSpy appended((*store).get(), &ResultStore::metricsAppended);
    const int n = 2 * kBlock + 1500; // two full blocks and a block of 1,500
    const QList<MetricPoint> points = series(*run, QStringLiteral("loss"), 0, n);
    (*store)->appendMetrics(points);
    QVERIFY((*store)->flush());

    RawDb raw(m_path, true);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics")), 0);
    const QList<BlockRow> b = blocks(raw);
    QCOMPARE(b.size(), 3);
    QCOMPARE(b[0].count, kBlock);
    QCOMPARE(b[1].count, kBlock);
    QCOMPARE(b[2].count, 1500);
    qint64 step = 0;
    for (const BlockRow& r : b) {
        QCOMPARE(r.live, r.count);
        QCOMPARE(r.points.size(), r.count);
        QCOMPARE(r.firstStep, r.points.front().step);
        QCOMPARE(r.lastStep, r.points.back().step);
        QCOMPARE(r.firstId, r.points.front().id);
        QCOMPARE(r.lastId, r.points.back().id);
        for (const MetricBlockPoint& p : r.points) {
            const MetricPoint& want = points[step];
            QCOMPARE(p.step, want.step);
            QCOMPARE(p.wallMs, want.wallTimeMs);
            QVERIFY2(sameBits(p.value, want.value), qPrintable(QStringLiteral("step %1").arg(step)));
            QCOMPARE(p.epoch, want.epoch);
            ++step;
        }
    }
    QCOMPARE(step, qint64(n));
    // One signal per committed batch (queued to this thread); together every point once.
    QTRY_COMPARE(signalled(appended), n);
    QString why;
    QVERIFY2(samePoints((*store)->metrics(*run, QStringLiteral("loss")), points, &why), qPrintable(why));
}

void TestMetricPacking::slowSeriesIsPackedOnceItFillsABlock()
{
    // A live run: a few points per write. Rows until the series' rows make a
    // full block, which then replaces them.
    auto store = SqliteResultStore::open(m_path);
    QVERIFY(store);
    auto run = (*store)->createRun(RunRecord{}, {});
    QVERIFY(run);
    QSignalSpy appended((*store).get(), &ResultStore::metricsAppended);
    const QList<MetricPoint> points = series(*run, QStringLiteral("acc"), 0, kBlock + 300);
    RawDb raw(m_path, true);
    for (qsizetype at = 0; at < points.size(); at += 50) {
        // One transaction each (many writes in one would be a bulk write).
        (*store)->appendMetrics(points.mid(at, 50));
        QVERIFY((*store)->flush());
        if (at == kBlock - 100) {
            QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metric_blocks")), 0);
            QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics")), qint64(kBlock - 50));
        }
    }
    QVERIFY((*store)->flush());
    const QList<BlockRow> b = blocks(raw);
    QCOMPARE(b.size(), 1);
    QCOMPARE(b[0].count, kBlock);
    QCOMPARE(b[0].firstStep, 0);
    QCOMPARE(b[0].lastStep, qint64(kBlock - 1));
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics")), 300);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT min(step) FROM metrics")), qint64(kBlock));
    QTRY_COMPARE(signalled(appended), int(points.size()));
    QString why;
    QVERIFY2(samePoints((*store)->metrics(*run, QStringLiteral("acc")), points, &why), qPrintable(why));
}

void TestMetricPacking::idsAreUniqueAcrossRowsAndBlocks()
{
    // Two runs, two keys, both sources, interleaved in one write, then a few
    // more rows: every point has its own arrival id, and within a series the
    // ids follow arrival.
    auto store = SqliteResultStore::open(m_path);
    QVERIFY(store);
    auto a = (*store)->createRun(RunRecord{}, {});
    auto b = (*store)->createRun(RunRecord{}, {});
    QVERIFY(a && b);
    QList<MetricPoint> mixed;
    for (qint64 s = 0; s < 3000; ++s) {
        mixed.append(point(*a, QStringLiteral("loss"), s));
        mixed.append(point(*a, QStringLiteral("loss"), s, MetricSource::File));
        mixed.append(point(*b, QStringLiteral("loss"), s));
        if (s % 10 == 0)
            mixed.append(point(*b, QStringLiteral("lr"), s / 10)); // 300: rows
    }
    (*store)->appendMetrics(mixed);
    QVERIFY((*store)->flush());
    (*store)->appendMetrics(series(*a, QStringLiteral("loss"), 3000, 3010));
    QVERIFY((*store)->flush());

    RawDb raw(m_path, true);
    QSet<qint64> ids;
    qint64 total = 0;
    for (const BlockRow& r : blocks(raw)) {
        qint64 prevId = 0, prevStep = -1;
        for (const MetricBlockPoint& p : r.points) {
            ids.insert(p.id);
            QVERIFY(p.id > prevId);
            QVERIFY(p.step > prevStep);
            prevId = p.id;
            prevStep = p.step;
            ++total;
        }
    }
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metric_blocks")), 3); // a console, a file, b console
    for (const QString& id : raw.rows(QStringLiteral("SELECT id FROM metrics"))) {
        ids.insert(id.toLongLong());
        ++total;
    }
    QCOMPARE(total, qint64(mixed.size() + 10));
    QCOMPARE(qint64(ids.size()), total);
    // Rows written after the blocks have larger ids than every packed point.
    QVERIFY(scalar(raw,
                    QStringLiteral("SELECT min(m.id) FROM metrics m JOIN metric_keys k ON k.id = m.key_id"
                                   " WHERE k.key = 'loss'"))
            > scalar(raw, QStringLiteral("SELECT max(last_id) FROM metric_blocks")));

    // Both sources of a's loss, read back in (step, arrival) order.
    QList<MetricPoint> want;
    for (qint64 s = 0; s < 3000; ++s) {
        want.append(point(*a, QStringLiteral("loss"), s));
        want.append(point(*a, QStringLiteral("loss"), s, MetricSource::File));
    }
    want.append(series(*a, QStringLiteral("loss"), 3000, 3010));
    QString why;
    QVERIFY2(samePoints((*store)->metrics(*a, QStringLiteral("loss")), want, &why), qPrintable(why));
}

void TestMetricPacking::tiesKeepArrivalOrderWithinABatch()
{
    // The console and a metrics file log the same key at the same steps, in
    // one write, sometimes one first, sometimes the other: read back in
    // arrival order at each step, whether packed (2,000 each) or rows (10 each).
    for (const int n : {2000, 10}) {
        QTemporaryDir dir;
        auto store = SqliteResultStore::open(dir.filePath(QStringLiteral("ties.db")));
        QVERIFY(store);
        auto run = (*store)->createRun(RunRecord{}, {});
        QVERIFY(run);
        QList<MetricPoint> points;
        for (qint64 s = 0; s < n; ++s) {
            const MetricPoint console = point(*run, QStringLiteral("val_loss"), s);
            const MetricPoint file = point(*run, QStringLiteral("val_loss"), s, MetricSource::File);
            if (s % 3 == 0)
                points << file << console;
            else
                points << console << file;
        }
        (*store)->appendMetrics(points);
        QVERIFY((*store)->flush());
        RawDb raw(dir.filePath(QStringLiteral("ties.db")), true);
        QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metric_blocks")), n >= 1024 ? 2 : 0);
        QString why;
        QVERIFY2(samePoints((*store)->metrics(*run, QStringLiteral("val_loss")), points, &why), qPrintable(why));
        // The latest: the highest step's later arrival.
        QCOMPARE((*store)->latestMetrics(*run).value(QStringLiteral("val_loss")).source, points.last().source);
    }
}

void TestMetricPacking::restartCutsPackedPoints()
{
    // A run resumed from a checkpoint at step 3000 after logging 0..4999:
    // one full block (0..4095) and 904 rows (4096..4999).
    auto store = SqliteResultStore::open(m_path);
    QVERIFY(store);
    auto run = (*store)->createRun(RunRecord{}, {});
    QVERIFY(run);
    const QList<MetricPoint> first = series(*run, QStringLiteral("loss"), 0, 5000);
    (*store)->appendMetrics(first);
    QVERIFY((*store)->flush());
    RawDb raw(m_path, true);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metric_blocks")), 1);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics")), 904);

    QList<MetricPoint> resumed = series(*run, QStringLiteral("loss"), 3000, 3100);
    for (MetricPoint& p : resumed)
        p.value += 100.0; // distinguishable from the first segment
    (*store)->appendMetrics(resumed);
    QVERIFY((*store)->flush());

    QCOMPARE(scalar(raw, QStringLiteral("SELECT live FROM metric_blocks")), 3000);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics WHERE superseded = 1")), 904);
    const auto restarts = (*store)->metricRestarts(*run, QStringLiteral("loss"));
    QCOMPARE(restarts.size(), 1);
    QCOMPARE(restarts[0].step, 3000);
    QCOMPARE(restarts[0].superseded, 2000); // 1,096 packed + 904 rows

    QList<MetricPoint> want = first.mid(0, 3000);
    want.append(resumed);
    QString why;
    QVERIFY2(samePoints((*store)->metrics(*run, QStringLiteral("loss")), want, &why), qPrintable(why));
    const auto latest = (*store)->latestMetrics(*run);
    QCOMPARE(latest.value(QStringLiteral("loss")).step, 3099);

    // allMetrics: the superseded ones too, each flagged, in (step, arrival) order.
    QList<MetricPoint> all;
    for (qint64 s = 0; s < 5000; ++s) {
        if (s >= 3000 && s < 3100)
            all.append(resumed[s - 3000]);
        MetricPoint p = first[s];
        p.superseded = s >= 3000;
        if (s >= 3000 && s < 3100)
            all.insert(all.size() - 1, p); // older arrival first
        else
            all.append(p);
    }
    QVERIFY2(samePoints((*store)->allMetrics(*run, QStringLiteral("loss")), all, &why), qPrintable(why));

    // A second restart further back cuts the same block again.
    (*store)->appendMetrics(series(*run, QStringLiteral("loss"), 10, 11));
    QVERIFY((*store)->flush());
    QCOMPARE(scalar(raw, QStringLiteral("SELECT live FROM metric_blocks")), 10);
    QCOMPARE((*store)->metricRestarts(*run, QStringLiteral("loss")).last().superseded, 2990 + 100);
    QCOMPARE((*store)->metrics(*run, QStringLiteral("loss")).size(), 11);
}

void TestMetricPacking::sameStepCorrectionInABlock()
{
    auto store = SqliteResultStore::open(m_path);
    QVERIFY(store);
    auto run = (*store)->createRun(RunRecord{}, {});
    QVERIFY(run);
    (*store)->appendMetrics(series(*run, QStringLiteral("epoch"), 0, kBlock));
    QVERIFY((*store)->flush());
    MetricPoint again = point(*run, QStringLiteral("epoch"), kBlock - 1);
    again.value = 42.0;
    (*store)->appendMetrics({again});
    QVERIFY((*store)->flush());
    RawDb raw(m_path, true);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT live FROM metric_blocks")), qint64(kBlock - 1));
    QVERIFY((*store)->metricRestarts(*run).isEmpty()); // a correction, not a restart
    const auto points = (*store)->metrics(*run, QStringLiteral("epoch"));
    QCOMPARE(points.size(), kBlock);
    QCOMPARE(points.last().value, 42.0);
}

void TestMetricPacking::secondWriterContinuesTheSeries()
{
    // Rows left by one store (process) are packed by the next one, and the
    // next one's ids never reuse a packed point's id.
    QList<MetricPoint> want;
    RunId run = 0;
    {
        auto store = SqliteResultStore::open(m_path);
        QVERIFY(store);
        auto id = (*store)->createRun(RunRecord{}, {});
        QVERIFY(id);
        run = *id;
        want = series(run, QStringLiteral("loss"), 0, 3000); // a block (bulk)
        (*store)->appendMetrics(want);
        QVERIFY((*store)->flush());
        const auto rows = series(run, QStringLiteral("loss"), 3000, 3500);
        for (qsizetype at = 0; at < rows.size(); at += 100) { // rows
            (*store)->appendMetrics(rows.mid(at, 100));
            QVERIFY((*store)->flush());
        }
        want.append(rows);
        QVERIFY((*store)->flush());
    }
    RawDb raw(m_path, true);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics")), 500);
    {
        auto store = SqliteResultStore::open(m_path);
        QVERIFY(store);
        const auto more = series(run, QStringLiteral("loss"), 3500, 3500 + kBlock);
        for (qsizetype at = 0; at < more.size(); at += 512)
            (*store)->appendMetrics(more.mid(at, 512));
        want.append(more);
        QVERIFY((*store)->flush());
        QString why;
        QVERIFY2(samePoints((*store)->metrics(run, QStringLiteral("loss")), want, &why), qPrintable(why));
    }
    QSet<qint64> ids;
    qint64 total = 0;
    for (const BlockRow& b : blocks(raw))
        for (const MetricBlockPoint& p : b.points) {
            ids.insert(p.id);
            ++total;
        }
    for (const QString& id : raw.rows(QStringLiteral("SELECT id FROM metrics"))) {
        ids.insert(id.toLongLong());
        ++total;
    }
    QCOMPARE(total, qint64(want.size()));
    QCOMPARE(qint64(ids.size()), total);
    QVERIFY(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics")) < kBlock);
}

void TestMetricPacking::deletingARunDeletesItsBlocks()
{
    auto store = SqliteResultStore::open(m_path);
    QVERIFY(store);
    auto gone = (*store)->createRun(RunRecord{}, {});
    auto kept = (*store)->createRun(RunRecord{}, {});
    QVERIFY(gone && kept);
    (*store)->appendMetrics(series(*gone, QStringLiteral("loss"), 0, 5000));
    (*store)->appendMetrics(series(*kept, QStringLiteral("loss"), 0, 2000));
    QVERIFY((*store)->flush());
    (*store)->deleteRun(*gone);
    QVERIFY((*store)->flush());
    RawDb raw(m_path, true);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metric_blocks")), 1);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics")), 0);
    QVERIFY((*store)->metrics(*gone).isEmpty());
    QCOMPARE((*store)->metrics(*kept).size(), 2000);
}

QTEST_GUILESS_MAIN(TestMetricPacking)
#include "TestMetricPacking.moc"

void TestMetricPacking::consoleOffsetsDoNotSplitABatchsSeries()
{
    // A run's ingestion queues a console offset after every chunk's points.
    // In one batch (a long coalescing wait, cut by flush()) the series' points
    // are still written together: one block, no rows; the offset is the last.
    SqliteStoreOptions options;
    options.coalesceMs = 10000;
    auto store = SqliteResultStore::open(m_path, options);
    QVERIFY(store);
    auto run = (*store)->createRun(RunRecord{}, {});
    QVERIFY(run);
    QVERIFY((*store)->flush());
    const QList<MetricPoint> points = series(*run, QStringLiteral("loss"), 0, 2000);
    for (qsizetype at = 0; at < points.size(); at += 50) {
        (*store)->appendMetrics(points.mid(at, 50));
        (*store)->setConsoleOffset(*run, (at + 50) * 100);
    }
    QVERIFY((*store)->flush());
    RawDb raw(m_path, true);
    QCOMPARE(scalar(raw, QStringLiteral("SELECT count(*) FROM metrics")), 0);
    const QList<BlockRow> b = blocks(raw);
    QCOMPARE(b.size(), 1);
    QCOMPARE(b[0].count, 2000);
    QCOMPARE(b[0].live, 2000);
    QCOMPARE((*store)->run(*run)->consoleOffset, 200000);
    QString why;
    QVERIFY2(samePoints((*store)->metrics(*run, QStringLiteral("loss")), points, &why), qPrintable(why));
}
