#include "ui/console/ConsoleScrollback.h"
#include "ui/console/ConsoleTextView.h"
#include "ui/console/ConsoleView.h"
#include "core/logs/TerminalRenderer.h"

#include "tests/support/TestSupport.h"

#include <QApplication>
#include <QClipboard>
#include <QElapsedTimer>
#include <QFontMetricsF>
#include <QLabel>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QScrollBar>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>

#include <cmath>
#include <functional>

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

using Pos = ConsoleTextView::Pos;

// console.log in `dir` with rows "<prefix>0" .. "<prefix>rows-1"; "" on error.
QString writeNumberedRows(const QTemporaryDir& dir, const QByteArray& prefix, int rows)
{
    const QString path = dir.filePath(QStringLiteral("console.log"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    QByteArray block;
    for (int i = 0; i < rows; ++i) {
        block += prefix + QByteArray::number(i) + '\n';
        if (block.size() > (1 << 20) && f.write(std::exchange(block, {})) < 0)
            return {};
    }
    return f.write(block) >= 0 ? path : QString();
}

qreal charWidth(const ConsoleTextView* view)
{
    return QFontMetricsF(view->font()).horizontalAdvance(QLatin1Char('M'));
}

// "row 0\n" ... "row <n-1>\n": rows whose text says where they are.
QByteArray numberedRows(int n)
{
    QByteArray bytes;
    for (int i = 0; i < n; ++i)
        bytes += "row " + QByteArray::number(i) + '\n';
    return bytes;
}

// Resizes and shows `w` and waits until it is on screen (painting and
// mouse events need that); whether it got there.
bool showAt(QWidget& w, int width, int height)
{
    w.resize(width, height);
    w.show();
    return QTest::qWaitForWindowExposed(&w);
}

} // namespace

class TestConsoleView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void progressBarIsOneLineAndColoursAreFormats()
    {
        ConsoleView view;
        QVERIFY(showAt(view, 800, 400));
        view.setRun(1, {}, true);
        const QByteArray bytes = QByteArrayLiteral("\x1b[32mgreen\x1b[0m plain\n"
                                                   "  0%|          | 0/10 [00:00<?, ?it/s]\r"
                                                   " 50%|#####     | 5/10 [00:01<00:01, 4.9it/s]\r"
                                                   "100%|##########| 10/10 [00:02<00:00, 5.0it/s]\n"
                                                   "\x1b[1;31mdone\x1b[0m\n");
        feedInChunks(view, 1, bytes);
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), qint64(bytes.size()), 2000);
        QCOMPARE(lines(view),
                (QStringList{QStringLiteral("green plain"),
                        QStringLiteral("100%|##########| 10/10 [00:02<00:00, 5.0it/s]"), QStringLiteral("done")}));
        const QString text = view.textView()->toPlainText();
        QVERIFY(!text.contains(QChar(0x1b)));
        QVERIFY(!text.contains(u'\r'));
        QVERIFY(!text.contains(QStringLiteral("[32m")));
        // "green" carries a green foreground, " plain" the default one.
        const QList<StyleSpan> first = view.textView()->rowSpans(0);
        QCOMPARE(first.size(), 1);
        QCOMPARE(first[0].start, 0);
        QCOMPARE(first[0].length, 5);
        const QColor green = QColor::fromRgb(first[0].fg);
        QVERIFY2(green.green() > 150 && green.red() < 100 && green.blue() < 100, qPrintable(green.name()));
        const QList<StyleSpan> last = view.textView()->rowSpans(2);
        QCOMPARE(last.size(), 1);
        QVERIFY(last[0].flags & StyleSpan::Bold);
        // And it is painted so: green pixels over "green" (columns 0-4 of
        // row 0), none over " plain" nor on row 1 (the bar).
        const QImage shot = view.textView()->viewport()->grab().toImage();
        const int h = view.textView()->rowHeight();
        const int cw = int(charWidth(view.textView()));
        auto greenPixels = [&](int row, int xFrom, int xTo) {
            int n = 0;
            for (int y = row * h; y < (row + 1) * h && y < shot.height(); ++y)
                for (int x = xFrom; x < std::min(xTo, int(shot.width())); ++x) {
                    const QColor c = shot.pixelColor(x, y);
                    n += c.green() > 120 && c.red() < 100 && c.blue() < 100;
                }
            return n;
        };
        QVERIFY2(greenPixels(0, 0, 4 + 5 * cw) > 10, qPrintable(QString::number(greenPixels(0, 0, 4 + 5 * cw))));
        QCOMPARE(greenPixels(0, 4 + 6 * cw, shot.width()), 0);
        QCOMPARE(greenPixels(1, 0, shot.width()), 0);
    }

    void boldBasicColoursAreDrawnBright()
    {
        // `ls --color` directories (ESC[01;34m), git's bold headers: bold text
        // in a basic colour is drawn in its bright twin, as xterm does, and
        // the basic blue (#0000EE) lightened; the dark background kept them
        // near invisible.
        QCOMPARE(ConsoleTextView::displayColour(0xFF0000EEu, true, Qt::white), QColor(0x5c, 0x5c, 0xff));
        QCOMPARE(ConsoleTextView::displayColour(0xFF0000EEu, false, Qt::white), QColor(0x3b, 0x78, 0xff));
        QCOMPARE(ConsoleTextView::displayColour(0xFFCD0000u, true, Qt::white), QColor(0xff, 0x00, 0x00));
        QCOMPARE(ConsoleTextView::displayColour(0xFFCD0000u, false, Qt::white), QColor(0xcd, 0x00, 0x00));
        QCOMPARE(ConsoleTextView::displayColour(0xFF123456u, true, Qt::white),
                QColor(0x12, 0x34, 0x56));                                               // 256-colour / RGB: as is
        QCOMPARE(ConsoleTextView::displayColour(0, true, Qt::white), QColor(Qt::white)); // the default
        ConsoleView view;
        QVERIFY(showAt(view, 800, 400));
        view.setRun(1, {}, true);
        feedInChunks(view, 1, QByteArrayLiteral("\x1b[01;34mdirectory\x1b[0m\n\x1b[34mplainblue\x1b[0m\n"));
        QTRY_COMPARE_WITH_TIMEOUT(view.textView()->rowCount(), qint64(2), 2000);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QImage shot = view.textView()->viewport()->grab().toImage();
        const int h = view.textView()->rowHeight();
        auto count = [&](int row, const std::function<bool(const QColor&)>& is) {
            int n = 0;
            for (int y = row * h; y < (row + 1) * h && y < shot.height(); ++y)
                for (int x = 0; x < shot.width(); ++x)
                    n += is(shot.pixelColor(x, y));
            return n;
        };
        // Drawn readable on the console's background (textColour): bold blue
        // #7575FF, blue #467FFF.
        const auto bright = [](const QColor& c) {
            return c.blue() > 200 && c.red() > 105 && c.red() < 130 && c.green() > 105 && c.green() < 130;
        };
        const auto dark = [](const QColor& c) { return c.blue() > 200 && c.red() < 30 && c.green() < 30; };
        const auto light = [](const QColor& c) {
            return c.blue() > 200 && c.red() > 55 && c.red() < 80 && c.green() > 110 && c.green() < 140;
        };
        QVERIFY2(count(0, bright) > 10, qPrintable(QString::number(count(0, bright))));
        QVERIFY2(count(1, light) > 10, qPrintable(QString::number(count(1, light))));
        QCOMPARE(count(0, dark) + count(1, dark), 0);
    }

    void textIsReadableOnTheDarkBackground()
    {
        // WCAG 2 contrast, computed here (not by the code under test).
        const auto luminance = [](const QColor& c) {
            const auto lin = [](int v) {
                const double x = v / 255.0;
                return x <= 0.04045 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
            };
            return 0.2126 * lin(c.red()) + 0.7152 * lin(c.green()) + 0.0722 * lin(c.blue());
        };
        const auto contrast = [&](const QColor& a, const QColor& b) {
            const double la = luminance(a), lb = luminance(b);
            return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
        };
        const QColor bg = ConsoleTextView::kBackground;
        // xterm's bright blue, which bold blue becomes, is too dark here...
        QVERIFY(contrast(QColor(0x5c, 0x5c, 0xff), bg) < 3.5);
        // ...so bold blue (`ls` directories) is drawn a lighter bright blue, at AA.
        const QColor boldBlue = ConsoleTextView::textColour(0xFF0000EEu, true, Qt::white, bg);
        QCOMPARE(boldBlue, QColor(0x75, 0x75, 0xff));
        QVERIFY2(contrast(boldBlue, bg) >= 4.5, qPrintable(QString::number(contrast(boldBlue, bg))));
        QCOMPARE(boldBlue.hue(), 240); // still blue
        const QColor blue = ConsoleTextView::textColour(0xFF0000EEu, false, Qt::white, bg);
        QCOMPARE(blue, QColor(0x46, 0x7f, 0xff));
        QVERIFY(contrast(blue, bg) >= 4.5);
        // On the dark theme's base colour too.
        const QColor darkBase(0x1f, 0x1f, 0x1f);
        QVERIFY(contrast(ConsoleTextView::textColour(0xFF0000EEu, true, Qt::white, darkBase), darkBase) >= 4.5);
        // Every basic and bright colour, bold or not, on the console and on a stderr row.
        for (int i = 0; i < 16; ++i) {
            for (const bool bold : {false, true}) {
                for (const QColor& behind : {bg, ConsoleTextView::kStderrBackground}) {
                    const QColor c = ConsoleTextView::textColour(paletteColour(i), bold, Qt::white, behind);
                    QVERIFY2(contrast(c, behind) >= 4.5,
                            qPrintable(QStringLiteral("colour %1 bold %2 -> %3: %4:1")
                                               .arg(i)
                                               .arg(bold)
                                               .arg(c.name())
                                               .arg(contrast(c, behind))));
                }
            }
        }
        // Enough contrast already: kept as the program asked.
        QCOMPARE(ConsoleTextView::textColour(0xFF00CD00u, false, Qt::white, bg), QColor(0x00, 0xcd, 0x00));
        QCOMPARE(ConsoleTextView::textColour(0xFFFFFF00u, true, Qt::white, bg), QColor(0xff, 0xff, 0x00));
        // Black on the dark background turns grey instead of vanishing; on a
        // light span background it stays black.
        QVERIFY(contrast(ConsoleTextView::textColour(0xFF000000u, false, Qt::white, bg), bg) >= 4.5);
        QCOMPARE(ConsoleTextView::textColour(0xFF000000u, false, Qt::white, QColor(0xe5, 0xe5, 0xe5)),
                QColor(Qt::black));
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
        QVERIFY(showAt(view, 800, 400));
        view.setRun(7, console, false);
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), qint64(15), 2000);
        QCOMPARE(lines(view), (QStringList{QStringLiteral("out1"), QStringLiteral("err1"), QStringLiteral("out2")}));
        QList<bool> marked;
        for (qint64 r = 0; r < view.textView()->rowCount(); ++r)
            marked << view.textView()->rowFromStderr(r);
        QCOMPARE(marked, (QList<bool>{false, true, false}));
        // The stderr row is painted on the tinted background, the others not.
        const QImage shot = view.textView()->viewport()->grab().toImage();
        const int h = view.textView()->rowHeight();
        const int x = shot.width() - 5; // right of the text
        QCOMPARE(shot.pixelColor(x, h / 2), ConsoleTextView::kBackground);
        QCOMPARE(shot.pixelColor(x, h + h / 2), ConsoleTextView::kStderrBackground);
        QCOMPARE(shot.pixelColor(x, 2 * h + h / 2), ConsoleTextView::kBackground);
    }

    void oldestRowsAreLetGoAtTheBudget()
    {
        // More rows than a small scrollback budget holds, live, in chunks
        // that end mid-row, with a coloured row and a progress bar at the
        // end: the view keeps the newest rows, consecutive and in order,
        // within the budget, and the pending bar after them.
        ConsoleView view;
        QVERIFY(showAt(view, 800, 400));
        constexpr qsizetype kBudget = 256 * 1024;
        view.setScrollbackBudget(kBudget);
        view.setRun(1, {}, true);
        const int total = 120000;
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
        QTRY_COMPARE(view.textView()->rowText(view.textView()->rowCount() - 1), QStringLiteral("  7%|#   | 7/100"));
        const ConsoleTextView* text = view.textView();
        const ConsoleScrollback& back = text->scrollback();
        QVERIFY2(back.memoryBytes() <= kBudget, qPrintable(QString::number(back.memoryBytes())));
        QVERIFY(back.droppedRows() > 0);
        QVERIFY(view.pendingRowCount() >= 1);
        // Every row committed is either let go or held: none lost, none doubled.
        const qint64 committed = back.rowCount();
        QCOMPARE(back.droppedRows() + committed + view.pendingRowCount(), qint64(total) + 1);
        QCOMPARE(text->rowText(0), QStringLiteral("row %1").arg(back.droppedRows()));
        for (qint64 r = 0; r < committed; r += 997)
            QCOMPARE(text->rowText(r), QStringLiteral("row %1").arg(back.droppedRows() + r));
        // The red row keeps its colour (committed or pending).
        const qint64 red = text->rowCount() - 3;
        QCOMPARE(text->rowText(red), QStringLiteral("row %1").arg(total - 2));
        QCOMPARE(text->rowSpans(red).size(), 1);
        QVERIFY(QColor::fromRgb(text->rowSpans(red)[0].fg).red() > 150);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("consoleInfo"))
                        ->text()
                        .contains(QLocale().toString(back.droppedRows())));
        // Follow stayed on through every update that let rows go, and the
        // newest row is in sight.
        QVERIFY(view.followMode());
        QCOMPARE(text->firstVisibleRow() + text->rowsInSight(), text->rowCount());
    }

    void rowsNotReadOrLetGoAreCounted()
    {
        // A finished run's file far bigger than the budget: the feeder reads
        // only its last budget's worth (from a line start) and lets go of
        // rows beyond the budget; the view holds the newest rows,
        // consecutive, and the rows before them are exactly those in the
        // bytes not read plus those let go.
        QTemporaryDir dir;
        constexpr int kRows = 200000;
        const QString path = writeNumberedRows(dir, "line ", kRows);
        QVERIFY(!path.isEmpty());
        ConsoleView view;
        QVERIFY(showAt(view, 600, 300));
        view.setScrollbackBudget(128 * 1024);
        view.setRun(12, path, false);
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), QFileInfo(path).size(), 10000);
        const ConsoleTextView* text = view.textView();
        const qint64 skipped = view.skippedBytes();
        const qint64 dropped = text->scrollback().droppedRows();
        QVERIFY(skipped > 0);
        QVERIFY(dropped > 0); // 128 KiB of rows take more than 128 KiB packed (~5 bytes a row more)
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const qint64 rowsNotRead = f.read(skipped).count('\n');
        const qint64 first = rowsNotRead + dropped;
        QCOMPARE(first + text->rowCount(), qint64(kRows));
        for (qint64 r = 0; r < text->rowCount(); r += 101)
            QCOMPARE(text->rowText(r), QStringLiteral("line %1").arg(first + r));
        QCOMPARE(text->rowText(text->rowCount() - 1), QStringLiteral("line %1").arg(kRows - 1));
        const QString info = view.findChild<QLabel*>(QStringLiteral("consoleInfo"))->text();
        QVERIFY2(info.contains(QLocale().toString(dropped)) && info.contains(QStringLiteral(" MB")), qPrintable(info));
    }

    void wideCharactersTakeTwoCells()
    {
        // As in a terminal: "中文ab" puts 'a' in cell 4, under row 1's col 4,
        // and a truncated row's marker is inside the horizontal scroll range.
        ConsoleView view;
        QVERIFY(showAt(view, 400, 300));
        view.setRun(13, {}, true);
        const QByteArray longRow(20000, 'y');
        view.appendBytes(13, 0,
                "\xe4\xb8\xad\xe6\x96\x87"
                "ab\nabcdef\n"
                        + longRow + "\n" + QByteArray(300, 'z') + ":END\n");
        QTRY_COMPARE(view.textView()->rowCount(), 4);
        ConsoleTextView* text = view.textView();
        const int h = text->rowHeight();
        const qreal cw = charWidth(text);
        QCOMPARE(text->hitTest(QPoint(4 + int(4.3 * cw), h / 2)).col, 2);     // 'a' after two wide characters
        QCOMPARE(text->hitTest(QPoint(4 + int(4.3 * cw), h + h / 2)).col, 4); // 'e'
        QCOMPARE(text->hitTest(QPoint(4 + int(0.7 * cw), h / 2)).col,
                0); // the left half of '中' (cells 0-1) is before it
        QCOMPARE(text->hitTest(QPoint(4 + int(1.3 * cw), h / 2)).col, 1); // its right half is after it
        // Paint, then the range reaches the marker's end.
        text->viewport()->repaint();
        QTRY_VERIFY(text->horizontalScrollBar()->maximum() + text->viewport()->width()
                >= int((16384 + text->rowMarker(2).size()) * cw));
        QVERIFY2(text->rowMarker(2).contains(
                         QStringLiteral("%1 of %2 columns").arg(QLocale().toString(16384), QLocale().toString(20000))),
                qPrintable(text->rowMarker(2)));
        // Find scrolls sideways to a match beyond the right edge.
        text->horizontalScrollBar()->setValue(0);
        QVERIFY(text->find(QStringLiteral(":END"), false));
        QCOMPARE(text->selectionStart().row, 3);
        const int value = text->horizontalScrollBar()->value();
        QVERIFY2(
                300 * cw >= value && 304 * cw <= value + text->viewport()->width(), qPrintable(QString::number(value)));
    }

    void millionsOfRowsFromFile()
    {
        // A finished run's 2.5 million rows: all held (about 5 bytes a row
        // beyond their text), the view follows the end, and scrolling to the
        // middle draws the right rows.
        QTemporaryDir dir;
        constexpr int kRows = 2500000;
        const QString path = writeNumberedRows(dir, "step ", kRows);
        QVERIFY(!path.isEmpty());
        ConsoleView view;
        QVERIFY(showAt(view, 800, 400));
        view.setRun(11, path, false);
        QTRY_COMPARE_WITH_TIMEOUT(view.textView()->rowCount(), qint64(kRows), 30000);
        ConsoleTextView* text = view.textView();
        QCOMPARE(text->scrollback().droppedRows(), 0);
        const qint64 textBytes = QFileInfo(path).size() - kRows; // without the newlines
        QVERIFY2(text->scrollback().memoryBytes() < textBytes + 6 * kRows,
                qPrintable(QStringLiteral("%1 bytes held for %2 of text")
                                   .arg(text->scrollback().memoryBytes())
                                   .arg(textBytes)));
        QVERIFY(view.followMode());
        QCOMPARE(text->firstVisibleRow() + text->rowsInSight(), qint64(kRows));
        QCOMPARE(text->rowText(kRows - 1), QStringLiteral("step %1").arg(kRows - 1));
        text->verticalScrollBar()->setValue(1234567);
        QVERIFY(!view.followMode());
        QCOMPARE(text->firstVisibleRow(), 1234567);
        QCOMPARE(text->rowText(text->firstVisibleRow()), QStringLiteral("step 1234567"));
        // Find from there goes forward to the next match.
        text->select({1234567, 0}, {1234567, 0});
        QVERIFY(text->find(QStringLiteral("step 2000000"), false));
        QCOMPARE(text->selectionStart().row, 2000000);
        QVERIFY(text->firstVisibleRow() <= 2000000 && 2000000 < text->firstVisibleRow() + text->rowsInSight());
        // Typed into the find bar: counted once typing pauses (or when asked):
        // rows 12345, 123450-123459 and 1234500-1234599.
        view.showFindBar();
        QTest::keyClicks(view.findChild<QLineEdit*>(QStringLiteral("findEdit")), QStringLiteral("step 12345"));
        QCOMPARE(view.matchCount(), 111);
        QTRY_VERIFY(view.findChild<QLabel*>(QStringLiteral("findStatus"))->text().contains(QStringLiteral("111")));
    }

    void matchCountFollowsAppendsAndDrops()
    {
        // The find bar's count stays equal to a count over every row held
        // while rows arrive (committed and pending) and old ones are let go.
        ConsoleView view;
        QVERIFY(showAt(view, 600, 300));
        view.setRun(8, {}, true);
        view.textView()->setScrollbackBudget(64 * 1024);
        view.showFindBar();
        view.findChild<QLineEdit*>(QStringLiteral("findEdit"))->setText(QStringLiteral("LOSS=1"));
        auto bruteForce = [&] {
            qint64 n = 0;
            for (qint64 r = 0; r < view.textView()->rowCount(); ++r)
                n += view.textView()->rowText(r).count(QStringLiteral("loss=1"), Qt::CaseInsensitive);
            return n;
        };
        qint64 offset = 0;
        for (int batch = 0; batch < 6; ++batch) {
            QByteArray bytes;
            for (int i = 0; i < 4000; ++i)
                bytes += "step " + QByteArray::number(batch * 4000 + i) + " loss=" + QByteArray::number(i % 13) + '\n';
            bytes += " 40%|####  | loss=1.5\r"; // a pending bar with a match
            view.appendBytes(8, offset, bytes);
            offset += bytes.size();
            QTRY_COMPARE(view.bytesShown(), offset);
            QCOMPARE(view.matchCount(), bruteForce());
        }
        QVERIFY(view.textView()->scrollback().droppedRows() > 0);
        QVERIFY(view.matchCount() > 1000);
    }

    void selectAndCopy()
    {
        ConsoleView view;
        QVERIFY(showAt(view, 600, 300));
        view.setRun(6, {}, true);
        view.appendBytes(6, 0, QByteArrayLiteral("alpha beta\ngamma delta\nlast\n"));
        QTRY_COMPARE(view.textView()->rowCount(), 3);
        ConsoleTextView* text = view.textView();
        QWidget* vp = text->viewport();
        const int h = text->rowHeight();
        // Drag from inside "beta" (row 0) to the middle of "gamma" (row 1).
        const Pos from = text->hitTest(QPoint(4 + int(7.3 * charWidth(text)), h / 2));
        QCOMPARE(from.row, 0);
        QCOMPARE(from.col, 7);
        QTest::mousePress(vp, Qt::LeftButton, {}, QPoint(4 + int(7.3 * charWidth(text)), h / 2));
        QTest::mouseMove(vp, QPoint(4 + int(2.3 * charWidth(text)), h + h / 2));
        QTest::mouseRelease(vp, Qt::LeftButton, {}, QPoint(4 + int(2.3 * charWidth(text)), h + h / 2));
        QCOMPARE(text->selectedText(), QStringLiteral("eta\nga"));
        text->setFocus();
        QTest::keyClick(text, Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("eta\nga"));
        // Double-click selects a word; Ctrl+A everything.
        QTest::mouseDClick(vp, Qt::LeftButton, {}, QPoint(4 + int(8.3 * charWidth(text)), h + h / 2));
        QCOMPARE(text->selectedText(), QStringLiteral("delta"));
        QTest::keyClick(text, Qt::Key_A, Qt::ControlModifier);
        QCOMPARE(text->selectedText(), QStringLiteral("alpha beta\ngamma delta\nlast"));
        // A character beyond U+FFFF is never split: no x lands between its
        // two UTF-16 code units (columns 1 and 2 of "a😀b").
        view.appendBytes(6, 28,
                QByteArrayLiteral("a\xf0\x9f\x98\x80"
                                  "b\n"));
        QTRY_COMPARE(text->rowCount(), 4);
        QCOMPARE(text->rowText(3).size(), 4);
        QSet<int> cols;
        for (int x = 0; x < 200; ++x)
            cols.insert(text->hitTest(QPoint(x, 3 * h + h / 2)).col);
        QCOMPARE(cols, (QSet<int>{0, 1, 3, 4}));
    }

    void dragPastTheEdgeKeepsScrolling()
    {
        // Selecting with the mouse held above the view: it scrolls on by
        // itself (a terminal's behaviour), not one row per mouse move.
        ConsoleView view;
        QVERIFY(showAt(view, 600, 300));
        view.setRun(7, {}, false);
        view.appendBytes(7, 0, numberedRows(1000));
        ConsoleTextView* text = view.textView();
        QTRY_COMPARE(text->rowCount(), qint64(1000));
        text->verticalScrollBar()->setValue(500);
        QWidget* vp = text->viewport();
        const int h = text->rowHeight();
        const int top = text->verticalScrollBar()->value();
        QTest::mousePress(vp, Qt::LeftButton, {}, QPoint(20, h / 2));
        const QPoint above(20, -3 * h);
        QMouseEvent move(
                QEvent::MouseMove, QPointF(above), vp->mapToGlobal(QPointF(above)), Qt::NoButton, Qt::LeftButton, {});
        QApplication::sendEvent(vp, &move); // one move out, then held still
        QTest::qWait(600);
        const int scrolled = top - text->verticalScrollBar()->value();
        QVERIFY2(scrolled >= 15, qPrintable(QString::number(scrolled)));
        QTest::mouseRelease(vp, Qt::LeftButton, {}, above);
        const int afterRelease = text->verticalScrollBar()->value();
        QTest::qWait(200);
        QCOMPARE(text->verticalScrollBar()->value(), afterRelease); // stops when let go
        // The selection runs from the pressed row up to the row at the top.
        const QString selected = text->selectedText();
        QVERIFY2(selected.count(u'\n') >= 15,
                qPrintable(QStringLiteral("%1-%2: %3")
                                   .arg(text->selectionStart().row)
                                   .arg(text->selectionEnd().row)
                                   .arg(selected.left(80))));
        QCOMPARE(text->selectionEnd().row, qint64(top));
        QCOMPARE(text->selectionStart().row, qint64(afterRelease - 1)); // the row just above the view's top
    }

    void placeholderSaysReadingWhileAFileIsRead()
    {
        // Reselecting a run with a long console: the view is empty until the
        // feeder has read the file's tail; it says so instead of "Waiting
        // for output…", and goes back to that once the file is read.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("console.log"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(3 * 1024 * 1024, 'x') + '\n');
        f.close();
        ConsoleView view;
        QVERIFY(showAt(view, 600, 300));
        view.setRun(8, path, true);
        QVERIFY2(view.textView()->placeholderText().startsWith(QStringLiteral("Reading 3")),
                qPrintable(view.textView()->placeholderText()));
        QTRY_COMPARE_WITH_TIMEOUT(view.textView()->rowCount(), qint64(1), 5000);
        QCOMPARE(view.textView()->placeholderText(), QStringLiteral("Waiting for output…"));
        // An empty file, or none yet: waiting.
        const QString empty = dir.filePath(QStringLiteral("empty.log"));
        QVERIFY(QFile(empty).open(QIODevice::WriteOnly));
        view.setRun(9, empty, true);
        QCOMPARE(view.textView()->placeholderText(), QStringLiteral("Waiting for output…"));
        view.setRun(10, dir.filePath(QStringLiteral("missing.log")), false);
        QCOMPARE(view.textView()->placeholderText(), QStringLiteral("No output."));
        view.clear(QStringLiteral("Select a run"));
        QTest::qWait(100);
        QCOMPARE(view.textView()->placeholderText(), QStringLiteral("Select a run"));
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
        // view holds them once each.
        QCOMPARE(view.textView()->rowCount(), 2);
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
        QCOMPARE(lines(view),
                (QStringList{QStringLiteral("line1"), QStringLiteral("line2"), QStringLiteral("line3"),
                        QStringLiteral("line4")}));
    }

    void invalidUtf8ShowsReplacementCharacter()
    {
        ConsoleView view;
        view.setRun(2, {}, true);
        view.appendBytes(2, 0, QByteArrayLiteral("bad \xff\xfe byte \xc3\xa9t\xc3\n"));
        QTRY_VERIFY(view.textView()->toPlainText().contains(QStringLiteral("byte")));
        const QString text = view.textView()->toPlainText();
        QVERIFY2(text.startsWith(QStringLiteral("bad \uFFFD\uFFFD byte \u00e9t\uFFFD")), qPrintable(text));
    }

    void tenMegabyteLineDoesNotFreeze()
    {
        ConsoleView view;
        QVERIFY(showAt(view, 800, 400));
        view.setRun(5, {}, true);
        // Watch the event loop: the longest pause between 10 ms ticks.
        QElapsedTimer sinceTick;
        qint64 worstGap = 0;
        QTimer ticker;
        ticker.setInterval(10);
        QObject::connect(&ticker, &QTimer::timeout, [&] { worstGap = std::max(worstGap, sinceTick.restart()); });
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
        ticker.stop();
        qInfo("10 MB line: shown after %lld ms, longest event-loop pause %lld ms", t.elapsed(), worstGap);
        QVERIFY2(worstGap < 250, qPrintable(QStringLiteral("event loop blocked for %1 ms").arg(worstGap)));
        const QStringList l = lines(view);
        QCOMPARE(l.size(), 3);
        QCOMPARE(l.at(0), QStringLiteral("before"));
        QCOMPARE(l.at(2), QStringLiteral("after"));
        QVERIFY(l.at(1).startsWith(QStringLiteral("xxxxxxxx")));
        QVERIFY2(l.at(1).size() < 20000, qPrintable(QString::number(l.at(1).size())));
        QVERIFY(!l.at(1).contains(QStringLiteral("truncated"))); // the marker is drawn, not the row's text
        const QString marker = view.textView()->rowMarker(1);
        QVERIFY2(marker.contains(QStringLiteral("truncated")), qPrintable(marker));
        QVERIFY2(marker.contains(QLocale().toString(qint64(big.size()))), qPrintable(marker));
        QVERIFY(view.textView()->rowMarker(0).isEmpty());
    }

    void realTqdmLogFromFile()
    {
        const QString path = test::fixturePath(QStringLiteral("gpu-workstation/logs/plain_torch.log"));
        const QByteArray raw = test::readFixture(QStringLiteral("gpu-workstation/logs/plain_torch.log"));
        QVERIFY(!raw.isEmpty());
        ConsoleView view;
        view.setRun(9, path, false);
        QTRY_COMPARE_WITH_TIMEOUT(view.bytesShown(), qint64(raw.size()), 5000);
        const QString text = view.textView()->toPlainText();
        QVERIFY(!text.contains(QChar(0x1b)));
        QVERIFY(!text.contains(u'\r'));
        // Every \r redraw of a bar replaced the row: far fewer rows than redraws.
        const qsizetype redraws = raw.count('\r');
        const qsizetype barRows = text.count(QStringLiteral("it/s]"));
        QVERIFY2(redraws > 20, qPrintable(QString::number(redraws)));
        QVERIFY2(barRows * 5 < redraws,
                qPrintable(QStringLiteral("%1 bar rows for %2 redraws").arg(barRows).arg(redraws)));
        QVERIFY(text.contains(QStringLiteral("val_accuracy")));
    }

    void followModeAndFind()
    {
        ConsoleView view;
        QVERIFY(showAt(view, 600, 300));
        view.setRun(4, {}, true);
        const QByteArray bytes = numberedRows(500);
        view.appendBytes(4, 0, bytes);
        QTRY_VERIFY(view.textView()->toPlainText().contains(QStringLiteral("row 499")));
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
        // (X input focus asked for, not only Qt's notion of it: without a
        // window manager nothing else gives it to the window.)
        view.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&view));
        view.textView()->setFocus();
        QTest::keyClick(view.textView(), Qt::Key_F, Qt::ControlModifier);
        QWidget* findBar = view.findChild<QWidget*>(QStringLiteral("findBar"));
        QVERIFY(findBar->isVisible());
        auto* edit = view.findChild<QLineEdit*>(QStringLiteral("findEdit"));
        QTest::keyClicks(edit, QStringLiteral("row 12"));
        QCOMPARE(view.matchCount(), 11); // row 12, row 120..129
        QVERIFY(view.findNext());
        QCOMPARE(view.textView()->selectedText(), QStringLiteral("row 12"));
        QCOMPARE(view.textView()->selectionStart().row, 12);
        QVERIFY(view.findNext());
        QCOMPARE(view.textView()->selectionStart().row, 120);
        QVERIFY(view.findPrevious());
        QCOMPARE(view.textView()->selectionStart().row, 12);
        // Backward from the first match wraps to the last one (row 129).
        QVERIFY(view.findPrevious());
        QCOMPARE(view.textView()->selectionStart().row, 129);
        QVERIFY(view.findNext()); // and forward from the last wraps to the first
        QCOMPARE(view.textView()->selectionStart().row, 12);
        QVERIFY(view.textView()->firstVisibleRow() <= 12
                && 12 < view.textView()->firstVisibleRow() + view.textView()->rowsInSight());
        // A match on the last page: found and in sight, follow stays off,
        // and the count stays in the find bar.
        edit->setText(QStringLiteral("row 500"));
        QVERIFY(view.findNext());
        QCOMPARE(view.textView()->selectionStart().row, 500);
        QVERIFY(!view.followMode());
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("findStatus"))->text().contains(QStringLiteral("1 match")));
        edit->setText(QStringLiteral("no such text"));
        QCOMPARE(view.matchCount(), 0);
        QVERIFY(!view.findNext());
    }
};

QTEST_MAIN(TestConsoleView)
#include "TestConsoleView.moc"
