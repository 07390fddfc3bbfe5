// MemoStore (core/memo/MemoStore.h) on a real SQLite result database: entries
// round trip with their components, outputs and params; what put() refuses;
// hits (count, last hit, created unchanged); removal and eviction by age and
// by total output size; "why did this step run" against the newest entry.
#include "MemoTestUtil.h"

#include "core/memo/MemoExplain.h"
#include "core/memo/MemoStore.h"
#include "core/store/ResultStore.h"

#include <QTemporaryDir>
#include <QTest>

using namespace ty;
using ty::test::trainComponents;

namespace {

constexpr qint64 kDay = 86'400'000;
const QDateTime kT0 = QDateTime::fromMSecsSinceEpoch(1'767'225'600'000, Qt::UTC); // 2026-01-01

MemoEntry entry(const QString& step, const QString& salt, const QDateTime& created, qint64 bytes)
{
    MemoEntry e;
    e.pipeline = QStringLiteral("digits");
    e.step = step;
    e.components = trainComponents();
    e.components.step = step;
    e.components.keyExtra = salt;
    e.created = created;
    e.run = 7;
    e.outputs = {MemoOutput{QStringLiteral("/runs/7/model.pt"), bytes, ty::test::sha(salt.toUtf8())}};
    e.outputParams = {{QStringLiteral("val_accuracy"), QStringLiteral("0.953")}};
    return e;
}

} // namespace

class TestMemoStore final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void roundTrip();
    void refusesEntriesWithoutHashes();
    void hitsCountWithoutMovingCreation();
    void putReplacesTheEntryWhole();
    void removeByKeyStepAndAll();
    void evictsByAge();
    void evictsOldestFirstDownToASizeBudget();
    void explainsAMissAgainstTheNewestEntry();
    void entriesSurviveReopening();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<ResultStore> m_store;
    QString m_path;
};

void TestMemoStore::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    m_path = m_tmp->filePath(QStringLiteral("results.db"));
    auto s = ResultStore::open(m_path);
    QVERIFY2(s.has_value(), s ? "" : qPrintable(s.error().message));
    m_store = std::move(*s);
}

void TestMemoStore::cleanup()
{
    m_store.reset();
}

void TestMemoStore::roundTrip()
{
    MemoStore memo(*m_store);
    MemoEntry e = entry(QStringLiteral("train"), QStringLiteral("a"), kT0.addMSecs(123), 1000);
    e.outputs << MemoOutput{QStringLiteral("/runs/7/metrics.json"), 20, ty::test::sha("{}")};
    const auto put = memo.put(e);
    QVERIFY2(put.has_value(), put ? "" : qPrintable(put.error().message));
    QCOMPARE(put->key, memoKey(e.components));
    const auto got = memo.get(put->key);
    QVERIFY(got.has_value() && got->has_value());
    QCOMPARE(**got, *put);
    QCOMPARE((*got)->components, e.components);
    QCOMPARE((*got)->outputs, e.outputs);
    QCOMPARE((*got)->outputParams, e.outputParams);
    QCOMPARE((*got)->created, kT0.addMSecs(123));
    QCOMPARE((*got)->run, RunId(7));
    QCOMPARE((*got)->hitCount, 0);
    QVERIFY(!(*got)->lastHit.isValid());
    QCOMPARE(memo.totalOutputBytes(), 1020);
    QCOMPARE(m_store->memoEntry(put->key)->outputBytes, 1020);
    QVERIFY(memo.get(QStringLiteral("nope"))->has_value() == false);

    // newest() by (pipeline, step); list() newest first, filtered.
    QVERIFY(memo.put(entry(QStringLiteral("train"), QStringLiteral("b"), kT0.addSecs(60), 1)).has_value());
    QVERIFY(memo.put(entry(QStringLiteral("eval"), QStringLiteral("c"), kT0.addSecs(120), 1)).has_value());
    const auto newest = memo.newest(QStringLiteral("digits"), QStringLiteral("train"));
    QVERIFY(newest.has_value() && newest->has_value());
    QCOMPARE((*newest)->components.keyExtra, QStringLiteral("b"));
    QVERIFY(!memo.newest(QStringLiteral("other"), QStringLiteral("train"))->has_value());
    QCOMPARE(memo.list().size(), 3);
    QCOMPARE(memo.list().front().step, QStringLiteral("eval"));
    QCOMPARE(memo.list(MemoEntryFilter{{}, QStringLiteral("train"), -1, true}).size(), 2);
    const QList<MemoEntry> light = memo.list(MemoEntryFilter{{}, {}, -1, false});
    QCOMPARE(light.size(), 3);
    QCOMPARE(light.front().components, MemoComponents());
    QCOMPARE(light.front().outputs.size(), 1);
}

