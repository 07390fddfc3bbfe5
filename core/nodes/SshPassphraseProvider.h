#pragma once

// Asks the user what an SSH login needs from them (GUI dialog, CLI prompt,
// a client of trainyardd): the passphrase of an encrypted private key, and
// the questions of a keyboard-interactive login (RFC 4256: one-time codes,
// Duo prompts, a PAM password). An SSH session without a provider (batch
// mode) can use neither: authentication then fails with a message saying so.
//
// Thread affinity: both questions are called on the SSH session's own thread
// (never the GUI thread) while that thread waits for the answer; an
// implementation that shows a dialog must hand the question to the GUI thread
// (e.g. QMetaObject::invokeMethod with Qt::BlockingQueuedConnection). An
// implementation must be thread-safe: several nodes' sessions may ask at once.
// Answers are never logged or stored by Trainyard; the session wipes its
// copies after handing them to libssh.

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>

#include <optional>

namespace ty {

// One prompt of a keyboard-interactive round: the server's text ("Verification
// code: ") and whether what is typed may be shown (echo false: a secret).
struct SshLoginPrompt {
    QString text;
    bool echo = false;

    friend bool operator==(const SshLoginPrompt&, const SshLoginPrompt&) = default;
};

// One round of keyboard-interactive questions, as the server sent it. `name`
// (a title) and `instruction` may be empty; `prompts` is never empty when a
// provider is asked (rounds without prompts are answered by the session).
// Every text comes from the server: show it as plain text (no markup, no
// terminal escapes).
struct SshLoginQuestions {
    QString name;
    QString instruction;
    QList<SshLoginPrompt> prompts;

    friend bool operator==(const SshLoginQuestions&, const SshLoginQuestions&) = default;
};

class SshPassphraseProvider {
public:
    virtual ~SshPassphraseProvider() = default;
    // `node`: Trainyard's node name; `prompt` names the key file, as OpenSSH's
    // does: "Enter passphrase for key '/home/u/.ssh/id_ed25519':".
    // Returns the passphrase (UTF-8), or nullopt when the user declined.
    virtual std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) = 0;

    // A keyboard-interactive round of the login to `node` (after its key was
    // accepted, or refused, when the server offers keyboard-interactive).
    // Returns one answer per prompt, in order (UTF-8, no NUL), or nullopt
    // when the user declined; a list of another length counts as declined.
    // Called once per round that has prompts (a one-time code: once per
    // login); the session never asks again after a refused answer: the login
    // fails, and only a new login (a reconnection) asks again.
    // The default declines: a provider that cannot put such questions to a
    // user (the login then fails saying that nobody answered).
    virtual std::optional<QList<QByteArray>> answers(const QString& node, const SshLoginQuestions& questions)
    {
        Q_UNUSED(node);
        Q_UNUSED(questions);
        return std::nullopt;
    }
};

} // namespace ty

Q_DECLARE_METATYPE(ty::SshLoginQuestions)
