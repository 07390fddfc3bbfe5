#pragma once

#include "core/nodes/SshPassphraseProvider.h"

#include <QDialog>
#include <QHash>
#include <QPointer>

class QCheckBox;
class QLabel;
class QLineEdit;

namespace ty {

// Asks for the passphrase of an encrypted SSH key: the key named in libssh's
// prompt, the node, a password field (objectName "passphraseEdit") and
// "Remember in the system keychain" (objectName "rememberPassphrase", off by
// default). The field is cleared when the dialog closes; the dialog itself
// stores nothing.
class PassphraseDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PassphraseDialog)

public:
    PassphraseDialog(const QString& node, const QString& prompt, QWidget* parent = nullptr);
    ~PassphraseDialog() override;

    struct Answer {
        QByteArray passphrase; // UTF-8
        bool remember = false; // the user asked for it to be kept in the keychain
    };
    // Shows the dialog modally; the answer, or nullopt when cancelled.
    // GUI thread only.
    static std::optional<Answer> ask(QWidget* parent, const QString& node, const QString& prompt);

private:
    QLineEdit* m_edit = nullptr;
    QCheckBox* m_remember = nullptr;
};

// SshPassphraseProvider for the GUI: passphrase() and answers() are called
// on an SSH session's thread (or, for trainyardd's questions, on the GUI
// thread by Application) and block that thread while the question is asked
// on the GUI thread (QMetaObject::invokeMethod with
// Qt::BlockingQueuedConnection; called on the GUI thread itself, it asks
// directly). The answer is handed to libssh and never kept here.
// answers(): a keyboard-interactive login's round in LoginQuestionsDialog;
// never remembered (one-time codes), never read from the keychain.
//
// Remembered passphrases (Keychain, never plain text): a question is first
// answered from the keychain entry Keychain::passphraseKey(node, prompt).
// When the same question comes again within 120 s of a keychain answer, that
// answer was wrong (libssh asks again only after the key failed to decrypt):
// the entry is removed and the user is asked. A passphrase the user chose
// to remember is written to the keychain; when that fails (no keychain
// service) a warning says so and nothing is stored.
//
// Construct on the GUI thread. `parent` (may be null) is the dialog's parent;
// if it is gone when a question comes, the question is declined.
class GuiPassphraseProvider final : public SshPassphraseProvider {
public:
    explicit GuiPassphraseProvider(QWidget* parent);
    ~GuiPassphraseProvider() override;

    std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override;
    std::optional<QList<QByteArray>> answers(const QString& node, const SshLoginQuestions& questions) override;

    // The last keychain problem (read or write), empty if none. GUI thread.
    QString lastKeychainError() const { return m_keychainError; }

private:
    std::optional<QByteArray> answer(const QString& node, const QString& prompt); // GUI thread

    QPointer<QWidget> m_parent;
    QPointer<QObject> m_context;             // lives on the GUI thread
    QHash<QString, qint64> m_fromKeychainAt; // key -> when (ms since epoch) the keychain answered; GUI thread
    QString m_keychainError;
};

} // namespace ty
