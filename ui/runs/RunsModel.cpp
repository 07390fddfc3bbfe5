#include "RunsModel.h"
#include "ui/i18n/RunTexts.h"

#include "RunStateStyle.h"
#include "core/common/RunDuration.h"
#include "ui/charts/RunColour.h"

#include <QColor>
#include <QFont>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ty {

namespace {

bool sameRow(const RunRow& a, const RunRow& b)
{
    const RunRecord& x = a.run;
    const RunRecord& y = b.run;
    if (x.state != y.state || x.name != y.name || x.node != y.node || x.gpus != y.gpus || x.startedAt != y.startedAt
            || x.finishedAt != y.finishedAt || x.failureReason != y.failureReason || x.failureKind != y.failureKind
            || x.pendingReason != y.pendingReason || x.exitCode != y.exitCode || x.exitSignal != y.exitSignal
            || a.latest.size() != b.latest.size() || a.params != b.params
            || a.notices != b.notices                                              // notices: the run header marks them
            || x.tags != y.tags || x.notes != y.notes || x.archived != y.archived) // the user's edits (RunActions)
        return false;
    for (auto it = a.latest.cbegin(); it != a.latest.cend(); ++it) {
        auto o = b.latest.constFind(it.key());
        if (o == b.latest.cend() || o->step != it->step)
            return false;
        const double v = it->value, w = o->value;
        if (!(v == w || (std::isnan(v) && std::isnan(w))))
            return false;
    }
    return true;
}

bool isMainLooking(const QString& key)
{
    static const QRegularExpression re(
            QStringLiteral(
                    "(^|[_/.\\-])(loss|acc|accuracy|err|error|f1|auc|ppl|perplexity|bleu|map|iou|top1|top5)$|^(val|valid|validation|test|eval)[_/.\\-]"),
            QRegularExpression::CaseInsensitiveOption);
    return re.match(key).hasMatch();
}

bool isBookkeeping(const QString& key)
{
    static const QSet<QString> skip = {
            QStringLiteral("epoch"),
            QStringLiteral("step"),
            QStringLiteral("global_step"),
            QStringLiteral("iteration"),
            QStringLiteral("iter"),
            QStringLiteral("batch"),
            QStringLiteral("it"),
            QStringLiteral("time"),
    };
    return skip.contains(key.toLower());
}

} // namespace

RunsModel::RunsModel(QObject* parent)
    : RunTableModel(parent)
    , m_now(QDateTime::currentDateTimeUtc())
{ }

int RunsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RunsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : FirstMetricColumn + int(m_metricKeys.size() + m_paramKeys.size());
}

bool RunsModel::isMainMetricKey(const QString& key)
{
    return isMainLooking(key);
}

QString RunsModel::formatDuration(qint64 ms)
{
    if (ms < 0)
        return {};
    const qint64 s = ms / 1000;
    if (s < 60)
        return QStringLiteral("%1s").arg(s);
    if (s < 3600)
        return QStringLiteral("%1m %2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    if (s < 86400)
        return QStringLiteral("%1h %2m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1d %2h").arg(s / 86400).arg((s % 86400) / 3600, 2, 10, QLatin1Char('0'));
}

QString RunsModel::formatValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("nan");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 5);
}

qint64 RunsModel::durationMs(const RunRecord& r) const
{
    return runDuration(r, m_now).ms; // -1: not started, or its end is unknown (its node is away)
}

