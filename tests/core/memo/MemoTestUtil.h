#pragma once

// Components and digests for the memo tests.

#include "core/memo/MemoKey.h"

#include <QCryptographicHash>

namespace ty::test {

inline QString sha(const QByteArray& content)
{
    return QString::fromLatin1(QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex());
}

inline FileDigest file(const QString& path, const QByteArray& content, FileDigest::Kind kind = FileDigest::Kind::File)
{
    return FileDigest{path, kind, content.size(), sha(content)};
}

// A train step as a pipeline would key it.
inline MemoComponents trainComponents()
{
    MemoComponents c;
    c.step = QStringLiteral("train");
    c.command = QStringLiteral("python train.py --lr 0.01");
    c.argv = {QStringLiteral("python"), QStringLiteral("train.py"), QStringLiteral("--lr"), QStringLiteral("0.01")};
    c.env = {{QStringLiteral("SEED"), QStringLiteral("7")}, {QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("4")}};
    c.params = {{QStringLiteral("lr"), QStringLiteral("0.01")}, {QStringLiteral("epochs"), QStringLiteral("15")}};
    c.gpuType = QStringLiteral("A100");
    c.gpuCount = 1;
    c.codeFiles = {file(QStringLiteral("lib/old.py"), "def f(): pass\n"),
            file(QStringLiteral("run.sh"), "#!/bin/sh\n", FileDigest::Kind::Executable),
            file(QStringLiteral("train.py"), "print('train')\n")};
    c.inputs = {file(QStringLiteral("data/train.csv"), "a,b\n1,2\n")};
    c.upstream = {{QStringLiteral("ingest"), sha("ingest-key")}};
    c.keyExtra = QStringLiteral("v1");
    return c;
}

} // namespace ty::test
