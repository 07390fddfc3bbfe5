// AgentFrameDecoder: the Qt side of PROTOCOL.md's framing, fed in every split.

#include "core/agentproto/ConsoleCompression.h"
#include "core/nodes/AgentFrameDecoder.h"

#include <QJsonDocument>
#include <QTest>

using ty::AgentFrame;
using ty::AgentFrameDecoder;

class TestAgentFrameDecoder final : public QObject {
    Q_OBJECT

private:
    // A log-like text (compresses about 10x) and its LZ4 block, as the agent
    // sends it (core/agentproto/ConsoleCompression.h).
    static QByteArray logText(int lines)
    {
        QByteArray t;
        for (int i = 0; i < lines; ++i)
            t += "epoch " + QByteArray::number(i / 100) + " step " + QByteArray::number(i) + " loss=0."
                    + QByteArray::number(9999 - i % 9999) + " lr=0.0010\n";
        return t;
    }
    static QByteArray lz4Block(const QByteArray& raw)
    {
        QByteArray out(qsizetype(ty::agentproto::consoleBlockBound(std::size_t(raw.size()))), '\0');
        const std::size_t n = ty::agentproto::compressConsoleBlock(
                std::string_view(raw.constData(), std::size_t(raw.size())), out.data());
        out.truncate(qsizetype(n));
        return out;
    }
    static QByteArray lz4Frame(const QByteArray& block, qint64 rawSize, qint64 offset = 0)
    {
        return R"({"type":"output","run":"r1","offset":)" + QByteArray::number(offset) + R"(,"lz4":)"
                + QByteArray::number(rawSize) + R"(,"len":)" + QByteArray::number(block.size()) + "}\n" + block;
    }

    static QByteArray stream()
    {
        QByteArray s;
        s += R"({"type":"hello","protocol":1})"
             "\n";
        // Payload with newlines, a NUL, invalid UTF-8 and something that looks like a frame.
        const QByteArray payload = QByteArray("line\n\x00\xff\xfe{\"type\":\"reply\"}\n\r", 26);
        s += R"({"type":"output","run":"r1","offset":0,"len":)" + QByteArray::number(payload.size()) + "}\n" + payload;
        s += R"({"type":"output","run":"r1","offset":26,"len":0})"
             "\n";
        s += R"({"type":"eof","run":"r1","offset":26})"
             "\n";
        return s;
    }

    static void checkFrames(const QList<AgentFrame>& frames)
    {
        QCOMPARE(frames.size(), 4);
        QCOMPARE(frames[0].header.value(QLatin1StringView("protocol")).toInt(), 1);
        QCOMPARE(frames[1].payload, QByteArray("line\n\x00\xff\xfe{\"type\":\"reply\"}\n\r", 26));
        QCOMPARE(frames[1].header.value(QLatin1StringView("offset")).toInteger(), 0);
        QCOMPARE(frames[2].payload.size(), 0);
        QCOMPARE(frames[2].header.value(QLatin1StringView("offset")).toInteger(), 26);
        QCOMPARE(frames[3].header.value(QLatin1StringView("type")).toString(), QStringLiteral("eof"));
    }

private Q_SLOTS:
    void wholeStream()
    {
        AgentFrameDecoder d;
        d.feed(stream());
        QList<AgentFrame> frames;
        while (auto f = d.next())
            frames.append(*f);
        QVERIFY(!d.hasError());
        checkFrames(frames);
        QCOMPARE(d.linesDecoded(), 4);
        QCOMPARE(d.bufferedBytes(), 0);
    }

    void everySplitPoint()
    {
        const QByteArray s = stream();
        for (qsizetype cut = 1; cut < s.size(); ++cut) {
            AgentFrameDecoder d;
            QList<AgentFrame> frames;
            d.feed(s.left(cut));
            while (auto f = d.next())
                frames.append(*f);
            d.feed(s.mid(cut));
            while (auto f = d.next())
                frames.append(*f);
            QVERIFY2(!d.hasError(), qPrintable(d.error()));
            checkFrames(frames);
        }
    }

