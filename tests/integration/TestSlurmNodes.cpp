// A Slurm cluster as a node kind (issue #26), end to end and real: the
// cluster the CTest fixture `slurm_cluster` starts (slurmctld, slurmd,
// munge, slurmdbd on MariaDB: tests/support/slurm), its login node reached
// through a real sshd (SshdFixture, host ws1), the real agent there, the
// real trainyardctl and trainyardd. Skipped (QSKIP) without root, sshd or
// the cluster.
#include "SshdFixture.h"
#include "tests/support/TestSupport.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

namespace {

struct Outcome {
    int exitCode = -1;
    QString out;
};

} // namespace

class TestSlurmNodes final : public QObject {
    Q_OBJECT
    test::SshdFixture m_sshd;
    QTemporaryDir m_tmp;
    QString m_slurmConf;
    QString m_db;
    QString m_stateDir;
    bool m_up = false;

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), m_sshd.clientConfig());
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("SLURM_CONF"), m_slurmConf);
        return env;
    }

    Outcome ctl(const QStringList& args, int timeoutMs = 120000) const
    {
        QProcess p;
        p.setProcessEnvironment(environment());
        test::withoutTerminal(p);
        p.start(QStringLiteral(TRAINYARD_CTL_PATH), QStringList{QStringLiteral("--db"), m_db} + args);
        if (!p.waitForFinished(timeoutMs)) {
            p.kill();
            p.waitForFinished();
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError())};
    }

    // Plain Slurm commands, as the cluster's users run them.
    QString slurm(const QString& program, const QStringList& args) const
    {
        QProcess p;
        p.setProcessEnvironment(environment());
        p.start(program, args);
        p.waitForFinished(30000);
        return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError()).trimmed();
    }

    QString writeSpec(const QString& name, const QByteArray& yaml) const
    {
        const QString path = m_tmp.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write %s", qPrintable(path));
        f.write(yaml);
        return path;
    }

    QJsonObject show(qint64 run) const
    {
        const Outcome o = ctl({QStringLiteral("show"), QString::number(run), QStringLiteral("--json")});
        return QJsonDocument::fromJson(o.out.toUtf8()).object();
    }

    // Waits until `pred` holds for the run's `show --json` (or the time is up); returns the last one.
    QJsonObject waitFor(qint64 run, const std::function<bool(const QJsonObject&)>& pred, int timeoutMs) const
    {
        QElapsedTimer t;
        t.start();
        QJsonObject last;
        while (t.elapsed() < timeoutMs) {
            last = show(run);
            if (pred(last))
                return last;
            QTest::qWait(300);
        }
        return last;
    }

    // waitFor() until the run's state is `state`.
    QJsonObject waitForState(qint64 run, const QString& state, int timeoutMs) const
    {
        return waitFor(
                run, [&state](const QJsonObject& o) { return o.value(QStringLiteral("state")).toString() == state; },
                timeoutMs);
    }

    static qint64 submittedRun(const QString& out)
    {
        const auto m = QRegularExpression(QStringLiteral("run (\\d+)")).match(out);
        return m.hasMatch() ? m.captured(1).toLongLong() : 0;
    }

    // `pipeline submit FILE --node hpc`: the pipeline's id (0: refused).
    qint64 submitPipeline(const QString& name, const QString& yaml) const
    {
        const QString file = writeSpec(name, yaml.toUtf8());
        const Outcome o = ctl({QStringLiteral("pipeline"), QStringLiteral("submit"), file, QStringLiteral("--node"),
                QStringLiteral("hpc")});
        const auto m = QRegularExpression(QStringLiteral("submitted pipeline (\\d+)")).match(o.out);
        if (o.exitCode != 0 || !m.hasMatch())
            qWarning("%s", qPrintable(o.out));
        return m.hasMatch() ? m.captured(1).toLongLong() : 0;
    }

    QJsonObject showPipeline(qint64 id) const
    {
        const Outcome o = ctl(
                {QStringLiteral("pipeline"), QStringLiteral("show"), QString::number(id), QStringLiteral("--json")});
        return QJsonDocument::fromJson(o.out.toUtf8()).object();
    }

    static QJsonObject stepOf(const QJsonObject& pipeline, const QString& name)
    {
        for (const QJsonValue& v : pipeline.value(QStringLiteral("steps")).toArray())
            if (v.toObject().value(QStringLiteral("name")).toString() == name)
                return v.toObject();
        return {};
    }

    // Polls the pipeline until it ended, calling `each` with it and its
    // steps' runs (`show --json`) every time; returns it as it ended.
    QJsonObject followPipeline(qint64 id, const std::function<void(const QJsonObject&)>& each, int timeoutMs) const
    {
        QElapsedTimer t;
        t.start();
        QJsonObject p;
        while (t.elapsed() < timeoutMs) {
            p = showPipeline(id);
            if (each)
                each(p);
            if (!p.isEmpty() && p.value(QStringLiteral("state")).toString() != u"running")
                return p;
            QTest::qWait(200);
        }
        return p;
    }

    // sacct's fields of a job's allocation ("Submit" -> "2026-...").
    QHash<QString, QString> sacctOf(const QString& job) const
    {
        const QStringList fields{QStringLiteral("State"), QStringLiteral("Submit"), QStringLiteral("Start"),
                QStringLiteral("End"), QStringLiteral("ElapsedRaw")};
        QHash<QString, QString> out;
        // slurmdbd has the end a moment after the job ended.
        for (int tries = 0; tries < 50; ++tries) {
            const QStringList values = slurm(QStringLiteral("sacct"),
                    {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"), QStringLiteral("-j"), job,
                            QStringLiteral("-o"), fields.join(u',')})
                                               .split(u'|');
            if (values.size() == fields.size() && values.at(3) != u"Unknown") {
                for (int i = 0; i < fields.size(); ++i)
                    out.insert(fields.at(i), values.at(i));
                return out;
            }
            QTest::qWait(200);
        }
        return out;
    }

    static qint64 secs(const QString& sacctTime)
    {
        return QDateTime::fromString(sacctTime, Qt::ISODate).toSecsSinceEpoch();
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (const QString why = test::SshdFixture::skipReason(); !why.isEmpty())
            QSKIP(qPrintable(why));
        m_slurmConf = test::slurmConfOf(QStringLiteral(TRAINYARD_SLURM_ENV));
        if (m_slurmConf.isEmpty() || !QFile::exists(m_slurmConf))
            QSKIP("no Slurm cluster (the slurm_cluster fixture did not start one)");
        QVERIFY(m_tmp.isValid());
        QString error;
        QVERIFY2(m_sshd.start(&error), qPrintable(error));
        m_up = true;
        m_db = m_tmp.filePath(QStringLiteral("db/trainyard.db"));
        // The agent on the login node: the built one, its state on the
        // shared file system (this host's), Slurm polled every 300 ms.
        m_stateDir = m_tmp.filePath(QStringLiteral("login-state"));
        const QString wrapper = m_tmp.filePath(QStringLiteral("agent-login.sh"));
        QFile f(wrapper);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("#!/bin/sh\nexec env SLURM_CONF='%1' TRAINYARD_AGENT_STATE='%2' "
                               "TRAINYARD_AGENT_NO_NVML=1 TRAINYARD_AGENT_SLURM_POLL_MS=300 '%3' \"$@\"\n")
                        .arg(m_slurmConf, m_stateDir, test::agentPath())
                        .toUtf8());
        f.close();
        f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        const Outcome added = ctl({QStringLiteral("node"), QStringLiteral("add"), QStringLiteral("hpc"),
                QStringLiteral("--host"), QStringLiteral("ws1"), QStringLiteral("--kind"), QStringLiteral("slurm"),
                QStringLiteral("--agent-path"), wrapper, QStringLiteral("--accept-new-host-key")});
        QVERIFY2(added.exitCode == 0, qPrintable(added.out));
        // What the login node's agent says of the cluster: the fixture's partition.
        QVERIFY2(added.out.contains(QRegularExpression(QStringLiteral("Slurm 2\\d\\.\\d+\\.\\d+, 2 partition"))),
                qPrintable(added.out));
        QVERIFY2(added.out.contains(QStringLiteral("debug (default, up)")), qPrintable(added.out));
        QVERIFY2(added.out.contains(QStringLiteral("added node hpc")), qPrintable(added.out));
    }

    // A job spec's run, submitted to the Slurm node: an sbatch job that
    // Slurm runs, followed to its end; its console is the job's output,
    // byte for byte; the node's facts are stored.
    void runGoesThroughSbatch()
    {
        const QString spec = writeSpec(QStringLiteral("hello.yaml"),
                "name: hello-slurm\nworkdir: /tmp\n"
                "command: \"echo start $SLURM_JOB_ID; for i in 1 2 3; do echo loss=0.$i; sleep 0.2; done\"\n"
                "resources: {cpus: 1, memory: 100M}\n"
                "time_limit: 5m\n"
                "metrics: [{key: loss, regex: 'loss=(?<value>[0-9.]+)'}]\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--node"), QStringLiteral("hpc"),
                                      QStringLiteral("--follow")},
                180000);
        QVERIFY2(o.exitCode == 0, qPrintable(o.out));
        const qint64 run = submittedRun(o.out);
        QVERIFY2(run > 0, qPrintable(o.out));
        const QJsonObject s = show(run);
        QCOMPARE(s.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        const QString job = s.value(QStringLiteral("slurm_job")).toString();
        QVERIFY2(job.contains(QRegularExpression(QStringLiteral("^\\d+$"))), qPrintable(o.out));
        // Slurm's accounting has its end as Trainyard recorded it.
        const QString acct = slurm(QStringLiteral("sacct"),
                {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"), QStringLiteral("-j"), job,
                        QStringLiteral("-o"), QStringLiteral("JobIDRaw,State,ExitCode")});
        QCOMPARE(acct, QStringLiteral("%1|COMPLETED|0:0").arg(job));
        // The console: what the job wrote, whole; its metrics parsed from it.
        const Outcome logs = ctl({QStringLiteral("logs"), QString::number(run)});
        QCOMPARE(logs.out, QStringLiteral("start %1\nloss=0.1\nloss=0.2\nloss=0.3\n").arg(job));
        QFile console(QStringLiteral("%1/runs/%2/console.log")
                              .arg(m_stateDir, s.value(QStringLiteral("agent_run_id")).toString()));
        QVERIFY(console.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(console.readAll()), logs.out);
        const Outcome metrics = ctl({QStringLiteral("metrics"), QString::number(run), QStringLiteral("--csv")});
        QVERIFY2(metrics.out.contains(QStringLiteral("loss,")) && metrics.out.count(QStringLiteral("loss,")) == 3,
                qPrintable(metrics.out));
        // The notices say where it went.
        const Outcome text = ctl({QStringLiteral("show"), QString::number(run)});
        QVERIFY2(text.out.contains(QStringLiteral("submitted to Slurm on hpc as job %1").arg(job)),
                qPrintable(text.out));
        QVERIFY2(text.out.contains(QStringLiteral("Slurm started job %1 on ").arg(job)), qPrintable(text.out));
        // The service asked the login node about its cluster when it connected.
        const Outcome nodes = ctl({QStringLiteral("node"), QStringLiteral("ls")});
        QVERIFY2(nodes.out.contains(QStringLiteral("(Slurm login node)")), qPrintable(nodes.out));
        QVERIFY2(nodes.out.contains(QStringLiteral("node hpc: Slurm 2")), qPrintable(nodes.out));
    }

    // The bundled digits example as a 2-node gang on Slurm: one batch job
    // (--nodes=2), one srun task per node, the ranks meeting by gloo at the
    // batch host; its curves come from the console as from any run.
    void digitsExampleAsTwoNodeGang()
    {
        const QString spec = writeSpec(QStringLiteral("digits-gang.yaml"),
                QStringLiteral("name: digits-slurm-gang\nworkdir: %1\n"
                               "command: [/usr/bin/python3, train.py, --epochs, \"3\", --min-accuracy, \"0.5\"]\n"
                               "env: {PYTHONUNBUFFERED: \"1\"}\n"
                               "resources: {nodes: 2, cpus: 1}\ntime_limit: 10m\n")
                        .arg(test::sourcePath(QStringLiteral("resources/examples/digits")))
                        .toUtf8());
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--node"), QStringLiteral("hpc"),
                                      QStringLiteral("--follow")},
                400000);
        QVERIFY2(o.exitCode == 0, qPrintable(o.out));
        const qint64 run = submittedRun(o.out);
        const QJsonObject s = show(run);
        QCOMPARE(s.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        const double acc
                = s.value(QStringLiteral("latest_metrics")).toObject().value(QStringLiteral("val_accuracy")).toDouble();
        QVERIFY2(acc > 0.8, QJsonDocument(s).toJson().constData());
        // One allocation over both nodes, its step .0 on both.
        const QString job = s.value(QStringLiteral("slurm_job")).toString();
        const QString steps = slurm(QStringLiteral("sacct"),
                {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-j"), job, QStringLiteral("-o"),
                        QStringLiteral("JobID,State,NNodes,NodeList")});
        QVERIFY2(steps.contains(QStringLiteral("%1|COMPLETED|2|n[1-2]").arg(job)), qPrintable(steps));
        QVERIFY2(steps.contains(QStringLiteral("%1.0|COMPLETED|2|n[1-2]").arg(job)), qPrintable(steps));
        const Outcome logs = ctl({QStringLiteral("logs"), QString::number(run)});
        QCOMPARE(logs.out.count(QStringLiteral("val_accuracy=")), 3); // rank 0's epochs, once each
        QVERIFY2(logs.out.contains(QStringLiteral("done: validation accuracy")), qPrintable(logs.out));
    }

    // An elastic gang (`nodes: {min: 1, max: 2}`) on Slurm: one batch job
    // with --nodes=1-2, so Slurm gives it what it has. With n2 taken it runs
    // on n1 alone; with both free, a real torchrun on each node meets
    // through the c10d rendezvous the batch script names and all-reduces.
    void elasticGangTakesTheNodesSlurmHas()
    {
        // n2 taken by someone else's job.
        const QString blocker = slurm(QStringLiteral("sbatch"),
                {QStringLiteral("--parsable"), QStringLiteral("--exclusive"), QStringLiteral("-w"),
                        QStringLiteral("n2"), QStringLiteral("--wrap"), QStringLiteral("sleep 300")});
        QVERIFY2(blocker.contains(QRegularExpression(QStringLiteral("^\\d+$"))), qPrintable(blocker));
        auto scancel = qScopeGuard([&] { slurm(QStringLiteral("scancel"), {blocker}); });
        const auto blockerState = [&] {
            return slurm(QStringLiteral("squeue"),
                    {QStringLiteral("-h"), QStringLiteral("-j"), blocker, QStringLiteral("-o"), QStringLiteral("%T")});
        };
        QTRY_COMPARE_WITH_TIMEOUT(blockerState(), QStringLiteral("RUNNING"), 30000);
        const QString one = writeSpec(QStringLiteral("elastic-one.yaml"),
                "name: elastic-one\nworkdir: /tmp\n"
                "command: 'echo rank=$NODE_RANK nnodes=$SLURM_NNODES world=$WORLD_SIZE pet=$PET_NNODES "
                "conf=$PET_RDZV_CONF id=$PET_RDZV_ID ep=$PET_RDZV_ENDPOINT host=$(hostname)'\n"
                "resources: {nodes: {min: 1, max: 2}, cpus: 1}\ntime_limit: 5m\n");
        const Outcome o1 = ctl({QStringLiteral("submit"), one, QStringLiteral("--node"), QStringLiteral("hpc"),
                                       QStringLiteral("--follow")},
                180000);
        QVERIFY2(o1.exitCode == 0, qPrintable(o1.out));
        const qint64 run1 = submittedRun(o1.out);
        const QJsonObject s1 = show(run1);
        QCOMPARE(s1.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        const QString job1 = s1.value(QStringLiteral("slurm_job")).toString();
        const QString logs1 = ctl({QStringLiteral("logs"), QString::number(run1)}).out;
        const QString host = QSysInfo::machineHostName();
        QCOMPARE(logs1,
                QStringLiteral("rank=0 nnodes=1 world=1 pet=1:2 conf=is_host=1 id=%1 ep=%2:%3 host=%2\n")
                        .arg(job1, host)
                        .arg(20000 + job1.toInt() % 20000));
        QCOMPARE(slurm(QStringLiteral("sacct"),
                         {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"), QStringLiteral("-j"), job1,
                                 QStringLiteral("-o"), QStringLiteral("State,NNodes,NodeList")}),
                QStringLiteral("COMPLETED|1|n1"));
        slurm(QStringLiteral("scancel"), {blocker});
        scancel.dismiss();
        QTRY_COMPARE_WITH_TIMEOUT(blockerState(), QString(), 30000);
        // Slurm gives fewer nodes at once rather than wait for a node still
        // completing the blocker's end.
        QTRY_COMPARE_WITH_TIMEOUT(slurm(QStringLiteral("sinfo"),
                                          {QStringLiteral("-h"), QStringLiteral("-n"), QStringLiteral("n2"),
                                                  QStringLiteral("-o"), QStringLiteral("%T")}),
                QStringLiteral("idle"), 30000);

        // Both free: two nodes, torchrun on each.
        if (!test::torchrunStarts())
            QSKIP("no torchrun: /usr/bin/python3 -m torch.distributed.run --help failed");
        const QString script = m_tmp.filePath(QStringLiteral("allreduce.py"));
        test::writeAllreduceWorker(script);
        // PET_REDIRECTS/PET_TEE: Debian's torch 1.13 under Python 3.11 cannot
        // parse torchrun's default --redirects 0 (TestElasticGangs says more).
        const QString two = writeSpec(QStringLiteral("elastic-two.yaml"),
                QStringLiteral("name: elastic-two\nworkdir: /tmp\n"
                               "command: [/usr/bin/python3, -m, torch.distributed.run, %1]\n"
                               "env: {PET_REDIRECTS: '1', PET_TEE: '1'}\n"
                               "resources: {nodes: {min: 1, max: 2}, cpus: 1}\ntime_limit: 10m\n")
                        .arg(script)
                        .toUtf8());
        const Outcome o2 = ctl({QStringLiteral("submit"), two, QStringLiteral("--node"), QStringLiteral("hpc"),
                                       QStringLiteral("--follow")},
                400000);
        QVERIFY2(o2.exitCode == 0, qPrintable(o2.out));
        const qint64 run2 = submittedRun(o2.out);
        QCOMPARE(show(run2).value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        const QString job2 = show(run2).value(QStringLiteral("slurm_job")).toString();
        QCOMPARE(slurm(QStringLiteral("sacct"),
                         {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"), QStringLiteral("-j"), job2,
                                 QStringLiteral("-o"), QStringLiteral("State,NNodes,NodeList")}),
                QStringLiteral("COMPLETED|2|n[1-2]"));
        const QString logs2 = ctl({QStringLiteral("logs"), QString::number(run2)}).out;
        // torchrun's tee prefixes each worker's line ("[default0]:").
        QVERIFY2(logs2.contains(QRegularExpression(QStringLiteral("rank=0 world=2 sum=3\\n"))), qPrintable(logs2));
        QVERIFY2(logs2.contains(QRegularExpression(QStringLiteral("rank=1 world=2 sum=3\\n"))), qPrintable(logs2));
    }

    // A failing job is failed with its exit code; a running job cancelled
    // through Trainyard is gone from Slurm.
    void exitCodeAndCancel()
    {
        const QString failing
                = writeSpec(QStringLiteral("fail.yaml"), "name: fails\nworkdir: /tmp\ncommand: \"echo bad; exit 3\"\n");
        const Outcome f = ctl({QStringLiteral("submit"), failing, QStringLiteral("--node"), QStringLiteral("hpc"),
                                      QStringLiteral("--follow")},
                120000);
        QCOMPARE(f.exitCode, 3);
        const QJsonObject failed = show(submittedRun(f.out));
        QCOMPARE(failed.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(failed.value(QStringLiteral("failure_kind")).toString(), QStringLiteral("exit_code"));

        const QString sleeper
                = writeSpec(QStringLiteral("sleep.yaml"), "name: sleeper\nworkdir: /tmp\ncommand: [sleep, \"600\"]\n");
        const Outcome s = ctl({QStringLiteral("submit"), sleeper, QStringLiteral("--node"), QStringLiteral("hpc")});
        QVERIFY2(s.exitCode == 0, qPrintable(s.out));
        const qint64 run = submittedRun(s.out);
        const QJsonObject running = waitForState(run, QStringLiteral("running"), 60000);
        QVERIFY2(running.value(QStringLiteral("state")).toString() == u"running",
                QJsonDocument(running).toJson().constData());
        const QString job = running.value(QStringLiteral("slurm_job")).toString();
        QCOMPARE(slurm(QStringLiteral("squeue"),
                         {QStringLiteral("-h"), QStringLiteral("-j"), job, QStringLiteral("-o"), QStringLiteral("%T")}),
                QStringLiteral("RUNNING"));
        QCOMPARE(ctl({QStringLiteral("cancel"), QString::number(run)}).exitCode, 0);
        const QJsonObject cancelled = waitForState(run, QStringLiteral("cancelled"), 90000);
        QVERIFY2(cancelled.value(QStringLiteral("state")).toString() == u"cancelled",
                QJsonDocument(cancelled).toJson().constData());
        const QString acct = slurm(QStringLiteral("sacct"),
                {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"), QStringLiteral("-j"), job,
                        QStringLiteral("-o"), QStringLiteral("State")});
        QVERIFY2(acct.startsWith(QStringLiteral("CANCELLED")), qPrintable(acct));
    }

    // While Slurm keeps a job waiting, the run says why in Slurm's words;
    // once the cluster frees up it runs.
    void pendingReasonFromSlurm()
    {
        // Every node of the cluster taken by someone else's job.
        const QString blocker = slurm(QStringLiteral("sbatch"),
                {QStringLiteral("--parsable"), QStringLiteral("--exclusive"), QStringLiteral("--nodes=2"),
                        QStringLiteral("--wrap"), QStringLiteral("sleep 300")});
        QVERIFY2(blocker.contains(QRegularExpression(QStringLiteral("^\\d+$"))), qPrintable(blocker));
        const auto scancel = qScopeGuard([&] { slurm(QStringLiteral("scancel"), {blocker}); });
        const QString spec = writeSpec(QStringLiteral("waits.yaml"),
                "name: waits\nworkdir: /tmp\ncommand: [echo, done]\nresources: {cpus: 1}\n");
        const Outcome s = ctl({QStringLiteral("submit"), spec, QStringLiteral("--node"), QStringLiteral("hpc")});
        const qint64 run = submittedRun(s.out);
        QVERIFY2(run > 0, qPrintable(s.out));
        const QJsonObject waiting = waitFor(
                run,
                [](const QJsonObject& o) {
                    return o.value(QStringLiteral("pending_reason")).toString().contains(QStringLiteral("Slurm says"));
                },
                60000);
        QCOMPARE(waiting.value(QStringLiteral("state")).toString(), QStringLiteral("starting"));
        QVERIFY2(waiting.value(QStringLiteral("pending_reason"))
                         .toString()
                         .startsWith(QStringLiteral("waiting: Slurm says Resources")),
                QJsonDocument(waiting).toJson().constData());
        slurm(QStringLiteral("scancel"), {blocker});
        const QJsonObject done = waitForState(run, QStringLiteral("succeeded"), 90000);
        QCOMPARE(done.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        QCOMPARE(done.value(QStringLiteral("pending_reason")).toString(), QString());
    }

    // The login node's sshd restarted mid-run (every connection dropped):
    // the service reconnects, the tail goes on from its byte offset, and
    // the console is the job's output file byte for byte, nothing twice.
    void loginNodeRestartedMidRun()
    {
        const QString spec = writeSpec(QStringLiteral("ticks.yaml"),
                "name: ticks\nworkdir: /tmp\n"
                "command: \"for i in $(seq 1 40); do echo tick $i; sleep 0.1; done\"\n");
        const Outcome s = ctl({QStringLiteral("submit"), spec, QStringLiteral("--node"), QStringLiteral("hpc")});
        const qint64 run = submittedRun(s.out);
        QVERIFY2(run > 0, qPrintable(s.out));
        const QJsonObject running = waitForState(run, QStringLiteral("running"), 60000);
        QVERIFY2(running.value(QStringLiteral("state")).toString() == u"running",
                QJsonDocument(running).toJson().constData());
        QString error;
        QVERIFY2(m_sshd.restart(&error), qPrintable(error));
        QVERIFY(m_sshd.killConnections() >= 0);
        const QJsonObject done = waitForState(run, QStringLiteral("succeeded"), 120000);
        QVERIFY2(done.value(QStringLiteral("state")).toString() == u"succeeded",
                QJsonDocument(done).toJson().constData());
        QString expected;
        for (int i = 1; i <= 40; ++i)
            expected += QStringLiteral("tick %1\n").arg(i);
        QCOMPARE(ctl({QStringLiteral("logs"), QString::number(run)}).out, expected);
    }

    // A job over its memory (the spec's memory as --mem): Slurm's cgroup
    // ends it OUT_OF_MEMORY, recorded as the OOM killer in Slurm's words.
    // Where the cluster cannot use cgroups (SLURM_UP_MEMORY=jobacct) Slurm
    // kills it without saying so: skipped there.
    void outOfMemoryBySlurm()
    {
        QFile env(QStringLiteral(TRAINYARD_SLURM_ENV));
        QVERIFY(env.open(QIODevice::ReadOnly));
        if (!env.readAll().contains("SLURM_UP_MEMORY=cgroup"))
            QSKIP("the cluster enforces memory without cgroups: Slurm records no OUT_OF_MEMORY");
        const QString spec = writeSpec(QStringLiteral("oom.yaml"),
                "name: greedy\nworkdir: /tmp\n"
                "command: [/usr/bin/python3, -c, \"import time; x = bytearray(400 << 20); time.sleep(5)\"]\n"
                "resources: {memory: 50M}\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--node"), QStringLiteral("hpc"),
                                      QStringLiteral("--follow")},
                180000);
        const QJsonObject s = show(submittedRun(o.out));
        QCOMPARE(s.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(s.value(QStringLiteral("failure_kind")).toString(), QStringLiteral("oom_killed"));
        QCOMPARE(s.value(QStringLiteral("failure_reason")).toString(),
                QStringLiteral("Slurm says it ran out of memory (OUT_OF_MEMORY)"));
    }

    // Slurm's time limit (the spec's time_limit as --time) ends the job:
    // recorded as a time limit, in Slurm's words.
    void timeLimitBySlurm()
    {
        const QString spec = writeSpec(QStringLiteral("limit.yaml"),
                "name: limited\nworkdir: /tmp\ncommand: [sleep, \"600\"]\ntime_limit: 1m\n");
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--node"), QStringLiteral("hpc"),
                                      QStringLiteral("--follow")},
                240000);
        const QJsonObject s = show(submittedRun(o.out));
        QCOMPARE(s.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(s.value(QStringLiteral("failure_kind")).toString(), QStringLiteral("time_limit"));
        QCOMPARE(s.value(QStringLiteral("failure_reason")).toString(),
                QStringLiteral("Slurm stopped it at its time limit (TIMEOUT)"));
    }

    // A sweep on the Slurm node is one job array: task i is the sweep's
    // i-th run, each with its own params, console, metrics file, exit code
    // and artifacts; `max_concurrent: 1` is Slurm's throttle (`%1`), so the
    // tasks ran one after another.
    void sweepIsOneJobArray()
    {
        const QString workdir = m_tmp.filePath(QStringLiteral("sweep-work"));
        QVERIFY(QDir().mkpath(workdir));
        const QString spec = writeSpec(QStringLiteral("array.yaml"),
                QStringLiteral("name: arr\nworkdir: %1\n"
                               "sweep: {x: [\"1\", \"2\", \"3\"]}\nmax_concurrent: 1\n"
                               "command: \"echo x={{x}} task=$SLURM_ARRAY_TASK_ID job=$SLURM_ARRAY_JOB_ID; "
                               "echo '{\\\"step\\\": 1, \\\"score\\\": {{x}}}' >> \\\"$TRAINYARD_METRICS_FILE\\\"; "
                               "echo made-by-{{x}} > \\\"$TRAINYARD_RUN_DIR/out.txt\\\"; test {{x}} != 2 || exit 4\"\n"
                               "artifacts: ['out.txt']\n"
                               "resources: {cpus: 1, memory: 100M}\n")
                        .arg(workdir)
                        .toUtf8());
        const Outcome o = ctl({QStringLiteral("submit"), spec, QStringLiteral("--node"), QStringLiteral("hpc"),
                                      QStringLiteral("--follow")},
                240000);
        QVERIFY2(o.exitCode == 1, qPrintable(o.out)); // x=2 failed
        const auto ids = QRegularExpression(QStringLiteral("3 runs, (\\d+) to (\\d+)")).match(o.out);
        QVERIFY2(ids.hasMatch(), qPrintable(o.out));
        const qint64 first = ids.captured(1).toLongLong();
        QCOMPARE(ids.captured(2).toLongLong(), first + 2);
        QString arrayJob;
        QList<QPair<qint64, qint64>> spans; // each task's start and end, as Slurm recorded them
        for (int i = 0; i < 3; ++i) {
            const qint64 run = first + i;
            const QJsonObject s = show(run);
            const QString job = s.value(QStringLiteral("slurm_job")).toString();
            const auto m = QRegularExpression(QStringLiteral("^(\\d+)_(\\d+)$")).match(job);
            QVERIFY2(m.hasMatch(), QJsonDocument(s).toJson().constData());
            if (i == 0)
                arrayJob = m.captured(1);
            QCOMPARE(m.captured(1), arrayJob); // one array for the three
            QCOMPARE(m.captured(2), QString::number(i));
            QCOMPARE(s.value(QStringLiteral("state")).toString(),
                    i == 1 ? QStringLiteral("failed") : QStringLiteral("succeeded"));
            if (i == 1)
                QCOMPARE(s.value(QStringLiteral("exit_code")).toInt(), 4);
            QCOMPARE(ctl({QStringLiteral("logs"), QString::number(run)}).out,
                    QStringLiteral("x=%1 task=%2 job=%3\n").arg(i + 1).arg(i).arg(arrayJob));
            // Its metrics file, on the shared file system, read by the login node's agent.
            const Outcome metrics = ctl({QStringLiteral("metrics"), QString::number(run), QStringLiteral("--csv")});
            QVERIFY2(metrics.out.contains(
                             QRegularExpression(QStringLiteral("^%1,score,1,[^,]*,[^,]*,%2$").arg(run).arg(i + 1),
                                     QRegularExpression::MultilineOption)),
                    qPrintable(metrics.out));
            // Its artifact, listed in its own run directory, downloaded whole.
            const QString agentRun = s.value(QStringLiteral("agent_run_id")).toString();
            const Outcome artifacts = ctl({QStringLiteral("artifacts"), QString::number(run)});
            QVERIFY2(artifacts.out.startsWith(QStringLiteral("%1/runs/%2/out.txt\t").arg(m_stateDir, agentRun)),
                    qPrintable(artifacts.out));
            const QString into = m_tmp.filePath(QStringLiteral("artifacts-%1").arg(run));
            QCOMPARE(ctl({QStringLiteral("artifacts"), QString::number(run), QStringLiteral("--download"), into})
                             .exitCode,
                    0);
            QFile artifact(into + QStringLiteral("/out.txt"));
            QVERIFY2(artifact.open(QIODevice::ReadOnly), qPrintable(QDir(into).entryList().join(u' ')));
            QCOMPARE(artifact.readAll(), QByteArray("made-by-") + QByteArray::number(i + 1) + '\n');
            const Outcome text = ctl({QStringLiteral("show"), QString::number(run)});
            QVERIFY2(text.out.contains(QStringLiteral("task %1 of Slurm job array %2 (an array of 3 runs of its "
                                                      "sweep, at most 1 at once)")
                                               .arg(i)
                                               .arg(arrayJob)),
                    qPrintable(text.out));
            // slurmdbd records a task's end a moment after Slurm ended it.
            const auto startEnd = [&] {
                return slurm(QStringLiteral("sacct"),
                        {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"), QStringLiteral("-j"), job,
                                QStringLiteral("-o"), QStringLiteral("Start,End")})
                        .split(u'|');
            };
            QStringList times = startEnd();
            QElapsedTimer recorded;
            recorded.start();
            while ((times.size() != 2 || times[1] == u"Unknown") && recorded.elapsed() < 30000) {
                QTest::qWait(500);
                times = startEnd();
            }
            QVERIFY2(times.size() == 2, qPrintable(times.join(u'|')));
            spans.append({QDateTime::fromString(times[0], Qt::ISODate).toSecsSinceEpoch(),
                    QDateTime::fromString(times[1], Qt::ISODate).toSecsSinceEpoch()});
        }
        // One at a time: each task started once the one before had ended.
        QVERIFY2(spans[1].first >= spans[0].second && spans[2].first >= spans[1].second,
                qPrintable(QStringLiteral("%1-%2, %3-%4, %5-%6")
                                   .arg(spans[0].first)
                                   .arg(spans[0].second)
                                   .arg(spans[1].first)
                                   .arg(spans[1].second)
                                   .arg(spans[2].first)
                                   .arg(spans[2].second)));
        // One submission: Slurm's accounting has one array job with three tasks.
        const QString tasks = slurm(QStringLiteral("sacct"),
                {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"), QStringLiteral("-j"), arrayJob,
                        QStringLiteral("-o"), QStringLiteral("JobID,State")});
        QStringList rows = tasks.split(u'\n');
        rows.sort();
        QCOMPARE(rows,
                (QStringList{QStringLiteral("%1_0|COMPLETED").arg(arrayJob),
                        QStringLiteral("%1_1|FAILED").arg(arrayJob), QStringLiteral("%1_2|COMPLETED").arg(arrayJob)}));
    }

    // A running job that Slurm requeues (here `scontrol requeue`; a failed
    // node or a preemption does the same) is starting again, with Slurm's
    // reason, then runs again; its console keeps both starts' output.
    void requeuedJobStartsAgain()
    {
        const QString spec = writeSpec(QStringLiteral("requeue.yaml"),
                "name: requeued\nworkdir: /tmp\n"
                "command: \"echo start ${SLURM_RESTART_COUNT:-0}; "
                "if [ ${SLURM_RESTART_COUNT:-0} = 0 ]; then sleep 600; fi; echo done\"\n"
                "slurm: {sbatch: [--requeue]}\n");
        const Outcome s = ctl({QStringLiteral("submit"), spec, QStringLiteral("--node"), QStringLiteral("hpc")});
        const qint64 run = submittedRun(s.out);
        QVERIFY2(run > 0, qPrintable(s.out));
        const QJsonObject running = waitForState(run, QStringLiteral("running"), 60000);
        QVERIFY2(running.value(QStringLiteral("state")).toString() == u"running",
                QJsonDocument(running).toJson().constData());
        const QString job = running.value(QStringLiteral("slurm_job")).toString();
        // Slurm says RUNNING before the batch script has run its first line.
        QElapsedTimer wait;
        wait.start();
        while (!ctl({QStringLiteral("logs"), QString::number(run)}).out.startsWith(QStringLiteral("start 0\n"))
                && wait.elapsed() < 30000)
            QTest::qWait(200);
        QCOMPARE(slurm(QStringLiteral("scontrol"), {QStringLiteral("requeue"), job}), QString());
        const QJsonObject again = waitForState(run, QStringLiteral("starting"), 60000);
        QVERIFY2(again.value(QStringLiteral("state")).toString() == u"starting",
                QJsonDocument(again).toJson().constData());
        QVERIFY2(again.value(QStringLiteral("pending_reason"))
                         .toString()
                         .startsWith(QStringLiteral("waiting: Slurm says")),
                QJsonDocument(again).toJson().constData());
        // Slurm holds a requeued job back for a while (its BeginTime); not this test.
        slurm(QStringLiteral("scontrol"),
                {QStringLiteral("update"), QStringLiteral("JobId=") + job, QStringLiteral("StartTime=now")});
        const QJsonObject done = waitForState(run, QStringLiteral("succeeded"), 240000);
        QVERIFY2(done.value(QStringLiteral("state")).toString() == u"succeeded",
                QJsonDocument(done).toJson().constData());
        // Both starts, and slurmstepd's word on the first one's end between them.
        const QString console = ctl({QStringLiteral("logs"), QString::number(run)}).out;
        QVERIFY2(console.contains(QRegularExpression(
                         QStringLiteral("^start 0\n[^\n]*JOB %1 ON n\\d CANCELLED AT [^\n]* DUE TO JOB REQUEUE "
                                        "\\*\\*\\*\nstart 1\ndone\n$")
                                 .arg(job))),
                qPrintable(console));
        const Outcome text = ctl({QStringLiteral("show"), QString::number(run)});
        QVERIFY2(
                text.out.contains(QStringLiteral("Slurm put job %1 back in its queue").arg(job)), qPrintable(text.out));
    }

    // A pipeline's step that needs nothing known only at its upstream's end
    // goes to Slurm as soon as its upstream is in Slurm's queue, with
    // --dependency=afterok: it waits there (Slurm's reason Dependency) and
    // Slurm starts it when its upstream succeeded.
    void pipelineStepQueuedBehindItsUpstream()
    {
        const QString shared = m_tmp.filePath(QStringLiteral("dep-shared"));
        QVERIFY(QDir().mkpath(shared));
        const qint64 id = submitPipeline(QStringLiteral("dep.yaml"),
                QStringLiteral("name: dep\nsteps:\n"
                               "  - name: a\n    workdir: /tmp\n    command: \"sleep 4; echo from-a > %1/f\"\n"
                               "  - name: b\n    depends: [a]\n    workdir: /tmp\n    command: \"cat %1/f\"\n")
                        .arg(shared));
        QVERIFY(id > 0);
        QString reasonSeen, aStateThen;
        const QJsonObject ended = followPipeline(
                id,
                [&](const QJsonObject& p) {
                    const qint64 b = stepOf(p, QStringLiteral("b")).value(QStringLiteral("run")).toInteger();
                    if (b <= 0 || !reasonSeen.isEmpty())
                        return;
                    const QString reason = show(b).value(QStringLiteral("pending_reason")).toString();
                    if (!reason.contains(QStringLiteral("Dependency")))
                        return;
                    reasonSeen = reason;
                    aStateThen = show(stepOf(p, QStringLiteral("a")).value(QStringLiteral("run")).toInteger())
                                         .value(QStringLiteral("state"))
                                         .toString();
                },
                180000);
        QCOMPARE(ended.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        // b waited in Slurm's queue for a, which was still going.
        QVERIFY2(reasonSeen.startsWith(QStringLiteral("waiting: Slurm says Dependency")), qPrintable(reasonSeen));
        QVERIFY2(aStateThen == u"running" || aStateThen == u"starting", qPrintable(aStateThen));
        const qint64 a = stepOf(ended, QStringLiteral("a")).value(QStringLiteral("run")).toInteger();
        const qint64 b = stepOf(ended, QStringLiteral("b")).value(QStringLiteral("run")).toInteger();
        const QString jobA = show(a).value(QStringLiteral("slurm_job")).toString();
        const QString jobB = show(b).value(QStringLiteral("slurm_job")).toString();
        QVERIFY(!jobA.isEmpty() && !jobB.isEmpty());
        const auto acctA = sacctOf(jobA), acctB = sacctOf(jobB);
        QCOMPARE(acctB.value(QStringLiteral("State")), QStringLiteral("COMPLETED"));
        QVERIFY2(secs(acctB.value(QStringLiteral("Submit"))) < secs(acctA.value(QStringLiteral("End"))),
                qPrintable(acctB.value(QStringLiteral("Submit")) + u' ' + acctA.value(QStringLiteral("End"))));
        QVERIFY(secs(acctB.value(QStringLiteral("Start"))) >= secs(acctA.value(QStringLiteral("End"))));
        qInfo("afterok: b submitted %llds before a ended, started %llds after a ended",
                secs(acctA.value(QStringLiteral("End"))) - secs(acctB.value(QStringLiteral("Submit"))),
                secs(acctB.value(QStringLiteral("Start"))) - secs(acctA.value(QStringLiteral("End"))));
        QCOMPARE(ctl({QStringLiteral("logs"), QString::number(b)}).out, QStringLiteral("from-a\n"));
        const Outcome text = ctl({QStringLiteral("show"), QString::number(b)});
        QVERIFY2(text.out.contains(QStringLiteral("submitted behind Slurm job(s) %1 (afterok)").arg(jobA)),
                qPrintable(text.out));
    }

    // Its upstream failing: Slurm cancels the queued step (kill-on-invalid-
    // dep), which never ran; the step is skipped naming it, the pipeline failed.
    void pipelineStepBehindAFailedUpstreamIsSkipped()
    {
        const qint64 id = submitPipeline(QStringLiteral("dep-fail.yaml"),
                QStringLiteral("name: dep-fail\nsteps:\n"
                               "  - name: a\n    workdir: /tmp\n    command: \"sleep 3; exit 3\"\n"
                               "  - name: b\n    depends: [a]\n    workdir: /tmp\n    command: \"echo never\"\n"));
        QVERIFY(id > 0);
        bool queuedBehind = false;
        const QJsonObject ended = followPipeline(
                id,
                [&](const QJsonObject& p) {
                    const qint64 b = stepOf(p, QStringLiteral("b")).value(QStringLiteral("run")).toInteger();
                    queuedBehind |= b > 0
                            && show(b).value(QStringLiteral("pending_reason"))
                                       .toString()
                                       .contains(QStringLiteral("Dependency"));
                },
                180000);
        QCOMPARE(ended.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QVERIFY(queuedBehind);
        QCOMPARE(
                stepOf(ended, QStringLiteral("a")).value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        const QJsonObject stepB = stepOf(ended, QStringLiteral("b"));
        QCOMPARE(stepB.value(QStringLiteral("state")).toString(), QStringLiteral("skipped"));
        QCOMPARE(stepB.value(QStringLiteral("reason")).toString(), QStringLiteral("not run: step 'a' failed"));
        const qint64 b = stepB.value(QStringLiteral("run")).toInteger();
        const QString jobB = show(b).value(QStringLiteral("slurm_job")).toString();
        QVERIFY(!jobB.isEmpty());
        const auto acct = sacctOf(jobB);
        QVERIFY2(acct.value(QStringLiteral("State")).startsWith(QStringLiteral("CANCELLED")),
                qPrintable(acct.value(QStringLiteral("State"))));
        QCOMPARE(acct.value(QStringLiteral("ElapsedRaw")), QStringLiteral("0")); // never ran
        QCOMPARE(ctl({QStringLiteral("logs"), QString::number(b)}).out, QString());
    }

    // A step that takes its upstream's output param is submitted only once
    // its upstream ended, as on any node: never behind a Slurm dependency.
    void pipelineStepTakingAnOutputWaitsForTheEnd()
    {
        const QString work = m_tmp.filePath(QStringLiteral("dep-out"));
        QVERIFY(QDir().mkpath(work));
        const qint64 id = submitPipeline(QStringLiteral("dep-out.yaml"),
                QStringLiteral("name: dep-out\nsteps:\n"
                               "  - name: a\n    workdir: %1\n    command: \"sleep 3; echo 7 > v.txt\"\n"
                               "    outputs: {params: {v: v.txt}}\n"
                               "  - name: b\n    workdir: %1\n    command: \"echo got {{steps.a.outputs.v}}\"\n")
                        .arg(work));
        QVERIFY(id > 0);
        QStringList seen; // b's pending reasons, and whether a had ended when b had a run
        bool bBeforeAEnded = false;
        const QJsonObject ended = followPipeline(
                id,
                [&](const QJsonObject& p) {
                    const qint64 b = stepOf(p, QStringLiteral("b")).value(QStringLiteral("run")).toInteger();
                    if (b <= 0)
                        return;
                    bBeforeAEnded
                            |= stepOf(p, QStringLiteral("a")).value(QStringLiteral("state")).toString() == u"running";
                    seen << show(b).value(QStringLiteral("pending_reason")).toString();
                },
                180000);
        QCOMPARE(ended.value(QStringLiteral("state")).toString(), QStringLiteral("succeeded"));
        QVERIFY(!bBeforeAEnded);
        QVERIFY2(!seen.join(u'|').contains(QStringLiteral("Dependency")), qPrintable(seen.join(u'|')));
        const qint64 a = stepOf(ended, QStringLiteral("a")).value(QStringLiteral("run")).toInteger();
        const qint64 b = stepOf(ended, QStringLiteral("b")).value(QStringLiteral("run")).toInteger();
        QCOMPARE(ctl({QStringLiteral("logs"), QString::number(b)}).out, QStringLiteral("got 7\n"));
        const auto acctA = sacctOf(show(a).value(QStringLiteral("slurm_job")).toString());
        const auto acctB = sacctOf(show(b).value(QStringLiteral("slurm_job")).toString());
        QVERIFY2(secs(acctB.value(QStringLiteral("Submit"))) >= secs(acctA.value(QStringLiteral("End"))),
                qPrintable(acctB.value(QStringLiteral("Submit")) + u' ' + acctA.value(QStringLiteral("End"))));
        qInfo("after a's end: b submitted %llds after a ended, started %llds after a ended",
                secs(acctB.value(QStringLiteral("Submit"))) - secs(acctA.value(QStringLiteral("End"))),
                secs(acctB.value(QStringLiteral("Start"))) - secs(acctA.value(QStringLiteral("End"))));
        const Outcome text = ctl({QStringLiteral("show"), QString::number(b)});
        QVERIFY2(!text.out.contains(QStringLiteral("afterok")), qPrintable(text.out));
    }

    void cleanupTestCase()
    {
        if (!m_db.isEmpty())
            ctl({QStringLiteral("daemon"), QStringLiteral("stop")});
        if (m_up)
            m_sshd.stop();
    }
};

QTEST_GUILESS_MAIN(TestSlurmNodes)
#include "TestSlurmNodes.moc"
