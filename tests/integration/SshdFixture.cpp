#include "SshdFixture.h"
#include "tests/support/TestSupport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>

#include <csignal>
#include <unistd.h>

namespace ty::test {

QByteArray runTool(const QString& program, const QStringList& args, bool* ok)
{
    QProcess p;
    p.start(program, args);
    const bool finished = p.waitForFinished(30000);
    const bool good = finished && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    if (ok)
        *ok = good;
    return good ? p.readAllStandardOutput() : p.readAllStandardOutput() + p.readAllStandardError();
}

bool makeKey(const QString& file, QString* error)
{
    QFile::remove(file);
    QFile::remove(file + QStringLiteral(".pub"));
    bool ok = false;
    const QByteArray out = runTool(QStringLiteral("ssh-keygen"),
            {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"), QString(),
                    QStringLiteral("-f"), file},
            &ok);
    if (!ok)
        *error = QStringLiteral("ssh-keygen failed: %1").arg(QString::fromUtf8(out));
    return ok;
}

SshAgentProcess::~SshAgentProcess()
{
    if (!m_agent)
        return;
    m_agent->terminate();
    if (!m_agent->waitForFinished(3000)) {
        m_agent->kill();
        m_agent->waitForFinished(3000);
    }
}

QString SshAgentProcess::skipReason()
{
    for (const char* tool : {"ssh-agent", "ssh-add"})
        if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty())
            return QStringLiteral("%1 is missing (Debian: openssh-client)").arg(QLatin1String(tool));
    return {};
}

bool SshAgentProcess::start(const QString& socket, QString* error)
{
    m_socket = socket;
    QFile::remove(socket);
    m_agent = std::make_unique<QProcess>();
    m_agent->start(QStringLiteral("ssh-agent"), {QStringLiteral("-D"), QStringLiteral("-a"), socket});
    if (!m_agent->waitForStarted(5000)) {
        *error = QStringLiteral("cannot start ssh-agent: %1").arg(m_agent->errorString());
        return false;
    }
    QElapsedTimer t;
    t.start();
    while (!QFileInfo::exists(socket) && t.elapsed() < 5000 && m_agent->state() == QProcess::Running)
        QThread::msleep(10);
    if (!QFileInfo::exists(socket)) {
        *error = QStringLiteral("ssh-agent did not create %1: %2")
                         .arg(socket, QString::fromUtf8(m_agent->readAllStandardError()));
        return false;
    }
    return true;
}

bool SshAgentProcess::sshAdd(const QStringList& args, QString* error)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SSH_AUTH_SOCK"), m_socket);
    p.setProcessEnvironment(env);
    p.setStandardInputFile(QProcess::nullDevice());
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("ssh-add"), args);
    if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *error = QStringLiteral("ssh-add %1 failed: %2").arg(args.join(u' '), QString::fromUtf8(p.readAll()));
        return false;
    }
    return true;
}

bool SshAgentProcess::add(const QString& keyFile, QString* error)
{
    return sshAdd({keyFile}, error);
}

bool SshAgentProcess::remove(const QString& keyFile, QString* error)
{
    return sshAdd({QStringLiteral("-d"), keyFile}, error);
}

SshdFixture::SshdFixture() = default;

SshdFixture::~SshdFixture()
{
    stop();
}

QString SshdFixture::skipReason()
{
    if (::geteuid() != 0)
        return QStringLiteral("needs root (sshd privilege separation); CI runs as root");
    if (!QFileInfo(QStringLiteral("/usr/sbin/sshd")).isExecutable())
        return QStringLiteral("/usr/sbin/sshd is missing (Debian: openssh-server)");
    if (QStandardPaths::findExecutable(QStringLiteral("ssh-keygen")).isEmpty())
        return QStringLiteral("ssh-keygen is missing (Debian: openssh-client)");
    return {};
}

bool SshdFixture::writeFile(const QString& name, const QByteArray& bytes, QString* error)
{
    QFile f(m_dir.filePath(name));
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size()) {
        *error = QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    return true;
}

bool SshdFixture::regenerateHostKey(QString* error)
{
    const QString key = m_dir.filePath(QStringLiteral("host_ed25519_key"));
    QFile::remove(key);
    QFile::remove(key + QStringLiteral(".pub"));
    bool ok = false;
    const QByteArray out = runTool(QStringLiteral("ssh-keygen"),
            {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"), QString(),
                    QStringLiteral("-f"), key},
            &ok);
    if (!ok)
        *error = QStringLiteral("ssh-keygen failed: %1").arg(QString::fromUtf8(out));
    return ok;
}

