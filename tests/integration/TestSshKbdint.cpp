// Keyboard-interactive login (issue #26: login nodes that ask for a one-time
// code after the key) against a real SSH server, no mocks: SSH on 127.0.0.4
// to trainyard_test_kbdint_sshd (KbdintSshd.cpp), a server built on libssh's
// server API that wants a public key and then a one-time code, as OpenSSH's
// `AuthenticationMethods publickey,keyboard-interactive` does.
//
// Why not OpenSSH's sshd with SshdFixture: sshd asks keyboard-interactive
// questions only through PAM, and under the fixed PAM service name "sshd"
// (its PAM stack is /etc/pam.d/sshd, and Linux-PAM reads no other folder):
// asking a question of our own would mean changing or adding a file in
// /etc/pam.d, which changes the machine's real logins. Our server needs no
// such file, and no root either; its questions and its counters are ours.
//
// What goes over it is real: the agent (this build's trainyard-agent) is run
// by the server's exec request and its handshake goes over the channel; file
// jobs use OpenSSH's own sftp-server as the sftp subsystem.
//
// Covered: the right code logs in (the provider asked exactly once, with the
// server's name, instruction, prompts and echo flags), and file jobs and the
// agent share that login (no second question while it is up; a new
// connection asks again); a wrong code fails once, naming the node, with no
// retry; batch mode (no provider) fails saying the login asks questions,
// without starting them; a declined question; rounds without prompts ask
// nobody; a slow second factor (a Duo push) is waited for past the connect
// timeout; keyboard-interactive alone when the server takes no key; the
// same login through trainyardd (the GUI's and trainyardctl's service path)
// and trainyardctl's askpass program and terminal.
#include "tests/support/TestSupport.h"

#include "core/nodes/AgentClient.h"
#include "core/nodes/SshAgentTransport.h"
#include "core/nodes/SshPassphraseProvider.h"
#include "core/service/ServiceClient.h"
#include "core/service/ServiceProtocol.h"

#include <QBuffer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QMutex>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ty;

namespace {

constexpr const char* kCode = "493817";

QByteArray runTool(const QString& program, const QStringList& args, bool* ok)
{
    QProcess p;
    p.start(program, args);
    const bool finished = p.waitForFinished(30000);
    *ok = finished && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    return p.readAllStandardOutput() + p.readAllStandardError();
}

// The test's server process: its port and what it reported (stderr lines
// "kbdint-sshd: EVENT").
class KbdintServer {
public:
    ~KbdintServer() { stop(); }

    bool start(const QString& dir, const QStringList& extra, QString* error)
    {
        m_process = std::make_unique<QProcess>();
        connect();
        m_process->start(QStringLiteral(TRAINYARD_KBDINT_SSHD_PATH),
                QStringList{QStringLiteral("--listen"), QStringLiteral("127.0.0.4"), QStringLiteral("--host-key"),
                        dir + QStringLiteral("/host_key"), QStringLiteral("--authorized-key"),
                        dir + QStringLiteral("/id_ed25519.pub"), QStringLiteral("--code"), QLatin1String(kCode)}
                        + extra);
        if (!m_process->waitForStarted(5000)) {
            *error = m_process->errorString();
            return false;
        }
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 10000 && !m_out.contains('\n') && m_process->state() == QProcess::Running)
            QTest::qWait(10);
        const QList<QByteArray> words = m_out.trimmed().split(' ');
        if (words.size() != 2 || words[0] != "listening") {
            *error = QStringLiteral("the server did not listen: %1").arg(QString::fromUtf8(m_out + m_log));
            return false;
        }
        m_port = words[1].toInt();
        return true;
    }
    void stop()
    {
        if (!m_process)
            return;
        m_process->terminate();
        if (!m_process->waitForFinished(3000))
            m_process->kill();
        m_process->waitForFinished(3000);
        m_process.reset();
    }
    int port() const { return m_port; }
    // How many times the server reported `event` so far (it reports before
    // it answers the client; a moment of the event loop takes in the lines).
    int count(const QByteArray& event)
    {
        QTest::qWait(20);
        int n = 0;
        for (const QByteArray& line : m_log.split('\n'))
            if (line == "kbdint-sshd: " + event)
                ++n;
        return n;
    }
    QByteArray log() const { return m_log; }

private:
    void connect()
    {
        QObject::connect(m_process.get(), &QProcess::readyReadStandardOutput, m_process.get(),
                [this] { m_out += m_process->readAllStandardOutput(); });
        QObject::connect(m_process.get(), &QProcess::readyReadStandardError, m_process.get(),
                [this] { m_log += m_process->readAllStandardError(); });
    }

