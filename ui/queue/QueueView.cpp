#include "QueueView.h"

#include "QueueActions.h"
#include "QueueModel.h"
#include "core/runs/QueuePolicy.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

namespace ty {

QueueView::QueueView(RunControl* engine, QString databasePath, QWidget* parent)
    : QWidget(parent)
    , m_databasePath(std::move(databasePath))
{
    setObjectName(QStringLiteral("queueView"));
    m_model = new QueueModel(this);
    m_actions = new QueueActions(engine, this);
    m_actions->setLookup([this](RunId id) { return m_model->run(id); });

    auto* bar = new QToolBar(this);
    bar->setObjectName(QStringLiteral("queueToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->setIconSize(QSize(12, 12));
    auto* policyLabel = new QLabel(tr("Policy "), bar);
    m_policy = new QComboBox(bar);
    m_policy->setObjectName(QStringLiteral("policyCombo"));
    m_policy->setAccessibleName(tr("Scheduling policy"));
    m_policy->addItems(queuePolicyNames());
    m_policy->setToolTip(tr("Scheduling policy of this database's queue (%1).\n"
                            "fcfs: strict submission order · priority: higher first, with aging · "
                            "sjf: shortest estimated runtime first\nbackfill: EASY backfill over priority · "
                            "fair-share: Slurm's classic fair-share factor, with backfill")
                                 .arg(queuePolicyPath(m_databasePath)));
    // Which queue's policy the selector shows and sets: the default queue, a
    // queue the file names, or one typed in (a spec's `queue:`).
    m_queue = new QComboBox(bar);
    m_queue->setObjectName(QStringLiteral("queueCombo"));
    m_queue->setAccessibleName(tr("Queue"));
    m_queue->setEditable(true);
    m_queue->addItem(tr("(default)"));
    m_queue->setToolTip(tr("The queue whose policy is shown: (default), or a job spec's queue: name"));
    bar->addWidget(m_queue);
    bar->addWidget(policyLabel);
    bar->addWidget(m_policy);
    m_preemption = new QCheckBox(tr("Preemption"), bar);
    m_preemption->setObjectName(QStringLiteral("preemptionCheck"));
    m_preemption->setToolTip(tr("Waiting runs of this queue may stop running runs of lower priority whose job spec "
                                "says preemptible: true; those are requeued from their checkpoint"));
    bar->addWidget(m_preemption);
    bar->addSeparator();
    for (QAction* a : m_actions->actions()) {
        if (a)
            bar->addAction(a);
        else
            bar->addSeparator();
    }

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("queueTable"));
    m_table->setAccessibleName(tr("Waiting runs"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(true); // reasons are long: wrapped, rows sized to them (fitRows)
    m_table->verticalHeader()->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter); // position in the queue
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setHighlightSections(false);
    connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, [this] { fitRows(); });
    m_table->setColumnWidth(QueueModel::Id, 44);
    m_table->setColumnWidth(QueueModel::Name, 120);
    m_table->setColumnWidth(QueueModel::Priority, 56);
    m_table->setColumnWidth(QueueModel::State, 78);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        m_actions->setTargets(selectedRuns());
        QMenu menu(this);
        for (QAction* a : m_actions->actions()) {
            if (a)
                menu.addAction(a);
            else
                menu.addSeparator();
        }
        menu.exec(m_table->viewport()->mapToGlobal(pos));
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        m_actions->setTargets(selectedRuns());
        Q_EMIT selectionChanged();
    });

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("queueSummary"));
    m_summary->setContentsMargins(4, 0, 4, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(bar);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_summary);

    connect(m_policy, &QComboBox::activated, this, [this](int index) {
        const QString name = m_policy->itemText(index);
        if (auto done = choosePolicy(name); !done) {
            auto* box = new QMessageBox(
                    QMessageBox::Warning, tr("Cannot change the policy"), done.error().message, QMessageBox::Ok, this);
            box->setObjectName(QStringLiteral("queueErrorBox"));
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
            reloadPolicy(true);
        }
    });
    connect(m_preemption, &QCheckBox::clicked, this, [this](bool on) {
        if (auto done = choosePreemption(on); !done) {
            auto* box = new QMessageBox(
                    QMessageBox::Warning, tr("Cannot change the policy"), done.error().message, QMessageBox::Ok, this);
            box->setObjectName(QStringLiteral("queueErrorBox"));
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
            reloadPolicy(true);
        }
    });
    connect(m_queue, &QComboBox::currentTextChanged, this, [this] { reloadPolicy(true); });
    reloadPolicy(true);
    updateSummary();
}

