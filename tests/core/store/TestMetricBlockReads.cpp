// The readers over rows and packed blocks (schema 5): SqliteResultStore's
// metrics() / allMetrics() / latestMetrics() and SqliteMetricColumns'
// series() / runSeries() return a key's points from `metrics` rows and
// `metric_blocks` rows (core/store/MetricBlock.h) exactly as if every point
// were a row: ordered by (step, arrival id), live/superseded as recorded,
// values and epochs bit for bit. The blocks are written by hand here (not by
// the writer) so every case is laid out exactly: ties on step between the
// two sources of a key with the block point first and with the row first, a
// block with a superseded suffix, a key with blocks only, epochs present and
// absent, NaN/-0.0/inf; then a malformed BLOB and a schema-4 file.
#include "StoreTestUtil.h"

#include "core/store/MetricBlock.h"
#include "core/store/SqliteMetricColumns.h"
#include "core/store/SqliteResultStore.h"

#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

using namespace ty;
using ty::test::RawDb;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr qint64 kWall0 = 1'700'000'000'000LL;

bool sameBits(double a, double b)
{
    return std::bit_cast<quint64>(a) == std::bit_cast<quint64>(b);
}

bool sameEpoch(const std::optional<double>& a, const std::optional<double>& b)
{
    return a.has_value() == b.has_value() && (!a || sameBits(*a, *b));
}

// One point of the layout, in arrival order: its id is its index + 1.
// block 0: a row appended through the store; otherwise the number of the
// hand-written block it is packed in (its id is reserved by a placeholder row
// of another run, deleted before the blocks go in).
struct Planned {
    QString key;
    MetricSource source;
    qint64 step;
    double value;
    std::optional<double> epoch;
    int block;
    bool superseded; // expected: by the writer (rows) or beyond the block's live
    qint64 id = 0;
    qint64 wall = 0;
};

struct BlockSpec {
    QString key;
    MetricSource source;
    int live;
    std::vector<qint64> ids;
};

QString describe(const MetricPoint& p)
{
    return QStringLiteral("%1/%2@%3=%4 epoch %5 wall %6%7")
            .arg(p.key)
            .arg(int(p.source))
            .arg(p.step)
            .arg(p.value)
            .arg(p.epoch ? QString::number(*p.epoch) : QStringLiteral("-"))
            .arg(p.wallTimeMs)
            .arg(p.superseded ? QStringLiteral(" (superseded)") : QString());
}

bool samePoint(const MetricPoint& a, const MetricPoint& b)
{
    return a.run == b.run && a.key == b.key && a.step == b.step && sameEpoch(a.epoch, b.epoch)
            && a.wallTimeMs == b.wallTimeMs && sameBits(a.value, b.value) && a.source == b.source
            && a.superseded == b.superseded;
}

// Compares every field, naming the first difference.
bool samePoints(const QList<MetricPoint>& got, const QList<MetricPoint>& want, QString* why)
{
    for (qsizetype i = 0; i < std::max(got.size(), want.size()); ++i) {
        const QString g = i < got.size() ? describe(got[i]) : QStringLiteral("(none)");
        const QString w = i < want.size() ? describe(want[i]) : QStringLiteral("(none)");
        if (i >= got.size() || i >= want.size() || !samePoint(got[i], want[i])) {
            *why = QStringLiteral("point %1: got %2, want %3 (%4 vs %5 points)")
                           .arg(i)
                           .arg(g, w)
                           .arg(got.size())
                           .arg(want.size());
            return false;
        }
    }
    return true;
}

bool sameColumns(const MetricSeriesColumns& got, const QList<MetricPoint>& want, QString* why)
{
    if (got.step.size() != std::size_t(want.size()) || got.wallMs.size() != got.step.size()
            || got.value.size() != got.step.size()) {
        *why = QStringLiteral("%1/%2/%3 points, want %4")
                       .arg(got.step.size())
                       .arg(got.wallMs.size())
                       .arg(got.value.size())
                       .arg(want.size());
        return false;
    }
    for (qsizetype i = 0; i < want.size(); ++i) {
        const std::size_t j = std::size_t(i);
        if (got.step[j] != double(want[i].step) || got.wallMs[j] != double(want[i].wallTimeMs)
                || !sameBits(got.value[j], want[i].value)) {
            *why = QStringLiteral("point %1: got step %2 wall %3 value %4, want %5")
                           .arg(i)
                           .arg(got.step[j])
                           .arg(got.wallMs[j])
                           .arg(got.value[j])
                           .arg(describe(want[i]));
            return false;
        }
    }
    return true;
}

} // namespace

