#include "QueuePolicy.h"

#include "FairShareLedger.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>

#include <cmath>

namespace ty {
namespace {
struct OrderingName {
    sched::Ordering ordering;
    const char* name;
};
constexpr OrderingName kOrderings[] = {
        {sched::Ordering::Fcfs, "fcfs"},
        {sched::Ordering::Priority, "priority"},
        {sched::Ordering::ShortestJobFirst, "sjf"},
        {sched::Ordering::FairShare, "fair-share"},
};
} // namespace

sched::Policy defaultQueuePolicy()
{
    return sched::Policy::easyBackfill(sched::Ordering::Priority);
}

QString queuePolicyPath(const QString& databasePath)
{
    return QFileInfo(databasePath).absoluteFilePath() + QStringLiteral(".scheduler.json");
}

namespace {
bool wholeNumber(const QJsonValue& v, double min)
{
    return v.isDouble() && std::isfinite(v.toDouble()) && v.toDouble() >= min && v.toDouble() <= 1e9
            && v.toDouble() == std::floor(v.toDouble());
}

QString shown(const QJsonValue& v)
{
    if (v.isString())
        return u'\'' + v.toString() + u'\'';
    if (v.isDouble())
        return QString::number(v.toDouble());
    if (v.isBool())
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    if (v.isObject())
        return QStringLiteral("an object");
    return v.isArray() ? QStringLiteral("an array") : QStringLiteral("null");
}

Result<sched::GpuQuota> quotaFromJson(const QJsonValue& v, const QString& path, const QString& key)
{
    if (!v.isObject())
        return fail(QStringLiteral("%1: '%2' must be an object of name -> GPUs (\"default\": for anyone else)")
                            .arg(path, key));
    sched::GpuQuota q;
    const QJsonObject o = v.toObject();
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!wholeNumber(it.value(), 0))
            return fail(QStringLiteral("%1: '%2.%3' must be a whole number of GPUs >= 0, not %4")
                                .arg(path, key, it.key(), shown(it.value())));
        const int limit = int(it.value().toDouble());
        if (it.key() == u"default")
            q.defaultLimit = limit;
        else
            q.limits.insert(it.key(), limit);
    }
    return q;
}

// The "pools" object (core/sched/Pools.h), in name order.
Result<QList<sched::ResourcePool>> poolsFromJson(const QJsonValue& v, const QString& path)
{
    if (!v.isObject())
        return fail(QStringLiteral("%1: 'pools' must be an object of pool name -> pool").arg(path));
    const QJsonObject all = v.toObject();
    if (all.size() > sched::kMaxPools)
        return fail(QStringLiteral("%1: 'pools' has %2 pools, at most %3 are allowed")
                            .arg(path)
                            .arg(all.size())
                            .arg(sched::kMaxPools));
    static const QRegularExpression nameRe(QStringLiteral("^[A-Za-z0-9._-]+$"));
    static const QStringList known{
            QStringLiteral("labels"), QStringLiteral("quota"), QStringLiteral("lend"), QStringLiteral("borrow_limit")};
    QList<sched::ResourcePool> pools;
    for (auto it = all.begin(); it != all.end(); ++it) {
        const QString at = QStringLiteral("pools.") + it.key();
        if (!nameRe.match(it.key()).hasMatch())
            return fail(
                    QStringLiteral("%1: pool name '%2' must be letters, digits, '.', '_' or '-'").arg(path, it.key()));
        if (!it.value().isObject())
            return fail(QStringLiteral("%1: '%2' must be an object (labels, quota, lend, borrow_limit)").arg(path, at));
        const QJsonObject o = it.value().toObject();
        for (auto k = o.begin(); k != o.end(); ++k)
            if (!known.contains(k.key()))
                return fail(QStringLiteral("%1: unknown key '%2.%3' (known: %4)")
                                    .arg(path, at, k.key(), known.join(QStringLiteral(", "))));
        sched::ResourcePool pool;
        pool.name = it.key();
        if (o.contains(QStringLiteral("labels"))) {
            const QJsonValue labels = o.value(QStringLiteral("labels"));
            if (!labels.isArray())
                return fail(QStringLiteral("%1: '%2.labels' must be an array of node labels").arg(path, at));
            for (const QJsonValue& l : labels.toArray()) {
                if (!l.isString() || l.toString().isEmpty())
                    return fail(QStringLiteral("%1: '%2.labels' must hold non-empty strings, not %3")
                                        .arg(path, at, shown(l)));
                pool.labels << l.toString();
            }
        }
        if (o.contains(QStringLiteral("quota"))) {
            const QJsonValue quota = o.value(QStringLiteral("quota"));
            if (!quota.isObject())
                return fail(QStringLiteral("%1: '%2.quota' must be an object with 'users' and/or 'projects'")
                                    .arg(path, at));
            const QJsonObject qo = quota.toObject();
            for (auto k = qo.begin(); k != qo.end(); ++k) {
                if (k.key() != u"users" && k.key() != u"projects")
                    return fail(QStringLiteral("%1: unknown key '%2.quota.%3' (known: users, projects)")
                                        .arg(path, at, k.key()));
                auto q = quotaFromJson(k.value(), path, at + QStringLiteral(".quota.") + k.key());
                if (!q)
                    return std::unexpected(q.error());
                (k.key() == u"users" ? pool.users : pool.projects) = *q;
            }
        }
        if (o.contains(QStringLiteral("lend"))) {
            if (!o.value(QStringLiteral("lend")).isBool())
                return fail(QStringLiteral("%1: '%2.lend' must be true or false").arg(path, at));
            pool.lend = o.value(QStringLiteral("lend")).toBool();
        }
        if (o.contains(QStringLiteral("borrow_limit"))) {
            const QJsonValue b = o.value(QStringLiteral("borrow_limit"));
            if (!wholeNumber(b, 0))
                return fail(QStringLiteral("%1: '%2.borrow_limit' must be a whole number of GPUs >= 0, not %3")
                                    .arg(path, at, shown(b)));
            pool.borrowLimit = int(b.toDouble());
        }
        pools << pool;
    }
    return pools;
}