QString QueueView::selectedQueue() const
{
    return m_queue->currentIndex() == 0 && m_queue->currentText() == m_queue->itemText(0)
            ? QString()
            : m_queue->currentText().trimmed();
}

void QueueView::setRuns(const RunRows& rows)
{
    reloadPolicy();
    m_model->setRuns(rows);
    syncTargets();
    updateSummary();
    fitRows();
}

void QueueView::updateRuns(const RunRows& changed, const QList<RunId>& removed)
{
    if (!m_model->applyUpdates(changed, removed))
        return;
    syncTargets();
    updateSummary();
    fitRows();
}

void QueueView::updateRun(const RunRecord& run)
{
    m_model->updateRun(run);
    syncTargets();
    updateSummary();
    fitRows();
}

void QueueView::fitRows()
{
    // Row heights follow the wrapped reasons; a very long queue keeps the
    // default height (measuring every row would cost more than it shows).
    if (m_model->rowCount() <= kMaxFittedRows)
        m_table->resizeRowsToContents();
}

// The actions act on what is selected now: a model update can move rows
// under the selection without a selectionChanged (a layout change), so the
// targets are read from the selection again after every update.
void QueueView::syncTargets()
{
    m_actions->setTargets(selectedRuns());
}

QList<RunId> QueueView::selectedRuns() const
{
    return RunTableModel::runIds(m_table->selectionModel()->selectedRows());
}

void QueueView::reloadPolicy(bool force)
{
    const QFileInfo file(queuePolicyPath(m_databasePath));
    const QDateTime modified = file.exists() ? file.lastModified() : QDateTime();
    if (!force && m_policyRead && modified == m_policyModified)
        return;
    m_policyRead = true;
    m_policyModified = modified;
    const auto all = loadQueuePolicies(m_databasePath);
    if (!all) {
        m_policy->setToolTip(all.error().message);
        m_summary->setText(all.error().message);
        return;
    }
    for (auto it = all->queues.cbegin(); it != all->queues.cend(); ++it)
        if (m_queue->findText(it.key()) < 0)
            m_queue->addItem(it.key());
    m_model->setOrdering(all->defaults.ordering);
    showPolicy(queuePolicyName(all->forQueue(selectedQueue())));
    m_preemption->setChecked(all->forQueue(selectedQueue()).preemption);
}

Result<void> QueueView::choosePreemption(bool on)
{
    auto all = loadQueuePolicies(m_databasePath);
    if (!all)
        return std::unexpected(all.error());
    const QString queue = selectedQueue();
    sched::Policy chosen = all->forQueue(queue);
    chosen.preemption = on;
    if (queue.isEmpty())
        all->defaults = chosen;
    else
        all->queues.insert(queue, chosen);
    if (auto saved = saveQueuePolicies(m_databasePath, *all); !saved)
        return saved;
    reloadPolicy(true);
    return {};
}

Result<void> QueueView::choosePolicy(const QString& name)
{
    auto all = loadQueuePolicies(m_databasePath);
    if (!all)
        return std::unexpected(all.error());
    const QString queue = selectedQueue();
    auto chosen = queuePolicyNamed(name, all->forQueue(queue));
    if (!chosen)
        return std::unexpected(chosen.error());
    if (queue.isEmpty())
        all->defaults = *chosen;
    else
        all->queues.insert(queue, *chosen);
    if (auto saved = saveQueuePolicies(m_databasePath, *all); !saved)
        return saved;
    reloadPolicy(true);
    Q_EMIT policyChanged(queuePolicyName(*chosen));
    return {};
}

void QueueView::showPolicy(const QString& name)
{
    int index = m_policy->findText(name);
    if (index < 0) {
        // A combination the presets do not name (e.g. "fcfs+backfill" set by hand).
        m_policy->addItem(name);
        index = m_policy->count() - 1;
    }
    m_policy->setCurrentIndex(index);
}

void QueueView::updateSummary()
{
    int held = 0;
    for (int row = 0; row < m_model->rowCount(); ++row)
        if (const RunRecord* r = m_model->run(m_model->runIdAt(row)); r && r->state == RunState::Held)
            ++held;
    const int waiting = m_model->rowCount();
    m_summary->setText(waiting == 0
                    ? tr("No runs waiting.")
                    : tr("%1 waiting (%2 held) · order: %3").arg(waiting).arg(held).arg(m_policy->currentText()));
}

} // namespace ty
