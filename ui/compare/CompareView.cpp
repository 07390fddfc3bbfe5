#include "CompareView.h"

#include "CompareLoader.h"
#include "CompareTableModel.h"
#include "ui/charts/RunColour.h"
#include "ui/charts/SmoothingControl.h"
#include "ui/runs/RunsModel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QScopeGuard>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QStyle>
#include <QStyleOption>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace ty {

namespace {

using Column = DecimatedChart::Column;

QString csvValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("nan");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 17);
}

Result<void> writeFile(const QString& path, const QByteArray& bytes)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("%1: cannot write: %2").arg(path, f.errorString()));
    f.write(bytes);
    if (!f.commit())
        return fail(QStringLiteral("%1: cannot write: %2").arg(path, f.errorString()));
    return {};
}

// A header that cuts its labels in the middle ("#12 digi…0012]") when the
// section is narrower than the label, where Qt 6.4's own header only clips
// them (both ends of a centred label).
class ElidingHeader final : public QHeaderView {
public:
    using QHeaderView::QHeaderView;

protected:
    void initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const override
    {
        QHeaderView::initStyleOptionForIndex(option, logicalIndex);
        // option->rect is not the section's yet (paintSection sets it after this).
        const int margin = style()->pixelMetric(QStyle::PM_HeaderMargin, option, this);
        option->text = option->fontMetrics.elidedText(
                option->text, Qt::ElideMiddle, sectionSize(logicalIndex) - 2 * margin - 4);
    }
};

} // namespace

