// ScrollbackChunk / ConsoleScrollback: the packed rows a console view draws
// from (ui/console/ConsoleScrollback.h).
#include "ui/console/ConsoleScrollback.h"

#include <QTest>

using namespace ty;

namespace {

ConsoleLine line(const QString& text, QList<StyleSpan> spans = {}, bool fromStderr = false)
{
    ConsoleLine l;
    l.text = text;
    l.spans = std::move(spans);
    l.fromStderr = fromStderr;
    l.fullLength = text.size();
    return l;
}

StyleSpan span(int start, int length, quint32 fg, quint8 flags = 0)
{
    return StyleSpan{start, length, fg, 0, flags};
}

// Every row of `c` as (text, spans, stderr, truncated, fullLength) equals `want`.
void compareRows(const ScrollbackChunk& c, const QList<ConsoleLine>& want)
{
    QCOMPARE(c.rowCount(), want.size());
    for (int i = 0; i < c.rowCount(); ++i) {
        QCOMPARE(c.text(i), want[i].text);
        QCOMPARE(c.length(i), want[i].text.size());
        QCOMPARE(c.spans(i), want[i].spans);
        QCOMPARE(c.fromStderr(i), want[i].fromStderr);
        QCOMPARE(c.truncated(i), want[i].truncated);
        QCOMPARE(c.fullLength(i), want[i].fullLength);
        // The same row whole, as the view draws it.
        const ConsoleLine l = c.line(i);
        QCOMPARE(l.text, want[i].text);
        QCOMPARE(l.spans, want[i].spans);
        QCOMPARE(l.fromStderr, want[i].fromStderr);
        QCOMPARE(l.truncated, want[i].truncated);
        QCOMPARE(l.fullLength, want[i].fullLength);
    }
}

} // namespace

