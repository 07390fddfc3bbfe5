// "Why did this step run?" (core/memo/MemoExplain.h): the exact reasons for
// each kind of difference from the newest entry of the same step.
#include "MemoTestUtil.h"

#include "core/memo/MemoExplain.h"

#include <QTest>

using namespace ty;
using ty::test::file;
using ty::test::trainComponents;

class TestMemoExplain final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void noEarlierEntry();
    void sameComponentsGiveNoReason();
    void eachDifferenceIsNamed();
    void commandFallsBackToArgv();
    void ignoredNamesAreSaidSo();
    void codeReasonsAreCapped();
};

void TestMemoExplain::noEarlierEntry()
{
    QCOMPARE(explainMiss(std::nullopt, trainComponents()),
            QStringList{QStringLiteral("no earlier entry for step train")});
}

void TestMemoExplain::sameComponentsGiveNoReason()
{
    MemoComponents renamed = trainComponents();
    renamed.step = QStringLiteral("other"); // not in the key: not a reason
    QCOMPARE(explainMiss(trainComponents(), renamed), QStringList());
}

void TestMemoExplain::eachDifferenceIsNamed()
{
    const MemoComponents was = trainComponents();
    MemoComponents now = was;
    now.command = QStringLiteral("python train.py --lr 0.001");
    now.env.remove(QStringLiteral("OMP_NUM_THREADS"));
    now.env[QStringLiteral("SEED")] = QStringLiteral("8");
    now.env[QStringLiteral("CUDA_LAUNCH_BLOCKING")] = QStringLiteral("1");
    now.params[QStringLiteral("lr")] = QStringLiteral("0.001");
    now.params[QStringLiteral("note")] = QStringLiteral("two words");
    now.params.remove(QStringLiteral("epochs"));
    now.gpuType = QStringLiteral("H100");
    now.gpuCount = 2;
    now.codeFiles = {file(QStringLiteral("data/x.csv"), "1\n"),
            file(QStringLiteral("run.sh"), "#!/bin/sh\n", FileDigest::Kind::File),
            file(QStringLiteral("train.py"), "print('train', 2)\n")};
    now.inputs = {file(QStringLiteral("data/train.csv"), "a,b\n9,9\n"), file(QStringLiteral("data/val.csv"), "")};
    now.upstream
            = {{QStringLiteral("ingest"), ty::test::sha("new ingest")}, {QStringLiteral("clean"), ty::test::sha("c")}};
    now.keyExtra = QStringLiteral("v2");
    const QStringList expected{
            QStringLiteral("command changed: 'python train.py --lr 0.01' -> 'python train.py --lr 0.001'"),
            QStringLiteral("env CUDA_LAUNCH_BLOCKING added"),
            QStringLiteral("env OMP_NUM_THREADS removed"),
            QStringLiteral("env SEED 7 -> 8"),
            QStringLiteral("param epochs removed"),
            QStringLiteral("param lr 0.01 -> 0.001"),
            QStringLiteral("param note added"),
            QStringLiteral("GPU type A100 -> H100"),
            QStringLiteral("GPU count 1 -> 2"),
            QStringLiteral("data/x.csv added"),
            QStringLiteral("run.sh no longer executable"),
            QStringLiteral("train.py changed"),
            QStringLiteral("lib/old.py removed"),
            QStringLiteral("input data/train.csv changed"),
            QStringLiteral("input data/val.csv added"),
            QStringLiteral("upstream clean added"),
            QStringLiteral("upstream ingest changed"),
            QStringLiteral("key_extra changed"),
    };
    QCOMPARE(explainMiss(was, now), expected);

    // One change, one reason: the example.
    MemoComponents one = was;
    one.codeFiles[2] = file(QStringLiteral("train.py"), "print('v2')\n");
    one.params[QStringLiteral("lr")] = QStringLiteral("0.001");
    QCOMPARE(explainMiss(was, one).join(QStringLiteral("; ")),
            QStringLiteral("param lr 0.01 -> 0.001; train.py changed"));

    // Kinds: made executable, a file that became a link, GPU none.
    MemoComponents kinds = was;
    kinds.codeFiles[0].kind = FileDigest::Kind::Executable;
    kinds.codeFiles[2] = file(QStringLiteral("train.py"), "../train.py", FileDigest::Kind::Link);
    kinds.gpuType.clear();
    kinds.inputs.clear();
    kinds.upstream.clear();
    QCOMPARE(explainMiss(was, kinds),
            (QStringList{QStringLiteral("GPU type A100 -> none"), QStringLiteral("lib/old.py made executable"),
                    QStringLiteral("train.py is a link now"), QStringLiteral("input data/train.csv removed"),
                    QStringLiteral("upstream ingest removed")}));
}

void TestMemoExplain::commandFallsBackToArgv()
{
    MemoComponents was = trainComponents();
    was.command.clear();
    MemoComponents now = was;
    now.argv[3] = QStringLiteral("0.001");
    QCOMPARE(explainMiss(was, now),
            QStringList{QStringLiteral("command changed: python train.py --lr 0.01 -> python train.py --lr 0.001")});
}

void TestMemoExplain::ignoredNamesAreSaidSo()
{
    const MemoComponents was = trainComponents();
    const MemoComponents now = applyIgnore(was, {QStringLiteral("SEED"), QStringLiteral("epochs")});
    QCOMPARE(explainMiss(was, now),
            (QStringList{QStringLiteral("env SEED now ignored"), QStringLiteral("param epochs now ignored")}));
    QCOMPARE(explainMiss(now, was),
            (QStringList{
                    QStringLiteral("env SEED no longer ignored"), QStringLiteral("param epochs no longer ignored")}));
}

void TestMemoExplain::codeReasonsAreCapped()
{
    const MemoComponents was = trainComponents();
    MemoComponents now = was;
    for (int i = 0; i < kMaxCodeReasons + 5; ++i)
        now.codeFiles << file(QStringLiteral("gen/f%1.py").arg(i, 3, 10, QLatin1Char('0')), QByteArray::number(i));
    const QStringList reasons = explainMiss(was, now);
    QCOMPARE(reasons.size(), kMaxCodeReasons + 1);
    QCOMPARE(reasons.first(), QStringLiteral("gen/f000.py added"));
    QCOMPARE(reasons.last(), QStringLiteral("and 5 more code files changed"));
}

QTEST_GUILESS_MAIN(TestMemoExplain)
#include "TestMemoExplain.moc"
