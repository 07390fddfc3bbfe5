// The host key decision table (HostKeyPolicy.h) for every setting and state;
// TestSshNodes::strictHostKeyCheckingAsSsh checks the same against ssh.
#include "core/nodes/HostKeyPolicy.h"

#include <QTest>

using namespace ty;

class TestHostKeyPolicy final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesSshGAndConfigSpellings()
    {
        QCOMPARE(parseStrictHostKeyChecking(QStringLiteral("true")), StrictHostKeyChecking::Yes);
        QCOMPARE(parseStrictHostKeyChecking(QStringLiteral("yes")), StrictHostKeyChecking::Yes);
        QCOMPARE(parseStrictHostKeyChecking(QStringLiteral("false")), StrictHostKeyChecking::No);
        QCOMPARE(parseStrictHostKeyChecking(QStringLiteral("off")), StrictHostKeyChecking::No);
        QCOMPARE(parseStrictHostKeyChecking(QStringLiteral("Accept-New")), StrictHostKeyChecking::AcceptNew);
        QCOMPARE(parseStrictHostKeyChecking(QStringLiteral("ask")), StrictHostKeyChecking::Ask);
        QCOMPARE(parseStrictHostKeyChecking(QString()), StrictHostKeyChecking::Ask);
    }

    void decisionTable()
    {
        using S = StrictHostKeyChecking;
        using K = HostKeyState;
        using D = HostKeyDecision;
        for (S s : {S::Yes, S::AcceptNew, S::No, S::Ask}) {
            QCOMPARE(decideHostKey(K::Known, s, false), D::Accepted);
            QCOMPARE(decideHostKey(K::Unknown, s, true), D::Added); // the user said yes
            QCOMPARE(decideHostKey(K::Changed, s, true), s == S::No ? D::AcceptedChanged : D::RefusedChanged);
        }
        QCOMPARE(decideHostKey(K::Unknown, S::Yes, false), D::RefusedUnknown);
        QCOMPARE(decideHostKey(K::Unknown, S::Ask, false), D::RefusedUnknown);
        QCOMPARE(decideHostKey(K::Unknown, S::AcceptNew, false), D::Added);
        QCOMPARE(decideHostKey(K::Unknown, S::No, false), D::Added);
        QCOMPARE(decideHostKey(K::OtherType, S::Ask, true), D::RefusedOtherType);
        QCOMPARE(decideHostKey(K::OtherType, S::AcceptNew, false), D::Added);
        QVERIFY(hostKeyAccepted(D::AcceptedChanged) && !hostKeyAccepted(D::RefusedChanged));
    }
};

QTEST_GUILESS_MAIN(TestHostKeyPolicy)
#include "TestHostKeyPolicy.moc"
