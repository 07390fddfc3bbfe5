#pragma once

#include "core/common/Run.h"
#include "ui/runs/RunRow.h"

#include <QObject>
#include <QPointer>

#include <functional>

class QAction;
class QWidget;

namespace ty {

class RunControl;
struct RerunSpec;

// What every experiment tracker lets a user do to a run besides running it:
// Rename… (F2), Tags and notes… (Ctrl+E), Re-run… (Ctrl+R: the submit
// dialog, filled with the run's spec and params, specForRerun), Archive /
// Unarchive (Ctrl+Shift+A: hidden from the runs table unless View > Show
// archived runs is on). They apply to the current selection (setSelection).
//
// Edits go to the engine (RunControl::annotate: trainyardd, the database's
// one writer), so the GUI thread never waits for the database; the outcome
// comes back as done() once committed (the table reloads the changed rows).
// Without an engine (`engine` null: a database opened read-only) the edits
// are disabled.
//
// GUI thread only.
class RunActions final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunActions)

public:
    // Current row of a run (nullptr when unknown).
    using Lookup = std::function<const RunRow*(RunId)>;

    RunActions(RunControl* engine, Lookup lookup, QWidget* dialogParent);

    QAction* renameAction() const { return m_rename; }
    QAction* editAction() const { return m_edit; }
    QAction* rerunAction() const { return m_rerun; }
    QAction* archiveAction() const { return m_archive; }
    QAction* unarchiveAction() const { return m_unarchive; }
    QAction* showArchivedAction() const { return m_showArchived; }
    // In menu order (a null entry is a separator).
    QList<QAction*> actions() const;

    // `runs`: the selected runs, in table order; the first is the current one.
    void setSelection(const QList<RunId>& runs);
    // Re-evaluates which actions are enabled (call when the runs changed).
    void refresh();

    // The operations (the actions call these). annotate() is async (done()).
    void openEditor(RunId run, bool focusName);
    void annotate(const QList<RunId>& runs, const RunAnnotation& a, const QString& what);

Q_SIGNALS:
    // Re-run chosen: open the submit dialog with this spec.
    void rerunRequested(const ty::RerunSpec& spec, ty::RunId from);
    // An edit was committed (errors empty) or refused; `what` says what ("Archived 3 runs").
    void done(const QString& what, const QStringList& errors);
    void showArchivedChanged(bool show);

private:
    void rerunCurrent();
    void showError(const QString& title, const QString& message);

    QPointer<RunControl> m_engine;
    Lookup m_lookup;
    QPointer<QWidget> m_parent;
    QList<RunId> m_selection;
    QAction* m_rename = nullptr;
    QAction* m_edit = nullptr;
    QAction* m_rerun = nullptr;
    QAction* m_archive = nullptr;
    QAction* m_unarchive = nullptr;
    QAction* m_showArchived = nullptr;
};

} // namespace ty
