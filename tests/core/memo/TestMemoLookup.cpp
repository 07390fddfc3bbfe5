// The hit/miss decision (core/memo/MemoLookup.h): always_run, max_age from
// creation, outputs missing, changed or uncheckable, and what is evicted.
#include "MemoTestUtil.h"

#include "core/memo/MemoLookup.h"

#include <QHash>
#include <QTest>

using namespace ty;

namespace {

constexpr qint64 kDay = 86'400'000;
constexpr qint64 kCreated = 1'767'225'600'000; // 2026-01-01T00:00:00Z

MemoOutput output(const QString& path, const QByteArray& content)
{
    return MemoOutput{path, content.size(), ty::test::sha(content)};
}

// The outputs as they are "now": path -> content; absent = missing.
struct World {
    QHash<QString, QByteArray> files;
    QStringList unreadable;
    QStringList asked;

    std::function<Result<std::optional<FileDigest>>(const MemoOutput&)> checker()
    {
        return [this](const MemoOutput& o) -> Result<std::optional<FileDigest>> {
            asked << o.path;
            if (unreadable.contains(o.path))
                return fail(QStringLiteral("Permission denied"));
            if (!files.contains(o.path))
                return std::optional<FileDigest>();
            return std::optional<FileDigest>(ty::test::file(o.path, files.value(o.path)));
        };
    }
};

} // namespace

class TestMemoLookup final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void hitWhenOutputsAreThere();
    void alwaysRunMissesAndKeeps();
    void maxAgeCountsFromCreation();
    void missingOrChangedOutputsEvict();
    void uncheckableOutputMissesAndKeeps();
};

void TestMemoLookup::hitWhenOutputsAreThere()
{
    World w{{{QStringLiteral("model.pt"), "weights"}, {QStringLiteral("metrics.json"), "{}"}}, {}, {}};
    MemoLookupRequest r{kCreated,
            {output(QStringLiteral("model.pt"), "weights"), output(QStringLiteral("metrics.json"), "{}")},
            kCreated + 3 * kDay, 7 * kDay, false, w.checker()};
    const MemoDecision d = decideMemo(r);
    QVERIFY(d.hit);
    QVERIFY(!d.evict);
    QVERIFY(d.reasons.isEmpty());
    QCOMPARE(w.asked, (QStringList{QStringLiteral("model.pt"), QStringLiteral("metrics.json")}));
    // No max_age: any age is fine.
    r.maxAgeMs.reset();
    r.nowMs = kCreated + 10'000 * kDay;
    QVERIFY(decideMemo(r).hit);
}

void TestMemoLookup::alwaysRunMissesAndKeeps()
{
    World w{{{QStringLiteral("model.pt"), "weights"}}, {}, {}};
    const MemoDecision d = decideMemo(MemoLookupRequest{
            kCreated, {output(QStringLiteral("model.pt"), "weights")}, kCreated, {}, true, w.checker()});
    QVERIFY(!d.hit);
    QVERIFY(!d.evict);
    QCOMPARE(d.reasons, QStringList{QStringLiteral("always_run is set")});
    QVERIFY(w.asked.isEmpty());
}

void TestMemoLookup::maxAgeCountsFromCreation()
{
    World w{{{QStringLiteral("model.pt"), "weights"}}, {}, {}};
    MemoLookupRequest r{kCreated, {output(QStringLiteral("model.pt"), "weights")}, kCreated + 2 * kDay - 1, 2 * kDay,
            false, w.checker()};
    QVERIFY(decideMemo(r).hit);    // 1 ms short of max_age
    r.nowMs = kCreated + 2 * kDay; // exactly max_age old: expired
    const MemoDecision d = decideMemo(r);
    QVERIFY(!d.hit);
    QVERIFY(d.evict);
    QCOMPARE(d.reasons,
            QStringList{QStringLiteral("entry expired: created 2026-01-01T00:00:00Z UTC, 2 d old, max_age 2 d")});
    r.nowMs = kCreated + 2 * kDay + 5 * 3'600'000;
    QCOMPARE(decideMemo(r).reasons,
            QStringList{QStringLiteral("entry expired: created 2026-01-01T00:00:00Z UTC, 2 d 5 h old, max_age 2 d")});
    QCOMPARE(w.asked.size(), 1); // an expired entry's outputs are not even looked at
}

void TestMemoLookup::missingOrChangedOutputsEvict()
{
    World w{{{QStringLiteral("model.pt"), "other weights"}, {QStringLiteral("log.txt"), "same"}}, {}, {}};
    MemoLookupRequest r{kCreated,
            {output(QStringLiteral("model.pt"), "weights"), output(QStringLiteral("plot.png"), "png"),
                    output(QStringLiteral("log.txt"), "same")},
            kCreated + 1, {}, false, w.checker()};
    const MemoDecision d = decideMemo(r);
    QVERIFY(!d.hit);
    QVERIFY(d.evict);
    QCOMPARE(d.reasons,
            (QStringList{QStringLiteral("output model.pt changed"), QStringLiteral("output plot.png missing")}));
    // Missing alone evicts too.
    w.files.insert(QStringLiteral("model.pt"), "weights");
    const MemoDecision missing = decideMemo(r);
    QCOMPARE(missing.reasons, QStringList{QStringLiteral("output plot.png missing")});
    QVERIFY(missing.evict);
    // Same size, other bytes: changed too.
    w.files = {{QStringLiteral("a"), "xy"}};
    r.outputs = {output(QStringLiteral("a"), "xz")};
    QCOMPARE(decideMemo(r).reasons, QStringList{QStringLiteral("output a changed")});
}

void TestMemoLookup::uncheckableOutputMissesAndKeeps()
{
    World w{{{QStringLiteral("model.pt"), "weights"}}, {QStringLiteral("model.pt")}, {}};
    const MemoDecision d = decideMemo(MemoLookupRequest{
            kCreated, {output(QStringLiteral("model.pt"), "weights")}, kCreated, {}, false, w.checker()});
    QVERIFY(!d.hit);
    QVERIFY(!d.evict);
    QCOMPARE(d.reasons, QStringList{QStringLiteral("output model.pt cannot be checked: Permission denied")});
}

QTEST_GUILESS_MAIN(TestMemoLookup)
#include "TestMemoLookup.moc"
