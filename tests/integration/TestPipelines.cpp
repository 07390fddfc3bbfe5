// Pipelines (issue #24) through real processes: the built trainyardctl and
// trainyardd, the real agent, and steps that are real runs.
#include "tests/support/TestSupport.h"
#include "core/store/ResultStore.h"
#include "core/store/RunNotice.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace ty;

class TestPipelines final : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;

    using Outcome = test::ProcessOutcome;

    QString dbPath() const { return m_dir->filePath(QStringLiteral("db/trainyard.db")); }

    Outcome ctl(const QStringList& args, int timeoutMs = 120000)
    {
        return test::runProcess(QStringLiteral(TRAINYARD_CTL_PATH),
                QStringList{QStringLiteral("--db"), dbPath()} + args,
                test::serviceEnvironment(m_dir->path(), QStringLiteral(TRAINYARDD_PATH)), timeoutMs);
    }

    QString writeFile(const QString& name, const QByteArray& content)
    {
        const QString path = m_dir->filePath(name);
        QDir().mkpath(QFileInfo(path).absolutePath());
        test::writeFile(path, content);
        return path;
    }

    static QJsonObject stepNamed(const QJsonObject& pipeline, const QString& name)
    {
        for (const QJsonValue& v : pipeline.value(QStringLiteral("steps")).toArray())
            if (v.toObject().value(QStringLiteral("name")).toString() == name)
                return v.toObject();
        return {};
    }

    // The running service's pid (0: none answers).
    qint64 servicePid()
    {
        const Outcome s = ctl({QStringLiteral("daemon"), QStringLiteral("status"), QStringLiteral("--json")});
        if (s.exitCode != 0)
            return 0;
        return QJsonDocument::fromJson(s.out).object().value(QStringLiteral("pid")).toInteger();
    }

    // `pipeline submit FILE --follow --json ARGS`: the pipeline as it ended
    // (its errors printed as a warning when it did not succeed).
    QJsonObject submitFollowed(const QString& file, const QStringList& extra = {})
    {
        const Outcome r = ctl(QStringList{QStringLiteral("pipeline"), QStringLiteral("submit"), file,
                                      QStringLiteral("--follow"), QStringLiteral("--json")}
                + extra);
        if (r.exitCode != 0)
            qWarning("%s", r.err.constData());
        return QJsonDocument::fromJson(r.out).object();
    }

    // The notices of the run of `step` in `pipeline`, joined with '|'.
    QString noticesOf(const QJsonObject& pipeline, const QString& step)
    {
        auto store = ResultStore::open(dbPath());
        QStringList texts;
        if (store)
            for (const RunNotice& n :
                    (*store)->notices(stepNamed(pipeline, step).value(QStringLiteral("run")).toInteger()))
                texts << n.text;
        return texts.join(u'|');
    }

    QJsonObject show(qint64 id)
    {
        const Outcome r = ctl(
                {QStringLiteral("pipeline"), QStringLiteral("show"), QString::number(id), QStringLiteral("--json")});
        return r.exitCode == 0 ? QJsonDocument::fromJson(r.out).object() : QJsonObject{};
    }

    static QString stateOf(const QJsonObject& pipeline, const QString& step)
    {
        return stepNamed(pipeline, step).value(QStringLiteral("state")).toString();
    }

    // For the message of a failed check: what ctl printed, the end of each
    // run's local console copy and of the service's log (read from the files:
    // a stuck service could not answer `logs`).
    QByteArray diagnostics(const Outcome& r)
    {
        QByteArray out = "trainyardctl exit " + QByteArray::number(r.exitCode) + "\nstderr:\n" + r.err + '\n';
        if (auto store = ResultStore::open(dbPath()))
            for (const RunRecord& run : (*store)->runs())
                out += QStringLiteral("run %1: %2 on %3 (%4%5)\n")
                               .arg(run.id)
                               .arg(runStateName(run.state), run.node, run.pendingReason, run.failureReason)
                               .toUtf8();
        const QDir runs(dbPath() + QStringLiteral(".runs"));
        for (const QString& id : runs.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            QFile console(runs.filePath(id + QStringLiteral("/console.log")));
            if (!console.open(QIODevice::ReadOnly))
                continue;
            console.seek(std::max<qint64>(0, console.size() - 3000));
            out += "--- run " + id.toUtf8() + " console (end) ---\n" + console.readAll() + '\n';
        }
        return out + test::serviceLogTail(m_dir->path());
    }

    QByteArray consoleOf(qint64 run)
    {
        const Outcome logs = ctl({QStringLiteral("logs"), QString::number(run)});
        return logs.out;
    }

