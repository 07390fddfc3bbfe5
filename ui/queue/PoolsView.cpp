#include "PoolsView.h"

#include "core/runs/QueuePolicy.h"
#include "core/runs/RunControl.h"
#include "core/runs/RunEngine.h"
#include "core/runs/SchedulingPass.h"
#include "core/store/ResultStore.h"

#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace ty {

namespace {

// The run's account when its spec names no user, as the engine's default.
QString defaultUser()
{
    const QString u = qEnvironmentVariable("USER");
    return u.isEmpty() ? qEnvironmentVariable("LOGNAME") : u;
}

bool holdsGpus(RunState s)
{
    return s == RunState::Starting || s == RunState::Running || s == RunState::Unknown;
}

} // namespace

PoolsView::PoolsView(ResultStore* store, RunControl* engine, QString databasePath, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_databasePath(std::move(databasePath))
{
    setObjectName(QStringLiteral("poolsView"));
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName(QStringLiteral("poolsTree"));
    m_tree->setColumnCount(ColumnCount);
    m_tree->setHeaderLabels(
            {tr("Pool"), tr("GPUs"), tr("In use"), tr("Lent"), tr("Borrowed"), tr("Idle"), tr("Quota")});
    m_tree->headerItem()->setToolTip(UsedColumn, tr("GPUs of the pool's nodes held by its own runs"));
    m_tree->headerItem()->setToolTip(LentColumn, tr("GPUs of the pool's nodes held by runs of other pools"));
    m_tree->headerItem()->setToolTip(BorrowedColumn, tr("GPUs the pool's runs hold on other pools' nodes"));
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->header()->setStretchLastSection(true);
    m_tree->setAccessibleName(tr("Resource pools"));

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("poolsSummary"));
    m_summary->setContentsMargins(4, 0, 4, 2);
    m_summary->setWordWrap(true);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_summary);

    m_rebuildTimer = new QTimer(this);
    m_rebuildTimer->setSingleShot(true);
    m_rebuildTimer->setInterval(0);
    connect(m_rebuildTimer, &QTimer::timeout, this, &PoolsView::rebuild);
    m_refreshTimer = new QTimer(this);
    m_refreshTimer->setInterval(kRefreshMs);
    connect(m_refreshTimer, &QTimer::timeout, this, [this] {
        if (isVisible()) // hidden (a tab behind Queue): read again when shown
            refresh();
    });
    m_refreshTimer->start();

    if (engine)
        connect(engine, &RunControl::nodeGpusUpdated, this, &PoolsView::setNodeGpus);
    refresh();
}

PoolsView::~PoolsView() = default;

void PoolsView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    refresh();
}

QTreeWidgetItem* PoolsView::poolItem(const QString& name) const
{
    return m_items.value(name);
}

void PoolsView::track(const RunRecord& run)
{
    if (isTerminal(run.state)) {
        m_runs.remove(run.id);
        m_specs.remove(run.id);
    } else {
        m_runs.insert(run.id, run);
    }
}

void PoolsView::setRuns(const RunRows& rows)
{
    m_runs.clear();
    for (const RunRow& r : rows)
        track(r.run);
    m_specs.removeIf([this](const auto& it) { return !m_runs.contains(it.key()); });
    scheduleRebuild();
}

void PoolsView::updateRuns(const RunRows& changed, const QList<RunId>& removed)
{
    bool moved = !removed.isEmpty();
    for (const RunId id : removed) {
        m_runs.remove(id);
        m_specs.remove(id);
    }
    for (const RunRow& r : changed) {
        const auto it = m_runs.constFind(r.run.id);
        const bool was = it != m_runs.cend();
        if (!was && isTerminal(r.run.state))
            continue; // an ended run's metrics or notes: nothing here
        moved = moved || !was || it->state != r.run.state || it->node != r.run.node || it->gpus != r.run.gpus
                || it->pendingReason != r.run.pendingReason || it->specYaml != r.run.specYaml;
        track(r.run);
    }
    if (moved)
        scheduleRebuild();
}

void PoolsView::setNodeGpus(const QString& node, const QList<AgentGpu>& gpus)
{
    const int n = int(gpus.size());
    if (m_gpuCounts.value(node, -1) == n)
        return;
    m_gpuCounts.insert(node, n);
    scheduleRebuild();
}

