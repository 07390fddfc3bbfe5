#include "console/ConsoleView.h"

#include "TestSupport.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>

using namespace ty;

namespace {

// Feeds `bytes` as several live chunks with their stream offsets.
void feedInChunks(ConsoleView& view, RunId run, const QByteArray& bytes, qint64 base = 0, int chunk = 7)
{
    for (qsizetype i = 0; i < bytes.size(); i += chunk)
        view.appendBytes(run, base + i, bytes.mid(i, chunk));
}

QStringList lines(const ConsoleView& view)
{
    return view.textView()->toPlainText().split(u'\n');
}

} // namespace

class TestConsoleView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void progressBarIsOneLineAndColoursAreFormats()
    {
        ConsoleView view;
        view.resize(800, 400);
        view.show();
        view.setRun(1, {}, true);
        const QByteArray bytes = QByteArrayLiteral(
            "\x1b[32mgreen\x1b[0m plain\n"
            "  0%|          | 0/10 [00:00<?, ?it/s]\r"
            " 50%|#####     | 5/10 [00:01<00:01, 4.9it/s]\r"
            "100%|##########| 10/10 [00:02<00:00, 5.0it/s]\n"
            "\x1b[1;31mdone\x1b[0m\n");
        feedInChunks(view, 1, bytes);
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), qint64(bytes.size()), 2000);
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(lines(view), (QStringList{QStringLiteral("green plain"),
                                           QStringLiteral("100%|##########| 10/10 [00:02<00:00, 5.0it/s]"),
                                           QStringLiteral("done")}));
        const QString text = view.textView()->toPlainText();
        QVERIFY(!text.contains(QChar(0x1b)));
        QVERIFY(!text.contains(u'\r'));
        QVERIFY(!text.contains(QStringLiteral("[32m")));
        // "green" carries a green foreground, "plain" the default one.
        const QTextBlock first = view.textView()->document()->firstBlock();
        const QTextFragment greenFrag = first.begin().fragment();
        QCOMPARE(greenFrag.text(), QStringLiteral("green"));
        const QColor green = greenFrag.charFormat().foreground().color();
        QVERIFY2(green.green() > 150 && green.red() < 100 && green.blue() < 100, qPrintable(green.name()));
        QVERIFY(!(++first.begin()).fragment().charFormat().hasProperty(QTextFormat::ForegroundBrush));
        const QTextBlock last = view.textView()->document()->lastBlock();
        QCOMPARE(last.begin().fragment().charFormat().fontWeight(), int(QFont::Bold));
    }

    void stderrRowsAreMarkedFromTheSidecar()
    {
        // A finished run opened from disk: console.log plus its console.stderr
        // (as RunIngest keeps them) -> the row holding stderr bytes is tinted.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString console = dir.filePath(QStringLiteral("console.log"));
        QFile c(console);
        QVERIFY(c.open(QIODevice::WriteOnly));
        c.write("out1\nerr1\nout2\n");
        c.close();
        QFile e(dir.filePath(QStringLiteral("console.stderr")));
        QVERIFY(e.open(QIODevice::WriteOnly));
        e.write("5 5\n");
        e.close();

        ConsoleView view;
        view.resize(800, 400);
        view.show();
        view.setRun(7, console, false);
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), qint64(15), 2000);
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(lines(view), (QStringList{QStringLiteral("out1"), QStringLiteral("err1"), QStringLiteral("out2")}));
        const QTextDocument* doc = view.textView()->document();
        QList<bool> marked;
        for (QTextBlock b = doc->begin(); b.isValid(); b = b.next())
            marked << b.blockFormat().boolProperty(ConsoleView::kStderrProperty);
        QCOMPARE(marked, (QList<bool>{false, true, false}));
        const QTextBlock err = doc->findBlockByNumber(1);
        QVERIFY(err.blockFormat().background().style() != Qt::NoBrush);
        QVERIFY(doc->findBlockByNumber(0).blockFormat().background().style() == Qt::NoBrush);
    }

    void oldestRowsAreTrimmedAtTheCap()
    {
        // More rows than the cap, live, in chunks that end mid-row, with a
        // coloured row and a progress bar at the end: the document keeps the
        // newest kMaxBlocks rows, in order, and the pending bar after them.
        ConsoleView view;
        view.resize(800, 400);
        view.show();
        view.setRun(1, {}, true);
        const int total = ConsoleView::kMaxBlocks + 5003;
        QByteArray bytes;
        for (int i = 0; i < total; ++i) {
            if (i == total - 2)
                bytes += "\x1b[31mrow " + QByteArray::number(i) + "\x1b[0m\n";
            else
                bytes += "row " + QByteArray::number(i) + '\n';
        }
        bytes += "  7%|#   | 7/100\r";
        for (qsizetype i = 0; i < bytes.size(); i += 65536)
            view.appendBytes(1, i, bytes.mid(i, 65536));
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), qint64(bytes.size()), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(view.isIdle(), 10000);
        QTextDocument* doc = view.textView()->document();
        QCOMPARE(doc->blockCount(), ConsoleView::kMaxBlocks);
        // The renderer's live region (the last rows and the bar) is pending:
        // shown after the committed rows and counted in the cap, so the
        // oldest row kept is the one after the first total + 1 - kMaxBlocks.
        QVERIFY(view.pendingRowCount() >= 1);
        QCOMPARE(doc->firstBlock().text(), QStringLiteral("row %1").arg(total + 1 - ConsoleView::kMaxBlocks));
        QCOMPARE(doc->findBlockByNumber(ConsoleView::kMaxBlocks - 2).text(), QStringLiteral("row %1").arg(total - 1));
        QCOMPARE(doc->lastBlock().text(), QStringLiteral("  7%|#   | 7/100"));
        const QTextBlock red = doc->findBlockByNumber(ConsoleView::kMaxBlocks - 3);
        QCOMPARE(red.text(), QStringLiteral("row %1").arg(total - 2));
        QVERIFY(red.begin().fragment().charFormat().foreground().color().red() > 150);
        // Consecutive rows, nothing lost or doubled inside the kept window.
        for (int b = 0; b < ConsoleView::kMaxBlocks - 1; b += 997)
            QCOMPARE(doc->findBlockByNumber(b).text(), QStringLiteral("row %1").arg(total + 1 - ConsoleView::kMaxBlocks + b));
    }

    void liveUpdateIsQuickAndReplacesTheBarInPlace()
    {
        ConsoleView view;
        view.show();
        view.setRun(7, {}, true);
        QTest::qWait(50);
        QElapsedTimer t;
        t.start();
        view.appendBytes(7, 0, QByteArrayLiteral("epoch 1\n 10%|#         | 1/10\r"));
        QTRY_VERIFY_WITH_TIMEOUT(view.textView()->toPlainText().contains(QStringLiteral("1/10")), 1000);
        QVERIFY2(t.elapsed() < 250, qPrintable(QString::number(t.elapsed())));
        view.appendBytes(7, 31, QByteArrayLiteral(" 20%|##        | 2/10\r"));
        QTRY_VERIFY(view.textView()->toPlainText().contains(QStringLiteral("2/10")));
        QCOMPARE(lines(view), (QStringList{QStringLiteral("epoch 1"), QStringLiteral(" 20%|##        | 2/10")}));
        // Both rows are still in the renderer's live region (redrawable); the
        // document holds them once each.
        QCOMPARE(view.textView()->document()->blockCount(), 2);
        QCOMPARE(view.pendingRowCount(), 2);
        // Bytes of another run are ignored.
        view.appendBytes(8, 53, QByteArrayLiteral("other run\n"));
        QTest::qWait(150);
        QVERIFY(!view.textView()->toPlainText().contains(QStringLiteral("other")));
    }

    void duplicateBytesAreShownOnce()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("console.log"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("line1\nline2\n");
        f.close();
        ConsoleView view;
        view.setRun(3, path, false);
        QTRY_COMPARE(view.bytesShown(), qint64(12));
        // Live bytes overlapping what the file had, then the same chunk again.
        view.appendBytes(3, 6, QByteArrayLiteral("line2\nline3\n"));
        view.appendBytes(3, 6, QByteArrayLiteral("line2\nline3\n"));
        view.appendBytes(3, 0, QByteArrayLiteral("line1\n"));
        view.appendBytes(3, 18, QByteArrayLiteral("line4\n"));
        QTRY_COMPARE(view.bytesShown(), qint64(24));
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(lines(view), (QStringList{QStringLiteral("line1"), QStringLiteral("line2"), QStringLiteral("line3"),
                                           QStringLiteral("line4")}));
    }

    void invalidUtf8ShowsReplacementCharacter()
    {
        ConsoleView view;
        view.setRun(2, {}, true);
        view.appendBytes(2, 0, QByteArrayLiteral("bad \xff\xfe byte \xc3\xa9t\xc3\n"));
        QTRY_VERIFY(view.textView()->toPlainText().contains(QStringLiteral("byte")));
        QTRY_VERIFY(view.isIdle());
        const QString text = view.textView()->toPlainText();
        QVERIFY2(text.startsWith(QStringLiteral("bad \uFFFD\uFFFD byte \u00e9t\uFFFD")), qPrintable(text));
    }

    void tenMegabyteLineDoesNotFreeze()
    {
        ConsoleView view;
        view.resize(800, 400);
        view.show();
        view.setRun(5, {}, true);
        // Watch the event loop: the longest pause between 10 ms ticks.
        QElapsedTimer sinceTick;
        qint64 worstGap = 0;
        QTimer ticker;
        ticker.setInterval(10);
        QObject::connect(&ticker, &QTimer::timeout, [&] {
            worstGap = std::max(worstGap, sinceTick.restart());
        });
        sinceTick.start();
        ticker.start();
        const QByteArray big(10 * 1024 * 1024, 'x');
        QElapsedTimer t;
        t.start();
        view.appendBytes(5, 0, QByteArrayLiteral("before\n"));
        for (qsizetype i = 0; i < big.size(); i += 1 << 20)
            view.appendBytes(5, 7 + i, big.mid(i, 1 << 20));
        QVERIFY2(t.elapsed() < 100, qPrintable(QString::number(t.elapsed())));
        view.appendBytes(5, 7 + big.size(), QByteArrayLiteral("\nafter\n"));
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), qint64(7 + big.size() + 7), 10000);
        QTRY_VERIFY(view.isIdle());
        ticker.stop();
        qInfo("10 MB line: shown after %lld ms, longest event-loop pause %lld ms", t.elapsed(), worstGap);
        QVERIFY2(worstGap < 250, qPrintable(QStringLiteral("event loop blocked for %1 ms").arg(worstGap)));
        const QStringList l = lines(view);
        QCOMPARE(l.size(), 3);
        QCOMPARE(l.at(0), QStringLiteral("before"));
        QCOMPARE(l.at(2), QStringLiteral("after"));
        QVERIFY(l.at(1).startsWith(QStringLiteral("xxxxxxxx")));
        QVERIFY2(l.at(1).size() < 20000, qPrintable(QString::number(l.at(1).size())));
        QVERIFY(l.at(1).contains(QStringLiteral("truncated")));
        QVERIFY(l.at(1).contains(QLocale().toString(qint64(big.size()))));
    }

    void realTqdmLogFromFile()
    {
        const QString path = test::fixturePath(QStringLiteral("gpu-workstation/logs/plain_torch.log"));
        const QByteArray raw = test::readFixture(QStringLiteral("gpu-workstation/logs/plain_torch.log"));
        QVERIFY(!raw.isEmpty());
        ConsoleView view;
        view.setRun(9, path, false);
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), qint64(raw.size()), 5000);
        QTRY_VERIFY(view.isIdle());
        const QString text = view.textView()->toPlainText();
        QVERIFY(!text.contains(QChar(0x1b)));
        QVERIFY(!text.contains(u'\r'));
        // Every \r redraw of a bar replaced the row: far fewer rows than redraws.
        const qsizetype redraws = raw.count('\r');
        const qsizetype barRows = text.count(QStringLiteral("it/s]"));
        QVERIFY2(redraws > 20, qPrintable(QString::number(redraws)));
        QVERIFY2(barRows * 5 < redraws, qPrintable(QStringLiteral("%1 bar rows for %2 redraws").arg(barRows).arg(redraws)));
        QVERIFY(text.contains(QStringLiteral("val_accuracy")));
    }

    void followModeAndFind()
    {
        ConsoleView view;
        view.resize(600, 300);
        view.show();
        view.setRun(4, {}, true);
        QByteArray bytes;
        for (int i = 0; i < 500; ++i)
            bytes += QByteArrayLiteral("row ") + QByteArray::number(i) + '\n';
        view.appendBytes(4, 0, bytes);
        QTRY_VERIFY(view.textView()->toPlainText().contains(QStringLiteral("row 499")));
        QTRY_VERIFY(view.isIdle());
        QScrollBar* bar = view.textView()->verticalScrollBar();
        QVERIFY(view.followMode());
        QTRY_COMPARE(bar->value(), bar->maximum());
        QVERIFY(bar->maximum() > 0);
        // The user scrolls up: follow turns off and new output does not move the view.
        bar->setValue(10);
        QVERIFY(!view.followMode());
        QVERIFY(!view.findChild<QToolButton*>(QStringLiteral("followButton"))->isChecked());
        view.appendBytes(4, bytes.size(), QByteArrayLiteral("row 500\n"));
        QTRY_VERIFY(view.textView()->toPlainText().contains(QStringLiteral("row 500")));
        QCOMPARE(bar->value(), 10);
        view.setFollowMode(true);
        QCOMPARE(bar->value(), bar->maximum());

        // Ctrl+F opens the find bar; Enter finds, highlights every match.
        QApplication::setActiveWindow(&view);
        QVERIFY(QTest::qWaitForWindowActive(&view));
        view.textView()->setFocus();
        QTest::keyClick(view.textView(), Qt::Key_F, Qt::ControlModifier);
        QWidget* findBar = view.findChild<QWidget*>(QStringLiteral("findBar"));
        QVERIFY(findBar->isVisible());
        auto* edit = view.findChild<QLineEdit*>(QStringLiteral("findEdit"));
        QTest::keyClicks(edit, QStringLiteral("row 12"));
        QCOMPARE(view.textView()->extraSelections().size(), 11); // row 12, row 120..129
        QVERIFY(view.findNext());
        QCOMPARE(view.textView()->textCursor().selectedText(), QStringLiteral("row 12"));
        QCOMPARE(view.textView()->textCursor().blockNumber(), 12);
        QVERIFY(view.findNext());
        QCOMPARE(view.textView()->textCursor().blockNumber(), 120);
        QVERIFY(view.findPrevious());
        QCOMPARE(view.textView()->textCursor().blockNumber(), 12);
        edit->setText(QStringLiteral("no such text"));
        QVERIFY(!view.findNext());
    }
};

QTEST_MAIN(TestConsoleView)
#include "TestConsoleView.moc"
