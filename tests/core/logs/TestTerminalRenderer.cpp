// Explicit expectations for TerminalRenderer's core cases (the terminal-exact
// comparison against tmux lives in tst_terminalrenderer_tmux.cpp).
#include "tests/support/TestSupport.h"
#include "core/logs/TerminalRenderer.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTest>

#include <utility>

using namespace ty;

namespace {

QList<ConsoleLine> renderAll(const QByteArray& bytes, int width = 0, int maxLineChars = 16384)
{
    TerminalRenderer r(width, maxLineChars);
    r.feed(bytes);
    r.finish();
    return r.takeCommitted();
}

QStringList texts(const QList<ConsoleLine>& lines)
{
    QStringList out;
    for (const ConsoleLine& l : lines)
        out.append(l.text);
    return out;
}

// The real logs, then 6 generated streams that mix plain lines with what
// must turn a plain row into cells or keep a line off the plain path
// (cursor-up onto plain rows, erases, inserts, styles, \r redraws, wide and
// invalid UTF-8, tabs, backspace, lines at and past the width and the stored
// limit, trailing spaces).
// `rare`: one piece in 100 items instead of 10 to 30 (long stretches of
// plain lines and no escape, as in most training logs).
QList<QByteArray> mixedStreams(QRandomGenerator& rng, bool rare = false)
{
    QList<QByteArray> streams;
    for (const char* name : {"plain_torch", "lightning_run", "lightning_tqdm", "nested_tqdm", "oom_midrun"})
        streams.append(test::readFixture(QStringLiteral("gpu-workstation/logs/%1.log").arg(QLatin1String(name))));
    static const char* const kPieces[] = {
            "\x1b[31m",
            "\x1b[0m",
            "\x1b[1;32m",
            "\r",
            "\r\x1b[K",
            "\x1b[A",
            "\x1b[3A",
            "\x1b[2;5H",
            "\x1b"
            "7",
            "\x1b"
            "8",
            "\x1b[2P",
            "\x1b[3@",
            "\x1b[1K",
            "\x1b[J",
            "\x1b[1J",
            "\x1bM",
            "\t",
            "\b",
            "\xe2\x96\x88",
            "\xe4\xb8\xad",
            "\xcc\x81",
            "\xff",
            "\x1b[5G",
            "\x1b[2J",
            "\n",
            "\n\n",
            "   ",
            "xyz",
            "\x1b[A\r\x1b[2K",
            "\x1b[2A\r\x1b[J", // a progress bar's redraw: up, to column 0, erase
            // ... onto a row that soft-wrapped (at width 80 or 120), then a line with trailing spaces
            "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
            "0123456789012345678901234567890123456789\n\x1b[2A\r\x1b[2Kab  \n",
    };
    for (int s = 0; s < 6; ++s) {
        QByteArray b;
        while (b.size() < 100000) {
            const quint32 kind = rng.bounded(100);
            const quint32 lines = rare ? 99u : s < 3 ? 90u : 70u;
            if (kind < lines) { // mostly plain lines, some with trailing spaces or overlong
                const int len = kind < 4 ? int(rng.bounded(60, 200)) : int(rng.bounded(0, 50));
                for (int i = 0; i < len; ++i)
                    b += char(rng.bounded(0x20, 0x7F));
                if (rng.bounded(4) == 0)
                    b += "  ";
                b += '\n';
            } else {
                b += kPieces[rng.bounded(int(std::size(kPieces)))];
            }
        }
        streams.append(b);
    }
    return streams;
}

// Every field of every line (fromStderr aside: the renderer never sets it).
void compareLines(const QList<ConsoleLine>& got, const QList<ConsoleLine>& expected)
{
    QCOMPARE(got.size(), expected.size());
    for (qsizetype i = 0; i < got.size(); ++i) {
        const ConsoleLine& g = got.at(i);
        const ConsoleLine& e = expected.at(i);
        QCOMPARE(g.text, e.text);
        QCOMPARE(g.spans, e.spans);
        QCOMPARE(g.byteOffset, e.byteOffset);
        QCOMPARE(g.truncated, e.truncated);
        QCOMPARE(g.fullLength, e.fullLength);
        QCOMPARE(g.wrapped, e.wrapped);
    }
}

} // namespace

