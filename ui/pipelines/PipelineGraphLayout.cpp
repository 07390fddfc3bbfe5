#include "PipelineGraphLayout.h"

#include <QHash>
#include <QSet>
#include <QJsonArray>

#include <functional>

namespace ty {

PipelineGraphLayout PipelineGraphLayout::of(const QJsonObject& pipeline)
{
    PipelineGraphLayout out;
    QHash<QString, QStringList> upstreamOf; // step -> its upstream steps
    QHash<QString, QList<int>> boxesOf;     // step -> its instances' boxes
    QStringList stepOrder;
    for (const QJsonValue& v : pipeline.value(QStringLiteral("steps")).toArray()) {
        const QJsonObject s = v.toObject();
        Box b;
        b.name = s.value(QStringLiteral("name")).toString();
        b.step = s.value(QStringLiteral("step")).toString(b.name);
        b.state = s.value(QStringLiteral("state")).toString();
        b.run = s.value(QStringLiteral("run")).toInteger();
        b.reason = s.value(QStringLiteral("reason")).toString();
        if (!boxesOf.contains(b.step)) {
            stepOrder << b.step;
            QStringList up;
            for (const QJsonValue& u : s.value(QStringLiteral("upstream")).toArray())
                up << u.toString();
            upstreamOf.insert(b.step, up);
        }
        boxesOf[b.step] << int(out.boxes.size());
        out.boxes << b;
    }
    // Column = longest upstream chain (memoized depth-first; a step being
    // visited counts 0, so a cycle terminates).
    QHash<QString, int> depth;
    QSet<QString> visiting;
    std::function<int(const QString&)> columnOf = [&](const QString& step) -> int {
        if (const auto it = depth.constFind(step); it != depth.cend())
            return *it;
        if (visiting.contains(step))
            return 0;
        visiting.insert(step);
        int d = 0;
        for (const QString& u : upstreamOf.value(step))
            if (boxesOf.contains(u))
                d = std::max(d, columnOf(u) + 1);
        visiting.remove(step);
        depth.insert(step, d);
        return d;
    };
    QHash<int, int> nextRow; // column -> its next free row
    for (const QString& step : std::as_const(stepOrder)) {
        const int column = columnOf(step);
        for (int i : boxesOf.value(step)) {
            out.boxes[i].column = column;
            out.boxes[i].row = nextRow[column]++;
        }
        out.columns = std::max(out.columns, column + 1);
    }
    for (int rows : std::as_const(nextRow))
        out.rows = std::max(out.rows, rows);
    for (const QString& step : std::as_const(stepOrder))
        for (const QString& u : upstreamOf.value(step))
            for (int from : boxesOf.value(u))
                for (int to : boxesOf.value(step))
                    out.edges.append({from, to});
    return out;
}

} // namespace ty
