#include "TrainerStateImporter.h"

#include "LenientJson.h"

#include <QJsonArray>
#include <QJsonObject>

#include <cmath>

namespace ty {

Result<TrainerStateImport> importTrainerState(QByteArrayView json, qsizetype skipEntries, const QString& origin)
{
    const QString where = origin.isEmpty() ? QStringLiteral("trainer_state.json") : origin;
    Result<QJsonValue> doc = parseLenientJson(json);
    if (!doc)
        return fail(where + QStringLiteral(": not valid JSON: ") + doc.error().message);
    if (!doc->isObject())
        return fail(where + QStringLiteral(": not a JSON object"));
    const QJsonValue history = doc->toObject().value(QLatin1StringView("log_history"));
    if (!history.isArray())
        return fail(where + QStringLiteral(": no \"log_history\" list"));
    const QJsonArray entries = history.toArray();
    TrainerStateImport out;
    out.entries = entries.size();
    for (qsizetype i = qMax<qsizetype>(0, skipEntries); i < entries.size(); ++i) {
        const QJsonValue e = entries.at(i);
        if (!e.isObject()) {
            out.warnings.append(QStringLiteral("%1: log_history[%2] skipped: not an object").arg(where).arg(i));
            continue;
        }
        const QJsonObject o = e.toObject();
        qint64 step = i;
        const QJsonValue sv = o.value(QLatin1StringView("step"));
        if (!sv.isUndefined() && !sv.isNull()) {
            const double d = sv.toDouble(std::nan(""));
            if (!sv.isDouble() || !std::isfinite(d) || d != std::floor(d) || std::abs(d) > 9.0e18) {
                out.warnings.append(
                        QStringLiteral("%1: log_history[%2] skipped: step is not an integer").arg(where).arg(i));
                continue;
            }
            step = sv.toInteger(qint64(d));
        }
        std::optional<double> epoch;
        if (const QJsonValue ev = o.value(QLatin1StringView("epoch")); ev.isDouble())
            epoch = ev.toDouble();
        for (const auto& [key, value] : flattenJsonNumbers(o)) {
            if (key == QLatin1StringView("step") || key == QLatin1StringView("epoch"))
                continue;
            out.metrics.append(ImportedMetric{key, step, epoch, value, std::nullopt});
        }
    }
    return out;
}

} // namespace ty
