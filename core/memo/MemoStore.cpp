#include "MemoStore.h"

#include "MemoLog.h"
#include "core/store/ResultStore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <algorithm>

namespace ty {
namespace {

// Oldest first: created, then key.
void sortOldestFirst(QList<MemoEntryRecord>& entries)
{
    std::sort(entries.begin(), entries.end(), [](const MemoEntryRecord& a, const MemoEntryRecord& b) {
        if (a.createdAt != b.createdAt)
            return a.createdAt < b.createdAt;
        return a.key < b.key;
    });
}

Result<MemoEntry> fromRecord(const MemoEntryRecord& r, bool withComponents)
{
    MemoEntry e;
    e.key = r.key;
    e.pipeline = r.pipeline;
    e.step = r.step;
    e.created = r.createdAt;
    e.lastHit = r.lastHitAt;
    e.hitCount = r.hitCount;
    e.run = r.run;
    auto what = [&r](const QString& why) {
        return fail(QStringLiteral("memo entry %1 (step %2): %3").arg(r.key, r.step, why));
    };
    if (withComponents) {
        QJsonParseError pe{};
        const QJsonDocument doc = QJsonDocument::fromJson(r.components.toUtf8(), &pe);
        if (!doc.isObject())
            return what(QStringLiteral("its components are not a JSON object"));
        auto c = componentsFromJson(doc.object());
        if (!c)
            return what(c.error().message);
        e.components = *c;
    }
    auto outputs = memoOutputsFromJson(r.outputs);
    if (!outputs)
        return what(outputs.error().message);
    e.outputs = *outputs;
    const QJsonDocument params = QJsonDocument::fromJson(r.outputParams.toUtf8());
    if (!params.isObject())
        return what(QStringLiteral("its output params are not a JSON object"));
    const QJsonObject o = params.object();
    for (auto it = o.begin(); it != o.end(); ++it)
        e.outputParams.insert(it.key(), it.value().toString());
    return e;
}

Result<std::optional<MemoEntry>> fromOptionalRecord(const std::optional<MemoEntryRecord>& r)
{
    if (!r)
        return std::optional<MemoEntry>();
    auto e = fromRecord(*r, true);
    if (!e)
        return std::unexpected(e.error());
    return std::optional<MemoEntry>(*e);
}

} // namespace

qint64 MemoEntry::outputBytes() const
{
    qint64 total = 0;
    for (const MemoOutput& o : outputs)
        total += o.size;
    return total;
}

QString memoOutputsToJson(const QList<MemoOutput>& outputs)
{
    QJsonArray a;
    for (const MemoOutput& o : outputs)
        a.append(QJsonObject{{QStringLiteral("path"), o.path}, {QStringLiteral("size"), o.size},
                {QStringLiteral("sha256"), o.sha256}});
    return QString::fromUtf8(QJsonDocument(a).toJson(QJsonDocument::Compact));
}

Result<QList<MemoOutput>> memoOutputsFromJson(const QString& json)
{
    const QJsonDocument doc = QJsonDocument::fromJson(json.toUtf8());
    if (!doc.isArray())
        return fail(QStringLiteral("its outputs are not a JSON array"));
    QList<MemoOutput> out;
    for (const QJsonValue& v : doc.array()) {
        const QJsonObject o = v.toObject();
        MemoOutput m{o.value(QStringLiteral("path")).toString(), o.value(QStringLiteral("size")).toInteger(-1),
                o.value(QStringLiteral("sha256")).toString()};
        if (m.path.isEmpty() || m.size < 0 || !isSha256Hex(m.sha256))
            return fail(QStringLiteral("an output is not {path, size, sha256}"));
        out.append(m);
    }
    return out;
}

QStringList planAgeEviction(const QList<MemoEntryRecord>& entries, qint64 maxAgeMs, qint64 nowMs)
{
    QList<MemoEntryRecord> sorted = entries;
    sortOldestFirst(sorted);
    QStringList out;
    for (const MemoEntryRecord& e : std::as_const(sorted))
        if (nowMs - e.createdAt.toMSecsSinceEpoch() >= maxAgeMs)
            out << e.key;
    return out;
}

QStringList planSizeEviction(const QList<MemoEntryRecord>& entries, qint64 maxTotalBytes)
{
    QList<MemoEntryRecord> sorted = entries;
    sortOldestFirst(sorted);
    qint64 total = 0;
    for (const MemoEntryRecord& e : std::as_const(sorted))
        total += e.outputBytes;
    QStringList out;
    for (const MemoEntryRecord& e : std::as_const(sorted)) {
        if (total <= maxTotalBytes)
            break;
        out << e.key;
        total -= e.outputBytes;
    }
    return out;
}

MemoStore::MemoStore(ResultStore& store)
    : m_store(store)
{ }

Result<MemoEntry> MemoStore::put(MemoEntry e)
{
    if (e.step.isEmpty())
        return fail(QStringLiteral("a memo entry needs a step"));
    if (e.components.step.isEmpty())
        e.components.step = e.step;
    if (e.components.step != e.step)
        return fail(
                QStringLiteral("memo entry of step %1: its components name step %2").arg(e.step, e.components.step));
    const QString key = memoKey(e.components);
    if (!e.key.isEmpty() && e.key != key)
        return fail(QStringLiteral("memo entry of step %1: key %2 is not the key of its components (%3)")
                            .arg(e.step, e.key, key));
    e.key = key;
    QSet<QString> paths;
    for (const MemoOutput& o : std::as_const(e.outputs)) {
        if (o.path.isEmpty())
            return fail(QStringLiteral("memo entry of step %1: an output without a path").arg(e.step));
        if (o.size < 0)
            return fail(QStringLiteral("memo entry of step %1: output %2 has a negative size").arg(e.step, o.path));
        if (!isSha256Hex(o.sha256))
            return fail(QStringLiteral("memo entry of step %1: output %2 has no content hash (a SHA-256 as 64 "
                                       "lowercase hex digits); only outputs recorded with their hashes are stored")
                                .arg(e.step, o.path));
        if (paths.contains(o.path))
            return fail(QStringLiteral("memo entry of step %1: output %2 is listed twice").arg(e.step, o.path));
        paths.insert(o.path);
    }
    if (!e.created.isValid())
        e.created = QDateTime::currentDateTimeUtc();
    e.created = QDateTime::fromMSecsSinceEpoch(e.created.toMSecsSinceEpoch(), Qt::UTC);
    e.lastHit = QDateTime();
    e.hitCount = 0;

    MemoEntryRecord r;
    r.key = e.key;
    r.pipeline = e.pipeline;
    r.step = e.step;
    r.components = QString::fromUtf8(QJsonDocument(componentsToJson(e.components)).toJson(QJsonDocument::Compact));
    r.createdAt = e.created;
    r.run = e.run;
    r.outputs = memoOutputsToJson(e.outputs);
    QJsonObject params;
    for (auto it = e.outputParams.cbegin(); it != e.outputParams.cend(); ++it)
        params.insert(it.key(), it.value());
    r.outputParams = QString::fromUtf8(QJsonDocument(params).toJson(QJsonDocument::Compact));
    r.outputBytes = e.outputBytes();
    if (auto w = m_store.putMemoEntry(r); !w)
        return std::unexpected(w.error());
    return e;
}

Result<void> MemoStore::recordHit(const QString& key, RunId run, const QString& pipeline, const QDateTime& at)
{
    if (!m_store.memoEntry(key))
        return fail(QStringLiteral("%1: no memo entry %2").arg(m_store.location(), key), ErrorKind::NotFound);
    return m_store.recordMemoHit(
            MemoHitRecord{key, at.isValid() ? at : QDateTime::currentDateTimeUtc(), run, pipeline});
}

Result<std::optional<MemoEntry>> MemoStore::get(const QString& key) const
{
    return fromOptionalRecord(m_store.memoEntry(key));
}

Result<std::optional<MemoEntry>> MemoStore::newest(const QString& pipeline, const QString& step) const
{
    const QList<MemoEntryRecord> found = m_store.memoEntries(MemoEntryFilter{pipeline, step, 1, true});
    return fromOptionalRecord(found.isEmpty() ? std::nullopt : std::optional<MemoEntryRecord>(found.front()));
}

QList<MemoEntry> MemoStore::list(const MemoEntryFilter& filter) const
{
    QList<MemoEntry> out;
    for (const MemoEntryRecord& r : m_store.memoEntries(filter)) {
        auto e = fromRecord(r, filter.withComponents);
        if (!e) {
            qCWarning(lcMemo).noquote() << m_store.location() << ":" << e.error().message << "(left out)";
            continue;
        }
        out.append(*e);
    }
    return out;
}

QList<MemoHitRecord> MemoStore::hits(const QString& key) const
{
    return m_store.memoHits(key);
}

qint64 MemoStore::totalOutputBytes() const
{
    qint64 total = 0;
    for (const MemoEntryRecord& r : m_store.memoEntries(MemoEntryFilter{{}, {}, -1, false}))
        total += r.outputBytes;
    return total;
}

Result<QStringList> MemoStore::removeKeys(const QList<MemoEntryRecord>& oldestFirst)
{
    QStringList keys;
    for (const MemoEntryRecord& r : oldestFirst)
        keys << r.key;
    if (auto w = m_store.removeMemoEntries(keys); !w)
        return std::unexpected(w.error());
    return keys;
}

Result<QStringList> MemoStore::remove(const QString& key)
{
    const auto e = m_store.memoEntry(key);
    if (!e)
        return QStringList();
    return removeKeys({*e});
}

Result<QStringList> MemoStore::removeStep(const QString& pipeline, const QString& step)
{
    QList<MemoEntryRecord> entries = m_store.memoEntries(MemoEntryFilter{pipeline, step, -1, false});
    sortOldestFirst(entries);
    return removeKeys(entries);
}

Result<QStringList> MemoStore::removeAll()
{
    QList<MemoEntryRecord> entries = m_store.memoEntries(MemoEntryFilter{{}, {}, -1, false});
    sortOldestFirst(entries);
    return removeKeys(entries);
}

Result<QStringList> MemoStore::evictOlderThan(qint64 maxAgeMs, const QDateTime& now)
{
    const QStringList keys = planAgeEviction(
            m_store.memoEntries(MemoEntryFilter{{}, {}, -1, false}), maxAgeMs, now.toMSecsSinceEpoch());
    if (auto w = m_store.removeMemoEntries(keys); !w)
        return std::unexpected(w.error());
    return keys;
}

Result<QStringList> MemoStore::evictToSize(qint64 maxTotalBytes)
{
    const QStringList keys = planSizeEviction(m_store.memoEntries(MemoEntryFilter{{}, {}, -1, false}), maxTotalBytes);
    if (auto w = m_store.removeMemoEntries(keys); !w)
        return std::unexpected(w.error());
    return keys;
}

} // namespace ty
