#include "NodesView.h"

#include "core/common/Paths.h"
#include "ui/dialogs/AddNodeDialog.h"
#include "core/nodes/SshNodeOptions.h"
#include "core/runs/RunControl.h"
#include "core/store/ResultStore.h"

#include <QAction>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QToolBar>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace ty {

namespace {

const QColor kReachable(0x2e, 0x7d, 0x32);
const QColor kUnreachable(0xc6, 0x28, 0x28);
const QColor kPending(0x75, 0x75, 0x75);

QString number(const std::optional<double>& v, const QString& unit, int decimals = 0)
{
    return v ? QStringLiteral("%1 %2").arg(*v, 0, 'f', decimals).arg(unit) : QStringLiteral("–");
}

} // namespace

NodesView::NodesView(ResultStore* store, RunControl* engine, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_engine(engine)
{
    setObjectName(QStringLiteral("nodesView"));
    qRegisterMetaType<QList<ty::AgentGpu>>();

    m_addAction = new QAction(tr("&Add node…"), this);
    m_addAction->setObjectName(QStringLiteral("addNodeAction"));
    m_addAction->setToolTip(tr("Add a GPU workstation reached over SSH (a host alias from ~/.ssh/config)"));
    m_addAction->setEnabled(engine != nullptr);
    connect(m_addAction, &QAction::triggered, this, [this] { openAddNodeDialog(); });

    m_aggregatedAction = new QAction(tr("Aggregated &console"), this);
    m_aggregatedAction->setObjectName(QStringLiteral("nodeAggregatedConsoleAction"));
    m_aggregatedAction->setToolTip(tr("The consoles of the selected node's latest runs, merged by arrival time"));
    m_aggregatedAction->setEnabled(false);
    connect(m_aggregatedAction, &QAction::triggered, this, [this] {
        const QString node = selectedNode();
        if (!node.isEmpty())
            Q_EMIT aggregatedConsoleRequested(node, consoleRuns(node));
    });

    auto* bar = new QToolBar(this);
    bar->setObjectName(QStringLiteral("nodesToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->addAction(m_addAction);
    bar->addAction(m_aggregatedAction);

    m_tree = new QTreeWidget(this);
    m_tree->setObjectName(QStringLiteral("nodesTree"));
    m_tree->setAccessibleName(tr("Nodes and their GPUs"));
    m_tree->setColumnCount(ColumnCount);
    m_tree->setHeaderLabels(
            {tr("Node / GPU"), tr("Status"), tr("Memory"), tr("Util"), tr("Temp"), tr("Power"), tr("Held by")});
    m_tree->setRootIsDecorated(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    // The node / GPU name takes what the GPU columns leave (cut, whole in its
    // tooltip), so that they stay in view in a dock a third of the window
    // wide (issue 21); "Held by" is cut too, its tooltip says all.
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(NameColumn, QHeaderView::Stretch);
    m_tree->setColumnWidth(HeldByColumn, 96);
    m_tree->setColumnWidth(StatusColumn, 76);
    m_tree->setColumnWidth(MemoryColumn, 125);
    m_tree->setColumnWidth(UtilizationColumn, 44);
    m_tree->setColumnWidth(TemperatureColumn, 44);
    m_tree->setColumnWidth(PowerColumn, 50);

    m_tree->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_tree, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        if (QTreeWidgetItem* item = m_tree->itemAt(pos))
            m_tree->setCurrentItem(item);
        QMenu menu(this);
        menu.addAction(m_aggregatedAction);
        menu.addAction(m_addAction);
        menu.exec(m_tree->viewport()->mapToGlobal(pos));
    });
    connect(m_tree, &QTreeWidget::currentItemChanged, this,
            [this] { m_aggregatedAction->setEnabled(!consoleRuns(selectedNode()).isEmpty()); });

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("nodesSummary"));
    m_summary->setContentsMargins(4, 0, 4, 2);
    m_summary->setText(tr("GPU status every 2 s."));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(bar);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_summary);

    if (m_engine) {
        connect(m_engine, &RunControl::nodeStatusChanged, this, &NodesView::setNodeStatus);
        connect(m_engine, &RunControl::nodeGpusUpdated, this, &NodesView::setNodeGpus);
        ensureNode(QStringLiteral("local"));
        render(QStringLiteral("local"));
        // The stored nodes: a few rows, read straight from the database.
        setStoredNodes(m_store->nodes());
        refreshLabels(true);
    }
}

