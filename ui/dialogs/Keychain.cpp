#include "Keychain.h"

#include <qt6keychain/keychain.h>

#include <QEventLoop>

namespace ty {

namespace {

const QString kService = QStringLiteral("Trainyard");

// Runs a configured job to its end and returns its error text (empty: ok).
QString runJob(QKeychain::Job& job, const QString& key)
{
    job.setAutoDelete(false);
    job.setInsecureFallback(false);
    job.setKey(key);
    QEventLoop loop;
    QObject::connect(&job, &QKeychain::Job::finished, &loop, &QEventLoop::quit);
    job.start();
    loop.exec();
    if (job.error() == QKeychain::NoError)
        return {};
    return QStringLiteral("keychain entry '%1' of service %2: %3").arg(key, kService, job.errorString());
}

} // namespace

Result<QByteArray> Keychain::read(const QString& key)
{
    QKeychain::ReadPasswordJob job(kService);
    const QString error = runJob(job, key);
    if (!error.isEmpty())
        return job.error() == QKeychain::EntryNotFound ? fail(QStringLiteral("no entry: ") + error, ErrorKind::NotFound)
                                                       : fail(error);
    return job.binaryData();
}

Result<void> Keychain::write(const QString& key, const QByteArray& secret)
{
    QKeychain::WritePasswordJob job(kService);
    job.setBinaryData(secret);
    const QString error = runJob(job, key);
    if (!error.isEmpty())
        return fail(error);
    return {};
}

Result<void> Keychain::remove(const QString& key)
{
    QKeychain::DeletePasswordJob job(kService);
    const QString error = runJob(job, key);
    if (!error.isEmpty() && job.error() != QKeychain::EntryNotFound)
        return fail(error);
    return {};
}

QString Keychain::passphraseKey(const QString& node, const QString& prompt)
{
    return QStringLiteral("ssh-key-passphrase:%1:%2").arg(node, prompt.trimmed());
}

} // namespace ty
