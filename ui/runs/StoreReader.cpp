#include "StoreReader.h"

#include "core/retry/AttemptMetrics.h"

#include "core/store/ResultStore.h"

#include <QMetaObject>

namespace ty {

StoreReader::StoreReader(ResultStore* store, QObject* parent)
    : QObject(parent)
    , m_store(store)
{ }

void StoreReader::requestRuns()
{
    QMetaObject::invokeMethod(
            this,
            [this] {
                if (m_runsQueued)
                    return;
                m_runsQueued = true;
                // Post the load behind whatever else is queued, so a burst of
                // requests collapses into this one.
                QMetaObject::invokeMethod(this, &StoreReader::loadRuns, Qt::QueuedConnection);
            },
            Qt::QueuedConnection);
}

void StoreReader::requestRunUpdates()
{
    QMetaObject::invokeMethod(
            this,
            [this] {
                if (m_updatesQueued || m_runsQueued)
                    return; // a full load is coming anyway
                m_updatesQueued = true;
                QMetaObject::invokeMethod(this, &StoreReader::loadUpdates, Qt::QueuedConnection);
            },
            Qt::QueuedConnection);
}

void StoreReader::requestMetrics(RunId run, int ticket)
{
    QMetaObject::invokeMethod(
            this, [this, run, ticket] { loadMetrics(run, ticket); }, Qt::QueuedConnection);
}

void StoreReader::requestVersionCheck()
{
    QMetaObject::invokeMethod(this, &StoreReader::checkVersion, Qt::QueuedConnection);
}

RunRow StoreReader::loadRow(const RunRecord& r) const
{
    return RunRow{r, m_store->latestMetrics(r.id), m_store->params(r.id), m_store->notices(r.id)};
}

void StoreReader::loadUpdates()
{
    m_updatesQueued = false;
    if (!m_loaded || !m_incremental) {
        loadRuns();
        return;
    }
    const Result<RunChanges> changes = m_store->runChangesSince(m_seq);
    if (!changes) {
        loadRuns();
        return;
    }
    m_seq = changes->seq;
    RunRows rows;
    QList<RunId> removed = changes->removed;
    rows.reserve(changes->changed.size());
    for (RunId id : changes->changed) {
        const Result<RunRecord> r = m_store->run(id);
        if (r)
            rows.append(loadRow(*r));
        else
            removed.append(id); // deleted between the two reads
    }
    if (!rows.isEmpty() || !removed.isEmpty())
        Q_EMIT runsUpdated(rows, removed);
}

void StoreReader::loadRuns()
{
    m_runsQueued = false;
    m_updatesQueued = false;
    // The change number first: whatever is written during the load is named
    // again by the next update (reloading a row twice is harmless; missing
    // one is not).
    const Result<RunChanges> before = m_store->runChangesSince(0);
    m_incremental = before.has_value();
    m_seq = before ? before->seq : 0;
    m_loaded = true;
    RunRows rows;
    const QList<RunRecord> runs = m_store->runs();
    // One read for every run's notices: few runs have any.
    const QMap<RunId, QList<RunNotice>> notices = m_store->allNotices();
    rows.reserve(runs.size());
    for (const RunRecord& r : runs)
        rows.append(RunRow{r, m_store->latestMetrics(r.id), m_store->params(r.id), notices.value(r.id)});
    Q_EMIT runsLoaded(rows);
}

void StoreReader::loadMetrics(RunId run, int ticket)
{
    QList<MetricPoint> points;
    QList<MetricRestart> rs = m_store->metricRestarts(run);
    // A later attempt of a retried run: its attempts so far as one series,
    // each resumed attempt from its first step, marked like a restart.
    const auto record = m_store->run(run);
    const auto attempt = record ? membershipOf(*record, RunGroupKind::Attempts) : std::nullopt;
    if (attempt && attempt->position > 1) {
        QList<QList<MetricPoint>> perAttempt;
        for (const auto& [id, m] : m_store->groupMembers(attempt->group))
            if (m.position <= attempt->position)
                perAttempt.append(m_store->metrics(id));
        StitchedMetrics stitched = stitchAttemptMetrics(perAttempt);
        points = std::move(stitched.points);
        rs = stitched.resumes + rs;
    } else {
        points = m_store->metrics(run);
    }
    QMap<QString, QList<MetricPoint>> series;
    for (const MetricPoint& p : std::as_const(points))
        series[p.key].append(p);
    Q_EMIT metricsLoaded(run, ticket, series);
    QMap<QString, QList<qint64>> restarts;
    for (const MetricRestart& r : std::as_const(rs))
        restarts[r.key].append(r.step);
    Q_EMIT restartsLoaded(run, ticket, restarts);
}

void StoreReader::checkVersion()
{
    const qint64 v = m_store->dataVersion();
    if (m_lastVersion >= 0 && v != m_lastVersion)
        Q_EMIT externalChange();
    m_lastVersion = v;
}

} // namespace ty