class TestConsoleScrollback : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void rowsSurviveTheSwitchToUtf16()
    {
        // Latin-1 rows, then one that needs UTF-16 (box drawing, an emoji's
        // surrogate pair), then Latin-1 again; a span, a stderr row and a
        // truncated row among them.
        QList<ConsoleLine> rows{line(QStringLiteral("epoch 1 caf\u00e9")),
                line(QStringLiteral("plain"), {span(0, 5, 0xFF00FF00u, StyleSpan::Bold)}),
                line(QStringLiteral("Traceback"), {}, true), line(QStringLiteral("\u2502 bar \U0001F600 \u2502")),
                line(QString())};
        ConsoleLine cut = line(QStringLiteral("xxxx"));
        cut.truncated = true;
        cut.fullLength = 10'000'000;
        rows << cut << line(QStringLiteral("after"), {span(1, 2, 0xFFFF0000u)});
        ScrollbackChunk c;
        for (const ConsoleLine& l : rows)
            c.append(l);
        compareRows(c, rows);
        QCOMPARE(c.maxRowLength(), 12); // "epoch 1 café"
    }

    void spansOutsideTheTextAreClipped()
    {
        ScrollbackChunk c;
        c.append(line(QStringLiteral("abc"), {span(1, 10, 0xFF0000FFu), span(5, 2, 0xFF00FF00u), span(0, 0, 1)}));
        QCOMPARE(c.spans(0), (QList<StyleSpan>{span(1, 2, 0xFF0000FFu)}));
    }

    void mergedChunksEqualOneBuiltRowByRow()
    {
        // Every mix of encodings and span / no-span halves.
        const QList<ConsoleLine> latin{line(QStringLiteral("a1")), line(QStringLiteral("b\u00ff2"), {}, true)};
        const QList<ConsoleLine> latinSpans{line(QStringLiteral("c3"), {span(0, 1, 0xFF123456u)})};
        const QList<ConsoleLine> wide{line(QStringLiteral("\u4e2d\u6587")), line(QStringLiteral("d4"))};
        ConsoleLine cut = line(QStringLiteral("yy"));
        cut.truncated = true;
        cut.fullLength = 99;
        const QList<QList<ConsoleLine>> parts{latin, latinSpans, wide, {cut}};
        for (const auto& first : parts) {
            for (const auto& second : parts) {
                ScrollbackChunk a;
                ScrollbackChunk b;
                for (const ConsoleLine& l : first)
                    a.append(l);
                for (const ConsoleLine& l : second)
                    b.append(l);
                a.append(b);
                compareRows(a, first + second);
            }
        }
    }

    void findsInBothEncodings()
    {
        for (bool wide : {false, true}) {
            ScrollbackChunk c;
            c.append(line(QStringLiteral("Loss went up, loss went down")));
            c.append(line(wide ? QStringLiteral("\u2502 LOSS \u2502") : QStringLiteral("| LOSS |")));
            c.append(line(QStringLiteral("nothing")));
            QCOMPARE(c.indexOf(0, u"loss", 0, Qt::CaseInsensitive, false), 0);
            QCOMPARE(c.indexOf(0, u"loss", 1, Qt::CaseInsensitive, false), 14);
            QCOMPARE(c.indexOf(0, u"loss", 0, Qt::CaseSensitive, false), 14);
            QCOMPARE(c.indexOf(0, u"loss", 13, Qt::CaseInsensitive, true), 0);
            QCOMPARE(c.indexOf(1, u"loss", 0, Qt::CaseInsensitive, false), 2);
            QCOMPARE(c.indexOf(2, u"loss", 0, Qt::CaseInsensitive, false), -1);
            // A match never runs from one row into the next.
            QCOMPARE(c.count(u"downnothing", Qt::CaseInsensitive), 0);
            QCOMPARE(c.count(u"loss", Qt::CaseInsensitive), 3);
            QCOMPARE(c.count(u"loss", Qt::CaseSensitive), 1);
        }
    }

    void matchesDoNotOverlap()
    {
        // As find highlights them: "aa" twice in "aaaa", in both encodings,
        // in a chunk and in a plain string (the view's pending rows).
        QCOMPARE(countMatches(QStringView(u"aaaa"), u"aa", Qt::CaseSensitive), 2);
        QCOMPARE(countMatches(QLatin1StringView("aAaAa"), u"aa", Qt::CaseInsensitive), 2);
        QCOMPARE(countMatches(QStringView(u"aaaa"), u"", Qt::CaseSensitive), 0);
        for (const QString& row : {QStringLiteral("aaaa"), QStringLiteral("\u2502aaaa")}) {
            ScrollbackChunk c;
            c.append(line(row));
            c.append(line(QStringLiteral("aaa")));
            QCOMPARE(c.count(u"aa", Qt::CaseSensitive), 3);
        }
    }

    void scrollbackLocatesMergesAndLetsGo()
    {
        // Chunks of 1,000 rows ("r<N>"), then single rows: single rows merge
        // into the last chunk; at the budget the oldest chunks go, whole.
        ConsoleScrollback back(200 * 1024);
        qint64 n = 0;
        qint64 droppedTotal = 0;
        auto chunkOf = [&](int rows) {
            auto c = std::make_shared<ScrollbackChunk>();
            for (int i = 0; i < rows; ++i)
                c->append(line(QStringLiteral("r%1").arg(n++)));
            return c;
        };
        for (int k = 0; k < 10; ++k)
            droppedTotal += back.append(chunkOf(1000));
        QCOMPARE(back.rowCount() + back.droppedRows(), 10000);
        for (int k = 0; k < 3000; ++k)
            droppedTotal += back.append(chunkOf(1));
        QCOMPARE(droppedTotal, back.droppedRows());
        QCOMPARE(back.rowCount() + back.droppedRows(), n);
        QVERIFY(back.memoryBytes() <= back.budgetBytes());
        for (qint64 r = 0; r < back.rowCount(); r += 37)
            QCOMPARE(back.text(r), QStringLiteral("r%1").arg(back.droppedRows() + r));
        QCOMPARE(back.text(back.rowCount() - 1), QStringLiteral("r%1").arg(n - 1));

        // A tiny budget: let go down to the newest chunk, never below it.
        ConsoleScrollback tiny(1);
        tiny.append(chunkOf(10));
        QCOMPARE(tiny.append(chunkOf(ScrollbackChunk::kMaxRows)), 10);
        QCOMPARE(tiny.rowCount(), ScrollbackChunk::kMaxRows);
        QCOMPARE(tiny.text(0), QStringLiteral("r%1").arg(n - ScrollbackChunk::kMaxRows));
    }
};

QTEST_GUILESS_MAIN(TestConsoleScrollback)
#include "TestConsoleScrollback.moc"
