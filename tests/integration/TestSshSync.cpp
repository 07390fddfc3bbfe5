// Code and results over SSH against a real OpenSSH sshd (SshdFixture, no
// mocks): `sync: true` uploads the workdir over SFTP on the node's session
// (.gitignore honoured, unchanged files skipped, a size limit, symlinks made
// as links with their own text and never written through), `artifacts`
// are listed and downloaded (symlinks and escaping names refused), a node
// behind ProxyJump, and an encrypted key (batch mode refused naming the key,
// a passphrase through TRAINYARD_ASKPASS asked naming the key file and
// accepted, never written anywhere; none asked when ssh-agent holds the key).
// Skipped (QSKIP) unless root with /usr/sbin/sshd, as in CI.
#include "SshdFixture.h"
#include "tests/support/TestSupport.h"

#include "core/nodes/AgentClient.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/nodes/WorkdirSync.h"
#include "core/runs/RunEngine.h"
#include "core/nodes/SshPassphraseProvider.h"
#include "core/service/ServiceClient.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QRegularExpression>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace ty;

namespace {

ino_t inodeOf(const QString& path)
{
    struct stat st { };
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_ino : 0;
}

// Of the link itself, not what it points to.
ino_t linkInodeOf(const QString& path)
{
    struct stat st { };
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_ino : 0;
}

// The exact text of a symlink (readlink(2)); empty when `path` is not one.
QString linkText(const QString& path)
{
    char buf[4096];
    const ssize_t n = ::readlink(QFile::encodeName(path).constData(), buf, sizeof buf);
    return n > 0 ? QFile::decodeName(QByteArray(buf, int(n))) : QString();
}

bool isLink(const QString& path)
{
    struct stat st { };
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool isRealDir(const QString& path)
{
    struct stat st { };
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace

class TestSshSync final : public QObject {
    Q_OBJECT

    test::SshdFixture m_sshd;
    QTemporaryDir m_tmp;
    bool m_up = false;

    QString stateDir(const QString& node) const { return m_tmp.filePath(QStringLiteral("state-") + node); }
    QString dbPath() const { return m_tmp.filePath(QStringLiteral("db/trainyard.db")); }

    SshNodeOptions options(const QString& alias, const QString& config = {}) const
    {
        SshNodeOptions o = m_sshd.nodeOptions(alias, stateDir(alias));
        if (!config.isEmpty())
            o.configFile = config;
        return o;
    }

    JobSpec spec(const QString& yaml, const QString& base)
    {
        auto s = parseJobSpec(yaml, QStringLiteral("test.yaml"), base);
        if (!s)
            qFatal("%s", qPrintable(s.error().message));
        return *s;
    }

    std::unique_ptr<RunEngine> makeEngine(ResultStore* store, const QString& node, const QString& config = {})
    {
        auto engine = std::make_unique<RunEngine>(store, dbPath());
        engine->setReconnectDelays(200, 800);
        engine->addNode(node, std::make_unique<SshAgentTransport>(options(node, config)));
        engine->acquireIngestion();
        return engine;
    }

    static RunRecord waitEnded(ResultStore& store, RunId id, int ms = 30000)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < ms) {
            store.flush();
            if (auto r = store.run(id); r && isTerminal(r->state))
                return *r;
            QTest::qWait(20);
        }
        return store.run(id).value_or(RunRecord{});
    }

    // An ed25519 key encrypted with `passphrase` at `key` (and key.pub),
    // accepted by the test sshd.
    bool authorizeEncryptedKey(const QString& key, const QString& passphrase)
    {
        bool ok = false;
        test::runTool(QStringLiteral("ssh-keygen"),
                {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
                        passphrase, QStringLiteral("-f"), key},
                &ok);
        QFile auth(m_sshd.dir() + QStringLiteral("/authorized_keys"));
        return ok && auth.open(QIODevice::Append) && auth.write(test::readFile(key + QStringLiteral(".pub"))) > 0;
    }

private Q_SLOTS:
    void initTestCase()
    {
        TY_START_SSHD_OR_SKIP(&m_sshd);
        m_up = true;
    }

    void syncUploadsWorkdirSkippingIgnoredAndUnchanged()
    {
        const QString w = m_tmp.filePath(QStringLiteral("proj"));
        test::writeFile(w + QStringLiteral("/.gitignore"), "*.log\n!keep.log\nbuild/\n/data\n**/cache/**\n");
        test::writeFile(w + QStringLiteral("/sub/.gitignore"), "*.tmp\n");
        test::writeFile(
                w + QStringLiteral("/train.sh"), "#!/bin/sh\nfind . -type f ! -name .trainyard-sync.json | sort\n");
        QFile::setPermissions(w + QStringLiteral("/train.sh"),
                QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        test::writeFile(w + QStringLiteral("/x.log"), "x");
        test::writeFile(w + QStringLiteral("/keep.log"), "k");
        test::writeFile(w + QStringLiteral("/build/o.bin"), "o");
        test::writeFile(w + QStringLiteral("/data/d.bin"), "d");
        test::writeFile(w + QStringLiteral("/sub/data/k.txt"), "kept");
        test::writeFile(w + QStringLiteral("/sub/t.tmp"), "t");
        test::writeFile(w + QStringLiteral("/sub/cache/z"), "z");
        test::writeFile(w + QStringLiteral("/.git/HEAD"), "ref");
        QByteArray blob(3 * 1024 * 1024 + 17, '\0');
        for (qsizetype i = 0; i < blob.size(); ++i)
            blob[i] = char((i * 131) & 0xff);
        test::writeFile(w + QStringLiteral("/weights.bin"), blob);
        QVERIFY(QFile::link(QStringLiteral("../shared_data"),
                w + QStringLiteral("/datasets"))); // made, leads nowhere: a warning names it
        QVERIFY(QFile::link(QStringLiteral("/etc"), w + QStringLiteral("/y.log"))); // ignored (*.log): no word

        auto store = ResultStore::open(dbPath());
        QVERIFY2(store, qPrintable(store ? QString() : store.error().message));
        auto engine = makeEngine(store->get(), QStringLiteral("ws1"));
        const JobSpec s
                = spec(QStringLiteral("name: synced\nworkdir: %1\nsync: true\ncommand: [./train.sh]\n").arg(w), w);
        const QRegularExpression dangling(QStringLiteral(
                "^run \\d+: sync of .*proj to node ws1 made 1 symlink\\(s\\) that lead nowhere there .*: datasets -> \\.\\./shared_data$"));
        QTest::ignoreMessage(QtWarningMsg, dangling);
        const auto id = engine->submit(s);
        QVERIFY2(id, qPrintable(id ? QString() : id.error().message));
        RunRecord run = waitEnded(**store, *id);
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        const QByteArray console = test::readFile(run.consolePath);
        QCOMPARE(console,
                QByteArray(
                        "./.gitignore\n./keep.log\n./sub/.gitignore\n./sub/data/k.txt\n./train.sh\n./weights.bin\n"));
        const QString remote = syncDirFor(stateDir(QStringLiteral("ws1")), w);
        QCOMPARE(test::readFile(remote + QStringLiteral("/weights.bin")), blob);
        QVERIFY(QFileInfo(remote + QStringLiteral("/train.sh")).isExecutable());
        const ino_t weightsBefore = inodeOf(remote + QStringLiteral("/weights.bin"));
        const ino_t trainBefore = inodeOf(remote + QStringLiteral("/train.sh"));

        // Second run: unchanged files stay (same inode), the changed one is replaced, a removed one goes.
        test::writeFile(w + QStringLiteral("/train.sh"),
                "#!/bin/sh\necho v2\nfind . -type f ! -name .trainyard-sync.json | sort\n");
        QFile::remove(w + QStringLiteral("/keep.log"));
        QTest::ignoreMessage(QtWarningMsg, dangling);
        const auto id2 = engine->submit(s);
        QVERIFY(id2);
        run = waitEnded(**store, *id2);
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        QCOMPARE(test::readFile(run.consolePath),
                QByteArray("v2\n./.gitignore\n./sub/.gitignore\n./sub/data/k.txt\n./train.sh\n./weights.bin\n"));
        QCOMPARE(inodeOf(remote + QStringLiteral("/weights.bin")), weightsBefore);
        QVERIFY(inodeOf(remote + QStringLiteral("/train.sh")) != trainBefore);

        // Over the limit: a clear error naming the total and the biggest file; nothing runs.
        const JobSpec limited = spec(
                QStringLiteral("name: too-big\nworkdir: %1\nsync: true\nsync_limit: 1MiB\ncommand: [./train.sh]\n")
                        .arg(w),
                w);
        const auto id3 = engine->submit(limited);
        QVERIFY(id3);
        run = waitEnded(**store, *id3);
        QCOMPARE(run.state, RunState::Failed);
        QVERIFY2(run.failureReason.contains(QStringLiteral("sync_limit 1.0 MiB")), qPrintable(run.failureReason));
        QVERIFY2(run.failureReason.contains(QStringLiteral("weights.bin (3.0 MiB)")), qPrintable(run.failureReason));
        QVERIFY2(run.failureReason.contains(QStringLiteral("3.0 MiB in")), qPrintable(run.failureReason));
    }

    // Issue #20: `workdir: wd` (relative to the spec) with `sync: true` was
    // resolved again against the resolved workdir (".../wd/wd is not a
    // directory"); also for a sweep of a spec given as text.
    void syncWithRelativeWorkdir()
    {
        const QString base = m_tmp.filePath(QStringLiteral("relbase"));
        const QString w = base + QStringLiteral("/wd");
        test::writeFile(w + QStringLiteral("/data.txt"), "synced bytes\n");
        auto store = ResultStore::open(dbPath());
        QVERIFY2(store, qPrintable(store ? QString() : store.error().message));
        auto engine = makeEngine(store->get(), QStringLiteral("ws1"));
        const QStringList yamls{
                QStringLiteral("name: rel\nworkdir: wd\nsync: true\ncommand: [cat, data.txt]\n"),
                QStringLiteral(
                        "name: relsweep\nworkdir: wd\nsync: true\ncommand: [cat, data.txt]\nsweep: {n: [1, 2]}\n"),
        };
        for (const QString& yaml : yamls) {
            const JobSpec s = spec(yaml, base);
            QCOMPARE(s.workdir, w);
            const auto ids = engine->submitAll(s);
            QVERIFY2(ids, qPrintable(ids ? QString() : ids.error().message));
            QCOMPARE(ids->size(), s.sweep.isEmpty() ? 1 : 2);
            for (RunId id : *ids) {
                const RunRecord run = waitEnded(**store, id);
                QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
                QCOMPARE(run.workdir, w);
                QCOMPARE(test::readFile(run.consolePath), QByteArray("synced bytes\n"));
            }
        }
        const QString remote = syncDirFor(stateDir(QStringLiteral("ws1")), w);
        QCOMPARE(test::readFile(remote + QStringLiteral("/data.txt")), QByteArray("synced bytes\n"));
    }

    void syncMakesSymlinksAsGitKeepsThem()
    {
        // A project with links in it, as researchers have them: one inside the
        // tree, one to a sibling folder, one absolute, one to nothing, one ignored.
        const QString w = m_tmp.filePath(QStringLiteral("linkproj"));
        const QString remote = syncDirFor(stateDir(QStringLiteral("ws1")), w);
        const QString shared
                = QFileInfo(remote).absolutePath() + QStringLiteral("/shared_data"); // ../shared_data from the copy
        const QString outside = m_tmp.filePath(QStringLiteral("outside"));
        const QString victim = m_tmp.filePath(QStringLiteral("victim")); // where a run points a link of its own
        test::writeFile(shared + QStringLiteral("/hello.txt"), "shared-hello\n");
        test::writeFile(outside + QStringLiteral("/abs.txt"), "outside\n");
        QDir().mkpath(victim);
        test::writeFile(w + QStringLiteral("/.gitignore"), "*.log\n");
        test::writeFile(w + QStringLiteral("/checkpoints/best.pt"), "weights-v1\n");
        test::writeFile(w + QStringLiteral("/checkpoints/other.pt"), "weights-v2\n");
        test::writeFile(w + QStringLiteral("/sub/a.txt"), "a\n");
        test::writeFile(w + QStringLiteral("/train.sh"),
                "#!/bin/sh\ncat model.pt data/hello.txt abs.txt\n[ -e run_made ] || ln -s '" + QFile::encodeName(victim)
                        + "' run_made\nfind . -type l | sort\n");
        QFile::setPermissions(w + QStringLiteral("/train.sh"),
                QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        QVERIFY(QFile::link(QStringLiteral("checkpoints/best.pt"), w + QStringLiteral("/model.pt")));
        QVERIFY(QFile::link(QStringLiteral("../shared_data"), w + QStringLiteral("/data")));
        QVERIFY(QFile::link(outside + QStringLiteral("/abs.txt"), w + QStringLiteral("/abs.txt")));
        QVERIFY(QFile::link(QStringLiteral("missing/file"), w + QStringLiteral("/nowhere")));
        QVERIFY(QFile::link(QStringLiteral("/etc"), w + QStringLiteral("/y.log")));

        auto store = ResultStore::open(dbPath());
        QVERIFY2(store, qPrintable(store ? QString() : store.error().message));
        auto engine = makeEngine(store->get(), QStringLiteral("ws1"));
        const JobSpec s
                = spec(QStringLiteral("name: links\nworkdir: %1\nsync: true\ncommand: [./train.sh]\n").arg(w), w);
        QTest::ignoreMessage(QtWarningMsg,
                QRegularExpression(QStringLiteral(
                        "^run \\d+: sync of .*linkproj to node ws1 made 1 symlink\\(s\\) that lead nowhere there .*: nowhere -> missing/file$")));
        const auto id = engine->submit(s);
        QVERIFY2(id, qPrintable(id ? QString() : id.error().message));
        RunRecord run = waitEnded(**store, *id);
        QVERIFY2(run.state == RunState::Succeeded,
                qPrintable(run.failureReason + QString::fromUtf8(test::readFile(run.consolePath))));
        // The run read through the links; they are links on the node, with the same text.
        QCOMPARE(test::readFile(run.consolePath),
                QByteArray(
                        "weights-v1\nshared-hello\noutside\n./abs.txt\n./data\n./model.pt\n./nowhere\n./run_made\n"));
        QCOMPARE(linkText(remote + QStringLiteral("/model.pt")), QStringLiteral("checkpoints/best.pt"));
        QCOMPARE(linkText(remote + QStringLiteral("/data")), QStringLiteral("../shared_data"));
        QCOMPARE(linkText(remote + QStringLiteral("/abs.txt")), outside + QStringLiteral("/abs.txt"));
        QCOMPARE(linkText(remote + QStringLiteral("/nowhere")), QStringLiteral("missing/file"));
        QVERIFY(!isLink(remote + QStringLiteral("/y.log")) && !QFileInfo::exists(remote + QStringLiteral("/y.log")));
        QCOMPARE(QDir(shared).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
                QStringList{QStringLiteral("hello.txt")});
        QCOMPARE(linkText(remote + QStringLiteral("/run_made")), victim);
        const ino_t absBefore = linkInodeOf(remote + QStringLiteral("/abs.txt"));

        // Re-sync: a link with another target is replaced, one with the same
        // target stays, a gone one goes; a link that is a folder now (and the
        // run's own link, a folder here) becomes a real folder there: nothing
        // is written through it into shared_data or the victim folder. A
        // folder that is a link now becomes one.
        QVERIFY(QFile::remove(w + QStringLiteral("/model.pt")));
        QVERIFY(QFile::link(QStringLiteral("checkpoints/other.pt"), w + QStringLiteral("/model.pt")));
        QVERIFY(QFile::remove(w + QStringLiteral("/nowhere")));
        QVERIFY(QFile::remove(w + QStringLiteral("/data")));
        test::writeFile(w + QStringLiteral("/data/hello.txt"), "local-hello\n");
        test::writeFile(w + QStringLiteral("/run_made/x.txt"), "mine\n");
        QVERIFY(QDir(w + QStringLiteral("/sub")).removeRecursively());
        QVERIFY(QFile::link(QStringLiteral("checkpoints"), w + QStringLiteral("/sub")));
        const auto id2 = engine->submit(s);
        QVERIFY(id2);
        run = waitEnded(**store, *id2);
        QVERIFY2(run.state == RunState::Succeeded,
                qPrintable(run.failureReason + QString::fromUtf8(test::readFile(run.consolePath))));
        QCOMPARE(test::readFile(run.consolePath),
                QByteArray("weights-v2\nlocal-hello\noutside\n./abs.txt\n./model.pt\n./sub\n"));
        QCOMPARE(linkText(remote + QStringLiteral("/model.pt")), QStringLiteral("checkpoints/other.pt"));
        QCOMPARE(linkInodeOf(remote + QStringLiteral("/abs.txt")), absBefore);
        QVERIFY(!isLink(remote + QStringLiteral("/nowhere")));
        QVERIFY(isRealDir(remote + QStringLiteral("/data")));
        QVERIFY(isRealDir(remote + QStringLiteral("/run_made")));
        QCOMPARE(test::readFile(remote + QStringLiteral("/run_made/x.txt")), QByteArray("mine\n"));
        QCOMPARE(linkText(remote + QStringLiteral("/sub")), QStringLiteral("checkpoints"));
        QCOMPARE(test::readFile(shared + QStringLiteral("/hello.txt")), QByteArray("shared-hello\n"));
        QCOMPARE(QDir(shared).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
                QStringList{QStringLiteral("hello.txt")});
        QCOMPARE(QDir(victim).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList{});
        QCOMPARE(test::readFile(outside + QStringLiteral("/abs.txt")), QByteArray("outside\n"));
    }

    void artifactsDownloadedAndEscapesRefused()
    {
        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), QStringLiteral("ws1"));
        const QString work = m_tmp.filePath(QStringLiteral("artwork"));
        QDir().mkpath(work);
        const JobSpec s
                = spec(QStringLiteral("name: arts\nworkdir: %1\nartifacts: [\"out/*\", \"**/*.json\"]\n"
                                      "command: \"mkdir -p out/deep && head -c 300000 /dev/urandom > out/model.pt && "
                                      "echo '{\\\"a\\\":1}' > out/deep/m.json && echo x > 'out/a..b' && "
                                      "ln -s /etc/passwd out/passwd && echo done\"\n")
                                .arg(work),
                        work);
        const auto id = engine->submit(s);
        QVERIFY(id);
        const RunRecord run = waitEnded(**store, *id);
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        QTRY_COMPARE_WITH_TIMEOUT((*store)->artifacts(*id).size(), 4, 10000); // model.pt, a..b, passwd, deep/m.json

        const QString dest = m_tmp.filePath(QStringLiteral("results"));
        bool got = false;
        Result<ArtifactDownload> result = fail(QStringLiteral("not called"));
        engine->downloadArtifacts(*id, dest, [&](const Result<ArtifactDownload>& d) {
            result = d;
            got = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(got, 20000);
        QVERIFY2(result, qPrintable(result ? QString() : result.error().message));
        QStringList downloaded = result->downloaded;
        downloaded.sort();
        QCOMPARE(downloaded,
                (QStringList{QStringLiteral("out/a..b"), QStringLiteral("out/deep/m.json"),
                        QStringLiteral("out/model.pt")}));
        QCOMPARE(result->refused.size(), 1);
        QVERIFY2(result->refused.front().contains(QStringLiteral("out/passwd"))
                        && result->refused.front().contains(QStringLiteral("symbolic link")),
                qPrintable(result->refused.front()));
        QVERIFY(!QFileInfo::exists(dest + QStringLiteral("/out/passwd")));
        QCOMPARE(test::readFile(dest + QStringLiteral("/out/model.pt")),
                test::readFile(work + QStringLiteral("/out/model.pt")));
        QCOMPARE(test::readFile(dest + QStringLiteral("/out/model.pt")).size(), 300000);
        QCOMPARE(test::readFile(dest + QStringLiteral("/out/deep/m.json")), QByteArray("{\"a\":1}\n"));

        // A glob that climbs out is refused by the agent; so is one in the spec.
        auto t = std::make_unique<SshAgentTransport>(options(QStringLiteral("ws1")));
        AgentClient client(std::move(t));
        client.connectToAgent();
        QTRY_VERIFY_WITH_TIMEOUT(client.isReady(), 20000);
        std::optional<Result<AgentFileList>> listed;
        client.listFiles(run.agentRunId, {QStringLiteral("../*")}, [&](const Result<AgentFileList>& l) { listed = l; });
        QTRY_VERIFY_WITH_TIMEOUT(listed.has_value(), 10000);
        QVERIFY(!*listed);
        QVERIFY2(listed->error().message.contains(QStringLiteral("\"..\"")), qPrintable(listed->error().message));
        const auto bad = parseJobSpec(QStringLiteral("command: [true]\nartifacts: [\"../../etc/passwd\"]\n"),
                QStringLiteral("bad.yaml"), work);
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.contains(QStringLiteral("'..'")), qPrintable(bad.error().message));
    }

    void proxyJumpThroughOneNodeToTheOther()
    {
        // libssh 0.10 turns ProxyJump into `ssh -W ... ws1` run by /bin/sh: an
        // `ssh` first in PATH hands the system ssh this test's config, key and
        // known_hosts (OpenSSH reads ~/.ssh/config of the passwd entry, not $HOME).
        const QString d = m_tmp.filePath(QStringLiteral("jump"));
        QDir().mkpath(d + QStringLiteral("/bin"));
        const QString sshConfig = d + QStringLiteral("/ssh_config");
        const QString known = d + QStringLiteral("/known_hosts");
        const QByteArray hostKey = test::readFile(m_sshd.hostKeyPub()).trimmed();
        const QByteArray port = QByteArray::number(m_sshd.port());
        test::writeFile(known, "[127.0.0.2]:" + port + " " + hostKey + "\n[127.0.0.3]:" + port + " " + hostKey + "\n");
        const QByteArray key = QFile::encodeName(m_sshd.dir() + QStringLiteral("/id_ed25519"));
        test::writeFile(sshConfig,
                "Host ws1\n  HostName 127.0.0.2\n  Port " + port + "\n  User root\n  IdentityFile " + key
                        + "\n  UserKnownHostsFile " + QFile::encodeName(known)
                        + "\n  BatchMode yes\n  StrictHostKeyChecking yes\n"
                          "Host behind\n  HostName 127.0.0.3\n  Port "
                        + port + "\n  User root\n  IdentityFile " + key + "\n  UserKnownHostsFile "
                        + QFile::encodeName(known) + "\n  ProxyJump ws1\n");
        test::writeFile(d + QStringLiteral("/bin/ssh"),
                "#!/bin/sh\nexec /usr/bin/ssh -F '" + QFile::encodeName(sshConfig) + "' \"$@\"\n");
        QFile::setPermissions(d + QStringLiteral("/bin/ssh"),
                QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        const QByteArray oldPath = qgetenv("PATH");
        qputenv("PATH", QFile::encodeName(d + QStringLiteral("/bin")) + ":" + oldPath);
        auto restore = qScopeGuard([&] { qputenv("PATH", oldPath); });

        auto store = ResultStore::open(dbPath());
        QVERIFY(store);
        auto engine = makeEngine(store->get(), QStringLiteral("behind"), sshConfig);
        const auto id = engine->submit(spec(
                QStringLiteral(
                        "name: jumped\nworkdir: /tmp\ncommand: \"echo via-jump; hostname -I 2>/dev/null >/dev/null; echo $SSH_CONNECTION\"\n"),
                QDir::tempPath()));
        QVERIFY(id);
        const RunRecord run = waitEnded(**store, *id);
        QVERIFY2(run.state == RunState::Succeeded, qPrintable(run.failureReason));
        const QByteArray console = test::readFile(run.consolePath);
        QVERIFY2(console.startsWith("via-jump\n"), console.constData());
        // The agent's SSH connection arrived at 127.0.0.3 from the jump host's side.
        QVERIFY2(console.contains(QByteArray(" 127.0.0.3 " + port)), console.constData());
        QCOMPARE(run.node, QStringLiteral("behind"));
    }

    void encryptedKeyNeedsItsPassphrase()
    {
        const QString d = m_tmp.filePath(QStringLiteral("enc"));
        QDir().mkpath(d);
        const QString key = d + QStringLiteral("/id_enc");
        const QString passphrase = QStringLiteral("correct horse 42 battery");
        QVERIFY(authorizeEncryptedKey(key, passphrase));
        bool ok = false;
        // A second encrypted key, first in the config, that the server does
        // not know (and without a .pub file): offered by its public half, it
        // is refused without a passphrase question.
        const QString decoy = d + QStringLiteral("/id_decoy");
        test::runTool(QStringLiteral("ssh-keygen"),
                {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
                        QStringLiteral("another secret"), QStringLiteral("-f"), decoy},
                &ok);
        QVERIFY(ok);
        QVERIFY(QFile::remove(decoy + QStringLiteral(".pub")));
        const QString cfgDir = d + QStringLiteral("/config");
        QDir().mkpath(cfgDir);
        const QString sshConfig = cfgDir + QStringLiteral("/ssh_config");
        test::writeFile(sshConfig,
                "Host enc\n  HostName 127.0.0.2\n  Port " + QByteArray::number(m_sshd.port())
                        + "\n  User root\n  IdentityFile " + QFile::encodeName(decoy) + "\n  IdentityFile "
                        + QFile::encodeName(key) + "\n  UserKnownHostsFile "
                        + QFile::encodeName(cfgDir + QStringLiteral("/known_hosts")) + "\n");
        // The askpass program notes each question it gets (its argument).
        const QString prompts = d + QStringLiteral("/prompts.txt");
        const QString askpass = d + QStringLiteral("/askpass.sh");
        test::writeFile(askpass,
                "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" + QFile::encodeName(prompts)
                        + "'\nprintf '%s\\n' \"$TY_TEST_PASSPHRASE\"\n");
        QFile::setPermissions(askpass, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        const QString dbDir = d + QStringLiteral("/db");
        QString agentSocket; // SSH_AUTH_SOCK for trainyardctl, when set
        auto ctl = [&](const QStringList& args, bool withPassphrase, int* code,
                           const QString& askpassProgram = QString()) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), sshConfig);
            env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
            env.remove(QStringLiteral("SSH_AUTH_SOCK"));
            if (!agentSocket.isEmpty())
                env.insert(QStringLiteral("SSH_AUTH_SOCK"), agentSocket);
            env.insert(QStringLiteral("HOME"), d); // no default keys of the real user
            if (withPassphrase) {
                env.insert(QStringLiteral("TRAINYARD_ASKPASS"), askpassProgram.isEmpty() ? askpass : askpassProgram);
                env.insert(QStringLiteral("TY_TEST_PASSPHRASE"), passphrase);
            }
            p.setProcessEnvironment(env);
            test::withoutTerminal(p); // batch mode
            p.start(QStringLiteral(TRAINYARD_CTL_PATH),
                    QStringList{QStringLiteral("--db"), dbDir + QStringLiteral("/trainyard.db")} + args);
            p.waitForFinished(60000);
            *code = p.exitCode();
            return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
        };
        const QStringList add{QStringLiteral("node"), QStringLiteral("add"), QStringLiteral("encnode"),
                QStringLiteral("--host"), QStringLiteral("enc"), QStringLiteral("--agent-path"), test::agentPath(),
                QStringLiteral("--accept-new-host-key")};
        int code = -1;
        QString out = ctl(add, false, &code);
        QVERIFY2(code != 0, qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("It needs the encrypted private key %1, which").arg(key))
                        && out.contains(QStringLiteral("batch mode")),
                qPrintable(out));
        QVERIFY(!QFileInfo::exists(prompts));
        // An askpass program that cannot run is named as such.
        out = ctl(add, true, &code, d + QStringLiteral("/no-such-askpass"));
        QVERIFY2(code != 0
                        && out.contains(QStringLiteral("cannot run the askpass program ") + d
                                + QStringLiteral("/no-such-askpass")),
                qPrintable(out));
        out = ctl(add, true, &code);
        QVERIFY2(code == 0 && out.contains(QStringLiteral("added node encnode")), qPrintable(out));
        // One question, naming the key it is for, as OpenSSH's does; none for the decoy.
        QCOMPARE(QString::fromUtf8(test::readFile(prompts)),
                QStringLiteral("encnode: Enter passphrase for key '%1':\n").arg(key));
        // A wrong passphrase is asked for again, as OpenSSH does: a typo
        // costs one more question, not the connection. Three at most.
        const QString question = QStringLiteral("Enter passphrase for key '%1':\n").arg(key);
        const QString typoPrompts = d + QStringLiteral("/typo-prompts.txt");
        const QString typo = d + QStringLiteral("/askpass-typo.sh");
        test::writeFile(typo,
                "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" + QFile::encodeName(typoPrompts)
                        + "'\n"
                          "if [ -e '"
                        + QFile::encodeName(typoPrompts)
                        + ".once' ]; then printf '%s\\n' \"$TY_TEST_PASSPHRASE\"; "
                          "else : > '"
                        + QFile::encodeName(typoPrompts) + ".once'; echo wrong; fi\n");
        const QString wrongPrompts = d + QStringLiteral("/wrong-prompts.txt");
        const QString wrong = d + QStringLiteral("/askpass-wrong.sh");
        test::writeFile(
                wrong, "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" + QFile::encodeName(wrongPrompts) + "'\necho wrong\n");
        for (const QString& script : {typo, wrong})
            QFile::setPermissions(script, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        QStringList retry = add;
        retry[2] = QStringLiteral("encretry");
        out = ctl(retry, true, &code, typo);
        QVERIFY2(code == 0 && out.contains(QStringLiteral("added node encretry")), qPrintable(out));
        QCOMPARE(QString::fromUtf8(test::readFile(typoPrompts)),
                QString(QStringLiteral("encretry: ") + question).repeated(2));
        retry[2] = QStringLiteral("encwrong");
        out = ctl(retry, true, &code, wrong);
        QVERIFY2(code != 0, qPrintable(out));
        QCOMPARE(QString::fromUtf8(test::readFile(wrongPrompts)),
                QString(QStringLiteral("encwrong: ") + question).repeated(3));
        QVERIFY2(out.contains(QStringLiteral("the server accepts the key %1, but it could not be unlocked").arg(key))
                        && out.contains(QStringLiteral("3 time(s)")) && !out.contains(QStringLiteral("accepted none")),
                qPrintable(out));
        // A pipe on stdin is not batch mode while there is a terminal: the
        // question goes to the terminal (here a pty that script(1) makes the
        // controlling one), as ssh's does, and is answered there.
        {
            QProcess term;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), sshConfig);
            env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
            env.remove(QStringLiteral("SSH_AUTH_SOCK"));
            env.insert(QStringLiteral("HOME"), d);
            env.insert(QStringLiteral("TY_CTL"), QStringLiteral(TRAINYARD_CTL_PATH));
            env.insert(QStringLiteral("TY_DB"), dbDir + QStringLiteral("/trainyard.db"));
            term.setProcessEnvironment(env);
            term.setChildProcessModifier([] { ::setsid(); }); // script's pty is then the only terminal
            term.setProcessChannelMode(QProcess::MergedChannels);
            term.start(QStringLiteral("script"),
                    {QStringLiteral("-qec"),
                            QStringLiteral(
                                    "echo piped | \"$TY_CTL\" --db \"$TY_DB\" node add encpty --host enc --agent-path \"$TRAINYARD_AGENT\""),
                            QStringLiteral("/dev/null")});
            QVERIFY(term.waitForStarted(5000));
            QByteArray seen;
            QTRY_VERIFY_WITH_TIMEOUT((seen += term.readAll()).contains("Enter passphrase for key"), 20000);
            QVERIFY2(
                    seen.contains(QFile::encodeName(QStringLiteral("encpty: Enter passphrase for key '%1':").arg(key))),
                    seen.constData());
            term.write(passphrase.toUtf8() + "\r");
            const bool finished = term.waitForFinished(30000);
            seen += term.readAll();
            QVERIFY2(finished, seen.constData());
            QVERIFY2(term.exitCode() == 0 && seen.contains("added node encpty"), seen.constData());
            QVERIFY2(!seen.contains(passphrase.toUtf8()), seen.constData()); // not echoed
        }
        // ssh-agent comes first: with the key loaded there, batch mode logs
        // in and nothing is asked.
        QProcess agent;
        agentSocket = d + QStringLiteral("/agent.sock");
        agent.start(QStringLiteral("ssh-agent"), {QStringLiteral("-D"), QStringLiteral("-a"), agentSocket});
        auto stopAgent = qScopeGuard([&] {
            agent.kill();
            agent.waitForFinished(3000);
        });
        QVERIFY(agent.waitForStarted(5000));
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(agentSocket), 5000);
        {
            QProcess sshAdd;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("SSH_AUTH_SOCK"), agentSocket);
            env.insert(QStringLiteral("SSH_ASKPASS"), askpass);
            env.insert(QStringLiteral("SSH_ASKPASS_REQUIRE"), QStringLiteral("force"));
            env.insert(QStringLiteral("TY_TEST_PASSPHRASE"), passphrase);
            sshAdd.setProcessEnvironment(env);
            sshAdd.setStandardInputFile(QProcess::nullDevice());
            sshAdd.start(QStringLiteral("ssh-add"), {key});
            QVERIFY(sshAdd.waitForFinished(10000));
            QVERIFY2(sshAdd.exitCode() == 0, sshAdd.readAllStandardError().constData());
        }
        const QByteArray promptsBefore = test::readFile(prompts);
        QStringList viaAgent = add;
        viaAgent[2] = QStringLiteral("encagent");
        out = ctl(viaAgent, false, &code);
        QVERIFY2(code == 0 && out.contains(QStringLiteral("added node encagent")), qPrintable(out));
        QCOMPARE(test::readFile(prompts), promptsBefore);
        agentSocket.clear();
        // The passphrase is nowhere on disk: not in the database, not in the config directory.
        const QByteArray secret = passphrase.toUtf8();
        for (const QString& dir : {dbDir, cfgDir}) {
            QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
            int files = 0;
            while (it.hasNext()) {
                const QString f = it.next();
                ++files;
                QVERIFY2(!test::readFile(f).contains(secret), qPrintable(f));
            }
            QVERIFY(files > 0);
        }
    }

    // The service has no terminal: its SSH session's passphrase question goes
    // to the client that takes questions (the GUI's dialog, trainyardctl's
    // terminal), naming the node and the key; its answer logs in. Declined,
    // or with no client to ask, the login fails at once as in batch mode.
    void serviceAsksAClientForAPassphrase()
    {
        const QString d = m_tmp.filePath(QStringLiteral("svcpass"));
        QDir().mkpath(d + QStringLiteral("/db"));
        const QString key = d + QStringLiteral("/id_enc");
        const QString passphrase = QStringLiteral("svc horse 7");
        QVERIFY(authorizeEncryptedKey(key, passphrase));
        const QString sshConfig = d + QStringLiteral("/ssh_config");
        test::writeFile(sshConfig,
                "Host enc\n  HostName 127.0.0.2\n  Port " + QByteArray::number(m_sshd.port())
                        + "\n  User root\n  IdentitiesOnly yes\n  IdentityFile " + QFile::encodeName(key)
                        + "\n  UserKnownHostsFile " + QFile::encodeName(m_sshd.knownHosts()) + "\n");
        // The service started below gets this process's environment.
        const QByteArray home = qgetenv("HOME"), sock = qgetenv("SSH_AUTH_SOCK");
        const auto restore = qScopeGuard([&] {
            qputenv("HOME", home);
            if (!sock.isEmpty())
                qputenv("SSH_AUTH_SOCK", sock);
            qunsetenv("TRAINYARD_SSH_CONFIG");
            qunsetenv("TRAINYARD_DAEMON");
        });
        qputenv("HOME", QFile::encodeName(d));
        qunsetenv("SSH_AUTH_SOCK");
        qputenv("TRAINYARD_SSH_CONFIG", QFile::encodeName(sshConfig));
        qputenv("TRAINYARD_AGENT", test::agentPath().toUtf8());
        qputenv("TRAINYARD_DAEMON", TRAINYARDD_PATH);
        const QString db = d + QStringLiteral("/db/trainyard.db");
        auto svc = service::ServiceClient::connectTo(db, service::ServiceClient::Start::IfNeeded);
        QVERIFY2(svc, svc ? "" : qPrintable(svc.error().message));
        const auto stopService = qScopeGuard([&] { (void)(*svc)->call(QStringLiteral("stop")); });

        // A client that takes questions, answering as a user would.
        struct Answering final : SshPassphraseProvider {
            QStringList asked;
            std::optional<QByteArray> reply;
            std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override
            {
                asked << node + QStringLiteral(": ") + prompt;
                return reply;
            }
        };
        auto user = std::make_shared<Answering>();
        user->reply = passphrase.toUtf8();
        QVERIFY((*svc)->answerPromptsWith(user));
        QSignalSpy nodes(svc->get(), &service::ServiceClient::nodeStatusChanged);
        const auto status = [&](const QString& node) -> std::optional<std::pair<bool, ErrorKind>> {
            std::optional<std::pair<bool, ErrorKind>> last;
            for (const QList<QVariant>& a : std::as_const(nodes))
                if (a.at(0).toString() == node)
                    last = std::pair(a.at(1).toBool(), a.at(3).value<ErrorKind>());
            return last;
        };
        const auto add = [&](const QString& name) {
            return (*svc)->call(QStringLiteral("node_add"),
                    {{QStringLiteral("node"),
                             QJsonObject{{QStringLiteral("name"), name},
                                     {QStringLiteral("host"), QStringLiteral("enc")},
                                     {QStringLiteral("agent_path"), test::agentPath()}}},
                            {QStringLiteral("accept_new_host_key"), true}});
        };
        QVERIFY(add(QStringLiteral("encsvc")));
        QTRY_VERIFY_WITH_TIMEOUT(status(QStringLiteral("encsvc")) && status(QStringLiteral("encsvc"))->first, 30000);
        QCOMPARE(user->asked, QStringList{QStringLiteral("encsvc: Enter passphrase for key '%1':").arg(key)});

        // Declined: refused, with the kind a login failure has.
        user->reply.reset();
        QVERIFY(add(QStringLiteral("encno")));
        QTRY_VERIFY_WITH_TIMEOUT(status(QStringLiteral("encno")).has_value(), 30000);
        QCOMPARE(*status(QStringLiteral("encno")), std::pair(false, ErrorKind::Authentication));
        QVERIFY(user->asked.size() >= 2); // its reconnections ask again
        for (qsizetype i = 1; i < user->asked.size(); ++i)
            QVERIFY2(user->asked.at(i).startsWith(QStringLiteral("encno: ")), qPrintable(user->asked.at(i)));

        // Nobody takes questions: declined at once, never a 2-minute wait.
        QVERIFY((*svc)->answerPromptsWith(nullptr));
        const qsizetype askedBefore = user->asked.size();
        QElapsedTimer t;
        t.start();
        QVERIFY(add(QStringLiteral("encnobody")));
        QTRY_VERIFY_WITH_TIMEOUT(status(QStringLiteral("encnobody")).has_value(), 30000);
        QCOMPARE(*status(QStringLiteral("encnobody")), std::pair(false, ErrorKind::Authentication));
        QVERIFY2(t.elapsed() < 20000, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(user->asked.size(), askedBefore);
    }

    void agentThatHangsUpMidLoginIsNotFatal()
    {
        // An ssh-agent that lists the right key and hangs up at once: libssh's
        // next write to it (the sign request) gets EPIPE. That must fail the
        // agent's part of the login (the key file then logs in), not kill
        // trainyardctl with SIGPIPE and no word (exit 141).
        const QString d = m_tmp.filePath(QStringLiteral("dying-agent"));
        QDir().mkpath(d);
        const QString sshConfig = d + QStringLiteral("/ssh_config");
        const QString known = d + QStringLiteral("/known_hosts");
        const QByteArray port = QByteArray::number(m_sshd.port());
        test::writeFile(known, "[127.0.0.2]:" + port + " " + test::readFile(m_sshd.hostKeyPub()).trimmed() + "\n");
        const QString key = m_sshd.dir() + QStringLiteral("/id_ed25519");
        test::writeFile(sshConfig,
                "Host dying\n  HostName 127.0.0.2\n  Port " + port + "\n  User root\n  IdentityFile "
                        + QFile::encodeName(key) + "\n  UserKnownHostsFile " + QFile::encodeName(known) + "\n");
        const QByteArray blob
                = QByteArray::fromBase64(test::readFile(key + QStringLiteral(".pub")).split(' ').value(1));
        QVERIFY(!blob.isEmpty());
        const auto u32 = [](quint32 v) {
            const char bytes[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
            return QByteArray(bytes, 4);
        };
        // SSH2_AGENT_IDENTITIES_ANSWER (12) with the one key (draft-miller-ssh-agent).
        const QByteArray body = QByteArray(1, char(12)) + u32(1) + u32(quint32(blob.size())) + blob + u32(4) + "test";
        const QByteArray answer = u32(quint32(body.size())) + body;
        QLocalServer agent;
        QVERIFY(agent.listen(d + QStringLiteral("/agent.sock")));
        int hungUp = 0;
        connect(&agent, &QLocalServer::newConnection, &agent, [&] {
            QLocalSocket* c = agent.nextPendingConnection();
            connect(c, &QLocalSocket::readyRead, c, [c, answer, &hungUp] {
                const QByteArray request = c->readAll();
                if (request.size() >= 5 && request.at(4) == char(11)) // REQUEST_IDENTITIES: answered,
                    c->write(answer);
                ++hungUp; // then gone before the sign request comes
                c->disconnectFromServer();
            });
        });
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SSH_AUTH_SOCK"), agent.fullServerName());
        env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), sshConfig);
        env.insert(QStringLiteral("TRAINYARD_AGENT"), test::agentPath());
        env.insert(QStringLiteral("HOME"), d);
        p.setProcessEnvironment(env);
        test::withoutTerminal(p);
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(QStringLiteral(TRAINYARD_CTL_PATH),
                {QStringLiteral("--db"), d + QStringLiteral("/db/trainyard.db"), QStringLiteral("node"),
                        QStringLiteral("add"), QStringLiteral("dying"), QStringLiteral("--host"),
                        QStringLiteral("dying"), QStringLiteral("--agent-path"), test::agentPath()});
        QVERIFY(p.waitForStarted(5000));
        QTRY_COMPARE_WITH_TIMEOUT(p.state(), QProcess::NotRunning, 90000); // the event loop serves the agent meanwhile
        const QString out = QString::fromUtf8(p.readAll());
        QVERIFY2(hungUp >= 1, qPrintable(out)); // the agent was asked, and hung up
        QVERIFY2(p.exitStatus() == QProcess::NormalExit, qPrintable(QStringLiteral("killed (SIGPIPE?): ") + out));
        QVERIFY2(p.exitCode() == 0 && out.contains(QStringLiteral("added node dying")), qPrintable(out));
    }

    void cleanupTestCase()
    {
        if (m_up)
            m_sshd.stop();
    }
};

QTEST_GUILESS_MAIN(TestSshSync)
#include "TestSshSync.moc"