    void byteByByte()
    {
        const QByteArray s = stream();
        AgentFrameDecoder d;
        QList<AgentFrame> frames;
        for (char c : s) {
            d.feed(QByteArray(1, c));
            while (auto f = d.next())
                frames.append(*f);
        }
        QVERIFY(!d.hasError());
        checkFrames(frames);
    }

    void garbledLineNamesLineAndContent()
    {
        AgentFrameDecoder d;
        d.feed(R"({"type":"hello","protocol":1})"
               "\n"
               R"({"type":"reply","id":1,"ok":true})"
               "\n"
               "Warning: Permanently added 'ws-01' to the list of known hosts.\n"
               R"({"type":"reply","id":2,"ok":true})"
               "\n");
        QVERIFY(d.next().has_value());
        QVERIFY(d.next().has_value());
        QVERIFY(!d.next().has_value());
        QVERIFY(d.hasError());
        QVERIFY2(d.error().contains(QStringLiteral("line 3")), qPrintable(d.error()));
        QVERIFY2(d.error().contains(QStringLiteral("Warning: Permanently added")), qPrintable(d.error()));
        // Nothing after an error.
        d.feed(R"({"type":"reply","id":3,"ok":true})"
               "\n");
        QVERIFY(!d.next().has_value());
    }

    void nonObjectJsonIsAnError()
    {
        AgentFrameDecoder d;
        d.feed("[1,2,3]\n");
        QVERIFY(!d.next().has_value());
        QVERIFY(d.error().contains(QStringLiteral("line 1")));
        QVERIFY(d.error().contains(QStringLiteral("[1,2,3]")));
    }

    void invalidLen()
    {
        AgentFrameDecoder d;
        d.feed(R"({"type":"output","len":-5})"
               "\n");
        QVERIFY(!d.next().has_value());
        QVERIFY2(d.error().contains(QStringLiteral("len")), qPrintable(d.error()));
    }

    void tooLongLine()
    {
        AgentFrameDecoder d;
        QByteArray big(AgentFrameDecoder::kMaxLineBytes + 10, 'x');
        d.feed(big.left(600 * 1024));
        QVERIFY(!d.next().has_value());
        QVERIFY(!d.hasError()); // could still be a valid long-ish line
        d.feed(big.mid(600 * 1024));
        QVERIFY(!d.next().has_value());
        QVERIFY(d.hasError());
        QVERIFY(d.error().contains(QStringLiteral("longer than 1 MiB")));
        // Quotes at most 200 bytes of the line.
        QVERIFY(d.error().size() < 400);
    }

    void quotedLongErrorIsTruncated()
    {
        AgentFrameDecoder d;
        d.feed(QByteArray(5000, 'y') + "\n");
        QVERIFY(!d.next().has_value());
        QVERIFY(d.error().contains(QString(200, u'y')));
        QVERIFY(!d.error().contains(QString(201, u'y')));
    }

    // Revision 8: an LZ4 frame is handed on as the bytes it holds, in any
    // split, between plain frames; the counts say what came compressed.
    void lz4FramesAreDecompressed()
    {
        const QByteArray text = logText(4000);
        const QByteArray block = lz4Block(text);
        QVERIFY2(!block.isEmpty() && block.size() * 3 < text.size(), qPrintable(QString::number(block.size())));
        const QByteArray s = lz4Frame(block, text.size(), 10) + stream() + lz4Frame(block, text.size(), 99);
        for (qsizetype step : {qsizetype(1), qsizetype(7), qsizetype(4096), s.size()}) {
            AgentFrameDecoder d;
            QList<AgentFrame> frames;
            for (qsizetype pos = 0; pos < s.size(); pos += step) {
                d.feed(s.mid(pos, step));
                while (auto f = d.next())
                    frames.append(*f);
            }
            QVERIFY2(!d.hasError(), qPrintable(d.error()));
            QCOMPARE(frames.size(), 6);
            QCOMPARE(frames[0].payload, text);
            QCOMPARE(frames[0].header.value(QLatin1StringView("offset")).toInteger(), 10);
            QCOMPARE(frames[0].header.value(QLatin1StringView("len")).toInteger(), text.size());
            QVERIFY(!frames[0].header.contains(QLatin1StringView("lz4")));
            checkFrames(frames.mid(1, 4));
            QCOMPARE(frames[5].payload, text);
            QCOMPARE(d.compression().frames, 2);
            QCOMPARE(d.compression().wireBytes, 2 * block.size());
            QCOMPARE(d.compression().rawBytes, 2 * text.size());
        }
    }

