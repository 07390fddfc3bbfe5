// Slurm runs (PROTOCOL.md "Slurm", revisions 4 and 5; issue #26): the real
// trainyard-agent on a real Slurm cluster, spoken to over stdio in the
// protocol's own bytes (not through AgentClient): slurm_info, a batch job's
// console tailed while Slurm writes it, `slurm` events as it goes from
// pending to running, its end as Slurm records it (COMPLETED, FAILED,
// CANCELLED), a refused submission, a held job's reason, a second agent
// on the same state directory agreeing with the first; and job arrays
// (`start_array`): each task its own run, pending per task, cancelled alone,
// bad requests creating nothing.
//
// The cluster: $TRAINYARD_TEST_SLURM_CONF, else the slurm_cluster CTest
// fixture's (SLURM_CONF of its env.sh, TRAINYARD_SLURM_ENV; tests/slurm):
// then a cluster that does not answer fails the test. Else $SLURM_CONF (a
// developer's cluster: skipped when it does not answer). Skipped without
// sbatch on PATH, or with none of them. Every job submitted is scancel'ed
// at the end.

#include "tests/support/TestSupport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <memory>
#include <optional>

using namespace ty;

namespace {

using test::waitUntil;

// SLURM_CONF of the slurm_cluster fixture's env.sh, empty when the fixture
// did not start a cluster.
QString fixtureSlurmConf()
{
#ifdef TRAINYARD_SLURM_ENV
    return test::slurmConfOf(QStringLiteral(TRAINYARD_SLURM_ENV));
#else
    return {};
#endif
}

constexpr int kJobStartMs = 120000; // a busy shared cluster may keep a job waiting a while
constexpr int kReplyMs = 30000;

// One trainyard-agent process and everything it sent: messages in order,
// console bytes per run (checked to arrive at contiguous offsets).
class RawAgent {
public:
    RawAgent(const QString& stateDir, const QProcessEnvironment& env)
    {
        m_proc.setProcessEnvironment(env);
        m_proc.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QObject::connect(&m_proc, &QProcess::readyReadStandardOutput, &m_proc, [this] { read(); });
        m_proc.start(test::agentPath(), {QStringLiteral("--stdio"), QStringLiteral("--state-dir"), stateDir});
    }
    ~RawAgent()
    {
        m_proc.closeWriteChannel(); // stdin EOF: the agent ends, runs go on
        if (!m_proc.waitForFinished(5000))
            m_proc.kill();
        m_proc.waitForFinished(2000);
    }

    bool started()
    {
        return waitUntil([this] { return !m_messages.isEmpty(); }, 10000);
    }
    QJsonObject hello() const { return m_messages.value(0); }

    int send(QJsonObject request)
    {
        const int id = ++m_nextId;
        request.insert(QStringLiteral("id"), id);
        m_proc.write(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n');
        return id;
    }
    // The reply to `request` (null object: none in time).
    QJsonObject call(const QJsonObject& request, int timeoutMs = kReplyMs)
    {
        const int id = send(request);
        return waitFor(
                [id](const QJsonObject& m) {
                    return m.value(QStringLiteral("type")) == QStringLiteral("reply")
                            && m.value(QStringLiteral("id")).toInt() == id;
                },
                timeoutMs);
    }
    // The first message (from the start) that `pred` accepts.
    QJsonObject waitFor(const std::function<bool(const QJsonObject&)>& pred, int timeoutMs = kReplyMs)
    {
        QJsonObject found;
        waitUntil(
                [&] {
                    for (const QJsonObject& m : std::as_const(m_messages))
                        if (pred(m)) {
                            found = m;
                            return true;
                        }
                    return false;
                },
                timeoutMs);
        return found;
    }
    // Events of `type` about `run`, in order.
    QList<QJsonObject> events(const QString& type, const QString& run) const
    {
        QList<QJsonObject> out;
        for (const QJsonObject& m : m_messages)
            if (m.value(QStringLiteral("type")).toString() == type && m.value(QStringLiteral("run")).toString() == run)
                out.append(m);
        return out;
    }
    QByteArray output(const QString& run) const { return m_output.value(run); }
    QStringList offsetErrors() const { return m_offsetErrors; }

private:
    void read()
    {
        m_buf += m_proc.readAllStandardOutput();
        for (;;) {
            if (m_payload) {
                if (m_buf.size() < m_payloadLen)
                    return;
                const QString run = m_payload->value(QStringLiteral("run")).toString();
                const qint64 offset = m_payload->value(QStringLiteral("offset")).toInteger();
                if (offset != m_nextOffset.value(run, 0))
                    m_offsetErrors << QStringLiteral("%1: output at %2, expected %3")
                                              .arg(run)
                                              .arg(offset)
                                              .arg(m_nextOffset.value(run, 0));
                m_output[run] += m_buf.left(m_payloadLen);
                m_nextOffset[run] = offset + m_payloadLen;
                m_buf.remove(0, m_payloadLen);
                m_messages.append(*m_payload);
                m_payload.reset();
                continue;
            }
            const qsizetype nl = m_buf.indexOf('\n');
            if (nl < 0)
                return;
            const QJsonObject m = QJsonDocument::fromJson(m_buf.left(nl)).object();
            m_buf.remove(0, nl + 1);
            if (m.contains(QStringLiteral("len"))) {
                m_payload = m;
                m_payloadLen = m.value(QStringLiteral("len")).toInteger();
                continue;
            }
            m_messages.append(m);
        }
    }

    QProcess m_proc;
    QByteArray m_buf;
    std::optional<QJsonObject> m_payload;
    qint64 m_payloadLen = 0;
    QList<QJsonObject> m_messages;
    QMap<QString, QByteArray> m_output;
    QMap<QString, qint64> m_nextOffset;
    QStringList m_offsetErrors;
    int m_nextId = 0;
};

QJsonObject obj(std::initializer_list<std::pair<QString, QJsonValue>> fields)
{
    QJsonObject o;
    for (const auto& [k, v] : fields)
        o.insert(k, v);
    return o;
}

bool isReply(const QJsonObject& m)
{
    return m.value(QStringLiteral("type")) == QStringLiteral("reply");
}

QString text(const QJsonObject& o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

} // namespace

class TestAgentSlurm final : public QObject {
    Q_OBJECT

