// core/retry/Checkpoints: the attempt's environment and the newest complete
// checkpoint chosen from a node's listing (issue #25).
#include "core/retry/Checkpoints.h"

#include <QTest>

using namespace ty;

namespace {
AgentFileEntry file(const QString& path, qint64 mtimeMs, const QString& root = QStringLiteral("workdir"))
{
    AgentFileEntry f;
    f.root = root;
    f.path = path;
    f.absolutePath = QStringLiteral("/node/wd/") + path;
    f.type = QStringLiteral("file");
    f.mtimeMs = mtimeMs;
    return f;
}
} // namespace

class TestCheckpoints final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void environmentOfAnAttempt()
    {
        QMap<QString, QString> env{{QStringLiteral("SEED"), QStringLiteral("7")}};
        setAttemptEnvironment(env, 3, checkpointDirFor(QStringLiteral("abc")), QStringLiteral("/n/wd/x/epoch-4.pt"));
        QCOMPARE(env,
                (QMap<QString, QString>{{QStringLiteral("SEED"), QStringLiteral("7")},
                        {QStringLiteral("TRAINYARD_ATTEMPT"), QStringLiteral("3")},
                        {QStringLiteral("TRAINYARD_CHECKPOINT_DIR"), QStringLiteral(".trainyard/checkpoints/abc")},
                        {QStringLiteral("TRAINYARD_RESTART_COUNT"), QStringLiteral("2")},
                        {QStringLiteral("TRAINYARD_RESUME_FROM"), QStringLiteral("/n/wd/x/epoch-4.pt")}}));
        // The spec's own folder stays.
        QMap<QString, QString> own{{QStringLiteral("TRAINYARD_CHECKPOINT_DIR"), QStringLiteral("/shared/ck")}};
        setAttemptEnvironment(own, 1, checkpointDirFor(QStringLiteral("abc")), {});
        QCOMPARE(own.value(QStringLiteral("TRAINYARD_CHECKPOINT_DIR")), QStringLiteral("/shared/ck"));
        QCOMPARE(own.value(QStringLiteral("TRAINYARD_RESUME_FROM")), QString());
        QCOMPARE(checkpointGlobs(QStringLiteral(".trainyard/checkpoints/abc/")),
                (QStringList{QStringLiteral(".trainyard/checkpoints/abc/*"),
                        QStringLiteral(".trainyard/checkpoints/abc/*/**")}));
    }

    void newestCompleteCheckpoint()
    {
        const QString d = QStringLiteral(".trainyard/checkpoints/abc");
        AgentFileList list;
        list.workdir = QStringLiteral("/node/wd");
        list.files = {
                file(d + QStringLiteral("/epoch-1.pt"), 1000),
                file(d + QStringLiteral("/epoch-1.pt.trainyard-done"), 1100),
                file(d + QStringLiteral("/checkpoint-500/model.bin"), 1500),
                file(d + QStringLiteral("/checkpoint-500/config.json"), 1600),
                file(d + QStringLiteral("/checkpoint-500.trainyard-done"), 1700),
                // A marker whose checkpoint is gone: ignored.
                file(d + QStringLiteral("/epoch-9.pt.trainyard-done"), 9000),
                // Written after the newest marker, without one: skipped, said.
                file(d + QStringLiteral("/epoch-3.pt"), 1800),
                // A marker being written, and the run directory's own files: not checkpoints.
                file(d + QStringLiteral("/.epoch-3.pt.trainyard-done.77.tmp"), 1900),
                file(d + QStringLiteral("/epoch-8.pt"), 9500, QStringLiteral("run_dir")),
                file(d + QStringLiteral("/epoch-8.pt.trainyard-done"), 9600, QStringLiteral("run_dir")),
                // Another folder's.
                file(QStringLiteral(".trainyard/checkpoints/other/epoch-5.pt"), 5000),
                file(QStringLiteral(".trainyard/checkpoints/other/epoch-5.pt.trainyard-done"), 5000),
        };
        const CheckpointChoice c = ty::newestCompleteCheckpoint(list, d);
        QCOMPARE(c.name, QStringLiteral("checkpoint-500"));
        QCOMPARE(c.path, QStringLiteral("/node/wd/.trainyard/checkpoints/abc/checkpoint-500"));
        QCOMPARE(c.skipped, QStringList{QStringLiteral("epoch-3.pt")});

        // Same marker time: the greater name.
        list.files = {file(d + QStringLiteral("/a.pt"), 10), file(d + QStringLiteral("/a.pt.trainyard-done"), 20),
                file(d + QStringLiteral("/b.pt"), 10), file(d + QStringLiteral("/b.pt.trainyard-done"), 20)};
        QCOMPARE(ty::newestCompleteCheckpoint(list, d).name, QStringLiteral("b.pt"));
        // None complete: no path, the unmarked ones skipped.
        list.files = {file(d + QStringLiteral("/a.pt"), 10)};
        const CheckpointChoice none = ty::newestCompleteCheckpoint(list, d);
        QCOMPARE(none.path, QString());
        QCOMPARE(none.skipped, QStringList{QStringLiteral("a.pt")});
        // An absolute folder (the spec's own): the path is in it.
        list.files = {
                file(QStringLiteral("/shared/ck/e.pt"), 1), file(QStringLiteral("/shared/ck/e.pt.trainyard-done"), 2)};
        QCOMPARE(ty::newestCompleteCheckpoint(list, QStringLiteral("/shared/ck")).path,
                QStringLiteral("/shared/ck/e.pt"));
    }
};

QTEST_GUILESS_MAIN(TestCheckpoints)
#include "TestCheckpoints.moc"