QVariant RunsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RunRow& row = m_rows.at(index.row());
    const RunRecord& r = row.run;
    const int col = index.column();

    if (role == RunIdRole)
        return r.id;

    if (col >= firstParamColumn()) {
        const QString& key = m_paramKeys.at(col - firstParamColumn());
        auto it = row.params.constFind(key);
        if (it == row.params.cend())
            return {};
        switch (role) {
        case Qt::DisplayRole:
        case Qt::ToolTipRole: return *it;
        case SortRole: {
            // Numbers (lr=0.001, 3e-4) sort numerically, below any text.
            bool ok = false;
            const double v = it->toDouble(&ok);
            return ok ? QVariant(v) : QVariant(*it);
        }
        default: return {};
        }
    }

    if (col >= FirstMetricColumn) {
        const QString& key = m_metricKeys.at(col - FirstMetricColumn);
        auto it = row.latest.constFind(key);
        if (it == row.latest.cend())
            return {};
        switch (role) {
        case Qt::DisplayRole: return formatValue(it->value);
        // NaN sorts below every number (a total order for the proxy).
        case SortRole: return std::isnan(it->value) ? -std::numeric_limits<double>::infinity() : it->value;
        case Qt::ToolTipRole:
            return QStringLiteral("%1 = %2 at step %3").arg(key, formatValue(it->value)).arg(it->step);
        case Qt::TextAlignmentRole: return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        default: return {};
        }
    }

    switch (col) {
    case State:
        switch (role) {
        case Qt::DisplayRole: // "failed (CUDA OOM)"
            return runStateCellText(r.state, r.failureKind);
        case Qt::DecorationRole: return RunStateStyle::icon(r.state);
        case Qt::ForegroundRole: return RunStateStyle::color(r.state);
        case SortRole: return RunStateStyle::sortOrder(r.state);
        case Qt::ToolTipRole: {
            QString tip = runStateText(r.state);
            if (r.exitCode)
                tip += tr(", exit code %1").arg(*r.exitCode);
            if (r.exitSignal)
                tip += tr(", signal %1").arg(*r.exitSignal);
            if (r.failureKind != FailureKind::None)
                tip += QStringLiteral(" [%1]").arg(failureKindName(r.failureKind));
            if (!r.failureReason.isEmpty())
                tip += QStringLiteral(": ") + r.failureReason;
            if (!r.pendingReason.isEmpty())
                tip += QStringLiteral(": ") + r.pendingReason;
            return tip;
        }
        default: return {};
        }
    case Name:
        if (role == Qt::DisplayRole || role == SortRole)
            return r.name;
        if (role == Qt::DecorationRole)
            return runColourIcon(r.id); // the run's colour in every chart
        if (role == Qt::ToolTipRole)
            return QStringLiteral("#%1 %2\n%3").arg(r.id).arg(r.name, r.argv.join(u' '));
        return {};
    case Node:
        if (role == Qt::DisplayRole || role == SortRole)
            return r.node;
        return {};
    case Gpus:
        if (role == Qt::DisplayRole) {
            QStringList parts;
            for (int g : r.gpus)
                parts << QString::number(g);
            return parts.isEmpty() ? QStringLiteral("–") : parts.join(u',');
        }
        if (role == SortRole)
            return int(r.gpus.size());
        if (role == Qt::TextAlignmentRole)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignCenter));
        return {};
    case Started:
        if (!r.startedAt.isValid())
            return {};
        if (role == Qt::DisplayRole)
            return r.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        if (role == SortRole)
            return r.startedAt.toMSecsSinceEpoch();
        if (role == Qt::ToolTipRole)
            return r.startedAt.toUTC().toString(Qt::ISODateWithMs);
        return {};
    case Duration: {
        const qint64 ms = durationMs(r);
        if (ms < 0 && r.state == RunState::Unknown && r.startedAt.isValid()) {
            // Its node is away: it may have ended there; a number would only grow.
            if (role == Qt::DisplayRole)
                return tr("unknown");
            if (role == Qt::ToolTipRole)
                return tr("Its node has not answered since; it may have ended there");
            if (role == Qt::TextAlignmentRole)
                return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        }
        if (ms < 0)
            return {};
        if (role == Qt::DisplayRole)
            return formatDuration(ms);
        if (role == SortRole)
            return ms;
        if (role == Qt::TextAlignmentRole)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return {};
    }
    default: return {};
    }
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (section) {
    case State: return tr("State");
    case Name: return tr("Name");
    case Node: return tr("Node");
    case Gpus: return tr("GPUs");
    case Started: return tr("Started");
    case Duration: return tr("Duration");
    default: {
        if (section >= firstParamColumn()) {
            const QString& key = m_paramKeys.at(section - firstParamColumn());
            return role == Qt::ToolTipRole ? tr("Parameter %1").arg(key) : key;
        }
        const QString& key = m_metricKeys.at(section - FirstMetricColumn);
        return role == Qt::ToolTipRole ? tr("Latest value of %1").arg(key) : key;
    }
    }
}

