// stitchAttemptMetrics (core/retry/AttemptMetrics.h): a retried run's
// attempts read as one series, each resumed attempt taking over from its
// first step (issue #25).
#include "core/retry/AttemptMetrics.h"

#include <QTest>

using namespace ty;

namespace {

MetricPoint pt(RunId run, const QString& key, qint64 step, double value, MetricSource source = MetricSource::Console)
{
    MetricPoint p;
    p.run = run;
    p.key = key;
    p.step = step;
    p.value = value;
    p.wallTimeMs = run * 1'000'000 + step;
    p.source = source;
    return p;
}

// "run:step" of each point, in order.
QStringList shape(const QList<MetricPoint>& points)
{
    QStringList out;
    for (const MetricPoint& p : points)
        out << QStringLiteral("%1:%2:%3").arg(p.key).arg(p.run).arg(p.step);
    return out;
}

QList<MetricPoint> steps(RunId run, const QString& key, qint64 from, qint64 to)
{
    QList<MetricPoint> out;
    for (qint64 s = from; s <= to; ++s)
        out << pt(run, key, s, double(s));
    return out;
}

} // namespace

class TestAttemptMetrics final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Attempt 1 logged steps 0..6 and died after its checkpoint at step 4;
    // attempt 2 resumed at 5 and ran to 9: 0..4 from attempt 1, 5..9 from 2.
    void resumedAttemptTakesOverFromItsFirstStep()
    {
        const StitchedMetrics s = stitchAttemptMetrics({steps(11, u"loss"_qs, 0, 6), steps(12, u"loss"_qs, 5, 9)});
        QCOMPARE(shape(s.points),
                QStringList({u"loss:11:0"_qs, u"loss:11:1"_qs, u"loss:11:2"_qs, u"loss:11:3"_qs, u"loss:11:4"_qs,
                        u"loss:12:5"_qs, u"loss:12:6"_qs, u"loss:12:7"_qs, u"loss:12:8"_qs, u"loss:12:9"_qs}));
        QCOMPARE(s.resumes.size(), 1);
        QCOMPARE(s.resumes[0].run, RunId(12));
        QCOMPARE(s.resumes[0].key, u"loss"_qs);
        QCOMPARE(s.resumes[0].step, 5);
        QCOMPARE(s.resumes[0].superseded, 2); // attempt 1's steps 5 and 6
        QCOMPARE(s.resumes[0].wallTimeMs, 12'000'005);
    }

    // Started over (no checkpoint): the second attempt replaces all of the
    // first; a third resumes within the second; keys apart; an attempt
    // without points changes nothing.
    void startOverThreeAttemptsAndKeysApart()
    {
        QList<MetricPoint> a1 = steps(1, u"loss"_qs, 0, 3) + steps(1, u"acc"_qs, 0, 1);
        QList<MetricPoint> a2 = steps(2, u"loss"_qs, 0, 5);
        QList<MetricPoint> a3 = steps(3, u"loss"_qs, 4, 6) + steps(3, u"acc"_qs, 1, 2);
        // The store orders by key: acc before loss.
        std::stable_sort(
                a1.begin(), a1.end(), [](const MetricPoint& a, const MetricPoint& b) { return a.key < b.key; });
        std::stable_sort(
                a3.begin(), a3.end(), [](const MetricPoint& a, const MetricPoint& b) { return a.key < b.key; });
        const StitchedMetrics s = stitchAttemptMetrics({a1, {}, a2, a3});
        QCOMPARE(shape(s.points),
                QStringList({u"acc:1:0"_qs, u"acc:3:1"_qs, u"acc:3:2"_qs, u"loss:2:0"_qs, u"loss:2:1"_qs,
                        u"loss:2:2"_qs, u"loss:2:3"_qs, u"loss:3:4"_qs, u"loss:3:5"_qs, u"loss:3:6"_qs}));
        QCOMPARE(s.resumes.size(), 3);
        // acc: attempt 3 at step 1 replaced attempt 1's step 1.
        QCOMPARE(s.resumes[0].key, u"acc"_qs);
        QCOMPARE(s.resumes[0].run, RunId(3));
        QCOMPARE(s.resumes[0].superseded, 1);
        // loss: attempt 2 at 0 replaced all 4 of attempt 1; attempt 3 at 4
        // replaced attempt 2's 4 and 5 (attempt 1's were gone already).
        QCOMPARE(s.resumes[1].run, RunId(2));
        QCOMPARE(s.resumes[1].step, 0);
        QCOMPARE(s.resumes[1].superseded, 4);
        QCOMPARE(s.resumes[2].run, RunId(3));
        QCOMPARE(s.resumes[2].step, 4);
        QCOMPARE(s.resumes[2].superseded, 2);
    }

    // Sources are series of their own (a file's `loss` is not the console's),
    // and an attempt that logs a key first is no resume.
    void sourcesApartAndNewKeysAreNoResume()
    {
        const QList<MetricPoint> a1{pt(1, u"loss"_qs, 0, 1.0), pt(1, u"loss"_qs, 1, 0.9),
                pt(1, u"loss"_qs, 0, 5.0, MetricSource::File), pt(1, u"loss"_qs, 1, 4.0, MetricSource::File)};
        const QList<MetricPoint> a2{pt(2, u"loss"_qs, 1, 0.8), pt(2, u"lr"_qs, 1, 0.1)};
        const StitchedMetrics s = stitchAttemptMetrics({a1, a2});
        QCOMPARE(s.points.size(), 5); // console step 1 of attempt 1 replaced; the file's both kept
        QCOMPARE(s.resumes.size(), 1);
        QCOMPARE(s.resumes[0].source, MetricSource::Console);
        QCOMPARE(s.resumes[0].superseded, 1);
        int fromFile = 0;
        for (const MetricPoint& p : s.points)
            fromFile += p.source == MetricSource::File ? 1 : 0;
        QCOMPARE(fromFile, 2);
        QVERIFY(stitchAttemptMetrics({}).points.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestAttemptMetrics)
#include "TestAttemptMetrics.moc"
