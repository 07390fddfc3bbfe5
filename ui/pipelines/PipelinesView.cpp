#include "PipelinesView.h"

#include "CacheDialog.h"

#include "core/common/RunDuration.h"
#include "core/pipeline/PipelineSpec.h"
#include "core/runs/RunControl.h"
#include "core/store/ResultStore.h"
#include "ui/pipelines/PipelineGraph.h"
#include "ui/runs/RunsModel.h"

#include <QAction>
#include <QDateTime>
#include <QFileInfo>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTimer>
#include <QToolBar>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace ty {

namespace {
enum Column { IdColumn, NameColumn, StateColumn, CreatedColumn, ColumnCount };

} // namespace

PipelinesView::PipelinesView(ResultStore* store, RunControl* engine, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_engine(engine)
{
    auto* toolbar = new QToolBar(this);
    m_cancel = toolbar->addAction(tr("Cancel pipeline"));
    m_cancel->setObjectName(QStringLiteral("cancelPipelineAction"));
    m_cancel->setToolTip(tr("Cancel its waiting steps and stop its running ones"));
    m_resume = toolbar->addAction(tr("Resume"));
    m_resume->setObjectName(QStringLiteral("resumePipelineAction"));
    m_resume->setToolTip(tr("Run a failed or cancelled pipeline again, reusing the steps that succeeded"));
    toolbar->addSeparator();
    QAction* cache = toolbar->addAction(tr("Cache…"));
    cache->setObjectName(QStringLiteral("memoCacheAction"));
    cache->setToolTip(tr("Memoized steps: what is kept, why a step ran, and invalidating results"));
    connect(cache, &QAction::triggered, this, &PipelinesView::showCache);

    m_list = new QTreeWidget(this);
    m_list->setObjectName(QStringLiteral("pipelinesList"));
    m_list->setAccessibleName(tr("Pipelines"));
    m_list->setColumnCount(ColumnCount);
    m_list->setHeaderLabels({tr("#"), tr("Pipeline"), tr("State"), tr("Submitted")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->header()->setSectionResizeMode(QHeaderView::ResizeToContents);

    m_header = new QLabel(this);
    m_header->setObjectName(QStringLiteral("pipelineHeader"));
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_graph = new PipelineGraph(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_graph);
    scroll->setWidgetResizable(false);
    scroll->setAccessibleName(tr("Pipeline graph"));
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_header);
    rightLayout->addWidget(scroll, 1);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_list);
    split->addWidget(right);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(toolbar);
    layout->addWidget(split, 1);

    m_clock = new QTimer(this);
    m_clock->setInterval(1000);
    connect(m_clock, &QTimer::timeout, this, &PipelinesView::updateDurations);
    connect(m_list, &QTreeWidget::itemSelectionChanged, this, &PipelinesView::showSelected);
    connect(m_graph, &PipelineGraph::runActivated, this, &PipelinesView::runActivated);
    connect(m_cancel, &QAction::triggered, this, [this] {
        const qint64 id = selectedPipeline();
        if (!id || !m_engine)
            return;
        m_engine->cancelPipeline(id, [this, id](const Result<void>& r) {
            Q_EMIT message(r ? tr("Pipeline %1: cancelling").arg(id)
                             : tr("Cannot cancel pipeline %1: %2").arg(id).arg(r.error().message));
        });
    });
    connect(m_resume, &QAction::triggered, this, [this] {
        const qint64 id = selectedPipeline();
        if (!id || !m_engine)
            return;
        m_engine->resumePipeline(id, [this, id](const Result<qint64>& r) {
            if (!r) {
                Q_EMIT message(tr("Cannot resume pipeline %1: %2").arg(id).arg(r.error().message));
                return;
            }
            Q_EMIT message(tr("Pipeline %1 resumes pipeline %2").arg(*r).arg(id));
            selectPipeline(*r);
        });
    });
    if (m_engine) {
        connect(m_engine, &RunControl::pipelineChanged, this, &PipelinesView::updatePipeline);
        connect(m_engine, &RunControl::reconnected, this, &PipelinesView::reload);
    }
    reload();
}

qint64 PipelinesView::selectedPipeline() const
{
    const QList<QTreeWidgetItem*> items = m_list->selectedItems();
    return items.isEmpty() ? 0 : items.front()->data(IdColumn, Qt::UserRole).toLongLong();
}

void PipelinesView::selectPipeline(qint64 id)
{
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        QTreeWidgetItem* item = m_list->topLevelItem(i);
        if (item->data(IdColumn, Qt::UserRole).toLongLong() == id) {
            m_list->setCurrentItem(item);
            m_selectWhenSeen = 0;
            return;
        }
    }
    m_selectWhenSeen = id; // its first event has not come yet
}

void PipelinesView::reload()
{
    for (const PipelineRecord& r : m_store->pipelines()) {
        const QJsonObject view
                = QJsonDocument::fromJson(r.document.toUtf8()).object().value(QStringLiteral("view")).toObject();
        if (!view.isEmpty())
            refreshRow(view);
    }
    if (!selectedPipeline() && m_list->topLevelItemCount() > 0)
        m_list->setCurrentItem(m_list->topLevelItem(0)); // the newest
    showSelected();
}

void PipelinesView::updatePipeline(const QJsonObject& pipeline)
{
    refreshRow(pipeline);
    const qint64 id = pipeline.value(QStringLiteral("id")).toInteger();
    if (m_selectWhenSeen == id)
        selectPipeline(id);
    else if (id == selectedPipeline())
        showSelected();
}