QStringList RunsModel::chooseMainMetrics(const RunRows& rows, int cap)
{
    QHash<QString, int> count;
    for (const RunRow& row : rows)
        for (auto it = row.latest.cbegin(); it != row.latest.cend(); ++it)
            ++count[it.key()];
    return chooseMainMetrics(count, cap);
}

QStringList RunsModel::chooseMainMetrics(const QHash<QString, int>& rowsWithKey, int cap)
{
    QHash<QString, int> count;
    for (auto it = rowsWithKey.cbegin(); it != rowsWithKey.cend(); ++it)
        if (it.value() > 0 && !isBookkeeping(it.key()))
            count.insert(it.key(), it.value());
    QStringList main, other;
    for (auto it = count.cbegin(); it != count.cend(); ++it)
        (isMainLooking(it.key()) ? main : other) << it.key();
    // Only keys that look like a loss or an accuracy get a column; when no
    // key does, the most common others stand in (fewer of them).
    QStringList keys = main.isEmpty() ? other : main;
    const int limit = main.isEmpty() ? std::min(cap, 3) : cap;
    std::sort(keys.begin(), keys.end(), [&](const QString& a, const QString& b) {
        if (count.value(a) != count.value(b))
            return count.value(a) > count.value(b);
        return a < b;
    });
    if (keys.size() > limit)
        keys.resize(limit);
    // Show them in a stable, readable order: by name.
    std::sort(keys.begin(), keys.end());
    return keys;
}

QStringList RunsModel::allParamKeys(const RunRows& rows)
{
    QStringList keys;
    for (const RunRow& row : rows)
        for (auto it = row.params.cbegin(); it != row.params.cend(); ++it)
            keys << it.key();
    keys.sort();
    keys.removeDuplicates();
    return keys;
}

QStringList RunsModel::differingParamKeys(const RunRows& rows)
{
    QStringList out;
    for (const QString& key : allParamKeys(rows)) {
        // Runs without the key (other jobs in the same store) do not make
        // it differ: only two values that are not the same do.
        const QString* first = nullptr;
        bool differs = false;
        for (const RunRow& row : rows) {
            auto it = row.params.constFind(key);
            if (it == row.params.cend())
                continue;
            if (!first)
                first = &*it;
            else if (*it != *first)
                differs = true;
        }
        if (differs)
            out << key;
    }
    // One run alone differs from nothing: nothing to tell apart.
    return rows.size() > 1 ? out : QStringList();
}

void RunsModel::applyParamColumns(const QStringList& keys)
{
    if (keys == m_paramKeys)
        return;
    for (int i = int(m_paramKeys.size()) - 1; i >= 0; --i) {
        if (keys.contains(m_paramKeys.at(i)))
            continue;
        beginRemoveColumns({}, firstParamColumn() + i, firstParamColumn() + i);
        m_paramKeys.removeAt(i);
        endRemoveColumns();
    }
    QStringList added;
    for (const QString& k : keys)
        if (!m_paramKeys.contains(k))
            added << k;
    if (!added.isEmpty()) {
        const int first = firstParamColumn() + int(m_paramKeys.size());
        beginInsertColumns({}, first, first + int(added.size()) - 1);
        m_paramKeys += added;
        endInsertColumns();
    }
}

void RunsModel::setMaxMetricColumns(int n)
{
    m_maxMetricColumns = std::max(0, n);
    applyMetricColumns(chooseMainMetrics(m_metricRows, m_maxMetricColumns));
}

void RunsModel::applyMetricColumns(const QStringList& keys)
{
    if (keys == m_metricKeys)
        return;
    // Remove the columns that go, back to front, then append the new ones:
    // never a reset, so a view keeps its selection and header state.
    for (int i = int(m_metricKeys.size()) - 1; i >= 0; --i) {
        if (keys.contains(m_metricKeys.at(i)))
            continue;
        beginRemoveColumns({}, FirstMetricColumn + i, FirstMetricColumn + i);
        m_metricKeys.removeAt(i);
        endRemoveColumns();
    }
    QStringList added;
    for (const QString& k : keys)
        if (!m_metricKeys.contains(k))
            added << k;
    if (!added.isEmpty()) {
        const int first = FirstMetricColumn + int(m_metricKeys.size());
        beginInsertColumns({}, first, first + int(added.size()) - 1);
        m_metricKeys += added;
        endInsertColumns();
    }
}

