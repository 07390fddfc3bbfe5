#include "CompareLoader.h"

#include "core/store/ResultStore.h"

#include <QLoggingCategory>
#include <QMetaObject>
#include <QThread>
#include <QtConcurrent/QtConcurrentMap>

#include <algorithm>
#include <numeric>

namespace ty {

namespace {

Q_LOGGING_CATEGORY(lcCompare, "trainyard.compare")

using Vec = std::vector<double>;

std::shared_ptr<const Vec> share(Vec&& v)
{
    return std::make_shared<const Vec>(std::move(v));
}

} // namespace

CompareLoader::CompareLoader(ResultStore* store, QObject* parent)
    : QObject(parent)
    , m_store(store)
{
    qRegisterMetaType<ty::CompareDataPtr>();
}

CompareLoader::~CompareLoader() = default;

void CompareLoader::request(const QList<RunId>& runs, int ticket)
{
    QMetaObject::invokeMethod(
            this, [this, runs, ticket] { Q_EMIT loaded(ticket, load(runs)); }, Qt::QueuedConnection);
}

CompareDataPtr CompareLoader::load(const QList<RunId>& runs) const
{
    auto data = std::make_shared<CompareData>();
    // Records and params through the store, on this thread.
    QList<CompareRun> loaded;
    for (RunId id : runs) {
        const Result<RunRecord> record = m_store->run(id);
        if (!record)
            continue;
        CompareRun r;
        r.run = *record;
        r.params = m_store->params(id);
        loaded.append(std::move(r));
    }
    // Metric columns: through the store's column readers, the runs split
    // over them. A store may offer none (a read-only SQLite store: a second
    // connection fails where its -shm cannot be created, a read-only share).
    const int parts = m_path == ReadPath::ResultStore
            ? 0
            : int(std::min<qsizetype>(std::clamp(QThread::idealThreadCount(), 1, 4), loaded.size()));
    while (!m_columnsFailed && !m_columnsNone && int(m_columns.size()) < parts) {
        auto opened = m_store->openColumnReader();
        if (!opened) {
            m_columnsFailed = true;
            qCWarning(
                    lcCompare, "%s; reading metrics through the store instead", qUtf8Printable(opened.error().message));
            break;
        }
        if (!*opened) {
            m_columnsNone = true;
            break;
        }
        m_columns.push_back(std::move(*opened));
    }
    const int readers = m_columnsFailed || m_columnsNone ? 0 : parts;
    std::vector<char> viaColumns(std::size_t(loaded.size()), 0);
    if (readers > 0) {
        std::vector<int> partIds(static_cast<std::size_t>(readers));
        std::iota(partIds.begin(), partIds.end(), 0);
        const auto readPart = [&](int part) {
            MetricColumnReader& reader = *m_columns[std::size_t(part)];
            if (auto snap = reader.beginSnapshot(); !snap) {
                qCWarning(lcCompare, "%s", qUtf8Printable(snap.error().message));
                return;
            }
            // Interleaved (run k to part k mod readers): runs of similar
            // size are usually neighbours in a selection.
            for (qsizetype k = part; k < loaded.size(); k += readers)
                viaColumns[std::size_t(k)] = loadMetricsViaColumns(reader, loaded[k]) ? 1 : 0;
            reader.endSnapshot();
        };
        if (readers > 1)
            QtConcurrent::blockingMap(partIds, readPart);
        else
            readPart(0);
    }
    bool allColumns = readers > 0;
    for (qsizetype k = 0; k < loaded.size(); ++k) {
        CompareRun& r = loaded[k];
        if (!viaColumns[std::size_t(k)]) {
            allColumns = false;
            r.metrics.clear();
            r.summary.clear();
            loadMetricsViaStore(r);
        }
        data->runs.append(std::move(r));
    }
    m_lastUsedColumns = allColumns && !loaded.isEmpty();
    return data;
}

bool CompareLoader::loadMetricsViaColumns(MetricColumnReader& reader, CompareRun& r) const
{
    // The run's rows in insertion order when they lie together, else per key by index.
    auto all = reader.runMetrics(r.run.id,
            m_path == ReadPath::ColumnsByIndex ? MetricColumnReader::Plan::KeyByKey
                                               : MetricColumnReader::Plan::Fastest);
    if (!all) {
        qCWarning(lcCompare, "%s", qUtf8Printable(all.error().message));
        return false;
    }
    for (auto& [key, s] : *all) {
        r.summary.insert(key, summarise(s.step, s.value, lowerIsBetter(key)));
        r.metrics.insert(
                key, MetricColumns{share(std::move(s.step)), share(std::move(s.wallMs)), share(std::move(s.value))});
    }
    return true;
}

void CompareLoader::loadMetricsViaStore(CompareRun& r) const
{
    const QStringList keys = m_store->metricKeys(r.run.id);
    for (const QString& key : keys) {
        const QList<MetricPoint> points = m_store->metrics(r.run.id, key);
        Vec step, wall, value;
        step.reserve(std::size_t(points.size()));
        wall.reserve(std::size_t(points.size()));
        value.reserve(std::size_t(points.size()));
        for (const MetricPoint& p : points) {
            step.push_back(double(p.step));
            wall.push_back(double(p.wallTimeMs));
            value.push_back(p.value);
        }
        r.summary.insert(key, summarise(step, value, lowerIsBetter(key)));
        r.metrics.insert(key, MetricColumns{share(std::move(step)), share(std::move(wall)), share(std::move(value))});
    }
}

} // namespace ty
