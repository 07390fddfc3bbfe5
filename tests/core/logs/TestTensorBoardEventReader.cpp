// TensorBoardEventReader / TfRecordReader / decodeTfEvent / crc32c: the real
// Lightning event file, hand-encoded events (simple_value, float/double
// tensors in every encoding, plugin metadata), corruption, truncation, resume.
#include "ImporterTestUtil.h"
#include "tests/support/TestSupport.h"
#include "core/logs/importers/Crc32c.h"
#include "core/logs/importers/TensorBoardEventReader.h"
#include "core/logs/importers/TfEventDecoder.h"
#include "core/logs/importers/TfRecordReader.h"

#include <QMap>
#include <QTest>
#include <QtEndian>

#include <cmath>
#include <cstring>

using namespace ty;

namespace {

const QString kFixture
        = QStringLiteral("gpu-workstation/frameworks/lightning-tensorboard/events.out.tfevents.1795990854.vm.564.0");

// ---- a minimal protobuf / TFRecord writer, independent of the reader ----
QByteArray varint(quint64 v)
{
    QByteArray out;
    do {
        unsigned char b = v & 0x7F;
        v >>= 7;
        if (v)
            b |= 0x80;
        out.append(char(b));
    } while (v);
    return out;
}
QByteArray key(int field, int wire)
{
    return varint(quint64(field) << 3 | quint64(wire));
}
QByteArray lenField(int field, const QByteArray& payload)
{
    return key(field, 2) + varint(quint64(payload.size())) + payload;
}
QByteArray f32(float f)
{
    quint32 u;
    std::memcpy(&u, &f, 4);
    QByteArray b(4, 0);
    qToLittleEndian(u, b.data());
    return b;
}
QByteArray f64(double d)
{
    quint64 u;
    std::memcpy(&u, &d, 8);
    QByteArray b(8, 0);
    qToLittleEndian(u, b.data());
    return b;
}
QByteArray makeEvent(double wall, qint64 step, const QList<QByteArray>& values)
{
    QByteArray summary;
    for (const QByteArray& v : values)
        summary += lenField(1, v);
    QByteArray ev = key(1, 1) + f64(wall);
    if (step)
        ev += key(2, 0) + varint(quint64(step));
    return ev + lenField(5, summary);
}
QByteArray simpleValue(const QByteArray& tag, float v)
{
    return lenField(1, tag) + key(2, 5) + f32(v);
}
QByteArray scalarsMetadata(const QByteArray& plugin)
{
    return lenField(9, lenField(1, lenField(1, plugin)));
}
QByteArray record(const QByteArray& data)
{
    QByteArray len(8, 0);
    qToLittleEndian(quint64(data.size()), len.data());
    QByteArray c1(4, 0), c2(4, 0);
    qToLittleEndian(maskCrc32c(crc32c(len)), c1.data());
    qToLittleEndian(maskCrc32c(crc32c(data)), c2.data());
    return len + c1 + data + c2;
}

// Record boundaries of a TFRecord file, by walking the length fields.
QList<qint64> recordOffsets(const QByteArray& file)
{
    QList<qint64> offs;
    qint64 pos = 0;
    while (pos + 12 <= file.size()) {
        offs.append(pos);
        pos += 16 + qint64(qFromLittleEndian<quint64>(file.constData() + pos));
    }
    return offs;
}

using test::byKey;

} // namespace

