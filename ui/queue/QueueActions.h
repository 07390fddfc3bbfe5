#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QObject>
#include <QPointer>
#include <QStringList>

#include <functional>

class QAction;
class QWidget;

namespace ty {

class RunControl;

// The queue operations as actions for menus and toolbars: Hold, Release,
// Move to top, Set priority… (asks with QInputDialog) and Cancel. They apply
// to the target runs (setTargets: the selection of the runs table or the
// queue view, whichever changed last) and are enabled only when one target
// allows them (hold: a queued run; release: a held run; top/priority and
// cancel: a waiting run; a running run is cancelled from the Run menu, which
// asks first).
//
// Every operation goes to the engine through RunControl (trainyardd's, in the
// GUI), one request per run in order; once all are answered, finished()
// comes, and errors are shown in a message box (objectName "queueErrorBox",
// non-modal).
//
// GUI thread only. `engine` may be null (the actions stay disabled).
class QueueActions final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueActions)

public:
    // Current record of a run by id (nullptr when unknown), for enabling.
    using Lookup = std::function<const RunRecord*(RunId)>;

    QueueActions(RunControl* engine, QWidget* dialogParent);

    QAction* holdAction() const { return m_hold; }
    QAction* releaseAction() const { return m_release; }
    QAction* moveToTopAction() const { return m_top; }
    QAction* priorityAction() const { return m_priority; }
    QAction* cancelAction() const { return m_cancel; }
    // In menu order (a null entry is a separator).
    QList<QAction*> actions() const;

    void setLookup(Lookup lookup);
    void setTargets(const QList<RunId>& runs);
    QList<RunId> targets() const { return m_targets; }
    // Re-evaluates which actions are enabled (call when the runs changed).
    void refresh();

    // The operations themselves, on the given runs; finished() follows.
    // cancel() takes any unfinished run (the Cancel action only the waiting ones).
    void hold(const QList<RunId>& runs);
    void release(const QList<RunId>& runs);
    void moveToTop(const QList<RunId>& runs);
    void setPriority(const QList<RunId>& runs, int priority);
    void cancel(const QList<RunId>& runs);
    // Asks for the new priority (QInputDialog, starting at the first target's).
    void askPriority();

Q_SIGNALS:
    // An operation on `runs` was carried out by the engine; `errors`
    // holds one message per run that failed (empty: all done).
    void finished(const QString& op, const QList<ty::RunId>& runs, const QStringList& errors);

private:
    using Op = std::function<void(RunControl&, RunId, std::function<void(const Result<void>&)>)>;
    void apply(const QString& op, const QList<RunId>& runs, Op fn);
    void showErrors(const QString& op, const QStringList& errors);

    QPointer<RunControl> m_engine;
    QPointer<QWidget> m_parent;
    Lookup m_lookup;
    QList<RunId> m_targets;
    QAction* m_hold = nullptr;
    QAction* m_release = nullptr;
    QAction* m_top = nullptr;
    QAction* m_priority = nullptr;
    QAction* m_cancel = nullptr;
};

} // namespace ty