private Q_SLOTS:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        QDir().mkpath(m_dir->filePath(QStringLiteral("db")));
        QDir().mkpath(m_dir->filePath(QStringLiteral("runtime")));
        QFile::setPermissions(
                m_dir->filePath(QStringLiteral("runtime")), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    }

    void cleanup()
    {
        ctl({QStringLiteral("daemon"), QStringLiteral("stop")}, 30000);
        m_dir.reset();
    }

    void outputsFanOutAndGatherThroughTheService()
    {
        writeFile(QStringLiteral("p/pipe.yaml"),
                "name: shards\n"
                "params: {base: '42', evaluate: 'false'}\n"
                "steps:\n"
                "  - name: prep\n"
                "    command: mkdir -p out && echo {{params.base}} > out/rows.txt && echo prepared\n"
                "    workdir: w\n"
                "    outputs: {params: {rows: out/rows.txt}}\n"
                "  - name: shard\n"
                "    depends: [prep]\n"
                "    for_each: {shard: ['1', '2']}\n"
                "    command: s={{item.shard}}; echo \"score=$((s * 10)) rows={{steps.prep.outputs.rows}}\"\n"
                "    workdir: w\n"
                "    outputs: {params: {score: {metric: score, aggregate: max}}}\n"
                "  - name: gather\n"
                "    command: [/bin/echo, 'scores:', '{{steps.shard.outputs.score}}']\n"
                "    workdir: w\n"
                "  - name: evaluate\n"
                "    depends: 'gather.succeeded'\n"
                "    when: params.evaluate\n"
                "    command: echo never\n"
                "    workdir: w\n");
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/w")));
        const Outcome r = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject p = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        QCOMPARE(p.value(QStringLiteral("steps")).toArray().size(), 5);
        const QJsonObject prep = stepNamed(p, QStringLiteral("prep"));
        QCOMPARE(prep.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        QCOMPARE(prep.value(QStringLiteral("outputs")).toObject().value(QStringLiteral("outputs.rows")).toString(),
                QStringLiteral("42"));
        // Each shard got its item and prep's output, and its metric became its output.
        const QJsonObject s2 = stepNamed(p, QStringLiteral("shard[shard=2]"));
        QCOMPARE(s2.value(QStringLiteral("outputs")).toObject().value(QStringLiteral("outputs.score")).toString(),
                QStringLiteral("20"));
        QVERIFY(consoleOf(s2.value(QStringLiteral("run")).toInteger()).contains("score=20 rows=42"));
        // gather received the fan-out's outputs as a list, in item order.
        const QJsonObject gather = stepNamed(p, QStringLiteral("gather"));
        QCOMPARE(gather.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        QVERIFY2(consoleOf(gather.value(QStringLiteral("run")).toInteger()).contains("scores: [\"10\",\"20\"]"),
                consoleOf(gather.value(QStringLiteral("run")).toInteger()).constData());
        const QJsonObject eval = stepNamed(p, QStringLiteral("evaluate"));
        QCOMPARE(eval.value(QStringLiteral("state")).toString(), QStringLiteral("skipped"));
        QCOMPARE(eval.value(QStringLiteral("run")).toInteger(), 0);
        QCOMPARE(eval.value(QStringLiteral("reason")).toString(),
                QStringLiteral("not run: when 'params.evaluate' is false"));

        // The runs are ordinary runs, named by their pipeline and members of its group.
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        const auto run = (*store)->run(gather.value(QStringLiteral("run")).toInteger());
        QVERIFY(run);
        QCOMPARE(run->name, QStringLiteral("shards/gather"));
        QCOMPARE(run->tags, QStringList());
        const auto member = membershipOf(*run, RunGroupKind::Pipeline);
        QVERIFY(member);
        QCOMPARE(member->role, QStringLiteral("gather"));
        const auto group = (*store)->group(member->group);
        QVERIFY(group);
        QCOMPARE(group->name, QStringLiteral("shards"));
        QCOMPARE(group->runs, 4);
        QCOMPARE((*store)->runs().size(), 4);
        // prep ran before the shards started (depends), which ran before gather.
        const auto prepRun = (*store)->run(prep.value(QStringLiteral("run")).toInteger());
        const auto shardRun = (*store)->run(s2.value(QStringLiteral("run")).toInteger());
        QVERIFY(prepRun->finishedAt <= shardRun->startedAt);
        QVERIFY(shardRun->finishedAt <= run->startedAt);

        // ls and show ask the same service.
        const Outcome ls = ctl({QStringLiteral("pipeline"), QStringLiteral("ls")});
        QCOMPARE(ls.exitCode, 0);
        QVERIFY2(ls.out.contains("shards\tsucceeded"), ls.out.constData());
        const Outcome show = ctl({QStringLiteral("pipeline"), QStringLiteral("show"), QStringLiteral("1")});
        QVERIFY2(show.out.contains("evaluate") && show.out.contains("skipped"), show.out.constData());
        QCOMPARE(ctl({QStringLiteral("pipeline"), QStringLiteral("show"), QStringLiteral("9")}).exitCode, 4);
    }

    void failFastSkipsDependentsAndEndsFailed()
    {
        writeFile(QStringLiteral("p/fail.yaml"),
                "steps:\n"
                "  - {name: a, command: 'echo boom; exit 3'}\n"
                "  - {name: slow, command: 'sleep 1; echo slow done'}\n"
                "  - {name: b, command: 'echo never', depends: [a]}\n"
                "  - {name: after-slow, command: 'echo never either', depends: [slow]}\n");
        const Outcome r = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/fail.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 1);
        const QJsonObject p = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(stepNamed(p, QStringLiteral("a")).value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QVERIFY(stepNamed(p, QStringLiteral("a"))
                        .value(QStringLiteral("reason"))
                        .toString()
                        .contains(QStringLiteral("exit")));
        QCOMPARE(stepNamed(p, QStringLiteral("slow")).value(QStringLiteral("state")).toString(),
                QStringLiteral("succeeded"));
        QCOMPARE(stepNamed(p, QStringLiteral("b")).value(QStringLiteral("reason")).toString(),
                QStringLiteral("not run: step 'a' failed"));
        QCOMPARE(stepNamed(p, QStringLiteral("after-slow")).value(QStringLiteral("reason")).toString(),
                QStringLiteral("not run: step 'a' failed and fail_fast is on"));
        QVERIFY2(r.err.contains("a: failed"), r.err.constData());

        // `trainyardctl submit` knows a pipeline from a job spec (its top-level steps:).
        const Outcome plain = ctl(
                {QStringLiteral("submit"), m_dir->filePath(QStringLiteral("p/fail.yaml")), QStringLiteral("--follow")});
        QCOMPARE(plain.exitCode, 1);
        QVERIFY2(plain.err.contains("submitted pipeline 2") && plain.err.contains("a: failed"), plain.err.constData());
        QVERIFY2(plain.out.contains("pipeline 2 pipeline: failed"), plain.out.constData());
    }

    void pipelineOutlivesItsService()
    {
        // `wait` runs until a file appears. The service is SIGKILLed while
        // it runs; the file appears with no service (the run ends on its
        // node, followed by nobody); a new service takes the pipeline up,
        // collects wait's output and runs `after`.
        const QString go = m_dir->filePath(QStringLiteral("go"));
        writeFile(QStringLiteral("p/pipe.yaml"),
                QStringLiteral("name: outlives\n"
                               "steps:\n"
                               "  - {name: first, command: 'mkdir -p out && echo 7 > out/n.txt', workdir: w,\n"
                               "     outputs: {params: {n: out/n.txt}}}\n"
                               "  - name: wait\n"
                               "    depends: [first]\n"
                               "    command: 'n={{steps.first.outputs.n}}; while [ ! -e %1 ]; do sleep 0.1; done; "
                               "echo $(( n * 6 )) > out/m.txt'\n"
                               "    workdir: w\n"
                               "    outputs: {params: {m: out/m.txt}}\n"
                               "  - {name: after, command: 'echo got {{steps.wait.outputs.m}}', workdir: w}\n")
                        .arg(go)
                        .toUtf8());
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/w")));
        const Outcome r = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const qint64 id = QJsonDocument::fromJson(r.out).object().value(QStringLiteral("id")).toInteger();
        QCOMPARE(id, 1);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(show(id), QStringLiteral("wait")), QStringLiteral("running"), 30000);
        const qint64 waitRun = stepNamed(show(id), QStringLiteral("wait")).value(QStringLiteral("run")).toInteger();
        QVERIFY(waitRun > 0);
        const qint64 pid = servicePid();
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
        QTRY_VERIFY_WITH_TIMEOUT(::kill(pid_t(pid), 0) != 0, 10000);
        test::writeFile(go, "");
        QTest::qWait(1500); // `wait` ends with nobody following it

        // The next command starts a new service, which takes the pipeline up.
        const Outcome follow = ctl({QStringLiteral("pipeline"), QStringLiteral("ls"), QStringLiteral("--json")});
        QVERIFY2(follow.exitCode == 0, follow.err.constData());
        QVERIFY(servicePid() != pid);
        QTRY_COMPARE_WITH_TIMEOUT(
                show(id).value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"), 60000);
        const QJsonObject p = show(id);
        QCOMPARE(stepNamed(p, QStringLiteral("wait")).value(QStringLiteral("run")).toInteger(), waitRun);
        QCOMPARE(stepNamed(p, QStringLiteral("wait"))
                         .value(QStringLiteral("outputs"))
                         .toObject()
                         .value(QStringLiteral("outputs.m"))
                         .toString(),
                QStringLiteral("42"));
        QVERIFY(consoleOf(stepNamed(p, QStringLiteral("after")).value(QStringLiteral("run")).toInteger())
                        .contains("got 42"));
        // Ids go on after the stored ones.
        writeFile(QStringLiteral("p/one.yaml"), "steps:\n  - {name: x, command: 'true'}\n");
        const Outcome next = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/one.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        QVERIFY2(next.exitCode == 0, next.err.constData());
        QCOMPARE(QJsonDocument::fromJson(next.out).object().value(QStringLiteral("id")).toInteger(), 2);
        const Outcome ls = ctl({QStringLiteral("pipeline"), QStringLiteral("ls"), QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(ls.out).array().size(), 2);
    }

    void resumeReusesWhatSucceeded()
    {
        // prepare counts its runs in a file; train fails while `broken`
        // exists. The resumed pipeline reuses prepare (and its output) and
        // runs train and evaluate again.
        const QString broken = writeFile(QStringLiteral("broken"), "");
        const QString count = m_dir->filePath(QStringLiteral("prepare-runs"));
        writeFile(QStringLiteral("p/pipe.yaml"),
                QStringLiteral(
                        "name: resumable\n"
                        "steps:\n"
                        "  - {name: prepare, command: 'echo x >> %1; mkdir -p out && echo 5 > out/rows.txt',\n"
                        "     workdir: w, outputs: {params: {rows: out/rows.txt}}}\n"
                        "  - {name: train, command: 'test ! -e %2 && echo rows={{steps.prepare.outputs.rows}}',\n"
                        "     workdir: w}\n"
                        "  - {name: evaluate, depends: [train], command: 'echo evaluated', workdir: w}\n")
                        .arg(count, broken)
                        .toUtf8());
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/w")));
        const Outcome first = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        QCOMPARE(first.exitCode, 1);
        const QJsonObject failed = QJsonDocument::fromJson(first.out).object();
        QCOMPARE(failed.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(stateOf(failed, QStringLiteral("evaluate")), QStringLiteral("skipped"));
        const qint64 prepareRun = stepNamed(failed, QStringLiteral("prepare")).value(QStringLiteral("run")).toInteger();

        QFile::remove(broken);
        const Outcome again = ctl({QStringLiteral("pipeline"), QStringLiteral("resume"), QStringLiteral("1"),
                QStringLiteral("--follow"), QStringLiteral("--json")});
        QVERIFY2(again.exitCode == 0, again.err.constData());
        const QJsonObject p = QJsonDocument::fromJson(again.out).object();
        QCOMPARE(p.value(QStringLiteral("id")).toInteger(), 2);
        QCOMPARE(p.value(QStringLiteral("resumed_from")).toInteger(), 1);
        QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        const QJsonObject prepare = stepNamed(p, QStringLiteral("prepare"));
        QCOMPARE(prepare.value(QStringLiteral("state")).toString(), QStringLiteral("cached"));
        QCOMPARE(prepare.value(QStringLiteral("run")).toInteger(), prepareRun);
        QCOMPARE(prepare.value(QStringLiteral("reason")).toString(),
                QStringLiteral("reused from pipeline 1 (run %1)").arg(prepareRun));
        QCOMPARE(stateOf(p, QStringLiteral("train")), QStringLiteral("succeeded"));
        QVERIFY(consoleOf(stepNamed(p, QStringLiteral("train")).value(QStringLiteral("run")).toInteger())
                        .contains("rows=5"));
        QCOMPARE(stateOf(p, QStringLiteral("evaluate")), QStringLiteral("succeeded"));
        QCOMPARE(test::readFile(count), QByteArray("x\n")); // prepare ran once
        QVERIFY2(again.err.contains("pipeline 2 resumes pipeline 1"), again.err.constData());

        // Only a failed or cancelled pipeline is resumed.
        const Outcome succeeded = ctl({QStringLiteral("pipeline"), QStringLiteral("resume"), QStringLiteral("2")});
        QCOMPARE(succeeded.exitCode, 2);
        QVERIFY2(succeeded.err.contains("pipeline 2 succeeded: only a failed or cancelled pipeline is resumed"),
                succeeded.err.constData());
        const Outcome unknown = ctl({QStringLiteral("pipeline"), QStringLiteral("resume"), QStringLiteral("9")});
        QVERIFY2(unknown.err.contains("no pipeline 9"), unknown.err.constData());
        QVERIFY(unknown.exitCode != 0 && unknown.exitCode != succeeded.exitCode);
    }

    void identicalStepsAtOnceRunOnce()
    {
        // Two pipelines whose memoized `slow` step has the same key, the
        // second submitted while the first's runs: it runs once, and the
        // second waits for it and reuses its result (cache_serialize).
        const QString count = m_dir->filePath(QStringLiteral("slow-runs"));
        writeFile(QStringLiteral("p/pipe.yaml"),
                QStringLiteral(
                        "name: serial\n"
                        "memoize: {max_age: 1h}\n"
                        "steps:\n"
                        "  - {name: slow, command: 'echo x >> %1; sleep 2; mkdir -p out && echo 9 > out/v.txt',\n"
                        "     workdir: w, outputs: {params: {v: out/v.txt}}}\n"
                        "  - {name: use, command: 'echo v={{steps.slow.outputs.v}}', workdir: w, always_run: true}\n")
                        .arg(count)
                        .toUtf8());
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/w")));
        const Outcome a = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--json")});
        QVERIFY2(a.exitCode == 0, a.err.constData());
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(show(1), QStringLiteral("slow")), QStringLiteral("running"), 30000);
        const Outcome b = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        QVERIFY2(b.exitCode == 0, b.err.constData());
        QVERIFY2(b.err.contains("waiting for run"), b.err.constData());
        const QJsonObject second = QJsonDocument::fromJson(b.out).object();
        QCOMPARE(second.value(QStringLiteral("id")).toInteger(), 2);
        QCOMPARE(stateOf(second, QStringLiteral("slow")), QStringLiteral("cached"));
        QCOMPARE(stateOf(second, QStringLiteral("use")), QStringLiteral("succeeded"));
        QVERIFY(consoleOf(stepNamed(second, QStringLiteral("use")).value(QStringLiteral("run")).toInteger())
                        .contains("v=9"));
        QTRY_COMPARE_WITH_TIMEOUT(
                show(1).value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"), 30000);
        QCOMPARE(test::readFile(count), QByteArray("x\n")); // slow ran once
        const qint64 slowRun = stepNamed(show(1), QStringLiteral("slow")).value(QStringLiteral("run")).toInteger();
        QVERIFY2(stepNamed(second, QStringLiteral("slow"))
                         .value(QStringLiteral("reason"))
                         .toString()
                         .startsWith(QStringLiteral("reused run %1").arg(slowRun)),
                qPrintable(stepNamed(second, QStringLiteral("slow")).value(QStringLiteral("reason")).toString()));
    }

    void declaredInputOutsideTheWorkdirIsInTheKey()
    {
        // A dataset outside the step's workdir, declared in `inputs`: one
        // changed byte under the same name and size is a miss naming it
        // (kfp PR#12751 keyed on the name); a missing one runs the step.
        const QString data = writeFile(QStringLiteral("data/d.bin"), QByteArray(4096, 'a'));
        writeFile(QStringLiteral("p/pipe.yaml"),
                "name: inputs\n"
                "steps:\n"
                "  - {name: train, command: 'echo trained', workdir: w, inputs: [../../data/d.bin],\n"
                "     memoize: {max_age: 1h}}\n");
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/w")));
        const auto submit = [&] { return submitFollowed(m_dir->filePath(QStringLiteral("p/pipe.yaml"))); };
        const auto noticesOf = [&](const QJsonObject& p) { return this->noticesOf(p, QStringLiteral("train")); };
        QCOMPARE(stateOf(submit(), QStringLiteral("train")), QStringLiteral("succeeded"));
        QCOMPARE(stateOf(submit(), QStringLiteral("train")), QStringLiteral("cached"));
        QByteArray bytes(4096, 'a');
        bytes[2048] = 'b';
        test::writeFile(data, bytes);
        const QJsonObject changed = submit();
        QCOMPARE(stateOf(changed, QStringLiteral("train")), QStringLiteral("succeeded"));
        QVERIFY2(noticesOf(changed).contains(QStringLiteral("ran because: input ../../data/d.bin changed")),
                qPrintable(noticesOf(changed)));
        QCOMPARE(stateOf(submit(), QStringLiteral("train")), QStringLiteral("cached"));
        QFile::remove(data);
        const QJsonObject missing = submit();
        QCOMPARE(stateOf(missing, QStringLiteral("train")), QStringLiteral("succeeded"));
        QVERIFY2(noticesOf(missing).contains(QStringLiteral("memoization: no key")), qPrintable(noticesOf(missing)));
        QVERIFY2(noticesOf(missing).contains(QStringLiteral("d.bin: no such file or folder")),
                qPrintable(noticesOf(missing)));
    }

    void memoKeysAreHashedOffTheServiceThread()
    {
        // A memoized step's workdir is hashed on the service's hashing
        // thread: pipeline_submit is answered at once, the step waiting
        // ("computing its memo key"), where the service used to hash the
        // whole tree before it answered anyone (seconds for 10,000 files).
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/big/src")));
        const QByteArray block(64 * 1024, 'x');
        for (int i = 0; i < 400; ++i)
            test::writeFile(m_dir->filePath(QStringLiteral("p/big/src/f%1.bin").arg(i)), block + QByteArray::number(i));
        writeFile(QStringLiteral("p/pipe.yaml"),
                "name: hashing\n"
                "steps:\n"
                "  - {name: s, command: 'echo done', workdir: big, memoize: {max_age: 1h}}\n");
        const Outcome r = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject submitted = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(stateOf(submitted, QStringLiteral("s")), QStringLiteral("waiting"));
        QCOMPARE(stepNamed(submitted, QStringLiteral("s")).value(QStringLiteral("reason")).toString(),
                QStringLiteral("computing its memo key"));
        QTRY_COMPARE_WITH_TIMEOUT(
                show(1).value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"), 60000);
        // The key was computed all the same: the same step again is a hit,
        // and one changed file a miss that names it.
        const Outcome again = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        QCOMPARE(stateOf(QJsonDocument::fromJson(again.out).object(), QStringLiteral("s")), QStringLiteral("cached"));
        test::writeFile(m_dir->filePath(QStringLiteral("p/big/src/f7.bin")), block + "changed");
        const Outcome changed = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        const QJsonObject p3 = QJsonDocument::fromJson(changed.out).object();
        QCOMPARE(stateOf(p3, QStringLiteral("s")), QStringLiteral("succeeded"));
        QVERIFY2(noticesOf(p3, QStringLiteral("s")).contains(QStringLiteral("src/f7.bin changed")),
                qPrintable(noticesOf(p3, QStringLiteral("s"))));
    }

    void sweepMakesOnePipelinePerValueSharingWhatDoesNotChange()
    {
        // A sweep over lr: two pipelines; `prep` does not use lr, so its key
        // is the same in both and it runs once (the other waits, then hits).
        const QString count = m_dir->filePath(QStringLiteral("prep-runs"));
        writeFile(QStringLiteral("p/pipe.yaml"),
                QStringLiteral("name: sw\n"
                               "params: {lr: '0.1'}\n"
                               "sweep: {lr: ['0.1', '0.01']}\n"
                               "memoize: {max_age: 1h}\n"
                               "steps:\n"
                               "  - {name: prep, command: 'echo x >> %1; sleep 1', workdir: w}\n"
                               "  - {name: train, depends: [prep], command: 'echo lr={{params.lr}}', workdir: w}\n")
                        .arg(count)
                        .toUtf8());
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/w")));
        const Outcome r = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/pipe.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonArray all = QJsonDocument::fromJson(r.out).array();
        QCOMPARE(all.size(), 2);
        QCOMPARE(all.at(0).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("sw[lr=0.1]"));
        QCOMPARE(all.at(1).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("sw[lr=0.01]"));
        QStringList trained;
        for (const QJsonValue& v : all) {
            QCOMPARE(v.toObject().value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
            trained << QString::fromUtf8(
                    consoleOf(stepNamed(v.toObject(), QStringLiteral("train")).value(QStringLiteral("run")).toInteger())
                            .trimmed());
        }
        QCOMPARE(trained, (QStringList{QStringLiteral("lr=0.1"), QStringLiteral("lr=0.01")}));
        QCOMPARE(test::readFile(count), QByteArray("x\n")); // prep ran once for both
        // The sweep is a run group (1) of which the two pipelines (2, 3) are parts.
        QVERIFY2(r.err.contains("submitted pipeline 2 (sw[lr=0.1])") && r.err.contains("submitted pipeline 3"),
                r.err.constData());
        const Outcome sweep
                = ctl({QStringLiteral("group"), QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--json")});
        QVERIFY2(sweep.exitCode == 0, sweep.err.constData());
        const QJsonObject g = QJsonDocument::fromJson(sweep.out).object();
        QCOMPARE(g.value(QStringLiteral("kind")).toString(), QStringLiteral("sweep"));
        QCOMPARE(g.value(QStringLiteral("name")).toString(), QStringLiteral("sw"));
        QCOMPARE(g.value(QStringLiteral("runs")).toInt(), 0);
        const QJsonArray parts = g.value(QStringLiteral("groups")).toArray();
        QCOMPARE(parts.size(), 2);
        QCOMPARE(parts.at(0).toObject().value(QStringLiteral("id")).toInteger(),
                all.at(0).toObject().value(QStringLiteral("id")).toInteger());
        QCOMPARE(parts.at(1).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("sw[lr=0.01]"));
        QCOMPARE(parts.at(1).toObject().value(QStringLiteral("kind")).toString(), QStringLiteral("pipeline"));
        QCOMPARE(parts.at(1).toObject().value(QStringLiteral("parent")).toInteger(), 1);
        // A pipeline's group holds the runs it made, in step order: the
        // first both, the second only train (its prep was a cache hit).
        const auto show = [&](const QJsonValue& part) {
            const Outcome o = ctl({QStringLiteral("group"), QStringLiteral("show"),
                    QString::number(part.toObject().value(QStringLiteral("id")).toInteger())});
            return QString::fromUtf8(o.out);
        };
        const QString first = show(parts.at(0));
        QVERIFY2(QRegularExpression(QStringLiteral("\\n\\s*\\d+  prep\\s+succeeded  sw\\[lr=0\\.1\\]/prep\\n"
                                                   "\\s*\\d+  train\\s+succeeded  sw\\[lr=0\\.1\\]/train\\n$"))
                         .match(first)
                         .hasMatch(),
                qPrintable(first));
        const QString second = show(parts.at(1));
        QVERIFY2(!second.contains(QStringLiteral("prep")) && second.contains(QStringLiteral("sw[lr=0.01]/train")),
                qPrintable(second));
    }

    // Issue #25: a step with `retry:` that fails is retried in place; the
    // pipeline follows its next attempt instead of failing, and the step's
    // run is the attempt that succeeded (both in the pipeline's group).
    void stepWithRetryIsRetriedInPlace()
    {
        const QString marker = m_dir->filePath(QStringLiteral("flaky-once"));
        writeFile(QStringLiteral("p/retry.yaml"),
                QStringLiteral("name: rp\n"
                               "steps:\n"
                               "  - {name: flaky, command: 'test -f %1 || { touch %1; exit 9; }', workdir: w,\n"
                               "     retry: {limit: 1, backoff: {duration: 1s}}}\n"
                               "  - {name: after, depends: [flaky], command: 'echo ok', workdir: w}\n")
                        .arg(marker)
                        .toUtf8());
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/w")));
        const Outcome r = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/retry.yaml")), QStringLiteral("--follow"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject p = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        QCOMPARE(stateOf(p, QStringLiteral("flaky")), QStringLiteral("succeeded"));
        QCOMPARE(stateOf(p, QStringLiteral("after")), QStringLiteral("succeeded"));
        const RunId second = stepNamed(p, QStringLiteral("flaky")).value(QStringLiteral("run")).toInteger();
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        const RunRecord attempt = *(*store)->run(second);
        QCOMPARE(membershipOf(attempt, RunGroupKind::Attempts)->position, 2);
        QCOMPARE(membershipOf(attempt, RunGroupKind::Pipeline)->role, QStringLiteral("flaky"));
        const auto attempts = (*store)->groupMembers(groupIdOf(attempt, RunGroupKind::Attempts));
        QCOMPARE(attempts.size(), 2);
        const RunRecord first = *(*store)->run(attempts[0].first);
        QCOMPARE(first.exitCode, std::optional<int>(9));
        QCOMPARE(membershipOf(first, RunGroupKind::Pipeline)->group, p.value(QStringLiteral("id")).toInteger());
    }

    // Issue #25: a service dies between recording a step run's failure and
    // queuing its retry. The next service's pipeline follows the retry the
    // next service makes (before, it took the pipeline up with no
    // RetryRunner yet: the step failed, and the attempt queued a moment later
    // ran with nobody following it).
    void stepThatFailedWithNoServiceIsRetriedAndFollowed()
    {
        const QString go = m_dir->filePath(QStringLiteral("go"));
        const QString marker = m_dir->filePath(QStringLiteral("failed-once"));
        writeFile(QStringLiteral("p/retry-restart.yaml"),
                QStringLiteral(
                        "name: rr\n"
                        "steps:\n"
                        "  - name: flaky\n"
                        "    command: 'while [ ! -e %1 ]; do sleep 0.1; done; test -f %2 || { touch %2; exit 9; }'\n"
                        "    workdir: w\n"
                        "    retry: {limit: 1, backoff: {duration: 1s}}\n"
                        "  - {name: after, depends: [flaky], command: 'echo ok', workdir: w}\n")
                        .arg(go, marker)
                        .toUtf8());
        QDir().mkpath(m_dir->filePath(QStringLiteral("p/w")));
        const Outcome r = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"),
                m_dir->filePath(QStringLiteral("p/retry-restart.yaml")), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const qint64 id = QJsonDocument::fromJson(r.out).object().value(QStringLiteral("id")).toInteger();
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(show(id), QStringLiteral("flaky")), QStringLiteral("running"), 30000);
        const qint64 firstRun = stepNamed(show(id), QStringLiteral("flaky")).value(QStringLiteral("run")).toInteger();
        const qint64 pid = servicePid();
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
        QTRY_VERIFY_WITH_TIMEOUT(::kill(pid_t(pid), 0) != 0, 10000);
        test::writeFile(go, "");
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(marker), 10000);
        QTest::qWait(1500); // flaky's first attempt ends (exit 9) with nobody following it
        {
            // What a service that died right after recording the end (before
            // its retry was queued: milliseconds, or while the node's
            // checkpoints were listed) leaves in the database.
            auto died = ResultStore::open(dbPath());
            QVERIFY(died);
            RunRecord ended = *(*died)->run(firstRun);
            QCOMPARE(ended.state, RunState::Running);
            ended.state = RunState::Failed;
            ended.exitCode = 9;
            ended.failureKind = FailureKind::ExitCode;
            ended.failureReason = QStringLiteral("exit code 9");
            ended.finishedAt = QDateTime::currentDateTimeUtc();
            (*died)->updateRun(ended);
            QVERIFY((*died)->flush());
        }

        const Outcome ls = ctl({QStringLiteral("pipeline"), QStringLiteral("ls"), QStringLiteral("--json")});
        QVERIFY2(ls.exitCode == 0, ls.err.constData());
        QTRY_COMPARE_WITH_TIMEOUT(
                show(id).value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"), 60000);
        const QJsonObject p = show(id);
        QCOMPARE(stateOf(p, QStringLiteral("after")), QStringLiteral("succeeded"));
        const RunId second = stepNamed(p, QStringLiteral("flaky")).value(QStringLiteral("run")).toInteger();
        QVERIFY(second != firstRun);
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        const RunRecord attempt = *(*store)->run(second);
        QCOMPARE(attempt.state, RunState::Succeeded);
        const auto attempts = (*store)->groupMembers(groupIdOf(attempt, RunGroupKind::Attempts));
        QCOMPARE(attempts.size(), 2); // one retry, the one the pipeline followed
        QCOMPARE(attempts[0].first, firstRun);
        QCOMPARE((*store)->run(firstRun)->exitCode, std::optional<int>(9));
        for (const RunRecord& run : (*store)->runs())
            QVERIFY2(isTerminal(run.state),
                    qPrintable(QStringLiteral("run %1 is %2").arg(run.id).arg(runStateName(run.state))));
    }

    void badPipelineIsRefusedSayingWhere()
    {
        const QString path = writeFile(QStringLiteral("p/bad.yaml"),
                "steps:\n"
                "  - {name: a, command: x, depends: [c]}\n"
                "  - {name: c, command: x, depends: [a]}\n");
        const Outcome r = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"), path});
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.contains(QByteArray(path.toUtf8() + ":2:5: the steps form a cycle: a -> c -> a")),
                r.err.constData());
        // Nothing was submitted.
        if (QFile::exists(dbPath())) {
            auto store = ResultStore::open(dbPath());
            QVERIFY(store);
            QCOMPARE((*store)->runs().size(), 0);
        }
    }

    void cacheIsKeptWithinItsPolicy()
    {
        // The policy: defaults shown, bad values refused, a bad file named.
        Outcome o = ctl({QStringLiteral("cache"), QStringLiteral("policy")});
        QCOMPARE(o.exitCode, 0);
        QCOMPARE(o.out, QByteArray("max_age  90d\nmax_size 50G\n"));
        o = ctl({QStringLiteral("cache"), QStringLiteral("policy"), QStringLiteral("--max-size"),
                QStringLiteral("lots")});
        QVERIFY2(o.exitCode != 0 && o.err.contains("--max-size needs a size"), o.err.constData());
        test::writeFile(dbPath() + QStringLiteral(".cache.json"), "{\"max_age\": \"soon\"}");
        o = ctl({QStringLiteral("cache"), QStringLiteral("policy")});
        QVERIFY2(o.exitCode != 0 && o.err.contains(".cache.json: 'max_age' must be a duration"), o.err.constData());
        o = ctl({QStringLiteral("cache"), QStringLiteral("policy"), QStringLiteral("--max-age"), QStringLiteral("off"),
                QStringLiteral("--max-size"), QStringLiteral("1M")});
        QVERIFY2(o.exitCode != 0, o.out.constData()); // the file stays as it is until it is readable
        QFile::remove(dbPath() + QStringLiteral(".cache.json"));
        o = ctl({QStringLiteral("cache"), QStringLiteral("policy"), QStringLiteral("--max-age"), QStringLiteral("off"),
                QStringLiteral("--max-size"), QStringLiteral("1M")});
        QCOMPARE(o.exitCode, 0);
        QCOMPARE(o.out, QByteArray("max_age  off\nmax_size 1M\n"));

        // Two memoized steps of 600,000 bytes each: over 1 MiB together, so the
        // service evicts the older entry as soon as the newer is written.
        writeFile(QStringLiteral("c/pipe.yaml"),
                "name: sized\n"
                "memoize: {max_age: 1d}\n"
                "steps:\n"
                "  - name: a\n"
                "    command: [/bin/sh, -c, 'head -c 600000 /dev/zero > a.bin']\n"
                "    artifacts: [a.bin]\n"
                "  - name: b\n"
                "    depends: [a]\n"
                "    command: [/bin/sh, -c, 'head -c 600000 /dev/zero > b.bin']\n"
                "    artifacts: [b.bin]\n");
        const QJsonObject p = submitFollowed(m_dir->filePath(QStringLiteral("c/pipe.yaml")));
        QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        const auto entries = [&] {
            const Outcome ls = ctl({QStringLiteral("cache"), QStringLiteral("ls"), QStringLiteral("--json")});
            QStringList steps;
            for (const QJsonValue& e : QJsonDocument::fromJson(ls.out).array())
                steps << e.toObject().value(QStringLiteral("step")).toString();
            return steps;
        };
        QCOMPARE(entries(), QStringList{QStringLiteral("b")});

        // By age, at the service's start: entries made over a second ago go.
        o = ctl({QStringLiteral("cache"), QStringLiteral("policy"), QStringLiteral("--max-age"), QStringLiteral("1s")});
        QCOMPARE(o.exitCode, 0);
        QTest::qWait(1100);
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("stop")}).exitCode, 0);
        QCOMPARE(ctl({QStringLiteral("daemon"), QStringLiteral("start")}).exitCode, 0);
        QTRY_COMPARE_WITH_TIMEOUT(entries(), QStringList(), 10000);
    }

    void memoizedStepsAreReusedExplainedAndChecked()
    {
        const QString dir = m_dir->filePath(QStringLiteral("m"));
        writeFile(QStringLiteral("m/make.sh"), "mkdir -p out && echo \"$1\" > out/result.txt && echo made\n");
        writeFile(QStringLiteral("m/pipe.yaml"),
                "name: memo\n"
                "params: {lr: '0.01'}\n"
                "memoize: {max_age: 1h}\n"
                "steps:\n"
                "  - name: make\n"
                "    command: [/bin/sh, make.sh, '{{params.lr}}']\n"
                "    artifacts: [out/result.txt]\n"
                "    outputs: {params: {result: out/result.txt}}\n"
                "  - name: use\n"
                "    depends: [make]\n"
                "    command: 'echo using {{steps.make.outputs.result}}'\n"
                "    env: {LOG_LEVEL: info}\n"
                "    memoize: {ignore: [LOG_LEVEL]}\n");
        const QString pipe = dir + QStringLiteral("/pipe.yaml");
        const auto submit = [&](const QStringList& extra) { return submitFollowed(pipe, extra); };
        const auto state = [&](const QJsonObject& p, const char* step) {
            return stepNamed(p, QLatin1String(step)).value(QStringLiteral("state")).toString();
        };
        const auto noticesOf
                = [&](const QJsonObject& p, const char* step) { return this->noticesOf(p, QLatin1String(step)); };

        QJsonObject p = submit({});
        QCOMPARE(state(p, "make"), QStringLiteral("succeeded"));
        QCOMPARE(state(p, "use"), QStringLiteral("succeeded"));
        QVERIFY2(noticesOf(p, "make").contains(QStringLiteral("ran because: no earlier entry for step make")),
                qPrintable(noticesOf(p, "make")));
        const qint64 makeRun = stepNamed(p, "make").value(QStringLiteral("run")).toInteger();

        // Unchanged: both reused, no run made, the output param as recorded.
        p = submit({});
        QCOMPARE(state(p, "make"), QStringLiteral("cached"));
        QVERIFY2(state(p, "use") == QStringLiteral("cached"), qPrintable(noticesOf(p, "use")));
        QCOMPARE(stepNamed(p, "make")
                         .value(QStringLiteral("outputs"))
                         .toObject()
                         .value(QStringLiteral("outputs.result")),
                QJsonValue(QStringLiteral("0.01")));
        QVERIFY(stepNamed(p, "make")
                        .value(QStringLiteral("reason"))
                        .toString()
                        .startsWith(QStringLiteral("reused run %1").arg(makeRun)));
        {
            auto store = ResultStore::open(dbPath());
            QCOMPARE((*store)->runs().size(), 2);
        }

        // An ignored variable changes nothing; a param reruns make and, through
        // make's key, use; each run says why.
        QFile f(pipe);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        f.close();
        writeFile(QStringLiteral("m/pipe.yaml"), QByteArray(text).replace("LOG_LEVEL: info", "LOG_LEVEL: debug"));
        p = submit({});
        QVERIFY2(state(p, "use") == QStringLiteral("cached"), qPrintable(noticesOf(p, "use")));
        p = submit({QStringLiteral("--param"), QStringLiteral("lr=0.02")});
        QCOMPARE(state(p, "make"), QStringLiteral("succeeded"));
        QVERIFY2(noticesOf(p, "make").contains(QStringLiteral("param lr 0.01 -> 0.02")),
                qPrintable(noticesOf(p, "make")));
        QCOMPARE(state(p, "use"), QStringLiteral("succeeded"));
        QVERIFY2(
                noticesOf(p, "use").contains(QStringLiteral("upstream make changed")), qPrintable(noticesOf(p, "use")));

        // The code changed: the step's workdir content is in its key.
        writeFile(QStringLiteral("m/make.sh"), "mkdir -p out && echo \"$1\" > out/result.txt && echo made again\n");
        p = submit({});
        QCOMPARE(state(p, "make"), QStringLiteral("succeeded"));
        QVERIFY2(noticesOf(p, "make").contains(QStringLiteral("make.sh changed")), qPrintable(noticesOf(p, "make")));
        const qint64 newMakeRun = stepNamed(p, "make").value(QStringLiteral("run")).toInteger();

        // A cached output changed in the result store: not trusted, evicted, run again (kfp#7939).
        test::writeFile(dbPath() + QStringLiteral(".runs/%1/outputs/out/result.txt").arg(newMakeRun), "tampered\n");
        p = submit({});
        QCOMPARE(state(p, "make"), QStringLiteral("succeeded"));
        QVERIFY2(noticesOf(p, "make").contains(QStringLiteral("out/result.txt")), qPrintable(noticesOf(p, "make")));
        QCOMPARE(stepNamed(p, "make")
                         .value(QStringLiteral("outputs"))
                         .toObject()
                         .value(QStringLiteral("outputs.result")),
                QJsonValue(QStringLiteral("0.01")));

        // The cache as the CLI shows it: one entry per step (the tampered one evicted).
        Outcome ls = ctl({QStringLiteral("cache"), QStringLiteral("ls"), QStringLiteral("--json")});
        QCOMPARE(ls.exitCode, 0);
        QJsonArray entries = QJsonDocument::fromJson(ls.out).array();
        QStringList steps;
        for (const QJsonValue& e : entries)
            steps << e.toObject().value(QStringLiteral("step")).toString();
        steps.sort();
        // make: lr 0.01, lr 0.02, the new make.sh (its tampered entry evicted and made again); use: one per make key
        QCOMPARE(steps, (QStringList{"make", "make", "make", "use", "use", "use"}));
        const Outcome explain = ctl({QStringLiteral("cache"), QStringLiteral("explain"), QStringLiteral("make")});
        QCOMPARE(explain.exitCode, 0);
        QVERIFY2(explain.out.contains("ran because: ") && explain.out.contains("out/result.txt"),
                explain.out.constData());
        QVERIFY2(explain.out.contains("param     lr = 0.01"), explain.out.constData());
        // Invalidated: the next submit runs make again and says there was no entry.
        const Outcome rm = ctl({QStringLiteral("cache"), QStringLiteral("rm"), QStringLiteral("--step"),
                QStringLiteral("make"), QStringLiteral("--pipeline"), QStringLiteral("memo")});
        QVERIFY2(rm.exitCode == 0, rm.err.constData());
        QCOMPARE(rm.out.trimmed().split('\n').size(), 3);
        QCOMPARE(ctl({QStringLiteral("cache"), QStringLiteral("rm"), QStringLiteral("deadbeef00")}).exitCode, 4);
        p = submit({});
        QCOMPARE(state(p, "make"), QStringLiteral("succeeded"));
        QVERIFY2(noticesOf(p, "make").contains(QStringLiteral("no earlier entry for step make")),
                qPrintable(noticesOf(p, "make")));
    }

    void digitsPipelineTrainsAndEvaluates()
    {
        const QString example = test::sourcePath(QStringLiteral("resources/examples/digits"));
        // A copy, so the source tree stays clean.
        const QString copy = m_dir->filePath(QStringLiteral("digits"));
        QDir().mkpath(copy);
        for (const QString& f : {QStringLiteral("pipeline.yaml"), QStringLiteral("job.yaml"),
                     QStringLiteral("train.py"), QStringLiteral("prepare.py"), QStringLiteral("evaluate.py")})
            QVERIFY(QFile::copy(QDir(example).filePath(f), QDir(copy).filePath(f)));
        const Outcome r
                = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"), copy + QStringLiteral("/pipeline.yaml"),
                              QStringLiteral("--param"), QStringLiteral("epochs=4"), QStringLiteral("--param"),
                              QStringLiteral("min_accuracy=0.5"), QStringLiteral("--follow"), QStringLiteral("--json")},
                        180000); // about 20 s; the message comes before QtTest's 300 s watchdog
        QVERIFY2(r.exitCode == 0, diagnostics(r).constData());
        const QJsonObject p = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(stepNamed(p, QStringLiteral("prepare"))
                         .value(QStringLiteral("outputs"))
                         .toObject()
                         .value(QStringLiteral("outputs.rows")),
                QJsonValue(QStringLiteral("1437")));
        const double accuracy = stepNamed(p, QStringLiteral("train"))
                                        .value(QStringLiteral("outputs"))
                                        .toObject()
                                        .value(QStringLiteral("outputs.accuracy"))
                                        .toString()
                                        .toDouble();
        QVERIFY2(accuracy > 0.5 && accuracy <= 1.0, qPrintable(QString::number(accuracy)));
        // train ran as two ranks (DDP over gloo on this CPU machine), rank 0 reporting.
        const QByteArray trainConsole
                = consoleOf(stepNamed(p, QStringLiteral("train")).value(QStringLiteral("run")).toInteger());
        QVERIFY2(trainConsole.contains("2 ranks (gloo)"), trainConsole.constData());
        const QJsonObject eval = stepNamed(p, QStringLiteral("evaluate"));
        QCOMPARE(eval.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        QVERIFY(consoleOf(eval.value(QStringLiteral("run")).toInteger()).contains("test_accuracy="));
        const QString testAccuracy
                = eval.value(QStringLiteral("outputs")).toObject().value(QStringLiteral("outputs.accuracy")).toString();
        QVERIFY2(testAccuracy.toDouble() > 0.5, qPrintable(testAccuracy));
        // The gate compared it with min_accuracy.
        const QJsonObject gate = stepNamed(p, QStringLiteral("gate"));
        QCOMPARE(gate.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        QVERIFY(consoleOf(gate.value(QStringLiteral("run")).toInteger()).contains(", needed 0.5"));
        // train's model is kept in the result store with the run.
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        const qint64 trainRun = stepNamed(p, QStringLiteral("train")).value(QStringLiteral("run")).toInteger();
        QVERIFY(QFileInfo(dbPath() + QStringLiteral(".runs/%1/outputs/out/model.pt").arg(trainRun)).size() > 10000);
        QCOMPARE((*store)->params(trainRun).value(QStringLiteral("epochs")), QStringLiteral("4"));

        // An accuracy no model reaches: prepare and train are reused (min_accuracy
        // is not in their keys), evaluate runs again, and the gate fails the pipeline.
        const Outcome strict = ctl(
                {QStringLiteral("pipeline"), QStringLiteral("submit"), copy + QStringLiteral("/pipeline.yaml"),
                        QStringLiteral("--param"), QStringLiteral("epochs=4"), QStringLiteral("--param"),
                        QStringLiteral("min_accuracy=1.01"), QStringLiteral("--follow"), QStringLiteral("--json")},
                90000);
        QVERIFY2(strict.exitCode == 1, diagnostics(strict).constData());
        const QJsonObject failed = QJsonDocument::fromJson(strict.out).object();
        QCOMPARE(failed.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(stateOf(failed, QStringLiteral("prepare")), QStringLiteral("cached"));
        QCOMPARE(stateOf(failed, QStringLiteral("train")), QStringLiteral("cached"));
        QCOMPARE(stateOf(failed, QStringLiteral("evaluate")), QStringLiteral("succeeded"));
        QCOMPARE(stateOf(failed, QStringLiteral("gate")), QStringLiteral("failed"));
    }
};

QTEST_GUILESS_MAIN(TestPipelines)
#include "TestPipelines.moc"
