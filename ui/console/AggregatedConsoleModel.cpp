#include "AggregatedConsoleModel.h"

#include <QDateTime>
#include <QTimer>

#include <algorithm>

namespace ty {

AggregatedConsoleModel::AggregatedConsoleModel(QObject* parent)
    : QAbstractListModel(parent)
{ }

AggregatedConsoleModel::~AggregatedConsoleModel() = default;

int AggregatedConsoleModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

const MergedConsoleLine& AggregatedConsoleModel::lineAt(int row) const
{
    return m_lines.at(m_rows.at(row) - m_firstSeq);
}

QVariant AggregatedConsoleModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const MergedConsoleLine& line = lineAt(index.row());
    switch (role) {
    case Qt::DisplayRole: return QStringLiteral("[%1] %2").arg(m_names.value(line.run), line.text);
    case Qt::ToolTipRole:
        return QStringLiteral("%1 · %2 (#%3) · byte %4")
                .arg(QDateTime::fromMSecsSinceEpoch(line.timeMs)
                                .toLocalTime()
                                .toString(QStringLiteral("yyyy-MM-dd hh:mm:ss.zzz")),
                        m_names.value(line.run))
                .arg(line.run)
                .arg(line.offset);
    case TextRole: return line.text;
    case RunIdRole: return line.run;
    case RunNameRole: return m_names.value(line.run);
    case LevelRole: return int(line.level);
    case TimeRole: return line.timeMs;
    case TracebackRole: return line.traceback;
    case OffsetRole: return line.offset;
    case StderrRole: return line.fromStderr;
    default: return {};
    }
}

void AggregatedConsoleModel::setRunNames(const QHash<RunId, QString>& names)
{
    m_names = names;
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0), index(int(m_rows.size()) - 1), {Qt::DisplayRole, RunNameRole, Qt::ToolTipRole});
}

void AggregatedConsoleModel::clear()
{
    beginResetModel();
    m_firstSeq += m_lines.size();
    m_lines.clear();
    m_rows.clear();
    m_scanned = m_firstSeq;
    endResetModel();
}

bool AggregatedConsoleModel::accepts(const MergedConsoleLine& line) const
{
    if (m_level == LevelFilter::Errors && line.level != ConsoleLevel::Error)
        return false;
    if (m_level == LevelFilter::WarningsAndErrors && line.level == ConsoleLevel::Info)
        return false;
    if (m_level == LevelFilter::Stderr && !line.fromStderr)
        return false;
    if (m_text.isEmpty())
        return true;
    if (m_isRegex)
        return m_regex.match(line.text).hasMatch();
    return line.text.contains(m_text, Qt::CaseInsensitive);
}

QString AggregatedConsoleModel::setFilter(const QString& text, bool regex, LevelFilter level)
{
    QRegularExpression re;
    if (regex && !text.isEmpty()) {
        re.setPattern(text);
        if (!re.isValid())
            return tr("%1 at offset %2").arg(re.errorString()).arg(re.patternErrorOffset());
        re.optimize();
    }
    if (text == m_text && regex == m_isRegex && level == m_level)
        return {};
    m_text = text;
    m_isRegex = regex;
    m_regex = re;
    m_level = level;
    restartFilter();
    return {};
}

void AggregatedConsoleModel::restartFilter()
{
    beginResetModel();
    m_rows.clear();
    m_scanned = m_firstSeq;
    endResetModel();
    scanSlice(); // the first slice at once: small consoles filter synchronously
}

void AggregatedConsoleModel::scheduleScan()
{
    if (m_scanScheduled)
        return;
    m_scanScheduled = true;
    QTimer::singleShot(0, this, [this] {
        m_scanScheduled = false;
        scanSlice();
    });
}

void AggregatedConsoleModel::scanSlice()
{
    const qint64 end = m_firstSeq + m_lines.size();
    if (m_scanned >= end)
        return;
    const qint64 stop = std::min<qint64>(end, m_scanned + kFilterSlice);
    QList<qint64> found;
    for (qint64 seq = m_scanned; seq < stop; ++seq) {
        if (accepts(m_lines.at(seq - m_firstSeq)))
            found.append(seq);
    }
    m_scanned = stop;
    if (!found.isEmpty()) {
        beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + found.size()) - 1);
        m_rows += found;
        endInsertRows();
    }
    if (m_scanned < end)
        scheduleScan();
    else
        Q_EMIT filterFinished();
}

void AggregatedConsoleModel::appendLines(const QList<MergedConsoleLine>& lines)
{
    if (lines.isEmpty())
        return;
    if (m_lines.isEmpty() || !mergedBefore(lines.front(), m_lines.back())) {
        const bool caughtUp = !isFiltering();
        m_lines += lines;
        trim();
        if (caughtUp)
            scanSlice();
        return;
    }
    // Out of order: merge, then filter again.
    QList<MergedConsoleLine> merged;
    merged.reserve(m_lines.size() + lines.size());
    std::merge(std::make_move_iterator(m_lines.begin()), std::make_move_iterator(m_lines.end()), lines.begin(),
            lines.end(), std::back_inserter(merged), mergedBefore);
    m_lines.swap(merged);
    trim();
    restartFilter();
}

void AggregatedConsoleModel::trim()
{
    if (m_lines.size() <= kMaxLines)
        return;
    const qsizetype drop = m_lines.size() - kMaxLines + kMaxLines / 10;
    const qint64 newFirst = m_firstSeq + drop;
    const auto firstKept = std::lower_bound(m_rows.begin(), m_rows.end(), newFirst);
    const qsizetype rowsGone = firstKept - m_rows.begin();
    if (rowsGone > 0) {
        beginRemoveRows({}, 0, int(rowsGone) - 1);
        m_rows.remove(0, rowsGone);
        endRemoveRows();
    }
    m_lines.remove(0, drop);
    m_firstSeq = newFirst;
    m_scanned = std::max(m_scanned, m_firstSeq);
}

} // namespace ty
