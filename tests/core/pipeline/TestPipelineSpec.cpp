#include "tests/support/TestSupport.h"
#include "core/pipeline/PipelineSpec.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;
using namespace ty::pipeline;

namespace {

void write(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text);
}

QString errorOf(const Result<PipelineSpec>& r)
{
    return r ? QStringLiteral("(parsed)") : r.error().message;
}

} // namespace

class TestPipelineSpec final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void stepsDependsOutputsAndFanOut()
    {
        const QString yaml
                = QStringLiteral("name: digits\n"
                                 "params: {lr: '0.01', epochs: '3', evaluate: 'true'}\n"
                                 "memoize: {max_age: 1h}\n"
                                 "steps:\n"
                                 "  - name: prep\n"
                                 "    command: python3 prep.py\n"
                                 "    outputs:\n"
                                 "      params:\n"
                                 "        rows: out/rows.txt\n"
                                 "  - name: shard\n"
                                 "    depends: [prep]\n"
                                 "    for_each: {shard: [0, 1, 2]}\n"
                                 "    command: [python3, shard.py, '{{item.shard}}', '{{steps.prep.outputs.rows}}']\n"
                                 "  - name: train\n"
                                 "    depends: [shard]\n"
                                 "    command: python3 train.py --lr {{params.lr}} --epochs {{params.epochs}}\n"
                                 "    memoize: {max_age: 2h, key_extra: v2, ignore: [seed]}\n"
                                 "    outputs: {params: {acc: {metric: val_accuracy, aggregate: max}}}\n"
                                 "  - name: evaluate\n"
                                 "    depends: 'train.succeeded && !shard.failed'\n"
                                 "    when: params.evaluate && steps.train.metrics.val_accuracy.max > 0.5\n"
                                 "    always_run: true\n"
                                 "    command: python3 eval.py\n");
        const auto spec = parsePipeline(yaml, QStringLiteral("pipe.yaml"), QStringLiteral("/work"));
        QVERIFY2(spec, qPrintable(errorOf(spec)));
        QCOMPARE(spec->name, QStringLiteral("digits"));
        QCOMPARE(spec->steps.size(), 4);
        QVERIFY(spec->failFast);

        const StepSpec& prep = spec->steps.at(0);
        QCOMPARE(prep.line, 5);
        QCOMPARE(prep.outputParams.size(), 1);
        QCOMPARE(prep.outputParams.front().file, QStringLiteral("out/rows.txt"));
        QVERIFY(prep.memoize.enabled);
        QCOMPARE(prep.memoize.maxAgeSec, std::optional<qint64>(3600));

        const StepSpec& shard = spec->steps.at(1);
        QCOMPARE(shard.forEach.size(), 1);
        QCOMPARE(shard.forEach.front().second, (QStringList{"0", "1", "2"}));
        QCOMPARE(shard.upstream, QStringList{QStringLiteral("prep")});

        const StepSpec& train = spec->steps.at(2);
        QCOMPARE(train.memoize.maxAgeSec, std::optional<qint64>(7200));
        QCOMPARE(train.memoize.keyExtra, QStringLiteral("v2"));
        QCOMPARE(train.memoize.ignore, QStringList{QStringLiteral("seed")});
        QCOMPARE(train.references.size(), 2);

        const StepSpec& eval = spec->steps.at(3);
        QVERIFY(eval.dependsIf);
        QVERIFY(eval.when);
        QVERIFY(eval.alwaysRun);
        QVERIFY(!eval.memoize.enabled); // always_run is never memoized
        QCOMPARE(eval.upstream, (QStringList{QStringLiteral("train"), QStringLiteral("shard")}));

        // The train step's job: pipeline params filled, shell-quoted, recorded.
        const auto job = train.job.instantiate({{QStringLiteral("params.lr"), QStringLiteral("0.001")},
                                                       {QStringLiteral("params.epochs"), QStringLiteral("3")}},
                {{QStringLiteral("lr"), QStringLiteral("0.001")}, {QStringLiteral("epochs"), QStringLiteral("3")}});
        QVERIFY2(job, qPrintable(job ? QString() : job.error().message));
        QCOMPARE(job->argv.last(), QStringLiteral("python3 train.py --lr '0.001' --epochs '3'"));
        QCOMPARE(job->params.value(QStringLiteral("lr")), QStringLiteral("0.001"));
        QCOMPARE(job->env.value(QStringLiteral("TRAINYARD_PARAM_EPOCHS")), QStringLiteral("3"));
        QCOMPARE(job->workdir, QStringLiteral("/work"));

        // A list command gets the value as one argument, as it is.
        const auto shardJob
                = shard.job.instantiate({{QStringLiteral("item.shard"), QStringLiteral("2")},
                                                {QStringLiteral("steps.prep.outputs.rows"), QStringLiteral("17 97")}},
                        {{QStringLiteral("shard"), QStringLiteral("2")}});
        QVERIFY(shardJob);
        QCOMPARE(shardJob->argv,
                (QStringList{QStringLiteral("python3"), QStringLiteral("shard.py"), QStringLiteral("2"),
                        QStringLiteral("17 97")}));
        QVERIFY(!shardJob->params.contains(QStringLiteral("steps.prep.outputs.rows"))); // a reference, not a param
    }

    void hostileParamNeverRuns()
    {
        const QString yaml = QStringLiteral("params: {msg: 'x'}\n"
                                            "steps:\n"
                                            "  - name: a\n"
                                            "    command: echo {{params.msg}} \"{{params.msg}}\"\n");
        const QString evil = QStringLiteral("'; touch /tmp/pwned; echo '$(id)");
        const auto spec
                = parsePipeline(yaml, QStringLiteral("p.yaml"), QStringLiteral("/w"), {{QStringLiteral("msg"), evil}});
        QVERIFY2(spec, qPrintable(errorOf(spec)));
        const auto job = spec->steps.front().job.instantiate(
                {{QStringLiteral("params.msg"), evil}}, {{QStringLiteral("msg"), evil}});
        QVERIFY(job);
        // Run it through sh: the value comes back as its literal bytes.
        QTemporaryDir dir;
        QProcess sh;
        sh.setWorkingDirectory(dir.path());
        sh.start(job->argv.front(), job->argv.mid(1));
        QVERIFY(sh.waitForFinished());
        QCOMPARE(QString::fromUtf8(sh.readAllStandardOutput()), evil + u' ' + evil + u'\n');
        QVERIFY(!QFile::exists(QStringLiteral("/tmp/pwned")));
    }

    void usesMergesOverridesAndKeepsTheFileAsRead()
    {
        QTemporaryDir dir;
        write(dir.filePath(QStringLiteral("train.yaml")),
                "name: ignored\n"
                "command: python3 train.py --lr {{lr}}\n"
                "params: {lr: '0.1', batch: '32'}\n"
                "env: {A: '1', B: '2'}\n"
                "resources: {gpus: 1}\n"
                "priority: 3\n");
        write(dir.filePath(QStringLiteral("pipe.yaml")),
                "steps:\n"
                "  - name: train\n"
                "    uses: train.yaml\n"
                "    params: {lr: '0.5'}\n"
                "    env: {B: '3'}\n"
                "    priority: 7\n");
        const auto spec = parsePipelineFile(dir.filePath(QStringLiteral("pipe.yaml")));
        QVERIFY2(spec, qPrintable(errorOf(spec)));
        const QString used = QDir::cleanPath(dir.filePath(QStringLiteral("train.yaml")));
        QVERIFY(spec->usedFiles.contains(used));
        auto job = spec->steps.front().job.instantiate({}, {});
        QVERIFY2(job, qPrintable(job ? QString() : job.error().message));
        QCOMPARE(job->argv.last(), QStringLiteral("python3 train.py --lr '0.5'"));
        QCOMPARE(job->params.value(QStringLiteral("batch")), QStringLiteral("32"));
        QCOMPARE(job->env.value(QStringLiteral("A")), QStringLiteral("1"));
        QCOMPARE(job->env.value(QStringLiteral("B")), QStringLiteral("3"));
        QCOMPARE(job->resources.gpus, 1);
        QCOMPARE(job->priority, 7);
        QCOMPARE(job->workdir, QDir::cleanPath(dir.path()));

        // Re-parsed later from the snapshot: the file's new text is not used.
        write(dir.filePath(QStringLiteral("train.yaml")), "command: python3 other.py\n");
        const auto again = parsePipeline(
                spec->yaml, spec->sourcePath, dir.path(), {}, [&](const QString& path) -> Result<QString> {
                    if (!spec->usedFiles.contains(path))
                        return fail(QStringLiteral("not in the snapshot: ") + path);
                    return spec->usedFiles.value(path);
                });
        QVERIFY2(again, qPrintable(errorOf(again)));
        job = again->steps.front().job.instantiate({}, {});
        QVERIFY(job);
        QCOMPARE(job->argv.last(), QStringLiteral("python3 train.py --lr '0.5'"));
    }

    void errorsSayWhatAndWhere_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::addColumn<QString>("expected");
        QTest::newRow("typo in a job key") << "steps:\n  - name: a\n    comand: x\n"
                                           << "pipe.yaml:3:5: unknown key 'comand' (did you mean 'command'?)";
        QTest::newRow("no command") << "steps:\n  - name: a\n    priority: 1\n"
                                    << "pipe.yaml:2:5: step 'a': missing required key 'command'";
        QTest::newRow("unknown upstream")
                << "steps:\n  - name: train\n    command: x\n  - name: eval\n    depends: [trian]\n    command: y\n"
                << "pipe.yaml:4:5: step 'eval' depends on 'trian', which is not a step (did you mean 'train'?)";
        QTest::newRow("cycle") << "steps:\n"
                                  "  - {name: a, command: x, depends: [c]}\n"
                                  "  - {name: b, command: x, depends: [a]}\n"
                                  "  - {name: c, command: x, depends: [b]}\n"
                               << "the steps form a cycle: a -> c -> b -> a";
        QTest::newRow("self") << "steps:\n  - {name: a, command: x, depends: [a]}\n"
                              << "step 'a' depends on itself";
        QTest::newRow("duplicate step") << "steps:\n  - {name: a, command: x}\n  - {name: a, command: y}\n"
                                        << "pipe.yaml:3:12: two steps are named 'a'";
        QTest::newRow("undeclared output")
                << "steps:\n  - {name: a, command: x}\n  - {name: b, command: 'echo {{steps.a.outputs.n}}'}\n"
                << "step 'b' uses steps.a.outputs.n, and step 'a' declares no output 'n'";
        QTest::newRow("missing param") << "params: {lr: 1}\nsteps:\n  - {name: a, command: 'echo {{params.lrr}}'}\n"
                                       << "the pipeline has no param 'lrr' (did you mean 'lr'?)";
        QTest::newRow("item without for_each") << "steps:\n  - {name: a, command: 'echo {{item.shard}}'}\n"
                                               << "its 'for_each' has no 'shard'";
        QTest::newRow("bad depends expression")
                << "steps:\n  - {name: a, command: x}\n  - name: b\n    command: x\n    depends: a.succeeded &&\n"
                << "pipe.yaml:5:28: 'depends': the condition ends where a value was expected";
        QTest::newRow("depends expression names a state")
                << "steps:\n  - {name: a, command: x}\n  - name: b\n    command: x\n    depends: a.done || a.failed\n"
                << "must be STEP.succeeded, STEP.failed, STEP.skipped or STEP.cached";
        QTest::newRow("bad reference") << "steps:\n  - {name: a, command: 'echo {{steps.a.out}}'}\n"
                                       << "'steps.a.out' is not a reference";
        QTest::newRow("no steps") << "name: x\n"
                                  << "a pipeline needs 'steps'";
        QTest::newRow("unknown pipeline key") << "stepz: []\n"
                                              << "unknown pipeline key 'stepz' (did you mean 'steps'?)";
        QTest::newRow("output escapes") << "steps:\n  - name: a\n    command: x\n    outputs: {params: {n: ../n.txt}}\n"
                                        << "must be relative to the step's workdir";
        QTest::newRow("continue_on") << "steps:\n  - {name: a, command: x, continue_on: error}\n"
                                     << "'continue_on' takes 'failed'";
        QTest::newRow("sweep of no param")
                << "params: {lr: 1}\nsweep: {lt: [1, 2]}\nsteps:\n  - {name: a, command: x}\n"
                << "pipe.yaml:2:9: 'sweep' names 'lt', which is not a param of the pipeline "
                   "(did you mean 'lr'?)";
        QTest::newRow("empty input") << "steps:\n  - {name: a, command: x, inputs: ['']}\n"
                                     << "pipe.yaml:2:35: 'inputs' has an empty path";
    }
    void errorsSayWhatAndWhere()
    {
        QFETCH(QString, yaml);
        QFETCH(QString, expected);
        const auto spec = parsePipeline(yaml, QStringLiteral("pipe.yaml"), QStringLiteral("/w"));
        QVERIFY(!spec);
        QVERIFY2(spec.error().message.contains(expected), qPrintable(spec.error().message));
        QCOMPARE(spec.error().kind, ErrorKind::InvalidInput);
    }

    void reparseUsesTheTextsKeptAtSubmit()
    {
        // What a restarted service (or `pipeline resume`) rebuilds: the
        // `uses:` file as it was read at submit, never read again.
        int reads = 0;
        const FileReader reader = [&reads](const QString& path) -> Result<QString> {
            ++reads;
            if (path != u"/w/job.yaml")
                return fail(QStringLiteral("unexpected read of ") + path);
            return QStringLiteral("command: echo v1\n");
        };
        auto spec = parsePipeline(QStringLiteral("name: p\nparams: {lr: '1'}\nsteps:\n  - {name: a, uses: job.yaml}\n"),
                QStringLiteral("pipe.yaml"), QStringLiteral("/w"), {{QStringLiteral("lr"), QStringLiteral("2")}},
                reader);
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(reads, 1);
        QCOMPARE(spec->origin, QStringLiteral("pipe.yaml"));
        QCOMPARE(spec->baseDir, QStringLiteral("/w"));
        const auto again = reparsePipeline(*spec);
        QVERIFY2(again, again ? "" : qPrintable(again.error().message));
        QCOMPARE(reads, 1);
        QCOMPARE(again->params.value(QStringLiteral("lr")), QStringLiteral("2"));
        const auto job = again->steps.front().job.instantiate({}, {});
        QVERIFY(job);
        QCOMPARE(job->argv.last(), QStringLiteral("echo v1"));
        // A stored pipeline whose used file was not kept is refused, naming it.
        PipelineSpec lost = *spec;
        lost.usedFiles.clear();
        const auto refused = reparsePipeline(lost);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(QStringLiteral("/w/job.yaml: not among the files")),
                qPrintable(refused.error().message));
    }

    void sweepExpandsIntoOnePipelinePerCombination()
    {
        const QString yaml = QStringLiteral("name: sw\nparams: {lr: '1', bs: '8', seed: '0'}\n"
                                            "sweep: {lr: ['0.1', '0.01'], bs: [8, 16]}\n"
                                            "steps:\n  - {name: a, command: 'echo {{params.lr}} {{params.bs}}'}\n");
        auto spec = parsePipeline(yaml, QStringLiteral("pipe.yaml"), QStringLiteral("/w"));
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->sweep.size(), 2);
        const auto all = expandPipelineSweep(*spec);
        QVERIFY(all);
        QCOMPARE(all->size(), 4);
        QStringList names;
        for (const PipelineSpec& p : *all)
            names << p.name;
        // The last name varies fastest.
        QCOMPARE(names,
                (QStringList{QStringLiteral("sw[lr=0.1,bs=8]"), QStringLiteral("sw[lr=0.1,bs=16]"),
                        QStringLiteral("sw[lr=0.01,bs=8]"), QStringLiteral("sw[lr=0.01,bs=16]")}));
        const auto job
                = all->at(2).steps.front().job.instantiate({{QStringLiteral("params.lr"), QStringLiteral("0.01")},
                                                                   {QStringLiteral("params.bs"), QStringLiteral("8")}},
                        {});
        QVERIFY2(job, job ? "" : qPrintable(job.error().message));
        QCOMPARE(job->argv.last(), QStringLiteral("echo '0.01' '8'"));
        QCOMPARE(all->at(2).params.value(QStringLiteral("lr")), QStringLiteral("0.01"));
        QVERIFY(all->at(2).sweep.isEmpty());
        // A param set with --param is not swept.
        auto fixed = parsePipeline(yaml, QStringLiteral("pipe.yaml"), QStringLiteral("/w"),
                {{QStringLiteral("lr"), QStringLiteral("0.5")}});
        QVERIFY(fixed);
        const auto two = expandPipelineSweep(*fixed);
        QVERIFY(two);
        QCOMPARE(two->size(), 2);
        QCOMPARE(two->at(1).name, QStringLiteral("sw[bs=16]"));
        QCOMPARE(two->at(1).params.value(QStringLiteral("lr")), QStringLiteral("0.5"));
    }

    void paramOverrideMustExist()
    {
        const auto spec = parsePipeline(QStringLiteral("params: {lr: 1}\nsteps:\n  - {name: a, command: x}\n"),
                QStringLiteral("p.yaml"), QStringLiteral("/w"), {{QStringLiteral("lt"), QStringLiteral("2")}});
        QVERIFY(!spec);
        QVERIFY2(spec.error().message.contains(QStringLiteral("cannot set param 'lt': the pipeline has no such param "
                                                              "(did you mean 'lr'?)")),
                qPrintable(spec.error().message));
    }

    void bundledExampleParses()
    {
        const QString path = test::sourcePath(QStringLiteral("resources/examples/digits/pipeline.yaml"));
        const auto spec = parsePipelineFile(path);
        QVERIFY2(spec, qPrintable(errorOf(spec)));
        QVERIFY(spec->steps.size() >= 3);
    }
};

QTEST_GUILESS_MAIN(TestPipelineSpec)
#include "TestPipelineSpec.moc"