NodesView::~NodesView() = default;

QTreeWidgetItem* NodesView::nodeItem(const QString& node) const
{
    return m_items.value(node);
}

QTreeWidgetItem* NodesView::ensureNode(const QString& node)
{
    if (QTreeWidgetItem* item = m_items.value(node))
        return item;
    auto* item = new QTreeWidgetItem;
    item->setText(NameColumn, node);
    QFont bold = item->font(NameColumn);
    bold.setBold(true);
    item->setFont(NameColumn, bold);
    // "local" first, then by name.
    int at = 0;
    if (node != u"local") {
        for (; at < m_tree->topLevelItemCount(); ++at) {
            const QString other = m_tree->topLevelItem(at)->text(NameColumn);
            if (other != u"local" && other > node)
                break;
        }
    }
    m_tree->insertTopLevelItem(at, item);
    item->setExpanded(true);
    m_items.insert(node, item);
    m_nodes[node];
    return item;
}

QString NodesView::selectedNode() const
{
    QTreeWidgetItem* item = m_tree->currentItem();
    while (item && item->parent())
        item = item->parent();
    return item ? item->text(NameColumn) : QString();
}

void NodesView::setRuns(const RunRows& rows)
{
    // Runs that started somewhere (they have a console), newest first.
    QHash<QString, QList<RunId>> consoles;
    QList<const RunRow*> started;
    for (const RunRow& r : rows)
        if (!r.run.node.isEmpty() && r.run.startedAt.isValid())
            started.append(&r);
    std::sort(started.begin(), started.end(), [](const RunRow* a, const RunRow* b) { return a->run.id > b->run.id; });
    for (const RunRow* r : std::as_const(started)) {
        QList<RunId>& list = consoles[r->run.node];
        if (list.size() < kConsoleRuns)
            list.append(r->run.id);
    }
    m_consoleRuns = std::move(consoles);
    m_aggregatedAction->setEnabled(!consoleRuns(selectedNode()).isEmpty());

    QHash<QString, std::pair<RunId, QString>> ours;
    for (const RunRow& r : rows)
        if (!r.run.agentRunId.isEmpty())
            ours.insert(r.run.agentRunId, {r.run.id, r.run.name});
    if (ours == m_ourRuns)
        return;
    m_ourRuns = std::move(ours);
    for (auto it = m_nodes.cbegin(); it != m_nodes.cend(); ++it)
        render(it.key());
}

void NodesView::setStoredNodes(const QList<NodeRecord>& nodes)
{
    for (const NodeRecord& n : nodes) {
        ensureNode(n.name);
        NodeInfo& info = m_nodes[n.name];
        info.stored = true;
        info.host = (n.user.isEmpty() ? QString() : n.user + QLatin1Char('@')) + n.host
                + (n.port ? QStringLiteral(":%1").arg(n.port) : QString());
        info.slurm = n.kind == NodeKind::Slurm;
        info.slurmFacts = n.facts;
        info.labels = n.labels;
        render(n.name);
    }
}

void NodesView::setNodeStatus(const QString& node, bool ready, const QString& reason, ErrorKind kind)
{
    ensureNode(node);
    NodeInfo& info = m_nodes[node];
    info.statusKnown = true;
    info.ready = ready;
    info.reason = reason;
    render(node);
    if (!ready && (kind == ErrorKind::HostKeyUnknown || kind == ErrorKind::HostKeyChanged))
        checkHostKey(node, reason, kind == ErrorKind::HostKeyChanged);
}

void NodesView::setNodeGpus(const QString& node, const QList<AgentGpu>& gpus)
{
    ensureNode(node);
    NodeInfo& info = m_nodes[node];
    info.gpusKnown = true;
    info.gpus = gpus;
    info.gpusAt = QDateTime::currentDateTime();
    render(node);
    refreshLabels();
    m_summary->setText(
            tr("GPU status every 2 s · last update %1").arg(info.gpusAt.toString(QStringLiteral("HH:mm:ss"))));
}