void PipelinesView::refreshRow(const QJsonObject& pipeline)
{
    const qint64 id = pipeline.value(QStringLiteral("id")).toInteger();
    if (id <= 0)
        return;
    m_pipelines.insert(id, pipeline);
    QTreeWidgetItem* item = nullptr;
    int insertAt = 0; // newest first
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        const qint64 other = m_list->topLevelItem(i)->data(IdColumn, Qt::UserRole).toLongLong();
        if (other == id) {
            item = m_list->topLevelItem(i);
            break;
        }
        if (other > id)
            insertAt = i + 1;
    }
    if (!item) {
        item = new QTreeWidgetItem;
        item->setData(IdColumn, Qt::UserRole, id);
        item->setTextAlignment(IdColumn, Qt::AlignRight | Qt::AlignVCenter);
        m_list->insertTopLevelItem(insertAt, item);
    }
    const QString state = pipeline.value(QStringLiteral("state")).toString();
    item->setText(IdColumn, QString::number(id));
    item->setText(NameColumn, pipeline.value(QStringLiteral("name")).toString());
    item->setText(StateColumn, state);
    item->setForeground(StateColumn, stepStateColour(state));
    item->setText(CreatedColumn,
            QDateTime::fromMSecsSinceEpoch(pipeline.value(QStringLiteral("created_ms")).toInteger())
                    .toLocalTime()
                    .toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    updateActions();
}

void PipelinesView::showSelected()
{
    const qint64 id = selectedPipeline();
    const QJsonObject p = m_pipelines.value(id);
    m_graph->setPipeline(p);
    m_graph->resize(m_graph->sizeHint());
    if (p.isEmpty()) {
        m_header->setText(m_pipelines.isEmpty() ? tr("No pipelines yet: drop a pipeline file (steps: ...) on the "
                                                     "window, or trainyardctl pipeline submit FILE")
                                                : tr("Select a pipeline"));
    } else {
        QString text
                = tr("Pipeline %1 %2: %3")
                          .arg(id)
                          .arg(p.value(QStringLiteral("name")).toString(), p.value(QStringLiteral("state")).toString());
        if (const qint64 from = p.value(QStringLiteral("resumed_from")).toInteger())
            text += tr(" (resumes pipeline %1)").arg(from);
        if (const QString why = p.value(QStringLiteral("reason")).toString(); !why.isEmpty())
            text += QStringLiteral(" - ") + why;
        m_header->setText(text);
    }
    updateDurations();
    updateActions();
}

void PipelinesView::updateDurations()
{
    const QJsonObject p = m_pipelines.value(selectedPipeline());
    QHash<RunId, QString> durations;
    bool live = false;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (const QJsonValue& v : p.value(QStringLiteral("steps")).toArray()) {
        const RunId run = v.toObject().value(QStringLiteral("run")).toInteger();
        // A cached step names the run whose results it reuses: that run's time is not this pipeline's.
        if (!run || v.toObject().value(QStringLiteral("state")).toString() == u"cached")
            continue;
        std::optional<RunRecord> stored;
        const RunRecord* r = m_runLookup ? m_runLookup(run) : nullptr;
        if (!m_runLookup) {
            if (auto s = m_store->run(run))
                stored = *s;
            r = stored ? &*stored : nullptr;
        }
        if (!r)
            continue;
        // As the runs table shows it (an unknown end: none).
        const RunDuration d = runDuration(*r, now);
        live |= d.kind == RunDuration::Kind::Running;
        if (d.ms >= 0)
            durations.insert(run, RunsModel::formatDuration(d.ms));
    }
    m_graph->setDurations(durations);
    if (live && !m_clock->isActive())
        m_clock->start();
    else if (!live)
        m_clock->stop();
}

void PipelinesView::updateActions()
{
    const QString state = m_pipelines.value(selectedPipeline()).value(QStringLiteral("state")).toString();
    m_cancel->setEnabled(m_engine && state == u"running");
    m_resume->setEnabled(m_engine && (state == u"failed" || state == u"cancelled"));
}

Result<void> PipelinesView::submitFile(const QString& path)
{
    const auto spec = pipeline::parsePipelineFile(path);
    if (!spec)
        return std::unexpected(spec.error());
    if (!m_engine)
        return fail(tr("not connected to the Trainyard service"), ErrorKind::Unreachable);
    const QJsonObject json{{QStringLiteral("yaml"), spec->yaml}, {QStringLiteral("origin"), path},
            {QStringLiteral("base_dir"), QFileInfo(path).absolutePath()},
            {QStringLiteral("source_path"), spec->sourcePath}, {QStringLiteral("params"), QJsonObject{}}};
    const QString name = spec->name;
    m_engine->submitPipeline(json, {}, [this, name](const Result<qint64>& r) {
        if (!r) {
            Q_EMIT message(tr("Cannot submit pipeline %1: %2").arg(name, r.error().message));
            return;
        }
        Q_EMIT message(tr("Submitted pipeline %1 (%2)").arg(*r).arg(name));
        selectPipeline(*r);
    });
    return {};
}

void PipelinesView::showCache()
{
    if (!m_cacheDialog) {
        m_cacheDialog = new CacheDialog(
                m_store,
                [engine = m_engine](const QJsonObject& selector, std::function<void(const Result<QStringList>&)> done) {
                    if (!engine)
                        done(std::unexpected(Error{QStringLiteral("no engine to ask")}));
                    else
                        engine->removeMemoEntries(selector, std::move(done));
                },
                this);
    } else {
        m_cacheDialog->reload();
    }
    m_cacheDialog->show();
    m_cacheDialog->raise();
    m_cacheDialog->activateWindow();
}

} // namespace ty
