// CompareLoader's column reader (ResultStore::openColumnReader(), for SQLite
// SqliteMetricColumns: raw libsqlite3) against
// ResultStore::metrics() on a real SQLite file: same keys, same points in the
// same order, bit for bit (NaN, +-inf, -0.0, ties on step kept in arrival
// order), same summaries; unknown runs skipped.
#include "ui/compare/CompareLoader.h"
#include "core/store/ResultStore.h"
#include "core/store/SqliteMetricColumns.h"

#include <QDir>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>

#include <unistd.h>

using namespace ty;

namespace {

bool sameBits(double a, double b)
{
    return std::memcmp(&a, &b, sizeof a) == 0;
}

} // namespace

class TestCompareLoader : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void columnsEqualStore();
    void openErrorsNameTheFile();
    void runSeriesRowOrderOrIndex();
    void readOnlyStoreIsReadThroughIt();
    void columnReaderThroughTheInterface();
};

void TestCompareLoader::columnsEqualStore()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto store = ResultStore::open(dir.filePath(QStringLiteral("r.db")));
    QVERIFY2(store, store ? "" : qPrintable(store.error().message));
    const double inf = std::numeric_limits<double>::infinity();
    QList<RunId> ids;
    for (int r = 0; r < 3; ++r) {
        RunRecord rec;
        rec.name = QStringLiteral("run%1").arg(r);
        auto id = (*store)->createRun(rec, {{QStringLiteral("lr"), QString::number(0.1 * (r + 1))}});
        QVERIFY(id);
        ids << *id;
        QList<MetricPoint> pts;
        for (int i = 0; i < 500; ++i) {
            double v = std::sin(i * 0.1) * (r + 1);
            if (i == 7)
                v = std::numeric_limits<double>::quiet_NaN();
            else if (i == 8)
                v = inf;
            else if (i == 9)
                v = -inf;
            else if (i == 10)
                v = -0.0;
            // Keys arrive interleaved, as a training script logs them.
            pts.append(MetricPoint{*id, QStringLiteral("loss"), i, std::nullopt, 1'700'000'000'000 + i * 37, v});
            pts.append(MetricPoint{*id, QStringLiteral("acc"), i, std::nullopt, 1'700'000'000'000 + i, 0.5 + i});
        }
        // acc resumed from a checkpoint at step 400: its points 400..499 are
        // superseded (not shown), 50 new ones follow (the last one -0.0).
        for (int i = 400; i < 450; ++i)
            pts.append(MetricPoint{
                    *id, QStringLiteral("acc"), i, std::nullopt, 1'700'000'100'000 + i, i == 449 ? -0.0 : -1.0 * i});
        (*store)->appendMetrics(pts);
    }
    QVERIFY((*store)->flush());

    CompareLoader viaColumns(store->get());
    CompareLoader viaStore(store->get());
    viaStore.setReadPath(CompareLoader::ReadPath::ResultStore);
    const QList<RunId> ask{ids[2], 999'999, ids[0], ids[1]};
    const CompareDataPtr a = viaColumns.load(ask);
    QVERIFY(viaColumns.lastLoadUsedColumns());
    const CompareDataPtr b = viaStore.load(ask);
    QVERIFY(!viaStore.lastLoadUsedColumns());
    QCOMPARE(a->runs.size(), 3); // the unknown run is skipped
    QCOMPARE(b->runs.size(), 3);
    QCOMPARE(a->keys(), (QStringList{QStringLiteral("acc"), QStringLiteral("loss")}));
    for (qsizetype r = 0; r < 3; ++r) {
        const CompareRun& x = a->runs[r];
        const CompareRun& y = b->runs[r];
        QCOMPARE(x.run.id, ask[r == 0 ? 0 : r + 1]);
        QCOMPARE(x.params, y.params);
        QCOMPARE(x.metrics.keys(), y.metrics.keys());
        for (auto it = x.metrics.cbegin(); it != x.metrics.cend(); ++it) {
            const MetricColumns& cx = it.value();
            const MetricColumns& cy = y.metrics.value(it.key());
            QCOMPARE(cx.size(), it.key() == QLatin1String("loss") ? 500 : 450);
            QCOMPARE(cx.size(), cy.size());
            for (qsizetype i = 0; i < cx.size(); ++i) {
                const std::size_t k = std::size_t(i);
                QCOMPARE((*cx.step)[k], (*cy.step)[k]);
                QCOMPARE((*cx.wallMs)[k], (*cy.wallMs)[k]);
                QVERIFY2(sameBits((*cx.value)[k], (*cy.value)[k]),
                        qPrintable(QStringLiteral("%1 point %2").arg(it.key()).arg(i)));
            }
            // No slack: the columns are sized exactly.
            QCOMPARE(cx.value->capacity(), cx.value->size());
            const MetricSummary sx = x.summary.value(it.key());
            const MetricSummary sy = y.summary.value(it.key());
            QCOMPARE(sx.count, sy.count);
            QCOMPARE(sx.bestStep, sy.bestStep);
            QCOMPARE(sx.best, sy.best);
            QCOMPARE(sx.lastStep, sy.lastStep);
        }
        // Spot checks against what was written: the special values of loss.
        const std::vector<double>& loss = *x.metrics.value(QStringLiteral("loss")).value;
        QVERIFY(std::isnan(loss[7]));
        QCOMPARE(loss[8], inf);
        QCOMPARE(loss[9], -inf);
        QVERIFY(loss[10] == 0.0 && std::signbit(loss[10]));
        // acc: the resumed segment replaced steps 400.. (superseded points left out).
        const MetricColumns acc = x.metrics.value(QStringLiteral("acc"));
        QVERIFY(std::is_sorted(acc.step->begin(), acc.step->end()));
        QCOMPARE((*acc.value)[399], 399.5);
        QCOMPARE((*acc.value)[400], -400.0);
        QCOMPARE(acc.step->back(), 449.0);
        QVERIFY(acc.value->back() == 0.0 && std::signbit(acc.value->back()));
    }
}

