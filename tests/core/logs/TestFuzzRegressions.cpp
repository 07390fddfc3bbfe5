// Replays every input under tests/data/fuzz-regressions/<target>/ (crashes
// and invariant violations found by tests/fuzz/run.sh) and the seed inputs in
// tests/fuzz/seeds/<target>/ through the fuzz targets' own code
// (tests/fuzz/fuzz_<target>.cpp, compiled here with TRAINYARD_FUZZ_REGRESSION:
// a broken invariant throws instead of aborting). A crash fails the whole
// executable, which ctest reports as a failure too.
#include "tests/support/TestSupport.h"
#include "core/nodes/AgentFrameDecoder.h"
#include "core/spec/JobSpec.h"

#include <QDir>
#include <QFile>
#include <QTest>

#include <cstdint>
#include <stdexcept>

int fuzz_terminal_renderer(const uint8_t*, size_t);
int fuzz_metric_extractor(const uint8_t*, size_t);
int fuzz_tfevents(const uint8_t*, size_t);
int fuzz_csv(const uint8_t*, size_t);
int fuzz_json(const uint8_t*, size_t);
int fuzz_jobspec(const uint8_t*, size_t);
int fuzz_agent_frames(const uint8_t*, size_t);

using Target = int (*)(const uint8_t*, size_t);
Q_DECLARE_METATYPE(Target)

class TestFuzzRegressions : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void replay_data()
    {
        QTest::addColumn<Target>("target");
        QTest::addColumn<QString>("path");
        const QList<std::pair<const char*, Target>> targets{{"terminal_renderer", fuzz_terminal_renderer},
                {"metric_extractor", fuzz_metric_extractor}, {"tfevents", fuzz_tfevents}, {"csv", fuzz_csv},
                {"json", fuzz_json}, {"jobspec", fuzz_jobspec}, {"agent_frames", fuzz_agent_frames}};
        int rows = 0;
        for (const auto& [name, fn] : targets) {
            for (const QString& base :
                    {QStringLiteral("tests/data/fuzz-regressions/"), QStringLiteral("tests/fuzz/seeds/")}) {
                const QDir dir(ty::test::sourcePath(base + QLatin1String(name)));
                for (const QString& f : dir.entryList(QDir::Files, QDir::Name)) {
                    QTest::addRow("%s/%s", name, qPrintable(f)) << fn << dir.filePath(f);
                    ++rows;
                }
            }
        }
        QVERIFY(rows >= 6); // the seeds at least
    }

    void replay()
    {
        QFETCH(Target, target);
        QFETCH(QString, path);
        QFile f(path);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
        const QByteArray bytes = f.readAll();
        try {
            target(reinterpret_cast<const uint8_t*>(bytes.constData()), size_t(bytes.size()));
        } catch (const std::exception& e) {
            QFAIL(qPrintable(path + QStringLiteral(": ") + QString::fromUtf8(e.what())));
        }
    }

    // The crashes found so far, with what the fixed code must do with them
    // (the replay above only proves "no crash" under a sanitizer build such as
    // the dev-asan preset; these also hold in a plain build).

    // ASan stack-use-after-scope in parseJobSpec: `const YAML::Node& v =
    // it->second` bound a reference into yaml-cpp's temporary iterator proxy.
    void jobSpecIteratorProxy()
    {
        QFile f(ty::test::sourcePath(
                QStringLiteral("tests/data/fuzz-regressions/jobspec/crash-7d9e547d82eb35e2891ed586cbbd2267e12dfd5f")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const ty::Result<ty::JobSpec> spec
                = ty::parseJobSpec(QString::fromUtf8(f.readAll()), QStringLiteral("<fuzz>"), QStringLiteral("/tmp"));
        QVERIFY2(spec.has_value(), spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->name, QStringLiteral("x"));
        QCOMPARE(spec->argv, (QStringList{"/bin/sh", "-c", "echo hi && sleep 1"}));
        // The same pattern in the 'resources' mapping.
        const ty::Result<ty::JobSpec> res
                = ty::parseJobSpec(QStringLiteral("command: [a]\nresources: {gpus: 2, memory: 16G}\n"),
                        QStringLiteral("<t>"), QStringLiteral("/tmp"));
        QVERIFY2(res.has_value(), res ? "" : qPrintable(res.error().message));
        QCOMPARE(res->resources.gpus, 2);
        QCOMPARE(res->resources.memoryMiB, 16 * 1024);
    }

    // UBSan float-cast-overflow in AgentFrameDecoder::next(): "len": 5.3e71
    // was cast to qint64 before being range-checked. Now a protocol error.
    void agentFrameHugeLen()
    {
        QFile f(ty::test::sourcePath(QStringLiteral(
                "tests/data/fuzz-regressions/agent_frames/crash-cdb994433a2b5fb31df24edbe8fada7976b203eb")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        ty::AgentFrameDecoder d;
        d.feed(f.readAll());
        while (d.next()) { }
        QVERIFY(d.hasError());
        QVERIFY2(d.error().contains(QLatin1String("has an invalid \"len\"")), qPrintable(d.error()));
        ty::AgentFrameDecoder d2;
        d2.feed("{\"type\":\"output\",\"len\":9223372036854775808}\n");
        QVERIFY(!d2.next());
        QVERIFY2(d2.error().startsWith(QLatin1String("protocol error: line 1 has an invalid \"len\"")),
                qPrintable(d2.error()));
    }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "TestFuzzRegressions.moc"
