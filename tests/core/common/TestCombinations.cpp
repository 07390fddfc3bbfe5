// forEachCombination: the odometer order sweeps and for_each rely on.
#include "core/common/Combinations.h"

#include <QTest>

using namespace ty;

class TestCombinations final : public QObject {
    Q_OBJECT

    static QList<QList<qsizetype>> all(const QList<qsizetype>& sizes)
    {
        QList<QList<qsizetype>> out;
        forEachCombination(sizes, [&](const QList<qsizetype>& index) {
            out << index;
            return true;
        });
        return out;
    }

private Q_SLOTS:
    void lastListVariesFastest()
    {
        const QList<QList<qsizetype>> expected{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};
        QCOMPARE(all({2, 3}), expected);
        QCOMPARE(all({3}).size(), 3);
        QCOMPARE(all({2, 2, 2}).size(), 8);
        QCOMPARE(all({2, 2, 2}).last(), (QList<qsizetype>{1, 1, 1}));
    }

    void edgeCases()
    {
        QCOMPARE(all({}), (QList<QList<qsizetype>>{{}})); // no lists: one empty combination
        QVERIFY(all({2, 0, 3}).isEmpty());                // an empty list: none
        // Stopping early: the visitor's false ends it, and is returned.
        int seen = 0;
        QVERIFY(!forEachCombination(QList<qsizetype>{4, 4}, [&](const QList<qsizetype>&) { return ++seen < 5; }));
        QCOMPARE(seen, 5);
    }
};

QTEST_GUILESS_MAIN(TestCombinations)
#include "TestCombinations.moc"