void PoolsView::refresh()
{
    const auto policies = loadQueuePolicies(m_databasePath);
    if (policies) {
        m_pools = policies->defaults.pools;
        m_policyError.clear();
    } else {
        m_policyError = policies.error().message; // the last good pools stay shown
    }
    m_nodes.clear();
    if (m_store) {
        m_nodes.append({QStringLiteral("local"), m_store->localNodeLabels()});
        for (const NodeRecord& n : m_store->nodes())
            if (n.kind == NodeKind::Ssh) // a Slurm login node's runs are Slurm's to place
                m_nodes.append({n.name, n.labels});
    }
    rebuild();
}

void PoolsView::scheduleRebuild()
{
    if (!m_rebuildTimer->isActive())
        m_rebuildTimer->start();
}

const sched::RunningAllocation& PoolsView::accountOf(const RunRecord& run)
{
    const size_t h = qHash(run.specYaml) ^ qHash(run.workdir);
    SpecInfo& info = m_specs[run.id];
    if (info.hash != h || info.allocation.run != run.id) {
        RunRecord bare = run;
        bare.node.clear();
        bare.gpus.clear();
        info.allocation = pass::allocationOf(bare, runSpecOf(run), defaultUser(), 0);
        info.allocation.nodes.clear();
        info.hash = h;
    }
    return info.allocation;
}