CompareView::CompareView(CompareLoader* loader, QWidget* parent)
    : QWidget(parent)
    , m_loader(loader)
{
    setObjectName(QStringLiteral("compareView"));
    qRegisterMetaType<ty::CompareDataPtr>();
    if (m_loader)
        connect(m_loader, &CompareLoader::loaded, this, &CompareView::onLoaded, Qt::QueuedConnection);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 2);
    bar->addWidget(new QLabel(tr("X axis:")));
    m_axisCombo = new QComboBox;
    m_axisCombo->setObjectName(QStringLiteral("xAxisCombo"));
    m_axisCombo->setAccessibleName(tr("X axis"));
    m_axisCombo->addItems({tr("Step"), tr("Epoch"), tr("Relative time"), tr("Wall time")});
    connect(m_axisCombo, &QComboBox::currentIndexChanged, this, [this](int i) { setXAxis(XAxis(i)); });
    bar->addWidget(m_axisCombo);
    bar->addSpacing(8);
    m_logY = new QCheckBox(tr("Log Y"));
    m_logY->setObjectName(QStringLiteral("compareLogY"));
    m_logY->setToolTip(tr("Logarithmic y axis; values <= 0 are skipped"));
    connect(m_logY, &QCheckBox::toggled, this,
            [this](bool on) { setYScale(on ? DecimatedChart::YScale::Log : DecimatedChart::YScale::Linear); });
    bar->addWidget(m_logY);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("Smoothing:")));
    m_smoothingControl = new SmoothingControl(QStringLiteral("smoothingSlider"));
    connect(m_smoothingControl, &SmoothingControl::weightChanged, this, [this](double w) {
        m_smoothing = w;
        for (DecimatedChart* c : std::as_const(m_charts))
            c->setSmoothing(w);
    });
    bar->addWidget(m_smoothingControl);
    bar->addSpacing(12);
    m_onlyDiff = new QCheckBox(tr("Only differences"));
    m_onlyDiff->setObjectName(QStringLiteral("onlyDifferences"));
    connect(m_onlyDiff, &QCheckBox::toggled, this, &CompareView::setOnlyDifferences);
    bar->addWidget(m_onlyDiff);
    auto* exportTable = new QPushButton(tr("Export table…"));
    exportTable->setObjectName(QStringLiteral("exportTableButton"));
    connect(exportTable, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
                this, tr("Export table as CSV"), QStringLiteral("compare.csv"), tr("CSV files (*.csv)"));
        if (path.isEmpty())
            return;
        if (auto r = exportTableCsv(path); !r)
            QMessageBox::warning(this, tr("Export failed"), r.error().message);
    });
    bar->addWidget(exportTable);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("compareStatus"));
    m_status->setEnabled(false);
    // Takes what the bar leaves, cut rather than widening the window.
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_status->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    bar->addWidget(m_status, 1);

    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_chartsContent = new QWidget;
    m_grid = new QGridLayout(m_chartsContent);
    m_grid->setContentsMargins(2, 2, 2, 2);
    m_grid->setSpacing(4);
    scroll->setWidget(m_chartsContent);

    m_legend = new QListWidget;
    m_legend->setObjectName(QStringLiteral("compareLegend"));
    m_legend->setAccessibleName(tr("Compared runs"));
    m_legend->setMaximumHeight(140);
    connect(m_legend, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
        setRunVisible(item->data(Qt::UserRole).toLongLong(), item->checkState() == Qt::Checked);
    });
    m_model = new CompareTableModel(this);
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("compareTable"));
    m_table->setAccessibleName(tr("Comparison table"));
    m_table->setHorizontalHeader(new ElidingHeader(Qt::Horizontal, m_table));
    m_table->setModel(m_model);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    // Run columns as wide as their contents but never so wide that fewer
    // than two fit (fitColumns): a long name or param is cut in the middle
    // (whole in its tooltip), and the values, right-aligned, stay in view.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->viewport()->installEventFilter(this);
    connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, [this] {
        if (!m_fitting)
            m_userColumnWidths = true; // dragged by hand: kept until the next data
    });
    m_table->verticalHeader()->setSectionsClickable(true);
    m_table->verticalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table->verticalHeader(), &QHeaderView::sectionClicked, this, [this](int row) {
        const bool again = m_model->sortRow() == row && m_model->sortOrder() == Qt::AscendingOrder;
        sortRunsBy(row, again ? Qt::DescendingOrder : Qt::AscendingOrder);
    });
    connect(m_table->verticalHeader(), &QHeaderView::customContextMenuRequested, this, &CompareView::showRowMenu);

    auto* side = new QWidget;
    auto* sl = new QVBoxLayout(side);
    sl->setContentsMargins(0, 0, 0, 0);
    sl->addWidget(m_legend);
    sl->addWidget(m_table, 1);

    auto* split = new QSplitter(Qt::Horizontal);
    split->setObjectName(QStringLiteral("compareSplitter"));
    split->addWidget(scroll);
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    split->setSizes({900, 500}); // charts about two thirds, whatever the table asks for
    scroll->setMinimumWidth(360);

    m_notice = new QLabel;
    m_notice->setObjectName(QStringLiteral("compareNotice"));
    m_notice->setWordWrap(true);
    m_notice->setStyleSheet(QStringLiteral("color: #b35c00; padding: 2px 8px;"));
    m_notice->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);
    layout->addWidget(m_notice);
    layout->addWidget(split, 1);
    m_status->setText(tr("Select runs in the table and press Ctrl+D to compare them."));
}

CompareView::~CompareView() = default;

void CompareView::setRuns(const QList<RunId>& runs)
{
    m_runs = runs;
    m_status->setText(tr("Loading %n run(s)…", nullptr, int(runs.size())));
    if (m_loader)
        m_loader->request(runs, ++m_ticket);
}

void CompareView::refresh()
{
    if (!m_loader || m_runs.isEmpty())
        return;
    m_refreshTicket = ++m_ticket;
    m_loader->request(m_runs, m_refreshTicket);
}

void CompareView::onLoaded(int ticket, const CompareDataPtr& data)
{
    if (ticket != m_ticket)
        return;
    if (ticket == m_refreshTicket && m_data && data)
        applyRefresh(data);
    else
        setData(data);
}

