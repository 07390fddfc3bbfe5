#include "CachePolicy.h"

#include "MemoStore.h"
#include "core/spec/JobSpec.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace ty {

QString cachePolicyPath(const QString& databasePath)
{
    return databasePath + QStringLiteral(".cache.json");
}

QString formatCacheAge(const std::optional<qint64>& seconds)
{
    if (!seconds)
        return QStringLiteral("off");
    const qint64 s = *seconds;
    if (s % 86400 == 0)
        return QStringLiteral("%1d").arg(s / 86400);
    if (s % 3600 == 0)
        return QStringLiteral("%1h").arg(s / 3600);
    if (s % 60 == 0)
        return QStringLiteral("%1m").arg(s / 60);
    return QStringLiteral("%1s").arg(s);
}

QString formatCacheSize(const std::optional<qint64>& bytes)
{
    if (!bytes)
        return QStringLiteral("off");
    const qint64 mib = *bytes / (1024 * 1024);
    if (mib && mib % (1024 * 1024) == 0)
        return QStringLiteral("%1T").arg(mib / (1024 * 1024));
    if (mib && mib % 1024 == 0)
        return QStringLiteral("%1G").arg(mib / 1024);
    return QStringLiteral("%1M").arg(mib);
}

Result<CachePolicy> loadCachePolicy(const QString& databasePath)
{
    CachePolicy p;
    const QString path = cachePolicyPath(databasePath);
    QFile f(path);
    if (!f.exists())
        return p;
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("%1: cannot read: %2").arg(path, f.errorString()));
    QJsonParseError e{};
    const QJsonDocument doc = QJsonDocument::fromJson(f.read(64 * 1024), &e);
    if (e.error != QJsonParseError::NoError)
        return fail(QStringLiteral("%1: not JSON: %2 at byte %3").arg(path, e.errorString()).arg(e.offset),
                ErrorKind::InvalidInput);
    if (!doc.isObject())
        return fail(QStringLiteral("%1: must be a JSON object such as {\"max_age\": \"30d\", \"max_size\": \"20G\"}")
                            .arg(path),
                ErrorKind::InvalidInput);
    const QJsonObject o = doc.object();
    for (auto it = o.begin(); it != o.end(); ++it) {
        const QString text = it.value().toString();
        const bool off = text == u"off";
        if (it.key() == u"max_age") {
            const auto s = parseDurationSec(text);
            if (!off && (!s || *s <= 0))
                return fail(QStringLiteral("%1: 'max_age' must be a duration such as \"30d\" or \"off\", not %2")
                                    .arg(path,
                                            QString::fromUtf8(QJsonDocument(QJsonObject{{it.key(), it.value()}})
                                                                      .toJson(QJsonDocument::Compact))),
                        ErrorKind::InvalidInput);
            p.maxAgeSec = off ? std::nullopt : s;
        } else if (it.key() == u"max_size") {
            const auto mib = parseSizeMiB(text);
            if (!off && (!mib || *mib < 0))
                return fail(QStringLiteral("%1: 'max_size' must be a size such as \"20G\" or \"off\", not %2")
                                    .arg(path,
                                            QString::fromUtf8(QJsonDocument(QJsonObject{{it.key(), it.value()}})
                                                                      .toJson(QJsonDocument::Compact))),
                        ErrorKind::InvalidInput);
            p.maxBytes = off ? std::nullopt : std::optional<qint64>(*mib * 1024 * 1024);
        } else {
            return fail(QStringLiteral("%1: unknown key '%2' (allowed: max_age, max_size)").arg(path, it.key()),
                    ErrorKind::InvalidInput);
        }
    }
    return p;
}

Result<void> saveCachePolicy(const QString& databasePath, const CachePolicy& policy)
{
    const QString path = cachePolicyPath(databasePath);
    const QJsonObject o{{QStringLiteral("max_age"), formatCacheAge(policy.maxAgeSec)},
            {QStringLiteral("max_size"), formatCacheSize(policy.maxBytes)}};
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(o).toJson()) < 0 || !f.commit())
        return fail(QStringLiteral("%1: cannot write: %2").arg(path, f.errorString()));
    return {};
}

Result<QStringList> applyCachePolicy(MemoStore& memo, const CachePolicy& policy, const QDateTime& now)
{
    QStringList removed;
    if (policy.maxAgeSec) {
        auto old = memo.evictOlderThan(*policy.maxAgeSec * 1000, now);
        if (!old)
            return std::unexpected(old.error());
        removed << *old;
    }
    if (policy.maxBytes) {
        auto big = memo.evictToSize(*policy.maxBytes);
        if (!big)
            return std::unexpected(big.error());
        removed << *big;
    }
    return removed;
}

} // namespace ty
