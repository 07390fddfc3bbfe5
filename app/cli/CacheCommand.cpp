#include "CacheCommand.h"

#include "Cli.h"

#include "core/memo/CachePolicy.h"
#include "core/memo/CacheReport.h"
#include "core/memo/MemoStore.h"
#include "core/service/ServiceClient.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"
#include "core/store/RunNotice.h"

#include <QCommandLineParser>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

namespace ty::cli {

namespace {

QString when(const QDateTime& t)
{
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QStringLiteral("-");
}

QString bytes(qint64 n)
{
    return QLocale::c().formattedDataSize(n, 1, QLocale::DataSizeTraditionalFormat);
}

QJsonObject entryJson(const MemoEntry& e, bool withComponents)
{
    QJsonArray outputs;
    for (const MemoOutput& o : e.outputs)
        outputs.append(QJsonObject{{QStringLiteral("path"), o.path}, {QStringLiteral("size"), o.size},
                {QStringLiteral("sha256"), o.sha256}});
    QJsonObject params;
    for (auto it = e.outputParams.cbegin(); it != e.outputParams.cend(); ++it)
        params.insert(it.key(), it.value());
    QJsonObject o{{QStringLiteral("key"), e.key}, {QStringLiteral("pipeline"), e.pipeline},
            {QStringLiteral("step"), e.step}, {QStringLiteral("created_ms"), e.created.toMSecsSinceEpoch()},
            {QStringLiteral("last_hit_ms"), e.lastHit.isValid() ? e.lastHit.toMSecsSinceEpoch() : 0},
            {QStringLiteral("hit_count"), e.hitCount}, {QStringLiteral("run"), e.run},
            {QStringLiteral("outputs"), outputs}, {QStringLiteral("output_params"), params},
            {QStringLiteral("output_bytes"), e.outputBytes()}};
    if (withComponents)
        o.insert(QStringLiteral("components"), componentsToJson(e.components));
    return o;
}

int list(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addOption({QStringLiteral("pipeline"), QStringLiteral("only this pipeline's entries"), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("step"), QStringLiteral("only this step's entries"), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("json"), QStringLiteral("one JSON document on stdout")});
    if (!p.parse(QStringList{QStringLiteral("cache ls")} + args))
        return usageError(p.errorText());
    if (!p.positionalArguments().isEmpty())
        return usageError(QStringLiteral("cache ls takes no argument"));
    MemoEntryFilter filter;
    if (p.isSet(QStringLiteral("pipeline")))
        filter.pipeline = p.value(QStringLiteral("pipeline"));
    if (p.isSet(QStringLiteral("step")))
        filter.step = p.value(QStringLiteral("step"));
    filter.withComponents = false;
    const QList<MemoEntry> entries = MemoStore(*ctx.store).list(filter);
    if (p.isSet(QStringLiteral("json"))) {
        QJsonArray a;
        for (const MemoEntry& e : entries)
            a.append(entryJson(e, false));
        out() << QJsonDocument(a).toJson(QJsonDocument::Compact) << '\n';
        return Ok;
    }
    out() << QStringLiteral("%1  %2  %3  %4  %5  %6  %7\n")
                     .arg(QStringLiteral("KEY").leftJustified(12), QStringLiteral("PIPELINE").leftJustified(16),
                             QStringLiteral("STEP").leftJustified(12), QStringLiteral("CREATED").leftJustified(19),
                             QStringLiteral("HITS").rightJustified(4), QStringLiteral("RUN").rightJustified(5),
                             QStringLiteral("OUTPUTS"));
    for (const MemoEntry& e : entries)
        out() << QStringLiteral("%1  %2  %3  %4  %5  %6  %7\n")
                         .arg(e.key.left(12), escapedName(e.pipeline).leftJustified(16),
                                 escapedName(e.step).leftJustified(12), when(e.created).leftJustified(19),
                                 QString::number(e.hitCount).rightJustified(4),
                                 QString::number(e.run).rightJustified(5),
                                 QStringLiteral("%1 files, %2").arg(e.outputs.size()).arg(bytes(e.outputBytes())));
    return Ok;
}

int explain(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("STEP"), QStringLiteral("the step"));
    p.addOption({QStringLiteral("pipeline"), QStringLiteral("the step's pipeline (default: the newest with that step)"),
            QStringLiteral("NAME")});
    p.addOption({QStringLiteral("json"), QStringLiteral("one JSON document on stdout")});
    if (!p.parse(QStringList{QStringLiteral("cache explain")} + args))
        return usageError(p.errorText());
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("cache explain needs one STEP"));
    const QString step = p.positionalArguments().front();
    MemoEntryFilter filter;
    filter.step = step;
    if (p.isSet(QStringLiteral("pipeline")))
        filter.pipeline = p.value(QStringLiteral("pipeline"));
    filter.limit = 1;
    const QList<MemoEntry> newest = MemoStore(*ctx.store).list(filter);
    // Why the step's newest run ran: the notice its pipeline recorded.
    const StepRunWhy last = lastRunOf(*ctx.store, step, filter.pipeline);
    const RunId lastRun = last.run;
    const QString& whyRan = last.why;
    if (newest.isEmpty() && !lastRun) {
        err() << "trainyardctl: no cache entry and no run of step '" << escapedName(step) << "'\n";
        return NoSuchRun;
    }
    if (p.isSet(QStringLiteral("json"))) {
        QJsonObject o{{QStringLiteral("step"), step}, {QStringLiteral("last_run"), lastRun},
                {QStringLiteral("last_run_why"), whyRan}};
        if (!newest.isEmpty())
            o.insert(QStringLiteral("entry"), entryJson(newest.front(), true));
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << '\n';
        return Ok;
    }
    if (lastRun)
        out() << "last run of " << escapedName(step) << ": " << lastRun << "\n  "
              << (whyRan.isEmpty() ? QStringLiteral("(not memoized, or run before memoization)") : escapedName(whyRan))
              << '\n';
    if (newest.isEmpty()) {
        out() << "no cache entry\n";
        return Ok;
    }
    const MemoEntry& e = newest.front();
    out() << "newest entry: " << e.key << '\n';
    for (const QString& line : describeEntry(e))
        out() << "  " << escapedName(line) << '\n';
    return Ok;
}

