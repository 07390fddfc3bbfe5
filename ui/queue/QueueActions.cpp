#include "QueueActions.h"

#include "core/runs/RunControl.h"

#include <QAction>
#include <QInputDialog>
#include <QMessageBox>
#include <QWidget>

#include <limits>
#include <memory>
#include <utility>

namespace ty {

QueueActions::QueueActions(RunControl* engine, QWidget* dialogParent)
    : QObject(dialogParent)
    , m_engine(engine)
    , m_parent(dialogParent)
{
    qRegisterMetaType<QList<ty::RunId>>();
    auto make = [this](const QString& text, const QString& name, const QString& tip) {
        auto* a = new QAction(text, this);
        a->setObjectName(name);
        a->setToolTip(tip);
        a->setEnabled(false);
        return a;
    };
    m_hold = make(tr("&Hold"), QStringLiteral("holdAction"),
            tr("Keep the selected queued runs from starting (they block no one)"));
    m_release = make(tr("&Release"), QStringLiteral("releaseAction"), tr("Let the selected held runs start again"));
    m_top = make(tr("Move to &top"), QStringLiteral("moveToTopAction"),
            tr("Give the selected waiting runs a priority above every other waiting run"));
    m_priority = make(tr("Set &priority…"), QStringLiteral("priorityAction"),
            tr("Change the priority of the selected waiting runs"));
    // Waiting runs only: a running run is cancelled with Run > Cancel run…,
    // which asks first. So the queue's Cancel is off with nothing waiting.
    m_cancel = make(tr("Ca&ncel"), QStringLiteral("queueCancelAction"),
            tr("Take the selected waiting runs out of the queue (recorded as cancelled)"));
    // Toolbar buttons show the short texts.
    m_top->setIconText(tr("Top"));
    m_priority->setIconText(tr("Priority…"));
    connect(m_hold, &QAction::triggered, this, [this] { hold(m_targets); });
    connect(m_release, &QAction::triggered, this, [this] { release(m_targets); });
    connect(m_top, &QAction::triggered, this, [this] { moveToTop(m_targets); });
    connect(m_priority, &QAction::triggered, this, &QueueActions::askPriority);
    connect(m_cancel, &QAction::triggered, this, [this] {
        QList<RunId> waiting;
        for (RunId id : std::as_const(m_targets))
            if (const RunRecord* r = m_lookup ? m_lookup(id) : nullptr;
                    r && (r->state == RunState::Queued || r->state == RunState::Held))
                waiting << id;
        cancel(waiting);
    });
}

QList<QAction*> QueueActions::actions() const
{
    return {m_hold, m_release, m_top, m_priority, nullptr, m_cancel};
}

void QueueActions::setLookup(Lookup lookup)
{
    m_lookup = std::move(lookup);
    refresh();
}

void QueueActions::setTargets(const QList<RunId>& runs)
{
    m_targets = runs;
    refresh();
}

void QueueActions::refresh()
{
    bool queued = false, held = false;
    for (RunId id : std::as_const(m_targets)) {
        const RunRecord* r = m_lookup ? m_lookup(id) : nullptr;
        if (!r)
            continue;
        queued |= r->state == RunState::Queued;
        held |= r->state == RunState::Held;
    }
    const bool engine = m_engine != nullptr;
    m_hold->setEnabled(engine && queued);
    m_release->setEnabled(engine && held);
    m_top->setEnabled(engine && (queued || held));
    m_priority->setEnabled(engine && (queued || held));
    m_cancel->setEnabled(engine && (queued || held));
}

namespace {

// An Op that asks the engine for one queue action on a run.
auto queueOp(RunControl::QueueAction action, int priority = 0)
{
    return [action, priority](RunControl& e, RunId id, std::function<void(const Result<void>&)> done) {
        e.queue(id, action, priority, std::move(done));
    };
}

} // namespace

void QueueActions::hold(const QList<RunId>& runs)
{
    apply(QStringLiteral("hold"), runs, queueOp(RunControl::QueueAction::Hold));
}

void QueueActions::release(const QList<RunId>& runs)
{
    apply(QStringLiteral("release"), runs, queueOp(RunControl::QueueAction::Release));
}

void QueueActions::moveToTop(const QList<RunId>& runs)
{
    // Several runs: the last one ends on top, so apply them bottom-up to keep
    // their relative order (the engine takes the requests in order).
    QList<RunId> reversed(runs.crbegin(), runs.crend());
    apply(QStringLiteral("move to top"), reversed, queueOp(RunControl::QueueAction::Top));
}

void QueueActions::setPriority(const QList<RunId>& runs, int priority)
{
    apply(QStringLiteral("set priority"), runs, queueOp(RunControl::QueueAction::Priority, priority));
}

void QueueActions::cancel(const QList<RunId>& runs)
{
    // A cancel that cannot reach its run is told as cancelFailed.
    apply(QStringLiteral("cancel"), runs, [](RunControl& e, RunId id, std::function<void(const Result<void>&)> done) {
        e.cancel({id});
        QMetaObject::invokeMethod(
                &e, [done] { done({}); }, Qt::QueuedConnection); // answered later, like the rest
    });
}

void QueueActions::askPriority()
{
    if (m_targets.isEmpty())
        return;
    const RunRecord* first = m_lookup ? m_lookup(m_targets.front()) : nullptr;
    bool ok = false;
    const int priority = QInputDialog::getInt(m_parent, tr("Set priority"),
            m_targets.size() == 1 ? tr("Priority of run #%1 (higher starts first under the priority policies):")
                                            .arg(m_targets.front())
                                  : tr("Priority of the %1 selected runs (higher starts first):").arg(m_targets.size()),
            first ? first->priority : 0, std::numeric_limits<int>::min() / 2, std::numeric_limits<int>::max() / 2, 1,
            &ok);
    if (ok)
        setPriority(m_targets, priority);
}

void QueueActions::apply(const QString& op, const QList<RunId>& runs, Op fn)
{
    if (runs.isEmpty())
        return;
    if (!m_engine) {
        const QStringList errors{tr("cannot %1: no run engine").arg(op)};
        showErrors(op, errors);
        Q_EMIT finished(op, runs, errors);
        return;
    }
    // One request per run; finished() once every one is answered.
    struct Pending {
        qsizetype left = 0;
        QStringList errors;
    };
    auto pending = std::make_shared<Pending>();
    pending->left = runs.size();
    QPointer<QueueActions> self(this);
    for (RunId id : runs)
        fn(*m_engine, id, [self, pending, op, runs](const Result<void>& done) {
            if (!done)
                pending->errors << done.error().message;
            if (--pending->left > 0 || !self)
                return;
            if (!pending->errors.isEmpty())
                self->showErrors(op, pending->errors);
            Q_EMIT self->finished(op, runs, pending->errors);
        });
}

void QueueActions::showErrors(const QString& op, const QStringList& errors)
{
    // Whole titles, not "Cannot %1" with an English verb inside a translation.
    static const std::pair<const char16_t*, const char*> kTitles[] = {
            {u"hold", QT_TR_NOOP("Cannot hold")},
            {u"release", QT_TR_NOOP("Cannot release")},
            {u"move to top", QT_TR_NOOP("Cannot move to top")},
            {u"set priority", QT_TR_NOOP("Cannot set priority")},
            {u"cancel", QT_TR_NOOP("Cannot cancel")},
    };
    QString title = tr("Queue action failed");
    for (const auto& [name, text] : kTitles)
        if (op == QStringView(name))
            title = tr(text);
    auto* box = new QMessageBox(QMessageBox::Warning, title, errors.join(QLatin1Char('\n')), QMessageBox::Ok, m_parent);
    box->setObjectName(QStringLiteral("queueErrorBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace ty