void PoolsView::rebuild()
{
    m_rebuildTimer->stop();
    sched::ClusterState state;
    for (const auto& [name, labels] : std::as_const(m_nodes)) {
        sched::NodeState n;
        n.name = name;
        n.labels = labels;
        for (int i = 0; i < m_gpuCounts.value(name, 0); ++i)
            n.gpus.append(sched::GpuState{i, {}, {}, 0, 0, false, {}});
        state.nodes.append(n);
    }
    QList<RunId> ids = m_runs.keys();
    std::sort(ids.begin(), ids.end());
    QHash<QString, QList<const RunRecord*>> waiting; // pool -> its waiting runs, oldest first
    for (const RunId id : std::as_const(ids)) {
        const RunRecord& r = m_runs[id];
        const sched::RunningAllocation& account = accountOf(r);
        if (r.state == RunState::Queued || r.state == RunState::Held) {
            if (!account.pool.isEmpty())
                waiting[account.pool].append(&r);
            continue;
        }
        if (!holdsGpus(r.state) || r.node.isEmpty() || r.gpus.isEmpty())
            continue;
        sched::RunningAllocation a = account;
        a.nodes.append(sched::NodeShare{r.node, r.gpus, 0, 0, 0});
        state.running.append(a);
    }
    m_usage = sched::poolUsage(m_pools, state);

    m_tree->clear();
    m_items.clear();
    const auto number = [](QTreeWidgetItem* item, int column, int value) {
        item->setText(column, QString::number(value));
        item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
    };
    // "1 GPU", "8 GPUs" (English has no plural forms without a translation loaded).
    const auto gpusText = [](int n) { return n == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(n); };
    const auto quotaText = [&gpusText](const sched::AccountUse& a) {
        return a.limit < 0 ? tr("%1, no limit").arg(gpusText(a.used))
                           : tr("%1 of %2").arg(a.used).arg(gpusText(a.limit));
    };
    for (qsizetype i = 0; i < m_usage.size(); ++i) {
        const sched::PoolUse& u = m_usage[i];
        const sched::ResourcePool& p = m_pools[i];
        auto* item = new QTreeWidgetItem(m_tree);
        item->setText(NameColumn, u.name);
        QFont bold = item->font(NameColumn);
        bold.setBold(true);
        item->setFont(NameColumn, bold);
        number(item, GpusColumn, u.gpus);
        number(item, UsedColumn, u.used);
        number(item, LentColumn, u.lent);
        number(item, BorrowedColumn, u.borrowed);
        number(item, IdleColumn, u.idle());
        const QString selector = p.labels.isEmpty() ? tr("every node not in an earlier pool")
                                                    : tr("labels %1").arg(p.labels.join(QStringLiteral(", ")));
        const QString nodes = u.nodes.isEmpty() ? tr("no nodes") : u.nodes.join(QStringLiteral(", "));
        QStringList terms{tr("nodes: %1 (%2)").arg(nodes, selector)};
        terms << (p.lend ? tr("lends idle GPUs") : tr("does not lend"));
        if (p.borrowLimit > 0)
            terms << tr("borrows up to %1").arg(gpusText(p.borrowLimit));
        // Its nodes and lending as a row of its own, over the whole width:
        // a dock beside the runs table is narrow.
        auto* about = new QTreeWidgetItem(item);
        about->setText(NameColumn, terms.join(QStringLiteral("; ")));
        about->setFirstColumnSpanned(true);
        about->setForeground(NameColumn, palette().brush(QPalette::PlaceholderText));
        for (int c = 0; c < ColumnCount; ++c)
            item->setToolTip(c, about->text(NameColumn));
        about->setToolTip(NameColumn, about->text(NameColumn));
        m_items.insert(u.name, item);

        const auto accountRows = [&](const QList<sched::AccountUse>& accounts, bool project, const sched::GpuQuota& q) {
            for (const sched::AccountUse& a : accounts) {
                if (a.account.isEmpty() && a.used == 0)
                    continue;
                auto* row = new QTreeWidgetItem(item);
                const QString who = a.account.isEmpty() ? tr("(none)") : a.account;
                row->setText(NameColumn, project ? tr("project %1").arg(who) : tr("user %1").arg(who));
                number(row, UsedColumn, a.used);
                row->setText(DetailColumn, quotaText(a));
                if (a.limit >= 0 && a.used >= a.limit)
                    row->setForeground(DetailColumn, palette().brush(QPalette::Link));
                if (a.limit >= 0 && !q.limits.contains(a.account))
                    row->setToolTip(DetailColumn, tr("the pool's default limit"));
            }
        };
        accountRows(u.projects, true, p.projects);
        accountRows(u.users, false, p.users);
        const QList<const RunRecord*> waits = waiting.value(u.name);
        for (qsizetype w = 0; w < waits.size() && w < kMaxWaitingRows; ++w) {
            const RunRecord& r = *waits[w];
            auto* row = new QTreeWidgetItem(item);
            // "run 3 vision-eval: waiting: project vision uses 2 of its 2 GPUs in pool a100", whole width.
            row->setText(NameColumn,
                    tr("run %1 %2: %3")
                            .arg(r.id)
                            .arg(r.name, r.pendingReason.isEmpty() ? tr("waiting") : r.pendingReason));
            row->setFirstColumnSpanned(true);
            row->setToolTip(NameColumn, row->text(NameColumn));
            row->setData(NameColumn, Qt::UserRole, QVariant::fromValue<qint64>(r.id));
        }
        if (waits.size() > kMaxWaitingRows) {
            auto* more = new QTreeWidgetItem(item);
            more->setText(NameColumn, tr("and %1 more waiting runs").arg(waits.size() - kMaxWaitingRows));
            more->setFirstColumnSpanned(true);
        }
        item->setExpanded(true);
    }
    // The name column as wide as the pool, project and user names (not the
    // spanned rows' texts), the numbers as theirs.
    int nameWidth = m_tree->header()->fontMetrics().horizontalAdvance(m_tree->headerItem()->text(NameColumn));
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* top = m_tree->topLevelItem(i);
        QFont bold = m_tree->font();
        bold.setBold(true);
        nameWidth = std::max(nameWidth, QFontMetrics(bold).horizontalAdvance(top->text(NameColumn)));
        for (int c = 0; c < top->childCount(); ++c)
            if (!top->child(c)->isFirstColumnSpanned())
                nameWidth = std::max(nameWidth,
                        m_tree->fontMetrics().horizontalAdvance(top->child(c)->text(NameColumn))
                                + m_tree->indentation());
    }
    m_tree->header()->resizeSection(NameColumn, nameWidth + m_tree->indentation() + 16);
    for (int c = GpusColumn; c < DetailColumn; ++c)
        m_tree->resizeColumnToContents(c);

    // Nodes in no pool and a policy file that did not read.
    QStringList loose;
    const QHash<QString, int> inPool = sched::nodeToPool(m_pools, state.nodes);
    for (const sched::NodeState& n : std::as_const(state.nodes))
        if (!inPool.contains(n.name))
            loose << n.name;
    QStringList lines;
    if (m_pools.isEmpty())
        lines << tr("No resource pools: define them under \"pools\" in %1 (see trainyardctl policy).")
                         .arg(queuePolicyPath(m_databasePath));
    else if (!loose.isEmpty())
        lines << tr("In no pool (free for all, no quota): %1").arg(loose.join(QStringLiteral(", ")));
    if (!m_policyError.isEmpty())
        lines << tr("Cannot read the policy file: %1").arg(m_policyError);
    m_summary->setText(lines.join(u'\n'));
    m_summary->setVisible(!lines.isEmpty());
}

} // namespace ty
