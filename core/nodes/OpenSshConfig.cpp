#include "OpenSshConfig.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <QProcess>
#include <QStandardPaths>
#include <QSysInfo>

#include <pwd.h>
#include <unistd.h>

namespace ty {
namespace {

// The %-tokens OpenSSH expands in IdentityFile (ssh_config(5) "TOKENS");
// unknown ones stay as they are.
QString expandTokens(const QString& path, const QHash<QChar, QString>& tokens)
{
    QString out;
    out.reserve(path.size());
    for (qsizetype i = 0; i < path.size(); ++i) {
        if (path[i] != u'%' || i + 1 == path.size()) {
            out += path[i];
            continue;
        }
        const QChar t = path[++i];
        if (t == u'%')
            out += u'%';
        else if (const auto it = tokens.constFind(t); it != tokens.cend())
            out += *it;
        else
            out += u'%' + QString(t);
    }
    return out;
}

} // namespace

QString passwdHomeDirectory()
{
    passwd pw{};
    passwd* found = nullptr;
    char buf[4096];
    if (::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &found) == 0 && found)
        return QFile::decodeName(found->pw_dir);
    return QDir::homePath();
}

OpenSshHostConfig parseSshG(
        const QByteArray& output, const OpenSshQuery& query, const QString& home, const QString& localUser)
{
    OpenSshHostConfig config;
    QHash<QString, QString> single; // first value of each one-value option
    QStringList identities;
    QStringList certificates;
    for (const QByteArray& raw : output.split('\n')) {
        const QString line = QString::fromUtf8(raw).trimmed();
        const qsizetype space = line.indexOf(u' ');
        if (space <= 0)
            continue;
        const QString key = line.left(space).toLower();
        const QString value = line.mid(space + 1).trimmed();
        if (key == u"identityfile")
            identities << value;
        else if (key == u"certificatefile")
            certificates << value;
        else if (!single.contains(key))
            single.insert(key, value);
    }
    config.hashKnownHosts = single.value(QStringLiteral("hashknownhosts")).compare(u"yes", Qt::CaseInsensitive) == 0;
    config.identitiesOnly = single.value(QStringLiteral("identitiesonly")).compare(u"yes", Qt::CaseInsensitive) == 0;
    config.identityAgent = single.value(QStringLiteral("identityagent"));
    config.hostKeyAlias = single.value(QStringLiteral("hostkeyalias"));
    config.strictHostKeyChecking = single.value(QStringLiteral("stricthostkeychecking"));
    const QString machine = QSysInfo::machineHostName();
    const QHash<QChar, QString> tokens{
            {u'd', home},
            {u'u', localUser},
            {u'i', QString::number(::getuid())},
            {u'l', machine},
            {u'L', machine.section(u'.', 0, 0)},
            {u'h', single.value(QStringLiteral("hostname"), query.host)},
            {u'n', query.host},
            {u'p', single.value(QStringLiteral("port"), QStringLiteral("22"))},
            {u'r', single.value(QStringLiteral("user"), localUser)},
    };
    auto expand = [&](QString file) {
        if (file == u"~")
            file = home;
        else if (file.startsWith(QStringLiteral("~/")))
            file = home + file.mid(1);
        return expandTokens(file, tokens);
    };
    for (const QString& id : std::as_const(identities))
        if (const QString file = expand(id); !config.identityFiles.contains(file))
            config.identityFiles << file;
    for (const QString& cert : std::as_const(certificates))
        if (const QString file = expand(cert); !config.certificateFiles.contains(file))
            config.certificateFiles << file;
    return config;
}

QString OpenSshHostConfig::agentSocket() const
{
    // ssh_config(5), IdentityAgent: "none" disables the agent, "SSH_AUTH_SOCK"
    // and "$NAME" name an environment variable holding the path.
    if (identityAgent.isEmpty() || identityAgent == u"SSH_AUTH_SOCK")
        return qEnvironmentVariable("SSH_AUTH_SOCK");
    if (identityAgent == u"none")
        return {};
    if (identityAgent.startsWith(u'$'))
        return qEnvironmentVariable(identityAgent.mid(1).toLocal8Bit().constData());
    return identityAgent;
}

std::optional<OpenSshHostConfig> resolveOpenSshConfig(const OpenSshQuery& query, QString* why)
{
    auto failed = [why](const QString& reason) -> std::optional<OpenSshHostConfig> {
        if (why)
            *why = reason;
        return std::nullopt;
    };
    const QString ssh = QStandardPaths::findExecutable(QStringLiteral("ssh"));
    if (ssh.isEmpty())
        return failed(QStringLiteral("the OpenSSH client (ssh) is not installed"));
    QStringList args;
    if (!query.configFile.isEmpty())
        args << QStringLiteral("-F") << query.configFile;
    if (!query.user.isEmpty())
        args << QStringLiteral("-l") << query.user;
    if (query.port > 0)
        args << QStringLiteral("-p") << QString::number(query.port);
    if (!query.identityFile.isEmpty())
        args << QStringLiteral("-i") << query.identityFile;
    args << QStringLiteral("-G") << QStringLiteral("--") << query.host;
    QProcess p;
    p.setStandardInputFile(QProcess::nullDevice());
    p.start(ssh, args);
    if (!p.waitForStarted(10000))
        return failed(QStringLiteral("cannot run %1: %2").arg(ssh, p.errorString()));
    if (!p.waitForFinished(10000)) {
        p.kill();
        p.waitForFinished(1000);
        return failed(QStringLiteral("`%1 -G %2` did not finish within 10 s").arg(ssh, query.host));
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return failed(QStringLiteral("`%1 -G %2` failed: %3")
                              .arg(ssh, query.host, QString::fromLocal8Bit(p.readAllStandardError()).trimmed()));
    QString localUser = qEnvironmentVariable("USER");
    passwd pw{};
    passwd* found = nullptr;
    char buf[4096];
    if (::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &found) == 0 && found)
        localUser = QFile::decodeName(found->pw_name);
    return parseSshG(p.readAllStandardOutput(), query, passwdHomeDirectory(), localUser);
}

} // namespace ty