void NodesView::refreshLabels(bool force)
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    if (!m_store || (!force && m_labelsAt.isValid() && m_labelsAt.msecsTo(now) < 2000))
        return;
    m_labelsAt = now;
    QHash<QString, QStringList> labels;
    for (const NodeRecord& n : m_store->nodes())
        labels.insert(n.name, n.labels);
    labels.insert(QStringLiteral("local"), m_store->localNodeLabels());
    for (auto it = labels.cbegin(); it != labels.cend(); ++it) {
        const auto info = m_nodes.find(it.key());
        if (info == m_nodes.end() || info->labels == it.value())
            continue;
        info->labels = it.value();
        render(it.key());
    }
}

QString NodesView::cpuNodeText()
{
    return tr("no NVIDIA GPU (CPU node)");
}

QString NodesView::memoryText(const AgentGpu& gpu)
{
    if (!gpu.memoryTotalMib)
        return gpu.memoryUsedMib ? QStringLiteral("%1 MiB").arg(*gpu.memoryUsedMib, 0, 'f', 0) : QStringLiteral("–");
    return QStringLiteral("%1 / %2 MiB")
            .arg(gpu.memoryUsedMib.value_or(0), 0, 'f', 0)
            .arg(*gpu.memoryTotalMib, 0, 'f', 0);
}

QString NodesView::heldByText(const AgentGpu& gpu, const QHash<QString, std::pair<RunId, QString>>& ours)
{
    QStringList parts;
    for (const AgentGpuProcess& p : gpu.processes) {
        const auto it = p.run.isEmpty() ? ours.cend() : ours.constFind(p.run);
        if (it != ours.cend()) {
            const QString entry = QStringLiteral("%1 (#%2)").arg(it->second).arg(it->first);
            if (!parts.contains(entry))
                parts << entry;
            continue;
        }
        QStringList detail;
        if (p.pid > 0)
            detail << tr("pid %1").arg(p.pid);
        if (!p.name.isEmpty())
            detail << p.name;
        if (p.usedMemoryMib)
            detail << QStringLiteral("%1 MiB").arg(*p.usedMemoryMib, 0, 'f', 0);
        if (!p.run.isEmpty())
            detail << tr("Trainyard run %1 of another database").arg(p.run);
        parts << (detail.isEmpty() ? tr("other process")
                                   : tr("other process (%1)").arg(detail.join(QStringLiteral(", "))));
    }
    return parts.join(QStringLiteral("; "));
}

void NodesView::renderSlurm(QTreeWidgetItem* item, const NodeInfo& info)
{
    const QJsonObject facts = QJsonDocument::fromJson(info.slurmFacts.toUtf8()).object();
    const QJsonArray partitions = facts.value(QStringLiteral("partitions")).toArray();
    item->setText(MemoryColumn,
            facts.isEmpty() ? QString() : tr("Slurm %1").arg(facts.value(QStringLiteral("version")).toString()));
    if (facts.isEmpty()) {
        auto* child = new QTreeWidgetItem(item);
        child->setText(NameColumn, tr("Slurm cluster: partitions not reported yet"));
        child->setForeground(NameColumn, kPending);
        child->setFirstColumnSpanned(true);
        return;
    }
    for (const QJsonValue& v : partitions) {
        const QJsonObject p = v.toObject();
        auto* child = new QTreeWidgetItem(item);
        const QString name = p.value(QStringLiteral("name")).toString();
        // The name as sinfo marks it ("debug*": the default), said in full in the tooltip.
        const bool isDefault = p.value(QStringLiteral("default")).toBool();
        QStringList gres;
        for (const QJsonValue& g : p.value(QStringLiteral("gres")).toArray()) {
            const QJsonObject o = g.toObject();
            const QString type = o.value(QStringLiteral("type")).toString();
            gres << QStringLiteral("%1%2:%3")
                            .arg(o.value(QStringLiteral("name")).toString(), type.isEmpty() ? QString() : u':' + type)
                            .arg(o.value(QStringLiteral("count")).toInt());
        }
        QStringList nodes;
        for (const QJsonValue& n : p.value(QStringLiteral("nodes")).toArray())
            nodes << n.toString();
        const QJsonValue maxTime = p.value(QStringLiteral("max_time_s"));
        // One line over the whole row (the GPU columns are too narrow for
        // it): "debug* up · 2 nodes n1,n2 · 2 CPUs, 7 GiB, gpu:2 per node · no time limit".
        const QString perNode
                = tr("%1 CPUs, %2 GiB, %3 per node")
                          .arg(p.value(QStringLiteral("cpus")).toInt())
                          .arg(double(p.value(QStringLiteral("memory_mib")).toInteger()) / 1024.0, 0, 'f', 0)
                          .arg(gres.isEmpty() ? tr("no GPUs") : gres.join(u','));
        const QString limit = maxTime.isNull() || maxTime.isUndefined()
                ? tr("no time limit")
                : tr("time limit %1 min").arg(maxTime.toInteger() / 60);
        child->setText(NameColumn,
                tr("%1 %2 · %n node(s) %3 · %4 · %5", nullptr, int(nodes.size()))
                        .arg(isDefault ? name + u'*' : name, p.value(QStringLiteral("state")).toString(),
                                nodes.join(u','), perNode, limit));
        child->setFirstColumnSpanned(true);
        child->setToolTip(NameColumn,
                (isDefault ? tr("partition %1 (default)").arg(name) : tr("partition %1").arg(name)) + u'\n'
                        + child->text(NameColumn));
    }
}

