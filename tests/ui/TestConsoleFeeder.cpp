// ConsoleFeeder's updates: an isolated line goes to the view at once, a
// stream of them at most once every kFlushMs (#27: the 60 ms flush timer an
// isolated line always waited for in full was most of its write -> painted
// latency).
#include "ui/console/ConsoleFeeder.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

using namespace ty;

class TestConsoleFeeder final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void isolatedLineIsSentAtOnceAndAStreamAtMostEveryFlushInterval()
    {
        ConsoleFeeder feeder;
        QSignalSpy updates(&feeder, &ConsoleFeeder::updated);
        feeder.open(1, {}, false);
        QTest::qWait(ConsoleFeeder::kFlushMs + 20); // the open's own update, then quiet
        const qsizetype afterOpen = updates.size();

        // After a quiet interval: the next pass of the event loop sends it.
        feeder.append(1, 0, "epoch=1 loss=0.5\n");
        QCoreApplication::processEvents();
        QCOMPARE(updates.size(), afterOpen + 1);
        QCOMPARE(updates.last().at(6).toLongLong(), qint64(17)); // bytes consumed

        // More within kFlushMs of that update: held, then sent together once.
        QElapsedTimer t;
        t.start();
        feeder.append(1, 17, "epoch=2 loss=0.4\n");
        feeder.append(1, 34, "epoch=3 loss=0.3\n");
        QCoreApplication::processEvents();
        if (t.elapsed() < ConsoleFeeder::kFlushMs / 2) // (a very slow machine may have passed the window)
            QCOMPARE(updates.size(), afterOpen + 1);
        QTRY_COMPARE_WITH_TIMEOUT(updates.size(), afterOpen + 2, 1000);
        QVERIFY2(t.elapsed() >= ConsoleFeeder::kFlushMs / 2, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(updates.last().at(6).toLongLong(), qint64(51));
        feeder.stop();
    }
};

QTEST_MAIN(TestConsoleFeeder)
#include "TestConsoleFeeder.moc"