QJsonObject quotaToJson(const sched::GpuQuota& q)
{
    QJsonObject o;
    if (q.defaultLimit >= 0)
        o.insert(QStringLiteral("default"), q.defaultLimit);
    for (auto it = q.limits.cbegin(); it != q.limits.cend(); ++it)
        o.insert(it.key(), it.value());
    return o;
}

QJsonObject poolsToJson(const QList<sched::ResourcePool>& pools)
{
    QJsonObject all;
    for (const sched::ResourcePool& p : pools) {
        QJsonObject quota;
        if (!p.users.isEmpty())
            quota.insert(QStringLiteral("users"), quotaToJson(p.users));
        if (!p.projects.isEmpty())
            quota.insert(QStringLiteral("projects"), quotaToJson(p.projects));
        all.insert(p.name,
                QJsonObject{{QStringLiteral("labels"), QJsonArray::fromStringList(p.labels)},
                        {QStringLiteral("quota"), quota}, {QStringLiteral("lend"), p.lend},
                        {QStringLiteral("borrow_limit"), p.borrowLimit}});
    }
    return all;
}

// Reads one policy object; `base` gives the values of absent keys. `where`
// names the file (and queue) in messages.
Result<sched::Policy> policyFromJson(
        const QJsonObject& o, const QString& path, const sched::Policy& base, bool allowQueues)
{
    sched::Policy p = base;
    static const QStringList known{QStringLiteral("ordering"), QStringLiteral("backfill"),
            QStringLiteral("aging_per_hour"), QStringLiteral("default_runtime_s"), QStringLiteral("fair_share_by"),
            QStringLiteral("shares"), QStringLiteral("usage_half_life_s"), QStringLiteral("preemption")};
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!allowQueues && it.key() == u"pools")
            return fail(QStringLiteral("%1: 'pools' are shared by every queue: set them at the top level").arg(path));
        if (!known.contains(it.key()) && !(allowQueues && (it.key() == u"queues" || it.key() == u"pools")))
            return fail(QStringLiteral("%1: unknown key '%2' (known: %3)")
                                .arg(path, it.key(), known.join(QStringLiteral(", "))));
    }
    if (allowQueues && o.contains(QStringLiteral("pools"))) {
        auto pools = poolsFromJson(o.value(QStringLiteral("pools")), path);
        if (!pools)
            return std::unexpected(pools.error());
        p.pools = *pools;
    }
    if (o.contains(QStringLiteral("ordering"))) {
        const QString name = o.value(QStringLiteral("ordering")).toString();
        bool found = false;
        for (const auto& on : kOrderings)
            if (name == QLatin1String(on.name)) {
                p.ordering = on.ordering;
                found = true;
            }
        if (!found)
            return fail(QStringLiteral("%1: 'ordering' must be fcfs, priority, sjf or fair-share, not '%2'")
                                .arg(path, name));
    }
    auto number = [&](const char* key, double min) -> Result<std::optional<double>> {
        const QString k = QLatin1String(key);
        if (!o.contains(k))
            return std::optional<double>{};
        const QJsonValue v = o.value(k);
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < min)
            return fail(QStringLiteral("%1: '%2' must be a number >= %3").arg(path, k).arg(min));
        return std::optional<double>(v.toDouble());
    };
    if (o.contains(QStringLiteral("backfill"))) {
        if (!o.value(QStringLiteral("backfill")).isBool())
            return fail(QStringLiteral("%1: 'backfill' must be true or false").arg(path));
        p.backfill = o.value(QStringLiteral("backfill")).toBool();
    }
    if (o.contains(QStringLiteral("preemption"))) {
        if (!o.value(QStringLiteral("preemption")).isBool())
            return fail(QStringLiteral("%1: 'preemption' must be true or false").arg(path));
        p.preemption = o.value(QStringLiteral("preemption")).toBool();
    }
    const auto aging = number("aging_per_hour", 0);
    if (!aging)
        return std::unexpected(aging.error());
    if (*aging)
        p.agingPerHour = **aging;
    const auto runtime = number("default_runtime_s", 1);
    if (!runtime)
        return std::unexpected(runtime.error());
    if (*runtime)
        p.defaultRuntimeMs = qint64(**runtime * 1000);
    const auto halfLife = number("usage_half_life_s", 1);
    if (!halfLife)
        return std::unexpected(halfLife.error());
    if (*halfLife)
        p.usageHalfLifeMs = qint64(**halfLife * 1000);
    if (o.contains(QStringLiteral("fair_share_by"))) {
        const QString by = o.value(QStringLiteral("fair_share_by")).toString();
        if (by == u"user")
            p.fairShareBy = sched::FairShareBy::User;
        else if (by == u"project")
            p.fairShareBy = sched::FairShareBy::Project;
        else
            return fail(QStringLiteral("%1: 'fair_share_by' must be user or project, not '%2'").arg(path, by));
    }
    if (o.contains(QStringLiteral("shares"))) {
        const QJsonValue v = o.value(QStringLiteral("shares"));
        if (!v.isObject())
            return fail(QStringLiteral("%1: 'shares' must be an object of account -> number").arg(path));
        const QJsonObject shares = v.toObject();
        for (auto it = shares.begin(); it != shares.end(); ++it) {
            if (!it.value().isDouble() || it.value().toDouble() < 0)
                return fail(QStringLiteral("%1: share of '%2' must be a number >= 0").arg(path, it.key()));
            p.shares.insert(it.key(), it.value().toDouble());
        }
    }
    return p;
}

