// MetricBlock: the packed `points` BLOB of a metric_blocks row (schema 5,
// format in core/store/MetricBlock.h): encode/parse round trips with the
// values SQLite's REAL column would mangle, every malformed header and size
// rejected, countBelow and the column appends.
#include "core/store/MetricBlock.h"

#include <QTest>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

using namespace ty;

namespace {

bool sameBits(double a, double b)
{
    return std::bit_cast<quint64>(a) == std::bit_cast<quint64>(b);
}

std::vector<MetricBlockPoint> somePoints(int n, bool epochs)
{
    std::vector<MetricBlockPoint> pts(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        MetricBlockPoint& p = pts[std::size_t(i)];
        p.id = 1'000'000'000'000LL + 3 * i;
        p.step = -7 + 5 * qint64(i);
        p.wallMs = 1'700'000'000'000LL + 17 * i;
        p.value = 0.5 * i - 3.0;
        if (epochs && i % 3 != 1)
            p.epoch = i * 0.125;
    }
    return pts;
}

// Header fields of an encoded block, rewritten in place.
void putU32(QByteArray& b, int offset, quint32 v)
{
    std::memcpy(b.data() + offset, &v, sizeof v);
}

bool parses(const QByteArray& b)
{
    return MetricBlockView::parse(b.constData(), std::size_t(b.size())).has_value();
}

} // namespace

class TestMetricBlock final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void specialValuesKeptBitForBit();
    void malformedRejected();
    void countBelow();
    void appendColumnsPrefix();
};

void TestMetricBlock::roundTrip_data()
{
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("epochs");
    for (int n : {1, 2, 37, kMetricBlockPoints})
        for (bool e : {false, true})
            QTest::addRow("n=%d%s", n, e ? " epochs" : "") << n << e;
}

void TestMetricBlock::roundTrip()
{
    QFETCH(int, n);
    QFETCH(bool, epochs);
    const auto pts = somePoints(n, epochs);
    const QByteArray b = encodeMetricBlock(pts.data(), n);
    // 16-byte header, 32 bytes a point, 9 more with epochs (MetricBlock.h).
    QCOMPARE(b.size(), qsizetype(16 + 32 * n + (epochs ? 9 * n : 0)));
    quint32 head[4];
    std::memcpy(head, b.constData(), sizeof head);
    QCOMPARE(head[0], kMetricBlockMagic);
    QCOMPARE(QByteArray(b.constData(), 4), QByteArray("BLK1"));
    QCOMPARE(head[1], quint32(n));
    QCOMPARE(head[2], epochs ? 1u : 0u);
    QCOMPARE(head[3], 0u);

    const auto v = MetricBlockView::parse(b.constData(), std::size_t(b.size()));
    QVERIFY(v);
    QCOMPARE(v->count(), n);
    QCOMPARE(v->hasEpochs(), epochs);
    for (int i = 0; i < n; ++i) {
        const MetricBlockPoint& p = pts[std::size_t(i)];
        QCOMPARE(v->id(i), p.id);
        QCOMPARE(v->step(i), p.step);
        QCOMPARE(v->wallMs(i), p.wallMs);
        QVERIFY(sameBits(v->value(i), p.value));
        QCOMPARE(v->epoch(i), p.epoch);
        const MetricBlockPoint q = v->point(i);
        QCOMPARE(q.id, p.id);
        QCOMPARE(q.step, p.step);
        QCOMPARE(q.wallMs, p.wallMs);
        QVERIFY(sameBits(q.value, p.value));
        QCOMPARE(q.epoch, p.epoch);
    }
    // The view reads unaligned bytes: the same block one byte further on.
    QByteArray shifted = QByteArray(1, 'x') + b;
    const auto w = MetricBlockView::parse(shifted.constData() + 1, std::size_t(b.size()));
    QVERIFY(w);
    QCOMPARE(w->step(n - 1), pts.back().step);
    QCOMPARE(w->id(n - 1), pts.back().id);
}