void CompareView::applyRefresh(const CompareDataPtr& data)
{
    // Each chart's range, and whether it showed all of its data.
    QMap<QString, std::pair<double, double>> zoomed;
    for (auto it = m_charts.cbegin(); it != m_charts.cend(); ++it) {
        const auto [fullLo, fullHi] = (*it)->fullXRange();
        if ((*it)->xMin() > fullLo || (*it)->xMax() < fullHi)
            zoomed.insert(it.key(), {(*it)->xMin(), (*it)->xMax()});
    }
    const QStringList keysBefore = m_data->keys();
    m_data = data;
    rebuildEpochs();
    m_model->setData(m_data);
    fitColumns(); // keeps widths set by hand
    if (m_data->keys() != keysBefore) {
        rebuildCharts();
    } else {
        for (auto it = m_charts.cbegin(); it != m_charts.cend(); ++it)
            fillChart(*it, it.key()); // fitted to all of its data again
    }
    for (auto it = zoomed.cbegin(); it != zoomed.cend(); ++it)
        if (DecimatedChart* c = m_charts.value(it.key()))
            c->setXRange(it->first, it->second);
    rebuildLegend(); // names may have changed; hidden runs stay unchecked
    updateNotice();
    updateStatus();
    Q_EMIT loaded();
}

void CompareView::rebuildEpochs()
{
    m_epochs.clear();
    for (const CompareRun& r : m_data->runs) {
        const auto it = r.metrics.constFind(pickEpochKey(r.metrics.keys()));
        if (it == r.metrics.cend() || !it->step || !it->value)
            continue;
        const EpochMap map = EpochMap::fromSeries(*it->step, *it->value);
        if (map.isValid())
            m_epochs.insert(r.run.id, map);
    }
}

void CompareView::setData(const CompareDataPtr& data)
{
    m_data = data ? data : std::make_shared<const CompareData>();
    m_runs.clear();
    for (const CompareRun& r : m_data->runs)
        m_runs << r.run.id;
    m_hidden.clear();
    rebuildEpochs();
    m_model->setData(m_data);
    m_userColumnWidths = false;
    fitColumns();
    rebuildLegend();
    rebuildCharts();
    updateNotice();
    updateStatus();
    Q_EMIT loaded();
}

void CompareView::updateStatus()
{
    qsizetype points = 0;
    for (const CompareRun& r : m_data->runs)
        for (const MetricColumns& c : r.metrics)
            points += c.size();
    m_status->setText(tr("%1 runs · %2 keys · %3 points").arg(m_data->runs.size()).arg(m_keys.size()).arg(points));
}

void CompareView::rebuildLegend()
{
    const QSignalBlocker block(m_legend);
    m_legend->clear();
    for (const CompareRun& r : m_data->runs) {
        auto* item
                = new QListWidgetItem(runColourIcon(r.run.id), QStringLiteral("#%1 %2").arg(r.run.id).arg(r.run.name));
        item->setData(Qt::UserRole, r.run.id);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(m_hidden.contains(r.run.id) ? Qt::Unchecked : Qt::Checked);
        m_legend->addItem(item);
    }
}

void CompareView::rebuildCharts()
{
    for (DecimatedChart* c : std::as_const(m_charts)) {
        m_grid->removeWidget(c);
        delete c;
    }
    m_charts.clear();
    m_seriesRuns.clear();
    m_keys = m_data->keys();
    // Losses and accuracies first, then the rest; by name within each.
    std::stable_sort(m_keys.begin(), m_keys.end(), [](const QString& a, const QString& b) {
        return RunsModel::isMainMetricKey(a) && !RunsModel::isMainMetricKey(b);
    });
    int i = 0;
    for (const QString& key : std::as_const(m_keys)) {
        auto* chart = new DecimatedChart(key, m_chartsContent);
        chart->setMinimumHeight(240);
        chart->setYScale(m_yScale);
        m_charts.insert(key, chart);
        fillChart(chart, key);
        connect(chart, &DecimatedChart::xRangeChanged, this,
                [this, chart](double lo, double hi) { syncRange(chart, lo, hi); });
        connect(chart, &DecimatedChart::menuRequested, this,
                [this, key](const QPoint& pos) { showChartMenu(key, pos); });
        m_grid->addWidget(chart, i / 2, i % 2);
        ++i;
    }
    for (int r = 0; r < m_grid->rowCount(); ++r)
        m_grid->setRowStretch(r, 0);
    m_grid->setRowStretch((i + 1) / 2, 1);
    m_grid->setColumnStretch(0, 1);
    m_grid->setColumnStretch(1, 1);
}

