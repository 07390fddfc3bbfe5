#include "PassphraseDialog.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QThread>
#include <QVBoxLayout>

namespace ty {

PassphraseDialog::PassphraseDialog(const QString& node, const QString& prompt, QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("passphraseDialog"));
    setWindowTitle(tr("SSH key passphrase for %1").arg(node));
    auto* text = new QLabel(tr("Connecting to node <b>%1</b> needs an encrypted private key.<br>%2")
                                .arg(node.toHtmlEscaped(), prompt.toHtmlEscaped()),
                            this);
    text->setObjectName(QStringLiteral("passphrasePrompt"));
    text->setWordWrap(true);
    auto* note = new QLabel(tr("<small>Trainyard hands the passphrase to libssh and does not store it.</small>"), this);
    m_edit = new QLineEdit(this);
    m_edit->setObjectName(QStringLiteral("passphraseEdit"));
    m_edit->setEchoMode(QLineEdit::Password);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(text);
    layout->addWidget(m_edit);
    layout->addWidget(note);
    layout->addWidget(buttons);
    resize(440, sizeHint().height());
}

PassphraseDialog::~PassphraseDialog()
{
    m_edit->clear();
}

std::optional<QByteArray> PassphraseDialog::ask(QWidget* parent, const QString& node, const QString& prompt)
{
    PassphraseDialog dialog(node, prompt, parent);
    if (dialog.exec() != QDialog::Accepted)
        return std::nullopt;
    QString text = dialog.m_edit->text();
    dialog.m_edit->clear();
    QByteArray bytes = text.toUtf8();
    text.fill(QChar(u'\0'));
    return bytes;
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
        return PassphraseDialog::ask(m_parent, node, prompt);
    std::optional<QByteArray> answer;
    QPointer<QWidget> parent = m_parent;
    // Blocks this (SSH) thread until the user answered on the GUI thread. If
    // the context object is deleted first, Qt releases the wait and the
    // answer stays nullopt.
    QMetaObject::invokeMethod(context, [&answer, parent, node, prompt] {
        answer = PassphraseDialog::ask(parent, node, prompt);
    }, Qt::BlockingQueuedConnection);
    return answer;
}

} // namespace ty
