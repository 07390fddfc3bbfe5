// The memoization key (core/memo/MemoKey.h): which components change it,
// which do not, its canonical form (the same bytes in any process, whatever
// order maps and lists were filled in) and the components' JSON round trip.
#include "MemoTestUtil.h"

#include "core/memo/MemoKey.h"

#include <QJsonArray>
#include <QTest>

#include <functional>

using namespace ty;
using ty::test::file;
using ty::test::trainComponents;

using Mutation = std::function<void(MemoComponents&)>;
Q_DECLARE_METATYPE(Mutation)

class TestMemoKey final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyComponentChangesTheKey_data();
    void everyComponentChangesTheKey();
    void stepAndIgnoredNamesDoNotChangeTheKey();
    void insertionOrderDoesNotMatter();
    void canonicalFormIsPinned();
    void canonicalStringsFollowRfc8785();
    void componentsRoundTripThroughJson();
    void malformedComponentsAreRefused();
};

void TestMemoKey::everyComponentChangesTheKey_data()
{
    QTest::addColumn<Mutation>("mutate");
    QTest::newRow("command") << Mutation([](MemoComponents& c) { c.command += QStringLiteral(" -v"); });
    QTest::newRow("argv") << Mutation([](MemoComponents& c) { c.argv[3] = QStringLiteral("0.001"); });
    QTest::newRow("argv split differently") << Mutation([](MemoComponents& c) {
        c.argv = {QStringLiteral("python train.py"), QStringLiteral("--lr"), QStringLiteral("0.01")};
    });
    QTest::newRow("env value") << Mutation(
            [](MemoComponents& c) { c.env[QStringLiteral("SEED")] = QStringLiteral("8"); });
    QTest::newRow("env added") << Mutation([](MemoComponents& c) { c.env[QStringLiteral("X")] = QString(); });
    QTest::newRow("env removed") << Mutation([](MemoComponents& c) { c.env.remove(QStringLiteral("SEED")); });
    QTest::newRow("param value") << Mutation(
            [](MemoComponents& c) { c.params[QStringLiteral("lr")] = QStringLiteral("0.001"); });
    QTest::newRow("param added") << Mutation(
            [](MemoComponents& c) { c.params[QStringLiteral("wd")] = QStringLiteral("0"); });
    QTest::newRow("param moved to env") << Mutation(
            [](MemoComponents& c) { c.env[QStringLiteral("lr")] = c.params.take(QStringLiteral("lr")); });
    QTest::newRow("gpu type") << Mutation([](MemoComponents& c) { c.gpuType = QStringLiteral("H100"); });
    QTest::newRow("gpu count") << Mutation([](MemoComponents& c) { c.gpuCount = 2; });
    QTest::newRow("code content") << Mutation(
            [](MemoComponents& c) { c.codeFiles[2] = file(QStringLiteral("train.py"), "print(1)\n"); });
    QTest::newRow("code file added") << Mutation(
            [](MemoComponents& c) { c.codeFiles << file(QStringLiteral("x.py"), ""); });
    QTest::newRow("code file removed") << Mutation([](MemoComponents& c) { c.codeFiles.removeAt(0); });
    QTest::newRow("code file renamed") << Mutation(
            [](MemoComponents& c) { c.codeFiles[0].path = QStringLiteral("lib/new.py"); });
    QTest::newRow("code execute bit") << Mutation(
            [](MemoComponents& c) { c.codeFiles[2].kind = FileDigest::Kind::Executable; });
    QTest::newRow("code file became link")
            << Mutation([](MemoComponents& c) { c.codeFiles[2].kind = FileDigest::Kind::Link; });
    QTest::newRow("input content") << Mutation(
            [](MemoComponents& c) { c.inputs[0] = file(QStringLiteral("data/train.csv"), "a,b\n1,3\n"); });
    QTest::newRow("input added") << Mutation(
            [](MemoComponents& c) { c.inputs << file(QStringLiteral("data/val.csv"), ""); });
    QTest::newRow("upstream key") << Mutation(
            [](MemoComponents& c) { c.upstream[QStringLiteral("ingest")] = ty::test::sha("other"); });
    QTest::newRow("upstream added") << Mutation(
            [](MemoComponents& c) { c.upstream[QStringLiteral("clean")] = ty::test::sha("c"); });
    QTest::newRow("key_extra") << Mutation([](MemoComponents& c) { c.keyExtra = QStringLiteral("v2"); });
}

