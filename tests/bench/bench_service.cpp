// trainyardd's goals (issue #22), through real processes: the built
// trainyardd and trainyardctl, the real agent, a REAL OpenSSH sshd on
// 127.0.0.2 (tests/integration/SshdFixture), real runs. Nothing is faked.
//
// 1. submit -> running through the service: a service::ServiceClient in this
//    process sends `submit` for `command: [true]` pinned to a node and times
//    until the service's `state` event says Running; one run at a time (each
//    waited to its end), --runs N. On the local node and on the SSH node ws1
//    (stored in the database like `trainyardctl node add` does). Baseline in
//    the same run: a fresh `ssh -F <fixture config> ws1 true` (median of
//    --ssh-true N), and posix_spawn-free `true` through QProcess here.
// 2. a line on the node -> at a client of the service: a run prints its
//    CLOCK_REALTIME in ns every 20 ms (--lines N lines); the client watches
//    its console through the service; latency = arrival - stamp (one
//    machine, one clock). Median, p99, max.
// 3. 200 submits from 20 concurrent trainyardctl processes (10 each, one
//    after another), against one service: wall time from the first start to
//    the last exit; checked: 200 runs recorded, each once. Baseline: the same
//    200 processes running `trainyardctl validate` of the same spec (process
//    start and spec parsing, no service).
//
// Usage: bench_service [--runs N (50)] [--ssh-true N (10)] [--lines N (200)]
// Needs root and /usr/sbin/sshd for the SSH part (skipped without).
#include "trainyard/Version.h"
#include "tests/integration/SshdFixture.h"

#include "core/service/ServiceClient.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <time.h>
#include <vector>

using namespace ty;

