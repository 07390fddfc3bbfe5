// Hashed known_hosts entries as OpenSSH writes and reads them (checked
// against ssh-keygen -H / -F when OpenSSH's tools are installed), appending
// to known_hosts, and OpenSSH's view of a host's configuration (`ssh -G`).
#include "tests/support/TestSupport.h"
#include "core/nodes/OpenSshConfig.h"
#include "core/nodes/SshKnownHosts.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

namespace {

int run(const QString& program, const QStringList& args, QByteArray* out = nullptr)
{
    QProcess p;
    p.setStandardInputFile(QProcess::nullDevice());
    p.start(program, args);
    if (!p.waitForFinished(30000))
        return -1;
    if (out)
        *out = p.readAllStandardOutput();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

} // namespace

class TestSshKnownHosts final : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    QByteArray m_key; // "ssh-ed25519 AAAA..." (a real public key)

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        if (QStandardPaths::findExecutable(QStringLiteral("ssh-keygen")).isEmpty()) {
            m_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk5fV0PzUcmqsbOJ9hIu7tZmEXZl4Bh8j4vYbVRmCe8";
            return;
        }
        const QString key = m_tmp.filePath(QStringLiteral("host_key"));
        QCOMPARE(run(QStringLiteral("ssh-keygen"),
                         {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
                                 QString(), QStringLiteral("-f"), key}),
                0);
        const QList<QByteArray> fields = test::readFile(key + QStringLiteral(".pub")).trimmed().split(' ');
        QVERIFY(fields.size() >= 2);
        m_key = fields[0] + ' ' + fields[1];
    }

    void hashedNameMatchesOpenSsh_data()
    {
        QTest::addColumn<QString>("host");
        QTest::addColumn<int>("port");
        QTest::newRow("port 22") << QStringLiteral("ws1.example.org") << 22;
        QTest::newRow("other port") << QStringLiteral("127.0.0.2") << 2222;
    }

    void hashedNameMatchesOpenSsh()
    {
        QFETCH(QString, host);
        QFETCH(int, port);
        if (QStandardPaths::findExecutable(QStringLiteral("ssh-keygen")).isEmpty())
            QSKIP("ssh-keygen is missing (Debian: openssh-client)");
        // ssh-keygen -H hashes a plain entry with a salt of its own; the same
        // salt must give the same pattern here.
        const QString file = m_tmp.filePath(QStringLiteral("plain_%1").arg(port));
        const QByteArray name = knownHostsName(host, port).toUtf8();
        test::writeFile(file, name + ' ' + m_key + '\n');
        QCOMPARE(run(QStringLiteral("ssh-keygen"),
                         {QStringLiteral("-q"), QStringLiteral("-H"), QStringLiteral("-f"), file}),
                0);
        const QByteArray theirs = test::readFile(file).trimmed();
        QVERIFY2(theirs.startsWith("|1|"), theirs.constData());
        const QByteArray pattern = theirs.left(theirs.indexOf(' '));
        const QByteArray salt = QByteArray::fromBase64(pattern.split('|').value(2));
        QCOMPARE(salt.size(), 20);
        QCOMPARE(hashedKnownHostsName(name, salt), pattern);
        QCOMPARE(theirs.mid(pattern.size() + 1), m_key);
    }

    void hashedEntryFoundByOpenSshAndHere()
    {
        const QByteArray name = knownHostsName(QStringLiteral("127.0.0.2"), 2222).toUtf8();
        QCOMPARE(name, QByteArray("[127.0.0.2]:2222"));
        const QByteArray a = hashedKnownHostsName(name);
        const QByteArray b = hashedKnownHostsName(name);
        QVERIFY(a.startsWith("|1|"));
        QVERIFY(a != b); // a fresh salt each time
        QCOMPARE(QByteArray::fromBase64(a.split('|').value(2)).size(), 20);
        QCOMPARE(QByteArray::fromBase64(a.split('|').value(3)).size(), 20); // HMAC-SHA1

        const QString file = m_tmp.filePath(QStringLiteral("hashed/known_hosts"));
        QVERIFY(appendKnownHostsLine(file, "other.example.org " + m_key).has_value());
        QVERIFY(appendKnownHostsLine(file, QByteArray(a + ' ' + m_key)).has_value());
        QCOMPARE(knownHostsLines(file, QStringLiteral("127.0.0.2"), 2222), QList<int>{2});
        QVERIFY(knownHostsLines(file, QStringLiteral("127.0.0.2"), 22).isEmpty());
        QVERIFY(knownHostsLines(file, QStringLiteral("127.0.0.3"), 2222).isEmpty());
        if (QStandardPaths::findExecutable(QStringLiteral("ssh-keygen")).isEmpty())
            return;
        QByteArray out;
        QCOMPARE(run(QStringLiteral("ssh-keygen"),
                         {QStringLiteral("-F"), QStringLiteral("[127.0.0.2]:2222"), QStringLiteral("-f"), file}, &out),
                0);
        QVERIFY2(out.contains("found: line 2"), out.constData());
        QVERIFY(run(QStringLiteral("ssh-keygen"),
                        {QStringLiteral("-F"), QStringLiteral("127.0.0.2"), QStringLiteral("-f"), file})
                != 0);
    }

    void appendCreatesTheDirectoryAndKeepsLinesApart()
    {
        const QString dir = m_tmp.filePath(QStringLiteral("new/.ssh"));
        const QString file = dir + QStringLiteral("/known_hosts");
        QVERIFY(appendKnownHostsLine(file, "a " + m_key).has_value());
        QCOMPARE(QFileInfo(dir).permissions()
                        & (QFileDevice::ReadGroup | QFileDevice::ReadOther | QFileDevice::WriteOther),
                QFileDevice::Permissions());
        QCOMPARE(test::readFile(file), QByteArray("a " + m_key + '\n'));
        // A last line without its newline (edited by hand) is not run into.
        test::writeFile(file, "a " + m_key);
        QVERIFY(appendKnownHostsLine(file, "b " + m_key).has_value());
        QCOMPARE(test::readFile(file), QByteArray("a " + m_key + "\nb " + m_key + '\n'));
    }

    void sshGOutputParsed()
    {
        const QByteArray out = "user bob\nhostname 10.0.0.7\nport 2200\nhashknownhosts yes\n"
                               "identityfile ~/.ssh/id_work\nidentityfile %d/.ssh/k_%h_%p_%r_%n_%u_%%\n"
                               "identityfile /abs/key\nidentityfile ~/.ssh/id_work\n";
        OpenSshQuery q;
        q.host = QStringLiteral("work");
        const OpenSshHostConfig c = parseSshG(out, q, QStringLiteral("/home/u"), QStringLiteral("u"));
        QVERIFY(c.hashKnownHosts);
        QCOMPARE(c.identityFiles,
                (QStringList{QStringLiteral("/home/u/.ssh/id_work"),
                        QStringLiteral("/home/u/.ssh/k_10.0.0.7_2200_bob_work_u_%"), QStringLiteral("/abs/key")}));
        QVERIFY(!parseSshG("hashknownhosts no\n", q, QStringLiteral("/h"), QStringLiteral("u")).hashKnownHosts);
        QVERIFY(!parseSshG("", q, QStringLiteral("/h"), QStringLiteral("u")).hashKnownHosts);
    }

    void hostKeyAliasParsedAndItsLinesFound()
    {
        OpenSshQuery q;
        q.host = QStringLiteral("work");
        const OpenSshHostConfig c = parseSshG(
                "hostkeyalias gpubox\nstricthostkeychecking false\n", q, QStringLiteral("/h"), QStringLiteral("u"));
        QCOMPARE(c.hostKeyAlias, QStringLiteral("gpubox"));
        QCOMPARE(c.strictHostKeyChecking, QStringLiteral("false"));
        QVERIFY(parseSshG("", q, QStringLiteral("/h"), QStringLiteral("u")).hostKeyAlias.isEmpty());
        // An alias stands as it is, without a port: plain and hashed lines found by it.
        const QString file = m_tmp.filePath(QStringLiteral("alias_known_hosts"));
        test::writeFile(file,
                "[gpubox]:2222 " + m_key + "\ngpubox " + m_key + "\n" + hashedKnownHostsName("gpubox") + ' ' + m_key
                        + "\nother " + m_key + "\n");
        QCOMPARE(knownHostsLines(file, QStringLiteral("gpubox")), (QList<int>{2, 3}));
        QCOMPARE(knownHostsLines(file, QStringLiteral("gpubox"), 2222), (QList<int>{1}));
    }

    void identitiesOnlyAndTheAgentParsed()
    {
        OpenSshQuery q;
        q.host = QStringLiteral("work");
        const OpenSshHostConfig c
                = parseSshG("identitiesonly yes\nidentityagent /run/agent.sock\n"
                            "certificatefile ~/.ssh/id_work-cert.pub\ncertificatefile /abs/%n-cert.pub\n",
                        q, QStringLiteral("/home/u"), QStringLiteral("u"));
        QVERIFY(c.identitiesOnly);
        QCOMPARE(c.certificateFiles,
                (QStringList{QStringLiteral("/home/u/.ssh/id_work-cert.pub"), QStringLiteral("/abs/work-cert.pub")}));
        QCOMPARE(c.agentSocket(), QStringLiteral("/run/agent.sock"));
        const OpenSshHostConfig plain = parseSshG("identitiesonly no\n", q, QStringLiteral("/h"), QStringLiteral("u"));
        QVERIFY(!plain.identitiesOnly);
        QVERIFY(plain.certificateFiles.isEmpty());
        // ssh_config(5) IdentityAgent: none, SSH_AUTH_SOCK, $VARIABLE.
        const QByteArray saved = qgetenv("SSH_AUTH_SOCK");
        qputenv("SSH_AUTH_SOCK", "/tmp/from-env.sock");
        qputenv("TY_TEST_AGENT", "/tmp/from-var.sock");
        QCOMPARE(plain.agentSocket(), QStringLiteral("/tmp/from-env.sock"));
        QCOMPARE(parseSshG("identityagent SSH_AUTH_SOCK\n", q, {}, {}).agentSocket(),
                QStringLiteral("/tmp/from-env.sock"));
        QCOMPARE(parseSshG("identityagent $TY_TEST_AGENT\n", q, {}, {}).agentSocket(),
                QStringLiteral("/tmp/from-var.sock"));
        QCOMPARE(parseSshG("identityagent none\n", q, {}, {}).agentSocket(), QString());
        qunsetenv("TY_TEST_AGENT");
        if (saved.isEmpty())
            qunsetenv("SSH_AUTH_SOCK");
        else
            qputenv("SSH_AUTH_SOCK", saved);
    }

    void openSshResolvesHostBlocks()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("ssh")).isEmpty())
            QSKIP("ssh is missing (Debian: openssh-client)");
        // First value wins; Host blocks apply; with -F nothing else is read.
        const QString config = m_tmp.filePath(QStringLiteral("ssh_config"));
        const QString id = m_tmp.filePath(QStringLiteral("node_key"));
        test::writeFile(id, "not a key\n");
        test::writeFile(config,
                "Host hashed\n  HashKnownHosts yes\n  IdentityFile /keys/first\n  IdentityFile /keys/second\n"
                "Host *\n  HashKnownHosts no\n  IdentityFile /keys/all\n");
        QString why;
        OpenSshQuery q{QStringLiteral("hashed"), config, {}, 0, {}};
        auto c = resolveOpenSshConfig(q, &why);
        QVERIFY2(c, qPrintable(why));
        QVERIFY(c->hashKnownHosts);
        QCOMPARE(c->identityFiles,
                (QStringList{
                        QStringLiteral("/keys/first"), QStringLiteral("/keys/second"), QStringLiteral("/keys/all")}));
        q.host = QStringLiteral("plain");
        q.identityFile = id; // -i: tried first, as in OpenSSH
        c = resolveOpenSshConfig(q, &why);
        QVERIFY2(c, qPrintable(why));
        QVERIFY(!c->hashKnownHosts);
        QCOMPARE(c->identityFiles, (QStringList{id, QStringLiteral("/keys/all")}));
        // A configuration OpenSSH rejects: no answer, and why.
        test::writeFile(config, "NoSuchOption yes\n");
        c = resolveOpenSshConfig(q, &why);
        QVERIFY(!c);
        QVERIFY2(why.contains(QStringLiteral("NoSuchOption"), Qt::CaseInsensitive), qPrintable(why));
    }
};

QTEST_GUILESS_MAIN(TestSshKnownHosts)
#include "TestSshKnownHosts.moc"