void TestMemoStore::refusesEntriesWithoutHashes()
{
    MemoStore memo(*m_store);
    auto refused = [&](MemoEntry e, const QString& words) {
        const auto r = memo.put(e);
        QVERIFY(!r.has_value());
        QVERIFY2(r.error().message.contains(words), qPrintable(r.error().message));
    };
    MemoEntry e = entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 10);
    e.outputs[0].sha256.clear();
    refused(e, QStringLiteral("output /runs/7/model.pt has no content hash"));
    e.outputs[0].sha256 = ty::test::sha("x").toUpper();
    refused(e, QStringLiteral("no content hash"));
    e = entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 10);
    e.outputs << e.outputs[0];
    refused(e, QStringLiteral("listed twice"));
    e = entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 10);
    e.key = ty::test::sha("made up");
    refused(e, QStringLiteral("is not the key of its components"));
    e = entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 10);
    e.components.step = QStringLiteral("eval");
    refused(e, QStringLiteral("its components name step eval"));
    e.step.clear();
    refused(e, QStringLiteral("needs a step"));
    QVERIFY(memo.list().isEmpty());
    // A step that declares no outputs may be stored (nothing to verify).
    e = entry(QStringLiteral("check"), QStringLiteral("a"), kT0, 10);
    e.outputs.clear();
    QVERIFY(memo.put(e).has_value());
}

void TestMemoStore::hitsCountWithoutMovingCreation()
{
    MemoStore memo(*m_store);
    const QString key = memo.put(entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 10))->key;
    QVERIFY(memo.recordHit(key, 11, QStringLiteral("digits"), kT0.addSecs(3600)).has_value());
    QVERIFY(memo.recordHit(key, 12, QStringLiteral("digits-v2"), kT0.addSecs(7200)).has_value());
    const MemoEntry e = **memo.get(key);
    QCOMPARE(e.hitCount, 2);
    QCOMPARE(e.lastHit, kT0.addSecs(7200));
    QCOMPARE(e.created, kT0);
    QCOMPARE(memo.hits(key),
            (QList<MemoHitRecord>{{key, kT0.addSecs(3600), 11, QStringLiteral("digits")},
                    {key, kT0.addSecs(7200), 12, QStringLiteral("digits-v2")}}));
    const auto unknown = memo.recordHit(ty::test::sha("none"), 1, {});
    QVERIFY(!unknown.has_value());
    QCOMPARE(unknown.error().kind, ErrorKind::NotFound);
    // At the store level a hit on an unknown key is no error and writes nothing.
    QVERIFY(m_store->recordMemoHit(MemoHitRecord{QStringLiteral("gone"), kT0, 1, {}}).has_value());
    QVERIFY(m_store->memoHits(QStringLiteral("gone")).isEmpty());
}

void TestMemoStore::putReplacesTheEntryWhole()
{
    MemoStore memo(*m_store);
    const QString key = memo.put(entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 10))->key;
    QVERIFY(memo.recordHit(key, 1, {}, kT0.addSecs(1)).has_value());
    MemoEntry again = entry(QStringLiteral("train"), QStringLiteral("a"), kT0.addSecs(60), 99);
    again.run = 8;
    QCOMPARE(memo.put(again)->key, key);
    const MemoEntry e = **memo.get(key);
    QCOMPARE(e.run, RunId(8));
    QCOMPARE(e.created, kT0.addSecs(60));
    QCOMPARE(e.hitCount, 0);
    QCOMPARE(e.outputBytes(), 99);
    QVERIFY(memo.hits(key).isEmpty());
    QCOMPARE(memo.list().size(), 1);
}

void TestMemoStore::removeByKeyStepAndAll()
{
    MemoStore memo(*m_store);
    const QString a = memo.put(entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 1))->key;
    const QString b = memo.put(entry(QStringLiteral("train"), QStringLiteral("b"), kT0.addSecs(1), 1))->key;
    const QString c = memo.put(entry(QStringLiteral("eval"), QStringLiteral("c"), kT0.addSecs(2), 1))->key;
    const QString d = memo.put(entry(QStringLiteral("eval"), QStringLiteral("d"), kT0.addSecs(3), 1))->key;
    QVERIFY(memo.recordHit(a, 1, {}).has_value());
    QCOMPARE(*memo.remove(a), QStringList{a});
    QVERIFY(m_store->memoHits(a).isEmpty()); // the hits went with it
    QCOMPARE(*memo.remove(a), QStringList());
    QCOMPARE(*memo.removeStep(QStringLiteral("digits"), QStringLiteral("eval")), (QStringList{c, d}));
    QCOMPARE(memo.list().size(), 1);
    QCOMPARE(memo.list().front().key, b);
    QVERIFY(memo.put(entry(QStringLiteral("x"), QStringLiteral("e"), kT0.addSecs(4), 1)).has_value());
    QCOMPARE(memo.removeAll()->size(), 2);
    QVERIFY(memo.list().isEmpty());
}