QJsonObject policyToJson(const sched::Policy& p)
{
    QJsonObject o;
    for (const auto& on : kOrderings)
        if (on.ordering == p.ordering)
            o.insert(QStringLiteral("ordering"), QLatin1String(on.name));
    o.insert(QStringLiteral("backfill"), p.backfill);
    o.insert(QStringLiteral("preemption"), p.preemption);
    o.insert(QStringLiteral("aging_per_hour"), p.agingPerHour);
    o.insert(QStringLiteral("default_runtime_s"), double(p.defaultRuntimeMs) / 1000.0);
    o.insert(QStringLiteral("fair_share_by"),
            p.fairShareBy == sched::FairShareBy::User ? QStringLiteral("user") : QStringLiteral("project"));
    QJsonObject shares;
    for (auto it = p.shares.cbegin(); it != p.shares.cend(); ++it)
        shares.insert(it.key(), it.value());
    o.insert(QStringLiteral("shares"), shares);
    o.insert(QStringLiteral("usage_half_life_s"), double(p.usageHalfLifeMs) / 1000.0);
    return o;
}
} // namespace

const sched::Policy& QueuePolicies::forQueue(const QString& queue) const
{
    const auto it = queues.constFind(queue);
    return it == queues.cend() ? defaults : *it;
}

Result<QueuePolicies> loadQueuePolicies(const QString& databasePath)
{
    const QString path = queuePolicyPath(databasePath);
    QFile f(path);
    if (!f.exists())
        return QueuePolicies{defaultQueuePolicy(), {}};
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("%1: cannot read: %2").arg(path, f.errorString()));
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
    if (err.error != QJsonParseError::NoError)
        return fail(QStringLiteral("%1: offset %2: %3").arg(path).arg(err.offset).arg(err.errorString()));
    if (!doc.isObject())
        return fail(QStringLiteral("%1: must be a JSON object").arg(path));
    const QJsonObject o = doc.object();
    auto defaults = policyFromJson(o, path, defaultQueuePolicy(), true);
    if (!defaults)
        return std::unexpected(defaults.error());
    QueuePolicies all{*defaults, {}};
    if (o.contains(QStringLiteral("queues"))) {
        if (!o.value(QStringLiteral("queues")).isObject())
            return fail(QStringLiteral("%1: 'queues' must be an object of queue name -> policy").arg(path));
        const QJsonObject queues = o.value(QStringLiteral("queues")).toObject();
        for (auto it = queues.begin(); it != queues.end(); ++it) {
            if (!it.value().isObject())
                return fail(QStringLiteral("%1: queue '%2' must be a policy object").arg(path, it.key()));
            auto q = policyFromJson(
                    it.value().toObject(), path + QStringLiteral(" (queue '%1')").arg(it.key()), *defaults, false);
            if (!q)
                return std::unexpected(q.error());
            all.queues.insert(it.key(), *q);
        }
    }
    return all;
}

