// Re-run "with these params": the spec a run of a sweep is submitted again with.
#include "tests/support/TestSupport.h"
#include "core/spec/Rerun.h"

#include <QDir>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestRerun final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void runOfASweepRunsAloneWithItsParams()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("wd")));
        const QString specPath = dir.filePath(QStringLiteral("sweep.yaml"));
        RunRecord run;
        run.id = 12;
        run.name = QStringLiteral("digits-sweep[lr=0.01]");
        run.specPath = specPath;
        run.specYaml = QStringLiteral("name: digits-sweep\n"
                                      "command: [python3, train.py, --lr, '{{lr}}', --bs, '{{bs}}']\n"
                                      "workdir: wd   # relative to the spec file\n"
                                      "params: {bs: 32}\n"
                                      "sweep: {lr: [0.001, 0.01, 0.1]}\n"
                                      "max_concurrent: 2\n"
                                      "tags: [digits]\n");
        run.tags = {QStringLiteral("digits"), QStringLiteral("mine")};
        run.groups = {RunGroupMembership{4, RunGroupKind::Sweep, 1, QStringLiteral("lr=0.01")}};
        // `imported` came from a TensorBoard file: not the spec's, left out.
        const QMap<QString, QString> params{{QStringLiteral("lr"), QStringLiteral("0.01")},
                {QStringLiteral("bs"), QStringLiteral("64")}, {QStringLiteral("imported"), QStringLiteral("x")}};
        const auto rerun = specForRerun(run, params);
        QVERIFY2(rerun, qPrintable(rerun ? QString() : rerun.error().message));
        QCOMPARE(rerun->baseDir, dir.path());
        const JobSpec& s = rerun->spec;
        QCOMPARE(s.name, run.name);
        QVERIFY(s.sweep.isEmpty());
        QCOMPARE(s.maxConcurrent, 0);
        QCOMPARE(s.argv,
                (QStringList{QStringLiteral("python3"), QStringLiteral("train.py"), QStringLiteral("--lr"),
                        QStringLiteral("0.01"), QStringLiteral("--bs"), QStringLiteral("64")}));
        QCOMPARE(s.params,
                (QMap<QString, QString>{
                        {QStringLiteral("lr"), QStringLiteral("0.01")}, {QStringLiteral("bs"), QStringLiteral("64")}}));
        QCOMPARE(s.tags, (QStringList{QStringLiteral("digits"), QStringLiteral("mine")}));
        QCOMPARE(s.workdir, QDir::cleanPath(dir.filePath(QStringLiteral("wd"))));
        // The placeholders stay in the text, so an edited param takes effect.
        QVERIFY2(rerun->yaml.contains(QStringLiteral("{{lr}}")), qPrintable(rerun->yaml));
        QVERIFY2(!rerun->yaml.contains(QRegularExpression(
                         QStringLiteral("^(sweep|max_concurrent):"), QRegularExpression::MultilineOption)),
                qPrintable(rerun->yaml));
        auto edited = parseJobSpec(QString(rerun->yaml).replace(QStringLiteral("0.01"), QStringLiteral("0.5")),
                QStringLiteral("edited"), rerun->baseDir);
        QVERIFY2(edited, qPrintable(edited ? QString() : edited.error().message));
        QCOMPARE(edited->argv.at(3), QStringLiteral("0.5"));

        // A run records where it ran: that folder, not the spec's again
        // (a spec read from stdin has no folder of its own).
        run.workdir = dir.filePath(QStringLiteral("wd"));
        run.specPath.clear();
        const auto fromStdin = specForRerun(run, params);
        QVERIFY2(fromStdin, qPrintable(fromStdin ? QString() : fromStdin.error().message));
        QCOMPARE(fromStdin->spec.workdir, QDir::cleanPath(run.workdir));
    }

    void aSpecThatNoLongerParsesSaysWhichRun()
    {
        RunRecord run;
        run.id = 7;
        run.name = QStringLiteral("old");
        run.workdir = QDir::tempPath();
        run.specYaml = QStringLiteral("name: old\ncomand: [true]\n");
        const auto rerun = specForRerun(run, {});
        QVERIFY(!rerun);
        QVERIFY2(
                rerun.error().message.startsWith(QStringLiteral("run 7 spec:2:1:")), qPrintable(rerun.error().message));
    }
};

QTEST_GUILESS_MAIN(TestRerun)
#include "TestRerun.moc"
