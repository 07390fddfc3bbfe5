#include "NodeLossWatch.h"

#include "core/retry/RetryPolicy.h"
#include "core/runs/RunEngine.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QLoggingCategory>

namespace ty {

Q_DECLARE_LOGGING_CATEGORY(lcRetry) // RetryRunner.cpp: "trainyard.retry"

NodeLossWatch::NodeLossWatch(RunEngine* engine, ResultStore* store, Clock& clock, qint64 lostAfterMs, QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_store(store)
    , m_clock(clock)
    , m_lostAfterMs(std::max<qint64>(1, lostAfterMs))
{
    connect(m_engine, &RunEngine::nodeStatusChanged, this,
            [this](const QString& node, bool ready) { onNodeStatus(node, ready); });
    for (const QString& node : m_engine->nodeNames())
        if (m_engine->nodeUnreachable(node))
            onNodeStatus(node, false);
}

qint64 NodeLossWatch::lostAfterFromEnvironment()
{
    const QString text = qEnvironmentVariable("TRAINYARD_NODE_LOST_AFTER");
    if (text.isEmpty())
        return kDefaultLostAfterMs;
    const auto sec = parseDurationSec(text);
    if (!sec || *sec <= 0) {
        qCWarning(lcRetry).noquote() << QStringLiteral(
                "TRAINYARD_NODE_LOST_AFTER='%1' is not a duration (90s, 10m, 2h): using 10m")
                                                .arg(text);
        return kDefaultLostAfterMs;
    }
    return *sec * 1000;
}

qint64 NodeLossWatch::lostAfterMsFor(const QString& node) const
{
    for (const NodeRecord& n : m_store->nodes())
        if (n.name == node)
            return n.nodeLostAfterSec && *n.nodeLostAfterSec > 0 ? *n.nodeLostAfterSec * 1000 : m_lostAfterMs;
    return m_lostAfterMs;
}

void NodeLossWatch::onNodeStatus(const QString& node, bool ready)
{
    if (ready) {
        m_silentSince.remove(node);
        return;
    }
    if (m_silentSince.contains(node))
        return; // silent already: counted from its first loss, not from each failed reconnect
    const qint64 since = m_clock.nowMs();
    m_silentSince.insert(node, since);
    m_clock.singleShot(lostAfterMsFor(node), this, [this, node, since] {
        if (m_silentSince.value(node, -1) == since)
            check(node);
    });
}

void NodeLossWatch::check(const QString& node)
{
    const qint64 silent = m_clock.nowMs() - m_silentSince.value(node);
    const QString reason = QStringLiteral("node %1 has not answered for %2 (node_lost_after): its runs there are lost")
                                   .arg(node, retryDurationText(silent));
    int lost = 0;
    for (const RunRecord& r : m_store->unfinishedRuns())
        if (r.node == node && r.state == RunState::Unknown) {
            m_engine->declareLost(r.id, reason);
            ++lost;
        }
    qCInfo(lcRetry).noquote() << reason << QStringLiteral("(%1 run(s))").arg(lost);
    Q_EMIT nodeLost(node, lost);
}

} // namespace ty
