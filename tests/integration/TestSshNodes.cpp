// SSH nodes against a real OpenSSH sshd on 127.0.0.2 / 127.0.0.3 (no mocks):
// host keys (unknown, accepted, changed), agent deployment over SFTP, runs
// through the engine on one and on two nodes, the connection killed mid-run
// and a run ending while the node is unreachable (byte-identical console,
// nothing twice), cancel leaving no process, and heartbeats finding a frozen
// agent. Skipped (QSKIP) unless root with /usr/sbin/sshd, as in CI.
#include "trainyard/Version.h"
#include "SshdFixture.h"
#include "tests/support/TestSupport.h"

#include "core/nodes/AgentClient.h"
#include "core/nodes/AgentDeploy.h"
#include "core/nodes/HostKeyPolicy.h"
#include "core/nodes/NodeHealth.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ty;

namespace {

struct Connected {
    std::unique_ptr<AgentClient> client;
    SshAgentTransport* transport = nullptr;
    QString error; // why it did not become ready
};

struct FileId {
    ino_t inode = 0;
    qint64 mtimeNs = 0;
    bool operator==(const FileId&) const = default;
};

FileId fileId(const QString& path)
{
    struct stat st { };
    if (::stat(path.toLocal8Bit().constData(), &st) != 0)
        return {};
    return {st.st_ino, qint64(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

} // namespace

class TestSshNodes final : public QObject {
    Q_OBJECT

    test::SshdFixture m_sshd;
    QTemporaryDir m_tmp;
    bool m_up = false;

    QString stateDir(const QString& node) const { return m_tmp.filePath(QStringLiteral("state-") + node); }
    QString dbPath() const { return m_tmp.filePath(QStringLiteral("db/trainyard.db")); }

    SshNodeOptions options(const QString& alias, bool deploy, bool accept = true) const
    {
        SshNodeOptions o = m_sshd.nodeOptions(alias, stateDir(alias));
        o.acceptNewHostKey = accept;
        if (deploy) {
            o.remoteAgentPath.clear();
            o.deployAgentFrom = test::agentPath();
            o.remoteCacheDir = m_tmp.filePath(QStringLiteral("remote-cache"));
        }
        return o;
    }

    static Connected connectTo(const SshNodeOptions& o)
    {
        Connected c;
        auto t = std::make_unique<SshAgentTransport>(o);
        c.transport = t.get();
        c.client = std::make_unique<AgentClient>(std::move(t));
        QSignalSpy ready(c.client.get(), &AgentClient::ready);
        QSignalSpy lost(c.client.get(), &AgentClient::disconnected);
        c.client->connectToAgent();
        QElapsedTimer timer;
        timer.start();
        while (ready.isEmpty() && lost.isEmpty() && timer.elapsed() < 20000)
            QTest::qWait(10);
        if (!lost.isEmpty())
            c.error = lost.front().front().toString();
        else if (ready.isEmpty())
            c.error = QStringLiteral("timeout");
        return c;
    }

    static JobSpec spec(const QString& yaml)
    {
        auto s = parseJobSpec(yaml, QStringLiteral("test.yaml"), QDir::tempPath());
        if (!s)
            qFatal("%s", qPrintable(s.error().message));
        return *s;
    }

    // `db`: the store's path (default dbPath()), which names its runs on the nodes.
    std::unique_ptr<RunEngine> makeEngine(ResultStore* store, const QStringList& nodes, const QString& db = {})
    {
        auto engine = std::make_unique<RunEngine>(store, db.isEmpty() ? dbPath() : db);
        engine->setReconnectDelays(200, 800);
        for (const QString& n : nodes)
            engine->addNode(n, std::make_unique<SshAgentTransport>(options(n, true)));
        engine->acquireIngestion();
        return engine;
    }

    // The node's console of a run == the local copy, and the stored offset is its size.
    void verifyConsole(ResultStore& store, RunId id, const QString& node)
    {
        store.flush();
        const RunRecord run = *store.run(id);
        const QByteArray remote = test::readFile(
                stateDir(node) + QStringLiteral("/runs/") + run.agentRunId + QStringLiteral("/console.log"));
        QVERIFY(!remote.isEmpty());
        QCOMPARE(test::readFile(run.consolePath), remote);
        QCOMPARE(run.consoleOffset, qint64(remote.size()));
    }

private Q_SLOTS:
    void initTestCase()
    {
        TY_START_SSHD_OR_SKIP(&m_sshd);
        m_up = true;
    }

    void unknownHostRefusedThenAccepted()
    {
        QVERIFY(!QFileInfo::exists(m_sshd.knownHosts())); // a missing file is an unknown host
        bool ok = false;
        const QList<QByteArray> keygen
                = test::runTool(QStringLiteral("ssh-keygen"), {QStringLiteral("-lf"), m_sshd.hostKeyPub()}, &ok)
                          .split(' ');
        QVERIFY(ok && keygen.size() > 1);
        const QString fingerprint = QString::fromLatin1(keygen[1]);
        QVERIFY(fingerprint.startsWith(QStringLiteral("SHA256:")));

        Connected refused = connectTo(options(QStringLiteral("ws1"), false, /*accept=*/false));
        QVERIFY2(refused.error.contains(fingerprint), qPrintable(refused.error));
        QVERIFY2(refused.error.contains(QStringLiteral("not known")), qPrintable(refused.error));
        QCOMPARE(refused.transport->rejectedFingerprint(), fingerprint);
        QVERIFY(!QFileInfo::exists(m_sshd.knownHosts()) || test::readFile(m_sshd.knownHosts()).isEmpty());

        Connected accepted = connectTo(options(QStringLiteral("ws1"), false, /*accept=*/true));
        QVERIFY2(accepted.error.isEmpty(), qPrintable(accepted.error));
        QCOMPARE(accepted.client->hello().stateDir, stateDir(QStringLiteral("ws1")));
        const QByteArray known = test::readFile(m_sshd.knownHosts());
        const QByteArray expected
                = QByteArray("[127.0.0.2]:") + QByteArray::number(m_sshd.port()) + QByteArray(" ssh-ed25519 ");
        QVERIFY2(known.startsWith(expected), known.constData());

        // Known now: no acceptance needed, nothing appended.
        Connected again = connectTo(options(QStringLiteral("ws1"), false, /*accept=*/false));
        QVERIFY2(again.error.isEmpty(), qPrintable(again.error));
        QCOMPARE(test::readFile(m_sshd.knownHosts()), known);
        // ws2 (127.0.0.3) is a host of its own.
        Connected ws2 = connectTo(options(QStringLiteral("ws2"), false, /*accept=*/true));
        QVERIFY2(ws2.error.isEmpty(), qPrintable(ws2.error));
        QCOMPARE(test::readFile(m_sshd.knownHosts()).count('\n'), 2);
    }

    void hashedHostKeyWhenTheConfigSaysSo()
    {
        // HashKnownHosts as OpenSSH resolves it for the host (first value
        // wins, Host blocks apply): a hashed entry for `hashed`, a plain one
        // for `plain`; libssh and OpenSSH both find them afterwards.
        const QByteArray port = QByteArray::number(m_sshd.port());
        const QString known = m_tmp.filePath(QStringLiteral("hash/known_hosts")); // its directory does not exist yet
        const QString config = m_tmp.filePath(QStringLiteral("hash_config"));
        {
            QFile f(config);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("Host hashed\n  HostName 127.0.0.2\n  HashKnownHosts yes\n"
                    "Host plain\n  HostName 127.0.0.3\n"
                    "Host *\n  Port "
                    + port + "\n  User root\n  IdentityFile " + QFile::encodeName(m_sshd.dir())
                    + "/id_ed25519\n  UserKnownHostsFile " + QFile::encodeName(known) + "\n  HashKnownHosts no\n");
        }
        const QList<QByteArray> hostKey = test::readFile(m_sshd.hostKeyPub()).trimmed().split(' ');
        QVERIFY(hostKey.size() >= 2);
        const QByteArray keyFields = hostKey[0] + ' ' + hostKey[1];

        SshNodeOptions o = options(QStringLiteral("hashed"), false, /*accept=*/true);
        o.configFile = config;
        Connected c = connectTo(o);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        const QByteArray hashed = test::readFile(known);
        QCOMPARE(hashed.count('\n'), 1);
        QVERIFY2(hashed.startsWith("|1|") && !hashed.contains("127.0.0.2"), hashed.constData());
        QVERIFY2(hashed.trimmed().endsWith(QByteArray(" " + keyFields)), hashed.constData());
        bool ok = false;
        const QByteArray found = test::runTool(QStringLiteral("ssh-keygen"),
                {QStringLiteral("-F"), QStringLiteral("[127.0.0.2]:") + QString::fromLatin1(port), QStringLiteral("-f"),
                        known},
                &ok);
        QVERIFY2(ok && found.contains("found: line 1"), found.constData());
        // OpenSSH's client accepts the host by that entry alone.
        const QByteArray viaSsh = test::runTool(QStringLiteral("ssh"),
                {QStringLiteral("-F"), config, QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
                        QStringLiteral("-o"), QStringLiteral("StrictHostKeyChecking=yes"), QStringLiteral("hashed"),
                        QStringLiteral("echo"), QStringLiteral("hashed-ok")},
                &ok);
        QVERIFY2(ok && viaSsh.contains("hashed-ok"), viaSsh.constData());
        // libssh finds it: known now, nothing asked, nothing appended.
        o.acceptNewHostKey = false;
        c = connectTo(o);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(test::readFile(known), hashed);

        SshNodeOptions p = options(QStringLiteral("plain"), false, /*accept=*/true);
        p.configFile = config;
        c = connectTo(p);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        const QByteArray both = test::readFile(known);
        QCOMPARE(both.count('\n'), 2);
        QVERIFY(both.startsWith(hashed));
        QCOMPARE(both.mid(hashed.size()), QByteArray("[127.0.0.3]:" + port + ' ' + keyFields + '\n'));
        p.acceptNewHostKey = false;
        c = connectTo(p);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(test::readFile(known), both);
    }

    void hostKeyAliasNamesTheKnownHostsEntry()
    {
        // HostKeyAlias: ssh looks the host key up and records it under the
        // alias, as it is and without a port (OpenSSH's sshconnect.c), so the
        // entry Trainyard writes on acceptance must be the one ssh then finds,
        // and what stands under the host's own name does not count.
        const QByteArray port = QByteArray::number(m_sshd.port());
        const QString dir = m_tmp.filePath(QStringLiteral("alias"));
        const QString known = dir + QStringLiteral("/known_hosts");
        const QString hashedKnown = dir + QStringLiteral("/known_hosts_hashed");
        const QString changedKnown = dir + QStringLiteral("/known_hosts_changed");
        const QString config = dir + QStringLiteral("/ssh_config");
        const QString cliKnown = dir + QStringLiteral("/known_hosts_cli");
        test::writeFile(config,
                "Host aliasedcli\n  HostKeyAlias gpubox-cli\n  UserKnownHostsFile " + QFile::encodeName(cliKnown)
                        + "\nHost aliased\n  HostKeyAlias gpubox\n  UserKnownHostsFile " + QFile::encodeName(known)
                        + "\nHost aliasedhashed\n  HostKeyAlias gpubox-h\n  HashKnownHosts yes\n  UserKnownHostsFile "
                        + QFile::encodeName(hashedKnown)
                        + "\nHost aliasedchanged\n  HostKeyAlias gpubox\n  UserKnownHostsFile "
                        + QFile::encodeName(changedKnown) + "\nHost *\n  HostName 127.0.0.2\n  Port " + port
                        + "\n  User root\n  IdentityFile " + QFile::encodeName(m_sshd.dir()) + "/id_ed25519\n");
        const QList<QByteArray> hostKey = test::readFile(m_sshd.hostKeyPub()).trimmed().split(' ');
        QVERIFY(hostKey.size() >= 2);
        const QByteArray keyFields = hostKey[0] + ' ' + hostKey[1];
        auto sshFinds = [&](const QString& name, const QString& file) {
            bool ok = false;
            const QByteArray out = test::runTool(
                    QStringLiteral("ssh-keygen"), {QStringLiteral("-F"), name, QStringLiteral("-f"), file}, &ok);
            return ok && out.contains("found: line 1");
        };
        auto sshConnects = [&](const QString& host, QByteArray* out) {
            bool ok = false;
            *out = test::runTool(QStringLiteral("ssh"),
                    {QStringLiteral("-F"), config, QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
                            QStringLiteral("-o"), QStringLiteral("StrictHostKeyChecking=yes"), host,
                            QStringLiteral("echo"), QStringLiteral("alias-ok")},
                    &ok);
            return ok && out->contains("alias-ok");
        };

        // Unknown under its alias: refused, nothing written.
        SshNodeOptions o = options(QStringLiteral("aliased"), false, /*accept=*/false);
        o.configFile = config;
        Connected c = connectTo(o);
        QVERIFY2(c.error.contains(QStringLiteral("not known"))
                        && c.error.contains(QStringLiteral("HostKeyAlias gpubox")),
                qPrintable(c.error));
        QVERIFY(!QFileInfo::exists(known));
        // Accepted: one entry, under the alias, no port; ssh-keygen and ssh find it.
        o.acceptNewHostKey = true;
        c = connectTo(o);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(test::readFile(known), QByteArray("gpubox " + keyFields + '\n'));
        QVERIFY(sshFinds(QStringLiteral("gpubox"), known));
        QByteArray out;
        QVERIFY2(sshConnects(QStringLiteral("aliased"), &out), out.constData());
        // Known now: nothing asked, nothing appended.
        o.acceptNewHostKey = false;
        c = connectTo(o);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(test::readFile(known), QByteArray("gpubox " + keyFields + '\n'));

        // HashKnownHosts: the alias hashed, as ssh hashes it.
        SshNodeOptions h = options(QStringLiteral("aliasedhashed"), false, /*accept=*/true);
        h.configFile = config;
        c = connectTo(h);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        const QByteArray hashed = test::readFile(hashedKnown);
        QCOMPARE(hashed.count('\n'), 1);
        QVERIFY2(hashed.startsWith("|1|") && !hashed.contains("gpubox")
                        && hashed.trimmed().endsWith(QByteArray(" " + keyFields)),
                hashed.constData());
        QVERIFY(sshFinds(QStringLiteral("gpubox-h"), hashedKnown));
        QVERIFY2(sshConnects(QStringLiteral("aliasedhashed"), &out), out.constData());
        h.acceptNewHostKey = false;
        c = connectTo(h);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(test::readFile(hashedKnown), hashed);

        // Another key under the alias is a changed key, refused (also when
        // new keys would be accepted), whatever stands under [127.0.0.2]:port.
        const QString otherKey = dir + QStringLiteral("/other_host_key");
        QString error;
        QVERIFY2(test::makeKey(otherKey, &error), qPrintable(error));
        const QList<QByteArray> other = test::readFile(otherKey + QStringLiteral(".pub")).trimmed().split(' ');
        const QByteArray changedFile
                = "[127.0.0.2]:" + port + ' ' + keyFields + "\ngpubox " + other.value(0) + ' ' + other.value(1) + '\n';
        test::writeFile(changedKnown, changedFile);
        SshNodeOptions ch = options(QStringLiteral("aliasedchanged"), false, /*accept=*/true);
        ch.configFile = config;
        c = connectTo(ch);
        QVERIFY2(c.error.contains(QStringLiteral("CHANGED")), qPrintable(c.error));
        QVERIFY2(c.error.contains(changedKnown + QStringLiteral(":2"))
                        && c.error.contains(QStringLiteral("-R 'gpubox'")),
                qPrintable(c.error));
        QCOMPARE(test::readFile(changedKnown), changedFile);
        QVERIFY2(!sshConnects(QStringLiteral("aliasedchanged"), &out), out.constData()); // ssh refuses it too

        // The CLI's acceptance (node add --accept-new-host-key) writes the same.
        const QString wrapper = dir + QStringLiteral("/agent.sh");
        test::writeFile(wrapper,
                QStringLiteral("#!/bin/sh\nexec env TRAINYARD_AGENT_STATE='%1' TRAINYARD_AGENT_NO_NVML=1 '%2' \"$@\"\n")
                        .arg(stateDir(QStringLiteral("aliasedcli")), test::agentPath())
                        .toUtf8());
        QFile::setPermissions(wrapper, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        QProcess ctl;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), config);
        ctl.setProcessEnvironment(env);
        test::withoutTerminal(ctl); // batch mode, also when the tests run from a terminal
        ctl.setProcessChannelMode(QProcess::MergedChannels);
        ctl.start(QStringLiteral(TRAINYARD_CTL_PATH),
                {QStringLiteral("--db"), dir + QStringLiteral("/cli.db"), QStringLiteral("node"), QStringLiteral("add"),
                        QStringLiteral("gpu-alias"), QStringLiteral("--host"), QStringLiteral("aliasedcli"),
                        QStringLiteral("--agent-path"), wrapper, QStringLiteral("--accept-new-host-key")});
        QVERIFY(ctl.waitForFinished(60000));
        out = ctl.readAll();
        QVERIFY2(ctl.exitCode() == 0 && out.contains("added node gpu-alias"), out.constData());
        QCOMPARE(test::readFile(cliKnown), QByteArray("gpubox-cli " + keyFields + '\n'));
        QVERIFY(sshFinds(QStringLiteral("gpubox-cli"), cliKnown));
        QVERIFY2(sshConnects(QStringLiteral("aliasedcli"), &out), out.constData());
    }

    void agentDeployedOnceAndRedeployedOnChecksumChange()
    {
        const QByteArray local = test::readFile(test::agentPath());
        QVERIFY(local.size() > 1000);
        QString path;
        FileId first;
        {
            Connected c = connectTo(options(QStringLiteral("ws1"), true));
            QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
            QVERIFY(c.transport->lastDeploy());
            path = c.transport->lastDeploy()->remotePath;
            const QString sha
                    = QString::fromLatin1(QCryptographicHash::hash(local, QCryptographicHash::Sha256).toHex());
            QCOMPARE(c.transport->lastDeploy()->sha256, sha);
            QCOMPARE(path,
                    m_tmp.filePath(
                            QStringLiteral("remote-cache/%1-%2/trainyard-agent").arg(agentVersion(), sha.left(16))));
            QCOMPARE(agentVersion(), QStringLiteral(TRAINYARD_VERSION)); // the cache is named by the real version
            QVERIFY(c.transport->lastDeploy()->uploaded
                    || QFileInfo::exists(path)); // an earlier test may not have deployed
            QCOMPARE(test::readFile(path), local);
            QVERIFY(QFileInfo(path).isExecutable());
            first = fileId(path);
            QSignalSpy pong(c.client.get(), &AgentClient::ready);
            bool pinged = false;
            c.client->ping([&pinged](const Result<qint64>& r) { pinged = r.has_value(); });
            QTRY_VERIFY_WITH_TIMEOUT(pinged, 5000);
        }
        QTest::qWait(20); // a re-upload would get a later mtime
        {
            Connected c = connectTo(options(QStringLiteral("ws1"), true));
            QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
            QVERIFY(c.transport->lastDeploy());
            QVERIFY(!c.transport->lastDeploy()->uploaded);
            QVERIFY(c.transport->lastDeploy()->summedOnNode); // checked by sha256sum there, not read back (14 MB)
            QCOMPARE(fileId(path), first);                    // same inode, same mtime: not re-uploaded
        }
        {
            // Same name and size, other bytes: re-deployed. (Replaced through
            // a rename: the agent of the last connection may still be running it.)
            QByteArray corrupt = local;
            corrupt.replace(local.size() / 2, 8, "XXXXXXXX");
            QFile f(path + QStringLiteral(".corrupt"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            QCOMPARE(f.write(corrupt), corrupt.size());
            f.close();
            QVERIFY(f.setPermissions(QFileInfo(path).permissions()));
            QVERIFY(::rename(qPrintable(f.fileName()), qPrintable(path)) == 0);
            QVERIFY(test::readFile(path) != local);
            first = fileId(path);
            Connected c = connectTo(options(QStringLiteral("ws1"), true));
            QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
            QVERIFY(c.transport->lastDeploy()->uploaded);
            QVERIFY(!c.transport->lastDeploy()->summedOnNode);
            QCOMPARE(test::readFile(path), local);
            QVERIFY(fileId(path).inode != first.inode); // renamed into place
            QVERIFY(QFileInfo(path).isExecutable());
            const QStringList left = QDir(QFileInfo(path).absolutePath()).entryList(QDir::Files | QDir::Hidden);
            QCOMPARE(left, QStringList{QStringLiteral("trainyard-agent")}); // no temporary file left
        }
    }

    void runSurvivesKilledConnection()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), {QStringLiteral("ws1")});
        QSignalSpy console(engine.get(), &RunEngine::consoleReceived);
        QSignalSpy nodeStatus(engine.get(), &RunEngine::nodeStatusChanged);
        const auto id = engine->submit(
                spec(QStringLiteral(
                        "name: over-ssh\n"
                        "command: \"for i in $(seq 1 30); do printf 'bar %d%%\\r' $i; sleep 0.08; printf 'step=%d loss=%d.5\\n' $i $i; done\"\n")),
                QStringLiteral("ws1"));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Running, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(console.size() >= 5, 10000);
        QCOMPARE((*store)->run(*id)->node, QStringLiteral("ws1"));
        QSignalSpy states(engine.get(), &RunEngine::runStateChanged);
        QVERIFY(m_sshd.killConnections() > 0);
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(nodeStatus.cbegin(), nodeStatus.cend(),
                                         [](const QList<QVariant>& a) { return !a[1].toBool(); }),
                10000);
        // Lost node: the run is "unknown", not failed, then running again.
        QTRY_VERIFY_WITH_TIMEOUT(
                std::any_of(states.cbegin(), states.cend(),
                        [](const QList<QVariant>& a) { return a[0].value<RunRecord>().state == RunState::Unknown; }),
                5000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Succeeded, 30000);
        QVERIFY(nodeStatus.last()[1].toBool()); // reconnected
        verifyConsole(**store, *id, QStringLiteral("ws1"));
        const QList<MetricPoint> loss = (*store)->metrics(*id, QStringLiteral("loss"));
        QCOMPARE(loss.size(), 30); // nothing lost, nothing twice
        for (int i = 0; i < 30; ++i)
            QCOMPARE(loss[i].value, i + 1.5);
    }