void NodesView::render(const QString& node)
{
    QTreeWidgetItem* item = ensureNode(node);
    const NodeInfo& info = m_nodes[node];
    QString status;
    QColor colour = kPending;
    if (!info.statusKnown) {
        status = tr("connecting…");
    } else if (info.ready) {
        status = tr("reachable");
        colour = kReachable;
    } else {
        status = tr("unreachable");
        colour = kUnreachable;
    }
    item->setText(StatusColumn, status);
    item->setForeground(StatusColumn, colour);
    const QString where = node == u"local" ? tr("this machine") : (info.host.isEmpty() ? node : info.host);
    QString tip = QStringLiteral("%1 — %2").arg(node, where);
    if (info.statusKnown && !info.ready && !info.reason.isEmpty())
        tip += QLatin1Char('\n') + info.reason;
    if (info.gpusAt.isValid())
        tip += tr("\nGPUs as of %1").arg(info.gpusAt.toString(QStringLiteral("HH:mm:ss")));
    const QString labels
            = info.labels.isEmpty() ? QString() : tr("labels: %1").arg(info.labels.join(QStringLiteral(", ")));
    if (!labels.isEmpty())
        tip += u'\n' + labels;
    for (int c = 0; c < ColumnCount; ++c)
        item->setToolTip(c, tip);
    const bool down = info.statusKnown && !info.ready;
    item->setText(HeldByColumn, down ? info.reason : labels);
    if (down)
        item->setForeground(HeldByColumn, kUnreachable);
    else
        item->setData(HeldByColumn, Qt::ForegroundRole, QVariant()); // the palette's

    // GPU rows, rebuilt (a node has a handful).
    qDeleteAll(item->takeChildren());
    if (info.slurm) {
        renderSlurm(item, info);
        return;
    }
    const bool stale = info.statusKnown && !info.ready;
    if (!info.gpusKnown) {
        if (info.ready) {
            auto* child = new QTreeWidgetItem(item);
            child->setText(NameColumn, tr("reading GPUs…"));
            child->setForeground(NameColumn, kPending);
            child->setFirstColumnSpanned(true);
        }
        return;
    }
    if (info.gpus.isEmpty()) {
        auto* child = new QTreeWidgetItem(item);
        child->setText(NameColumn, cpuNodeText());
        child->setForeground(NameColumn, kPending);
        child->setFirstColumnSpanned(true);
        return;
    }
    for (const AgentGpu& g : info.gpus) {
        auto* child = new QTreeWidgetItem(item);
        child->setData(NameColumn, Qt::UserRole, g.index);
        child->setText(NameColumn, QStringLiteral("GPU %1  %2").arg(g.index).arg(g.name));
        const QString held = heldByText(g, m_ourRuns);
        child->setText(StatusColumn, held.isEmpty() ? tr("free") : tr("busy"));
        child->setText(MemoryColumn, memoryText(g));
        child->setText(UtilizationColumn, number(g.utilizationPct, QStringLiteral("%")));
        child->setText(TemperatureColumn, number(g.temperatureC, QStringLiteral("°C")));
        child->setText(PowerColumn, number(g.powerW, QStringLiteral("W")));
        child->setText(HeldByColumn, held.isEmpty() ? QStringLiteral("–") : held);
        const QString gpuTip
                = QStringLiteral("%1\n%2%3")
                          .arg(g.name, g.uuid,
                                  g.pciBusId.isEmpty() ? QString() : QStringLiteral("\nPCI ") + g.pciBusId);
        child->setToolTip(NameColumn, gpuTip);
        child->setToolTip(HeldByColumn, held);
        for (int c = 0; c < ColumnCount; ++c) {
            child->setTextAlignment(c,
                    c >= MemoryColumn && c <= PowerColumn ? Qt::AlignRight | Qt::AlignVCenter
                                                          : Qt::AlignLeft | Qt::AlignVCenter);
            if (stale)
                child->setForeground(c, kPending);
        }
        if (!stale)
            child->setForeground(StatusColumn, held.isEmpty() ? kReachable : QColor(0xe6, 0x51, 0x00));
    }
}

