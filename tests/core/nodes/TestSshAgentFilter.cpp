// The IdentitiesOnly relay in front of ssh-agent (SshAgentFilter.h): the
// identities answer parsed and filtered per draft-miller-ssh-agent, checked
// against a real ssh-agent (skipped without OpenSSH's client tools), and its
// lifetime: destroying it while the agent owes an answer does not hang.
#include "tests/support/TestSupport.h"
#include "core/nodes/SshAgentFilter.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <QThread>

#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace ty;

namespace {

QByteArray u32(quint32 v)
{
    const char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    return QByteArray(b, 4);
}

QByteArray sshString(const QByteArray& s)
{
    return u32(quint32(s.size())) + s;
}

QByteArray identitiesAnswer(const QList<std::pair<QByteArray, QByteArray>>& keys)
{
    QByteArray out(1, char(12));
    out += u32(quint32(keys.size()));
    for (const auto& [blob, comment] : keys)
        out += sshString(blob) + sshString(comment);
    return out;
}

// One request/answer over a blocking descriptor, as libssh does it.
QByteArray talk(int fd, const QByteArray& request)
{
    const QByteArray framed = u32(quint32(request.size())) + request;
    if (::write(fd, framed.constData(), size_t(framed.size())) != framed.size())
        return {};
    auto readAll = [fd](char* buf, size_t n) {
        size_t done = 0;
        while (done < n) {
            const ssize_t r = ::read(fd, buf + done, n - done);
            if (r <= 0)
                return false;
            done += size_t(r);
        }
        return true;
    };
    unsigned char head[4];
    if (!readAll(reinterpret_cast<char*>(head), 4))
        return {};
    const quint32 len = (quint32(head[0]) << 24) | (quint32(head[1]) << 16) | (quint32(head[2]) << 8) | head[3];
    QByteArray answer(qsizetype(len), Qt::Uninitialized);
    if (!readAll(answer.data(), len))
        return {};
    return answer;
}

QByteArray blobOf(const QString& pubFile)
{
    return QByteArray::fromBase64(test::readFile(pubFile).split(' ').value(1));
}

// A Unix socket listening at `path` (a stand-in agent); -1 on failure.
int listenOn(const QByteArray& path)
{
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.constData(), std::min(size_t(path.size()), sizeof addr.sun_path - 1));
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

} // namespace

class TestSshAgentFilter final : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;

