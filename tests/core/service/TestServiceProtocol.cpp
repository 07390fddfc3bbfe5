// The `console` event's direct encoding (#27): the same bytes encode()
// makes of the QJsonObject, read back exactly, and any other line left to
// decode().
#include "core/service/ServiceProtocol.h"

#include <QJsonObject>
#include <QTest>

using namespace ty;
using namespace ty::service;

class TestServiceProtocol final : public QObject {
    Q_OBJECT

    static QByteArray viaJson(qint64 run, qint64 offset, const QByteArray& bytes)
    {
        return encode({{QStringLiteral("event"), QStringLiteral("console")}, {QStringLiteral("run"), run},
                {QStringLiteral("offset"), offset}, {QStringLiteral("data"), QString::fromLatin1(bytes.toBase64())}});
    }

private Q_SLOTS:
    void consoleEventIsTheJsonLineByteForByte_data()
    {
        QTest::addColumn<qint64>("run");
        QTest::addColumn<qint64>("offset");
        QTest::addColumn<QByteArray>("bytes");
        QByteArray all;
        for (int i = 0; i < 256; ++i)
            all.append(char(i));
        QTest::newRow("empty") << qint64(1) << qint64(0) << QByteArray();
        QTest::newRow("line") << qint64(42) << qint64(123456789012) << QByteArray("step=1 loss=0.5\n");
        QTest::newRow("every byte") << qint64(7) << qint64(3) << all;
        QTest::newRow("64 KiB") << qint64(99999) << qint64(1) << all.repeated(256);
    }

    void consoleEventIsTheJsonLineByteForByte()
    {
        QFETCH(qint64, run);
        QFETCH(qint64, offset);
        QFETCH(QByteArray, bytes);
        const QByteArray line = encodeConsoleEvent(run, offset, bytes);
        QCOMPARE(line, viaJson(run, offset, bytes));
        const auto back = decodeConsoleEvent(line);
        QVERIFY(back);
        QCOMPARE(back->run, run);
        QCOMPARE(back->offset, offset);
        QCOMPARE(back->bytes, bytes);
        // Without its newline too (LineBuffer's lines may come either way).
        QVERIFY(decodeConsoleEvent(line.chopped(1)));
        // decode() reads it as ever.
        const auto json = decode(line);
        QVERIFY(json);
        QCOMPARE(QByteArray::fromBase64(json->value(QStringLiteral("data")).toString().toLatin1()), bytes);
    }

    void otherLinesAreLeftToDecode_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::newRow("another event") << QByteArray("{\"event\":\"state\",\"run\":{}}\n");
        QTest::newRow("keys in another order")
                << QByteArray("{\"event\":\"console\",\"data\":\"YQ==\",\"offset\":0,\"run\":1}\n");
        QTest::newRow("extra key") << QByteArray(
                "{\"data\":\"YQ==\",\"event\":\"console\",\"offset\":0,\"run\":1,\"x\":2}\n");
        QTest::newRow("negative offset") << QByteArray(
                "{\"data\":\"YQ==\",\"event\":\"console\",\"offset\":-1,\"run\":1}\n");
        QTest::newRow("bad base64") << QByteArray("{\"data\":\"Y*==\",\"event\":\"console\",\"offset\":0,\"run\":1}\n");
        QTest::newRow("escaped data") << QByteArray(
                "{\"data\":\"Y\\u0051==\",\"event\":\"console\",\"offset\":0,\"run\":1}\n");
        QTest::newRow("trailing bytes") << QByteArray(
                "{\"data\":\"YQ==\",\"event\":\"console\",\"offset\":0,\"run\":1} \n");
        QTest::newRow("cut short") << QByteArray("{\"data\":\"YQ==\",\"event\":\"console\",\"offset\":0,\"run\":");
        QTest::newRow("huge number") << QByteArray(
                "{\"data\":\"YQ==\",\"event\":\"console\",\"offset\":99999999999999999999,\"run\":1}\n");
    }

    void otherLinesAreLeftToDecode()
    {
        QFETCH(QByteArray, line);
        QVERIFY(!decodeConsoleEvent(line));
    }
};

QTEST_GUILESS_MAIN(TestServiceProtocol)
#include "TestServiceProtocol.moc"
