// CsvMetricsReader: Lightning's real metrics.csv (sparse columns), RFC 4180
// quoting, nan/inf, bad cells, splits, resume.
#include "ImporterTestUtil.h"
#include "tests/support/TestSupport.h"
#include "core/logs/importers/CsvMetricsReader.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QProcess>
#include <QTest>

#include <cmath>

using namespace ty;

using test::byKey;

class TestCsvMetricsReader : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void lightningFixture()
    {
        const QByteArray file
                = test::readFixture(QStringLiteral("gpu-workstation/frameworks/lightning-csv/metrics.csv"));
        QVERIFY(!file.isEmpty());
        CsvMetricsReader r;
        const QList<ImportedMetric> ms = test::readInChunks(r, file, file.size());
        QVERIFY2(!r.hasError(), qPrintable(r.error()));
        QCOMPARE(r.warningCount(), 0);
        QCOMPARE(r.header(), (QStringList{"epoch", "step", "train_loss", "val_acc", "val_loss"}));
        QCOMPARE(r.headerLine(), QByteArray("epoch,step,train_loss,val_acc,val_loss"));
        QCOMPARE(r.rowsRead(), 33);
        QCOMPARE(r.consumedOffset(), qint64(file.size()));
        const auto keys = byKey(ms);
        QCOMPARE(keys.keys(), (QStringList{"train_loss", "val_acc", "val_loss"})); // step/epoch are not samples
        QCOMPARE(keys["train_loss"].size(), 27);
        QCOMPARE(keys["val_acc"].size(), 6);
        QCOMPARE(keys["val_loss"].size(), 6);
        QCOMPARE(ms.size(), 27 + 6 + 6); // empty cells give nothing
        QCOMPARE(keys["train_loss"][0], (ImportedMetric{"train_loss", 4, 0.0, 2.268441677093506, std::nullopt}));
        QCOMPARE(keys["val_loss"][0], (ImportedMetric{"val_loss", 22, 0.0, 2.037091016769409, std::nullopt}));
        QCOMPARE(keys["val_acc"].last(), (ImportedMetric{"val_acc", 137, 5.0, 0.9055555462837219, std::nullopt}));
        // Row "4,114,0.676...,," and row "4,114,,0.897...,0.694..." share step 114.
        QCOMPARE(keys["train_loss"][22].step, 114);
        QCOMPARE(keys["val_acc"][4].step, 114);
        for (qsizetype chunk : {1, 3, 64}) {
            CsvMetricsReader r2;
            QCOMPARE(test::readInChunks(r2, file, chunk), ms);
        }
        // Resume before row 10 with the header the first reader saw.
        CsvMetricsReader a;
        const qsizetype cut = file.indexOf("1,44,");
        a.feed(QByteArrayView(file).first(cut + 3)); // ends mid-row
        QList<ImportedMetric> got = a.takeMetrics();
        QCOMPARE(a.consumedOffset(), qint64(cut));
        QCOMPARE(a.rowsRead(), 9); // "1,44," is data row 10
        CsvMetricsReader b({}, a.consumedOffset(), a.header(), a.rowsRead());
        b.feed(QByteArrayView(file).sliced(a.consumedOffset()));
        b.finish();
        got += b.takeMetrics();
        QCOMPARE(got, ms);
        QCOMPARE(b.rowsRead(), 33);
    }

    void strayQuoteReadsAsPythonCsv()
    {
        // Lightning's real metrics.csv with stray quotes written into
        // unquoted cells: every row after them must still be read, and every
        // cell split as /usr/bin/python3's csv module (default dialect) splits
        // the same bytes. Python's rows are the oracle: its numeric cells (by
        // float()) become the expected samples.
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3")))
            QSKIP("/usr/bin/python3 is not installed (scripts/install-deps.sh installs it)");
        QByteArray file = test::readFixture(QStringLiteral("gpu-workstation/frameworks/lightning-csv/metrics.csv"));
        QVERIFY(file.contains("\r\n0,9,2.209444046020508,,\r\n"));            // Python's csv writer: CR LF
        file.replace("0,9,2.209444046020508,,", "0,9,2.2094\"44046020508,,"); // a stray quote mid-cell
        file.replace("1,44,", "1,44\",");                                     // one at a cell's end
        file.replace("\r\n2,", "\n2,");                                       // LF and CR LF mixed
        file.append("5,200,\"0.25\"x,,\r6,201,0.125,,\n");                    // text after a closing quote; a lone CR

        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"),
                {QStringLiteral("-c"),
                        QStringLiteral("import csv, io, json, sys\n"
                                       "rows = list(csv.reader(io.TextIOWrapper(sys.stdin.buffer, newline='')))\n"
                                       "json.dump(rows, sys.stdout)\n")});
        QVERIFY(py.waitForStarted());
        py.write(file);
        py.closeWriteChannel();
        QVERIFY(py.waitForFinished(30000));
        QCOMPARE(py.exitCode(), 0);
        const QJsonArray rows = QJsonDocument::fromJson(py.readAllStandardOutput()).array();
        QCOMPARE(rows.size(), 36); // header + 33 rows + 2 appended

        QList<ImportedMetric> expected;
        const QJsonArray header = rows.at(0).toArray();
        const int stepCol = 1, epochCol = 0;
        QCOMPARE(header.at(stepCol).toString(), QStringLiteral("step"));
        int notNumbers = 0, badSteps = 0;
        for (qsizetype r = 1; r < rows.size(); ++r) {
            const QJsonArray row = rows.at(r).toArray();
            bool stepOk = false;
            const qint64 step = row.at(stepCol).toString().toLongLong(&stepOk);
            if (!stepOk) { // `44"`: the reader skips a row whose step is not an integer
                QCOMPARE(row.at(stepCol).toString(), QStringLiteral("44\""));
                ++badSteps;
                continue;
            }
            const std::optional<double> epoch = row.at(epochCol).toString().toDouble();
            for (int c = 2; c < header.size() && c < row.size(); ++c) {
                const QString cell = row.at(c).toString();
                if (cell.isEmpty())
                    continue;
                bool ok = false;
                const double v = cell.toDouble(&ok);
                if (!ok) {
                    ++notNumbers;
                    continue;
                }
                expected.append(ImportedMetric{header.at(c).toString(), step, epoch, v, std::nullopt});
            }
        }
        QCOMPARE(notNumbers, 2); // `2.2094"44046020508` and `0.25x`
        QCOMPARE(badSteps, 1);
        QCOMPARE(expected.size(),
                27 + 6 + 6 - 1 - 1 + 1); // the fixture's 39, less the bad cell and row 10's, plus 0.125
        for (qsizetype chunk : {qsizetype(1), qsizetype(7), file.size()}) {
            CsvMetricsReader r(QStringLiteral("metrics.csv"));
            const QList<ImportedMetric> ms = test::readInChunks(r, file, chunk);
            QVERIFY2(!r.hasError(), qPrintable(r.error()));
            QCOMPARE(r.rowsRead(), 35);
            QCOMPARE(ms, expected);
            QCOMPARE(r.warningCount(), 3); // the two cells and the step `44"`
            QVERIFY2(r.warnings()[0].contains(QLatin1String("row 2 at byte offset")), qPrintable(r.warnings()[0]));
            QVERIFY(r.warnings()[0].contains(QLatin1String("'2.2094\"44046020508' is not a number")));
        }
    }

    void quotingAndSpecialValues()
    {
        const QByteArray csv = "step,\"val,loss\",\"say \"\"hi\"\"\",acc,epoch\r\n"
                               "0,nan,1.5,inf,0\r\n"
                               "1,\"-Infinity\",\"2\",1e-3,0.5\r\n"
                               "2,,\"multi\nline\",+7,1\r\n"
                               "3,1,2,3"; // last row without line ending: read by finish()
        CsvMetricsReader r(QStringLiteral("q.csv"));
        const QList<ImportedMetric> ms = test::readInChunks(r, csv, 2);
        QVERIFY2(!r.hasError(), qPrintable(r.error()));
        QCOMPARE(r.header(), (QStringList{"step", "val,loss", "say \"hi\"", "acc", "epoch"}));
        const auto keys = byKey(ms);
        QCOMPARE(keys["val,loss"].size(), 3);
        QVERIFY(std::isnan(keys["val,loss"][0].value));
        QCOMPARE(keys["val,loss"][1].value, -std::numeric_limits<double>::infinity());
        QCOMPARE(keys["val,loss"][2].step, 3);
        QCOMPARE(keys["acc"][0].value, std::numeric_limits<double>::infinity());
        QCOMPARE(keys["acc"][1].value, 1e-3);
        QCOMPARE(keys["acc"][1].epoch, std::optional<double>(0.5));
        QCOMPARE(keys["acc"][2].value, 7.0);
        QCOMPARE(keys["acc"][3].epoch, std::nullopt);
        // "multi\nline" is one quoted cell, not a number: warned, row still read.
        QCOMPARE(keys["say \"hi\""].size(), 3);
        QCOMPARE(r.warningCount(), 1);
        QVERIFY2(r.warnings()[0].contains(QLatin1String("row 3 at byte offset")), qPrintable(r.warnings()[0]));
        QVERIFY(r.warnings()[0].contains(QLatin1String("column 'say \"hi\"'")));
        QCOMPARE(r.rowsRead(), 4);
    }

    void badInput()
    {
        // No step column: the row number is the step. Extra cells and a bad step are warned about.
        const QByteArray csv = "loss,acc\n1,2\n3\n\n4,5,6\n";
        CsvMetricsReader r;
        const QList<ImportedMetric> ms = test::readInChunks(r, csv, csv.size());
        const auto keys = byKey(ms);
        QCOMPARE(keys["loss"].size(), 3);
        QCOMPARE(keys["loss"][2].step, 2); // blank line is not a row
        QCOMPARE(keys["acc"].size(), 2);
        QCOMPARE(r.warningCount(), 1);
        QVERIFY(r.warnings()[0].contains(QLatin1String("3 cells for 2 columns")));

        const QByteArray badStep = "step,loss\n1.5,2\nx,3\n7,4\n,5\n";
        CsvMetricsReader r2;
        const QList<ImportedMetric> ms2 = test::readInChunks(r2, badStep, 4);
        QCOMPARE(ms2.size(), 2);
        QCOMPARE(ms2[0].step, 7);
        QCOMPARE(ms2[1].step, 8); // empty step cell: previous step + 1
        QCOMPARE(r2.warningCount(), 2);
        QVERIFY(r2.warnings()[0].contains(
                QLatin1String("row 1 at byte offset 10 skipped: step '1.5' is not an integer")));

        // An unterminated quote at end of file is the error; rows before it count.
        const QByteArray openQuote = "step,loss\n1,2\n2,\"3\n";
        CsvMetricsReader r3(QStringLiteral("o.csv"));
        const QList<ImportedMetric> ms3 = test::readInChunks(r3, openQuote, openQuote.size());
        QCOMPARE(ms3.size(), 1);
        QVERIFY(r3.hasError());
        QCOMPARE(r3.errorOffset(), 14);
        QCOMPARE(
                r3.error(), QStringLiteral("o.csv: row 2 at byte offset 14: unterminated quoted field at end of file"));
    }
};

QTEST_GUILESS_MAIN(TestCsvMetricsReader)
#include "TestCsvMetricsReader.moc"
