#include "LoginQuestionsDialog.h"
#include "ui/settings/DialogGeometry.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace ty {

namespace {

// A label for a server's text: plain text, whatever it looks like.
QLabel* plainLabel(const QString& text, QWidget* parent)
{
    auto* label = new QLabel(parent);
    label->setTextFormat(Qt::PlainText);
    label->setText(text);
    label->setWordWrap(true);
    return label;
}

} // namespace

LoginQuestionsDialog::LoginQuestionsDialog(const QString& node, const SshLoginQuestions& questions, QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("loginQuestionsDialog"));
    rememberGeometry(this, QStringLiteral("loginQuestions"));
    setWindowTitle(tr("SSH login to %1").arg(node));
    auto* layout = new QVBoxLayout(this);
    auto* intro = plainLabel(tr("The login to node %1 asks for more than a key (keyboard-interactive "
                                "authentication, e.g. a one-time code):")
                                     .arg(node),
            this);
    intro->setObjectName(QStringLiteral("loginIntro"));
    layout->addWidget(intro);
    if (!questions.name.trimmed().isEmpty()) {
        auto* name = plainLabel(questions.name.trimmed(), this);
        name->setObjectName(QStringLiteral("loginName"));
        QFont bold = name->font();
        bold.setBold(true);
        name->setFont(bold);
        layout->addWidget(name);
    }
    if (!questions.instruction.trimmed().isEmpty()) {
        auto* instruction = plainLabel(questions.instruction.trimmed(), this);
        instruction->setObjectName(QStringLiteral("loginInstruction"));
        layout->addWidget(instruction);
    }
    auto* form = new QFormLayout;
    for (qsizetype i = 0; i < questions.prompts.size(); ++i) {
        const SshLoginPrompt& prompt = questions.prompts.at(i);
        QString text = prompt.text.trimmed();
        auto* edit = new QLineEdit(this);
        edit->setObjectName(QStringLiteral("loginAnswer%1").arg(i));
        edit->setEchoMode(prompt.echo ? QLineEdit::Normal : QLineEdit::Password);
        if (text.endsWith(u':'))
            text.chop(1);
        edit->setAccessibleName(text.isEmpty() ? tr("Answer %1").arg(i + 1) : text);
        auto* label = plainLabel(prompt.text.trimmed(), this);
        label->setBuddy(edit);
        form->addRow(label, edit);
        m_edits << edit;
    }
    layout->addLayout(form);
    auto* note = new QLabel(tr("<small>Trainyard hands the answers to libssh for this login and keeps them "
                               "nowhere. A connection made later asks again.</small>"),
            this);
    note->setWordWrap(true);
    layout->addWidget(note);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    if (!m_edits.isEmpty())
        m_edits.front()->setFocus();
    resize(440, sizeHint().height());
}

LoginQuestionsDialog::~LoginQuestionsDialog()
{
    for (QLineEdit* edit : std::as_const(m_edits))
        edit->clear();
}

std::optional<QList<QByteArray>> LoginQuestionsDialog::ask(
        QWidget* parent, const QString& node, const SshLoginQuestions& questions)
{
    LoginQuestionsDialog dialog(node, questions, parent);
    if (dialog.exec() != QDialog::Accepted)
        return std::nullopt;
    QList<QByteArray> answers;
    for (QLineEdit* edit : std::as_const(dialog.m_edits)) {
        QString text = edit->text();
        edit->clear();
        answers << text.toUtf8();
        text.fill(QChar(u'\0'));
    }
    return answers;
}

} // namespace ty
