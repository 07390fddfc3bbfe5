// core/agentproto: the agent protocol's framer (FrameSplitter) and stderr
// ranges, the one implementation behind the agent's FrameReader and the
// core's AgentFrameDecoder / StderrSidecar. Fed in every split; the error
// texts of both adapters pinned to the letter.

#include "app/agent/Framing.h"
#include "core/agentproto/FrameSplitter.h"
#include "core/agentproto/StderrRanges.h"
#include "core/nodes/AgentFrameDecoder.h"

#include <QTest>

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

using ty::agentproto::ByteRange;
using ty::agentproto::FrameSplitter;

namespace {

// A frame as a test adapter sees it: the header line, raw, and its payload.
struct Frame {
    std::string header;
    std::string payload;
    bool operator==(const Frame&) const = default;
};

// "len" of a header line, read without a JSON library (the lines below are
// written so): -1 when there is none.
long long lenOf(std::string_view line)
{
    const std::size_t at = line.find("\"len\":");
    if (at == std::string_view::npos)
        return -1;
    long long n = -1;
    std::from_chars(line.data() + at + 6, line.data() + line.size(), n);
    return n;
}

// Drives a splitter the way an adapter does: a buffer of what was not taken.
struct Driver {
    FrameSplitter splitter;
    std::string buf;
    std::vector<Frame> frames;
    std::optional<Frame> pending;
    std::size_t payloadPieces = 0;
    bool payloadViewsIntoInput = true; // every Payload piece pointed into the input

    void feed(std::string_view bytes)
    {
        buf.append(bytes);
        for (;;) {
            const std::string_view input(buf);
            const FrameSplitter::Piece p = splitter.next(input);
            if (p.kind == FrameSplitter::Kind::NeedMore || p.kind == FrameSplitter::Kind::Error) {
                QCOMPARE(p.taken, std::size_t(0));
                if (p.kind == FrameSplitter::Kind::NeedMore && !splitter.inPayload())
                    QCOMPARE(buf.size(), input.size()); // a partial line stays with the caller
                break;
            }
            if (p.bytes.data() < input.data() || p.bytes.data() + p.bytes.size() > input.data() + input.size())
                payloadViewsIntoInput = false;
            if (p.kind == FrameSplitter::Kind::Payload) {
                ++payloadPieces;
                pending->payload.append(p.bytes);
                if (p.payloadDone) {
                    frames.push_back(*pending);
                    pending.reset();
                }
            } else {
                const long long len = lenOf(p.bytes);
                if (len > 0) {
                    pending = Frame{std::string(p.bytes), {}};
                    splitter.expectPayload(std::uint64_t(len));
                } else {
                    frames.push_back(Frame{std::string(p.bytes), {}});
                }
            }
            buf.erase(0, p.taken);
        }
    }
};

const std::string kPayload("line\n\x00\xff\xfe{\"type\":\"reply\"}\n\r", 26);

std::string stream()
{
    return std::string(R"({"type":"hello","protocol":1})") + "\n"
            + R"({"type":"output","run":"r1","offset":0,"len":26})" + "\n" + kPayload
            + R"({"type":"output","run":"r1","offset":26,"len":0})" + "\n" + R"({"type":"eof","run":"r1","offset":26})"
            + "\n";
}

const std::vector<Frame> kFrames{
        {R"({"type":"hello","protocol":1})", {}},
        {R"({"type":"output","run":"r1","offset":0,"len":26})", kPayload},
        {R"({"type":"output","run":"r1","offset":26,"len":0})", {}},
        {R"({"type":"eof","run":"r1","offset":26})", {}},
};

QString coreError(const QByteArray& bytes)
{
    ty::AgentFrameDecoder d;
    d.feed(bytes);
    while (d.next()) { }
    return d.error();
}

std::string agentError(const std::string& bytes)
{
    ty::agent::FrameReader r;
    r.append(bytes.data(), bytes.size());
    while (r.next()) { }
    return r.error();
}

} // namespace