void RunsModel::count(const RunRow& row, int sign)
{
    for (auto it = row.latest.cbegin(); it != row.latest.cend(); ++it)
        if ((m_metricRows[it.key()] += sign) <= 0)
            m_metricRows.remove(it.key());
    for (auto it = row.params.cbegin(); it != row.params.cend(); ++it)
        if ((m_paramRows[it.key()] += sign) <= 0)
            m_paramRows.remove(it.key());
}

void RunsModel::recount()
{
    m_metricRows.clear();
    m_paramRows.clear();
    for (const RunRow& r : std::as_const(m_rows))
        count(r, +1);
}

void RunsModel::applyColumns()
{
    applyMetricColumns(chooseMainMetrics(m_metricRows, m_maxMetricColumns));
    QStringList params = m_paramRows.keys();
    params.sort();
    applyParamColumns(params);
}

bool RunsModel::applyUpdates(const RunRows& changed, const QList<RunId>& removed)
{
    // Every run has a row here: anything changed or removed changes the table.
    const bool touches = !changed.isEmpty() || !removed.isEmpty();
    bool paramsMoved = false;
    // 1. Rows that went, back to front so the rows before stay where they are.
    QList<int> gone;
    for (RunId id : removed)
        if (const int row = rowOf(id); row >= 0)
            gone.append(row);
    std::sort(gone.begin(), gone.end(), std::greater<int>());
    for (int row : std::as_const(gone)) {
        count(m_rows.at(row), -1);
        beginRemoveRows({}, row, row);
        m_rows.removeAt(row);
        endRemoveRows();
    }
    if (!gone.isEmpty()) {
        rebuildIndex();
        paramsMoved = true;
    }

    // 2. Rows that changed in place; new ones are kept for step 3.
    RunRows added;
    for (const RunRow& r : changed) {
        const int row = rowOf(r.run.id);
        if (row < 0) {
            added.append(r);
            continue;
        }
        const RunRow& old = m_rows.at(row);
        if (sameRow(old, r)) {
            m_rows[row] = r; // console offset and the like: not shown
            continue;
        }
        paramsMoved = paramsMoved || old.params != r.params;
        count(old, -1);
        count(r, +1);
        m_rows[row] = r;
        Q_EMIT dataChanged(index(row, 0), index(row, columnCount() - 1));
    }

    // 3. New rows where their creation puts them: newest first, like
    // ResultStore::runs() (created_at, then id, descending).
    const auto before = [](const RunRecord& a, const RunRecord& b) {
        return a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.id > b.id;
    };
    for (const RunRow& r : std::as_const(added)) {
        const auto at = std::lower_bound(m_rows.cbegin(), m_rows.cend(), r,
                [&](const RunRow& x, const RunRow& y) { return before(x.run, y.run); });
        const int row = int(at - m_rows.cbegin());
        count(r, +1);
        beginInsertRows({}, row, row);
        m_rows.insert(row, r);
        endInsertRows();
    }
    if (!added.isEmpty()) {
        rebuildIndex();
        paramsMoved = true;
    }
    applyColumns();
    if (paramsMoved)
        Q_EMIT paramsChanged();
    return touches;
}

void RunsModel::rebuildIndex()
{
    m_rowOf.clear();
    m_rowOf.reserve(m_rows.size());
    for (int i = 0; i < m_rows.size(); ++i)
        m_rowOf.insert(m_rows.at(i).run.id, i);
}