void TestMemoKey::everyComponentChangesTheKey()
{
    QFETCH(Mutation, mutate);
    const MemoComponents base = trainComponents();
    MemoComponents changed = base;
    mutate(changed);
    QVERIFY(changed != base);
    QVERIFY(memoKey(changed) != memoKey(base));
    QCOMPARE(memoKey(changed).size(), 64);
}

void TestMemoKey::stepAndIgnoredNamesDoNotChangeTheKey()
{
    const MemoComponents base = trainComponents();
    MemoComponents renamed = base;
    renamed.step = QStringLiteral("train-v2");
    QCOMPARE(memoKey(renamed), memoKey(base));

    // `ignore: [SEED, epochs]`: differing values of ignored names, same key.
    MemoComponents a = base;
    MemoComponents b = base;
    b.env[QStringLiteral("SEED")] = QStringLiteral("8");
    b.params[QStringLiteral("epochs")] = QStringLiteral("20");
    QVERIFY(memoKey(a) != memoKey(b));
    const QStringList ignore{QStringLiteral("epochs"), QStringLiteral("SEED")};
    a = applyIgnore(a, ignore);
    b = applyIgnore(b, ignore);
    QCOMPARE(memoKey(a), memoKey(b));
    QCOMPARE(a.ignored, (QStringList{QStringLiteral("SEED"), QStringLiteral("epochs")}));
    QVERIFY(!a.params.contains(QStringLiteral("epochs")));
    QVERIFY(!a.env.contains(QStringLiteral("SEED")));
    // ...and a name not ignored still counts.
    b.params[QStringLiteral("lr")] = QStringLiteral("0.5");
    QVERIFY(memoKey(a) != memoKey(b));
}

void TestMemoKey::insertionOrderDoesNotMatter()
{
    const MemoComponents base = trainComponents();
    MemoComponents other;
    other.step = base.step;
    other.command = base.command;
    other.argv = base.argv;
    // Maps filled in the other order, lists reversed.
    for (auto it = base.env.constEnd(); it != base.env.constBegin();) {
        --it;
        other.env.insert(it.key(), it.value());
    }
    for (auto it = base.params.constEnd(); it != base.params.constBegin();) {
        --it;
        other.params.insert(it.key(), it.value());
    }
    other.gpuType = base.gpuType;
    other.gpuCount = base.gpuCount;
    for (auto it = base.codeFiles.crbegin(); it != base.codeFiles.crend(); ++it)
        other.codeFiles << *it;
    other.inputs = base.inputs;
    other.upstream = base.upstream;
    other.keyExtra = base.keyExtra;
    QCOMPARE(canonicalJson(other), canonicalJson(base));
    QCOMPARE(memoKey(other), memoKey(base));
}

// The format is what every process (GUI, trainyardctl, trainyardd, a later
// Trainyard) computes: pinned here, byte for byte, with its key. A change to
// the canonical form must change kMemoKeyFormat (and this test).
void TestMemoKey::canonicalFormIsPinned()
{
    MemoComponents c;
    c.step = QStringLiteral("prep");
    c.argv = {QStringLiteral("python"), QStringLiteral("prep.py")};
    c.env = {{QStringLiteral("B"), QStringLiteral("2")}, {QStringLiteral("A"), QStringLiteral("1")}};
    c.params = {{QStringLiteral("n"), QStringLiteral("3")}};
    c.codeFiles = {file(QStringLiteral("prep.py"), "x\n")};
    c.inputs = {file(QStringLiteral("in.txt"), "")};
    const QByteArray expected = "{\"argv\":[\"python\",\"prep.py\"],\"code\":\"" + treeDigest(c.codeFiles).toLatin1()
            + "\",\"command\":\"\",\"env\":{\"A\":\"1\",\"B\":\"2\"},\"format\":\"trainyard-memo-1\","
              "\"gpu_count\":0,\"gpu_type\":\"\",\"inputs\":[{\"kind\":\"file\",\"path\":\"in.txt\",\"sha256\":"
              "\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\"size\":0}],"
              "\"key_extra\":\"\",\"params\":{\"n\":\"3\"},\"upstream\":{}}";
    QCOMPARE(canonicalJson(c), expected);
    // The tree digest's own format (FileDigest.h), pinned the same way.
    QCOMPARE(treeDigest(c.codeFiles),
            ty::test::sha(
                    "trainyard-tree-1\nfile " + ty::test::sha("x\n").toLatin1() + " 2 prep.py" + QByteArray(1, '\0')));
    QCOMPARE(memoKey(c), ty::test::sha(expected));
    QCOMPARE(memoKey(c), QStringLiteral("81878104d71d027e1261cb4b517828cc4f57e9646167fa62c020ecd7da817d39"));
}

