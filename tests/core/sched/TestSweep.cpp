// ty::sched::expandSweep: combinations, order, edge cases.

#include "sched/Sweep.h"

#include <QTest>

using namespace ty::sched;

class TestSweep final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cartesianProductInKeyOrder();
    void edgeCases();
};

void TestSweep::cartesianProductInKeyOrder()
{
    const QVariantMap base{{u"epochs"_qs, 10}, {u"lr"_qs, 0.1}};
    QMap<QString, QVariantList> sweep;
    sweep.insert(u"lr"_qs, {1e-3, 1e-4});
    sweep.insert(u"batch"_qs, {32, 64, 128});
    const QList<QVariantMap> out = expandSweep(base, sweep);
    QCOMPARE(out.size(), 6);
    // batch (first key) slowest, lr fastest; base values kept, swept ones overridden.
    const QList<std::pair<int, double>> expected{{32, 1e-3}, {32, 1e-4}, {64, 1e-3}, {64, 1e-4}, {128, 1e-3}, {128, 1e-4}};
    for (qsizetype i = 0; i < out.size(); ++i) {
        QCOMPARE(out[i].value(u"batch"_qs).toInt(), expected[i].first);
        QCOMPARE(out[i].value(u"lr"_qs).toDouble(), expected[i].second);
        QCOMPARE(out[i].value(u"epochs"_qs).toInt(), 10);
    }
    QCOMPARE(sweepLabel(out[3], sweep), u"batch=64,lr=0.0001"_qs);
    // Deterministic: the same call twice gives the same list.
    QCOMPARE(expandSweep(base, sweep), out);
    // Three keys: 2 * 3 * 2 combinations, all distinct.
    sweep.insert(u"seed"_qs, {1, 2});
    const QList<QVariantMap> three = expandSweep(base, sweep);
    QCOMPARE(three.size(), 12);
    QSet<QString> labels;
    for (const QVariantMap& m : three)
        labels.insert(sweepLabel(m, sweep));
    QCOMPARE(labels.size(), 12);
    QCOMPARE(sweepLabel(three[1], sweep), u"batch=32,lr=0.001,seed=2"_qs);
}

void TestSweep::edgeCases()
{
    const QVariantMap base{{u"a"_qs, 1}};
    QCOMPARE(expandSweep(base, {}), QList<QVariantMap>{base});
    QMap<QString, QVariantList> sweep;
    sweep.insert(u"x"_qs, {});
    sweep.insert(u"y"_qs, {1, 2});
    QVERIFY(expandSweep(base, sweep).isEmpty());
    sweep.remove(u"x"_qs);
    QCOMPARE(expandSweep(base, sweep).size(), 2);
    QCOMPARE(expandSweep(base, sweep).at(1).value(u"y"_qs).toInt(), 2);
}

QTEST_GUILESS_MAIN(TestSweep)
#include "TestSweep.moc"