    // A bad "lz4" is refused at its header line, before any payload is
    // read or room made for it; a block that is not what it says, once read.
    void badLz4FramesNameTheirLine()
    {
        const QByteArray text = logText(500);
        const QByteArray block = lz4Block(text);
        const QByteArray hello = R"({"type":"hello","protocol":1})"
                                 "\n";
        struct Case {
            QByteArray frame;
            QString says;
        };
        // Refused at the header line: the size is not 1..16 MiB, there is no
        // payload, or the payload is longer than any block of 100 bytes can
        // be (a terabyte would otherwise be read and held first).
        QList<Case> cases;
        for (const char* header :
                {R"("lz4":-1,"len":4)", R"("lz4":"ten","len":4)", R"("lz4":1.5,"len":4)", R"("lz4":16777217,"len":4)",
                        R"("lz4":100,"len":0)", R"("lz4":100,"len":1099511627776)", R"("lz4":100,"len":117)"})
            cases.append({R"({"type":"output",)" + QByteArray(header) + "}\n" + QByteArray(117, 'x'),
                    QStringLiteral("invalid \"lz4\"")});
        cases += QList<Case>{
                // The block is whole but says fewer bytes than the header.
                {lz4Frame(block, text.size() + 1),
                        QStringLiteral("is not an LZ4 block of %1 bytes").arg(text.size() + 1)},
                // ... or more.
                {lz4Frame(block, text.size() - 1),
                        QStringLiteral("is not an LZ4 block of %1 bytes").arg(text.size() - 1)},
                // Cut short (the header's len says so) or garbage.
                {lz4Frame(block.left(block.size() / 2), text.size()), QStringLiteral("is not an LZ4 block")},
                {lz4Frame(QByteArray(300, '\xff'), 5000), QStringLiteral("is not an LZ4 block")},
        };
        for (const Case& c : cases) {
            AgentFrameDecoder d;
            d.feed(hello + c.frame
                    + R"({"type":"eof","run":"r1","offset":0})"
                      "\n");
            QVERIFY(d.next().has_value()); // the hello
            QVERIFY(!d.next().has_value());
            QVERIFY2(d.hasError(), qPrintable(QString::fromLatin1(c.frame.left(60))));
            QVERIFY2(d.error().contains(QStringLiteral("line 2")), qPrintable(d.error()));
            QVERIFY2(d.error().contains(c.says), qPrintable(d.error()));
            QVERIFY(!d.next().has_value()); // nothing after an error
            QCOMPARE(d.compression().frames, 0);
        }
    }

    void largePayloadInPieces()
    {
        QByteArray payload(3 * 1024 * 1024 + 7, '\0');
        for (qsizetype i = 0; i < payload.size(); ++i)
            payload[i] = char((i * 131) & 0xff);
        const QByteArray s = R"({"type":"output","run":"big","offset":5,"len":)" + QByteArray::number(payload.size())
                + "}\n" + payload
                + R"({"type":"eof","run":"big","offset":99})"
                  "\n";
        AgentFrameDecoder d;
        QList<AgentFrame> frames;
        for (qsizetype pos = 0; pos < s.size(); pos += 65521) {
            d.feed(s.mid(pos, 65521));
            while (auto f = d.next())
                frames.append(*f);
        }
        QCOMPARE(frames.size(), 2);
        QCOMPARE(frames[0].payload, payload);
        QCOMPARE(frames[1].header.value(QLatin1StringView("offset")).toInteger(), 99);
    }
};

QTEST_GUILESS_MAIN(TestAgentFrameDecoder)
#include "TestAgentFrameDecoder.moc"
