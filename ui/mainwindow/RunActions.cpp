#include "RunActions.h"

#include "ui/dialogs/RunEditDialog.h"
#include "core/spec/Rerun.h"
#include "core/runs/RunControl.h"

#include <QAction>
#include <QMessageBox>
#include <QWidget>

#include <memory>

namespace ty {

RunActions::RunActions(RunControl* engine, Lookup lookup, QWidget* dialogParent)
    : QObject(dialogParent)
    , m_engine(engine)
    , m_lookup(std::move(lookup))
    , m_parent(dialogParent)
{
    auto make = [this](const QString& text, const QString& name, const QString& tip, const QKeySequence& key) {
        auto* a = new QAction(text, this);
        a->setObjectName(name);
        a->setToolTip(tip);
        a->setShortcut(key);
        a->setEnabled(false);
        return a;
    };
    m_rename = make(tr("Re&name…"), QStringLiteral("renameRunAction"), tr("Give the selected run another name (F2)"),
            QKeySequence(Qt::Key_F2));
    m_edit = make(tr("Tags and &notes…"), QStringLiteral("editRunAction"),
            tr("Edit the selected run's tags and notes (Ctrl+E)"), QKeySequence(Qt::CTRL | Qt::Key_E));
    m_rerun = make(tr("Re-r&un…"), QStringLiteral("rerunAction"),
            tr("Submit the selected run again with its params (Ctrl+R); the submit dialog opens to change them"),
            QKeySequence(Qt::CTRL | Qt::Key_R));
    m_archive = make(tr("Arc&hive"), QStringLiteral("archiveRunAction"),
            tr("Hide the selected finished runs from the runs table (View > Show archived runs brings them "
               "back); nothing is deleted"),
            QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    m_unarchive = make(tr("Unarc&hive"), QStringLiteral("unarchiveRunAction"),
            tr("Show the selected archived runs in the runs table again"), QKeySequence());
    m_showArchived = new QAction(tr("Show &archived runs"), this);
    m_showArchived->setObjectName(QStringLiteral("showArchivedAction"));
    m_showArchived->setCheckable(true);
    connect(m_showArchived, &QAction::toggled, this, &RunActions::showArchivedChanged);

    connect(m_rename, &QAction::triggered, this, [this] {
        if (!m_selection.isEmpty())
            openEditor(m_selection.front(), true);
    });
    connect(m_edit, &QAction::triggered, this, [this] {
        if (!m_selection.isEmpty())
            openEditor(m_selection.front(), false);
    });
    connect(m_rerun, &QAction::triggered, this, &RunActions::rerunCurrent);
    connect(m_archive, &QAction::triggered, this, [this] {
        QList<RunId> runs;
        for (RunId id : std::as_const(m_selection))
            if (const RunRow* row = m_lookup(id); row && isTerminal(row->run.state) && !row->run.archived)
                runs << id;
        RunAnnotation a;
        a.archived = true;
        annotate(runs, a,
                runs.size() == 1 ? tr("Archived run #%1").arg(runs.front()) : tr("Archived %1 runs").arg(runs.size()));
    });
    connect(m_unarchive, &QAction::triggered, this, [this] {
        QList<RunId> runs;
        for (RunId id : std::as_const(m_selection))
            if (const RunRow* row = m_lookup(id); row && row->run.archived)
                runs << id;
        RunAnnotation a;
        a.archived = false;
        annotate(runs, a,
                runs.size() == 1 ? tr("Unarchived run #%1").arg(runs.front())
                                 : tr("Unarchived %1 runs").arg(runs.size()));
    });
}

QList<QAction*> RunActions::actions() const
{
    return {m_rename, m_edit, m_rerun, nullptr, m_archive, m_unarchive};
}

void RunActions::setSelection(const QList<RunId>& runs)
{
    m_selection = runs;
    refresh();
}

void RunActions::refresh()
{
    const RunRow* current = m_selection.isEmpty() ? nullptr : m_lookup(m_selection.front());
    const bool editable = current != nullptr && m_engine; // the engine writes the edits
    m_rename->setEnabled(editable);
    m_edit->setEnabled(editable);
    m_rerun->setEnabled(current != nullptr && !current->run.specYaml.isEmpty());
    bool archivable = false, archived = false, running = false;
    for (RunId id : std::as_const(m_selection)) {
        const RunRow* row = m_lookup(id);
        if (!row)
            continue;
        archived |= row->run.archived;
        archivable |= isTerminal(row->run.state) && !row->run.archived;
        running |= !isTerminal(row->run.state);
    }
    m_archive->setEnabled(archivable && m_engine);
    m_archive->setToolTip(!archivable && running
                    ? tr("Only finished runs can be archived: cancel it first, or wait")
                    : tr("Hide the selected finished runs from the runs table (View > Show "
                         "archived runs brings them back); nothing is deleted"));
    m_unarchive->setEnabled(archived && m_engine);
}

void RunActions::openEditor(RunId run, bool focusName)
{
    const RunRow* row = m_lookup(run);
    if (!row)
        return;
    auto* dialog = new RunEditDialog(
            row->run, focusName ? RunEditDialog::Focus::Name : RunEditDialog::Focus::Tags, m_parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const RunAnnotation a = dialog->annotation();
        if (!a.name && !a.tags && !a.notes)
            return;
        annotate({dialog->runId()}, a,
                a.name ? tr("Renamed run #%1 to '%2'").arg(dialog->runId()).arg(*a.name)
                       : tr("Saved the tags and notes of run #%1").arg(dialog->runId()));
    });
    dialog->open();
}

void RunActions::annotate(const QList<RunId>& runs, const RunAnnotation& a, const QString& what)
{
    if (runs.isEmpty() || !m_engine)
        return;
    // One request per run; done() once every one is answered.
    struct Pending {
        qsizetype left = 0;
        QStringList errors;
    };
    auto pending = std::make_shared<Pending>();
    pending->left = runs.size();
    QPointer<RunActions> self(this);
    for (RunId id : runs)
        m_engine->annotate(id, a, [self, pending, what](const Result<void>& r) {
            if (!r)
                pending->errors << r.error().message;
            if (--pending->left > 0 || !self)
                return;
            if (!pending->errors.isEmpty())
                self->showError(tr("Cannot change the run"), pending->errors.join(u'\n'));
            Q_EMIT self->done(what, pending->errors);
        });
}

void RunActions::rerunCurrent()
{
    const RunRow* row = m_selection.isEmpty() ? nullptr : m_lookup(m_selection.front());
    if (!row)
        return;
    auto spec = specForRerun(row->run, row->params);
    if (!spec) {
        showError(tr("Cannot re-run"), spec.error().message);
        return;
    }
    Q_EMIT rerunRequested(*spec, row->run.id);
}

void RunActions::showError(const QString& title, const QString& message)
{
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, m_parent);
    box->setObjectName(QStringLiteral("runActionErrorBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace ty