class TestTerminalRenderer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void tqdmBarIsOneLine()
    {
        TerminalRenderer r;
        r.feed("\rEpoch 1:   0%|          | 0/3 [00:00<?, ?it/s]");
        r.feed("\rEpoch 1:  33%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88       | 1/3 [00:00<00:01, 2.00it/s, loss=0.9]");
        QCOMPARE(r.pendingLines().size(), 1);
        QCOMPARE(r.pendingLines().at(0).text,
                QStringLiteral("Epoch 1:  33%|\u2588\u2588\u2588       | 1/3 [00:00<00:01, 2.00it/s, loss=0.9]"));
        r.feed("\rEpoch 1: 100%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88"
               "\xe2\x96\x88\xe2\x96\x88| 3/3 [00:01<00:00, 2.50it/s, loss=0.5]\n");
        r.feed("next line\n");
        QVERIFY(r.takeCommitted().isEmpty()); // still reachable by cursor-up
        r.finish();
        const QStringList lines = texts(r.takeCommitted());
        QCOMPARE(lines,
                (QStringList{QStringLiteral(
                                     "Epoch 1: 100%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588| 3/3 "
                                     "[00:01<00:00, 2.50it/s, loss=0.5]"),
                        QStringLiteral("next line")}));
    }

    void shorterRedrawLeavesTail()
    {
        // \r does not erase: a shorter redraw leaves the old tail, like a terminal.
        QCOMPARE(texts(renderAll("long text\rabc\n")), QStringList{QStringLiteral("abcg text")});
        QCOMPARE(texts(renderAll("long text\rabc\x1b[K\n")), QStringList{QStringLiteral("abc")});
    }

    void coloursBecomeSpans()
    {
        const QList<ConsoleLine> lines = renderAll(
                "\x1b[1;31mred\x1b[0m plain \x1b[38;5;208mor\x1b[0m\x1b[38;2;1;2;3mtc\x1b[m \x1b[3;4;44mx\x1b[22;23;24;49m\n");
        QCOMPARE(lines.size(), 1);
        const ConsoleLine& l = lines.at(0);
        QCOMPARE(l.text, QStringLiteral("red plain ortc x"));
        QVERIFY(!l.text.contains(QChar(0x1b)));
        QCOMPARE(l.spans.size(), 4);
        QCOMPARE(l.spans.at(0), (StyleSpan{0, 3, 0xFFcd0000u, 0, StyleSpan::Bold}));
        QCOMPARE(l.spans.at(1), (StyleSpan{10, 2, 0xFFff8700u, 0, 0}));
        QCOMPARE(l.spans.at(2), (StyleSpan{12, 2, 0xFF010203u, 0, 0}));
        QCOMPARE(l.spans.at(3), (StyleSpan{15, 1, 0, 0xFF0000eeu, quint8(StyleSpan::Italic | StyleSpan::Underline)}));
    }

    void rowsOfOneStyleAndRowsWithGaps()
    {
        // toLine's two paths: a row whose cells are all written, in one style
        // and below U+10000 (one copy), and anything else (cell by cell).
        const QList<ConsoleLine> lines = renderAll("\x1b[32mall green\x1b[0m\n" // one style: one span
                                                   "plain\n"                    // one style, the default: none
                                                   "a\x1b[3Cb\n"                // an unwritten gap: spaces
                                                   "\xf0\x9f\x98\x80 wide\n"    // astral (and wide): surrogates
                                                   "x\x1b[31my\n");             // two styles
        QCOMPARE(texts(lines),
                (QStringList{QStringLiteral("all green"), QStringLiteral("plain"), QStringLiteral("a   b"),
                        QString::fromUtf8("\xf0\x9f\x98\x80 wide"), QStringLiteral("xy")}));
        QCOMPARE(lines.at(0).spans, (QList<StyleSpan>{StyleSpan{0, 9, 0xFF00cd00u, 0, 0}}));
        QVERIFY(lines.at(1).spans.isEmpty());
        QVERIFY(lines.at(2).spans.isEmpty());
        QCOMPARE(lines.at(4).spans, (QList<StyleSpan>{StyleSpan{1, 1, 0xFFcd0000u, 0, 0}}));
    }

    void usualRowsOfEveryLengthAndPosition()
    {
        // The usual row is narrowed eight cells at a time with a signed pack
        // (exact only with its bias for U+8000..U+FFFF) and the rest one by
        // one; anything unusual at any position must send the row down the
        // general path. Lengths across several blocks, the odd cell at every
        // position.
        const QString narrow[] = {QString(QChar(0xFF61)), QString(QChar(0xFFFD)), QString(QChar(0x00E9)),
                QString(QChar(0x0416)), QString(QChar(0xFF9F))};
        for (int len = 1; len <= 35; ++len) {
            for (int pos = 0; pos < len; ++pos) {
                for (const QString& odd : narrow) {
                    QString expected(len, u'q');
                    expected.replace(pos, 1, odd);
                    const QList<ConsoleLine> one = renderAll(expected.toUtf8() + '\n');
                    QCOMPARE(one.size(), 1);
                    QCOMPARE(one.at(0).text, expected);
                    QVERIFY(one.at(0).spans.isEmpty());
                }
                // An unwritten cell (cursor forward over it) before the last: a space.
                if (pos < len - 1) {
                    const QByteArray gap = QByteArray(pos, 'q') + "\x1b[1C" + QByteArray(len - pos - 1, 'q') + '\n';
                    QString withSpace(len, u'q');
                    withSpace[pos] = u' ';
                    const QList<ConsoleLine> gapped = renderAll(gap);
                    QCOMPARE(gapped.size(), 1);
                    QCOMPARE(gapped.at(0).text, withSpace);
                }
                // A second style from `pos`: one span over the rest.
                const QByteArray styled = QByteArray(pos, 'q') + "\x1b[31m" + QByteArray(len - pos, 'q') + '\n';
                const ConsoleLine l = renderAll(styled).at(0);
                QCOMPARE(l.text, QString(len, u'q'));
                QCOMPARE(l.spans, (QList<StyleSpan>{StyleSpan{pos, len - pos, 0xFFcd0000u, 0, 0}}));
                // An astral character: two UTF-16 units, the rest after it.
                QString astral(len, u'q');
                astral.replace(pos, 1, QString::fromUcs4(U"\U0001D11E")); // musical G clef, one cell
                QCOMPARE(renderAll(astral.toUtf8() + '\n').at(0).text, astral);
            }
        }
    }

    void paletteAndBrightColours()
    {
        const ConsoleLine l = renderAll("\x1b[92ma\x1b[38;5;244mb\x1b[48;5;16mc\x1b[0m\n").at(0);
        QCOMPARE(l.spans.size(), 3);
        QCOMPARE(l.spans.at(0).fg, 0xFF00ff00u);
        QCOMPARE(l.spans.at(1).fg, 0xFF808080u); // 8 + 10 * 12 = 128
        QCOMPARE(l.spans.at(2).bg, 0xFF000000u);
    }

    void invalidUtf8BecomesReplacement()
    {
        const QStringList lines = texts(renderAll("a\xff"
                                                  "b\xe2\x82"
                                                  "c\xed\xa0\x80"
                                                  "d\xc0\xaf"
                                                  "e\xf0\x9f\x92"));
        // one U+FFFD per maximal invalid subsequence (WHATWG decoder)
        QCOMPARE(lines, QStringList{QStringLiteral("a\uFFFDb\uFFFDc\uFFFD\uFFFD\uFFFDd\uFFFD\uFFFDe\uFFFD")});
    }

    void escapesNeverShown()
    {
        const QStringList lines = texts(
                renderAll("\x1b]0;my title\x07"
                          "a\x1b]8;;https://x.org\x1b\\link\x1b]8;;\x1b\\b"
                          "\x1b[?25l\x1b[?2004h\x1bPq#0;2;0;0;0\x1b\\c\x1b(0d\x1b[>4;1me\x1b[1;2;3;4;5 qf\x07\n"));
        QCOMPARE(lines, QStringList{QStringLiteral("alinkbcdef")});
    }

    void splitAnywhereGivesSameResult()
    {
        for (const char* name : {"plain_torch", "lightning_run", "lightning_tqdm", "nested_tqdm"}) {
            const QByteArray bytes
                    = test::readFixture(QStringLiteral("gpu-workstation/logs/%1.log").arg(QLatin1String(name)));
            QVERIFY(!bytes.isEmpty());
            TerminalRenderer whole(80);
            whole.feed(bytes);
            whole.finish();
            const QList<ConsoleLine> expected = whole.takeCommitted();
            TerminalRenderer bytewise(80);
            QList<ConsoleLine> got;
            for (qsizetype i = 0; i < bytes.size(); ++i) {
                bytewise.feed(QByteArrayView(bytes).sliced(i, 1));
                got += bytewise.takeCommitted();
            }
            bytewise.finish();
            got += bytewise.takeCommitted();
            QCOMPARE(got.size(), expected.size());
            for (qsizetype i = 0; i < got.size(); ++i) {
                QCOMPARE(got.at(i).text, expected.at(i).text);
                QCOMPARE(got.at(i).spans, expected.at(i).spans);
                QCOMPARE(got.at(i).byteOffset, expected.at(i).byteOffset);
                QCOMPARE(got.at(i).wrapped, expected.at(i).wrapped);
            }
        }
    }

    // Plain rows (a line of printable ASCII kept as its bytes) against the
    // cell grid alone: every field of every committed and pending line after
    // every feed, on the real logs and on generated streams that mix plain
    // lines with what must turn a plain row into cells or keep a line off
    // the plain path (cursor-up onto plain rows, erases, inserts, styles,
    // \r redraws, wide and invalid UTF-8, tabs, backspace, lines at and past
    // the width and the stored limit, trailing spaces), fed in random pieces
    // with commitSettledRows() at random points.
    void plainRowsEqualTheCellGrid()
    {
        QRandomGenerator rng(7);
        const QList<QByteArray> streams = mixedStreams(rng);
        qint64 linesCompared = 0;
        for (const QByteArray& bytes : streams) {
            QVERIFY(!bytes.isEmpty());
            for (const auto& [width, maxChars] :
                    {std::pair{0, 16384}, std::pair{0, 40}, std::pair{80, 16384}, std::pair{120, 50}}) {
                TerminalRenderer grid(width, maxChars, 16);
                grid.setPlainRows(false);
                TerminalRenderer plain(width, maxChars, 16);
                for (qsizetype from = 0; from < bytes.size();) {
                    const qsizetype n = std::min<qsizetype>(bytes.size() - from, rng.bounded(1, 3000));
                    const QByteArrayView piece = QByteArrayView(bytes).sliced(from, n);
                    grid.feed(piece);
                    plain.feed(piece);
                    if (rng.bounded(3) == 0) {
                        grid.commitSettledRows();
                        plain.commitSettledRows();
                    }
                    const QList<ConsoleLine> expected = grid.takeCommitted();
                    compareLines(plain.takeCommitted(), expected);
                    compareLines(plain.pendingLines(), grid.pendingLines());
                    if (QTest::currentTestFailed())
                        return;
                    QCOMPARE(plain.pendingStartOffset(), grid.pendingStartOffset());
                    linesCompared += expected.size();
                    from += n;
                }
                grid.finish();
                plain.finish();
                compareLines(plain.takeCommitted(), grid.takeCommitted());
                if (QTest::currentTestFailed())
                    return;
            }
        }
        QVERIFY(linesCompared > 10000);
    }

    // Settle after feed (with its fast path for plain lines) against feed()
    // and commitSettledRows() without it: every field of every committed
    // line, the pending lines and their start after every piece, in random
    // pieces, on the usual mixed streams and on streams with rare escapes:
    // those keep the fast path in use (checked by its count) between upward
    // moves, which test what it must leave alone (rows the rest of a piece
    // moves back up to, the last rows a piece does not settle).
    void settleAfterFeedEqualsCommittingAfterFeed()
    {
        QRandomGenerator rng(13);
        QList<QByteArray> streams = mixedStreams(rng);
        const qsizetype firstRare = streams.size();
        const QList<QByteArray> rare = mixedStreams(rng, /*rare=*/true);
        for (qsizetype i = 5; i < rare.size(); ++i) // the real logs are in both
            streams.append(rare.at(i));
        qint64 linesCompared = 0, rareLines = 0, fastLines = 0, rareFastLines = 0;
        for (qsizetype s = 0; s < streams.size(); ++s) {
            const QByteArray& bytes = streams.at(s);
            for (const auto& [width, maxChars] :
                    {std::pair{0, 16384}, std::pair{0, 40}, std::pair{80, 16384}, std::pair{120, 50}}) {
                TerminalRenderer reference(width, maxChars, 16), settling(width, maxChars, 16);
                settling.setSettleAfterFeed(true);
                QList<ConsoleLine> settled;
                settling.setLineSink([&](const ConsoleLine& l) { settled.append(l); });
                qint64 streamLines = 0;
                for (qsizetype from = 0; from < bytes.size();) {
                    const qsizetype n = std::min<qsizetype>(bytes.size() - from, rng.bounded(1, 3000));
                    const QByteArrayView piece = QByteArrayView(bytes).sliced(from, n);
                    reference.feed(piece);
                    reference.commitSettledRows();
                    settling.feed(piece);
                    const QList<ConsoleLine> expected = reference.takeCommitted();
                    compareLines(std::exchange(settled, {}), expected);
                    compareLines(settling.pendingLines(), reference.pendingLines());
                    if (QTest::currentTestFailed())
                        return;
                    QCOMPARE(settling.pendingStartOffset(), reference.pendingStartOffset());
                    streamLines += expected.size();
                    from += n;
                }
                reference.finish();
                settling.finish();
                const QList<ConsoleLine> last = reference.takeCommitted();
                compareLines(settled, last);
                if (QTest::currentTestFailed())
                    return;
                streamLines += last.size();
                linesCompared += streamLines;
                fastLines += settling.plainLinesSunk();
                if (s >= firstRare) {
                    rareLines += streamLines;
                    rareFastLines += settling.plainLinesSunk();
                }
            }
        }
        qInfo("%lld lines compared, %lld of them through the fast path; of the %lld lines of streams with rare "
              "escapes, %lld",
                linesCompared, fastLines, rareLines, rareFastLines);
        QVERIFY(linesCompared > 20000);
        // About 40 %: a colour left on, the narrow stored limits and lines
        // a piece does not settle keep the others on the usual path.
        QVERIFY(rareFastLines > rareLines / 3);
    }

    // A LineSink is handed exactly the lines takeCommitted() gives, both when
    // it keeps no reference (the line's text and spans are then refilled in
    // place) and when it keeps copies (the next row must leave them alone).
    // In place means it: the text moves to a new buffer only for a row
    // longer than the buffer holds.
    void lineSinkGivesTheSameLines()
    {
        QRandomGenerator rng(11);
        const QList<QByteArray> streams = mixedStreams(rng);
        qint64 linesCompared = 0;
        int regrowths = 0;
        for (const QByteArray& bytes : streams) {
            for (const auto& [width, maxChars] :
                    {std::pair{0, 16384}, std::pair{0, 40}, std::pair{80, 16384}, std::pair{120, 50}}) {
                TerminalRenderer listed(width, maxChars, 16), deep(width, maxChars, 16), kept(width, maxChars, 16);
                QList<ConsoleLine> deepLines, keptLines, listedLines;
                const QChar* lastText = nullptr;
                qsizetype lastCapacity = 0;
                int movedWithoutNeed = 0;
                deep.setLineSink([&](const ConsoleLine& l) {
                    if (!l.text.isEmpty()) {
                        if (lastText && l.text.constData() != lastText) {
                            ++regrowths;
                            if (l.text.size() <= lastCapacity)
                                ++movedWithoutNeed;
                        }
                        lastText = l.text.constData();
                        lastCapacity = l.text.capacity();
                    }
                    ConsoleLine copy = l;
                    copy.text.detach(); // a copy of its own: the sink's line stays unshared
                    copy.spans.detach();
                    deepLines.append(copy);
                });
                kept.setLineSink([&](const ConsoleLine& l) { keptLines.append(l); });
                for (qsizetype from = 0; from < bytes.size();) {
                    const qsizetype n = std::min<qsizetype>(bytes.size() - from, rng.bounded(1, 3000));
                    const QByteArrayView piece = QByteArrayView(bytes).sliced(from, n);
                    const bool settle = rng.bounded(3) == 0;
                    for (TerminalRenderer* r : {&listed, &deep, &kept}) {
                        r->feed(piece);
                        if (settle)
                            r->commitSettledRows();
                    }
                    QCOMPARE(deep.committedCount(), 0);
                    QCOMPARE(kept.committedCount(), 0);
                    const QList<ConsoleLine> expected = listed.takeCommitted();
                    compareLines(std::exchange(deepLines, {}), expected);
                    if (QTest::currentTestFailed())
                        return;
                    listedLines += expected;
                    linesCompared += expected.size();
                    from += n;
                }
                for (TerminalRenderer* r : {&listed, &deep, &kept})
                    r->finish();
                const QList<ConsoleLine> last = listed.takeCommitted();
                compareLines(deepLines, last);
                listedLines += last;
                QCOMPARE(movedWithoutNeed, 0);
                // `kept` held on to every line since the start.
                compareLines(keptLines, listedLines);
                if (QTest::currentTestFailed())
                    return;
            }
        }
        QVERIFY(linesCompared > 10000);
        qInfo("%lld lines compared; the reused text moved to a bigger buffer %d times", linesCompared, regrowths);
    }

    // The live region is a ring of slots that grows by doubling. Rows
    // committed early move its head off the first slot; growing it then
    // must keep the rows in order (found by review: no test grew it with the
    // head moved, which is what RunIngest does, settling after every chunk).
    void ringGrowsWithItsHeadMoved()
    {
        for (const int liveRows : {12, 17, 100}) {
            TerminalRenderer r(0, 16384, liveRows);
            r.feed("a\nb\nc\n");
            r.commitSettledRows(); // a, b, c leave: the head is at slot 3 of 8
            QCOMPARE(texts(r.takeCommitted()),
                    (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")}));
            r.feed("r0\nr1\nr2\nr3\nr4\nr5\nr6\n"); // rows 0-7: the 8 slots are full
            r.feed("\x1b[12dX");                    // row 11: the ring grows
            r.feed("\x1b[3;2HZ");                   // row 2 ("r2"), column 2
            r.finish();
            const QList<ConsoleLine> lines = r.takeCommitted();
            QCOMPARE(texts(lines),
                    (QStringList{QStringLiteral("r0"), QStringLiteral("r1"), QStringLiteral("rZ"), QStringLiteral("r3"),
                            QStringLiteral("r4"), QStringLiteral("r5"), QStringLiteral("r6"), QString(), QString(),
                            QString(), QString(), QStringLiteral("X")}));
            for (int i = 0; i < 7; ++i)
                QCOMPARE(lines.at(i).byteOffset, qint64(6 + 3 * i));
        }
    }

    // A line that is kept (the console view, the aggregated console holds
    // millions) is sized exactly: resize() would round its buffer up.
    void keptLinesAreSizedExactly()
    {
        for (const int length : {1, 40, 130, 300, 5000}) {
            const QByteArray plain(length, 'p');
            const QByteArray styled = "\x1b[31m" + QByteArray(length, 's') + "\x1b[0m";
            const QList<ConsoleLine> lines = renderAll(plain + "\n" + styled + "\n");
            QCOMPARE(lines.size(), 2);
            for (const ConsoleLine& l : lines) {
                QCOMPARE(l.text.size(), qsizetype(length));
                QCOMPARE(l.text.capacity(), qsizetype(length));
            }
        }
    }

    // Found by review: a soft-wrapped row that was erased keeps its wrap
    // mark, and a wrapped row keeps its written spaces; it must not become
    // a plain row (which trims them). Cursor-up, clear line, redraw: what a
    // progress bar does.
    void erasedWrappedRowIsNotPlain()
    {
        // A wide character that does not fit wraps a 9-column row; erasing
        // it from the start (ESC[1K short of the last column) keeps the wrap
        // mark, as tmux does.
        const QByteArray bytes("012345678\xe4\xb8\xad"
                               "\x1b[A\x1b[9G\x1b[1K\r"
                               "ab  \n"
                               "next\n");
        for (const bool plainRows : {false, true}) {
            TerminalRenderer r(10);
            r.setPlainRows(plainRows);
            r.feed(bytes);
            r.finish();
            const QList<ConsoleLine> lines = r.takeCommitted();
            QCOMPARE(lines.size(), 2); // "next" overwrote the wide character of the second row
            QCOMPARE(lines.at(0).text, QStringLiteral("ab  "));
            QCOMPARE(lines.at(0).fullLength, qint64(4));
            QVERIFY(lines.at(0).wrapped);
            QCOMPARE(lines.at(1).text, QStringLiteral("next"));
        }
        // Erasing the whole row takes the mark off (tmux's grid_clear_lines).
        for (const bool plainRows : {false, true}) {
            TerminalRenderer r(10);
            r.setPlainRows(plainRows);
            r.feed("0123456789X\x1b[A\r\x1b[2Kab  \nnext\n");
            r.finish();
            const QList<ConsoleLine> lines = r.takeCommitted();
            QCOMPARE(lines.size(), 2);
            QCOMPARE(lines.at(0).text, QStringLiteral("ab"));
            QVERIFY(!lines.at(0).wrapped);
        }
    }

    void asciiRunEndsAtEveryByteOfAWord()
    {
        // The printable-ASCII fast path tests 8 bytes at a time: a byte that
        // ends the run (a control, DEL, a UTF-8 lead or stray continuation,
        // an invalid byte) at every offset of a 40-byte run, fed whole, must
        // render as when fed byte by byte (where no 8-byte test happens),
        // with and without wrapping inside the run.
        const QByteArray specials[]
                = {"\x1f", "\x7f", "\x80", "\xff", "\t", "\r", "\x1b[31m", "\xc3\xa9", "\xe2\x96\x88"};
        for (const int width : {0, 16}) {
            for (const QByteArray& special : specials) {
                for (int at = 0; at <= 40; ++at) {
                    QByteArray bytes;
                    for (int i = 0; i < 40; ++i)
                        bytes += char('!' + (i * 7) % 94);
                    bytes.insert(at, special);
                    bytes += "\n~tail";
                    TerminalRenderer whole(width);
                    whole.feed(bytes);
                    whole.finish();
                    TerminalRenderer bytewise(width);
                    for (qsizetype i = 0; i < bytes.size(); ++i)
                        bytewise.feed(QByteArrayView(bytes).sliced(i, 1));
                    bytewise.finish();
                    const QList<ConsoleLine> a = whole.takeCommitted(), b = bytewise.takeCommitted();
                    QCOMPARE(texts(a), texts(b));
                    for (qsizetype i = 0; i < a.size(); ++i)
                        QCOMPARE(a.at(i).spans, b.at(i).spans);
                }
            }
        }
        // And the run's text is the bytes themselves.
        QCOMPARE(texts(renderAll("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH\x7fIJ\n")),
                QStringList{QStringLiteral("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ")});
    }

    void tenMegabyteLine()
    {
        const qint64 size = 10 * 1024 * 1024;
        const QByteArray chunk(64 * 1024, 'x');
        TerminalRenderer r(0, 16384);
        QElapsedTimer t;
        t.start();
        for (qint64 fed = 0; fed < size; fed += chunk.size())
            r.feed(chunk);
        const QList<ConsoleLine> pending = r.pendingLines();
        r.finish();
        const qint64 ms = t.elapsed();
        const QList<ConsoleLine> lines = r.takeCommitted();
        qInfo("10 MiB line rendered in %lld ms", ms);
        QVERIFY2(ms < 500, qPrintable(QString::number(ms)));
        QCOMPARE(pending.size(), 1);
        QCOMPARE(pending.at(0).text.size(), 16384);
        QCOMPARE(lines.size(), 1);
        QVERIFY(lines.at(0).truncated);
        QCOMPARE(lines.at(0).fullLength, size);
        QCOMPARE(lines.at(0).text, QString(16384, u'x'));
        QCOMPARE(r.bytesFed(), size);
    }

    void truncationKeepsHead()
    {
        const QList<ConsoleLine> lines = renderAll("0123456789abcdef\nshort\n", 0, 10);
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines.at(0).text, QStringLiteral("0123456789"));
        QVERIFY(lines.at(0).truncated);
        QCOMPARE(lines.at(0).fullLength, 16);
        QCOMPARE(lines.at(1).text, QStringLiteral("short"));
        QVERIFY(!lines.at(1).truncated);
        QCOMPARE(lines.at(1).fullLength, 5);
    }

    void liveRegionIsBounded()
    {
        TerminalRenderer r(0, 16384, 64);
        QByteArray bytes;
        for (int i = 0; i < 70; ++i)
            bytes += "row " + QByteArray::number(i) + "\n";
        r.feed(bytes);
        // rows 0..69 written, cursor on row 70: the screen holds rows 7..70
        QCOMPARE(r.committedCount(), 7);
        r.feed("\x1b[100AX");
        r.finish();
        const QStringList lines = texts(r.takeCommitted());
        QCOMPARE(lines.size(), 70);
        QCOMPARE(lines.at(6), QStringLiteral("row 6"));
        QCOMPARE(lines.at(7), QStringLiteral("Xow 7"));
    }

    void commitAboveCursor()
    {
        TerminalRenderer r;
        r.feed("epoch 1 loss=0.5\n\rbar 10%");
        QCOMPARE(r.committedCount(), 0);
        r.commitAboveCursor();
        QCOMPARE(texts(r.takeCommitted()), QStringList{QStringLiteral("epoch 1 loss=0.5")});
        r.feed("\x1b[A\rbar 20%"); // cannot reach the committed row any more
        QCOMPARE(texts(r.pendingLines()), QStringList{QStringLiteral("bar 20%")});
    }

    void commitSettledRows()
    {
        TerminalRenderer r;
        r.feed("line0\nline1\nline2\n");
        r.commitSettledRows(); // the cursor never moved up: every row above it is final
        QCOMPARE(texts(r.takeCommitted()),
                (QStringList{QStringLiteral("line0"), QStringLiteral("line1"), QStringLiteral("line2")}));
        r.feed("a\nb\n\rbar0\n\rinner\x1b[A"); // nested tqdm: one row up, cursor back on "bar0"
        r.commitSettledRows();
        // rows more than one above the cursor are final; "b" is still reachable
        QCOMPARE(texts(r.takeCommitted()), QStringList{QStringLiteral("a")});
        QCOMPARE(texts(r.pendingLines()),
                (QStringList{QStringLiteral("b"), QStringLiteral("bar0"), QStringLiteral("inner")}));
        r.feed("\x1b[A\rB");
        r.finish();
        QCOMPARE(texts(r.takeCommitted()),
                (QStringList{QStringLiteral("B"), QStringLiteral("bar0"), QStringLiteral("inner")}));
    }

    void randomBytesStayClean()
    {
        // Random bytes rich in escapes and controls: no crash, no control
        // character in any row, rows never wider than the terminal.
        static const char kAlphabet[]
                = "\x1b\x1b[[[;;:0123456789ABCDHJKmGfdsu78?]P\\\x07\r\n\b\t abc\xe2\x96\x88\xf0\x9f\x92\xa1\xff\xc3";
        QRandomGenerator rng(42);
        for (int width : {0, 1, 7, 80}) {
            TerminalRenderer r(width, 512, 16);
            QList<ConsoleLine> lines;
            for (int round = 0; round < 200; ++round) {
                QByteArray chunk(int(rng.bounded(1, 4000)), Qt::Uninitialized);
                for (char& c : chunk)
                    c = kAlphabet[rng.bounded(int(sizeof(kAlphabet) - 1))];
                r.feed(chunk);
                if (round % 3 == 0)
                    r.commitSettledRows();
                lines += r.takeCommitted();
                lines += r.pendingLines();
            }
            r.finish();
            lines += r.takeCommitted();
            QVERIFY(!lines.isEmpty());
            for (const ConsoleLine& l : lines) {
                for (QChar c : l.text)
                    QVERIFY2(c.unicode() >= 0x20 && c.unicode() != 0x7f, qPrintable(l.text));
                QVERIFY(l.text.size() <= 512 * 2);
                for (const StyleSpan& sp : l.spans)
                    QVERIFY(sp.start >= 0 && sp.length > 0 && sp.start + sp.length <= l.text.size());
            }
        }
    }

    void byteOffsets()
    {
        const QList<ConsoleLine> lines = renderAll("ab\ncd\n\nef");
        QCOMPARE(lines.size(), 4);
        QCOMPARE(lines.at(0).byteOffset, 0);
        QCOMPARE(lines.at(1).byteOffset, 3);
        QCOMPARE(lines.at(2).byteOffset, 6);
        QCOMPARE(lines.at(3).byteOffset, 7);
    }

    void tabsAndWideChars()
    {
        QCOMPARE(texts(renderAll("a\tb\t\tc\n\xe4\xb8\xad\tx\n")),
                (QStringList{QStringLiteral("a       b               c"), QStringLiteral("\u4e2d      x")}));
        // width 4: a wide char that does not fit wraps whole
        const QList<ConsoleLine> lines = renderAll("abc\xe4\xb8\xad\n", 4);
        QCOMPARE(texts(lines), (QStringList{QStringLiteral("abc"), QStringLiteral("\u4e2d")}));
        QVERIFY(lines.at(0).wrapped);
        QVERIFY(!lines.at(1).wrapped);
    }

    // What the alternate screen does to what a consumer sees and keeps
    // (the screen itself is compared with tmux in tst_terminalrenderer_tmux).
    void alternateScreenShownLiveNeverCommitted()
    {
        TerminalRenderer r(20, 16384, 5);
        r.feed("epoch 1\nepoch 2\n\rbar");
        r.feed("\x1b[?1049h\x1b[H");
        QCOMPARE(r.pendingLines().size(), 0); // a blank screen
        r.feed("top 1\n");
        for (int i = 0; i < 10; ++i)
            r.feed(QByteArray("frame " + QByteArray::number(i) + "\n")); // scrolls: dropped, not committed
        r.feed("\x1b[2J\x1b[Hlast frame\x1b[S");
        r.commitSettledRows();
        r.commitAboveCursor();
        QCOMPARE(r.committedCount(), 0);
        QCOMPARE(texts(r.pendingLines()), QStringList{}); // ESC[S scrolled "last frame" off
        r.feed("\x1b[Hshown");
        QCOMPARE(texts(r.pendingLines()), QStringList{QStringLiteral("shown")});
        // the main screen's rows are still to come: a restart from here re-enters nothing it should not
        QCOMPARE(r.pendingStartOffset(), 0);
        r.feed("\x1b[?1049l!\n");
        QCOMPARE(texts(r.pendingLines()),
                (QStringList{QStringLiteral("epoch 1"), QStringLiteral("epoch 2"), QStringLiteral("bar!")}));
        r.finish();
        QCOMPARE(texts(r.takeCommitted()),
                (QStringList{QStringLiteral("epoch 1"), QStringLiteral("epoch 2"), QStringLiteral("bar!")}));

        // A blank main screen: pending from the ESC that entered the alternate screen.
        TerminalRenderer blank(20, 16384, 5);
        blank.feed("a\n");
        blank.commitAboveCursor();
        QCOMPARE(blank.takeCommitted().size(), 1);
        const qint64 at = blank.bytesFed();
        blank.feed("\x1b[?4");
        blank.feed("7hwatch output");
        QCOMPARE(blank.pendingStartOffset(), at);
    }

    void finishOnTheAlternateScreenKeepsTheMainScreen()
    {
        TerminalRenderer r(20, 16384, 5);
        r.feed("main 1\nmain 2\x1b[?1049h\x1b[Hhtop frame\nmore");
        r.finish();
        QCOMPARE(texts(r.takeCommitted()), (QStringList{QStringLiteral("main 1"), QStringLiteral("main 2")}));
        r.feed("after\n"); // back on the main screen, at the top
        r.finish();
        QCOMPARE(texts(r.takeCommitted()), QStringList{QStringLiteral("after")});
    }

    void alternateScreenDoesNotHoldBackSettling()
    {
        // Cursor moves on the alternate screen do not keep main-screen rows pending afterwards.
        TerminalRenderer r(20, 16384, 10);
        r.feed("a\nb\n\x1b[?1049h\x1b[9;1Hx\x1b[H\x1b[?1049lc\nd\n");
        r.commitSettledRows();
        QCOMPARE(texts(r.takeCommitted()),
                (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d")}));
    }

    void saveCursorMode1048()
    {
        // xterm's ?1048 (tmux 3.3a ignores it): DECSC / DECRC, the slot ESC 7 uses.
        QCOMPARE(texts(renderAll("ab\x1b[?1048h\ncd\x1b[?1048lX\n")),
                (QStringList{QStringLiteral("abX"), QStringLiteral("cd")}));
        QCOMPARE(texts(renderAll("ab\x1b[?1048h\ncd\x1b"
                                 "8X\n")),
                (QStringList{QStringLiteral("abX"), QStringLiteral("cd")}));
    }

    void eraseAndBackspace()
    {
        QCOMPARE(texts(renderAll("abcdef\b\b\x1b[K!\n12345\x1b[3G\x1b[1K\nxyz\x1b[2K\n")),
                (QStringList{QStringLiteral("abcd!"),
                        QStringLiteral("   45")})); // a trailing blank row is dropped by finish()
    }
};

QTEST_GUILESS_MAIN(TestTerminalRenderer)
#include "TestTerminalRenderer.moc"