class TestTensorBoardEventReader : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void crc32cKnownValues()
    {
        // RFC 3720 B.4 check value and iSCSI test vectors.
        QCOMPARE(crc32c("123456789"), 0xE3069283u);
        QCOMPARE(crc32c(QByteArray(32, '\0')), 0x8A9136AAu);
        QCOMPARE(crc32c(QByteArray(32, '\xFF')), 0x62A8AB43u);
        QByteArray inc;
        for (int i = 0; i < 32; ++i)
            inc.append(char(i));
        QCOMPARE(crc32c(inc), 0x46DD794Eu);
        QCOMPARE(crc32c("6789", crc32c("12345")), 0xE3069283u);
        QCOMPARE(crc32c(QByteArrayView()), 0u);
        // The first record header of the real file: 8 length bytes, then the masked CRC.
        const QByteArray file = test::readFixture(kFixture);
        QVERIFY(file.size() > 16);
        QCOMPARE(maskCrc32c(crc32c(QByteArrayView(file).first(8))), qFromLittleEndian<quint32>(file.constData() + 8));
    }

    void lightningFixture()
    {
        const QByteArray file = test::readFixture(kFixture);
        QCOMPARE(file.size(), 3694);
        TensorBoardEventReader r(QStringLiteral("events"));
        const QList<ImportedMetric> ms = test::readInChunks(r, file, file.size());
        QVERIFY2(!r.hasError(), qPrintable(r.error()));
        QCOMPARE(r.warningCount(), 0);
        QCOMPARE(r.recordsRead(), 77); // 1 file_version + 1 hp_metric + 3 hparams + 72 scalar events
        QCOMPARE(r.consumedOffset(), qint64(file.size()));
        const auto keys = byKey(ms);
        // hparams plugin values (`_hparams_/...`) are not scalars; `epoch` became the epoch field.
        QCOMPARE(keys.keys(), (QStringList{"hp_metric", "train_loss", "val_acc", "val_loss"}));
        QCOMPARE(keys["train_loss"].size(), 27);
        QCOMPARE(keys["val_loss"].size(), 6);
        QCOMPARE(keys["val_acc"].size(), 6);
        QCOMPARE(keys["hp_metric"].size(), 1);
        QCOMPARE(keys["hp_metric"][0].value, -1.0);
        QCOMPARE(keys["hp_metric"][0].step, 0); // no step field: proto3 default
        QVERIFY(!keys["hp_metric"][0].epoch);
        // The hparams are the run's params: the names and values of the
        // hparams.yaml Lightning wrote beside the events file.
        QMap<QString, QString> yaml;
        for (const QByteArray& line :
                test::readFixture(QStringLiteral("gpu-workstation/frameworks/lightning-tensorboard/hparams.yaml"))
                        .split('\n')) {
            const qsizetype colon = line.indexOf(": ");
            if (colon > 0)
                yaml.insert(QString::fromUtf8(line.first(colon)), QString::fromUtf8(line.sliced(colon + 2)).trimmed());
        }
        QCOMPARE(yaml, (QMap<QString, QString>{{"hidden", "128"}, {"lr", "0.001"}}));
        QCOMPARE(r.params(), yaml);
        for (qsizetype chunk : {qsizetype(1), qsizetype(100)}) {
            TensorBoardEventReader split;
            test::readInChunks(split, file, chunk);
            QCOMPARE(split.params(), yaml);
        }

        const ImportedMetric& first = keys["train_loss"].first();
        QCOMPARE(first.step, 4);
        QCOMPARE(first.value, double(2.268441677093506f));
        QCOMPARE(first.epoch, std::optional<double>(0.0));
        QCOMPARE(first.wallTimeMs, std::optional<qint64>(1795990854604)); // 1795990854.6044207 s
        const ImportedMetric& lastAcc = keys["val_acc"].last();
        QCOMPARE(lastAcc.step, 137);
        QCOMPARE(lastAcc.value, double(0.9055555462837219f));
        QCOMPARE(lastAcc.epoch, std::optional<double>(5.0));
        // val_loss is written before `epoch` at the same step: it gets the epoch too.
        QCOMPARE(keys["val_loss"][0].step, 22);
        QCOMPARE(keys["val_loss"][0].epoch, std::optional<double>(0.0));
        QCOMPARE(keys["val_loss"][4].step, 114);
        QCOMPARE(keys["val_loss"][4].epoch, std::optional<double>(4.0));

        // Any split gives the same samples.
        for (qsizetype chunk : {1, 7, 16, 100, 1000}) {
            TensorBoardEventReader r2;
            QCOMPARE(test::readInChunks(r2, file, chunk), ms);
            QVERIFY(!r2.hasError());
        }

        // With epochTag empty, `epoch` is a series of its own.
        TensorBoardEventReader raw({}, 0, 0, QString());
        const auto rawKeys = byKey(test::readInChunks(raw, file, file.size()));
        QCOMPARE(rawKeys["epoch"].size(), 33);
        QVERIFY(!rawKeys["train_loss"][0].epoch);
    }

    void resumeFromOffset()
    {
        const QByteArray file = test::readFixture(kFixture);
        TensorBoardEventReader whole;
        const QList<ImportedMetric> all = test::readInChunks(whole, file, file.size());

        // Stop in the middle of a record; resume from the reader's own resume point.
        const qsizetype cut = 2000;
        TensorBoardEventReader a;
        a.feed(QByteArrayView(file).first(cut));
        QList<ImportedMetric> got = a.takeMetrics();
        QVERIFY(!a.hasError()); // an incomplete record is "more bytes needed", not an error
        QVERIFY(a.consumedOffset() <= cut);
        QVERIFY(a.consumedOffset() > cut - 200);
        QVERIFY(recordOffsets(file).contains(a.consumedOffset()));
        TensorBoardEventReader b({}, a.consumedOffset(), a.recordsRead());
        b.feed(QByteArrayView(file).sliced(a.consumedOffset()));
        b.finish();
        got += b.takeMetrics();
        QVERIFY(!b.hasError());
        QCOMPARE(b.recordsRead(), 77);
        QCOMPARE(got, all); // epochs included: the newest step was held back, not delivered early

        // flushPendingStep() delivers the newest step now (a quiet file).
        TensorBoardEventReader c;
        c.feed(QByteArrayView(file).first(cut));
        const qsizetype before = c.takeMetrics().size();
        c.flushPendingStep();
        QVERIFY(c.takeMetrics().size() >= 1);
        QVERIFY(before >= 1);
        QCOMPARE(c.consumedOffset(), recordOffsets(file)[c.recordsRead()]);
    }

    void corruptDataByte()
    {
        const QByteArray file = test::readFixture(kFixture);
        const QList<qint64> offs = recordOffsets(file);
        QCOMPARE(offs.size(), 77);
        // Flip a byte in the payload of record 30 (1-based): records 1..29 are imported.
        QByteArray bad = file;
        const qint64 at = offs[29];
        bad[at + 14] = char(bad[at + 14] ^ 0x40);
        TensorBoardEventReader r(QStringLiteral("bad.tfevents"));
        const QList<ImportedMetric> ms = test::readInChunks(r, bad, bad.size());
        QVERIFY(r.hasError());
        QCOMPARE(r.errorOffset(), at);
        QVERIFY2(r.error().contains(QStringLiteral("record 30 at byte offset %1").arg(at)), qPrintable(r.error()));
        QVERIFY2(r.error().contains(QLatin1String("data CRC mismatch")), qPrintable(r.error()));
        QVERIFY(r.error().startsWith(QLatin1String("bad.tfevents: ")));
        QCOMPARE(r.consumedOffset(), at);
        QCOMPARE(r.recordsRead(), 29);
        // Records 6..29 hold train_loss at steps 4..44 (10 values) and the first two val points.
        const auto keys = byKey(ms);
        QCOMPARE(keys["train_loss"].size(), 9);
        QCOMPARE(keys["train_loss"].last().step, 44);
        QCOMPARE(keys["val_loss"].size(), 2);
        QCOMPARE(keys["val_acc"].size(), 2);

        // Flip a byte of a length field: the length CRC catches it.
        QByteArray badLen = file;
        badLen[offs[10] + 1] = char(badLen[offs[10] + 1] ^ 0x01);
        TensorBoardEventReader r2;
        test::readInChunks(r2, badLen, 64);
        QVERIFY(r2.error().contains(QStringLiteral("record 11 at byte offset %1: length CRC mismatch").arg(offs[10])));
        QCOMPARE(r2.recordsRead(), 10);

        // Flip a byte of the stored data CRC itself.
        QByteArray badCrc = file;
        const qint64 crcPos = offs[41] - 1;
        badCrc[crcPos] = char(badCrc[crcPos] ^ 0x80);
        TensorBoardEventReader r3;
        test::readInChunks(r3, badCrc, badCrc.size());
        QCOMPARE(r3.errorOffset(), offs[40]);
        QCOMPARE(r3.recordsRead(), 40);
    }

    void truncatedFile()
    {
        const QByteArray file = test::readFixture(kFixture);
        const QList<qint64> offs = recordOffsets(file);
        for (qint64 cut : {offs[50] + 5, offs[50] + 20, qint64(file.size() - 1)}) {
            const qint64 recStart = cut == file.size() - 1 ? offs.last() : offs[50];
            const qint64 recIndex = cut == file.size() - 1 ? 77 : 51;
            TensorBoardEventReader r(QStringLiteral("cut"));
            const QList<ImportedMetric> ms = test::readInChunks(r, file.first(cut), 333);
            QVERIFY(r.hasError());
            QCOMPARE(r.errorOffset(), recStart);
            QVERIFY2(r.error().contains(
                             QStringLiteral("record %1 at byte offset %2: truncated").arg(recIndex).arg(recStart)),
                    qPrintable(r.error()));
            QCOMPARE(r.recordsRead(), recIndex - 1);
            QCOMPARE(r.consumedOffset(), recStart);
            QVERIFY(!ms.isEmpty());
        }
        // Cut exactly at a record boundary: no error, just fewer records.
        TensorBoardEventReader ok;
        test::readInChunks(ok, file.first(offs[50]), 100);
        QVERIFY(!ok.hasError());
        QCOMPARE(ok.recordsRead(), 50);
    }

    void tensorScalarsAndPlugins()
    {
        const QByteArray floatType = key(1, 0) + varint(1);
        const QByteArray doubleType = key(1, 0) + varint(2);
        const QByteArray scalarShape = lenField(2, QByteArray()); // TensorShapeProto with no dims
        const QByteArray oneByOne
                = lenField(2, lenField(2, key(1, 0) + varint(1)) + lenField(2, key(1, 0) + varint(1)));
        const QByteArray threeElems = lenField(2, lenField(2, key(1, 0) + varint(3)));

        QList<QByteArray> values;
        // tf.summary.scalar (TF2): DT_FLOAT, tensor_content, with "scalars" metadata
        values << lenField(1, "a/content") + lenField(8, floatType + scalarShape + lenField(4, f32(0.25f)))
                        + scalarsMetadata("scalars");
        // float_val unpacked
        values << lenField(1, "b/float_unpacked") + lenField(8, floatType + scalarShape + key(5, 5) + f32(-1.5f));
        // float_val packed, shape [1,1]
        values << lenField(1, "c/float_packed") + lenField(8, floatType + oneByOne + lenField(5, f32(3.0f)));
        // DT_DOUBLE in tensor_content and in double_val (unpacked and packed)
        values << lenField(1, "d/double_content") + lenField(8, doubleType + lenField(4, f64(0.1)));
        values << lenField(1, "e/double_val") + lenField(8, doubleType + key(6, 1) + f64(1e300));
        values << lenField(1, "f/double_packed") + lenField(8, doubleType + lenField(6, f64(std::nan(""))));
        // simple_value infinity
        values << simpleValue("g/simple_inf", std::numeric_limits<float>::infinity());
        // Not scalars: a 3-element tensor, an int tensor, a histogram-plugin value
        values << lenField(1, "x/vector") + lenField(8, floatType + threeElems + lenField(4, f32(1) + f32(2) + f32(3)));
        values << lenField(1, "x/int") + lenField(8, key(1, 0) + varint(3) + key(7, 0) + varint(5));
        values << lenField(1, "x/hist") + lenField(8, floatType + scalarShape + lenField(4, f32(9)))
                        + scalarsMetadata("histograms");
        // Unknown fields everywhere are skipped.
        values << lenField(1, "h/unknown_fields") + key(15, 0) + varint(7) + key(2, 5) + f32(42.0f)
                        + lenField(99, "junk");

        QByteArray file = record(key(1, 1) + f64(1767225600.0) + lenField(3, "brain.Event:2"));
        file += record(makeEvent(1767225600.5, 7, values));
        // A later value of x/hist without metadata is still skipped.
        file += record(makeEvent(
                1767225601.0, 8, {lenField(1, "x/hist") + key(2, 5) + f32(5.0f), simpleValue("a/content", 0.5f)}));
        // A record with valid CRCs but a garbage payload is skipped with a warning.
        file += record(QByteArray("\xFF\xFF\xFF", 3));
        file += record(makeEvent(1767225602.0, (qint64(1) << 40), {simpleValue("big_step", 1.0f)}));

        TensorBoardEventReader r(QStringLiteral("synthetic"));
        const QList<ImportedMetric> ms = test::readInChunks(r, file, 5);
        QVERIFY2(!r.hasError(), qPrintable(r.error()));
        QCOMPARE(r.warningCount(), 1);
        QVERIFY2(r.warnings().first().contains(QLatin1String("record 4 at byte offset")),
                qPrintable(r.warnings().first()));
        QVERIFY(r.warnings().first().contains(QLatin1String("not a valid Event")));
        QStringList keys;
        for (const ImportedMetric& m : ms)
            keys << m.key + u'@' + QString::number(m.step);
        QCOMPARE(keys,
                (QStringList{"a/content@7", "b/float_unpacked@7", "c/float_packed@7", "d/double_content@7",
                        "e/double_val@7", "f/double_packed@7", "g/simple_inf@7", "h/unknown_fields@7", "a/content@8",
                        "big_step@1099511627776"}));
        QCOMPARE(ms[0].value, 0.25);
        QCOMPARE(ms[1].value, -1.5);
        QCOMPARE(ms[2].value, 3.0);
        QCOMPARE(ms[3].value, 0.1); // double precision kept
        QCOMPARE(ms[4].value, 1e300);
        QVERIFY(std::isnan(ms[5].value));
        QVERIFY(std::isinf(ms[6].value) && ms[6].value > 0);
        QCOMPARE(ms[7].value, 42.0);
        QCOMPARE(ms[8].value, 0.5);
        QCOMPARE(ms[0].wallTimeMs, std::optional<qint64>(1767225600500));
    }

    void decoderErrors()
    {
        // A length past the end, a varint that never ends, wire type 3 (group).
        QVERIFY(!decodeTfEvent(QByteArray("\x2A\x05\x0A\x01", 4)));
        QVERIFY(!decodeTfEvent(QByteArray(12, '\xFF')));
        const Result<TfEvent> grp = decodeTfEvent(QByteArray("\x0B", 1));
        QVERIFY(!grp);
        QVERIFY2(grp.error().message.contains(QLatin1String("wire type 3")), qPrintable(grp.error().message));
        QVERIFY(decodeTfEvent(QByteArrayView())); // an empty Event is valid proto3
    }

    void recordLimits()
    {
        // A header whose CRC is right but whose length is absurd is rejected
        // without waiting for (or allocating) the data.
        QByteArray len(8, 0);
        qToLittleEndian(quint64(1) << 40, len.data());
        QByteArray c(4, 0);
        qToLittleEndian(maskCrc32c(crc32c(len)), c.data());
        TfRecordReader r(100, 3);
        r.feed(QByteArray(len + c));
        QVERIFY(!r.next());
        QVERIFY(r.hasError());
        QVERIFY2(
                r.error().startsWith(QLatin1String("record 4 at byte offset 100: record length 1099511627776 exceeds")),
                qPrintable(r.error()));
    }
};

QTEST_GUILESS_MAIN(TestTensorBoardEventReader)
#include "TestTensorBoardEventReader.moc"