class TestAgentFraming final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void wholeStream()
    {
        Driver d;
        d.feed(stream());
        QVERIFY(!d.splitter.hasError());
        QVERIFY(d.frames == kFrames);
        QCOMPARE(d.splitter.lines(), std::uint64_t(4));
        QCOMPARE(d.payloadPieces, std::size_t(1));
        QVERIFY(d.payloadViewsIntoInput);
        QVERIFY(d.buf.empty());
    }

    void everySplitPoint()
    {
        const std::string s = stream();
        for (std::size_t cut = 1; cut < s.size(); ++cut) {
            Driver d;
            d.feed(std::string_view(s).substr(0, cut));
            d.feed(std::string_view(s).substr(cut));
            QVERIFY2(!d.splitter.hasError(), d.splitter.error().c_str());
            QVERIFY2(d.frames == kFrames, qPrintable(QStringLiteral("cut at %1").arg(cut)));
            QVERIFY(d.buf.empty());
        }
    }

    void byteByByte()
    {
        Driver d;
        for (char c : stream())
            d.feed(std::string_view(&c, 1));
        QVERIFY(!d.splitter.hasError());
        QVERIFY(d.frames == kFrames);
        QCOMPARE(d.payloadPieces, kPayload.size()); // one byte at a time, each handed on at once
        QVERIFY(d.payloadViewsIntoInput);
    }

    void payloadIsHandedOnAsItArrives()
    {
        FrameSplitter s;
        const std::string head = R"({"type":"output","len":10})"
                                 "\n";
        auto p = s.next(head + "abc");
        QCOMPARE(p.kind, FrameSplitter::Kind::Header);
        QCOMPARE(p.taken, head.size());
        s.expectPayload(10);
        QVERIFY(s.inPayload());
        const std::string rest = "abc";
        p = s.next(rest);
        QCOMPARE(p.kind, FrameSplitter::Kind::Payload);
        QCOMPARE(p.bytes, std::string_view("abc"));
        QVERIFY(p.bytes.data() == rest.data()); // a view, not a copy
        QVERIFY(!p.payloadDone);
        QCOMPARE(s.payloadLeft(), std::uint64_t(7));
        QCOMPARE(s.next({}).kind, FrameSplitter::Kind::NeedMore);
        // The payload's end and the next line in one input: only the payload is taken.
        const std::string more = "defghij{\"type\":\"eof\"}\n";
        p = s.next(more);
        QCOMPARE(p.kind, FrameSplitter::Kind::Payload);
        QCOMPARE(p.bytes, std::string_view("defghij"));
        QVERIFY(p.payloadDone);
        QCOMPARE(p.taken, std::size_t(7));
        p = s.next(std::string_view(more).substr(7));
        QCOMPARE(p.kind, FrameSplitter::Kind::Header);
        QCOMPARE(p.bytes, std::string_view(R"({"type":"eof"})"));
        QCOMPARE(s.lines(), std::uint64_t(2));
    }

    void lineLimit()
    {
        // Exactly 1 MiB is a line; a byte more is not, with or without its '\n'.
        const std::string max(ty::agentproto::kMaxLineBytes, 'x');
        FrameSplitter ok;
        QCOMPARE(ok.next(max).kind, FrameSplitter::Kind::NeedMore);
        QVERIFY(!ok.hasError());
        const auto p = ok.next(max + "\n");
        QCOMPARE(p.kind, FrameSplitter::Kind::Header);
        QCOMPARE(p.bytes.size(), max.size());

        const std::string expected = "protocol error: line 2 is longer than 1 MiB: " + std::string(200, 'y');
        for (const bool newline : {false, true}) {
            FrameSplitter s;
            QCOMPARE(s.next("{}\n").kind, FrameSplitter::Kind::Header);
            const std::string line = std::string(ty::agentproto::kMaxLineBytes + 1, 'y') + (newline ? "\n" : "");
            const auto e = s.next(line);
            QCOMPARE(e.kind, FrameSplitter::Kind::Error);
            QCOMPARE(e.taken, std::size_t(0));
            QCOMPARE(s.error(), expected);
            QCOMPARE(std::string(s.errorQuote()), std::string(200, 'y'));
            QCOMPARE(s.lines(), std::uint64_t(2));
            // Nothing more after an error.
            QCOMPARE(s.next("{}\n").kind, FrameSplitter::Kind::Error);
        }

        // Both adapters, whole and in two pieces: the same text as before the
        // framer was shared.
        const std::string big = R"({"type":"hello"})"
                                "\n"
                + std::string(ty::agentproto::kMaxLineBytes + 10, 'z');
        QCOMPARE(agentError(big), "protocol error: line 2 is longer than 1 MiB: " + std::string(200, 'z'));
        QCOMPARE(coreError(QByteArray::fromStdString(big)),
                QStringLiteral("protocol error: line 2 is longer than 1 MiB: ") + QString(200, u'z'));
        ty::AgentFrameDecoder d;
        d.feed(QByteArray::fromStdString(big.substr(0, 600 * 1024)));
        QVERIFY(d.next().has_value());
        QVERIFY(!d.next().has_value());
        QVERIFY(!d.hasError());
        d.feed(QByteArray::fromStdString(big.substr(600 * 1024)));
        QVERIFY(!d.next().has_value());
        QCOMPARE(d.error(), QStringLiteral("protocol error: line 2 is longer than 1 MiB: ") + QString(200, u'z'));
    }

    void refusedLineQuotesIt()
    {
        FrameSplitter s;
        QCOMPARE(s.next("{}\n").kind, FrameSplitter::Kind::Header);
        const std::string line = "[1,2,3]\n";
        const auto p = s.next(line);
        QCOMPARE(p.kind, FrameSplitter::Kind::Header);
        s.fail("is not a JSON object");
        QCOMPARE(s.error(), std::string("protocol error: line 2 is not a JSON object: [1,2,3]"));
        QCOMPARE(s.errorQuote(), std::string_view("[1,2,3]"));
        QCOMPARE(s.next(std::string_view(line).substr(p.taken)).kind, FrameSplitter::Kind::Error);

        // A long refused line: its first 200 bytes, not one more.
        FrameSplitter l;
        const std::string longLine = std::string(5000, 'q') + "\n";
        QCOMPARE(l.next(longLine).kind, FrameSplitter::Kind::Header);
        l.fail("is not a JSON object");
        QCOMPARE(l.error(), "protocol error: line 1 is not a JSON object: " + std::string(200, 'q'));

        // The adapters' own words, as before.
        QCOMPARE(agentError("[1,2,3]\n"), std::string("protocol error: line 1 is not a JSON object: [1,2,3]"));
        QCOMPARE(coreError("[1,2,3]\n"),
                QStringLiteral("protocol error: line 1 is not a JSON object (not a JSON object): [1,2,3]"));
        QCOMPARE(coreError("{\"a\":}\n"),
                QStringLiteral(
                        "protocol error: line 1 is not a JSON object (object is missing after a comma at column 7): {\"a\":}"));
        QCOMPARE(agentError("{\"type\":\"output\",\"len\":-5}\n"),
                std::string("protocol error: line 1 has an invalid \"len\": {\"type\":\"output\",\"len\":-5}"));
        QCOMPARE(coreError("{\"type\":\"output\",\"len\":-5}\n"),
                QStringLiteral("protocol error: line 1 has an invalid \"len\": {\"type\":\"output\",\"len\":-5}"));
        // Invalid UTF-8 in the quote: raw for the agent, U+FFFD for the core.
        QCOMPARE(agentError("\xff[\n"), std::string("protocol error: line 1 is not a JSON object: \xff["));
        QVERIFY(coreError("\xff[\n").endsWith(QStringLiteral(": \uFFFD[")));
    }

    void adaptersAgreeInEverySplit()
    {
        const std::string s = stream();
        for (std::size_t cut = 0; cut <= s.size(); ++cut) {
            ty::agent::FrameReader r;
            ty::AgentFrameDecoder d;
            std::vector<std::string> agentPayloads;
            QList<QByteArray> corePayloads;
            for (const std::string_view part : {std::string_view(s).substr(0, cut), std::string_view(s).substr(cut)}) {
                r.append(part.data(), part.size());
                while (auto f = r.next())
                    agentPayloads.push_back(f->payload);
                d.feed(QByteArray(part.data(), qsizetype(part.size())));
                while (auto f = d.next())
                    corePayloads.append(f->payload);
            }
            QCOMPARE(agentPayloads.size(), std::size_t(4));
            QCOMPARE(corePayloads.size(), 4);
            QCOMPARE(agentPayloads[1], kPayload);
            QCOMPARE(corePayloads[1], QByteArray::fromStdString(kPayload));
            QCOMPARE(r.linesRead(), std::uint64_t(4));
            QCOMPARE(d.linesDecoded(), 4);
            QCOMPARE(d.bufferedBytes(), 0);
        }
    }

    void stderrLines()
    {
        using ty::agentproto::parseStderrLine;
        QCOMPARE(ty::agentproto::formatStderrRange(5, 10), std::string("5 10\n"));
        QCOMPARE(ty::agentproto::formatStderrTruncation(7), std::string("7 0\n"));
        QCOMPARE(parseStderrLine("5 10"), std::optional<ByteRange>(ByteRange{5, 10}));
        QCOMPARE(parseStderrLine("7 0"), std::optional<ByteRange>(ByteRange{7, 0}));
        QCOMPARE(parseStderrLine("9223372036854775807 1"),
                std::optional<ByteRange>(ByteRange{9223372036854775807LL, 1}));
        for (const char* bad : {"", "5", "5 ", " 5 10", "5  10", "5 10 ", "-1 3", "5 -3", "a b", "5 1x", "5\t10",
                     "99999999999999999999 1"})
            QVERIFY2(!parseStderrLine(bad), bad);
    }

    void sidecarInEverySplit()
    {
        // Two ranges that touch (merged), a malformed line, a truncation to 12
        // (cuts [10, 14) to [10, 12), drops [20, 25)), then new content.
        const std::string text = "0 4\n4 2\n10 4\nbad line\n20 5\n12 0\n12 3\n30 1\n";
        const std::vector<ByteRange> expected{{0, 6}, {10, 5}, {30, 1}};
        for (std::size_t cut = 0; cut <= text.size(); ++cut) {
            ty::agentproto::StderrSidecarReader r;
            ty::agentproto::StderrRangeSet set;
            r.consume(std::string_view(text).substr(0, cut), 0, set);
            r.consume(std::string_view(text).substr(cut), 0, set);
            QVERIFY2(std::vector<ByteRange>(set.begin(), set.end()) == expected, qPrintable(QString::number(cut)));
            QCOMPARE(r.truncations(), 1LL);
        }
        // keepFrom: ranges that end at or before it are not kept.
        ty::agentproto::StderrSidecarReader r;
        ty::agentproto::StderrRangeSet set;
        r.consume("0 4\n6 2\n10 4\n", 8, set);
        QVERIFY((std::vector<ByteRange>(set.begin(), set.end()) == std::vector<ByteRange>{{10, 4}}));
        r.consume("", 14, set);
        QVERIFY(set.empty());
    }

    void rangeSet()
    {
        ty::agentproto::StderrRangeSet s;
        s.add(10, 5);
        s.add(15, 5); // adjacent: merged
        s.add(30, 2);
        s.add(0, 0);  // empty: ignored
        s.add(-4, 2); // negative: ignored
        QVERIFY((std::vector<ByteRange>(s.begin(), s.end()) == std::vector<ByteRange>{{10, 10}, {30, 2}}));
        s.add(18, 13); // overlapping both: one range
        QVERIFY((std::vector<ByteRange>(s.begin(), s.end()) == std::vector<ByteRange>{{10, 22}}));
        QVERIFY(s.intersects(31, 40));
        QVERIFY(!s.intersects(32, 40));
        QVERIFY(!s.intersects(0, 10));

        ty::agentproto::StderrRangeSet t;
        for (long long i = 0; i < 10; ++i)
            t.add(i * 10, 2);
        long long to = 100;
        auto got = t.take(5, to, 3); // [10,12) [20,22) [30,32); the fourth starts at 40
        QVERIFY((got == std::vector<ByteRange>{{10, 2}, {20, 2}, {30, 2}}));
        QCOMPARE(to, 40LL);
        to = 21;
        got = t.take(1, to, 100); // clipped to [1, 21)
        QVERIFY((got == std::vector<ByteRange>{{1, 1}, {10, 2}, {20, 1}}));
        QCOMPARE(to, 21LL);
        t.cutAt(41);
        QCOMPARE(t.size(), std::size_t(5));
        QCOMPARE(*std::prev(t.end()), (ByteRange{40, 1}));
    }
};

QTEST_GUILESS_MAIN(TestAgentFraming)
#include "TestAgentFraming.moc"
