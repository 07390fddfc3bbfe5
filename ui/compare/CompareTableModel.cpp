#include "CompareTableModel.h"
#include "ui/i18n/RunTexts.h"

#include "ui/charts/RunColour.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QSet>
#include <QSettings>
#include <QUrl>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ty {

namespace {

QString shortValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("nan");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 5);
}

QString exactValue(double v)
{
    return std::isfinite(v) ? QString::number(v, 'g', 17) : shortValue(v);
}

// Natural order: digit runs compare as numbers ("run-2" < "run-10"), the
// rest case-insensitively. (QCollator's numeric mode needs ICU, which not
// every Qt build has.)
int naturalCompare(const QString& a, const QString& b)
{
    qsizetype i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (a.at(i).isDigit() && b.at(j).isDigit()) {
            qsizetype ie = i, je = j;
            while (ie < a.size() && a.at(ie).isDigit())
                ++ie;
            while (je < b.size() && b.at(je).isDigit())
                ++je;
            // Compare without leading zeros: longer is larger, then digit by digit.
            qsizetype is = i, js = j;
            while (is + 1 < ie && a.at(is) == u'0')
                ++is;
            while (js + 1 < je && b.at(js) == u'0')
                ++js;
            if (ie - is != je - js)
                return ie - is < je - js ? -1 : 1;
            const int c = QStringView(a).mid(is, ie - is).compare(QStringView(b).mid(js, je - js));
            if (c != 0)
                return c;
            i = ie;
            j = je;
            continue;
        }
        const int c = QStringView(a).mid(i, 1).compare(QStringView(b).mid(j, 1), Qt::CaseInsensitive);
        if (c != 0)
            return c;
        ++i;
        ++j;
    }
    return (a.size() - i) < (b.size() - j) ? -1 : (a.size() - i) > (b.size() - j) ? 1 : 0;
}

QString ruleSettingsKey(const QString& key)
{
    return QStringLiteral("compare/bestRule/") + QString::fromLatin1(QUrl::toPercentEncoding(key));
}

QSettings settings()
{
    return QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard"));
}

} // namespace

CompareTableModel::BestRule CompareTableModel::bestRule(const QString& key)
{
    const QString v = settings().value(ruleSettingsKey(key)).toString();
    return v == u"min" ? BestRule::Min : v == u"max" ? BestRule::Max : BestRule::Automatic;
}

bool CompareTableModel::lowerIsBetterFor(const QString& key)
{
    const BestRule rule = bestRule(key);
    return rule == BestRule::Automatic ? lowerIsBetter(key) : rule == BestRule::Min;
}

void CompareTableModel::setBestRule(const QString& key, BestRule rule)
{
    QSettings s = settings();
    if (rule == BestRule::Automatic)
        s.remove(ruleSettingsKey(key));
    else
        s.setValue(ruleSettingsKey(key), rule == BestRule::Min ? QStringLiteral("min") : QStringLiteral("max"));
    s.sync();
    beginResetModel();
    rebuild();
    endResetModel();
}

RunId CompareTableModel::runAt(int column) const
{
    if (!m_data || column < 0 || column >= m_data->runs.size())
        return 0;
    return m_data->runs.at(runIndex(column)).run.id;
}

int CompareTableModel::sortRow() const
{
    if (!m_sorted)
        return -1;
    for (int r = 0; r < m_shown.size(); ++r) {
        const Row& row = m_all.at(m_shown.at(r));
        if (row.kind == m_sortKind && row.key == m_sortKey)
            return r;
    }
    return -1;
}

void CompareTableModel::sortRunsBy(int row, Qt::SortOrder order)
{
    if (row < 0 || row >= m_shown.size())
        return;
    beginResetModel();
    const Row& r = m_all.at(m_shown.at(row));
    m_sorted = true;
    m_sortKind = r.kind;
    m_sortKey = r.key;
    m_sortOrder = order;
    applySort();
    endResetModel();
}

void CompareTableModel::clearSort()
{
    beginResetModel();
    m_sorted = false;
    applySort();
    endResetModel();
}

