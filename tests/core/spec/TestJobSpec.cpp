#include "tests/support/TestSupport.h"
#include "core/spec/JobSpec.h"

#include <QDir>
#include <QFile>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestJobSpec final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void bundledExample()
    {
        const QString path = test::sourcePath(QStringLiteral("resources/examples/digits/job.yaml"));
        const auto spec = parseJobSpecFile(path);
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        QCOMPARE(spec->name, QStringLiteral("digits-mlp"));
        QCOMPARE(spec->argv,
                (QStringList{QStringLiteral("/usr/bin/python3"), QStringLiteral("train.py"), QStringLiteral("--epochs"),
                        QStringLiteral("15"), QStringLiteral("--lr"), QStringLiteral("0.001"),
                        QStringLiteral("--batch-size"), QStringLiteral("32")}));
        QVERIFY(!spec->shellCommand);
        QCOMPARE(spec->workdir, QDir::cleanPath(test::sourcePath(QStringLiteral("resources/examples/digits"))));
        QCOMPARE(spec->params.value(QStringLiteral("lr")), QStringLiteral("0.001"));
        QCOMPARE(spec->env.value(QStringLiteral("TRAINYARD_PARAM_LR")), QStringLiteral("0.001"));
        QCOMPARE(spec->env.value(QStringLiteral("PYTHONUNBUFFERED")), QStringLiteral("1"));
        QCOMPARE(spec->tags, (QStringList{QStringLiteral("example"), QStringLiteral("digits")}));
        QCOMPARE(spec->resources.gpus, 0);
        QCOMPARE(spec->sourcePath, QFileInfo(path).absoluteFilePath());
    }

    void fullSpec()
    {
        const QString yaml = QStringLiteral(
                "name: sweep-a\n"
                "command: python3 train.py --msg \"a b; $HOME\"\n"
                "workdir: /tmp\n"
                "resources: {gpus: 2, gpu_memory: 40GiB, gpu_type: 'A100|H100', cpus: 8, memory: 64G}\n"
                "priority: 5\n"
                "tags: baseline\n"
                "estimated_runtime: 1h30m\n"
                "time_limit: 2h\n"
                "metrics:\n"
                "  - key: top5\n"
                "    regex: 'top-5 accuracy (?<value>[0-9.]+)'\n"
                "  - regex: '(?<key>\\w+) is (?<value>[0-9.]+)'\n");
        const auto spec = parseJobSpec(yaml, QStringLiteral("s.yaml"), QStringLiteral("/"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        QVERIFY(spec->shellCommand);
        QCOMPARE(spec->argv,
                (QStringList{QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                        QStringLiteral("python3 train.py --msg \"a b; $HOME\"")}));
        QCOMPARE(spec->resources.gpus, 2);
        QCOMPARE(spec->resources.gpuMemoryMiB, 40 * 1024);
        QCOMPARE(spec->resources.gpuType, QStringLiteral("A100|H100"));
        QCOMPARE(spec->resources.cpus, 8);
        QCOMPARE(spec->resources.memoryMiB, 64 * 1024);
        QCOMPARE(spec->priority, 5);
        QCOMPARE(spec->tags, QStringList{QStringLiteral("baseline")});
        QCOMPARE(spec->estimatedRuntimeSec, std::optional<qint64>(5400));
        QCOMPARE(spec->timeLimitSec, std::optional<qint64>(7200));
        QCOMPARE(spec->metricRules.size(), 2);
        QCOMPARE(spec->metricRules[0].key, QStringLiteral("top5"));
        QCOMPARE(spec->metricRules[0].line, 10);
        QCOMPARE(spec->metricRules[1].key, QString());
        const auto nodes
                = parseJobSpec(QStringLiteral("command: [ls]\nprefer_nodes: [ws-02]\navoid_nodes: [ws-01, ws-03]\n"),
                        QStringLiteral("n.yaml"), QStringLiteral("/"));
        QVERIFY(nodes);
        QCOMPARE(nodes->preferNodes, QStringList{QStringLiteral("ws-02")});
        QCOMPARE(nodes->avoidNodes, (QStringList{QStringLiteral("ws-01"), QStringLiteral("ws-03")}));
        const auto back = parseJobSpec(toYaml(*nodes), QStringLiteral("<dialog>"), QStringLiteral("/"));
        QVERIFY(back);
        QCOMPARE(back->avoidNodes, nodes->avoidNodes);
    }

    // `slurm:` (issue #26): Slurm's words, kept as written, and written back by toYaml.
    void slurmOptions()
    {
        const auto spec = parseJobSpec(QStringLiteral("command: [ls]\n"
                                                      "slurm:\n"
                                                      "  partition: gpu\n"
                                                      "  account: lab-42\n"
                                                      "  qos: normal\n"
                                                      "  constraint: \"a100&ib\"\n"
                                                      "  gpu_type: a100\n"
                                                      "  signal_grace: 2m\n"
                                                      "  sbatch: [--exclusive, --reservation=maint]\n"),
                QStringLiteral("s.yaml"), QStringLiteral("/"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        QCOMPARE(spec->slurm.partition, QStringLiteral("gpu"));
        QCOMPARE(spec->slurm.account, QStringLiteral("lab-42"));
        QCOMPARE(spec->slurm.qos, QStringLiteral("normal"));
        QCOMPARE(spec->slurm.constraint, QStringLiteral("a100&ib"));
        QCOMPARE(spec->slurm.gpuType, QStringLiteral("a100"));
        QCOMPARE(spec->slurm.signalGraceSec, 120);
        QCOMPARE(spec->slurm.sbatch,
                (QStringList{QStringLiteral("--exclusive"), QStringLiteral("--reservation=maint")}));
        const auto back = parseJobSpec(toYaml(*spec), QStringLiteral("<dialog>"), QStringLiteral("/"));
        QVERIFY2(back, qPrintable(back ? QString() : back.error().message));
        QVERIFY(back->slurm == spec->slurm);
        QVERIFY(!toYaml(*parseJobSpec(QStringLiteral("command: [ls]\n"), QStringLiteral("p.yaml"), QStringLiteral("/")))
                         .contains(QStringLiteral("slurm")));
    }

    // `preemptible` and `preemption` (issue #25): defaults, values, and the
    // round trip through toYaml (the stored spec is what the engine reads).
    void preemption()
    {
        const auto plain
                = parseJobSpec(QStringLiteral("command: [ls]\n"), QStringLiteral("p.yaml"), QStringLiteral("/"));
        QVERIFY(plain);
        QVERIFY(!plain->preemptible);
        QCOMPARE(plain->preemption.signal, QStringLiteral("SIGTERM"));
        QCOMPARE(plain->preemption.graceSec, 30);
        QVERIFY(!toYaml(*plain).contains(QStringLiteral("preempt")));

        const auto defaults = parseJobSpec(
                QStringLiteral("command: [ls]\npreemptible: true\n"), QStringLiteral("p.yaml"), QStringLiteral("/"));
        QVERIFY(defaults);
        QVERIFY(defaults->preemptible);
        QCOMPARE(defaults->preemption.signal, QStringLiteral("SIGTERM"));
        QCOMPARE(defaults->preemption.graceSec, 30);

        const auto spec = parseJobSpec(QStringLiteral("command: [ls]\npreemptible: yes\n"
                                                      "preemption: {signal: SIGUSR1, grace: 2m}\n"),
                QStringLiteral("p.yaml"), QStringLiteral("/"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        QVERIFY(spec->preemptible);
        QCOMPARE(spec->preemption.signal, QStringLiteral("SIGUSR1"));
        QCOMPARE(spec->preemption.graceSec, 120);
        const auto back = parseJobSpec(toYaml(*spec), QStringLiteral("<dialog>"), QStringLiteral("/"));
        QVERIFY2(back, qPrintable(back ? QString() : back.error().message));
        QVERIFY(back->preemptible);
        QVERIFY(back->preemption == spec->preemption);
    }

    // `pool:` (issue #25): the resource pool whose quotas the run counts
    // against; absent = none named; kept through toYaml.
    void pool()
    {
        const auto plain
                = parseJobSpec(QStringLiteral("command: [ls]\n"), QStringLiteral("p.yaml"), QStringLiteral("/"));
        QVERIFY(plain);
        QCOMPARE(plain->pool, QString());
        QVERIFY(!toYaml(*plain).contains(QStringLiteral("pool")));
        const auto spec = parseJobSpec(QStringLiteral("command: [ls]\npool: a100\nproject: vision\n"),
                QStringLiteral("p.yaml"), QStringLiteral("/"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        QCOMPARE(spec->pool, QStringLiteral("a100"));
        const auto back = parseJobSpec(toYaml(*spec), QStringLiteral("<dialog>"), QStringLiteral("/"));
        QVERIFY2(back, qPrintable(back ? QString() : back.error().message));
        QCOMPARE(back->pool, QStringLiteral("a100"));
    }

    void defaultsFromCommand()
    {
        const auto spec = parseJobSpec(QStringLiteral("command: [python3, /x/train_big.py]\n"),
                QStringLiteral("j.yaml"), QStringLiteral("/srv/job"));
        QVERIFY(spec);
        QCOMPARE(spec->name, QStringLiteral("train_big"));
        QCOMPARE(spec->workdir, QStringLiteral("/srv/job"));
        const auto rel = parseJobSpec(QStringLiteral("command: [ls]\nworkdir: ../data\n"), QStringLiteral("j.yaml"),
                QStringLiteral("/srv/job"));
        QVERIFY(rel);
        QCOMPARE(rel->workdir, QStringLiteral("/srv/data"));
    }

    // `nodes: {min, max}` is an elastic gang; `nodes: N` stays a fixed one;
    // both survive toYaml (a rerun, the submit dialog).
    void elasticNodes()
    {
        const auto spec
                = parseJobSpec(QStringLiteral("command: [ls]\nresources:\n  gpus: 2\n  nodes: {min: 1, max: 4}\n"),
                        QStringLiteral("e.yaml"), QStringLiteral("/"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        QCOMPARE(spec->resources.nodes, 1);
        QCOMPARE(spec->resources.nodesMax, 4);
        QVERIFY(spec->resources.elastic());
        const auto back = parseJobSpec(toYaml(*spec), QStringLiteral("<dialog>"), QStringLiteral("/"));
        QVERIFY2(back, qPrintable(back ? QString() : back.error().message));
        QCOMPARE(back->resources.nodes, 1);
        QCOMPARE(back->resources.nodesMax, 4);

        const auto same = parseJobSpec(QStringLiteral("command: [ls]\nresources:\n  nodes:\n    min: 3\n    max: 3\n"),
                QStringLiteral("e.yaml"), QStringLiteral("/"));
        QVERIFY2(same, qPrintable(same ? QString() : same.error().message));
        QCOMPARE(same->resources.nodes, 3);
        QCOMPARE(same->resources.nodesMax, 3);

        const auto fixed = parseJobSpec(QStringLiteral("command: [ls]\nresources: {nodes: 2}\n"),
                QStringLiteral("f.yaml"), QStringLiteral("/"));
        QVERIFY2(fixed, qPrintable(fixed ? QString() : fixed.error().message));
        QCOMPARE(fixed->resources.nodes, 2);
        QCOMPARE(fixed->resources.nodesMax, 0);
        QVERIFY(!fixed->resources.elastic());
        const auto fixedBack = parseJobSpec(toYaml(*fixed), QStringLiteral("<dialog>"), QStringLiteral("/"));
        QVERIFY(fixedBack);
        QCOMPARE(fixedBack->resources.nodes, 2);
        QCOMPARE(fixedBack->resources.nodesMax, 0);
    }

    void badSpecs_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown key") << QStringLiteral("name: a\ncomand: [ls]\n")
                                     << QStringLiteral("bad.yaml:2:1: unknown key 'comand' (did you mean 'command'?)");
        QTest::newRow("missing command")
                << QStringLiteral("name: a\ntags: [x]\n")
                << QStringLiteral(
                           "bad.yaml:1:1: missing required key 'command' (a list of arguments or a shell string)");
        QTest::newRow("wrong type priority")
                << QStringLiteral("command: [ls]\npriority: high\n")
                << QStringLiteral("bad.yaml:2:11: 'priority' must be an integer, got 'high'");
        QTest::newRow("wrong type gpus") << QStringLiteral("command: [ls]\nresources:\n  gpus: [1]\n")
                                         << QStringLiteral(
                                                    "bad.yaml:3:9: 'resources.gpus' must be an integer, not a list");
        QTest::newRow("slurm not a mapping")
                << QStringLiteral("command: [ls]\nslurm: gpu\n")
                << QStringLiteral("bad.yaml:2:8: 'slurm' must be a mapping (partition, account, qos, constraint, "
                                  "gpu_type, signal_grace, sbatch), not a scalar");
        QTest::newRow("slurm unknown key")
                << QStringLiteral("command: [ls]\nslurm:\n  partiton: gpu\n")
                << QStringLiteral("bad.yaml:3:3: unknown key 'partiton' in 'slurm' (did you mean 'partition'?)");
        QTest::newRow("slurm partition with a space")
                << QStringLiteral("command: [ls]\nslurm: {partition: \"gpu; rm -rf /\"}\n")
                << QStringLiteral("bad.yaml:2:20: 'slurm.partition' must be a Slurm name (letters, digits, . _ + : -), "
                                  "got 'gpu; rm -rf /'");
        QTest::newRow("slurm sbatch sets the output")
                << QStringLiteral("command: [ls]\nslurm: {sbatch: [--output=/etc/passwd]}\n")
                << QStringLiteral("bad.yaml:2:17: 'slurm.sbatch' cannot set --output: Trainyard sets it from the job "
                                  "spec");
        QTest::newRow("slurm sbatch sets the partition")
                << QStringLiteral("command: [ls]\nslurm: {sbatch: [--partition=x]}\n")
                << QStringLiteral("bad.yaml:2:17: 'slurm.sbatch' cannot set --partition: Trainyard sets it from the "
                                  "job spec (slurm.partition)");
        QTest::newRow("slurm sbatch abbreviates the output")
                << QStringLiteral("command: [ls]\nslurm: {sbatch: [--out=x]}\n")
                << QStringLiteral("bad.yaml:2:17: 'slurm.sbatch' cannot set --output: Trainyard sets it from the job "
                                  "spec");
        QTest::newRow("slurm sbatch short option")
                << QStringLiteral("command: [ls]\nslurm: {sbatch: [-p, gpu]}\n")
                << QStringLiteral("bad.yaml:2:17: 'slurm.sbatch' takes long options (\"--exclusive\", "
                                  "\"--reservation=x\"), one per item, not '-p'");
        QTest::newRow("slurm signal grace zero")
                << QStringLiteral("command: [ls]\nslurm: {signal_grace: 0s}\n")
                << QStringLiteral("bad.yaml:2:23: 'slurm.signal_grace' must be between 1s and 65535s");
        QTest::newRow("pool not a name")
                << QStringLiteral("command: [ls]\npool: a100 pool\n")
                << QStringLiteral("bad.yaml:2:7: 'pool' must be a pool's name (letters, digits, '.', '_', '-'), got "
                                  "'a100 pool'");
        QTest::newRow("pool a list") << QStringLiteral("command: [ls]\npool: [a100]\n")
                                     << QStringLiteral("bad.yaml:2:7: 'pool' must be a string, not a list");
        QTest::newRow("preemptible not a boolean")
                << QStringLiteral("command: [ls]\npreemptible: maybe\n")
                << QStringLiteral("bad.yaml:2:14: 'preemptible' must be true or false, got 'maybe'");
        QTest::newRow("preemption signal unknown")
                << QStringLiteral("command: [ls]\npreemptible: true\npreemption: {signal: SIGKILL}\n")
                << QStringLiteral("bad.yaml:3:22: 'preemption.signal' must be one of SIGTERM, SIGINT, SIGUSR1, "
                                  "SIGUSR2, SIGHUP, SIGQUIT, got 'SIGKILL'");
        QTest::newRow("preemption signal without SIG")
                << QStringLiteral("command: [ls]\npreemptible: true\npreemption:\n  signal: usr1\n")
                << QStringLiteral("bad.yaml:4:11: 'preemption.signal' must be one of SIGTERM, SIGINT, SIGUSR1, "
                                  "SIGUSR2, SIGHUP, SIGQUIT, got 'usr1' (did you mean 'SIGUSR1'?)");
        QTest::newRow("preemption grace not a duration")
                << QStringLiteral("command: [ls]\npreemptible: true\npreemption: {grace: soon}\n")
                << QStringLiteral("bad.yaml:3:21: 'preemption.grace' must be a duration such as 90s, 30m, 2h or "
                                  "1h30m, got 'soon'");
        QTest::newRow("preemption grace too long")
                << QStringLiteral("command: [ls]\npreemptible: true\npreemption: {grace: 2d}\n")
                << QStringLiteral("bad.yaml:3:21: 'preemption.grace' must be between 0s and 1d");
        QTest::newRow("preemption unknown key")
                << QStringLiteral("command: [ls]\npreemptible: true\npreemption: {signl: SIGINT}\n")
                << QStringLiteral("bad.yaml:3:14: unknown key 'signl' in 'preemption' (did you mean 'signal'?)");
        QTest::newRow("preemption not a mapping")
                << QStringLiteral("command: [ls]\npreemptible: true\npreemption: SIGINT\n")
                << QStringLiteral("bad.yaml:3:13: 'preemption' must be a mapping (signal, grace), not a scalar");
        QTest::newRow("preemption of a run not preemptible")
                << QStringLiteral("command: [ls]\npreemption: {grace: 10s}\n")
                << QStringLiteral("bad.yaml:2:1: 'preemption' says how a preemptible run is stopped, and this run is "
                                  "not preemptible: add 'preemptible: true'");
        QTest::newRow("unknown resource")
                << QStringLiteral("command: [ls]\nresources:\n  gpu: 1\n")
                << QStringLiteral("bad.yaml:3:3: unknown key 'gpu' in 'resources' (did you mean 'gpus'?)");
        QTest::newRow("command map")
                << QStringLiteral("command: {a: b}\n")
                << QStringLiteral(
                           "bad.yaml:1:10: 'command' must be a list of arguments or a shell string, not a mapping");
        QTest::newRow("empty command list") << QStringLiteral(
                "command: []\n") << QStringLiteral("bad.yaml:1:10: 'command' needs at least the program to run");
        QTest::newRow("env not map") << QStringLiteral("command: [ls]\nenv: [A=1]\n")
                                     << QStringLiteral(
                                                "bad.yaml:2:6: 'env' must be a mapping of names to values, not a list");
        QTest::newRow("bad size")
                << QStringLiteral("command: [ls]\nresources: {gpu_memory: lots}\n")
                << QStringLiteral(
                           "bad.yaml:2:25: 'resources.gpu_memory' must be a size such as 40GiB, 512M or a number of MiB, got 'lots'");
        QTest::newRow("regex without value")
                << QStringLiteral("command: [ls]\nmetrics:\n  - {key: a, regex: 'a=(\\d+)'}\n")
                << QStringLiteral("bad.yaml:3:21: 'metrics[0].regex' needs a named group (?<value>...) for the number");
        QTest::newRow("unknown param") << QStringLiteral("command: [run, '{{lr}}']\n")
                                       << QStringLiteral(
                                                  "bad.yaml:1:17: 'command' uses {{lr}} but 'params' has no 'lr'");
        QTest::newRow("syntax") << QStringLiteral("command: [ls\nname: x\n")
                                << QStringLiteral("bad.yaml:2:5: YAML syntax error: end of sequence flow not found");
        QTest::newRow("duplicate") << QStringLiteral("command: [ls]\ncommand: [pwd]\n")
                                   << QStringLiteral("bad.yaml:2:1: duplicate key 'command'");
        QTest::newRow("not a map")
                << QStringLiteral("- ls\n")
                << QStringLiteral(
                           "bad.yaml:1:1: a job spec must be a mapping of keys (name, command, ...), not a list");
        QTest::newRow("empty") << QString()
                               << QStringLiteral("bad.yaml: the job spec is empty: it needs at least a 'command'");
        QTest::newRow("metric_files absolute")
                << QStringLiteral("command: [ls]\nmetric_files:\n  - logs/m.csv\n  - /etc/passwd\n")
                << QStringLiteral(
                           "bad.yaml:4:5: metric file glob '/etc/passwd' must be relative to the run's workdir, not absolute");
        QTest::newRow("metric_files dotdot")
                << QStringLiteral("command: [ls]\nmetric_files: [a/../../b.jsonl]\n")
                << QStringLiteral(
                           "bad.yaml:2:16: metric file glob 'a/../../b.jsonl' must not contain '..': metric files come from inside the run's workdir");
        QTest::newRow("metric_files map")
                << QStringLiteral("command: [ls]\nmetric_files: {a: b}\n")
                << QStringLiteral(
                           "bad.yaml:2:15: 'metric_files' must be a list of globs like [lightning_logs/*/metrics.csv], not a mapping");
        QTest::newRow("metric_files nested")
                << QStringLiteral("command: [ls]\nmetric_files: [[a]]\n")
                << QStringLiteral("bad.yaml:2:16: every item of 'metric_files' must be a glob string, not a list");
        QTest::newRow("metric_files typo")
                << QStringLiteral("command: [ls]\nmetric_file: [a]\n")
                << QStringLiteral("bad.yaml:2:1: unknown key 'metric_file' (did you mean 'metric_files'?)");
        // nodes: an integer (a fixed gang) or {min, max} (an elastic one, issue #25).
        QTest::newRow("nodes min > max") << QStringLiteral("command: [ls]\nresources:\n  nodes: {min: 4, max: 2}\n")
                                         << QStringLiteral(
                                                    "bad.yaml:3:10: 'resources.nodes.min' (4) must not be greater than "
                                                    "'resources.nodes.max' (2)");
        QTest::newRow("nodes min 0")
                << QStringLiteral("command: [ls]\nresources:\n  nodes: {min: 0, max: 2}\n")
                << QStringLiteral("bad.yaml:3:16: 'resources.nodes.min' must be between 1 and 1024, got 0");
        QTest::newRow("nodes max missing")
                << QStringLiteral("command: [ls]\nresources:\n  nodes: {min: 2}\n")
                << QStringLiteral("bad.yaml:3:10: 'resources.nodes' as a mapping needs both 'min' and 'max' (an "
                                  "elastic gang, e.g. {min: 1, max: 4}); for a fixed gang write a number");
        QTest::newRow("nodes key typo")
                << QStringLiteral("command: [ls]\nresources:\n  nodes:\n    min: 1\n    maxx: 4\n")
                << QStringLiteral("bad.yaml:5:5: unknown key 'maxx' in 'resources.nodes' (did you mean 'max'?)");
        QTest::newRow("nodes max not a number")
                << QStringLiteral("command: [ls]\nresources:\n  nodes: {min: 1, max: many}\n")
                << QStringLiteral("bad.yaml:3:24: 'resources.nodes.max' must be an integer, got 'many'");
        QTest::newRow("nodes list")
                << QStringLiteral("command: [ls]\nresources:\n  nodes: [1, 4]\n")
                << QStringLiteral("bad.yaml:3:10: 'resources.nodes' must be an integer or a mapping {min: M, max: N}, "
                                  "not a list");
        QTest::newRow("nodes zero") << QStringLiteral("command: [ls]\nresources: {nodes: 0}\n")
                                    << QStringLiteral(
                                               "bad.yaml:2:20: 'resources.nodes' must be between 1 and 1024, got 0");
    }

    void badSpecs()
    {
        QFETCH(QString, yaml);
        QFETCH(QString, message);
        const auto spec = parseJobSpec(yaml, QStringLiteral("bad.yaml"), QStringLiteral("/"));
        QVERIFY(!spec);
        QCOMPARE(spec.error().message, message);
    }

    void missingFile()
    {
        const auto spec = parseJobSpecFile(QStringLiteral("/nonexistent/job.yaml"));
        QVERIFY(!spec);
        QVERIFY(spec.error().message.startsWith(QStringLiteral("/nonexistent/job.yaml: cannot read job spec")));
    }

    void scripts()
    {
        QTemporaryDir dir;
        QFile py(dir.filePath(QStringLiteral("my model.py")));
        QVERIFY(py.open(QIODevice::WriteOnly));
        py.write("print('hi')\n");
        py.close();
        auto spec = jobSpecForScript(py.fileName());
        QVERIFY(spec);
        QCOMPARE(spec->argv, (QStringList{QStringLiteral("python3"), QStringLiteral("my model.py")}));
        QCOMPARE(spec->name, QStringLiteral("my model"));
        QCOMPARE(spec->workdir, dir.path());
        // What the dialog shows must parse back to the same command.
        const auto again = parseJobSpec(toYaml(*spec), QStringLiteral("<dialog>"), QStringLiteral("/"));
        QVERIFY2(again, qPrintable(again ? QString() : again.error().message));
        QCOMPARE(again->argv, spec->argv);
        QCOMPARE(again->workdir, spec->workdir);

        QFile sh(dir.filePath(QStringLiteral("run.sh")));
        QVERIFY(sh.open(QIODevice::WriteOnly));
        sh.close();
        spec = jobSpecForScript(dir.path());
        QVERIFY(spec);
        QCOMPARE(spec->argv, (QStringList{QStringLiteral("bash"), QStringLiteral("run.sh")}));
        QCOMPARE(spec->name, QDir(dir.path()).dirName());

        QVERIFY(!jobSpecForScript(dir.filePath(QStringLiteral("nothing.txt"))));
    }

    void roundTrip()
    {
        const auto spec = parseJobSpecFile(test::sourcePath(QStringLiteral("resources/examples/digits/job.yaml")));
        QVERIFY(spec);
        const auto again = parseJobSpec(toYaml(*spec), QStringLiteral("<roundtrip>"), QStringLiteral("/"));
        QVERIFY2(again, qPrintable(again ? QString() : again.error().message));
        QCOMPARE(again->argv, spec->argv);
        QCOMPARE(again->params, spec->params);
        QCOMPARE(again->env, spec->env);
        QCOMPARE(again->tags, spec->tags);
        QCOMPARE(again->name, spec->name);
    }

    void metricFiles()
    {
        const QString yaml = QStringLiteral("command: [python3, train.py]\n"
                                            "metric_files:\n"
                                            "  - lightning_logs/*/metrics.csv\n"
                                            "  - 'runs/**/events.out.tfevents.*'\n"
                                            "  - out/trainer_state.json\n");
        const auto spec = parseJobSpec(yaml, QStringLiteral("job.yaml"), QStringLiteral("/tmp"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        const QStringList want{QStringLiteral("lightning_logs/*/metrics.csv"),
                QStringLiteral("runs/**/events.out.tfevents.*"), QStringLiteral("out/trainer_state.json")};
        QCOMPARE(spec->metricFiles, want);
        const auto again = parseJobSpec(toYaml(*spec), QStringLiteral("<roundtrip>"), QStringLiteral("/"));
        QVERIFY2(again, qPrintable(again ? QString() : again.error().message));
        QCOMPARE(again->metricFiles, want);
        // One glob as a plain string; none by default.
        const auto one = parseJobSpec(QStringLiteral("command: [ls]\nmetric_files: m.jsonl\n"),
                QStringLiteral("j.yaml"), QStringLiteral("/"));
        QVERIFY(one);
        QCOMPARE(one->metricFiles, QStringList{QStringLiteral("m.jsonl")});
        const auto none
                = parseJobSpec(QStringLiteral("command: [ls]\n"), QStringLiteral("j.yaml"), QStringLiteral("/"));
        QVERIFY(none);
        QVERIFY(none->metricFiles.isEmpty());
    }

    void paramOverrides()
    {
        const QString path = test::sourcePath(QStringLiteral("resources/examples/digits/job.yaml"));
        const auto spec = parseJobSpecFile(path, {{QStringLiteral("lr"), QStringLiteral("0.01")}});
        QVERIFY(spec);
        QCOMPARE(spec->argv.at(spec->argv.indexOf(QStringLiteral("--lr")) + 1), QStringLiteral("0.01"));
        QCOMPARE(spec->params.value(QStringLiteral("lr")), QStringLiteral("0.01"));
        QCOMPARE(spec->env.value(QStringLiteral("TRAINYARD_PARAM_LR")), QStringLiteral("0.01"));
        const auto bad = parseJobSpecFile(path, {{QStringLiteral("momentum"), QStringLiteral("0.9")}});
        QVERIFY(!bad);
        QCOMPARE(bad.error().message,
                path + QStringLiteral(": cannot set param 'momentum': the job spec has no such param"));
    }

    void sweeps()
    {
        const QString yaml = QStringLiteral("name: s\n"
                                            "command: [train, --lr, '{{lr}}', --bs, '{{batch_size}}']\n"
                                            "params: {lr: 0.1, epochs: 3}\n"
                                            "sweep:\n"
                                            "  lr: [0.001, 0.01]\n"
                                            "  batch_size: [32, 64, 128]\n"
                                            "max_concurrent: 2\n");
        const auto spec = parseJobSpec(yaml, QStringLiteral("s.yaml"), QStringLiteral("/"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        QCOMPARE(spec->sweep.value(QStringLiteral("batch_size")),
                (QStringList{QStringLiteral("32"), QStringLiteral("64"), QStringLiteral("128")}));
        QCOMPARE(spec->maxConcurrent, 2);
        QCOMPARE(spec->params.value(QStringLiteral("batch_size")), QStringLiteral("32")); // first value as the default
        const auto runs = expandSweep(*spec);
        QVERIFY(runs);
        QCOMPARE(runs->size(), 6);
        // Sorted names, the last (lr) varying fastest.
        QCOMPARE(runs->at(0).name, QStringLiteral("s[batch_size=32,lr=0.001]"));
        QCOMPARE(runs->at(1).name, QStringLiteral("s[batch_size=32,lr=0.01]"));
        QCOMPARE(runs->at(5).name, QStringLiteral("s[batch_size=128,lr=0.01]"));
        QCOMPARE(runs->at(5).argv,
                (QStringList{QStringLiteral("train"), QStringLiteral("--lr"), QStringLiteral("0.01"),
                        QStringLiteral("--bs"), QStringLiteral("128")}));
        QCOMPARE(runs->at(5).params.value(QStringLiteral("epochs")), QStringLiteral("3"));
        QCOMPARE(runs->at(5).env.value(QStringLiteral("TRAINYARD_PARAM_BATCH_SIZE")), QStringLiteral("128"));
        for (const JobSpec& r : *runs)
            QVERIFY(r.sweep.isEmpty());
        // Round trip through the YAML the dialog shows.
        const auto again = parseJobSpec(toYaml(*spec), QStringLiteral("<dialog>"), QStringLiteral("/"));
        QVERIFY2(again, qPrintable(again ? QString() : again.error().message));
        QCOMPARE(again->sweep, spec->sweep);
        QCOMPARE(again->maxConcurrent, 2);

        const auto noSweep
                = parseJobSpec(QStringLiteral("command: [ls]\n"), QStringLiteral("n.yaml"), QStringLiteral("/"));
        QCOMPARE(expandSweep(*noSweep)->size(), 1);

        auto bad = parseJobSpec(
                QStringLiteral("command: [ls]\nsweep: {lr: []}\n"), QStringLiteral("b.yaml"), QStringLiteral("/"));
        QVERIFY(!bad);
        QCOMPARE(bad.error().message, QStringLiteral("b.yaml:2:13: 'sweep.lr' needs at least one value"));
        bad = parseJobSpec(
                QStringLiteral("command: [ls]\nsweep: [0.1, 0.2]\n"), QStringLiteral("b.yaml"), QStringLiteral("/"));
        QVERIFY(!bad);
        QVERIFY(bad.error().message.startsWith(QStringLiteral("b.yaml:2:8: 'sweep' must be a mapping")));
        bad = parseJobSpec(
                QStringLiteral("command: [ls]\nmax_concurrent: 2\n"), QStringLiteral("b.yaml"), QStringLiteral("/"));
        QVERIFY(!bad);
        QCOMPARE(bad.error().message,
                QStringLiteral("b.yaml:2:17: 'max_concurrent' limits the runs of a 'sweep', and this spec has none"));
    }

    void sweepOfThreeNamesKeepsWrittenValueOrder()
    {
        // Names sorted (batch, lr, seed), the last varying fastest across two
        // carries; each name's values in the order written, not sorted.
        const QString yaml = QStringLiteral("name: t\n"
                                            "command: [train, '{{seed}}']\n"
                                            "params: {lr: 0.1, epochs: 3}\n"
                                            "sweep:\n"
                                            "  seed: [2, 1]\n"
                                            "  lr: [0.01, 0.001]\n"
                                            "  batch: [64, 32, 128]\n");
        const auto spec = parseJobSpec(yaml, QStringLiteral("t.yaml"), QStringLiteral("/"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        const auto runs = expandSweep(*spec);
        QVERIFY2(runs, qPrintable(runs ? QString() : runs.error().message));
        QCOMPARE(runs->size(), 12);
        QStringList names;
        for (const JobSpec& r : *runs)
            names << r.name;
        QCOMPARE(names.mid(0, 5),
                (QStringList{QStringLiteral("t[batch=64,lr=0.01,seed=2]"), QStringLiteral("t[batch=64,lr=0.01,seed=1]"),
                        QStringLiteral("t[batch=64,lr=0.001,seed=2]"), QStringLiteral("t[batch=64,lr=0.001,seed=1]"),
                        QStringLiteral("t[batch=32,lr=0.01,seed=2]")}));
        QCOMPARE(names.last(), QStringLiteral("t[batch=128,lr=0.001,seed=1]"));
        QCOMPARE(QSet<QString>(names.cbegin(), names.cend()).size(), 12);
        // The swept values are each run's params (the base lr replaced), the others kept.
        const JobSpec& r = runs->at(6); // batch=32, lr=0.001, seed=2
        QCOMPARE(r.params.value(QStringLiteral("batch")), QStringLiteral("32"));
        QCOMPARE(r.params.value(QStringLiteral("lr")), QStringLiteral("0.001"));
        QCOMPARE(r.params.value(QStringLiteral("seed")), QStringLiteral("2"));
        QCOMPARE(r.params.value(QStringLiteral("epochs")), QStringLiteral("3"));
        QCOMPARE(runs->at(7).argv, (QStringList{QStringLiteral("train"), QStringLiteral("1")}));
        // Deterministic: the same spec expands the same way again.
        const auto again = expandSweep(*spec);
        QVERIFY(again);
        for (qsizetype i = 0; i < runs->size(); ++i) {
            QCOMPARE(again->at(i).name, names[i]);
            QCOMPARE(again->at(i).params, runs->at(i).params);
        }
        // One name with one value: one run, named by it.
        const auto single = parseJobSpec(QStringLiteral("name: u\ncommand: [ls]\nsweep: {lr: [0.5]}\n"),
                QStringLiteral("u.yaml"), QStringLiteral("/"));
        QVERIFY(single);
        const auto one = expandSweep(*single);
        QVERIFY(one);
        QCOMPARE(one->size(), 1);
        QCOMPARE(one->front().name, QStringLiteral("u[lr=0.5]"));
    }

    void shellStringParamsAreQuoted()
    {
        const QString yaml
                = QStringLiteral("command: \"echo lr={{lr}} n={{n}}\"\nparams: {lr: '1; echo INJECTED', n: 5}\n");
        const auto spec = parseJobSpec(yaml, QStringLiteral("q.yaml"), QStringLiteral("/"));
        QVERIFY(spec);
        QCOMPARE(spec->argv.last(), QStringLiteral("echo lr='1; echo INJECTED' n='5'"));
        const auto quote = parseJobSpec(QStringLiteral("command: \"echo {{s}}\"\nparams: {s: \"it's\"}\n"),
                QStringLiteral("q.yaml"), QStringLiteral("/"));
        QVERIFY(quote);
        QCOMPARE(quote->argv.last(), QStringLiteral("echo 'it'\\''s'"));
        // A list command gets the value as one argument, as is.
        const auto list = parseJobSpec(QStringLiteral("command: [echo, '{{lr}}']\nparams: {lr: '1; x'}\n"),
                QStringLiteral("q.yaml"), QStringLiteral("/"));
        QVERIFY(list);
        QCOMPARE(list->argv.last(), QStringLiteral("1; x"));
    }

    void paramEnvNames()
    {
        const auto ok = parseJobSpec(QStringLiteral("command: [ls]\nparams: {model.depth: 3, warm-up: 2}\n"),
                QStringLiteral("p.yaml"), QStringLiteral("/"));
        QVERIFY(ok);
        QCOMPARE(ok->env.value(QStringLiteral("TRAINYARD_PARAM_MODEL_DEPTH")), QStringLiteral("3"));
        QCOMPARE(ok->env.value(QStringLiteral("TRAINYARD_PARAM_WARM_UP")), QStringLiteral("2"));
        const auto clash = parseJobSpec(QStringLiteral("command: [ls]\nparams: {lr: 1, LR: 2}\n"),
                QStringLiteral("p.yaml"), QStringLiteral("/"));
        QVERIFY(!clash);
        QCOMPARE(clash.error().message,
                QStringLiteral(
                        "p.yaml:2:9: params 'LR' and 'lr' would both be exported as TRAINYARD_PARAM_LR: rename one"));
    }

    void badFiles()
    {
        QTemporaryDir dir;
        QFile utf(dir.filePath(QStringLiteral("bad-utf8.yaml")));
        QVERIFY(utf.open(QIODevice::WriteOnly));
        utf.write("name: x\ncommand: [echo, \"ok \xff\xfe bad\"]\n");
        utf.close();
        auto spec = parseJobSpecFile(utf.fileName());
        QVERIFY(!spec);
        QCOMPARE(spec.error().message, utf.fileName() + QStringLiteral(":2:21: not valid UTF-8 (byte 0xff)"));

        QFile tabs(dir.filePath(QStringLiteral("tabs.yaml")));
        QVERIFY(tabs.open(QIODevice::WriteOnly));
        tabs.write("command: [ls]\nresources:\n\tgpus: 1\n");
        tabs.close();
        spec = parseJobSpecFile(tabs.fileName());
        QVERIFY(!spec);
        QVERIFY2(
                spec.error().message.contains(QStringLiteral("indented with a tab")), qPrintable(spec.error().message));

        // A device that never ends is refused by size, without reading it all.
        spec = parseJobSpecFile(QStringLiteral("/dev/zero"));
        QVERIFY(!spec);
        QCOMPARE(spec.error().message, QStringLiteral("/dev/zero: a job spec larger than 1 MiB is not a job spec"));
        spec = parseJobSpecFile(dir.path());
        QVERIFY(!spec);
        QCOMPARE(spec.error().message, dir.path() + QStringLiteral(": is a folder, not a job spec"));
    }

    void sizesAndDurations()
    {
        QCOMPARE(parseSizeMiB(u"40GiB"), std::optional<qint64>(40960));
        QCOMPARE(parseSizeMiB(u"512"), std::optional<qint64>(512));
        QCOMPARE(parseSizeMiB(u"1.5G"), std::optional<qint64>(1536));
        QCOMPARE(parseSizeMiB(u"2TB"), std::optional<qint64>(2 * 1024 * 1024));
        QCOMPARE(parseSizeMiB(u"x"), std::nullopt);
        QCOMPARE(parseDurationSec(u"90"), std::optional<qint64>(90));
        QCOMPARE(parseDurationSec(u"1h30m"), std::optional<qint64>(5400));
        QCOMPARE(parseDurationSec(u"1d"), std::optional<qint64>(86400));
        QCOMPARE(parseDurationSec(u"soon"), std::nullopt);
        QCOMPARE(parseDurationSec(u"1h30"), std::nullopt);
    }
};

QTEST_GUILESS_MAIN(TestJobSpec)
#include "TestJobSpec.moc"
