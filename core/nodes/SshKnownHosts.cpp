#include "SshKnownHosts.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageAuthenticationCode>
#include <QRandomGenerator>

namespace ty {

QString knownHostsName(const QString& host, int port)
{
    if (port <= 0 || port == 22)
        return host;
    return QStringLiteral("[%1]:%2").arg(host).arg(port);
}

QList<int> knownHostsLines(const QString& file, const QString& host, int port)
{
    return knownHostsLines(file, knownHostsName(host, port));
}

QList<int> knownHostsLines(const QString& file, const QString& hostName)
{
    QList<int> lines;
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return lines;
    const QByteArray name = hostName.toUtf8();
    int number = 0;
    while (!f.atEnd()) {
        ++number;
        QByteArray line = f.readLine().trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        QList<QByteArray> fields = line.simplified().split(' ');
        if (!fields.isEmpty() && fields.front().startsWith('@')) // @cert-authority / @revoked
            fields.removeFirst();
        if (fields.isEmpty())
            continue;
        bool match = false;
        for (const QByteArray& pattern : fields.front().split(',')) {
            if (pattern.startsWith("|1|")) {
                const QList<QByteArray> parts = pattern.split('|'); // "", "1", salt, hash
                if (parts.size() != 4)
                    continue;
                const QByteArray salt = QByteArray::fromBase64(parts[2]);
                const QByteArray mac = QMessageAuthenticationCode::hash(name, salt, QCryptographicHash::Sha1);
                match = mac == QByteArray::fromBase64(parts[3]);
            } else {
                match = pattern == name;
            }
            if (match)
                break;
        }
        if (match)
            lines.append(number);
    }
    return lines;
}

QByteArray hashedKnownHostsName(const QByteArray& name, const QByteArray& salt)
{
    QByteArray s = salt;
    if (s.isEmpty()) {
        quint32 words[5]; // 20 bytes, SHA-1's digest length, as OpenSSH's hostfile.c
        QRandomGenerator::system()->fillRange(words);
        s = QByteArray(reinterpret_cast<const char*>(words), qsizetype(sizeof words));
    }
    const QByteArray mac = QMessageAuthenticationCode::hash(name, s, QCryptographicHash::Sha1);
    return "|1|" + s.toBase64() + '|' + mac.toBase64();
}

Result<void> appendKnownHostsLine(const QString& file, const QByteArray& line)
{
    const QFileInfo info(file);
    const QString dir = info.absolutePath();
    if (!QFileInfo::exists(dir)) {
        if (!QDir().mkpath(dir))
            return fail(QStringLiteral("cannot create the directory %1").arg(dir));
        QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    QFile f(file);
    if (!f.open(QIODevice::ReadWrite | QIODevice::Append))
        return fail(QStringLiteral("cannot open %1: %2").arg(file, f.errorString()));
    QByteArray bytes = line + '\n';
    if (f.size() > 0) {
        f.seek(f.size() - 1);
        if (f.read(1) != "\n")
            bytes.prepend('\n');
    }
    if (f.write(bytes) != bytes.size() || !f.flush())
        return fail(QStringLiteral("cannot write %1: %2").arg(file, f.errorString()));
    return {};
}

} // namespace ty