void RunsModel::setRuns(const RunRows& rows)
{
    QHash<RunId, int> incoming;
    incoming.reserve(rows.size());
    for (int i = 0; i < rows.size(); ++i)
        incoming.insert(rows.at(i).run.id, i);

    // 1. Rows that went away.
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        if (incoming.contains(m_rows.at(i).run.id))
            continue;
        int first = i;
        while (first > 0 && !incoming.contains(m_rows.at(first - 1).run.id))
            --first;
        beginRemoveRows({}, first, i);
        m_rows.remove(first, i - first + 1);
        endRemoveRows();
        i = first;
    }
    rebuildIndex();

    // 2. The survivors must be in the snapshot's relative order (runs are
    // sorted by creation, which never changes); if not, start over.
    {
        int last = -1;
        bool ordered = true;
        for (const RunRow& r : std::as_const(m_rows)) {
            const int pos = incoming.value(r.run.id);
            if (pos < last) {
                ordered = false;
                break;
            }
            last = pos;
        }
        if (!ordered) {
            beginResetModel();
            m_rows = rows;
            recount();
            m_metricKeys = chooseMainMetrics(m_metricRows, m_maxMetricColumns);
            m_paramKeys = allParamKeys(m_rows);
            rebuildIndex();
            endResetModel();
            Q_EMIT paramsChanged();
            return;
        }
    }

    // 3. Insert new rows (in contiguous blocks) and update the others.
    int i = 0;
    while (i < rows.size()) {
        if (i < m_rows.size() && m_rows.at(i).run.id == rows.at(i).run.id) {
            if (!sameRow(m_rows.at(i), rows.at(i))) {
                m_rows[i] = rows.at(i);
                Q_EMIT dataChanged(index(i, 0), index(i, columnCount() - 1));
            }
            ++i;
            continue;
        }
        int end = i;
        while (end < rows.size() && !m_rowOf.contains(rows.at(end).run.id))
            ++end;
        Q_ASSERT(end > i);
        beginInsertRows({}, i, end - 1);
        for (int k = i; k < end; ++k)
            m_rows.insert(k, rows.at(k));
        endInsertRows();
        rebuildIndex();
        i = end;
    }
    rebuildIndex();
    recount();
    applyColumns();
    Q_EMIT paramsChanged();
}

void RunsModel::updateRun(const RunRecord& run)
{
    const int row = rowOf(run.id);
    if (row < 0) {
        beginInsertRows({}, 0, 0);
        m_rows.prepend(RunRow{run, {}});
        endInsertRows();
        rebuildIndex();
        Q_EMIT paramsChanged();
        return;
    }
    RunRow updated = m_rows.at(row);
    updated.run = run;
    if (!sameRow(updated, m_rows.at(row))) {
        m_rows[row] = updated;
        Q_EMIT dataChanged(index(row, 0), index(row, columnCount() - 1));
    } else {
        m_rows[row] = updated;
    }
}

void RunsModel::updateLatestMetrics(RunId run, const QList<MetricPoint>& points)
{
    const int row = rowOf(run);
    if (row < 0 || points.isEmpty())
        return;
    RunRow& r = m_rows[row];
    bool newKey = false;
    for (const MetricPoint& p : points) {
        auto it = r.latest.find(p.key);
        if (it == r.latest.end()) {
            r.latest.insert(p.key, p);
            ++m_metricRows[p.key];
            newKey = true;
        } else if (p.step >= it->step) {
            *it = p;
        }
    }
    if (newKey)
        applyMetricColumns(chooseMainMetrics(m_metricRows, m_maxMetricColumns));
    if (!m_metricKeys.isEmpty())
        Q_EMIT dataChanged(index(row, FirstMetricColumn), index(row, firstParamColumn() - 1));
}

void RunsModel::removeRun(RunId run)
{
    const int row = rowOf(run);
    if (row < 0)
        return;
    count(m_rows.at(row), -1);
    beginRemoveRows({}, row, row);
    m_rows.removeAt(row);
    endRemoveRows();
    rebuildIndex();
    applyColumns();
    Q_EMIT paramsChanged();
}

void RunsModel::tick(const QDateTime& nowUtc)
{
    m_now = nowUtc;
    for (int i = 0; i < m_rows.size(); ++i) {
        const RunRecord& r = m_rows.at(i).run;
        if (r.startedAt.isValid() && !r.finishedAt.isValid() && !isTerminal(r.state))
            Q_EMIT dataChanged(index(i, Duration), index(i, Duration));
    }
}

RunId RunsModel::runIdAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).run.id : 0;
}

int RunsModel::rowOf(RunId run) const
{
    return m_rowOf.value(run, -1);
}

const RunRow* RunsModel::rowData(RunId run) const
{
    const int row = rowOf(run);
    return row < 0 ? nullptr : &m_rows.at(row);
}

} // namespace ty
