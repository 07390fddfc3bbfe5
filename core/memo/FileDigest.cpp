#include "FileDigest.h"

#include <QCryptographicHash>

#include <algorithm>

namespace ty {

QString kindName(FileDigest::Kind kind)
{
    switch (kind) {
    case FileDigest::Kind::File: return QStringLiteral("file");
    case FileDigest::Kind::Executable: return QStringLiteral("exec");
    case FileDigest::Kind::Link: return QStringLiteral("link");
    case FileDigest::Kind::Directory: return QStringLiteral("dir");
    }
    return QStringLiteral("file");
}

bool kindFromName(const QString& name, FileDigest::Kind* kind)
{
    for (auto k : {FileDigest::Kind::File, FileDigest::Kind::Executable, FileDigest::Kind::Link,
                 FileDigest::Kind::Directory}) {
        if (kindName(k) == name) {
            *kind = k;
            return true;
        }
    }
    return false;
}

bool isSha256Hex(const QString& hex)
{
    if (hex.size() != 64)
        return false;
    for (QChar c : hex)
        if (!((c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f')))
            return false;
    return true;
}

void sortByPath(QList<FileDigest>& files)
{
    std::stable_sort(files.begin(), files.end(),
            [](const FileDigest& a, const FileDigest& b) { return a.path.toUtf8() < b.path.toUtf8(); });
}

QString treeDigest(const QList<FileDigest>& sortedFiles)
{
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(QByteArrayView("trainyard-tree-1\n"));
    for (const FileDigest& f : sortedFiles) {
        const QByteArray line = kindName(f.kind).toUtf8() + ' ' + f.sha256.toLatin1() + ' ' + QByteArray::number(f.size)
                + ' ' + f.path.toUtf8() + '\0';
        h.addData(line);
    }
    return QString::fromLatin1(h.result().toHex());
}

} // namespace ty
