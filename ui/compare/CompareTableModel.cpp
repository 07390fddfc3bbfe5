#include "CompareTableModel.h"

#include "charts/RunColour.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QSet>

#include <cmath>

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

} // namespace

CompareTableModel::CompareTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

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
    m_shown.clear();
    for (int i = 0; i < m_all.size(); ++i)
        if (!on || m_all.at(i).differs || m_all.at(i).kind == RowKind::Name)
            m_shown.append(i);
    endResetModel();
}

void CompareTableModel::rebuild()
{
    m_all.clear();
    m_shown.clear();
    if (!m_data)
        return;
    const QList<CompareRun>& runs = m_data->runs;
    const auto add = [&](RowKind kind, const QString& key, const QString& label, const QStringList& display,
                         const QStringList& exact) {
        Row row{kind, key, label, display, false};
        for (const QString& e : exact)
            if (e != exact.value(0))
                row.differs = true;
        m_all.append(row);
    };
    {
        QStringList names, states;
        for (const CompareRun& r : runs) {
            names << r.run.name;
            states << runStateName(r.run.state);
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
        for (const CompareRun& r : runs) {
            auto it = r.summary.constFind(key);
            if (it == r.summary.cend() || it->count == 0) {
                lastD << QString();
                lastE << QString();
                bestD << QString();
                bestE << QString();
                stepD << QString();
                continue;
            }
            lastD << shortValue(it->last);
            lastE << exactValue(it->last);
            bestD << (it->haveBest ? shortValue(it->best) : QString());
            bestE << (it->haveBest ? exactValue(it->best) : QString());
            stepD << (it->haveBest ? QString::number(it->bestStep) : QString());
        }
        add(RowKind::Last, key, tr("%1 · last").arg(key), lastD, lastE);
        add(RowKind::Best, key, tr("%1 · best (%2)").arg(key, lowerIsBetter(key) ? tr("min") : tr("max")), bestD, bestE);
        add(RowKind::BestStep, key, tr("%1 · step of best").arg(key), stepD, stepD);
    }
    for (int i = 0; i < m_all.size(); ++i)
        if (!m_onlyDifferences || m_all.at(i).differs || m_all.at(i).kind == RowKind::Name)
            m_shown.append(i);
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
    case Qt::ToolTipRole: return row.display.value(index.column());
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
        const RunRecord& r = m_data->runs.at(section).run;
        switch (role) {
        case Qt::DisplayRole: return QStringLiteral("#%1 %2").arg(r.id).arg(r.name);
        case Qt::DecorationRole: return runColourIcon(r.id);
        case RunIdRole: return r.id;
        default: return {};
        }
    }
    if (section < 0 || section >= m_shown.size())
        return QAbstractTableModel::headerData(section, orientation, role);
    const Row& row = m_all.at(m_shown.at(section));
    switch (role) {
    case Qt::DisplayRole: return row.label;
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
        QStringList line{csvField(headerData(r, Qt::Vertical).toString())};
        for (int c = 0; c < columnCount(); ++c)
            line << csvField(index(r, c).data().toString());
        out += line.join(u',') + u'\n';
    }
    return out;
}

} // namespace ty