    QString m_conf;
    QProcessEnvironment m_env;
    QTemporaryDir m_state, m_work;
    std::unique_ptr<RawAgent> m_agent;
    QStringList m_jobs; // submitted: scancel'ed at the end
    int m_counter = 0;

    QString newRun(const char* stem) { return QStringLiteral("%1-%2").arg(QLatin1StringView(stem)).arg(++m_counter); }

    test::ProcessOutcome slurm(const QString& program, const QStringList& args)
    {
        return test::runProcess(program, args, m_env, 30000);
    }

    // Submits `script` as run `run`; the reply.
    QJsonObject submit(RawAgent& agent, const QString& run, const QString& script, const QStringList& sbatch = {},
            const QJsonObject& env = {})
    {
        const QJsonObject reply = agent.call(obj({{QStringLiteral("op"), QStringLiteral("start")},
                {QStringLiteral("run"), run}, {QStringLiteral("workdir"), m_work.path()}, {QStringLiteral("env"), env},
                {QStringLiteral("slurm"),
                        obj({{QStringLiteral("script"), script},
                                {QStringLiteral("sbatch"), QJsonArray::fromStringList(sbatch)}})}}));
        if (const QString job = reply.value(QStringLiteral("slurm_job")).toString(); !job.isEmpty())
            m_jobs << job;
        return reply;
    }
    // One entry of start_array's `runs`.
    static QJsonObject arrayRun(
            const QString& run, const QString& workdir, const QJsonObject& env, const QString& script)
    {
        return obj({{QStringLiteral("run"), run}, {QStringLiteral("workdir"), workdir}, {QStringLiteral("env"), env},
                {QStringLiteral("script"), script}});
    }
    // Submits `runs` as one job array; the reply.
    QJsonObject submitArray(RawAgent& agent, const QJsonArray& runs, const QStringList& sbatch, int maxConcurrent = 0)
    {
        QJsonObject request = obj({{QStringLiteral("op"), QStringLiteral("start_array")},
                {QStringLiteral("runs"), runs}, {QStringLiteral("sbatch"), QJsonArray::fromStringList(sbatch)}});
        if (maxConcurrent > 0)
            request.insert(QStringLiteral("max_concurrent"), maxConcurrent);
        const QJsonObject reply = agent.call(request);
        if (const QString job = reply.value(QStringLiteral("slurm_job")).toString(); !job.isEmpty())
            m_jobs << job;
        return reply;
    }
    QJsonObject status(RawAgent& agent, const QString& run)
    {
        return agent.call(obj({{QStringLiteral("op"), QStringLiteral("status")}, {QStringLiteral("run"), run}}));
    }
    QJsonObject exited(RawAgent& agent, const QString& run, int timeoutMs = kJobStartMs)
    {
        return agent.waitFor(
                [run](const QJsonObject& m) {
                    return m.value(QStringLiteral("type")) == QStringLiteral("exited")
                            && m.value(QStringLiteral("run")).toString() == run;
                },
                timeoutMs);
    }
    // Waits until the run's status says `state`; the last status seen.
    QJsonObject waitForState(RawAgent& agent, const QString& run, const QString& state, int timeoutMs = kJobStartMs)
    {
        QJsonObject st;
        waitUntil(
                [&] {
                    st = status(agent, run);
                    if (st.value(QStringLiteral("state")).toString() == state)
                        return true;
                    QTest::qWait(200);
                    return false;
                },
                timeoutMs);
        return st;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString fromFixture = qEnvironmentVariable("TRAINYARD_TEST_SLURM_CONF");
        if (fromFixture.isEmpty())
            fromFixture = fixtureSlurmConf();
        m_conf = fromFixture.isEmpty() ? qEnvironmentVariable("SLURM_CONF") : fromFixture;
        if (QStandardPaths::findExecutable(QStringLiteral("sbatch")).isEmpty())
            QSKIP("sbatch is not on PATH (no Slurm client here)");
        if (m_conf.isEmpty() || !QFileInfo::exists(m_conf))
            QSKIP("no Slurm cluster (the slurm_cluster fixture started none; TRAINYARD_TEST_SLURM_CONF or SLURM_CONF "
                  "names none)");
        m_env = QProcessEnvironment::systemEnvironment();
        m_env.insert(QStringLiteral("SLURM_CONF"), m_conf);
        m_env.insert(QStringLiteral("TRAINYARD_AGENT_SLURM_POLL_MS"), QStringLiteral("200"));
        // What a user's shell may carry: the agent must not let it change squeue's answers.
        m_env.insert(QStringLiteral("SQUEUE_FORMAT"), QStringLiteral("%.5i %t"));
        m_env.insert(QStringLiteral("SLURM_TIME_FORMAT"), QStringLiteral("relative"));
        const auto ping
                = slurm(QStringLiteral("sinfo"), {QStringLiteral("-h"), QStringLiteral("-o"), QStringLiteral("%a")});
        if (ping.exitCode != 0) {
            const QString why = QStringLiteral("the Slurm cluster of %1 does not answer: %2")
                                        .arg(m_conf, QString::fromLocal8Bit(ping.err.trimmed()));
            if (!fromFixture.isEmpty())
                QFAIL(qPrintable(why));
            QSKIP(qPrintable(why));
        }
        QVERIFY(m_state.isValid() && m_work.isValid());
        m_agent = std::make_unique<RawAgent>(m_state.path(), m_env);
        QVERIFY(m_agent->started());
        QCOMPARE(m_agent->hello().value(QStringLiteral("revision")).toInt(), 8);
    }

    void cleanupTestCase()
    {
        if (!m_jobs.isEmpty())
            slurm(QStringLiteral("scancel"), m_jobs);
        m_agent.reset();
    }

