#include "SshKnownHosts.h"

#include <QCryptographicHash>
#include <QFile>
#include <QMessageAuthenticationCode>

namespace ty {

QString knownHostsName(const QString& host, int port)
{
    if (port <= 0 || port == 22)
        return host;
    return QStringLiteral("[%1]:%2").arg(host).arg(port);
}

QList<int> knownHostsLines(const QString& file, const QString& host, int port)
{
    QList<int> lines;
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return lines;
    const QByteArray name = knownHostsName(host, port).toUtf8();
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

} // namespace ty