Result<sched::Policy> loadQueuePolicy(const QString& databasePath)
{
    auto all = loadQueuePolicies(databasePath);
    if (!all)
        return std::unexpected(all.error());
    return all->defaults;
}

Result<void> saveQueuePolicies(const QString& databasePath, const QueuePolicies& policies)
{
    QJsonObject o = policyToJson(policies.defaults);
    if (!policies.defaults.pools.isEmpty())
        o.insert(QStringLiteral("pools"), poolsToJson(policies.defaults.pools));
    if (!policies.queues.isEmpty()) {
        QJsonObject queues;
        for (auto it = policies.queues.cbegin(); it != policies.queues.cend(); ++it)
            queues.insert(it.key(), policyToJson(it.value()));
        o.insert(QStringLiteral("queues"), queues);
    }
    const QString path = queuePolicyPath(databasePath);
    QSaveFile f(path); // written whole or not at all
    if (!f.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("%1: cannot write: %2").arg(path, f.errorString()));
    f.write(QJsonDocument(o).toJson(QJsonDocument::Indented));
    if (!f.commit())
        return fail(QStringLiteral("%1: cannot write: %2").arg(path, f.errorString()));
    return {};
}

Result<void> saveQueuePolicy(const QString& databasePath, const sched::Policy& policy)
{
    // The default policy only: per-queue ones in the file are kept.
    auto all = loadQueuePolicies(databasePath);
    QueuePolicies next = all ? *all : QueuePolicies{defaultQueuePolicy(), {}};
    next.defaults = policy;
    return saveQueuePolicies(databasePath, next);
}

QStringList queuePolicyNames()
{
    return {QStringLiteral("fcfs"), QStringLiteral("priority"), QStringLiteral("sjf"), QStringLiteral("backfill"),
            QStringLiteral("fair-share")};
}

Result<sched::Policy> queuePolicyNamed(const QString& name, const sched::Policy& base)
{
    sched::Policy p = base;
    if (name == u"fcfs") {
        p.ordering = sched::Ordering::Fcfs;
        p.backfill = false;
    } else if (name == u"priority") {
        p.ordering = sched::Ordering::Priority;
        p.backfill = false;
    } else if (name == u"sjf") {
        p.ordering = sched::Ordering::ShortestJobFirst;
        p.backfill = false;
    } else if (name == u"backfill") {
        p.ordering = sched::Ordering::Priority;
        p.backfill = true;
    } else if (name == u"fair-share") {
        p.ordering = sched::Ordering::FairShare;
        p.backfill = true;
    } else {
        return fail(QStringLiteral("unknown policy '%1' (one of: %2)")
                            .arg(name, queuePolicyNames().join(QStringLiteral(", "))));
    }
    return p;
}

QString queuePolicyName(const sched::Policy& p)
{
    switch (p.ordering) {
    case sched::Ordering::Fcfs: return p.backfill ? QStringLiteral("fcfs+backfill") : QStringLiteral("fcfs");
    case sched::Ordering::Priority: return p.backfill ? QStringLiteral("backfill") : QStringLiteral("priority");
    case sched::Ordering::ShortestJobFirst: return p.backfill ? QStringLiteral("sjf+backfill") : QStringLiteral("sjf");
    case sched::Ordering::FairShare:
        return p.backfill ? QStringLiteral("fair-share") : QStringLiteral("fair-share (strict)");
    }
    return {};
}

sched::FairShareState fairShareUsage(const QList<RunRecord>& runs, const sched::Policy& policy, qint64 nowMs,
        const std::function<QString(const RunRecord&)>& accountOf)
{
    sched::FairShareState state;
    for (const RunRecord& r : runs) {
        if (r.gpus.isEmpty() || !r.startedAt.isValid())
            continue;
        const qint64 end = r.finishedAt.isValid() ? r.finishedAt.toMSecsSinceEpoch() : nowMs;
        const double hours = decayedGpuHours(
                int(r.gpus.size()), r.startedAt.toMSecsSinceEpoch(), end, nowMs, policy.usageHalfLifeMs);
        if (hours > 0.0)
            state.charge(accountOf(r), hours);
    }
    return state;
}

} // namespace ty
