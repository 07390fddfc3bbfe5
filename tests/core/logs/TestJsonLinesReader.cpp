// JsonLinesReader and parseLenientJson: Python's NaN/Infinity, steps, nested
// keys, bad lines, splits, over-long lines, unterminated last line, resume.
#include "ImporterTestUtil.h"
#include "tests/support/TestSupport.h"
#include "core/logs/importers/JsonLinesReader.h"
#include "core/logs/importers/LenientJson.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QFileInfo>
#include <QProcess>
#include <QTest>

#include <bit>
#include <cmath>

using namespace ty;

class TestJsonLinesReader : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void numbersMatchPythonFloat()
    {
        // Hard decimal inputs, each parsed by parseLenientJson, by
        // parseMetricNumber and by /usr/bin/python3's float(): the same
        // double, bit for bit (Python's struct.pack('<d') as the oracle).
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3")))
            QSKIP("/usr/bin/python3 is not installed (scripts/install-deps.sh installs it)");
        const QByteArray zeros400(400, '0');
        const QList<QByteArray> cases{
                "0." + zeros400 + "1",                        // underflow without an exponent: 0.0 (was +inf)
                "-0." + zeros400 + "1",                       // -0.0
                "0." + zeros400 + "1e400",                    // 0.1
                "0." + zeros400 + "1e399",                    // 0.01
                "1" + zeros400,                               // overflow without an exponent: inf
                "-1" + zeros400 + ".5",                       // -inf
                "1" + zeros400 + "e-400",                     // 1.0
                "1" + zeros400 + "e-1000",                    // 0.0
                "0.000" + zeros400 + "e99999999999999999999", // zero with a huge exponent: 0.0
                "1e99999999999999999999",                     // inf
                "1e-99999999999999999999",                    // 0.0
                "1e400",
                "-1e400",
                "1e-400",
                "-1e-400",
                "2.2250738585072011e-308",
                "2.2250738585072012e-308",
                "2.2250738585072014e-308",
                "4.9406564584124654e-324",
                "2.4703282292062327e-324",
                "2.4703282292062328e-324",
                "1.7976931348623157e308",
                "1.7976931348623158e308",
                "1.7976931348623159e308",
                "9007199254740993.0",
                "0.1",
                "123456789012345678901234567890",
                "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899",
                "7.2057594037927933e16",
                "0.30000000000000004",
                "-0.0",
                "8.98846567431158e307",
        };
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"),
                {QStringLiteral("-c"),
                        QStringLiteral("import struct, sys\nfor line in sys.stdin.read().split():\n"
                                       "    print(struct.unpack('<Q', struct.pack('<d', float(line)))[0])\n")});
        QVERIFY(py.waitForStarted());
        py.write(cases.join('\n') + '\n');
        py.closeWriteChannel();
        QVERIFY(py.waitForFinished(30000));
        QCOMPARE(py.exitCode(), 0);
        const QList<QByteArray> bits = py.readAllStandardOutput().trimmed().split('\n');
        QCOMPARE(bits.size(), cases.size());
        auto bitsOf = [](double d) { return QByteArray::number(std::bit_cast<quint64>(d)); };
        for (qsizetype i = 0; i < cases.size(); ++i) {
            const QByteArray& text = cases[i];
            const QByteArray label = text.size() > 60
                    ? text.first(20) + "...(" + QByteArray::number(text.size()) + " chars)..." + text.last(20)
                    : text;
            const Result<QJsonValue> v = parseLenientJson(text);
            QVERIFY2(v.has_value(), label.constData());
            QVERIFY2(v->isDouble() || v->toDouble() == 0.0, label.constData());
            // QJsonValue itself drops the sign of -0.0 (Qt 6.4 stores it as
            // integer 0): there the value, elsewhere the bits.
            const bool negativeZero = bits[i] == bitsOf(-0.0);
            QVERIFY2(negativeZero ? v->toDouble() == 0.0 : bitsOf(v->toDouble()) == bits[i],
                    QByteArray(label + " json: " + bitsOf(v->toDouble()) + " python: " + bits[i]).constData());
            const std::optional<double> m = parseMetricNumber(text);
            QVERIFY2(m.has_value(), label.constData());
            QVERIFY2(bitsOf(*m) == bits[i],
                    QByteArray(label + " parseMetricNumber: " + bitsOf(*m) + " python: " + bits[i]).constData());
        }
    }

    void lenientJson()
    {
        const Result<QJsonValue> v = parseLenientJson(
                R"({"a": NaN, "b": -Infinity, "c": [1, 2.5e3, "x\u00e9\ud83d\ude00"], "d": {"e": 9007199254740993}, "f": 1e999, "g": -1e-999})");
        QVERIFY2(v.has_value(), v ? "" : qPrintable(v.error().message));
        const QJsonObject o = v->toObject();
        QVERIFY(std::isnan(o["a"].toDouble()));
        QCOMPARE(o["b"].toDouble(), -std::numeric_limits<double>::infinity());
        QCOMPARE(o["c"].toArray()[1].toDouble(), 2500.0);
        QCOMPARE(o["c"].toArray()[2].toString(), QStringLiteral("x\u00e9\U0001F600"));
        QCOMPARE(o["d"].toObject()["e"].toInteger(), Q_INT64_C(9007199254740993)); // exact beyond 2^53
        QCOMPARE(o["f"].toDouble(), std::numeric_limits<double>::infinity());
        QCOMPARE(o["g"].toDouble(), 0.0);

        const auto flat = flattenJsonNumbers(o);
        QCOMPARE(flat.size(), 5); // a, b, d.e, f, g (arrays and strings are not numbers)
        QCOMPARE(flat[2].first, QStringLiteral("d.e"));

        struct Bad {
            const char* text;
            const char* error;
        };
        for (const Bad& b : {Bad{"{\"a\": 1,}", "byte 8: expected a string key"},
                     Bad{"{\"a\" 1}", "byte 5: expected ':'"}, Bad{"[01]", "leading zero in a number"},
                     Bad{"{\"a\": nan}", "byte 6: unexpected character 'n'"}, Bad{"\"abc", "unterminated string"},
                     Bad{"{} x", "byte 3: unexpected data after the JSON value"}, Bad{"\"\\q\"", "invalid escape"},
                     Bad{"", "unexpected end of input"}}) {
            const Result<QJsonValue> r = parseLenientJson(b.text);
            QVERIFY2(!r, b.text);
            QVERIFY2(r.error().message.contains(QLatin1String(b.error)), qPrintable(r.error().message));
        }
        const QByteArray deep = QByteArray(100, '[') + QByteArray(100, ']');
        QVERIFY(!parseLenientJson(deep));
        QVERIFY(parseLenientJson(deep, 200));

        QCOMPARE(parseMetricNumber(" 1.5 "), std::optional<double>(1.5));
        QCOMPARE(parseMetricNumber("-INF"), std::optional<double>(-std::numeric_limits<double>::infinity()));
        QVERIFY(std::isnan(*parseMetricNumber("NaN")));
        QCOMPARE(parseMetricNumber("+2e3"), std::optional<double>(2000.0));
        QCOMPARE(parseMetricNumber("1e400"), std::optional<double>(std::numeric_limits<double>::infinity()));
        QCOMPARE(parseMetricNumber("abc"), std::nullopt);
        QCOMPARE(parseMetricNumber("1.5x"), std::nullopt);
        QCOMPARE(parseMetricNumber("--1"), std::nullopt);
        QCOMPARE(parseMetricNumber(""), std::nullopt);
    }

    void linesAndSteps()
    {
        const QByteArray text
                = "{\"step\": 10, \"wall_time\": 1767225600.25, \"loss\": 0.5, \"epoch\": 1.5, \"val\": {\"acc\": 0.9}}\n"
                  "{\"loss\": NaN}\n"                                 // no step: loss continues from 10
                  "\n"                                                // blank line
                  "not json\n"                                        // warned, skipped
                  "[1, 2]\n"                                          // not an object
                  "{\"lr\": 1e-3, \"note\": \"x\", \"ok\": true}\r\n" // lr's first: step 0
                  "{\"step\": 2.5, \"loss\": 1}\n"                    // bad step: skipped
                  "{\"global_step\": 7, \"loss\": -Infinity, \"timestamp\": 1767225601}\n"
                  "{\"loss\": 3}"; // unterminated last line: read by finish()
        for (qsizetype chunk : {qsizetype(1), qsizetype(5), qsizetype(text.size())}) {
            JsonLinesReader r(QStringLiteral("m.jsonl"));
            const QList<ImportedMetric> ms = test::readInChunks(r, text, chunk);
            QVERIFY2(!r.hasError(), qPrintable(r.error()));
            QCOMPARE(ms.size(), 6);
            QCOMPARE(ms[0], (ImportedMetric{"loss", 10, 1.5, 0.5, Q_INT64_C(1767225600250)}));
            QCOMPARE(ms[1], (ImportedMetric{"val.acc", 10, 1.5, 0.9, Q_INT64_C(1767225600250)}));
            QCOMPARE(ms[2].key, QStringLiteral("loss"));
            QCOMPARE(ms[2].step, 11);
            QVERIFY(std::isnan(ms[2].value));
            QVERIFY(!ms[2].wallTimeMs);
            QCOMPARE(ms[3], (ImportedMetric{"lr", 0, std::nullopt, 1e-3, std::nullopt}));
            QCOMPARE(ms[4],
                    (ImportedMetric{"loss", 7, std::nullopt, -std::numeric_limits<double>::infinity(),
                            Q_INT64_C(1767225601000)}));
            QCOMPARE(ms[5], (ImportedMetric{"loss", 8, std::nullopt, 3.0, std::nullopt})); // the unterminated last line
            QCOMPARE(r.warningCount(), 3);
            QVERIFY2(r.warnings()[0].startsWith(QLatin1String("m.jsonl: line 4 at byte offset")),
                    qPrintable(r.warnings()[0]));
            QVERIFY(r.warnings()[1].contains(QLatin1String("line 5"))
                    && r.warnings()[1].contains(QLatin1String("not a JSON object")));
            QVERIFY(r.warnings()[2].contains(QLatin1String("line 7"))
                    && r.warnings()[2].contains(QLatin1String("step is not an integer")));
            QCOMPARE(r.consumedOffset(), qint64(text.size()));
            QCOMPARE(r.linesRead(), 9);
        }
    }

    void truncatedLastLineAndResume()
    {
        const QByteArray text = "{\"step\": 1, \"loss\": 1}\n{\"step\": 2, \"loss\": 2}\n{\"step\": 3, \"lo";
        JsonLinesReader r(QStringLiteral("t.jsonl"));
        r.feed(text);
        QCOMPARE(r.takeMetrics().size(), 2);
        const qint64 third = text.indexOf("{\"step\": 3");
        QCOMPARE(third, 46);
        QCOMPARE(r.consumedOffset(), third);
        QCOMPARE(r.linesRead(), 2);
        QVERIFY(!r.hasError()); // live: the writer may still finish the line
        // Resume from the reader's offset with the rest of the line appended.
        JsonLinesReader r2({}, r.consumedOffset(), r.linesRead());
        r2.feed(QByteArrayView(text).sliced(third));
        r2.feed("ss\": 3}\n");
        const QList<ImportedMetric> ms = r2.takeMetrics();
        QCOMPARE(ms.size(), 1);
        QCOMPARE(ms[0].step, 3);
        QCOMPARE(r2.consumedOffset(), qint64(text.size() + 8));
        QCOMPARE(r2.linesRead(), 3);
        // At the end of the file, a half-written line is the error, at its offset.
        r.finish();
        QVERIFY(r.hasError());
        QCOMPARE(r.errorOffset(), third);
        QVERIFY2(
                r.error().startsWith(QLatin1String("t.jsonl: line 3 at byte offset 46 (unterminated, at end of file)")),
                qPrintable(r.error()));
        // Counters of step-less keys carry over with setLastStep().
        JsonLinesReader r3;
        r3.setLastStep(QStringLiteral("acc"), 41);
        r3.feed("{\"acc\": 1}\n");
        QCOMPARE(r3.takeMetrics().first().step, 42);
    }

    void overlongLine()
    {
        QByteArray big = "{\"x\": \"" + QByteArray(JsonLinesReader::kMaxLineBytes + 10, 'a')
                + "\"}\n{\"step\": 5, \"y\": 1}\n";
        JsonLinesReader r;
        const QList<ImportedMetric> ms = test::readInChunks(r, big, 1 << 20);
        QCOMPARE(ms.size(), 1);
        QCOMPARE(ms[0].key, QStringLiteral("y"));
        QCOMPARE(r.warningCount(), 1);
        QVERIFY(r.warnings()[0].contains(QLatin1String("line 1 at byte offset 0 skipped: longer than")));
        QCOMPARE(r.consumedOffset(), qint64(big.size()));
        QCOMPARE(r.linesRead(), 2);
    }
};

QTEST_GUILESS_MAIN(TestJsonLinesReader)
#include "TestJsonLinesReader.moc"
