#include "PassphraseDialog.h"
#include "LoginQuestionsDialog.h"
#include "ui/settings/DialogGeometry.h"

#include "Keychain.h"

#include <QApplication>
#include <QCheckBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QThread>
#include <QVBoxLayout>

namespace ty {

PassphraseDialog::PassphraseDialog(const QString& node, const QString& prompt, QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("passphraseDialog"));
    rememberGeometry(this, QStringLiteral("passphrase"));
    setWindowTitle(tr("SSH key passphrase for %1").arg(node));
    auto* text = new QLabel(tr("Connecting to node <b>%1</b> needs an encrypted private key.<br>%2")
                                    .arg(node.toHtmlEscaped(), prompt.toHtmlEscaped()),
            this);
    text->setObjectName(QStringLiteral("passphrasePrompt"));
    text->setWordWrap(true);
    auto* note = new QLabel(tr("<small>Trainyard hands the passphrase to libssh. It keeps it only in the "
                               "system keychain, and only if you ask; never in a file.</small>"),
            this);
    note->setWordWrap(true);
    m_edit = new QLineEdit(this);
    m_edit->setObjectName(QStringLiteral("passphraseEdit"));
    m_edit->setAccessibleName(tr("Passphrase"));
    m_edit->setEchoMode(QLineEdit::Password);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(text);
    layout->addWidget(m_edit);
    m_remember = new QCheckBox(tr("Remember in the system keychain"), this);
    m_remember->setObjectName(QStringLiteral("rememberPassphrase"));
    layout->addWidget(m_remember);
    layout->addWidget(note);
    layout->addWidget(buttons);
    resize(440, sizeHint().height());
}

PassphraseDialog::~PassphraseDialog()
{
    m_edit->clear();
}

std::optional<PassphraseDialog::Answer> PassphraseDialog::ask(
        QWidget* parent, const QString& node, const QString& prompt)
{
    PassphraseDialog dialog(node, prompt, parent);
    if (dialog.exec() != QDialog::Accepted)
        return std::nullopt;
    QString text = dialog.m_edit->text();
    dialog.m_edit->clear();
    Answer answer{text.toUtf8(), dialog.m_remember->isChecked()};
    text.fill(QChar(u'\0'));
    return answer;
}

GuiPassphraseProvider::GuiPassphraseProvider(QWidget* parent)
    : m_parent(parent)
    , m_context(new QObject)
{
    if (QCoreApplication::instance())
        m_context->moveToThread(QCoreApplication::instance()->thread());
}

GuiPassphraseProvider::~GuiPassphraseProvider()
{
    // May run on the engine's thread (the transport owns the provider).
    if (m_context)
        m_context->deleteLater();
}

std::optional<QByteArray> GuiPassphraseProvider::passphrase(const QString& node, const QString& prompt)
{
    QPointer<QObject> context = m_context;
    if (!context)
        return std::nullopt;
    if (QThread::currentThread() == context->thread())
        return answer(node, prompt);
    std::optional<QByteArray> result;
    // Blocks this (SSH) thread until the user answered on the GUI thread. If
    // the context object is deleted first, Qt releases the wait and the
    // answer stays nullopt.
    QMetaObject::invokeMethod(
            context, [this, &result, node, prompt] { result = answer(node, prompt); }, Qt::BlockingQueuedConnection);
    return result;
}

std::optional<QList<QByteArray>> GuiPassphraseProvider::answers(const QString& node, const SshLoginQuestions& questions)
{
    QPointer<QObject> context = m_context;
    if (!context)
        return std::nullopt;
    if (QThread::currentThread() == context->thread())
        return LoginQuestionsDialog::ask(m_parent, node, questions);
    std::optional<QList<QByteArray>> result;
    // As passphrase(): this (SSH) thread waits for the user's answers.
    QMetaObject::invokeMethod(
            context,
            [this, &result, node, questions] { result = LoginQuestionsDialog::ask(m_parent, node, questions); },
            Qt::BlockingQueuedConnection);
    return result;
}

std::optional<QByteArray> GuiPassphraseProvider::answer(const QString& node, const QString& prompt)
{
    const QString key = Keychain::passphraseKey(node, prompt);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const auto lastAnswer = m_fromKeychainAt.constFind(key);
    if (lastAnswer != m_fromKeychainAt.cend() && now - *lastAnswer < 120'000) {
        // Asked again right after the keychain answered: that passphrase no
        // longer opens the key. Forget it and ask.
        m_fromKeychainAt.remove(key);
        if (auto removed = Keychain::remove(key); !removed)
            m_keychainError = removed.error().message;
    } else {
        auto stored = Keychain::read(key);
        if (stored) {
            m_fromKeychainAt.insert(key, now);
            return *stored;
        }
        if (stored.error().kind != ErrorKind::NotFound)
            m_keychainError = stored.error().message;
    }
    auto asked = PassphraseDialog::ask(m_parent, node, prompt);
    if (!asked)
        return std::nullopt;
    if (asked->remember) {
        if (auto written = Keychain::write(key, asked->passphrase); !written) {
            m_keychainError = written.error().message;
            QMessageBox::warning(m_parent, QObject::tr("Passphrase not remembered"),
                    QObject::tr("The passphrase is used for this connection but could not be kept "
                                "in the system keychain, and is not stored anywhere else.\n\n%1")
                            .arg(m_keychainError));
        }
    }
    return std::move(asked->passphrase);
}

} // namespace ty
