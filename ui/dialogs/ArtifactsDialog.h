#pragma once

#include "core/common/Run.h"
#include "core/nodes/AgentFiles.h"
#include "core/nodes/WorkdirSync.h"

#include <QDialog>
#include <QPointer>

class QLabel;
class QPushButton;
class QTableWidget;

namespace ty {

class RunControl;

// A run's artifacts (the job spec's `artifacts:` globs) as its node lists
// them now, and downloading them: into the run's local results folder
// (<db>.runs/<id>/artifacts, the default) or a folder the user picks. The
// same engine calls as `trainyardctl artifacts` (RunControl::listArtifacts,
// downloadArtifacts: SFTP for SSH nodes; names that would land outside the
// folder and symlinks are refused and listed, never written).
//
// Thread: GUI. The engine's answers come later (RunControl); closing the
// dialog meanwhile is safe (answers to a closed dialog are dropped).
class ArtifactsDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ArtifactsDialog)

public:
    // `resultsDir`: the default download folder.
    ArtifactsDialog(RunControl* engine, RunId run, const QString& runName, const QString& resultsDir,
            QWidget* parent = nullptr);

    // Asks the node again (the dialog does once when created).
    void refresh();
    // Downloads every artifact into `dir` (created if missing).
    void downloadTo(const QString& dir);

    // For tests and the status line.
    const AgentFileList& listing() const { return m_list; }
    QString statusText() const;
    QStringList downloaded() const { return m_downloaded; }
    QStringList refused() const { return m_refused; }
    bool busy() const { return m_busy; }

Q_SIGNALS:
    void listed(bool ok);
    void downloadFinished(bool ok);

private:
    void setBusy(bool busy, const QString& status);
    void showListing(const Result<AgentFileList>& list);
    void showDownload(const QString& dir, const Result<ArtifactDownload>& d);

    QPointer<RunControl> m_engine;
    RunId m_run;
    QString m_resultsDir;
    AgentFileList m_list;
    QStringList m_downloaded, m_refused;
    QString m_lastDir;
    bool m_busy = false;
    QTableWidget* m_table = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_refresh = nullptr;
    QPushButton* m_toResults = nullptr;
    QPushButton* m_toFolder = nullptr;
    QPushButton* m_openFolder = nullptr;
};

} // namespace ty