    std::unique_ptr<QProcess> m_process;
    QByteArray m_out;
    QByteArray m_log;
    int m_port = 0;
};

// Answers as a user would, and counts every question.
struct Answering final : SshPassphraseProvider {
    QMutex mutex;
    QList<SshLoginQuestions> asked; // keyboard-interactive rounds
    QStringList nodes;
    int passphrases = 0;
    std::function<std::optional<QList<QByteArray>>(const SshLoginQuestions&)> reply;

    std::optional<QByteArray> passphrase(const QString&, const QString&) override
    {
        QMutexLocker lock(&mutex);
        ++passphrases;
        return std::nullopt;
    }
    std::optional<QList<QByteArray>> answers(const QString& node, const SshLoginQuestions& questions) override
    {
        QMutexLocker lock(&mutex);
        asked << questions;
        nodes << node;
        return reply ? reply(questions) : std::nullopt;
    }
    qsizetype count()
    {
        QMutexLocker lock(&mutex);
        return asked.size();
    }
};

std::shared_ptr<Answering> answering(QList<QByteArray> answers)
{
    auto a = std::make_shared<Answering>();
    a->reply = [answers](const SshLoginQuestions&) { return std::optional<QList<QByteArray>>(answers); };
    return a;
}

// Every message logged meanwhile (none may hold an answer).
QStringList g_messages;
QMutex g_messagesMutex;
QtMessageHandler g_previousHandler = nullptr;

void keepMessage(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    {
        QMutexLocker lock(&g_messagesMutex);
        g_messages << message;
    }
    if (g_previousHandler)
        g_previousHandler(type, context, message);
}

} // namespace

