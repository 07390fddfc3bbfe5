#pragma once

// Asks the user for the passphrase of an encrypted private key (GUI dialog,
// CLI prompt). An SSH session without a provider (batch mode) cannot use an
// encrypted key: authentication then fails with a message saying so.
//
// Thread affinity: passphrase() is called on the SSH session's own thread
// (never the GUI thread) while that thread waits for the answer; an
// implementation that shows a dialog must hand the question to the GUI thread
// (e.g. QMetaObject::invokeMethod with Qt::BlockingQueuedConnection).
// The passphrase is never stored by Trainyard; the session wipes its copy
// after handing it to libssh.

#include <QByteArray>
#include <QString>

#include <optional>

namespace ty {

class SshPassphraseProvider {
public:
    virtual ~SshPassphraseProvider() = default;
    // `node`: Trainyard's node name; `prompt` names the key file, as OpenSSH's
    // does: "Enter passphrase for key '/home/u/.ssh/id_ed25519':".
    // Returns the passphrase (UTF-8), or nullopt when the user declined.
    virtual std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) = 0;
};

} // namespace ty
