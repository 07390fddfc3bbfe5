// Run colours stay distinct for a sweep of dozens of runs (issue 21: the
// Tableau 10 palette repeated from the 11th run, and its 7th..10th looked
// like its first ones at a glance).
#include "ui/charts/RunColour.h"

#include <QSet>
#include <QTest>

#include <array>
#include <cmath>

using namespace ty;

namespace {

// CIELAB (CIE 1976) of an 8-bit sRGB colour: the sRGB transfer function and
// matrix of IEC 61966-2-1, D65 white (0.95047, 1, 1.08883).
std::array<double, 3> lab(const QColor& c)
{
    const auto lin = [](int v) {
        const double u = v / 255.0;
        return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4);
    };
    const double r = lin(c.red()), g = lin(c.green()), b = lin(c.blue());
    const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    const auto f = [](double t) { return t > 216.0 / 24389 ? std::cbrt(t) : (24389.0 / 27 * t + 16) / 116; };
    return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

// CIE76 colour difference: Euclidean distance in CIELAB.
double deltaE76(const QColor& a, const QColor& b)
{
    const auto p = lab(a), q = lab(b);
    return std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

} // namespace

class TestRunColour : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void labOfKnownColours()
    {
        // The oracle's own check: white and black are L* 100 and 0, and
        // pure sRGB red is L* 53.24, a* 80.09, b* 67.20 (Lindbloom's tables).
        QVERIFY(std::abs(lab(Qt::white)[0] - 100.0) < 0.01);
        QVERIFY(std::abs(lab(Qt::black)[0]) < 0.01);
        const auto red = lab(QColor(255, 0, 0));
        QVERIFY2(std::abs(red[0] - 53.24) < 0.05 && std::abs(red[1] - 80.09) < 0.1 && std::abs(red[2] - 67.20) < 0.1,
                qPrintable(QStringLiteral("%1 %2 %3").arg(red[0]).arg(red[1]).arg(red[2])));
    }

    void fortyRunsGetFortyDistinctColours()
    {
        // Thresholds: a dE76 of about 2.3 is just noticeable side by side
        // (Sharma, Digital Color Imaging Handbook, 2003); 10 (over four
        // times that) keeps two thin chart lines apart at a glance, and a
        // sweep's consecutive runs (i, i + 1), plotted together most often,
        // must differ strongly: 25.
        constexpr int kRuns = 40;
        QSet<QRgb> seen;
        double minAll = 1e9, minNeighbour = 1e9;
        for (RunId i = 1; i <= kRuns; ++i) {
            seen.insert(runColour(i).rgb());
            for (RunId j = 1; j < i; ++j) {
                const double d = deltaE76(runColour(i), runColour(j));
                QVERIFY2(d >= 10.0, qPrintable(QStringLiteral("runs %1 and %2: dE76 %3").arg(i).arg(j).arg(d)));
                minAll = std::min(minAll, d);
            }
            if (i > 1)
                minNeighbour = std::min(minNeighbour, deltaE76(runColour(i), runColour(i - 1)));
        }
        QCOMPARE(seen.size(), kRuns);
        QVERIFY2(minNeighbour >= 25.0, qPrintable(QString::number(minNeighbour)));
        qInfo("40 runs: min pairwise dE76 %.2f, min neighbour dE76 %.2f", minAll, minNeighbour);
        // Stable: a function of the id only; ids <= 0 grey.
        QCOMPARE(runColour(7), runColour(7));
        QCOMPARE(runColour(0), QColor(0x80, 0x80, 0x80));
    }
};

QTEST_MAIN(TestRunColour)
#include "TestRunColour.moc"