private Q_SLOTS:
    void filtersAndKeepsOrder()
    {
        const QByteArray answer = identitiesAnswer({{"blob-a", "a"}, {"blob-b", "b"}, {"blob-c", "c"}});
        int listed = -1;
        int kept = -1;
        const auto out = filterAgentIdentities(answer, {"blob-c", "blob-a", "blob-x"}, &listed, &kept);
        QVERIFY(out);
        QCOMPARE(*out, identitiesAnswer({{"blob-a", "a"}, {"blob-c", "c"}}));
        QCOMPARE(listed, 3);
        QCOMPARE(kept, 2);
        QCOMPARE(*filterAgentIdentities(answer, {}), identitiesAnswer({}));
    }

    void malformedAnswersAreRefused()
    {
        const QByteArray good = identitiesAnswer({{"blob-a", "a"}});
        QVERIFY(!filterAgentIdentities(good.left(good.size() - 1), {"blob-a"})); // cut short
        QVERIFY(!filterAgentIdentities(good + "x", {"blob-a"}));                 // trailing bytes
        QByteArray more = good;
        more[4] = 2; // count 2, one entry
        QVERIFY(!filterAgentIdentities(more, {"blob-a"}));
        QByteArray huge = good;
        huge.replace(5, 4, u32(0xfffffff0u)); // a string past the end
        QVERIFY(!filterAgentIdentities(huge, {"blob-a"}));
        QVERIFY(!filterAgentIdentities(QByteArray(1, char(5)), {})); // SSH_AGENT_FAILURE
        QVERIFY(!filterAgentIdentities(QByteArray(), {}));
    }

    void relaysARealAgent()
    {
        for (const char* tool : {"ssh-agent", "ssh-add", "ssh-keygen"})
            if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty())
                QSKIP("OpenSSH's client tools are not installed");
        QVERIFY(m_tmp.isValid());
        const QString socket = m_tmp.filePath(QStringLiteral("agent.sock"));
        QProcess agent;
        agent.start(QStringLiteral("ssh-agent"), {QStringLiteral("-D"), QStringLiteral("-a"), socket});
        QVERIFY(agent.waitForStarted());
        QVERIFY(test::waitUntil([&] { return QFileInfo::exists(socket); }, 5000));
        QStringList keys;
        for (const char* name : {"k1", "k2", "k3"}) {
            const QString key = m_tmp.filePath(QLatin1String(name));
            QCOMPARE(QProcess::execute(QStringLiteral("ssh-keygen"),
                             {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                                     QStringLiteral("-N"), QString(), QStringLiteral("-f"), key}),
                    0);
            QProcess add;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("SSH_AUTH_SOCK"), socket);
            add.setProcessEnvironment(env);
            add.start(QStringLiteral("ssh-add"), {key});
            QVERIFY(add.waitForFinished(10000) && add.exitCode() == 0);
            keys << key;
        }
        const QByteArray k1 = blobOf(keys[0] + QStringLiteral(".pub"));
        const QByteArray k3 = blobOf(keys[2] + QStringLiteral(".pub"));
        {
            auto filter = SshAgentFilter::start(socket, {k3});
            QVERIFY2(filter, filter ? "" : qPrintable(filter.error().message));
            const int fd = (*filter)->takeClientFd();
            QVERIFY(fd >= 0);
            QCOMPARE((*filter)->takeClientFd(), -1);
            QCOMPARE((*filter)->listed(), -1);
            const QByteArray answer = talk(fd, QByteArray(1, char(11)));
            QVERIFY(answer.size() > 5);
            QCOMPARE(int(answer.at(0)), 12);
            const QByteArray expected = u32(1) + sshString(k3);
            QVERIFY2(answer.mid(1, expected.size()) == expected, answer.toHex().constData());
            QCOMPARE((*filter)->listed(), 3);
            QCOMPARE((*filter)->kept(), 1);
            // A sign request passes untouched, even for a key not listed: the
            // agent answers SSH2_AGENT_SIGN_RESPONSE (14).
            const QByteArray sign = QByteArray(1, char(13)) + sshString(k1) + sshString("data to sign") + u32(0);
            QCOMPARE(int(talk(fd, sign).at(0)), 14);
            ::close(fd);
        } // joins the relay
        agent.terminate();
        agent.waitForFinished(3000);
    }

    void agentGoneEndsTheRelayWithoutSigpipe()
    {
        // An "agent" that takes the connection and closes it: the waiting
        // client reads end-of-file, and a request it writes after that must
        // not raise SIGPIPE (libssh writes with write(); this test would die).
        QVERIFY(m_tmp.isValid());
        const QByteArray path = QFile::encodeName(m_tmp.filePath(QStringLiteral("gone.sock")));
        const int listener = listenOn(path);
        QVERIFY(listener >= 0);
        auto filter = SshAgentFilter::start(QFile::decodeName(path), {"x"});
        QVERIFY2(filter, filter ? "" : qPrintable(filter.error().message));
        const int fd = (*filter)->takeClientFd();
        const int accepted = ::accept(listener, nullptr, nullptr);
        QVERIFY(accepted >= 0);
        ::close(accepted);
        QVERIFY(talk(fd, QByteArray(1, char(11))).isEmpty()); // end-of-file, not an answer
        const QByteArray again = u32(1) + QByteArray(1, char(11));
        QCOMPARE(::write(fd, again.constData(), size_t(again.size())), ssize_t(again.size()));
        filter->reset();
        ::close(fd);
        ::close(listener);
    }

    void destroyedWhileTheAgentOwesAnAnswer()
    {
        // An "agent" that takes the connection (kernel backlog) and never answers.
        QVERIFY(m_tmp.isValid());
        const QByteArray path = QFile::encodeName(m_tmp.filePath(QStringLiteral("mute.sock")));
        const int listener = listenOn(path);
        QVERIFY(listener >= 0);
        int fd = -1;
        {
            auto filter = SshAgentFilter::start(QFile::decodeName(path), {"x"});
            QVERIFY2(filter, filter ? "" : qPrintable(filter.error().message));
            fd = (*filter)->takeClientFd();
            const QByteArray request = u32(1) + QByteArray(1, char(11));
            QCOMPARE(::write(fd, request.constData(), size_t(request.size())), ssize_t(request.size()));
            QThread::msleep(50); // the relay is now waiting for the agent
            QElapsedTimer t;
            t.start();
            filter->reset();
            QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
        }
        char byte = 0;
        QCOMPARE(::read(fd, &byte, 1), ssize_t(0)); // libssh's end sees end-of-file
        ::close(fd);
        ::close(listener);
        // Nothing listening: a clear error, no relay.
        auto none = SshAgentFilter::start(m_tmp.filePath(QStringLiteral("absent.sock")), {"x"});
        QVERIFY(!none);
        QVERIFY2(none.error().message.contains(QStringLiteral("absent.sock")), qPrintable(none.error().message));
    }
};

QTEST_GUILESS_MAIN(TestSshAgentFilter)
#include "TestSshAgentFilter.moc"
