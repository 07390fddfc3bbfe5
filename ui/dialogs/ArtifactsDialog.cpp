#include "ArtifactsDialog.h"
#include "ui/settings/DialogGeometry.h"

#include "core/runs/RunControl.h"

#include <QApplication>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

namespace ty {

ArtifactsDialog::ArtifactsDialog(
        RunControl* engine, RunId run, const QString& runName, const QString& resultsDir, QWidget* parent)
    : QDialog(parent)
    , m_engine(engine)
    , m_run(run)
    , m_resultsDir(resultsDir)
{
    setObjectName(QStringLiteral("artifactsDialog"));
    rememberGeometry(this, QStringLiteral("artifacts"));
    setWindowTitle(tr("Artifacts of run %1 (%2)").arg(run).arg(runName));
    resize(760, 420);

    m_table = new QTableWidget(0, 3, this);
    m_table->setObjectName(QStringLiteral("artifactsTable"));
    m_table->setAccessibleName(tr("Artifacts"));
    m_table->setHorizontalHeaderLabels({tr("File on the node"), tr("Size"), tr("Type")});
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("artifactsStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_refresh = new QPushButton(tr("&Refresh"), this);
    m_toResults = new QPushButton(tr("&Download to results folder"), this);
    m_toResults->setObjectName(QStringLiteral("downloadToResults"));
    m_toResults->setToolTip(QDir::toNativeSeparators(m_resultsDir));
    m_toFolder = new QPushButton(tr("Download &to…"), this);
    m_openFolder = new QPushButton(tr("&Open folder"), this);
    m_openFolder->setEnabled(false);
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_refresh, &QPushButton::clicked, this, &ArtifactsDialog::refresh);
    connect(m_toResults, &QPushButton::clicked, this, [this] { downloadTo(m_resultsDir); });
    connect(m_toFolder, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Download artifacts to"), m_lastDir);
        if (!dir.isEmpty())
            downloadTo(dir);
    });
    connect(m_openFolder, &QPushButton::clicked, this,
            [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(m_lastDir)); });

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_refresh);
    buttons->addStretch(1);
    buttons->addWidget(m_toResults);
    buttons->addWidget(m_toFolder);
    buttons->addWidget(m_openFolder);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_status);
    layout->addLayout(buttons);
    layout->addWidget(close);

    refresh();
}

QString ArtifactsDialog::statusText() const
{
    return m_status->text();
}

void ArtifactsDialog::setBusy(bool busy, const QString& status)
{
    m_busy = busy;
    m_status->setText(status);
    m_refresh->setEnabled(!busy);
    const bool any = !m_list.files.isEmpty();
    m_toResults->setEnabled(!busy && any);
    m_toFolder->setEnabled(!busy && any);
}

void ArtifactsDialog::refresh()
{
    if (m_busy)
        return;
    if (!m_engine) {
        setBusy(false, tr("No engine: artifacts are listed by the run's node."));
        return;
    }
    setBusy(true, tr("Asking the node…"));
    QPointer<ArtifactsDialog> self(this);
    m_engine->listArtifacts(m_run, [self](const Result<AgentFileList>& list) {
        if (self)
            self->showListing(list);
    });
}

void ArtifactsDialog::showListing(const Result<AgentFileList>& list)
{
    if (!list) {
        m_list = AgentFileList{};
        m_table->setRowCount(0);
        setBusy(false, list.error().message);
        Q_EMIT listed(false);
        return;
    }
    m_list = *list;
    m_table->setRowCount(int(m_list.files.size()));
    const QLocale locale;
    for (int r = 0; r < m_list.files.size(); ++r) {
        const AgentFileEntry& f = m_list.files.at(r);
        auto* path = new QTableWidgetItem(f.absolutePath);
        path->setToolTip(f.type == u"symlink" ? tr("link to %1").arg(f.linkTarget) : f.absolutePath);
        auto* size = new QTableWidgetItem(locale.formattedDataSize(f.size));
        size->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        size->setData(Qt::UserRole, f.size);
        m_table->setItem(r, 0, path);
        m_table->setItem(r, 1, size);
        m_table->setItem(r, 2, new QTableWidgetItem(f.type));
    }
    qint64 bytes = 0;
    for (const AgentFileEntry& f : std::as_const(m_list.files))
        bytes += f.size;
    QString status = m_list.files.isEmpty()
            ? tr("No files match the run's artifacts globs (or the spec has none).")
            : tr("%n file(s), %1 on the node.", nullptr, int(m_list.files.size())).arg(locale.formattedDataSize(bytes));
    if (m_list.truncated)
        status += u' ' + tr("The node stopped listing at its entry limit: not every match is shown.");
    setBusy(false, status);
    Q_EMIT listed(true);
}

void ArtifactsDialog::downloadTo(const QString& dir)
{
    if (m_busy || !m_engine || dir.isEmpty())
        return;
    m_downloaded.clear();
    m_refused.clear();
    setBusy(true, tr("Downloading to %1…").arg(QDir::toNativeSeparators(dir)));
    QPointer<ArtifactsDialog> self(this);
    m_engine->downloadArtifacts(m_run, dir, [self, dir](const Result<ArtifactDownload>& d) {
        if (self)
            self->showDownload(dir, d);
    });
}

void ArtifactsDialog::showDownload(const QString& dir, const Result<ArtifactDownload>& d)
{
    if (!d) {
        setBusy(false, d.error().message);
        Q_EMIT downloadFinished(false);
        return;
    }
    m_downloaded = d->downloaded;
    m_refused = d->refused;
    m_lastDir = dir;
    m_openFolder->setEnabled(true);
    QString status
            = tr("Downloaded %n file(s) to %1.", nullptr, int(m_downloaded.size())).arg(QDir::toNativeSeparators(dir));
    if (!m_refused.isEmpty())
        status += u'\n' + tr("Refused (not written): %1").arg(m_refused.join(QStringLiteral("; ")));
    setBusy(false, status);
    Q_EMIT downloadFinished(m_refused.isEmpty());
}

} // namespace ty