void CompareView::fillChart(DecimatedChart* chart, const QString& key)
{
    // One decimation and one paint for all runs, not one per added run.
    chart->beginUpdate();
    const auto done = qScopeGuard([chart] { chart->endUpdate(); });
    chart->clearSeries();
    const XAxisMode mode = m_xAxis == XAxis::Step ? XAxisMode::Step
            : m_xAxis == XAxis::Epoch             ? XAxisMode::Epoch
            : m_xAxis == XAxis::RelativeTime      ? XAxisMode::RelativeTime
                                                  : XAxisMode::WallTime;
    chart->setXAxis(
            mode == XAxisMode::WallTime ? DecimatedChart::XAxisKind::DateTimeMs : DecimatedChart::XAxisKind::Value,
            xAxisTitle(mode));
    chart->setSmoothing(m_smoothing);
    QList<RunId>& order = m_seriesRuns[key];
    order.clear();
    for (const CompareRun& r : m_data->runs) {
        auto it = r.metrics.constFind(key);
        if (it == r.metrics.cend() || it->size() == 0)
            continue;
        Column x;
        Column y = it->value;
        if (mode == XAxisMode::Step) {
            x = it->step;
        } else if (mode == XAxisMode::WallTime) {
            x = it->wallMs;
        } else if (mode == XAxisMode::Epoch) {
            const auto map = m_epochs.constFind(r.run.id);
            if (map == m_epochs.cend())
                continue; // no epoch metric: not drawn on this axis (the notice says so)
            x = std::make_shared<const std::vector<double>>(mapX(mode, *it->step, {}, *map, 0));
        } else {
            const std::vector<double>& wall = *it->wallMs;
            const double t0 = r.run.startedAt.isValid() ? double(r.run.startedAt.toMSecsSinceEpoch()) : wall.front();
            x = std::make_shared<const std::vector<double>>(mapX(mode, {}, wall, {}, t0));
        }
        // Time and epoch axes: points are in step order; decimation needs x order.
        sortByX(x, y);
        const int index
                = chart->addSeries(QStringLiteral("#%1 %2").arg(r.run.id).arg(r.run.name), runColour(r.run.id), x, y);
        chart->setSeriesVisible(index, !m_hidden.contains(r.run.id));
        order.append(r.run.id);
    }
}

RunId CompareView::seriesRun(const QString& key, int index) const
{
    return m_seriesRuns.value(key).value(index, 0);
}

void CompareView::syncRange(DecimatedChart* from, double lo, double hi)
{
    if (m_syncing)
        return;
    m_syncing = true;
    for (DecimatedChart* c : std::as_const(m_charts))
        if (c != from)
            c->setXRange(lo, hi);
    m_syncing = false;
}

void CompareView::setXAxis(XAxis axis)
{
    if (m_axisCombo->currentIndex() != int(axis)) {
        m_axisCombo->setCurrentIndex(int(axis)); // comes back here
        return;
    }
    if (axis == m_xAxis)
        return;
    m_xAxis = axis;
    updateNotice();
    if (!m_data)
        return;
    for (auto it = m_charts.cbegin(); it != m_charts.cend(); ++it)
        fillChart(it.value(), it.key());
}

void CompareView::setYScale(DecimatedChart::YScale scale)
{
    const bool log = scale == DecimatedChart::YScale::Log;
    if (m_logY->isChecked() != log) {
        m_logY->setChecked(log); // comes back here
        return;
    }
    m_yScale = scale;
    for (DecimatedChart* c : std::as_const(m_charts))
        c->setYScale(scale);
}

QString CompareView::notice() const
{
    return m_notice->text();
}

void CompareView::updateNotice()
{
    QStringList missing;
    if (m_xAxis == XAxis::Epoch && m_data)
        for (const CompareRun& r : m_data->runs)
            if (!m_epochs.contains(r.run.id))
                missing << QStringLiteral("#%1 %2").arg(r.run.id).arg(r.run.name);
    const QString text = missing.isEmpty()
            ? QString()
            : tr("Not drawn on the epoch axis (no 'epoch' metric logged): %1").arg(missing.join(QStringLiteral(", ")));
    m_notice->setText(text);
    m_notice->setVisible(!text.isEmpty());
}

void CompareView::sortRunsBy(int row, Qt::SortOrder order)
{
    m_model->sortRunsBy(row, order);
    fitColumns();
}

