#include "CompareLoader.h"

#include "store/ResultStore.h"

#include <QMetaObject>

namespace ty {

CompareLoader::CompareLoader(ResultStore* store, QObject* parent)
    : QObject(parent)
    , m_store(store)
{
    qRegisterMetaType<ty::CompareDataPtr>();
}

void CompareLoader::request(const QList<RunId>& runs, int ticket)
{
    QMetaObject::invokeMethod(this, [this, runs, ticket] { Q_EMIT loaded(ticket, load(runs)); }, Qt::QueuedConnection);
}

CompareDataPtr CompareLoader::load(const QList<RunId>& runs) const
{
    auto data = std::make_shared<CompareData>();
    for (RunId id : runs) {
        const Result<RunRecord> record = m_store->run(id);
        if (!record)
            continue;
        CompareRun r;
        r.run = *record;
        r.params = m_store->params(id);
        const QStringList keys = m_store->metricKeys(id);
        for (const QString& key : keys) {
            const QList<MetricPoint> points = m_store->metrics(id, key);
            auto step = std::make_shared<std::vector<double>>();
            auto wall = std::make_shared<std::vector<double>>();
            auto value = std::make_shared<std::vector<double>>();
            step->reserve(std::size_t(points.size()));
            wall->reserve(std::size_t(points.size()));
            value->reserve(std::size_t(points.size()));
            for (const MetricPoint& p : points) {
                step->push_back(double(p.step));
                wall->push_back(double(p.wallTimeMs));
                value->push_back(p.value);
            }
            r.summary.insert(key, summarise(*step, *value, lowerIsBetter(key)));
            r.metrics.insert(key, MetricColumns{step, wall, value});
        }
        data->runs.append(std::move(r));
    }
    return data;
}

} // namespace ty