void TestCompareLoader::readOnlyStoreIsReadThroughIt()
{
    // A database on a read-only share: the column readers' plain read-only
    // connections cannot create its -shm there, so the store's own read-only
    // connections are used, without a warning per load.
    if (::geteuid() != 0)
        QSKIP("needs root to mount a tmpfs");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString share = dir.filePath(QStringLiteral("share"));
    QVERIFY(QDir().mkpath(share));
    if (QProcess::execute(QStringLiteral("mount"),
                {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"), QStringLiteral("size=16m"),
                        QStringLiteral("tmpfs"), share})
            != 0)
        QSKIP("cannot mount a tmpfs");
    const auto unmount = qScopeGuard([&share] {
        if (QProcess::execute(QStringLiteral("umount"), {share}) != 0)
            QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), share});
    });
    const QString db = share + QStringLiteral("/r.db");
    RunId id = 0;
    {
        auto writer = ResultStore::open(db);
        QVERIFY(writer);
        auto created = (*writer)->createRun(RunRecord{}, {});
        QVERIFY(created);
        id = *created;
        QList<MetricPoint> pts;
        for (int i = 0; i < 300; ++i)
            pts.append(MetricPoint{id, QStringLiteral("loss"), i, std::nullopt, 1'700'000'000'000 + i, 1.0 / (i + 1)});
        (*writer)->appendMetrics(pts);
        QVERIFY((*writer)->flush());
    }
    QCOMPARE(
            QProcess::execute(QStringLiteral("mount"), {QStringLiteral("-o"), QStringLiteral("remount,ro"), share}), 0);
    auto store = ResultStore::open(db, StoreAccess::ReadOnlyIfNeeded);
    QVERIFY2(store, store ? "" : qPrintable(store.error().message));
    QTest::failOnWarning(QRegularExpression(QStringLiteral(".*")));
    CompareLoader loader(store->get());
    const CompareDataPtr data = loader.load({id});
    QVERIFY(!loader.lastLoadUsedColumns());
    QCOMPARE(data->runs.size(), 1);
    const MetricColumns loss = data->runs.front().metrics.value(QStringLiteral("loss"));
    QCOMPARE(loss.size(), 300);
    QCOMPARE((*loss.value)[299], 1.0 / 300);
}

void TestCompareLoader::openErrorsNameTheFile()
{
    QTemporaryDir dir;
    const QString missing = dir.filePath(QStringLiteral("missing.db"));
    auto r = SqliteMetricColumns::open(missing);
    QVERIFY(!r);
    QVERIFY2(r.error().message.contains(missing), qPrintable(r.error().message));
    const QString notDb = dir.filePath(QStringLiteral("not.db"));
    QFile f(notDb);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not an SQLite database, just text that is long enough to fill a header page.....");
    f.close();
    r = SqliteMetricColumns::open(notDb);
    QVERIFY(!r);
    QVERIFY2(r.error().message.contains(notDb), qPrintable(r.error().message));
}