void CompareTableModel::applySort()
{
    const int n = m_data ? int(m_data->runs.size()) : 0;
    m_order.resize(n);
    std::iota(m_order.begin(), m_order.end(), 0);
    if (!m_sorted)
        return;
    const Row* row = nullptr;
    for (const Row& r : std::as_const(m_all))
        if (r.kind == m_sortKind && r.key == m_sortKey)
            row = &r;
    if (!row)
        return;
    // Numbers when every non-empty cell is one, else natural text order.
    QList<double> num(n, 0.0);
    bool numeric = true;
    for (int i = 0; i < n; ++i) {
        const QString& v = row->display.value(i);
        if (v.isEmpty())
            continue;
        bool ok = false;
        num[i] = v.toDouble(&ok);
        if (!ok && v != u"nan")
            numeric = false;
        if (v == u"nan")
            num[i] = std::nan("");
        else if (v == u"inf" || v == u"-inf")
            num[i] = v.startsWith(u'-') ? -INFINITY : INFINITY;
    }
    if (numeric && (row->kind == RowKind::Last || row->kind == RowKind::Best))
        for (int i = 0; i < n; ++i)
            if (!row->exact.value(i).isEmpty())
                num[i] = row->exact.value(i).toDouble(); // full precision, not the 5 digits shown
    const bool desc = m_sortOrder == Qt::DescendingOrder;
    std::stable_sort(m_order.begin(), m_order.end(), [&](int a, int b) {
        const QString& va = row->display.value(a);
        const QString& vb = row->display.value(b);
        if (va.isEmpty() != vb.isEmpty())
            return vb.isEmpty(); // empty last
        if (va.isEmpty())
            return false;
        if (numeric) {
            const double x = num[a], y = num[b];
            if (std::isnan(x) != std::isnan(y))
                return std::isnan(y); // nan after numbers
            if (std::isnan(x))
                return false;
            return desc ? x > y : x < y;
        }
        const int c = naturalCompare(va, vb);
        return desc ? c > 0 : c < 0;
    });
}

CompareTableModel::CompareTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{ }

void CompareTableModel::setData(const CompareDataPtr& data)
{
    beginResetModel();
    m_data = data;
    rebuild();
    endResetModel();
}

void CompareTableModel::setOnlyDifferences(bool on)
{
    if (on == m_onlyDifferences)
        return;
    beginResetModel();
    m_onlyDifferences = on;
    applyShown();
    endResetModel();
}

void CompareTableModel::applyShown()
{
    m_shown.clear();
    for (int i = 0; i < m_all.size(); ++i)
        if (!m_onlyDifferences || m_all.at(i).differs || m_all.at(i).kind == RowKind::Name)
            m_shown.append(i);
}

void CompareTableModel::rebuild()
{
    m_all.clear();
    m_shown.clear();
    m_order.clear();
    if (!m_data)
        return;
    const QList<CompareRun>& runs = m_data->runs;
    const auto add = [&](RowKind kind, const QString& key, const QString& label, const QStringList& display,
                             const QStringList& exact) {
        Row row{kind, key, label, display, false, exact};
        for (const QString& e : exact)
            if (e != exact.value(0))
                row.differs = true;
        m_all.append(row);
    };
    {
        QStringList names, states;
        for (const CompareRun& r : runs) {
            names << r.run.name;
            states << runStateText(r.run.state);
        }
        add(RowKind::Name, {}, tr("name"), names, names);
        add(RowKind::State, {}, tr("state"), states, states);
    }
    QSet<QString> paramSet;
    for (const CompareRun& r : runs)
        for (auto it = r.params.cbegin(); it != r.params.cend(); ++it)
            paramSet.insert(it.key());
    QStringList params(paramSet.cbegin(), paramSet.cend());
    params.sort();
    for (const QString& p : std::as_const(params)) {
        QStringList v;
        for (const CompareRun& r : runs)
            v << r.params.value(p); // missing: empty, which differs from any value
        // A present empty value and a missing one look alike; tell them apart.
        QStringList exact;
        for (const CompareRun& r : runs)
            exact << (r.params.contains(p) ? QStringLiteral("=") + r.params.value(p) : QString());
        add(RowKind::Param, p, p, v, exact);
    }
    const QStringList keys = m_data->keys();
    for (const QString& key : keys) {
        QStringList lastD, lastE, bestD, bestE, stepD;
        const bool lower = lowerIsBetterFor(key);
        for (const CompareRun& r : runs) {
            // The loader summarised with the automatic rule; an override recomputes from the points.
            MetricSummary own;
            const MetricSummary* sum = nullptr;
            auto m = r.metrics.constFind(key);
            if (lower != lowerIsBetter(key) && m != r.metrics.cend() && m->step && m->value) {
                own = summarise(*m->step, *m->value, lower);
                sum = &own;
            } else if (auto it = r.summary.constFind(key); it != r.summary.cend()) {
                sum = &*it;
            }
            if (!sum || sum->count == 0) {
                lastD << QString();
                lastE << QString();
                bestD << QString();
                bestE << QString();
                stepD << QString();
                continue;
            }
            lastD << shortValue(sum->last);
            lastE << exactValue(sum->last);
            bestD << (sum->haveBest ? shortValue(sum->best) : QString());
            bestE << (sum->haveBest ? exactValue(sum->best) : QString());
            stepD << (sum->haveBest ? QString::number(sum->bestStep) : QString());
        }
        add(RowKind::Last, key, tr("%1 · last").arg(key), lastD, lastE);
        add(RowKind::Best, key,
                tr("%1 · best (%2%3)")
                        .arg(key, lower ? tr("min") : tr("max"),
                                bestRule(key) == BestRule::Automatic ? QString() : tr(", set")),
                bestD, bestE);
        add(RowKind::BestStep, key, tr("%1 · step of best").arg(key), stepD, stepD);
    }
    applyShown();
    applySort();
}

int CompareTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_shown.size());
}

int CompareTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_data ? 0 : int(m_data->runs.size());
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = m_all.at(m_shown.at(index.row()));
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole: return row.display.value(runIndex(index.column()));
    case Qt::
            DecorationRole: // the run's colour beside its name (the cell's delegate leaves room for it when it cuts the name)
        return row.kind == RowKind::Name ? QVariant(runColourIcon(m_data->runs.at(runIndex(index.column())).run.id))
                                         : QVariant();
    case Qt::BackgroundRole:
        return row.differs && row.kind != RowKind::Name ? QBrush(QColor(0xff, 0xf0, 0xb3)) : QVariant();
    case DiffersRole: return row.differs;
    case Qt::TextAlignmentRole:
        return row.kind == RowKind::Name || row.kind == RowKind::State || row.kind == RowKind::Param
                ? QVariant()
                : QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    default: return {};
    }
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal) {
        if (!m_data || section < 0 || section >= m_data->runs.size())
            return QAbstractTableModel::headerData(section, orientation, role);
        const RunRecord& r = m_data->runs.at(runIndex(section)).run;
        switch (role) {
        case Qt::DisplayRole:
        case Qt::ToolTipRole: return QStringLiteral("#%1 %2").arg(r.id).arg(r.name); // whole when the header cuts it
        case RunIdRole: return r.id;
        default: return {};
        }
    }
    if (section < 0 || section >= m_shown.size())
        return QAbstractTableModel::headerData(section, orientation, role);
    const Row& row = m_all.at(m_shown.at(section));
    switch (role) {
    case Qt::DisplayRole:
        if (m_sorted && row.kind == m_sortKind && row.key == m_sortKey)
            return QString(
                    row.label + (m_sortOrder == Qt::AscendingOrder ? QStringLiteral("  ▲") : QStringLiteral("  ▼")));
        return row.label;
    case Qt::FontRole: {
        if (!row.differs || row.kind == RowKind::Name)
            return {};
        QFont f;
        f.setBold(true);
        return f;
    }
    case DiffersRole: return row.differs;
    case RowKindRole: return int(row.kind);
    case RowKeyRole: return row.key;
    case Qt::ToolTipRole:
        return row.kind == RowKind::Best
                ? tr("Click to sort the runs by this row; right click to choose whether the lowest or highest value is best")
                : tr("Click to sort the runs by this row");
    default: return {};
    }
}

QString CompareTableModel::csvField(const QString& s)
{
    if (!s.contains(u',') && !s.contains(u'"') && !s.contains(u'\n') && !s.contains(u'\r'))
        return s;
    QString q = s;
    q.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return u'"' + q + u'"';
}

QString CompareTableModel::toCsv() const
{
    QString out;
    QStringList header{QStringLiteral("field")};
    for (int c = 0; c < columnCount(); ++c)
        header << csvField(headerData(c, Qt::Horizontal).toString());
    out += header.join(u',') + u'\n';
    for (int r = 0; r < rowCount(); ++r) {
        QStringList line{csvField(m_all.at(m_shown.at(r)).label)};
        for (int c = 0; c < columnCount(); ++c)
            line << csvField(index(r, c).data().toString());
        out += line.join(u',') + u'\n';
    }
    return out;
}

} // namespace ty