namespace {

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

qint64 realtimeNs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Waits for the watched run's state `want` (or its end); returns whether it came.
bool waitForState(service::ServiceClient& svc, RunId id, RunState want, int timeoutMs)
{
    QEventLoop loop;
    bool got = false;
    auto c = QObject::connect(&svc, &service::ServiceClient::runStateChanged, &loop, [&](const RunRecord& r) {
        if (r.id != id)
            return;
        if (r.state == want || isTerminal(r.state)) {
            got = r.state == want;
            loop.quit();
        }
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    QObject::disconnect(c);
    return got;
}

// submit -> Running through the service, one at a time; milliseconds.
std::vector<double> startLatency(service::ServiceClient& svc, const QString& node, const QString& workdir, int runs)
{
    std::vector<double> ms;
    const QString yaml = QStringLiteral("name: start\nworkdir: %1\ncommand: [true]\n").arg(workdir);
    for (int i = 0; i < runs; ++i) {
        QElapsedTimer t;
        QEventLoop loop;
        RunId id = 0;
        double took = -1;
        bool ended = false;
        auto c = QObject::connect(&svc, &service::ServiceClient::runStateChanged, &loop, [&](const RunRecord& r) {
            if (r.id != id)
                return;
            if (took < 0 && (r.state == RunState::Running || isTerminal(r.state)))
                took = double(t.nsecsElapsed()) / 1e6;
            if (isTerminal(r.state)) {
                ended = true;
                loop.quit();
            }
        });
        t.start();
        const auto submitted = svc.call(QStringLiteral("submit"),
                {{QStringLiteral("spec"),
                         QJsonObject{{QStringLiteral("yaml"), yaml},
                                 {QStringLiteral("origin"), QStringLiteral("bench")},
                                 {QStringLiteral("base_dir"), workdir}}},
                        {QStringLiteral("node"), node}});
        if (!submitted) {
            std::fprintf(stderr, "submit failed: %s\n", qPrintable(submitted.error().message));
            break;
        }
        id = submitted->value(QStringLiteral("runs")).toArray().first().toInteger();
        (void)svc.call(QStringLiteral("watch"), {{QStringLiteral("run"), id}});
        QTimer::singleShot(30000, &loop, &QEventLoop::quit);
        if (!ended)
            loop.exec();
        QObject::disconnect(c);
        if (took >= 0)
            ms.push_back(took);
    }
    return ms;
}

void printLatency(const char* what, const std::vector<double>& ms)
{
    std::printf("  %-44s n=%3zu  median %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", what, ms.size(), percentile(ms, 0.5),
            percentile(ms, 0.99), ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()));
}

double runProcesses(const QString& program, const QList<QStringList>& argsPerProcess, const QProcessEnvironment& env)
{
    std::vector<std::unique_ptr<QProcess>> ps;
    QElapsedTimer t;
    t.start();
    for (const QStringList& args : argsPerProcess) {
        auto p = std::make_unique<QProcess>();
        p->setProcessEnvironment(env);
        p->start(program, args);
        ps.push_back(std::move(p));
    }
    for (auto& p : ps)
        p->waitForFinished(120000);
    return double(t.nsecsElapsed()) / 1e6;
}

} // namespace

int main(int argc, char* argv[])
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_service v1\n");
    std::fflush(stdout);
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // each figure as it is measured
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationVersion(QStringLiteral(TRAINYARD_VERSION));
    const QStringList args = app.arguments();
    const auto opt = [&](const char* name, int fallback) {
        const qsizetype at = args.indexOf(QString::fromLatin1(name));
        return at >= 0 && at + 1 < args.size() ? args.at(at + 1).toInt() : fallback;
    };
    const int runs = opt("--runs", 50), sshTrue = opt("--ssh-true", 10), lines = opt("--lines", 200);

    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("db/trainyard.db"));
    const QString work = dir.filePath(QStringLiteral("work"));
    QDir().mkpath(work);
    qputenv("TRAINYARD_DAEMON", TRAINYARDD_PATH);
    qputenv("TRAINYARD_AGENT", TRAINYARD_AGENT_PATH);
    qputenv("TRAINYARD_AGENT_STATE", dir.filePath(QStringLiteral("agent-state")).toUtf8());
    qputenv("TRAINYARD_DAEMON_IDLE", "30");

    test::SshdFixture sshd;
    QString sshError;
    const bool ssh = test::SshdFixture::skipReason().isEmpty() && sshd.start(&sshError);
    if (ssh) {
        qputenv("TRAINYARD_SSH_CONFIG", sshd.clientConfig().toUtf8());
        // ws1's host key known, as after `trainyardctl node add`.
        QFile pub(sshd.hostKeyPub());
        pub.open(QIODevice::ReadOnly);
        const QList<QByteArray> key = pub.readAll().trimmed().split(' ');
        QFile known(sshd.knownHosts());
        known.open(QIODevice::Append);
        known.write("[127.0.0.2]:" + QByteArray::number(sshd.port()) + ' ' + key.value(0) + ' ' + key.value(1) + '\n');
        known.close();
        auto store = ResultStore::open(db);
        if (!store) {
            std::fprintf(stderr, "%s\n", qPrintable(store.error().message));
            return 1;
        }
        // The node's agent behind a wrapper with its own state folder, as a workstation's.
        const QString wrapper = dir.filePath(QStringLiteral("agent-ws1.sh"));
        QFile f(wrapper);
        f.open(QIODevice::WriteOnly);
        f.write(QStringLiteral("#!/bin/sh\nexec env TRAINYARD_AGENT_STATE='%1' TRAINYARD_AGENT_NO_NVML=1 '%2' \"$@\"\n")
                        .arg(dir.filePath(QStringLiteral("ws1-state")), QStringLiteral(TRAINYARD_AGENT_PATH))
                        .toUtf8());
        f.close();
        f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        (void)(*store)->addNode(NodeRecord{
                QStringLiteral("ws1"), QStringLiteral("ws1"), {}, 0, {}, wrapper, QDateTime::currentDateTimeUtc(), {}});
    } else {
        std::printf(
                "SSH part skipped: %s\n", qPrintable(sshError.isEmpty() ? test::SshdFixture::skipReason() : sshError));
    }

    auto svc = service::ServiceClient::connectTo(db, service::ServiceClient::Start::IfNeeded);
    if (!svc) {
        std::fprintf(stderr, "%s\n", qPrintable(svc.error().message));
        return 1;
    }
    std::printf("bench_service: trainyardd pid %lld, %d runs per figure\n\n", (*svc)->servicePid(), runs);

    // 1. submit -> Running.
    std::printf("1. submit -> running through the service (one run at a time)\n");
    (void)startLatency(**svc, QStringLiteral("local"), work, 3); // warm: the node connects
    const auto local = startLatency(**svc, QStringLiteral("local"), work, runs);
    printLatency("local node", local);
    if (ssh) {
        (void)startLatency(**svc, QStringLiteral("ws1"), work, 3);
        const auto remote = startLatency(**svc, QStringLiteral("ws1"), work, runs);
        printLatency("ws1 over loopback SSH", remote);
        std::vector<double> fresh;
        for (int i = 0; i < sshTrue; ++i) {
            QElapsedTimer t;
            t.start();
            QProcess::execute(QStringLiteral("ssh"),
                    {QStringLiteral("-F"), sshd.clientConfig(), QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
                            QStringLiteral("ws1"), QStringLiteral("true")});
            fresh.push_back(double(t.nsecsElapsed()) / 1e6);
        }
        printLatency("baseline: fresh `ssh ws1 true`", fresh);
        std::printf("  ratio: service submit->running over SSH / fresh ssh true = %.3f (goal: median <= 20 ms)\n",
                percentile(remote, 0.5) / std::max(1e-9, percentile(fresh, 0.5)));
    }

    // 2. A line on the node -> at this client.
    std::printf("\n2. a line written on the node -> received by a client of the service\n");
    {
        const QString yaml = QStringLiteral(
                "name: stamps\nworkdir: %1\ncommand: \"for i in $(seq %2); do date +%s%N; sleep 0.02; done\"\n")
                                     .arg(work)
                                     .arg(lines);
        const auto submitted = (*svc)->call(QStringLiteral("submit"),
                {{QStringLiteral("spec"),
                        QJsonObject{{QStringLiteral("yaml"), yaml}, {QStringLiteral("origin"), QStringLiteral("bench")},
                                {QStringLiteral("base_dir"), work}}}});
        const RunId id = submitted ? submitted->value(QStringLiteral("runs")).toArray().first().toInteger() : 0;
        std::vector<double> ms;
        QByteArray partial;
        auto c = QObject::connect(
                svc->get(), &service::ServiceClient::consoleReceived, [&](RunId run, qint64, const QByteArray& bytes) {
                    if (run != id)
                        return;
                    const qint64 now = realtimeNs();
                    partial += bytes;
                    qsizetype nl;
                    while ((nl = partial.indexOf('\n')) >= 0) {
                        const qint64 stamp = partial.left(nl).toLongLong();
                        partial.remove(0, nl + 1);
                        if (stamp > 0)
                            ms.push_back(double(now - stamp) / 1e6);
                    }
                });
        (void)(*svc)->call(QStringLiteral("watch"), {{QStringLiteral("run"), id}, {QStringLiteral("console"), true}});
        waitForState(**svc, id, RunState::Succeeded, 120000);
        QObject::disconnect(c);
        printLatency("local node, 20 ms apart", ms);
        std::printf("  goal: under 250 ms\n");
    }

    // 3. 200 submits from 20 concurrent clients.
    std::printf("\n3. 200 submits from 20 concurrent trainyardctl processes (10 each, one after another)\n");
    {
        const QString spec = dir.filePath(QStringLiteral("many.yaml"));
        QFile f(spec);
        f.open(QIODevice::WriteOnly);
        f.write(QStringLiteral(
                "name: many\nworkdir: %1\nparams: {c: '0'}\ncommand: \"true\"\nresources: {cpus: 1000}\n")
                        .arg(work)
                        .toUtf8());
        f.close();
        // The runs need more CPUs than the node has: they stay queued (the
        // figure is the service's recording, not 200 processes starting).
        const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        QList<QStringList> submitters, validators;
        for (int c = 0; c < 20; ++c) {
            submitters << QStringList{QStringLiteral("-c"),
                    QStringLiteral(
                            "for j in 0 1 2 3 4 5 6 7 8 9; do '%1' --db '%2' submit '%3' --param c=%4 >/dev/null 2>&1; done")
                            .arg(QStringLiteral(TRAINYARD_CTL_PATH), db, spec)
                            .arg(c)};
            validators << QStringList{QStringLiteral("-c"),
                    QStringLiteral("for j in 0 1 2 3 4 5 6 7 8 9; do '%1' validate '%2' >/dev/null 2>&1; done")
                            .arg(QStringLiteral(TRAINYARD_CTL_PATH), spec)};
        }
        const double submitMs = runProcesses(QStringLiteral("/bin/sh"), submitters, env);
        const double validateMs = runProcesses(QStringLiteral("/bin/sh"), validators, env);
        auto store = ResultStore::open(db);
        int recorded = 0;
        if (store)
            for (const RunRecord& r : (*store)->runs())
                recorded += r.name == u"many";
        std::printf("  200 submits:   %8.1f ms   (%d runs recorded)\n", submitMs, recorded);
        std::printf("  baseline, 200 `trainyardctl validate`: %8.1f ms\n", validateMs);
        std::printf("  ratio submit/validate = %.2f (goal: all recorded within 5 s)\n",
                submitMs / std::max(1e-9, validateMs));
    }
    (void)(*svc)->call(QStringLiteral("stop"));
    return 0;
}