int CompareView::fittedColumnWidth(int contentWidth, int viewportWidth, int columns)
{
    if (columns <= 0)
        return contentWidth;
    const int cap = std::max(kMinColumnWidth, viewportWidth / std::min(columns, 2));
    return std::clamp(contentWidth, kMinColumnWidth, cap);
}

void CompareView::fitColumns()
{
    if (m_userColumnWidths)
        return;
    m_fitting = true;
    const auto done = qScopeGuard([this] { m_fitting = false; });
    const int n = m_model->columnCount();
    const int viewport = m_table->viewport()->width();
    QHeaderView* header = m_table->horizontalHeader();
    const QAbstractItemView* view = m_table; // QTableView hides the public sizeHintForColumn
    for (int c = 0; c < n; ++c) {
        const int content = std::max(view->sizeHintForColumn(c), header->sectionSizeHint(c));
        m_table->setColumnWidth(c, fittedColumnWidth(content, viewport, n));
    }
}

bool CompareView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_table->viewport() && event->type() == QEvent::Resize)
        fitColumns();
    return QWidget::eventFilter(watched, event);
}

void CompareView::showRowMenu(const QPoint& pos)
{
    const int row = m_table->verticalHeader()->logicalIndexAt(pos);
    if (row < 0)
        return;
    QMenu menu(this);
    QAction* asc = menu.addAction(tr("Sort runs ascending"));
    QAction* desc = menu.addAction(tr("Sort runs descending"));
    QAction* unsorted = menu.addAction(tr("Compared order"));
    unsorted->setEnabled(m_model->sortRow() >= 0);
    const auto kind = CompareTableModel::RowKind(
            m_model->headerData(row, Qt::Vertical, CompareTableModel::RowKindRole).toInt());
    const QString key = m_model->headerData(row, Qt::Vertical, CompareTableModel::RowKeyRole).toString();
    QAction* autoRule = nullptr;
    QAction* minRule = nullptr;
    QAction* maxRule = nullptr;
    if (kind == CompareTableModel::RowKind::Best || kind == CompareTableModel::RowKind::Last
            || kind == CompareTableModel::RowKind::BestStep) {
        menu.addSeparator();
        const CompareTableModel::BestRule rule = CompareTableModel::bestRule(key);
        autoRule = menu.addAction(
                tr("Best of %1: automatic (%2)").arg(key, lowerIsBetter(key) ? tr("lowest") : tr("highest")));
        minRule = menu.addAction(tr("Best of %1: lowest").arg(key));
        maxRule = menu.addAction(tr("Best of %1: highest").arg(key));
        for (QAction* a : {autoRule, minRule, maxRule})
            a->setCheckable(true);
        autoRule->setChecked(rule == CompareTableModel::BestRule::Automatic);
        minRule->setChecked(rule == CompareTableModel::BestRule::Min);
        maxRule->setChecked(rule == CompareTableModel::BestRule::Max);
    }
    QAction* chosen = menu.exec(m_table->verticalHeader()->viewport()->mapToGlobal(pos));
    if (!chosen)
        return;
    if (chosen == asc || chosen == desc)
        sortRunsBy(row, chosen == asc ? Qt::AscendingOrder : Qt::DescendingOrder);
    else if (chosen == unsorted)
        m_model->clearSort();
    else if (chosen == autoRule)
        m_model->setBestRule(key, CompareTableModel::BestRule::Automatic);
    else if (chosen == minRule)
        m_model->setBestRule(key, CompareTableModel::BestRule::Min);
    else if (chosen == maxRule)
        m_model->setBestRule(key, CompareTableModel::BestRule::Max);
}

void CompareView::setSmoothing(double weight)
{
    m_smoothingControl->setWeight(weight); // weightChanged applies it
}

void CompareView::setOnlyDifferences(bool on)
{
    if (m_onlyDiff->isChecked() != on) {
        m_onlyDiff->setChecked(on);
        return;
    }
    m_model->setOnlyDifferences(on);
    fitColumns();
}