int remove(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("KEY"), QStringLiteral("an entry's key (8 hex digits or more)"));
    p.addOption({QStringLiteral("step"), QStringLiteral("every entry of this step"), QStringLiteral("NAME")});
    p.addOption(
            {QStringLiteral("pipeline"), QStringLiteral("with --step: the step's pipeline"), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("all"), QStringLiteral("every entry")});
    p.addOption({QStringLiteral("older-than"), QStringLiteral("entries made at least this long ago (30m, 7d)"),
            QStringLiteral("DURATION")});
    p.addOption({QStringLiteral("max-size"),
            QStringLiteral("the oldest entries until the rest's outputs total at most this (10G)"),
            QStringLiteral("SIZE")});
    if (!p.parse(QStringList{QStringLiteral("cache rm")} + args))
        return usageError(p.errorText());
    QJsonObject req;
    int selectors = 0;
    if (p.positionalArguments().size() == 1) {
        req.insert(QStringLiteral("key"), p.positionalArguments().front());
        ++selectors;
    } else if (p.positionalArguments().size() > 1) {
        return usageError(QStringLiteral("cache rm takes one KEY"));
    }
    if (p.isSet(QStringLiteral("step"))) {
        req.insert(QStringLiteral("step"), p.value(QStringLiteral("step")));
        req.insert(QStringLiteral("pipeline"), p.value(QStringLiteral("pipeline")));
        ++selectors;
    }
    if (p.isSet(QStringLiteral("all"))) {
        req.insert(QStringLiteral("all"), true);
        ++selectors;
    }
    if (p.isSet(QStringLiteral("older-than"))) {
        const auto s = parseDurationSec(p.value(QStringLiteral("older-than")));
        if (!s || *s <= 0)
            return usageError(QStringLiteral("--older-than needs a duration such as 30m or 7d"));
        req.insert(QStringLiteral("older_than_s"), *s);
        ++selectors;
    }
    if (p.isSet(QStringLiteral("max-size"))) {
        const auto mib = parseSizeMiB(p.value(QStringLiteral("max-size")));
        if (!mib || *mib < 0)
            return usageError(QStringLiteral("--max-size needs a size such as 500M or 10G"));
        req.insert(QStringLiteral("max_bytes"), *mib * 1024 * 1024);
        ++selectors;
    }
    if (selectors != 1)
        return usageError(QStringLiteral("cache rm needs exactly one of KEY, --step, --all, --older-than, --max-size"));
    auto svc = connectService(ctx);
    if (!svc)
        return Unavailable;
    const auto r = svc->call(QStringLiteral("memo_rm"), req);
    if (!r) {
        err() << escapedName(r.error().message) << '\n';
        return r.error().kind == ErrorKind::NotFound ? NoSuchRun : Usage;
    }
    const QJsonArray removed = r->value(QStringLiteral("removed")).toArray();
    err() << "removed " << removed.size() << " cache entr" << (removed.size() == 1 ? "y" : "ies") << '\n';
    for (const QJsonValue& k : removed)
        out() << k.toString() << '\n';
    return Ok;
}