void TestCompareLoader::runSeriesRowOrderOrIndex()
{
    // SqliteMetricColumns::runSeries reads a run's rows in rowid order when
    // they lie together, else per key through the index; either way exactly
    // ResultStore::metrics().
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("r.db"));
    auto store = ResultStore::open(path);
    QVERIFY2(store, store ? "" : qPrintable(store.error().message));
    QList<RunId> ids;
    for (int r = 0; r < 3; ++r) {
        RunRecord rec;
        rec.name = QStringLiteral("run%1").arg(r);
        auto id = (*store)->createRun(rec, {});
        QVERIFY(id);
        ids << *id;
    }
    // Runs 0 and 1 log at the same time: their rows alternate (not
    // together). The writer keeps one transaction's points of a series
    // together, so they are committed ten steps at a time.
    QList<MetricPoint> pts;
    for (int i = 0; i < 300; ++i) {
        for (int r = 0; r < 2; ++r) {
            pts.append(MetricPoint{
                    ids[r], QStringLiteral("loss"), i, std::nullopt, 1'700'000'000'000 + i, 1.0 / (i + 1 + r)});
            pts.append(MetricPoint{
                    ids[r], QStringLiteral("acc"), i, std::nullopt, 1'700'000'000'000 + i, 0.001 * i * (r + 1)});
        }
        if (i % 10 == 9) {
            (*store)->appendMetrics(pts);
            QVERIFY((*store)->flush());
            pts.clear();
        }
    }
    // Run 2 alone; each step logged twice: the second supersedes the first
    // (schema 4), so 200 current points, read in rowid order.
    for (int i = 0; i < 400; ++i)
        pts.append(
                MetricPoint{ids[2], QStringLiteral("loss"), i / 2, std::nullopt, 1'700'000'000'000 + i, double(i % 7)});
    (*store)->appendMetrics(pts);
    QVERIFY((*store)->flush());

    auto cols = SqliteMetricColumns::open(path);
    QVERIFY2(cols, cols ? "" : qPrintable(cols.error().message));
    for (int r = 0; r < 3; ++r) {
        const auto keys = (*cols)->keys(ids[r]);
        QVERIFY(keys);
        QCOMPARE(keys->size(), r < 2 ? 2 : 1);
        const auto all = (*cols)->runSeries(*keys);
        QVERIFY2(all, all ? "" : qPrintable(all.error().message));
        QCOMPARE((*cols)->lastReadInRowOrder(), r == 2);
        for (qsizetype k = 0; k < keys->size(); ++k) {
            const QList<MetricPoint> want = (*store)->metrics(ids[r], keys->at(k).second);
            const MetricSeriesColumns& got = all->at(k);
            QCOMPARE(qsizetype(got.value.size()), want.size());
            QCOMPARE(want.size(), r < 2 ? 300 : 200);
            for (qsizetype i = 0; i < want.size(); ++i) {
                const std::size_t j = std::size_t(i);
                QCOMPARE(got.step[j], double(want[i].step));
                QCOMPARE(got.wallMs[j], double(want[i].wallTimeMs));
                QVERIFY(sameBits(got.value[j], want[i].value));
            }
        }
    }
}

void TestCompareLoader::columnReaderThroughTheInterface()
{
    // ResultStore::openColumnReader(): what CompareLoader reads through, both
    // plans exactly metrics() of every key, keys in metricKeys() order.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto store = ResultStore::open(dir.filePath(QStringLiteral("r.db")));
    QVERIFY2(store, store ? "" : qPrintable(store.error().message));
    auto id = (*store)->createRun(RunRecord{}, {});
    QVERIFY(id);
    QList<MetricPoint> pts;
    for (int i = 0; i < 120; ++i) {
        pts.append(MetricPoint{*id, QStringLiteral("val/loss"), i / 3, std::nullopt, 1'700'000'000'000 + i,
                i == 5 ? std::numeric_limits<double>::quiet_NaN() : 1.0 / (i + 1)});
        pts.append(MetricPoint{
                *id, QStringLiteral("acc"), i, std::nullopt, 1'700'000'000'000 + i, i == 9 ? -0.0 : 0.01 * i});
    }
    (*store)->appendMetrics(pts);
    QVERIFY((*store)->flush());

    auto reader = (*store)->openColumnReader();
    QVERIFY2(reader, reader ? "" : qPrintable(reader.error().message));
    QVERIFY(*reader);
    QVERIFY((*reader)->beginSnapshot());
    for (const auto plan : {MetricColumnReader::Plan::Fastest, MetricColumnReader::Plan::KeyByKey}) {
        const auto got = (*reader)->runMetrics(*id, plan);
        QVERIFY2(got, got ? "" : qPrintable(got.error().message));
        QStringList keys;
        for (const auto& [key, s] : *got)
            keys << key;
        QCOMPARE(keys, (*store)->metricKeys(*id));
        QCOMPARE(keys, (QStringList{QStringLiteral("acc"), QStringLiteral("val/loss")}));
        for (const auto& [key, s] : *got) {
            const QList<MetricPoint> want = (*store)->metrics(*id, key);
            QCOMPARE(qsizetype(s.value.size()), want.size());
            // val/loss logs each step three times: the last one of each is current.
            QCOMPARE(want.size(), key == QStringLiteral("acc") ? 120 : 40);
            for (qsizetype i = 0; i < want.size(); ++i) {
                const std::size_t j = std::size_t(i);
                QCOMPARE(s.step[j], double(want[i].step));
                QCOMPARE(s.wallMs[j], double(want[i].wallTimeMs));
                QVERIFY(sameBits(s.value[j], want[i].value));
            }
        }
    }
    const auto none = (*reader)->runMetrics(*id + 1000);
    QVERIFY(none);
    QVERIFY(none->isEmpty());
    (*reader)->endSnapshot();
}

QTEST_MAIN(TestCompareLoader)
#include "TestCompareLoader.moc"
