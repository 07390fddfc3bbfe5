// Stage-in (WorkdirSync.h stageToNode) on the local node's file system:
// what is copied, what is left in place, progress, and names or links that
// would write outside the run's workdir.
#include "core/nodes/NodeFiles.h"
#include "core/nodes/WorkdirSync.h"
#include "tests/support/TestSupport.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestStageIn final : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;

    QString path(const QString& rel) const { return m_tmp.filePath(rel); }

    StageFile made(const QString& rel, const QByteArray& bytes, bool inPlace = false)
    {
        const QString local = path(QStringLiteral("store/") + rel);
        QDir().mkpath(QFileInfo(local).absolutePath());
        test::writeFile(local, bytes);
        return StageFile{local, rel, bytes.size(), inPlace};
    }

private Q_SLOTS:
    void copiesIntoTheWorkdirWithProgress()
    {
        const QByteArray big(300 * 1024, 'x');
        const QList<StageFile> stage{
                made(QStringLiteral("data/train.pt"), big), made(QStringLiteral("rows.txt"), "1797\n")};
        const QString work = path(QStringLiteral("work1"));
        LocalNodeFiles files;
        QList<std::pair<qint64, qint64>> seen;
        const auto r = stageToNode(stage, work, files, [&](qint64 done, qint64 total) { seen.append({done, total}); });
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QCOMPARE(r->copied, 2);
        QCOMPARE(r->inPlace, 0);
        QCOMPARE(r->bytesCopied, qint64(big.size() + 5));
        QCOMPARE(test::readFile(work + QStringLiteral("/data/train.pt")), big);
        QCOMPARE(test::readFile(work + QStringLiteral("/rows.txt")), QByteArray("1797\n"));
        // From 0 to the total, never backwards, the total the same throughout.
        QVERIFY(seen.size() >= 3); // 300 KiB read in 64 KiB pieces
        QCOMPARE(seen.first().first, qint64(0));
        QCOMPARE(seen.last().first, qint64(big.size() + 5));
        for (qsizetype i = 1; i < seen.size(); ++i) {
            QVERIFY(seen[i].first >= seen[i - 1].first);
            QCOMPARE(seen[i].second, qint64(big.size() + 5));
        }
    }

    void madeHereIsLeftInPlaceUnlessItChanged()
    {
        const QString work = path(QStringLiteral("work2"));
        test::writeFile(work + QStringLiteral("/out/log.txt"), "short");
        const QList<StageFile> stage{made(QStringLiteral("out/model.pt"), "the stored model!!", true),
                made(QStringLiteral("out/log.txt"), "a longer log text", true),
                made(QStringLiteral("out/gone.txt"), "deleted since", true)};
        // model.pt there has the stored size (18 bytes both): in place, untouched.
        test::writeFile(work + QStringLiteral("/out/model.pt"), "the run's model!!!");
        LocalNodeFiles files;
        const auto r = stageToNode(stage, work, files);
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QCOMPARE(r->inPlace, 1);
        QCOMPARE(r->copied, 2); // another size, and missing
        QCOMPARE(test::readFile(work + QStringLiteral("/out/model.pt")), QByteArray("the run's model!!!"));
        QCOMPARE(test::readFile(work + QStringLiteral("/out/log.txt")), QByteArray("a longer log text"));
        QCOMPARE(test::readFile(work + QStringLiteral("/out/gone.txt")), QByteArray("deleted since"));
    }

    void neverWritesThroughALinkNorOutside()
    {
        const QString work = path(QStringLiteral("work3"));
        const QString elsewhere = path(QStringLiteral("elsewhere"));
        QDir().mkpath(work);
        QDir().mkpath(elsewhere);
        test::writeFile(elsewhere + QStringLiteral("/model.pt"), "not yours");
        // A run made `out` a link to a folder outside its workdir.
        QVERIFY(QFile::link(elsewhere, work + QStringLiteral("/out")));
        LocalNodeFiles files;
        const auto r = stageToNode({made(QStringLiteral("out/model.pt"), "staged", true)}, work, files);
        QVERIFY2(r, r ? "" : qPrintable(r.error().message));
        QCOMPARE(r->copied, 1);
        QVERIFY(QFileInfo(work + QStringLiteral("/out")).isDir());
        QVERIFY(!QFileInfo(work + QStringLiteral("/out")).isSymLink());
        QCOMPARE(test::readFile(work + QStringLiteral("/out/model.pt")), QByteArray("staged"));
        QCOMPARE(test::readFile(elsewhere + QStringLiteral("/model.pt")), QByteArray("not yours"));

        // A final link is replaced, not written through.
        QVERIFY(QFile::link(elsewhere + QStringLiteral("/model.pt"), work + QStringLiteral("/weights.pt")));
        const auto l = stageToNode({made(QStringLiteral("weights.pt"), "staged too")}, work, files);
        QVERIFY2(l, l ? "" : qPrintable(l.error().message));
        QVERIFY(!QFileInfo(work + QStringLiteral("/weights.pt")).isSymLink());
        QCOMPARE(test::readFile(elsewhere + QStringLiteral("/model.pt")), QByteArray("not yours"));

        for (const QString& bad :
                {QStringLiteral("../escape.txt"), QStringLiteral("/etc/x"), QStringLiteral("a/../../b")}) {
            StageFile f = made(QStringLiteral("ok.txt"), "x");
            f.rel = bad;
            const auto refused = stageToNode({f}, work, files);
            QVERIFY(!refused);
            QVERIFY2(refused.error().message.contains(QStringLiteral("refused the name '%1'").arg(bad)),
                    qPrintable(refused.error().message));
        }
        QVERIFY(!QFile::exists(path(QStringLiteral("escape.txt"))));
        // A workdir that is a file is an error naming it.
        test::writeFile(path(QStringLiteral("afile")), "x");
        const auto notDir = stageToNode({made(QStringLiteral("ok.txt"), "x")}, path(QStringLiteral("afile")), files);
        QVERIFY(!notDir);
        QVERIFY2(notDir.error().message.contains(QStringLiteral("is not a directory")),
                qPrintable(notDir.error().message));
    }
};

QTEST_GUILESS_MAIN(TestStageIn)
#include "TestStageIn.moc"