// `cache policy [--max-age D|off] [--max-size S|off]`: shows the database's
// cache limits (CachePolicy.h), or sets them; the service applies them after
// each new entry, hourly and at its start.
int policy(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addOption({QStringLiteral("max-age"), QStringLiteral("evict entries made this long ago (30d; off)"),
            QStringLiteral("DURATION")});
    p.addOption({QStringLiteral("max-size"),
            QStringLiteral("evict the oldest entries while their outputs total more (20G; off)"),
            QStringLiteral("SIZE")});
    p.addOption({QStringLiteral("json"), QStringLiteral("as JSON")});
    if (!p.parse(QStringList{QStringLiteral("cache policy")} + args))
        return usageError(p.errorText());
    if (!p.positionalArguments().isEmpty())
        return usageError(QStringLiteral("cache policy takes no arguments"));
    auto current = loadCachePolicy(ctx.dbPath);
    if (!current) {
        err() << escapedName(current.error().message) << '\n';
        return Usage;
    }
    CachePolicy next = *current;
    if (p.isSet(QStringLiteral("max-age"))) {
        const QString v = p.value(QStringLiteral("max-age"));
        const auto s = parseDurationSec(v);
        if (v != u"off" && (!s || *s <= 0))
            return usageError(QStringLiteral("--max-age needs a duration such as 30d, or off"));
        next.maxAgeSec = v == u"off" ? std::nullopt : s;
    }
    if (p.isSet(QStringLiteral("max-size"))) {
        const QString v = p.value(QStringLiteral("max-size"));
        const auto mib = parseSizeMiB(v);
        if (v != u"off" && (!mib || *mib < 0))
            return usageError(QStringLiteral("--max-size needs a size such as 20G, or off"));
        next.maxBytes = v == u"off" ? std::nullopt : std::optional<qint64>(*mib * 1024 * 1024);
    }
    if (!(next == *current) || !QFile::exists(cachePolicyPath(ctx.dbPath))) {
        if (p.isSet(QStringLiteral("max-age")) || p.isSet(QStringLiteral("max-size"))) {
            if (auto saved = saveCachePolicy(ctx.dbPath, next); !saved) {
                err() << escapedName(saved.error().message) << '\n';
                return Usage;
            }
            err() << "saved " << escapedName(cachePolicyPath(ctx.dbPath))
                  << "; the service applies it after its next cache entry, hourly and when it starts\n";
        }
    }
    if (p.isSet(QStringLiteral("json"))) {
        out() << QJsonDocument(QJsonObject{{QStringLiteral("max_age"), formatCacheAge(next.maxAgeSec)},
                                       {QStringLiteral("max_size"), formatCacheSize(next.maxBytes)},
                                       {QStringLiteral("file"), cachePolicyPath(ctx.dbPath)}})
                         .toJson(QJsonDocument::Compact)
              << '\n';
        return Ok;
    }
    out() << "max_age  " << formatCacheAge(next.maxAgeSec) << '\n'
          << "max_size " << formatCacheSize(next.maxBytes) << '\n';
    return Ok;
}

} // namespace

int cmdCache(Context& ctx, const QStringList& args)
{
    const QString sub = args.value(0);
    if (sub == u"ls")
        return list(ctx, args.mid(1));
    if (sub == u"explain")
        return explain(ctx, args.mid(1));
    if (sub == u"rm")
        return remove(ctx, args.mid(1));
    if (sub == u"policy")
        return policy(ctx, args.mid(1));
    return usageError(QStringLiteral("cache needs ls, explain, rm or policy"));
}

} // namespace ty::cli