void CompareView::setRunVisible(RunId run, bool visible)
{
    if (visible)
        m_hidden.remove(run);
    else
        m_hidden.insert(run);
    for (auto it = m_charts.cbegin(); it != m_charts.cend(); ++it) {
        const QList<RunId> order = m_seriesRuns.value(it.key());
        for (int i = 0; i < order.size(); ++i)
            if (order.at(i) == run)
                it.value()->setSeriesVisible(i, visible);
    }
    for (int i = 0; i < m_legend->count(); ++i) {
        QListWidgetItem* item = m_legend->item(i);
        if (item->data(Qt::UserRole).toLongLong() == run) {
            const QSignalBlocker block(m_legend);
            item->setCheckState(visible ? Qt::Checked : Qt::Unchecked);
        }
    }
}

QString CompareView::chartCsv(const QString& key) const
{
    QString out = QStringLiteral("run_id,run_name,step,wall_time_utc,value\n");
    if (!m_data)
        return out;
    for (const CompareRun& r : m_data->runs) {
        if (m_hidden.contains(r.run.id))
            continue;
        auto it = r.metrics.constFind(key);
        if (it == r.metrics.cend())
            continue;
        const QString prefix = QString::number(r.run.id) + u',' + CompareTableModel::csvField(r.run.name) + u',';
        const std::vector<double>& step = *it->step;
        const std::vector<double>& wall = *it->wallMs;
        const std::vector<double>& value = *it->value;
        for (std::size_t k = 0; k < value.size(); ++k) {
            out += prefix;
            out += QString::number(qint64(step[k]));
            out += u',';
            out += QDateTime::fromMSecsSinceEpoch(qint64(wall[k]), Qt::UTC).toString(Qt::ISODateWithMs);
            out += u',';
            out += csvValue(value[k]);
            out += u'\n';
        }
    }
    return out;
}

Result<void> CompareView::exportChartCsv(const QString& key, const QString& path) const
{
    return writeFile(path, chartCsv(key).toUtf8());
}

Result<void> CompareView::exportChartPng(const QString& key, const QString& path) const
{
    DecimatedChart* c = m_charts.value(key);
    if (!c)
        return fail(QStringLiteral("no chart for metric '%1'").arg(key));
    return c->exportPng(path);
}

Result<void> CompareView::exportChartSvg(const QString& key, const QString& path) const
{
    DecimatedChart* c = m_charts.value(key);
    if (!c)
        return fail(QStringLiteral("no chart for metric '%1'").arg(key));
    return c->exportSvg(path);
}

Result<void> CompareView::exportTableCsv(const QString& path) const
{
    return writeFile(path, m_model->toCsv().toUtf8());
}

void CompareView::showChartMenu(const QString& key, const QPoint& globalPos)
{
    QMenu menu(this);
    QAction* reset = menu.addAction(tr("Reset zoom"));
    QAction* csv = menu.addAction(tr("Export data as CSV…"));
    QAction* png = menu.addAction(tr("Export chart as PNG…"));
    QAction* svg = menu.addAction(tr("Export chart as SVG…"));
    QAction* chosen = menu.exec(globalPos);
    if (!chosen)
        return;
    DecimatedChart* c = m_charts.value(key);
    if (chosen == reset && c) {
        c->resetZoom();
        syncRange(c, c->xMin(), c->xMax());
        return;
    }
    if (chosen != csv && chosen != png && chosen != svg)
        return;
    QString safe = key;
    safe.replace(u'/', u'_');
    const QString ext = chosen == csv ? QStringLiteral("csv")
            : chosen == png           ? QStringLiteral("png")
                                      : QStringLiteral("svg");
    const QString filter = chosen == csv ? tr("CSV files (*.csv)")
            : chosen == png              ? tr("PNG images (*.png)")
                                         : tr("SVG images (*.svg)");
    const QString path = QFileDialog::getSaveFileName(
            this, tr("Export %1 as %2").arg(key, ext.toUpper()), safe + u'.' + ext, filter);
    if (path.isEmpty())
        return;
    const Result<void> r = chosen == csv ? exportChartCsv(key, path)
            : chosen == png              ? exportChartPng(key, path)
                                         : exportChartSvg(key, path);
    if (!r)
        QMessageBox::warning(this, tr("Export failed"), r.error().message);
}

} // namespace ty