class TestSshKbdint final : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    QString m_skip;

    QString dir() const { return m_tmp.path(); }
    // Host kb -> the server; `knownHosts` empty: the test's shared one.
    QString sshConfig(int port, const QString& knownHosts = {}, const QByteArray& extra = {}) const
    {
        const QString file = m_tmp.filePath(QStringLiteral("ssh_config-%1").arg(port));
        const QByteArray d = QFile::encodeName(dir());
        test::writeFile(file,
                "Host kb\n  HostName 127.0.0.4\n  Port " + QByteArray::number(port)
                        + "\n  User tester\n  IdentitiesOnly yes\n  IdentityFile " + d + "/id_ed25519\n"
                        + "  UserKnownHostsFile "
                        + (knownHosts.isEmpty() ? d + "/known_hosts" : QFile::encodeName(knownHosts)) + "\n" + extra);
        return file;
    }
    SshNodeOptions options(int port, const QString& name = QStringLiteral("hpc")) const
    {
        SshNodeOptions o;
        o.name = name;
        o.host = QStringLiteral("kb");
        o.configFile = sshConfig(port);
        o.connectTimeoutSec = 10;
        o.acceptNewHostKey = true;
        o.agentEnv.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), m_tmp.filePath(QStringLiteral("state-") + name));
        o.agentEnv.insert(QStringLiteral("TRAINYARD_AGENT_NO_NVML"), QStringLiteral("1"));
        o.remoteAgentPath = test::agentPath();
        return o;
    }

    bool startServer(KbdintServer& server, const QStringList& extra = {})
    {
        QString error;
        const bool ok = server.start(dir(), extra, &error);
        if (!ok)
            qWarning().noquote() << error;
        return ok;
    }

    // The transport's open() until opened() or closed(): empty, or closed()'s reason and kind.
    static std::optional<std::pair<QString, ErrorKind>> open(SshAgentTransport& t, int timeoutMs = 30000)
    {
        QSignalSpy opened(&t, &AgentTransport::opened);
        QSignalSpy closed(&t, &AgentTransport::closed);
        t.open();
        QElapsedTimer timer;
        timer.start();
        while (opened.isEmpty() && closed.isEmpty() && timer.elapsed() < timeoutMs)
            QTest::qWait(10);
        if (!opened.isEmpty())
            return std::nullopt;
        if (closed.isEmpty())
            return std::pair(QStringLiteral("timeout"), ErrorKind::Unspecified);
        return std::pair(closed.front().at(0).toString(), closed.front().at(1).value<ErrorKind>());
    }

    static void verifyNoAnswerLogged(const QByteArray& answer)
    {
        QMutexLocker lock(&g_messagesMutex);
        for (const QString& m : std::as_const(g_messages))
            QVERIFY2(!m.contains(QString::fromUtf8(answer)), qPrintable(m));
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!QFileInfo(QStringLiteral("/usr/lib/openssh/sftp-server")).isExecutable())
            m_skip = QStringLiteral("/usr/lib/openssh/sftp-server is missing (Debian: openssh-sftp-server)");
        for (const char* tool : {"ssh-keygen", "ssh"})
            if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty())
                m_skip = QStringLiteral("%1 is missing (Debian: openssh-client)").arg(QLatin1String(tool));
        if (!m_skip.isEmpty())
            QSKIP(qPrintable(m_skip));
        QVERIFY(m_tmp.isValid());
        qunsetenv("SSH_AUTH_SOCK"); // only the key of the config, never the user's agent
        bool ok = false;
        for (const char* key : {"host_key", "id_ed25519"}) {
            const QByteArray out = runTool(QStringLiteral("ssh-keygen"),
                    {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
                            QString(), QStringLiteral("-f"), m_tmp.filePath(QLatin1String(key))},
                    &ok);
            QVERIFY2(ok, out.constData());
        }
        g_previousHandler = qInstallMessageHandler(keepMessage);
    }

    void cleanupTestCase() { qInstallMessageHandler(g_previousHandler); }

    // The right code: logged in after the key, the agent's handshake over
    // that login, file jobs over its SFTP without a second question; a new
    // connection is a new login and asks again.
    void rightCodeLogsInOnceForEveryRequest()
    {
        KbdintServer server;
        QVERIFY(startServer(server));
        auto user = answering({kCode});
        auto t = std::make_unique<SshAgentTransport>(options(server.port()), user);
        QSignalSpy transportClosed(t.get(), &AgentTransport::closed);
        AgentClient client(std::move(t));
        QSignalSpy ready(&client, &AgentClient::ready);
        QSignalSpy lost(&client, &AgentClient::disconnected);
        client.connectToAgent();
        QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() || !lost.isEmpty(), 30000);
        QVERIFY2(lost.isEmpty(), lost.isEmpty() ? "" : qPrintable(lost.front().front().toString()));
        QCOMPARE(user->count(), 1);
        QCOMPARE(user->nodes, QStringList{QStringLiteral("hpc")});
        const SshLoginQuestions expected{QStringLiteral("Two-factor login"),
                QStringLiteral("A one-time code was sent to your phone."),
                {SshLoginPrompt{QStringLiteral("Verification code: "), false}}};
        QCOMPARE(user->asked.front(), expected);
        QCOMPARE(user->passphrases, 0);
        QCOMPARE(server.count("publickey accepted"), 1);
        QCOMPARE(server.count("kbdint start"), 1);
        QCOMPARE(server.count("kbdint answers received"), 1);
        QCOMPARE(server.count("authenticated"), 1);
        QCOMPARE(server.count("exec"), 1);

        // File jobs (SFTP on the same session): no new login, no question.
        const QString remote = m_tmp.filePath(QStringLiteral("remote-file.txt"));
        for (int i = 0; i < 3; ++i) {
            const QByteArray content = "job " + QByteArray::number(i) + "\n";
            QByteArray readBack;
            auto r = test::await<void>([&](auto done) {
                client.runFileJob(
                        [&, content](NodeFiles& files) -> Result<void> {
                            QBuffer source;
                            source.setData(content);
                            source.open(QIODevice::ReadOnly);
                            if (auto w = files.writeFile(remote, source, 0644); !w)
                                return w;
                            QBuffer sink(&readBack);
                            sink.open(QIODevice::WriteOnly);
                            return files.readFile(remote, sink);
                        },
                        done);
            });
            QVERIFY(r.has_value());
            QVERIFY2(*r, *r ? "" : qPrintable(r->error().message));
            QCOMPARE(readBack, content);
        }
        QCOMPARE(test::readFile(remote), QByteArray("job 2\n"));
        QCOMPARE(server.count("subsystem sftp"), 1);
        QCOMPARE(server.count("authenticated"), 1);
        QCOMPARE(user->count(), 1);

        // A new connection is a new login: asked again (SshSession.h).
        client.disconnectFromAgent();
        QTRY_VERIFY_WITH_TIMEOUT(!transportClosed.isEmpty(), 10000);
        ready.clear();
        client.connectToAgent();
        QTRY_VERIFY_WITH_TIMEOUT(ready.size() == 1, 30000);
        QCOMPARE(user->count(), 2);
        QCOMPARE(server.count("authenticated"), 2);
        verifyNoAnswerLogged(kCode);
    }

    // A wrong code: one answer, refused; the login ends naming the node and
    // the question, without the answer, and without a second try.
    void wrongCodeFailsOnceNamingTheNode()
    {
        KbdintServer server;
        QVERIFY(startServer(server));
        auto user = answering({"000111"});
        SshAgentTransport t(options(server.port()), user);
        const auto closed = open(t);
        QVERIFY(closed);
        QCOMPARE(closed->second, ErrorKind::Authentication);
        const QString& why = closed->first;
        QVERIFY2(why.startsWith(QStringLiteral("node hpc (kb = tester@127.0.0.4:")), qPrintable(why));
        QVERIFY2(why.contains(QStringLiteral("refused the answers to its keyboard-interactive questions "
                                             "(\"Verification code:\")")),
                qPrintable(why));
        QVERIFY2(!why.contains(QStringLiteral("000111")), qPrintable(why));
        QTest::qWait(500); // nothing more comes
        QCOMPARE(user->count(), 1);
        QCOMPARE(server.count("kbdint start"), 1);
        QCOMPARE(server.count("kbdint answers received"), 1);
        QCOMPARE(server.count("kbdint code refused"), 1);
        QCOMPARE(server.count("authenticated"), 0);
        verifyNoAnswerLogged("000111");
    }

    // Batch mode (no provider): a clear failure, and the questions are never
    // started (starting them can already send a push to the user's phone).
    void batchModeSaysTheLoginAsksQuestions()
    {
        KbdintServer server;
        QVERIFY(startServer(server));
        SshAgentTransport t(options(server.port()));
        const auto closed = open(t);
        QVERIFY(closed);
        QCOMPARE(closed->second, ErrorKind::Authentication);
        const QString& why = closed->first;
        QVERIFY2(why.startsWith(QStringLiteral("node hpc (")), qPrintable(why));
        QVERIFY2(why.contains(QStringLiteral("the server asks questions interactively (keyboard-interactive: a "
                                             "one-time code, a Duo prompt)"))
                        && why.contains(QStringLiteral("batch mode"))
                        && why.endsWith(QStringLiteral("run trainyardctl in a terminal or use the GUI")),
                qPrintable(why));
        QCOMPARE(server.count("publickey accepted"), 1);
        QCOMPARE(server.count("kbdint start"), 0);
    }

    // The user cancelled: the login ends at once, no answer is sent.
    void declinedQuestionEndsTheLogin()
    {
        KbdintServer server;
        QVERIFY(startServer(server));
        auto user = std::make_shared<Answering>(); // declines
        SshAgentTransport t(options(server.port()), user);
        const auto closed = open(t);
        QVERIFY(closed);
        QCOMPARE(closed->second, ErrorKind::Authentication);
        QVERIFY2(closed->first.contains(QStringLiteral("were not answered")), qPrintable(closed->first));
        QCOMPARE(user->count(), 1);
        QCOMPARE(server.count("kbdint answers received"), 0);
    }

    // Rounds without prompts (before the question and after the answer, as
    // OpenSSH's PAM sends them) are answered without asking anybody.
    void roundsWithoutPromptsAskNobody()
    {
        KbdintServer server;
        QVERIFY(startServer(server, {QStringLiteral("--zero-rounds")}));
        auto user = answering({kCode});
        SshAgentTransport t(options(server.port()), user);
        const auto closed = open(t);
        QVERIFY2(!closed, closed ? qPrintable(closed->first) : "");
        QCOMPARE(user->count(), 1);
        QCOMPARE(server.count("kbdint empty round answered (0 answers)"), 2);
        QCOMPARE(server.count("authenticated"), 1);
    }

    // Several prompts in one round: one question to the user with all of
    // them and their echo flags; the answers go back in order.
    void promptsCarryTheirEchoFlags()
    {
        KbdintServer server;
        QVERIFY(startServer(server, {QStringLiteral("--two-prompts")}));
        auto user = answering({kCode, "alice"});
        SshAgentTransport t(options(server.port()), user);
        const auto closed = open(t);
        QVERIFY2(!closed, closed ? qPrintable(closed->first) : "");
        QCOMPARE(user->count(), 1);
        const QList<SshLoginPrompt> prompts{
                {QStringLiteral("Verification code: "), false}, {QStringLiteral("Account: "), true}};
        QCOMPARE(user->asked.front().prompts, prompts);
        // Too few answers count as declined, never sent.
        KbdintServer other;
        QVERIFY(startServer(other, {QStringLiteral("--two-prompts")}));
        auto shortUser = answering({kCode});
        SshAgentTransport t2(options(other.port()), shortUser);
        const auto refused = open(t2);
        QVERIFY(refused);
        QVERIFY2(refused->first.contains(QStringLiteral("were not answered")), qPrintable(refused->first));
        QCOMPARE(other.count("kbdint answers received"), 0);
    }

    // A second factor that takes its time (a Duo push approved on the
    // phone) is waited for past the session's connect timeout.
    void slowSecondFactorIsWaitedFor()
    {
        KbdintServer server;
        QVERIFY(startServer(server, {QStringLiteral("--reply-delay-ms"), QStringLiteral("2500")}));
        auto user = answering({kCode});
        SshNodeOptions o = options(server.port());
        o.connectTimeoutSec = 1;
        SshAgentTransport t(o, user);
        const auto closed = open(t);
        QVERIFY2(!closed, closed ? qPrintable(closed->first) : "");
        QCOMPARE(user->count(), 1);
        QCOMPARE(server.count("kbdint answers received"), 1);
    }

    // A server that takes no key at all but keyboard-interactive: the keys
    // are refused, then the questions log in (OpenSSH's order).
    void keyboardInteractiveAloneAfterTheKeys()
    {
        KbdintServer server;
        QVERIFY(startServer(server, {QStringLiteral("--methods"), QStringLiteral("keyboard-interactive")}));
        auto user = answering({kCode});
        SshAgentTransport t(options(server.port()), user);
        const auto closed = open(t);
        QVERIFY2(!closed, closed ? qPrintable(closed->first) : "");
        QCOMPARE(user->count(), 1);
        QCOMPARE(server.count("publickey accepted"), 0);
        QCOMPARE(server.count("authenticated"), 1);
        // Batch mode there: the keys' failure, and that the questions need someone.
        SshAgentTransport batch(options(server.port(), QStringLiteral("hpc2")));
        const auto refused = open(batch);
        QVERIFY(refused);
        QVERIFY2(refused->first.contains(QStringLiteral("the server accepted none of the keys tried"))
                        && refused->first.contains(QStringLiteral("the server also offers keyboard-interactive login"))
                        && refused->first.contains(QStringLiteral("run trainyardctl in a terminal or use the GUI")),
                qPrintable(refused->first));
        QCOMPARE(server.count("kbdint start"), 1);
    }

    // A changed host key let through by `StrictHostKeyChecking no` gets no
    // answers, as with OpenSSH (a man in the middle would read them): the
    // provider is not asked, the questions are not started, the error says why.
    void changedHostKeyGetsNoAnswers()
    {
        KbdintServer server;
        QVERIFY(startServer(server));
        bool ok = false;
        const QString other = m_tmp.filePath(QStringLiteral("other_host_key"));
        const QByteArray out = runTool(QStringLiteral("ssh-keygen"),
                {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"), QString(),
                        QStringLiteral("-f"), other},
                &ok);
        QVERIFY2(ok, out.constData());
        const QString known = m_tmp.filePath(QStringLiteral("known_hosts-changed"));
        const QList<QByteArray> pub = test::readFile(other + QStringLiteral(".pub")).split(' ');
        test::writeFile(known,
                "[127.0.0.4]:" + QByteArray::number(server.port()) + ' ' + pub.value(0) + ' ' + pub.value(1) + '\n');
        auto user = answering({kCode});
        SshNodeOptions o = options(server.port());
        o.configFile = sshConfig(server.port(), known, "  StrictHostKeyChecking no\n");
        SshAgentTransport t(o, user);
        const auto closed = open(t);
        QVERIFY(closed);
        QCOMPARE(closed->second, ErrorKind::Authentication);
        QVERIFY2(closed->first.contains(QStringLiteral("the server accepted the key"))
                        && closed->first.contains(
                                QStringLiteral("is disabled to avoid man-in-the-middle attacks: the host key changed")),
                qPrintable(closed->first));
        QCOMPARE(t.lastHostKeyDecision(), HostKeyDecision::AcceptedChanged);
        QCOMPARE(user->count(), 0);
        QCOMPARE(server.count("publickey accepted"), 1);
        QCOMPARE(server.count("kbdint start"), 0);
    }

    // trainyardd's sessions (the GUI's and trainyardctl's nodes) have no
    // terminal: the questions go to the client that takes questions, once
    // per login, as a `prompt` event of kind keyboard_interactive; answered
    // by a provider (trainyardctl) or by answerLoginPrompt() (the GUI's
    // RunControl::loginQuestionsRequested). Wrong answers fail the node as a
    // login failure; nobody to ask fails it at once.
    void serviceAsksAClientTheQuestions()
    {
        KbdintServer server;
        QVERIFY(startServer(server));
        const QString d = m_tmp.filePath(QStringLiteral("svc"));
        QDir().mkpath(d + QStringLiteral("/db"));
        QDir().mkpath(d + QStringLiteral("/runtime"));
        // The service started below gets this process's environment.
        const QList<QByteArray> names{"HOME", "TRAINYARD_SSH_CONFIG", "TRAINYARD_AGENT", "TRAINYARD_AGENT_STATE",
                "TRAINYARD_DAEMON", "XDG_RUNTIME_DIR"};
        QList<std::optional<QByteArray>> saved;
        for (const QByteArray& n : names)
            saved << (qEnvironmentVariableIsSet(n.constData()) ? std::optional(qgetenv(n.constData())) : std::nullopt);
        const auto restore = qScopeGuard([&] {
            for (qsizetype i = 0; i < names.size(); ++i)
                saved[i] ? qputenv(names[i].constData(), *saved[i]) : qunsetenv(names[i].constData());
        });
        qputenv("HOME", QFile::encodeName(d));
        qputenv("TRAINYARD_SSH_CONFIG", QFile::encodeName(sshConfig(server.port())));
        qputenv("TRAINYARD_AGENT", test::agentPath().toUtf8());
        qputenv("TRAINYARD_AGENT_STATE", QFile::encodeName(d + QStringLiteral("/agent-state")));
        qputenv("TRAINYARD_DAEMON", TRAINYARDD_PATH);
        qputenv("XDG_RUNTIME_DIR", QFile::encodeName(d + QStringLiteral("/runtime")));
        const QString db = d + QStringLiteral("/db/trainyard.db");
        auto svc = service::ServiceClient::connectTo(db, service::ServiceClient::Start::IfNeeded);
        QVERIFY2(svc, svc ? "" : qPrintable(svc.error().message));
        const auto stopService = qScopeGuard([&] { (void)(*svc)->call(QStringLiteral("stop")); });
        QSignalSpy nodes(svc->get(), &service::ServiceClient::nodeStatusChanged);
        const auto status = [&](const QString& node) -> std::optional<std::tuple<bool, QString, ErrorKind>> {
            std::optional<std::tuple<bool, QString, ErrorKind>> last;
            for (const QList<QVariant>& a : std::as_const(nodes))
                if (a.at(0).toString() == node)
                    last = std::tuple(a.at(1).toBool(), a.at(2).toString(), a.at(3).value<ErrorKind>());
            return last;
        };
        const auto add = [&](const QString& name) {
            return (*svc)->call(QStringLiteral("node_add"),
                    {{QStringLiteral("node"),
                             QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("host"), QStringLiteral("kb")},
                                     {QStringLiteral("agent_path"), test::agentPath()}}},
                            {QStringLiteral("accept_new_host_key"), true}});
        };
        const SshLoginQuestions expected{QStringLiteral("Two-factor login"),
                QStringLiteral("A one-time code was sent to your phone."),
                {SshLoginPrompt{QStringLiteral("Verification code: "), false}}};

        // trainyardctl's way: a provider.
        auto user = answering({kCode});
        QVERIFY((*svc)->answerPromptsWith(user));
        QVERIFY(add(QStringLiteral("otp1")));
        QTRY_VERIFY_WITH_TIMEOUT(status(QStringLiteral("otp1")).has_value(), 30000);
        QVERIFY2(
                std::get<0>(*status(QStringLiteral("otp1"))), qPrintable(std::get<1>(*status(QStringLiteral("otp1")))));
        QCOMPARE(user->count(), 1);
        QCOMPARE(user->nodes, QStringList{QStringLiteral("otp1")});
        QCOMPARE(user->asked.front(), expected);
        QTest::qWait(1000); // the node's requests meanwhile ask nothing more
        QCOMPARE(user->count(), 1);
        QCOMPARE(server.count("authenticated"), 1);

        // The GUI's way: the question as a signal, answered by id.
        QVERIFY((*svc)->answerPromptsWith(nullptr));
        auto gui = service::ServiceClient::connectTo(db, service::ServiceClient::Start::Never);
        QVERIFY2(gui, gui ? "" : qPrintable(gui.error().message));
        QVERIFY((*gui)->call(QStringLiteral("subscribe"), {{QStringLiteral("prompts"), true}}));
        QList<SshLoginQuestions> shown;
        QByteArray typed = kCode;
        service::ServiceClient* guiClient = gui->get();
        connect(guiClient, &service::ServiceClient::loginPromptReceived, guiClient,
                [&](qint64 prompt, const QString& node, const SshLoginQuestions& questions) {
                    QCOMPARE(node.left(3), QStringLiteral("otp"));
                    shown << questions;
                    guiClient->answerLoginPrompt(prompt, QList<QByteArray>{typed});
                });
        QVERIFY(add(QStringLiteral("otp2")));
        QTRY_VERIFY_WITH_TIMEOUT(status(QStringLiteral("otp2")).has_value(), 30000);
        QVERIFY2(
                std::get<0>(*status(QStringLiteral("otp2"))), qPrintable(std::get<1>(*status(QStringLiteral("otp2")))));
        QCOMPARE(shown, QList<SshLoginQuestions>{expected});

        // A wrong code: a login failure naming the node and the question.
        typed = "000222";
        QVERIFY(add(QStringLiteral("otp3")));
        QTRY_VERIFY_WITH_TIMEOUT(status(QStringLiteral("otp3")).has_value(), 30000);
        const auto [ready3, why3, kind3] = *status(QStringLiteral("otp3"));
        QVERIFY(!ready3);
        QCOMPARE(kind3, ErrorKind::Authentication);
        QVERIFY2(why3.contains(QStringLiteral("node otp3 (kb = tester@127.0.0.4:"))
                        && why3.contains(QStringLiteral("refused the answers to its keyboard-interactive questions"))
                        && !why3.contains(QStringLiteral("000222")),
                qPrintable(why3));

        // Nobody takes questions: declined at once, never a 2-minute wait.
        gui->reset();
        QElapsedTimer t;
        t.start();
        QVERIFY(add(QStringLiteral("otp4")));
        QTRY_VERIFY_WITH_TIMEOUT(status(QStringLiteral("otp4")).has_value(), 30000);
        const auto [ready4, why4, kind4] = *status(QStringLiteral("otp4"));
        QVERIFY(!ready4);
        QCOMPARE(kind4, ErrorKind::Authentication);
        QVERIFY2(why4.contains(QStringLiteral("were not answered")), qPrintable(why4));
        QVERIFY2(t.elapsed() < 20000, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(user->count(), 1);
    }

    // trainyardctl's own login (node add's probe): the askpass program is
    // asked once, with the server's name and instruction and the prompt;
    // with neither askpass nor a terminal (batch mode) it fails saying why.
    void trainyardctlAsksTheAskpassProgram()
    {
        KbdintServer server;
        QVERIFY(startServer(server));
        const QString d = m_tmp.filePath(QStringLiteral("ctl-askpass"));
        QDir().mkpath(d + QStringLiteral("/db"));
        const QString asked = d + QStringLiteral("/asked.txt");
        const QString askpass = d + QStringLiteral("/askpass.sh");
        test::writeFile(askpass,
                "#!/bin/sh\nprintf '%s\\n--\\n' \"$1\" >> '" + QFile::encodeName(asked) + "'\necho " + kCode + "\n");
        QFile::setPermissions(askpass, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        QProcessEnvironment env = test::serviceEnvironment(d, QStringLiteral(TRAINYARDD_PATH));
        env.insert(QStringLiteral("HOME"), d);
        env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), sshConfig(server.port()));
        env.remove(QStringLiteral("SSH_AUTH_SOCK"));
        env.remove(QStringLiteral("SSH_ASKPASS"));
        const auto add = [&](const QString& name, bool withAskpass) {
            QProcessEnvironment e = env;
            if (withAskpass)
                e.insert(QStringLiteral("TRAINYARD_ASKPASS"), askpass);
            QProcess p;
            p.setProcessEnvironment(e);
            test::withoutTerminal(p); // batch mode but for the askpass program
            p.start(QStringLiteral(TRAINYARD_CTL_PATH),
                    {QStringLiteral("--db"), d + QStringLiteral("/db/trainyard.db"), QStringLiteral("node"),
                            QStringLiteral("add"), name, QStringLiteral("--host"), QStringLiteral("kb"),
                            QStringLiteral("--agent-path"), test::agentPath(),
                            QStringLiteral("--accept-new-host-key")});
            p.waitForFinished(60000);
            return std::pair(p.exitCode(), QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError()));
        };
        const auto [batchCode, batchOut] = add(QStringLiteral("otpbatch"), false);
        QVERIFY2(batchCode != 0, qPrintable(batchOut));
        QVERIFY2(batchOut.contains(QStringLiteral("node otpbatch not added: node otpbatch (kb = tester@127.0.0.4:"))
                        && batchOut.contains(QStringLiteral("run trainyardctl in a terminal or use the GUI")),
                qPrintable(batchOut));
        QCOMPARE(server.count("kbdint start"), 0);

        const auto [code, out] = add(QStringLiteral("otpctl"), true);
        QVERIFY2(code == 0 && out.contains(QStringLiteral("added node otpctl")), qPrintable(out));
        QCOMPARE(QString::fromUtf8(test::readFile(asked)),
                QStringLiteral("otpctl: Two-factor login\nA one-time code was sent to your phone.\n"
                               "Verification code:\n--\n"));
        QCOMPARE(server.count("kbdint answers received"), 1);
    }

    // On the terminal: the server's name and instruction, then the prompt
    // with echo off (the code typed is not shown); one question per login.
    void trainyardctlAsksOnTheTerminal()
    {
        KbdintServer server;
        QVERIFY(startServer(server));
        const QString d = m_tmp.filePath(QStringLiteral("ctl-tty"));
        QDir().mkpath(d + QStringLiteral("/db"));
        QProcessEnvironment env = test::serviceEnvironment(d, QStringLiteral(TRAINYARDD_PATH));
        env.insert(QStringLiteral("HOME"), d);
        env.insert(QStringLiteral("TRAINYARD_SSH_CONFIG"), sshConfig(server.port()));
        for (const char* name : {"SSH_AUTH_SOCK", "SSH_ASKPASS", "TRAINYARD_ASKPASS"})
            env.remove(QLatin1String(name));
        std::vector<std::string> args{TRAINYARD_CTL_PATH, "--db",
                QString(d + QStringLiteral("/db/trainyard.db")).toStdString(), "node", "add", "otptty", "--host", "kb",
                "--agent-path", test::agentPath().toStdString(), "--accept-new-host-key"};
        std::vector<std::string> vars;
        for (const QString& v : env.toStringList())
            vars.push_back(v.toStdString());
        std::vector<char*> argv, envp;
        for (std::string& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        for (std::string& v : vars)
            envp.push_back(v.data());
        envp.push_back(nullptr);
        int master = -1;
        const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
        QVERIFY(pid >= 0);
        if (pid == 0) {
            ::execve(argv[0], argv.data(), envp.data());
            ::_exit(127);
        }
        QByteArray screen;
        bool typed = false;
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 60000) {
            pollfd p{master, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0)
                continue;
            char buf[4096];
            const ssize_t n = ::read(master, buf, sizeof buf);
            if (n <= 0)
                break; // EIO: the program ended
            screen.append(buf, qsizetype(n));
            if (!typed && screen.contains("otptty: Verification code: ")) {
                typed = true;
                const QByteArray line = QByteArray(kCode) + "\r";
                QCOMPARE(::write(master, line.constData(), size_t(line.size())), ssize_t(line.size()));
            }
        }
        int status = -1;
        ::waitpid(pid, &status, 0);
        ::close(master);
        QVERIFY2(typed, screen.constData());
        QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0, screen.constData());
        QVERIFY2(screen.contains("otptty: Two-factor login\r\nA one-time code was sent to your phone.\r\n"
                                 "otptty: Verification code: \r\n"),
                screen.constData());
        QVERIFY2(!screen.contains(kCode), screen.constData()); // echo was off
        QVERIFY2(screen.contains("added node otptty"), screen.constData());
        QCOMPARE(server.count("kbdint answers received"), 1);
        QCOMPARE(server.count("kbdint code accepted"), 1);
    }
};

QTEST_GUILESS_MAIN(TestSshKbdint)
#include "TestSshKbdint.moc"
