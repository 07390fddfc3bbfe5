#include "RunEditDialog.h"
#include "ui/settings/DialogGeometry.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

namespace ty {

RunEditDialog::RunEditDialog(const RunRecord& run, Focus focus, QWidget* parent)
    : QDialog(parent)
    , m_run(run)
{
    setObjectName(QStringLiteral("runEditDialog"));
    rememberGeometry(this, QStringLiteral("runEdit"));
    setWindowTitle(tr("Run #%1").arg(run.id));
    resize(520, 380);

    m_name = new QLineEdit(run.name, this);
    m_name->setObjectName(QStringLiteral("runNameEdit"));
    m_tags = new QLineEdit(this);
    m_tags->setObjectName(QStringLiteral("runTagsEdit"));
    // Tags the engine keeps for itself (a sweep's id) are shown too: a user
    // who removes one takes the run out of its sweep's grouping, knowingly.
    m_tags->setText(run.tags.join(QStringLiteral(", ")));
    m_tags->setPlaceholderText(tr("baseline, digits"));
    m_notes = new QPlainTextEdit(run.notes, this);
    m_notes->setObjectName(QStringLiteral("runNotesEdit"));
    m_notes->setPlaceholderText(tr("What this run tried, what you saw, what to do next…"));
    m_notes->setTabChangesFocus(true);

    auto* form = new QFormLayout;
    auto* nameLabel = new QLabel(tr("&Name:"), this);
    nameLabel->setBuddy(m_name);
    auto* tagsLabel = new QLabel(tr("&Tags:"), this);
    tagsLabel->setBuddy(m_tags);
    auto* notesLabel = new QLabel(tr("N&otes:"), this);
    notesLabel->setBuddy(m_notes);
    form->addRow(nameLabel, m_name);
    form->addRow(tagsLabel, m_tags);
    form->addRow(notesLabel, m_notes);

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("runEditError"));
    m_error->setStyleSheet(QStringLiteral("color: #c62828;"));
    QSizePolicy keep = m_error->sizePolicy();
    keep.setRetainSizeWhenHidden(true);
    m_error->setSizePolicy(keep);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    m_buttons->setObjectName(QStringLiteral("runEditButtons"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form, 1);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);

    connect(m_name, &QLineEdit::textChanged, this, &RunEditDialog::revalidate);
    revalidate();
    switch (focus) {
    case Focus::Name:
        m_name->setFocus();
        m_name->selectAll();
        break;
    case Focus::Tags: m_tags->setFocus(); break;
    case Focus::Notes: m_notes->setFocus(); break;
    }
}

QStringList RunEditDialog::parseTags(const QString& text)
{
    static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
    QStringList out;
    for (const QString& t : text.split(separators, Qt::SkipEmptyParts))
        if (!out.contains(t))
            out << t;
    return out;
}

RunAnnotation RunEditDialog::annotation() const
{
    RunAnnotation a;
    const QString name = m_name->text().trimmed();
    if (name != m_run.name)
        a.name = name;
    const QStringList tags = parseTags(m_tags->text());
    if (tags != m_run.tags)
        a.tags = tags;
    const QString notes = m_notes->toPlainText();
    if (notes != m_run.notes)
        a.notes = notes;
    return a;
}

void RunEditDialog::revalidate()
{
    const bool nameOk = !m_name->text().trimmed().isEmpty();
    m_error->setText(nameOk ? QString() : tr("A run needs a name."));
    m_error->setVisible(!nameOk);
    m_buttons->button(QDialogButtonBox::Save)->setEnabled(nameOk);
}

} // namespace ty