void TestMetricBlock::specialValuesKeptBitForBit()
{
    const double nanPayload = std::bit_cast<double>(quint64(0x7ff8'0000'dead'beefULL));
    const double values[]
            = {std::numeric_limits<double>::quiet_NaN(), nanPayload, -std::numeric_limits<double>::quiet_NaN(),
                    std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), -0.0, 0.0,
                    std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(), 1e-300};
    std::vector<MetricBlockPoint> pts;
    for (std::size_t i = 0; i < std::size(values); ++i)
        pts.push_back(
                {qint64(i + 1), qint64(i), qint64(i), values[i], i == 2 ? std::optional<double>(-0.0) : std::nullopt});
    pts[4].epoch = std::numeric_limits<double>::infinity();
    const QByteArray b = encodeMetricBlock(pts.data(), int(pts.size()));
    const auto v = MetricBlockView::parse(b.constData(), std::size_t(b.size()));
    QVERIFY(v);
    for (int i = 0; i < v->count(); ++i)
        QVERIFY2(sameBits(v->value(i), values[i]), qPrintable(QStringLiteral("point %1").arg(i)));
    QVERIFY(v->epoch(2) && sameBits(*v->epoch(2), -0.0));
    QVERIFY(v->epoch(4) && std::isinf(*v->epoch(4)));
    QCOMPARE(v->epoch(0), std::nullopt); // stored as 0.0, absent by its flag
    std::vector<double> col;
    v->appendValues(col, v->count());
    for (std::size_t i = 0; i < col.size(); ++i)
        QVERIFY(sameBits(col[i], values[i]));
}

void TestMetricBlock::malformedRejected()
{
    const auto pts = somePoints(5, true);
    const QByteArray good = encodeMetricBlock(pts.data(), 5);
    const auto plain = somePoints(5, false);
    const QByteArray goodPlain = encodeMetricBlock(plain.data(), 5);
    QVERIFY(parses(good));
    QVERIFY(parses(goodPlain));

    QVERIFY(!MetricBlockView::parse(nullptr, 0));
    QVERIFY(!MetricBlockView::parse(nullptr, std::size_t(good.size())));
    for (int size = 0; size < 16; ++size)
        QVERIFY2(!MetricBlockView::parse(good.constData(), std::size_t(size)), qPrintable(QString::number(size)));
    // Every size but the right one.
    for (int size = 16; size <= good.size() + 64; ++size) {
        QByteArray b = good.leftJustified(size, '\0', true);
        QCOMPARE(parses(b), size == good.size());
        QByteArray p = goodPlain.leftJustified(size, '\0', true);
        QCOMPARE(parses(p), size == goodPlain.size());
    }
    // Flags and size disagree: epochs flagged on a block without them, and not
    // flagged on one with them.
    {
        QByteArray b = goodPlain;
        putU32(b, 8, 1);
        QVERIFY(!parses(b));
        QByteArray c = good;
        putU32(c, 8, 0);
        QVERIFY(!parses(c));
    }
    // Magic: each byte wrong in turn.
    for (int i = 0; i < 4; ++i) {
        QByteArray b = good;
        b[i] = char(b[i] ^ 0x20);
        QVERIFY2(!parses(b), qPrintable(QString::number(i)));
    }
    // Count: 0, above the maximum, and one that does not match the size.
    for (quint32 n : {0u, quint32(kMetricBlockPoints) + 1, 4u, 6u, 0xffff'ffffu}) {
        QByteArray b = good;
        putU32(b, 4, n);
        QVERIFY2(!parses(b), qPrintable(QString::number(n)));
    }
    // Unknown flags, reserved word not zero.
    for (quint32 f : {2u, 3u, 0x8000'0000u}) {
        QByteArray b = good;
        putU32(b, 8, f);
        QVERIFY2(!parses(b), qPrintable(QString::number(f)));
    }
    for (quint32 r : {1u, 0x100u}) {
        QByteArray b = good;
        putU32(b, 12, r);
        QVERIFY(!parses(b));
    }
    // A count above the maximum with a size to match is refused all the same.
    {
        const int n = kMetricBlockPoints + 1;
        QByteArray b(16 + 32 * n, '\0');
        putU32(b, 0, kMetricBlockMagic);
        putU32(b, 4, quint32(n));
        QVERIFY(!parses(b));
        QByteArray ok(16 + 32 * kMetricBlockPoints, '\0');
        putU32(ok, 0, kMetricBlockMagic);
        putU32(ok, 4, quint32(kMetricBlockPoints));
        QVERIFY(parses(ok));
    }
}

void TestMetricBlock::countBelow()
{
    std::vector<MetricBlockPoint> pts;
    for (qint64 s : {-5, 0, 3, 10})
        pts.push_back({s + 100, s, 0, 0.0, {}});
    const QByteArray b = encodeMetricBlock(pts.data(), int(pts.size()));
    const auto v = MetricBlockView::parse(b.constData(), std::size_t(b.size()));
    QVERIFY(v);
    const std::pair<qint64, int> cases[] = {{std::numeric_limits<qint64>::min(), 0}, {-10, 0}, {-5, 0}, {-4, 1}, {0, 1},
            {1, 2}, {3, 2}, {4, 3}, {10, 3}, {11, 4}, {std::numeric_limits<qint64>::max(), 4}};
    for (const auto& [s, expected] : cases)
        QVERIFY2(v->countBelow(s) == expected,
                qPrintable(QStringLiteral("countBelow(%1) = %2").arg(s).arg(v->countBelow(s))));
    // One point.
    const QByteArray one = encodeMetricBlock(pts.data() + 2, 1);
    const auto w = MetricBlockView::parse(one.constData(), std::size_t(one.size()));
    QVERIFY(w);
    QCOMPARE(w->countBelow(3), 0);
    QCOMPARE(w->countBelow(4), 1);
}

void TestMetricBlock::appendColumnsPrefix()
{
    auto pts = somePoints(9, false);
    pts[3].step = (qint64(1) << 53); // exact as a double
    const QByteArray b = encodeMetricBlock(pts.data(), 9);
    const auto v = MetricBlockView::parse(b.constData(), std::size_t(b.size()));
    QVERIFY(v);
    std::vector<double> steps{42.0}, walls, values{1.0, 2.0};
    v->appendSteps(steps, 6);
    v->appendWallMs(walls, 9);
    v->appendValues(values, 0);
    QCOMPARE(steps.size(), std::size_t(7));
    QCOMPARE(steps[0], 42.0);
    for (int i = 0; i < 6; ++i)
        QCOMPARE(steps[std::size_t(i) + 1], double(pts[std::size_t(i)].step));
    QCOMPARE(steps[4], 9007199254740992.0);
    QCOMPARE(walls.size(), std::size_t(9));
    for (int i = 0; i < 9; ++i)
        QCOMPARE(walls[std::size_t(i)], double(pts[std::size_t(i)].wallMs));
    QCOMPARE(values, (std::vector<double>{1.0, 2.0}));
    v->appendValues(values, 3);
    QCOMPARE(values, (std::vector<double>{1.0, 2.0, pts[0].value, pts[1].value, pts[2].value}));
}

QTEST_GUILESS_MAIN(TestMetricBlock)
#include "TestMetricBlock.moc"