class TestMetricBlockReads final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void rowsAndBlocksReadAsOneSeries();
    void malformedBlock();
    void schema4FileWithoutBlocks();
    void packedReadsLikeRowsOnly();
    void blocksOutOfStepOrderStillSorted();

private:
    // Writes `plan` (ids assigned here) into a new database: rows through
    // the store, blocks by hand. Returns the run, or 0 after a QTest failure.
    RunId writeLayout(std::vector<Planned>& plan, const std::map<int, int>& live);
    // metric_blocks rows by hand through `raw` (ids reserved by placeholder rows).
    bool insertBlock(RawDb& raw, RunId run, const BlockSpec& spec, const std::vector<Planned>& plan);

    QTemporaryDir m_dir;
    QString m_path;
    std::unique_ptr<SqliteResultStore> m_store;
};

void TestMetricBlockReads::init()
{
    QVERIFY(m_dir.isValid());
    static int serial = 0;
    m_path = m_dir.filePath(QStringLiteral("blocks-%1.sqlite").arg(++serial));
    m_store.reset();
}

bool TestMetricBlockReads::insertBlock(RawDb& raw, RunId run, const BlockSpec& spec, const std::vector<Planned>& plan)
{
    std::vector<MetricBlockPoint> pts;
    for (qint64 id : spec.ids) {
        const Planned& p = plan[std::size_t(id - 1)];
        pts.push_back({p.id, p.step, p.wall, p.value, p.epoch});
    }
    const QByteArray blob = encodeMetricBlock(pts.data(), int(pts.size()));
    QSqlQuery key(raw.db());
    key.prepare(QStringLiteral("INSERT OR IGNORE INTO metric_keys (run_id, key) VALUES (?, ?)"));
    key.addBindValue(run);
    key.addBindValue(spec.key);
    if (!key.exec()) {
        qWarning("%s", qPrintable(key.lastError().text()));
        return false;
    }
    QSqlQuery q(raw.db());
    q.prepare(QStringLiteral("INSERT INTO metric_blocks (key_id, source, first_id, last_id, count, live, first_step,"
                             " last_step, points) VALUES ((SELECT id FROM metric_keys WHERE run_id = ? AND key = ?),"
                             " ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(run);
    q.addBindValue(spec.key);
    q.addBindValue(int(spec.source));
    q.addBindValue(pts.front().id);
    q.addBindValue(pts.back().id);
    q.addBindValue(qint64(pts.size()));
    q.addBindValue(spec.live);
    q.addBindValue(pts.front().step);
    q.addBindValue(pts.back().step);
    q.addBindValue(blob);
    if (!q.exec()) {
        qWarning("%s", qPrintable(q.lastError().text()));
        return false;
    }
    return true;
}

RunId TestMetricBlockReads::writeLayout(std::vector<Planned>& plan, const std::map<int, int>& live)
{
    auto opened = SqliteResultStore::open(m_path);
    if (!opened) {
        qWarning("%s", qPrintable(opened.error().message));
        return 0;
    }
    m_store = std::move(*opened);
    const auto run = m_store->createRun(RunRecord{}, {});
    const auto other = m_store->createRun(RunRecord{}, {});
    if (!run || !other)
        return 0;
    // One append (and commit) per stretch of one series: the writer gives
    // ids in arrival order within a series, not across the series of a batch.
    QList<MetricPoint> append;
    auto commit = [&] {
        m_store->appendMetrics(append);
        append.clear();
        return m_store->flush().has_value();
    };
    std::map<int, BlockSpec> blocks;
    for (std::size_t i = 0; i < plan.size(); ++i) {
        Planned& p = plan[i];
        p.id = qint64(i) + 1;
        p.wall = kWall0 + 1000 * p.id;
        MetricPoint m;
        m.wallTimeMs = p.wall;
        if (p.block == 0) {
            m.run = *run;
            m.key = p.key;
            m.step = p.step;
            m.value = p.value;
            m.epoch = p.epoch;
            m.source = p.source;
        } else {
            // Placeholder: keeps this id for the block point.
            m.run = *other;
            m.key = QStringLiteral("placeholder");
            m.step = p.id;
            m.value = 0.0;
            BlockSpec& b = blocks[p.block];
            b.key = p.key;
            b.source = p.source;
            b.live = live.at(p.block);
            b.ids.push_back(p.id);
        }
        if (!append.isEmpty()
                && (append.back().run != m.run || append.back().key != m.key || append.back().source != m.source)
                && !commit())
            return 0;
        append.append(m);
    }
    if (!commit())
        return 0;

    RawDb raw(m_path);
    if (!raw.isOpen())
        return 0;
    // The store gave the rows the ids the layout expects (1, 2, ... in order).
    QStringList wantRows, gotRows;
    for (const Planned& p : plan)
        if (p.block == 0)
            wantRows << QStringLiteral("%1|%2|%3").arg(p.id).arg(p.step).arg(int(p.source));
    gotRows = raw.rows(QStringLiteral("SELECT id, step, source FROM metrics WHERE key_id IN"
                                      " (SELECT id FROM metric_keys WHERE run_id = %1) ORDER BY id")
                               .arg(*run));
    if (gotRows != wantRows) {
        qWarning("rows got ids %s, want %s", qPrintable(gotRows.join(u' ')), qPrintable(wantRows.join(u' ')));
        return 0;
    }
    if (!raw.exec(QStringLiteral("DELETE FROM metrics WHERE key_id IN (SELECT id FROM metric_keys WHERE run_id = %1)")
                          .arg(*other))) {
        qWarning("%s", qPrintable(raw.error()));
        return 0;
    }
    for (const auto& [n, spec] : blocks)
        if (!insertBlock(raw, *run, spec, plan))
            return 0;
    return *run;
}

void TestMetricBlockReads::rowsAndBlocksReadAsOneSeries()
{
    using enum MetricSource;
    const QString loss = QStringLiteral("loss"), lr = QStringLiteral("lr"), val = QStringLiteral("val"),
                  acc = QStringLiteral("acc");
    // Arrival order (id = position + 1).
    std::vector<Planned> plan = {
            {loss, File, 10, 1.10, 0.1, 0, false},    // 1: ties with block id 2 at step 10: row first
            {loss, Console, 10, kNaN, 0.5, 1, false}, // 2  block 1
            {loss, File, 20, 1.20, {}, 0, false},     // 3
            {loss, Console, 30, -0.0, {}, 1, false},  // 4  block 1; ties with row id 5: block first
            {loss, File, 30, 1.30, 0.3, 0, false},    // 5
            {loss, Console, 45, kInf, 1.5, 1, false}, // 6  block 1
            {loss, File, 40, 1.40, {}, 0, true},      // 7: superseded by id 13 (the writer's restart)
            {loss, Console, 50, 5.0, {}, 2, false},   // 8  block 2 (live 2)
            {loss, Console, 60, -kInf, {}, 2, false}, // 9  block 2
            {loss, Console, 70, 7.0, {}, 2, true},    // 10 block 2, beyond live
            {loss, Console, 80, 8.0, {}, 2, true},    // 11 block 2, beyond live
            {loss, Console, 70, 70.5, 3.5, 0, false}, // 12: the restart's point; ties with superseded id 10
            {loss, File, 35, 1.35, {}, 0, false},     // 13
            {loss, Console, 75, 75.5, {}, 0, false},  // 14: the key's latest (a row)
            {acc, Console, 1, 0.1, {}, 0, false},     // 15
            {lr, Console, 0, 1e-3, 0.0, 3, false},    // 16 block 3: a key with blocks only
            {lr, File, 2, 2e-3, {}, 4, false},        // 17 block 4
            {lr, Console, 1, 1e-3, 0.25, 3, false},   // 18
            {lr, Console, 2, 3e-3, {}, 3, false},     // 19 ties with 17 (block vs block)
            {lr, File, 4, 4e-3, {}, 4, false},        // 20
            {lr, Console, 3, -0.0, 0.75, 3, false},   // 21
            {lr, Console, 4, kNaN, 1.0, 3, false},    // 22 ties with 20; the key's latest (a block)
            {val, Console, 100, 0.91, 1.0, 5, false}, // 23 block 5 (live 2)
            {val, Console, 200, 0.92, 2.0, 5, false}, // 24: the key's latest (block 5 at live - 1)
            {val, Console, 300, 0.93, 3.0, 5, true},  // 25
            {val, Console, 400, 0.94, 4.0, 5, true},  // 26
            {val, File, 150, 0.5, {}, 0, false},      // 27: a row below the block's live end
    };
    // acc: enough rows that the run's rows lie together (runSeries' rowid path).
    for (int s = 2; s <= 101; ++s)
        plan.push_back({acc, Console, s, s * 0.01, s % 2 ? std::optional<double>(s) : std::nullopt, 0, false});
    const RunId run = writeLayout(plan, {{1, 3}, {2, 2}, {3, 5}, {4, 2}, {5, 2}});
    QVERIFY(run != 0);

    // Expected: ORDER BY step, id over every point of a key; keys by name.
    auto expected = [&](const QString& key, bool withSuperseded) {
        std::vector<const Planned*> sel;
        for (const Planned& p : plan)
            if (p.key == key && (withSuperseded || !p.superseded))
                sel.push_back(&p);
        std::sort(sel.begin(), sel.end(), [](const Planned* a, const Planned* b) {
            return std::pair(a->step, a->id) < std::pair(b->step, b->id);
        });
        QList<MetricPoint> out;
        for (const Planned* p : sel) {
            MetricPoint m;
            m.run = run;
            m.key = key;
            m.step = p->step;
            m.epoch = p->epoch;
            m.wallTimeMs = p->wall;
            m.value = p->value;
            m.source = p->source;
            m.superseded = p->superseded;
            out.append(m);
        }
        return out;
    };
    auto ids = [&](const QList<MetricPoint>& pts) {
        QList<qint64> out;
        for (const MetricPoint& m : pts)
            out << (m.wallTimeMs - kWall0) / 1000;
        return out;
    };
    const QStringList keys{acc, loss, lr, val};
    // The rule above, spelled out for the interesting keys.
    QCOMPARE(ids(expected(loss, true)), (QList<qint64>{1, 2, 3, 4, 5, 13, 7, 6, 8, 9, 10, 12, 14, 11}));
    QCOMPARE(ids(expected(loss, false)), (QList<qint64>{1, 2, 3, 4, 5, 13, 6, 8, 9, 12, 14}));
    QCOMPARE(ids(expected(lr, false)), (QList<qint64>{16, 18, 17, 19, 21, 20, 22}));
    QCOMPARE(ids(expected(val, true)), (QList<qint64>{23, 27, 24, 25, 26}));

    QCOMPARE(m_store->metricKeys(run), keys);
    QString why;
    QList<MetricPoint> wantAll, wantCurrent;
    for (const QString& k : keys) {
        wantAll += expected(k, true);
        wantCurrent += expected(k, false);
        QVERIFY2(samePoints(m_store->allMetrics(run, k), expected(k, true), &why), qPrintable(k + u": " + why));
        QVERIFY2(samePoints(m_store->metrics(run, k), expected(k, false), &why), qPrintable(k + u": " + why));
    }
    QVERIFY2(samePoints(m_store->allMetrics(run), wantAll, &why), qPrintable(why));
    QVERIFY2(samePoints(m_store->metrics(run), wantCurrent, &why), qPrintable(why));

    const auto latest = m_store->latestMetrics(run);
    QCOMPARE(latest.keys(), keys);
    for (const QString& k : keys) {
        const MetricPoint want = expected(k, false).back();
        QVERIFY2(samePoint(latest.value(k), want),
                qPrintable(QStringLiteral("%1: got %2, want %3").arg(k, describe(latest.value(k)), describe(want))));
    }
    QCOMPARE(latest.value(lr).step, qint64(4)); // from block 3, not the file's block 4 (same step, earlier id)
    QVERIFY(std::isnan(latest.value(lr).value));
    QCOMPARE(latest.value(val).step, qint64(200)); // block 5's point live - 1
    QCOMPARE(latest.value(loss).step, qint64(75));

    // The column reader: series() through the index, runSeries() in rowid order.
    auto cols = SqliteMetricColumns::open(m_path);
    QVERIFY2(cols, cols ? "" : qPrintable(cols.error().message));
    QVERIFY((*cols)->beginSnapshot());
    const auto keyIds = (*cols)->keys(run);
    QVERIFY(keyIds);
    QCOMPARE(keyIds->size(), keys.size());
    for (qsizetype k = 0; k < keys.size(); ++k) {
        QCOMPARE(keyIds->at(k).second, keys[k]);
        for (qsizetype hint : {0, 1, 1000}) {
            const auto s = (*cols)->series(keyIds->at(k).first, hint);
            QVERIFY2(s, s ? "" : qPrintable(s.error().message));
            QVERIFY2(sameColumns(*s, expected(keys[k], false), &why), qPrintable(keys[k] + u": " + why));
        }
    }
    const auto all = (*cols)->runSeries(*keyIds);
    QVERIFY2(all, all ? "" : qPrintable(all.error().message));
    QVERIFY((*cols)->lastReadInRowOrder());
    QCOMPARE(all->size(), keys.size());
    for (qsizetype k = 0; k < keys.size(); ++k)
        QVERIFY2(sameColumns(all->at(k), expected(keys[k], false), &why), qPrintable(keys[k] + u": " + why));
    // runSeries through series() (loss's 7 rows spread over ids 1..14 do not
    // lie together), and in rowid order for val's single row.
    const auto some = (*cols)->runSeries({keyIds->at(1), keyIds->at(2)}); // loss, lr (blocks only)
    QVERIFY2(some, some ? "" : qPrintable(some.error().message));
    QVERIFY(!(*cols)->lastReadInRowOrder());
    QVERIFY2(sameColumns(some->at(0), expected(loss, false), &why), qPrintable(why));
    QVERIFY2(sameColumns(some->at(1), expected(lr, false), &why), qPrintable(why));
    const auto one = (*cols)->runSeries({keyIds->at(3)}); // val
    QVERIFY2(one, one ? "" : qPrintable(one.error().message));
    QVERIFY((*cols)->lastReadInRowOrder());
    QVERIFY2(sameColumns(one->at(0), expected(val, false), &why), qPrintable(why));
    (*cols)->endSnapshot();
}

// A BLOB that is not a version-1 block: the store leaves that block's points
// out with a warning naming the file, run, key and block; the column reader
// fails the series with an error naming them.
void TestMetricBlockReads::malformedBlock()
{
    using enum MetricSource;
    const QString key = QStringLiteral("bad/key");
    std::vector<Planned> plan = {
            {key, Console, 1, 1.0, {}, 1, false}, // 1 block 1 (good)
            {key, Console, 2, 2.0, {}, 1, false}, // 2
            {key, Console, 3, 3.0, {}, 2, false}, // 3 block 2 (damaged below)
            {key, Console, 4, 4.0, {}, 2, false}, // 4
            {key, File, 2, 5.0, {}, 0, false},    // 5 row (the other source; ties with id 2)
    };
    const RunId run = writeLayout(plan, {{1, 2}, {2, 2}});
    QVERIFY(run != 0);
    {
        RawDb raw(m_path);
        QVERIFY(raw.exec(QStringLiteral("UPDATE metric_blocks SET points = substr(points, 1, length(points) - 8)"
                                        " WHERE first_id = 3")));
    }
    const QRegularExpression warning(
            QStringLiteral("^%1: run %2: metric bad/key: block \\d+ is malformed \\(72 bytes, count 2, live 2, not a "
                           "version-1 metric block\\); its points are left out$")
                    .arg(QRegularExpression::escape(m_path))
                    .arg(run));
    QTest::ignoreMessage(QtWarningMsg, warning);
    const auto pts = m_store->metrics(run, key);
    QCOMPARE(pts.size(), 3);
    QCOMPARE(pts[0].value, 1.0);
    QCOMPARE(pts[1].value, 2.0);
    QCOMPARE(pts[2].value, 5.0);
    QTest::ignoreMessage(QtWarningMsg, warning);
    QCOMPARE(m_store->allMetrics(run, key).size(), 3);
    // Its blob is read (it could hold step 4, above the row's 2) and found damaged.
    QTest::ignoreMessage(QtWarningMsg, warning);
    const MetricPoint latest = m_store->latestMetrics(run).value(key);
    QCOMPARE(latest.value, 5.0);
    QCOMPARE(latest.source, MetricSource::File);

    // count/live that do not match the BLOB are malformed too.
    {
        RawDb raw(m_path);
        QVERIFY(raw.exec(QStringLiteral("UPDATE metric_blocks SET live = 3 WHERE first_id = 1")));
    }
    QTest::ignoreMessage(QtWarningMsg,
            QRegularExpression(QStringLiteral("metric bad/key: block \\d+ is malformed "
                                              "\\(80 bytes, count 2, live 3\\)")));
    QTest::ignoreMessage(QtWarningMsg, warning);
    QCOMPARE(m_store->metrics(run, key).size(), 1);

    auto cols = SqliteMetricColumns::open(m_path);
    QVERIFY(cols);
    const auto keyIds = (*cols)->keys(run);
    QVERIFY(keyIds && keyIds->size() == 1);
    const auto s = (*cols)->series(keyIds->at(0).first);
    QVERIFY(!s);
    const QString msg = s.error().message;
    QVERIFY2(msg.startsWith(m_path + QStringLiteral(": run %1: metric bad/key: metric block ").arg(run)),
            qPrintable(msg));
    QVERIFY2(msg.contains(QStringLiteral("is malformed")), qPrintable(msg));
    const auto all = (*cols)->runSeries(*keyIds);
    QVERIFY(!all);
    QVERIFY2(all.error().message.contains(QStringLiteral("run %1: metric bad/key: metric block").arg(run)),
            qPrintable(all.error().message));
}

// A file from before schema 5 (no metric_blocks table), opened read-only by
// the column reader: rows only, as before.
void TestMetricBlockReads::schema4FileWithoutBlocks()
{
    using enum MetricSource;
    const QString key = QStringLiteral("loss");
    std::vector<Planned> plan = {
            {key, Console, 3, 3.0, {}, 0, true}, // superseded by the restart at step 1
            {key, File, 1, -0.0, {}, 0, false},
            {key, Console, 1, kNaN, {}, 0, false},
            {key, Console, 2, kInf, {}, 0, false},
    };
    const RunId run = writeLayout(plan, {});
    QVERIFY(run != 0);
    m_store.reset();
    {
        RawDb raw(m_path);
        QVERIFY(raw.exec(QStringLiteral("DROP TABLE metric_blocks")));
        QVERIFY(raw.exec(QStringLiteral("UPDATE meta SET value = '4' WHERE key = 'schema_version'")));
    }
    auto cols = SqliteMetricColumns::open(m_path);
    QVERIFY2(cols, cols ? "" : qPrintable(cols.error().message));
    const auto keyIds = (*cols)->keys(run);
    QVERIFY(keyIds && keyIds->size() == 1);
    const auto s = (*cols)->series(keyIds->at(0).first);
    QVERIFY2(s, s ? "" : qPrintable(s.error().message));
    QCOMPARE(s->step, (std::vector<double>{1, 1, 2}));
    QVERIFY(sameBits(s->value[0], -0.0)); // the file's, id 2
    QVERIFY(std::isnan(s->value[1]));     // the console's, id 3
    QCOMPARE(s->value[2], kInf);
    const auto all = (*cols)->runSeries(*keyIds);
    QVERIFY2(all, all ? "" : qPrintable(all.error().message));
    QCOMPARE(all->at(0).step, s->step);
    QCOMPARE(all->at(0).wallMs, s->wallMs);
}

// The same appends into a database the writer packs (SqliteStoreOptions::
// packBlocks) and one with rows only: every reader returns the same points
// from both. Bulk appends (blocks straight away), slow series packed once
// they hold a block of rows, restarts cutting packed points, same-step
// corrections, ties on step between the two sources of a key, two runs.
void TestMetricBlockReads::packedReadsLikeRowsOnly()
{
    SqliteStoreOptions packed, rows;
    packed.packBlocks = true;
    rows.packBlocks = false;
    const QString packedPath = m_path, rowsPath = m_path + QStringLiteral(".rows");
    auto a = SqliteResultStore::open(packedPath, packed);
    auto b = SqliteResultStore::open(rowsPath, rows);
    QVERIFY(a && b);
    std::unique_ptr<SqliteResultStore> stores[2] = {std::move(*a), std::move(*b)};
    QList<RunId> runs;
    for (int r = 0; r < 2; ++r) {
        const auto ra = stores[0]->createRun(RunRecord{}, {});
        const auto rb = stores[1]->createRun(RunRecord{}, {});
        QVERIFY(ra && rb && *ra == *rb);
        runs << *ra;
    }
    const QStringList keys{QStringLiteral("loss"), QStringLiteral("lr")};
    QRandomGenerator rng(20261201);
    std::map<std::tuple<RunId, QString, int>, qint64> nextStep;
    qint64 wall = kWall0;
    const double specials[] = {kNaN, -0.0, kInf, -kInf};
    for (int op = 0; op < 160; ++op) {
        // One series per append, committed before the next: arrival ids then
        // follow the appends in both files.
        const RunId run = runs[rng.bounded(runs.size())];
        const QString& key = keys[rng.bounded(keys.size())];
        const auto source = rng.bounded(2) ? MetricSource::File : MetricSource::Console;
        qint64& step = nextStep[{run, key, int(source)}];
        const int roll = int(rng.bounded(100));
        if (roll < 12 && step > 0)
            step -= 1 + qint64(rng.bounded(quint32(std::min<qint64>(step, 3000)))); // resumed from a checkpoint
        else if (roll < 16 && step > 0)
            step -= 1; // a same-step correction
        const int n = roll >= 85 ? 1024 + int(rng.bounded(4000)) : 1 + int(rng.bounded(120));
        QList<MetricPoint> pts;
        for (int i = 0; i < n; ++i) {
            MetricPoint p;
            p.run = run;
            p.key = key;
            p.source = source;
            p.step = step;
            step += 1 + (rng.bounded(8) == 0 ? 1 : 0); // the other source's steps tie with some of these
            p.wallTimeMs = ++wall;
            p.value = rng.bounded(50) == 0 ? specials[rng.bounded(4)] : rng.generateDouble() - 0.5;
            if (rng.bounded(3) == 0)
                p.epoch = double(p.step) / 1000.0;
            pts << p;
        }
        for (auto& store : stores) {
            store->appendMetrics(pts);
            QVERIFY(store->flush());
        }
    }
    {
        RawDb raw(packedPath, true);
        const qint64 blocks = raw.scalar(QStringLiteral("SELECT count(*) FROM metric_blocks")).toLongLong();
        const qint64 cut
                = raw.scalar(QStringLiteral("SELECT count(*) FROM metric_blocks WHERE live < count")).toLongLong();
        qInfo("packed file: %lld blocks (%lld with superseded points), %lld rows", static_cast<long long>(blocks),
                static_cast<long long>(cut),
                static_cast<long long>(raw.scalar(QStringLiteral("SELECT count(*) FROM metrics")).toLongLong()));
        QVERIFY(blocks >= 10);
        QVERIFY(cut >= 1);
    }
    QString why;
    for (const RunId run : runs) {
        const auto want = stores[1]->allMetrics(run);
        QVERIFY2(samePoints(stores[0]->allMetrics(run), want, &why), qPrintable(why));
        QVERIFY2(samePoints(stores[0]->metrics(run), stores[1]->metrics(run), &why), qPrintable(why));
        const auto latestA = stores[0]->latestMetrics(run), latestB = stores[1]->latestMetrics(run);
        QCOMPARE(latestA.keys(), latestB.keys());
        for (const QString& k : latestB.keys())
            QVERIFY2(samePoint(latestA.value(k), latestB.value(k)),
                    qPrintable(QStringLiteral("%1: %2 vs %3")
                                       .arg(k, describe(latestA.value(k)), describe(latestB.value(k)))));
    }
    stores[0].reset();
    stores[1].reset();
    for (const QString& path : {packedPath, rowsPath}) {
        auto again = SqliteResultStore::open(rowsPath, rows); // the reference: rows only
        QVERIFY(again);
        auto cols = SqliteMetricColumns::open(path);
        QVERIFY2(cols, cols ? "" : qPrintable(cols.error().message));
        for (const RunId run : runs) {
            const auto keyIds = (*cols)->keys(run);
            QVERIFY(keyIds);
            QCOMPARE(keyIds->size(), keys.size());
            const auto all = (*cols)->runSeries(*keyIds);
            QVERIFY2(all, all ? "" : qPrintable(all.error().message));
            for (qsizetype k = 0; k < keyIds->size(); ++k) {
                const auto want = (*again)->metrics(run, keyIds->at(k).second);
                QVERIFY2(sameColumns(all->at(k), want, &why), qPrintable(path + u": " + why));
                const auto one = (*cols)->series(keyIds->at(k).first);
                QVERIFY2(one, one ? "" : qPrintable(one.error().message));
                QVERIFY2(sameColumns(*one, want, &why), qPrintable(path + u": " + why));
            }
        }
    }
}

// Blocks of one series whose steps do not continue each other (not what the
// writer makes: a hand-edited or damaged file) still read in (step, id) order.
void TestMetricBlockReads::blocksOutOfStepOrderStillSorted()
{
    using enum MetricSource;
    const QString key = QStringLiteral("odd");
    std::vector<Planned> plan = {
            {key, Console, 10, 1.0, {}, 1, false},  // 1 block 1
            {key, Console, 20, 2.0, {}, 1, false},  // 2
            {key, Console, 5, 3.0, {}, 2, false},   // 3 block 2, below block 1
            {key, Console, 15, 4.0, 1.5, 2, false}, // 4
            {key, Console, 20, 5.0, {}, 2, false},  // 5 same step as id 2
    };
    const RunId run = writeLayout(plan, {{1, 2}, {2, 3}});
    QVERIFY(run != 0);
    const QList<qint64> order{3, 1, 4, 2, 5};
    QList<MetricPoint> want;
    for (qint64 id : order) {
        const Planned& p = plan[std::size_t(id - 1)];
        MetricPoint m;
        m.run = run;
        m.key = key;
        m.step = p.step;
        m.epoch = p.epoch;
        m.wallTimeMs = p.wall;
        m.value = p.value;
        m.source = p.source;
        want << m;
    }
    QString why;
    QVERIFY2(samePoints(m_store->metrics(run, key), want, &why), qPrintable(why));
    QVERIFY2(samePoints(m_store->allMetrics(run, key), want, &why), qPrintable(why));
    auto cols = SqliteMetricColumns::open(m_path);
    QVERIFY(cols);
    const auto keyIds = (*cols)->keys(run);
    QVERIFY(keyIds && keyIds->size() == 1);
    const auto s = (*cols)->series(keyIds->at(0).first);
    QVERIFY2(s, s ? "" : qPrintable(s.error().message));
    QVERIFY2(sameColumns(*s, want, &why), qPrintable(why));
    const auto all = (*cols)->runSeries(*keyIds);
    QVERIFY2(all, all ? "" : qPrintable(all.error().message));
    QVERIFY2(sameColumns(all->at(0), want, &why), qPrintable(why));
}

QTEST_GUILESS_MAIN(TestMetricBlockReads)
#include "TestMetricBlockReads.moc"