AddNodeDialog* NodesView::openAddNodeDialog()
{
    auto* dialog = new AddNodeDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setExistingNames(m_nodes.keys());
    connect(dialog, &QDialog::accepted, this, [this, dialog] { addNode(dialog->node(), dialog->acceptNewHostKey()); });
    dialog->open();
    return dialog;
}

void NodesView::addNode(const NodeRecord& node, bool acceptNewHostKey)
{
    if (!m_engine) {
        showError(tr("Cannot add node"), tr("Cannot add node '%1': no run engine.").arg(node.name));
        Q_EMIT nodeAdded(node.name, tr("no run engine"));
        return;
    }
    ensureNode(node.name);
    m_nodes[node.name].stored = true;
    m_nodes[node.name].host = node.host;
    render(node.name);
    QPointer<NodesView> self(this);
    m_engine->addNode(node, acceptNewHostKey, [self, name = node.name](const Result<void>& added) {
        if (!self)
            return;
        const QString error = added ? QString() : added.error().message;
        if (!error.isEmpty())
            self->showError(tr("Cannot add node"), error);
        Q_EMIT self->nodeAdded(name, error);
    });
}

void NodesView::checkHostKey(const QString& node, const QString& reason, bool changed)
{
    if (!m_engine || node == u"local" || m_askingHostKey.contains(node))
        return;
    // Which key the node's last connection refused.
    QPointer<NodesView> self(this);
    m_engine->rejectedHostKey(node, [self, node, reason, changed](const Result<QString>& fingerprint) {
        if (self && fingerprint && !fingerprint->isEmpty())
            self->askHostKey(node, *fingerprint, reason, changed);
    });
}

void NodesView::askHostKey(const QString& node, const QString& fingerprint, const QString& message, bool changed)
{
    const QString key = node + QLatin1Char(' ') + fingerprint;
    if (m_askingHostKey.contains(node) || m_declinedFingerprints.contains(key))
        return;
    if (changed) {
        // Never offered: a changed key may be an attack.
        m_declinedFingerprints.insert(key);
        showError(tr("Host key of %1 refused").arg(node), message);
        return;
    }
    m_askingHostKey.insert(node);
    auto* box = new QMessageBox(QMessageBox::Question, tr("Unknown host key"),
            tr("The host key of node '%1' is not in known_hosts.\n\nSHA256 fingerprint:\n%2\n\n"
               "Compare it with the host's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on it). "
               "Trust it and add it to known_hosts?")
                    .arg(node, fingerprint),
            QMessageBox::Yes | QMessageBox::No, this);
    box->setObjectName(QStringLiteral("hostKeyBox"));
    box->setDetailedText(message);
    box->setDefaultButton(QMessageBox::No);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, node, key](int) {
        m_askingHostKey.remove(node);
        if (box->clickedButton() != box->button(QMessageBox::Yes)) {
            m_declinedFingerprints.insert(key);
            return;
        }
        if (!m_engine)
            return;
        QPointer<NodesView> self(this);
        // The engine's next reconnection attempt records it.
        m_engine->trustHostKey(node, [self, node](const Result<bool>& found) {
            if (self && found && *found)
                Q_EMIT self->hostKeyAccepted(node);
        });
    });
    box->open();
}

void NodesView::showError(const QString& title, const QString& message)
{
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("nodesErrorBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace ty
