#pragma once

#include "core/nodes/SshPassphraseProvider.h"

#include <QDialog>
#include <QList>

#include <optional>

class QLineEdit;

namespace ty {

// Asks the questions of a keyboard-interactive SSH login (a one-time code, a
// Duo prompt; SshPassphraseProvider::answers()): the node, the server's name
// (objectName "loginName") and instruction ("loginInstruction"), and one
// field per prompt, labelled with the prompt ("loginAnswer0",
// "loginAnswer1", ...), in password mode where the server says the answer
// must not be shown. Every server text is shown as plain text, never as
// markup. The fields are cleared when the dialog closes; it stores nothing
// (a one-time code is never remembered).
class LoginQuestionsDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LoginQuestionsDialog)

public:
    LoginQuestionsDialog(const QString& node, const SshLoginQuestions& questions, QWidget* parent = nullptr);
    ~LoginQuestionsDialog() override;

    // Shows the dialog modally; the answers (UTF-8, one per prompt, in
    // order), or nullopt when cancelled. GUI thread only.
    static std::optional<QList<QByteArray>> ask(
            QWidget* parent, const QString& node, const SshLoginQuestions& questions);

private:
    QList<QLineEdit*> m_edits;
};

} // namespace ty