void TestMemoKey::canonicalStringsFollowRfc8785()
{
    MemoComponents c;
    c.command = QString::fromUtf8("a\"b\\c\nd\te\x01 é ✓ \xF0\x9F\x98\x80");
    const QByteArray json = canonicalJson(c);
    QVERIFY2(json.contains("\"command\":\"a\\\"b\\\\c\\nd\\te\\u0001 \xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80\""),
            json.constData());
    // Names sort by code point: U+00E9 after 'z', U+1F600 after U+FFFD.
    c.params = {{QString::fromUtf8("\xF0\x9F\x98\x80"), QStringLiteral("1")},
            {QString::fromUtf8("\xEF\xBF\xBD"), QStringLiteral("2")}, {QStringLiteral("z"), QStringLiteral("3")},
            {QString::fromUtf8("\xC3\xA9"), QStringLiteral("4")}};
    QVERIFY2(canonicalJson(c).contains(
                     "\"params\":{\"z\":\"3\",\"\xC3\xA9\":\"4\",\"\xEF\xBF\xBD\":\"2\",\"\xF0\x9F\x98\x80\":\"1\"}"),
            canonicalJson(c).constData());
}

void TestMemoKey::componentsRoundTripThroughJson()
{
    MemoComponents c = applyIgnore(trainComponents(), {QStringLiteral("SEED")});
    c.inputs << FileDigest{QStringLiteral("data/images"), FileDigest::Kind::Directory, 12345, ty::test::sha("tree")};
    c.codeFiles << file(QStringLiteral("data"), "../datasets/data", FileDigest::Kind::Link);
    const auto back = componentsFromJson(componentsToJson(c));
    QVERIFY2(back.has_value(), back ? "" : qPrintable(back.error().message));
    QCOMPARE(*back, c);
    QCOMPARE(memoKey(*back), memoKey(c));
}

void TestMemoKey::malformedComponentsAreRefused()
{
    const QJsonObject good = componentsToJson(trainComponents());
    QVERIFY(componentsFromJson(good).has_value());
    auto refused = [&](const QString& member, const QJsonValue& value, const QString& words) {
        QJsonObject o = good;
        o.insert(member, value);
        const auto r = componentsFromJson(o);
        QVERIFY2(!r.has_value(), qPrintable(member));
        QVERIFY2(r.error().message.contains(words), qPrintable(r.error().message));
    };
    refused(QStringLiteral("format"), QStringLiteral("trainyard-memo-0"), QStringLiteral("format"));
    refused(QStringLiteral("params"), QJsonArray{}, QStringLiteral("\"params\" is not an object"));
    refused(QStringLiteral("env"), QJsonObject{{QStringLiteral("A"), 1}}, QStringLiteral("\"env\".\"A\""));
    refused(QStringLiteral("argv"), QStringLiteral("python"), QStringLiteral("\"argv\" is not an array"));
    refused(QStringLiteral("gpu_count"), QStringLiteral("2"), QStringLiteral("gpu_count"));
    refused(QStringLiteral("code_files"),
            QJsonArray{QJsonObject{{QStringLiteral("path"), QStringLiteral("a")},
                    {QStringLiteral("kind"), QStringLiteral("file")}, {QStringLiteral("size"), 1},
                    {QStringLiteral("sha256"), QStringLiteral("ABC")}}},
            QStringLiteral("code_files"));
    refused(QStringLiteral("inputs"),
            QJsonArray{QJsonObject{{QStringLiteral("path"), QStringLiteral("a")},
                    {QStringLiteral("kind"), QStringLiteral("socket")}, {QStringLiteral("size"), 1},
                    {QStringLiteral("sha256"), ty::test::sha("")}}},
            QStringLiteral("inputs"));
}

QTEST_GUILESS_MAIN(TestMemoKey)
#include "TestMemoKey.moc"