bool SshdFixture::start(QString* error)
{
    if (!m_dir.isValid()) {
        *error = QStringLiteral("no temporary directory");
        return false;
    }
    QDir().mkpath(QStringLiteral("/run/sshd"));
    {
        QTcpServer probe; // a free port on 127.0.0.2 (same on .3: nothing else listens there)
        if (!probe.listen(QHostAddress(QStringLiteral("127.0.0.2")), 0)) {
            *error = QStringLiteral("cannot find a free port: %1").arg(probe.errorString());
            return false;
        }
        m_port = probe.serverPort();
    }
    if (!regenerateHostKey(error))
        return false;
    const QString clientKey = m_dir.filePath(QStringLiteral("id_ed25519"));
    bool ok = false;
    const QByteArray out = runTool(QStringLiteral("ssh-keygen"),
            {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"), QString(),
                    QStringLiteral("-f"), clientKey},
            &ok);
    if (!ok) {
        *error = QStringLiteral("ssh-keygen failed: %1").arg(QString::fromUtf8(out));
        return false;
    }
    QFile pub(clientKey + QStringLiteral(".pub"));
    if (!pub.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read %1").arg(pub.fileName());
        return false;
    }
    const QByteArray d = m_dir.path().toUtf8();
    const QByteArray port = QByteArray::number(m_port);
    if (!writeFile(QStringLiteral("authorized_keys"), pub.readAll(), error))
        return false;
    if (!writeFile(QStringLiteral("sshd_config"),
                "Port " + port
                        + "\nListenAddress 127.0.0.2\nListenAddress 127.0.0.3\n"
                          "HostKey "
                        + d + "/host_ed25519_key\nPidFile " + d
                        + "/sshd.pid\n"
                          "AuthorizedKeysFile "
                        + d
                        + "/authorized_keys\nStrictModes no\nUsePAM no\n"
                          "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin yes\n"
                          "Subsystem sftp internal-sftp\nLogLevel ERROR\n"
                        + m_extraConfig,
                error))
        return false;
    QByteArray config;
    for (const auto& [alias, address] : {std::pair{"ws1", "127.0.0.2"}, std::pair{"ws2", "127.0.0.3"}})
        config += QByteArray("Host ") + alias + "\n  HostName " + address + "\n  Port " + port
                + "\n  User root\n  IdentityFile " + d + "/id_ed25519\n  UserKnownHostsFile " + d + "/known_hosts\n";
    if (!writeFile(QStringLiteral("ssh_config"), config, error))
        return false;
    return restart(error);
}

bool SshdFixture::restart(QString* error)
{
    stop();
    m_sshd = std::make_unique<QProcess>();
    m_sshd->setProcessChannelMode(QProcess::MergedChannels);
    // LogLevel ERROR hides "Server listening": ask for it with -o on start.
    m_sshd->start(QStringLiteral("/usr/sbin/sshd"),
            {QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"),
                    m_dir.filePath(QStringLiteral("sshd_config")), QStringLiteral("-o"),
                    QStringLiteral("LogLevel=INFO")});
    if (!m_sshd->waitForStarted(5000)) {
        *error = QStringLiteral("cannot start sshd: %1").arg(m_sshd->errorString());
        return false;
    }
    QByteArray log;
    QElapsedTimer t;
    t.start();
    int listening = 0;
    while (t.elapsed() < 10000) {
        m_sshd->waitForReadyRead(100);
        log += m_sshd->readAll();
        listening = int(log.count("Server listening"));
        if (listening >= 2)
            return true;
        if (m_sshd->state() == QProcess::NotRunning)
            break;
    }
    *error = QStringLiteral("sshd did not start listening: %1").arg(QString::fromUtf8(log));
    return false;
}

void SshdFixture::stop()
{
    if (!m_sshd)
        return;
    killConnections();
    m_sshd->terminate();
    if (!m_sshd->waitForFinished(3000)) {
        m_sshd->kill();
        m_sshd->waitForFinished(3000);
    }
    m_sshd.reset();
}

SshNodeOptions SshdFixture::nodeOptions(const QString& alias, const QString& agentStateDir) const
{
    SshNodeOptions o;
    o.name = alias;
    o.host = alias;
    o.configFile = clientConfig();
    o.connectTimeoutSec = 10;
    o.acceptNewHostKey = true;
    o.agentEnv.insert(QStringLiteral("TRAINYARD_AGENT_STATE"), agentStateDir);
    o.agentEnv.insert(QStringLiteral("TRAINYARD_AGENT_NO_NVML"), QStringLiteral("1"));
    o.remoteAgentPath = agentPath();
    return o;
}

qint64 SshdFixture::sshdPid() const
{
    return m_sshd ? m_sshd->processId() : 0;
}

int SshdFixture::killConnections()
{
    const qint64 root = sshdPid();
    if (root <= 0)
        return 0;
    // Every sshd process below the listener (monitor and session processes of
    // each connection); the agents they started are left to see their EOF.
    QHash<qint64, qint64> parentOf;
    QHash<qint64, QByteArray> nameOf;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString& e : entries) {
        bool isPid = false;
        const qint64 pid = e.toLongLong(&isPid);
        if (!isPid)
            continue;
        QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray s = stat.readAll();
        const qsizetype open = s.indexOf('(');
        const qsizetype close = s.lastIndexOf(')');
        const QList<QByteArray> fields = s.mid(close + 2).split(' '); // state ppid ...
        if (fields.size() > 1) {
            parentOf.insert(pid, fields[1].toLongLong());
            nameOf.insert(pid, s.mid(open + 1, close - open - 1));
        }
    }
    int killed = 0;
    for (auto it = parentOf.cbegin(); it != parentOf.cend(); ++it) {
        if (!nameOf.value(it.key()).startsWith("sshd"))
            continue;
        bool below = false;
        for (qint64 p = it.value(), hops = 0; p > 1 && hops < 64; p = parentOf.value(p, 0), ++hops)
            below = below || p == root;
        if (below) {
            ::kill(pid_t(it.key()), SIGKILL);
            ++killed;
        }
    }
    return killed;
}

} // namespace ty::test