    void slurmInfoNamesThePartitions()
    {
        const QJsonObject r = m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("slurm_info")}}));
        QVERIFY2(r.value(QStringLiteral("ok")).toBool(), qPrintable(text(r)));
        QVERIFY2(QRegularExpression(QStringLiteral("^\\d+\\.\\d+\\.\\d+$"))
                         .match(r.value(QStringLiteral("version")).toString())
                         .hasMatch(),
                qPrintable(text(r)));
        QJsonObject debug;
        for (const QJsonValue& p : r.value(QStringLiteral("partitions")).toArray())
            if (p.toObject().value(QStringLiteral("name")) == QStringLiteral("debug"))
                debug = p.toObject();
        QVERIFY2(!debug.isEmpty(), qPrintable(text(r)));
        QCOMPARE(debug.value(QStringLiteral("cpus")).toInt(), 2);
        QCOMPARE(debug.value(QStringLiteral("state")).toString(), QStringLiteral("up"));
        QVERIFY(debug.value(QStringLiteral("default")).toBool()); // Default=YES
        QVERIFY(debug.value(QStringLiteral("memory_mib")).toInteger() > 0);
        QVERIFY(!debug.value(QStringLiteral("nodes")).toArray().isEmpty());
        QVERIFY(debug.value(QStringLiteral("max_time_s")).isNull()); // MaxTime=INFINITE
    }

    void slurmInfoWithoutSinfoSaysNoSlurm()
    {
        QProcessEnvironment env = m_env;
        env.insert(QStringLiteral("PATH"), m_work.path()); // nothing there
        RawAgent agent(m_state.path(), env);
        QVERIFY(agent.started());
        const QJsonObject r = agent.call(obj({{QStringLiteral("op"), QStringLiteral("slurm_info")}}));
        QVERIFY(isReply(r));
        QVERIFY(!r.value(QStringLiteral("ok")).toBool());
        QCOMPARE(r.value(QStringLiteral("code")).toString(), QStringLiteral("no_slurm"));
        QVERIFY2(r.value(QStringLiteral("error")).toString().contains(QStringLiteral("sinfo")), qPrintable(text(r)));
    }

    void jobRunsToCompletionWithItsConsole()
    {
        // Held, so that it is seen pending before it runs: released below.
        const QString run = newRun("lines");
        const QJsonObject started = submit(*m_agent, run,
                QStringLiteral("#!/bin/bash\n"
                               "#SBATCH --error=stray-%j.err\n" // the agent's --error wins: stderr stays in the console
                               "echo \"line 1\"\n"
                               "echo \"env $GREETING $TRAINYARD_RUN_ID\"\n"
                               "echo \"to stderr\" >&2\n"
                               "echo \"pwd $PWD\"\n"
                               "sleep 1\n"
                               "echo \"line 3\"\n"),
                {QStringLiteral("--hold")}, obj({{QStringLiteral("GREETING"), QStringLiteral("hello")}}));
        QVERIFY2(started.value(QStringLiteral("ok")).toBool(), qPrintable(text(started)));
        const QString job = started.value(QStringLiteral("slurm_job")).toString();
        QVERIFY(QRegularExpression(QStringLiteral("^\\d+$")).match(job).hasMatch());
        QCOMPARE(started.value(QStringLiteral("pid")).toInt(), 0);
        QCOMPARE(started.value(QStringLiteral("console")).toString(),
                m_state.path() + QStringLiteral("/runs/") + run + QStringLiteral("/console.log"));
        QVERIFY(started.value(QStringLiteral("started_ms")).toInteger() > 0);

        // Tailed from before the job has written anything.
        const QJsonObject tail = m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("tail")},
                {QStringLiteral("run"), run}, {QStringLiteral("offset"), 0}, {QStringLiteral("follow"), true}}));
        QVERIFY2(tail.value(QStringLiteral("ok")).toBool(), qPrintable(text(tail)));
        QCOMPARE(tail.value(QStringLiteral("size")).toInt(), 0);

        const QJsonObject pending = waitForState(*m_agent, run, QStringLiteral("pending"));
        QCOMPARE(pending.value(QStringLiteral("slurm_job")).toString(), job);
        QCOMPARE(pending.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("PENDING"));
        QVERIFY(m_agent->waitFor([&](const QJsonObject& m) {
                           return m.value(QStringLiteral("type")) == QStringLiteral("slurm")
                                   && m.value(QStringLiteral("run")).toString() == run
                                   && m.value(QStringLiteral("state")) == QStringLiteral("pending")
                                   && m.contains(QStringLiteral("reason"));
                       })
                        .contains(QStringLiteral("reason")));

        QCOMPARE(slurm(QStringLiteral("scontrol"), {QStringLiteral("release"), job}).exitCode, 0);
        const QJsonObject end = exited(*m_agent, run);
        QVERIFY2(!end.isEmpty(), qPrintable(text(status(*m_agent, run))));
        QCOMPARE(end.value(QStringLiteral("exit_code")).toInt(-1), 0);
        QVERIFY(!end.contains(QStringLiteral("signal")));
        QCOMPARE(end.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("COMPLETED"));
        QCOMPARE(end.value(QStringLiteral("state")).toString(), QStringLiteral("exited"));
        QCOMPARE(end.value(QStringLiteral("cancelled")).toBool(true), false);
        QVERIFY(!end.value(QStringLiteral("slurm_nodes")).toString().isEmpty());
        QVERIFY(end.value(QStringLiteral("finished_ms")).toInteger()
                >= end.value(QStringLiteral("running_ms")).toInteger());

        const QByteArray expected = "line 1\nenv hello " + run.toUtf8() + "\nto stderr\npwd "
                + QDir(m_work.path()).canonicalPath().toUtf8() + "\nline 3\n";
        const QJsonObject eof = m_agent->waitFor([&](const QJsonObject& m) {
            return m.value(QStringLiteral("type")) == QStringLiteral("eof") && m.value(QStringLiteral("run")) == run;
        });
        QCOMPARE(eof.value(QStringLiteral("offset")).toInteger(), qint64(expected.size()));
        QCOMPARE(m_agent->output(run), expected);
        QVERIFY2(m_agent->offsetErrors().isEmpty(), qPrintable(m_agent->offsetErrors().join(u'\n')));

        // `slurm` events: pending, then running (with where and since when), never exited.
        const auto events = m_agent->events(QStringLiteral("slurm"), run);
        QStringList states;
        for (const QJsonObject& e : events)
            if (states.isEmpty() || states.last() != e.value(QStringLiteral("state")).toString())
                states << e.value(QStringLiteral("state")).toString();
        QVERIFY2(states.size() >= 2 && states[0] == QStringLiteral("pending") && states[1] == QStringLiteral("running"),
                qPrintable(states.join(u',')));
        QVERIFY(!states.contains(QStringLiteral("exited")));
        for (const QJsonObject& e : events)
            if (e.value(QStringLiteral("state")) == QStringLiteral("running")) {
                QVERIFY(!e.value(QStringLiteral("slurm_nodes")).toString().isEmpty());
                QVERIFY(e.value(QStringLiteral("running_ms")).toInteger() > 0);
            }
        QCOMPARE(m_agent->events(QStringLiteral("exited"), run).size(), 1);

        // The record stays: status and list say the same.
        const QJsonObject after = status(*m_agent, run);
        QCOMPARE(after.value(QStringLiteral("exit_code")).toInt(-1), 0);
        QCOMPARE(after.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("COMPLETED"));
        QCOMPARE(after.value(QStringLiteral("console_size")).toInteger(), qint64(expected.size()));
    }

    void failingJobEndsFailedWithItsExitCode()
    {
        const QString run = newRun("exit3");
        const QJsonObject started = submit(*m_agent, run, QStringLiteral("#!/bin/bash\necho bye\nexit 3\n"));
        QVERIFY2(started.value(QStringLiteral("ok")).toBool(), qPrintable(text(started)));
        const QJsonObject end = exited(*m_agent, run);
        QVERIFY2(!end.isEmpty(), qPrintable(text(status(*m_agent, run))));
        QCOMPARE(end.value(QStringLiteral("exit_code")).toInt(-1), 3);
        QCOMPARE(end.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("FAILED"));
        QCOMPARE(end.value(QStringLiteral("cancelled")).toBool(true), false);
        const QJsonObject tail = m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("tail")},
                {QStringLiteral("run"), run}, {QStringLiteral("offset"), 0}, {QStringLiteral("follow"), true}}));
        QVERIFY(tail.value(QStringLiteral("ok")).toBool());
        QVERIFY(!m_agent->waitFor([&](const QJsonObject& m) {
                            return m.value(QStringLiteral("type")) == QStringLiteral("eof")
                                    && m.value(QStringLiteral("run")) == run;
                        })
                         .isEmpty());
        QCOMPARE(m_agent->output(run), QByteArray("bye\n"));
    }

    void cancelledWhileRunning()
    {
        const QString run = newRun("cancel");
        const QJsonObject started
                = submit(*m_agent, run, QStringLiteral("#!/bin/bash\necho started\nexec sleep 300\n"));
        QVERIFY2(started.value(QStringLiteral("ok")).toBool(), qPrintable(text(started)));
        const QJsonObject running = waitForState(*m_agent, run, QStringLiteral("running"));
        QCOMPARE(running.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        QCOMPARE(running.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("RUNNING"));
        QVERIFY(waitUntil([&] {
            return status(*m_agent, run).value(QStringLiteral("console_size")).toInt() == int(sizeof "started\n") - 1;
        }));
        const QJsonObject cancel
                = m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("cancel")}, {QStringLiteral("run"), run}}));
        QVERIFY2(cancel.value(QStringLiteral("ok")).toBool(), qPrintable(text(cancel)));
        const QJsonObject end = exited(*m_agent, run, 60000);
        QVERIFY2(!end.isEmpty(), qPrintable(text(status(*m_agent, run))));
        QCOMPARE(end.value(QStringLiteral("cancelled")).toBool(), true);
        QCOMPARE(end.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("CANCELLED"));
        QVERIFY(!end.value(QStringLiteral("lost")).toBool());
        // Cancelling it again is an error: it has exited.
        const QJsonObject again
                = m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("cancel")}, {QStringLiteral("run"), run}}));
        QVERIFY(isReply(again));
        QVERIFY(!again.value(QStringLiteral("ok")).toBool());
        QVERIFY2(again.value(QStringLiteral("error")).toString().contains(QStringLiteral("exited")),
                qPrintable(text(again)));
    }

    void refusedSubmissionQuotesSbatch()
    {
        const QString run = newRun("refused");
        const QJsonObject r = submit(*m_agent, run, QStringLiteral("#!/bin/bash\necho never\n"),
                {QStringLiteral("--partition=no-such-partition")});
        QVERIFY(isReply(r));
        QVERIFY(!r.value(QStringLiteral("ok")).toBool());
        const QString error = r.value(QStringLiteral("error")).toString();
        QVERIFY2(error.contains(QStringLiteral("sbatch"))
                        && error.contains(QStringLiteral("invalid partition"), Qt::CaseInsensitive)
                        && error.contains(run),
                qPrintable(error));
        QVERIFY(!QFileInfo::exists(m_state.path() + QStringLiteral("/runs/") + run));
        QVERIFY(!status(*m_agent, run).value(QStringLiteral("ok")).toBool());
        // Options the agent sets itself, and gpus, are refused before sbatch.
        for (const QString& option :
                {QStringLiteral("--output=/tmp/x"), QStringLiteral("-e"), QStringLiteral("--array=1-3")}) {
            const QJsonObject o = submit(*m_agent, newRun("option"), QStringLiteral("#!/bin/bash\n"), {option});
            QVERIFY2(!o.value(QStringLiteral("ok")).toBool()
                            && o.value(QStringLiteral("error")).toString().contains(option),
                    qPrintable(text(o)));
        }
    }

    void heldJobIsPendingWithItsReasonAndASecondAgentAgrees()
    {
        const QString run = newRun("held");
        const QJsonObject started
                = submit(*m_agent, run, QStringLiteral("#!/bin/bash\necho never\n"), {QStringLiteral("--hold")});
        QVERIFY2(started.value(QStringLiteral("ok")).toBool(), qPrintable(text(started)));
        const QString job = started.value(QStringLiteral("slurm_job")).toString();
        QJsonObject st;
        QVERIFY(waitUntil([&] {
            st = status(*m_agent, run);
            return st.contains(QStringLiteral("reason"));
        }));
        QCOMPARE(st.value(QStringLiteral("state")).toString(), QStringLiteral("pending"));
        QCOMPARE(st.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("PENDING"));
        QCOMPARE(st.value(QStringLiteral("reason")).toString(), QStringLiteral("JobHeldUser"));
        QCOMPARE(st.value(QStringLiteral("partition")).toString(), QStringLiteral("debug"));
        QVERIFY(st.value(QStringLiteral("jobs_ahead")).isDouble());
        QVERIFY(!st.contains(QStringLiteral("running_ms")));

        // Its console is not there until Slurm starts the job: a tail waits at 0.
        QVERIFY(QFile::remove(st.value(QStringLiteral("console")).toString()));
        const QJsonObject tail = m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("tail")},
                {QStringLiteral("run"), run}, {QStringLiteral("offset"), 0}, {QStringLiteral("follow"), true}}));
        QVERIFY2(tail.value(QStringLiteral("ok")).toBool(), qPrintable(text(tail)));
        QCOMPARE(tail.value(QStringLiteral("size")).toInt(), 0);

        // A second agent on the same state directory: the same runs, the same states.
        RawAgent second(m_state.path(), m_env);
        QVERIFY(second.started());
        const auto list = [](RawAgent& a) {
            QMap<QString, QJsonObject> runs;
            for (const QJsonValue& v : a.call(obj({{QStringLiteral("op"), QStringLiteral("list")}}))
                                               .value(QStringLiteral("runs"))
                                               .toArray())
                runs.insert(v.toObject().value(QStringLiteral("run")).toString(), v.toObject());
            return runs;
        };
        const auto mine = list(*m_agent);
        const auto theirs = list(second);
        QCOMPARE(theirs.keys(), mine.keys());
        QVERIFY(mine.contains(run));
        for (const QString& r : mine.keys())
            for (const char* key :
                    {"state", "slurm_job", "slurm_state", "exit_code", "cancelled", "reason", "finished_ms"})
                QVERIFY2(mine[r].value(QLatin1StringView(key)) == theirs[r].value(QLatin1StringView(key)),
                        qPrintable(QStringLiteral("%1 %2: %3 vs %4")
                                           .arg(r, QLatin1StringView(key), text(mine[r]), text(theirs[r]))));
        QCOMPARE(status(second, run).value(QStringLiteral("reason")).toString(), QStringLiteral("JobHeldUser"));
        // Nothing changed, but the second agent's client hears of the job once
        // (a client that reconnects learns what happened while it was away).
        const QJsonObject told = second.waitFor([&](const QJsonObject& m) {
            return m.value(QStringLiteral("type")) == QStringLiteral("slurm") && m.value(QStringLiteral("run")) == run;
        });
        QCOMPARE(told.value(QStringLiteral("state")).toString(), QStringLiteral("pending"));
        QCOMPARE(told.value(QStringLiteral("reason")).toString(), QStringLiteral("JobHeldUser"));

        // Cancelled through the first: both announce its end, from the one exit.json.
        const QJsonObject cancel
                = m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("cancel")}, {QStringLiteral("run"), run}}));
        QVERIFY2(cancel.value(QStringLiteral("ok")).toBool(), qPrintable(text(cancel)));
        const QJsonObject end = exited(*m_agent, run, 60000);
        QVERIFY2(!end.isEmpty(), qPrintable(text(status(*m_agent, run))));
        QCOMPARE(end.value(QStringLiteral("cancelled")).toBool(), true);
        QCOMPARE(end.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("CANCELLED"));
        QVERIFY(!end.contains(QStringLiteral("slurm_nodes"))); // it never ran
        const QJsonObject theirEnd = exited(second, run, 30000);
        QCOMPARE(theirEnd.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("CANCELLED"));
        QCOMPARE(theirEnd.value(QStringLiteral("finished_ms")), end.value(QStringLiteral("finished_ms")));
        // The tail of a job that never ran ends too.
        QVERIFY(!m_agent->waitFor([&](const QJsonObject& m) {
                            return m.value(QStringLiteral("type")) == QStringLiteral("eof")
                                    && m.value(QStringLiteral("run")) == run;
                        })
                         .isEmpty());
        QCOMPARE(slurm(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-j"), job}).out.trimmed(),
                QByteArray());
    }

    // ---- Job arrays (revision 5) --------------------------------------------

    void arrayTasksRunTheirOwnRunsInTheirOwnWorkdirs()
    {
        // Three runs, one at a time (max_concurrent 1): each its own
        // command, workdir and environment; task 1 fails with 3.
        const QString base = newRun("sweep");
        QStringList runs, workdirs;
        const QStringList greetings
                = {QStringLiteral("hello 0"), QStringLiteral("it's \"1\""), QStringLiteral("$HOME `2` \\n")};
        QJsonArray request;
        for (int i = 0; i < 3; ++i) {
            runs << QStringLiteral("%1-t%2").arg(base).arg(i);
            workdirs << m_work.path() + QStringLiteral("/") + runs[i] + QStringLiteral(" dir");
            QVERIFY(QDir().mkpath(workdirs[i]));
            const QString script = QStringLiteral("#!/bin/bash\n"
                                                  "echo \"task %1 run $TRAINYARD_RUN_ID greeting $GREETING\"\n"
                                                  "echo \"pwd $PWD\"\n"
                                                  "%2\n")
                                           .arg(i)
                                           .arg(i == 0 ? QStringLiteral("sleep 6") // the others wait meanwhile
                                                           : i == 1 ? QStringLiteral("exit 3")
                                                                    : QStringLiteral("true"));
            request.append(arrayRun(runs[i], workdirs[i], obj({{QStringLiteral("GREETING"), greetings[i]}}), script));
        }
        const QJsonObject started = submitArray(*m_agent, request, {QStringLiteral("--time=5")}, 1);
        QVERIFY2(started.value(QStringLiteral("ok")).toBool(), qPrintable(text(started)));
        const QString job = started.value(QStringLiteral("slurm_job")).toString();
        QVERIFY2(QRegularExpression(QStringLiteral("^\\d+$")).match(job).hasMatch(), qPrintable(text(started)));
        const QJsonArray replies = started.value(QStringLiteral("runs")).toArray();
        QCOMPARE(replies.size(), 3);
        for (int i = 0; i < 3; ++i) {
            const QJsonObject r = replies[i].toObject();
            QCOMPARE(r.value(QStringLiteral("run")).toString(), runs[i]);
            QCOMPARE(r.value(QStringLiteral("slurm_job")).toString(), QStringLiteral("%1_%2").arg(job).arg(i));
            QCOMPARE(r.value(QStringLiteral("console")).toString(),
                    m_state.path() + QStringLiteral("/runs/") + runs[i] + QStringLiteral("/console.log"));
            QCOMPARE(r.value(QStringLiteral("pid")).toInt(-1), 0);
            QVERIFY(r.value(QStringLiteral("started_ms")).toInteger() > 0);
            // run.json names the task.
            QFile rj(m_state.path() + QStringLiteral("/runs/") + runs[i] + QStringLiteral("/run.json"));
            QVERIFY(rj.open(QIODevice::ReadOnly));
            const QJsonObject record = QJsonDocument::fromJson(rj.readAll()).object();
            QCOMPARE(record.value(QStringLiteral("slurm_job")).toString(), QStringLiteral("%1_%2").arg(job).arg(i));
            QCOMPARE(record.value(QStringLiteral("array_job")).toString(), job);
            QCOMPARE(record.value(QStringLiteral("array_task")).toInt(-1), i);
        }
        // The array's directory: its script and the links Slurm writes through.
        const QString arrayDir = m_state.path() + QStringLiteral("/slurm-arrays/") + runs[0];
        QVERIFY(QFileInfo(arrayDir + QStringLiteral("/array.sbatch")).isExecutable());
        for (int i = 0; i < 3; ++i)
            QCOMPARE(QFileInfo(arrayDir + QStringLiteral("/%1.log").arg(i)).symLinkTarget(),
                    replies[i].toObject().value(QStringLiteral("console")).toString());
        for (const QString& run : runs) {
            const QJsonObject tail = m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("tail")},
                    {QStringLiteral("run"), run}, {QStringLiteral("offset"), 0}, {QStringLiteral("follow"), true}}));
            QVERIFY2(tail.value(QStringLiteral("ok")).toBool(), qPrintable(text(tail)));
        }

        // While task 0 runs, the others wait for it: each pending, with its reason.
        const QJsonObject running = waitForState(*m_agent, runs[0], QStringLiteral("running"));
        QVERIFY2(running.value(QStringLiteral("state")) == QStringLiteral("running"), qPrintable(text(running)));
        for (int i = 1; i < 3; ++i) {
            // (Slurm gives the reason once it has scheduled task 0.)
            QJsonObject st;
            waitUntil([&] {
                st = status(*m_agent, runs[i]);
                return st.value(QStringLiteral("reason")) == QStringLiteral("JobArrayTaskLimit");
            });
            QCOMPARE(st.value(QStringLiteral("slurm_job")).toString(), QStringLiteral("%1_%2").arg(job).arg(i));
            QVERIFY2(st.value(QStringLiteral("state")) == QStringLiteral("pending")
                            && st.value(QStringLiteral("reason")) == QStringLiteral("JobArrayTaskLimit"),
                    qPrintable(text(st)));
            QCOMPARE(st.value(QStringLiteral("partition")).toString(), QStringLiteral("debug"));
            // squeue's row of the task (-r), not scontrol's record: its place in the queue is known.
            QVERIFY2(st.value(QStringLiteral("jobs_ahead")).isDouble(), qPrintable(text(st)));
        }
        QCOMPARE(status(*m_agent, runs[0]).value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        QVERIFY(!m_agent->events(QStringLiteral("slurm"), runs[2]).isEmpty());

        const int codes[] = {0, 3, 0};
        const char* states[] = {"COMPLETED", "FAILED", "COMPLETED"};
        for (int i = 0; i < 3; ++i) {
            const QJsonObject end = exited(*m_agent, runs[i]);
            QVERIFY2(!end.isEmpty(), qPrintable(text(status(*m_agent, runs[i]))));
            // The whole record and what sacct says, should it ever differ (it
            // did twice in full local suites at stop 42: task 1 ended 0).
            const QByteArray said = text(end).toUtf8() + "\nsacct: "
                    + slurm(QStringLiteral("sacct"),
                            {QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-j"),
                                    QStringLiteral("%1_%2").arg(job).arg(i), QStringLiteral("-o"),
                                    QStringLiteral("JobID,JobIDRaw,State,ExitCode,Start,End")})
                              .out;
            QVERIFY2(end.value(QStringLiteral("exit_code")).toInt(-1) == codes[i], said.constData());
            QVERIFY2(end.value(QStringLiteral("slurm_state")).toString() == QLatin1StringView(states[i]),
                    said.constData());
            QVERIFY(!end.value(QStringLiteral("slurm_nodes")).toString().isEmpty());
            QVERIFY(!m_agent->waitFor([&](const QJsonObject& m) {
                                return m.value(QStringLiteral("type")) == QStringLiteral("eof")
                                        && m.value(QStringLiteral("run")) == runs[i];
                            })
                             .isEmpty());
            const QByteArray expected = QStringLiteral("task %1 run %2 greeting %3\npwd %4\n")
                                                .arg(i)
                                                .arg(runs[i], greetings[i], workdirs[i])
                                                .toUtf8();
            QCOMPARE(m_agent->output(runs[i]), expected);
        }
        // One at a time: task 1 started when task 0 had ended.
        QVERIFY(status(*m_agent, runs[1]).value(QStringLiteral("running_ms")).toInteger()
                >= status(*m_agent, runs[0]).value(QStringLiteral("finished_ms")).toInteger());
        QVERIFY(m_agent->offsetErrors().isEmpty());
        // Every task has ended: the array's directory goes.
        QVERIFY2(waitUntil([&] { return !QFileInfo::exists(arrayDir); }, 30000), qPrintable(arrayDir));
    }

    void arrayTaskCancelledLeavesTheOthers()
    {
        const QString base = newRun("cancels");
        QStringList runs;
        QJsonArray request;
        for (int i = 0; i < 3; ++i) {
            runs << QStringLiteral("%1-t%2").arg(base).arg(i);
            request.append(arrayRun(runs[i], m_work.path(), {},
                    QStringLiteral("#!/bin/bash\necho \"started $TRAINYARD_RUN_ID\"\nexec sleep 300\n")));
        }
        const QJsonObject started = submitArray(*m_agent, request, {}, 1);
        QVERIFY2(started.value(QStringLiteral("ok")).toBool(), qPrintable(text(started)));
        const QString job = started.value(QStringLiteral("slurm_job")).toString();
        const auto queued = [&] {
            QStringList ids
                    = QString::fromUtf8(slurm(QStringLiteral("squeue"),
                                                {QStringLiteral("-h"), QStringLiteral("-r"), QStringLiteral("-j"), job,
                                                        QStringLiteral("-o"), QStringLiteral("%i")})
                                                .out)
                              .split(u'\n', Qt::SkipEmptyParts);
            ids.sort();
            return ids;
        };
        QCOMPARE(waitForState(*m_agent, runs[0], QStringLiteral("running")).value(QStringLiteral("state")).toString(),
                QStringLiteral("running"));
        QCOMPARE(status(*m_agent, runs[1]).value(QStringLiteral("state")).toString(), QStringLiteral("pending"));

        // Task 1, pending: it alone goes (Slurm keeps no record of it).
        const QJsonObject cancel = m_agent->call(
                obj({{QStringLiteral("op"), QStringLiteral("cancel")}, {QStringLiteral("run"), runs[1]}}));
        QVERIFY2(cancel.value(QStringLiteral("ok")).toBool(), qPrintable(text(cancel)));
        const QJsonObject end1 = exited(*m_agent, runs[1], 30000);
        QVERIFY2(!end1.isEmpty(), qPrintable(text(status(*m_agent, runs[1]))));
        QCOMPARE(end1.value(QStringLiteral("cancelled")).toBool(), true);
        QCOMPARE(end1.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("CANCELLED"));
        QVERIFY(!end1.value(QStringLiteral("lost")).toBool());
        QVERIFY(!end1.contains(QStringLiteral("slurm_nodes"))); // it never ran
        QCOMPARE(queued(), QStringList({job + QStringLiteral("_0"), job + QStringLiteral("_2")}));
        QCOMPARE(status(*m_agent, runs[0]).value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        QCOMPARE(status(*m_agent, runs[2]).value(QStringLiteral("state")).toString(), QStringLiteral("pending"));
        QVERIFY(m_agent->events(QStringLiteral("exited"), runs[0]).isEmpty());

        // Task 0, running: task 2 then runs.
        QVERIFY(m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("cancel")}, {QStringLiteral("run"), runs[0]}}))
                        .value(QStringLiteral("ok"))
                        .toBool());
        const QJsonObject end0 = exited(*m_agent, runs[0], 60000);
        QVERIFY2(!end0.isEmpty(), qPrintable(text(status(*m_agent, runs[0]))));
        QCOMPARE(end0.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("CANCELLED"));
        QVERIFY(!end0.value(QStringLiteral("slurm_nodes")).toString().isEmpty());
        QCOMPARE(waitForState(*m_agent, runs[2], QStringLiteral("running")).value(QStringLiteral("state")).toString(),
                QStringLiteral("running"));
        const QString arrayDir = m_state.path() + QStringLiteral("/slurm-arrays/") + runs[0];
        QVERIFY(QFileInfo::exists(arrayDir)); // task 2 still writes through it
        QVERIFY(waitUntil([&] {
            return status(*m_agent, runs[2]).value(QStringLiteral("console_size")).toInt()
                    == QStringLiteral("started %1\n").arg(runs[2]).size();
        }));
        QVERIFY(m_agent->call(obj({{QStringLiteral("op"), QStringLiteral("cancel")}, {QStringLiteral("run"), runs[2]}}))
                        .value(QStringLiteral("ok"))
                        .toBool());
        QCOMPARE(exited(*m_agent, runs[2], 60000).value(QStringLiteral("slurm_state")).toString(),
                QStringLiteral("CANCELLED"));
        QVERIFY(waitUntil([&] { return !QFileInfo::exists(arrayDir); }, 30000));
        QCOMPARE(queued(), QStringList());
    }

    void badArrayRequestsCreateNothing()
    {
        const auto refused
                = [&](const QJsonArray& runs, const QStringList& sbatch, const QStringList& says) -> QString {
            const QJsonObject r = submitArray(*m_agent, runs, sbatch);
            if (!isReply(r) || r.value(QStringLiteral("ok")).toBool())
                return QString(QStringLiteral("not refused: ") + text(r));
            const QString error = r.value(QStringLiteral("error")).toString();
            for (const QString& s : says)
                if (!error.contains(s))
                    return QStringLiteral("error without \"%1\": %2").arg(s, error);
            for (const QJsonValue& v : runs) {
                const QString run = v.toObject().value(QStringLiteral("run")).toString();
                if (run != QStringLiteral("exists")
                        && QFileInfo::exists(m_state.path() + QStringLiteral("/runs/") + run))
                    return QStringLiteral("run directory of %1 created: %2").arg(run, error);
            }
            const QString first = runs[0].toObject().value(QStringLiteral("run")).toString();
            if (QFileInfo::exists(m_state.path() + QStringLiteral("/slurm-arrays/") + first))
                return QString(QStringLiteral("array directory created: ") + error);
            if (!slurm(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-n"), first}).out.isEmpty())
                return QString(QStringLiteral("job queued: ") + error);
            return QString();
        };
        const QString script = QStringLiteral("#!/bin/bash\necho never\n");
        const auto three = [&](const char* stem) {
            const QString base = newRun(stem);
            QJsonArray runs;
            for (int i = 0; i < 3; ++i)
                runs.append(arrayRun(QStringLiteral("%1-t%2").arg(base).arg(i), m_work.path(), {}, script));
            return runs;
        };
        const auto with = [](QJsonArray runs, int i, const QString& key, const QJsonValue& value) {
            QJsonObject o = runs[i].toObject();
            o.insert(key, value);
            runs[i] = o;
            return runs;
        };
        const auto name = [](const QJsonArray& runs, int i) {
            return QStringLiteral("runs[%1] (run %2)")
                    .arg(i)
                    .arg(runs[i].toObject().value(QStringLiteral("run")).toString());
        };
        QString e;

        QJsonArray runs = with(
                three("badenv"), 1, QStringLiteral("env"), obj({{QStringLiteral("BAD-NAME"), QStringLiteral("x")}}));
        e = refused(runs, {}, {name(runs, 1), QStringLiteral("BAD-NAME")});
        QVERIFY2(e.isEmpty(), qPrintable(e));

        const QString missing = m_work.path() + QStringLiteral("/missing");
        runs = with(three("noworkdir"), 1, QStringLiteral("workdir"), missing);
        e = refused(runs, {}, {QString(name(runs, 1) + QStringLiteral(": workdir ") + missing)});
        QVERIFY2(e.isEmpty(), qPrintable(e));

        runs = with(three("noscript"), 2, QStringLiteral("script"), QString());
        e = refused(runs, {}, {name(runs, 2), QStringLiteral("script")});
        QVERIFY2(e.isEmpty(), qPrintable(e));

        for (const QString& option : {QStringLiteral("--chdir=/tmp"), QStringLiteral("--array=0-1"),
                     QStringLiteral("-o"), QStringLiteral("--job-name=x")}) {
            e = refused(three("option"), {QStringLiteral("--time=5"), option}, {option});
            QVERIFY2(e.isEmpty(), qPrintable(e));
        }

        runs = three("twice");
        runs = with(runs, 2, QStringLiteral("run"), runs[0].toObject().value(QStringLiteral("run")));
        e = refused(runs, {}, {name(runs, 2), QStringLiteral("runs[0]")});
        QVERIFY2(e.isEmpty(), qPrintable(e));

        // A run that exists on the node is left as it is.
        QVERIFY(QDir().mkpath(m_state.path() + QStringLiteral("/runs/exists")));
        QVERIFY(QFile(m_state.path() + QStringLiteral("/runs/exists/keep")).open(QIODevice::WriteOnly));
        runs = with(three("existing"), 1, QStringLiteral("run"), QStringLiteral("exists"));
        e = refused(runs, {}, {name(runs, 1), QStringLiteral("already exists")});
        QVERIFY2(e.isEmpty(), qPrintable(e));
        QVERIFY(QFileInfo::exists(m_state.path() + QStringLiteral("/runs/exists/keep")));
        QVERIFY(QDir(m_state.path() + QStringLiteral("/runs/exists")).removeRecursively());

        const QJsonObject none = submitArray(*m_agent, QJsonArray(), {});
        QVERIFY2(isReply(none) && !none.value(QStringLiteral("ok")).toBool()
                        && none.value(QStringLiteral("error")).toString().contains(QStringLiteral("runs")),
                qPrintable(text(none)));

        // sbatch refuses: its files are removed again, nothing is queued.
        runs = three("badpartition");
        e = refused(runs, {QStringLiteral("--partition=no-such-partition")},
                {QStringLiteral("sbatch"), QStringLiteral("invalid partition")});
        QVERIFY2(e.isEmpty(), qPrintable(e));
    }

    void jobThatEndedUnwatchedIsSettledByTheNextAgent()
    {
        // No agent watches while the job runs, ends and is forgotten by
        // slurmctld (MinJobAge after its end; it purges about once a
        // minute): then `squeue -j <id>` fails, scontrol knows nothing, and
        // only accounting (where it is on) remembers. The next agent says
        // what sacct says, else the run is lost after the grace.
        QTemporaryDir state; // of its own: the test's main agent would settle it too soon
        QVERIFY(state.isValid());
        const QString run = newRun("unwatched");
        QString job;
        {
            RawAgent first(state.path(), m_env);
            QVERIFY(first.started());
            const QJsonObject started = submit(first, run, QStringLiteral("#!/bin/bash\necho done\n"));
            QVERIFY2(started.value(QStringLiteral("ok")).toBool(), qPrintable(text(started)));
            job = started.value(QStringLiteral("slurm_job")).toString();
        }
        const auto forgotten = [&] {
            return slurm(QStringLiteral("scontrol"),
                    {QStringLiteral("-o"), QStringLiteral("show"), QStringLiteral("job"), job})
                    .err.contains("Invalid job id");
        };
        QVERIFY2(waitUntil(
                         [&] {
                             if (forgotten())
                                 return true;
                             QTest::qWait(1000);
                             return false;
                         },
                         300000),
                qPrintable(QStringLiteral("slurmctld still knows job %1").arg(job)));
        const bool accounting
                = slurm(QStringLiteral("sacct"), {QStringLiteral("-n"), QStringLiteral("-j"), job}).exitCode == 0;

        QProcessEnvironment env = m_env;
        env.insert(QStringLiteral("TRAINYARD_AGENT_SLURM_GRACE_MS"), QStringLiteral("1500"));
        RawAgent next(state.path(), env);
        QVERIFY(next.started());
        const QJsonObject end = exited(next, run, 60000);
        QVERIFY2(!end.isEmpty(), qPrintable(text(status(next, run))));
        if (accounting) {
            QCOMPARE(end.value(QStringLiteral("exit_code")).toInt(-1), 0);
            QCOMPARE(end.value(QStringLiteral("slurm_state")).toString(), QStringLiteral("COMPLETED"));
            QVERIFY(!end.value(QStringLiteral("lost")).toBool());
        } else {
            QVERIFY2(end.value(QStringLiteral("lost")).toBool(), qPrintable(text(end)));
            QVERIFY2(end.value(QStringLiteral("error")).toString().contains(job), qPrintable(text(end)));
            QVERIFY(!end.contains(QStringLiteral("exit_code")) && !end.contains(QStringLiteral("signal")));
            // Missed first: `ending` for the grace, not exited at once.
            QVERIFY(!next.events(QStringLiteral("slurm"), run).isEmpty());
            QCOMPARE(next.events(QStringLiteral("slurm"), run).last().value(QStringLiteral("state")).toString(),
                    QStringLiteral("ending"));
        }
        // Its console is whole, and a tail ends.
        const QJsonObject tail = next.call(obj({{QStringLiteral("op"), QStringLiteral("tail")},
                {QStringLiteral("run"), run}, {QStringLiteral("offset"), 0}, {QStringLiteral("follow"), true}}));
        QVERIFY(tail.value(QStringLiteral("ok")).toBool());
        QVERIFY(!next.waitFor([&](const QJsonObject& m) {
                         return m.value(QStringLiteral("type")) == QStringLiteral("eof")
                                 && m.value(QStringLiteral("run")) == run;
                     }).isEmpty());
        QCOMPARE(next.output(run), QByteArray("done\n"));
        // Any agent now reads the same end.
        RawAgent third(state.path(), m_env);
        QVERIFY(third.started());
        const QJsonObject again = status(third, run);
        QCOMPARE(again.value(QStringLiteral("state")).toString(), QStringLiteral("exited"));
        QCOMPARE(again.value(QStringLiteral("lost")).toBool(), !accounting);
    }
};

QTEST_GUILESS_MAIN(TestAgentSlurm)
#include "TestAgentSlurm.moc"
