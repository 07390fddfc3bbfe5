// TensorBoard's debiased EMA (ui/charts/Smoothing.h) against two independent
// computations: values worked out by hand, and /usr/bin/python3 running the
// formula as TensorBoard writes it (JavaScript semantics, via QProcess).
#include "ui/charts/Smoothing.h"

#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTest>

#include <cmath>
#include <limits>
#include <vector>

using namespace ty;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool same(double a, double b)
{
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b))
        return a == b;
    return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b));
}
} // namespace

class TestSmoothing : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void handWorked()
    {
        // w = 0.5 on [1, 2, nan, 3]:
        //   last = 0.5*0 + 0.5*1 = 0.5,   /(1-0.5)   = 1
        //   last = 0.25 + 1 = 1.25,       /(1-0.25)  = 1.6666...
        //   nan passes through, n stays 2
        //   last = 0.625 + 1.5 = 2.125,   /(1-0.125) = 2.428571...
        const std::vector<double> v{1, 2, kNaN, 3};
        const std::vector<double> s = smoothEma(v, 0.5);
        QCOMPARE(s.size(), std::size_t(4));
        QVERIFY(same(s[0], 1.0));
        QVERIFY(same(s[1], 1.25 / 0.75));
        QVERIFY(std::isnan(s[2]));
        QVERIFY(same(s[3], 2.125 / 0.875));
        // Debiasing: the first smoothed value is the first value, at any weight.
        QVERIFY(same(smoothEma(std::vector<double>{4, 8}, 0.999)[0], 4.0));
        // Weight 0 is the identity; a constant series is left alone; inf passes.
        const std::vector<double> c{2, 2, 2};
        QCOMPARE(smoothEma(c, 0.9), c);
        const std::vector<double> w{1, kInf, 3};
        QCOMPARE(smoothEma(w, 0.0), w);
        QCOMPARE(smoothEma(w, 0.6)[1], kInf);
        // Out-of-range weights are clamped to [0, 0.999].
        QCOMPARE(smoothEma(w, -1.0), w);
        QVERIFY(same(smoothEma(std::vector<double>{1, 3}, 5.0)[1], smoothEma(std::vector<double>{1, 3}, 0.999)[1]));
    }

    void matchesPythonReference_data()
    {
        QTest::addColumn<double>("weight");
        QTest::newRow("0.6") << 0.6;
        QTest::newRow("0.9") << 0.9;
        QTest::newRow("0.999") << 0.999;
    }

    void matchesPythonReference()
    {
        QFETCH(double, weight);
        const QString python = QStringLiteral("/usr/bin/python3");
        if (!QFileInfo::exists(python))
            QSKIP("/usr/bin/python3 not installed");
        QRandomGenerator rng(7);
        std::vector<double> v;
        for (int i = 0; i < 2000; ++i) {
            double x = 3.0 * std::exp(-i / 500.0) + rng.generateDouble() * 0.2;
            if (i % 97 == 5)
                x = kNaN;
            if (i == 1234)
                x = kInf;
            v.push_back(x);
        }
        QStringList lines;
        for (double x : v)
            lines << QString::number(x, 'g', 17); // "nan", "inf" parse in Python
        // TensorBoard's resmoothDataset, transcribed to Python independently
        // of the C++ (math.isfinite = Number.isFinite, ** = Math.pow).
        const QString script = QStringLiteral(R"(
import math, sys
w = float(sys.argv[1])
ys = [float(l) for l in sys.stdin.read().split()]
last = 0.0 if ys else float('nan')
num = 0
const = all(y == ys[0] for y in ys)
for y in ys:
    if const or not math.isfinite(y):
        print(repr(y))
    else:
        last = last * w + (1 - w) * y
        num += 1
        d = 1 - w ** num if w != 1 else 1
        print(repr(last / d))
)");
        QProcess p;
        p.start(python, {QStringLiteral("-c"), script, QString::number(weight, 'g', 17)});
        QVERIFY(p.waitForStarted());
        p.write(lines.join(u'\n').toUtf8());
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QList<QByteArray> out = p.readAllStandardOutput().trimmed().split('\n');
        QCOMPARE(out.size(), qsizetype(v.size()));
        const std::vector<double> s = smoothEma(v, weight);
        int compared = 0;
        for (std::size_t i = 0; i < v.size(); ++i) {
            const double ref = out.at(qsizetype(i)).toDouble();
            const bool ok = out.at(qsizetype(i)) == "nan" ? std::isnan(s[i]) : same(s[i], ref);
            QVERIFY2(ok,
                    qPrintable(QStringLiteral("index %1: %2 vs python %3")
                                       .arg(i)
                                       .arg(s[i], 0, 'g', 17)
                                       .arg(QString::fromLatin1(out.at(qsizetype(i))))));
            ++compared;
        }
        QCOMPARE(compared, 2000);
        // Smoothing really changed the noisy values.
        QVERIFY(std::abs(s[1000] - v[1000]) > 1e-6);
    }
};

QTEST_MAIN(TestSmoothing)
#include "TestSmoothing.moc"