    void consoleTruncatedOnTheNodeIsFollowed()
    {
        // `: > console.log` on the workstation while the run goes on: over
        // SSH as on the local node, the output written after it arrives live
        // after what the local copy had, with one notice.
        const QString go = m_tmp.filePath(QStringLiteral("truncated.go"));
        // The run waits for `go`: let it end also when a check fails.
        const auto release = qScopeGuard([&go] { (void)QFile(go).open(QIODevice::WriteOnly); });
        QByteArray before, after;
        for (int i = 1; i <= 8; ++i)
            (i <= 5 ? before : after) += "step=" + QByteArray::number(i) + " loss=" + QByteArray::number(i) + ".5\n";
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), {QStringLiteral("ws2")});
        const auto id
                = engine->submit(spec(QStringLiteral("command: \"for i in 1 2 3 4 5; do echo step=$i loss=$i.5; done; "
                                                     "while [ ! -e '%1' ]; do sleep 0.02; done; "
                                                     "for i in 6 7 8; do echo step=$i loss=$i.5; sleep 0.05; done\"\n")
                                                 .arg(go)),
                        QStringLiteral("ws2"));
        QVERIFY(id);
        QTRY_VERIFY_WITH_TIMEOUT(
                !(*store)->run(*id)->consolePath.isEmpty() && test::readFile((*store)->run(*id)->consolePath) == before,
                20000);
        const RunRecord run = *(*store)->run(*id);
        const QString nodeConsole = stateDir(QStringLiteral("ws2")) + QStringLiteral("/runs/") + run.agentRunId
                + QStringLiteral("/console.log");
        QTest::ignoreMessage(QtWarningMsg,
                qPrintable(QStringLiteral("console of run %1 on node ws2 was truncated on the "
                                          "node (at %2 bytes, now 0); following it from its new start")
                                   .arg(*id)
                                   .arg(before.size())));
        QVERIFY(QFile::resize(nodeConsole, 0));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->notices(*id).size(), qsizetype(1), 5000);
        {
            QFile f(go);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QTRY_VERIFY_WITH_TIMEOUT(test::readFile(run.consolePath).size() > before.size(), 5000); // live
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Succeeded, 20000);
        (*store)->flush();
        QCOMPARE(test::readFile(nodeConsole), after);
        QCOMPARE(test::readFile(run.consolePath), before + after);
        QCOMPARE((*store)->run(*id)->consoleOffset, qint64(before.size() + after.size()));
        const QList<MetricPoint> loss = (*store)->metrics(*id, QStringLiteral("loss"));
        QCOMPARE(loss.size(), 8);
        for (int i = 0; i < 8; ++i)
            QCOMPARE(loss[i].value, i + 1.5);
        const QList<RunNotice> notices = (*store)->notices(*id);
        QCOMPARE(notices.size(), qsizetype(1));
        QVERIFY2(notices.front().text.startsWith(
                         QStringLiteral("its console was truncated on node ws2 (at %1 bytes, now 0)")
                                 .arg(before.size())),
                qPrintable(notices.front().text));
    }

    void runEndsWhileNodeUnreachable()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), {QStringLiteral("ws1")});
        const auto id = engine->submit(
                spec(QStringLiteral("command: \"sleep 1; echo acc=0.25; exit 3\"\n")), QStringLiteral("ws1"));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Running, 20000);
        m_sshd.stop(); // the node is unreachable: reconnection fails for a while
        QTest::qWait(2000);
        QCOMPARE((*store)->run(*id)->state, RunState::Unknown); // not failed: it may well be going
        QString error;
        QVERIFY2(m_sshd.restart(&error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Failed, 20000);
        const RunRecord run = *(*store)->run(*id);
        QCOMPARE(run.exitCode, std::optional<int>(3));
        QCOMPARE(run.failureReason, QStringLiteral("exit code 3"));
        QCOMPARE((*store)->metrics(*id, QStringLiteral("acc")).size(), 1);
        verifyConsole(**store, *id, QStringLiteral("ws1"));
    }

    void nodeAnsweringAgainIsAskedAtOnce()
    {
        // Issue 20: a node that answers again used to leave its runs unknown
        // until the reconnect backoff ran out (20 s here). Probed between
        // attempts, it is reconnected and its runs asked for at once.
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        RunEngine engine(store->get(), dbPath());
        engine.setReconnectDelays(20000, 20000);
        engine.addNode(
                QStringLiteral("ws1"), std::make_unique<SshAgentTransport>(options(QStringLiteral("ws1"), true)));
        QVERIFY(engine.acquireIngestion());
        const auto id
                = engine.submit(spec(QStringLiteral("command: \"sleep 2; echo acc=0.5\"\n")), QStringLiteral("ws1"));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Running, 20000);
        m_sshd.stop(); // its connections too
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Unknown, 10000);
        QTest::qWait(1500); // down for longer than a probe interval: a probe finds it silent
        QString error;
        QVERIFY2(m_sshd.restart(&error), qPrintable(error));
        QElapsedTimer back;
        back.start();
        QTRY_VERIFY_WITH_TIMEOUT((*store)->run(*id)->state != RunState::Unknown, 8000);
        QVERIFY2(back.elapsed() < 8000, qPrintable(QString::number(back.elapsed())));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Succeeded, 15000);
        QCOMPARE((*store)->metrics(*id, QStringLiteral("acc")).size(), qsizetype(1));
    }

    void runsOnTwoNodesAtOnce()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), {QStringLiteral("ws1"), QStringLiteral("ws2")});
        const auto a = engine->submit(
                spec(QStringLiteral("command: \"sleep 1.5; hostname; echo x=1\"\n")), QStringLiteral("ws1"));
        const auto b = engine->submit(
                spec(QStringLiteral("command: \"sleep 1.5; hostname; echo x=2\"\n")), QStringLiteral("ws2"));
        QVERIFY(a && b);
        QTRY_VERIFY_WITH_TIMEOUT(
                (*store)->run(*a)->state == RunState::Running && (*store)->run(*b)->state == RunState::Running, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(
                (*store)->run(*a)->state == RunState::Succeeded && (*store)->run(*b)->state == RunState::Succeeded,
                20000);
        QCOMPARE((*store)->run(*a)->node, QStringLiteral("ws1"));
        QCOMPARE((*store)->run(*b)->node, QStringLiteral("ws2"));
        verifyConsole(**store, *a, QStringLiteral("ws1"));
        verifyConsole(**store, *b, QStringLiteral("ws2"));
        QCOMPARE((*store)->metrics(*b, QStringLiteral("x")).front().value, 2.0);
    }

    void labelsSteerPlacement()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        NodeRecord big{QStringLiteral("ws2"), QStringLiteral("ws2"), {}, 0, {}, {}, {}, {QStringLiteral("big")}};
        QVERIFY((*store)->addNode(big));
        auto engine = makeEngine(store->get(), {QStringLiteral("ws1"), QStringLiteral("ws2")});
        QTRY_VERIFY_WITH_TIMEOUT(
                engine->nodeReady(QStringLiteral("ws1")) && engine->nodeReady(QStringLiteral("ws2")), 20000);
        const auto prefer = engine->submit(spec(QStringLiteral("command: [true]\nprefer_labels: [big]\n")));
        const auto avoid = engine->submit(spec(QStringLiteral("command: [true]\navoid_labels: [big]\n")));
        QVERIFY(prefer && avoid);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*prefer)->state, RunState::Succeeded, 20000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*avoid)->state, RunState::Succeeded, 20000);
        QCOMPARE((*store)->run(*prefer)->node, QStringLiteral("ws2"));
        QCOMPARE((*store)->run(*avoid)->node, QStringLiteral("ws1"));
        QVERIFY((*store)->removeNode(QStringLiteral("ws2")));
    }

    void gangRunOnTwoNodes()
    {
        // nodes: 2 -> one rank on each test host, all at once, with torchrun's
        // rendezvous environment.
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), {QStringLiteral("ws1"), QStringLiteral("ws2")});
        QTRY_VERIFY_WITH_TIMEOUT(
                engine->nodeReady(QStringLiteral("ws1")) && engine->nodeReady(QStringLiteral("ws2")), 20000);
        const auto root = engine->submit(spec(QStringLiteral(
                "name: gang\n"
                "command: 'echo rank=$NODE_RANK world=$WORLD_SIZE nnodes=$NNODES nproc=$NPROC_PER_NODE master=$MASTER_ADDR:$MASTER_PORT'\n"
                "resources: {nodes: 2}\n")));
        QVERIFY(root);
        QTRY_VERIFY_WITH_TIMEOUT(isTerminal((*store)->run(*root)->state), 20000);
        QVERIFY2((*store)->run(*root)->state == RunState::Succeeded, qPrintable((*store)->run(*root)->failureReason));
        QList<RunRecord> ranks;
        const RunGroupId gang = RunEngine::gangOf(*(*store)->run(*root));
        QVERIFY(gang > 0);
        for (const auto& [run, m] : (*store)->groupMembers(gang))
            ranks.append(*(*store)->run(run));
        QCOMPARE(ranks.size(), 2);
        QCOMPARE((*store)->group(gang)->name, QStringLiteral("gang"));
        std::sort(ranks.begin(), ranks.end(), [](const RunRecord& a, const RunRecord& b) { return a.id < b.id; });
        QCOMPARE(ranks[0].id, *root);
        QCOMPARE(ranks[1].name, QStringLiteral("gang#rank1"));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(ranks[1].id)->state, RunState::Succeeded, 20000);
        QVERIFY(ranks[0].node != ranks[1].node);
        // Both started in the same pass.
        QVERIFY(qAbs(ranks[0].startedAt.msecsTo((*store)->run(ranks[1].id)->startedAt)) < 5000);
        const QString port = ranks[0].env.value(QStringLiteral("MASTER_PORT"));
        QVERIFY(port.toInt() >= 29500 && port.toInt() <= 29999);
        for (int rank = 0; rank < 2; ++rank) {
            const RunRecord r = *(*store)->run(ranks[rank].id);
            QCOMPARE(r.env.value(QStringLiteral("NODE_RANK")), QString::number(rank));
            QCOMPARE(r.env.value(QStringLiteral("MASTER_PORT")), port);
            const QByteArray console = test::readFile(r.consolePath);
            QVERIFY2(console.startsWith(QStringLiteral("rank=%1 world=2 nnodes=2 nproc=1 master=").arg(rank).toUtf8()),
                    console.constData());
            QVERIFY(console.trimmed().endsWith(QByteArray(':' + port.toUtf8())));
            verifyConsole(**store, r.id, r.node);
        }
    }

    // A port something else listens on (another database's gang, a user's
    // server) is never a gang's MASTER_PORT: the nodes' agents report their
    // listening ports, and the scheduler skips them.
    void gangRendezvousPortSkipsAListener()
    {
        // Two free ports next to each other for the policy's range.
        int low = 0;
        for (int p = 41000; p < 60000 && low == 0; p += 2) {
            QTcpServer a, b;
            if (a.listen(QHostAddress::Any, quint16(p)) && b.listen(QHostAddress::Any, quint16(p + 1)))
                low = p;
        }
        QVERIFY(low > 0);
        // A database of its own: the gang's root is run 1, for which the
        // scheduler tries port low + 1 % 2 first (Scheduler.h "Rendezvous
        // ports"); that one is taken before the nodes connect.
        const QString db = m_tmp.filePath(QStringLiteral("db-ports/trainyard.db"));
        auto store = ResultStore::open(db);
        QVERIFY(store);
        const RunId root = 1;
        const int taken = low + 1, other = low;
        QTcpServer listener;
        QVERIFY(listener.listen(QHostAddress::Any, quint16(taken)));
        auto engine = makeEngine(store->get(), {QStringLiteral("ws1"), QStringLiteral("ws2")}, db);
        sched::Policy policy = engine->policy();
        policy.portMin = low;
        policy.portMax = low + 1;
        engine->setPolicy(policy);
        QTRY_VERIFY_WITH_TIMEOUT(
                engine->nodeReady(QStringLiteral("ws1")) && engine->nodeReady(QStringLiteral("ws2")), 20000);
        const auto gang = engine->submit(spec(QStringLiteral("name: gang\ncommand: 'echo $MASTER_PORT'\n"
                                                             "resources: {nodes: 2}\n")));
        QVERIFY(gang);
        QCOMPARE(*gang, root);
        QTRY_VERIFY_WITH_TIMEOUT(isTerminal((*store)->run(root)->state), 20000);
        QCOMPARE((*store)->run(root)->state, RunState::Succeeded);
        QCOMPARE((*store)->run(root)->env.value(QStringLiteral("MASTER_PORT")), QString::number(other));
        QCOMPARE(test::readFile((*store)->run(root)->consolePath).trimmed(), QByteArray::number(other));
    }

    void cancelOverSshLeavesNoProcess()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), {QStringLiteral("ws1")});
        const auto id = engine->submit(
                spec(QStringLiteral("command: \"sleep 100 & sleep 100; wait\"\n")), QStringLiteral("ws1"));
        QVERIFY(id);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Running, 20000);
        const QString runJson = stateDir(QStringLiteral("ws1")) + QStringLiteral("/runs/")
                + (*store)->run(*id)->agentRunId + QStringLiteral("/run.json");
        const qint64 pgid
                = QJsonDocument::fromJson(test::readFile(runJson)).object().value(QStringLiteral("pgid")).toInteger();
        QVERIFY2(pgid > 1, qPrintable(runJson));
        QCOMPARE(::kill(pid_t(-pgid), 0), 0); // the group is alive
        engine->cancel(*id, 1000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Cancelled, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(::kill(pid_t(-pgid), 0) == -1 && errno == ESRCH, 5000);
    }

    // A process that left the run's group (setsid and a second fork, a
    // daemon that ignores SIGTERM) is ended by cancel over SSH too.
    void cancelOverSshEndsWhatLeftTheGroup()
    {
        const QString w = m_tmp.filePath(QStringLiteral("daemon-ssh"));
        QVERIFY(QDir().mkpath(w));
        QFile script(w + QStringLiteral("/daemon.py"));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("import os, signal, time\n"
                     "if os.fork() == 0:\n"
                     "    os.setsid()\n"
                     "    if os.fork() == 0:\n"
                     "        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                     "        open('daemon.pid.tmp', 'w').write(str(os.getpid()))\n"
                     "        os.rename('daemon.pid.tmp', 'daemon.pid')\n"
                     "        while True: time.sleep(1)\n"
                     "    os._exit(0)\n"
                     "time.sleep(1000)\n");
        script.close();
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), {QStringLiteral("ws1")});
        auto s = parseJobSpec(QStringLiteral("command: [/usr/bin/python3, daemon.py]\n"), QStringLiteral("t.yaml"), w);
        QVERIFY(s);
        const auto id = engine->submit(*s, QStringLiteral("ws1"));
        QVERIFY(id);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(w + QStringLiteral("/daemon.pid")), 20000);
        const pid_t daemon = pid_t(test::readFile(w + QStringLiteral("/daemon.pid")).trimmed().toLong());
        QVERIFY(daemon > 1 && ::kill(daemon, 0) == 0);
        engine->cancel(*id, 1000);
        QTRY_COMPARE_WITH_TIMEOUT((*store)->run(*id)->state, RunState::Cancelled, 20000);
        QFile stat(QStringLiteral("/proc/%1/stat").arg(daemon));
        const QByteArray st = stat.open(QIODevice::ReadOnly) ? stat.readAll() : QByteArray();
        const qsizetype close = st.lastIndexOf(')');
        const bool running = close > 0 && close + 2 < st.size() && st.at(close + 2) != 'Z';
        if (running)
            ::kill(daemon, SIGKILL); // the test's own cleanup
        QVERIFY2(!running, qPrintable(QStringLiteral("pid %1 survived the cancel over SSH").arg(daemon)));
    }

    // A reply that libssh reads inside a file job's blocking SFTP calls is
    // handed on then, not held until the job ends (a sync of many unchanged
    // files makes only lstat calls, which never pump the agent channel).
    void replyArrivesDuringAFileJob()
    {
        Connected c = connectTo(options(QStringLiteral("ws1"), false));
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        bool jobDone = false;
        bool jobOk = false;
        bool replied = false;
        bool repliedDuringJob = false;
        // Posted first: the session sends it before it starts the job.
        c.client->ping([&](const Result<qint64>& r) {
            replied = bool(r);
            repliedDuringJob = !jobDone;
        });
        c.transport->runFileJob(
                [](NodeFiles& files) -> Result<void> {
                    QElapsedTimer t;
                    t.start();
                    while (t.elapsed() < 1500) { // metadata calls only (a sync of many links)
                        auto info = files.lstat(QStringLiteral("/"));
                        if (!info)
                            return std::unexpected(info.error());
                    }
                    return {};
                },
                [&](const Result<void>& r) {
                    jobOk = bool(r);
                    jobDone = true;
                });
        // Posted while the job runs, as the engine's heartbeats are: it must
        // go out between the job's calls, or a long sync loses the node.
        bool secondReplied = false;
        bool secondDuringJob = false;
        QTimer::singleShot(300, [&] {
            c.client->ping([&](const Result<qint64>& r) {
                secondReplied = bool(r);
                secondDuringJob = !jobDone;
            });
        });
        QTRY_VERIFY_WITH_TIMEOUT(jobDone, 20000);
        QVERIFY(jobOk);
        QVERIFY(replied);
        QVERIFY2(repliedDuringJob, "the ping's reply was held until the file job ended");
        QTRY_VERIFY(secondReplied);
        QVERIFY2(secondDuringJob, "a ping posted during a job of metadata calls waited for its end");
    }

    // A shell startup file that prints (`echo Welcome` in ~/.bashrc) puts
    // text before the agent's hello, the last piece without a newline: it
    // is skipped, and the agent answers as usual.
    void shellOutputBeforeTheAgentIsSkipped()
    {
        const QString wrapper = m_tmp.filePath(QStringLiteral("noisy-agent.sh"));
        QFile f(wrapper);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("#!/bin/sh\necho 'Welcome to the GPU box {maintenance: Friday}'\necho\n"
                               "printf 'Last login: never'\nexec '%1' \"$@\"\n")
                        .arg(test::agentPath())
                        .toUtf8());
        f.close();
        QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        SshNodeOptions o = options(QStringLiteral("ws1"), false);
        o.remoteAgentPath = wrapper;
        Connected c = connectTo(o);
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(c.client->hello().agent, QStringLiteral("trainyard-agent"));
        bool pinged = false;
        c.client->ping([&pinged](const Result<qint64>& r) { pinged = r.has_value(); });
        QTRY_VERIFY_WITH_TIMEOUT(pinged, 5000);
    }

    void silentAgentIsUnreachable()
    {
        Connected c = connectTo(options(QStringLiteral("ws1"), false));
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        NodeHealth health(c.client.get());
        health.setInterval(200);
        health.setTimeout(1200);
        QSignalSpy unreachable(&health, &NodeHealth::unreachable);
        QTest::qWait(1500); // answering: never unreachable
        QVERIFY(unreachable.isEmpty());
        QVERIFY(health.isReachable());
        QVERIFY(health.lastRoundTripMs() >= 0);
        const pid_t agent = pid_t(c.client->hello().pid);
        QVERIFY(agent > 1);
        QCOMPARE(::kill(agent, SIGSTOP), 0); // frozen: the TCP link stays up, nothing answers
        QTRY_COMPARE_WITH_TIMEOUT(unreachable.size(), 1, 4000);
        QVERIFY(unreachable.front().front().toString().contains(QStringLiteral("no heartbeat")));
        QCOMPARE(c.client->state(), AgentClient::State::Disconnected);
        ::kill(agent, SIGCONT);
    }

    void configConnectTimeoutWins()
    {
        // A host that takes the TCP connection and never speaks: the user's
        // ConnectTimeout in ~/.ssh/config bounds the wait, as with ssh, not
        // Trainyard's 30 s default.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress(QStringLiteral("127.0.0.2")), 0));
        const QString config = m_tmp.filePath(QStringLiteral("slow_config"));
        QFile f(config);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("Host slow\n  HostName 127.0.0.2\n  Port %1\n  ConnectTimeout 2\n")
                        .arg(silent.serverPort())
                        .toUtf8());
        f.close();
        SshNodeOptions o = options(QStringLiteral("slow"), false);
        o.configFile = config;
        o.connectTimeoutSec = 30;
        QElapsedTimer t;
        t.start();
        const Connected c = connectTo(o); // gives up itself after 20 s
        QVERIFY2(!c.error.isEmpty() && c.error != QStringLiteral("timeout"), qPrintable(c.error));
        QVERIFY2(t.elapsed() < 12000, qPrintable(QStringLiteral("%1 ms: %2").arg(t.elapsed()).arg(c.error)));
    }

    void rejectedKeysAreNamedWithoutPassphraseAdvice()
    {
        // A key the server does not accept (not encrypted), and an identity
        // file that does not exist: the error names the keys tried and does
        // not send the user after a passphrase no key asked for.
        const QString key = m_tmp.filePath(QStringLiteral("stranger_key"));
        QFile::remove(key);
        QCOMPARE(QProcess::execute(QStringLiteral("ssh-keygen"),
                         {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
                                 QString(), QStringLiteral("-f"), key}),
                0);
        const QString config = m_tmp.filePath(QStringLiteral("stranger_config"));
        QFile f(config);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("Host stranger\n  HostName 127.0.0.2\n  Port %1\n  User root\n  IdentityFile %2\n"
                               "  UserKnownHostsFile %3\n")
                        .arg(m_sshd.port())
                        .arg(key, m_sshd.knownHosts())
                        .toUtf8());
        f.close();
        qunsetenv("SSH_AUTH_SOCK");
        SshNodeOptions o = options(QStringLiteral("stranger"), false);
        o.configFile = config;
        // libssh also tries the user's default keys (~ from the password
        // database); one of them may rightly ask for a passphrase.
        bool defaultKeys = false;
        if (const passwd* pw = ::getpwuid(::getuid()))
            for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"})
                defaultKeys = defaultKeys
                        || QFileInfo::exists(
                                QFile::decodeName(pw->pw_dir) + QStringLiteral("/.ssh/") + QLatin1String(name));
        Connected c = connectTo(o);
        QVERIFY2(c.error.contains(QStringLiteral("accepted none of the keys")) && c.error.contains(key),
                qPrintable(c.error));
        if (!defaultKeys)
            QVERIFY2(!c.error.contains(QStringLiteral("passphrase")) && !c.error.contains(QStringLiteral("encrypted")),
                    qPrintable(c.error));
        o.identityFile = m_tmp.filePath(QStringLiteral("no_such_key"));
        c = connectTo(o);
        QVERIFY2(c.error.contains(QStringLiteral("identity file %1 does not exist").arg(o.identityFile)),
                qPrintable(c.error));
        if (!defaultKeys)
            QVERIFY2(!c.error.contains(QStringLiteral("passphrase")), qPrintable(c.error));
    }

    void identitiesOnlyOffersOnlyTheConfiguredKeysOfTheAgent()
    {
        // Seven unrelated keys in ssh-agent ahead of the right one, and a
        // server that takes three (MaxAuthTries 3). With IdentitiesOnly yes
        // only the agent's key of the IdentityFile is offered, as by ssh.
        if (const QString why = test::SshAgentProcess::skipReason(); !why.isEmpty())
            QSKIP(qPrintable(why));
        QString error;
        test::SshdFixture strict;
        strict.setExtraConfig("MaxAuthTries 3\n");
        QVERIFY2(strict.start(&error), qPrintable(error));
        const QString dir = m_tmp.filePath(QStringLiteral("identities-only"));
        QVERIFY(QDir().mkpath(dir));
        test::SshAgentProcess agent;
        QVERIFY2(agent.start(dir + QStringLiteral("/agent.sock"), &error), qPrintable(error));
        for (int i = 1; i <= 7; ++i) {
            const QString stranger = dir + QStringLiteral("/stranger%1").arg(i);
            QVERIFY2(test::makeKey(stranger, &error), qPrintable(error));
            QVERIFY2(agent.add(stranger, &error), qPrintable(error));
        }
        const QString rightKey = strict.dir() + QStringLiteral("/id_ed25519"); // in the server's authorized_keys
        QVERIFY2(agent.add(rightKey, &error), qPrintable(error));
        // The right key's private half only in the agent: IdentityFile names
        // a file of which only FILE.pub exists, so only the agent can sign.
        const QString agentOnly = dir + QStringLiteral("/agent_only");
        QVERIFY(QFile::copy(rightKey + QStringLiteral(".pub"), agentOnly + QStringLiteral(".pub")));
        const QString config = dir + QStringLiteral("/ssh_config");
        const QString block
                = QStringLiteral("  HostName 127.0.0.2\n  Port %1\n  User root\n  UserKnownHostsFile %2/known_hosts\n")
                          .arg(strict.port())
                          .arg(dir);
        test::writeFile(config,
                QStringLiteral("Host agentkey\n%1  IdentityFile %2\n  IdentitiesOnly yes\n"
                               "Host filekey\n%1  IdentityFile %3\n  IdentitiesOnly yes\n"
                               "Host allkeys\n%1  IdentityFile %3\n")
                        .arg(block, agentOnly, rightKey)
                        .toUtf8());
        const QByteArray savedSock = qgetenv("SSH_AUTH_SOCK");
        const auto restore = qScopeGuard([&] {
            if (savedSock.isEmpty())
                qunsetenv("SSH_AUTH_SOCK");
            else
                qputenv("SSH_AUTH_SOCK", savedSock);
        });
        qputenv("SSH_AUTH_SOCK", QFile::encodeName(agent.socket()));
        auto optionsFor = [&](const QString& host) {
            SshNodeOptions o = options(host, false, /*accept=*/true);
            o.configFile = config;
            return o;
        };

        // OpenSSH's client gets in with this configuration, as the baseline.
        {
            QProcess ssh;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("SSH_AUTH_SOCK"), agent.socket());
            ssh.setProcessEnvironment(env);
            ssh.setStandardInputFile(QProcess::nullDevice());
            ssh.setProcessChannelMode(QProcess::MergedChannels);
            ssh.start(QStringLiteral("ssh"),
                    {QStringLiteral("-F"), config, QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
                            QStringLiteral("-o"), QStringLiteral("StrictHostKeyChecking=no"),
                            QStringLiteral("agentkey"), QStringLiteral("echo"), QStringLiteral("openssh-in")});
            QVERIFY(ssh.waitForFinished(30000));
            const QByteArray out = ssh.readAll();
            QVERIFY2(ssh.exitCode() == 0 && out.contains("openssh-in"), out.constData());
        }
        Connected viaAgent = connectTo(optionsFor(QStringLiteral("agentkey")));
        QVERIFY2(viaAgent.error.isEmpty(), qPrintable(viaAgent.error));
        QCOMPARE(viaAgent.client->hello().stateDir, stateDir(QStringLiteral("agentkey")));

        // The agent without the right key: IdentitiesOnly leaves all seven
        // out, and the key file itself logs in.
        QVERIFY2(agent.remove(rightKey, &error), qPrintable(error));
        Connected viaFile = connectTo(optionsFor(QStringLiteral("filekey")));
        QVERIFY2(viaFile.error.isEmpty(), qPrintable(viaFile.error));
        QCOMPARE(viaFile.client->hello().stateDir, stateDir(QStringLiteral("filekey")));
        // The agent's key alone (agentkey) now has no way in: the failure
        // names the filtered agent and the file that is not there.
        Connected none = connectTo(optionsFor(QStringLiteral("agentkey")));
        QVERIFY2(none.error.contains(QStringLiteral(
                         "accepted none of the keys tried (ssh-agent (IdentitiesOnly: 0 of its 7 key(s))")),
                qPrintable(none.error));

        // Without IdentitiesOnly every agent key goes first, the server hangs
        // up after three, and the key file is never offered: the failure
        // says so instead of naming it as refused.
        // (libssh 0.10 notices the closed connection only when its timeout
        // runs out: a short one.)
        SshNodeOptions all = optionsFor(QStringLiteral("allkeys"));
        all.connectTimeoutSec = 3;
        Connected dropped = connectTo(all);
        QVERIFY2(dropped.error.contains(QStringLiteral("the server closed the connection")), qPrintable(dropped.error));
        QVERIFY2(dropped.error.contains(QStringLiteral("before the key file %1 could be offered").arg(rightKey)),
                qPrintable(dropped.error));
        QVERIFY2(dropped.error.contains(QStringLiteral("IdentitiesOnly yes")), qPrintable(dropped.error));
        QVERIFY2(!dropped.error.contains(QStringLiteral("accepted none of the keys")), qPrintable(dropped.error));
        QVERIFY2(!dropped.error.contains(QStringLiteral("then ") + rightKey), qPrintable(dropped.error));
    }

    void cliNodeCommands()
    {
        // The agent behind a wrapper that gives it this test's state directory.
        const QString wrapper = m_tmp.filePath(QStringLiteral("agent-ws2.sh"));
        {
            QFile f(wrapper);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QStringLiteral(
                    "#!/bin/sh\nexec env TRAINYARD_AGENT_STATE='%1' TRAINYARD_AGENT_NO_NVML=1 '%2' \"$@\"\n")
                            .arg(stateDir(QStringLiteral("ws2")), test::agentPath())
                            .toUtf8());
            f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        }
        const QString db = m_tmp.filePath(QStringLiteral("cli/trainyard.db"));
        auto ctl = [&](const QStringList& args, int* code) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), m_sshd.clientConfig());
            env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
            p.setProcessEnvironment(env);
            test::withoutTerminal(p); // batch mode
            p.start(QStringLiteral(TRAINYARD_CTL_PATH), QStringList{QStringLiteral("--db"), db} + args);
            p.waitForFinished(60000);
            *code = p.exitCode();
            return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
        };
        int code = -1;
        // ws2's key is in known_hosts already (first test); a fresh known_hosts would need
        // --accept-new-host-key, which the first test covers through the same code.
        QString out
                = ctl({QStringLiteral("node"), QStringLiteral("add"), QStringLiteral("gpu2"), QStringLiteral("--host"),
                              QStringLiteral("ws2"), QStringLiteral("--agent-path"), wrapper},
                        &code);
        QVERIFY2(code == 0, qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("GPUs: none (a CPU node)")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("added node gpu2")), qPrintable(out));
        out = ctl({QStringLiteral("node"), QStringLiteral("ls")}, &code);
        QVERIFY2(code == 0 && out.contains(QStringLiteral("gpu2")) && out.contains(QStringLiteral("ws2")),
                qPrintable(out));
        // Its key removed from known_hosts (as after a changed key and
        // ssh-keygen -R): submit refuses it and names the way forward,
        // node trust accepts it again.
        {
            const QString kh = m_sshd.knownHosts();
            QFile f(kh);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray before = f.readAll();
            f.close();
            const QString entry = QStringLiteral("[127.0.0.3]:%1").arg(m_sshd.port()); // ws2
            QCOMPARE(QProcess::execute(
                             QStringLiteral("ssh-keygen"), {QStringLiteral("-R"), entry, QStringLiteral("-f"), kh}),
                    0);
            // `node add` had the service connect gpu2; a service started anew
            // connects again, and meets the key as unknown.
            out = ctl({QStringLiteral("daemon"), QStringLiteral("stop")}, &code);
            QVERIFY2(code == 0, qPrintable(out));
            out = ctl({QStringLiteral("node"), QStringLiteral("trust"), QStringLiteral("nope")}, &code);
            QVERIFY2(code == 4 && out.contains(QStringLiteral("no node named 'nope'")), qPrintable(out));
            const QString job0 = m_tmp.filePath(QStringLiteral("trust.yaml"));
            {
                QFile j(job0);
                QVERIFY(j.open(QIODevice::WriteOnly));
                j.write("name: before-trust\nworkdir: /tmp\ncommand: [true]\n");
            }
            out = ctl({QStringLiteral("submit"), job0, QStringLiteral("--node"), QStringLiteral("gpu2")}, &code);
            QVERIFY2(code == 5 && out.contains(QStringLiteral("trainyardctl node trust NAME")), qPrintable(out));
            out = ctl({QStringLiteral("node"), QStringLiteral("trust"), QStringLiteral("gpu2")}, &code);
            QVERIFY2(code == 0 && out.contains(QStringLiteral("node gpu2 is reachable")), qPrintable(out));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray after = f.readAll();
            f.close();
            QVERIFY2(after.contains(entry.toUtf8()), after.constData());
            QVERIFY(before.contains(entry.toUtf8()));
        }
        // A key file that does not exist is refused before connecting (the
        // config's key would log in and the bad path would be stored).
        out = ctl({QStringLiteral("node"), QStringLiteral("add"), QStringLiteral("gpu3"), QStringLiteral("--host"),
                          QStringLiteral("ws2"), QStringLiteral("--identity"),
                          m_tmp.filePath(QStringLiteral("no-such-key"))},
                &code);
        QVERIFY2(code == 2 && out.contains(QStringLiteral("no-such-key: no such file")), qPrintable(out));
        // A host that cannot be reached is not added.
        out = ctl({QStringLiteral("node"), QStringLiteral("add"), QStringLiteral("bad"), QStringLiteral("--host"),
                          QStringLiteral("ws1"), QStringLiteral("--port"),
                          QString::number(m_sshd.port() == 65535 ? 1 : m_sshd.port() + 1)},
                &code);
        QVERIFY2(code == 5 && out.contains(QStringLiteral("not added")), qPrintable(out));
        // submit --node runs there, and --follow passes its exit code through.
        const QString job = m_tmp.filePath(QStringLiteral("job.yaml"));
        {
            QFile f(job);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("name: on-gpu2\nworkdir: /tmp\ncommand: \"echo from-node; exit 7\"\n");
        }
        out = ctl({QStringLiteral("submit"), job, QStringLiteral("--node"), QStringLiteral("gpu2"),
                          QStringLiteral("--follow")},
                &code);
        QVERIFY2(code == 7 && out.contains(QStringLiteral("from-node")), qPrintable(out));
        out = ctl({QStringLiteral("ls")}, &code);
        QVERIFY2(out.contains(QStringLiteral("gpu2")), qPrintable(out));
        out = ctl({QStringLiteral("submit"), job, QStringLiteral("--node"), QStringLiteral("nope")}, &code);
        QVERIFY2(code == 2 && out.contains(QStringLiteral("no node named 'nope'")), qPrintable(out));
        out = ctl({QStringLiteral("node"), QStringLiteral("rm"), QStringLiteral("gpu2")}, &code);
        QVERIFY2(code == 0, qPrintable(out));
        out = ctl({QStringLiteral("node"), QStringLiteral("ls")}, &code);
        QVERIFY2(!out.contains(QStringLiteral("gpu2")), qPrintable(out));
        out = ctl({QStringLiteral("node"), QStringLiteral("--help")}, &code);
        QVERIFY2(code == 0 && out.contains(QStringLiteral("node add NAME --host ALIAS")), qPrintable(out));

        // A node that went down after it was added (its sshd moved): nothing
        // waits for it for ever, and each command says why.
        const int dead = m_sshd.port() == 65535 ? 1 : m_sshd.port() + 1;
        RunId running = 0;
        {
            auto store = ResultStore::open(db);
            QVERIFY(store);
            NodeRecord down{QStringLiteral("down"), QStringLiteral("ws1"), {}, dead, {}, wrapper,
                    QDateTime::currentDateTimeUtc()};
            QVERIFY((*store)->addNode(down).has_value());
            const auto id = (*store)->createRun(test::runningRecord(QStringLiteral("was-running"),
                                                        QStringLiteral("down"), QStringLiteral("ty-gone-1")),
                    {});
            QVERIFY(id);
            running = *id;
        }
        QElapsedTimer t;
        t.start();
        out = ctl({QStringLiteral("submit"), job, QStringLiteral("--node"), QStringLiteral("down")}, &code);
        QVERIFY2(code == 5 && out.contains(QStringLiteral("node down cannot be reached"))
                        && out.contains(QStringLiteral("stays queued")),
                qPrintable(out));
        out = ctl({QStringLiteral("cancel"), QString::number(running)}, &code);
        QVERIFY2(code == 5 && out.contains(QStringLiteral("was not cancelled")), qPrintable(out));
        out = ctl({QStringLiteral("logs"), QString::number(running)}, &code);
        QVERIFY2(code == 5 && out.contains(QStringLiteral("cannot be reached")), qPrintable(out));
        QVERIFY2(t.elapsed() < 30000, qPrintable(QString::number(t.elapsed())));
        // ls shows what it could not bring up to date, and why: beside the
        // dead node, one that takes the TCP connection and never answers
        // (a slow ProxyJump, a hung sshd) outlasts ls's wait.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress(QStringLiteral("127.0.0.2")))); // ws1's address, never accepted
        {
            auto store = ResultStore::open(db);
            QVERIFY(store);
            NodeRecord slow{QStringLiteral("slow"), QStringLiteral("ws1"), {}, silent.serverPort(), {}, wrapper,
                    QDateTime::currentDateTimeUtc()};
            QVERIFY((*store)->addNode(slow).has_value());
            QVERIFY((*store)->createRun(test::runningRecord(QStringLiteral("slow-running"), QStringLiteral("slow"),
                                                QStringLiteral("ty-slow-1")),
                    {}));
        }
        QElapsedTimer lsTime;
        lsTime.start();
        out = ctl({QStringLiteral("ls")}, &code);
        QVERIFY2(code == 0 && out.contains(QStringLiteral("slow-running")), qPrintable(out));
        // ls waits 5 s, not the 30 s a connection may take elsewhere.
        QVERIFY2(lsTime.elapsed() < 15000, qPrintable(QString::number(lsTime.elapsed())));
        QVERIFY2(out.contains(QStringLiteral("runs on node down are shown as last recorded (unreachable: ")),
                qPrintable(out));
        QVERIFY2(out.contains(
                         QStringLiteral("runs on node slow are shown as last recorded (still connecting after 5 s)")),
                qPrintable(out));
        out = ctl({QStringLiteral("node"), QStringLiteral("rm"), QStringLiteral("slow"), QStringLiteral("--force")},
                &code);
        QVERIFY2(code == 0, qPrintable(out));
        out = ctl({QStringLiteral("node"), QStringLiteral("rm"), QStringLiteral("down")}, &code);
        QVERIFY2(code == 5 && out.contains(QStringLiteral("%1 (running)").arg(running))
                        && out.contains(QStringLiteral("(queued)")),
                qPrintable(out));
        out = ctl({QStringLiteral("node"), QStringLiteral("rm"), QStringLiteral("down"), QStringLiteral("--force")},
                &code);
        QVERIFY2(code == 0 && out.contains(QStringLiteral("2 run(s) on it recorded as failed")), qPrintable(out));
        {
            auto store = ResultStore::open(db);
            QVERIFY(store);
            const auto r = (*store)->run(running);
            QVERIFY(r);
            QCOMPARE(r->state, RunState::Failed);
            QVERIFY2(r->failureReason.contains(QStringLiteral("node down was removed")), qPrintable(r->failureReason));
            QVERIFY(r->finishedAt.isValid());
        }
    }

    void twoCancelsAtOnceOverSsh()
    {
        // Issue 20: a second trainyardctl cancel at the same time on an SSH
        // node used to wait 90 s and more (for a state change only the
        // ingestion owner emits, of a run already cancelled when its node
        // answered). Both end within the bound, exit 0 and say cancelled.
        const QString wrapper = m_tmp.filePath(QStringLiteral("agent-cancel.sh"));
        {
            QFile f(wrapper);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QStringLiteral(
                    "#!/bin/sh\nexec env TRAINYARD_AGENT_STATE='%1' TRAINYARD_AGENT_NO_NVML=1 '%2' \"$@\"\n")
                            .arg(stateDir(QStringLiteral("cancel")), test::agentPath())
                            .toUtf8());
            f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        }
        const QString db = m_tmp.filePath(QStringLiteral("cancel-twice/trainyard.db"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), m_sshd.clientConfig());
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        const auto startCtl = [&](const QStringList& args) {
            auto p = std::make_unique<QProcess>();
            p->setProcessEnvironment(env);
            test::withoutTerminal(*p); // batch mode
            p->start(QStringLiteral(TRAINYARD_CTL_PATH), QStringList{QStringLiteral("--db"), db} + args);
            return p;
        };
        const auto said
                = [](QProcess& p) { return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError()); };
        {
            auto add = startCtl({QStringLiteral("node"), QStringLiteral("add"), QStringLiteral("c1"),
                    QStringLiteral("--host"), QStringLiteral("ws1"), QStringLiteral("--agent-path"), wrapper,
                    QStringLiteral("--accept-new-host-key")});
            QVERIFY(add->waitForFinished(60000));
            QVERIFY2(add->exitCode() == 0, qPrintable(said(*add)));
        }
        const QString job = m_tmp.filePath(QStringLiteral("cancel-twice.yaml"));
        {
            QFile f(job);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("name: cancel-twice\nworkdir: /tmp\ncommand: [sleep, '60']\n");
        }
        {
            auto submit = startCtl({QStringLiteral("submit"), job, QStringLiteral("--node"), QStringLiteral("c1")});
            QVERIFY(submit->waitForFinished(60000));
            const QString text = said(*submit);
            QVERIFY2(submit->exitCode() == 0 && text.contains(QStringLiteral("running on c1")), qPrintable(text));
        }
        QElapsedTimer took;
        took.start();
        std::vector<std::unique_ptr<QProcess>> cancels;
        for (int i = 0; i < 2; ++i)
            cancels.push_back(startCtl({QStringLiteral("cancel"), QStringLiteral("cancel-twice"),
                    QStringLiteral("--grace"), QStringLiteral("0.5")}));
        for (auto& p : cancels)
            p->waitForFinished(int(std::max<qint64>(1, 45000 - took.elapsed())));
        for (auto& p : cancels) {
            const bool ended = p->state() == QProcess::NotRunning;
            if (!ended) {
                p->kill();
                p->waitForFinished();
            }
            const QByteArray out = p->readAllStandardOutput();
            const QString text = QString::fromUtf8(out + p->readAllStandardError());
            QVERIFY2(ended, qPrintable(QStringLiteral("still waiting after 45 s: ") + text));
            QVERIFY2(p->exitCode() == 0, qPrintable(text));
            QVERIFY2(out.contains("cancelled"), qPrintable(text));
        }
        auto store = ResultStore::open(db);
        QVERIFY(store);
        const QList<RunRecord> runs = (*store)->runs();
        QCOMPARE(runs.size(), qsizetype(1));
        QCOMPARE(runStateName(runs.front().state), QStringLiteral("cancelled"));
    }

    // StrictHostKeyChecking (yes, accept-new, no, ask, none) x the host key
    // (known, unknown, changed): Trainyard's outcome equals OpenSSH's own
    // client in batch mode against the same sshd -- connects or not, the
    // known_hosts file byte for byte afterwards, and the changed-key warning
    // shown or not. Each side has its own known_hosts per case. Replaces the
    // host key (changedHostKeyRefused, after it, still sees a changed key).
    void strictHostKeyCheckingAsSsh()
    {
        const QByteArray port = QByteArray::number(m_sshd.port());
        const QList<QByteArray> oldKey = test::readFile(m_sshd.hostKeyPub()).trimmed().split(' ');
        QVERIFY(oldKey.size() >= 2);
        QString error;
        QVERIFY2(m_sshd.regenerateHostKey(&error), qPrintable(error));
        QVERIFY2(m_sshd.restart(&error), qPrintable(error));
        const QList<QByteArray> newKey = test::readFile(m_sshd.hostKeyPub()).trimmed().split(' ');
        QVERIFY(newKey.size() >= 2 && newKey[1] != oldKey[1]);
        const QByteArray entry = "[127.0.0.2]:" + port + ' ';
        const QString dir = m_tmp.filePath(QStringLiteral("strict"));
        QVERIFY(QDir().mkpath(dir));
        const QStringList settings{QStringLiteral("yes"), QStringLiteral("accept-new"), QStringLiteral("no"),
                QStringLiteral("ask"), QStringLiteral("default")};
        const QStringList cases{QStringLiteral("known"), QStringLiteral("unknown"), QStringLiteral("changed")};
        // One config per side, the same but for the known_hosts files.
        auto writeConfig = [&](const QString& side) {
            QByteArray config;
            for (const QString& setting : settings)
                for (const QString& c : cases) {
                    const QString host = setting + u'-' + c;
                    config += "Host " + host.toUtf8() + "\n  UserKnownHostsFile " + QFile::encodeName(dir) + '/'
                            + host.toUtf8() + '.' + side.toUtf8() + "\n";
                    if (setting != u"default")
                        config += "  StrictHostKeyChecking " + setting.toUtf8() + "\n";
                    const QByteArray seed = c == u"known" ? entry + newKey[0] + ' ' + newKey[1] + '\n'
                            : c == u"changed"             ? entry + oldKey[0] + ' ' + oldKey[1] + '\n'
                                                          : QByteArray();
                    if (!seed.isEmpty())
                        test::writeFile(dir + u'/' + host + u'.' + side, seed);
                }
            config += "Host *\n  HostName 127.0.0.2\n  Port " + port + "\n  User root\n  IdentityFile "
                    + QFile::encodeName(m_sshd.dir())
                    + "/id_ed25519\n  GlobalKnownHostsFile /dev/null\n  BatchMode yes\n";
            const QString file = dir + QStringLiteral("/ssh_config.") + side;
            test::writeFile(file, config);
            return file;
        };
        const QString sshConfig = writeConfig(QStringLiteral("ssh"));
        const QString tyConfig = writeConfig(QStringLiteral("ty"));
        const QString warningText = QStringLiteral("REMOTE HOST IDENTIFICATION HAS CHANGED");
        for (const QString& setting : settings) {
            for (const QString& c : cases) {
                const QString host = setting + u'-' + c;
                QProcess ssh;
                ssh.setStandardInputFile(QProcess::nullDevice());
                test::withoutTerminal(ssh);
                ssh.start(QStringLiteral("ssh"),
                        {QStringLiteral("-F"), sshConfig, host, QStringLiteral("echo"), QStringLiteral("ssh-ok")});
                QVERIFY(ssh.waitForFinished(30000));
                const QByteArray sshOut = ssh.readAllStandardOutput();
                const QString sshErr = QString::fromUtf8(ssh.readAllStandardError());
                const bool sshConnected
                        = ssh.exitStatus() == QProcess::NormalExit && ssh.exitCode() == 0 && sshOut.contains("ssh-ok");

                SshNodeOptions o = options(host, false, /*accept=*/false); // batch mode: nobody said yes
                o.configFile = tyConfig;
                Connected t;
                QStringList warnings;
                {
                    auto transport = std::make_unique<SshAgentTransport>(o);
                    t.transport = transport.get();
                    t.client = std::make_unique<AgentClient>(std::move(transport));
                    connect(t.client.get(), &AgentClient::warning, this,
                            [&warnings](const QString& m) { warnings << m; });
                    QSignalSpy ready(t.client.get(), &AgentClient::ready);
                    QSignalSpy lost(t.client.get(), &AgentClient::disconnected);
                    t.client->connectToAgent();
                    QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() || !lost.isEmpty(), 20000);
                    if (!lost.isEmpty())
                        t.error = lost.front().front().toString();
                }
                const bool tyConnected = t.error.isEmpty();
                const QString shown = t.error + warnings.join(u'\n');
                const QByteArray sshKnown = test::readFile(dir + u'/' + host + QStringLiteral(".ssh"));
                const QByteArray tyKnown = test::readFile(dir + u'/' + host + QStringLiteral(".ty"));
                const QByteArray what = (host + QStringLiteral(": ssh said: ") + sshErr
                        + QStringLiteral("\nTrainyard said: ") + shown)
                                                .toUtf8();
                QVERIFY2(tyConnected == sshConnected, what.constData());
                QVERIFY2(tyKnown == sshKnown,
                        QByteArray(what + "\nssh's known_hosts:\n" + sshKnown + "Trainyard's:\n" + tyKnown)
                                .constData());
                QVERIFY2(shown.contains(warningText) == sshErr.contains(warningText), what.constData());
                // The decision as a kind, not text.
                const HostKeyDecision expected = c == u"known" ? HostKeyDecision::Accepted
                        : c == u"unknown"
                        ? (sshConnected ? HostKeyDecision::Added : HostKeyDecision::RefusedUnknown)
                        : (sshConnected ? HostKeyDecision::AcceptedChanged : HostKeyDecision::RefusedChanged);
                QVERIFY2(t.transport->lastHostKeyDecision() == expected, what.constData());
            }
        }
        // What the matrix comes to (OpenSSH 9.2): the three cases that differ.
        QCOMPARE(test::readFile(dir + QStringLiteral("/accept-new-unknown.ty")),
                entry + newKey[0] + ' ' + newKey[1] + '\n');
        QCOMPARE(test::readFile(dir + QStringLiteral("/no-unknown.ty")), entry + newKey[0] + ' ' + newKey[1] + '\n');
        QCOMPARE(test::readFile(dir + QStringLiteral("/no-changed.ty")), entry + oldKey[0] + ' ' + oldKey[1] + '\n');
    }

    // Last: it replaces the host key.
    void changedHostKeyRefused()
    {
        const QByteArray before = test::readFile(m_sshd.knownHosts());
        const QList<QByteArray> lines = before.split('\n');
        int line = 0;
        for (int i = 0; i < lines.size(); ++i)
            if (lines[i].startsWith("[127.0.0.2]:"))
                line = i + 1;
        QVERIFY(line > 0);
        QString error;
        QVERIFY2(m_sshd.regenerateHostKey(&error), qPrintable(error));
        QVERIFY2(m_sshd.restart(&error), qPrintable(error));
        bool ok = false;
        const QString fingerprint = QString::fromLatin1(
                test::runTool(QStringLiteral("ssh-keygen"), {QStringLiteral("-lf"), m_sshd.hostKeyPub()}, &ok)
                        .split(' ')
                        .value(1));
        QVERIFY(ok);
        // Never accepted silently, not even when new keys would be.
        Connected c = connectTo(options(QStringLiteral("ws1"), false, /*accept=*/true));
        QVERIFY2(c.error.contains(QStringLiteral("CHANGED")), qPrintable(c.error));
        QVERIFY2(c.error.contains(QStringLiteral("%1:%2").arg(m_sshd.knownHosts()).arg(line)), qPrintable(c.error));
        QVERIFY2(c.error.contains(fingerprint), qPrintable(c.error));
        QVERIFY2(c.error.contains(QStringLiteral("127.0.0.2")), qPrintable(c.error));
        QCOMPARE(test::readFile(m_sshd.knownHosts()), before);
    }

    void cleanupTestCase()
    {
        if (m_up)
            m_sshd.stop();
    }
};

QTEST_GUILESS_MAIN(TestSshNodes)
#include "TestSshNodes.moc"