void TestMemoStore::evictsByAge()
{
    MemoStore memo(*m_store);
    const QString a = memo.put(entry(QStringLiteral("s"), QStringLiteral("a"), kT0, 1))->key;
    const QString b = memo.put(entry(QStringLiteral("s"), QStringLiteral("b"), kT0.addMSecs(kDay), 1))->key;
    const QString c = memo.put(entry(QStringLiteral("s"), QStringLiteral("c"), kT0.addMSecs(2 * kDay), 1))->key;
    // A hit does not make an entry younger.
    QVERIFY(memo.recordHit(a, 1, {}, kT0.addMSecs(3 * kDay)).has_value());
    // Now t0 + 3 d, max age 2 d: a (3 d) goes, b (exactly 2 d) goes, c (1 d) stays.
    QCOMPARE(*memo.evictOlderThan(2 * kDay, kT0.addMSecs(3 * kDay)), (QStringList{a, b}));
    QCOMPARE(memo.list().size(), 1);
    QCOMPARE(memo.list().front().key, c);
    QCOMPARE(*memo.evictOlderThan(2 * kDay, kT0.addMSecs(3 * kDay)), QStringList());
}

void TestMemoStore::evictsOldestFirstDownToASizeBudget()
{
    MemoStore memo(*m_store);
    const QString a = memo.put(entry(QStringLiteral("s"), QStringLiteral("a"), kT0, 100))->key;
    const QString b = memo.put(entry(QStringLiteral("s"), QStringLiteral("b"), kT0.addSecs(1), 200))->key;
    const QString c = memo.put(entry(QStringLiteral("s"), QStringLiteral("c"), kT0.addSecs(2), 300))->key;
    QCOMPARE(memo.totalOutputBytes(), 600);
    QCOMPARE(*memo.evictToSize(600), QStringList());
    QCOMPARE(*memo.evictToSize(500), QStringList{a});
    QCOMPARE(memo.totalOutputBytes(), 500);
    QCOMPARE(*memo.evictToSize(300), QStringList{b}); // exactly the budget left: c stays
    QCOMPARE(*memo.evictToSize(299), QStringList{c}); // the newest alone over budget goes too
    QCOMPARE(memo.totalOutputBytes(), 0);
    // The plan alone, entries in any order.
    QList<MemoEntryRecord> records(3);
    records[0].key = QStringLiteral("new");
    records[0].createdAt = kT0.addSecs(2);
    records[0].outputBytes = 10;
    records[1].key = QStringLiteral("old");
    records[1].createdAt = kT0;
    records[1].outputBytes = 10;
    records[2].key = QStringLiteral("mid");
    records[2].createdAt = kT0.addSecs(1);
    records[2].outputBytes = 10;
    QCOMPARE(planSizeEviction(records, 15), (QStringList{QStringLiteral("old"), QStringLiteral("mid")}));
    QCOMPARE(planAgeEviction(records, 2000, kT0.addSecs(3).toMSecsSinceEpoch()),
            (QStringList{QStringLiteral("old"), QStringLiteral("mid")}));
}

void TestMemoStore::explainsAMissAgainstTheNewestEntry()
{
    MemoStore memo(*m_store);
    QVERIFY(memo.put(entry(QStringLiteral("train"), QStringLiteral("v1"), kT0, 10)).has_value());
    MemoComponents now = trainComponents();
    now.keyExtra = QStringLiteral("v1");
    now.codeFiles[2] = ty::test::file(QStringLiteral("train.py"), "print('v2')\n");
    now.params[QStringLiteral("lr")] = QStringLiteral("0.001");
    QVERIFY(!memo.get(memoKey(now))->has_value()); // a miss
    const auto newest = memo.newest(QStringLiteral("digits"), QStringLiteral("train"));
    QVERIFY(newest.has_value() && newest->has_value());
    QCOMPARE(explainMiss((*newest)->components, now),
            (QStringList{QStringLiteral("param lr 0.01 -> 0.001"), QStringLiteral("train.py changed")}));
    const auto none = memo.newest(QStringLiteral("digits"), QStringLiteral("deploy"));
    QVERIFY(none.has_value() && !none->has_value());
    now.step = QStringLiteral("deploy");
    QCOMPARE(explainMiss(std::nullopt, now), QStringList{QStringLiteral("no earlier entry for step deploy")});
}

void TestMemoStore::entriesSurviveReopening()
{
    QString key;
    {
        MemoStore memo(*m_store);
        key = memo.put(entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 10))->key;
        QVERIFY(memo.recordHit(key, 3, QStringLiteral("digits"), kT0.addSecs(5)).has_value());
    }
    m_store.reset();
    auto reopened = ResultStore::open(m_path);
    QVERIFY(reopened.has_value());
    MemoStore memo(**reopened);
    const auto e = memo.get(key);
    QVERIFY(e.has_value() && e->has_value());
    QCOMPARE((*e)->hitCount, 1);
    QCOMPARE((*e)->components, entry(QStringLiteral("train"), QStringLiteral("a"), kT0, 10).components);
}

QTEST_GUILESS_MAIN(TestMemoStore)
#include "TestMemoStore.moc"
