#pragma once

#include "core/common/Result.h"

#include <QByteArray>
#include <QString>

namespace ty {

// Secrets the user asked Trainyard to remember (SSH key passphrases), kept
// in the desktop's keychain through QtKeychain: the Secret Service
// (gnome-keyring, KeePassXC, ...) or KWallet on Linux, Keychain on macOS,
// Credential Manager on Windows. There is no plain-text fallback
// (QKeychain::Job::setInsecureFallback(false)): with no keychain service,
// write() fails and nothing is stored.
//
// Entries live under the service name "Trainyard"; `key` is any text
// (passphraseKey() builds the one for an SSH key).
//
// Each call blocks until the keychain answered (a local QEventLoop runs the
// D-Bus round trip). GUI thread only (QtKeychain's jobs are QObjects of the
// calling thread; the Secret Service may show an unlock prompt).
class Keychain final {
public:
    // The entry's secret. Errors: not found ("no entry"), no keychain service,
    // access denied; the message says which.
    static Result<QByteArray> read(const QString& key);
    static Result<void> write(const QString& key, const QByteArray& secret);
    // Removing a missing entry is not an error.
    static Result<void> remove(const QString& key);

    // The entry of the passphrase libssh asked for with `prompt` while
    // connecting to `node`.
    static QString passphraseKey(const QString& node, const QString& prompt);
};

} // namespace ty
