#include "AddNodeDialog.h"
#include "core/retry/RetryPolicy.h"
#include "core/spec/JobSpec.h"
#include "ui/settings/DialogGeometry.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

namespace ty {

AddNodeDialog::AddNodeDialog(QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("addNodeDialog"));
    rememberGeometry(this, QStringLiteral("addNode"));
    setWindowTitle(tr("Add node"));
    m_name = new QLineEdit(this);
    m_name->setObjectName(QStringLiteral("nodeNameEdit"));
    m_name->setPlaceholderText(tr("ws-01"));
    m_host = new QLineEdit(this);
    m_host->setObjectName(QStringLiteral("nodeHostEdit"));
    m_host->setPlaceholderText(tr("host alias from ~/.ssh/config, or a host name"));
    m_user = new QLineEdit(this);
    m_user->setObjectName(QStringLiteral("nodeUserEdit"));
    m_user->setPlaceholderText(tr("from ~/.ssh/config, else your user name"));
    m_port = new QSpinBox(this);
    m_port->setObjectName(QStringLiteral("nodePortSpin"));
    m_port->setRange(0, 65535);
    m_port->setSpecialValueText(tr("from ~/.ssh/config, else 22"));
    m_identity = new QLineEdit(this);
    m_identity->setObjectName(QStringLiteral("nodeIdentityEdit"));
    m_identity->setAccessibleName(tr("Identity file"));
    m_identity->setPlaceholderText(tr("ssh-agent, then ~/.ssh/config's IdentityFile"));
    auto* browse = new QPushButton(tr("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString file
                = QFileDialog::getOpenFileName(this, tr("Private key"), QDir::homePath() + QStringLiteral("/.ssh"));
        if (!file.isEmpty())
            m_identity->setText(file);
    });
    auto* identityRow = new QHBoxLayout;
    identityRow->addWidget(m_identity, 1);
    identityRow->addWidget(browse);
    m_lostAfter = new QLineEdit(this);
    m_lostAfter->setObjectName(QStringLiteral("nodeLostAfterEdit"));
    m_lostAfter->setAccessibleName(tr("Node lost after"));
    m_lostAfter->setPlaceholderText(tr("the service's (10m unless set)"));
    m_lostAfter->setToolTip(tr("How long the node may be silent before its runs count as lost and are retried "
                               "elsewhere (90s, 30m, 2h). Until then they are unknown: a node that answers again "
                               "gives their real endings."));
    m_accept = new QCheckBox(tr("Accept the host key if the host is not in known_hosts yet"), this);
    m_accept->setObjectName(QStringLiteral("acceptHostKeyCheck"));
    m_accept->setToolTip(tr("Unchecked: an unknown host key is shown with its SHA256 fingerprint and you are asked. "
                            "A changed host key is always refused."));

    m_kind = new QComboBox(this);
    m_kind->setObjectName(QStringLiteral("nodeKindCombo"));
    m_kind->addItem(tr("Workstation (Trainyard places runs on its GPUs)"), int(NodeKind::Ssh));
    m_kind->addItem(tr("Slurm cluster login node (Slurm places runs)"), int(NodeKind::Slurm));
    m_kind->setToolTip(tr("A Slurm login node: runs go to Slurm as batch jobs (sbatch); Slurm picks their nodes "
                          "and GPUs, and Trainyard follows them."));

    auto* form = new QFormLayout;
    form->addRow(tr("&Kind:"), m_kind);
    form->addRow(tr("&Name:"), m_name);
    form->addRow(tr("&Host:"), m_host);
    form->addRow(tr("&User:"), m_user);
    form->addRow(tr("&Port:"), m_port);
    form->addRow(tr("&Identity file:"), identityRow);
    form->addRow(tr("Node &lost after:"), m_lostAfter);
    form->addRow(QString(), m_accept);

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("nodeErrorLabel"));
    m_error->setStyleSheet(QStringLiteral("color: #c62828;"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_ok = buttons->button(QDialogButtonBox::Ok);
    m_ok->setText(tr("Add"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(buttons);

    for (QLineEdit* e : {m_name, m_host, m_user, m_identity, m_lostAfter})
        connect(e, &QLineEdit::textChanged, this, &AddNodeDialog::validate);
    // The host alias is the usual name too.
    connect(m_host, &QLineEdit::textEdited, this, [this](const QString& host) {
        if (!m_name->isModified())
            m_name->setText(host.section(QLatin1Char('.'), 0, 0));
    });
    resize(520, sizeHint().height());
    validate();
}

void AddNodeDialog::setExistingNames(const QStringList& names)
{
    m_existing = names;
    validate();
}

void AddNodeDialog::setNode(const NodeRecord& node, bool acceptNewHostKey)
{
    m_name->setText(node.name);
    m_host->setText(node.host);
    m_user->setText(node.user);
    m_port->setValue(node.port);
    m_identity->setText(node.identityFile);
    m_kind->setCurrentIndex(m_kind->findData(int(node.kind)));
    m_lostAfter->setText(node.nodeLostAfterSec ? retryDurationText(*node.nodeLostAfterSec * 1000) : QString());
    m_accept->setChecked(acceptNewHostKey);
    validate();
}

NodeRecord AddNodeDialog::node() const
{
    NodeRecord n;
    n.name = m_name->text().trimmed();
    n.host = m_host->text().trimmed();
    n.user = m_user->text().trimmed();
    n.port = m_port->value();
    n.identityFile = m_identity->text().trimmed();
    n.kind = NodeKind(m_kind->currentData().toInt());
    if (const auto sec = parseDurationSec(m_lostAfter->text().trimmed()); sec && *sec > 0)
        n.nodeLostAfterSec = *sec;
    if (n.identityFile.startsWith(QStringLiteral("~/")))
        n.identityFile = QDir::homePath() + n.identityFile.mid(1);
    return n;
}

bool AddNodeDialog::acceptNewHostKey() const
{
    return m_accept->isChecked();
}

QString AddNodeDialog::validationError() const
{
    static const QRegularExpression nameRx(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    const NodeRecord n = node();
    if (n.name.isEmpty())
        return tr("Give the node a name.");
    if (!nameRx.match(n.name).hasMatch())
        return tr("The name '%1' may only hold letters, digits, '.', '_' and '-' (at most 64).").arg(n.name);
    if (n.name == u"local" || m_existing.contains(n.name))
        return tr("There is a node named '%1' already.").arg(n.name);
    if (n.host.isEmpty())
        return tr("Give the host: an alias from ~/.ssh/config or a host name.");
    if (n.host.contains(QLatin1Char(' ')))
        return tr("The host '%1' contains a space.").arg(n.host);
    if (const QString lostAfter = m_lostAfter->text().trimmed(); !lostAfter.isEmpty() && !n.nodeLostAfterSec)
        return tr("'%1' is not a duration: write it as 90s, 30m or 2h.").arg(lostAfter);
    return {};
}

void AddNodeDialog::validate()
{
    const QString error = validationError();
    m_error->setText(error);
    m_ok->setEnabled(error.isEmpty());
}

} // namespace ty
