#pragma once

#include "nodes/SshPassphraseProvider.h"

#include <QDialog>
#include <QPointer>

class QLabel;
class QLineEdit;

namespace ty {

// Asks for the passphrase of an encrypted SSH key: the key named in libssh's
// prompt, the node, a password field (objectName "passphraseEdit"). The
// field is cleared when the dialog closes; nothing is stored.
class PassphraseDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PassphraseDialog)

public:
    PassphraseDialog(const QString& node, const QString& prompt, QWidget* parent = nullptr);
    ~PassphraseDialog() override;

    // Shows the dialog modally; the passphrase (UTF-8), or nullopt when
    // cancelled. GUI thread only.
    static std::optional<QByteArray> ask(QWidget* parent, const QString& node, const QString& prompt);

private:
    QLineEdit* m_edit = nullptr;
};

// SshPassphraseProvider for the GUI: passphrase() is called on an SSH
// session's thread and blocks that thread while the question is asked on the
// GUI thread (QMetaObject::invokeMethod with Qt::BlockingQueuedConnection;
// called on the GUI thread itself, it asks directly). The answer is handed
// to libssh and never kept here.
//
// Construct on the GUI thread. `parent` (may be null) is the dialog's parent;
// if it is gone when a question comes, the question is declined.
class GuiPassphraseProvider final : public SshPassphraseProvider {
public:
    explicit GuiPassphraseProvider(QWidget* parent);
    ~GuiPassphraseProvider() override;

    std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override;

private:
    QPointer<QWidget> m_parent;
    QPointer<QObject> m_context; // lives on the GUI thread
};

} // namespace ty
